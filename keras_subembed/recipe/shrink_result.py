"""What `shrink` returns."""

import dataclasses


@dataclasses.dataclass
class ShrinkResult:
    """The student, the files written and the per-language report of one `shrink`.

    Attributes:
        student: the distilled keras-hub `TextEmbedder` (saved in `files["preset"]`).
        setting: the compression setting's name (`keras_subembed.recipe.SETTINGS`).
        files: `{label: path}` of every file written: `"preset"`, `"tflite"`,
            `"mediapipe"`, `"onnx"`, their tokenizer files, `"report.json"`, ...
        report: the report's rows (`LanguageEvaluation.measure` rows with `name` and
            `file_mb`), the teacher's first.
        smallest_passing: the name of the smallest file that keeps the teacher's retrieval
            (the report's verdict), or None.
        seconds: wall time.
    """

    student: object
    setting: str
    files: dict
    report: list
    smallest_passing: str = None
    seconds: float = None

    def __str__(self):
        lines = [f"shrink: {self.setting}, {self.seconds or 0:.0f} s"]
        lines += [f"  {label}: {path}" for label, path in self.files.items()]
        judged = any("english_to_locale" in row for row in self.report)
        lines.append("  smallest file that keeps the teacher's retrieval: "
                     + (self.smallest_passing or "none" if judged
                        else "not judged (no translated messages)"))
        return "\n".join(lines)
