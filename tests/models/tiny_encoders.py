"""Tiny keras-hub encoders for the models' unit tests: one 8-wide layer over a 12-token
vocabulary, built in well under a second, for tests that need a real encoder but not
its quality."""

import keras
import keras_hub
import numpy as np

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
    "the city rain road was closed in").split()
SIZES = dict(num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
             max_sequence_length=12)
BACKBONES = {
    "bert": keras_hub.models.BertBackbone,
    "roberta": keras_hub.models.RobertaBackbone,
    "xlm_roberta": keras_hub.models.XLMRobertaBackbone,
    "distil_bert": keras_hub.models.DistilBertBackbone,
}


def tiny_backbone(family="bert", seed=0, vocabulary_size=len(VOCABULARY), **sizes):
    """A keras-hub backbone of `family` (a key of `BACKBONES`), seeded; `sizes` replace
    those of `SIZES`."""
    keras.utils.set_random_seed(seed)
    return BACKBONES[family](vocabulary_size, **{**SIZES, **sizes})


def tiny_bert_embedder(sequence_length=8, seed=0, **kwargs):
    """keras-hub's `BertTextEmbedder` over `tiny_backbone("bert")`, with its WordPiece
    preprocessor; `kwargs` go to the embedder (`pooling_mode`, `normalize`)."""
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
        tokenizer, sequence_length=sequence_length)
    return keras_hub.models.BertTextEmbedder(tiny_backbone("bert", seed), preprocessor, **kwargs)


def two_sentences(backbone):
    """Two sentences of ids for `backbone`, the second one padded (and zero segments
    where the backbone takes them)."""
    ids = np.array([[2, 5, 6, 7, 8, 3], [2, 9, 10, 3, 0, 0]], "int32")
    inputs = {"token_ids": ids, "padding_mask": (ids != 0).astype("int32")}
    if "segment_ids" in backbone.input:
        inputs["segment_ids"] = np.zeros_like(ids)
    return inputs


def sequence_output(backbone, inputs):
    """`backbone`'s token states for `inputs`, as NumPy (BERT returns them in a dict,
    RoBERTa-style backbones alone)."""
    outputs = backbone(inputs)
    return keras.ops.convert_to_numpy(
        outputs["sequence_output"] if isinstance(outputs, dict) else outputs)
