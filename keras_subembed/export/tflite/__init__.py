"""The `.tflite` format: a builtins-only LiteRT file (`export(..., format="tflite")`)."""
