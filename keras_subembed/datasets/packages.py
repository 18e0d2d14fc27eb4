"""Where an optional data package lies, found without importing it."""

import importlib.util
import pathlib


def package_dir(package, hint):
    """The folder of the installed `package`, or `ImportError(hint)` (the pip command).

    `find_spec` locates it without running its `__init__` (dataset-build's does
    not import on every Python).
    """
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise ImportError(hint)
    if not spec.submodule_search_locations:
        # Installing it again would not help: `os` is there, as one module.
        raise ValueError(f"`package` must name a package folder; {package!r} is a single "
                         f"module, which ships no data files. Received: package={package!r}")
    return pathlib.Path(list(spec.submodule_search_locations)[0])
