""".tflite sizes and latency: dense vs compressed token embeddings, float32 and dynamic-range.

Two masked-LM encoders (untrained weights: sizes and speed do not depend on
training): the main job's (V = 30,522, hidden 256, 4 layers) and a
RoBERTa-medium-sized one (V = 50,265, hidden 512, 8 layers, as in the
papers). Each row is one `export(..., format="tflite")` call, in its
own subprocess (the TF 2.21 converter leaks memory per call): builtins-only
conversion, verification against Keras, file and embedding bytes, median
latency of one 128-token sequence (batch 1, 1 thread, LiteRT).

    python benchmarks/bench_export.py [--quick] [--json out.json]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

MODELS = {
    "mlm-small": dict(vocabulary_size=30_522, num_layers=4, num_heads=4, hidden_dim=256,
                      intermediate_dim=512),
    "roberta-medium": dict(vocabulary_size=50_265, num_layers=8, num_heads=8, hidden_dim=512,
                           intermediate_dim=2048),
}
RESERVED = [0, 1, 2, 3, 4]
EMBEDDINGS = {
    "embedding": ("embedding", {}),
    "sub digits K=3": ("sub", dict(num_tables=3, reserved_ids=RESERVED)),
    "sub random K=3 M=100": ("sub", dict(num_tables=3, rows_per_table=100, assignment="random",
                                          seed=0, reserved_ids=RESERVED)),
    "alone": ("alone", dict(seed=0)),
    "define": ("define", dict(map_dim=64, expand_dim=512, depth=3)),
}
# (model, embedding, quantization, embedding_mode)
ROWS = (
    [("mlm-small", name, q, "compressed") for name in EMBEDDINGS for q in (None, "dynamic")]
    + [("mlm-small", name, None, "frozen") for name in ("alone", "define")]
    + [("roberta-medium", name, q, "compressed")
       for name in ("embedding", "sub digits K=3", "sub random K=3 M=100") for q in (None, "dynamic")]
)


def child(model_name, embedding_name, quantization, mode, path):
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import keras

    from keras_subembed.export import export
    from keras_subembed.models import CompressedRobertaBackbone
    from keras_subembed.models import CompressedRobertaMaskedLM

    keras.utils.set_random_seed(0)
    kind, kwargs = EMBEDDINGS[embedding_name]
    backbone = CompressedRobertaBackbone(**MODELS[model_name], max_sequence_length=128,
                                         embedding=kind, embedding_kwargs=kwargs)
    report = export(CompressedRobertaMaskedLM(backbone), path, format="tflite",
                    quantization=None if quantization == "None" else quantization,
                    embedding_mode=mode, overwrite=True, latency_runs=20)
    print("REPORT " + report.to_json())


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(*sys.argv[2:7])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the small model, float32")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    rows = [r for r in ROWS if not args.quick or (r[0] == "mlm-small" and r[2] is None)]
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model_name, embedding_name, quantization, mode in rows:
            path = os.path.join(tmp, "model.tflite")
            command = [sys.executable, __file__, "--child", model_name, embedding_name,
                       str(quantization), mode, path]
            done = subprocess.run(command, capture_output=True, text=True)
            line = next((l for l in done.stdout.splitlines() if l.startswith("REPORT ")), None)
            if line is None:
                print(f"  {model_name} {embedding_name}: FAILED\n{done.stderr[-2000:]}", flush=True)
                continue
            report = json.loads(line[len("REPORT "):])
            report.update(model=model_name, embedding=embedding_name)
            results.append(report)
            print(f"  {model_name:<15} {embedding_name:<21} {report['quantization']:<8} "
                  f"{mode:<10} {report['file_bytes'] / 2**20:8.2f} MiB  embedding "
                  f"{report['embedding_share']:6.2%}  {report['latency_ms']:7.2f} ms  "
                  f"err {report['max_abs_error']:.2g}", flush=True)
    print()
    print("| model | embedding | quantization | embedding mode | file MiB | embedding bytes "
          "| embedding share | latency ms | latency vs dense | max abs error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for report in results:
        baseline = next(r for r in results if r["model"] == report["model"]
                        and r["embedding"] == "embedding" and r["quantization"] == report["quantization"])
        print(f"| {report['model']} | {report['embedding']} | {report['quantization']} "
              f"| {report['embedding_mode']} | {report['file_bytes'] / 2**20:.2f} "
              f"| {report['embedding_bytes']:,} | {report['embedding_share']:.2%} "
              f"| {report['latency_ms']:.2f} | {report['latency_ms'] / baseline['latency_ms']:.2f}x "
              f"| {report['max_abs_error']:.2g} |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
