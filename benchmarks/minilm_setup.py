"""What the all-MiniLM-L6-v2 benchmarks share, all from the package: the teacher at the
evaluation's length, gensim's text split as the English job splits it, and the settings
they compare (some of which the recipe does not offer).

Benchmarks import this module as `minilm_setup` (it sits beside them: running
`python benchmarks/X.py` puts `benchmarks/` first on the path).
"""

import pathlib

import numpy as np

from keras_subembed import datasets
from keras_subembed import evaluation
from keras_subembed.datasets.training_pairs import sample
from keras_subembed.models import load_text_embedder

RESERVED_IDS = [0, 100, 101, 102, 103]  # [PAD] [UNK] [CLS] [SEP] [MASK]
EVAL_SEQUENCE_LENGTH = 128  # most sentences; half the work of the model's 256


def _sub(assignment, num_tables, rows_per_table, **extra):
    return ("sub", {"assignment": assignment, "num_tables": num_tables,
                    "rows_per_table": rows_per_table, **extra, "reserved_ids": RESERVED_IDS})


# `keras_subembed.compress` settings for MiniLM's 30,522-token table (x smaller). The
# clustered codes (the paper's Algorithm 2) and DeFINE are compared here, not shipped.
SETTINGS = {
    "product-k32m256": _sub("product", 32, 256, row_scales=True),  # 33x
    "product-k16m256": _sub("product", 16, 256),  # 53x
    "product-k8m16": _sub("product", 8, 16),  # 320x, packed codes
    "product-k3m34": _sub("product", 3, 34),  # 326x
    "sub-k2m768": _sub("clustered", 2, 768),  # 36x
    "sub-k2m512": _sub("clustered", 2, 512),  # 53x
    "sub-k3m100": _sub("clustered", 3, 100),  # 191x
    "sub-k3m34": _sub("clustered", 3, 34),  # 326x
    # DeFINE (map 96 -> 384 -> 384) over a clustered 2 x 512 SubEmbedding map
    "define-sub": ("define", {"map_dim": 96, "expand_dim": 384, "depth": 2, "max_groups": 2,
                              "map_layer": {"num_tables": 2, "rows_per_table": 512,
                                            "reserved_ids": RESERVED_IDS}}),
}


def load_teacher():
    """all-MiniLM-L6-v2 as a keras-hub `TextEmbedder` reading `EVAL_SEQUENCE_LENGTH` tokens."""
    teacher = load_text_embedder(datasets.minilm_preset_dir())
    teacher.preprocessor.sequence_length = EVAL_SEQUENCE_LENGTH
    return teacher


def load_data(seed=0, corpus=None, count=300):
    """gensim's text as the English job splits it: `training` sentences (Wikipedia articles
    and the Lee news articles not held out, or `corpus`, a file of one document a line),
    `count` held-out sentences `in_domain` (Lee) and `out_of_domain` (movie reviews and
    newsgroup test posts), the `polarity` sentences and the newsgroup `topics` split
    `(train_posts, train_topics, test_posts, test_topics)`."""
    lee = dict(zip(("train", "held_out"), datasets.split_by_document(
        datasets.lee_documents(), held_out_fraction=0.2, seed=seed)))
    posts, labels, _ = datasets.newsgroup_posts()
    topics = evaluation.stratified_split(posts, labels, test_fraction=0.3, seed=seed)
    documents = (pathlib.Path(corpus).read_text(encoding="utf-8").splitlines() if corpus
                 else datasets.wikipedia_articles() + lee["train"])
    rng = np.random.default_rng(seed)
    reviews = datasets.sentences(datasets.movie_reviews(), min_words=4)
    return {"training": datasets.sentences(documents, min_words=4),
            "in_domain": sample(datasets.sentences(lee["held_out"], min_words=4), count, rng),
            "out_of_domain": sample(reviews + datasets.sentences(topics[2], min_words=4), count,
                                    rng),
            "polarity": datasets.polarity_sentences(),
            "topics": topics}
