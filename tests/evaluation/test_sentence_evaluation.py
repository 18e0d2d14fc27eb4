"""`SentenceEvaluation` with encoders stood in by bags of token ids: every encoder is
measured against the first one measured; last, two tiny BERT encoders."""

import keras
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


def make_preprocessor():
    return keras_hub.models.BertTextEmbedderPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=VOCABULARY), sequence_length=16)


def texts(count, offset):
    """`count` texts of 2 to 7 words, each its own mix of the vocabulary's words."""
    words = VOCABULARY[5:]
    return [" ".join(words[(offset + i * j) % len(words)] for j in range(2 + i % 6))
            for i in range(count)]


@needs_gensim
def test_every_encoder_is_measured_against_the_first():
    preprocessor = make_preprocessor()
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


@needs_gensim
def test_sentence_evaluation_measures_against_the_first_encoder_measured():
    preprocessor = make_preprocessor()

    def embedder(seed):
        keras.utils.set_random_seed(seed)
        backbone = keras_hub.models.BertBackbone(len(VOCABULARY), num_layers=1, num_heads=2,
                                                 hidden_dim=8, intermediate_dim=16,
                                                 max_sequence_length=32)
        return keras_hub.models.BertTextEmbedder(backbone, preprocessor)

    rng = np.random.default_rng(0)

    def sentences(count):
        return [" ".join(rng.choice(VOCABULARY[5:], size=rng.integers(2, 8))) for _ in range(count)]

    labels = np.array([0, 1] * 20)
    # 40 texts a set: with the texts' longest length (9 tokens), every sentence set is one
    # (40, 9) batch. On JAX an eager call compiles each op anew for each new batch shape;
    # sets of 30, 30, 40, 40 and 20 texts took 5 shapes (with the words' 2), now 3.
    suite = evaluation.SentenceEvaluation(preprocessor, sentences(40), sentences(40),
                                          (sentences(40), labels),
                                          (sentences(40), labels, sentences(40), labels))
    teacher = suite.measure(evaluation.keras_runner(embedder(0)))
    assert teacher["cosine_in_domain"] == teacher["cosine_out_of_domain"] == 1.0
    assert teacher["sentiment_vs_teacher_95"] == [0.0, 0.0]
    student = suite.measure(evaluation.keras_runner(embedder(1)))
    assert student["cosine_out_of_domain"] < 0.99
    low, high = student["sentiment_vs_teacher_95"]
    difference = student["sentiment_accuracy"] - teacher["sentiment_accuracy"]
    assert low - 1e-4 <= difference <= high + 1e-4 and low < high
    assert set(student) == set(teacher) == {
        "cosine_in_domain", "cosine_out_of_domain", "sentiment_accuracy", "topic_accuracy",
        "wordsim353", "simlex999", "sentiment_vs_teacher_95"}
