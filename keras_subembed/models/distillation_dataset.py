"""Unlabelled text as the endless, shuffled, tokenized batches a distiller trains on."""

from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed


def distillation_dataset(texts, preprocessor, batch_size, seed=0):
    """`texts` as a `tf.data.Dataset` for `EmbeddingDistiller.fit`.

    Shuffled (all of `texts`, with `seed`), repeated without end, in batches
    of `batch_size` (a short last batch is dropped, so every step has one
    shape), tokenized by `preprocessor` in parallel. Give `fit` its
    `steps_per_epoch`. After `keras.utils.set_random_seed`, the same
    arguments give the same batches.

    Args:
        texts: list of str, at least `batch_size` of them.
        preprocessor: a keras-hub text preprocessor at the training length
            (e.g. a `TextEmbedder`'s, rebuilt with a shorter
            `sequence_length`).
        batch_size: int. Texts per batch.
        seed: int. The shuffle's seed. Defaults to 0.

    Example:
    >>> tokenizer = keras_hub.models.BertTokenizer(
    ...     vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])
    >>> preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=4)
    >>> dataset = distillation_dataset(["a", "b a", "b"], preprocessor, batch_size=2)
    >>> batch = next(iter(dataset))
    >>> batch["token_ids"].shape, sorted(batch)
    (TensorShape([2, 4]), ['padding_mask', 'segment_ids', 'token_ids'])
    """
    import tensorflow as tf  # tf.data; JAX-only installs lack TensorFlow

    batch_size = check_positive_int("batch_size", batch_size)
    seed = check_seed(seed)
    if not isinstance(texts, (list, tuple)) or not all(isinstance(text, str) for text in texts):
        raise TypeError(f"`texts` must be a list of strings. Received: texts={str(texts)[:80]!r}")
    if len(texts) < batch_size:
        # Otherwise the repeated dataset never yields a batch: `fit` would hang.
        raise ValueError(
            f"`texts` must hold at least `batch_size` ({batch_size}) texts. "
            f"Received: {len(texts)} texts"
        )
    if not callable(preprocessor):
        raise TypeError(
            "`preprocessor` must be a keras-hub text preprocessor. "
            f"Received: preprocessor={preprocessor!r}"
        )
    return (tf.data.Dataset.from_tensor_slices(list(texts))
            .shuffle(len(texts), seed=seed)
            .repeat()
            .batch(batch_size, drop_remainder=True)
            .map(preprocessor, num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))
