"""An optimizer applying gradients from several threads loses no step (issue 10 item 1).

Each variable's step (slots, update, constraint) runs under the variable's lock, so the
steps of concurrent ``apply_gradients`` calls are serialised per variable: with constant
gradients the result is exactly that of the same number of steps on one thread.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
import tapeflow as tf

THREADS, STEPS = 8, 250


def _run_threads(opt, v, grad):
    start = threading.Barrier(THREADS)
    errors = []

    def work():
        start.wait()
        try:
            for _ in range(STEPS):
                opt.apply_gradients([(grad, v)])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def test_sgd_from_several_threads_applies_every_step():
    v = tf.Variable(tf.zeros([3]))
    opt = tf.optimizers.SGD(learning_rate=1.0)
    _run_threads(opt, v, tf.constant([-1.0, -2.0, 0.5]))
    n = THREADS * STEPS
    assert v.numpy().tolist() == [n * 1.0, n * 2.0, n * -0.5]
    assert int(opt.iterations) == n


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_steps_from_several_threads_equal_the_same_steps_on_one_thread(nesterov):
    g = tf.constant([0.5, -0.25])
    v = tf.Variable([1.0, 2.0])
    opt = tf.optimizers.SGD(learning_rate=0.01, momentum=0.9, nesterov=nesterov)
    _run_threads(opt, v, g)

    ref = tf.Variable([1.0, 2.0])
    ref_opt = tf.optimizers.SGD(learning_rate=0.01, momentum=0.9, nesterov=nesterov)
    for _ in range(THREADS * STEPS):
        ref_opt.apply_gradients([(g, ref)])
    np.testing.assert_array_equal(v.numpy(), ref.numpy())
    np.testing.assert_array_equal(opt.get_slot(v, "momentum").numpy(), ref_opt.get_slot(ref, "momentum").numpy())
