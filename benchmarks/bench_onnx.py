"""Inference latency of exported models: ONNX Runtime vs tapeflow compiled (tf.function) vs tapeflow eager.

A small CNN (conv-BN-ReLU, pooling, dense, softmax on 28x28x1 inputs) and an MLP (784-256-256-10), each saved
with ``tf.saved_model.save`` and run by ONNX Runtime (CPU, one session, the graph optimizations on) beside the
same model called eagerly (``model(x, training=False)``) and through its exported signature compiled by
``tf.function``; batch 1 and 64.  Before timing, ONNX Runtime's outputs must equal tapeflow's.  Milliseconds per
call (CPU time of this process: the best of several rounds, the three taking turns); the ratio is compiled
tapeflow over ONNX Runtime (the issue's aim: within 1.5x).  Threads: ONNX Runtime and tapeflow both at one
intra-op thread, so the figures compare kernels and not core counts.
"""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np
import tapeflow as tf
from _common import optional, save, table

ort = optional("onnxruntime")


def interleaved(fns: dict, number: int, repeat: int = 7) -> dict:
    for f in fns.values():
        f()
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t0 = time.process_time()
            for _ in range(number):
                f()
            best[k] = min(best[k], (time.process_time() - t0) / number)
    return best


def cnn():
    L = tf.keras.layers
    return tf.keras.Sequential([tf.keras.Input(shape=(28, 28, 1)), L.Conv2D(16, 3, padding="same"),
                                L.BatchNormalization(), L.ReLU(), L.MaxPooling2D(2),
                                L.Conv2D(32, 3, padding="same", activation="relu"), L.MaxPooling2D(2),
                                L.Flatten(), L.Dense(64, activation="relu"), L.Dense(10), L.Softmax()])


def mlp():
    L = tf.keras.layers
    return tf.keras.Sequential([tf.keras.Input(shape=(784,)), L.Dense(256, activation="relu"),
                                L.Dense(256, activation="relu"), L.Dense(10)])


def main():
    if ort is None:
        print("onnxruntime is not installed: pip install onnxruntime (the bench compares against it)")
        return
    tf.keras.utils.set_random_seed(0)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    rows, results = [], {}
    for name, build, shape in (("cnn", cnn, (28, 28, 1)), ("mlp", mlp, (784,))):
        model = build()
        d = os.path.join(tempfile.mkdtemp(), name)
        tf.saved_model.save(model, d)
        sess = ort.InferenceSession(os.path.join(d, "serving_default.onnx"), opts, providers=["CPUExecutionProvider"])
        in_name = sess.get_inputs()[0].name
        compiled = model._saved_model_signature()
        for batch in (1, 64):
            x = np.random.default_rng(batch).normal(size=(batch,) + shape).astype(np.float32)
            xt = tf.constant(x)
            want = model(xt, training=False).numpy()
            np.testing.assert_allclose(sess.run(None, {in_name: x})[0], want, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(compiled(xt).numpy(), want, rtol=1e-4, atol=1e-5)
            number = 200 if batch == 1 else 20
            t = interleaved({"onnxruntime": lambda: sess.run(None, {in_name: x}),
                             "compiled": lambda: compiled(xt).numpy(),
                             "eager": lambda: model(xt, training=False).numpy()}, number)
            ms = {k: v * 1e3 for k, v in t.items()}
            results[f"{name}_b{batch}"] = ms
            rows.append([name, batch, f"{ms['onnxruntime']:.3f}", f"{ms['compiled']:.3f}", f"{ms['eager']:.3f}",
                         f"{ms['compiled'] / ms['onnxruntime']:.2f}x"])
    print(table("inference latency, ms per call (CPU time, 1 thread)",
                ["model", "batch", "onnxruntime", "tapeflow compiled", "tapeflow eager", "compiled / ORT"], rows))
    save("onnx", {"threads": 1, "ms": results})


if __name__ == "__main__":
    tf.config.set_intra_op_parallelism_threads(1)
    main()
