"""Export compressed models as small, verified files: `export(model, filepath, format=...)`."""

import types

from keras_subembed.export.errors import ExportVerificationError
from keras_subembed.export.errors import UnsupportedBackendError
from keras_subembed.export.errors import UnsupportedOpError
from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.export_report import ExportReport
from keras_subembed.export.mediapipe.mediapipe_embedder import MediaPipeEmbedder
from keras_subembed.export.mediapipe.mediapipe_format import export_mediapipe
from keras_subembed.export.mediapipe.mediapipe_sequence_length import mediapipe_sequence_length
from keras_subembed.export.mediapipe.mediapipe_token_ids import mediapipe_token_ids
from keras_subembed.export.model_parts import EMBEDDING_MODES
from keras_subembed.export.onnx.onnx_format import ONNXFormat
from keras_subembed.export.onnx.onnx_format import export_onnx
from keras_subembed.export.pipeline import export
from keras_subembed.export.pipeline import register_format
from keras_subembed.export.saved_model import export_saved_model
from keras_subembed.export.tflite.tflite_format import QUANTIZATIONS
from keras_subembed.export.tflite.tflite_format import TFLiteFormat
from keras_subembed.export.tflite.tflite_format import export_tflite
from keras_subembed.export.tokenizer_file import TokenizerFile

# 0.3.0's one table (read-only), kept for code that reads it: each format now
# states its own, `TFLiteFormat.tolerances`, `ONNXFormat.tolerances`, ...
TOLERANCES = types.MappingProxyType({**ONNXFormat.tolerances, **TFLiteFormat.tolerances})

__all__ = [
    "EMBEDDING_MODES",
    "QUANTIZATIONS",
    "TOLERANCES",
    "ExportFormat",
    "ExportReport",
    "ExportVerificationError",
    "MediaPipeEmbedder",
    "TokenizerFile",
    "UnsupportedBackendError",
    "UnsupportedOpError",
    "export",
    "export_mediapipe",
    "export_onnx",
    "export_saved_model",
    "export_tflite",
    "mediapipe_sequence_length",
    "mediapipe_token_ids",
    "register_format",
]
