"""A size report for a compressed embedding layer."""

import dataclasses
import json


@dataclasses.dataclass(frozen=True)
class CompressionReport:
    """Sizes of a compressed embedding next to the dense table it replaces.

    `stored_bytes` counts every weight the layer saves (trainable tables and
    non-trainable state such as codes) at its dtype. The dense equivalent is an
    `input_dim x output_dim` table in the layer's variable dtype.

    Example:
    >>> layer = keras_subembed.layers.SubEmbedding(50_265, 512, num_tables=3)
    >>> layer.compression_report().trainable_params
    18944
    """

    layer: str
    input_dim: int
    output_dim: int
    trainable_params: int
    non_trainable_params: int
    stored_bytes: int
    dense_params: int
    dense_bytes: int
    # Ids whose code tuple another id also has (so they share a vector);
    # None where codes do not apply.
    shared_code_tokens: int | None = None

    @property
    def compression_ratio(self):
        """Dense-equivalent bytes divided by stored bytes."""
        return self.dense_bytes / self.stored_bytes

    def as_dict(self):
        return {
            **dataclasses.asdict(self),
            "compression_ratio": self.compression_ratio,
        }

    def to_json(self):
        return json.dumps(self.as_dict(), indent=2)

    def __str__(self):
        rows = [
            ("layer", self.layer),
            ("vocabulary x width", f"{self.input_dim:,} x {self.output_dim:,}"),
            ("trainable parameters", f"{self.trainable_params:,}"),
            ("non-trainable values", f"{self.non_trainable_params:,}"),
            ("stored bytes", f"{self.stored_bytes:,}"),
            ("dense parameters", f"{self.dense_params:,}"),
            ("dense bytes", f"{self.dense_bytes:,}"),
            ("compression ratio", f"{self.compression_ratio:,.1f}x"),
        ]
        if self.shared_code_tokens is not None:
            rows.append(("ids sharing a code tuple", f"{self.shared_code_tokens:,}"))
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)
