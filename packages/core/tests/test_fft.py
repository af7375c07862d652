"""tf.signal's transforms (csrc/fft.c) against NumPy's FFT (the reference only) over many lengths: 0, 1, powers of
2, radix 3/5 mixes and primes (Bluestein), batched, on inner axes, with fft_length; their errors; tracing."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError

LENGTHS = list(range(1, 41)) + [49, 60, 64, 97, 101, 125, 128, 243, 256, 1000, 1009, 1024, 4096, 10007]
TOL = {np.complex64: 2e-5, np.complex128: 1e-11}


def _c(rng, shape, npd):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(npd)


def _close(got, want, npd):
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[npd] * scale)


@pytest.mark.parametrize("npd", [np.complex64, np.complex128])
def test_fft_and_ifft_every_length(npd):
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        x = _c(rng, (2, n), npd)
        y = tf.signal.fft(x)
        assert y.dtype == tf.as_dtype(npd) and y.shape == (2, n)
        _close(y.numpy(), np.fft.fft(x.astype(np.complex128)), npd)
        _close(tf.signal.ifft(x).numpy(), np.fft.ifft(x.astype(np.complex128)), npd)


@pytest.mark.parametrize("rdt", [np.float32, np.float64])
def test_rfft_and_irfft_every_length(rdt):
    rng = np.random.default_rng(1)
    npd = np.complex64 if rdt == np.float32 else np.complex128
    for n in LENGTHS:
        x = rng.standard_normal((3, n)).astype(rdt)
        y = tf.signal.rfft(x)
        assert y.dtype == tf.as_dtype(npd) and y.shape == (3, n // 2 + 1)
        _close(y.numpy(), np.fft.rfft(x.astype(np.float64)), npd)
        c = _c(rng, (3, n // 2 + 1), npd)
        back = tf.signal.irfft(c, fft_length=[n])
        assert back.dtype == tf.as_dtype(rdt) and back.shape == (3, n)
        _close(back.numpy(), np.fft.irfft(c.astype(np.complex128), n), npd)
        _close(tf.signal.irfft(y, [n]).numpy(), x, npd)    # the round trip


def test_fft_length_crops_and_pads_as_tensorflow():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 10))
    for n in (1, 4, 10, 16, 23):
        _close(tf.signal.rfft(x, fft_length=[n]).numpy(), np.fft.rfft(x, n), np.complex128)
    c = np.fft.rfft(x)           # 6 frequencies
    for n in (2, 7, 10, 11, 30):
        _close(tf.signal.irfft(c, fft_length=[n]).numpy(), np.fft.irfft(c, n), np.complex128)
    # with no fft_length, irfft gives 2 * (m - 1) points
    assert tf.signal.irfft(c).shape == (2, 10)
    assert tf.signal.rfft(x, tf.constant([8])).shape == (2, 5)


def test_multi_dimensional_transforms():
    rng = np.random.default_rng(3)
    z = _c(rng, (2, 6, 7, 5), np.complex128)
    _close(tf.signal.fft2d(z).numpy(), np.fft.fft2(z), np.complex128)
    _close(tf.signal.ifft2d(z).numpy(), np.fft.ifft2(z), np.complex128)
    _close(tf.signal.fft3d(z).numpy(), np.fft.fftn(z, axes=(1, 2, 3)), np.complex128)
    _close(tf.signal.ifft3d(z).numpy(), np.fft.ifftn(z, axes=(1, 2, 3)), np.complex128)
    x = rng.standard_normal((2, 6, 7, 5))
    _close(tf.signal.rfft2d(x).numpy(), np.fft.rfft2(x), np.complex128)
    _close(tf.signal.rfft3d(x).numpy(), np.fft.rfftn(x, axes=(1, 2, 3)), np.complex128)
    _close(tf.signal.rfft2d(x, [4, 9]).numpy(), np.fft.rfft2(x, s=(4, 9)), np.complex128)
    c = np.fft.rfft2(x)
    _close(tf.signal.irfft2d(c, [7, 5]).numpy(), np.fft.irfft2(c, s=(7, 5)), np.complex128)
    c3 = np.fft.rfftn(x, axes=(1, 2, 3))
    _close(tf.signal.irfft3d(c3, [6, 7, 5]).numpy(), np.fft.irfftn(c3, s=(6, 7, 5), axes=(1, 2, 3)), np.complex128)


def test_large_batches_split_over_threads_give_the_same_lines():
    rng = np.random.default_rng(4)
    z = _c(rng, (300, 256), np.complex64)          # 76800 points: over the threading threshold
    _close(tf.signal.fft(z).numpy(), np.fft.fft(z.astype(np.complex128)), np.complex64)
    one = tf.signal.fft(z[7:8]).numpy()
    np.testing.assert_array_equal(tf.signal.fft(z).numpy()[7:8], one)   # bit for bit as a batch of one
    zp = _c(rng, (64, 1009), np.complex128)      # Bluestein, threaded
    _close(tf.signal.fft(zp).numpy(), np.fft.fft(zp), np.complex128)


def test_empty_and_size_one():
    assert tf.signal.fft(np.zeros((0, 4), np.complex64)).shape == (0, 4)
    assert tf.signal.fft(np.zeros((3, 0), np.complex64)).shape == (3, 0)
    assert tf.signal.rfft(np.zeros((3, 0), np.float32)).shape == (3, 1)
    assert tf.signal.rfft(np.ones((2, 4), np.float32), [0]).numpy().tolist() == [[0j], [0j]]
    assert tf.signal.fft(np.array([2 - 1j])).numpy().tolist() == [2 - 1j]
    assert tf.signal.irfft(np.array([[3 + 1j]]), [1]).numpy().tolist() == [[3.0]]


def test_typed_errors():
    with pytest.raises(InvalidArgumentError, match=r"float32; allowed: complex64, complex128.*\[Op:FFT\]"):
        tf.signal.fft(tf.ones([4]))
    with pytest.raises(InvalidArgumentError, match=r"rank >= 2.*\[Op:FFT2D\]"):
        tf.signal.fft2d(tf.ones([4], tf.complex64))
    with pytest.raises(InvalidArgumentError, match=r"complex64; allowed: float32, float64 \[Op:RFFT\]"):
        tf.signal.rfft(tf.ones([4], tf.complex64))
    with pytest.raises(InvalidArgumentError, match=r"int32; allowed: float32, float64 \[Op:RFFT\]"):
        tf.signal.rfft(tf.constant([1, 2]))
    with pytest.raises(InvalidArgumentError, match=r"allowed: complex64, complex128 \[Op:IRFFT\]"):
        tf.signal.irfft(tf.ones([4]))
    with pytest.raises(InvalidArgumentError, match=r"fft_length must have 2 elements.*\[Op:RFFT2D\]"):
        tf.signal.rfft2d(tf.ones([4, 4]), [4])
    with pytest.raises(InvalidArgumentError, match=r">= 0.*\[Op:RFFT\]"):
        tf.signal.rfft(tf.ones([4]), [-2])
    with pytest.raises(TypeError, match=r"\[Op:RFFT\]"):
        tf.signal.rfft(tf.ones([4]), [2.5])


def test_transforms_trace_in_graph_functions():
    @tf.function
    def f(x):
        return tf.signal.irfft(tf.signal.rfft(x) * tf.constant(2.0 + 0j, tf.complex64), [8])

    x = np.random.default_rng(5).standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_allclose(f(tf.constant(x)).numpy(), 2 * x, rtol=1e-5, atol=1e-5)


def test_windows_frames_and_stft():
    np.testing.assert_allclose(tf.signal.hann_window(8, periodic=False).numpy(), np.hanning(8), atol=1e-6)
    np.testing.assert_allclose(tf.signal.hamming_window(9, periodic=False).numpy(), np.hamming(9), atol=1e-6)
    assert tf.signal.hann_window(5, dtype=tf.float64).dtype is tf.float64
    framed = tf.signal.frame(tf.range(10), 4, 3).numpy().tolist()
    assert framed == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]
    x = np.random.default_rng(6).standard_normal(200)
    s = tf.signal.stft(x, 32, 8)
    assert s.shape == (22, 17) and s.dtype is tf.complex128
    y = tf.signal.inverse_stft(s, 32, 8, window_fn=tf.signal.inverse_stft_window_fn(8))
    np.testing.assert_allclose(y.numpy()[32:-32], x[32:-32], atol=1e-10)   # exact away from the ends
    z = np.array([0, 1, 2, 3, -3, -2, -1])
    assert tf.signal.fftshift(z).numpy().tolist() == np.fft.fftshift(z).tolist()
    assert tf.signal.ifftshift(tf.signal.fftshift(z)).numpy().tolist() == z.tolist()
    with pytest.raises(InvalidArgumentError, match=r"\[Op:Frame\]"):
        tf.signal.frame(tf.range(5), 0, 1)
    with pytest.raises(InvalidArgumentError, match=r"\[Op:HannWindow\]"):
        tf.signal.hann_window(4, dtype=tf.int32)


def test_dct_types_2_and_3_and_their_errors():
    x = np.random.default_rng(7).standard_normal((2, 6))
    k, j = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    dct2 = 2 * np.cos(np.pi * k * (2 * j + 1) / 12)
    np.testing.assert_allclose(tf.signal.dct(x).numpy(), x @ dct2.T, atol=1e-10)
    np.testing.assert_allclose(tf.signal.idct(tf.signal.dct(x)).numpy(), 12 * x, atol=1e-9)   # 2N x, as TF
    np.testing.assert_allclose(tf.signal.idct(tf.signal.dct(x, norm="ortho"), norm="ortho").numpy(), x, atol=1e-10)
    np.testing.assert_allclose(tf.signal.dct(x, type=3, norm="ortho").numpy(),
                               tf.signal.idct(x, norm="ortho").numpy(), atol=1e-12)
    with pytest.raises(InvalidArgumentError, match=r"allowed: 2, 3 \[Op:Dct\]"):
        tf.signal.dct(x, type=1)
    with pytest.raises(InvalidArgumentError, match=r"allowed: -1.*\[Op:Idct\]"):
        tf.signal.idct(x, axis=0)
    with pytest.raises(InvalidArgumentError, match=r"allowed: None, 'ortho' \[Op:Dct\]"):
        tf.signal.dct(x, norm="forward")
