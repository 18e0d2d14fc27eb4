"""The XLM-R SentencePiece kind: the model renumbered for MediaPipe, foreign models refused."""

import pytest

from keras_subembed.tokenizer_kinds.sentencepiece import mediapipe_sentencepiece_model
from tests.sentencepiece_utils import HARD_TEXTS
from tests.sentencepiece_utils import TEXTS
from tests.sentencepiece_utils import keras_ids
from tests.sentencepiece_utils import sentencepiece_proto
from tests.sentencepiece_utils import xlm_roberta_tokenizer


def test_the_renumbered_model_gives_the_xlm_roberta_ids_and_mediapipes_end_pieces():
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(
        model_proto=mediapipe_sentencepiece_model(sentencepiece_proto()))
    tokenizer = xlm_roberta_tokenizer()
    assert processor.get_piece_size() == tokenizer.vocabulary_size() - 1  # all but <mask>
    assert [processor.piece_to_id(p) for p in ("[CLS]", "<pad>", "[SEP]", "<unk>")] == [0, 1, 2, 3]
    assert processor.unk_id() == 3
    for text in TEXTS + HARD_TEXTS:
        assert processor.encode(text) == keras_ids(tokenizer, text), text
    assert 3 in processor.encode("snowman ☃")  # an unknown character is <unk>, as in Keras
    # The end pieces are control pieces: written in a text they are not matched.
    assert 0 not in processor.encode("[CLS] x [SEP]") and 2 not in processor.encode("[SEP]")


@pytest.mark.parametrize("proto, match", [
    (b"\xff\x00 not a model", "not a serialized SentencePiece model"),
    (b"", "starts with the pieces"),
])
def test_a_model_that_is_not_xlm_roberta_is_refused(proto, match):
    with pytest.raises(ValueError, match=match):
        mediapipe_sentencepiece_model(proto)
