"""An XLM-R SentencePiece model renumbered so MediaPipe's BERT preprocessor feeds a model its own ids.

MediaPipe Tasks' text preprocessor, given SentencePiece tokenizer metadata,
does three things a keras-hub `XLMRobertaTokenizer` does not:

- it looks up the literal pieces "[CLS]" and "[SEP]" for the ends of the
  sequence (an XLM-R model has neither, so both became id 0, `<unk>`);
- it feeds the raw SentencePiece ids, where XLM-R (fairseq, Hugging Face,
  keras-hub) uses `<s>`=0 `<pad>`=1 `</s>`=2 `<unk>`=3 and every other
  piece's SentencePiece id + 1;
- it lowercases ASCII letters before tokenizing;
- it ends the text at its first U+0000.

`mediapipe_sentencepiece_model` rewrites only the piece table, so the first
two disappear: pieces 0-3 become "[CLS]", "<pad>", "[SEP]", "<unk>" and
every other piece moves up by one, so each piece's id *is* the model's id,
with no change to the exported graph (the padding MediaPipe writes, 0, sits
under a zero mask). The lowercasing and the cut cannot be undone: "Paris" reaches
the model as "paris". `ascii_lowercase` is what MediaPipe does to a text, so a
caller can embed the same text in Keras (and measure what it costs).
"""

import keras_hub

from keras_subembed.models.model_files import parse_xlm_roberta_sentencepiece

# XLM-R's ids 0-3, with MediaPipe's names for the two ends of a sequence.
MEDIAPIPE_SPECIAL_PIECES = ("[CLS]", "<pad>", "[SEP]", "<unk>")
MEDIAPIPE_SENTENCEPIECE_FILE = "sentencepiece.model"
ASCII_UPPER_TO_LOWER = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def is_xlm_roberta_tokenizer(tokenizer):
    return isinstance(tokenizer, keras_hub.tokenizers.XLMRobertaTokenizer)


def ascii_lowercase(text):
    """`text` as MediaPipe's text preprocessor tokenizes it: cut at the first
    U+0000 (MediaPipe reads a C string, which ends there), A-Z lowercased,
    nothing else.

    Example:
    >>> ascii_lowercase("Paris ÉTÉ İstanbul\\x00 Rome")
    'paris ÉtÉ İstanbul'
    """
    return text.partition("\x00")[0].translate(ASCII_UPPER_TO_LOWER)


def mediapipe_sentencepiece_model(proto):
    """The serialized SentencePiece model `proto` renumbered to XLM-R's ids.

    Args:
        proto: the serialized model of a keras-hub `XLMRobertaTokenizer`
            (`tokenizer.proto`): `<unk>`, `<s>`, `</s>`, then the pieces.

    Returns:
        Bytes of a model whose pieces are "[CLS]", "<pad>", "[SEP]" (control
        pieces: never matched in text), "<unk>", then the model's pieces
        from its id 3 on, each at its id + 1; normaliser, scores and
        everything else unchanged.

    Example:
    >>> data = mediapipe_sentencepiece_model(tokenizer.proto)
    """
    from sentencepiece import sentencepiece_model_pb2

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
