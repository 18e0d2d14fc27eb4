"""Issue 12, layer items: no silently wrong numbers, a clear error for every bad input."""

import os
import re
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_subembed.layers import ALONEEmbedding
from keras_subembed.layers import DeFINEEmbedding
from keras_subembed.layers import SubEmbedding
from tests.layers.layer_contract import compiled

WIDTH = 12


def random_sub(**kwargs):
    return SubEmbedding(100, WIDTH, num_tables=2, rows_per_table=16, assignment="random",
                        seed=1, **kwargs)


LAYERS = {
    "sub_random": random_sub,
    "sub_digits_reserved": lambda: SubEmbedding(100, WIDTH, num_tables=2, reserved_ids=(0, 3)),
    "alone_volatile": lambda: ALONEEmbedding(100, WIDTH, seed=1),
    "alone_stored": lambda: ALONEEmbedding(100, WIDTH, seed=1, volatile=False),
    "define_over_stored_codes": lambda: DeFINEEmbedding(
        100, WIDTH, map_layer=SubEmbedding(100, 8, num_tables=2, assignment="random", seed=2),
        expand_dim=16, depth=2, max_groups=2),
}


# --- item 7: one row's values never change another row's logits ---------------------


HIDDEN = np.random.default_rng(0).normal(size=(3, WIDTH)).astype("float32")


@pytest.fixture(scope="module")
def tied_logits():
    """(kind, xla) -> (the layer's reverse call, its logits of HIDDEN), made once for
    the three bad values: the compiled function is compiled once, not per value."""
    made = {}

    def get(kind, xla):
        if (kind, xla) not in made:
            layer = LAYERS[kind]()
            layer(np.array([[1]]))  # built before compiling (JAX would trace its weights)
            reverse = lambda hidden: layer(hidden, reverse=True)  # noqa: E731
            if xla:
                reverse = compiled(reverse)
            made[kind, xla] = reverse, np.asarray(reverse(HIDDEN))
        return made[kind, xla]

    return get


@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("kind", sorted(LAYERS))
@pytest.mark.parametrize("xla", [False, True], ids=["eager", "xla"])
def test_a_nan_or_inf_row_leaves_other_rows_tied_logits_unchanged(kind, xla, bad_value,
                                                                 tied_logits):
    reverse, clean = tied_logits(kind, xla)
    spoiled = HIDDEN.copy()
    spoiled[1, 0] = bad_value
    got = np.asarray(reverse(spoiled))
    np.testing.assert_allclose(got[[0, 2]], clean[[0, 2]], rtol=1e-6, atol=1e-6)
    assert not np.isfinite(got[1]).all()


# --- item 8: float ids follow the out-of-range rule, with their real values -----------


@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_nan_and_huge_float_ids_give_zero_vectors_under_xla(kind):
    layer = LAYERS[kind]()
    layer(np.array([[1]]))  # built before compiling
    ids = np.array([[1.0, np.nan, 1e10, -1e10, 2.0]], dtype="float32")
    got = np.asarray(compiled(layer)(ids))
    np.testing.assert_array_equal(got[0, 1:4], np.zeros((3, WIDTH)))
    want = np.asarray(layer(np.array([1, 2])))
    np.testing.assert_allclose(got[0, [0, 4]], want, rtol=1e-6, atol=1e-6)
    assert np.abs(got[0, 0]).sum() > 0


# --- issue 32 item 7: a fractional id is no id (60.9 was read as token 60) -------------


@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_fractional_ids_are_refused_eagerly_with_their_value(kind):
    layer = LAYERS[kind]()
    np.testing.assert_array_equal(layer(np.array([2.0, 0.0])), layer(np.array([2, 0])))
    with pytest.raises(ValueError, match=re.escape(
            "must hold whole-number token ids: a fractional id is not an id (it would "
            "silently be truncated to another token). Received: [0.5, 60.9]")):
        layer(np.array([[60.9, 1.0], [0.5, 60.9]]))


@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_fractional_ids_give_zero_vectors_when_compiled(kind):
    layer = LAYERS[kind]()
    layer(np.array([[1]]))  # built before compiling
    got = np.asarray(compiled(layer)(np.array([[60.9, 60.0, -0.5, 2.0]], dtype="float32")))
    np.testing.assert_array_equal(got[0, [0, 2]], np.zeros((2, WIDTH)))
    want = np.asarray(layer(np.array([60, 2])))
    np.testing.assert_allclose(got[0, [1, 3]], want, rtol=1e-6, atol=1e-6)


def test_string_ids_are_a_type_error_naming_them():
    with pytest.raises(TypeError, match=re.escape(
            "`token_ids` of layer `sub_embedding") + r".*must hold integer token ids .*"
            r"Received: .* of dtype <U3, e\.g\. np\.str_\('one'\)|"
            r"Received: .* of dtype <U3, e\.g\. 'one'"):
        random_sub()(np.array([["one", "two"]]))


@pytest.mark.parametrize("kind", ["sub_random", "alone_volatile", "define_over_stored_codes"])
def test_eager_error_reports_the_real_float_values(kind):
    layer = LAYERS[kind]()
    with pytest.raises(ValueError, match=r"out-of-range ids \[10000000000\.0, nan\]"):
        layer(np.array([[1.0, np.nan, 1e10]], dtype="float32"))


# --- item 9: int64 ids are range-checked before any narrowing -------------------------


@pytest.mark.tensorflow_only(
    reason="jax.jit narrows int64 inputs to int32 before any layer code runs (without "
           "jax_enable_x64); the eager JAX case is the next test")
def test_large_int64_ids_are_rejected_eagerly_and_zeroed_when_compiled():
    layer = random_sub()
    big = np.array([2**32 + 5, 5], dtype=np.int64)
    with pytest.raises(ValueError, match=r"out-of-range ids \[4294967301\]"):
        layer(big)
    got = np.asarray(tf.function(layer, jit_compile=True)(tf.constant(big)))
    np.testing.assert_array_equal(got[0], np.zeros(WIDTH))
    np.testing.assert_array_equal(got[1], layer(np.array([5]))[0])


LARGE_INT64_ON_JAX = """
import numpy as np
from keras_subembed.layers import ALONEEmbedding, SubEmbedding
for layer in (SubEmbedding(100, 12, num_tables=2, assignment="random", seed=1),
              ALONEEmbedding(100, 12, seed=1)):
    try:
        layer(np.array([2**32 + 5, 5], dtype=np.int64))
    except ValueError as error:
        assert "out-of-range ids [4294967301]" in str(error), error
    else:
        raise SystemExit("2**32 + 5 was accepted")
    layer(np.array([99, 5], dtype=np.int64))  # in range: fine after narrowing
print("ok")
"""


def test_large_int64_ids_are_rejected_on_jax(capsys):
    if keras.backend.backend() == "jax":
        # This process is on JAX: the check runs here (a fresh Python cost ~20 s).
        exec(LARGE_INT64_ON_JAX, {})
        assert capsys.readouterr().out == "ok\n"
        return
    # On TensorFlow, JAX runs in a process of its own.
    env = dict(os.environ, KERAS_BACKEND="jax")
    result = subprocess.run([sys.executable, "-c", LARGE_INT64_ON_JAX], capture_output=True,
                            text=True, env=env, cwd=os.getcwd())
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]


# --- item 11: ALONE p0 whose binary filters degenerate ---------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(p0=0.9999999), r"gives all-zero filters.*Use p0 in \(6\.22302e-61, 0\.9999997616\)"),
        (dict(p0=1e-9, num_source_matrices=1),
         r"gives identical filters for every id.*Use p0 in \(2\.98023e-08, 0\.9999999702\)"),
    ],
)
def test_degenerate_p0_is_rejected_naming_the_usable_range(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ALONEEmbedding(100, 8, **kwargs)


def test_p0_inside_the_bit_resolution_still_refused_when_filters_collapse():
    # Issue 20 item 12: drawable bits are not enough; nearly every filter is the same.
    for p0, num_matrices in [(0.9999997, 8), (3e-8, 1)]:
        with pytest.raises(ValueError, match="These ALONE settings collapse the filters"):
            ALONEEmbedding(100, 8, p0=p0, num_source_matrices=num_matrices, seed=3)
    # p0 does not matter for real filters
    ALONEEmbedding(100, 8, filter_kind="real", p0=0.9999999)


# --- crashes and unhelpful errors ------------------------------------------------------


def test_all_reserved_digit_logits_work_for_any_batch():
    layer = SubEmbedding(3, 6, num_tables=3, reserved_ids=(0, 1, 2))
    hidden = np.random.default_rng(0).normal(size=(2, 6)).astype("float32")
    table = np.asarray(layer.embedding_table())
    np.testing.assert_allclose(layer(hidden, reverse=True), hidden @ table.T, rtol=1e-6, atol=1e-6)


@pytest.mark.tensorflow_only(reason="ragged tensors are TensorFlow's")
def test_ragged_ids_are_refused_clearly():
    with pytest.raises(ValueError, match="take dense token ids. Received a RaggedTensor"):
        random_sub()(tf.ragged.constant([[1, 2], [3]]))


def test_from_pretrained_accepts_an_explicit_codes_array():
    table = np.random.default_rng(0).normal(size=(20, 4)).astype("float32")
    codes = np.stack([np.arange(20) % 5, np.arange(20) // 5], axis=1)
    layer = SubEmbedding.from_pretrained(table, assignment=codes)
    np.testing.assert_array_equal(layer.code_array(), codes)
    assert (layer.num_tables, layer.rows_per_table) == (2, 5)


def test_numpy_scalars_are_accepted_as_keras_does():
    alone = ALONEEmbedding(np.int64(100), np.int32(16), p0=np.float32(0.25),
                           dropout=np.float64(0.1), volatile=np.bool_(False), seed=np.uint32(4))
    assert (alone.input_dim, alone.p0, alone.dropout, alone.volatile, alone.seed) == (
        100, 0.25, pytest.approx(0.1), False, 4)
    assert type(alone.input_dim) is int and type(alone.p0) is float
    sub = SubEmbedding(100, 8, num_tables=np.int64(2), rows_per_table=np.int16(10))
    assert (sub.num_tables, sub.rows_per_table) == (2, 10)
    define = DeFINEEmbedding(100, 8, map_dim=np.int64(8), expand_dim=16, depth=2,
                             dropout=np.float32(0.0))
    assert define.map_dim == 8


@pytest.mark.parametrize("cls", [SubEmbedding, ALONEEmbedding])
def test_negative_seed_names_seed(cls):
    with pytest.raises(ValueError, match=re.escape(
            "`seed` must be an int in [0, 2**32) or None. Received: seed=-1")):
        cls(100, 8, seed=-1)


def test_explicit_codes_too_large_are_rejected_before_any_allocation():
    codes = np.stack([np.arange(10) % 5, np.arange(10) // 5], axis=1)
    codes[3, 0] = 2**40
    with pytest.raises(ValueError, match=r"go up to 1099511627776.*input_dim=10"):
        SubEmbedding(10, 4, assignment=codes)
    with pytest.raises(ValueError, match=r"`rows_per_table` must be at most 2\*\*31 - 1"):
        SubEmbedding(10, 4, assignment=codes, rows_per_table=2**40 + 1)


@pytest.mark.parametrize("cls", [SubEmbedding, ALONEEmbedding, DeFINEEmbedding])
def test_integer_dtype_is_refused_clearly(cls):
    with pytest.raises(ValueError, match=r"must be a floating-point dtype.*dtype='int32'"):
        cls(100, 8, dtype="int32")


def test_rank0_id_into_define():
    layer = LAYERS["define_over_stored_codes"]()
    vector = layer(np.int32(7))
    assert tuple(vector.shape) == (WIDTH,)
    np.testing.assert_allclose(vector, layer(np.array([7]))[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["alone_volatile", "define_over_stored_codes"])
def test_freeze_after_predict_takes_effect(kind):
    layer = LAYERS[kind]()
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, layer(ids))
    batch = np.array([[1, 5, 9], [2, 3, 4]], dtype="int32")
    before = model.predict(batch, verbose=0)
    layer.freeze()
    # Zero every weight the computed path reads: only the cache can still
    # give the old vectors.
    for weight in layer.trainable_weights:
        weight.assign(np.zeros(weight.shape, weight.dtype))
    np.testing.assert_allclose(model.predict(batch, verbose=0), before, rtol=1e-6, atol=1e-6)
