"""Convert a .keras model of keras_subembed to a SavedModel and/or a verified .tflite.

    python device/convert.py mlm_results/sub-clustered.keras --tflite mlm.tflite [--quantization dynamic]

Also installed as the `keras-subembed-convert` command. Prints the export
report (file and embedding bytes, ops, max error vs Keras) and writes the
model's vocabulary beside the .tflite (`mlm.vocab.txt`) for the app. Run from
any Keras backend: on JAX the conversion runs in a TensorFlow subprocess.
"""

import os
import sys

# Before TensorFlow is imported, or it has no effect.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_subembed.export.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
