"""The seeds' MNIST-style custom training loop (GradientTape + optimizer), on scikit-learn's digits.

There is no network here, so the 8x8 digits that ship with scikit-learn stand in for MNIST.
The loop is the one the eager guides write by hand: a subclassed model, a tapeflow Dataset,
``tf.GradientTape`` around the forward pass, ``optimizer.apply_gradients``, metrics objects,
and TensorBoard summaries every few steps.

    python examples/mnist_custom_loop.py [--epochs N] [--logdir DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time

import numpy as np
from numpy.typing import NDArray

import tapeflow as tf

Split = tuple[NDArray[np.float32], NDArray[np.int64]]   # images and labels


class MNISTModel(tf.keras.Model):
    """Two dense layers, as the announcement's MNISTModel (with a hidden ReLU layer)."""

    def __init__(self) -> None:
        super(MNISTModel, self).__init__()
        self.dense1 = tf.keras.layers.Dense(units=64, activation="relu")
        self.dense2 = tf.keras.layers.Dense(units=10)

    def call(self, input: tf.Tensor) -> tf.Tensor:
        """Run the model."""
        result = self.dense1(input)
        result = self.dense2(result)
        return result


def load(seed: int = 0) -> tuple[Split, Split]:
    """The digits (through tapeflow.data) as flat 64-pixel rows in [0, 1], split 80/20."""
    (x_train, y_train), (x_test, y_test) = tf.data.datasets.digits(test_fraction=0.2, seed=seed)

    def prep(x: NDArray[np.uint8], y: NDArray[np.int64]) -> Split:
        return (x.reshape(len(x), 64) / 16.0).astype(np.float32), y.astype(np.int64)

    return prep(x_train, y_train), prep(x_test, y_test)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--logdir", default=None)
    args = p.parse_args(argv)
    logdir = args.logdir or tempfile.mkdtemp(prefix="tapeflow-mnist-loop-")
    tf.random.set_seed(0)

    (x_train, y_train), (x_test, y_test) = load()
    dataset_train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train), seed=0).batch(32)

    model = MNISTModel()
    optimizer = tf.optimizers.Adam(learning_rate=0.01)
    loss_object = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_loss = tf.metrics.Mean("loss")
    train_accuracy = tf.metrics.SparseCategoricalAccuracy("accuracy")
    writer = tf.summary.create_file_writer(logdir)
    global_step = tf.train.get_or_create_global_step()

    def loss(model: tf.keras.Model, x: tf.Tensor | NDArray[np.float32], y: tf.Tensor | NDArray[np.int64]) -> tf.Tensor:
        prediction = model(x)
        return tf.losses.sparse_softmax_cross_entropy(labels=y, logits=prediction)

    def train_step(images: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss_value = loss_object(labels, logits)
        grads = tape.gradient(loss_value, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables), global_step=global_step)
        train_loss(loss_value)
        train_accuracy(labels, logits)
        return loss_value

    x0, y0 = next(iter(dataset_train))
    print("Initial loss: {:.3f}".format(loss(model, x0, y0)))
    t0 = time.perf_counter()
    with writer.as_default():
        for epoch in range(args.epochs):
            train_loss.reset_state()
            train_accuracy.reset_state()
            for images, labels in dataset_train:
                loss_value = train_step(images, labels)
                if int(global_step) % 10 == 0:
                    tf.summary.scalar("loss", loss_value, step=int(global_step))
            print("Epoch {:2d}: loss {:.3f}, accuracy {:.3f}".format(epoch + 1, train_loss.result(),
                                                                      train_accuracy.result()))
    test_accuracy = tf.metrics.SparseCategoricalAccuracy()
    test_accuracy(y_test, model(x_test))
    acc = float(test_accuracy.result())
    print("Final loss: {:.3f}".format(loss(model, x_test, y_test)))
    print("Test accuracy: {:.3f} ({:.1f} s; summaries in {})".format(acc, time.perf_counter() - t0, logdir))
    return 0 if acc >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
