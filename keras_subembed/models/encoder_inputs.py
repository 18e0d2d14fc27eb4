"""The input dict a keras-hub text encoder expects, from token ids and a padding mask."""

import keras

SUPPORTED_INPUTS = ("token_ids", "padding_mask", "segment_ids")


def backbone_inputs(backbone, token_ids, padding_mask):
    """`{input name: tensor}` for `backbone` from ids and mask.

    BERT-style encoders also take `segment_ids`; a single sentence is segment
    0 everywhere, so they get zeros. Any other input cannot be filled in.
    """
    names = list(backbone.input) if isinstance(backbone.input, dict) else None
    if names is None or not {"token_ids", "padding_mask"} <= set(names):
        raise ValueError(
            f"{type(backbone).__name__} must take a dict with `token_ids` and "
            f"`padding_mask`. Its inputs: {backbone.input!r}"
        )
    unknown = sorted(set(names) - set(SUPPORTED_INPUTS))
    if unknown:
        raise ValueError(
            f"{type(backbone).__name__} takes inputs {unknown} that a sentence "
            f"cannot fill in; supported inputs: {SUPPORTED_INPUTS}."
        )
    values = {"token_ids": token_ids, "padding_mask": padding_mask}
    if "segment_ids" in names:
        values["segment_ids"] = keras.ops.zeros_like(token_ids)
    return values


def sequence_output(backbone, outputs):
    """The `(batch, length, d)` token states among a backbone's outputs."""
    if isinstance(outputs, dict):
        if "sequence_output" not in outputs:
            raise ValueError(
                f"{type(backbone).__name__} returns {sorted(outputs)}; expected a "
                "`sequence_output`."
            )
        return outputs["sequence_output"]
    return outputs
