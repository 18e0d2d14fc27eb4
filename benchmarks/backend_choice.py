"""`--backend` for the benchmarks: Keras reads KERAS_BACKEND once, when imported."""

import argparse
import os

BACKENDS = ("tensorflow", "jax")


def select_backend():
    """Sets KERAS_BACKEND from `--backend` in sys.argv; call before importing keras."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--backend", choices=BACKENDS)
    known, _ = parser.parse_known_args()
    if known.backend:
        os.environ["KERAS_BACKEND"] = known.backend
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return os.environ["KERAS_BACKEND"]


def add_backend_argument(parser):
    """Documents `--backend` in the script's own parser (`--help`)."""
    parser.add_argument(
        "--backend", choices=BACKENDS, default=os.environ["KERAS_BACKEND"],
        help="Keras backend (default: $KERAS_BACKEND, else tensorflow); on JAX every "
             "function is jax.jit-compiled (there is no non-XLA graph mode)")
