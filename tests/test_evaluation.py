"""`SentenceEvaluation` on two tiny BERT encoders: the first measured is the reference."""

import numpy as np

from keras_subembed import evaluation
from tests.installed import needs_gensim


@needs_gensim
def test_sentence_evaluation_measures_against_the_first_encoder_measured():
    import keras
    import keras_hub

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
        "the of to and in is good bad news game team".split())
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=vocabulary), sequence_length=16)

    def embedder(seed):
        keras.utils.set_random_seed(seed)
        backbone = keras_hub.models.BertBackbone(len(vocabulary), num_layers=1, num_heads=2,
                                                 hidden_dim=8, intermediate_dim=16,
                                                 max_sequence_length=32)
        return keras_hub.models.BertTextEmbedder(backbone, preprocessor)

    rng = np.random.default_rng(0)

    def sentences(count):
        return [" ".join(rng.choice(vocabulary[5:], size=rng.integers(2, 8))) for _ in range(count)]

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
