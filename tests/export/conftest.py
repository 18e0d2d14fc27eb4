"""Small models shared by the export tests."""

import hashlib
import inspect

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.export.model_parts import copy_model
from keras_subembed.models import CompressedRobertaBackbone
from keras_subembed.models import CompressedRobertaMaskedLM
from keras_subembed.models import CompressedRobertaMaskedLMPreprocessor
from keras_subembed.models.families.token_embedding import find_token_embedding

VOCABULARY = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
              + "the police said was closed market news".split() + list("abcdefghijklmnopqrstuvwxyz."))


def masked_lm(kind, vocab, preprocessor=None, width=32, **embedding_kwargs):
    keras.utils.set_random_seed(0)
    backbone = CompressedRobertaBackbone(
        vocab, num_layers=1, num_heads=2, hidden_dim=width, intermediate_dim=64,
        max_sequence_length=64, embedding=kind, embedding_kwargs=embedding_kwargs)
    return CompressedRobertaMaskedLM(backbone, preprocessor)


def sentence_encoder():
    """A tiny keras-hub BERT, mean-pooled and L2-normalised, as a sentence model
    takes it: {"token_ids", "padding_mask"} -> {"embedding"}."""
    keras.utils.set_random_seed(0)
    bert = keras_hub.models.BertBackbone(
        vocabulary_size=100, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=32)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
    states = bert({"token_ids": token_ids, "padding_mask": padding_mask,
                   "segment_ids": keras.ops.zeros_like(token_ids)})["sequence_output"]
    weights = keras.ops.expand_dims(keras.ops.cast(padding_mask, "float32"), -1)
    pooled = keras.ops.sum(states * weights, axis=1) / keras.ops.maximum(
        keras.ops.sum(weights, axis=1), 1.0)
    embedding = keras.ops.normalize(pooled, axis=-1)
    return keras.Model({"token_ids": token_ids, "padding_mask": padding_mask},
                       {"embedding": embedding}), bert


@pytest.fixture(scope="module")
def model():
    """token ids -> a 20 x 4 table, mean-pooled: the smallest model an export converts.
    (tests/export/test_pipeline.py has a `model` of its own: the table's rows, not pooled.)"""
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    vectors = keras.layers.Embedding(20, 4)(token_ids)
    return keras.Model(token_ids, keras.layers.GlobalAveragePooling1D()(vectors))


@pytest.fixture(scope="session")
def saved_masked_lm(tmp_path_factory):
    """A `.keras` masked LM with a preprocessor (so the CLI writes a vocabulary)."""
    preprocessor = CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
        VOCABULARY, sequence_length=64)
    model = masked_lm("sub", len(VOCABULARY), preprocessor, num_tables=2)
    path = tmp_path_factory.mktemp("model") / "mlm.keras"
    model.save(path)
    return path


def convert_a_noisy_copy(monkeypatch, module, model):
    """Makes `module.convert` convert a copy of `model` whose token table carries 5% noise,
    whatever model it is given: the file no longer matches the model that is verified."""

    noisy = copy_model(model)
    rng = np.random.default_rng(0)
    for weight in find_token_embedding(noisy).weights:
        value = keras.ops.convert_to_numpy(weight)
        if value.dtype.kind == "f":
            weight.assign(value + 0.05 * value.std() * rng.standard_normal(value.shape))
    real_convert = module.convert
    monkeypatch.setattr(module, "convert",
                        lambda _, *args, **kwargs: real_convert(noisy, *args, **kwargs))


# Conversions made once per model: each export converts (SavedModel, then the TFLite
# converter or tf2onnx) for 5-30 s, most of a test's time. Tests of what an export
# does around the conversion (targets, overwrite, tokenizer files, refusals) ask for
# `convert_each_model_once`: an export of a model converted before in this session,
# with the same arguments, gets the bytes the converter gave then. Conversion is
# deterministic (`test_overwrite_replaces_only_what_an_export_wrote`), each model and
# quantization is still converted once for real, and everything after the conversion
# (verification, reports, writing the files) runs as it would.
CONVERSIONS = {}


def model_fingerprint(model):
    """What tells two models apart for a conversion: their class, config and weights."""
    digest = hashlib.sha256(type(model).__name__.encode())
    try:
        digest.update(model.to_json().encode())
    except Exception:  # a model without a serialisable config: its weights still count
        pass
    for weight in model.weights:
        value = np.ascontiguousarray(keras.ops.convert_to_numpy(weight))
        digest.update(f"{weight.path}:{value.dtype}:{value.shape}".encode())
        digest.update(value.tobytes())
    return digest.hexdigest()


def converted_once(function, model_argument):
    """`function`, remembering its result per (model fingerprint, other arguments);
    the scratch folder (a fresh name beside each target) is no part of the key."""
    signature = inspect.signature(function)

    def once(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("scratch", None)
        model = arguments.pop(model_argument)
        key = (function.__module__, function.__name__,
               model_fingerprint(model) if model_argument == "model" else hash_bytes(model),
               repr(sorted(arguments.items())))
        if key not in CONVERSIONS:
            CONVERSIONS[key] = function(*args, **kwargs)
        return CONVERSIONS[key]

    return once


def hash_bytes(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def convert_each_model_once(monkeypatch):
    """Within the test, `.tflite` and `.onnx` conversions (and ai-edge-quantizer's
    quantization of a flatbuffer) of a model converted before reuse those bytes.
    On another backend the export converts in a TensorFlow process: nothing to reuse."""
    if keras.backend.backend() != "tensorflow":
        return
    from keras_subembed.export.litert import conversion

    monkeypatch.setattr(conversion, "convert", converted_once(conversion.convert, "model"))
    monkeypatch.setattr(conversion, "quantize_flatbuffer",
                        converted_once(conversion.quantize_flatbuffer, "flatbuffer"))
    try:
        from keras_subembed.export.onnx import onnx_format
    except ImportError:
        return
    monkeypatch.setattr(onnx_format, "convert", converted_once(onnx_format.convert, "model"))
