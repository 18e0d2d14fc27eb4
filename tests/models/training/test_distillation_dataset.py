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


PAIRS = [(f"w{i}", f"w{i + 5}") for i in range(3)]  # w0-w5, w1-w6, w2-w7


def test_pairs_stay_side_by_side_and_texts_pair_two_by_two():
    texts = ["w3", "w4", "w8", "w9"]
    dataset = distillation_dataset(texts, preprocessor(), batch_size=4, seed=3, pairs=PAIRS)
    ids = {VOCABULARY.index(t): t for t in TEXTS}
    partner = {VOCABULARY.index(a): VOCABULARY.index(b) for a, b in PAIRS}
    seen = []
    for row in first_ids(dataset, 12):
        assert len(row) == 4
        for first, second in zip(row[0::2], row[1::2]):
            if first in partner:
                assert partner[first] == second, (row, ids)
            seen.append((first, second))
    pair_rows = {(VOCABULARY.index(a), VOCABULARY.index(b)) for a, b in PAIRS}
    text_rows = set(seen) - pair_rows
    # 3 pairs + the 4 texts as 2 pairs, every one of them seen in 12 batches of 2.
    assert pair_rows <= set(seen) and len(text_rows) == 2
    assert {i for row in text_rows for i in row} == {VOCABULARY.index(t) for t in texts}


def test_pairs_need_an_even_batch_pairs_of_strings_and_enough_of_them():
    with pytest.raises(ValueError, match=r"`batch_size` must be even with `pairs` \(a batch "
                                         r"holds whole pairs\). Received: batch_size=3"):
        distillation_dataset([], preprocessor(), batch_size=3, pairs=PAIRS)
    with pytest.raises(TypeError, match=r"`pairs` must be a list of \(text, text\) pairs of "
                                        r"strings. Received: pairs=\"\[\('a', 'b', 'c'\)\]\""):
        distillation_dataset([], preprocessor(), batch_size=2, pairs=[("a", "b", "c")])
    with pytest.raises(TypeError, match=r"`pairs` must be a list of \(text, text\) pairs"):
        distillation_dataset([], preprocessor(), batch_size=2, pairs="ab")
    with pytest.raises(ValueError, match=r"`pairs` \(with `texts` paired two by two\) must hold "
                                         r"at least `batch_size` / 2 \(4\) pairs. Received: 3 pairs"):
        distillation_dataset(["w1", "w2"], preprocessor(), batch_size=8, pairs=PAIRS[:2])
