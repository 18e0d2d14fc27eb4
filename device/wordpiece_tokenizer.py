"""BERT WordPiece tokenization in pure Python, id for id what training used.

Reproduces `keras_hub.models.BertTokenizer` (and so keras-hub's
`WordPieceTokenizer`) with the standard library only, so an app, or
`run_tflite.py` / `search_text.py`, feeds a `.tflite` model exactly the ids
it was trained on. The steps, in keras-hub's order:

1. strip accents (NFD, drop combining marks) when the model's tokenizer
   does: uncased BERT models such as MiniLM do ("café" -> "cafe"); the
   export records it in the .tflite file and `run_tflite.load_tokenizer`
   follows it (the default here keeps them, as keras-hub's BertTokenizer);
2. split on ASCII whitespace and control/format characters (dropped), on
   punctuation (ASCII symbols count) and CJK ideographs (kept as words), and,
   when asked, around the special tokens written in the text;
3. lowercase each word (except special tokens) with NFKC case folding, which
   also maps full-width letters and ligatures ("ﬁ" -> "fi") and drops
   default-ignorable characters (soft hyphen, variation selectors);
4. greedy longest-match-first WordPiece with "##" continuations; a word
   longer than 100 UTF-8 bytes, or one that cannot be covered, is [UNK].

    tokenizer = WordPieceTokenizer.from_file("model.vocab.txt")
    tokenizer.tokenize("The café's menu")   # ids, no [CLS]/[SEP]
    tokenizer.pack(tokenizer.tokenize("..."), sequence_length=128)

Character classes come from Python's `unicodedata`; the few punctuation and
format characters Unicode added after version 14 (Python 3.11) are listed
below so that older Pythons split them as keras-hub does. The ids equal
keras-hub's eager (Python) path for every code point; its tf.data path
differs from its own Python path only on U+0000 (it ends the string there)
and on characters first assigned in Unicode 16-17.
"""

import unicodedata

BERT_SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[PAD]", "[MASK]")
# Longer words become the unknown token (tf-text's FastWordpieceTokenizer rule).
MAX_BYTES_PER_WORD = 100

# keras-hub splits with the `regex` module (Unicode 17); these code points are
# unassigned ("Cn") in Python 3.11's unicodedata (Unicode 14).
_NEWER_PUNCTUATION = (
    (0x1B4E, 0x1B4F), (0x1B7F, 0x1B7F), (0x2E60, 0x2E63), (0x10D6E, 0x10D6E),
    (0x10ED0, 0x10ED0), (0x113D4, 0x113D5), (0x113D7, 0x113D8), (0x11B00, 0x11B09),
    (0x11BE1, 0x11BE1), (0x11F43, 0x11F4F), (0x16D6D, 0x16D6F), (0x1E5FF, 0x1E5FF),
)
_NEWER_FORMAT = ((0x13439, 0x1343F),)
_CJK_IDEOGRAPHS = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)
# Unicode Default_Ignorable_Code_Point, dropped by NFKC_Casefold.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


class VocabularyError(ValueError):
    """The vocabulary cannot drive the tokenizer (e.g. a special token is missing)."""


def check_bool(name, value, allow_none=False):
    """`value` if it is a bool (or None when allowed); a string such as "False"
    would read as true, so anything else is a `TypeError` naming `name`."""
    if isinstance(value, bool) or (allow_none and value is None):
        return value
    raise TypeError(f"`{name}` must be a bool{' or None' if allow_none else ''}. "
                    f"Received: {name}={value!r}")


def _in_ranges(char, ranges):
    code = ord(char)
    return any(low <= code <= high for low, high in ranges)


def _category(char):
    category = unicodedata.category(char)
    if category == "Cn":
        if _in_ranges(char, _NEWER_PUNCTUATION):
            return "Po"
        if _in_ranges(char, _NEWER_FORMAT):
            return "Cf"
    return category


def is_whitespace(char):
    """Dropped separators: ASCII whitespace and control/format characters.

    Other Unicode spaces (no-break space, ideographic space) do not split, as
    in keras-hub; NFKC folding later turns them into a plain space inside the
    word, which then matches no vocabulary entry.
    """
    return char in " \t\n\r\f" or _category(char) in ("Cc", "Cf")


def is_punctuation(char):
    """Kept separators: ASCII symbols and Unicode punctuation."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return _category(char).startswith("P")


def is_cjk(char):
    return _in_ranges(char, _CJK_IDEOGRAPHS)


def casefold(word):
    """NFKC_Casefold: NFKC, full case folding, NFKC again, ignorables dropped."""
    word = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", word).casefold())
    return "".join(char for char in word if not _in_ranges(char, _DEFAULT_IGNORABLE))


def fold_for_uncased_bert(text):
    """The text to give a tokenizer that only lowercases (MediaPipe's BERT
    tokenizer) so that it yields the ids of an uncased, accent-stripping one
    (keras-hub's `BertTokenizer(lowercase=True, strip_accents=True)`, which
    all-MiniLM-L6-v2's Keras model uses).

    NFKC with case folding ("Straße" -> "strasse", "ＡＢＣ" -> "abc"), NFD,
    the combining marks dropped ("café" -> "cafe", "が" -> "か"), then NFC,
    which puts Hangul syllables back together: stopping after NFD, as plain
    accent stripping does, leaves Korean as loose jamo that MediaPipe turns
    into other ids than the Keras model's. U+0000 becomes a space: MediaPipe
    ends the text there, where keras-hub reads a word break. Standard
    library only: copy it into an app.

    >>> fold_for_uncased_bert("Crème Brûlée, Straße, 한국어")
    'creme brulee, strasse, 한국어'
    """
    text = unicodedata.normalize("NFKC", text.replace("\x00", " ")).casefold()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if _category(c) != "Mn")
    return unicodedata.normalize("NFC", text)


def read_vocabulary(path):
    """One token per line, trailing whitespace removed (as keras-hub reads it)."""
    with open(path, "r", encoding="utf-8") as file:
        return [line.rstrip() for line in file]


class WordPieceTokenizer:
    """Text -> WordPiece ids, identical to `keras_hub.models.BertTokenizer`.

    Args:
        vocabulary: list of tokens; a token's id is its line number.
        lowercase: NFKC-casefold words, as uncased BERT models (MiniLM) do.
        strip_accents: drop combining marks after NFD first (keras-hub's
            `strip_accents`). Default `None`: BERT's rule, strip whenever
            lowercasing (uncased BERT and MiniLM were trained so; Hugging
            Face's `BertNormalizer` does the same unless told otherwise).
        split_on_cjk: make every CJK ideograph its own word.
        special_tokens_in_strings: recognise `[CLS]`, `[SEP]`, `[PAD]`,
            `[MASK]` written in the text (exact case) as single tokens, as
            keras-hub's option of that name; off, they are split like words.
        suffix_indicator, oov_token: as in keras-hub.

    Example:

    >>> tokenizer = WordPieceTokenizer(
    ...     ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."])
    >>> tokenizer.tokenize("The foxes.")
    [5, 6, 7, 8]
    >>> tokenizer.pack([5, 6, 7, 8], sequence_length=4)
    [2, 5, 6, 3]
    """

    def __init__(
        self,
        vocabulary,
        lowercase=True,
        strip_accents=None,
        split_on_cjk=True,
        special_tokens_in_strings=False,
        suffix_indicator="##",
        oov_token="[UNK]",
    ):
        self.vocabulary = list(vocabulary)
        missing = [t for t in (oov_token,) + BERT_SPECIAL_TOKENS if t not in self.vocabulary]
        if missing:
            raise VocabularyError(
                f"the vocabulary ({len(self.vocabulary)} tokens) lacks the special "
                f"token(s) {', '.join(missing)}; a BERT WordPiece vocabulary needs "
                f"{', '.join((oov_token,) + BERT_SPECIAL_TOKENS)}")
        # Later duplicates win, as in keras-hub's token -> id dict.
        self.token_to_id = {token: i for i, token in enumerate(self.vocabulary)}
        self.lowercase = check_bool("lowercase", lowercase)
        strip_accents = check_bool("strip_accents", strip_accents, allow_none=True)
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.split_on_cjk = check_bool("split_on_cjk", split_on_cjk)
        special_tokens_in_strings = check_bool("special_tokens_in_strings",
                                               special_tokens_in_strings)
        self.special_tokens = BERT_SPECIAL_TOKENS if special_tokens_in_strings else ()
        self.suffix_indicator = suffix_indicator
        self.oov_token = oov_token
        self.cls_id, self.sep_id, self.pad_id, self.mask_id = (
            self.token_to_id[t] for t in BERT_SPECIAL_TOKENS)

    @classmethod
    def from_file(cls, path, **kwargs):
        """Reads a vocab.txt written by `device/convert.py` or a Hugging Face model."""
        return cls(read_vocabulary(path), **kwargs)

    def split_words(self, text):
        """Steps 1-3: the words WordPiece sees."""
        if self.strip_accents:
            text = "".join(c for c in unicodedata.normalize("NFD", text)
                           if _category(c) != "Mn")
        words, start, position = [], 0, 0
        while position < len(text):
            special = next((t for t in self.special_tokens if text.startswith(t, position)), None)
            char = text[position]
            if special is None and not (is_whitespace(char) or is_punctuation(char)
                                        or (self.split_on_cjk and is_cjk(char))):
                position += 1
                continue
            if position > start:
                words.append(text[start:position])
            delimiter = special or char
            if special or not is_whitespace(char):
                words.append(delimiter)
            position += len(delimiter)
            start = position
        if start < len(text):
            words.append(text[start:])
        if self.lowercase:
            words = [w if w in self.special_tokens else casefold(w) for w in words]
        return words

    def wordpiece(self, word):
        """Step 4: greedy longest-match-first pieces of one word."""
        if not word:
            return []
        if len(word.encode("utf-8")) > MAX_BYTES_PER_WORD:
            return [self.oov_token]
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else self.suffix_indicator + word[start:end]
                if piece in self.token_to_id:
                    break
            else:
                return [self.oov_token]
            pieces.append(piece)
            start = end
        return pieces

    def tokens(self, text):
        """The WordPiece strings of `text`, no [CLS]/[SEP]."""
        return [piece for word in self.split_words(text) for piece in self.wordpiece(word)]

    def tokenize(self, text):
        """The ids of `text`, no [CLS]/[SEP] (keras-hub's `tokenizer(text)`)."""
        return [self.token_to_id[piece] for piece in self.tokens(text)]

    def pack(self, ids, sequence_length):
        """`[CLS] ids [SEP]`, the ids cut so the whole fits `sequence_length`."""
        if isinstance(sequence_length, bool) or not isinstance(sequence_length, int):
            raise TypeError(f"`sequence_length` must be an int. "
                            f"Received: sequence_length={sequence_length!r}")
        if sequence_length < 2:
            raise ValueError(f"sequence_length must be at least 2 ([CLS] and [SEP]), got {sequence_length}")
        return [self.cls_id] + list(ids[: sequence_length - 2]) + [self.sep_id]
