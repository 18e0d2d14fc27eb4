"""keras-hub's sentence-embedding head (pooling, L2 normalisation) as one function."""

import keras_hub

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_choice

POOLING_MODES = ("mean", "cls", "max")


def sentence_vectors(states, padding_mask, pooling_mode="mean", normalize=True):
    """Token states `(batch, length, d)` -> sentence vectors `(batch, d)`.

    The head of keras-hub's `TextEmbedder`s, computed by keras-hub's own code
    (`BertTextEmbedder`'s pooling and normalisation), so a distilled student
    is trained on exactly the vectors its `TextEmbedder` will give:
    `"mean"` over the tokens where `padding_mask` is set, `"cls"` the first
    token, `"max"` per feature over the valid tokens; unit L2 norm when
    `normalize`.

    Example:
    >>> states = np.ones((2, 5, 8), "float32")
    >>> mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "int32")
    >>> tuple(sentence_vectors(states, mask, "mean").shape)
    (2, 8)
    """
    check_choice("pooling_mode", pooling_mode, POOLING_MODES)
    check_bool("normalize", normalize)
    head = keras_hub.models.BertTextEmbedder
    if pooling_mode == "mean":
        pooled = head._mean_pooling(states, padding_mask)
    elif pooling_mode == "cls":
        pooled = states[:, 0, :]
    else:
        pooled = head._max_pooling(states, padding_mask)
    return head._l2_normalize(pooled) if normalize else pooled

