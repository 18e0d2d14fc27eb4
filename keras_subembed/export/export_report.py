"""What `export_tflite` measured about a `.tflite` file."""

import dataclasses
import json


@dataclasses.dataclass(frozen=True)
class ExportReport:
    """Sizes, ops, parity and latency of one exported `.tflite` file.

    `embedding_bytes` counts the file's constant buffers that hold the token
    embedding's weights (matched by shape, transposed or not);
    `dense_embedding_bytes` is the float32 V x d table it replaces.
    `max_abs_error` is over all verification inputs, against Keras;
    `tolerance` the bound it was held to. `latency_ms` is the median time of
    one sequence (batch 1, `latency_sequence_length` tokens, 1 thread).
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
    latency_ms: float
    latency_sequence_length: int

    @property
    def embedding_share(self):
        """Fraction of the file taken by the embedding's constants."""
        return self.embedding_bytes / self.file_bytes

    def as_dict(self):
        values = dataclasses.asdict(self)
        values["ops"] = list(self.ops)
        values["verified_sequence_lengths"] = list(self.verified_sequence_lengths)
        values["embedding_share"] = self.embedding_share
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
            ("max abs error", f"{self.max_abs_error:.3g} (tolerance {self.tolerance:.3g}, "
             f"sequence lengths {list(self.verified_sequence_lengths)})"),
            ("median latency", f"{self.latency_ms:.2f} ms per sequence of "
             f"{self.latency_sequence_length} tokens (batch 1, 1 thread)"),
            ("ops", ", ".join(self.ops)),
        ]
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
