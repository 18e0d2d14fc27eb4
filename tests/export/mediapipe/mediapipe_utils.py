"""The small uncased BERT embedder the MediaPipe tests export, tokenize and measure."""

import sys
from pathlib import Path

import keras
import keras_hub

sys.path.insert(0, str(Path(__file__).parents[2] / "models" / "families"))
from test_compressed_text_embedder import SIZES  # noqa: E402
from test_compressed_text_embedder import SUB  # noqa: E402, F401 (conftest.py's `small`)
from test_compressed_text_embedder import VOCABULARY  # noqa: E402


def uncased_embedder(strip_accents=False, lowercase=True, sizes=SIZES):
    keras.utils.set_random_seed(3)
    backbone = keras_hub.models.BertBackbone(len(VOCABULARY), **sizes)
    tokenizer = keras_hub.models.BertTokenizer(
        vocabulary=VOCABULARY, lowercase=lowercase, strip_accents=strip_accents)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=12)
    return keras_hub.models.BertTextEmbedder(backbone, preprocessor, pooling_mode="mean")
