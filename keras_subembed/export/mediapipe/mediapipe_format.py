"""A sentence embedder -> a `.tflite` file that MediaPipe Tasks' `TextEmbedder` runs from raw text."""

import dataclasses
import os
import tempfile
import warnings

import keras
import keras_hub
import numpy as np

from keras_subembed import files
from keras_subembed.checks import check_choice
from keras_subembed.checks import is_integer
from keras_subembed.export.errors import UnsupportedOpError
from keras_subembed.export.export_format import ExportFormat
from keras_subembed.export.litert.conversion import litert_file
from keras_subembed.export.litert.conversion import recipe_model
from keras_subembed.export.litert.conversion import recipe_of
from keras_subembed.export.litert.flatbuffer import constant_bytes
from keras_subembed.export.litert.flatbuffer import embedding_constant_bytes
from keras_subembed.export.litert.flatbuffer import op_names
from keras_subembed.export.litert.flatbuffer import quantized_op_count
from keras_subembed.export.litert.quantizer_recipes import RECIPE_TOLERANCES
from keras_subembed.export.mediapipe.mediapipe_embedder import MediaPipeEmbedder
from keras_subembed.export.mediapipe.mediapipe_metadata import metadata_writer
from keras_subembed.export.mediapipe.mediapipe_sentencepiece import ascii_lowercase
from keras_subembed.export.mediapipe.mediapipe_staged_model import MediaPipeStagedModel
from keras_subembed.optional import mediapipe
from keras_subembed.export.model_parts import export_metadata
from keras_subembed.export.model_parts import max_sequence_length
from keras_subembed.export.output_parity import FLOAT32_TOLERANCE
from keras_subembed.export.output_parity import OutputParity
from keras_subembed.export.output_parity import median_ms
from keras_subembed.export.pipeline import export
from keras_subembed.export.pipeline import register_format
from keras_subembed.export.signature import ServingInputs
from keras_subembed.quantization.recipes import RECIPE_NAMES
from keras_subembed.tflite_metadata import read_model
from keras_subembed.tflite_metadata import with_buffers_inline
from keras_subembed.tokenizer_kinds import find_tokenizer_kind
from keras_subembed.tokenizer_kinds import tokenizer_kind_of
from keras_subembed.tokenizer_kinds.registry import mediapipe_kinds
from keras_subembed.tokenizer_kinds.registry import registered_kinds

# MediaPipe's BERT text path finds its three int32 inputs by these metadata
# names and feeds them at the length the file fixes, batch 1.
MEDIAPIPE_INPUTS = ("ids", "mask", "segment_ids")
NORMALIZATION_CHECKS = ("warn", "raise")
# Ops reading resource variables: MediaPipe's interpreter refuses such files.
VARIABLE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE")
# Verification text made of the vocabulary's own whole words (no accents, no
# case: every tokenizer normalisation leaves them as they are).
DEFAULT_TEXT_COUNT = 16


class MediaPipeInputs(ServingInputs):
    """MediaPipe's `ids, mask, segment_ids` at a fixed length, passed to a
    keras-hub `TextEmbedder` as `token_ids, padding_mask, segment_ids`."""

    def arguments(self, by_name):
        return {"token_ids": by_name["ids"], "padding_mask": by_name["mask"],
                "segment_ids": by_name["segment_ids"]}


@register_format("mediapipe")
class MediaPipeFormat(ExportFormat):
    """A `.tflite` file with MediaPipe Tasks metadata (see `export_mediapipe`)."""

    description = "a .tflite file"
    quantizations = (None, "dynamic", "float16") + RECIPE_NAMES
    tolerances = {None: FLOAT32_TOLERANCE, "float16": 1e-2, "dynamic": 0.1, **RECIPE_TOLERANCES}
    # The lowest mean cosine of MediaPipe's vectors to Keras': to the float
    # model for the converter's quantizations; for a recipe, to the model
    # computing with the kernels the file stores (`round_weights`), as the
    # rest of the file (int8 activations and lookup tables) is all that
    # differs. int4_dynamic measured: 0.99999 on the tests' tiny BERTs,
    # 0.99974 on multilingual-e5-small's split student (40 sentences in 10
    # scripts, 136 tokens; benchmarks/bench_mediapipe_int4.py).
    min_cosines = {None: 0.999, "dynamic": 0.99, "float16": 0.999,
                   **{name: 0.99 for name in RECIPE_NAMES}}

    def __init__(self, quantization=None, sequence_length=None, check_normalization="warn",
                 verify=True, texts=None, latency_runs=0):
        # The tokenizer travels inside the file (MediaPipe's metadata): none beside it.
        super().__init__(quantization=quantization, verify=verify, latency_runs=latency_runs,
                         tokenizer_file=False)
        check_choice("check_normalization", check_normalization, NORMALIZATION_CHECKS)
        if texts is not None and (isinstance(texts, str) or not texts
                                  or not all(isinstance(t, str) and t.strip() for t in texts)):
            raise ValueError(
                "`texts` must be a non-empty list of non-blank strings. "
                f"Received: texts={texts!r:.200}"
            )
        mediapipe.require()  # before any work: the metadata and the check need it
        self.recipe = recipe_of(quantization)
        self.sequence_length, self.check_normalization = sequence_length, check_normalization
        self.texts = None if texts is None else list(texts)

    is_ours = staticmethod(files.is_tflite_file)

    def stage(self, embedder, tokenizer_file=None):
        tokenizer = check_embedder(embedder)
        # Before any work: the file MediaPipe reads is checked as it is made.
        mediapipe_tokenizer = mediapipe_tokenizer_file(tokenizer)
        length = check_length(
            embedder.preprocessor.sequence_length if self.sequence_length is None
            else self.sequence_length, max_sequence_length(embedder))
        check_tokenizer_normalization(tokenizer, self.check_normalization)
        return MediaPipeStagedModel(
            model=embedder,
            serving_inputs=MediaPipeInputs("dict", tuple(
                (name, "int32", (1, length)) for name in MEDIAPIPE_INPUTS)),
            samples=vocabulary_sentences(tokenizer) if self.texts is None else self.texts,
            converted=recipe_model(embedder, self.recipe),
            sequence_length=length, mediapipe_tokenizer=mediapipe_tokenizer)

    def convert(self, staged, scratch):
        flatbuffer = litert_file(
            staged.converted, staged.serving_inputs, self.quantization, self.recipe,
            dict(export_metadata(staged.model), runtime="mediapipe",
                 sequence_length=staged.sequence_length), scratch=scratch)
        ops = set(op_names(flatbuffer)) & set(VARIABLE_OPS)
        if ops:
            raise UnsupportedOpError(
                f"The converted file reads resource variables ({sorted(ops)}); "
                "MediaPipe cannot run it. The weights must be constants."
            )
        # MediaPipe's metadata last, after any quantization: it appends the
        # vocabulary as a zip past the flatbuffer, which rewriting the
        # flatbuffer afterwards would cut off. Its writer rewrites the
        # flatbuffer itself: the quantizer's buffers by offset come inside first.
        if self.recipe:
            flatbuffer = with_buffers_inline(flatbuffer)
        return with_mediapipe_metadata(flatbuffer, staged.mediapipe_tokenizer, staged.model.name)

    def rounded_model(self, staged):
        return staged.converted if self.recipe else None  # rounded by `stage`

    def measure(self, staged, data, path):
        if not (self.verify or self.latency_runs):
            return super().measure(staged, data, path)
        with MediaPipeEmbedder(data) as embedder:
            return super().measure(dataclasses.replace(staged, embedder=embedder), data, path)

    def verify_file(self, staged, data, path):
        """MediaPipe's vectors of the texts against the embedder's own, tokenized by each."""
        texts = staged.samples
        what = f"MediaPipe's TextEmbedder (on {len(texts)} texts)"
        # MediaPipe lowercases A-Z; a WordPiece model here lowercases anyway.
        seen = [ascii_lowercase(text) for text in texts]
        got = {"embedding": np.stack([staged.embedder.embed(text) for text in texts])}
        stored_kernels = self.rounded_model(staged)
        models = [staged.model] + ([stored_kernels] if stored_kernels is not None else [])
        want, *rounded = ({"embedding": vectors}
                          for vectors in keras_vectors(models, seen, staged.sequence_length))
        parity = OutputParity(what)
        parity.add(got, want, *rounded)
        # A recipe's int4 kernels move the vectors from the float model's by an
        # amount that depends on the model; from the rounded model's, only by
        # the file's int8 activations and tables: the floor is held there.
        bounds = self.verification_bounds()
        checks = parity.check(path, **(dict(bounds, min_cosine=None) if rounded else bounds))
        if rounded:
            stored = OutputParity(f"{what}, against Keras with the file's rounded kernels,")
            stored.add(got, rounded[0])
            stored.check(path, **bounds)
        return (*checks, (staged.sequence_length,))

    def time_file(self, staged, data):
        """(median ms, length) of MediaPipe's `embed` of the longest text, tokenization included."""
        longest = max(staged.samples, key=len)
        return (median_ms(lambda: staged.embedder.embed(longest), self.latency_runs),
                staged.sequence_length)

    def file_facts(self, staged, data, embedding):
        return dict(embedding_bytes=embedding_constant_bytes(data, embedding),
                    ops=op_names(data), outputs=("embedding",),
                    quantized_ops=quantized_op_count(data), constant_bytes=constant_bytes(data),
                    sequence_length=staged.sequence_length)


def export_mediapipe(model, path, **kwargs):
    """`export(model, path, format="mediapipe", **kwargs)`: a file MediaPipe Tasks'
    `TextEmbedder` runs from raw strings.

    The file takes MediaPipe's BERT inputs (`ids`, `mask`, `segment_ids`:
    int32, batch 1, `sequence_length` tokens), returns `embedding`, holds
    builtin ops only with the weights frozen into constants, and carries
    MediaPipe Tasks metadata written by MediaPipe's own metadata writer: the
    model's tokenizer as an associated file, and a feature (embedding)
    output. An Android, iOS, web or Python app then needs no tokenizer code:
    `TextEmbedder.create_from_model_path(path).embed(text)`.

    Two tokenizer kinds ship (`keras_subembed.tokenizer_kinds`: a kind
    registered with a `mediapipe_writer` ships too):

    - WordPiece (BERT, MiniLM): a BERT tokenizer with the vocabulary.
      MediaPipe lowercases but does not strip accents: for a model trained
      with accents stripped (all-MiniLM-L6-v2, uncased BERT) accented words
      get other ids on the phone than in Keras. `check_normalization="warn"`
      warns then, `"raise"` refuses; a cased WordPiece model is always
      refused, as MediaPipe would lowercase every input.
    - SentencePiece (`XLMRobertaTokenizer`: multilingual-e5,
      paraphrase-multilingual-MiniLM): the SentencePiece model, renumbered
      so that MediaPipe feeds the model its own ids
      (`mediapipe_sentencepiece_model`). MediaPipe lowercases ASCII letters
      A-Z before tokenizing, and XLM-R is cased: "Paris" is embedded as
      "paris" (every other script, and accented Latin letters, are kept).
      On multilingual-e5-small that costs a mean cosine of about 0.992 on
      Latin-script text and 0.999 on other scripts (through the Latin words
      in them) (`benchmarks/bench_mediapipe_multilingual.py`). `"warn"` warns of it,
      `"raise"` refuses; verification compares with Keras fed the texts
      with ASCII letters lowercased, as MediaPipe's model sees them.

    Args:
        model: a keras-hub `TextEmbedder` with a WordPiece (BERT) or
            XLM-R SentencePiece tokenizer (e.g. `BertTextEmbedder`, or one
            from `keras_subembed.compress`), or a path to its `.keras` file. On
            another backend the export runs in a TensorFlow subprocess (a live
            model is saved to a temporary `.keras` file first).
        path: the `.tflite` file to write (atomically, after verification).
        quantization: `None` (float32), `"dynamic"` (int8 weights; about
            0.998 cosine to the float model on MiniLM, as any dynamic-range
            file), `"float16"` (half the float file, its vectors), or an
            `ai-edge-quantizer` recipe as for `export_tflite` (e.g.
            `"int4_dynamic"`: int4 transformer kernels, int8 lookup tables;
            the same conversion, so the file is the int4 `.tflite` file plus
            the tokenizer). A recipe's file is verified against Keras
            computing with the kernels the file stores (`round_weights`),
            at least `MediaPipeFormat.min_cosines[recipe]` (0.99; `int4_dynamic` measured
            0.9997 on multilingual-e5-small's student, whose file is 35.9 MB:
            the 30.6 MB int4 `.tflite` file and the 5.4 MB SentencePiece
            model); the report's `cosine_to_float` says what the rounding
            costs (0.978 for that student before quantization-aware training).
        sequence_length: the fixed length MediaPipe pads or truncates to,
            `[CLS]` and `[SEP]` included; defaults to the preprocessor's.
            Every text costs this length's time: `mediapipe_sequence_length`
            chooses it from the app's texts. The report states it
            (`report.sequence_length`).
        check_normalization: `"warn"` or `"raise"` when the model's text
            normalisation differs from MediaPipe's (a WordPiece model that
            strips accents, a SentencePiece model that keeps ASCII case).
        verify: load the file in `mediapipe.tasks.python.text.TextEmbedder`,
            embed `texts` and compare with the embedder's own vectors: a mean
            cosine below `MediaPipeFormat.min_cosines[quantization]`, an error
            beyond `MediaPipeFormat.tolerances[quantization]` or a NaN raises
            `ExportVerificationError` and writes nothing.
        texts: strings to verify on; defaults to sentences of the
            vocabulary's whole words.
        overwrite: replace an existing `.tflite` file this package wrote.
        latency_runs: when positive, time this many MediaPipe `embed` calls
            on the longest text (tokenization included) and report the median.

    Returns:
        An `ExportReport`; `cosine_to_float` is the mean cosine of
        MediaPipe's vectors to the float Keras model's.

    Example:
    ```python
    report = export_mediapipe(embedder, "minilm_mediapipe.tflite", quantization="dynamic")
    print(report.file_bytes, report.cosine_to_float)
    length = mediapipe_sequence_length(embedder, texts)  # 99% of `texts` fit whole
    report = export_mediapipe(embedder, "e5.int4.tflite", quantization="int4_dynamic",
                              sequence_length=length, texts=texts)
    print(report.sequence_length, report.file_bytes)
    ```
    """
    return export(model, path, format="mediapipe", **kwargs)


def check_embedder(embedder):
    """The embedder's tokenizer, once MediaPipe has a tokenizer of its kind, or a clear error."""
    if not isinstance(embedder, keras_hub.models.TextEmbedder):
        raise TypeError(
            "`embedder` must be a keras-hub TextEmbedder (e.g. BertTextEmbedder, or one "
            f"from keras_subembed.compress). Received: {type(embedder).__name__}"
        )
    tokenizer = getattr(embedder.preprocessor, "tokenizer", None)
    kind = find_tokenizer_kind(tokenizer)
    if kind is None or not kind.mediapipe_writer:
        raise ValueError(
            "MediaPipe's BERT text path tokenizes with "
            f"{' or '.join(kind.description for kind in mediapipe_kinds())}; this embedder's "
            f"tokenizer is {type(tokenizer).__name__}"
            f"{'' if kind is None else f' (the {kind.name!r} kind, which MediaPipe lacks)'}. "
            f"Registered tokenizer kinds: {registered_kinds()}. "
            f"Received: embedder={embedder.name!r}"
        )
    return tokenizer


def check_length(sequence_length, limit=None):
    """`sequence_length` as an int from 3 ([CLS], one token, [SEP]) to `limit`."""
    if not is_integer(sequence_length) or (
            sequence_length < 3 or (limit is not None and sequence_length > limit)):
        raise ValueError(
            "`sequence_length` must be an int from 3 ([CLS], one token, [SEP])"
            f"{'' if limit is None else f' to the model limit {limit}'}. "
            f"Received: sequence_length={sequence_length!r}"
        )
    return int(sequence_length)


def check_tokenizer_normalization(tokenizer, check_normalization):
    """Warn of (or refuse) what MediaPipe's normalisation changes for the
    tokenizer's kind: accents kept for WordPiece (a cased WordPiece model is
    always refused), ASCII case for SentencePiece."""
    message = tokenizer_kind_of(tokenizer).mediapipe_normalization(tokenizer)
    if message:
        warn_or_raise(check_normalization, message)


def warn_or_raise(check_normalization, message):
    if check_normalization == "raise":
        raise ValueError(message + " Pass check_normalization=\"warn\" to export anyway.")
    warnings.warn(message, stacklevel=4)


def signature_input_tensors(flatbuffer):
    """`{input name: tensor name}` for MediaPipe's three inputs.

    From the file's signature when it has one (a SavedModel's), else from
    the graph's input tensors named after them (a concrete function's).
    """
    model = read_model(flatbuffer)
    graph = model.subgraphs[0]
    if model.signatureDefs:
        return {entry.name.decode(): graph.tensors[entry.tensorIndex].name.decode()
                for entry in model.signatureDefs[0].inputs}
    names = {}
    tensor_names = [graph.tensors[index].name.decode() for index in graph.inputs]
    for wanted in sorted(MEDIAPIPE_INPUTS, key=len, reverse=True):  # segment_ids before ids
        for tensor_name in tensor_names:
            if tensor_name not in names.values() and tensor_name.split(":")[0].endswith(wanted):
                names[wanted] = tensor_name
                break
    return names


def mediapipe_tokenizer_file(tokenizer):
    """(writer, file name, bytes) MediaPipe tokenizes with: the class of its
    metadata writers for the tokenizer's kind and the file it carries (a
    WordPiece vocabulary, or the SentencePiece model renumbered to the model's ids)."""
    kind = tokenizer_kind_of(tokenizer)
    if not kind.mediapipe_writer:
        raise ValueError(
            f"MediaPipe has no tokenizer of the {kind.name!r} kind ({kind.class_name}); it "
            f"tokenizes with {' or '.join(k.description for k in mediapipe_kinds())}.")
    return (kind.mediapipe_writer, *kind.mediapipe_file(tokenizer))


def with_mediapipe_metadata(flatbuffer, mediapipe_tokenizer, name):
    """`flatbuffer` with MediaPipe Tasks metadata by MediaPipe's own writer.

    `mediapipe_tokenizer` is `(writer, name, bytes)` (see `mediapipe_tokenizer_file`): the
    class of MediaPipe's metadata writers that carries the file, e.g.
    `"BertTokenizer"` for a `vocab.txt`.
    """
    writer_module = metadata_writer()
    tensors = signature_input_tensors(flatbuffer)
    writer_name, file_name, data = mediapipe_tokenizer
    with tempfile.TemporaryDirectory() as tmp:
        file_path = os.path.join(tmp, file_name)
        with open(file_path, "wb") as file:
            file.write(data)
        writer = writer_module.MetadataWriter.create(bytearray(flatbuffer))
        writer.add_general_info(
            model_name=name,
            model_description="Sentence embedder exported by keras_subembed for MediaPipe Tasks.")
        writer.add_bert_text_input(
            getattr(writer_module, writer_name)(file_path),
            ids_name=tensors["ids"], mask_name=tensors["mask"],
            segment_name=tensors["segment_ids"])
        writer.add_feature_output(name="embedding", description="The sentence vector.")
        model_with_metadata, _ = writer.populate()
        # Its finaliser cleans a temporary folder with `os`, which at interpreter
        # exit may already be gone: finalise it here.
        del writer
    return bytes(model_with_metadata)


def vocabulary_sentences(tokenizer, count=DEFAULT_TEXT_COUNT, seed=0):
    """Short sentences of the vocabulary's lowercase whole words, as the
    tokenizer's kind finds them (ASCII for WordPiece, any script for SentencePiece)."""
    words = tokenizer_kind_of(tokenizer).whole_words(tokenizer)
    if not words:
        raise ValueError(
            "Cannot make verification text from this vocabulary (no lowercase whole words); "
            "pass `texts`."
        )
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, size=int(rng.integers(2, 12)))) for _ in range(count)]


def keras_vectors(embedders, texts, sequence_length):
    """Each embedder's vectors for `texts`, tokenized by the first one's
    preprocessor at `sequence_length`, as the file is fed."""
    preprocessor = embedders[0].preprocessor
    original = preprocessor.sequence_length
    preprocessor.sequence_length = sequence_length
    try:
        features = preprocessor(keras.ops.convert_to_tensor(texts))
    finally:
        preprocessor.sequence_length = original
    return [np.asarray(keras.ops.convert_to_numpy(embedder(features, training=False)), "float64")
            for embedder in embedders]
