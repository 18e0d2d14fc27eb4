"""`run_batch(token_ids, padding_mask) -> vectors` for a Keras embedder or a `.tflite` file."""

import keras


def keras_runner(embedder):
    """A keras-hub `TextEmbedder` as `run_batch`; one sentence is segment 0 throughout.

    Example:
    >>> vectors = TokenizedTexts(texts, embedder.preprocessor).embed(keras_runner(embedder))
    """

    def run(ids, mask):
        ids, mask = keras.ops.convert_to_tensor(ids), keras.ops.convert_to_tensor(mask)
        inputs = {"token_ids": ids, "padding_mask": mask, "segment_ids": keras.ops.zeros_like(ids)}
        return embedder(inputs, training=False)

    return run


def tflite_runner(path, num_threads=2):
    """An exported `.tflite` encoder (`token_ids, padding_mask -> embedding`) as `run_batch`.

    Example:
    >>> vectors = TokenizedTexts(texts, preprocessor).embed(tflite_runner("minilm.tflite"))
    """
    from ai_edge_litert.interpreter import Interpreter  # optional: the `litert` extra

    runner = Interpreter(model_path=str(path), num_threads=num_threads).get_signature_runner()
    return lambda ids, mask: runner(token_ids=ids, padding_mask=mask)["embedding"]
