"""Run an exported masked-LM .tflite as an app would: LiteRT and NumPy only.

No TensorFlow, no Keras: tokenizes the sentence with the WordPiece vocabulary
written beside the model by `export/convert.py`, runs the `serving_default`
signature, prints the top predictions for each [MASK] and the latency.

    python export/run_tflite.py mlm.tflite "the police said the [MASK] was closed ."
    python export/run_tflite.py mlm.tflite "..." --vocabulary mlm.vocab.txt --top-k 5
"""

import argparse
import pathlib
import statistics
import sys
import time
import unicodedata

import numpy as np
from ai_edge_litert.interpreter import Interpreter

SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")


def split_words(text, lowercase=True):
    """BERT's basic tokenization: whitespace, punctuation, accents stripped."""
    words, current = [], []
    for piece in text.split():
        if piece in SPECIAL_TOKENS:
            words.append(piece)
            continue
        if lowercase:
            piece = "".join(c for c in unicodedata.normalize("NFD", piece.lower())
                            if unicodedata.category(c) != "Mn")
        for char in piece:
            if unicodedata.category(char).startswith("P") or (33 <= ord(char) <= 47):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
            current = []
    return words


def wordpiece(word, index, max_chars=100):
    """Greedy longest-match-first WordPiece ids of one word."""
    if word in index:
        return [index[word]]
    if len(word) > max_chars:
        return [index["[UNK]"]]
    ids, start = [], 0
    while start < len(word):
        end, match = len(word), None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in index:
                match = index[piece]
                break
            end -= 1
        if match is None:
            return [index["[UNK]"]]
        ids.append(match)
        start = end
    return ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="the .tflite file")
    parser.add_argument("text", help="a sentence with one or more [MASK] tokens")
    parser.add_argument("--vocabulary", help="vocab.txt (default: <model>.vocab.txt)")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=20, help="timed runs for the latency")
    args = parser.parse_args()

    vocabulary_path = pathlib.Path(args.vocabulary or pathlib.Path(args.model).with_suffix(".vocab.txt"))
    if not vocabulary_path.is_file():
        sys.exit(f"error: no vocabulary at {vocabulary_path} (pass --vocabulary)")
    vocabulary = vocabulary_path.read_text(encoding="utf-8").splitlines()
    index = {token: i for i, token in enumerate(vocabulary)}
    ids = [index["[CLS]"]]
    for word in split_words(args.text):
        ids += wordpiece(word, index)
    ids.append(index["[SEP]"])
    positions = [i for i, token in enumerate(ids) if token == index["[MASK]"]]
    if not positions:
        sys.exit("error: the text has no [MASK] token")

    interpreter = Interpreter(model_path=args.model, num_threads=args.threads)
    runner = interpreter.get_signature_runner("serving_default")
    inputs = {
        "token_ids": np.array([ids], dtype=np.int32),
        "padding_mask": np.ones((1, len(ids)), dtype=np.int32),
        "mask_positions": np.array([positions], dtype=np.int32),
    }
    logits = runner(**inputs)["outputs"][0]
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        runner(**inputs)
        times.append((time.perf_counter() - start) * 1000)

    print(f"tokens: {' '.join(vocabulary[i] for i in ids)}")
    for position, scores in zip(positions, logits):
        top = np.argsort(scores)[::-1][: args.top_k]
        probabilities = np.exp(scores - scores.max())
        probabilities /= probabilities.sum()
        guesses = ", ".join(f"{vocabulary[t]} ({probabilities[t]:.2f})" for t in top)
        print(f"[MASK] at {position}: {guesses}")
    print(f"latency: median {statistics.median(times):.2f} ms over {args.runs} runs "
          f"({len(ids)} tokens, {args.threads} thread(s))")


if __name__ == "__main__":
    main()
