"""The ONNX format: an `.onnx` file for ONNX Runtime (`export(..., format="onnx")`)."""
