"""Wall and CPU time of the same tests under two settings, run back to back.

Each setting is a list of `NAME=VALUE` environment variables (empty: the environment as
it is); each run is one `python -m pytest -n0 -q` process over the given tests, and the
settings alternate for `--repeats` rounds, so that other work on the machine weighs on
both alike. Prints one line per run and the medians. RESULTS.md, "CI time", records the
runs of 2026-11-28 (threads per TensorFlow process, XLA:CPU's threads, a persistent JAX
compilation cache).

tests/conftest.py sets some variables only where they are unset (one TensorFlow thread,
XLA's optimisation level), so a setting that compares against TensorFlow's own thread
choice says so (`0`: TensorFlow chooses).

Example:

    python benchmarks/bench_test_settings.py --backend tensorflow \\
        --a "TF_NUM_INTRAOP_THREADS=0 TF_NUM_INTEROP_THREADS=0" \\
        --b "TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1" \\
        tests/export/litert/test_quantizer_recipes.py tests/layers/test_define_embedding.py
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def parse_setting(text):
    setting = {}
    for item in text.split():
        name, separator, value = item.partition("=")
        if not separator or not name:
            raise SystemExit(f"a setting is NAME=VALUE items separated by spaces; got {item!r}")
        setting[name] = value
    return setting


def run(tests, backend, setting):
    """(wall seconds, user CPU seconds of the pytest process and its children, exit code)."""
    environment = {**os.environ, "KERAS_BACKEND": backend, **setting}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-n0", "-q", "-p", "no:randomly",
                             *tests], env=environment, capture_output=True, text=True)
    wall = time.perf_counter() - start
    user = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
    return wall, user, result.returncode


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="+", help="pytest paths or node ids")
    parser.add_argument("--backend", default="tensorflow", choices=["tensorflow", "jax"])
    parser.add_argument("--a", default="", help="setting A: NAME=VALUE ... (default: none)")
    parser.add_argument("--b", required=True, help="setting B: NAME=VALUE ...")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of A then B (>= 1)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1; got {args.repeats}")
    settings = {"A": parse_setting(args.a), "B": parse_setting(args.b)}
    times = {"A": [], "B": []}
    for round_ in range(args.repeats):
        for name, setting in settings.items():
            wall, user, code = run(args.tests, args.backend, setting)
            times[name].append((wall, user))
            print(f"round {round_ + 1} {name} {setting or '(as is)'}: {wall:.1f} s wall, "
                  f"{user:.1f} s user CPU, pytest exit {code}", flush=True)
            if code != 0:
                raise SystemExit(f"the tests failed under setting {name}: the times compare nothing")
    for name, pairs in times.items():
        print(f"median {name}: {statistics.median(w for w, _ in pairs):.1f} s wall, "
              f"{statistics.median(u for _, u in pairs):.1f} s user CPU")


if __name__ == "__main__":
    main()
