"""What an export (`.tflite`, `.onnx`, MediaPipe) measured about the file it wrote.

Every format builds its `ExportReport` in `ExportFormat.report`, so the
report's fields mean the same in each.
"""

import dataclasses
import json

from keras_subembed.tflite_metadata import WRITTEN_BY


@dataclasses.dataclass(frozen=True)
class ExportReport:
    """Sizes, ops, parity and latency of one exported `.tflite` file.

    `embedding_bytes` counts the file's constant buffers that hold the token
    embedding's weights (matched by name or shape, transposed or not);
    `dense_embedding_bytes` is the V x d table it stands for, in the layer's
    weight dtype. `max_abs_error` is the largest error of any output over all
    verification inputs, against Keras, None when not verified; `tolerance`
    the bound it was (or would have been) held to.
    `latency_ms` is the median time of one sequence (batch 1,
    `latency_sequence_length` tokens, 1 thread), or None when not measured.
    `cosine_to_float` is the mean cosine of the file's output rows to the
    float Keras model's (the lowest output's), None when not verified.
    `inputs` and `outputs` are the names of the signature `serving_default`.
    `quantized_ops` counts the ops that compute with an integer weight and
    `constant_bytes` the file's constants by dtype (`{"int4": ..., "float32":
    ...}`): what the file holds, whatever `quantization` was asked.
    `sequence_length` is the fixed length every input is padded (or cut)
    to, None when the file takes any length (MediaPipe fixes one: a short
    text costs as much as a long one). `tokenizer_path` is the tokenizer
    file written beside the file for `device/`'s runners, None when none was.
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
    sequence_length: int = None
    tokenizer_path: str = None

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
            ("max abs error", "not verified" if self.max_abs_error is None
             else f"{self.max_abs_error:.3g} (tolerance {self.tolerance:.3g}, "
             f"sequence lengths {list(self.verified_sequence_lengths)})"),
            ("median latency", "not measured (latency_runs=0)" if self.latency_ms is None
             else f"{self.latency_ms:.2f} ms per sequence of "
             f"{self.latency_sequence_length} tokens (batch 1, 1 thread)"),
            ("cosine to float", "not verified" if self.cosine_to_float is None
             else f"{self.cosine_to_float:.5f} (mean over rows, vs the float Keras model)"),
            ("signature", f"{', '.join(self.inputs)} -> {', '.join(self.outputs)}"),
            ("sequence length", "dynamic (any length the model takes)"
             if self.sequence_length is None
             else f"{self.sequence_length} tokens, fixed (every text is padded or cut to it)"),
            ("tokenizer file", self.tokenizer_path or "none written"),
            ("ops", ", ".join(self.ops)),
        ]
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
