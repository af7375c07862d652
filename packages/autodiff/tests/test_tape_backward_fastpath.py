"""The tape's backward pass calls the real rules of ops whose registered rules are complex-aware wrappers
(grads.fft's ``_conjugated``: multiply, real_div, exp, matmul) directly for real inputs, and still the
wrappers for complex inputs or for rules registered again later."""
import sys

import numpy as np
import tapeflow as tf
from tapeflow.autodiff import registry


def _wrapper_calls(fn):
    """How many times grads.fft's per-input wrapper ``per`` runs during ``fn()``."""
    calls = []

    def prof(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "per" and frame.f_code.co_filename.endswith("fft.py"):
            calls.append(1)

    sys.setprofile(prof)
    try:
        out = fn()
    finally:
        sys.setprofile(None)
    return out, len(calls)


def test_real_multiply_skips_the_complex_wrapper():
    x, c = tf.constant([0.5, 2.0]), tf.constant([3.0, -1.0])

    def grad():
        with tf.GradientTape() as tape:
            tape.watch([x, c])
            y = x * c * x
        return tape.gradient(y, [x, c])

    (gx, gc), n = _wrapper_calls(grad)
    assert n == 0
    np.testing.assert_allclose(gx.numpy(), 2 * np.array([0.5, 2.0]) * np.array([3.0, -1.0]))
    np.testing.assert_allclose(gc.numpy(), np.array([0.25, 4.0]))


def test_complex_multiply_still_conjugates():
    x = tf.constant([1 + 2j, 3 - 1j], tf.complex64)
    c = tf.constant([2 - 1j, 0.5j], tf.complex64)

    def grad():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * c
        return tape.gradient(y, x)

    g, n = _wrapper_calls(grad)
    assert n >= 1
    np.testing.assert_allclose(g.numpy(), np.conj(np.array([2 - 1j, 0.5j])), rtol=1e-6)


def test_rules_registered_again_are_used():
    x, c = tf.constant(2.0), tf.constant(3.0)
    saved = registry.GRADIENTS["multiply"], registry.PER_INPUT["multiply"]

    def run():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * c
        return float(tape.gradient(y, x))

    assert run() == 3.0  # the default rules, cached by the tape
    try:
        registry.defgrad("multiply", lambda g, ans, a, b: g * 10.0, lambda g, ans, a, b: g * 10.0)
        assert run() == 10.0
    finally:
        registry.GRADIENTS["multiply"], registry.PER_INPUT["multiply"] = saved
    assert run() == 3.0


def test_same_tensor_on_both_sides_accumulates():
    x = tf.constant([1.5, -2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 3 * np.array([1.5, -2.0]) ** 2, rtol=1e-6)
