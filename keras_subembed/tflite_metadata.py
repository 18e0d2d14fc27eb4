"""The metadata entry this package writes into every `.tflite` file it exports:
proof that it wrote the file (so `overwrite` may replace it) and what a runner
must check (the vocabulary's size and fingerprint, the text normalisation)."""

import json

import numpy as np
from tensorflow.lite.python import schema_py_generated
from tensorflow.lite.tools import flatbuffer_utils  # TensorFlow: where .tflite files are


def tflite_schema():
    """TensorFlow Lite's flatbuffer schema (generated Python classes)."""
    return schema_py_generated


# The name of the metadata entry an export writes: `{"written_by": ..., ...}`.
METADATA_NAME = "keras_subembed"
WRITTEN_BY = "keras_subembed.export"


def read_model(flatbuffer):
    """A `.tflite` flatbuffer as TensorFlow Lite's object API (`ModelT`)."""
    return flatbuffer_utils.read_model_from_bytearray(flatbuffer)


def write_model(model):
    """The `.tflite` flatbuffer bytes of a `ModelT`."""
    return flatbuffer_utils.convert_object_to_bytearray(model)


def with_buffers_inline(flatbuffer):
    """`flatbuffer` (under 2 GB) with every buffer inside the flatbuffer itself.

    ai-edge-quantizer writes a model whose buffers pass 256 KB with them past
    the flatbuffer, by offset; a writer that rewrites the flatbuffer and not
    them (MediaPipe's metadata writer) leaves the offsets pointing at other
    bytes, and the file fails to load ("out of range offset"). TensorFlow's
    reader reads such buffers in place.
    """
    return bytes(write_model(read_model(flatbuffer)))


def with_metadata(flatbuffer, values):
    """`flatbuffer` with `values` (JSON) stored as the metadata entry `keras_subembed`.

    The entry proves that this package wrote the file (so `overwrite` may
    replace it) and carries what a runner must check: the vocabulary's size
    and fingerprint, the text normalisation.
    """
    schema = tflite_schema()
    model = read_model(flatbuffer)
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(
        json.dumps(dict(values, written_by=WRITTEN_BY), sort_keys=True).encode("utf-8"),
        dtype=np.uint8)
    model.buffers.append(buffer)
    entry = schema.MetadataT()
    entry.name = METADATA_NAME
    entry.buffer = len(model.buffers) - 1
    model.metadata = [m for m in (model.metadata or []) if m.name != METADATA_NAME.encode()]
    model.metadata.append(entry)
    return write_model(model)


def read_metadata(flatbuffer):
    """The `keras_subembed` metadata of a `.tflite` flatbuffer, or None."""
    schema = tflite_schema()
    try:
        model = schema.Model.GetRootAsModel(flatbuffer, 0)
        for index in range(model.MetadataLength()):
            entry = model.Metadata(index)
            if entry.Name() == METADATA_NAME.encode():
                data = model.Buffers(entry.Buffer()).DataAsNumpy()
                values = json.loads(bytes(data).decode("utf-8"))
                if isinstance(values, dict) and values.get("written_by") == WRITTEN_BY:
                    return values
    except Exception:  # a corrupt or foreign file is simply not ours
        return None
    return None
