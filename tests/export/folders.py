"""What a folder holds, to show an export or a refusal left it as it was."""

import pathlib


def contents(folder):
    """`{relative path: bytes}` of every file below `folder`."""
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(pathlib.Path(folder).rglob("*")) if path.is_file()}
