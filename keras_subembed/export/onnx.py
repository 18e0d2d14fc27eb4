"""Keras model -> `.onnx` file (Keras' own ONNX export), float32 or int8, verified with ONNX Runtime."""

import json
import pathlib

import keras

from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.flatbuffer import weight_shapes
from keras_subembed.tflite_metadata import METADATA_NAME
from keras_subembed.tflite_metadata import WRITTEN_BY
from keras_subembed.export.model_parts import export_metadata
from keras_subembed.export.pipeline import export
from keras_subembed.export.pipeline import register_format
from keras_subembed.export.signature import serving_function
from keras_subembed.export.tflite import scratch_folder

ONNX_HELP = ('ONNX export needs `tf2onnx`, `onnx` and `onnxruntime` '
             '(python -m pip install tf2onnx onnx onnxruntime; or this package\'s "test" extra).')


@register_format("onnx")
class ONNXFormat(ExportFormat):
    """An `.onnx` file for ONNX Runtime (see `export_onnx`)."""

    description = "an .onnx file"
    # None: float32 as Keras exports it; "dynamic": ONNX Runtime's dynamic
    # quantization (int8 weights, activations quantized per call), the int8
    # file browsers and ORT Mobile run.
    quantizations = (None, "dynamic")

    def __init__(self, quantization=None, **kwargs):
        super().__init__(quantization=quantization, **kwargs)
        import_onnx_tools()

    def is_ours(self, path):
        return is_onnx_file(path)

    def file_metadata(self, path):
        return read_onnx_metadata(pathlib.Path(path).read_bytes())

    def convert(self, scratch):
        with scratch_folder(scratch) as folder:
            data = convert(self.model, self.serving_inputs, self.quantization,
                           pathlib.Path(folder))
        return with_onnx_metadata(data, export_metadata(self.model))

    def run(self, data, num_threads=None):
        session = inference_session(data, num_threads)
        names = [output.name for output in session.get_outputs()]
        return lambda sample: dict(zip(names, session.run(names, sample)))

    def file_facts(self, data, embedding):
        return dict(
            embedding_bytes=embedding_initializer_bytes(data, embedding),
            ops=op_types(data),
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
        quantization: `None` (float32) or `"dynamic"` (ONNX Runtime's
            dynamic quantization: int8 weights).
        overwrite: replace an existing `.onnx` file this package wrote (and
            the tokenizer file beside it that the export wrote).
        tokenizer_file: write the model's tokenizer beside the file, as for
            `export_tflite` (`minilm.onnx` gets `minilm.vocab.txt`).
        verify, sample_inputs, sequence_lengths, latency_runs: as for
            `export_tflite`; the file runs in ONNX Runtime (timing: 1 thread).

    Returns:
        An `ExportReport` (`ops` are the graph's ONNX op types).

    Example:
    >>> report = export_onnx(embedder, "minilm.int8.onnx", quantization="dynamic")
    """
    return export(model, path, format="onnx", **kwargs)


def import_onnx_tools():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as error:
        raise ImportError(f"{ONNX_HELP} ({error})") from error


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
    serving_model.export(str(float_path), format="onnx", verbose=False, input_signature=signature)
    if quantization is None:
        return float_path.read_bytes()
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization import quantize_dynamic

    int8_path, matmul_path = scratch / "int8.onnx", scratch / "matmul.onnx"
    import onnx

    proto = onnx.load(str(float_path))
    gemm_as_matmul(proto)
    onnx.save(proto, str(matmul_path))
    # Per channel: one scale per output column, as TFLite's dynamic range
    # (per tensor: cosine 0.96 to Keras on MiniLM, per channel 0.99).
    quantize_dynamic(str(matmul_path), str(int8_path), weight_type=QuantType.QInt8,
                     per_channel=True)
    return int8_path.read_bytes()


def gemm_as_matmul(proto):
    """Rewrite `Gemm(A, B, C)` with a constant B as `MatMul(A, B) + C`, in place.

    tf2onnx writes 2-D `Dense` layers as `Gemm`, which ONNX Runtime's dynamic
    quantization leaves in float32 (about half of MiniLM's transformer); as
    MatMul its weights become int8.
    """
    import onnx
    from onnx import numpy_helper

    initializers = {i.name: i for i in proto.graph.initializer}
    transposed, nodes = set(), []
    for node in proto.graph.node:
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        plain = (attributes.get("alpha", 1.0) == 1.0 and not attributes.get("transA", 0)
                 and (len(node.input) < 3 or attributes.get("beta", 1.0) == 1.0))
        if node.op_type != "Gemm" or not plain or node.input[1] not in initializers:
            nodes.append(node)
            continue
        weight = initializers[node.input[1]]
        if attributes.get("transB", 0) and weight.name not in transposed:  # shared: once
            transposed.add(weight.name)
            weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight).T, weight.name))
        product = node.output[0] + "/matmul" if len(node.input) > 2 else node.output[0]
        nodes.append(onnx.helper.make_node("MatMul", node.input[:2], [product], node.name + "/matmul"))
        if len(node.input) > 2:
            nodes.append(onnx.helper.make_node("Add", [product, node.input[2]], node.output,
                                               node.name + "/bias"))
    del proto.graph.node[:]
    proto.graph.node.extend(nodes)


def with_onnx_metadata(data, values):
    """`data` with `values` (JSON) in the model's metadata as `keras_subembed`:
    the proof for `overwrite`, and what a runner must check (as in `.tflite` files)."""
    import onnx

    proto = onnx.load_from_string(data)
    onnx.helper.set_model_props(proto, {
        **{prop.key: prop.value for prop in proto.metadata_props},
        METADATA_NAME: json.dumps(dict(values, written_by=WRITTEN_BY), sort_keys=True)})
    return proto.SerializeToString()


def read_onnx_metadata(data):
    """The `keras_subembed` metadata of `.onnx` bytes, or None."""
    try:
        import onnx

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
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # unused-initializer notices are not the user's concern
    if num_threads:
        options.intra_op_num_threads = num_threads
        options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def op_types(data):
    import onnx

    return tuple(sorted({node.op_type for node in onnx.load_from_string(data).graph.node}))


def embedding_initializer_bytes(data, embedding):
    """Bytes of the initializers shaped like the embedding layer's weights (either orientation)."""
    import onnx

    if embedding is None:
        return 0
    shapes = weight_shapes(embedding)
    total = 0
    for initializer in onnx.load_from_string(data).graph.initializer:
        if tuple(initializer.dims) in shapes:
            total += onnx.numpy_helper.to_array(initializer).nbytes
    return total
