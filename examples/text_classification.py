"""Text classification from files: a CSV and a TFRecord file of labelled sentences, read with tf.data,
vectorised with TextVectorization and classified by a small Embedding + GlobalAveragePooling1D + Dense model.

The script makes its own data (no download): short sentences built from positive and negative words with
neutral filler, label 1 for positive.  The training sentences go to a CSV file (``text,label`` with a header),
the held-out ones to a TFRecord file of ``tf.train.Example`` records; both are read back through tf.data
(``make_csv_dataset``, ``TFRecordDataset`` + ``parse_example``), the vectoriser adapts to the training text,
and ``fit`` trains.  Run it as ``python examples/text_classification.py [workdir] [--seed N]``; it prints
the held-out accuracy on its last line (``accuracy: 0.xxxx``).
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import tempfile

import tapeflow as tf

POSITIVE = ["great", "wonderful", "excellent", "loved", "delightful", "superb", "enjoyable", "brilliant", "happy",
            "fantastic"]
NEGATIVE = ["awful", "terrible", "boring", "hated", "dreadful", "poor", "disappointing", "horrible", "sad",
            "worst"]
FILLER = ["the", "movie", "was", "really", "a", "plot", "and", "acting", "film", "story", "quite", "this", "i",
          "it", "very", "of", "show", "ending"]


def make_sentences(n: int, rng: random.Random) -> list[tuple[str, int]]:
    """``n`` (sentence, label) pairs: 4-9 filler words with 1-3 words of the label's sentiment (and, one time
    in four, a word of the other one)."""
    out: list[tuple[str, int]] = []
    for _ in range(n):
        label = rng.randrange(2)
        words = [rng.choice(FILLER) for _ in range(rng.randint(4, 9))]
        own, other = (POSITIVE, NEGATIVE) if label else (NEGATIVE, POSITIVE)
        words += [rng.choice(own) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.25:
            words.append(rng.choice(other))
        rng.shuffle(words)
        out.append((" ".join(words).capitalize() + rng.choice([".", "!", ""]), label))
    return out


def write_csv(path: str, rows: list[tuple[str, int]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"])
        w.writerows(rows)


def write_tfrecord(path: str, rows: list[tuple[str, int]]) -> None:
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions("GZIP")) as w:
        for text, label in rows:
            ex = tf.train.Example(features=tf.train.Features(feature={
                "text": tf.train.Feature(bytes_list=tf.train.BytesList(value=[text.encode()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            }))
            w.write(ex.SerializeToString())


def main(workdir: str | None = None, seed: int = 0, epochs: int = 8) -> float:
    rng = random.Random(seed)
    tf.keras.utils.set_random_seed(seed)
    workdir = workdir or tempfile.mkdtemp(prefix="text_classification_")
    os.makedirs(workdir, exist_ok=True)
    csv_path = os.path.join(workdir, "train.csv")
    rec_path = os.path.join(workdir, "test.tfrecord.gz")
    write_csv(csv_path, make_sentences(600, rng))
    write_tfrecord(rec_path, make_sentences(200, rng))

    # training data: the CSV through make_csv_dataset (header names, inferred types, label split off)
    train = tf.data.experimental.make_csv_dataset(csv_path, batch_size=32, label_name="label", num_epochs=1,
                                                  shuffle=True, shuffle_seed=seed)
    train = train.map(lambda feats, label: (feats["text"], label))
    # held-out data: the TFRecord file of tf.train.Example records
    spec = {"text": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}
    test = tf.data.TFRecordDataset(rec_path, compression_type="GZIP").batch(64).map(
        lambda recs: tf.io.parse_example(recs, spec)).map(lambda ex: (ex["text"], ex["label"]))

    vectorize = tf.keras.layers.TextVectorization(max_tokens=200, output_sequence_length=16)
    vectorize.adapt(train.map(lambda text, label: text))
    print(f"vocabulary: {vectorize.vocabulary_size()} tokens, e.g. {vectorize.get_vocabulary()[2:8]}")

    train_ids = train.map(lambda text, label: (vectorize(text), label))
    test_ids = test.map(lambda text, label: (vectorize(text), label))
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(16,), dtype="int64"),
        tf.keras.layers.Embedding(200, 16),
        tf.keras.layers.GlobalAveragePooling1D(),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(train_ids, epochs=epochs, verbose=0)
    loss, accuracy = model.evaluate(test_ids, verbose=0)
    print(f"held-out loss: {loss:.4f}")
    print(f"accuracy: {accuracy:.4f}")
    return float(accuracy)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("workdir", nargs="?", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=8)
    a = ap.parse_args()
    main(a.workdir, a.seed, a.epochs)
