"""Writes the `.keras` files of `tests/models/test_legacy_files.py` (run once).

These files are what keras_subembed 0.2.0 (commit f0ab34d, before issue #18
made the RoBERTa classes thin and retired `SentenceEncoder`) wrote; the tests
check that every later release still loads them with the same outputs. Do not
rerun this script with a later release: the point is the old format. It was
run as

    KERAS_BACKEND=tensorflow PYTHONPATH=. python tests/data/legacy/make_legacy_files.py

Beside each `NAME.keras` it writes `NAME.npz`: the reference inputs and the
outputs the model gave when saved. Everything is tiny (vocabularies of ~80
tokens, width 16, one or two layers) so each file stays well under 300 KB.
"""

import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402

from keras_subembed.models import CompressedRobertaBackbone  # noqa: E402
from keras_subembed.models import CompressedRobertaMaskedLM  # noqa: E402
from keras_subembed.models import CompressedRobertaMaskedLMPreprocessor  # noqa: E402
from keras_subembed.models import SentenceEncoder  # noqa: E402
from keras_subembed.models import SentenceEncoderPreprocessor  # noqa: E402
from keras_subembed.models import compress_backbone  # noqa: E402

HERE = pathlib.Path(__file__).parent
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "the of to and in is was for on that with by it as at from he his said "
    "year new one two people news game team police government market world"
).split()
VOCABULARY = SPECIAL + WORDS + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + list(
    "abcdefghijklmnopqrstuvwxyz.,"
)
SENTENCES = [
    "the police said the government was in the news",
    "the team won one game in the new year",
    "he said his people were at the market",
]
SEQUENCE_LENGTH = 12


def random_ids(vocabulary_size, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, vocabulary_size, size=(3, SEQUENCE_LENGTH)).astype("int32")
    mask = np.ones_like(ids)
    mask[1, 8:] = 0  # one padded row: padding must keep working after loading
    ids[1, 8:] = 0
    return ids, mask


def outputs_dict(outputs):
    if isinstance(outputs, dict):
        return {f"out_{k}": keras.ops.convert_to_numpy(v) for k, v in outputs.items()}
    return {"out": keras.ops.convert_to_numpy(outputs)}


def write(name, model, inputs, **extra):
    path = HERE / f"{name}.keras"
    model.save(path)
    outputs = outputs_dict(model(inputs, training=False))
    np.savez(HERE / f"{name}.npz", **{f"in_{k}": v for k, v in inputs.items()}, **outputs, **extra)
    print(f"{path.name}: {path.stat().st_size / 1024:.0f} KB")


def tiny_bert():
    return keras_hub.models.BertBackbone(
        vocabulary_size=len(VOCABULARY),
        num_layers=1,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=32,
    )


def main():
    keras.utils.set_random_seed(0)
    vocabulary_size = len(VOCABULARY)
    ids, mask = random_ids(vocabulary_size, seed=0)

    # 1. CompressedRobertaBackbone, "sub", with the ALBERT-style projection
    #    (embedding width 8 < hidden 16), two layers.
    backbone = CompressedRobertaBackbone(
        vocabulary_size,
        num_layers=2,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=32,
        embedding="sub",
        embedding_kwargs=dict(num_tables=2, output_dim=8, reserved_ids=[0, 1, 2, 3, 4], seed=0),
    )
    write("compressed_roberta_backbone", backbone, {"token_ids": ids, "padding_mask": mask})

    # 2. CompressedRobertaMaskedLM with its preprocessor ("sub", no projection).
    preprocessor = CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
        VOCABULARY, sequence_length=SEQUENCE_LENGTH, mask_selection_length=4
    )
    masked_backbone = CompressedRobertaBackbone(
        vocabulary_size,
        num_layers=1,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=32,
        embedding="sub",
        embedding_kwargs=dict(num_tables=2, reserved_ids=[0, 1, 2, 3, 4], seed=0),
    )
    masked_lm = CompressedRobertaMaskedLM(masked_backbone, preprocessor)
    mask_positions = np.array([[1, 2, 3, 4], [0, 2, 5, 7], [3, 4, 9, 11]], "int32")
    x, _, _ = preprocessor(SENTENCES)
    write(
        "compressed_roberta_masked_lm",
        masked_lm,
        {"token_ids": ids, "padding_mask": mask, "mask_positions": mask_positions},
        # Deterministic parts of preprocessing: the unmasked token ids
        # (tokenizer + packer) and the padding mask of SENTENCES.
        sentences=np.array(SENTENCES),
        unmasked_ids=np.asarray(
            keras.ops.convert_to_numpy(preprocessor.packer(preprocessor.tokenizer(SENTENCES))[0])
        ),
        padding_mask=keras.ops.convert_to_numpy(x["padding_mask"]),
    )

    # 3. SentenceEncoder over a tiny BertBackbone, with a WordPiece preprocessor.
    encoder = SentenceEncoder(
        tiny_bert(),
        SentenceEncoderPreprocessor(
            keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=True),
            sequence_length=SEQUENCE_LENGTH,
        ),
        pooling="mean",
    )
    write(
        "sentence_encoder",
        encoder,
        {"token_ids": ids, "padding_mask": mask},
        sentences=np.array(SENTENCES),
        sentence_embeddings=encoder.predict(SENTENCES, verbose=0)["embedding"],
    )

    # 4. CompressedBackbone: compress_backbone of a tiny BertBackbone, "sub".
    compressed = compress_backbone(
        tiny_bert(), "sub", {"num_tables": 2, "rows_per_table": 16, "seed": 0}
    )
    write(
        "compressed_backbone",
        compressed,
        {"token_ids": ids, "padding_mask": mask, "segment_ids": np.zeros_like(ids)},
    )


if __name__ == "__main__":
    main()
