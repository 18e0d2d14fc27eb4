"""Comparable prose in 38 languages, from the `dataset-build` package's data files.

`dataset-build` ships about 30,000 words per language on the same ten
subjects (`dataset_build/data/<iso639-3>/*.txt`), written for llama.cpp's
importance matrices. Its files are read in place: the package's own
`__init__` is never imported (it needs `transformers`).
"""

import re

from keras_subembed.checks import check_open_probability
from keras_subembed.datasets.sentence_split import split_by_document
from keras_subembed.optional import dataset_build

# Folders of dataset-build's data that are not a human language.
_NOT_LANGUAGES = ("coding", "test")
# Sentence ends: ". ! ?" before white space (as `split_sentences`), and the
# full stops of scripts that write no space after them (CJK, Devanagari, Arabic).
_SENTENCE_END = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]»”]))\s+|(?<=[。！？।॥؟])\s*")
_LONG_LINE = 80
_MARKUP = re.compile(r"^\s*(?:#+|[-*_]{3,}\s*$|[*\-•]\s+|\d+[.)]\s+)|\*\*|__")


def _data_dir():
    return dataset_build.folder() / "data"


def multilingual_languages():
    """The 38 languages of dataset-build's prose, as ISO 639-3 codes, sorted.

    Example:

    >>> multilingual_languages()[:4]
    ['ara', 'ben', 'bul', 'ces']
    """
    return sorted(folder.name for folder in _data_dir().iterdir()
                  if folder.is_dir() and folder.name not in _NOT_LANGUAGES)


def multilingual_documents(language):
    """`language`'s paragraphs (its documents), in file order, markup removed.

    Each file's first paragraph is the generator's reply ("Of course. Here
    is 30,000 words...") and is dropped, as are headings (short lines
    without a sentence end) and lines without a letter.

    Example:

    >>> documents = multilingual_documents("fra")
    """
    languages = multilingual_languages()
    if language not in languages:
        raise ValueError(f"`language` must be one of dataset-build's languages "
                         f"{languages}. Received: language={language!r}")
    documents = []
    for path in sorted((_data_dir() / language).glob("*.txt")):
        paragraphs = path.read_text(encoding="utf-8").splitlines()[1:]
        for paragraph in paragraphs:
            paragraph = " ".join(_MARKUP.sub("", paragraph).split())
            # Headings end without a full stop; Thai writes none, so a long line counts.
            is_prose = _SENTENCE_END.search(paragraph + " ") or len(paragraph) >= _LONG_LINE
            if is_prose and any(character.isalpha() for character in paragraph):
                documents.append(paragraph)
    return documents


def split_multilingual_sentences(text):
    """`text`'s sentences: ". ! ?" before white space, or a CJK, Devanagari or
    Arabic full stop.

    >>> split_multilingual_sentences("Bonjour. Ça va ? 你好。再见。")
    ['Bonjour.', 'Ça va ?', '你好。', '再见。']
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string. Received: text={text!r}")
    return [piece.strip() for piece in _SENTENCE_END.split(text) if piece and piece.strip()]


_SUBSETS = ("train", "held_out", "all")


def multilingual_sentences(language, subset="train", held_out_fraction=0.2, seed=0,
                           min_characters=12):
    """`language`'s sentences of at least `min_characters` characters.

    `subset` "train" and "held_out" split the paragraphs by document
    (`split_by_document`: deterministic for a `seed`), so no held-out
    sentence shares a paragraph with a training one; "all" is both.

    Example:

    >>> training = multilingual_sentences("deu")
    >>> held_out = multilingual_sentences("deu", "held_out")
    """
    if subset not in _SUBSETS:
        raise ValueError(f"`subset` must be one of {list(_SUBSETS)}. "
                         f"Received: subset={subset!r}")
    if isinstance(min_characters, bool) or not isinstance(min_characters, int) or (
            min_characters < 1):
        raise ValueError(f"`min_characters` must be a positive int. "
                         f"Received: min_characters={min_characters!r}")
    held_out_fraction = check_open_probability("held_out_fraction", held_out_fraction)
    documents = multilingual_documents(language)
    if subset != "all":
        training, held_out = split_by_document(documents, held_out_fraction, seed)
        documents = training if subset == "train" else held_out
    return [sentence for document in documents
            for sentence in split_multilingual_sentences(document)
            if len(sentence) >= min_characters]
