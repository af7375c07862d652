"""Gradients through complex tensors follow TensorFlow's convention: for a real loss L of z = x + iy the tape
gives dL/dx + i dL/dy (so multiply's gradient is g * conj(y), matmul's g @ adjoint(b)).  Checked against
central differences over the real and imaginary parts, for the complex ops and tf.signal's transforms
(the values were also compared with TensorFlow 2.21's GradientTape when these rules were written), and the
forward mode's JVPs through complex intermediates against the tape."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

RNG = np.random.default_rng(0)
Z = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
C = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
W = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))

LOSSES = {
    "multiply": lambda z: tf.math.real(z * tf.constant(C)),
    "divide": lambda z: tf.math.imag(tf.constant(C) / (z + 3.0)),
    "exp": lambda z: tf.math.real(tf.exp(z) * tf.constant(C)),
    "abs": lambda z: tf.abs(z),
    "angle": lambda z: tf.math.angle(z),
    "conj": lambda z: tf.math.imag(tf.math.conj(z) * tf.constant(C)),
    "real_imag": lambda z: tf.math.real(z) * tf.math.imag(z),
    "matmul": lambda z: tf.math.real(tf.matmul(z, tf.constant(W)) * tf.constant(C)),
    "matmul_adjoint": lambda z: tf.math.imag(tf.matmul(tf.constant(C), z, adjoint_b=True)),
    "reduce_sum": lambda z: tf.math.real(tf.reduce_sum(z * z, axis=1)),
    "cast": lambda z: tf.cast(z * tf.constant(C), tf.float64),
    "fft": lambda z: tf.math.real(tf.signal.fft(z) * tf.constant(C)),
    "ifft": lambda z: tf.math.imag(tf.signal.ifft(z) * tf.constant(C)),
    "fft2d": lambda z: tf.math.real(tf.signal.fft2d(z * z)),
    "ifft2d": lambda z: tf.math.imag(tf.signal.ifft2d(z) * tf.constant(C)),
    "irfft": lambda z: tf.signal.irfft(z, [4]) * tf.constant([1.0, -2.0, 3.0, 0.5], tf.float64),
    "irfft_odd": lambda z: tf.signal.irfft(z, [5]) * tf.constant([1.0, -2.0, 3.0, 0.5, 2.0], tf.float64),
    "irfft2d": lambda z: tf.signal.irfft2d(z, [2, 4]) * tf.constant(np.arange(8.0).reshape(2, 4)),
}


def _loss(name, z):
    return tf.reduce_sum(LOSSES[name](z))


def _numeric(name, z0, eps=1e-6):
    out = np.zeros_like(z0)
    for idx in np.ndindex(z0.shape):
        for unit in (1, 1j):
            zp, zm = z0.copy(), z0.copy()
            zp[idx] += eps * unit
            zm[idx] -= eps * unit
            d = (float(_loss(name, tf.constant(zp))) - float(_loss(name, tf.constant(zm)))) / (2 * eps)
            out[idx] += d * unit
    return out


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_complex_gradient_is_dl_dx_plus_i_dl_dy(name):
    z = tf.Variable(Z)
    with tf.GradientTape() as tape:
        loss = _loss(name, z)
    g = tape.gradient(loss, z)
    assert g is not None and g.dtype is tf.complex128
    np.testing.assert_allclose(g.numpy(), _numeric(name, Z), rtol=1e-6, atol=1e-6)


def test_complex64_gradients_stay_complex64():
    z = tf.Variable(Z.astype(np.complex64))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.abs(tf.signal.fft(z * z)))
    g = tape.gradient(loss, z)
    assert g.dtype is tf.complex64
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.abs(tf.signal.fft(tf.constant(Z) * tf.Variable(Z))))
    assert tape.gradient(loss, tape.watched_variables()[0]) is not None


@pytest.mark.parametrize("n", [1, 4, 7, 8])
def test_rfft_gradient_of_a_real_signal(n):
    x0 = RNG.standard_normal(6)
    w = RNG.standard_normal(n // 2 + 1) + 1j * RNG.standard_normal(n // 2 + 1)

    def loss(x):
        return tf.reduce_sum(tf.math.real(tf.signal.rfft(x, [n]) * tf.constant(w)))

    x = tf.Variable(x0)
    with tf.GradientTape() as tape:
        val = loss(x)
    g = tape.gradient(val, x).numpy()
    eps = 1e-6
    num = [(float(loss(tf.constant(x0 + eps * e))) - float(loss(tf.constant(x0 - eps * e)))) / (2 * eps)
           for e in np.eye(6)]
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-6)


def test_stft_round_trip_gradient():
    x0 = RNG.standard_normal(40)
    x = tf.Variable(x0)
    with tf.GradientTape() as tape:
        y = tf.signal.inverse_stft(tf.signal.stft(x, 8, 2), 8, 2,
                                   window_fn=tf.signal.inverse_stft_window_fn(2))
        loss = tf.reduce_sum(y[8:-8] * y[8:-8])
    np.testing.assert_allclose(tape.gradient(loss, x).numpy()[10:-10], 2 * x0[10:-10], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("name", ["multiply", "divide", "exp", "abs", "angle", "matmul", "fft", "irfft", "cast"])
def test_forward_mode_through_complex_matches_the_tape(name):
    """The JVP along a complex tangent t is Re(<conj(grad), t>) of the tape's gradient."""
    t0 = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)
    z = tf.constant(Z)
    with tf.autodiff.ForwardAccumulator(z, tf.constant(t0)) as acc:
        loss = _loss(name, z)
    jvp = float(acc.jvp(loss))
    zv = tf.Variable(Z)
    with tf.GradientTape() as tape:
        loss2 = _loss(name, zv)
    g = tape.gradient(loss2, zv).numpy()
    np.testing.assert_allclose(jvp, float(np.real(np.sum(np.conj(g) * t0))), rtol=1e-8, atol=1e-8)
