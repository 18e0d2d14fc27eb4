"""Train a compressed encoder to match its original on unlabelled text, with `fit`."""

import contextlib

import keras
import keras_hub
import numpy as np
import tensorflow as tf
from keras import ops

from keras_subembed.checks import check_choice
from keras_subembed.checks import check_int
from keras_subembed.checks import check_non_negative_number
from keras_subembed.checks import check_positive_number
from keras_subembed.checks import is_real

from keras_subembed.models.encoding.encoder_inputs import TokenIdsPassThrough
from keras_subembed.models.encoding.encoder_inputs import backbone_inputs
from keras_subembed.models.encoding.encoder_inputs import check_id_batch
from keras_subembed.models.encoding.encoder_inputs import is_dataset
from keras_subembed.models.encoding.encoder_inputs import narrow_ids
from keras_subembed.models.encoding.sentence_vectors import POOLING_MODES
from keras_subembed.models.encoding.sentence_vectors import sentence_vectors
from keras_subembed.optimizers.build_optimizer_before_fit import build_optimizer_before_fit
from keras_subembed.optimizers.layer_rate_adamw import LayerRateAdamW
from keras_subembed.quantization.fake_quantization import rounded_kernels
from keras_subembed.quantization.recipes import RECIPES
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.quantization.weight_recipe import WeightRecipe
from keras_subembed.tokenizer_kinds import find_tokenizer_kind

TRAINABLE_PARTS = ("all", "embedding")


def hidden_state_names(backbone):
    """Layer names whose outputs are hidden states 0..L of a keras-hub encoder.

    State 0 is the embedding output (after its layer norm), state i the
    output of transformer layer i - 1: the layout of keras-hub's BERT,
    RoBERTa, XLM-R and DistilBERT backbones and of this package's.
    """
    names = [layer.name for layer in backbone.layers]
    transformer = [name for name in names if name.startswith("transformer_layer_")]
    if "embeddings_layer_norm" not in names or not transformer:
        raise ValueError(
            f"{type(backbone).__name__} has no `embeddings_layer_norm` and "
            "`transformer_layer_<i>` layers, so its hidden states cannot be read."
        )
    return ["embeddings_layer_norm"] + transformer


def _hidden_states_model(backbone, state_indices, name):
    names = hidden_state_names(backbone)
    outputs = [backbone.get_layer(names[index]).output for index in state_indices]
    return keras.Model(backbone.input, outputs, name=name)


def _embedding_holder(backbone):
    """The top-level layer of `backbone` that holds its token embedding."""
    for layer in backbone.layers:
        if layer is backbone.token_embedding or (
            getattr(layer, "token_embedding", None) is backbone.token_embedding
        ):
            return layer
    raise ValueError(f"{type(backbone).__name__}'s token embedding is not one of its layers.")


@keras.saving.register_keras_serializable(package="keras_subembed")
class EmbeddingDistiller(TokenIdsPassThrough, keras_hub.models.Task):
    """Distils a frozen `teacher` encoder into a `student` (a compressed copy).

    Both run on the same text; the loss pulls the student's hidden states
    (`state_layers`: 0 is the embedding output, i the output of transformer
    layer i; negative indices count from the last) and its pooled sentence
    vectors towards the teacher's:

    * state loss: squared error per token over the valid tokens, divided by
      the teacher's mean squared state (scale-free), averaged over layers;
    * sentence loss: `1 - cosine` of the pooled, normalised vectors;
    * pair loss (off by default): for batches of pairs, rows `2i` and
      `2i + 1` (e.g. a sentence and its translation, from
      `distillation_dataset(pairs=...)`), each first member's softmax over
      its cosines to the batch's second members, at `pair_temperature`, and
      back: the KL divergence from the teacher's to the student's. It keeps
      the margin of the right partner over the wrong ones, which cosine to
      the teacher alone does not (cross-lingual retrieval reads that margin).
      A batch must hold whole pairs (an odd one fails), and the other pairs
      of the batch (of each replica, under a distribution strategy) are the
      wrong partners: one pair per batch gives no signal.

    Inside `fit` both run as Keras runs a model being fitted, the frozen
    teacher with its dropout too: a student that starts as the teacher's copy
    then learns to match it under the same noise, which kept each language's
    held-out cosine higher than targets from the teacher at inference
    (benchmarks/history/2026-results-diary.md, "Session 2026-11-27 (fifth)").

    `teacher` and `student` are keras-hub `TextEmbedder`s (e.g. a
    `BertTextEmbedder` and `keras_subembed.compress` of it: the pooling and
    preprocessor are read from the teacher, and training the distiller trains
    the student embedder) or their backbones. `fit` takes a
    `tf.data.Dataset` of raw strings (with a `preprocessor`) or of
    `{"token_ids", "padding_mask"}` batches. `compile()` defaults to `LayerRateAdamW`: `learning_rate` for the
    pretrained transformer and `embedding_learning_rate` for the new token
    embedding. The student is `self.backbone` (and `self.student`).

    Args:
        teacher: the original keras-hub `TextEmbedder` or encoder backbone
            (frozen here).
        student: the one to train (e.g. from `keras_subembed.compress`), with
            the teacher's inputs, vocabulary size and width.
        preprocessor: turns strings into token ids; default the teacher
            embedder's, else `None` (ids only).
        state_layers: hidden states to match (default `(0, -1)`).
        state_loss_weight, sentence_loss_weight, pair_loss_weight: weights
            of the losses (`pair_loss_weight` defaults to 0: off).
        pair_temperature: float > 0. The pair loss's softmax temperature
            (default 0.05: cosines of an encoder's sentences are crowded).
        pooling: `"mean"`, `"cls"` or `"max"` for the sentence vectors;
            default the teacher embedder's `pooling_mode`, else `"mean"`.
        train: `"all"` (every student weight the losses reach; e.g. BERT's
            pooler is frozen) or `"embedding"` (the token embedding only).
        quantize_transformer: `None`, or the name of the export recipe the
            student will ship with (e.g. `"int4_blockwise32_dynamic"`, see
            `keras_subembed.quantization.RECIPES`), or your own `WeightRecipe`: the
            distiller runs the student with its Dense / EinsumDense kernels (transformer layers,
            pooler) rounded as that recipe stores them (straight-through
            gradients to the float kernels), so
            `export_tflite(..., quantization=<that recipe>)` computes what
            was trained. The student itself stays float.

    Example:
    ```python
    teacher = keras_hub.models.TextEmbedder.from_preset(minilm_preset_dir())
    student = keras_subembed.compress(teacher, "sub", {"assignment": "product"})
    distiller = EmbeddingDistiller(teacher, student)
    distiller.compile(learning_rate=2e-5, embedding_learning_rate=1e-3)
    distiller.fit(text_dataset.batch(32), epochs=1)
    ```
    """

    def __init__(
        self,
        teacher,
        student,
        preprocessor=None,
        state_layers=(0, -1),
        state_loss_weight=1.0,
        sentence_loss_weight=1.0,
        pooling=None,
        train="all",
        quantize_transformer=None,
        pair_loss_weight=0.0,
        pair_temperature=0.05,
        **kwargs,
    ):
        shared = preprocessor is not None  # the user's choice for both encoders
        if isinstance(teacher, keras_hub.models.TextEmbedder):
            _check_same_head(teacher, student, pooling)
            pooling = teacher.pooling_mode if pooling is None else pooling
            preprocessor = teacher.preprocessor if preprocessor is None else preprocessor
        if not shared:
            _check_same_tokenizer(preprocessor, getattr(student, "preprocessor", None))
        teacher, student = _backbone_of(teacher), _backbone_of(student)
        pooling = check_choice("pooling", "mean" if pooling is None else pooling, POOLING_MODES)
        _check_pair(teacher, student)
        _check_sequence_length(preprocessor, teacher, student)
        if isinstance(quantize_transformer, dict):  # from `get_config`
            quantize_transformer = WeightRecipe.from_config(quantize_transformer)
        if quantize_transformer is not None:
            quantize_transformer = get_recipe(quantize_transformer, "quantize_transformer")
            if RECIPES.get(quantize_transformer.name) == quantize_transformer:
                quantize_transformer = quantize_transformer.name  # a table recipe, by name
        check_choice("train", train, TRAINABLE_PARTS)
        num_states = len(hidden_state_names(teacher))
        state_layers = _check_state_layers(state_layers, num_states)
        state_indices = sorted({index % num_states for index in state_layers})
        state_loss_weight = check_non_negative_number("state_loss_weight", state_loss_weight)
        sentence_loss_weight = check_non_negative_number(
            "sentence_loss_weight", sentence_loss_weight)
        pair_loss_weight = check_non_negative_number("pair_loss_weight", pair_loss_weight)
        pair_temperature = check_positive_number("pair_temperature", pair_temperature)
        if (not (state_indices and state_loss_weight > 0) and not sentence_loss_weight > 0
                and not pair_loss_weight > 0):
            raise ValueError("Every loss is switched off: nothing would be trained. Received: "
                             f"state_layers={state_layers}, state_loss_weight={state_loss_weight}, "
                             f"sentence_loss_weight={sentence_loss_weight}, "
                             f"pair_loss_weight={pair_loss_weight}")
        pooled = sentence_loss_weight > 0 or pair_loss_weight > 0

        # === Layers ===
        _freeze(teacher)
        _unfreeze_pretrained(student)
        if train == "embedding":
            holder = _embedding_holder(student)
            for layer in student.layers:
                if layer is not holder:
                    _freeze(layer)
            if holder is not student.token_embedding:
                _freeze(holder.position_embedding)
        self.teacher = teacher
        self.backbone = student
        self.preprocessor = preprocessor
        # Only what the losses read is computed: states 0 alone with no
        # sentence or pair loss never runs a transformer layer.
        last = num_states - 1
        read = sorted(set(state_indices) | ({last} if pooled else set()))

        # === Functional Model ===
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input(shape=(None,), dtype="int32", name="padding_mask")
        outputs = {}
        for role, encoder in (("teacher", teacher), ("student", student)):
            states_model = _hidden_states_model(encoder, read, f"{role}_hidden_states")
            if role == "student":
                # Layers no loss reaches (BERT's pooler) get no gradient:
                # freeze them rather than feed the optimizer empty updates.
                reached = {id(layer) for layer in states_model.layers}
                for layer in student.layers:
                    if id(layer) not in reached:
                        _freeze(layer)
            states = states_model(backbone_inputs(encoder, token_ids, padding_mask))
            states = dict(zip(read, keras.tree.flatten(states)))
            for index in state_indices:
                outputs[f"{role}_state_{index}"] = states[index]
            if pooled:
                outputs[f"{role}_sentence"] = sentence_vectors(
                    states[last], padding_mask, pooling)
        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs=outputs,
            compile=False,
            **kwargs,
        )

        # === Config ===
        self.state_layers = state_layers
        self.state_indices = state_indices
        self.state_loss_weight = state_loss_weight
        self.sentence_loss_weight = sentence_loss_weight
        self.pair_loss_weight = pair_loss_weight
        self.pair_temperature = pair_temperature
        self.pooling = pooling
        self.train = train
        self.quantize_transformer = quantize_transformer
        # Only the measures this distiller computes show in the progress bar.
        if self.state_indices and self.state_loss_weight > 0:
            self.state_loss_tracker = keras.metrics.Mean(name="state_loss")
        if self.sentence_loss_weight > 0:
            self.sentence_cosine_tracker = keras.metrics.Mean(name="sentence_cosine")
        if self.pair_loss_weight > 0:
            self.pair_loss_tracker = keras.metrics.Mean(name="pair_loss")

    @property
    def student(self):
        return self.backbone

    def compile(
        self,
        optimizer="auto",
        learning_rate=2e-5,
        embedding_learning_rate=1e-3,
        weight_decay=0.01,
        **kwargs,
    ):
        """`keras.Model.compile`; `"auto"` builds a `LayerRateAdamW` with two rates."""
        if isinstance(optimizer, str) and optimizer == "auto":
            learning_rate = _check_learning_rate("learning_rate", learning_rate)
            embedding_learning_rate = _check_learning_rate(
                "embedding_learning_rate", embedding_learning_rate)
            weight_decay = check_non_negative_number("weight_decay", weight_decay)
            optimizer = LayerRateAdamW(
                learning_rate,
                {_layer_path(self.student.token_embedding):
                 embedding_learning_rate / learning_rate},
                weight_decay=weight_decay,
            )
        super().compile(optimizer=optimizer, **kwargs)

    def compile_from_config(self, config):
        # Keras skips a custom `compile` on load, leaving the model unable to
        # `fit`; the saved config holds the built optimizer, so compile with it.
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            build_optimizer_before_fit(self)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        mask = ops.cast(x["padding_mask"], "float32")
        loss = ops.convert_to_tensor(0.0)
        # Under a tf.distribute strategy each replica sees its share of the batch: the
        # state loss is normalised by the whole batch's sums, and the loss divided by the
        # replicas (Keras sums the replicas' gradients), so that the replicas together
        # compute the one-device loss and gradient. On JAX (keras.distribution) the step
        # computes on the whole sharded batch: nothing to do.
        replicas = _replica_context()
        if self.state_indices and self.state_loss_weight > 0:
            state_loss = ops.mean(
                ops.stack(
                    [
                        _state_loss(
                            y_pred[f"student_state_{index}"], y_pred[f"teacher_state_{index}"], mask,
                            replicas,
                        )
                        for index in self.state_indices
                    ]
                )
            )
            self.state_loss_tracker.update_state(state_loss)
            loss = loss + self.state_loss_weight * state_loss
        if self.sentence_loss_weight > 0:
            cosine = ops.mean(
                ops.sum(
                    ops.cast(y_pred["student_sentence"], "float32")
                    * ops.cast(y_pred["teacher_sentence"], "float32"),
                    axis=-1,
                )
            )
            self.sentence_cosine_tracker.update_state(cosine)
            loss = loss + self.sentence_loss_weight * (1.0 - cosine)
        if self.pair_loss_weight > 0:
            pair_loss = _pair_loss(y_pred["student_sentence"], y_pred["teacher_sentence"],
                                   self.pair_temperature)
            self.pair_loss_tracker.update_state(pair_loss)
            loss = loss + self.pair_loss_weight * pair_loss
        if self.losses:
            loss = loss + ops.sum(self.losses)
        if replicas is not None:
            loss = loss / replicas.num_replicas_in_sync
        return loss

    def call(self, inputs, training=None, mask=None):
        # A BERT preprocessor also gives `segment_ids`; a sentence is segment 0.
        if isinstance(inputs, dict):
            inputs = {name: inputs[name] for name in ("token_ids", "padding_mask")
                      if name in inputs}
        if self.quantize_transformer is None:
            return super().call(narrow_ids(inputs), training=training, mask=mask)
        # Every call of the distiller rounds alike: its own traces stay valid.
        with rounded_kernels(self.student, self.quantize_transformer):
            return super().call(narrow_ids(inputs), training=training, mask=mask)

    def fit(self, x=None, *args, **kwargs):
        _check_not_empty(x)
        self._check_text(x)
        self._check_ids(x)
        if not self.trainable_weights:
            raise ValueError(
                "The distiller has no trainable weight: `fit` would change nothing. "
                f"The student's layers are frozen (train={self.train!r}); set "
                "`student.trainable = True` before building the distiller."
            )
        build_optimizer_before_fit(self)  # one trace of the step, not two
        with _sentencepiece_reset_explained():
            return super().fit(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        self._check_text(x)
        self._check_ids(x)
        with _sentencepiece_reset_explained():
            return super().evaluate(x, *args, **kwargs)

    def predict(self, x=None, *args, **kwargs):
        self._check_text(x)
        self._check_ids(x)
        with _sentencepiece_reset_explained():
            return super().predict(x, *args, **kwargs)

    def _check_text(self, x):
        if self.preprocessor is None and _is_text(x):
            raise ValueError(
                "The distiller has no preprocessor to turn text into token ids (its "
                "teacher was given as a backbone): pass `preprocessor=` (e.g. "
                "`teacher_embedder.preprocessor`) when building it, or give "
                "{'token_ids', 'padding_mask'} batches. Received: text"
            )

    def _check_ids(self, x):
        limit = getattr(self.student, "max_sequence_length", None)
        check_id_batch(x, self.student.token_embedding.input_dim,
                       limit if isinstance(limit, int) else None)

    def get_config(self):
        config = super().get_config()
        config.pop("backbone")
        config.update(
            {
                "teacher": keras.layers.serialize(self.teacher),
                "student": keras.layers.serialize(self.student),
                "state_layers": list(self.state_layers),
                "state_loss_weight": self.state_loss_weight,
                "sentence_loss_weight": self.sentence_loss_weight,
                "pair_loss_weight": self.pair_loss_weight,
                "pair_temperature": self.pair_temperature,
                "pooling": self.pooling,
                "train": self.train,
                "quantize_transformer": (
                    self.quantize_transformer.get_config()
                    if isinstance(self.quantize_transformer, WeightRecipe)
                    else self.quantize_transformer),
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("teacher", "student", "preprocessor"):
            if isinstance(config.get(key), dict):
                config[key] = keras.layers.deserialize(config[key])
        return cls(**config)


@contextlib.contextmanager
def _sentencepiece_reset_explained():
    """TensorFlow's `NotFoundError` for a SentencePiece model that `tf.random.set_seed`
    (`keras.utils.set_random_seed`) dropped, as an error that says so."""
    try:
        yield
    except Exception as error:
        if not isinstance(error, tf.errors.NotFoundError) or "SentencepieceOp" not in str(error):
            raise
        raise RuntimeError(
            "The tokenizer's SentencePiece model is gone: `keras.utils.set_random_seed` (or "
            "`tf.random.set_seed`) was called after the tokenizer was made, and it clears "
            "TensorFlow's kernel cache, which holds that model (tensorflow/text#570). Set the "
            "seed before loading or building the models, or load them again after it."
        ) from error


def _pair_loss(student, teacher, temperature):
    """KL(teacher || student) of rows 2i's softmax over rows 2i + 1's cosines, plus back."""
    # (pairs, 2, width): a batch of an odd number of rows fails here, not silently.
    student = ops.reshape(ops.cast(student, "float32"), (-1, 2, ops.shape(student)[-1]))
    teacher = ops.reshape(ops.cast(teacher, "float32"), (-1, 2, ops.shape(teacher)[-1]))
    loss = 0.0
    for first, second in ((0, 1), (1, 0)):
        logits = {name: ops.matmul(vectors[:, first], ops.transpose(vectors[:, second])) / temperature
                  for name, vectors in (("student", student), ("teacher", teacher))}
        student_log = ops.log_softmax(logits["student"], axis=-1)
        teacher_log = ops.log_softmax(logits["teacher"], axis=-1)
        loss = loss + ops.mean(ops.sum(ops.exp(teacher_log) * (teacher_log - student_log), axis=-1))
    return loss


def _state_loss(student, teacher, mask, replicas=None):
    """Squared error over the valid tokens / the teacher's (scale-free).

    With `replicas` (a TensorFlow replica context) the token count and the teacher's sum
    are the whole batch's, and the error is counted `num_replicas_in_sync` times: the
    mean over the replicas is then the one-device loss of the whole batch."""
    student = ops.cast(student, "float32")
    teacher = ops.cast(teacher, "float32")
    weights = ops.expand_dims(mask, axis=-1)
    error = ops.sum(ops.square(student - teacher) * weights)
    total = ops.sum(ops.square(teacher) * weights)
    count = ops.sum(mask)
    if replicas is not None:
        # The teacher is frozen: its sums carry no gradient.
        total, count = replicas.all_reduce(
            "sum", [ops.stop_gradient(total), ops.stop_gradient(count)])
        error = error * replicas.num_replicas_in_sync
    count = ops.maximum(count, 1.0)
    return (error / count) / ops.maximum(total / count, 1e-12)


def _replica_context():
    """TensorFlow's replica context inside a step of a strategy of several replicas,
    else None (one device, a cross-replica context, or JAX)."""
    if keras.backend.backend() != "tensorflow":
        return None
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return None
    return context


def _freeze(layer):
    """Freeze `layer` down to each variable.

    `layer.trainable = False` is not enough: a layer deserialized frozen
    builds its sublayers' variables trainable, and a functional model counts
    every variable whose own flag is set, whatever its layer says.
    """
    layer.trainable = False
    for variable in layer.weights:
        variable.trainable = False


def _unfreeze_pretrained(student):
    """Make every pretrained weight of `student` trainable again.

    A student built from a frozen teacher inherits `trainable: False` in its
    layer configs, and `student.trainable = True` only reaches variables that
    were created trainable. Every float weight outside the token embedding is
    a pretrained weight meant to train; the token embedding keeps its own
    flags (codes, caches and fixed filters are non-trainable by design).
    """
    student.trainable = True
    embedding_ids = {id(variable) for variable in student.token_embedding.weights}
    for variable in student.weights:
        if id(variable) not in embedding_ids and "float" in str(variable.dtype):
            variable.trainable = True


def _layer_path(layer):
    """The path its variables share (`"embeddings/token_embedding"`), so a rate
    given to it reaches no sibling such as the position embedding."""
    paths = [variable.path.split("/")[:-1] for variable in layer.weights]
    common = paths[0] if paths else [layer.name]
    for path in paths[1:]:
        while path[: len(common)] != common:
            common = common[:-1]
    return "/".join(common) or layer.name


def _check_state_layers(state_layers, num_states):
    if not isinstance(state_layers, (list, tuple)):
        raise ValueError(
            "`state_layers` must be a list or tuple of hidden-state indices. "
            f"Received: state_layers={state_layers!r}"
        )
    indices = [check_int("state_layers", index) for index in state_layers]
    for index in indices:
        if not -num_states <= index < num_states:
            raise ValueError(
                f"`state_layers` holds {index}, but the encoders have hidden states "
                f"0..{num_states - 1} (0 is the embedding output). "
                f"Received: state_layers={state_layers!r}"
            )
    return indices


def _check_learning_rate(name, value):
    if not is_real(value):
        raise TypeError(
            f"`{name}` must be a number; for a schedule, build the optimizer yourself "
            "(e.g. `LayerRateAdamW(schedule, {...})`) and pass it as `optimizer`. "
            f"Received: {name}={value!r}"
        )
    return check_positive_number(name, value)


def _check_same_head(teacher, student, pooling):
    """Both embedders must pool alike: the student is trained on one pooling."""
    if not isinstance(student, keras_hub.models.TextEmbedder) or pooling is not None:
        return
    heads = [(model.pooling_mode, model.normalize) for model in (teacher, student)]
    if heads[0] != heads[1]:
        raise ValueError(
            "The teacher and the student embedders pool differently: "
            f"(pooling_mode, normalize) = {heads[0]} and {heads[1]}. Build the student "
            "with the teacher's pooling, or pass `pooling=` to choose one."
        )


def _is_text(x):
    """Whether `x` holds strings: a string, a list or array of them, or a
    `tf.data.Dataset` of them."""
    if isinstance(x, (str, bytes)):
        return True
    if isinstance(x, (list, tuple, np.ndarray)):
        values = np.asarray(x, dtype=object).reshape(-1)
        return bool(values.size) and isinstance(values[0], (str, bytes))
    if is_dataset(x):
        specs = keras.tree.flatten(x.element_spec)
        return bool(specs) and specs[0].dtype == "string"
    return False


def _tokenizer_settings(preprocessor):
    """What decides a tokenizer's ids: its vocabulary (by its kind's fingerprint), case and accents."""
    tokenizer = getattr(preprocessor, "tokenizer", None)
    # Any kind's runner file decides its ids (WordPiece's vocabulary, XLM-R's
    # SentencePiece model); a tokenizer of no registered kind is compared by
    # its normalisation alone.
    kind = find_tokenizer_kind(tokenizer)
    loaded = kind is not None and kind.runner_file(tokenizer)
    return {
        "vocabulary": (f"{tokenizer.vocabulary_size()} tokens, sha256 "
                       f"{kind.fingerprint(tokenizer)[:12]}") if loaded else None,
        "lowercase": getattr(tokenizer, "lowercase", None),
        "strip_accents": getattr(tokenizer, "strip_accents", None),
    }


def _check_same_tokenizer(preprocessor, student_preprocessor):
    """The student embedder's own tokenizer must give the ids it is trained on."""
    if preprocessor is None or student_preprocessor is None or (
            student_preprocessor is preprocessor):
        return
    used, own = _tokenizer_settings(preprocessor), _tokenizer_settings(student_preprocessor)
    differences = [f"{name}: {used[name]} vs the student's {own[name]}"
                   for name in used if used[name] != own[name]]
    if differences:
        raise ValueError(
            "The student embedder's tokenizer differs from the one the distiller trains "
            f"with (the teacher's): {'; '.join(differences)}. The student would learn "
            "ids its own tokenizer never gives. Build the student from the teacher "
            "(`keras_subembed.compress(teacher, ...)`), or pass `preprocessor=` to "
            "train both on that one."
        )


def _check_sequence_length(preprocessor, teacher, student):
    """Sequences the preprocessor makes must fit both encoders' position tables."""
    length = getattr(preprocessor, "sequence_length", None)
    if not isinstance(length, int):
        return
    for role, encoder in (("student", student), ("teacher", teacher)):
        limit = getattr(encoder, "max_sequence_length", None)
        if isinstance(limit, int) and length > limit:
            raise ValueError(
                f"The preprocessor makes sequences of {length} tokens, but the {role} "
                f"reads at most {limit} (its `max_sequence_length`). Set the "
                f"preprocessor's `sequence_length` to {limit} or less, or build the "
                f"{role} with `max_sequence_length` >= {length}."
            )


def _backbone_of(model):
    return model.backbone if isinstance(model, keras_hub.models.TextEmbedder) else model


def _check_pair(teacher, student):
    for role, encoder in (("teacher", teacher), ("student", student)):
        if not isinstance(encoder, keras_hub.models.Backbone):
            raise TypeError(
                f"`{role}` must be a keras-hub TextEmbedder or Backbone (e.g. "
                f"BertTextEmbedder, or one from keras_subembed.compress). "
                f"Received: {role}={encoder!r}"
            )
    if teacher is student or _shared_variables(teacher, student):
        raise ValueError(
            "`student` shares weights with `teacher`: training it would change the "
            "teacher. Pass a separate copy (e.g. from `compress_backbone(teacher, ...)`). "
            f"Received: teacher={teacher.name!r}, student={student.name!r}"
        )
    teacher_inputs, student_inputs = sorted(teacher.input), sorted(student.input)
    if teacher_inputs != student_inputs:
        raise ValueError(
            f"The teacher takes inputs {teacher_inputs} and the student {student_inputs}: "
            "they must be the same."
        )
    sizes = {}
    for role, encoder in (("teacher", teacher), ("student", student)):
        embedding = encoder.token_embedding
        sizes[role] = (embedding.input_dim, getattr(encoder, "hidden_dim", None))
    if sizes["teacher"] != sizes["student"]:
        raise ValueError(
            "The teacher and the student must have the same vocabulary size and "
            f"width. Teacher: (vocabulary, hidden_dim)={sizes['teacher']}; "
            f"student: {sizes['student']}."
        )
    if len(hidden_state_names(teacher)) != len(hidden_state_names(student)):
        raise ValueError("The teacher and the student must have the same number of layers.")


def _shared_variables(teacher, student):
    teacher_ids = {id(variable) for variable in teacher.weights}
    return [variable for variable in student.weights if id(variable) in teacher_ids]


def _check_not_empty(data):
    """`fit` on nothing would fail deep in a traced step: name it first."""
    if data is None or (isinstance(data, (list, tuple, np.ndarray)) and not np.size(data)):
        raise ValueError(
            "`x` is empty: there is nothing to distil on. Pass sentences (a list of "
            "strings, a `tf.data.Dataset`) or {'token_ids', 'padding_mask'} batches. "
            f"Received: x={data!r}"
        )
    if is_dataset(data) and int(data.cardinality()) == 0:
        raise ValueError("The dataset `x` is empty: there is nothing to distil on.")
