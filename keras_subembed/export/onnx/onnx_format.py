"""Keras model -> `.onnx` file (Keras' own ONNX export), float32, int8 or int4, verified with ONNX Runtime."""

import contextlib
import gc
import json
import pathlib

import keras

from keras_subembed import files
from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.model_parts import embedding_rotations
from keras_subembed.export.model_parts import export_metadata
from keras_subembed.export.model_parts import weight_shapes
from keras_subembed.export.onnx.onnx_quantization import constant_bytes
from keras_subembed.export.onnx.onnx_quantization import folded_constants
from keras_subembed.export.onnx.onnx_quantization import int4_rounded
from keras_subembed.export.onnx.onnx_quantization import quantize
from keras_subembed.export.onnx.onnx_quantization import quantized_op_count
from keras_subembed.export.output_parity import FLOAT32_TOLERANCE
from keras_subembed.export.pipeline import export
from keras_subembed.export.pipeline import register_format
from keras_subembed.export.signature import serving_function
from keras_subembed.optional import matmul_nbits_quantizer
from keras_subembed.optional import onnx
from keras_subembed.optional import onnxruntime
from keras_subembed.optional import tf2onnx_optimizer
from keras_subembed.tflite_metadata import METADATA_NAME
from keras_subembed.tflite_metadata import WRITTEN_BY

@register_format("onnx")
class ONNXFormat(ExportFormat):
    """An `.onnx` file for ONNX Runtime (see `export_onnx`)."""

    description = "an .onnx file"
    # None: float32 as Keras exports it; "dynamic": ONNX Runtime's dynamic
    # quantization (int8 weights, activations quantized per call), the int8
    # file browsers and ORT Mobile run; "int4": ONNX Runtime's MatMulNBits
    # (int4 weights in blocks of 32 inputs), about the size of the int4 .tflite.
    quantizations = (None, "dynamic", "int4")
    # "int4" is bounded as the `.tflite` int4 recipes are, and also held to
    # Keras with ONNX Runtime's own int4 rounding (`rounded_model`).
    tolerances = {None: FLOAT32_TOLERANCE, "dynamic": 0.1, "int4": 0.5}

    def __init__(self, quantization=None, **kwargs):
        super().__init__(quantization=quantization, **kwargs)
        import_onnx_tools(quantization)

    def is_ours(self, path):
        return is_onnx_file(path)

    def file_metadata(self, path):
        return read_onnx_metadata(pathlib.Path(path).read_bytes())

    def convert(self, staged, scratch):
        with files.scratch_folder(scratch) as folder:
            data = convert(staged.model, staged.serving_inputs, self.quantization,
                           pathlib.Path(folder))
        return with_onnx_metadata(data, export_metadata(staged.model))

    def run(self, data, num_threads=None):
        session = inference_session(data, num_threads)
        names = [output.name for output in session.get_outputs()]
        return lambda sample: dict(zip(names, session.run(names, sample)))

    def rounded_model(self, staged):
        # The int4 file is held to Keras with its kernels rounded by ONNX
        # Runtime's own int4 rounding: a file whose weights are not the
        # model's (a wrong kernel, a wrong table) errs far more than that.
        return int4_rounded(staged.model) if self.quantization == "int4" else None

    def file_facts(self, staged, data, embedding):
        proto = onnx.load_from_string(data)
        return dict(
            embedding_bytes=embedding_initializer_bytes(proto, embedding),
            ops=tuple(sorted({node.op_type for node in proto.graph.node})),
            quantized_ops=quantized_op_count(proto),
            constant_bytes=constant_bytes(proto),
            outputs=tuple(sorted(output.name for output in inference_session(data).get_outputs())),
        )


def export_onnx(model, path, **kwargs):
    """`export(model, path, format="onnx", **kwargs)`: a verified `.onnx` file for ONNX Runtime.

    The file is made by Keras' own exporter (`model.export(format="onnx")`,
    tf2onnx on TensorFlow) with the same signature as `export_tflite`'s:
    inputs by name with dynamic batch and sequence length (a keras-hub
    `TextEmbedder` takes `token_ids, padding_mask` and returns `embedding`;
    its segment ids are zeros, one sentence), outputs by name. On JAX the
    model goes through a `.keras` file (a live model is saved to a temporary
    one) to a TensorFlow subprocess: Keras' JAX exporter (jax2onnx) fixes
    the sequence length and cannot lower `jax.lax.platform_dependent`.

    Args:
        model: a `keras.Model` or a path to a `.keras` file.
        path: the `.onnx` file to write (atomically, after verification).
        quantization: `None` (float32), `"dynamic"` (ONNX Runtime's
            dynamic quantization: int8 weights per output channel) or
            `"int4"` (ONNX Runtime's `MatMulNBitsQuantizer`: symmetric int4
            weights in blocks of 32 inputs, one float32 scale each, run by
            the `MatMulNBits` op of ONNX Runtime's CPU, mobile and web
            builds). Either quantizes every MatMul weight of 1024 values or
            more (a float one left raises `ExportVerificationError`); the
            token embedding's integer arrays stay as they are. Tolerances
            (`ONNXFormat.tolerances`, a fraction of the largest |output|): `"dynamic"`
            0.1; `"int4"` 0.5 and at most 4 times the error of Keras with
            its kernels rounded by ONNX Runtime's own int4 rounding.
        overwrite: replace an existing `.onnx` file this package wrote (and
            the tokenizer file beside it that the export wrote).
        tokenizer_file: write the model's tokenizer beside the file, as for
            `export_tflite` (`minilm.onnx` gets `minilm.vocab.txt`).
        verify, sample_inputs, sequence_lengths, latency_runs: as for
            `export_tflite`; the file runs in ONNX Runtime (timing: 1 thread).

    Returns:
        An `ExportReport` (`ops` are the graph's ONNX op types).

    Example:
    ```python
    report = export_onnx(embedder, "minilm.int8.onnx", quantization="dynamic")
    ```
    """
    return export(model, path, format="onnx", **kwargs)


def import_onnx_tools(quantization=None):
    """Fail before converting when a tool the export needs is missing."""
    onnx.require()
    onnxruntime.require()
    if quantization == "int4":  # it imports onnx-ir, which onnxruntime does not require
        matmul_nbits_quantizer.require()


def convert(model, serving_inputs, quantization, scratch):
    """The `.onnx` bytes of `model` by Keras' exporter, quantized by ONNX Runtime if asked."""
    inputs = {name: keras.Input(shape[1:], dtype=dtype, name=name)
              for name, dtype, shape in serving_inputs.specs}
    # A functional model of the serving signature: named inputs, named outputs,
    # the inputs the signature leaves out (a TextEmbedder's segment ids) zeros.
    serving_model = keras.Model(inputs, serving_function(model, serving_inputs)(inputs))
    signature = [{name: keras.InputSpec(shape=shape, dtype=dtype, name=name)
                  for name, dtype, shape in serving_inputs.specs}]
    float_path = scratch / "float32.onnx"
    with collected_between_graph_passes():
        serving_model.export(str(float_path), format="onnx", verbose=False,
                             input_signature=signature)
    # Folded, the float file loses the duplicate kernels tf2onnx leaves (multilingual-e5's
    # attention kernels twice: 127 MB -> 106 MB), and the quantizers see every weight.
    proto = folded_constants(onnx.load(str(float_path)), scratch)
    if quantization is None:
        return proto.SerializeToString()
    return quantize(proto, quantization, scratch, embedding_rotations(model))


@contextlib.contextmanager
def collected_between_graph_passes():
    """tf2onnx's graph optimizer, with the garbage of each pass collected before the next.

    tf2onnx deep-copies the whole ONNX graph, constants included, before each of its
    passes (a dozen, repeated until none changes the graph), so that a failing pass can be
    undone. The copies it drops are reference cycles, which only Python's next full
    collection frees: for multilingual-e5-small's student they reached 3.1 GB at once
    (benchmarks/RESULTS.md, "Peak memory of the default job"). Collected before each pass,
    at most two copies live.
    """
    passes = tf2onnx_optimizer.require()._get_optimizers()
    original = dict(passes)
    for name, factory in original.items():
        passes[name] = collected_first(factory)
    # Frozen, the objects that exist before the export (the model, TensorFlow, the
    # caller's data) are not traversed again by each collection: it walks tf2onnx's own.
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        passes.update(original)


def collected_first(factory):
    def collect_then_make(*args, **kwargs):
        gc.collect()
        return factory(*args, **kwargs)
    return collect_then_make


def with_onnx_metadata(data, values):
    """`data` with `values` (JSON) in the model's metadata as `keras_subembed`:
    the proof for `overwrite`, and what a runner must check (as in `.tflite` files)."""
    proto = onnx.load_from_string(data)
    onnx.helper.set_model_props(proto, {
        **{prop.key: prop.value for prop in proto.metadata_props},
        METADATA_NAME: json.dumps(dict(values, written_by=WRITTEN_BY), sort_keys=True)})
    return proto.SerializeToString()


def read_onnx_metadata(data):
    """The `keras_subembed` metadata of `.onnx` bytes, or None."""
    try:
        proto = onnx.load_from_string(data)
        for entry in proto.metadata_props:
            if entry.key == METADATA_NAME:
                values = json.loads(entry.value)
                if isinstance(values, dict) and values.get("written_by") == WRITTEN_BY:
                    return values
    except Exception:  # a corrupt or foreign file is simply not ours
        return None
    return None


def is_onnx_file(path):
    """Whether `path` is an `.onnx` file an export wrote (its metadata says so)."""
    return read_onnx_metadata(pathlib.Path(path).read_bytes()) is not None


def inference_session(data, num_threads=None):
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # unused-initializer notices are not the user's concern
    if num_threads:
        options.intra_op_num_threads = num_threads
        options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def embedding_initializer_bytes(proto, embedding):
    """Bytes of the initializers shaped like the embedding layer's weights (either orientation)."""
    if embedding is None:
        return 0
    shapes = weight_shapes(embedding)
    total = 0
    for initializer in proto.graph.initializer:
        if tuple(initializer.dims) in shapes:
            total += onnx.numpy_helper.to_array(initializer).nbytes
    return total
