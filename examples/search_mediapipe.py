"""Semantic search with a MediaPipe file: MediaPipe Tasks and NumPy only, no tokenizer code.

The file (written by `keras_subembed.export.export(..., format="mediapipe")`) carries its
vocabulary and tokenizer settings; MediaPipe's `TextEmbedder` reads them and
embeds raw strings, as it does on Android, iOS and the web.

    python examples/search_mediapipe.py minilm.mediapipe.tflite --corpus lines.txt "a query" [--top 5]
"""

import argparse
import pathlib
import sys

import numpy as np

# The app-side recipe lives with the device tokenizer (standard library only).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "device"))
from wordpiece_tokenizer import fold_for_uncased_bert  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a .tflite file with MediaPipe metadata")
    parser.add_argument("query", nargs="+", help="one or more queries")
    parser.add_argument("--corpus", required=True, help="a text file, one document per line")
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--strip-accents", action="store_true",
                        help="fold case and strip accents before embedding, as the model's "
                             "tokenizer does (uncased models trained on stripped text, e.g. "
                             "all-MiniLM-L6-v2: MediaPipe's tokenizer keeps accents)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    from mediapipe.tasks.python.core.base_options import BaseOptions
    from mediapipe.tasks.python.text import text_embedder

    lines = [line.strip() for line in pathlib.Path(args.corpus).read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        sys.exit(f"{args.corpus} has no non-empty lines")
    options = text_embedder.TextEmbedderOptions(
        base_options=BaseOptions(model_asset_path=args.model), l2_normalize=True)
    prepare = fold_for_uncased_bert if args.strip_accents else (lambda text: text)
    with text_embedder.TextEmbedder.create_from_options(options) as task:
        def embed(text):
            return np.asarray(task.embed(prepare(text)).embeddings[0].embedding, "float32")

        corpus = np.stack([embed(line) for line in lines])
        for query in args.query:
            scores = corpus @ embed(query)
            print(f"\n{query}")
            for index in np.argsort(-scores)[:args.top]:
                print(f"  {scores[index]:.3f}  {lines[index][:100]}")


if __name__ == "__main__":
    main()
