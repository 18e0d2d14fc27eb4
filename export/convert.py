"""Convert a .keras model of keras_subembed to a SavedModel and/or a verified .tflite.

    python export/convert.py mlm_results/sub-clustered.keras --tflite mlm.tflite [--quantization dynamic]

Also installed as the `keras-subembed-convert` command. Prints the export
report (file and embedding bytes, ops, max error vs Keras, latency) and writes
the model's vocabulary beside the .tflite (`mlm.vocab.txt`) for the app.
"""

import sys

from keras_subembed.export.cli import main

if __name__ == "__main__":
    sys.exit(main())
