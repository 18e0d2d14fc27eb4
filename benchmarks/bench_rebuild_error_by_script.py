"""Where a shrink's token table loses: each row's rebuild error, by the script of its piece
and over the pieces each locale's translations use.

A saved student's table (`OUTPUT/SETTING/`, what `shrink` saves before it exports) is
looked up for every id and compared with the teacher's row: the error of a row is
`|student - teacher|^2 / |teacher|^2`. Rows are grouped by the Unicode script of their
piece's first letter (Latin, Hebrew, Thai...), and weighted by the recipe's token weights
(`keras_subembed.models.token_weights` on its training text) as the codes were fitted.
Then, for each locale of the evaluation, the mean error over the pieces of its translated
messages, and the share of those pieces that the training text never holds (weight 1).

    python benchmarks/bench_rebuild_error_by_script.py \\
        frontier_runs/product-k30m256-rotated/product-k30m256-rotated
"""

import argparse
import collections
import pathlib
import unicodedata

import keras
import numpy as np
from multilingual_setup import load_teacher
from multilingual_setup import recipe_flags
from multilingual_setup import text_sets

from keras_subembed.models import load_text_embedder
from keras_subembed.models import token_weights

BATCH = 20_000


def script_of(piece):
    """The Unicode script of a piece's first letter (its name's first word), or "none"."""
    letter = next((character for character in piece if character.isalpha()), None)
    return "none" if letter is None else unicodedata.name(letter, "? ?").split()[0]


def table_rows(embedding, count):
    """Every id's row as the layer gives it, `BATCH` ids at a time."""
    return np.concatenate([
        keras.ops.convert_to_numpy(embedding(np.arange(start, min(start + BATCH, count))[None]))[0]
        for start in range(0, count, BATCH)])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preset", type=pathlib.Path, help="a shrink's saved student (OUTPUT/SETTING)")
    parser.add_argument("--scripts", type=int, default=16, help="the most common scripts shown")
    args = parser.parse_args(argv)

    teacher = load_teacher()
    student = load_text_embedder(args.preset)
    table = keras.ops.convert_to_numpy(teacher.backbone.token_embedding.embeddings)
    rows = table_rows(student.backbone.token_embedding, table.shape[0])
    error = np.sum((rows - table) ** 2, axis=1) / np.maximum(np.sum(table ** 2, axis=1), 1e-12)
    texts = text_sets(recipe_flags())
    weights = token_weights(teacher, texts.training)
    tokenizer = teacher.preprocessor.tokenizer
    vocabulary = tokenizer.get_vocabulary()
    # The table has rows no piece uses (250,037 rows for 250,002 pieces).
    scripts = np.array([script_of(piece) for piece in vocabulary]
                       + ["unused"] * (table.shape[0] - len(vocabulary)))

    print(f"{args.preset}: rebuild error over {table.shape[0]:,} rows: mean {error.mean():.3f}, "
          f"weighted {np.sum(weights * error) / np.sum(weights):.3f}")
    print("\n| script | rows | mean error | weighted error | mean weight | share of the weight |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for script, count in collections.Counter(scripts).most_common(args.scripts):
        mask = scripts == script
        print(f"| {script.lower()} | {count:,} | {error[mask].mean():.3f} | "
              f"{np.sum(weights[mask] * error[mask]) / np.sum(weights[mask]):.3f} | "
              f"{weights[mask].mean():.2f} | {weights[mask].sum() / weights.sum():.3f} |")
    print("\n| locale | pieces | mean error | pieces the training text never holds |")
    print("| --- | ---: | ---: | ---: |")
    for locale, translations in texts.translations.items():
        ids = np.concatenate([np.asarray(piece_ids) for piece_ids in tokenizer(translations)])
        print(f"| {locale} | {ids.size:,} | {error[ids].mean():.3f} | "
              f"{np.mean(weights[ids] <= 1.0):.2f} |")


if __name__ == "__main__":
    main()
