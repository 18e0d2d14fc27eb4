import json

import keras
import numpy as np
import pytest

from keras_subembed.assignment import digit_codes
from keras_subembed.assignment import pack_codes
from keras_subembed.assignment import product_codes
from keras_subembed.assignment import unpack_codes
from keras_subembed.layers import SubEmbedding
from keras_subembed.layers import gather_layout
from keras_subembed.layers import sub_embedding
from tests.layers.layer_contract import assert_compiled_matches_eager
from tests.layers.layer_contract import assert_float32_close
from tests.layers.layer_contract import assert_keras_file_came_back
from tests.layers.layer_contract import assert_masked_lm_head_trains
from tests.layers.layer_contract import assert_tflite_matches_keras
from tests.layers.layer_contract import compiled
from tests.layers.layer_contract import keras_files_moved_to_the_other_backend
from tests.layers.layer_contract import masked_lm_model
from tests.layers.layer_contract import tflite_masked_lm
from tests.layers.layer_contract import traced_shapes
from tests.tflite_utils import assert_no_table_sized_tensor

VOCAB = 300
WIDTH = 16
RESERVED = (0, 101, 7)
# Product codes of a random table: tokens may share tuples; M=16 packs two per byte.
PRODUCT_CODES = product_codes(
    np.random.default_rng(5).normal(size=(VOCAB, WIDTH)).astype("float32"),
    num_tables=8,
    rows_per_table=16,
    reserved_ids=RESERVED,
)

VARIANTS = {
    "digits": dict(),
    "digits_reserved": dict(reserved_ids=RESERVED),
    "random": dict(assignment="random", seed=3),
    "random_reserved": dict(assignment="random", seed=3, reserved_ids=RESERVED),
    "one_table": dict(num_tables=1),
    "uneven_widths": dict(num_tables=5),
    "product_packed": dict(assignment=PRODUCT_CODES, distinct_codes=False, reserved_ids=RESERVED),
    "product_unpacked": dict(
        assignment=PRODUCT_CODES, distinct_codes=False, reserved_ids=RESERVED, pack_codes=False
    ),
    # 2-bit codes, four per byte, uneven widths (16 / 5) and a part-filled last byte.
    "packed_2bit": dict(assignment="random", seed=4, num_tables=5, rows_per_table=4),
    # Every vector scaled by one of 256 levels picked by a stored byte per token.
    "random_row_scales": dict(assignment="random", seed=3, reserved_ids=RESERVED, row_scales=True),
    # Every vector multiplied by a stored (d, d) rotation; with row scales, both apply.
    "random_rotation": dict(assignment="random", seed=3, reserved_ids=RESERVED, rotation=True,
                            row_scales=True),
}


def make_layer(variant, vocab=VOCAB, width=WIDTH, **kwargs):
    layer = SubEmbedding(
        vocab,
        width,
        embeddings_initializer=keras.initializers.RandomNormal(seed=11),
        **{**VARIANTS[variant], **kwargs},
    )
    if layer.row_scales:  # levels other than the initial ones, on every level code
        layer.build()
        rng = np.random.default_rng(6)
        layer.scale_levels.assign(rng.uniform(0.5, 2.0, size=256).astype("float32"))
        layer.scale_codes.assign(rng.integers(0, 256, size=vocab).astype("uint8"))
    if layer.rotation:  # a rotation other than the initial identity
        layer.build()
        rotation, _ = np.linalg.qr(np.random.default_rng(8).normal(size=(width, width)))
        layer.rotation_matrix.assign(rotation.astype("float32"))
    return layer


def numpy_lookup(layer, ids):
    """Reference: concatenate row code[n, k] of each sub-table."""
    if layer.codes is None:
        codes = digit_codes(
            layer.input_dim, layer.num_tables, layer.rows_per_table, layer.reserved_ids
        )
    elif layer.pack_codes:
        codes = unpack_codes(np.asarray(layer.codes), layer.rows_per_table, layer.num_tables)
    else:
        codes = np.asarray(layer.codes).astype(np.int64)
    tables = [np.asarray(table) for table in layer.sub_tables]
    vectors = np.concatenate([table[codes[ids, k]] for k, table in enumerate(tables)], axis=-1)
    if layer.rotation:
        vectors = vectors @ np.asarray(layer.rotation_matrix)
    if layer.row_scales:
        scales = np.asarray(layer.scale_levels)[np.asarray(layer.scale_codes)[ids]]
        vectors = vectors * scales[..., None]
    return vectors


def assert_lookup_equal(layer, got, want):
    """Copies of rows are exact; a rotation's float32 matmul sums in its backend's order."""
    if layer.rotation:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


# --- sizes -----------------------------------------------------------------


@pytest.mark.parametrize("num_tables, trainable", [(2, 115_200), (3, 18_944), (8, 2_048)])
def test_trainable_counts_match_the_paper(num_tables, trainable):
    layer = SubEmbedding(50_265, 512, num_tables=num_tables)
    report = layer.compression_report()
    assert report.trainable_params == trainable
    assert report.dense_params == 50_265 * 512
    assert report.non_trainable_params == 0  # digits store no codes


def test_report_counts_stored_codes_bytes():
    layer = SubEmbedding(50_265, 512, num_tables=3, assignment="random", seed=0)
    report = layer.compression_report()
    assert layer.codes.dtype == "uint8"
    assert report.non_trainable_params == 50_265 * 3
    assert report.stored_bytes == 18_944 * 4 + 50_265 * 3
    assert report.compression_ratio == pytest.approx(50_265 * 512 * 4 / report.stored_bytes)
    assert json.loads(report.to_json())["trainable_params"] == 18_944
    assert "18,944" in str(report)


def test_code_dtype_grows_with_rows():
    layer = SubEmbedding(300, 4, num_tables=1, assignment="random", seed=0)
    layer.build()
    assert layer.rows_per_table == 300 and layer.codes.dtype == "int16"


def test_widths_differ_by_at_most_one_and_sum_to_output_dim():
    layer = SubEmbedding(100, 17, num_tables=5)
    assert layer.sub_widths == [4, 4, 3, 3, 3]
    assert layer(np.array([[1, 2]])).shape == (1, 2, 17)


def test_default_rows_is_the_minimum():
    assert SubEmbedding(27, 6, num_tables=3).rows_per_table == 3
    assert SubEmbedding(28, 6, num_tables=3).rows_per_table == 4
    assert SubEmbedding(30_522, 6, num_tables=3, reserved_ids=range(5)).rows_per_table == 34


# --- values ----------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_lookup_equals_concatenated_sub_vectors(variant):
    layer = make_layer(variant)
    ids = np.array([[0, 1, 7, 101], [299, 150, 3, 64]])
    assert_lookup_equal(layer, layer(ids), numpy_lookup(layer, ids))


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_id_has_a_distinct_vector(variant):
    table = np.asarray(make_layer(variant).embedding_table())
    assert table.shape == (VOCAB, WIDTH)
    assert len(np.unique(table, axis=0)) == VOCAB


def test_digit_codes_are_computed_in_graph_with_corrected_formula():
    layer = SubEmbedding(1000, 6, num_tables=3, rows_per_table=10)
    layer.build()
    assert len(layer.weights) == 3  # nothing vocabulary-sized is stored
    codes = np.stack(layer.token_codes(np.arange(1000, dtype="int32")), axis=-1)
    ids = np.arange(1000)
    for k in range(3):
        np.testing.assert_array_equal(codes[:, k], (ids // 10**k) % 10)


@pytest.mark.parametrize("variant", ["digits_reserved", "random_reserved"])
def test_reserved_ids_own_their_table_zero_rows(variant):
    layer = make_layer(variant)
    codes = np.stack(layer.token_codes(np.arange(VOCAB, dtype="int32")), axis=-1)
    for slot, token in enumerate(RESERVED):
        assert codes[token].tolist() == [slot] * layer.num_tables
    ordinary = np.delete(codes, RESERVED, axis=0)
    assert ordinary[:, 0].min() >= len(RESERVED)


def test_random_assignment_is_deterministic_per_seed():
    first = make_layer("random").embedding_table()
    again = make_layer("random").embedding_table()
    np.testing.assert_array_equal(first, again)
    other = SubEmbedding(VOCAB, WIDTH, assignment="random", seed=4)
    other.build()
    assert (np.asarray(other.codes) != np.asarray(make_layer("random").codes)).any()


def test_random_seed_is_drawn_and_recorded_when_none():
    layer = SubEmbedding(VOCAB, WIDTH, assignment="random")
    assert isinstance(layer.get_config()["seed"], int)


def test_explicit_codes_are_used_and_stored():
    codes = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    layer = SubEmbedding(4, 4, assignment=codes)
    assert (layer.num_tables, layer.rows_per_table) == (2, 2)
    np.testing.assert_array_equal(np.asarray(layer(np.arange(4))), numpy_lookup(layer, np.arange(4)))
    np.testing.assert_array_equal(np.asarray(layer.codes), pack_codes(codes, 2))  # M=2: packed
    np.testing.assert_array_equal(layer.code_array(), codes)
    assert layer.get_config()["assignment"] == "explicit"  # codes are weights, not config


@pytest.mark.parametrize("variant", VARIANTS)
def test_tied_logits_equal_dense_product(variant):
    layer = make_layer(variant)
    hidden = np.random.default_rng(0).normal(size=(2, 5, WIDTH)).astype("float32")
    logits = np.asarray(layer(hidden, reverse=True))
    expected = hidden @ np.asarray(layer.embedding_table()).T
    assert logits.shape == (2, 5, VOCAB)
    assert_float32_close(logits, expected, WIDTH)


def narrow_tables_layer():
    """32 tables 2 wide, stored codes that repeat down each column (as product codes)."""
    codes = np.random.default_rng(4).integers(0, 16, size=(VOCAB, 32))
    return SubEmbedding(
        VOCAB,
        64,
        assignment=codes,
        rows_per_table=16,
        embeddings_initializer=keras.initializers.RandomNormal(seed=11),
    )


@pytest.mark.parametrize("along_columns", [False, True], ids=["row_layout", "column_layout"])
@pytest.mark.parametrize("variant", ["random", "random_reserved", "narrow_tables", "random_row_scales",
                                     "random_rotation"])
def test_stored_code_logits_equal_dense_product_in_both_layouts(variant, along_columns, monkeypatch):
    # The gather layout follows XLA and the device (see `_gathered_logits`);
    # both must give the same logits, eager and compiled, wherever tests run.
    monkeypatch.setattr(sub_embedding, "column_gathers_are_fast", lambda: along_columns)
    layer = narrow_tables_layer() if variant == "narrow_tables" else make_layer(variant)
    width = layer.output_dim
    hidden = np.random.default_rng(0).normal(size=(2, 5, width)).astype("float32")
    expected = hidden @ np.asarray(layer.embedding_table()).T
    for function in (lambda h: layer(h, reverse=True), compiled(lambda h: layer(h, reverse=True))):
        logits = np.asarray(function(hidden))
        assert logits.shape == (2, 5, VOCAB)
        assert_float32_close(logits, expected, width)


@pytest.mark.parametrize(
    "variant", ["digits_reserved", "random", "uneven_widths", "packed_2bit", "random_row_scales",
                "random_rotation"]
)
def test_gpu_layout_of_the_lookup_equals_the_concatenation(variant, monkeypatch):
    # Where JAX compiles for a GPU, the sub-vectors are zero-padded and summed
    # instead of concatenated (`side_by_side`); run that layout here: the
    # vectors must be the concatenation's, eager and compiled.
    monkeypatch.setattr(sub_embedding, "side_by_side", gather_layout.zero_padded_sum)
    layer = make_layer(variant)
    layer.build()
    ids = np.random.default_rng(2).integers(0, VOCAB, size=(3, 7)).astype("int32")
    expected = numpy_lookup(layer, ids)
    for function in (layer, compiled(lambda ids: layer(ids))):
        assert_lookup_equal(layer, function(ids), expected)


@pytest.mark.parametrize("variant", ["digits_reserved", "random"])
def test_tied_logits_never_build_the_dense_table(variant):
    vocab, width = 5000, 48
    layer = make_layer(variant, vocab=vocab, width=width)
    hidden = np.zeros((3, width), "float32")
    shapes = traced_shapes(lambda hidden: layer(hidden, reverse=True), hidden)
    assert (3, vocab) in shapes
    for shape in shapes:
        assert shape not in {(vocab, width), (width, vocab)}, shape
        assert None in shape or int(np.prod(shape)) < vocab * width, shape


# --- masks, dtypes -------------------------------------------------------------


def test_compute_mask_like_embedding():
    layer = SubEmbedding(VOCAB, WIDTH, mask_zero=True)
    ids = np.array([[3, 0, 5]])
    np.testing.assert_array_equal(layer.compute_mask(ids), [[True, False, True]])
    assert layer.compute_mask(np.zeros((1, 3, WIDTH), "float32")) is None
    assert SubEmbedding(VOCAB, WIDTH).compute_mask(ids) is None
    inputs = keras.Input((None,), dtype="int32")
    pooled = keras.layers.GlobalAveragePooling1D()(layer(inputs))
    model = keras.Model(inputs, pooled)
    vectors = np.asarray(layer(np.array([[3, 5]])))
    assert_float32_close(model(ids), vectors.mean(axis=1), 3)


def test_mixed_precision_policy():
    layer = SubEmbedding(VOCAB, WIDTH, dtype="mixed_float16")
    out = layer(np.array([[1, 2]]))
    assert out.dtype == "float16"
    assert layer.sub_tables[0].dtype == "float32"
    assert layer(np.ones((1, WIDTH), "float16"), reverse=True).dtype == "float16"


# --- bad input -----------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(input_dim=0), r"`input_dim` must be a positive integer. Received: input_dim=0"),
        (dict(output_dim=-3), r"`output_dim` must be a positive integer. Received: output_dim=-3"),
        (dict(output_dim=2.5), r"output_dim=2.5 \(of type float\)"),
        (dict(num_tables=0), r"`num_tables` must be a positive integer. Received: num_tables=0"),
        (dict(num_tables=17), r"num_tables=17, output_dim=16"),
        (dict(rows_per_table=0), r"`rows_per_table` must be a positive integer"),
        (dict(rows_per_table=6), r"rows_per_table=6.*smallest rows_per_table that works is 7"),
        (dict(rows_per_table=3, reserved_ids=(0, 1, 2)), r"3 reserved ids.*works is 8"),
        (dict(assignment="kmeans"), r"`assignment` must be .*Received: assignment='kmeans'"),
        (dict(assignment="random", seed="x"), r"`seed` must be an int"),
        (dict(reserved_ids=(300,)), r"reserved_ids.*\[0, input_dim=300\).*id 300"),
        (dict(reserved_ids=(4, 4)), r"`reserved_ids` must be distinct"),
        (dict(mask_zero="yes"), r"`mask_zero` must be a bool"),
    ],
)
def test_constructor_errors_name_the_argument(kwargs, message):
    arguments = dict(input_dim=VOCAB, output_dim=WIDTH, num_tables=3)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        SubEmbedding(**arguments)


def test_explicit_code_errors_name_the_ids():
    with pytest.raises(ValueError, match=r"ids \[0, 2\] share code \(0, 1\)"):
        SubEmbedding(4, 4, assignment=np.array([[0, 1], [1, 0], [0, 1], [1, 1]]))
    with pytest.raises(ValueError, match=r"rows_per_table=2\).*ids 3"):
        SubEmbedding(4, 4, rows_per_table=2, assignment=np.array([[0, 1], [1, 0], [0, 0], [2, 1]]))
    with pytest.raises(ValueError, match=r"shape \(4, \?\).*Received shape \(3, 2\)"):
        SubEmbedding(4, 4, assignment=np.zeros((3, 2), int))
    with pytest.raises(ValueError, match="ordinary ids: 0"):
        SubEmbedding(4, 4, reserved_ids=(0,), assignment=np.array([[0, 0], [1, 0], [0, 1], [1, 1]]))


def test_eager_out_of_range_ids_raise_naming_ids_and_range():
    layer = make_layer("digits")
    with pytest.raises(ValueError, match=r"\[0, input_dim=300\).*out-of-range ids \[-1, 300\]"):
        layer(np.array([[4, 300, -1]]))


def test_compiled_out_of_range_ids_give_zero_vectors():
    layer = make_layer("digits_reserved")
    layer.build()
    ids, functions = np.array([[5, VOCAB, -1]], "int32"), [compiled(layer)]
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        functions.append(tf.function(layer, jit_compile=False))
        # An int64 id beyond int32 (JAX has no int64 without x64: jit narrows
        # its inputs to int32 before any layer code runs).
        ids = np.array([[5, VOCAB, -1, 2**32 + 5]], "int64")
    for function in functions:
        out = np.asarray(function(ids))
        np.testing.assert_array_equal(out[0, 0], numpy_lookup(layer, np.array(5)))
        np.testing.assert_array_equal(out[0, 1:], np.zeros((ids.shape[1] - 1, WIDTH)))


# --- compiled paths --------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_xla_matches_eager_forward_reverse_and_gradient(variant):
    ids = np.random.default_rng(1).integers(0, VOCAB, size=(4, 9))
    hidden = np.random.default_rng(2).normal(size=(4, 3, WIDTH)).astype("float32")
    assert_compiled_matches_eager(make_layer(variant), ids, hidden)


def test_masked_lm_head_ties_to_the_layer_and_trains_with_xla():
    layer = make_layer("random_reserved")
    head = assert_masked_lm_head_trains(layer, VOCAB)
    # Tied: besides the layer's own weights the head has only dense, norm, bias.
    own = {id(w) for w in layer.weights}
    head_params = sum(np.prod(w.shape) for w in head.weights if id(w) not in own)
    assert head_params == WIDTH * WIDTH + WIDTH + 2 * WIDTH + VOCAB


# --- serialization -----------------------------------------------------------------


@pytest.mark.parametrize("variant", ["digits_reserved", "random", "uneven_widths", "random_row_scales",
                                     "random_rotation"])
def test_config_round_trips_exactly(variant):
    layer = make_layer(variant, mask_zero=True, embeddings_regularizer="l2")
    config = layer.get_config()
    clone = SubEmbedding.from_config(json.loads(json.dumps(config)))
    assert clone.get_config() == config
    clone.build()
    layer.build()
    if layer.codes is not None:
        np.testing.assert_array_equal(clone.codes, layer.codes)


def test_row_scales_need_stored_codes():
    with pytest.raises(ValueError, match=r'`row_scales=True` needs stored codes; assignment="digits"'):
        SubEmbedding(VOCAB, WIDTH, row_scales=True)
    with pytest.raises(ValueError, match=r"`row_scales` must be a bool"):
        SubEmbedding(VOCAB, WIDTH, assignment="random", row_scales="yes")


def test_pretrained_row_scales_give_rows_their_own_norms():
    rng = np.random.default_rng(3)
    table = (rng.normal(size=(2000, 24)) * rng.uniform(0.1, 4.0, size=(2000, 1))).astype("float32")
    kwargs = dict(num_tables=4, rows_per_table=16, reserved_ids=RESERVED)
    plain = SubEmbedding.from_pretrained(table, **kwargs)
    scaled = SubEmbedding.from_pretrained(table, row_scales=True, **kwargs)
    want = np.linalg.norm(table, axis=1)
    ratio = np.linalg.norm(np.asarray(scaled.embedding_table()), axis=1) / want
    # 255 levels on a log axis: every ordinary row within a few percent of its norm.
    ordinary = np.delete(np.arange(2000), RESERVED)
    assert np.abs(ratio[ordinary] - 1).max() < 0.05
    plain_ratio = np.linalg.norm(np.asarray(plain.embedding_table()), axis=1) / want
    assert np.abs(plain_ratio[ordinary] - 1).mean() > 5 * np.abs(ratio[ordinary] - 1).mean()
    # Directions are the plain layer's; reserved rows stay exact on level 1.0.
    np.testing.assert_array_equal(scaled.code_array(), plain.code_array())
    np.testing.assert_array_equal(np.asarray(scaled.embedding_table())[list(RESERVED)], table[list(RESERVED)])
    assert (scaled.compression_report().stored_bytes
            == plain.compression_report().stored_bytes + 2000 + 256 * 4)


def test_rotation_is_a_bool_and_is_fitted_for_product_codes_only():
    with pytest.raises(ValueError, match=r"`rotation` must be a bool. Received: rotation='yes'"):
        SubEmbedding(VOCAB, WIDTH, assignment="random", rotation="yes")
    table = np.random.default_rng(0).normal(size=(200, 8)).astype("float32")
    with pytest.raises(ValueError, match=r'`rotation=True` fits a rotation for product codes: '
                                         r'pass assignment="product". Received: '
                                         r"assignment='clustered'"):
        SubEmbedding.from_pretrained(table, num_tables=2, assignment="clustered", rotation=True)
    with pytest.raises(ValueError, match=r"`rotation` must be a bool. Received: rotation=1"):
        SubEmbedding.from_pretrained(table, num_tables=2, rotation=1)


def correlated_table(rows=3000, width=24, seed=0):
    """Columns of unequal variance, mixed: what plain product codes rebuild worst."""
    rng = np.random.default_rng(seed)
    table = (rng.normal(size=(rows, width)) * np.linspace(3, 0.2, width)) @ rng.normal(
        size=(width, width))
    return table.astype("float32")


def test_pretrained_rotation_rebuilds_a_correlated_table_better_for_its_own_bytes():
    table = correlated_table()
    kwargs = dict(num_tables=6, rows_per_table=16, reserved_ids=RESERVED[:2])
    plain = SubEmbedding.from_pretrained(table, **kwargs)
    rotated = SubEmbedding.from_pretrained(table, rotation=True, **kwargs)

    def error(layer):
        rebuilt = np.asarray(layer.embedding_table())
        return float(np.sum((rebuilt - table) ** 2) / np.sum(table**2))

    assert error(rotated) < 0.6 * error(plain)  # measured: 0.13 against 0.30
    rotation = np.asarray(rotated.rotation_matrix)
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(24), atol=1e-5)
    # The layer is its codes' rows side by side, times the stored matrix.
    np.testing.assert_allclose(np.asarray(rotated.embedding_table()),
                               numpy_lookup(rotated, np.arange(3000)), rtol=1e-5, atol=1e-5)
    # Reserved ids keep their exact rows; the rotation's floats are counted.
    np.testing.assert_allclose(np.asarray(rotated.embedding_table())[list(RESERVED[:2])],
                               table[list(RESERVED[:2])], atol=1e-4)
    assert (rotated.compression_report().stored_bytes
            == plain.compression_report().stored_bytes + 24 * 24 * 4)


def test_explicit_codes_config_round_trip():
    codes = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    config = SubEmbedding(4, 4, assignment=codes, reserved_ids=()).get_config()
    clone = SubEmbedding.from_config(json.loads(json.dumps(config)))
    assert clone.get_config() == config
    assert clone.assignment == "explicit"


MOVED_VARIANTS = ["random_reserved", "random_row_scales", "random_rotation"]


@pytest.fixture(scope="module")
def moved_to_jax(tmp_path_factory):
    """Each variant's masked-LM model and inputs, saved and moved to the other backend
    in one fresh process for both (a process start imports TensorFlow, JAX and Keras)."""
    cases = {}
    for variant in MOVED_VARIANTS:
        model, _ = masked_lm_model(make_layer(variant))
        ids = np.random.default_rng(5).integers(0, VOCAB, size=(3, 7)).astype("int32")
        positions = np.array([[0, 2]] * 3, dtype="int32")
        cases[variant] = (model, [ids, positions], None)
    folder = tmp_path_factory.mktemp("moved")
    failures = keras_files_moved_to_the_other_backend(cases, folder)
    return {variant: (*cases[variant][:2], folder / variant, failures[variant])
            for variant in cases}


@pytest.mark.tensorflow_only(reason="both directions in one round trip (saved here, loaded and "
                              "saved again on JAX, reloaded here): the JAX run would repeat it")
@pytest.mark.parametrize("variant", MOVED_VARIANTS)
def test_keras_file_moves_between_backends(variant, moved_to_jax):
    model, inputs, path, failure = moved_to_jax[variant]
    # A rotation is one more float32 matmul, which each backend sums in its own order
    # (measured: 1.4e-5 of the scale); a wrong weight would move values by O(1).
    tolerance = 1e-4 if variant == "random_rotation" else 1e-5
    assert_keras_file_came_back(model, inputs, path, failure, tolerance=tolerance)


# --- TFLite ---------------------------------------------------------------------------


@pytest.mark.tensorflow_only(reason="TFLite conversion")
@pytest.mark.parametrize("variant", ["digits_reserved", "random", "random_row_scales",
                                     "random_rotation"])
def test_tflite_builtins_only_matches_keras(variant):
    vocab, width = 30_522, 64
    layer = make_layer(variant, vocab=vocab, width=width, reserved_ids=(0, 100, 101, 102, 103))
    runner, model = tflite_masked_lm(layer)
    assert_no_table_sized_tensor(runner.tensor_shapes(), vocab, width)
    assert "GATHER" in runner.op_names()
    assert_tflite_matches_keras(runner, model, vocab, width)


@pytest.mark.tensorflow_only(reason="TFLite conversion")
def test_tflite_of_column_layout_logits_is_builtins_only_and_matches(monkeypatch):
    # A model converted on a GPU machine traces the gathers along columns.
    monkeypatch.setattr(sub_embedding, "column_gathers_are_fast", lambda: True)
    vocab, width = 30_522, 64
    layer = make_layer("random", vocab=vocab, width=width, reserved_ids=(0, 100, 101, 102, 103))
    runner, model = tflite_masked_lm(layer)
    assert_no_table_sized_tensor(runner.tensor_shapes(), vocab, width)
    assert_tflite_matches_keras(runner, model, vocab, width)


def test_assignment_options_must_be_a_dict_of_the_assignments_own_options():
    table = np.random.default_rng(0).normal(size=(60, 8)).astype("float32")
    with pytest.raises(TypeError, match=r"`assignment_options` must be a dict of the "
                                        r"assignment's own options.*Received: "
                                        r"assignment_options='balanced'"):
        SubEmbedding.from_pretrained(table, 2, 8, assignment_options="balanced")
    with pytest.raises(ValueError, match=r"`assignment_options` holds 'seed', an argument of "
                                         r"`from_pretrained` itself: pass it as such "
                                         r"\(e\.g\. seed=\.\.\.\)\. Received: "
                                         r"assignment_options=\{'seed': 5\}"):
        SubEmbedding.from_pretrained(table, 2, 8, assignment_options={"seed": 5})
