"""int8 lookup tables: GATHER / SLICE tables of a float file stored as int8 with a
DEQUANTIZE after the lookup; tables other ops read, and small ones, stay float."""

import keras
import keras_hub
import numpy as np
import pytest

from keras_subembed.export.litert.flatbuffer import constant_bytes
from keras_subembed.export.litert.flatbuffer import constant_tensors
from keras_subembed.export.litert.flatbuffer import op_names
from keras_subembed.export.litert.flatbuffer import quantized_op_count
from keras_subembed.export.litert.lookup_tables import int8_lookup_tables
from keras_subembed.export.litert.conversion import convert
from keras_subembed.export.litert.conversion import interpreter_runner

pytestmark = pytest.mark.tensorflow_only(reason="it converts .tflite files")

VOCABULARY, WIDTH, POSITIONS = 3000, 16, 128


@pytest.fixture(scope="module")
def float_file():
    """ids -> a large table (GATHER) + a position table (SLICE) + a small table,
    a Dense, and a second output that multiplies the input with the shared table."""
    keras.utils.set_random_seed(0)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    scale = keras.Input((1, 1), dtype="float32", name="scale")
    tokens = keras.layers.Embedding(VOCABULARY, WIDTH, name="tokens")
    x = tokens(token_ids)
    x = x + keras_hub.layers.PositionEmbedding(POSITIONS, name="positions")(x)
    x = x + keras.layers.Embedding(10, WIDTH, name="small")(keras.ops.mod(token_ids, 10))
    vectors = keras.layers.Dense(8, name="head")(x)
    shared = keras.layers.Embedding(50, 32, name="shared")
    looked_up = shared(keras.ops.mod(token_ids, 50))
    # MUL reads the table constant itself (its other input is a model input).
    scaled = keras.ops.multiply(scale, shared.embeddings)
    model = keras.Model({"token_ids": token_ids, "scale": scale},
                        {"vectors": vectors, "looked_up": looked_up, "scaled": scaled})
    return convert(model)


def run(flatbuffer, length=40, seed=0):
    ids = np.random.default_rng(seed).integers(0, VOCABULARY, (2, length)).astype("int32")
    return interpreter_runner(flatbuffer)(token_ids=ids, scale=np.full((1, 1, 1), 2.0, "float32"))


def tensor_types(flatbuffer):
    return {name: dtype for name, _, _, dtype in constant_tensors(flatbuffer, with_type=True)}


def test_lookup_only_tables_become_int8_and_the_file_computes_the_same(float_file):
    quantized = int8_lookup_tables(float_file)
    before, after = constant_bytes(float_file), constant_bytes(quantized)
    # The token table (3000 x 16) and the position table (128 x 16): 1 byte a value.
    assert after["int8"] == VOCABULARY * WIDTH + POSITIONS * WIDTH
    assert before["float32"] - after["float32"] == 4 * after["int8"]
    assert "DEQUANTIZE" in op_names(quantized) and "DEQUANTIZE" not in op_names(float_file)
    # 3 of every 4 bytes saved, less the per-column scales and new tensors.
    assert len(float_file) - len(quantized) > 2.9 * after["int8"]
    # Lookups of int8 rows are not counted as ops computing with integer weights.
    assert quantized_op_count(quantized) == 0
    want, got = run(float_file), run(quantized)
    for name in ("vectors", "looked_up", "scaled"):
        assert got[name].shape == want[name].shape
    # One scale per column: each value is off by at most half its column's step.
    step = max(np.abs(want["vectors"]).max(), 1e-6) / 127
    np.testing.assert_allclose(got["vectors"], want["vectors"], atol=8 * step)
    assert not np.array_equal(got["vectors"], want["vectors"])
    # The table that MUL also reads stays float: both its outputs are exact.
    np.testing.assert_array_equal(got["looked_up"], want["looked_up"])
    np.testing.assert_array_equal(got["scaled"], want["scaled"])


def test_shared_and_small_tables_stay_float(float_file):
    types = tensor_types(int8_lookup_tables(float_file))
    int8 = sorted(name for name, dtype in types.items() if dtype == "int8")
    assert len(int8) == 2 and any("tokens" in n for n in int8) and any("positions" in n for n in int8)
    assert all(types[name] == "float32" for name in types if "small" in name or "shared" in name)


def test_a_file_without_tables_is_returned_unchanged(float_file):
    quantized = int8_lookup_tables(float_file)
    # Nothing left to quantize: the same bytes back.
    assert int8_lookup_tables(quantized) is quantized
    assert int8_lookup_tables(float_file, min_elements=10 ** 9) is float_file


class LastAxisReads(keras.layers.Layer):
    """A user's layer reading tables along their last axis: columns by id, part of each row."""

    def build(self, input_shape):
        self.columns = self.add_weight(shape=(WIDTH, 200), name="columns")
        self.rows = self.add_weight(shape=(POSITIONS, WIDTH), name="rows")

    def call(self, token_ids):
        columns = keras.ops.take(self.columns, keras.ops.mod(token_ids, 200), axis=1)
        half_rows = keras.ops.slice(self.rows, (0, 0), (keras.ops.shape(token_ids)[1], WIDTH // 2))
        return {"columns": columns, "half_rows": half_rows}


def test_tables_read_along_their_last_axis_stay_float_and_the_file_runs():
    """Issue 32 item 13: per-column scales on such a table made LiteRT refuse the
    file ("num_scales must be 1"); the table stays float instead."""
    keras.utils.set_random_seed(0)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    float_file = convert(keras.Model(token_ids, LastAxisReads(name="reads")(token_ids)))
    quantized = int8_lookup_tables(float_file)
    ids = np.random.default_rng(0).integers(0, VOCABULARY, (2, 40)).astype("int32")
    want = interpreter_runner(float_file)(token_ids=ids)
    got = interpreter_runner(quantized)(token_ids=ids)
    for name in ("columns", "half_rows"):
        np.testing.assert_array_equal(got[name], want[name])
    assert "int8" not in constant_bytes(quantized)
