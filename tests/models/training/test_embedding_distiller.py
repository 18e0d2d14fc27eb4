import re

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed.models import EmbeddingDistiller
from keras_subembed.models import compress_backbone
from keras_subembed.optimizers import LayerRateAdamW

VOCAB = 90
WORDS = [f"w{i}" for i in range(VOCAB - 5)]
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS


def make_pair(seed=0, num_layers=2):
    """A tiny BERT teacher and its DeFINE student. The training tests take
    `num_layers=1`: what they check does not depend on depth, and tracing the
    train step (most of their time) grows with the layers."""
    keras.utils.set_random_seed(seed)
    teacher = keras_hub.models.BertBackbone(
        VOCAB, num_layers=num_layers, num_heads=2, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=16, dropout=0.0)
    # DeFINE starts from its own initialisation, far from the teacher: plenty
    # for distillation to recover (a fitted SubEmbedding starts near its optimum).
    student = compress_backbone(teacher, "define", {"map_dim": 8, "expand_dim": 32, "depth": 2})
    return teacher, student


def token_batches(count=96, length=10, seed=0):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, VOCAB, (count, length)).astype("int32")
    padding_mask = (np.arange(length) < rng.integers(3, length + 1, (count, 1))).astype("int32")
    return {"token_ids": token_ids * padding_mask, "padding_mask": padding_mask}


def test_fit_lowers_the_loss_and_brings_the_student_closer():
    teacher, student = make_pair(num_layers=1)
    train = token_batches(count=768, seed=0)
    teacher_weights = [w.copy() for w in teacher.get_weights()]
    distiller = EmbeddingDistiller(teacher, student)
    distiller.compile(learning_rate=3e-4, embedding_learning_rate=2e-3)
    # Distance to the teacher, measured outside training (no running average).
    before = distiller.evaluate(train, batch_size=32, verbose=0, return_dict=True)
    history = distiller.fit(train, batch_size=32, epochs=3, verbose=0).history
    after = distiller.evaluate(train, batch_size=32, verbose=0, return_dict=True)
    assert history["loss"][-1] < history["loss"][0], history["loss"]
    assert set(history) >= {"loss", "state_loss", "sentence_cosine"}
    assert after["loss"] < 0.8 * before["loss"], (before, after)
    assert after["sentence_cosine"] > before["sentence_cosine"], (before, after)
    # The teacher is frozen.
    for got, want in zip(teacher.get_weights(), teacher_weights):
        np.testing.assert_array_equal(got, want)


def test_train_embedding_only_leaves_the_transformer_as_it_was():
    teacher, student = make_pair()
    embedding_ids = {id(w) for w in student.token_embedding.weights}
    others = {w.path: keras.ops.convert_to_numpy(w).copy() for w in student.weights
              if id(w) not in embedding_ids}
    table = np.asarray(student.token_embedding.embedding_table()).copy()
    distiller = EmbeddingDistiller(teacher, student, state_layers=(0,),
                                   sentence_loss_weight=0.0, train="embedding")
    distiller.compile(learning_rate=3e-4, embedding_learning_rate=2e-3)
    held_out = token_batches(count=64, seed=1)
    before = distiller.evaluate(held_out, batch_size=32, verbose=0, return_dict=True)
    distiller.fit(token_batches(count=512), batch_size=32, epochs=3, verbose=0)
    after = distiller.evaluate(held_out, batch_size=32, verbose=0, return_dict=True)
    # The embedding output depends on the token alone: it improves on unseen sequences.
    assert after["state_loss"] < 0.8 * before["state_loss"], (before, after)
    assert "sentence_cosine" not in after  # that loss is off
    for weight in student.weights:
        if id(weight) not in embedding_ids:
            np.testing.assert_array_equal(keras.ops.convert_to_numpy(weight), others[weight.path])
    assert not np.allclose(np.asarray(student.token_embedding.embedding_table()), table)


def test_raw_strings_through_the_preprocessor_and_a_checkpoint(tmp_path, monkeypatch):
    teacher, student = make_pair(num_layers=1)
    traces = []  # train_step's Python runs once per trace
    train_step = EmbeddingDistiller.train_step

    def counted_train_step(self, *args):  # (data), or (state, data) on JAX
        traces.append(1)
        return train_step(self, *args)

    monkeypatch.setattr(EmbeddingDistiller, "train_step", counted_train_step)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
        keras_hub.models.BertTokenizer(vocabulary=VOCABULARY), sequence_length=8)
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, size=rng.integers(2, 7))) for _ in range(64)]
    import tensorflow as tf  # tf.data is the input pipeline on every backend

    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(16)
    distiller = EmbeddingDistiller(teacher, student, preprocessor)
    distiller.compile(learning_rate=3e-4, embedding_learning_rate=2e-3)
    checkpoint = keras.callbacks.ModelCheckpoint(
        str(tmp_path / "student.weights.h5"), save_weights_only=True)
    history = distiller.fit(dataset, epochs=2, verbose=0, callbacks=[checkpoint]).history
    assert np.isfinite(history["loss"]).all()
    # One trace for 8 steps of one batch shape: the optimizer was built before the
    # first (on TensorFlow a trace that creates variables is traced again).
    assert len(traces) == 1, traces
    assert (tmp_path / "student.weights.h5").stat().st_size > 0


def test_layer_rate_adamw_scales_only_the_named_layer():
    embedding = keras.layers.Embedding(4, 3, name="token_embedding")
    dense = keras.layers.Dense(3, name="dense")
    embedding.build((None,))
    dense.build((None, 3))
    variables = [embedding.embeddings, dense.kernel]
    for variable in variables:
        variable.assign(np.zeros(variable.shape, "float32"))
    optimizer = LayerRateAdamW(1e-3, {"token_embedding": 10.0})
    assert [optimizer.multiplier_for(v) for v in variables] == [10.0, 1.0]
    optimizer.apply([np.ones(v.shape, "float32") for v in variables], variables)
    # Adam's first step moves by the learning rate, whatever the gradient's scale.
    np.testing.assert_allclose(keras.ops.convert_to_numpy(variables[0]), -1e-2, rtol=1e-3)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(variables[1]), -1e-3, rtol=1e-3)
    config = optimizer.get_config()
    assert config["layer_rate_multipliers"] == {"token_embedding": 10.0}
    assert LayerRateAdamW.from_config(config).layer_rate_multipliers == {"token_embedding": 10.0}
    with pytest.raises(ValueError, match=re.escape(
            "`layer_rate_multipliers['token_embedding']` must be a finite number > 0. "
            "Received: layer_rate_multipliers['token_embedding']=0")):
        LayerRateAdamW(1e-3, {"token_embedding": 0})


def test_bad_pairs_and_data_raise_clearly():
    teacher, student = make_pair()
    wide = keras_hub.models.BertBackbone(VOCAB, num_layers=2, num_heads=2, hidden_dim=8,
                                         intermediate_dim=32, max_sequence_length=16)
    with pytest.raises(ValueError, match=re.escape(
            "The teacher and the student must have the same vocabulary size and width. "
            "Teacher: (vocabulary, hidden_dim)=(90, 16); student: (90, 8).")):
        EmbeddingDistiller(teacher, wide)
    roberta = keras_hub.models.RobertaBackbone(VOCAB, num_layers=2, num_heads=2, hidden_dim=16,
                                               intermediate_dim=32, max_sequence_length=16)
    with pytest.raises(ValueError, match=re.escape(
            "The teacher takes inputs ['padding_mask', 'segment_ids', 'token_ids'] and the "
            "student ['padding_mask', 'token_ids']: they must be the same.")):
        EmbeddingDistiller(teacher, roberta)
    with pytest.raises(TypeError, match="`student` must be a keras-hub TextEmbedder or Backbone"):
        EmbeddingDistiller(teacher, keras.Sequential([keras.layers.Dense(2)]))
    with pytest.raises(ValueError, match=re.escape(
            "`state_layers` holds 5, but the encoders have hidden states 0..2")):
        EmbeddingDistiller(teacher, student, state_layers=(5,))
    with pytest.raises(ValueError, match=re.escape(
            '`train` must be "all" or "embedding". Received: train=\'transformer\'')):
        EmbeddingDistiller(teacher, student, train="transformer")
    with pytest.raises(ValueError, match="Every loss is switched off"):
        EmbeddingDistiller(teacher, student, state_layers=(), sentence_loss_weight=0)
    import tensorflow as tf

    distiller = EmbeddingDistiller(teacher, student)
    distiller.compile()
    empty = tf.data.Dataset.from_tensor_slices(token_batches()).take(0).batch(4)
    with pytest.raises(ValueError, match="The dataset `x` is empty"):
        distiller.fit(empty)


def define_pair(backbone_class, seed=0):
    """A tiny `backbone_class` teacher and its DeFINE-compressed student."""
    keras.utils.set_random_seed(seed)
    teacher = backbone_class(
        VOCAB, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=16, dropout=0.0)
    return teacher, compress_backbone(teacher, "define", {"map_dim": 8, "expand_dim": 32,
                                                          "depth": 2})


def make_roberta_pair(seed=0):
    return define_pair(keras_hub.models.RobertaBackbone, seed)


def make_distilbert_pair(seed=0):
    return define_pair(keras_hub.models.DistilBertBackbone, seed)


PAIRS = [make_pair, make_roberta_pair, make_distilbert_pair]
PAIR_IDS = ["bert", "roberta", "distilbert"]


def trainable_ids(model):
    return {id(variable) for variable in model.trainable_weights}


@pytest.mark.parametrize("make", PAIRS, ids=PAIR_IDS)
def test_train_embedding_trains_only_the_embedding_after_the_teacher_was_frozen(make):
    teacher, student = make()
    EmbeddingDistiller(teacher, student)  # freezes the shared teacher
    second = compress_backbone(teacher, "define", {"map_dim": 8, "expand_dim": 32, "depth": 2})
    distiller = EmbeddingDistiller(teacher, second, train="embedding")
    assert trainable_ids(distiller) == {id(w) for w in second.token_embedding.weights}
    assert len(distiller.trainable_weights) == len(second.token_embedding.weights)
    assert not teacher.trainable_weights


@pytest.mark.parametrize("make", PAIRS, ids=PAIR_IDS)
def test_embedding_rate_reaches_only_the_token_embedding(make):
    teacher, first = make()
    EmbeddingDistiller(teacher, first)  # the teacher is frozen, as in the main job's 2nd setting
    student = compress_backbone(teacher, "define", {"map_dim": 8, "expand_dim": 32, "depth": 2})
    distiller = EmbeddingDistiller(teacher, student)
    distiller.compile(learning_rate=1e-4, embedding_learning_rate=1e-2)
    embedding_ids = {id(w) for w in student.token_embedding.weights}
    rates = {w.path: distiller.optimizer.multiplier_for(w) for w in distiller.trainable_weights}
    for weight in distiller.trainable_weights:
        want = 100.0 if id(weight) in embedding_ids else 1.0
        assert rates[weight.path] == pytest.approx(want), weight.path
    # The pretrained position embedding trains, at the transformer's rate.
    positions = [path for path in rates if "position_embedding" in path.split("/")]
    assert positions and all(rates[path] == 1.0 for path in positions)


def test_the_teacher_as_its_own_student_is_refused():
    teacher, _ = make_pair()
    with pytest.raises(ValueError, match=re.escape(
            "`student` shares weights with `teacher`: training it would change the teacher.")):
        EmbeddingDistiller(teacher, teacher)


@pytest.mark.parametrize("arguments, error, message", [
    ({"state_loss_weight": float("inf")}, ValueError,
     "`state_loss_weight` must be a finite number >= 0. Received: state_loss_weight=inf"),
    ({"state_loss_weight": "1"}, ValueError,
     "`state_loss_weight` must be a finite number >= 0. Received: state_loss_weight='1'"),
    ({"sentence_loss_weight": float("nan")}, ValueError,
     "`sentence_loss_weight` must be a finite number >= 0. Received: sentence_loss_weight=nan"),
    ({"state_layers": (0.7,)}, ValueError,
     "`state_layers` must be an integer. Received: state_layers=0.7 (of type float)."),
    ({"state_layers": ("x",)}, ValueError,
     "`state_layers` must be an integer. Received: state_layers='x' (of type str)."),
    ({"state_layers": 1}, ValueError,
     "`state_layers` must be a list or tuple of hidden-state indices. Received: state_layers=1"),
])
def test_distiller_numbers_are_checked(arguments, error, message):
    teacher, student = make_pair()
    with pytest.raises(error, match=re.escape(message)):
        EmbeddingDistiller(teacher, student, **arguments)


@pytest.mark.parametrize("arguments, error, message", [
    ({"learning_rate": 0}, ValueError,
     "`learning_rate` must be a finite number > 0. Received: learning_rate=0"),
    ({"learning_rate": -1e-3}, ValueError,
     "`learning_rate` must be a finite number > 0. Received: learning_rate=-0.001"),
    ({"embedding_learning_rate": float("nan")}, ValueError,
     "`embedding_learning_rate` must be a finite number > 0. "
     "Received: embedding_learning_rate=nan"),
    ({"embedding_learning_rate": -1e-2}, ValueError,
     "`embedding_learning_rate` must be a finite number > 0. "
     "Received: embedding_learning_rate=-0.01"),
    ({"learning_rate": "1e-3"}, TypeError,
     "`learning_rate` must be a number; for a schedule, build the optimizer yourself"),
    ({"learning_rate": keras.optimizers.schedules.ExponentialDecay(1e-3, 10, 0.9)}, TypeError,
     "`learning_rate` must be a number; for a schedule"),
])
def test_compile_rates_are_checked(arguments, error, message):
    teacher, student = make_pair()
    distiller = EmbeddingDistiller(teacher, student)
    with pytest.raises(error, match=re.escape(message)):
        distiller.compile(**arguments)


def test_layer_rate_adamw_learning_rate_is_checked():
    with pytest.raises(ValueError, match=re.escape(
            "`learning_rate` must be a finite number > 0. Received: learning_rate=-0.1")):
        LayerRateAdamW(-0.1)
    schedule = keras.optimizers.schedules.ExponentialDecay(1e-3, 10, 0.9)
    assert LayerRateAdamW(schedule, {"token_embedding": 2.0}).layer_rate_multipliers


def test_a_reloaded_distiller_fits_on(tmp_path):
    teacher, student = make_pair(num_layers=1)
    distiller = EmbeddingDistiller(teacher, student)
    distiller.compile(learning_rate=3e-4, embedding_learning_rate=3e-3)
    distiller.save(tmp_path / "distiller.keras")
    loaded = keras.saving.load_model(tmp_path / "distiller.keras")
    assert loaded.optimizer.layer_rate_multipliers == {"token_embedding": pytest.approx(10.0)}
    history = loaded.fit(token_batches(count=32), batch_size=16, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"]).all()


@pytest.mark.parametrize("batch, message", [
    ({"token_ids": np.full((2, 4), VOCAB), "padding_mask": np.ones((2, 4), "int32")},
     f"`token_ids` must be in [0, {VOCAB}) (the vocabulary size). Received ids: [90, 90, 90, 90, 90]"),
    ({"token_ids": np.full((2, 4), 7), "padding_mask": np.ones((2, 5), "int32")},
     "`padding_mask` must have the shape of `token_ids`. Received: padding_mask.shape=(2, 5), "
     "token_ids.shape=(2, 4)"),
    ({"token_ids": np.full((2, 20), 7), "padding_mask": np.ones((2, 20), "int32")},
     "`token_ids` has sequences of 20 tokens; the model takes at most 16"),
    ({"token_ids": np.full((2, 4), 2**32 + 7), "padding_mask": np.ones((2, 4), "int32")},
     "`token_ids` holds values outside int32, which the model's int32 inputs would wrap onto "
     "other ids: [4294967303, 4294967303, 4294967303, 4294967303, 4294967303]."),
])
def test_bad_distillation_data_is_named_before_tracing(batch, message):
    teacher, student = make_pair()
    distiller = EmbeddingDistiller(teacher, student)
    distiller.compile()
    for run in (distiller.fit, distiller.evaluate):
        with pytest.raises(ValueError, match=re.escape(message)):
            run(batch, batch_size=2, verbose=0)


def test_a_dense_student_of_a_frozen_teacher_trains_its_embedding():
    teacher, first = make_pair()
    EmbeddingDistiller(teacher, first)  # freezes the shared teacher
    dense = compress_backbone(teacher, "embedding")
    distiller = EmbeddingDistiller(teacher, dense, train="embedding")
    assert trainable_ids(distiller) == {id(w) for w in dense.token_embedding.weights} != set()


def test_fit_with_nothing_trainable_is_refused():
    teacher, student = make_pair()
    distiller = EmbeddingDistiller(teacher, student, train="embedding")
    student.token_embedding.trainable = False
    distiller.compile()
    ids = np.ones((2, 4), "int32")
    with pytest.raises(ValueError, match=re.escape(
            "The distiller has no trainable weight: `fit` would change nothing.")):
        distiller.fit({"token_ids": ids, "padding_mask": ids}, epochs=1, verbose=0)


@pytest.mark.parametrize("x", [[], (), np.array([], dtype=object), None])
def test_fit_on_nothing_is_named_before_tracing(x):
    teacher, student = make_pair()
    distiller = EmbeddingDistiller(teacher, student)
    distiller.compile()
    with pytest.raises(ValueError, match=re.escape(
            "`x` is empty: there is nothing to distil on. Pass sentences") + ".*"
            + re.escape(f"Received: x={x!r}")):
        distiller.fit(x, epochs=1, verbose=0)


def test_empty_batches_masks_beyond_0_1_and_negative_decay_are_named():
    teacher, student = make_pair()
    distiller = EmbeddingDistiller(teacher, student)
    with pytest.raises(ValueError, match=re.escape(
            "`weight_decay` must be a finite number >= 0. Received: weight_decay=-1.0")):
        distiller.compile(weight_decay=-1.0)
    distiller.compile()
    empty = np.zeros((0, 8), "int32")
    with pytest.raises(ValueError, match=re.escape("`token_ids` is empty (shape (0, 8))")):
        distiller.fit({"token_ids": empty, "padding_mask": empty}, epochs=1, verbose=0)
    ids = np.ones((2, 4), "int32")
    with pytest.raises(ValueError, match=re.escape(
            "`padding_mask` must hold 0 (padding) and 1 (token) only. Received values [2]")):
        distiller.fit({"token_ids": ids, "padding_mask": ids * 2}, epochs=1, verbose=0)


def test_text_embedders_in_pooling_and_preprocessor_from_the_teacher():
    teacher_backbone, _ = make_pair(seed=2, num_layers=1)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
    teacher = keras_hub.models.BertTextEmbedder(
        teacher_backbone,
        keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=10),
        pooling_mode="cls")
    student = keras_subembed.compress(teacher, "sub", {"num_tables": 2, "rows_per_table": 16})
    distiller = EmbeddingDistiller(teacher, student)
    assert distiller.pooling == "cls" and distiller.preprocessor is teacher.preprocessor
    assert distiller.student is student.backbone and distiller.teacher is teacher.backbone
    # The sentence vectors it trains on are the embedders' own.
    batch = token_batches(count=4, seed=3)
    outputs = distiller.predict(batch, verbose=0)
    with_segments = {**batch, "segment_ids": np.zeros_like(batch["token_ids"])}
    np.testing.assert_allclose(outputs["student_sentence"],
                               keras.ops.convert_to_numpy(student(with_segments)), atol=1e-5)
    np.testing.assert_allclose(outputs["teacher_sentence"],
                               keras.ops.convert_to_numpy(teacher(with_segments)), atol=1e-5)
    # Raw strings through the teacher's preprocessor (with its segment_ids).
    before = keras.ops.convert_to_numpy(student.encode_text(["w1 w2 w3"], verbose=0))
    distiller.compile(learning_rate=1e-3, embedding_learning_rate=1e-2)
    sentences = [" ".join(WORDS[i:i + 6]) for i in range(0, 60, 3)]
    distiller.fit(sentences, batch_size=4, epochs=1, verbose=0)
    after = keras.ops.convert_to_numpy(student.encode_text(["w1 w2 w3"], verbose=0))
    assert np.abs(after - before).max() > 1e-4  # the student embedder itself was trained


def test_embedders_that_pool_differently_are_refused_unless_pooling_is_chosen():
    teacher_backbone, _ = make_pair(seed=4)
    teacher = keras_hub.models.BertTextEmbedder(teacher_backbone, pooling_mode="mean")
    student = keras_subembed.compress(teacher, "embedding")
    student_cls = keras_hub.models.BertTextEmbedder(student.backbone, pooling_mode="cls")
    with pytest.raises(ValueError, match=re.escape(
            "The teacher and the student embedders pool differently: (pooling_mode, normalize) "
            "= ('mean', True) and ('cls', True)")):
        EmbeddingDistiller(teacher, student_cls)
    assert EmbeddingDistiller(teacher, student_cls, pooling="cls").pooling == "cls"


def bert_embedder(backbone, vocabulary=VOCABULARY, sequence_length=10, **tokenizer_kwargs):
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary, **tokenizer_kwargs)
    return keras_hub.models.BertTextEmbedder(
        backbone, keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length))


def test_a_student_with_another_tokenizer_is_refused_unless_one_is_shared():
    teacher_backbone, student_backbone = make_pair(seed=5)
    teacher = bert_embedder(teacher_backbone)
    # Same size, other tokens; then the same tokens, other case folding.
    other_tokens = VOCABULARY[:5] + [f"x{i}" for i in range(VOCAB - 5)]
    for student, difference in [
            (bert_embedder(student_backbone, other_tokens), r"vocabulary: 90 tokens, sha256 \w+ "
                                                            r"vs the student's 90 tokens, sha256"),
            (bert_embedder(student_backbone, lowercase=True, strip_accents=True),
             r"lowercase: False vs the student's True; strip_accents: False vs the student's True")]:
        with pytest.raises(ValueError, match="The student embedder's tokenizer differs from the "
                           f"one the distiller trains with \\(the teacher's\\): {difference}"):
            EmbeddingDistiller(teacher, student)
        shared = EmbeddingDistiller(teacher, student, preprocessor=teacher.preprocessor)
        assert shared.preprocessor is teacher.preprocessor


def test_lengths_and_text_without_a_preprocessor_are_named_up_front():
    teacher_backbone, student_backbone = make_pair(seed=6)  # both read at most 16 tokens
    teacher = bert_embedder(teacher_backbone, sequence_length=32)
    with pytest.raises(ValueError, match=re.escape(
            "The preprocessor makes sequences of 32 tokens, but the student reads at most 16 "
            "(its `max_sequence_length`)")):
        EmbeddingDistiller(teacher, student_backbone)
    # A backbone teacher has no preprocessor: text needs one.
    distiller = EmbeddingDistiller(teacher_backbone, student_backbone)
    distiller.compile()
    import tensorflow as tf

    for text in (["w1 w2", "w3"], tf.data.Dataset.from_tensor_slices(["w1 w2"]).batch(1)):
        with pytest.raises(ValueError, match=re.escape(
                "The distiller has no preprocessor to turn text into token ids (its teacher "
                "was given as a backbone): pass `preprocessor=`")):
            distiller.fit(text, epochs=1, verbose=0)


def pair_loss_reference(student, teacher, temperature):
    """The pair loss in NumPy: KL(teacher || student) of softmax rows, 2i over 2i + 1, plus back."""
    def log_softmax(logits):
        logits = logits - logits.max(axis=-1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))

    total = 0.0
    for first, second in ((0, 1), (1, 0)):
        s = log_softmax(student[first::2] @ student[second::2].T / temperature)
        t = log_softmax(teacher[first::2] @ teacher[second::2].T / temperature)
        total += np.mean(np.sum(np.exp(t) * (t - s), axis=-1))
    return total


def test_pair_loss_is_the_kl_of_the_cross_pair_softmax_in_both_directions():
    from keras_subembed.models.training.embedding_distiller import _pair_loss

    rng = np.random.default_rng(0)
    teacher = rng.normal(size=(8, 6)).astype("float32")
    student = (teacher + 0.3 * rng.normal(size=(8, 6))).astype("float32")
    teacher /= np.linalg.norm(teacher, axis=1, keepdims=True)
    student /= np.linalg.norm(student, axis=1, keepdims=True)
    got = float(keras.ops.convert_to_numpy(_pair_loss(student, teacher, 0.1)))
    assert got == pytest.approx(pair_loss_reference(student, teacher, 0.1), rel=1e-4)
    assert got > 0.01
    assert float(keras.ops.convert_to_numpy(_pair_loss(teacher, teacher, 0.1))) == pytest.approx(
        0.0, abs=1e-6)
    # Rows 0-1 and 2-3 are the pairs: a student that keeps them scores ~0, one that swaps
    # partners (0 with 3, 2 with 1) is far off; an odd batch is refused.
    a, b = np.eye(2, dtype="float32")
    paired = np.stack([a, a, b, b])
    swapped = np.stack([a, b, b, a])
    loss = lambda s, t: float(keras.ops.convert_to_numpy(_pair_loss(s, t, 0.1)))
    assert loss(paired, paired) == pytest.approx(0.0, abs=1e-6)
    assert loss(swapped, paired) > 10.0
    with pytest.raises(Exception):
        loss(paired[:3], paired[:3])


def test_the_pair_loss_trains_shows_in_the_history_and_round_trips(tmp_path):
    teacher, student = make_pair(num_layers=1)
    distiller = EmbeddingDistiller(teacher, student, state_loss_weight=0.0, sentence_loss_weight=0.0,
                                   pair_loss_weight=2.0, pair_temperature=0.2)
    distiller.compile(learning_rate=3e-4, embedding_learning_rate=2e-3)
    train = token_batches(count=256)
    before = distiller.evaluate(train, batch_size=16, verbose=0, return_dict=True)
    history = distiller.fit(train, batch_size=16, epochs=2, verbose=0).history
    after = distiller.evaluate(train, batch_size=16, verbose=0, return_dict=True)
    assert set(history) == {"loss", "pair_loss"}
    assert after["pair_loss"] < before["pair_loss"], (before, after)
    assert after["loss"] == pytest.approx(2.0 * after["pair_loss"], rel=1e-5)
    config = distiller.get_config()
    assert (config["pair_loss_weight"], config["pair_temperature"]) == (2.0, 0.2)
    distiller.save(tmp_path / "distiller.keras")
    loaded = keras.saving.load_model(tmp_path / "distiller.keras")
    assert (loaded.pair_loss_weight, loaded.pair_temperature) == (2.0, 0.2)


@pytest.mark.parametrize("arguments, message", [
    ({"pair_loss_weight": -1.0},
     "`pair_loss_weight` must be a finite number >= 0. Received: pair_loss_weight=-1.0"),
    ({"pair_loss_weight": "10"},
     "`pair_loss_weight` must be a finite number >= 0. Received: pair_loss_weight='10'"),
    ({"pair_temperature": 0},
     "`pair_temperature` must be a finite number > 0. Received: pair_temperature=0"),
    ({"pair_temperature": float("nan")},
     "`pair_temperature` must be a finite number > 0. Received: pair_temperature=nan"),
    ({"state_loss_weight": 0.0, "sentence_loss_weight": 0.0},
     "Every loss is switched off: nothing would be trained. Received: state_layers=[0, -1], "
     "state_loss_weight=0.0, sentence_loss_weight=0.0, pair_loss_weight=0.0"),
])
def test_pair_loss_numbers_are_checked(arguments, message):
    teacher, student = make_pair()
    with pytest.raises(ValueError, match=re.escape(message)):
        EmbeddingDistiller(teacher, student, **arguments)


def test_a_seed_set_after_the_sentencepiece_tokenizer_is_explained():
    from tests.sentencepiece_utils import TEXTS
    from tests.sentencepiece_utils import bert_xlm_roberta_embedder

    def distiller():
        teacher = bert_xlm_roberta_embedder(sequence_length=12)
        student = keras_subembed.compress(teacher, "sub", {"num_tables": 4, "rows_per_table": 8})
        made = EmbeddingDistiller(teacher, student)
        made.compile(learning_rate=1e-4)
        return made

    fitted, predicted = distiller(), distiller()
    # It clears TensorFlow's kernel cache, which holds the SentencePiece model.
    keras.utils.set_random_seed(1)
    with pytest.raises(RuntimeError, match=r"set_random_seed.*after the tokenizer was made"):
        fitted.fit(list(TEXTS[:8]), batch_size=4, epochs=1, verbose=0)
    with pytest.raises(RuntimeError, match="tensorflow/text#570"):
        predicted.predict(list(TEXTS[:4]), verbose=0)
    # Models made after the seed tokenize and train.
    history = distiller().fit(list(TEXTS[:8]), batch_size=4, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])
