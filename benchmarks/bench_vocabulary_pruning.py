"""Fewer pieces, every language kept: multilingual-e5-small with its SentencePiece vocabulary
pruned, before any training.

A lever for the size frontier (issue #46) that the codes cannot reach: store fewer rows.
Each pruned tokenizer keeps the `N` pieces of highest score (SentencePiece's unigram
log-probability, learnt on CC-100's hundred languages, so each language loses its own rare
pieces), every single-character piece (so every script still tokenizes), and the special
tokens. A removed piece is then spelt with the kept ones, so no language is dropped; the
table keeps the teacher's rows of the kept pieces, exact (float32).

Measured with the recipe's evaluation (`LanguageEvaluation` on the held-out sentences and
Django translation pairs of `keras_subembed.recipe.TextSets.multilingual` at its
defaults). The teacher is the reference; each pruned model tokenizes the same texts itself,
so its differences are paired by message, as a shipped file's are.

    python benchmarks/bench_vocabulary_pruning.py --keep 200000 125000 64000
"""

import argparse
import json
import pathlib
import time

import keras_hub
import numpy as np

from multilingual_setup import language_evaluation
from multilingual_setup import load_teacher
from multilingual_setup import recipe_flags
from multilingual_setup import text_sets

from keras_subembed import evaluation
from keras_subembed.evaluation.tokenized_texts import TokenizedTexts
from keras_subembed.optional import sentencepiece_model_pb2

NORMAL = 1  # SentencePiece's ModelProto.SentencePiece.Type.NORMAL


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=int, nargs="+", default=[200_000, 125_000, 64_000])
    parser.add_argument("--output", type=pathlib.Path,
                        default=pathlib.Path("vocabulary_pruning.json"))
    return parser.parse_args(argv)


def pruned_tokenizer(tokenizer, keep):
    """`tokenizer` (an `XLMRobertaTokenizer`) with the first `keep` ordinary pieces (the
    model numbers them by score) and every one-character piece and special token."""
    model = sentencepiece_model_pb2.require().ModelProto()
    model.ParseFromString(tokenizer.proto)
    kept = [piece for index, piece in enumerate(model.pieces)
            if piece.type != NORMAL or index < keep
            or len(piece.piece.replace("\u2581", "")) <= 1]
    del model.pieces[:]
    model.pieces.extend(kept)
    return keras_hub.models.XLMRobertaTokenizer(proto=model.SerializeToString())


def pruned_model(teacher, keep):
    """The teacher with the pruned tokenizer and its table's rows of the kept pieces."""
    tokenizer = pruned_tokenizer(teacher.preprocessor.tokenizer, keep)
    rows = np.array([teacher.preprocessor.tokenizer.token_to_id(tokenizer.id_to_token(i))
                     for i in range(tokenizer.vocabulary_size())])
    backbone = teacher.backbone
    small = type(backbone).from_config({**backbone.get_config(), "vocabulary_size": len(rows)})
    table = backbone.token_embedding.embeddings
    for weight, copy in zip(backbone.weights, small.weights):
        copy.assign(np.asarray(weight)[rows] if weight is table else np.asarray(weight))
    preprocessor = type(teacher.preprocessor)(
        tokenizer=tokenizer, sequence_length=teacher.preprocessor.sequence_length)
    options = {key: value for key, value in teacher.get_config().items()
               if key in ("pooling_mode", "normalize")}
    return type(teacher)(backbone=small, preprocessor=preprocessor, **options), len(rows)


def pieces_per_text(preprocessor, texts):
    pieces = preprocessor.tokenizer(texts)  # ragged on TensorFlow, a list elsewhere
    pieces = pieces.to_list() if hasattr(pieces, "to_list") else pieces
    return float(np.mean([np.asarray(ids).shape[0] for ids in pieces]))


def main(argv=None):
    args = parse_args(argv)
    texts = text_sets(recipe_flags())  # the recipe's defaults
    teacher = load_teacher()
    sets = language_evaluation(texts, teacher)
    reference = sets.measure(evaluation.keras_runner(teacher))
    translated = [text for locale in sets.locales for text in sets.texts[f"translated/{locale}"]]
    rows = [{"name": "teacher", "pieces": teacher.backbone.token_embedding.embeddings.shape[0],
             "per_text": pieces_per_text(teacher.preprocessor, translated),
             **summary(reference)}]
    for keep in args.keep:
        started = time.perf_counter()
        model, pieces = pruned_model(teacher, keep)
        run = evaluation.keras_runner(model)
        scores = sets.measure(embed_texts=lambda batch: TokenizedTexts(
            batch, model.preprocessor).embed(run))
        rows.append({"name": f"top {keep:,} pieces", "pieces": pieces,
                     "per_text": pieces_per_text(model.preprocessor, translated),
                     **summary(scores)})
        print(f"{keep}: {time.perf_counter() - started:.0f} s", flush=True)
    print("\n".join(evaluation.format_table(rows, COLUMNS)))
    args.output.write_text(json.dumps(rows, indent=1))


def summary(scores):
    retrieval = scores["english_to_locale"]
    worst = min(retrieval["difference"], key=retrieval["difference"].get)
    low, high = retrieval["mean_difference_interval"]
    return {"english_to_locale": retrieval["mean_accuracy"],
            "difference": f"{100 * retrieval['mean_difference']:+.1f} "
                          f"[{100 * low:+.1f}, {100 * high:+.1f}]",
            "worst_locale": f"{worst} {100 * retrieval['difference'][worst]:+.1f}",
            "locales_5_below": sum(high < -0.05 for high in
                                   (interval[1] for interval in
                                    retrieval["difference_interval"].values()))}


COLUMNS = [("name", "vocabulary", "{}"), ("pieces", "rows", "{:,}"),
           ("per_text", "pieces per translation", "{:.2f}"),
           ("english_to_locale", "en->loc", "{:.3f}"), ("difference", "vs teacher [95%]", "{}"),
           ("worst_locale", "worst locale", "{}"),
           ("locales_5_below", "locales clearly 5+ below", "{}")]


if __name__ == "__main__":
    main()
