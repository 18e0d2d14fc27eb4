"""The MediaPipe format: a `.tflite` file that MediaPipe Tasks' `TextEmbedder` runs from raw text."""
