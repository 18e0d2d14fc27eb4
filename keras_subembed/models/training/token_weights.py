"""`token_weights`: how much each token of a vocabulary matters, from real text."""

import contextlib

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int

_BATCH_SIZE = 1024


def token_weights(model, texts, power=0.5, batch_size=_BATCH_SIZE, verbose=False):
    """Per-token weights `(count + 1) ** power` from how often tokens occur in `texts`.

    Fitting product codes with these weights (`product_codes(...,
    token_weights=...)`, or `"token_weights"` in `compress`'s arguments) moves
    the centroids toward the tokens real text uses (the figures on MiniLM are
    in benchmarks/RESULTS.md). The `+ 1` keeps every token of the vocabulary
    in play: out of domain, rare tokens matter.

    Args:
        model: the model whose tokenizer counts: a keras-hub `TextEmbedder`
            or other `Task`, its `Preprocessor`, or a `Tokenizer`.
        texts: strings, e.g. the distillation corpus (a list, a NumPy array
            or a `tf.data.Dataset` of strings, or of `(text, label)` pairs:
            the first item counts).
        power: the weight is `(count + 1) ** power`; 0 gives every token 1.
        batch_size: strings tokenized at a time.
        verbose: show a progress bar over the batches.

    Returns:
        float32, every weight >= 1: one per row of the model's token table when
        `model` has a backbone (a table may have rows no token uses:
        multilingual-e5's 250,037 rows for its tokenizer's 250,002 ids), else
        one per id of the tokenizer.

    Example:
    ```python
    weights = keras_subembed.models.token_weights(embedder, sentences)
    small = keras_subembed.compress(embedder, "sub", {"assignment": "product",
        "num_tables": 32, "rows_per_table": 256, "token_weights": weights})
    ```
    """
    tokenizer = _tokenizer_of(model)
    if isinstance(power, (bool, np.bool_)) or not isinstance(power, (int, float, np.number)) or not (
        0 <= power < float("inf")
    ):
        raise ValueError(f"`power` must be a finite number >= 0. Received: power={power!r}")
    batch_size = check_positive_int("batch_size", batch_size)
    verbose = check_bool("verbose", verbose)
    batches = _string_batches(texts, batch_size)
    rows = _table_rows(model, tokenizer)
    counts = np.zeros(rows, dtype=np.int64)
    known = int(batches.cardinality().numpy())
    progress = keras.utils.Progbar(
        known if known >= 0 else None, verbose=1 if verbose else 0, unit_name="batch"
    )
    # Inside tf.data the tokenizer returns ragged tensors on every backend.
    with _unpadded(tokenizer):
        for step, ids in enumerate(batches.map(tokenizer)):
            ids = ids.flat_values.numpy() if hasattr(ids, "flat_values") else np.asarray(ids)
            counts += np.bincount(ids.reshape(-1), minlength=rows)[:rows]
            progress.update(step + 1)
    if not counts.any():
        raise ValueError(
            "`texts` gave no tokens: pass non-empty strings (e.g. the sentences you "
            "will distil on)."
        )
    return ((counts + 1.0) ** float(power)).astype(np.float32)


def _table_rows(model, tokenizer):
    """Rows of `model`'s token table, or the tokenizer's size when `model` has none."""
    size = int(tokenizer.vocabulary_size())
    embedding = getattr(getattr(model, "backbone", None), "token_embedding", None)
    rows = getattr(embedding, "input_dim", None)
    if rows is None:
        return size
    if size > rows:
        raise ValueError(
            f"The tokenizer's vocabulary has {size} tokens, but the model's token table has "
            f"{rows} rows: ids {rows}..{size - 1} have no row. The tokenizer and the model "
            "do not belong together.")
    return int(rows)


@contextlib.contextmanager
def _unpadded(tokenizer):
    """A tokenizer built with `sequence_length` pads and truncates: count
    every token of each text and no padding."""
    length = getattr(tokenizer, "sequence_length", None)
    if not length:
        yield
        return
    tokenizer.sequence_length = None
    try:
        yield
    finally:
        tokenizer.sequence_length = length


def _tokenizer_of(model):
    candidate = getattr(model, "preprocessor", None) or model
    candidate = getattr(candidate, "tokenizer", None) or candidate
    if not isinstance(candidate, keras_hub.tokenizers.Tokenizer):
        raise TypeError(
            "`model` must be a keras-hub Task with a preprocessor (e.g. a TextEmbedder), "
            f"a Preprocessor or a Tokenizer. Received: model={model!r:.80} "
            f"(a {type(model).__name__})"
        )
    return candidate


def _string_batches(texts, batch_size):
    # Through tf.data: keras-hub's tokenizers run inside it on every backend.
    if isinstance(texts, str):
        raise TypeError(
            "`texts` must be many strings (a list, array or tf.data.Dataset), not one "
            f"string. Received: texts={texts!r:.60}"
        )
    if isinstance(texts, tf.data.Dataset):
        spec = texts.element_spec
        if isinstance(spec, tuple) and spec:  # (text, label) pairs, as `fit` takes them
            texts, spec = texts.map(lambda *item: item[0]), spec[0]
        if not isinstance(spec, tf.TensorSpec):
            raise TypeError(
                "`texts` must be a dataset of strings or of (text, label) tuples. "
                f"Received a dataset of {spec!r:.120}"
            )
        dataset = texts.unbatch() if len(spec.shape) else texts
    else:
        texts = list(texts)
        if not texts:
            raise TypeError("`texts` must be a non-empty sequence of strings. "
                            "Received: an empty sequence")
        for index, text in enumerate(texts):
            if not isinstance(text, (str, bytes)):
                raise TypeError(
                    "`texts` must be a non-empty sequence of strings. Received: "
                    f"texts[{index}]={text!r:.60} (of type {type(text).__name__})"
                )
        dataset = tf.data.Dataset.from_tensor_slices(texts)
    if dataset.element_spec.dtype != tf.string:
        raise TypeError(
            f"`texts` must hold strings. Received a dataset of {dataset.element_spec.dtype.name}"
        )
    return dataset.batch(batch_size)
