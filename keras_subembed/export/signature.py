"""A model's serving signature: named inputs and outputs, and inputs to check it on."""

import dataclasses

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from keras_subembed.models.families.token_embedding import find_token_embedding
from keras_subembed.export.model_parts import max_sequence_length

SAMPLE_INPUTS_HELP = (
    "Pass `sample_inputs`: a list of samples, each a dict {input name: array} "
    "(or the array itself for a single-input model), or pass verify=False."
)


@dataclasses.dataclass(frozen=True)
class ServingInputs:
    """How a model takes its inputs: by name, as a list, or as one tensor.

    `specs` is `((name, dtype, shape), ...)` with a dynamic batch dimension;
    `structure` is "dict", "list" or "single". `zero_filled` names model inputs
    left out of the signature and given zeros shaped as `token_ids`: a
    keras-hub `TextEmbedder`'s `segment_ids` (a sentence is one segment), so
    every sentence embedder ships as `token_ids, padding_mask -> embedding`.
    """

    structure: str
    specs: tuple
    zero_filled: tuple = ()

    @property
    def names(self):
        return [name for name, _, _ in self.specs]

    @classmethod
    def of(cls, model, sample_inputs=None):
        """The model's declared inputs, else the structure of `sample_inputs`.

        Functional and Sequential models declare their inputs; a subclassed
        model's inputs are known only from samples.
        """
        structure = declared_inputs(model)
        if structure is not None:
            serving = cls.from_structure(structure, symbolic=True)
            if isinstance(model, keras_hub.models.TextEmbedder) and "segment_ids" in serving.names:
                specs = tuple(spec for spec in serving.specs if spec[0] != "segment_ids")
                serving = cls(serving.structure, specs, zero_filled=("segment_ids",))
            return serving
        if sample_inputs is None:
            raise ValueError(
                f"Cannot tell the inputs of {type(model).__name__}: a subclassed model "
                "declares none. Pass `sample_inputs`: a list of samples, each a dict "
                "{input name: array} or the array itself for a single-input model."
            )
        return cls.from_structure(as_sample_list(sample_inputs)[0], symbolic=False)

    @classmethod
    def from_structure(cls, structure, symbolic):
        if isinstance(structure, dict):
            kind, named = "dict", [(str(key), value) for key, value in structure.items()]
        elif isinstance(structure, (list, tuple)):
            kind, named = "list", [
                (tensor_name(value, index) if symbolic else input_name(index), value)
                for index, value in enumerate(structure)
            ]
        else:
            kind, named = "single", [(tensor_name(structure, 0) if symbolic else "inputs", structure)]
        specs = []
        for name, value in named:
            if not symbolic:
                value = np.asarray(keras.ops.convert_to_numpy(value))
            elif not isinstance(value, keras.KerasTensor):
                raise ValueError(
                    f"Only a dict, a list or a single tensor of inputs can be exported; "
                    f"input {name!r} is {type(value).__name__}."
                )
            shape = tuple(value.shape)
            dtype = keras.backend.standardize_dtype(value.dtype)
            # Batch always dynamic; other dimensions as the model declares them
            # (sequence length dynamic); from samples, every dimension dynamic.
            shape = (None,) + shape[1:] if symbolic else (None,) * len(shape)
            specs.append((name, dtype, shape))
        return cls(kind, tuple(specs))

    def tensor_specs(self):
        """`{name: tf.TensorSpec}` for a serving signature."""
        return {name: tf.TensorSpec(shape, dtype, name=name) for name, dtype, shape in self.specs}

    def arguments(self, by_name):
        """What to call the model with, given `{name: tensor}`."""
        if self.structure == "dict":
            zeros = {name: keras.ops.zeros_like(by_name["token_ids"]) for name in self.zero_filled}
            return {**by_name, **zeros}
        if self.structure == "single":
            return by_name[self.names[0]]
        return [by_name[name] for name in self.names]


def declared_inputs(model):
    """The model's symbolic input structure, or None when it declares none."""
    if isinstance(model, keras.Sequential):
        inputs = list(model.inputs or ())
        return None if not inputs else inputs[0] if len(inputs) == 1 else inputs
    try:
        structure = model.input
    except (AttributeError, ValueError):
        return None
    leaves = keras.tree.flatten(structure)
    return structure if leaves and all(isinstance(x, keras.KerasTensor) for x in leaves) else None


def input_name(index):
    return indexed_name("inputs", index)


def indexed_name(stem, index):
    """Keras' style of naming the n-th of several: `stem`, `stem_1`, `stem_2`, ..."""
    return stem if index == 0 else f"{stem}_{index}"


def tensor_name(tensor, index):
    return tensor.name or input_name(index)


def named_outputs(outputs, single_name="outputs"):
    """`{name: tensor}`: a dict output keeps its names, a list is numbered, a
    single tensor is `single_name`."""
    if isinstance(outputs, dict):
        return {str(name): value for name, value in outputs.items()}
    if isinstance(outputs, (list, tuple)):
        return {indexed_name("outputs", index): value for index, value in enumerate(outputs)}
    return {single_name: outputs}


def output_name(model):
    """The name of a single-tensor output: a sentence embedder gives `embedding`."""
    return "embedding" if isinstance(model, keras_hub.models.TextEmbedder) else "outputs"


def serving_function(model, serving_inputs):
    """A function of `{input name: tensor}` returning `{output name: tensor}`."""
    single_name = output_name(model)

    def serve(inputs):
        outputs = model(serving_inputs.arguments(inputs), training=False)
        return named_outputs(outputs, single_name)

    return serve


def as_sample_list(sample_inputs):
    if isinstance(sample_inputs, dict):
        return [sample_inputs]
    if not isinstance(sample_inputs, (list, tuple)) or not sample_inputs:
        raise ValueError(
            f"`sample_inputs` must be a non-empty list of samples. {SAMPLE_INPUTS_HELP} "
            f"Received: sample_inputs={sample_inputs!r:.200}"
        )
    return list(sample_inputs)


def check_sample_inputs(sample_inputs, serving_inputs):
    """`sample_inputs` as a list of `{name: NumPy array}`, checked against the specs."""
    samples = []
    for index, sample in enumerate(as_sample_list(sample_inputs)):
        names = serving_inputs.names
        if isinstance(sample, dict) or serving_inputs.structure == "dict":
            if not isinstance(sample, dict) or set(map(str, sample)) != set(names):
                got = sorted(map(str, sample)) if isinstance(sample, dict) else type(sample).__name__
                raise ValueError(
                    f"`sample_inputs[{index}]` must be a dict with the model's inputs "
                    f"{sorted(names)}. Received: {got}"
                )
            by_name = {str(name): value for name, value in sample.items()}
        elif serving_inputs.structure == "single":
            by_name = {names[0]: sample}
        elif isinstance(sample, (list, tuple)) and len(sample) == len(names):
            by_name = dict(zip(names, sample))
        else:
            raise ValueError(
                f"`sample_inputs[{index}]` must be a list of {len(names)} arrays, one per "
                f"model input {names}, or a dict by name. Received: {type(sample).__name__}"
            )
        samples.append({
            name: checked_array(by_name[name], f"sample_inputs[{index}][{name!r}]", dtype, shape)
            for name, dtype, shape in serving_inputs.specs
        })
    return samples


def checked_array(value, where, dtype, shape):
    array = np.asarray(keras.ops.convert_to_numpy(value))
    if array.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(array.shape, shape)
    ):
        raise ValueError(f"`{where}` has shape {array.shape}; the model takes {shape}.")
    if array.size == 0:
        raise ValueError(
            f"`{where}` has shape {array.shape}. A .tflite file needs a batch of at "
            "least one sequence of at least one token (TFLite kernels fail on empty tensors)."
        )
    return array.astype(dtype)


def input_roles(serving_inputs):
    """`{name: role}` for inputs whose values can be made up, by their names."""
    roles, unnamed_integers = {}, []
    for name, dtype, shape in serving_inputs.specs:
        if len(shape) != 2 or not (dtype.startswith(("int", "uint")) or dtype == "bool"):
            continue
        if name.endswith("mask") and not name.startswith("mask_"):
            roles[name] = "mask"  # padding_mask, attention_mask
        elif dtype == "bool":
            continue
        elif name in ("token_ids", "mask_positions", "segment_ids"):
            roles[name] = name
        else:
            unnamed_integers.append(name)
    # A single other integer input of a model without `token_ids` holds the ids.
    if "token_ids" not in roles.values() and len(unnamed_integers) == 1:
        roles[unnamed_integers[0]] = "token_ids"
    return roles


def make_sample_inputs(model, serving_inputs, sequence_lengths=(16, 128), batch_size=2, seed=0):
    """Valid inputs for each sequence length, as `[{name: array}]`.

    Token ids are random ids of the model's vocabulary with trailing padding
    (the second row is half padding), masks mark the real tokens, segment ids
    are 0 and mask positions are sorted positions of real tokens. Lengths
    are capped at the model's `max_sequence_length`. Raises `ValueError` for
    an input whose role its name does not tell: pass `sample_inputs` then.
    """
    roles = input_roles(serving_inputs)
    unknown = [(name, dtype, shape) for name, dtype, shape in serving_inputs.specs if name not in roles]
    if unknown:
        described = ", ".join(f"{name!r} ({dtype}, shape {shape})" for name, dtype, shape in unknown)
        raise ValueError(
            f"Cannot make verification inputs for {described}: only integer token ids "
            "('token_ids', or the one integer input), masks ('padding_mask'), "
            f"'segment_ids' and 'mask_positions' of shape (batch, length) are known. "
            f"{SAMPLE_INPUTS_HELP}"
        )
    embedding = find_token_embedding(model)
    if "token_ids" in roles.values() and embedding is None:
        raise ValueError(
            "Cannot make verification token ids: the model has no embedding layer to "
            f"tell its vocabulary size. {SAMPLE_INPUTS_HELP}"
        )
    rng = np.random.default_rng(seed)
    samples = []
    for length in sample_lengths(model, serving_inputs, sequence_lengths):
        lengths = [length] + [max(1, length // 2)] * (batch_size - 1)  # padded rows
        padding_mask = np.arange(length)[None, :] < np.array(lengths)[:, None]
        token_ids = rng.integers(1, max(2, embedding.input_dim if embedding else 2),
                                 size=(batch_size, length)) * padding_mask
        count = min(5, min(lengths))
        values = {
            "mask": padding_mask,
            "token_ids": token_ids,
            "segment_ids": np.zeros_like(token_ids),
            "mask_positions": np.stack(
                [np.sort(rng.choice(n, count, replace=False)) for n in lengths]
            ),
        }
        samples.append({
            name: values[roles[name]].astype(dtype) for name, dtype, _ in serving_inputs.specs
        })
    return samples


def sample_lengths(model, serving_inputs, sequence_lengths):
    static = {shape[1] for _, _, shape in serving_inputs.specs
              if len(shape) >= 2 and shape[1] is not None}
    if static:  # the model fixes the sequence length
        return sorted(static)[:1]
    limit = max_sequence_length(model)
    return sorted({int(n) if limit is None else min(int(n), limit) for n in sequence_lengths})


def sequence_lengths_of(samples, serving_inputs):
    """The sorted lengths of the samples' sequences (those that have one)."""
    return tuple(sorted({sequence_length_of(s, serving_inputs) for s in samples} - {None}))


def sequence_length_of(sample, serving_inputs):
    """The length of a sample's sequences (dimension 1 of its ids), or None."""
    roles = input_roles(serving_inputs)
    names = [name for name, role in roles.items() if role == "token_ids"] + [
        name for name, _, shape in serving_inputs.specs if len(shape) >= 2
    ]
    return int(sample[names[0]].shape[1]) if names else None
