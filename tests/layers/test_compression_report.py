"""`CompressionReport`: stored bytes beside the dense table's, as a dict, JSON and text."""

import json

from keras_subembed.layers.compression_report import CompressionReport


def report(**changes):
    values = dict(layer="sub_embedding", input_dim=1000, output_dim=16, trainable_params=960,
                  non_trainable_params=2000, stored_bytes=5840, dense_params=16_000,
                  dense_bytes=64_000)
    return CompressionReport(**{**values, **changes})


def test_the_ratio_is_dense_bytes_over_stored_bytes_in_every_form():
    compressed = report()
    assert compressed.compression_ratio == 64_000 / 5840
    values = json.loads(compressed.to_json())
    assert values == {**compressed.as_dict(), "compression_ratio": 64_000 / 5840}
    assert values["shared_code_tokens"] is None and values["stored_bytes"] == 5840
    lines = str(compressed).splitlines()
    assert lines[1] == "vocabulary x width    1,000 x 16"
    assert "compression ratio     11.0x" in lines
    assert not [line for line in lines if line.startswith("ids sharing")]


def test_ids_sharing_a_code_are_reported_where_codes_apply():
    lines = str(report(shared_code_tokens=1234)).splitlines()
    assert lines[-1] == "ids sharing a code tuple  1,234"
    assert lines[0] == "layer                     sub_embedding"  # the names line up
