"""`small`: the uncased BERT embedder with a sub-embedding, compressed once per module.
(test_mediapipe_sentencepiece.py has its own `small`: an XLM-R SentencePiece embedder.)"""

import pytest

import keras_subembed
from tests.export.mediapipe.mediapipe_utils import SUB
from tests.export.mediapipe.mediapipe_utils import uncased_embedder


@pytest.fixture(scope="module")
def small():
    return keras_subembed.compress(uncased_embedder(), "sub", SUB)
