"""Two-stage distillation of a compressed student, run several times and averaged."""

import contextlib
import tempfile

import keras
import numpy as np
import tensorflow as tf

from keras_subembed.checks import check_non_negative_int
from keras_subembed.checks import check_non_negative_number
from keras_subembed.checks import check_positive_int
from keras_subembed.checks import check_positive_number
from keras_subembed.checks import check_seed
from keras_subembed.checks import is_integer
from keras_subembed.models import EmbeddingDistiller
from keras_subembed.models import distillation_dataset
from keras_subembed.quantization.recipes import get_recipe

# The multilingual job's measured defaults (benchmarks/RESULTS.md, issue #33).
DISTILLATION_DEFAULTS = dict(
    steps=240, embedding_steps=0, runs=2, batch_size=16, sequence_length=64,
    learning_rate=4e-5, embedding_learning_rate=2e-4, sentence_loss_weight=16.0,
    pair_loss_weight=10.0, pair_temperature=0.05)


def check_distillation_options(**options):
    """The distillation options with their defaults, each checked; a ValueError names the
    first bad one. Called before any work, so that a bad value fails in seconds."""
    unknown = sorted(set(options) - set(DISTILLATION_DEFAULTS) - {"quantize_transformer", "seed"})
    if unknown:
        raise TypeError(f"Unknown distillation option(s): {unknown}. "
                        f"Known: {sorted(DISTILLATION_DEFAULTS)} and quantize_transformer, seed")
    values = {**DISTILLATION_DEFAULTS, "quantize_transformer": None, "seed": 0, **options}
    for name in ("steps", "embedding_steps"):
        values[name] = check_non_negative_int(name, values[name])
    for name in ("runs", "batch_size"):
        values[name] = check_positive_int(name, values[name])
    if values["batch_size"] % 2:
        raise ValueError("`batch_size` must be even (a batch holds whole translation pairs). "
                         f"Received: batch_size={values['batch_size']}")
    # [CLS], at least two pieces, [SEP]: a shorter window trains on the specials alone.
    values["sequence_length"] = check_positive_int("sequence_length", values["sequence_length"])
    if values["sequence_length"] < 4:
        raise ValueError("`sequence_length` must be at least 4 (a start token, two pieces and "
                         f"an end token). Received: sequence_length={values['sequence_length']}")
    for name in ("learning_rate", "embedding_learning_rate", "pair_temperature"):
        values[name] = check_positive_number(name, values[name])
    for name in ("sentence_loss_weight", "pair_loss_weight"):
        values[name] = check_non_negative_number(name, values[name])
    if values["quantize_transformer"] is not None:
        get_recipe(values["quantize_transformer"], "quantize_transformer")
    values["seed"] = check_seed(values["seed"])
    return values


def check_distribution(distribution, batch_size):
    """The number of replicas `distribution` splits a batch into (1 for None), after
    checking it against the Keras backend and `batch_size`.

    On JAX a `keras.distribution.Distribution` (e.g. `DataParallel`): the step computes on
    the whole batch, sharded along the mesh's batch axis, so `batch_size` must divide by
    that axis's devices. On TensorFlow a `tf.distribute.Strategy` (e.g.
    `MirroredStrategy`): each replica computes on its share, which must hold whole
    translation pairs, so `batch_size` must divide by 2 x the replicas.
    """
    if distribution is None:
        return 1
    backend = keras.backend.backend()
    if backend == "jax":
        # The base of DataParallel and ModelParallel, which keras.distribution does not export.
        base = keras.distribution.DataParallel.__mro__[1]
        if not isinstance(distribution, base):
            raise TypeError(
                "On JAX `distribution` must be a keras.distribution.Distribution (e.g. "
                "keras.distribution.DataParallel(devices=jax.devices())) or None. "
                f"Received: distribution={distribution!r:.100}")
        mesh = distribution.device_mesh
        replicas = int(mesh.shape[list(mesh.axis_names).index(distribution.batch_dim_name)])
        multiple, why = replicas, f"the {replicas} devices of the batch axis"
    elif backend == "tensorflow":
        if not isinstance(distribution, tf.distribute.Strategy):
            raise TypeError(
                "On TensorFlow `distribution` must be a tf.distribute.Strategy (e.g. "
                "tf.distribute.MirroredStrategy()) or None; keras.distribution runs on JAX "
                f"only. Received: distribution={distribution!r:.100}")
        replicas = int(distribution.num_replicas_in_sync)
        multiple = 2 * replicas
        why = f"2 x {replicas} replicas: each replica's share holds whole pairs"
    else:
        raise ValueError(
            "`distribution` runs on the JAX (keras.distribution) and TensorFlow "
            f"(tf.distribute) backends, not on {backend!r}. Received: "
            f"distribution={distribution!r:.100}")
    if batch_size % multiple:
        raise ValueError(
            f"`batch_size` must be a multiple of {multiple} ({why}). "
            f"Received: batch_size={batch_size}, distribution={distribution!r:.100}")
    return replicas


def _scope(distribution):
    return contextlib.nullcontext() if distribution is None else distribution.scope()


def _copy(embedder):
    """`embedder` made again (in the current distribution's scope), its preprocessor
    shared, its weights through a weights file (which also tells layers whose config
    lacks a state, such as a SubEmbedding's codes, that it was loaded)."""
    backbone = embedder.backbone
    copy = type(embedder).from_config({
        **embedder.get_config(), "preprocessor": embedder.preprocessor,
        "backbone": type(backbone).from_config(backbone.get_config())})
    with tempfile.TemporaryDirectory() as folder:
        embedder.save_weights(f"{folder}/copy.weights.h5")
        copy.load_weights(f"{folder}/copy.weights.h5")
    return copy


def check_verbose(verbose):
    """Keras' `verbose`: 0 (silent), 1 (progress bars) or 2 (a line per stage)."""
    if not is_integer(verbose) or verbose not in (0, 1, 2):
        raise ValueError(f"`verbose` must be 0, 1 or 2. Received: verbose={verbose!r}")
    return verbose


def training_preprocessor(teacher, sequence_length):
    """The teacher's preprocessor, rebuilt at the training length."""
    preprocessor = teacher.preprocessor
    return type(preprocessor)(preprocessor.tokenizer, sequence_length=sequence_length)


def distil(teacher, student, texts, pairs=None, verbose=2, distribution=None, **options):
    """Distils `student` from `teacher` on `texts` (and translation `pairs`), in place.

    Two stages: the embedding alone (`embedding_steps`, to the teacher's embedding output),
    then everything (`steps`: embedding output, last hidden state, the sentence cosine at
    `sentence_loss_weight`, and with pairs the pair loss at `pair_loss_weight`, which keeps
    the teacher's margin of each translation over the batch's other sentences). With
    `quantize_transformer` (a recipe name such as `"int4_dynamic"`) the full stage computes
    with the kernels rounded as the file will store them (quantization-aware).

    `runs` > 1 distils that many times from the same start, run r on batches drawn with
    seed `seed + r`, and keeps the mean of their weights, a uniform "model soup" (Wortsman
    et al., 2022): which near-tied translations a student keeps changes from run to run,
    and the mean keeps what the runs share. Integer weights (codes, int8 rows) are not
    trained and stay as they are.

    Args:
        teacher, student: keras-hub `TextEmbedder`s sharing a tokenizer.
        texts: list of str, unlabelled training text.
        pairs: optional list of `(text, translation)`.
        verbose: `fit`'s verbosity (0, 1: a progress bar, 2: a line a stage).
        distribution: None (one device), or to train data-parallel on several: on JAX a
            `keras.distribution.Distribution` (e.g. `DataParallel`), on TensorFlow a
            `tf.distribute.Strategy` (e.g. `MirroredStrategy`). The teacher and the
            student are copied in its scope (the models passed in may live anywhere), the
            copies distilled, and the student's weights copied back. `batch_size` is the
            global batch and must divide by the replicas (on TensorFlow by 2 x them). It
            computes the one-device loss of the whole batch, except that on TensorFlow
            the pair loss's wrong partners are those of each replica's share. Tested on two
            CPU devices, on TensorFlow and on JAX, the student matches the one-device one
            within 1e-4 (tests/recipe/test_distributed_distillation.py).
        **options: `steps`, `embedding_steps`, `runs`, `batch_size`, `sequence_length`,
            `learning_rate`, `embedding_learning_rate`, `sentence_loss_weight`,
            `pair_loss_weight`, `pair_temperature`, `quantize_transformer`, `seed`
            (defaults: `DISTILLATION_DEFAULTS`).

    Returns:
        The last loss of each stage (means over runs), e.g. `{"full": 0.12, "full_pair": ...}`.

    Example:
    ```python
    student = keras_subembed.compress(teacher, "sub", {"assignment": "product",
                                                       "num_tables": 32})
    losses = distil(teacher, student, texts, steps=100, runs=1)
    ```

    On two devices (each replica gets half of each batch of 16):
    ```python
    distribution = keras.distribution.DataParallel(devices=jax.devices())  # JAX
    distribution = tf.distribute.MirroredStrategy()                        # TensorFlow
    losses = distil(teacher, student, texts, batch_size=16, distribution=distribution)
    ```
    """
    options = check_distillation_options(**options)
    check_distribution(distribution, options["batch_size"])
    if not (options["steps"] or options["embedding_steps"]):
        return {}
    preprocessor = training_preprocessor(teacher, options["sequence_length"])
    if distribution is None:
        return _distil_runs(teacher, student, preprocessor, texts, pairs, options, verbose)
    with distribution.scope():
        # Variables must be made in the scope (mirrored on TensorFlow, replicated on JAX).
        teacher_copy, student_copy = _copy(teacher), _copy(student)
        losses = _distil_runs(teacher_copy, student_copy, preprocessor, texts, pairs, options,
                              verbose, distribution)
        weights = student_copy.get_weights()
    student.set_weights(weights)
    return losses


def _distil_runs(teacher, student, preprocessor, texts, pairs, options, verbose,
                 distribution=None):
    start = [variable.numpy() for variable in student.weights]
    finals, losses = [], []
    for run in range(options["runs"]):
        if run:
            if verbose:
                print(f"  distillation run {run + 1} of {options['runs']}, from the same start, "
                      f"batches drawn with seed {options['seed'] + run}", flush=True)
            for variable, value in zip(student.weights, start):
                variable.assign(value)
        losses.append(_distil_once(teacher, student, preprocessor, texts, pairs or [], options,
                                   options["seed"] + run, verbose, distribution))
        if options["runs"] > 1:
            finals.append([variable.numpy() for variable in student.weights])
    for variable, *values in zip(student.weights, *finals) if finals else ():
        if np.issubdtype(values[0].dtype, np.floating):
            variable.assign(np.mean(values, axis=0, dtype="float64").astype(values[0].dtype))
    return {key: round(float(np.mean([run[key] for run in losses])), 4) for key in losses[0]}


def _distil_once(teacher, student, preprocessor, texts, pairs, options, seed, verbose,
                 distribution=None):
    dataset = distillation_dataset(texts, preprocessor, options["batch_size"], seed=seed,
                                   pairs=pairs or None)
    full = dict(state_layers=(0, -1), train="all",
                sentence_loss_weight=options["sentence_loss_weight"],
                pair_loss_weight=options["pair_loss_weight"] if pairs else 0.0,
                pair_temperature=options["pair_temperature"],
                quantize_transformer=options["quantize_transformer"])
    stages = [("embedding", options["embedding_steps"],
               dict(state_layers=(0,), sentence_loss_weight=0.0, train="embedding")),
              ("full", options["steps"], full)]
    losses = {}
    for stage, steps, settings in stages:
        if not steps:
            continue
        # Always the stage's first batches, fixed: Keras' `fit` may iterate a dataset twice
        # (see `_fixed_batches`), which would reshuffle what a stage trains on.
        data = _fixed_batches(dataset, steps)
        with _scope(distribution):  # its optimizer and metrics: in the scope too
            distiller = EmbeddingDistiller(teacher, student, **settings)
            distiller.compile(learning_rate=options["learning_rate"],
                              embedding_learning_rate=options["embedding_learning_rate"])
            if verbose:
                print(f"  distillation '{stage}': {steps} steps", flush=True)
            # The dataset is shuffled by its own seed (`distillation_dataset`).
            history = distiller.fit(data, steps_per_epoch=steps, epochs=1, verbose=verbose,
                                    shuffle=False).history
        losses[stage] = round(float(history["loss"][-1]), 4)
        for key, name in (("pair_loss", "pair"), ("sentence_cosine", "sentence_cosine")):
            if key in history:
                losses[f"{stage}_{name}"] = round(float(history[key][-1]), 4)
    student.trainable = True
    return losses


def _fixed_batches(dataset, steps):
    """The next `steps` batches of `dataset`, as a dataset that gives them again each time
    it is iterated.

    Keras 3's `fit` can iterate its dataset twice: once for one batch to build the model
    (`_maybe_symbolic_build` in keras/src/backend/tensorflow/trainer.py under a
    distribution, `_symbolic_build` in .../jax/trainer.py), then to train; and a shuffled
    dataset is shuffled anew for each iterator. Fixed, every backend and distribution
    trains on the same batches: the first `steps` of the seeded order (a few MB of ids).
    """
    batches = list(dataset.take(steps))
    stacked = tf.nest.map_structure(lambda *parts: tf.stack(parts), *batches)
    return tf.data.Dataset.from_tensor_slices(stacked)
