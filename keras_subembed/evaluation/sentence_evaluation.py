"""The held-out measures of sentence encoders against a reference encoder."""

from keras_subembed import datasets
from keras_subembed.evaluation.metrics import bootstrap_interval
from keras_subembed.evaluation.metrics import mean_cosine
from keras_subembed.evaluation.metrics import sentiment_accuracy
from keras_subembed.evaluation.metrics import sentiment_correct
from keras_subembed.evaluation.metrics import topic_accuracy
from keras_subembed.evaluation.metrics import word_similarity_spearman
from keras_subembed.evaluation.tokenized_texts import TokenizedTexts

WORD_SIMILARITY = ("wordsim353", "simlex999")


class SentenceEvaluation:
    """Cosine to a reference in and out of domain, sentiment (with its paired
    interval), topic accuracy and word similarity of one encoder after another.

    The first encoder measured is the reference (the teacher): later ones are
    compared with its vectors and its per-sentence sentiment answers. Texts
    are tokenized once, by `preprocessor`.

    Args:
        preprocessor: the keras-hub text preprocessor of the encoders.
        in_domain: list of str, sentences like the training text.
        out_of_domain: list of str, sentences unlike it.
        polarity: `(texts, labels)`, sentences labelled 0 / 1 by sentiment.
        topics: `(train_texts, train_labels, test_texts, test_labels)`.

    `measure(run_batch)` (see `keras_runner`, `tflite_runner`) returns a dict:
    `cosine_in_domain`, `cosine_out_of_domain`, `sentiment_accuracy`,
    `topic_accuracy`, `wordsim353`, `simlex999` and `sentiment_vs_teacher_95`
    (the 95% paired bootstrap interval of this encoder's sentiment accuracy
    less the reference's).

    Example:
    ```python
    suite = SentenceEvaluation(embedder.preprocessor, in_domain, out_of_domain,
                               datasets.polarity_sentences(), topics)
    teacher = suite.measure(keras_runner(embedder))  # the reference
    student = suite.measure(tflite_runner("student.tflite"))
    ```
    """

    def __init__(self, preprocessor, in_domain, out_of_domain, polarity, topics):
        polarity_texts, self.sentiment = polarity
        train_texts, self.train_topics, test_texts, self.test_topics = topics
        self.words = sorted({w for name in WORD_SIMILARITY
                             for a, b, _ in datasets.word_similarity_pairs(name) for w in (a, b)})
        self.sets = {name: TokenizedTexts(texts, preprocessor) for name, texts in [
            ("in_domain", in_domain), ("out_of_domain", out_of_domain),
            ("polarity", polarity_texts), ("train_posts", train_texts),
            ("test_posts", test_texts), ("words", self.words)]}
        self.reference_vectors = self.reference_correct = None

    def measure(self, run_batch):
        """The measures of the encoder `run_batch(token_ids, padding_mask) -> vectors`."""
        vectors = {name: texts.embed(run_batch) for name, texts in self.sets.items()}
        correct = sentiment_correct(vectors["polarity"], self.sentiment)
        if self.reference_vectors is None:
            self.reference_vectors, self.reference_correct = vectors, correct
        word_index = {w: i for i, w in enumerate(self.words)}

        def embed_words(words):
            return vectors["words"][[word_index[w] for w in words]]

        result = {f"cosine_{name}": mean_cosine(vectors[name], self.reference_vectors[name])
                  for name in ("in_domain", "out_of_domain")}
        result["sentiment_accuracy"] = sentiment_accuracy(vectors["polarity"], self.sentiment)[0]
        result["topic_accuracy"] = topic_accuracy(
            vectors["train_posts"], self.train_topics, vectors["test_posts"], self.test_topics)
        result.update({name: word_similarity_spearman(embed_words, name)[0]
                       for name in WORD_SIMILARITY})
        result = {key: round(float(value), 4) for key, value in result.items()}
        result["sentiment_vs_teacher_95"] = [
            round(bound, 4) for bound in bootstrap_interval(correct, self.reference_correct)]
        return result
