"""`distillation_dataset`: texts as the shuffled, repeated, tokenized batches of distillation."""

import itertools

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.models import distillation_dataset

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(10)]
TEXTS = [f"w{i}" for i in range(10)]


def preprocessor(sequence_length=4):
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    return keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=sequence_length)


def first_ids(dataset, batches):
    """The id of each batch row's one word ([CLS] w [SEP]), for `batches` batches."""
    return [np.asarray(batch["token_ids"])[:, 1].tolist()
            for batch in itertools.islice(iter(dataset), batches)]


def test_each_pass_is_a_seeded_shuffle_of_all_texts_in_full_batches():
    dataset = distillation_dataset(TEXTS, preprocessor(), batch_size=3, seed=7)
    batch = next(iter(dataset))
    assert sorted(batch) == ["padding_mask", "segment_ids", "token_ids"]
    assert batch["token_ids"].shape == (3, 4)  # the preprocessor's length, not the text's
    # 10 texts in batches of 3: 9 per pass (the short batch dropped), and the
    # dataset goes on past them.
    rows = first_ids(dataset, 8)
    assert all(len(row) == 3 for row in rows)
    first_pass = sum(rows[:3], [])
    assert len(set(first_pass)) == 9 and set(first_pass) <= {VOCABULARY.index(t) for t in TEXTS}
    assert first_pass != sorted(first_pass)  # shuffled


def test_the_seed_decides_the_order_under_a_global_seed():
    def order(seed):
        keras.utils.set_random_seed(0)  # as a job does: TensorFlow's op seeds need it
        return first_ids(distillation_dataset(TEXTS, preprocessor(), 3, seed=seed), 6)

    assert order(7) == order(7)
    assert order(7) != order(8)


def test_refuses_too_few_texts_and_other_inputs():
    with pytest.raises(ValueError, match=r"`texts` must hold at least `batch_size` \(4\) "
                                         r"texts. Received: 3 texts"):
        distillation_dataset(["a", "b", "c"], preprocessor(), batch_size=4)
    with pytest.raises(TypeError, match=r"`texts` must be a list of strings. Received: "
                                        r"texts='one text'"):
        distillation_dataset("one text", preprocessor(), batch_size=1)
    with pytest.raises(TypeError, match=r"`texts` must be a list of strings. Received: "
                                        r"texts=\"\['a', 2\]\""):
        distillation_dataset(["a", 2], preprocessor(), batch_size=1)
    with pytest.raises(TypeError, match=r"`preprocessor` must be a keras-hub text "
                                        r"preprocessor. Received: preprocessor='bert'"):
        distillation_dataset(TEXTS, "bert", batch_size=2)
    with pytest.raises(ValueError, match=r"`batch_size` must be a positive integer. "
                                         r"Received: batch_size=0"):
        distillation_dataset(TEXTS, preprocessor(), batch_size=0)
    with pytest.raises(ValueError, match=r"`seed` must be an int in \[0, 2\*\*32\) or None. "
                                         r"Received: seed=-1"):
        distillation_dataset(TEXTS, preprocessor(), batch_size=2, seed=-1)
