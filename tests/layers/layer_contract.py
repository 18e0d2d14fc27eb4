"""Checks of the contract every compressed embedding keeps, shared by the layer tests."""

import subprocess
import sys
import textwrap

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from tests.tflite_utils import TFLiteRunner
from tests.tflite_utils import convert_builtins_only


def masked_lm_model(layer, activation=None):
    """(token_ids, mask_positions) -> (vectors, tied MaskedLMHead outputs)."""
    head = keras_hub.layers.MaskedLMHead(token_embedding=layer, activation=activation)
    token_ids = keras.Input((None,), dtype="int32")
    mask_positions = keras.Input((None,), dtype="int32")
    vectors = layer(token_ids)
    model = keras.Model([token_ids, mask_positions], [vectors, head(vectors, mask_positions)])
    return model, head


def assert_xla_matches_eager(layer, ids, hidden, rtol=1e-5, atol=1e-6):
    """Forward, reverse and gradients agree between eager and XLA."""

    def step(ids, hidden):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(ids) ** 2) + tf.reduce_sum(
                tf.nn.softmax(layer(hidden, reverse=True))[..., :10]
            )
        grads = tape.gradient(loss, layer.trainable_weights)
        return layer(ids), layer(hidden, reverse=True), grads

    eager = step(ids, hidden)
    xla = tf.function(step, jit_compile=True)(ids, hidden)
    for got, want in zip(tf.nest.flatten(xla), tf.nest.flatten(eager)):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def assert_masked_lm_head_trains(layer, vocab, epochs=15):
    """The tied head trains with XLA and equals softmax(h @ table.T + b)."""
    layer_head_model, head = masked_lm_model(layer, activation="softmax")
    token_ids, mask_positions = layer_head_model.inputs
    model = keras.Model(layer_head_model.inputs, layer_head_model.outputs[1])
    assert head.vocabulary_size == vocab
    assert not any(w.shape[-1] == vocab and len(w.shape) == 2 for w in head.weights)

    ids = np.random.default_rng(0).integers(1, vocab, size=(64, 12))
    positions = np.tile(np.arange(3), (64, 1))
    labels = ids[:, :3]
    model.compile(
        keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy", jit_compile=True
    )
    before = model.evaluate([ids, positions], labels, verbose=0)
    model.fit([ids, positions], labels, epochs=epochs, batch_size=16, verbose=0)
    after = model.evaluate([ids, positions], labels, verbose=0)
    assert after < 0.5 * before, (before, after)

    gathered = np.take_along_axis(np.asarray(layer(ids[:2])), positions[:2, :, None], 1)
    hidden = head._intermediate_layer_norm(head._intermediate_dense(gathered))
    logits = np.asarray(layer(hidden, reverse=True)) + np.asarray(head._bias)
    np.testing.assert_allclose(
        model([ids[:2], positions[:2]]), tf.nn.softmax(logits), rtol=1e-4, atol=1e-6
    )
    return head


def assert_keras_file_reloads_in_fresh_process(model, inputs, tmp_path):
    """`model.save` -> `load_model` in a new Python process gives identical outputs."""
    path = tmp_path / "model.keras"
    model.save(path)
    for index, array in enumerate(inputs):
        np.save(tmp_path / f"input_{index}.npy", array)
    script = textwrap.dedent(
        f"""
        import numpy as np, keras
        import keras_subembed  # registers the layers
        model = keras.saving.load_model({str(path)!r})
        inputs = [np.load({str(tmp_path)!r} + f"/input_{{i}}.npy") for i in range({len(inputs)})]
        outputs = model(inputs)
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        for i, output in enumerate(outputs):
            np.save({str(tmp_path)!r} + f"/output_{{i}}.npy", np.asarray(output))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    outputs = model(inputs)
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    for index, output in enumerate(outputs):
        np.testing.assert_array_equal(np.load(tmp_path / f"output_{index}.npy"), output)


def tflite_masked_lm(layer):
    """A builtins-only .tflite of `masked_lm_model(layer)` and its Keras model."""
    model, _ = masked_lm_model(layer)
    signature = [[tf.TensorSpec((None, None), tf.int32), tf.TensorSpec((None, None), tf.int32)]]
    return TFLiteRunner(convert_builtins_only(model, signature)), model


def assert_tflite_matches_keras(runner, model, vocab, width, lengths=(5, 17), atol=1e-5):
    """Vectors and tied logits agree at several lengths; out-of-range ids give zeros."""
    rng = np.random.default_rng(0)
    for length in lengths:
        ids = rng.integers(0, vocab, size=(2, length)).astype("int32")
        ids[:, 0] = [0, min(101, vocab - 1)]
        ids[1, -1] = vocab  # out of range: zero vector, as in compiled Keras
        positions = np.array([[0, 3], [1, 2]], dtype="int32")
        want_vectors, want_logits = tf.function(model)([ids, positions])
        by_shape = {value.shape: value for value in runner.run_all(ids, positions)}
        got_vectors = by_shape[(2, length, width)]
        got_logits = by_shape[(2, 2, vocab)]
        np.testing.assert_allclose(got_vectors, want_vectors, atol=atol)
        np.testing.assert_allclose(got_logits, want_logits, atol=atol, rtol=1e-5)
        np.testing.assert_array_equal(got_vectors[1, -1], np.zeros(width))
