"""XLM-R SentencePiece models built from pieces, scores and a normalisation map."""

import pytest
import sentencepiece

from keras_subembed.datasets.sentencepiece_model import compile_normalization
from keras_subembed.datasets.sentencepiece_model import xlm_roberta_sentencepiece_model


def test_sentencepiece_model_checks_its_pieces():
    with pytest.raises(ValueError, match=r"Hugging Face XLM-R order"):
        xlm_roberta_sentencepiece_model(["<unk>", "<s>", "</s>", "a"], [0, 0, 0, -1], {})
    with pytest.raises(ValueError, match=r"one entry each"):
        xlm_roberta_sentencepiece_model(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], [0], {})
    with pytest.raises(ValueError, match=r"non-empty strings"):
        compile_normalization({"": "x"})
    # No map: no rules; SentencePiece still splits at white space.
    proto = xlm_roberta_sentencepiece_model(
        ["<s>", "<pad>", "</s>", "<unk>", "▁a", "▁Ａ", "<mask>"], [0, 0, 0, 0, -1.0, -1.0, 0], {})
    processor = sentencepiece.SentencePieceProcessor(model_proto=proto)
    assert processor.normalize("  Ａ\u200b a ") == "▁Ａ\u200b▁a"
