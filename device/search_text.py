"""Embed lines of text with a sentence-encoder .tflite; search them: LiteRT and NumPy only.

The model is a sentence encoder exported with signature `serving_default`:
`token_ids` and `padding_mask` (int32, batch x length) -> `embedding`
(float32, batch x d, L2-normalised). Each line is tokenized exactly as
keras-hub's BertTokenizer does (`wordpiece_tokenizer.py`, vocabulary
`<model>.vocab.txt` unless --vocabulary), or, for a multilingual model
exported with its SentencePiece model `<model>.spm`, as keras-hub's
XLMRobertaTokenizer does (`sentencepiece_tokenizer.py`); packed as
`[CLS] ... [SEP]` (`<s> ... </s>`) and cut to --sequence-length tokens.

    # the 5 corpus lines nearest to each query, with cosine scores
    python device/search_text.py minilm.tflite --corpus news.txt "police closed the road" --top-k 5
    # one embedding row per line of the file (blank lines included), as .npy
    python device/search_text.py minilm.tflite --embed news.txt --output vectors.npy

A model that takes fewer tokens (a smaller position table) is found out at
start and lines are cut to its limit, with a notice. Every input holds at least
`[CLS] [SEP]`: the model never sees a length-0 sequence or an empty batch.
Progress goes to stderr for large files; errors are one `error:` line, exit code 2.
"""

import argparse
import io
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

# The helpers are sibling files: find them also under `runpy.run_path` or
# when this file is imported from another folder.
if str(pathlib.Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).parent))

from run_tflite import RunnerError  # noqa: E402
from run_tflite import add_model_arguments  # noqa: E402
from run_tflite import check_text_argument  # noqa: E402
from run_tflite import invoke  # noqa: E402
from run_tflite import load_tokenizer  # noqa: E402
from run_tflite import longest_accepted_length  # noqa: E402
from run_tflite import open_signature  # noqa: E402
from run_tflite import positive_int  # noqa: E402
from run_tflite import print_latency  # noqa: E402
from run_tflite import run_command  # noqa: E402
from run_tflite import vocabulary_path_of  # noqa: E402

INPUTS = ("token_ids", "padding_mask")
# Written into the .npy header (a Python comment numpy skips): --overwrite
# replaces only a file that carries it, one this script wrote.
NPY_MARKER = b"# written by search_text.py"
# Files with at least this many lines report progress on stderr.
PROGRESS_LINES = 256


def read_lines(path):
    """The file's lines (split on \\n only, as editors number them)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise RunnerError(f"no text file at {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RunnerError(f"{path} is not UTF-8 text (byte {error.start})") from None
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def batch_inputs(sequences, pad_id):
    """Right-padded int32 `token_ids` and `padding_mask` for packed sequences."""
    length = max(len(s) for s in sequences)
    token_ids = np.full((len(sequences), length), pad_id, dtype=np.int32)
    padding_mask = np.zeros((len(sequences), length), dtype=np.int32)
    for row, sequence in enumerate(sequences):
        token_ids[row, : len(sequence)] = sequence
        padding_mask[row, : len(sequence)] = 1
    return {"token_ids": token_ids, "padding_mask": padding_mask}


class SentenceEncoder:
    """Texts -> embeddings with a sentence-encoder .tflite and its tokenizer.

    Example:

    >>> encoder = SentenceEncoder("minilm.tflite", sequence_length=128)
    >>> encoder.embed(["a first line", "a second one"]).shape
    (2, 384)
    """

    def __init__(self, model_path, vocabulary_path=None, sequence_length=128, threads=1):
        self.runner = open_signature(model_path, INPUTS, threads)
        self.tokenizer = load_tokenizer(model_path, vocabulary_path)
        probe = [self.tokenizer.pad_id] * sequence_length

        def probe_inputs(length):
            return batch_inputs([self.tokenizer.pack(probe, length)], self.tokenizer.pad_id)

        accepted = longest_accepted_length(self.runner, probe_inputs, sequence_length)
        if accepted is None:
            invoke(self.runner, probe_inputs(sequence_length))  # raises the model's own error
        if accepted < sequence_length:
            print(f"notice: the model takes at most {accepted} tokens; lines are cut to "
                  f"{accepted} instead of --sequence-length {sequence_length}", file=sys.stderr)
        self.sequence_length = accepted
        self.truncated_lines = 0

    def inputs(self, texts):
        """Packed, padded model inputs for `texts`, and how many texts were cut."""
        token_ids = [self.tokenizer.tokenize(text) for text in texts]
        cut = sum(len(ids) + 2 > self.sequence_length for ids in token_ids)
        sequences = [self.tokenizer.pack(ids, self.sequence_length) for ids in token_ids]
        return batch_inputs(sequences, self.tokenizer.pad_id), cut

    def embed(self, texts, batch_size=8, progress=False):
        """(len(texts), d) float32 embeddings; `texts` must not be empty."""
        if not texts:
            raise RunnerError("nothing to embed: no lines of text")
        batches, started = [], time.monotonic()
        for start in range(0, len(texts), batch_size):
            inputs, cut = self.inputs(texts[start: start + batch_size])
            self.truncated_lines += cut
            outputs = invoke(self.runner, inputs)
            if "embedding" not in outputs:
                raise RunnerError(f"the model has no 'embedding' output (it has: {', '.join(outputs)})")
            batches.append(outputs["embedding"])
            done = min(start + batch_size, len(texts))
            if progress and (done == len(texts) or len(batches) % 50 == 0):
                rate = done / max(time.monotonic() - started, 1e-9)
                print(f"embedded {done}/{len(texts)} lines ({rate:.0f} lines/s)", file=sys.stderr)
        return np.concatenate(batches).astype(np.float32)


def cosine_top_k(queries, corpus, top_k):
    """(indices, scores) of the `top_k` corpus rows nearest to each query row."""
    def unit(rows):
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)

    scores = unit(queries) @ unit(corpus).T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
    return order, np.take_along_axis(scores, order, axis=1)


def check_output(path, overwrite, protected):
    """Refuses an --output that is not .npy, is an input, cannot be written, or
    exists (unless --overwrite, and then only a file this script wrote)."""
    path = pathlib.Path(path)
    if path.suffix != ".npy":
        raise RunnerError(f"--output must end in .npy, got {path}")
    if any(path.resolve() == pathlib.Path(p).resolve() for p in protected):
        raise RunnerError(f"--output {path} is one of the input files")
    if path.exists() and not path.is_file():
        raise RunnerError(f"--output {path} exists and is not a file")
    if path.exists() and not overwrite:
        raise RunnerError(f"{path} exists; pass --overwrite to replace it")
    if path.exists() and not is_our_npy(path):
        raise RunnerError(f"{path} exists and is not a .npy file search_text.py wrote; "
                          "--overwrite only replaces those. Choose another path or remove it yourself")
    if not path.parent.is_dir():
        raise RunnerError(f"no folder {path.parent} for --output")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise RunnerError(f"cannot write in the folder {path.parent} (permission denied)")


def npy_bytes(array):
    """The .npy file of `array`, its header marked as written by this script."""
    buffer = io.BytesIO()
    np.save(buffer, array)
    data = buffer.getvalue()
    header_length = int.from_bytes(data[8:10], "little")
    header = data[10: 10 + header_length].rstrip(b" \n") + b" " + NPY_MARKER
    # Pad so the data starts on a 64-byte boundary, as numpy writes it.
    padded = -(-(10 + len(header) + 1) // 64) * 64 - 10
    header = header.ljust(padded - 1) + b"\n"
    return data[:8] + len(header).to_bytes(2, "little") + header + data[10 + header_length:]


def is_our_npy(path):
    with open(path, "rb") as file:
        start = file.read(10)
        if len(start) < 10 or not start.startswith(b"\x93NUMPY\x01"):
            return False
        return NPY_MARKER in file.read(int.from_bytes(start[8:10], "little"))


def write_array(path, array, overwrite, protected):
    """The .npy file through a temporary file; without `overwrite`, never replaces a file,
    even one that appeared while the vectors were computed."""
    check_output(path, overwrite, protected)
    path = pathlib.Path(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise RunnerError(f"cannot write {path}: {error.strerror}") from None
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(npy_bytes(array))
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 is not what users expect
        if overwrite and path.exists() and not is_our_npy(path):
            raise RunnerError(f"{path} was replaced while embedding by a file search_text.py "
                              "did not write; it was kept")
        if overwrite:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # fails if the name exists
    except FileExistsError:
        raise RunnerError(f"{path} appeared while embedding; it was not replaced") from None
    except OSError as error:
        raise RunnerError(f"cannot write {path}: {error.strerror}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, runs=0)
    parser.add_argument("queries", nargs="*", help="texts to search for (with --corpus)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--corpus", help="text file to search, one passage per line")
    mode.add_argument("--embed", help="text file to embed, one passage per line")
    parser.add_argument("--output", help="with --embed: the .npy file for the (lines, d) float32 vectors")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    parser.add_argument("--top-k", type=positive_int, default=5, help="results per query (default 5)")
    parser.add_argument("--sequence-length", type=positive_int, default=128,
                        help="tokens per line including [CLS] and [SEP]; longer lines are cut")
    parser.add_argument("--batch-size", type=positive_int, default=8, help="lines per model call (default 8)")
    # intermixed: queries may come before or after the options
    args = parser.parse_intermixed_args(argv)
    if args.corpus and not args.queries:
        parser.error("--corpus needs at least one query text")
    if args.embed and (args.queries or not args.output):
        parser.error("--embed takes no query texts and needs --output FILE.npy")
    if args.output and not args.embed:
        parser.error("--output is for --embed")
    if args.sequence_length < 2:
        parser.error("--sequence-length must be at least 2 ([CLS] and [SEP])")
    return args


def main(argv=None):
    args = parse_arguments(argv)
    for query in args.queries:
        check_text_argument(query, "query")
    lines = read_lines(args.corpus or args.embed)
    inputs = [args.embed, args.model, vocabulary_path_of(args.model, args.vocabulary)]
    if args.output:  # fail before the work, not after it
        check_output(args.output, args.overwrite, inputs)
    encoder = SentenceEncoder(args.model, args.vocabulary, args.sequence_length, args.threads)
    progress = len(lines) >= PROGRESS_LINES
    if args.embed:
        vectors = encoder.embed(lines, args.batch_size, progress)
        write_array(args.output, vectors, args.overwrite, inputs)
        print(f"wrote {args.output}: {vectors.shape[0]} x {vectors.shape[1]} float32")
    else:
        numbers = [i for i, line in enumerate(lines) if line.strip()]
        corpus = encoder.embed([lines[i] for i in numbers], args.batch_size, progress)
        order, scores = cosine_top_k(encoder.embed(args.queries, args.batch_size), corpus, args.top_k)
        for query, rows, row_scores in zip(args.queries, order, scores):
            print(f"query: {query}")
            for rank, (row, score) in enumerate(zip(rows, row_scores), 1):
                print(f"{rank:>3}. {score:.4f}  line {numbers[row] + 1}: {lines[numbers[row]]}")
    if encoder.truncated_lines:
        print(f"notice: {encoder.truncated_lines} text(s) were longer than {encoder.sequence_length} "
              "tokens and were cut", file=sys.stderr)
    sample, _ = encoder.inputs([args.queries[0] if args.queries else lines[0]])
    print_latency(encoder.runner, sample, args.runs, args.threads)


if __name__ == "__main__":
    sys.exit(run_command(main))
