"""XLM-R SentencePiece tokenization with the `sentencepiece` package, id for id what training used.

Reproduces `keras_hub.models.XLMRobertaTokenizer` (multilingual-e5,
paraphrase-multilingual-MiniLM, XLM-R) without TensorFlow: the same
SentencePiece model (`<model>.spm`, written beside the `.tflite` file by
`device/convert.py`) segments the text, then fairseq's renumbering gives the
model's ids: `<s>`=0 `<pad>`=1 `</s>`=2 `<unk>`=3, every other piece its
SentencePiece id + 1. Normalisation (NFKC and whatever else the model's
normaliser does) is in the model file, so nothing here depends on Unicode
tables of the Python in use.

    tokenizer = SentencePieceTokenizer.from_file("model.spm")
    tokenizer.tokenize("Москва — столица")   # ids, no <s>/</s>
    tokenizer.pack(tokenizer.tokenize("..."), sequence_length=128)
"""

import sentencepiece

# fairseq's ids for XLM-R's special tokens; the SentencePiece model's own
# first three pieces are these three, in this order.
START_ID, PAD_ID, END_ID, UNK_ID = 0, 1, 2, 3
SENTENCEPIECE_SPECIAL_PIECES = ("<unk>", "<s>", "</s>")


def mediapipe_text(text):
    """`text` as a MediaPipe file's SentencePiece preprocessor tokenizes it (the
    package's `ascii_lowercase`): cut at the first U+0000, which ends MediaPipe's
    C string, and A-Z lowercased. Its `tokenize` ids are then the ids a
    MediaPipe file feeds its model. Standard library only: copy it into an app.

    >>> mediapipe_text("Paris ÉTÉ\\x00 Rome")
    'paris ÉtÉ'
    """
    return text.partition("\x00")[0].translate(_ASCII_UPPER_TO_LOWER)


_ASCII_UPPER_TO_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class SentencePieceModelError(ValueError):
    """The file is not an XLM-R SentencePiece model."""


class SentencePieceTokenizer:
    """Text -> XLM-R ids, identical to `keras_hub.models.XLMRobertaTokenizer`.

    Args:
        proto: the serialized SentencePiece model (bytes).

    Example:

    >>> tokenizer = SentencePieceTokenizer.from_file("e5.spm")
    >>> ids = tokenizer.tokenize("Hello world")
    >>> tokenizer.pack(ids, sequence_length=8)[0], tokenizer.pack(ids, 8)[-1]
    (0, 2)
    """

    # What SentenceEncoder packs with, under the names WordPieceTokenizer uses.
    cls_id, sep_id, pad_id = START_ID, END_ID, PAD_ID

    def __init__(self, proto):
        try:
            self.processor = sentencepiece.SentencePieceProcessor(model_proto=proto)
        except (RuntimeError, TypeError, OSError) as error:
            raise SentencePieceModelError(f"not a SentencePiece model ({error})") from None
        first = tuple(self.processor.id_to_piece(i) for i in range(min(3, self.processor.get_piece_size())))
        if first != SENTENCEPIECE_SPECIAL_PIECES:
            raise SentencePieceModelError(
                f"an XLM-R SentencePiece model starts with the pieces {', '.join(SENTENCEPIECE_SPECIAL_PIECES)}; "
                f"this one starts with {', '.join(first) or 'nothing'}")
        # Pieces + <pad> + <mask>, as keras-hub's `vocabulary_size()`.
        self.vocabulary_size = self.processor.get_piece_size() + 2

    @classmethod
    def from_file(cls, path):
        with open(path, "rb") as file:
            return cls(file.read())

    def tokenize(self, text):
        """The ids of `text`, no `<s>`/`</s>` (keras-hub's `tokenizer(text)`)."""
        return [UNK_ID if i == 0 else i + 1 for i in self.processor.encode(text)]

    def tokens(self, text):
        """The pieces of `text`."""
        return self.processor.encode(text, out_type=str)

    def pack(self, ids, sequence_length):
        """`<s> ids </s>`, the ids cut so the whole fits `sequence_length`."""
        if sequence_length < 2:
            raise ValueError(f"sequence_length must be at least 2 (<s> and </s>), got {sequence_length}")
        return [self.cls_id] + list(ids[: sequence_length - 2]) + [self.sep_id]
