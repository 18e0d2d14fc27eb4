"""`ExportReport`: its embedding share, its JSON (which a later `overwrite` recognises as
the export's) and its text."""

import json

from keras_subembed import files
from keras_subembed.export import ExportReport


def report(**changes):
    values = dict(path="m.tflite", quantization="dynamic", embedding_mode="compressed",
                  file_bytes=2 * 2**20, embedding_bytes=2**19, dense_embedding_bytes=4_000_000,
                  ops=("GATHER", "FULLY_CONNECTED"), max_abs_error=0.0123, tolerance=0.1,
                  verified_sequence_lengths=(16, 128), inputs=("token_ids", "padding_mask"),
                  outputs=("embedding",), constant_bytes={"int8": 1000, "float32": 64})
    return ExportReport(**{**values, **changes})


def test_the_json_report_is_one_an_export_wrote(tmp_path):
    values = json.loads(report().to_json())
    assert values["embedding_share"] == 0.25  # 512 KiB of 2 MiB
    assert values["ops"] == ["GATHER", "FULLY_CONNECTED"]
    assert values["verified_sequence_lengths"] == [16, 128] and values["outputs"] == ["embedding"]
    assert values["latency_ms"] is None and values["tokenizer_path"] is None
    path = tmp_path / "m.json"
    path.write_text(report().to_json(indent=2))
    assert files.is_json_report(path)


def test_the_text_says_what_was_measured_and_what_was_not():
    lines = str(report()).splitlines()
    assert "file bytes         2,097,152 (2.00 MiB)" in lines
    assert "embedding bytes    524,288 (25.00% of the file)" in lines
    assert "weights            0 op(s) with integer weights; constants int8 1,000 B, float32 64 B" in lines
    assert "max abs error      0.0123 (tolerance 0.1, sequence lengths [16, 128])" in lines
    assert "median latency     not measured (latency_runs=0)" in lines
    assert "signature          token_ids, padding_mask -> embedding" in lines
    assert "sequence length    dynamic (any length the model takes)" in lines
    assert "tokenizer file     none written" in lines
    timed = str(report(latency_ms=3.456, latency_sequence_length=128, sequence_length=64,
                       cosine_to_float=0.999871, tokenizer_path="m.vocab.txt")).splitlines()
    assert "median latency     3.46 ms per sequence of 128 tokens (batch 1, 1 thread)" in timed
    assert "sequence length    64 tokens, fixed (every text is padded or cut to it)" in timed
    assert "cosine to float    0.99987 (mean over rows, vs the float Keras model)" in timed
    assert "tokenizer file     m.vocab.txt" in timed
