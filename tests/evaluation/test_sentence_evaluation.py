"""`SentenceEvaluation` with encoders stood in by bags of token ids: every encoder is
measured against the first one measured. (Two BERT encoders: tests/test_evaluation.py.)"""

import keras_hub
import numpy as np

from keras_subembed import evaluation
from tests.installed import needs_gensim

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
    "the of to and in is good bad news game team".split())


def bag_of_ids(swap=None):
    """Each text's id counts (the mask applied); `swap` exchanges two ids' columns."""
    order = np.arange(len(VOCABULARY))
    if swap:
        order[list(swap)] = order[list(reversed(swap))]

    def run_batch(ids, mask):
        counts = np.zeros((len(ids), len(VOCABULARY)), "float32")
        np.add.at(counts, (np.repeat(np.arange(len(ids)), ids.shape[1]), ids.ravel()), mask.ravel())
        return counts[:, order]

    return run_batch


def texts(count, offset):
    """`count` texts of 2 to 7 words, each its own mix of the vocabulary's words."""
    words = VOCABULARY[5:]
    return [" ".join(words[(offset + i * j) % len(words)] for j in range(2 + i % 6))
            for i in range(count)]


@needs_gensim
def test_every_encoder_is_measured_against_the_first():
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=VOCABULARY), sequence_length=16)
    labels = np.arange(40) % 2
    suite = evaluation.SentenceEvaluation(
        preprocessor, in_domain=texts(30, 0), out_of_domain=texts(30, 3),
        polarity=(texts(40, 1), labels), topics=(texts(40, 2), labels, texts(20, 5), labels[:20]))
    teacher = suite.measure(bag_of_ids())
    assert teacher["cosine_in_domain"] == teacher["cosine_out_of_domain"] == 1.0
    student = suite.measure(bag_of_ids(swap=(5, 6)))  # "the" and "of" exchanged
    assert student["cosine_in_domain"] < 1.0 and student["cosine_out_of_domain"] < 1.0
    # The teacher again: still the reference, not the encoder measured last.
    again = suite.measure(bag_of_ids())
    assert again == teacher and again["sentiment_vs_teacher_95"] == [0.0, 0.0]
