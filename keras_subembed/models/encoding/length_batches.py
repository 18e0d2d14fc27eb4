"""Sentence vectors of many texts, batched by token length.

keras-hub's `TextEmbedder.predict` pads every text to the preprocessor's
`sequence_length` (512 for multilingual-e5): on short texts most of the
work is padding. Here texts are sorted by token count, each batch is cut to
its longest text (rounded up to `LENGTH_STEP`, so few shapes compile), and
the vectors come back in the texts' order. Padding is masked, so the
vectors equal the padded ones (to float rounding).
"""

import keras
import numpy as np

from keras_subembed.checks import check_positive_int
from keras_subembed.length_order import embed_by_length
from keras_subembed.models.encoding.encoder_inputs import check_sentences

# Batch lengths are multiples of this: one compiled shape per step, not per length.
LENGTH_STEP = 16
# Texts tokenized at a time to find their lengths.
_LENGTH_CHUNK = 1024


def encode_by_length(embedder, texts, batch_size=32):
    """Sentence vectors of `texts` from a keras-hub `TextEmbedder`, batched by length.

    The same vectors as `embedder.predict(texts)` (same tokenizer, same
    truncation at the preprocessor's `sequence_length`), without padding
    short texts to that length: 3-4x faster on short sentences at 512.

    Args:
        embedder: a keras-hub `TextEmbedder` with a preprocessor (a
            compressed one too).
        texts: a list of strings.
        batch_size: texts per model call.

    Returns:
        float32 `(len(texts), dimension)`, row i the vector of `texts[i]`.

    Example:

    ```python
    vectors = encode_by_length(embedder, ["query: short", "passage: a longer text"])
    ```
    """
    preprocessor = getattr(embedder, "preprocessor", None)
    if isinstance(texts, (str, bytes)):
        texts = [texts]
    check_sentences(texts, preprocessor)
    batch_size = check_positive_int("batch_size", batch_size)
    texts = list(texts)
    lengths = np.concatenate([
        np.asarray(preprocessor(texts[start:start + _LENGTH_CHUNK])["padding_mask"]).sum(axis=1)
        for start in range(0, len(texts), _LENGTH_CHUNK)])

    def run_batch(rows, longest):
        features = preprocessor([texts[i] for i in rows])
        length = min(int(np.asarray(features["padding_mask"]).shape[1]),
                     -(-longest // LENGTH_STEP) * LENGTH_STEP)
        inputs = {name: np.asarray(value)[:, :length] for name, value in features.items()}
        # Keras' own `predict_on_batch`: keras-hub's would run the preprocessor on the ids.
        return keras.Model.predict_on_batch(embedder, inputs)

    return embed_by_length(lengths, batch_size, run_batch)
