"""Run an exported masked-LM .tflite as an app would: LiteRT and NumPy only.

No TensorFlow, no Keras: tokenizes the sentence exactly as keras-hub's
BertTokenizer did in training (`wordpiece_tokenizer.py`, with the vocabulary
written beside the model by `device/convert.py`; a model with an XLM-R
SentencePiece tokenizer, for `search_text.py`, gets `sentencepiece_tokenizer.py`
and the `<model>.spm` file), runs the `serving_default`
signature, prints the top predictions for each [MASK] and the latency.

    python device/run_tflite.py mlm.tflite "the police said the [MASK] was closed ."
    python device/run_tflite.py mlm.tflite "..." --vocabulary mlm.vocab.txt --top-k 5

Text longer than the model accepts is cut (with a notice on stderr); a bad
model file, vocabulary or argument ends with one `error:` line and exit code 2.
The model always gets at least `[CLS] [SEP]`, never a length-0 sequence or an
empty batch (which some LiteRT kernels reject).
The helpers here (model and vocabulary loading, errors, latency) are shared
with `search_text.py`.
"""

import argparse
import dataclasses
import hashlib
import json
import pathlib
import statistics
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter

# The helpers are sibling files: find them also under `runpy.run_path` or
# when this file is imported from another folder.
if str(pathlib.Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).parent))

from wordpiece_tokenizer import VocabularyError  # noqa: E402
from wordpiece_tokenizer import WordPieceTokenizer  # noqa: E402

SIGNATURE = "serving_default"
# The metadata entry keras_subembed's export writes into a .tflite file.
METADATA_NAME = b"keras_subembed"
# The tokenizers the runners read, in the order `vocabulary_path_of` looks
# for their files; `register_runner_tokenizer` adds to it.
RUNNER_TOKENIZERS = []


class RunnerError(Exception):
    """A problem the user can fix; printed as one `error:` line, exit code 2."""


def positive_int(text):
    return _bounded_int(text, 1, "a positive integer")


def non_negative_int(text):
    return _bounded_int(text, 0, "an integer >= 0")


def _bounded_int(text, lowest, wanted):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
    if value < lowest:
        raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
    return value


def add_model_arguments(parser, runs=20):
    """Arguments every runner takes: model, vocabulary, threads, latency runs."""
    parser.add_argument("model", help="the .tflite file")
    parser.add_argument("--vocabulary", help="the tokenizer: a WordPiece vocab.txt or a SentencePiece "
                        ".spm/.model file (default: <model>.vocab.txt, else <model>.spm)")
    parser.add_argument("--threads", type=positive_int, default=1, help="interpreter threads (default 1)")
    parser.add_argument("--runs", type=non_negative_int, default=runs,
                        help=f"timed runs for the latency; 0 skips it (default {runs})")


def open_signature(model_path, required_inputs, threads=1):
    """The `serving_default` runner of a .tflite file, or a RunnerError saying why not."""
    path = pathlib.Path(model_path)
    if not path.exists():
        raise RunnerError(f"no model file at {path}")
    if not path.is_file():
        raise RunnerError(f"{path} is not a file")
    try:
        interpreter = Interpreter(model_path=str(path), num_threads=threads)
    except ValueError as error:
        reason = str(error).split(".")[0]
        raise RunnerError(f"{path} is not a valid .tflite model (corrupt or truncated?): {reason}") from None
    signatures = interpreter.get_signature_list()
    if SIGNATURE not in signatures:
        raise RunnerError(f"{path} has no {SIGNATURE!r} signature (it has: {', '.join(signatures) or 'none'})")
    inputs = set(signatures[SIGNATURE]["inputs"])
    if inputs != set(required_inputs):
        raise RunnerError(f"{path} takes inputs {sorted(inputs)}; this script runs models "
                          f"taking {sorted(required_inputs)}")
    return interpreter.get_signature_runner(SIGNATURE)


@dataclasses.dataclass(frozen=True)
class RunnerTokenizer:
    """A tokenizer kind as the runners read it (see `register_runner_tokenizer`)."""

    suffixes: tuple
    fingerprint_key: str
    what: str
    exported_as: str
    load: object


def register_runner_tokenizer(suffixes, fingerprint_key, what, exported_as, load):
    """Let the runners read a tokenizer kind's file (keras_subembed's
    `tokenizer_kinds` says what an export writes for each kind).

    Args:
        suffixes: the file's suffixes, the one an export writes first (".spm", ".model").
        fingerprint_key: the key under which the export records the file's
            fingerprint in the model file (`"sentencepiece_sha256"`).
        what: the file, for messages (`"SentencePiece model"`).
        exported_as: the tokenizer, for messages (`"a SentencePiece tokenizer"`).
        load: `load(path, metadata, **kwargs) -> tokenizer`, checking the file
            against the export's `metadata`; the tokenizer offers `tokenize(text)`,
            `pack(ids, length)` and `pad_id`. Raises `RunnerError`.

    Example (`load_words` reads a word list and checks its fingerprint):

        register_runner_tokenizer((".words.txt",), "words_sha256", "word list",
                                  "a whitespace tokenizer", load_words)
    """
    suffixes = (suffixes,) if isinstance(suffixes, str) else suffixes
    if not isinstance(suffixes, tuple) or not suffixes or not all(
            isinstance(suffix, str) and suffix.startswith(".") and len(suffix) > 1
            for suffix in suffixes):
        raise ValueError(f"`suffixes` must be file suffixes starting with \".\". "
                         f"Received: suffixes={suffixes!r}")
    for name, value in (("fingerprint_key", fingerprint_key), ("what", what),
                        ("exported_as", exported_as)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"`{name}` must be a non-empty string. Received: {name}={value!r}")
    if not callable(load):
        raise TypeError(f"`load` must be callable. Received: load={load!r}")
    for other in RUNNER_TOKENIZERS:
        if other.fingerprint_key == fingerprint_key or set(other.suffixes) & set(suffixes):
            raise ValueError(f"A runner tokenizer reads {other.suffixes} (fingerprint "
                             f"{other.fingerprint_key!r}) already. Received: suffixes={suffixes!r}, "
                             f"fingerprint_key={fingerprint_key!r}")
    kind = RunnerTokenizer(suffixes, fingerprint_key, what, exported_as, load)
    RUNNER_TOKENIZERS.append(kind)
    return kind


def runner_tokenizer_of(path):
    """The kind whose suffix ends `path`'s name; a file of any other name is read
    as the first registered kind (a WordPiece vocabulary)."""
    name = pathlib.Path(path).name
    return next((kind for kind in RUNNER_TOKENIZERS
                 if any(name.endswith(suffix) for suffix in kind.suffixes)), RUNNER_TOKENIZERS[0])


def vocabulary_path_of(model_path, vocabulary_path=None):
    """`vocabulary_path`, else the tokenizer file the export wrote beside the model:
    the first registered kind's that exists (<model>.vocab.txt for WordPiece,
    else <model>.spm for SentencePiece), else <model>.vocab.txt."""
    if vocabulary_path:
        return pathlib.Path(vocabulary_path)
    candidates = [pathlib.Path(model_path).with_suffix(kind.suffixes[0]) for kind in RUNNER_TOKENIZERS]
    return next((path for path in candidates if path.is_file()), candidates[0])


def read_export_metadata(model_path):
    """What keras_subembed's export recorded in the .tflite file ({} for other files):
    the number of ids the model takes, its vocabulary's fingerprint."""
    from ai_edge_litert import schema_py_generated as schema

    try:
        model = schema.Model.GetRootAsModel(pathlib.Path(model_path).read_bytes(), 0)
        for index in range(model.MetadataLength()):
            entry = model.Metadata(index)
            if entry.Name() == METADATA_NAME:
                values = json.loads(model.Buffers(entry.Buffer()).DataAsNumpy().tobytes())
                return values if isinstance(values, dict) else {}
    except (OSError, ValueError, AttributeError, IndexError):
        return {}
    return {}


def check_vocabulary(tokenizer, metadata, path):
    """Refuses a vocabulary other than the one the model was exported with: its
    ids would reach other rows (or none) of the model's table, silently."""
    tokens = tokenizer.vocabulary
    size = metadata.get("vocabulary_size")
    if size is not None and len(tokens) != size:
        raise RunnerError(f"{path} has {len(tokens)} tokens but the model takes {size} ids: "
                          "pass the vocabulary it was trained with")
    fingerprint = metadata.get("vocabulary_sha256")
    if fingerprint and hashlib.sha256("\n".join(tokens).encode("utf-8")).hexdigest() != fingerprint:
        raise RunnerError(f"{path} is not the vocabulary the model was exported with (its "
                          "tokens differ): pass the vocabulary it was trained with")


def load_wordpiece_tokenizer(path, metadata, **kwargs):
    """The WordPiece tokenizer of a vocabulary file, normalising text as the model's
    tokenizer did (`lowercase`, `strip_accents` as the export recorded them)."""
    kwargs = {**{name: bool(metadata[name]) for name in ("lowercase", "strip_accents")
                 if name in metadata}, **kwargs}
    try:
        tokenizer = WordPieceTokenizer.from_file(path, **kwargs)
    except VocabularyError as error:
        raise RunnerError(f"{path}: {error}") from None
    except UnicodeDecodeError as error:
        raise RunnerError(f"{path} is not UTF-8 text (byte {error.start})") from None
    check_vocabulary(tokenizer, metadata, path)
    return tokenizer


def load_sentencepiece_tokenizer(path, metadata, **kwargs):
    """The XLM-R tokenizer of a SentencePiece model file, checked against the model's record."""
    from sentencepiece_tokenizer import SentencePieceModelError
    from sentencepiece_tokenizer import SentencePieceTokenizer

    if kwargs:
        raise RunnerError(f"{path} is a SentencePiece model; this script needs a WordPiece "
                          "vocabulary (search_text.py embeds with SentencePiece models)")
    data = path.read_bytes()
    fingerprint = metadata.get("sentencepiece_sha256")
    if fingerprint and hashlib.sha256(data).hexdigest() != fingerprint:
        raise RunnerError(f"{path} is not the SentencePiece model the model was exported with: "
                          "pass the one it was trained with")
    try:
        tokenizer = SentencePieceTokenizer(data)
    except SentencePieceModelError as error:
        raise RunnerError(f"{path}: {error}") from None
    size = metadata.get("vocabulary_size")
    if size is not None and tokenizer.vocabulary_size > size:
        raise RunnerError(f"{path} gives ids up to {tokenizer.vocabulary_size - 1} but the model "
                          f"takes {size} ids: pass the SentencePiece model it was trained with")
    return tokenizer


register_runner_tokenizer((".vocab.txt",), "vocabulary_sha256", "vocabulary",
                          "a WordPiece vocabulary", load_wordpiece_tokenizer)
register_runner_tokenizer((".spm", ".model"), "sentencepiece_sha256", "SentencePiece model",
                          "a SentencePiece tokenizer", load_sentencepiece_tokenizer)


def load_tokenizer(model_path, vocabulary_path=None, **kwargs):
    """The tokenizer of `vocabulary_path` (default: the file the export wrote
    beside the model, `vocabulary_path_of`), of the kind its name says
    (`runner_tokenizer_of`), checked against what the export recorded in the
    model file: WordPiece normalising text as the model's tokenizer did
    (`lowercase`, `strip_accents`), or XLM-R SentencePiece for a `.spm` /
    `.model` file. `kwargs` go to the kind's `load`."""
    path = vocabulary_path_of(model_path, vocabulary_path)
    if not path.is_file():
        raise RunnerError(f"no vocabulary at {path} (pass --vocabulary)")
    metadata = read_export_metadata(model_path)
    kind = runner_tokenizer_of(path)
    for other in RUNNER_TOKENIZERS:
        if other is not kind and metadata.get(other.fingerprint_key):
            raise RunnerError(f"the model was exported with {other.exported_as}, not the "
                              f"{kind.what} {path}: pass its {other.suffixes[0]} file")
    return kind.load(path, metadata, **kwargs)


def invoke(runner, inputs):
    """Runs the signature; a model failure becomes a RunnerError naming the input shape."""
    try:
        return runner(**inputs)
    except (RuntimeError, ValueError) as error:
        shape = next(iter(inputs.values())).shape
        raise RunnerError(f"the model failed on inputs of shape {tuple(shape)}: "
                          f"{str(error).splitlines()[0]}") from None


def longest_accepted_length(runner, make_inputs, length):
    """`length` if the model runs on it, else the longest length it runs on.

    .tflite inputs have a dynamic length, but a model with a position table
    fails beyond the table's size; the limit is found by bisection. Returns
    None when not even 2 tokens ([CLS] [SEP]) run, so the caller reports the
    model's own error.
    """
    def runs(n):
        try:
            runner(**make_inputs(n))
            return True
        except RuntimeError:
            return False

    if runs(length):
        return length
    low, high = 2, length - 1
    if high < low or not runs(low):
        return None
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if runs(middle) else (low, middle - 1)
    return low


def median_latency_ms(runner, inputs, runs):
    """Median wall time of `runs` calls in ms; None for runs == 0."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        runner(**inputs)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times) if times else None


def print_latency(runner, inputs, runs, threads):
    latency = median_latency_ms(runner, inputs, runs)
    if latency is not None:
        batch, length = next(iter(inputs.values())).shape[:2]
        print(f"latency: median {latency:.2f} ms over {runs} runs "
              f"(batch {batch}, {length} tokens, {threads} thread(s))")


def check_text_argument(text, what="text"):
    """`text` from the command line, or a RunnerError when it is not UTF-8: Python
    keeps such bytes as lone surrogates, which fail later (tokenizing, printing)
    with a traceback."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise RunnerError(f"the {what} {text.encode('utf-8', 'replace').decode()!r} is not "
                          f"UTF-8 text (character {error.start + 1})") from None
    return text


def run_command(main, argv=None):
    """Calls `main(argv)`; a RunnerError becomes one stderr line and exit code 2."""
    try:
        main(argv)
    except RunnerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def masked_lm_inputs(token_ids, mask_id):
    positions = [i for i, token in enumerate(token_ids) if token == mask_id]
    return {
        "token_ids": np.array([token_ids], dtype=np.int32),
        "padding_mask": np.ones((1, len(token_ids)), dtype=np.int32),
        "mask_positions": np.array([positions], dtype=np.int32),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser)
    parser.add_argument("text", help="a sentence with one or more [MASK] tokens")
    parser.add_argument("--top-k", type=positive_int, default=5, help="guesses per [MASK] (default 5)")
    args = parser.parse_args(argv)

    runner = open_signature(args.model, ("token_ids", "padding_mask", "mask_positions"), args.threads)
    tokenizer = load_tokenizer(args.model, args.vocabulary, special_tokens_in_strings=True)
    ids = tokenizer.tokenize(check_text_argument(args.text))
    if tokenizer.mask_id not in ids:
        raise RunnerError("the text has no [MASK] token")

    full_length = len(ids) + 2

    def probe_inputs(length):
        probe = tokenizer.pack(ids, length)
        probe[1] = tokenizer.mask_id
        return masked_lm_inputs(probe, tokenizer.mask_id)

    length = longest_accepted_length(runner, probe_inputs, full_length)
    if length is None:
        invoke(runner, probe_inputs(full_length))  # raises the model's own error
    token_ids = tokenizer.pack(ids, length)
    if length < full_length:
        print(f"notice: the text has {full_length} tokens with [CLS] and [SEP]; the model takes "
              f"at most {length}, so it was cut to the first {length}", file=sys.stderr)
        if tokenizer.mask_id not in token_ids:
            raise RunnerError(f"every [MASK] is past the model's {length}-token limit")
    inputs = masked_lm_inputs(token_ids, tokenizer.mask_id)
    logits = invoke(runner, inputs)["outputs"][0]

    vocabulary = tokenizer.vocabulary
    if logits.shape[-1] != len(vocabulary):
        raise RunnerError(f"the model scores {logits.shape[-1]} ids but the vocabulary has "
                          f"{len(vocabulary)} tokens: pass the vocabulary it was trained with")
    print(f"tokens: {' '.join(vocabulary[i] for i in token_ids)}")
    for position, scores in zip(inputs["mask_positions"][0], logits):
        top = np.argsort(scores)[::-1][: args.top_k]
        probabilities = np.exp(scores - scores.max())
        probabilities /= probabilities.sum()
        guesses = ", ".join(f"{vocabulary[t]} ({probabilities[t]:.2f})" for t in top)
        print(f"[MASK] at {position}: {guesses}")
    print_latency(runner, inputs, args.runs, args.threads)


if __name__ == "__main__":
    sys.exit(run_command(main))
