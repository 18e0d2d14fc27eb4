"""What an export (`.tflite`, `.onnx`, MediaPipe) measured about the file it wrote.

`export_target` checks where an export may write; `measure_file` (or
`measure_samples`) runs the verification and timing of a file not yet
written; `write_and_report` writes it and builds its `ExportReport`. The
three exporters share them, so the report's fields mean the same in each.
"""

import dataclasses
import json

from keras_subembed import files
from keras_subembed.tflite_metadata import WRITTEN_BY
from keras_subembed.export.model_parts import dense_table_bytes
from keras_subembed.models.token_embedding import find_token_embedding
from keras_subembed.export.model_parts import model_path
from keras_subembed.export.signature import sequence_lengths_of


@dataclasses.dataclass(frozen=True)
class ExportReport:
    """Sizes, ops, parity and latency of one exported `.tflite` file.

    `embedding_bytes` counts the file's constant buffers that hold the token
    embedding's weights (matched by name or shape, transposed or not);
    `dense_embedding_bytes` is the V x d table it stands for, in the layer's
    weight dtype. `max_abs_error` is the largest error of any output over all
    verification inputs, against Keras; `tolerance` the bound it was held to.
    `latency_ms` is the median time of one sequence (batch 1,
    `latency_sequence_length` tokens, 1 thread), or None when not measured.
    `cosine_to_float` is the mean cosine of the file's output rows to the
    float Keras model's (the lowest output's), None when not verified.
    `inputs` and `outputs` are the names of the signature `serving_default`.
    `quantized_ops` counts the ops that compute with an integer weight and
    `constant_bytes` the file's constants by dtype (`{"int4": ..., "float32":
    ...}`): what the file holds, whatever `quantization` was asked.
    """

    path: str
    quantization: str
    embedding_mode: str
    file_bytes: int
    embedding_bytes: int
    dense_embedding_bytes: int
    ops: tuple
    max_abs_error: float
    tolerance: float
    verified_sequence_lengths: tuple
    latency_ms: float = None
    latency_sequence_length: int = None
    cosine_to_float: float = None
    inputs: tuple = ()
    outputs: tuple = ()
    quantized_ops: int = 0
    constant_bytes: dict = dataclasses.field(default_factory=dict)

    @property
    def embedding_share(self):
        """Fraction of the file taken by the embedding's constants."""
        return self.embedding_bytes / self.file_bytes

    def as_dict(self):
        values = dataclasses.asdict(self)
        values["ops"] = list(self.ops)
        for name in ("verified_sequence_lengths", "inputs", "outputs"):
            values[name] = list(values[name])
        values["embedding_share"] = self.embedding_share
        values["written_by"] = WRITTEN_BY  # lets `overwrite` replace this report later
        return values

    def to_json(self, **kwargs):
        return json.dumps(self.as_dict(), **kwargs)

    def __str__(self):
        rows = [
            ("file", self.path),
            ("quantization", self.quantization),
            ("embedding mode", self.embedding_mode),
            ("file bytes", f"{self.file_bytes:,} ({self.file_bytes / 2**20:.2f} MiB)"),
            ("embedding bytes", f"{self.embedding_bytes:,} ({self.embedding_share:.2%} of the file)"),
            ("dense table bytes", f"{self.dense_embedding_bytes:,}"),
            ("weights", f"{self.quantized_ops} op(s) with integer weights; constants "
             + (", ".join(f"{dtype} {size:,} B" for dtype, size in self.constant_bytes.items())
                or "none")),
            ("max abs error", f"{self.max_abs_error:.3g} (tolerance {self.tolerance:.3g}, "
             f"sequence lengths {list(self.verified_sequence_lengths)})"),
            ("median latency", "not measured (latency_runs=0)" if self.latency_ms is None
             else f"{self.latency_ms:.2f} ms per sequence of "
             f"{self.latency_sequence_length} tokens (batch 1, 1 thread)"),
            ("cosine to float", "not verified" if self.cosine_to_float is None
             else f"{self.cosine_to_float:.5f} (mean over rows, vs the float Keras model)"),
            ("signature", f"{', '.join(self.inputs)} -> {', '.join(self.outputs)}"),
            ("ops", ", ".join(self.ops)),
        ]
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


@dataclasses.dataclass(frozen=True)
class FileChecks:
    """What verification and timing measured of a file before it is written."""

    max_abs_error: float
    tolerance: float
    verified_sequence_lengths: tuple = ()
    cosine_to_float: float = None
    latency_ms: float = None
    latency_sequence_length: int = None


def measure_file(tolerance, verify=None, time=None):
    """The `FileChecks` of a file: unverified and untimed unless asked.

    `tolerance` is the bound reported when the file is not verified.
    `verify()`, when given, returns `(max abs error, tolerance, cosine,
    verified sequence lengths)` or raises `ExportVerificationError`;
    `time()`, when given, returns `(median ms, sequence length)`.
    """
    max_error, lengths, cosine = 0.0, (), None
    if verify is not None:
        max_error, tolerance, cosine, lengths = verify()
    latency, latency_length = None, None
    if time is not None:
        latency, latency_length = time()
    return FileChecks(max_abs_error=float(max_error), tolerance=float(tolerance),
                      verified_sequence_lengths=tuple(lengths), cosine_to_float=cosine,
                      latency_ms=latency, latency_sequence_length=latency_length)


def measure_samples(tolerance, verify_file, time_file, latency_runs, model, serving_inputs, data,
                    samples, quantization, path):
    """`measure_file` for a file verified and timed on sample inputs.

    `verify_file(model, serving_inputs, data, samples, quantization, path)`
    returns `(max abs error, tolerance, cosine)` or raises (None: not
    verified); `time_file(data, samples, serving_inputs, latency_runs)`
    returns `(median ms, sequence length)` when `latency_runs` is positive.
    """
    verify = None
    if verify_file is not None:
        def verify():
            return (*verify_file(model, serving_inputs, data, samples, quantization, path),
                    sequence_lengths_of(samples, serving_inputs))
    time = None
    if latency_runs:
        def time():
            return time_file(data, samples, serving_inputs, latency_runs)
    return measure_file(tolerance, verify, time)


def export_target(model, path, overwrite, is_kind, kind):
    """(the model's `.keras` file or None, the checked `path` to write).

    `files.check_file_target` refuses a `path` that is another kind of file
    than `kind` (or, without `overwrite`, any file), and the model's own file.
    """
    source = model_path(model)
    return source, files.check_file_target(path, overwrite, is_kind, kind,
                                           keep=[source] if source else ())


def write_and_report(path, data, overwrite, model, checks, *, quantization, embedding_mode,
                     inputs, file_facts):
    """Write `data` to `path` (after `checks` passed) and return its `ExportReport`.

    `file_facts(data, embedding)` gives the format's own fields:
    `embedding_bytes`, `ops`, `outputs` and, where the format counts them,
    `quantized_ops` and `constant_bytes`.
    """
    files.write_file(path, data, overwrite)
    embedding = find_token_embedding(model)
    facts = file_facts(data, embedding)
    return ExportReport(
        path=str(path),
        quantization=quantization or "float32",
        embedding_mode=embedding_mode,
        file_bytes=len(data),
        dense_embedding_bytes=dense_table_bytes(embedding),
        inputs=tuple(inputs),
        **dataclasses.asdict(checks),
        **facts,
    )
