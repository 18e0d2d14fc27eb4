"""`import keras_subembed` on JAX needs no TensorFlow (a CUDA JAX machine has none)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_CHILD = textwrap.dedent(
    """
    import sys

    sys.modules["tensorflow"] = None  # any `import tensorflow` now raises
    import numpy as np

    import keras_subembed
    import keras_subembed.layers
    import keras_subembed.models
    from keras_subembed import layers

    made = [
        layers.SubEmbedding(100, 8, num_tables=3),
        layers.SubEmbedding(100, 8, num_tables=2, assignment="random", seed=0),
        layers.ALONEEmbedding(100, 8, base_dim=32, seed=0),
        layers.ALONEEmbedding(100, 8, base_dim=32, seed=0, volatile=False),
        layers.DeFINEEmbedding(100, 8, map_dim=8, expand_dim=16, depth=2, max_groups=2),
    ]
    for layer in made:
        vectors = np.asarray(layer(np.array([[1, 2, 99]])))
        logits = np.asarray(layer(np.ones((2, 8), "float32"), reverse=True))
        assert vectors.shape == (1, 3, 8) and logits.shape == (2, 100), type(layer)
        assert np.isfinite(vectors).all() and np.isfinite(logits).all(), type(layer)
    grouped = layers.GroupLinear(8, groups=2)(np.ones((3, 4), "float32"))
    assert tuple(grouped.shape) == (3, 8)
    print("ok", sys.modules["tensorflow"])
    """
)


def test_jax_backend_imports_and_runs_without_tensorflow():
    pytest.importorskip("jax", reason="needs JAX installed (the `test` extra has it)")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, KERAS_BACKEND="jax", PYTHONPATH=str(root))
    result = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # Still blocked at the end: nothing imported TensorFlow behind our back.
    assert result.stdout.strip().splitlines()[-1] == "ok None"
