"""Quick start: the same sentiment classifier with a dense and a compressed embedding.

Data: the 200 labelled movie-review sentences of `pang_lee_polarity.cor`,
shipped inside gensim's test data (no download). A small bag-of-embeddings
classifier is trained once with `keras.layers.Embedding` and once with
`keras_subembed.layers.SubEmbedding`, and both are compared side by side
(mean test accuracy over k folds: 200 sentences make any single split noisy).

    python examples/quickstart.py [--epochs 30] [--folds 5] [--seed 0]
"""

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_subembed.layers import SubEmbedding  # noqa: E402


def load_polarity_sentences():
    """(sentences, labels) from gensim's test data; a clear error if gensim is missing."""
    try:
        from gensim.test.utils import datapath
    except ImportError:
        raise SystemExit(
            "This example reads gensim's bundled test data. Install it with:\n"
            '    pip install ".[examples]"'
        ) from None
    sentences, labels = [], []
    with open(datapath("pang_lee_polarity.cor"), encoding="latin-1") as corpus:
        for line in corpus:
            label, text = line.strip().split(" ", 1)
            sentences.append(text)
            labels.append(1 if label == "__label__pos" else 0)
    return np.array(sentences), np.array(labels)


def build_vocabulary(sentences):
    """Word -> id with 0 for padding and 1 for unknown words."""
    words = sorted({word for sentence in sentences for word in sentence.split()})
    return {word: index + 2 for index, word in enumerate(words)}


def encode(sentences, vocabulary, length):
    ids = np.zeros((len(sentences), length), dtype="int32")
    for row, sentence in enumerate(sentences):
        tokens = [vocabulary.get(word, 1) for word in sentence.split()][:length]
        ids[row, : len(tokens)] = tokens
    return ids


def classifier(embedding):
    token_ids = keras.Input((None,), dtype="int32")
    vectors = embedding(token_ids)  # mask_zero: padding is left out of the mean
    pooled = keras.layers.GlobalAveragePooling1D()(vectors)
    hidden = keras.layers.Dense(16, activation="relu")(pooled)
    output = keras.layers.Dense(1, activation="sigmoid")(hidden)
    return keras.Model(token_ids, output)


def embedding_bytes(layer):
    return sum(int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize for w in layer.weights)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--width", type=int, default=64, help="embedding width")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    sentences, labels = load_polarity_sentences()
    order = np.random.default_rng(args.seed).permutation(len(sentences))
    folds = np.array_split(order, args.folds)
    print(f"{len(sentences)} labelled sentences, {args.folds}-fold cross-validation")

    results = {}
    for fold, test in enumerate(folds):
        train = np.concatenate([f for i, f in enumerate(folds) if i != fold])
        vocabulary = build_vocabulary(sentences[train])
        vocab_size = len(vocabulary) + 2
        train_ids = encode(sentences[train], vocabulary, length=40)
        test_ids = encode(sentences[test], vocabulary, length=40)
        embeddings = {
            "keras Embedding": keras.layers.Embedding(vocab_size, args.width, mask_zero=True),
            "SubEmbedding K=2": SubEmbedding(
                vocab_size, args.width, num_tables=2, mask_zero=True, reserved_ids=(0, 1)
            ),
        }
        for name, embedding in embeddings.items():
            keras.utils.set_random_seed(args.seed + fold)
            model = classifier(embedding)
            model.compile(keras.optimizers.Adam(0.01), "binary_crossentropy", metrics=["accuracy"])
            model.fit(train_ids, labels[train], epochs=args.epochs, batch_size=16, verbose=0)
            _, accuracy = model.evaluate(test_ids, labels[test], verbose=0)
            row = results.setdefault(name, {"accuracy": []})
            row["accuracy"].append(accuracy)
            row.update(
                params=embedding.count_params(),
                bytes=embedding_bytes(embedding),
                total=model.count_params(),
            )
        print(f"fold {fold + 1}: " + ", ".join(
            f"{name} {row['accuracy'][-1]:.2f}" for name, row in results.items()
        ))

    print("(sizes of the last fold's vocabulary)")
    header = ("embedding", "emb params", "emb bytes", "model params", "accuracy")
    print(f"{header[0]:<18}{header[1]:>12}{header[2]:>12}{header[3]:>14}{header[4]:>16}")
    for name, row in results.items():
        accuracy = np.array(row["accuracy"])
        print(
            f"{name:<18}{row['params']:>12,}{row['bytes']:>12,}{row['total']:>14,}"
            f"{accuracy.mean():>10.3f} ± {accuracy.std():.2f}"
        )
    dense, compressed = (row["bytes"] for row in results.values())
    print(f"SubEmbedding stores {dense / compressed:.0f}x fewer embedding bytes.")

if __name__ == "__main__":
    main()
