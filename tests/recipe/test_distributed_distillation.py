"""The recipe's distillation on two (virtual CPU) devices gives the one-device student.

The subprocess runs on this session's Keras backend: `tf.distribute.MirroredStrategy` on
TensorFlow (CI's TensorFlow part), `keras.distribution.DataParallel` on JAX (its JAX
part). The devices must be made before the framework starts: a fresh process.

This is also the suite's check of `EmbeddingDistiller` under `tf.distribute`: `distil`
makes the distiller, its optimizer and its metrics in the strategy's scope, as a user
who distils by hand does, and the test checks it trains (the weights move) and gives the
one-device student, a stronger claim than a falling loss.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import keras
import pytest

from keras_subembed.recipe.distillation import check_distribution

ROOT = pathlib.Path(__file__).parents[2]

SCRIPT = """
import os, sys
backend = os.environ["KERAS_BACKEND"]
if backend == "jax":
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
else:
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras, numpy as np
import keras_subembed
from keras_subembed.recipe import distillation
from tests.recipe.test_distributed_distillation import TEXTS, tiny_teacher

keras.utils.set_random_seed(0)
teacher = tiny_teacher()
student = keras_subembed.compress(
    teacher, "sub", {"assignment": "product", "num_tables": 4, "rows_per_table": 16})
start = student.get_weights()
options = dict(embedding_steps=2, steps=4, runs=1, batch_size=8, sequence_length=12,
               learning_rate=1e-3, embedding_learning_rate=1e-2, seed=3, verbose=0)

seen = []  # what each distiller ran on: (replicas, devices holding a student variable)


class Recording(distillation.EmbeddingDistiller):
    def fit(self, *args, **kwargs):
        variable = self.student.token_embedding.sub_tables[0]
        if backend == "jax":
            current = keras.distribution.distribution()
            replicas = 1 if current is None else current.device_mesh.devices.size
            devices = len(variable.value.sharding.device_set)
        else:
            replicas = self.distribute_strategy.num_replicas_in_sync
            devices = len(getattr(variable.value, "values", [variable.value]))
        seen.append((replicas, devices))
        return super().fit(*args, **kwargs)


distillation.EmbeddingDistiller = Recording
one = distillation.distil(teacher, student, TEXTS, **options)
one_weights = student.get_weights()
one_vectors = student.predict(TEXTS[:8], verbose=0)
assert seen == [(1, 1)] * 2, seen

student.set_weights(start)
if backend == "jax":
    import jax
    distribution = keras.distribution.DataParallel(devices=jax.devices("cpu"))
    assert len(distribution.device_mesh.devices) == 2, distribution.device_mesh
else:
    distribution = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    assert distribution.num_replicas_in_sync == 2
assert distillation.check_distribution(distribution, 8) == 2
odd = 7 if backend == "jax" else 6  # TensorFlow: each replica's share holds whole pairs
try:
    distillation.check_distribution(distribution, odd)
    raise AssertionError("a batch that does not divide among the replicas passed")
except ValueError as error:
    assert f"must be a multiple of {4 if odd == 6 else 2}" in str(error), error
seen.clear()
two = distillation.distil(teacher, student, TEXTS, distribution=distribution, **options)
assert seen == [(2, 2)] * 2, seen  # both stages ran on two replicas
two_vectors = student.predict(TEXTS[:8], verbose=0)
moved = max(float(np.max(np.abs(a - b))) for a, b in zip(one_weights, start))
assert moved > 1e-3, moved  # the steps did train
differences = [float(np.max(np.abs(a - b))) for a, b in zip(one_weights, student.get_weights())]
assert max(differences) < 1e-4, differences
np.testing.assert_allclose(two_vectors, one_vectors, atol=1e-4)
for stage, loss in one.items():
    assert abs(two[stage] - loss) < 1e-3, (one, two)
print("OK", one, two, max(differences), float(np.max(np.abs(two_vectors - one_vectors))))
"""


def tiny_teacher(vocabulary_size=200, width=16):
    """A random BERT sentence encoder without dropout: both runs compute alike."""
    import keras_hub

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
        f"w{i}" for i in range(vocabulary_size - 5)]
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary)
    # One transformer layer: the full stage still matches two states (the embedding
    # output and the last layer's), and each of the four distillers compiles half the graph.
    backbone = keras_hub.models.BertBackbone(vocabulary_size, 1, 2, width, 32,
                                             max_sequence_length=16, dropout=0.0)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=16)
    return keras_hub.models.BertTextEmbedder(backbone, preprocessor)


TEXTS = [" ".join(f"w{(7 * i + 13 * j) % 195}" for j in range(3 + i % 8)) for i in range(64)]


def test_two_devices_distil_the_one_device_student():
    # Tolerance: the two runs differ only in the order of float32 sums (each replica's,
    # then across replicas, and no XLA under tf.distribute), ~1e-7 relative per step;
    # a few steps of AdamW at 1e-3 / 1e-2 keep that far below 1e-4.
    backend = keras.backend.backend()
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)], capture_output=True, text=True,
        env={**os.environ, "KERAS_BACKEND": backend, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert result.returncode == 0 and "OK" in result.stdout, (
        result.stdout[-2000:] + result.stderr[-4000:])


@pytest.mark.parametrize("value", ["mirrored", 2, object()])
def test_a_distribution_of_another_kind_is_refused(value):
    expected = ("keras.distribution.Distribution" if keras.backend.backend() == "jax"
                else "tf.distribute.Strategy")
    with pytest.raises(TypeError, match=f"`distribution` must be a {expected}.*"
                                        f"Received: distribution="):
        check_distribution(value, 16)


@pytest.mark.tensorflow_only(reason="tf.distribute.Strategy")
def test_the_batch_must_divide_among_the_replicas():
    import tensorflow as tf

    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")  # one replica: any even batch
    assert check_distribution(strategy, 6) == 1
    assert check_distribution(None, 6) == 1

    class Two(tf.distribute.OneDeviceStrategy):
        num_replicas_in_sync = 2

    with pytest.raises(ValueError, match=r"`batch_size` must be a multiple of 4 \(2 x 2 "
                                         r"replicas: each replica's share holds whole pairs\)"
                                         r"\. Received: batch_size=6"):
        check_distribution(Two("/cpu:0"), 6)


@pytest.mark.jax_only(reason="keras.distribution runs on JAX")
def test_the_batch_must_divide_among_the_devices():
    import jax

    distribution = keras.distribution.DataParallel(devices=jax.devices()[:1])
    assert check_distribution(distribution, 6) == 1  # two devices: in the script above
