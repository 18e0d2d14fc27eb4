"""Checks of the contract every compressed embedding keeps, shared by the layer tests."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import keras_hub
import numpy as np
import tensorflow as tf
from keras import ops

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


# --- tolerances ----------------------------------------------------------------------
#
# Two paths that compute the same float32 numbers in a different order (eager vs XLA,
# TensorFlow vs JAX, Keras vs TFLite, two CPUs with different vector widths: XLA
# splits sums differently with AVX-512 than with AVX2) differ by rounding only.
# Reordering a sum of n float32 terms moves it by at most about n * eps * sum|terms|.
# So a tolerance is `safety * eps * reduction_length * scale`, where `scale` is the
# largest magnitude in the expected array (the terms are no larger than the values
# they build) and `reduction_length` the number of terms summed into one element
# along the longest chain of sums. It is absolute, for the whole array: an element
# near zero that came from cancelling large terms keeps the error of those terms, so
# a per-element relative tolerance would hinge on one machine's luck. A real bug (a
# wrong code, id, filter or weight) moves elements by O(scale), far above it.

FLOAT32_EPS = float(np.finfo("float32").eps)


def float32_tolerance(want, reduction_length, safety=8.0):
    """Absolute tolerance for float32 `want` recomputed in another summation order."""
    want = np.asarray(want, dtype="float64")
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    return safety * FLOAT32_EPS * max(int(reduction_length), 1) * max(scale, 1e-30)


def assert_float32_close(got, want, reduction_length, safety=8.0):
    """`got` equals `want` up to the reordering error of `reduction_length`-term sums."""
    atol = float32_tolerance(want, reduction_length, safety)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=atol)


def assert_relative_close(got, want, tolerance=1e-5):
    """max|got - want| <= tolerance * max|want| (relative to the array's scale)."""
    got, want = np.asarray(got, "float64"), np.asarray(want, "float64")
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    error = float(np.max(np.abs(got - want))) if want.size else 0.0
    assert error <= tolerance * scale, f"max abs error {error:.3g} > {tolerance} * {scale:.3g}"


# --- backend-neutral compiled calls and gradients ---------------------------------------


def compiled(function):
    """`function` compiled with XLA on the current backend.

    TensorFlow: `tf.function(jit_compile=True)`; JAX: `jax.jit`. Layers called
    inside read their variables' current values (as constants under `jax.jit`):
    build them first, or JAX would create their weights as tracers.
    """
    if keras.backend.backend() == "jax":
        import jax

        return jax.jit(function)
    return tf.function(function, jit_compile=True)


def traced_shapes(function, *args):
    """Shapes of every intermediate tensor when `function(*args)` is traced.

    TensorFlow: the outputs of every op of the `tf.function` graph; JAX: the
    outputs of every equation of the jaxpr, nested ones included.
    """
    if keras.backend.backend() == "jax":
        import jax

        def walk(jaxpr):
            for equation in jaxpr.eqns:
                yield from (tuple(var.aval.shape) for var in equation.outvars)
                for param in keras.tree.flatten(list(equation.params.values())):
                    inner = getattr(param, "jaxpr", param)
                    if hasattr(inner, "eqns"):
                        yield from walk(inner)

        return list(walk(jax.make_jaxpr(function)(*args).jaxpr))
    specs = [tf.TensorSpec(np.shape(arg), np.asarray(arg).dtype) for arg in args]
    graph = tf.function(function).get_concrete_function(*specs).graph
    return [tuple(output.shape.as_list()) for op in graph.get_operations() for output in op.outputs]


def contract_loss(vectors, logits):
    """A loss that reaches every weight through both the lookup and the tied logits."""
    return ops.sum(vectors**2) + ops.sum(ops.softmax(logits)[..., :10])


def loss_and_gradients(layer_or_model, loss_fn, inputs, jit=False):
    """`(outputs, gradients)`: `outputs = layer_or_model(*inputs)`, gradients of
    `loss_fn(*outputs)` with respect to its trainable variables, in their order.

    `inputs` is a list of call arguments, or of `(args, kwargs)` pairs for several
    calls of the same layer (e.g. a lookup and a `reverse=True` call): then the
    outputs are one per call. TensorFlow: `tf.GradientTape` (under
    `tf.function(jit_compile=True)` when `jit`); JAX: `jax.value_and_grad` over
    Keras' `stateless_call` (under `jax.jit` when `jit`).
    """
    calls = inputs if isinstance(inputs[0], tuple) else [(list(inputs), {})]

    if keras.backend.backend() == "jax":
        import jax

        non_trainable = [v.value for v in layer_or_model.non_trainable_variables]

        def loss(trainable):
            outputs = [
                layer_or_model.stateless_call(trainable, non_trainable, *args, **kwargs)[0]
                for args, kwargs in calls
            ]
            return loss_fn(*outputs), outputs

        step = jax.value_and_grad(loss, has_aux=True)
        step = jax.jit(step) if jit else step
        (_, outputs), gradients = step([v.value for v in layer_or_model.trainable_variables])
    else:

        def step():
            with tf.GradientTape() as tape:
                outputs = [layer_or_model(*args, **kwargs) for args, kwargs in calls]
                loss = loss_fn(*outputs)
            variables = layer_or_model.trainable_variables
            # A variable the loss does not reach gets zeros, as on JAX (TF: None).
            gradients = tape.gradient(loss, variables)
            zeros = [ops.zeros(v.shape, v.dtype) for v in variables]
            # A weight reached only through gathers gets IndexedSlices: densify.
            return outputs, [
                tf.convert_to_tensor(g) if g is not None else z for g, z in zip(gradients, zeros)
            ]

        step = tf.function(step, jit_compile=True) if jit else step
        outputs, gradients = step()
    outputs = keras.tree.map_structure(np.asarray, outputs)
    return outputs, [np.asarray(gradient) for gradient in gradients]


def contract_step(layer, ids, hidden, jit=False):
    """Lookup, tied logits and the gradients of `contract_loss` for `layer`."""
    layer(ids)  # builds it
    (vectors, logits), gradients = loss_and_gradients(
        layer, contract_loss, [((ids,), {}), ((hidden,), {"reverse": True})], jit=jit
    )
    return [vectors, logits, *gradients]


def assert_compiled_matches_eager(layer, ids, hidden, reduction_length=None, safety=8.0):
    """Forward, tied logits and gradients agree between eager and XLA.

    `reduction_length` (see `float32_tolerance`) defaults to the longest sum
    in `contract_step`: a sub-table row's gradient sums over every token of
    `ids` and, through the softmax, over every logit of `hidden`'s rows.
    """
    ids, hidden = np.asarray(ids, "int32"), np.asarray(hidden, "float32")
    if reduction_length is None:
        reduction_length = ids.size + hidden[..., 0].size * layer.input_dim + layer.output_dim
    eager = contract_step(layer, ids, hidden)
    xla = contract_step(layer, ids, hidden, jit=True)
    assert len(xla) == len(eager) == 2 + len(layer.trainable_variables)
    for got, want in zip(xla, eager):
        assert_float32_close(got, want, reduction_length, safety)


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
    # Same ops, maybe fused differently: the sums are the dense layer's and the
    # logits' (width each) and the softmax's (vocab).
    assert_float32_close(
        model([ids[:2], positions[:2]]), ops.softmax(logits), 2 * layer.output_dim + vocab
    )
    return head


OTHER_BACKEND = {"tensorflow": "jax", "jax": "tensorflow"}
REPOSITORY = str(Path(__file__).resolve().parents[2])


def run_in_backend(backend, script):
    """Runs `script` in a fresh Python process on Keras backend `backend`."""
    env = {**os.environ, "KERAS_BACKEND": backend, "PYTHONPATH": REPOSITORY}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def model_loss(*outputs):
    """A loss over every output of a model, for cross-backend gradient checks."""
    return sum(ops.sum(ops.sin(ops.cast(output, "float32"))) for output in outputs)


def model_outputs_and_gradients(model, inputs):
    """(outputs as a list, gradients of `model_loss` wrt trainable variables) as NumPy."""
    model(inputs)  # builds it
    (outputs,), gradients = loss_and_gradients(
        model, lambda outputs: model_loss(*keras.tree.flatten(outputs)), [inputs]
    )
    return keras.tree.flatten(outputs), gradients


def run_parts_in_backend(backend, parts):
    """Runs `parts` (name -> script) one after another in ONE fresh Python process on Keras
    backend `backend` (a start imports TensorFlow, JAX and Keras: seconds each time).

    Each part runs in its own namespace; a failing part is reported by name and the
    next one still runs. Returns name -> the part's traceback, or `None` when it ran.
    """
    runner = f"""
        import json, traceback
        failures = {{}}
        for name, code in {[(name, textwrap.dedent(code)) for name, code in parts.items()]!r}:
            try:
                exec(compile(code, name, "exec"), {{"__name__": "__part__"}})
                failures[name] = None
            except BaseException:
                failures[name] = traceback.format_exc()
        print(json.dumps(failures))
        """
    output = run_in_backend(backend, runner)
    return json.loads(output.strip().splitlines()[-1])


def keras_files_moved_to_the_other_backend(cases, folder, more_parts=None):
    """Saves each model of `cases` (name -> `(model, inputs, probes)`) under `folder / name`
    and moves them all to the other Keras backend (TensorFlow <-> JAX) in one fresh process,
    where each part loads its file, computes the outputs, the gradients of `model_loss`
    and the `probes` (name -> Python expression over `model` and `inputs`), and saves
    the model again. `more_parts` (name -> script) run in the same process afterwards.

    Returns name -> traceback or `None`, as `run_parts_in_backend`; then
    `assert_keras_file_came_back` checks each case.
    """
    parts = {}
    for name, (model, inputs, probes) in cases.items():
        path = folder / name
        path.mkdir(parents=True, exist_ok=True)
        model.save(path / "model.keras")
        np.savez(path / "inputs.npz", *inputs)
        parts[name] = f"""
            import numpy as np, keras
            import keras_subembed  # registers the layers
            from tests.layers.layer_contract import model_outputs_and_gradients
            model = keras.saving.load_model({str(path / "model.keras")!r})
            stored = np.load({str(path / "inputs.npz")!r})
            inputs = [stored[f"arr_{{i}}"] for i in range(len(stored.files))]
            outputs, gradients = model_outputs_and_gradients(model, inputs)
            probes = {{name: np.asarray(eval(code)) for name, code in {probes or {}!r}.items()}}
            np.savez({str(path / "outputs.npz")!r}, *outputs)
            np.savez({str(path / "gradients.npz")!r}, *gradients)
            np.savez({str(path / "probes.npz")!r}, **probes)
            model.save({str(path / "back.keras")!r})
            """
    parts.update(more_parts or {})
    return run_parts_in_backend(OTHER_BACKEND[keras.backend.backend()], parts)


def assert_keras_file_came_back(model, inputs, path, failure, probes=None, tolerance=1e-5):
    """The checks of `assert_keras_file_moves_between_backends`, for a case that
    `keras_files_moved_to_the_other_backend` moved to `path` (`failure`: its part's
    traceback there, or `None`); outputs and gradients within `tolerance` of their scale."""
    assert failure is None, failure
    probes = probes or {}
    outputs, gradients = model_outputs_and_gradients(model, inputs)
    there = np.load(path / "outputs.npz")
    there_gradients = np.load(path / "gradients.npz")
    assert len(there.files) == len(outputs) and len(there_gradients.files) == len(gradients)
    for index, output in enumerate(outputs):
        assert_relative_close(there[f"arr_{index}"], output, tolerance)
    for index, gradient in enumerate(gradients):
        assert_relative_close(there_gradients[f"arr_{index}"], gradient, tolerance)
    there_probes = np.load(path / "probes.npz")
    for name, code in probes.items():
        np.testing.assert_array_equal(there_probes[name], np.asarray(eval(code)), err_msg=name)
    back = keras.saving.load_model(path / "back.keras")
    again = back(inputs)
    again = again if isinstance(again, (list, tuple)) else [again]
    for got, want in zip(again, outputs, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)


def assert_keras_file_moves_between_backends(model, inputs, tmp_path, probes=None):
    """A `.keras` file moves to the other backend and back with equal results.

    One fresh process on the other Keras backend (TensorFlow <-> JAX) loads the
    file, computes the outputs and the gradients of `model_loss`, evaluates
    `probes` (name -> Python expression over `model` and `inputs`) and saves
    the model again. Here: outputs and gradients agree within 1e-5 of each
    array's scale (the backends' kernels sum in their own order), probes are
    bit-identical, and the file saved there reloads here with bit-identical
    outputs (weights move exactly). Several models move in one process with
    `keras_files_moved_to_the_other_backend` and `assert_keras_file_came_back`.
    """
    failures = keras_files_moved_to_the_other_backend({"model": (model, inputs, probes)}, tmp_path)
    assert_keras_file_came_back(model, inputs, tmp_path / "model", failures["model"], probes)


def tflite_masked_lm(layer):
    """A builtins-only .tflite of `masked_lm_model(layer)` and its Keras model."""
    model, _ = masked_lm_model(layer)
    signature = [[tf.TensorSpec((None, None), tf.int32), tf.TensorSpec((None, None), tf.int32)]]
    return TFLiteRunner(convert_builtins_only(model, signature)), model


def assert_tflite_matches_keras(runner, model, vocab, width, lengths=(5, 17), reduction_length=None):
    """Vectors and tied logits agree at several lengths; out-of-range ids give zeros.

    `reduction_length` (see `float32_tolerance`) defaults to a few width-long
    sums: the layer's own (FFN, HGT) and the logits' dot product.
    """
    reduction_length = reduction_length or 4 * width
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
        assert_float32_close(got_vectors, want_vectors, reduction_length)
        assert_float32_close(got_logits, want_logits, reduction_length)
        np.testing.assert_array_equal(got_vectors[1, -1], np.zeros(width))
