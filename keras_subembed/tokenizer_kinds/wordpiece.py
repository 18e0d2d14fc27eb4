"""The WordPiece kind (BERT, MiniLM): keras-hub's `WordPieceTokenizer` and `BertTokenizer`.

The runner file is the vocabulary, one token a line (`.vocab.txt`); its
fingerprint is the SHA-256 of the tokens joined by newlines. MediaPipe
carries it as a BERT tokenizer (`vocab.txt`), which lowercases every input
and keeps accents.
"""

import hashlib

# What MediaPipe's BERT tokenizer looks up by name.
MEDIAPIPE_SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[PAD]", "[UNK]")
MEDIAPIPE_VOCABULARY_FILE = "vocab.txt"


def vocabulary_text(vocabulary):
    """The `.vocab.txt` file of a vocabulary: one token a line."""
    return "".join(f"{token}\n" for token in vocabulary)


def vocabulary_fingerprint(vocabulary):
    """SHA-256 of the tokens, one a line: what a runner compares with its vocabulary."""
    return hashlib.sha256("\n".join(vocabulary).encode("utf-8")).hexdigest()


def read_vocabulary(path):
    """The tokens of a vocabulary file, as the tokenizers read them, or None."""
    try:
        with open(path, encoding="utf-8") as file:
            return [line.rstrip() for line in file]
    except (OSError, UnicodeDecodeError):
        return None


def runner_file(tokenizer):
    vocabulary = tokenizer.vocabulary
    return vocabulary_text(vocabulary).encode("utf-8") if vocabulary else None


def fingerprint(tokenizer):
    return vocabulary_fingerprint(tokenizer.vocabulary)


def file_fingerprint(path):
    tokens = read_vocabulary(path)
    return None if tokens is None else vocabulary_fingerprint(tokens)


def runner_settings(tokenizer):
    """`lowercase` and `strip_accents` as the tokenizer normalises: the runner does the same."""
    return {name: getattr(tokenizer, name) for name in ("lowercase", "strip_accents")
            if isinstance(getattr(tokenizer, name, None), bool)}


def whole_words(tokenizer):
    """ASCII lowercase whole words: every WordPiece normalisation leaves them as they are."""
    return [t for t in tokenizer.vocabulary
            if t.isascii() and t.isalpha() and t.islower() and len(t) > 1]


def mediapipe_file(tokenizer):
    """MediaPipe's `vocab.txt`, once the vocabulary has the tokens MediaPipe looks up."""
    vocabulary = list(tokenizer.vocabulary or ())
    missing = [t for t in MEDIAPIPE_SPECIAL_TOKENS if t not in vocabulary]
    if missing:
        raise ValueError(
            f"MediaPipe's BERT tokenizer needs the tokens {missing} in the vocabulary; "
            f"this tokenizer's vocabulary ({len(vocabulary)} tokens) lacks them.")
    return MEDIAPIPE_VOCABULARY_FILE, vocabulary_text(vocabulary).encode("utf-8")


def mediapipe_normalization(tokenizer):
    """A cased model is refused (MediaPipe lowercases every input); stripped accents warned of."""
    if not tokenizer.lowercase:
        raise ValueError(
            "This model's tokenizer keeps case (lowercase=False), but MediaPipe's BERT "
            "tokenizer lowercases every input, so the file would embed other ids than the "
            "model was trained on. Export it with export_tflite and tokenize in the app."
        )
    if getattr(tokenizer, "strip_accents", False):
        return (
            "This model's tokenizer strips accents (\"café\" -> \"cafe\") and MediaPipe's BERT "
            "tokenizer does not: on the phone accented words get other ids (often [UNK] or "
            "several pieces) and their sentences other vectors. Text without accents is "
            "embedded as in Keras. Fold the text in the app before calling embed(): "
            "NFKC, case folding, NFD, drop the combining marks, then NFC (NFC last keeps "
            "Hangul syllables whole; `fold_for_uncased_bert` in the repository's "
            "device/wordpiece_tokenizer.py) to get the model's ids."
        )
    return None
