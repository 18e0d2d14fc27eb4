"""SplitEmbedding: exact int8 rows for the first ids, a compressed tail for the rest."""

import keras
import numpy as np
import pytest

from keras_subembed.layers import SplitEmbedding
from keras_subembed.layers import SubEmbedding
from keras_subembed.layers import make_pretrained_embedding
from tests.layers.layer_contract import assert_compiled_matches_eager
from tests.layers.layer_contract import assert_float32_close
from tests.layers.layer_contract import assert_tflite_matches_keras
from tests.layers.layer_contract import tflite_masked_lm

VOCAB, WIDTH, HEAD = 300, 24, 40
TAIL = {"assignment": "product", "num_tables": 6, "rows_per_table": 16}


@pytest.fixture(scope="module")
def table():
    return np.random.default_rng(0).normal(size=(VOCAB, WIDTH)).astype("float32")


@pytest.fixture(scope="module")
def layer(table):
    return SplitEmbedding.from_pretrained(table, head_rows=HEAD, tail_kwargs=TAIL)


def test_head_rows_are_the_table_rounded_per_row_to_int8(layer, table):
    got = np.asarray(layer.embedding_table())
    step = np.abs(table[:HEAD]).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(got[:HEAD] - table[:HEAD]) <= step / 2 + 1e-6)
    assert np.asarray(layer.head_values).dtype == np.int8


def test_tail_ids_read_the_tail_layer_shifted_by_the_head(layer):
    ids = np.array([HEAD, HEAD + 1, VOCAB - 1])
    np.testing.assert_array_equal(np.asarray(layer(ids)),
                                  np.asarray(layer.tail(ids - HEAD)))


def test_tail_is_fitted_with_the_tail_rows_token_weights(table):
    weights = np.ones(VOCAB)
    weights[HEAD + 7] = 1e6  # one heavy tail token pulls its centroids onto itself
    layer = SplitEmbedding.from_pretrained(table, head_rows=HEAD, tail_kwargs=TAIL,
                                           token_weights=weights)
    plain = SplitEmbedding.from_pretrained(table, head_rows=HEAD, tail_kwargs=TAIL)
    error = lambda l: np.abs(np.asarray(l(np.array([HEAD + 7])))[0] - table[HEAD + 7]).max()
    assert error(layer) < 1e-5 < error(plain)


def test_tied_logits_score_hidden_states_against_the_whole_table(layer):
    hidden = np.random.default_rng(1).normal(size=(2, 3, WIDTH)).astype("float32")
    want = hidden @ np.asarray(layer.embedding_table()).T
    assert_float32_close(layer(hidden, reverse=True), want, reduction_length=WIDTH)


def test_compiled_matches_eager(layer):
    ids = np.array([[0, 5, HEAD - 1, HEAD, VOCAB - 1]])
    hidden = np.random.default_rng(2).normal(size=(1, 2, WIDTH))
    assert_compiled_matches_eager(layer, ids, hidden)


def test_only_the_tail_trains(layer):
    names = sorted(w.path for w in layer.trainable_weights)
    assert names and all("tail" in name for name in names)


def test_stored_bytes_count_int8_rows_their_scales_and_the_tail(layer):
    report = layer.compression_report()
    tail = layer.tail.compression_report().stored_bytes
    assert report.stored_bytes == HEAD * WIDTH + HEAD * 4 + tail


def test_keras_file_and_config_round_trip(layer, tmp_path):
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, layer(ids))
    model.save(tmp_path / "split.keras")
    loaded = keras.saving.load_model(tmp_path / "split.keras")
    probe = np.array([[0, HEAD - 1, HEAD, VOCAB - 1]])
    np.testing.assert_array_equal(loaded.predict(probe, verbose=0),
                                  model.predict(probe, verbose=0))
    again = SplitEmbedding.from_config(layer.get_config())
    assert again.get_config() == layer.get_config()


def test_registered_as_the_split_kind(table):
    layer = make_pretrained_embedding("split", table, head_rows=HEAD, tail_kwargs=TAIL)
    assert isinstance(layer, SplitEmbedding) and isinstance(layer.tail, SubEmbedding)


@pytest.mark.parametrize("head_rows, error", [
    (0, ValueError), (VOCAB, ValueError), (2.5, ValueError), (True, ValueError),
])
def test_bad_head_rows_are_refused_by_name(head_rows, error):
    with pytest.raises(error, match="head_rows"):
        SplitEmbedding(VOCAB, WIDTH, head_rows=head_rows)


def test_a_tail_of_the_wrong_size_or_kind_is_refused():
    with pytest.raises(ValueError, match=f"the {VOCAB - HEAD} ids after the head"):
        SplitEmbedding(VOCAB, WIDTH, head_rows=HEAD, tail=SubEmbedding(VOCAB, WIDTH))
    with pytest.raises(TypeError, match="`tail` must be a compressed embedding"):
        SplitEmbedding(VOCAB, WIDTH, head_rows=HEAD, tail=keras.layers.Dense(3))


def test_head_rows_is_required_from_a_table(table):
    with pytest.raises(ValueError, match="`head_rows` is required"):
        SplitEmbedding.from_pretrained(table)


@pytest.mark.tensorflow_only(reason="TFLite conversion")
def test_tflite_matches_keras(layer):
    runner, model = tflite_masked_lm(layer)
    assert_tflite_matches_keras(runner, model, VOCAB, WIDTH)


def test_token_weights_given_twice_are_refused(table):
    weights = np.ones(VOCAB)
    with pytest.raises(ValueError, match=r"Pass `token_weights` once: as `token_weights` \(one "
                                         r"per row of `table`\) or in `tail_kwargs`.*not both"):
        SplitEmbedding.from_pretrained(
            table, head_rows=HEAD, token_weights=weights,
            tail_kwargs={**TAIL, "token_weights": weights[HEAD:]})


def test_tail_kwargs_must_be_a_dict(table):
    with pytest.raises(TypeError, match=r"`tail_kwargs` must be a dict of "
                                        r"`SubEmbedding.from_pretrained` arguments\. "
                                        r"Received: tail_kwargs='product'"):
        SplitEmbedding.from_pretrained(table, head_rows=HEAD, tail_kwargs="product")
