"""The XLM-R SentencePiece kind (multilingual-e5, paraphrase-multilingual-MiniLM):
keras-hub's `XLMRobertaTokenizer`.

The runner file is the serialized SentencePiece model (`.spm`, as
`tokenizer.proto` holds it); its fingerprint is the SHA-256 of those bytes.
MediaPipe carries it as a SentencePiece tokenizer, renumbered so that
MediaPipe's BERT preprocessor feeds the model its own ids
(`mediapipe_sentencepiece_model`); MediaPipe lowercases ASCII letters, which
XLM-R keeps.
"""

import hashlib
import pathlib

from keras_subembed.optional import sentencepiece_model_pb2

# The first three pieces of an XLM-R SentencePiece model, which fairseq's
# four ids (`<s>`, `<pad>`, `</s>`, `<unk>`) replace.
SENTENCEPIECE_SPECIAL_PIECES = ("<unk>", "<s>", "</s>")
# XLM-R's ids 0-3, with MediaPipe's names for the two ends of a sequence.
MEDIAPIPE_SPECIAL_PIECES = ("[CLS]", "<pad>", "[SEP]", "<unk>")
MEDIAPIPE_SENTENCEPIECE_FILE = "sentencepiece.model"
WORD_START = "\u2581"


def runner_file(tokenizer):
    return tokenizer.proto or None


def fingerprint(tokenizer):
    return sentencepiece_fingerprint(tokenizer.proto)


def sentencepiece_fingerprint(proto):
    """SHA-256 of a serialized SentencePiece model: what a runner compares with its `.spm` file."""
    return hashlib.sha256(proto).hexdigest()


def file_fingerprint(path):
    try:
        return sentencepiece_fingerprint(pathlib.Path(path).read_bytes())
    except OSError:
        return None


def whole_words(tokenizer):
    """Lowercase words of any script: the word-initial pieces ("▁word")."""
    return [t[1:] for t in tokenizer.get_vocabulary()
            if t.startswith(WORD_START) and t[1:].isalpha() and t[1:] == t[1:].lower()]


def mediapipe_file(tokenizer):
    return MEDIAPIPE_SENTENCEPIECE_FILE, mediapipe_sentencepiece_model(tokenizer.proto)


def mediapipe_normalization(tokenizer):
    return (
        "MediaPipe lowercases ASCII letters A-Z before tokenizing and this model's "
        "SentencePiece tokenizer keeps case: on the phone \"Paris\" is embedded as "
        "\"paris\" (other scripts and accented letters are kept). On multilingual-e5-small "
        "this costs a mean cosine of about 0.992 on Latin-script text and 0.999 on other "
        "scripts (through the Latin words in them).")


def parse_xlm_roberta_sentencepiece(proto, source):
    """The `ModelProto` of the serialized SentencePiece model `proto`, else a
    `ValueError` naming `source`: bytes that are not a model, or a model
    without XLM-R's first pieces (its ids would not be the model's)."""
    model = sentencepiece_model_pb2.ModelProto()
    try:
        model.ParseFromString(proto)
    except Exception as error:  # protobuf's DecodeError is not a ValueError
        raise ValueError(f"{source} is not a serialized SentencePiece model: {error}") from None
    first = tuple(piece.piece for piece in model.pieces[:3])
    if first != SENTENCEPIECE_SPECIAL_PIECES:
        raise ValueError(
            f"An XLM-R SentencePiece model starts with the pieces {SENTENCEPIECE_SPECIAL_PIECES}; "
            f"{source} starts with {first}."
        )
    return model


def mediapipe_sentencepiece_model(proto):
    """The serialized SentencePiece model `proto` renumbered to XLM-R's ids.

    MediaPipe's text preprocessor looks up the literal pieces "[CLS]" and
    "[SEP]" for the ends of a sequence (an XLM-R model has neither) and feeds
    the raw SentencePiece ids, where XLM-R (fairseq, Hugging Face, keras-hub)
    uses `<s>`=0 `<pad>`=1 `</s>`=2 `<unk>`=3 and every other piece's id + 1.
    Rewriting only the piece table makes each piece's id the model's, with
    no change to the exported graph (MediaPipe's padding, 0, sits under a
    zero mask).

    Args:
        proto: the serialized model of a keras-hub `XLMRobertaTokenizer`
            (`tokenizer.proto`): `<unk>`, `<s>`, `</s>`, then the pieces.

    Returns:
        Bytes of a model whose pieces are "[CLS]", "<pad>", "[SEP]" (control
        pieces: never matched in text), "<unk>", then the model's pieces
        from its id 3 on, each at its id + 1; normaliser, scores and
        everything else unchanged.

    Example:
    ```python
    data = mediapipe_sentencepiece_model(tokenizer.proto)
    ```
    """
    model = parse_xlm_roberta_sentencepiece(proto, "`proto`")
    kept = list(model.pieces[3:])
    del model.pieces[:]
    piece_type = sentencepiece_model_pb2.ModelProto.SentencePiece.Type
    for name in MEDIAPIPE_SPECIAL_PIECES:
        model.pieces.add(piece=name, score=0.0, type=piece_type.UNKNOWN
                         if name == "<unk>" else piece_type.CONTROL)
    model.pieces.extend(kept)
    spec = model.trainer_spec
    spec.unk_id, spec.bos_id, spec.pad_id, spec.eos_id = 3, 0, 1, 2
    spec.bos_piece, spec.pad_piece, spec.eos_piece = "[CLS]", "<pad>", "[SEP]"
    return model.SerializeToString()
