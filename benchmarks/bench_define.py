"""DeFINE: the paper's ablation on the masked-LM task, and its size and lookup speed.

Ablation (small scale): the same encoder as `examples/train_mlm.py` (smaller
by default: 2 layers, hidden 128) trained for the same steps with
  * the dense embedding (reference),
  * DeFINE with a linear expansion (groups 1, no mixer),
  * GLT (fixed groups in every layer, no mixer),
  * HGT (groups halving, no mixer),
  * HGT + split/mix (full DeFINE),
  * full DeFINE whose map is a SubEmbedding (digit codes, K=3),
each with map 64 -> expand 512 -> hidden, 3 layers, g_max 4; reports held-out
MLM loss at equal steps. Lookup speed: `bench_lookup.py --layers Embedding
DeFINE` (same timing code).

    python benchmarks/bench_define.py [--steps 100] [--json out.json]
"""

import argparse
import importlib.util
import json
import pathlib
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("train_mlm", ROOT / "examples" / "train_mlm.py")
train_mlm = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(train_mlm)

from keras_subembed.layers import SubEmbedding  # noqa: E402

SHARED = dict(map_dim=64, expand_dim=512, depth=3, max_groups=4)


def variants(vocabulary_size, reserved):
    sub_map = SubEmbedding(vocabulary_size, 64, num_tables=3, reserved_ids=reserved, name="define_map")
    return {
        "embedding": ("embedding", {}),
        "linear (g=1)": ("define", {**SHARED, "max_groups": 1, "mixer": False}),
        "GLT (fixed g=4)": ("define", {**SHARED, "group_schedule": "fixed", "mixer": False}),
        "HGT": ("define", {**SHARED, "mixer": False}),
        "HGT + mixer (DeFINE)": ("define", SHARED),
        "DeFINE over SubEmbedding": ("define", {**SHARED, "map_dim": None, "map_layer": sub_map}),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--json", help="write the rows here")
    known, rest = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as tmp:
        args = train_mlm.parse_args([
            "--steps", str(known.steps), "--eval-every", str(max(known.steps // 4, 1)),
            "--num-layers", "2", "--hidden-dim", "128", "--num-heads", "4",
            "--intermediate-dim", "256", "--output-dir", tmp, *rest])
        preprocessor, train_dataset, heldout, (vocabulary, _), reserved = train_mlm.prepare_data(args)
        results = []
        for name, (kind, kwargs) in variants(len(vocabulary), reserved).items():
            kwargs = {k: v for k, v in kwargs.items() if v is not None}
            safe_name = name.replace(" ", "_").replace("(", "").replace(")", "").replace("=", "")
            result = train_mlm.train_one(safe_name, (kind, kwargs), preprocessor, train_dataset,
                                         heldout, args)
            result["embedding"] = name
            results.append(result)
    train_mlm.print_table(results, heldout, args)
    if known.json:
        pathlib.Path(known.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
