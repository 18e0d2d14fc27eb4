"""English text and word-similarity pairs from gensim's bundled test data."""

import bz2
import copyreg
import functools
import importlib
import io
import pickle
import re
import zlib

import numpy as np

from keras_subembed.checks import check_choice
from keras_subembed.optional import gensim
from keras_subembed.optional import gensim_wikicorpus


def gensim_test_file(name):
    """Path of a file in gensim's bundled test data."""
    path = gensim.folder() / "test" / "test_data" / name
    if not path.exists():
        raise FileNotFoundError(f"{name} is not in gensim's test data at {path.parent}")
    return path


def _lines(name, encoding):
    text = gensim_test_file(name).read_text(encoding=encoding)
    return [line.strip() for line in text.splitlines() if line.strip()]


_LEE_FILES = {"background": "lee_background.cor", "test": "lee.cor"}


def lee_documents(subset="background"):
    """News articles of the Lee corpus (Australian Broadcasting Corporation).

    `subset="background"`: `lee_background.cor`, 300 articles of which 293
    are distinct (the 7 repeats are dropped, so that a split by document
    cannot put one text on both sides). `subset="test"`: `lee.cor`, 50 other
    articles. One article per string, in file order.
    """
    check_choice("subset", subset, _LEE_FILES)
    return list(dict.fromkeys(_lines(_LEE_FILES[subset], "latin-1")))  # lee.cor has a latin-1 "£"


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
    # gensim (already the source of this data) parses the XML dump and
    # removes the wiki markup.
    articles = []
    with bz2.open(gensim_test_file(_WIKI_FILE)) as dump:
        for title, markup, _ in gensim_wikicorpus.extract_pages(dump, filter_namespaces=("0",)):
            if (markup.lstrip().lower().startswith("#redirect")
                    or title.endswith("(disambiguation)") or title.startswith("List of")):
                continue
            paragraphs = []
            for line in gensim_wikicorpus.filter_wiki(markup).splitlines():
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
