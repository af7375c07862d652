"""The inherited ``training`` flag is per thread, like tapes."""
from __future__ import annotations

import threading
import time

import tapeflow as tf


class _Probe(tf.nn.Layer):
    """Records the training flag it inherits; the first call waits until the other thread has called."""

    def __init__(self, gate, seen):
        super().__init__()
        self.gate, self.seen = gate, seen.append  # (a list attribute would be tracked as a copy)

    def call(self, x, training=None):
        self.seen((threading.current_thread().name, training))
        if threading.current_thread().name == "train":
            self.gate.wait(5)
        return x


class _Outer(tf.nn.Layer):
    def __init__(self, probe):
        super().__init__()
        self.probe = probe

    def call(self, x):
        return self.probe(x)


def test_a_training_call_on_one_thread_does_not_leak_into_another():
    gate, seen = threading.Event(), []
    model = _Outer(_Probe(gate, seen))
    x = tf.ones([1, 2])
    trainer = threading.Thread(target=lambda: model(x, training=True), name="train")
    trainer.start()
    for _ in range(500):
        if seen:
            break
        time.sleep(0.01)
    infer = threading.Thread(target=lambda: model(x), name="infer")
    infer.start()
    infer.join()
    gate.set()
    trainer.join()
    assert sorted(seen) == [("infer", None), ("train", True)]
