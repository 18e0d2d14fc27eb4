"""The `keras_subembed` metadata entry of a `.tflite` file: written, replaced, read back,
and never read from a file this package did not write."""

import json

import numpy as np

from keras_subembed.tflite_metadata import METADATA_NAME
from keras_subembed.tflite_metadata import WRITTEN_BY
from keras_subembed.tflite_metadata import read_metadata
from keras_subembed.tflite_metadata import read_model
from keras_subembed.tflite_metadata import tflite_schema
from keras_subembed.tflite_metadata import with_metadata
from keras_subembed.tflite_metadata import write_model
from tests.tflite_utils import handmade_tflite


def small_file():
    return handmade_tflite([("x", (None, 4), "float32", None, None),
                            ("y", (None, 4), "float32", None, None)],
                           [("RELU", (0,), (1,))], inputs=(0,), outputs=(1,))


def entries(flatbuffer):
    return [entry.name.decode() for entry in read_model(flatbuffer).metadata or []]


def with_foreign_entry(flatbuffer, name, data):
    schema = tflite_schema()
    model = read_model(flatbuffer)
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(data, np.uint8)
    model.buffers.append(buffer)
    entry = schema.MetadataT()
    entry.name, entry.buffer = name, len(model.buffers) - 1
    model.metadata = (model.metadata or []) + [entry]
    return bytes(write_model(model))


def test_the_entry_is_written_replaced_and_read_back_beside_other_entries():
    plain = with_foreign_entry(small_file(), "min_runtime_version", b"1.5.0\0")
    assert read_metadata(plain) is None
    first = with_metadata(plain, {"vocabulary_size": 30})
    assert read_metadata(first) == {"vocabulary_size": 30, "written_by": WRITTEN_BY}
    second = with_metadata(first, {"vocabulary_size": 31, "lowercase": True})
    assert read_metadata(second) == {"vocabulary_size": 31, "lowercase": True,
                                     "written_by": WRITTEN_BY}
    assert entries(second) == ["min_runtime_version", METADATA_NAME]  # one entry of ours
    assert [op.opcodeIndex for op in read_model(second).subgraphs[0].operators] == [0]


def test_an_entry_of_our_name_that_we_did_not_write_is_not_ours():
    theirs = json.dumps({"written_by": "someone else", "vocabulary_size": 30}).encode()
    assert read_metadata(with_foreign_entry(small_file(), METADATA_NAME, theirs)) is None
    assert read_metadata(with_foreign_entry(small_file(), METADATA_NAME, b"[1, 2]")) is None
    assert read_metadata(b"\x00" * 16 + b"not a flatbuffer") is None
