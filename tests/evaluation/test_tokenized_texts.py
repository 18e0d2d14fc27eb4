"""`TokenizedTexts`: the texts and `run_batch` checked as `encode_by_length` checks them."""

import keras_hub
import numpy as np
import pytest

from keras_subembed import evaluation

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]


@pytest.fixture(scope="module")
def preprocessor():
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    return keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=8)


def test_a_string_is_not_read_as_a_list_of_characters(preprocessor):
    with pytest.raises(TypeError, match=r"`texts` must be a list of strings; a single string "
                                        r"would be read as a list of its characters\. Pass "
                                        r"\[texts\]\. Received: texts='a b'"):
        evaluation.TokenizedTexts("a b", preprocessor)


def test_no_texts_and_texts_that_are_not_strings_are_refused(preprocessor):
    with pytest.raises(ValueError, match=r"`texts` holds no sentences: nothing to embed\. "
                                         r"Received: texts=\[\]"):
        evaluation.TokenizedTexts([], preprocessor)
    with pytest.raises(TypeError, match=r"`texts` must hold sentences \(strings\)\. "
                                        r"Received: an element 3 of type int"):
        evaluation.TokenizedTexts(["a", 3], preprocessor)
    with pytest.raises(TypeError, match=r"`texts` must be a list of strings\. Received: "
                                        r"texts=None"):
        evaluation.TokenizedTexts(None, preprocessor)


def test_run_batch_must_return_one_row_per_text(preprocessor):
    texts = evaluation.TokenizedTexts(["a b a", "b", "a"], preprocessor)
    with pytest.raises(ValueError, match=r"`run_batch` must return one vector per text: "
                                         r"shape \(3, d\) for a batch of 3 texts\. "
                                         r"Received: shape \(1, 2\)"):
        texts.embed(lambda ids, mask: np.ones((1, 2)))
    with pytest.raises(ValueError, match=r"Received: shape \(3,\)"):
        texts.embed(lambda ids, mask: mask.sum(axis=1))
    vectors = texts.embed(lambda ids, mask: mask.sum(axis=1, keepdims=True))
    assert vectors.ravel().tolist() == [5.0, 3.0, 3.0]
