"""`ExportFormat`: what one file format adds to the pipeline that `export` runs."""

import keras

from keras_subembed import files
from keras_subembed.checks import check_bool
from keras_subembed.checks import check_non_negative_int
from keras_subembed.checks import is_integer
from keras_subembed.export.export_report import ExportReport
from keras_subembed.export.model_parts import check_embedding_mode
from keras_subembed.export.model_parts import dense_table_bytes
from keras_subembed.export.model_parts import with_embedding_mode
from keras_subembed.export.output_parity import OutputParity
from keras_subembed.export.output_parity import FLOAT32_TOLERANCE
from keras_subembed.export.output_parity import median_ms
from keras_subembed.export.signature import ServingInputs
from keras_subembed.export.signature import check_sample_inputs
from keras_subembed.export.signature import make_sample_inputs
from keras_subembed.export.signature import sequence_length_of
from keras_subembed.export.signature import sequence_lengths_of
from keras_subembed.export.signature import serving_function
from keras_subembed.export.staged_model import StagedModel
from keras_subembed.export.tokenizer_file import TokenizerFile
from keras_subembed.models.families.token_embedding import find_token_embedding


class ExportFormat:
    """One file format of `keras_subembed.export.export`: only what is its own.

    `export` calls, in turn: the constructor (argument checks),
    `check_target`, `check_tokenizer_file`, `stage(model, tokenizer_file)`,
    which returns a `StagedModel`, then with it `convert`, `measure`
    (`verify_file`, `time_file`), `report` and `write` (the tokenizer file
    first). A subclass sets `description`, `quantizations` and their
    `tolerances` (and `min_cosines` where it holds them),
    defines `is_ours` (the proof `overwrite` needs), `convert`, `run` and
    `file_facts`, `file_metadata` where it writes a tokenizer file beside
    its own, and overrides any other step it does its own way.
    `register_format(name)` makes it `export(..., format=name)`.

    Args:
        quantization: one of the format's `quantizations`.
        verify: run the file on sample inputs and compare every output with
            Keras: an error beyond `tolerances[quantization]` (times the
            largest |output|, at least 1), a mean cosine below
            `min_cosines[quantization]`, or any NaN or infinity, raises
            `ExportVerificationError` and writes nothing.
        sample_inputs: the inputs to verify on: a list of samples, each a
            dict `{input name: array}` (or the array for a single-input
            model); made from the model's vocabulary when `None`.
        sequence_lengths: lengths of the made-up samples (capped at the
            model's `max_sequence_length`), each a positive int.
        latency_runs: when positive, time this many runs of one sequence
            (batch 1, 1 thread) and report the median.
        embedding_mode: `"compressed"` keeps the compressed computation in the
            file (small); `"frozen"` stores the embeddings whose class has
            `freeze_speeds_up` (ALONE, DeFINE) as one lookup table (fast).
        tokenizer_file: write the model's tokenizer beside the file, where
            `device/run_tflite.py` and `device/search_text.py` look for it
            (`<name>.vocab.txt` for WordPiece, `<name>.spm` for an XLM-R
            SentencePiece model; see `TokenizerFile`), when the model has a
            preprocessor with one (a keras-hub `TextEmbedder`, a task with a
            preprocessor). `overwrite` governs it as the file itself.

    Attributes:
        tolerances: `{quantization: tolerance}` for each of `quantizations`:
            the largest abs error of any output the file may have, as a
            fraction of the largest |Keras output| (at least 1), from 0
            (excluded) to 1. What Hugging Face optimum's exporters call
            `ATOL_FOR_VALIDATION`, relative here.
        min_cosines: `{quantization: cosine}`, the lowest mean cosine of
            each output's rows to Keras' (in (0, 1]), or None: no floor.

    Example:
    ```python
    @register_format("npz")
    class NpzFormat(ExportFormat):
        description = "an .npz file"  # and is_ours, convert, run, file_facts
        tolerances = {None: 1e-6}  # rows looked up, not computed
    ```
    """

    description = "a file"  # what refusals call the file: "a .tflite file"
    format_name = None  # the name `register_format` gives it
    quantizations = (None,)
    tolerances = {None: FLOAT32_TOLERANCE}
    min_cosines = None
    # On another backend the export runs in a TensorFlow process on a `.keras`
    # file; a live model is saved to a temporary one first, or else refused.
    saves_live_model = True

    def __init__(self, quantization=None, verify=True, sample_inputs=None,
                 sequence_lengths=(16, 128), latency_runs=0, embedding_mode="compressed",
                 tokenizer_file=True):
        if quantization not in self.quantizations:
            raise ValueError(
                f"`quantization` must be one of {self.quantizations}. "
                f"Received: quantization={quantization!r}"
            )
        self.quantization = quantization
        self.verify = check_bool("verify", verify)
        self.sample_inputs = sample_inputs
        self.sequence_lengths = check_sequence_lengths(sequence_lengths)
        self.latency_runs = check_non_negative_int("latency_runs", latency_runs)
        self.embedding_mode = check_embedding_mode(embedding_mode)
        self.tokenizer_file = check_bool("tokenizer_file", tokenizer_file)

    def is_ours(self, path):
        """Whether the file at `path` is one this format wrote: all `overwrite` replaces."""
        raise self.undefined("is_ours(path)")

    def undefined(self, method):
        """The error of a step this format does not define: which method it must."""
        return NotImplementedError(
            f"The export format {self.format_name!r} ({type(self).__name__}) must define "
            f"`{method}`; see `ExportFormat`'s docstring for what each step returns.")

    def check_target(self, path, overwrite, keep):
        """`path` as a `Path` once it may receive the file, else a clear error."""
        return files.check_file_target(path, overwrite, self.is_ours, self.description, keep)

    def file_metadata(self, path):
        """The `keras_subembed` metadata of the file at `path` (None when there is
        none, or it is not this format's): the proof a tokenizer file beside it is ours."""
        return None

    def check_tokenizer_file(self, model, path, overwrite, keep):
        """The `TokenizerFile` to write beside `path`, checked before any work
        (None when not asked or the model has no tokenizer)."""
        tokenizer = TokenizerFile.of(model, path) if self.tokenizer_file else None
        if tokenizer is not None:
            files.check_distinct([path, tokenizer.path])
            tokenizer.check(overwrite, self.file_metadata(path) if path.is_file() else None, keep)
        return tokenizer

    def stage(self, model, tokenizer_file=None):
        """The `StagedModel` of the loaded `model`: its serving inputs and samples
        (a missing one fails before converting), and the `tokenizer_file` to write."""
        model = with_embedding_mode(model, self.embedding_mode)
        serving_inputs = ServingInputs.of(model, self.sample_inputs)
        samples = None
        if self.verify or self.latency_runs:
            samples = (check_sample_inputs(self.sample_inputs, serving_inputs)
                       if self.sample_inputs is not None
                       else make_sample_inputs(model, serving_inputs, self.sequence_lengths))
        return StagedModel(model, serving_inputs, samples, tokenizer_file=tokenizer_file)

    def convert(self, staged, scratch):
        """The file's bytes of `staged` (a `StagedModel`); `scratch` is a free name
        beside the target for work files."""
        raise self.undefined("convert(staged, scratch)")

    def run(self, data, num_threads=None):
        """A function running the file `data`: `{input name: array}` -> `{output name: array}`."""
        raise self.undefined("run(data, num_threads=None)")

    def rounded_model(self, staged):
        """A copy of the model with its weights rounded as the file stores them, or None."""
        return None

    def measure(self, staged, data, path):
        """The report's fields of verification and timing: measured when asked."""
        # None, not 0.0: an error nobody measured is not a zero error.
        checks = dict(max_abs_error=None, tolerance=float(self.tolerances[self.quantization]),
                      verified_sequence_lengths=(), cosine_to_float=None)
        if self.verify:
            error, tolerance, cosine, lengths = self.verify_file(staged, data, path)
            checks.update(max_abs_error=float(error), tolerance=float(tolerance),
                          cosine_to_float=cosine, verified_sequence_lengths=tuple(lengths))
        if self.latency_runs:
            checks["latency_ms"], checks["latency_sequence_length"] = self.time_file(staged, data)
        return checks

    def verification_bounds(self):
        """`OutputParity.check`'s bounds for this quantization: `tolerance`,
        `min_cosine` and `named`, the attribute they come from (for errors)."""
        key = self.quantization
        return dict(tolerance=self.tolerances[key],
                    min_cosine=None if self.min_cosines is None else self.min_cosines[key],
                    named=f"{type(self).__name__}.tolerances[{key!r}]")

    def verify_file(self, staged, data, path):
        """(max abs error, tolerance, lowest mean cosine, sequence lengths) of
        every output over the samples, or `ExportVerificationError`."""
        # Eager: a tf.function per export would be traced anew for every
        # sample length and every model, and TensorFlow warns of retracing.
        keras_function = serving_function(staged.model, staged.serving_inputs)
        rounded = self.rounded_model(staged)
        rounded_function = (None if rounded is None
                            else serving_function(rounded, staged.serving_inputs))
        run = self.run(data)
        parity = OutputParity(f"The {self.description.split(' ', 1)[1]}")
        for sample in staged.samples:
            tensors = {name: keras.ops.convert_to_tensor(v) for name, v in sample.items()}
            parity.add(run(sample), as_numpy(keras_function(tensors)),
                       None if rounded is None else as_numpy(rounded_function(tensors)))
        return (*parity.check(path, **self.verification_bounds()),
                sequence_lengths_of(staged.samples, staged.serving_inputs))

    def time_file(self, staged, data):
        """(median ms, length) of the longest sample's first sequence, 1 thread."""
        inputs = staged.serving_inputs
        longest = max(staged.samples, key=lambda sample: sequence_length_of(sample, inputs) or 0)
        sample = {name: value[:1] for name, value in longest.items()}
        run = self.run(data, num_threads=1)
        return median_ms(lambda: run(sample), self.latency_runs), sequence_length_of(sample, inputs)

    def write(self, staged, path, data, overwrite):
        """Write the tokenizer file, then the file; a failure takes both back."""
        tokenizer = staged.tokenizer_file
        if tokenizer is not None:
            tokenizer.write(overwrite)
        try:
            files.write_file(path, data, overwrite, self.is_ours)
        except BaseException:
            if tokenizer is not None:
                tokenizer.undo()
            raise

    def file_facts(self, staged, data, embedding):
        """The report's fields the file tells: `embedding_bytes`, `ops`, `outputs`
        (and `quantized_ops`, `constant_bytes` where the format counts them)."""
        raise self.undefined("file_facts(staged, data, embedding)")

    def report(self, staged, path, data, checks):
        embedding = find_token_embedding(staged.model)
        tokenizer = staged.tokenizer_file
        return ExportReport(
            path=str(path), quantization=self.quantization or "float32",
            embedding_mode=self.embedding_mode, file_bytes=len(data),
            dense_embedding_bytes=dense_table_bytes(embedding),
            inputs=tuple(staged.serving_inputs.names), **checks,
            tokenizer_path=None if tokenizer is None else str(tokenizer.path),
            **self.file_facts(staged, data, embedding))


def as_numpy(outputs):
    return {name: keras.ops.convert_to_numpy(value) for name, value in outputs.items()}


def check_sequence_lengths(sequence_lengths):
    lengths = list(sequence_lengths) if isinstance(sequence_lengths, (list, tuple)) else [0]
    if not lengths or not all(is_integer(n) and n >= 1 for n in lengths):
        raise ValueError(
            "`sequence_lengths` must be a non-empty list of positive ints (a file needs "
            f"at least one token per sequence). Received: sequence_lengths={sequence_lengths!r}"
        )
    return tuple(int(n) for n in lengths)

