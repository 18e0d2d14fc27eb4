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

`mediapipe_sentencepiece_model` (the SentencePiece tokenizer kind's MediaPipe
file, in `keras_subembed.tokenizer_kinds.sentencepiece`) rewrites only the
piece table, so the first two disappear: pieces 0-3 become "[CLS]", "<pad>", "[SEP]", "<unk>" and
every other piece moves up by one, so each piece's id *is* the model's id,
with no change to the exported graph (the padding MediaPipe writes, 0, sits
under a zero mask). The lowercasing and the cut cannot be undone: "Paris" reaches
the model as "paris". `ascii_lowercase` is what MediaPipe does to a text, so a
caller can embed the same text in Keras (and measure what it costs).
"""

ASCII_UPPER_TO_LOWER = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lowercase(text):
    """`text` as MediaPipe's text preprocessor tokenizes it: cut at the first
    U+0000 (MediaPipe reads a C string, which ends there), A-Z lowercased,
    nothing else.

    Example:
    >>> ascii_lowercase("Paris ÉTÉ İstanbul\\x00 Rome")
    'paris ÉtÉ İstanbul'
    """
    return text.partition("\x00")[0].translate(ASCII_UPPER_TO_LOWER)
