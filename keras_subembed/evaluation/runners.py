"""`run_batch(token_ids, padding_mask) -> vectors` for a Keras embedder, a `.tflite` or an `.onnx` file."""

import keras
import numpy as np

from keras_subembed.optional import litert_interpreter
from keras_subembed.optional import onnxruntime


def keras_runner(embedder):
    """A keras-hub `TextEmbedder` as `run_batch`; one sentence is segment 0 throughout.

    Example:
    ```python
    vectors = TokenizedTexts(texts, embedder.preprocessor).embed(keras_runner(embedder))
    ```
    """

    def run(ids, mask):
        ids, mask = keras.ops.convert_to_tensor(ids), keras.ops.convert_to_tensor(mask)
        inputs = {"token_ids": ids, "padding_mask": mask, "segment_ids": keras.ops.zeros_like(ids)}
        return embedder(inputs, training=False)

    return run


def tflite_runner(path, num_threads=2):
    """An exported `.tflite` encoder (`token_ids, padding_mask -> embedding`) as `run_batch`.

    Example:
    ```python
    vectors = TokenizedTexts(texts, preprocessor).embed(tflite_runner("minilm.tflite"))
    ```
    """
    interpreter = litert_interpreter.Interpreter(model_path=str(path), num_threads=num_threads)
    runner = interpreter.get_signature_runner()
    return lambda ids, mask: runner(token_ids=ids, padding_mask=mask)["embedding"]


def onnx_runner(path, num_threads=2):
    """An exported `.onnx` encoder (`token_ids, padding_mask -> embedding`) as `run_batch`.

    Example:
    ```python
    vectors = TokenizedTexts(texts, preprocessor).embed(onnx_runner("minilm.onnx"))
    ```
    """
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = num_threads
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(path), options,
                                           providers=["CPUExecutionProvider"])
    types = {entry.name: entry.type for entry in session.get_inputs()}

    def run(ids, mask):
        # The file's own integer width (Keras' ONNX export keeps the model's int32).
        feed = {name: np.asarray(value, "int64" if types[name] == "tensor(int64)" else "int32")
                for name, value in (("token_ids", ids), ("padding_mask", mask))}
        return session.run(["embedding"], feed)[0]

    return run
