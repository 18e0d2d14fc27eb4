"""Quality measures for sentence and word vectors (NumPy, scikit-learn, SciPy).

Every function takes arrays the caller has already embedded, so the same
code scores a Keras model, a `.tflite` file or a table lookup:

* `mean_cosine(vectors, reference_vectors)`: how close a student's sentence
  vectors stay to its teacher's.
* `sentiment_accuracy(vectors, labels)`: cross-validated logistic regression;
  `sentiment_correct(...)` says which examples it got right, and
  `bootstrap_interval(correct, reference_correct)` how far apart two models'
  accuracies may be on other samples of the same size.
* `stratified_split(texts, labels)` and `topic_accuracy(...)`: logistic
  regression trained on some posts, scored on held-out ones.
* `word_similarity_spearman(embed_words, name)`: WordSim-353 / SimLex-999;
  `table_word_similarity_spearman(table, vocabulary, name)` for a table.
* `pareto_front(points)` and `plot_quality_vs_size(rows, path)`: which
  settings are worth their file size.
"""

import io
import pathlib

import numpy as np
from scipy.stats import bootstrap
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.model_selection import cross_val_predict
from sklearn.model_selection import cross_val_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from keras_subembed import datasets
from keras_subembed import files
from keras_subembed.checks import check_finite_array
from keras_subembed.checks import check_int
from keras_subembed.checks import check_open_probability
from keras_subembed.checks import check_seed
from keras_subembed.optional import matplotlib_backend_agg
from keras_subembed.optional import matplotlib_figure
from keras_subembed.optional import matplotlib_ticker

# Values `bootstrap_interval` resamples at once (1M: about 25 MB at the peak).
_BOOTSTRAP_ELEMENTS = 2**20


def _as_matrix(argument, value):
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(
            f"`{argument}` must be a non-empty 2D array (rows are vectors). "
            f"Received: {argument}.shape={array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"`{argument}` holds NaN or infinite values.")
    return array


def _as_labels(argument, value, rows, rows_argument):
    labels = np.asarray(value)
    if labels.ndim != 1 or labels.shape[0] != rows:
        raise ValueError(
            f"`{argument}` must be 1D with one label per row of `{rows_argument}` "
            f"({rows}). Received: {argument}.shape={labels.shape}"
        )
    return labels


def mean_cosine(vectors, reference_vectors):
    """Mean over rows of the cosine between `vectors[i]` and `reference_vectors[i]`.

    >>> mean_cosine([[1.0, 0.0], [0.0, 2.0]], [[2.0, 0.0], [1.0, 1.0]])  # (1 + 0.7071) / 2
    0.853553...
    """
    vectors = _as_matrix("vectors", vectors)
    reference_vectors = _as_matrix("reference_vectors", reference_vectors)
    if vectors.shape != reference_vectors.shape:
        raise ValueError(
            "`vectors` and `reference_vectors` must have the same shape. "
            f"Received: {vectors.shape} and {reference_vectors.shape}"
        )
    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference_vectors, axis=1)
    if np.any(norms == 0):
        raise ValueError("`vectors` and `reference_vectors` must not hold zero vectors.")
    return float(np.mean(np.einsum("ij,ij->i", vectors, reference_vectors) / norms))


def _classifier(seed):
    # Standardised features make the score independent of the vectors'
    # scale, which differs between a teacher and its compressed students.
    return make_pipeline(
        StandardScaler(), LogisticRegression(max_iter=2000, random_state=seed)
    )


def sentiment_accuracy(vectors, labels, folds=5, seed=0):
    """Accuracy of logistic regression on `vectors`, by stratified k-fold CV.

    Returns `(mean, std)` over `folds` folds (shuffled with `seed`).

    >>> vectors = [[1.0, 0.1], [0.9, -0.2], [1.1, 0.0], [-1.0, 0.2], [-0.8, 0.0], [-1.2, 0.1]]
    >>> sentiment_accuracy(vectors, [1, 1, 1, 0, 0, 0], folds=3)
    (1.0, 0.0)
    """
    vectors, labels = _checked_folds(vectors, labels, folds)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = cross_val_score(_classifier(seed), vectors, labels, cv=splitter)
    return float(np.mean(scores)), float(np.std(scores))


def _checked_folds(vectors, labels, folds):
    vectors = _as_matrix("vectors", vectors)
    labels = _as_labels("labels", labels, len(vectors), "vectors")
    if not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"`folds` must be an integer of at least 2. Received: folds={folds!r}")
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) < 2 or counts.min() < folds:
        raise ValueError(
            f"`labels` must hold at least 2 classes with `folds` ({folds}) examples "
            f"each. Received: counts {dict(zip(classes.tolist(), counts.tolist()))}"
        )
    return vectors, labels


def sentiment_correct(vectors, labels, folds=5, seed=0):
    """Whether each example's label is predicted right by the classifier of
    `sentiment_accuracy` trained on the other folds (a bool array).

    >>> vectors = [[1.0, 0.1], [0.9, -0.2], [1.1, 0.0], [-1.0, 0.2], [-0.8, 0.0], [-1.2, 0.1]]
    >>> sentiment_correct(vectors, [1, 1, 1, 0, 0, 0], folds=3).tolist()
    [True, True, True, True, True, True]
    """
    vectors, labels = _checked_folds(vectors, labels, folds)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    return cross_val_predict(_classifier(seed), vectors, labels, cv=splitter) == labels


def bootstrap_interval(values, reference_values=None, rounds=2000, confidence=0.95, seed=0):
    """Percentile bootstrap interval `(low, high)` of `mean(values)`, or of
    `mean(values) - mean(reference_values)` paired by example when given (e.g.
    a student's and its teacher's `sentiment_correct` on the same sentences).

    SciPy's `bootstrap` resamples a few rounds at a time, so memory stays
    bounded (about 25 MB) whatever the number of examples.

    >>> low, high = bootstrap_interval([1, 1, 0, 1, 1, 0, 1, 1], [1, 0, 0, 1, 0, 0, 1, 0])
    >>> bool(low < 0.375 < high)  # the difference of the means: 6/8 - 3/8
    True
    """
    seed = check_seed(seed)
    values = np.asarray(values, dtype="float64")
    if values.ndim != 1 or len(values) < 2 or not np.all(np.isfinite(values)):
        raise ValueError(f"`values` must be a 1-D array of at least 2 finite numbers. "
                         f"Received: shape {values.shape}")
    if reference_values is not None:
        reference_values = np.asarray(reference_values, dtype="float64")
        if reference_values.shape != values.shape or not np.all(np.isfinite(reference_values)):
            raise ValueError(
                "`reference_values` must be finite and pair with `values` example by example. "
                f"Received: shapes {reference_values.shape} and {values.shape}")
        # Paired by example: resampling examples resamples their differences.
        values = values - reference_values
    if check_int("rounds", rounds) < 100:
        raise ValueError(f"`rounds` must be an integer of at least 100. Received: rounds={rounds!r}")
    confidence = check_open_probability("confidence", confidence)
    seed = check_seed(seed)
    result = bootstrap(
        (values,), np.mean, n_resamples=int(rounds), confidence_level=confidence,
        method="percentile", vectorized=True,
        batch=max(1, min(int(rounds), _BOOTSTRAP_ELEMENTS // len(values))),
        rng=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return float(low), float(high)


def stratified_bootstrap_interval(groups, reference_groups=None, rounds=2000, confidence=0.95,
                                  seed=0):
    """Percentile bootstrap interval of the mean of the groups' means, each group's examples
    resampled on their own (paired by example with `reference_groups` when given).

    For locales that translate different messages: every locale weighs the same, and one
    with fewer messages widens the interval as it should.

    >>> low, high = stratified_bootstrap_interval([[1, 1, 0, 1], [0, 1, 0, 0, 1, 0]])
    >>> bool(low < (0.75 + 2 / 6) / 2 < high)
    True
    """
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__") or not len(groups):
        raise ValueError(f"`groups` must be a non-empty list of 1-D arrays. Received: {groups!r:.80}")
    if reference_groups is not None and len(reference_groups) != len(groups):
        raise ValueError("`reference_groups` must pair with `groups` group by group. Received: "
                         f"{len(reference_groups)} and {len(groups)} groups")
    if check_int("rounds", rounds) < 100:
        raise ValueError(f"`rounds` must be an integer of at least 100. Received: rounds={rounds!r}")
    confidence = check_open_probability("confidence", confidence)
    rng = np.random.default_rng(check_seed(seed))
    means = np.zeros(int(rounds))
    for index, values in enumerate(groups):
        values = np.asarray(values, dtype="float64")
        if reference_groups is not None:
            values = values - np.asarray(reference_groups[index], dtype="float64")
        if values.ndim != 1 or len(values) < 2 or not np.all(np.isfinite(values)):
            raise ValueError(f"`groups[{index}]` must be a 1-D array of at least 2 finite "
                             f"numbers. Received: shape {values.shape}")
        batch = max(1, _BOOTSTRAP_ELEMENTS // len(values))  # bounded memory, as above
        for start in range(0, len(means), batch):
            draws = rng.integers(0, len(values), size=(min(batch, len(means) - start), len(values)))
            means[start:start + len(draws)] += values[draws].mean(axis=1)
    means /= len(groups)
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def stratified_split(texts, labels, test_fraction=0.3, seed=0):
    """Deterministic train/test split keeping each label's share on both sides.

    Returns `(train_texts, train_labels, test_texts, test_labels)`; the texts
    are lists, the labels arrays. The same `seed` gives the same split.

    >>> texts, labels, names = datasets.newsgroup_posts()
    >>> train_texts, train_labels, test_texts, test_labels = stratified_split(texts, labels)
    """
    texts = list(texts)
    labels = _as_labels("labels", labels, len(texts), "texts")
    seed = check_seed(seed)
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(
            f"`test_fraction` must be between 0 and 1 (exclusive). "
            f"Received: test_fraction={test_fraction}"
        )
    train_texts, test_texts, train_labels, test_labels = train_test_split(
        texts, labels, test_size=test_fraction, random_state=seed, stratify=labels
    )
    return train_texts, train_labels, test_texts, test_labels


def topic_accuracy(train_vectors, train_labels, test_vectors, test_labels):
    """Accuracy on `test_vectors` of logistic regression fit on `train_vectors`.

    >>> topic_accuracy([[1.0], [2.0], [-1.0], [-2.0]], [1, 1, 0, 0], [[3.0], [-3.0]], [1, 0])
    1.0
    """
    train_vectors = _as_matrix("train_vectors", train_vectors)
    test_vectors = _as_matrix("test_vectors", test_vectors)
    train_labels = _as_labels("train_labels", train_labels, len(train_vectors), "train_vectors")
    test_labels = _as_labels("test_labels", test_labels, len(test_vectors), "test_vectors")
    if train_vectors.shape[1] != test_vectors.shape[1]:
        raise ValueError(
            "`train_vectors` and `test_vectors` must have the same width. "
            f"Received: {train_vectors.shape[1]} and {test_vectors.shape[1]}"
        )
    if len(np.unique(train_labels)) < 2:
        raise ValueError("`train_labels` must hold at least 2 classes.")
    classifier = _classifier(seed=0).fit(train_vectors, train_labels)
    return float(np.mean(classifier.predict(test_vectors) == test_labels))


def word_similarity_spearman(embed_words, name, vocabulary=None):
    """Spearman correlation of the cosine of word vectors with human scores.

    `embed_words` maps a list of words to a `(len(words), dim)` array (for a
    sentence encoder: each word embedded as a one-word sentence); it is
    called once with every distinct word. `name` is `"wordsim353"` or
    `"simlex999"`. With `vocabulary` (a container of words), only pairs of
    two words in it are scored. Returns `(rho, number_of_pairs)`.

    >>> def embed_words(words):  # e.g. each word through a sentence encoder
    ...     return np.random.default_rng(0).normal(size=(len(words), 8))
    >>> rho, pairs = word_similarity_spearman(embed_words, "simlex999")
    >>> pairs
    999
    """
    if not callable(embed_words):
        raise TypeError(
            "`embed_words` must be a callable mapping a list of words to an "
            f"array. Received: embed_words={embed_words!r}"
        )
    pairs = [(a, b, score) for a, b, score in datasets.word_similarity_pairs(name)
             if vocabulary is None or (a in vocabulary and b in vocabulary)]
    if len(pairs) < 3:
        raise ValueError(
            f"Only {len(pairs)} pairs of {name!r} have both words in `vocabulary`; "
            "at least 3 are needed."
        )
    words = list(dict.fromkeys(word for a, b, _ in pairs for word in (a, b)))
    vectors = _as_matrix("embed_words(words)", embed_words(words))
    if len(vectors) != len(words):
        raise ValueError(
            f"`embed_words` must return one row per word: {len(words)} words, "
            f"{len(vectors)} rows."
        )
    row = {word: i for i, word in enumerate(words)}
    first = vectors[[row[a] for a, _, _ in pairs]]
    second = vectors[[row[b] for _, b, _ in pairs]]
    cosine = np.einsum("ij,ij->i", first, second) / (
        np.linalg.norm(first, axis=1) * np.linalg.norm(second, axis=1) + 1e-12
    )
    return float(spearmanr(cosine, [s for _, _, s in pairs]).statistic), len(pairs)


def table_word_similarity_spearman(table, vocabulary, name):
    """`word_similarity_spearman` of the rows of a `(V, d)` token table.

    Scores the pairs of `name` whose two words are single tokens of
    `vocabulary` (the table's row order). Returns `(rho, number_of_pairs)`.

    >>> vocabulary = sorted({word for a, b, _ in
    ...                      keras_subembed.datasets.word_similarity_pairs("wordsim353")
    ...                      for word in (a, b)})
    >>> table = np.random.default_rng(0).normal(size=(len(vocabulary), 8))
    >>> rho, pairs = table_word_similarity_spearman(table, vocabulary, "wordsim353")
    >>> pairs
    353
    """
    table = check_finite_array("table", table)
    index = {token: i for i, token in enumerate(vocabulary)}
    return word_similarity_spearman(
        lambda words: table[[index[word] for word in words]], name, vocabulary=index
    )


def pareto_front(points):
    """Indices of the `(size, quality)` points no other point beats.

    A point is beaten when another is no larger and no worse, and smaller or
    better. Returned from the smallest size up.

    >>> pareto_front([(10, 0.9), (1, 0.5), (5, 0.4), (20, 0.9)])
    [1, 0]
    """
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2 or len(points) == 0:
        raise ValueError(
            "`points` must be a non-empty list of (size, quality) pairs. "
            f"Received shape: {points.shape}"
        )
    if not np.all(np.isfinite(points)):
        raise ValueError("`points` holds NaN or infinite values.")
    sizes, qualities = points[:, 0], points[:, 1]
    front = []
    for i in range(len(points)):
        no_worse = (sizes <= sizes[i]) & (qualities >= qualities[i])
        better = (sizes < sizes[i]) | (qualities > qualities[i])
        if not np.any(no_worse & better):
            front.append(i)
    return sorted(front, key=lambda i: (sizes[i], -qualities[i]))


def _place_labels(axis, labels, xs, ys):
    """Annotates each point, moving a label down a line at a time while it overlaps one
    placed before (points of equal quality a few MB apart otherwise print over each
    other). Returns the `Text` objects."""
    # Limits from the data now: until they are asked for, the axes' transform still maps the
    # default (0, 1) and the labels would be measured where the points are not.
    axis.autoscale_view()
    renderer = axis.figure.canvas.get_renderer()
    placed, texts = [], []
    for index in np.argsort(xs, kind="stable"):
        for line in range(8):
            text = axis.annotate(labels[index], (xs[index], ys[index]), textcoords="offset points",
                                 xytext=(5, 4 - 10 * line), fontsize=8)
            box = text.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            text.remove()
        placed.append(box)
        texts.append(text)
    return texts


# Plot formats whose files carry `PLOT_CREATOR` in their metadata: the proof
# `overwrite` needs before it replaces one.
PLOT_FORMATS = ("png", "pdf", "svg", "eps", "ps")
PLOT_CREATOR = "keras_subembed.evaluation.plot_quality_vs_size"


def is_plot_file(path):
    """Whether `path` is a plot `plot_quality_vs_size` wrote (its metadata says so)."""
    try:
        return PLOT_CREATOR.encode("ascii") in pathlib.Path(path).read_bytes()
    except OSError:
        return False


def plot_format(path):
    """The format `path`'s suffix names, or a `ValueError` listing those written."""
    suffix = files.as_path(path).suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:
        raise ValueError(
            f"`path` must end in one of {', '.join('.' + name for name in PLOT_FORMATS)}: "
            f"the file is written in the format its suffix names. Received: path={str(path)!r}")
    return suffix


def log_size_axis(axis, ticks=()):
    """A log x axis labelled with plain numbers: at `ticks` (when three or more fall in its
    range), else at 1-2-3-5 steps; the default 10^x labels collide and say little."""
    axis.set_xscale("log")
    low, high = axis.get_xlim()
    inside = [tick for tick in ticks if low <= tick <= high]
    axis.xaxis.set_major_locator(
        matplotlib_ticker.FixedLocator(inside) if len(inside) >= 3
        else matplotlib_ticker.LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
    axis.xaxis.set_major_formatter(matplotlib_ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    axis.xaxis.set_minor_formatter(matplotlib_ticker.NullFormatter())


def write_figure(figure, path, file_format, overwrite):
    """Writes `figure` to `path` atomically, marked as this package's plot (`is_plot_file`):
    an existing file is replaced only with `overwrite` and only if it is one. Returns `path`."""
    data = io.BytesIO()
    figure.savefig(data, dpi=120, format=file_format, metadata={"Creator": PLOT_CREATOR})
    files.write_file(path, data.getvalue(), overwrite, is_plot_file)
    return path


def plot_quality_vs_size(rows, path, quality="cosine", size="file_mb", label="name",
                         title=None, axis_labels=None, overwrite=False):
    """Writes a plot of quality against file size, with the Pareto front.

    `rows` are dicts (the rows of a results table); `quality` is one key or a
    list of keys (one panel each); `size` is plotted on a log axis and
    `label` names each point. `axis_labels` maps keys to axis titles (e.g.
    `{"file_mb": "file size (MB)"}`). Rows whose value is missing or None
    are left out of that panel. The file's format is the one its suffix
    names (`.png`, `.pdf`, `.svg`, `.eps`, `.ps`); it is written atomically,
    and an existing file is replaced only with `overwrite=True` and only if
    this function wrote it. Returns `path`.

    >>> rows = [{"name": "teacher", "file_mb": 22.0, "cosine": 1.0},
    ...         {"name": "sub K=2", "file_mb": 9.0, "cosine": 0.9}]
    >>> path = os.path.join(tempfile.mkdtemp(), "quality.png")
    >>> plot_quality_vs_size(rows, path) == path
    True
    """
    file_format = plot_format(path)
    files.check_file_target(path, overwrite, is_plot_file, "a plot this function wrote")
    rows = list(rows)
    axis_labels = dict(axis_labels or {})
    qualities = [quality] if isinstance(quality, str) else list(quality)
    if not rows or not qualities:
        raise ValueError("`rows` and `quality` must not be empty.")
    panels = []
    for key in qualities:
        kept = [row for row in rows
                if row.get(key) is not None and row.get(size) is not None]
        if not kept:
            raise ValueError(
                f"No row has both {size!r} and {key!r}. "
                f"Keys of the first row: {sorted(rows[0])}"
            )
        panels.append((key, kept))

    # A bare Figure draws with Agg and leaves pyplot's global state alone.
    figure = matplotlib_figure.Figure(figsize=(6.4 * len(panels), 4.8))
    matplotlib_backend_agg.FigureCanvasAgg(figure)  # a renderer, to measure the labels
    axes = figure.subplots(1, len(panels), squeeze=False)
    for axis, (key, kept) in zip(axes[0], panels):
        points = [(float(row[size]), float(row[key])) for row in kept]
        if min(x for x, _ in points) <= 0:
            raise ValueError(f"{size!r} must be positive (a log axis). Received: {points}")
        front = pareto_front(points)
        xs, ys = np.array(points).T
        axis.scatter(xs, ys, color="tab:gray", zorder=2, label="other settings")
        axis.scatter(xs[front], ys[front], color="tab:blue", zorder=3, label="Pareto front")
        axis.step(xs[front], ys[front], where="post", color="tab:blue", alpha=0.6, zorder=1)
        log_size_axis(axis)
        # Room on the right for the labels of the largest points.
        axis.set_xlim(xs.min() / 1.3, xs.max() * 1.8)
        _place_labels(axis, [str(row.get(label, "")) for row in kept], xs, ys)
        axis.set_xlabel(axis_labels.get(size, size))
        axis.set_ylabel(axis_labels.get(key, key))
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(loc="lower right", fontsize=8)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    return write_figure(figure, path, file_format, overwrite)

