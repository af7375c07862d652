"""Train a small CNN on the digits, export it with ``tf.saved_model.save`` and run it with ONNX Runtime.

The 8x8 digits that ship with scikit-learn (through ``tf.data.datasets.digits``) train a Conv2D +
BatchNormalization + pooling + Dense + Softmax model for a few seeded epochs; the model is saved as ONNX
(``serving_default.onnx`` and the manifest), ONNX Runtime runs the file on the test images, and both
accuracies are printed: they are the same, since the two give the same probabilities (to float32 rounding).

    pip install 'tapeflow-core[onnx]' onnxruntime
    python examples/export_onnx.py [--epochs N] [--out DIR]
"""
from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
from numpy.typing import NDArray

import tapeflow as tf

Split = tuple[NDArray[np.float32], NDArray[np.int64]]   # images and labels


def load(seed: int = 0) -> tuple[Split, Split]:
    """The digits as (n, 8, 8, 1) images in [0, 1] and int labels, split 80/20."""
    (x_train, y_train), (x_test, y_test) = tf.data.datasets.digits(test_fraction=0.2, seed=seed)

    def prep(x: NDArray[np.uint8], y: NDArray[np.int64]) -> Split:
        return (x.reshape(len(x), 8, 8, 1) / 16.0).astype(np.float32), y.astype(np.int64)

    return prep(x_train, y_train), prep(x_test, y_test)


def build() -> tf.keras.Sequential:
    L = tf.keras.layers
    return tf.keras.Sequential([
        tf.keras.Input(shape=(8, 8, 1)),
        L.Conv2D(16, 3, padding="same"), L.BatchNormalization(), L.ReLU(), L.MaxPooling2D(2),
        L.Conv2D(32, 3, padding="same", activation="relu"), L.GlobalAveragePooling2D(),
        L.Dense(10), L.Softmax()])


def main(out: str | None = None, epochs: int = 15, seed: int = 0) -> tuple[float, float]:
    """Train, export to ``out``, run with ONNX Runtime; returns (tapeflow accuracy, ONNX Runtime accuracy)."""
    import onnxruntime as ort  # type: ignore[import-untyped]  # (ONNX Runtime ships no py.typed)

    tf.keras.utils.set_random_seed(seed)
    (x_train, y_train), (x_test, y_test) = load(seed)
    model = build()
    model.compile(optimizer=tf.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=32, epochs=epochs, verbose=0)
    probs = model.predict(x_test, verbose=0)
    acc_tf = float(np.mean(np.argmax(probs, axis=1) == y_test))

    out = out or os.path.join(tempfile.mkdtemp(prefix="tapeflow-onnx-"), "digits_cnn")
    tf.saved_model.save(model, out)
    sess = ort.InferenceSession(os.path.join(out, "serving_default.onnx"), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    onnx_probs = np.asarray(sess.run(None, {name: x_test})[0])  # (ONNX Runtime types outputs as a union)
    acc_onnx = float(np.mean(np.argmax(onnx_probs, axis=1) == y_test))
    print(f"exported to {out}: {sorted(os.listdir(out))}")
    print(f"largest difference in probabilities: {np.abs(onnx_probs - probs).max():.2e}")
    print(f"test accuracy, tapeflow:     {acc_tf:.4f}")
    print(f"test accuracy, ONNX Runtime: {acc_onnx:.4f}")
    return acc_tf, acc_onnx


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    main(a.out, a.epochs)
