"""`mediapipe_token_ids`: the ids MediaPipe's own BERT tokenizer feeds a model, read back
through a probe file."""

import re

import keras
import keras_hub
import pytest

from tests.export.mediapipe.mediapipe_utils import VOCABULARY

# The probe is converted in TensorFlow.
tensorflow_only = pytest.mark.tensorflow_only(reason="it traces the model in TensorFlow")
# The wheel exists for Linux x86-64 / aarch64, macOS and Windows; CI installs it.
pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")


@tensorflow_only
def test_mediapipe_lowercases_and_splits_punctuation_but_keeps_accents():
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    texts = ["The CITY, (rain)!", "naïve Café"]
    got = mediapipe_token_ids(VOCABULARY, texts, sequence_length=16)
    stripping = keras_hub.models.BertTokenizer(
        vocabulary=VOCABULARY, lowercase=True, strip_accents=True)
    want = [[2, *keras.ops.convert_to_numpy(stripping(text)).tolist(), 3] for text in texts]
    assert got[0] == want[0]
    unk = VOCABULARY.index("[UNK]")
    assert want[1][1:3] == [VOCABULARY.index("naive"), VOCABULARY.index("cafe")]
    assert got[1] == [2, unk, unk, 3]  # accents kept: the words are not in the vocabulary


@tensorflow_only
def test_a_real_token_with_id_0_is_kept_when_pad_is_another_id():
    """Issue 32 item 9: every id 0 was taken for padding."""
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    vocabulary = ["the"] + [token for token in VOCABULARY if token != "the"]
    ids = mediapipe_token_ids(vocabulary, ["the city the"], sequence_length=8)
    cls, sep, city = (vocabulary.index(token) for token in ("[CLS]", "[SEP]", "city"))
    assert ids == [[cls, 0, city, 0, sep]]


@pytest.mark.parametrize("length", [0, -5, 2, 2.5, True, "16"])
def test_a_bad_probe_length_is_named_before_any_conversion(length):
    """Issue 32 item 16: 0 gave a C++ trace, -5 a raw TensorFlow error."""
    from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids

    with pytest.raises(ValueError, match=f"`sequence_length` must be an int.*"
                       f"Received: sequence_length={re.escape(repr(length))}"):
        mediapipe_token_ids(VOCABULARY, ["the city"], sequence_length=length)
