"""`mediapipe_sequence_length`: the fixed length that holds the asked share of the texts
whole, as MediaPipe tokenizes them."""

import pytest


def test_the_fixed_length_covers_the_asked_share_of_the_texts(small):
    from keras_subembed.export import mediapipe_sequence_length

    # One token per word, [CLS] and [SEP]: 3 .. 12 tokens.
    texts = [" ".join(["the"] * words) for words in range(1, 11)]
    assert mediapipe_sequence_length(small, texts, coverage=1.0, multiple=1) == 12
    assert mediapipe_sequence_length(small, texts, coverage=0.5, multiple=1) == 7
    assert mediapipe_sequence_length(small, texts, coverage=0.5) == 8
    assert mediapipe_sequence_length(small, texts, coverage=0.01, multiple=1) == 3
    assert mediapipe_sequence_length(small, ["", "the"], coverage=1.0, multiple=1) == 3
    # ASCII capitals are lowercased first, as MediaPipe does.
    assert mediapipe_sequence_length(small, ["THE POLICE"], multiple=1) == 4
    # Capped at the position table (24), whatever the texts or the rounding.
    assert mediapipe_sequence_length(small, ["the " * 100]) == 24
    assert mediapipe_sequence_length(small, ["the " * 20], multiple=16) == 24
    # A tokenizer alone knows no limit.
    tokenizer = small.preprocessor.tokenizer
    assert mediapipe_sequence_length(tokenizer, ["the " * 100], multiple=1) == 102


@pytest.mark.parametrize("kwargs, error, match", [
    ({"texts": "one text"}, ValueError, "`texts` must be a non-empty list of strings. "
     "Received: texts='one text'"),
    ({"texts": []}, ValueError, r"Received: texts=\[\]"),
    ({"texts": ["a", 3]}, ValueError, r"Received: texts=\['a', 3\]"),
    ({"coverage": 0}, ValueError, r"`coverage` must be a number in \(0, 1\]. Received: coverage=0"),
    ({"coverage": 1.5}, ValueError, "Received: coverage=1.5"),
    ({"coverage": True}, ValueError, "Received: coverage=True"),
    ({"coverage": "0.9"}, ValueError, "Received: coverage='0.9'"),
    ({"multiple": 0}, ValueError, "`multiple` must be a positive integer. Received: multiple=0"),
    ({"multiple": 2.5}, ValueError, "Received: multiple=2.5"),
])
def test_the_fixed_length_helper_names_a_bad_argument(small, kwargs, error, match):
    from keras_subembed.export import mediapipe_sequence_length

    with pytest.raises(error, match=match):
        mediapipe_sequence_length(small, **{"texts": ["the city"], **kwargs})


def test_the_fixed_length_helper_names_a_model_it_cannot_read(small):
    from keras_subembed.export import mediapipe_sequence_length

    with pytest.raises(TypeError, match="`tokenizer_or_embedder` must be a keras-hub "
                       "TextEmbedder.*Received: tokenizer_or_embedder=CompressedBertBackbone"):
        mediapipe_sequence_length(small.backbone, ["the city"])
