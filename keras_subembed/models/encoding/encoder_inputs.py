"""The input dict a keras-hub text encoder expects, from token ids and a padding mask."""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from keras_subembed.checks import check_id_values
from keras_subembed.layers.compressed_embedding import known_values
from keras_subembed.length_order import check_texts
from keras_subembed.length_order import shown

SUPPORTED_INPUTS = ("token_ids", "padding_mask", "segment_ids")


class TokenIdsPassThrough:
    """A keras-hub `Task` mixin: a dict of token ids skips the preprocessor, so
    `fit`, `evaluate` and `predict` take strings and ids alike."""

    def preprocess_samples(self, x, y=None, sample_weight=None):
        if is_token_id_dict(x):
            return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
        return super().preprocess_samples(x, y, sample_weight)


def is_token_id_dict(x):
    return isinstance(x, dict) and "token_ids" in x


def check_input_names(x, model_inputs):
    """`ValueError` for a dict of ids with names the model does not take:
    Keras would pair dict entries with inputs by sorted name, silently giving
    a model input another entry's values."""
    if not isinstance(x, dict) or not isinstance(model_inputs, dict):
        return
    unknown = sorted(set(x) - set(model_inputs))
    if unknown:
        raise ValueError(
            f"The model takes inputs {sorted(model_inputs)}; received unknown ones {unknown}."
        )


def backbone_inputs(backbone, token_ids, padding_mask):
    """`{input name: tensor}` for `backbone` from ids and mask.

    BERT-style encoders also take `segment_ids`; a single sentence is segment
    0 everywhere, so they get zeros. Any other input cannot be filled in.
    """
    names = check_sentence_inputs(backbone)
    values = {"token_ids": token_ids, "padding_mask": padding_mask}
    if "segment_ids" in names:
        values["segment_ids"] = keras.ops.zeros_like(token_ids)
    return values


def check_sentence_inputs(backbone):
    """`backbone`'s input names, or a `ValueError` unless one sentence's ids,
    mask (and zero segments) can fill them."""
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
    return names


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


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
# Integer dtypes whose values all fit int32: Keras's cast to the inputs' int32 is exact.
NARROW_INTEGERS = ("int8", "int16", "int32", "uint8", "uint16")


def narrow_ids(inputs):
    """`inputs` with wide integer ids made safe for the model's int32 inputs.

    Keras casts what a functional model receives to its `Input` dtypes, so an
    int64 id of 2**32 + 5 would reach the embedding as 5: another token's
    vector. Called before that cast: an eager call raises naming the values;
    in a compiled graph (no error possible) such ids become -1, out of range,
    which the package's embeddings give the zero vector, and a wide mask
    becomes `mask != 0`.
    """
    if not isinstance(inputs, dict):
        return inputs
    inputs = dict(inputs)
    for name in ("token_ids", "padding_mask", "segment_ids"):
        if name in inputs and not isinstance(inputs[name], keras.KerasTensor):
            if name == "token_ids" and (values := known_values(inputs[name])) is not None:
                check_id_values(name, values)
            check_int32_values(name, inputs[name])
            inputs[name] = _narrowed(name, inputs[name])
    return inputs


def check_int32_values(name, value):
    """`ValueError` when integer `value` (known now) holds values outside int32."""
    values = known_values(value)
    if values is None or not np.issubdtype(values.dtype, np.integer) or not values.size:
        return
    outside = values[(values < INT32_MIN) | (values > INT32_MAX)]
    if outside.size:
        raise ValueError(
            f"`{name}` holds values outside int32, which the model's int32 inputs would "
            f"wrap onto other ids: {outside[:5].tolist()}. "
            f"Received: {name} of dtype {values.dtype}"
        )


def _narrowed(name, value):
    value = ops.convert_to_tensor(value)
    dtype = keras.backend.standardize_dtype(value.dtype)
    if name == "token_ids" and "float" in dtype:
        # The int32 input would truncate 60.9 to token 60 and NaN to anything:
        # a fractional or NaN id becomes -1, which embeds as the zero vector.
        return ops.where(ops.equal(ops.floor(value), value), value, ops.cast(-1, dtype))
    if "int" not in dtype or dtype in NARROW_INTEGERS:
        return value
    if name == "padding_mask":
        return ops.cast(ops.not_equal(value, 0), "int32")
    outside = ops.logical_or(ops.greater(value, INT32_MAX), ops.less(value, INT32_MIN))
    return ops.where(outside, ops.cast(-1, dtype), value)


def check_id_batch(x, vocabulary_size=None, max_sequence_length=None):
    """Checks a dict of id arrays known now (NumPy, eager tensors) before `fit`,
    `evaluate` or `predict` trace a graph that could only fail obscurely."""
    if not isinstance(x, dict) or "token_ids" not in x:
        return
    token_ids = known_values(x["token_ids"])
    if token_ids is None:
        return
    check_id_values("token_ids", token_ids)
    check_int32_values("token_ids", token_ids)
    if token_ids.ndim != 2:
        raise ValueError(
            "`token_ids` must be a 2-D (batch, length) array. "
            f"Received shape {token_ids.shape}"
        )
    if token_ids.size == 0:
        raise ValueError(
            f"`token_ids` is empty (shape {token_ids.shape}): there is nothing to run on."
        )
    outside = token_ids[~((token_ids >= 0) & (token_ids < (
        np.inf if vocabulary_size is None else vocabulary_size)))]
    if outside.size:
        raise ValueError(
            f"`token_ids` must be in [0, {vocabulary_size}) (the vocabulary size). "
            f"Received ids: {outside[:5].tolist()}"
        )
    mask = known_values(x["padding_mask"]) if "padding_mask" in x else None
    if mask is not None and mask.shape != token_ids.shape:
        raise ValueError(
            "`padding_mask` must have the shape of `token_ids`. Received: "
            f"padding_mask.shape={mask.shape}, token_ids.shape={token_ids.shape}"
        )
    if mask is not None and not np.isin(mask, (0, 1)).all():
        raise ValueError(
            "`padding_mask` must hold 0 (padding) and 1 (token) only. Received values "
            f"{np.unique(mask[~np.isin(mask, (0, 1))])[:5].tolist()}"
        )
    length = token_ids.shape[-1] if token_ids.ndim else 0
    if max_sequence_length is not None and length > max_sequence_length:
        raise ValueError(
            f"`token_ids` has sequences of {length} tokens; the model takes at most "
            f"{max_sequence_length} (its `max_sequence_length`)."
        )


def check_sentences(x, preprocessor):
    """A clear error for inputs `predict` cannot take, before any tracing."""
    if isinstance(x, dict) or is_dataset(x):
        return
    if preprocessor is None:
        raise TypeError(
            "This model has no preprocessor: give `predict` a dict "
            f"{{'token_ids', 'padding_mask'}}. Received: x={shown(x)}"
        )
    texts = [x] if isinstance(x, str) else x
    if not isinstance(texts, (list, tuple, np.ndarray)):
        raise TypeError(
            "`x` must be a list of sentences (strings) or a dict of token ids. "
            f"Received: x={shown(x)}"
        )
    if any(isinstance(part, np.ndarray) and part.dtype.kind in "iuf" for part in texts):
        raise TypeError(
            "`x` holds arrays of numbers: token ids go in a dict "
            f"{{'token_ids', 'padding_mask'}}, not a list or tuple. Received: x={shown(x)}"
        )
    check_texts("x", texts)


def is_dataset(x):
    """Whether `x` is a `tf.data.Dataset`."""
    return isinstance(x, tf.data.Dataset)
