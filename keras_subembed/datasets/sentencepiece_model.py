"""XLM-R SentencePiece models built from pieces, scores and a normalisation map.

Hugging Face's XLM-R ids are SentencePiece ids + 1 with `<s>`=0, `<pad>`=1,
`</s>`=2, `<unk>`=3 and `<mask>` last (fairseq's numbering); the
SentencePiece model itself numbers `<unk>`=0, `<s>`=1, `</s>`=2, then the
pieces. keras-hub's `XLMRobertaTokenizer` and HF's `XLMRobertaTokenizer`
both read such a model (`sentencepiece.bpe.model`) and shift its ids.
"""

import io
import os
import tempfile

from keras_subembed.optional import sentencepiece
from keras_subembed.optional import sentencepiece_model_pb2

# Hugging Face XLM-R ids of the special tokens (fairseq's dictionary).
XLM_R_SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")
XLM_R_MASK = "<mask>"
# Enough text for SentencePiece's trainer to run (it compiles the normalisation
# rules while training; its pieces are thrown away).
_TRAINING_TEXT = ["ab"] * 8


def compile_normalization(normalization):
    """SentencePiece's `precompiled_charsmap` for a `{string: replacement}` map.

    A key is replaced wherever it occurs (longest key first, as SentencePiece
    normalises); an empty replacement deletes it. The map is compiled by
    SentencePiece's own trainer (`normalization_rule_tsv`), the only public
    way to its double-array format.

    Example:

    >>> charsmap = compile_normalization({"\\t": " ", "\\u200b": ""})
    """
    model_pb2 = sentencepiece_model_pb2.require()  # fails without sentencepiece, rules or none
    if not normalization:
        return b""  # SentencePiece's "identity": no rules (its compiler refuses an empty map)
    with tempfile.TemporaryDirectory() as folder:
        rules = os.path.join(folder, "rules.tsv")
        with open(rules, "w", encoding="utf-8") as file:
            for key, replacement in sorted(normalization.items()):
                if not isinstance(key, str) or not key or "\0" in key:
                    raise ValueError(
                        f"`normalization` keys must be non-empty strings without NUL. "
                        f"Received: {key!r}")
                file.write(f"{_hex(key)}\t{_hex(replacement)}\n")
        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(_TRAINING_TEXT), model_writer=model, vocab_size=64,
            hard_vocab_limit=False, normalization_rule_tsv=rules, minloglevel=2)
    proto = model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


def _hex(text):
    return " ".join(f"{ord(character):X}" for character in text)


def xlm_roberta_sentencepiece_model(pieces, scores, normalization, name="custom"):
    """The serialized SentencePiece model (`sentencepiece.bpe.model`) of an XLM-R vocabulary.

    Args:
        pieces: the Unigram pieces in Hugging Face XLM-R id order:
            `<s>`, `<pad>`, `</s>`, `<unk>`, then the pieces, `<mask>` last.
        scores: one log probability per piece (the specials' are ignored).
        normalization: `{character: replacement}` applied before
            tokenizing (compiled into `precompiled_charsmap`).
        name: the normaliser's name recorded in the model.

    Example:

    >>> import sentencepiece
    >>> proto = xlm_roberta_sentencepiece_model(
    ...     ["<s>", "<pad>", "</s>", "<unk>", "▁a", "b", "<mask>"],
    ...     [0, 0, 0, 0, -1.0, -2.0, 0], {})
    >>> sentencepiece.SentencePieceProcessor(model_proto=proto).encode("ab")
    [3, 4]
    """
    model_pb2 = sentencepiece_model_pb2.require()
    pieces = list(pieces)
    if len(pieces) != len(scores):
        raise ValueError(f"`pieces` ({len(pieces)}) and `scores` ({len(scores)}) must "
                         "have one entry each.")
    if tuple(pieces[:4]) != XLM_R_SPECIAL_TOKENS or pieces[-1] != XLM_R_MASK:
        raise ValueError(
            f"`pieces` must be in Hugging Face XLM-R order: {list(XLM_R_SPECIAL_TOKENS)} "
            f"first and {XLM_R_MASK!r} last. Received: {pieces[:4]} ... {pieces[-1:]}")
    proto = model_pb2.ModelProto()
    piece_type = model_pb2.ModelProto.SentencePiece.Type
    for piece, kind in (("<unk>", piece_type.UNKNOWN), ("<s>", piece_type.CONTROL),
                        ("</s>", piece_type.CONTROL)):
        proto.pieces.add(piece=piece, score=0.0, type=kind)
    for piece, score in zip(pieces[4:-1], scores[4:-1]):
        proto.pieces.add(piece=piece, score=float(score), type=piece_type.NORMAL)
    trainer = proto.trainer_spec
    trainer.model_type = model_pb2.TrainerSpec.UNIGRAM
    trainer.vocab_size = len(proto.pieces)
    trainer.unk_id, trainer.bos_id, trainer.eos_id, trainer.pad_id = 0, 1, 2, -1
    normalizer = proto.normalizer_spec
    normalizer.name = name
    normalizer.precompiled_charsmap = compile_normalization(normalization)
    normalizer.add_dummy_prefix = True
    normalizer.remove_extra_whitespaces = True
    normalizer.escape_whitespaces = True
    return proto.SerializeToString()
