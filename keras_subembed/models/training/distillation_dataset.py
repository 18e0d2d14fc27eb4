"""Unlabelled text as the endless, shuffled, tokenized batches a distiller trains on."""

import numpy as np
import tensorflow as tf

from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed


def distillation_dataset(texts, preprocessor, batch_size, seed=0, pairs=None):
    """`texts` as a `tf.data.Dataset` for `EmbeddingDistiller.fit`.

    Shuffled (all of `texts`, with `seed`), repeated without end, in batches
    of `batch_size` (a short last batch is dropped, so every step has one
    shape), tokenized by `preprocessor` in parallel (`padding_mask` as int32). Give `fit` its
    `steps_per_epoch`. After `keras.utils.set_random_seed`, the same
    arguments give the same batches.

    With `pairs`, every batch is made of pairs: rows `2i` and `2i + 1` are
    one pair (e.g. a sentence and its translation), as
    `EmbeddingDistiller(pair_loss_weight=...)` reads them. `texts` are then
    paired too, once, each with its neighbour in a seeded shuffle (an odd
    last text is left out), so that unrelated sentences are negatives beside
    the real pairs; `texts` may then be empty. `pairs=[]` pairs `texts`
    alone.

    Args:
        texts: list of str, at least `batch_size` of them (with `pairs`,
            may be empty).
        preprocessor: a keras-hub text preprocessor at the training length
            (e.g. a `TextEmbedder`'s, rebuilt with a shorter
            `sequence_length`).
        batch_size: int. Texts per batch.
        seed: int. The shuffle's seed. Defaults to 0.
        pairs: `None`, or a list of `(text, text)` pairs kept side by side
            in their batch; `batch_size` must then be even.

    Example:
    >>> tokenizer = keras_hub.models.BertTokenizer(
    ...     vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])
    >>> preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=4)
    >>> dataset = distillation_dataset(["a", "b a", "b"], preprocessor, batch_size=2)
    >>> batch = next(iter(dataset))
    >>> batch["token_ids"].shape, sorted(batch)
    (TensorShape([2, 4]), ['padding_mask', 'segment_ids', 'token_ids'])
    """
    batch_size = check_positive_int("batch_size", batch_size)
    seed = check_seed(seed)
    if not isinstance(texts, (list, tuple)) or not all(isinstance(text, str) for text in texts):
        raise TypeError(f"`texts` must be a list of strings. Received: texts={str(texts)[:80]!r}")
    if not callable(preprocessor):
        raise TypeError(
            "`preprocessor` must be a keras-hub text preprocessor. "
            f"Received: preprocessor={preprocessor!r}"
        )
    if pairs is None:
        return _batches(texts, batch_size, seed, preprocessor, paired=False)
    if batch_size % 2:
        raise ValueError(f"`batch_size` must be even with `pairs` (a batch holds whole pairs). "
                         f"Received: batch_size={batch_size}")
    if not isinstance(pairs, (list, tuple)) or not all(
            isinstance(pair, (list, tuple)) and len(pair) == 2
            and all(isinstance(text, str) for text in pair) for pair in pairs):
        raise TypeError("`pairs` must be a list of (text, text) pairs of strings. "
                        f"Received: pairs={str(pairs)[:80]!r}")
    order = np.random.default_rng(seed).permutation(len(texts))
    rows = [tuple(pair) for pair in pairs] + [
        (texts[first], texts[second]) for first, second in zip(order[0::2], order[1::2])]
    return _batches(rows, batch_size // 2, seed, preprocessor, paired=True)


def _batches(rows, rows_per_batch, seed, preprocessor, paired):
    """Shuffled, repeated, tokenized batches of `rows` (texts, or pairs laid out flat)."""
    if len(rows) < rows_per_batch:
        # Otherwise the repeated dataset never yields a batch: `fit` would hang.
        if not paired:
            raise ValueError(f"`texts` must hold at least `batch_size` ({rows_per_batch}) texts. "
                             f"Received: {len(rows)} texts")
        raise ValueError(f"`pairs` (with `texts` paired two by two) must hold at least "
                         f"`batch_size` / 2 ({rows_per_batch}) pairs. Received: {len(rows)} pairs")
    dataset = (tf.data.Dataset.from_tensor_slices([list(pair) for pair in rows] if paired else list(rows))
               .shuffle(len(rows), seed=seed)
               .repeat()
               .batch(rows_per_batch, drop_remainder=True))
    if paired:  # (pairs, 2) -> rows 2i, 2i + 1
        dataset = dataset.map(lambda batch: tf.reshape(batch, [-1]))
    return (dataset.map(lambda batch: _int_mask(preprocessor(batch)),
                        num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


def _int_mask(batch):
    """`padding_mask` as int32, the encoders' input dtype: a bool one also breaks fitting
    under tf.distribute.MirroredStrategy (its first batch is reduced with AddN)."""
    if isinstance(batch, dict) and batch.get("padding_mask") is not None:
        batch = {**batch, "padding_mask": tf.cast(batch["padding_mask"], "int32")}
    return batch
