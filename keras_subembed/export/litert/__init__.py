"""The LiteRT flatbuffer both `.tflite` formats write (plain and MediaPipe): conversion,
reading, int8 lookup tables and `ai-edge-quantizer` recipes."""
