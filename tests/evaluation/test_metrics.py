"""The measures of sentence vectors (cosine, sentiment and topic accuracy, bootstrap
intervals, word similarity, the Pareto front) and `plot_quality_vs_size`, also as a
writer: the package's file guarantees, the suffix's format."""

import collections
import re
import tracemalloc

import numpy as np
import pytest

from keras_subembed import datasets
from keras_subembed import evaluation
from tests.installed import needs_gensim

ROWS = [{"name": "teacher", "file_mb": 22.0, "cosine": 1.0},
        {"name": "sub K=2", "file_mb": 9.0, "cosine": 0.9}]

# The first bytes of each format the suffix names.
SIGNATURES = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-", ".svg": b"<?xml",
              ".eps": b"%!PS-Adobe", ".ps": b"%!PS-Adobe"}


@pytest.mark.parametrize("suffix", sorted(SIGNATURES))
def test_the_file_is_in_the_format_its_suffix_names(tmp_path, suffix):
    path = evaluation.plot_quality_vs_size(ROWS, tmp_path / f"quality{suffix}")
    assert path.read_bytes().startswith(SIGNATURES[suffix])
    # Replaceable: it proves it is ours.
    evaluation.plot_quality_vs_size(ROWS, path, overwrite=True)
    assert path.read_bytes().startswith(SIGNATURES[suffix])


def test_an_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"`path` must end in one of \.png, \.pdf.*"
                                         r"path='.*quality\.jpgg'"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "quality.jpgg")
    with pytest.raises(ValueError, match=r"must end in one of.*path='.*quality'"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "quality")
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_overwritten_without_overwrite_and_never_a_file_it_did_not_write(tmp_path):
    path = tmp_path / "quality.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n a photo")
    with pytest.raises(FileExistsError, match=r"exists; pass overwrite=True to replace it"):
        evaluation.plot_quality_vs_size(ROWS, path)
    with pytest.raises(FileExistsError, match=r"exists and is not a plot this function wrote"):
        evaluation.plot_quality_vs_size(ROWS, path, overwrite=True)
    assert path.read_bytes() == b"\x89PNG\r\n\x1a\n a photo"
    with pytest.raises(ValueError, match=r"`overwrite` must be a bool. Received: overwrite='yes'"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "new.png", overwrite="yes")


def test_a_failed_plot_leaves_nothing_behind(tmp_path):
    with pytest.raises(ValueError, match="No row has both"):
        evaluation.plot_quality_vs_size(ROWS, tmp_path / "quality.pdf", quality="topic")
    assert list(tmp_path.iterdir()) == []


def test_stratified_bootstrap_weighs_each_group_alike_and_is_paired():
    groups = [np.array([1.0, 1.0, 1.0, 0.0]), np.array([0.0, 1.0] * 10)]
    low, high = evaluation.stratified_bootstrap_interval(groups, rounds=500)
    assert low < (0.75 + 0.5) / 2 < high and high - low < 0.5
    # Against itself the paired difference has no spread.
    assert evaluation.stratified_bootstrap_interval(groups, groups, rounds=500) == (0.0, 0.0)
    with pytest.raises(ValueError, match=re.escape(
            "`reference_groups` must pair with `groups` group by group. Received: 1 and 2 groups")):
        evaluation.stratified_bootstrap_interval(groups, groups[:1])
    with pytest.raises(ValueError, match=re.escape(
            "`groups[1]` must be a 1-D array of at least 2 finite numbers. Received: shape (1,)")):
        evaluation.stratified_bootstrap_interval([[1.0, 0.0], [1.0]])


def test_mean_cosine_hand_computed():
    assert evaluation.mean_cosine([[1.0, 0.0], [0.0, 2.0]], [[2.0, 0.0], [1.0, 1.0]]) == (
        pytest.approx((1.0 + 1.0 / np.sqrt(2.0)) / 2.0))
    vectors = np.random.default_rng(0).normal(size=(7, 5))
    assert evaluation.mean_cosine(vectors, vectors) == pytest.approx(1.0)
    assert evaluation.mean_cosine(vectors, -3.0 * vectors) == pytest.approx(-1.0)
    assert evaluation.mean_cosine(vectors, 0.5 * vectors) == pytest.approx(1.0)


@pytest.mark.parametrize("vectors, reference, message", [
    (np.ones((3, 4)), np.ones((2, 4)), r"same shape.*\(3, 4\) and \(2, 4\)"),
    (np.ones((0, 4)), np.ones((0, 4)), r"non-empty 2D.*vectors.shape=\(0, 4\)"),
    (np.ones(4), np.ones(4), r"non-empty 2D.*vectors.shape=\(4,\)"),
    (np.zeros((2, 3)), np.ones((2, 3)), "zero vectors"),
    (np.full((2, 3), np.nan), np.ones((2, 3)), "NaN"),
])
def test_mean_cosine_errors(vectors, reference, message):
    with pytest.raises(ValueError, match=message):
        evaluation.mean_cosine(vectors, reference)


def _two_clusters(count, width, seed):
    """Well separated classes: class 1 around +4, class 0 around -4 (first axis)."""
    rng = np.random.default_rng(seed)
    labels = np.arange(count) % 2
    vectors = rng.normal(size=(count, width))
    vectors[:, 0] += np.where(labels == 1, 4.0, -4.0) * 3
    return vectors, labels


def test_sentiment_accuracy_of_separable_vectors_is_one():
    vectors, labels = _two_clusters(60, 8, seed=0)
    assert evaluation.sentiment_accuracy(vectors, labels) == (1.0, 0.0)


def test_sentiment_accuracy_of_random_vectors_is_chance():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(400, 16))
    labels = rng.integers(0, 2, size=400)
    mean, std = evaluation.sentiment_accuracy(vectors, labels, folds=5, seed=0)
    assert 0.4 < mean < 0.6 and 0.0 < std < 0.15
    assert evaluation.sentiment_accuracy(vectors, labels, folds=5, seed=0) == (mean, std)
    assert evaluation.sentiment_accuracy(vectors, labels, folds=5, seed=1) != (mean, std)


def test_sentiment_accuracy_errors():
    vectors, labels = _two_clusters(20, 4, seed=0)
    with pytest.raises(ValueError, match=r"one label per row of `vectors` \(20\).*\(19,\)"):
        evaluation.sentiment_accuracy(vectors, labels[:-1])
    with pytest.raises(ValueError, match="folds=1"):
        evaluation.sentiment_accuracy(vectors, labels, folds=1)
    with pytest.raises(ValueError, match="at least 2 classes"):
        evaluation.sentiment_accuracy(vectors, np.zeros(20, dtype=int))
    with pytest.raises(ValueError, match=r"`folds` \(11\) examples"):
        evaluation.sentiment_accuracy(vectors, labels, folds=11)
    with pytest.raises(ValueError, match="non-empty 2D"):
        evaluation.sentiment_accuracy(np.zeros((0, 4)), np.zeros(0))


def test_sentiment_correct_is_the_cross_validated_accuracy_per_example():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(400, 16))
    labels = rng.integers(0, 2, size=400)
    correct = evaluation.sentiment_correct(vectors, labels, folds=5, seed=0)
    assert correct.dtype == bool and correct.shape == (400,)
    # Equal folds: the mean of the folds' accuracies is the mean over examples.
    mean, _ = evaluation.sentiment_accuracy(vectors, labels, folds=5, seed=0)
    assert abs(correct.mean() - mean) < 1e-9
    separable, separable_labels = _two_clusters(60, 8, seed=0)
    assert evaluation.sentiment_correct(separable, separable_labels).all()
    with pytest.raises(ValueError, match="folds=1"):
        evaluation.sentiment_correct(vectors, labels, folds=1)


def test_bootstrap_interval_of_a_mean_and_of_a_paired_difference():
    values = np.r_[np.ones(150), np.zeros(50)]  # accuracy 0.75 on 200 examples
    low, high = evaluation.bootstrap_interval(values, rounds=4000)
    # The normal approximation: 0.75 +- 1.96 * sqrt(0.75 * 0.25 / 200) = +-0.060.
    assert low < 0.75 < high and abs((high - low) / 2 - 0.060) < 0.01
    assert evaluation.bootstrap_interval(values, rounds=4000) == (low, high)  # seeded
    # Paired: the same examples right in both, two more right in the student.
    reference = values.copy()
    student = values.copy()
    student[150:152] = 1
    low, high = evaluation.bootstrap_interval(student, reference)
    assert 0.0 <= low <= 0.01 < high <= 0.025
    assert evaluation.bootstrap_interval(reference, reference) == (0.0, 0.0)


def test_bootstrap_interval_errors():
    with pytest.raises(ValueError, match=r"`values` must be a 1-D array of at least 2 finite.*\(1,\)"):
        evaluation.bootstrap_interval([1.0])
    with pytest.raises(ValueError, match=r"`values` must be .*finite"):
        evaluation.bootstrap_interval([1.0, np.nan])
    with pytest.raises(ValueError, match=r"`reference_values` must .*shapes \(3,\) and \(2,\)"):
        evaluation.bootstrap_interval([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match=r"rounds=10"):
        evaluation.bootstrap_interval([1, 0], rounds=10)
    with pytest.raises(ValueError, match=r"confidence=1.5"):
        evaluation.bootstrap_interval([1, 0], confidence=1.5)
    for confidence in ("0.9", True, None):
        with pytest.raises(ValueError, match=re.escape(
                f"`confidence` must be a probability strictly between 0 and 1. "
                f"Received: confidence={confidence!r}")):
            evaluation.bootstrap_interval([1, 0], confidence=confidence)
    with pytest.raises(ValueError, match=r"`rounds` must be an integer\. Received: rounds=200\.5"):
        evaluation.bootstrap_interval([1, 0], rounds=200.5)


def test_bootstrap_interval_memory_stays_bounded_with_many_examples():
    """Rounds x examples resampled at once was 800 MB here (1.56 GB at 2,000 rounds)."""
    rng = np.random.default_rng(0)
    values = (rng.random(50_000) < 0.8).astype("float64")
    reference = (rng.random(50_000) < 0.7).astype("float64")
    tracemalloc.start()
    try:
        low, high = evaluation.bootstrap_interval(values, reference, rounds=1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6, peak
    # The paired difference's standard error: sqrt(var(values - reference) / n).
    difference = values - reference
    centre, spread = difference.mean(), 1.96 * difference.std() / np.sqrt(len(difference))
    assert abs((low + high) / 2 - centre) < 0.1 * spread
    assert abs((high - low) / 2 - spread) < 0.1 * spread


def test_stratified_split_is_deterministic_and_balanced():
    texts = [f"post {i}" for i in range(100)]
    labels = np.array([0] * 60 + [1] * 40)
    train_texts, train_labels, test_texts, test_labels = evaluation.stratified_split(
        texts, labels, test_fraction=0.3, seed=0)
    assert (len(train_texts), len(test_texts)) == (70, 30)
    assert np.bincount(test_labels).tolist() == [18, 12]
    assert sorted(train_texts + test_texts) == sorted(texts)
    # Each text keeps its own label.
    for text, label in zip(train_texts + test_texts, np.concatenate([train_labels, test_labels])):
        assert labels[int(text.split()[1])] == label
    again = evaluation.stratified_split(texts, labels, test_fraction=0.3, seed=0)
    assert again[0] == train_texts and np.array_equal(again[3], test_labels)
    assert evaluation.stratified_split(texts, labels, test_fraction=0.3, seed=1)[2] != test_texts
    with pytest.raises(ValueError, match="test_fraction=1.5"):
        evaluation.stratified_split(texts, labels, test_fraction=1.5)
    with pytest.raises(ValueError, match=r"one label per row of `texts` \(100\)"):
        evaluation.stratified_split(texts, labels[:10])


@needs_gensim
def test_stratified_split_of_newsgroup_posts():
    texts, labels, _ = datasets.newsgroup_posts()
    train_texts, train_labels, test_texts, test_labels = evaluation.stratified_split(texts, labels)
    assert np.bincount(train_labels).tolist() == [70, 70]
    assert np.bincount(test_labels).tolist() == [30, 30]
    assert not set(train_texts) & set(test_texts)


def test_topic_accuracy():
    vectors, labels = _two_clusters(80, 6, seed=2)
    train, test = slice(0, 60), slice(60, 80)
    assert evaluation.topic_accuracy(vectors[train], labels[train], vectors[test], labels[test]) == 1.0
    assert evaluation.topic_accuracy(
        vectors[train], labels[train], vectors[test], 1 - labels[test]) == 0.0
    assert evaluation.topic_accuracy([[1.0], [2.0], [-1.0], [-2.0]], [1, 1, 0, 0],
                                     [[3.0], [-3.0]], [1, 1]) == 0.5


def test_topic_accuracy_errors():
    vectors, labels = _two_clusters(20, 4, seed=0)
    with pytest.raises(ValueError, match="same width. Received: 4 and 3"):
        evaluation.topic_accuracy(vectors, labels, vectors[:, :3], labels)
    with pytest.raises(ValueError, match=r"`test_labels` must be 1D.*\(2,\)"):
        evaluation.topic_accuracy(vectors, labels, vectors, labels[:2])
    with pytest.raises(ValueError, match="`train_labels` must hold at least 2 classes"):
        evaluation.topic_accuracy(vectors, np.ones(20), vectors, labels)


def _unlinked_pairs(name, count):
    """`count` pairs of `name` whose words form no other pair of `name`.

    Pairs listed twice (WordSim has "money, bank" at 8.12 and 8.5) are
    skipped: their two scores cannot both be matched.
    """
    all_pairs = datasets.word_similarity_pairs(name)
    times_listed = collections.Counter(frozenset((a, b)) for a, b, _ in all_pairs)
    linked = set(times_listed)
    chosen, words = [], set()
    for a, b, score in all_pairs:
        if a == b or a in words or b in words or times_listed[frozenset((a, b))] > 1:
            continue
        others = words | {a, b}
        if any(frozenset((new, old)) in linked for new in (a, b) for old in others
               if {new, old} != {a, b}):
            continue  # e.g. ("tiger", "tiger") is a pair of its own
        chosen.append((a, b, score))
        words |= {a, b}
        if len(chosen) == count:
            break
    return chosen


def _embedding_with_cosines(pairs, cosine_of_score):
    """Word vectors where each pair's cosine is `cosine_of_score(score)`.

    Every pair gets its own plane: `a` along its first axis, `b` at the
    angle whose cosine is wanted.
    """
    vectors = {}
    for k, (a, b, score) in enumerate(pairs):
        cosine = cosine_of_score(score)
        vectors[a] = np.zeros(2 * len(pairs))
        vectors[a][2 * k] = 1.0
        vectors[b] = np.zeros(2 * len(pairs))
        vectors[b][2 * k:2 * k + 2] = (cosine, np.sqrt(1.0 - cosine ** 2))
    return vectors


@needs_gensim
@pytest.mark.parametrize("name", ["wordsim353", "simlex999"])
def test_word_similarity_spearman_of_a_perfect_embedding(name):
    pairs = _unlinked_pairs(name, 40)
    assert len(pairs) == 40
    calls = []

    def embed(vectors):
        def embed_words(words):
            calls.append(list(words))
            return np.stack([vectors[w] for w in words])
        return embed_words

    perfect = _embedding_with_cosines(pairs, lambda score: score / 10.0)
    rho, count = evaluation.word_similarity_spearman(embed(perfect), name, vocabulary=perfect)
    assert (rho, count) == (pytest.approx(1.0), 40)
    assert len(calls) == 1 and sorted(calls[0]) == sorted(perfect)  # once, each word once

    reversed_ = _embedding_with_cosines(pairs, lambda score: 1.0 - score / 10.0)
    rho, _ = evaluation.word_similarity_spearman(embed(reversed_), name, vocabulary=reversed_)
    assert rho == pytest.approx(-1.0)

    # The table form scores the same pairs the same way.
    vocabulary = sorted(perfect)
    table = np.stack([perfect[w] for w in vocabulary])
    assert evaluation.table_word_similarity_spearman(table, vocabulary, name) == (
        pytest.approx(1.0), 40)


@needs_gensim
def test_word_similarity_spearman_uses_every_pair_without_a_vocabulary():
    seen = []

    def embed_words(words):
        seen.extend(words)
        return np.random.default_rng(0).normal(size=(len(words), 8))

    rho, count = evaluation.word_similarity_spearman(embed_words, "wordsim353")
    assert count == 353 and -0.2 < rho < 0.2
    assert len(seen) == len(set(seen))


@needs_gensim
def test_word_similarity_spearman_errors():
    def embed_words(words):
        return np.ones((len(words), 3))

    with pytest.raises(ValueError, match="name='rw'"):
        evaluation.word_similarity_spearman(embed_words, "rw")
    with pytest.raises(TypeError, match="`embed_words` must be a callable"):
        evaluation.word_similarity_spearman(np.ones((3, 3)), "simlex999")
    with pytest.raises(ValueError, match="one row per word"):
        evaluation.word_similarity_spearman(lambda words: np.ones((2, 3)), "simlex999")
    with pytest.raises(ValueError, match="Only 0 pairs of 'simlex999'"):
        evaluation.word_similarity_spearman(embed_words, "simlex999", vocabulary={"zzz"})


def test_pareto_front():
    points = [(10, 0.9), (1, 0.5), (5, 0.4), (20, 0.9), (5, 0.7), (3, 0.5)]
    # (5, 0.4) loses to (1, 0.5); (20, 0.9) to (10, 0.9); (3, 0.5) to (1, 0.5).
    assert evaluation.pareto_front(points) == [1, 4, 0]
    assert evaluation.pareto_front([(2.0, 0.3)]) == [0]
    assert evaluation.pareto_front([(2.0, 0.3), (2.0, 0.3)]) == [0, 1]  # ties both stay
    assert evaluation.pareto_front(np.array([[1.0, 0.9], [2.0, 0.1]])) == [0]


@pytest.mark.parametrize("points, message", [
    ([], "non-empty list of"),
    ([(1.0, 2.0, 3.0)], r"Received shape: \(1, 3\)"),
    ([(1.0, np.nan)], "NaN"),
])
def test_pareto_front_errors(points, message):
    with pytest.raises(ValueError, match=message):
        evaluation.pareto_front(points)


MODEL_ROWS = [
    {"name": "teacher", "file_mb": 87.0, "cosine": 1.0, "sentiment": 0.80},
    {"name": "teacher dynamic", "file_mb": 22.0, "cosine": 0.995, "sentiment": 0.79},
    {"name": "sub K=2 M=1024", "file_mb": 9.1, "cosine": 0.91, "sentiment": 0.76},
    {"name": "sub K=3 M=100 before", "file_mb": 6.2, "cosine": 0.1, "sentiment": 0.55},
    {"name": "sub K=3 M=100", "file_mb": 6.2, "cosine": 0.78, "sentiment": None},
]


def test_plot_quality_vs_size_writes_a_png(tmp_path):
    import matplotlib.image

    one = evaluation.plot_quality_vs_size(MODEL_ROWS, tmp_path / "cosine.png", title="MiniLM")
    two = evaluation.plot_quality_vs_size(
        MODEL_ROWS, tmp_path / "both.png", quality=["cosine", "sentiment"],
        axis_labels={"file_mb": "file size (MB)"})
    assert one == tmp_path / "cosine.png"
    for path in (one, two):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width, _ = matplotlib.image.imread(one).shape
    assert (height, width) == (576, 768)  # 6.4 x 4.8 inches at 120 dpi
    assert matplotlib.image.imread(two).shape[:2] == (576, 2 * 768)  # a panel per quality


def test_plot_labels_of_points_side_by_side_do_not_overlap():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from keras_subembed.evaluation.metrics import _place_labels

    figure = Figure(figsize=(6.4, 4.8))
    renderer = FigureCanvasAgg(figure).get_renderer()
    axis = figure.subplots()
    axis.set_xscale("log")
    axis.set_xlim(20, 200)
    axis.set_ylim(0.80, 0.87)
    # The multilingual job's plot: two files of equal recall 30.6 and 41.8 MB apart, one alone.
    xs, ys = np.array([41.8, 30.6, 119.0]), np.array([0.862, 0.862, 0.861])
    texts = _place_labels(axis, ["split-h8k-k64 (dynamic)", "split-h8k-k64 (int4_dynamic)",
                                 "teacher (dynamic)"], xs, ys)
    boxes = [text.get_window_extent(renderer) for text in texts]
    assert [text.get_text() for text in texts] == [
        "split-h8k-k64 (int4_dynamic)", "split-h8k-k64 (dynamic)", "teacher (dynamic)"]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    # The first from the left and a label with room keep their place; the crowded one moves down.
    assert texts[0].xyann == (5, 4) and texts[2].xyann == (5, 4)
    assert texts[1].xyann[1] < 4

    # Measured on the limits the data gives: 0.001 and 0.002 are a panel apart, not a pixel.
    axis = Figure(figsize=(6.4, 4.8)).subplots()
    FigureCanvasAgg(axis.figure)
    axis.scatter([30.6, 41.8], [0.001, 0.002])  # nothing else has asked for the limits yet
    texts = _place_labels(axis, ["split-h8k-k64 (int4_dynamic)", "split-h8k-k64 (dynamic)"],
                          np.array([30.6, 41.8]), np.array([0.001, 0.002]))
    assert [text.xyann for text in texts] == [(5, 4), (5, 4)]


def test_plot_quality_vs_size_errors(tmp_path):
    with pytest.raises(ValueError, match="must not be empty"):
        evaluation.plot_quality_vs_size([], tmp_path / "x.png")
    with pytest.raises(ValueError, match="No row has both 'file_mb' and 'topic'"):
        evaluation.plot_quality_vs_size(MODEL_ROWS, tmp_path / "x.png", quality="topic")
    with pytest.raises(ValueError, match="'file_mb' must be positive"):
        evaluation.plot_quality_vs_size([{"name": "empty", "file_mb": 0.0, "cosine": 1.0}],
                                        tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
