"""MediaPipe Tasks metadata (BERT tokenizer, vocabulary, embedding output) by MediaPipe's own writer.

The PyPI `mediapipe` 1.x and 0.10.3x wheels run the Tasks but their metadata
writer does not import: `mediapipe.tasks.python.metadata.metadata` imports the
compiled `_pywrap_metadata_version`, which those wheels no longer ship (the
0.10.21 wheel still has it but pins NumPy 1 and protobuf 4). That module has
one function, the smallest metadata-parser version able to read a metadata
buffer; `metadata_writer` below supplies it, computed from the schema's own
"Added in" versions, only while the writer's modules import, so everything
else is MediaPipe's writer as published.
"""

import contextlib
import importlib
import sys
import types

from keras_subembed.optional import mediapipe
from keras_subembed.optional import mediapipe_metadata_schema

# The compiled module the published wheels lack, and its parent packages.
MISSING_MODULE = "mediapipe.tasks.cc.metadata.python._pywrap_metadata_version"


def metadata_writer():
    """MediaPipe's `metadata_writers.metadata_writer` module, importable on any wheel."""
    mediapipe.require()
    name = "mediapipe.tasks.python.metadata.metadata_writers.metadata_writer"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is None or not MISSING_MODULE.startswith(error.name):
            raise
    with stand_in_version_module():
        return importlib.import_module(name)


@contextlib.contextmanager
def stand_in_version_module():
    """Register a pure-Python `_pywrap_metadata_version` while MediaPipe's writer imports.

    The writer binds the module when it is imported; the stand-in is taken
    out of `sys.modules` afterwards so nothing else ever finds it there.
    """
    parts = MISSING_MODULE.split(".")
    added = []
    for depth in range(3, len(parts) + 1):  # mediapipe.tasks.cc, ..., the module
        name = ".".join(parts[:depth])
        if name in sys.modules:
            continue
        module = types.ModuleType(name)
        if depth < len(parts):
            module.__path__ = []  # a package, so the next level imports from it
        else:
            module.GetMinimumMetadataParserVersion = minimum_parser_version
        sys.modules[name] = module
        added.append(name)
    try:
        yield
    finally:
        for name in added:
            sys.modules.pop(name, None)
        # The failed first import may have left half-imported writer modules.
        for name in [n for n in sys.modules if n.startswith("mediapipe.tasks.cc")]:
            sys.modules.pop(name, None)


def minimum_parser_version(metadata_buffer):
    """The lowest metadata-parser version that reads `metadata_buffer`.

    What MediaPipe's compiled function computes: the newest schema feature
    the buffer uses, each by the version `metadata_schema.fbs` says added it.
    """
    schema = mediapipe_metadata_schema.require()
    metadata = schema.ModelMetadataT.InitFromObj(
        schema.ModelMetadata.GetRootAsModelMetadata(bytearray(metadata_buffer), 0))
    versions = [(1, 0, 0)]

    def files(owner):
        return getattr(owner, "associatedFiles", None) or []

    def tensors(subgraph):
        return (subgraph.inputTensorMetadata or []) + (subgraph.outputTensorMetadata or [])

    def units(subgraph):
        process_units = (subgraph.inputProcessUnits or []) + (subgraph.outputProcessUnits or [])
        for tensor in tensors(subgraph):
            process_units += tensor.processUnits or []
        return process_units

    all_files = list(files(metadata))
    for subgraph in metadata.subgraphMetadata or []:
        all_files += files(subgraph)
        for tensor in tensors(subgraph):
            all_files += files(tensor)
            content = tensor.content
            if content is not None and content.contentPropertiesType == (
                    schema.ContentProperties.AudioProperties):
                versions.append((1, 3, 0))
        if subgraph.inputTensorGroups or subgraph.outputTensorGroups:
            versions.append((1, 2, 0))
        if getattr(subgraph, "customMetadata", None):
            versions.append((1, 5, 0))
        for unit in units(subgraph):
            if unit.optionsType in (schema.ProcessUnitOptions.BertTokenizerOptions,
                                    schema.ProcessUnitOptions.SentencePieceTokenizerOptions):
                versions.append((1, 1, 0))
            elif unit.optionsType == schema.ProcessUnitOptions.RegexTokenizerOptions:
                versions.append((1, 2, 1))
            for field in ("vocabFile", "sentencePieceModel"):  # the tokenizers' files
                all_files += getattr(unit.options, field, None) or []
    for file in all_files:
        if file.type == schema.AssociatedFileType.VOCABULARY:
            versions.append((1, 0, 1))
        elif file.type == schema.AssociatedFileType.SCANN_INDEX_FILE:
            versions.append((1, 4, 0))
        if getattr(file, "version", None):
            versions.append((1, 4, 1))
    return ".".join(map(str, max(versions)))
