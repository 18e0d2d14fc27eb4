"""Lookup and tied-logit speed: compressed layers vs keras.layers.Embedding.

Layer names: "Embedding", "SubEmbedding K=<k> [random] [concatenated]", "ALONE
<binary|real> [stored]" (ffn_dim = 2 x width), "DeFINE" (map 64 -> expand 1024, 4
layers). "concatenated" forces the concatenation of the K gathered sub-vectors,
where the layer itself sums them zero-padded when JAX compiles for a GPU
(`gather_layout.side_by_side`), to time the two layouts on a GPU.

Lookup: token ids of shape (batch, sequence) -> vectors, for each vocabulary
size, timing
  * forward: the lookup alone;
  * train step: forward, backward and an SGD update of the embedding weights
    (SGD, so the dense table gets the cheapest possible sparse update); the
    loss is the mean square of the vectors, or with `--consumer dense` of the
    vectors times a fixed d x d matrix, as when a model's first layer reads
    them (the compiler must then store the vectors: it cannot fuse the lookup
    into the loss's reduction);
each with and without XLA (`jit_compile=True`; with `--backend jax`, only
`jax.jit`, and the train step is `jax.value_and_grad` over Keras'
`stateless_call` plus the optimizer's `stateless_apply`). Tokens/s are medians of
`--repeats` timed runs (each `--steps` calls, after a warm-up), and the ratio
column divides by the Embedding row measured in the same run.

Tied logits: `hidden @ E.T` for `--positions` hidden states against the
V=50,265 table vs `SubEmbedding(..., reverse=True)` (`--logit-variants`; a
variant "... along-rows" or "... along-columns" computes the stored-code
logits in that layout from the layer's public sub-tables and codes (given
unpacked, as int32: compare the two forced layouts with each other, not with
the layer, which unpacks its stored codes), where the layer picks one itself:
columns under XLA and on GPUs, rows elsewhere; "SubEmbedding K=32 M=256" uses
random stored codes that repeat, as product codes do); each variant runs in its
own subprocess, where a thread samples the resident memory: the peak growth
over the process's memory after a warm-up call is reported.

With `--backend jax` every row also records XLA's compiled temporary memory
(`jax.jit(f).lower(...).compile().memory_analysis().temp_size_in_bytes`).
TensorFlow is imported with the package (it requires it on every backend) but
runs nothing there.
`--temp-only` compiles each function and records its temp memory without
timing it (batches too large to run on a small CPU). `--gpu-target SPEC.txtpb`
(with `--temp-only`) compiles for the CUDA GPU that XLA GpuTargetConfig
textproto describes, without a GPU ("deviceless" ahead-of-time compilation:
needs the `jax-cuda12-plugin` and `jax-cuda12-pjrt` wheels of the installed
jaxlib, no CUDA driver), so the temp memory is the GPU compiler's. For tied
logits (`--logit-dtype float32|bfloat16`, the latter the mixed_bfloat16
policy) JAX rows also record XLA's HLO cost model of the compiled program
(flops, bytes accessed): with `--gpu-target` that and the temp memory are all
there is, since nothing runs.

    python benchmarks/bench_lookup.py [--backend jax] [--quick] [--temp-only]
        [--gpu-target benchmarks/gpu_specs/h100_sxm.txtpb] [--output results.json]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from backend_choice import add_backend_argument
from backend_choice import select_backend

BACKEND = select_backend()

import keras  # noqa: E402
import numpy as np  # noqa: E402

if BACKEND == "tensorflow":
    import tensorflow as tf

from keras_subembed import layers  # noqa: E402
from keras_subembed.layers import SubEmbedding  # noqa: E402

WIDTH = 512
# A compile-only CUDA device (`--gpu-target`): functions are lowered for it, never run.
TARGET_DEVICE = None


class ConcatenatedSubEmbedding(SubEmbedding):
    """SubEmbedding whose lookup always concatenates the gathered sub-vectors (any device)."""

    def embed(self, token_ids, training=None):
        parts = [keras.ops.take(table, column, axis=0)
                 for table, column in zip(self.sub_tables, self.token_codes(token_ids))]
        vectors = keras.ops.concatenate(parts, axis=-1)
        scales = self.token_scales(token_ids)
        return vectors if scales is None else vectors * keras.ops.expand_dims(scales, -1)


def make_layer(name, vocab):
    if name == "Embedding":
        return keras.layers.Embedding(vocab, WIDTH)
    if name.startswith("ALONE"):
        return layers.ALONEEmbedding(
            vocab, WIDTH, filter_kind=name.split()[1], volatile="stored" not in name, seed=0
        )
    if name.startswith("DeFINE"):
        return layers.DeFINEEmbedding(vocab, WIDTH, map_dim=64, expand_dim=1024, depth=4)
    num_tables = int(name.split("K=")[1].split()[0])
    assignment = "random" if "random" in name else "digits"
    kind = ConcatenatedSubEmbedding if "concatenated" in name else SubEmbedding
    return kind(vocab, WIDTH, num_tables=num_tables, assignment=assignment, seed=0)


def for_target(tree):
    """The arrays as shapes placed on TARGET_DEVICE, to lower for it; unchanged without one."""
    if TARGET_DEVICE is None:
        return tree
    import jax

    sharding = jax.sharding.SingleDeviceSharding(TARGET_DEVICE)
    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding), tree)


def compile_only_gpu(spec_path):
    """The device of a one-GPU CUDA topology described by a GpuTargetConfig textproto."""
    from jax.experimental import topologies

    with open(spec_path) as handle:
        target_config = handle.read()
    try:
        topology = topologies.get_topology_desc(
            platform="cuda", topology="1x1x1", target_config=target_config)
    except NotImplementedError as error:
        raise SystemExit(
            "--gpu-target needs JAX's CUDA plugin: pip install the jax-cuda12-plugin and "
            f"jax-cuda12-pjrt wheels of the installed jaxlib ({error})") from None
    return topology.devices[0]


def temp_bytes(function, arguments):
    """XLA's compiled temporary memory of a jitted JAX function, or None."""
    if BACKEND != "jax":
        return None
    lowered = getattr(function, "lower", None)
    if lowered is None:
        return None
    analysis = lowered(*for_target(arguments)).compile().memory_analysis()
    return None if analysis is None else analysis.temp_size_in_bytes


def wait(result):
    """Blocks until the device has computed `result` (JAX: without copying it to the host)."""
    if BACKEND == "jax":
        import jax

        return jax.block_until_ready(result)
    return np.asarray(keras.tree.flatten(result)[0])


def median_rate(function, arguments, tokens, steps, repeats):
    wait(function(*arguments))  # trace / compile
    wait(function(*arguments))
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            result = function(*arguments)
        wait(result)
        rates.append(tokens * steps / (time.perf_counter() - start))
    return statistics.median(rates)


def compile_function(function, xla):
    if BACKEND == "jax":
        import jax

        return jax.jit(function)
    return tf.function(function, jit_compile=xla)


def make_consumer(kind):
    """What reads the vectors before the loss: nothing, or a fixed d x d matrix."""
    if kind == "none":
        return lambda vectors: vectors
    projection = keras.ops.convert_to_tensor(
        np.random.default_rng(1).normal(size=(WIDTH, WIDTH)) / np.sqrt(WIDTH), "float32")
    return lambda vectors: keras.ops.matmul(vectors, projection)


def tensorflow_train_step(layer, optimizer, consumer):
    def train_step(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(consumer(layer(ids))))
        grads = tape.gradient(loss, layer.trainable_weights)
        optimizer.apply(grads, layer.trainable_weights)
        return loss

    return tf.function(train_step, jit_compile=True), tf.function(train_step, jit_compile=False)


def jax_train_step(layer, optimizer, consumer):
    """A jitted stateless step; the returned callable carries the state between calls."""
    import jax

    non_trainable = [v.value for v in layer.non_trainable_variables]

    def step(trainable, optimizer_state, ids):
        def loss_fn(trainable):
            vectors, _ = layer.stateless_call(trainable, non_trainable, ids)
            return keras.ops.mean(keras.ops.square(consumer(vectors)))

        loss, grads = jax.value_and_grad(loss_fn)(trainable)
        trainable, optimizer_state = optimizer.stateless_apply(optimizer_state, grads, trainable)
        return loss, trainable, optimizer_state

    step = jax.jit(step, donate_argnums=(0, 1))
    state = [[v.value for v in layer.trainable_variables],
             [v.value for v in optimizer.variables]]

    def train_step(ids):
        loss, state[0], state[1] = step(state[0], state[1], ids)
        return loss

    # Lowered with the current state, so the temp memory is that of this step.
    train_step.lower = lambda ids: step.lower(*for_target((state[0], state[1], ids)))
    return train_step


def lookup_rows(args):
    rows = []
    rng = np.random.default_rng(0)
    for vocab in args.vocab_sizes:
        ids = keras.ops.convert_to_tensor(
            rng.integers(0, vocab, size=(args.batch, args.sequence)), "int32")
        tokens = args.batch * args.sequence
        baseline = {}
        consumer = make_consumer(args.consumer)
        for name in args.layers:
            layer = make_layer(name, vocab)
            layer.build()
            optimizer = keras.optimizers.SGD(0.01)
            optimizer.build(layer.trainable_weights)

            def forward(ids, layer=layer):
                return layer(ids)

            if BACKEND == "jax":
                train_steps = {True: jax_train_step(layer, optimizer, consumer)}
            else:
                xla_step, graph_step = tensorflow_train_step(layer, optimizer, consumer)
                train_steps = {True: xla_step, False: graph_step}

            for xla in (True,) if BACKEND == "jax" else (False, True):
                for mode in ("forward", "train step"):
                    if mode == "forward":
                        compiled = compile_function(forward, xla)
                    else:
                        compiled = train_steps[xla]
                    temp = temp_bytes(compiled, (ids,))
                    if args.temp_only:
                        rate = ratio = float("nan")
                    else:
                        rate = median_rate(compiled, (ids,), tokens, args.steps, args.repeats)
                    key = (mode, xla)
                    if name == "Embedding":
                        baseline[key] = rate
                    ratio = rate / baseline[key] if key in baseline else float("nan")
                    rows.append(
                        dict(vocab=vocab, layer=name, mode=mode, xla=xla,
                             tokens_per_s=rate, ratio=ratio, temp_bytes=temp)
                    )
                    temp_text = "" if temp is None else f"  temp {temp / 2**20:,.1f} MiB"
                    print(f"  V={vocab:,} {name:<16} {mode:<10} xla={xla!s:<5} {rate:>12,.0f} tok/s"
                          f"  x{ratio:.2f}{temp_text}", flush=True)
            del layer, optimizer, train_steps
    return rows


_LOGITS_CHILD = """
import os, sys, time, json, statistics, threading
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, keras
from keras_subembed.layers import SubEmbedding
variant, vocab, width, positions, repeats, xla, dtype, gpu_target = sys.argv[1:9]
vocab, width, positions, repeats = int(vocab), int(width), int(positions), int(repeats)
policy = "mixed_bfloat16" if dtype == "bfloat16" else "float32"
hidden = keras.ops.convert_to_tensor(np.random.default_rng(0).normal(size=(positions, width)), dtype)
if variant == "dense":
    table = keras.Variable(np.random.default_rng(1).normal(size=(vocab, width)).astype("float32"))
    weights = [[table.value], []]
    # bf16: the table is cast to the compute dtype, as a mixed-precision model would.
    apply = lambda h, t, n: keras.ops.matmul(h, keras.ops.transpose(keras.ops.cast(t[0], dtype)))
else:
    k = int(variant.split("K=")[1].split()[0])
    if "M=" in variant:  # stored codes that repeat down each column, as product codes
        rows = int(variant.split("M=")[1].split()[0])
        codes = np.random.default_rng(2).integers(0, rows, size=(vocab, k))
        layer = SubEmbedding(vocab, width, num_tables=k, rows_per_table=rows, assignment=codes,
                             dtype=policy)
    else:
        layer = SubEmbedding(vocab, width, num_tables=k, dtype=policy,
                             assignment="random" if "random" in variant else "digits", seed=0)
    layer.build()
    weights = [[v.value for v in layer.trainable_variables],
               [v.value for v in layer.non_trainable_variables]]

    def apply(h, trainable, non_trainable):
        # Called as a model calls it (`stateless_call` would skip the
        # mixed-precision autocast of the tables to bfloat16).
        mapping = [*zip(layer.trainable_variables, trainable),
                   *zip(layer.non_trainable_variables, non_trainable)]
        with keras.StatelessScope(state_mapping=mapping):
            return layer(h, reverse=True)
    if "along-" in variant:
        # A forced layout of the stored-code logits (the layer picks columns
        # under XLA and on GPUs, rows elsewhere), from its public pieces: its
        # sub-tables (cast as the policy would) and its codes, unpacked.
        along_columns = "along-columns" in variant
        weights = [[t.value for t in layer.sub_tables],
                   [keras.ops.convert_to_tensor(layer.code_array(), "int32")]]
        splits = np.cumsum(layer.sub_widths)[:-1].tolist()

        def apply(h, tables, codes):
            chunks = keras.ops.split(h, splits, axis=-1) if splits else [h]
            scores = [keras.ops.matmul(chunk, keras.ops.transpose(keras.ops.cast(table, dtype)))
                      for chunk, table in zip(chunks, tables)]
            total = None
            for score, column in zip(scores, keras.ops.unstack(codes[0], k, axis=1)):
                gathered = (keras.ops.take(score, column, axis=-1) if along_columns
                            else keras.ops.take(keras.ops.transpose(score), column, axis=0))
                total = gathered if total is None else total + gathered
            return total if along_columns else keras.ops.transpose(total)
cost = {}
if keras.backend.backend() == "jax":
    import jax
    # The weights are arguments, not constants folded into the program.
    function = jax.jit(apply)
    arguments = (hidden, *weights)
    if gpu_target:  # compile for the described GPU (none here): memory and cost model only
        from jax.experimental import topologies
        with open(gpu_target) as handle:
            device = topologies.get_topology_desc(
                platform="cuda", topology="1x1x1", target_config=handle.read()).devices[0]
        sharding = jax.sharding.SingleDeviceSharding(device)
        arguments = jax.tree.map(
            lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding), arguments)
    compiled = function.lower(*arguments).compile()
    temp = compiled.memory_analysis().temp_size_in_bytes
    # A compile-only GPU executable has no cost analysis; XLA's generic HLO
    # cost model (through the CPU client) reads its optimised, fused module:
    # flops, and bytes each fusion reads and writes in device memory.
    try:
        from jax._src.lib import xla_client
        module = compiled.runtime_executable().hlo_modules()[0]
        analysis = xla_client._xla.hlo_module_cost_analysis(jax.devices("cpu")[0].client, module)
        cost = {"flops": analysis.get("flops"), "bytes_accessed": analysis.get("bytes accessed")}
    except Exception as error:  # a private API: timings do not need it
        print(f"no HLO cost model: {error!r}", file=sys.stderr)
    if gpu_target:
        print(json.dumps({"seconds": float("nan"), "peak_mib": float("nan"), "temp_bytes": temp,
                          **cost}))
        sys.exit()
    function = lambda h, function=function: function(h, *weights)
    # Waits for the device without copying the (P, V) logits to the host.
    wait = jax.block_until_ready
else:
    import tensorflow as tf
    function = tf.function(lambda h: apply(h, *weights), jit_compile=xla == "True")
    temp = None
    wait = np.asarray
wait(function(hidden))  # compile, and let the allocator settle

def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

peak, running = [0], [True]
def sample():
    while running[0]:
        peak[0] = max(peak[0], resident_bytes())
        time.sleep(0.0005)
baseline = resident_bytes()
sampler = threading.Thread(target=sample)
sampler.start()
times = []
for _ in range(repeats):
    start = time.perf_counter()
    wait(function(hidden))
    times.append(time.perf_counter() - start)
running[0] = False
sampler.join()
print(json.dumps({"seconds": statistics.median(times), "peak_mib": (peak[0] - baseline) / 2**20,
                  "temp_bytes": temp, **cost}))
"""


def logits_rows(args):
    rows = []
    vocab = 50_265
    variants = args.logit_variants
    for xla in (True,) if BACKEND == "jax" else (False, True):
        baseline = None
        for variant in variants:
            child = subprocess.run(
                [sys.executable, "-c", _LOGITS_CHILD, variant, str(vocab), str(WIDTH),
                 str(args.positions), str(args.repeats), str(xla), args.logit_dtype,
                 args.gpu_target or ""],
                capture_output=True, text=True,
            )
            if child.returncode:  # report it and go on with the other variants
                print(f"  tied logits {variant}: failed (exit {child.returncode})\n"
                      f"{child.stderr[-2000:]}", flush=True)
                continue
            result = json.loads(child.stdout.strip().splitlines()[-1])
            baseline = baseline or result["seconds"]
            speedup = baseline / result["seconds"]  # NaN when compiled only (--gpu-target)
            rows.append(dict(variant=variant, xla=xla, dtype=args.logit_dtype, speedup=speedup,
                             **result))
            temp = result["temp_bytes"]
            temp_text = "" if temp is None else f"  temp {temp / 2**20:,.1f} MiB"
            cost_text = ("" if result.get("flops") is None else
                         f"  {result['flops'] / 1e9:,.1f} GFLOP {result['bytes_accessed'] / 2**20:,.1f} MiB"
                         " accessed")
            print(f"  tied logits {variant:<24} xla={xla!s:<5} {result['seconds'] * 1e3:8.1f} ms"
                  f"  x{speedup:.2f}  peak +{result['peak_mib']:.0f} MiB{temp_text}{cost_text}",
                  flush=True)
    return rows


def mib(temp):
    return "-" if temp is None else f"{temp / 2**20:,.1f}"


def markdown(lookup, logits, args):
    lines = [f"Backend {BACKEND}. Lookup, d={WIDTH}, batch {args.batch}x{args.sequence}; tokens/s (median of "
             f"{args.repeats} runs of {args.steps} calls); train step consumer: {args.consumer}; "
             "ratio vs Embedding in the same run; "
             "XLA temp memory (JAX only) in MiB.", "",
             "| V | layer | forward | ratio | forward XLA | ratio | train step | ratio | train step XLA | ratio "
             "| temp forward | temp train step |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    cells = {}
    for row in lookup:
        cells.setdefault((row["vocab"], row["layer"]), {})[(row["mode"], row["xla"])] = row
    for (vocab, layer), by_mode in cells.items():
        parts = []
        for key in (("forward", False), ("forward", True), ("train step", False), ("train step", True)):
            row = by_mode.get(key)  # JAX has XLA rows only
            timed = row is not None and row["tokens_per_s"] == row["tokens_per_s"]  # not NaN
            parts += [f"{row['tokens_per_s']:,.0f}", f"{row['ratio']:.2f}"] if timed else ["-", "-"]
        for mode in ("forward", "train step"):
            parts.append(mib(by_mode.get((mode, True), {}).get("temp_bytes")))
        lines.append(f"| {vocab:,} | {layer} | " + " | ".join(parts) + " |")
    lines += ["", f"Tied logits, {args.positions} positions x V=50,265, d={WIDTH}, {args.logit_dtype}: "
              "median time, speed-up vs the dense product, peak RSS growth; JAX only: XLA temp "
              "memory, and XLA's HLO cost model of the compiled program (GFLOP, MiB accessed).", "",
              "| variant | XLA | time (ms) | speed-up | peak memory (MiB) | temp (MiB) | GFLOP "
              "| MiB accessed |",
              "|---|---|---|---|---|---|---|---|"]
    for row in logits:
        flops, accessed = row.get("flops"), row.get("bytes_accessed")
        cost = ["-", "-"] if flops is None else [f"{flops / 1e9:,.1f}", mib(accessed)]
        lines.append(f"| {row['variant']} | {row['xla']} | {row['seconds'] * 1e3:.1f} | "
                     f"{row['speedup']:.2f} | {row['peak_mib']:.0f} | {mib(row.get('temp_bytes'))} | "
                     + " | ".join(cost) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[50_265, 250_002])
    parser.add_argument("--layers", nargs="+",
                        default=["Embedding", "SubEmbedding K=2", "SubEmbedding K=3", "SubEmbedding K=4"])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--sequence", type=int, default=128)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--positions", type=int, default=2048)
    parser.add_argument("--logit-variants", nargs="+",
                        default=["dense", "SubEmbedding K=2", "SubEmbedding K=3", "SubEmbedding K=4",
                                 "SubEmbedding K=3 random"])
    parser.add_argument("--logit-dtype", choices=["float32", "bfloat16"], default="float32",
                        help="tied logits: compute dtype (bfloat16: the mixed_bfloat16 policy)")
    parser.add_argument("--temp-only", action="store_true",
                        help="JAX: record XLA temp memory only, without timing (large batches)")
    parser.add_argument("--gpu-target", metavar="SPEC_TXTPB",
                        help="with --temp-only: compile for the CUDA GPU this XLA GpuTargetConfig "
                             "textproto describes, without a GPU (needs the jax-cuda12-plugin wheels)")
    parser.add_argument("--consumer", choices=["none", "dense"], default="none",
                        help="train step: the loss reads the vectors directly, or through a fixed "
                             "d x d matrix as a model's first layer would")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the script runs")
    parser.add_argument("--part", choices=["all", "lookup", "logits"], default="all")
    parser.add_argument("--output", help="write the rows as JSON here")
    add_backend_argument(parser)
    args = parser.parse_args()
    if args.quick:
        args.vocab_sizes, args.batch, args.sequence = [5000], 4, 16
        args.steps, args.repeats, args.positions = 2, 2, 64
    if args.temp_only and BACKEND != "jax":
        parser.error("--temp-only reads XLA's memory analysis: it needs --backend jax")
    if args.gpu_target and not args.temp_only:
        parser.error("--gpu-target compiles without running: it needs --temp-only")
    if BACKEND == "jax":
        import jax

        # e.g. "cpu: TFRT_CPU_0" or "gpu: NVIDIA H100 80GB HBM3"
        devices = [f"{d.platform}: {d.device_kind}" for d in jax.devices()]
        if args.gpu_target:
            global TARGET_DEVICE
            TARGET_DEVICE = compile_only_gpu(args.gpu_target)
            devices = [f"compiled for (not run on) {TARGET_DEVICE.platform}: "
                       f"{TARGET_DEVICE.device_kind}"]
        version = f"JAX {jax.__version__}"
    else:
        devices = [d.device_type for d in tf.config.list_physical_devices()]
        version = f"TF {tf.__version__}"
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, devices {devices}, "
          f"{version}, Keras {keras.__version__}, backend {BACKEND}", flush=True)
    lookup = lookup_rows(args) if args.part in ("all", "lookup") else []
    logits = logits_rows(args) if args.part in ("all", "logits") else []
    print(markdown(lookup, logits, args))
    if args.output:
        with open(args.output, "w") as handle:
            json.dump({"backend": BACKEND, "lookup": lookup, "logits": logits, "devices": devices},
                      handle, indent=2)


if __name__ == "__main__":
    main()
