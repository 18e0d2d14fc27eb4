"""MediaPipe's metadata writer on wheels without its compiled version module: the
stand-in's minimum parser version, by the schema's "Added in" versions."""

import sys

import flatbuffers
import pytest

pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")

from keras_subembed.export.mediapipe import mediapipe_metadata  # noqa: E402
from keras_subembed.optional import mediapipe_metadata_schema  # noqa: E402


def metadata_buffer(process_units=(), input_tensor_groups=None):
    """A `ModelMetadata` flatbuffer with one subgraph taking `process_units`."""
    schema = mediapipe_metadata_schema.require()
    subgraph = schema.SubGraphMetadataT()
    subgraph.inputProcessUnits = list(process_units)
    subgraph.inputTensorGroups = input_tensor_groups
    metadata = schema.ModelMetadataT()
    metadata.name = "test"
    metadata.subgraphMetadata = [subgraph]
    builder = flatbuffers.Builder(0)
    builder.Finish(metadata.Pack(builder), b"M001")
    return bytes(builder.Output())


def tokenizer_unit(kind, vocabulary=True):
    schema = mediapipe_metadata_schema.require()
    options = getattr(schema, f"{kind}OptionsT")()
    if vocabulary:
        vocabulary_file = schema.AssociatedFileT()
        vocabulary_file.name, vocabulary_file.type = "vocab.txt", schema.AssociatedFileType.VOCABULARY
        options.vocabFile = [vocabulary_file]
    unit = schema.ProcessUnitT()
    unit.optionsType, unit.options = getattr(schema.ProcessUnitOptions, f"{kind}Options"), options
    return unit


def test_the_version_is_that_of_the_newest_feature_the_metadata_uses():
    version = mediapipe_metadata.minimum_parser_version
    assert version(metadata_buffer()) == "1.0.0"
    # A BERT tokenizer arrived in 1.1.0 (its vocabulary file, 1.0.1, is older).
    assert version(metadata_buffer([tokenizer_unit("BertTokenizer")])) == "1.1.0"
    assert version(metadata_buffer([tokenizer_unit("RegexTokenizer")])) == "1.2.1"
    groups = [mediapipe_metadata_schema.require().TensorGroupT()]
    assert version(metadata_buffer(input_tensor_groups=groups)) == "1.2.0"


def test_the_stand_in_module_exists_only_while_the_writer_imports():
    if mediapipe_metadata.MISSING_MODULE in sys.modules:
        pytest.skip("this mediapipe wheel has its compiled version module")
    with mediapipe_metadata.stand_in_version_module():
        stand_in = sys.modules[mediapipe_metadata.MISSING_MODULE]
        assert stand_in.GetMinimumMetadataParserVersion is mediapipe_metadata.minimum_parser_version
    assert mediapipe_metadata.MISSING_MODULE not in sys.modules
    assert not [name for name in sys.modules if name.startswith("mediapipe.tasks.cc")]
    assert hasattr(mediapipe_metadata.metadata_writer(), "MetadataWriter")
