"""Shipping from JAX: a model trained on JAX becomes a verified .tflite in one call."""

import pytest
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from keras_subembed import files

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TRAIN_ON_JAX_AND_SHIP = textwrap.dedent(
    """
    import json, sys
    import keras
    import numpy as np
    from keras_subembed.export import UnsupportedBackendError, export_tflite
    from keras_subembed.export.cli import main as convert_main
    from keras_subembed.layers import SubEmbedding

    out = sys.argv[1]
    assert keras.backend.backend() == "jax"
    keras.utils.set_random_seed(0)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    vectors = SubEmbedding(50, 8, num_tables=2, seed=0)(token_ids)
    logits = keras.layers.Dense(2)(keras.layers.GlobalAveragePooling1D()(vectors))
    model = keras.Model(token_ids, logits)
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=True)
    rng = np.random.default_rng(0)
    model.fit(rng.integers(1, 50, (64, 6)), rng.integers(0, 2, 64), epochs=2, verbose=0)
    try:
        export_tflite(model, out + "/live.tflite")
        raise SystemExit("a live JAX model was exported")
    except UnsupportedBackendError as error:
        live_error = str(error)
    model.save(out + "/model.keras")
    report = export_tflite(out + "/model.keras", out + "/model.tflite")
    status = convert_main([out + "/model.keras", "--saved-model", out + "/saved"])
    probe = np.array([[3, 14, 15, 9, 0, 0]], "int32")
    np.save(out + "/jax_logits.npy", np.asarray(model.predict(probe, verbose=0)))
    print(json.dumps(dict(report=report.as_dict(), live_error=live_error, cli_status=status)))
    """
)


def test_model_trained_on_jax_ships_as_verified_tflite(tmp_path):
    environment = dict(os.environ, KERAS_BACKEND="jax", PYTHONPATH=ROOT)
    result = subprocess.run([sys.executable, "-c", TRAIN_ON_JAX_AND_SHIP, str(tmp_path)],
                            env=environment, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert "needs the TensorFlow backend" in outcome["live_error"]
    assert "model.save('model.keras')" in outcome["live_error"]
    assert not (tmp_path / "live.tflite").exists()

    report = outcome["report"]
    assert report["max_abs_error"] <= report["tolerance"]
    assert report["verified_sequence_lengths"] == [16, 128]
    assert report["file_bytes"] == (tmp_path / "model.tflite").stat().st_size
    assert outcome["cli_status"] == 0 and files.is_saved_model(tmp_path / "saved")

    # The file computes what the JAX model computed.
    runner = Interpreter(model_path=str(tmp_path / "model.tflite")).get_signature_runner()
    probe = np.array([[3, 14, 15, 9, 0, 0]], "int32")
    np.testing.assert_allclose(runner(token_ids=probe)["outputs"],
                               np.load(tmp_path / "jax_logits.npy"), rtol=1e-5, atol=1e-6)


# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")
