"""The main job: train a small CNN on scikit-learn's handwritten digits with tapeflow.

A tapeflow Dataset feeds ``model.fit`` (progress bar, TensorBoard logs); the trained model
is checkpointed, restored into a fresh model, and the restored model must score the same.

    python examples/demo.py [--model seeds|cnn] [--epochs N] [--logdir DIR]

``--model seeds`` is the seeds' Conv2D(16)-Conv2D(16)-GlobalAveragePooling2D-Dense(10);
the default ``cnn`` keeps the seeds' two convolutions but flattens instead of averaging
(8x8 digits are small: the positions matter), which reaches ~98% in a few epochs.
Exits non-zero if the test accuracy is under 95% or the restored model differs.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
from numpy.typing import NDArray

import tapeflow as tf

Split = tuple[NDArray[np.float32], NDArray[np.int64]]   # images and labels

L = tf.keras.layers


def load_digits(seed: int = 0) -> tuple[Split, Split]:
    """scikit-learn's 1797 8x8 digits (bundled: no download) through tapeflow.data, split 80/20."""
    (x_train, y_train), (x_test, y_test) = tf.data.datasets.digits(test_fraction=0.2, seed=seed)

    def prep(x: NDArray[np.uint8], y: NDArray[np.int64]) -> Split:
        return (x / 16.0).astype(np.float32)[..., None], y.astype(np.int64)  # (n, 8, 8, 1) in [0, 1]

    return prep(x_train, y_train), prep(x_test, y_test)


def build_model(kind: str) -> tf.keras.Sequential:
    if kind == "seeds":
        layers = [L.Conv2D(16, 3, activation="relu"), L.Conv2D(16, 3, activation="relu"),
                  L.GlobalAveragePooling2D(), L.Dense(10)]
    else:
        layers = [L.Conv2D(16, 3, activation="relu"), L.Conv2D(32, 3, activation="relu"), L.Flatten(),
                  L.Dense(10)]
    return tf.keras.Sequential([tf.keras.Input(shape=(8, 8, 1))] + layers)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--model", choices=["cnn", "seeds"], default="cnn")
    p.add_argument("--epochs", type=int, default=None, help="default: 8 (cnn) or 40 (seeds)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--logdir", default=None, help="where TensorBoard logs and checkpoints go (default: a temp dir)")
    args = p.parse_args(argv)
    epochs = args.epochs or (8 if args.model == "cnn" else 40)
    out = args.logdir or tempfile.mkdtemp(prefix="tapeflow-demo-")
    logdir, ckpt_dir = os.path.join(out, "logs"), os.path.join(out, "checkpoints")
    t0 = time.perf_counter()
    tf.random.set_seed(0)

    (x_train, y_train), (x_test, y_test) = load_digits()
    print(f"digits: {len(x_train)} training and {len(x_test)} test images of 8x8")
    train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train), seed=0) \
        .batch(args.batch_size).prefetch(tf.data.AUTOTUNE)
    test = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(256)

    model = build_model(args.model)
    model.summary()
    optimizer = tf.optimizers.Adam(learning_rate=0.005 if args.model == "cnn" else 0.01)
    model.compile(optimizer=optimizer, loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])

    # a few sample digits for TensorBoard's image tab
    writer = tf.summary.create_file_writer(os.path.join(logdir, "samples"))
    with writer.as_default(step=0):
        tf.summary.image("digits", tf.constant(x_test[:8]), max_outputs=8)
        tf.summary.text("model", f"{args.model}: {model.count_params()} parameters")
    writer.close()

    model.fit(train, epochs=epochs, validation_data=test,
              callbacks=[tf.keras.callbacks.TensorBoard(logdir, histogram_freq=max(1, epochs // 4))])
    loss, acc = model.evaluate(test, verbose=0)
    print(f"test accuracy: {acc:.4f} (loss {loss:.4f})")

    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer), ckpt_dir,
                                         max_to_keep=2)
    path = manager.save()
    print(f"checkpoint: {path}")

    # a fresh model (no variables yet) restored from the checkpoint: values wait for the variables
    fresh = build_model(args.model) if args.model == "cnn" else build_model("seeds")
    fresh_opt = tf.optimizers.Adam()
    status = tf.train.Checkpoint(model=fresh, optimizer=fresh_opt).restore(tf.train.latest_checkpoint(ckpt_dir))
    status.assert_existing_objects_matched()
    fresh.compile(optimizer=fresh_opt, loss=tf.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    loss2, acc2 = fresh.evaluate(test, verbose=0)
    same = np.array_equal(model.predict(x_test, verbose=0), fresh.predict(x_test, verbose=0))
    print(f"restored model test accuracy: {acc2:.4f} (loss {loss2:.4f}); identical predictions: {same}")
    elapsed = time.perf_counter() - t0
    print(f"TensorBoard logs: {logdir}   (tensorboard --logdir {logdir})")
    print(f"total time: {elapsed:.1f} s")

    ok = acc >= 0.95 and acc2 == acc and same
    if not ok:
        print("FAILED: test accuracy under 95% or the restored model differs", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
