"""Documents into sentences, and training / held-out splits that never share a document."""

import re

import numpy as np

from keras_subembed.checks import check_open_probability
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed

_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st mt jr sr vs etc e.g i.e u.s u.k u.n a.m p.m inc ltd co "
    "corp gen sen rep gov lt col sgt capt no jan feb mar apr jun jul aug sep "
    "sept oct nov dec".split()
)


def _ends_sentence(text, start, boundary):
    if text[boundary.start() - 1] == " ":
        return True  # tokenized text ("... anyone .  lucas was ..."): always
    following = text[boundary.end():boundary.end() + 1]
    if following.islower():
        return False
    word = text[start:boundary.start()].rsplit(" ", 1)[-1]
    is_initial = len(word) == 1 and word.isupper()  # "George W. Bush"
    return not (is_initial or word.lower() in _ABBREVIATIONS)


def split_sentences(text):
    """Splits `text` into sentences, deterministically, by rules.

    A sentence ends at ".", "!" or "?" (and closing quotes or brackets)
    followed by white space, unless the next word starts lower-case or the
    word before is an abbreviation ("Mr.", "U.S.") or an initial. In
    tokenized text, where punctuation stands apart ("it ended ."), every
    such mark ends a sentence. White space is collapsed to single spaces;
    fragments without a letter or digit join the sentence before.

    >>> split_sentences('Mr. Smith went to Washington. "Why?" he asked.')
    ['Mr. Smith went to Washington.', '"Why?" he asked.']
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string. Received: text={text!r}")
    text = " ".join(text.split()) + " "
    pieces, start = [], 0
    for boundary in _SENTENCE_END.finditer(text):
        if _ends_sentence(text, start, boundary):
            pieces.append(text[start:boundary.end()].strip())
            start = boundary.end()
    pieces.append(text[start:].strip())
    result = []
    for piece in pieces:
        if not any(character.isalnum() for character in piece):
            if result and piece:
                result[-1] = f"{result[-1]} {piece}"
            continue
        result.append(piece)
    return result


def _check_documents(documents):
    if isinstance(documents, str) or not all(isinstance(d, str) for d in documents):
        raise TypeError(
            "`documents` must be a list of strings. "
            f"Received: documents={str(documents)[:80]!r}"
        )


def sentences(documents, min_words=3, max_words=None):
    """All sentences of `documents`, in order, that have `min_words` to
    `max_words` words (`None`: no upper limit). Shorter and longer sentences
    are dropped, not cut.

    >>> sentences(["One two three. Four.", "Five six seven eight!"], min_words=3)
    ['One two three.', 'Five six seven eight!']
    """
    _check_documents(documents)
    min_words = check_positive_int("min_words", min_words)
    if max_words is not None:
        max_words = check_positive_int("max_words", max_words)
    if min_words < 1 or (max_words is not None and max_words < min_words):
        raise ValueError(
            "`min_words` must be at least 1 and `max_words` None or at least "
            f"`min_words`. Received: min_words={min_words}, max_words={max_words}"
        )
    kept = []
    for document in documents:
        for sentence in split_sentences(document):
            words = len(sentence.split())
            if words >= min_words and (max_words is None or words <= max_words):
                kept.append(sentence)
    return kept


def _near_duplicate_groups(documents, shared_sentence_words):
    """Lists of indices of `documents` linked by a shared long sentence."""
    parent = list(range(len(documents)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    if shared_sentence_words is not None:
        first_owner = {}
        for i, document in enumerate(documents):
            for sentence in sentences([document], min_words=shared_sentence_words):
                j = first_owner.setdefault(sentence, i)
                parent[root(i)] = root(j)
    groups = {}
    for i in range(len(documents)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def split_by_document(documents, held_out_fraction=0.2, seed=0, shared_sentence_words=8):
    """Splits `documents` into `(training, held_out)` lists of documents.

    About `held_out_fraction` of the distinct documents (at least one, never
    all) are held out, drawn at random with `seed`. Documents that are one
    text in two versions stay on one side: copies, and documents sharing a
    sentence of at least `shared_sentence_words` words (`None`: copies only;
    the Lee corpus has such near-copies of a story). So sentences from the
    two sides never come from the same document. Both lists keep the input
    order; the same `seed` gives the same split.

    >>> training, held_out = split_by_document(["a", "b", "c", "d"], 0.25)
    >>> len(training), len(held_out)
    (3, 1)
    """
    _check_documents(documents)
    seed = check_seed(seed)
    if shared_sentence_words is not None:
        shared_sentence_words = check_positive_int("shared_sentence_words",
                                                   shared_sentence_words)
    held_out_fraction = check_open_probability("held_out_fraction", held_out_fraction)
    if shared_sentence_words is not None and shared_sentence_words < 1:
        raise ValueError(
            "`shared_sentence_words` must be None or at least 1. "
            f"Received: shared_sentence_words={shared_sentence_words}"
        )
    distinct = list(dict.fromkeys(documents))  # the first of each, in order
    groups = _near_duplicate_groups(distinct, shared_sentence_words)
    if len(groups) < 2:
        raise ValueError(
            "`documents` must hold at least 2 distinct (not near-copy) documents "
            f"to split. Received: {len(groups)} of {len(documents)} documents"
        )
    wanted = max(1, round(held_out_fraction * len(distinct)))
    held_out_texts = set()
    for position, group in enumerate(np.random.default_rng(seed).permutation(len(groups))):
        if len(held_out_texts) >= wanted or position == len(groups) - 1:
            break
        held_out_texts.update(distinct[i] for i in groups[group])
    training = [d for d in documents if d not in held_out_texts]
    held_out = [d for d in documents if d in held_out_texts]
    return training, held_out


# ------------------------------------------------------ word similarity
