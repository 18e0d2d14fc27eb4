import zipfile

import keras
import numpy as np
import pytest

from keras_subembed.assignment import pack_codes
from keras_subembed.assignment import unpack_codes
from keras_subembed.assignment.packing import bits_per_code
from keras_subembed.layers import SubEmbedding
from tests.layers.layer_contract import assert_float32_close
from tests.layers.layer_contract import compiled


@pytest.mark.parametrize("rows, num_tables, width", [(2, 13, 2), (4, 7, 2), (16, 5, 3), (16, 8, 4)])
def test_pack_unpack_round_trip(rows, num_tables, width):
    codes = np.random.default_rng(rows).integers(0, rows, size=(500, num_tables))
    packed = pack_codes(codes, rows)
    assert packed.dtype == np.uint8 and packed.shape == (500, width)
    np.testing.assert_array_equal(unpack_codes(packed, rows, num_tables), codes)


def test_bits_per_code():
    assert [bits_per_code(m) for m in (1, 2, 3, 4, 5, 16, 17, 256)] == [1, 1, 2, 2, 4, 4, None, None]


def pair(rows=16, num_tables=6, vocab=400, width=18):
    """The same layer with codes packed and unpacked (same codes, same sub-tables)."""
    codes = np.random.default_rng(1).integers(0, rows, size=(vocab, num_tables))
    packed = SubEmbedding(vocab, width, assignment=codes, distinct_codes=False)
    unpacked = SubEmbedding(vocab, width, assignment=codes, distinct_codes=False, pack_codes=False)
    packed.build(), unpacked.build()
    unpacked.set_weights(
        [np.asarray(t) for t in packed.sub_tables] + [codes.astype(np.uint8)]
    )
    return packed, unpacked, codes


@pytest.mark.parametrize("rows", [2, 4, 16])
def test_packed_lookup_and_tied_logits_equal_unpacked(rows):
    packed, unpacked, codes = pair(rows=rows)
    assert packed.pack_codes and packed.codes.shape == (400, -(-6 // (8 // bits_per_code(rows))))
    np.testing.assert_array_equal(packed.code_array(), codes)
    ids = np.random.default_rng(2).integers(0, 400, size=(3, 9)).astype("int32")
    hidden = np.random.default_rng(3).normal(size=(4, 18)).astype("float32")
    for run in (lambda layer, x, r: layer(x, reverse=r),
                lambda layer, x, r: compiled(lambda y: layer(y, reverse=r))(x)):
        np.testing.assert_array_equal(run(packed, ids, False), run(unpacked, ids, False))
        assert_float32_close(run(packed, hidden, True), run(unpacked, hidden, True), 18)


def test_packing_errors_name_the_value():
    with pytest.raises(ValueError, match=r"needs rows_per_table <= 16\. Received: rows_per_table=300"):
        SubEmbedding(1000, 8, assignment="random", num_tables=2, rows_per_table=300, pack_codes=True)
    with pytest.raises(ValueError, match=r'`pack_codes=True` needs stored codes; assignment="digits"'):
        SubEmbedding(1000, 8, num_tables=3, pack_codes=True)
    with pytest.raises(ValueError, match=r"`pack_codes` must be a bool. Received: pack_codes='yes'"):
        SubEmbedding(1000, 8, assignment="random", num_tables=3, pack_codes="yes")
    with pytest.raises(ValueError, match=r"only with `rows_per_table` <= 16. Received: rows_per_table=300"):
        pack_codes(np.zeros((2, 2), int), 300)


def test_keras_file_holds_the_packed_bytes(tmp_path):
    vocab = 20_000
    packed, unpacked, _ = pair(rows=16, num_tables=8, vocab=vocab, width=8)
    sizes = {}
    for name, layer in (("packed", packed), ("unpacked", unpacked)):
        ids = keras.Input((None,), dtype="int32")
        model = keras.Model(ids, layer(ids))
        model.save(tmp_path / f"{name}.keras")
        with zipfile.ZipFile(tmp_path / f"{name}.keras") as archive:
            sizes[name] = archive.getinfo("model.weights.h5").file_size
        reloaded = keras.saving.load_model(tmp_path / f"{name}.keras")
        probe = np.arange(0, vocab, 7)[None]
        np.testing.assert_array_equal(reloaded(probe), model(probe))
    # 8 codes per token: 4 bytes packed instead of 8.
    assert sizes["unpacked"] - sizes["packed"] == pytest.approx(4 * vocab, rel=0.01)


@pytest.mark.tensorflow_only(reason="TFLite conversion is TensorFlow's")
def test_tflite_file_holds_the_packed_bytes():
    from tests.tflite_utils import TFLiteRunner
    from tests.tflite_utils import convert_builtins_only

    vocab = 20_000
    packed, unpacked, _ = pair(rows=16, num_tables=8, vocab=vocab, width=8)
    sizes, outputs = {}, {}
    ids = np.random.default_rng(0).integers(0, vocab, size=(2, 11)).astype("int32")
    for name, layer in (("packed", packed), ("unpacked", unpacked)):
        inputs = keras.Input((None,), dtype="int32")
        runner = TFLiteRunner(convert_builtins_only(keras.Model(inputs, layer(inputs))))
        sizes[name], outputs[name] = runner.file_bytes, runner(ids)
        np.testing.assert_array_equal(outputs[name], layer(ids))
    # The packed graph has a few more ops (unpacking): a little less than 4 bytes per token.
    assert sizes["unpacked"] - sizes["packed"] == pytest.approx(4 * vocab, rel=0.05)
