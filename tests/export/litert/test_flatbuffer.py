"""Reading a `.tflite` file: its ops, its constants by dtype, the ops that compute with an
integer weight, and the constants that hold the token embedding, on a file made by hand."""

import keras
import numpy as np

from keras_subembed.export.litert.flatbuffer import constant_bytes
from keras_subembed.export.litert.flatbuffer import constant_tensors
from keras_subembed.export.litert.flatbuffer import embedding_constant_bytes
from keras_subembed.export.litert.flatbuffer import op_names
from keras_subembed.export.litert.flatbuffer import quantized_op_count
from tests.tflite_utils import handmade_tflite

TABLE = np.zeros((20, 4), "float32")
INT8 = np.zeros((3, 4), "int8")
SCALES = [0.1, 0.1, 0.1]


def flatbuffer():
    """ids -> GATHER of the token table -> FULLY_CONNECTED with an int8 kernel, another with
    a DEQUANTIZEd int8 kernel; an int8 table GATHERed; a transposed copy of the token table
    under a generic name; another layer's kernel of the table's shape; an int32 shape."""
    tensors = [
        ("token_ids", (None, None), "int32", None, None),                       # 0
        ("model/tokens/embeddings", (20, 4), "float32", TABLE, None),           # 1
        ("gathered", (None, None, 4), "float32", None, None),                   # 2
        ("arith.constant1", (4, 20), "float32", TABLE.T, None),                 # 3
        ("model/head/kernel", (20, 4), "float32", TABLE, None),                 # 4
        ("tfl.pseudo_qconst", (3, 4), "int8", INT8, SCALES),                    # 5
        ("dense", (None, None, 3), "float32", None, None),                      # 6
        ("model/positions/table", (5, 4), "int8", np.zeros((5, 4), "int8"), [0.1] * 5),  # 7
        ("positions", (None, None, 4), "float32", None, None),                  # 8
        ("deq_weight", (3, 4), "int8", INT8, SCALES),                           # 9
        ("dequantized", (3, 4), "float32", None, None),                         # 10
        ("dense_2", (None, None, 3), "float32", None, None),                    # 11
        ("new_shape", (2,), "int32", np.array([-1, 3], "int32"), None),         # 12
        ("reshaped", (None, 3), "float32", None, None),                         # 13
    ]
    operators = [("GATHER", (1, 0), (2,)), ("FULLY_CONNECTED", (2, 5), (6,)),
                 ("GATHER", (7, 0), (8,)), ("DEQUANTIZE", (9,), (10,)),
                 ("FULLY_CONNECTED", (2, 10), (11,)), ("RESHAPE", (6, 12), (13,))]
    return handmade_tflite(tensors, operators, inputs=(0,), outputs=(11, 13))


def test_ops_and_constants_are_read_by_name_shape_and_dtype():
    data = flatbuffer()
    assert op_names(data) == ("DEQUANTIZE", "FULLY_CONNECTED", "GATHER", "RESHAPE")
    assert constant_tensors(data)[:2] == [("model/tokens/embeddings", (20, 4), 320),
                                          ("arith.constant1", (4, 20), 320)]
    assert len(constant_tensors(data)) == 7  # the tensors a buffer holds data for
    # float32: three 20 x 4 tables; int8: two 3 x 4 kernels and a 5 x 4 table; int32: two values.
    assert constant_bytes(data) == {"float32": 3 * 320, "int32": 8, "int8": 12 + 12 + 20}


def test_only_ops_computing_with_an_integer_weight_count_as_quantized():
    # The FULLY_CONNECTED reading the int8 kernel, and the one behind a DEQUANTIZE;
    # not the GATHER of the int8 table (a lookup) nor the RESHAPE of an int32 shape.
    assert quantized_op_count(flatbuffer()) == 2


def test_the_embeddings_constants_are_its_own_and_its_generic_copies():
    tokens = keras.layers.Embedding(20, 4, name="tokens")
    tokens.build()
    # Its own (by name) and the transposed generic copy; not the head's kernel of its shape.
    assert embedding_constant_bytes(flatbuffer(), tokens) == 320 + 320
    assert embedding_constant_bytes(flatbuffer(), None) == 0
