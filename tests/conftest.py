"""Test setup: the Keras backend and the markers for backend-specific tests.

The backend is `KERAS_BACKEND` when set (`tensorflow` or `jax`), else TensorFlow.
`@pytest.mark.tensorflow_only(reason=...)` marks a test that is TensorFlow's by
nature (TFLite, SavedModel, tf.distribute); `@pytest.mark.jax_only(reason=...)`
one that is JAX's (keras.distribution). On another backend they are skipped
with that reason.

XLA (JAX's compiler for every call, TensorFlow's under `jit_compile=True`) compiles
here with LLVM's optimisation off (`--xla_backend_optimization_level=0`) unless
`XLA_FLAGS` already sets a level. The suite's models are tiny: compiling is most of
the JAX run's time and machine code that runs fast saves nothing, so this cuts that
run's CPU time by about a quarter. XLA's own passes over the graph (fusion, layout,
simplification) are the same; only LLVM's passes over the emitted code are left out,
which may move float results by rounding only, as any other summation order
(`tests/layers/layer_contract.py`, "tolerances"). XLA:CPU also emits fused loops with
its older emitter (`--xla_cpu_use_fusion_emitters=false`): the newer one lowers each
fusion through MLIR, and on these tiny graphs that about doubles the time of each
compile (JAX's eager calls compile each op once per shape; RESULTS.md, "CI time").
Processes the tests start inherit these flags.

TensorFlow runs each op on one thread (`TF_NUM_INTRAOP_THREADS=1`, and one inter-op
thread) unless those are set. pytest-xdist already runs one test process per core; a
tiny model's ops gain nothing from more threads, and each process's idle pool threads
spin on the cores the other processes need. Measured on 2 cores beside other work
(benchmarks/RESULTS.md, "CI time"): 50 export and DeFINE tests took 172 and 185 s of
user CPU in two runs with one thread, 191 s with TensorFlow's default.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
# Before JAX or TensorFlow starts XLA: it reads the flags once. Each is added only
# where XLA_FLAGS does not name it already.
TEST_XLA_FLAGS = {"--xla_backend_optimization_level": "0", "--xla_cpu_use_fusion_emitters": "false"}
for _flag, _value in TEST_XLA_FLAGS.items():
    if _flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_flag}={_value}".strip()

import pytest  # noqa: E402

BACKEND_MARKERS = {"tensorflow_only": "tensorflow", "jax_only": "jax"}


def pytest_report_header(config):
    return f"Keras backend: {os.environ['KERAS_BACKEND']}"


def pytest_collection_modifyitems(config, items):
    backend = os.environ["KERAS_BACKEND"]
    for item in items:
        for name, needed in BACKEND_MARKERS.items():
            marker = item.get_closest_marker(name)
            if marker is None:
                continue
            reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else None)
            if not reason:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{name} needs a reason=")
            if backend != needed:
                item.add_marker(pytest.mark.skip(reason=f"{needed} only: {reason}"))
