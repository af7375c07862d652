"""complex64 / complex128: conversion, printing, casts, the parts of a complex number, arithmetic, reduce_sum and
matmul against NumPy, and typed errors from the ops that have no complex kernels."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core.ops import math_ops
from tapeflow.core.errors import InvalidArgumentError, UnimplementedError

CDTYPES = [(tf.complex64, np.complex64, 1e-5), (tf.complex128, np.complex128, 1e-12)]


def _c(rng, shape, npd):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(npd)


def test_dtypes():
    assert tf.complex64.is_complex and tf.complex128.is_complex and not tf.float32.is_complex
    assert not tf.complex64.is_floating and not tf.complex64.is_integer
    assert tf.complex64.real_dtype is tf.float32 and tf.complex128.real_dtype is tf.float64
    assert tf.float32.real_dtype is tf.float32
    assert tf.as_dtype("complex64") is tf.complex64 and tf.as_dtype(np.complex128) is tf.complex128
    assert tf.as_dtype(complex) is tf.complex128
    assert tf.complex64.size == 8 and tf.complex128.size == 16


def test_conversion_keeps_values():
    assert tf.constant(1 + 2j).dtype is tf.complex128   # a Python complex, as in TensorFlow
    a = np.array([[1 + 2j, -3.5j]], np.complex64)
    t = tf.constant(a)
    assert t.dtype is tf.complex64 and t.numpy().dtype == np.complex64
    np.testing.assert_array_equal(t.numpy(), a)
    assert tf.constant([1.0, 2.0], tf.complex64).numpy().tolist() == [1 + 0j, 2 + 0j]
    assert complex(tf.constant(2 - 1j)) == 2 - 1j
    with pytest.raises(InvalidArgumentError, match="imaginary"):
        tf.constant(1 + 2j, tf.float32)


def test_printing_as_tensorflow():
    t = tf.constant(np.array([1 + 2j, 3 - 1j], np.complex64))
    assert str(t) == "Tensor([1.+2.j 3.-1.j], shape=(2,), dtype=complex64)"
    assert repr(t) == "<Tensor: shape=(2,), dtype=complex64, numpy=array([1.+2.j, 3.-1.j], dtype=complex64)>"
    assert repr(tf.constant(1 + 2j)) == "<Tensor: shape=(), dtype=complex128, numpy=(1+2j)>"


@pytest.mark.parametrize("dt,npd,tol", CDTYPES)
def test_casts(dt, npd, tol):
    z = tf.constant(np.array([1.5 + 2j, -3 - 0.25j, 0j], npd))
    assert tf.cast(z, tf.float32).numpy().tolist() == [1.5, -3.0, 0.0]    # the real part, as TensorFlow
    assert tf.cast(z, tf.int32).numpy().tolist() == [1, -3, 0]
    assert tf.cast(z, tf.bool).numpy().tolist() == [True, True, False]
    other = tf.complex128 if dt is tf.complex64 else tf.complex64
    np.testing.assert_array_equal(tf.cast(z, other).numpy(), z.numpy().astype(other.as_numpy_dtype))
    assert tf.cast(tf.constant([1, -2]), dt).numpy().tolist() == [1 + 0j, -2 + 0j]
    assert tf.cast(tf.constant([0.5], tf.float16), dt).numpy().tolist() == [0.5 + 0j]


@pytest.mark.parametrize("dt,npd,tol", CDTYPES)
def test_parts(dt, npd, tol):
    rng = np.random.default_rng(1)
    a = _c(rng, (3, 4), npd)
    z = tf.constant(a)
    rdt = dt.real_dtype
    for got, want in [(tf.math.real(z), a.real), (tf.math.imag(z), a.imag), (tf.abs(z), np.abs(a)),
                      (tf.math.angle(z), np.angle(a))]:
        assert got.dtype is rdt
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
    assert tf.math.conj(z).dtype is dt
    np.testing.assert_array_equal(tf.math.conj(z).numpy(), np.conj(a))
    back = tf.complex(tf.math.real(z), tf.math.imag(z))
    assert back.dtype is dt
    np.testing.assert_array_equal(back.numpy(), a)


def test_complex_broadcasts_and_checks_its_parts():
    out = tf.complex(tf.constant([[1.0], [2.0]]), tf.constant([3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(out.numpy(), np.array([[1.0], [2.0]]) + 1j * np.array([3.0, 4.0, 5.0]))
    assert tf.complex(tf.constant(1.0, tf.float64), 2.0).dtype is tf.complex128
    with pytest.raises(InvalidArgumentError, match=r"float32, float64.*\[Op:Complex\]"):
        tf.complex(tf.constant([1]), tf.constant([2]))
    with pytest.raises(InvalidArgumentError, match=r"\[Op:Complex\]"):
        tf.complex(tf.constant([1.0]), tf.constant([2.0], tf.float64))


def test_parts_of_real_tensors_as_tensorflow():
    x = tf.constant([-2.0, 3.0])
    assert tf.math.real(x) is x and tf.math.conj(x) is x
    assert tf.math.imag(x).numpy().tolist() == [0.0, 0.0]
    np.testing.assert_allclose(tf.math.angle(x).numpy(), [np.pi, 0.0])


@pytest.mark.parametrize("dt,npd,tol", CDTYPES)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), ()), ((2, 1, 3), (4, 1)), ((0, 3), (3,))])
def test_arithmetic(dt, npd, tol, shapes):
    rng = np.random.default_rng(2)
    a, b = _c(rng, shapes[0], npd), _c(rng, shapes[1], npd)
    x, y = tf.constant(a), tf.constant(b)
    for got, want in [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b), (-x, -a),
                      (tf.exp(x), np.exp(a)), (tf.divide(x, y), a / b), (x * 2.0, a * 2), (1 - x, 1 - a)]:
        assert got.dtype is dt and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dt,npd,tol", CDTYPES)
def test_reduce_sum(dt, npd, tol):
    a = _c(np.random.default_rng(3), (2, 3, 4), npd)
    z = tf.constant(a)
    for axis in [None, 0, 1, -1, [0, 2], [0, 1, 2]]:
        for keep in (False, True):
            want = a.sum(axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keep)
            got = tf.reduce_sum(z, axis=axis, keepdims=keep)
            assert got.dtype is dt
            np.testing.assert_allclose(got.numpy(), want, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("dt,npd,tol", CDTYPES)
def test_matmul(dt, npd, tol):
    rng = np.random.default_rng(4)
    a, b = _c(rng, (2, 3, 4), npd), _c(rng, (4, 5), npd)
    np.testing.assert_allclose(tf.matmul(a, b).numpy(), a @ b, rtol=tol * 10, atol=tol * 10)
    at = np.swapaxes(a, -1, -2).copy()
    np.testing.assert_allclose(tf.matmul(at, b, transpose_a=True).numpy(), a @ b, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(tf.matmul(np.conj(at), b, adjoint_a=True).numpy(), a @ b, rtol=tol * 10,
                               atol=tol * 10)
    bh = np.conj(b.T).copy()
    np.testing.assert_allclose(tf.matmul(a, bh, adjoint_b=True).numpy(), a @ b, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose((tf.constant(a) @ tf.constant(b)).numpy(), a @ b, rtol=tol * 10, atol=tol * 10)
    c = _c(rng, (3, 1, 2, 3), npd)     # broadcast batches
    np.testing.assert_allclose(tf.matmul(c, a).numpy(), c @ a, rtol=tol * 10, atol=tol * 10)
    assert tf.matmul(np.zeros((2, 0), npd), np.zeros((0, 3), npd)).numpy().tolist() == [[0j] * 3] * 2


@pytest.mark.parametrize("npd", [np.complex64, np.complex128])
def test_data_movement(npd):
    a = _c(np.random.default_rng(5), (3, 4), npd)
    z = tf.constant(a)
    np.testing.assert_array_equal(tf.transpose(z).numpy(), a.T)
    np.testing.assert_array_equal(tf.reshape(z, [4, 3]).numpy(), a.reshape(4, 3))
    np.testing.assert_array_equal(z[1:, ::-2].numpy(), a[1:, ::-2])
    np.testing.assert_array_equal(tf.concat([z, z], 1).numpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(tf.pad(z, [[1, 0], [0, 2]]).numpy(), np.pad(a, [[1, 0], [0, 2]]))
    np.testing.assert_array_equal(tf.broadcast_to(z[:1], [2, 4]).numpy(), np.broadcast_to(a[:1], (2, 4)))
    np.testing.assert_array_equal(tf.gather(z, [2, 0], axis=1).numpy(), a[:, [2, 0]])
    np.testing.assert_array_equal(tf.gather(z, [1, 1]).numpy(), a[[1, 1]])
    np.testing.assert_array_equal(tf.roll(z, 1, 0).numpy(), np.roll(a, 1, 0))
    np.testing.assert_array_equal(tf.boolean_mask(z, [True, False, True]).numpy(), a[[0, 2]])
    np.testing.assert_array_equal(tf.gather_nd(z, [[0, 1], [2, 3]]).numpy(), a[[0, 2], [1, 3]])
    mask = np.array([[True, False, True, False]] * 3)
    np.testing.assert_array_equal(tf.where(mask, z, tf.zeros_like(z)).numpy(), np.where(mask, a, 0))
    assert tf.zeros([2], tf.complex128).numpy().tolist() == [0j, 0j]
    assert tf.ones([2], tf.complex64).numpy().tolist() == [1 + 0j, 1 + 0j]


_COMPLEX_OPS = {"add", "subtract", "multiply", "real_div", "negative", "exp", "abs"}


@pytest.mark.parametrize("dt", [tf.complex64, tf.complex128])
def test_element_wise_ops_without_complex_kernels_raise_typed_errors(dt):
    """Every element-wise op either computes complex numbers or names itself and the dtypes it allows."""
    z = tf.constant([1 + 1j, 2 - 1j], dt)
    for name, _k, tf_name, *_ in math_ops._UNARY:
        if name in _COMPLEX_OPS:
            getattr(math_ops, name)(z)
            continue
        with pytest.raises(InvalidArgumentError, match=rf"does not support {dt.name}; allowed: .*\[Op:{tf_name}\]"):
            getattr(math_ops, name)(z)
    for name, _k, tf_name, *_ in math_ops._BINARY:
        if name in _COMPLEX_OPS:
            getattr(math_ops, name)(z, z)
            continue
        with pytest.raises(InvalidArgumentError, match=rf"\[Op:{tf_name}\]"):
            getattr(math_ops, name)(z, z)


def test_other_ops_without_complex_kernels_raise_typed_errors():
    z = tf.constant([[1 + 1j, 2 - 1j]])
    for fn, op in [(tf.reduce_max, "Max"), (tf.reduce_mean, "Mean"), (tf.reduce_prod, "Prod")]:
        with pytest.raises(InvalidArgumentError, match=rf"complex128; allowed: .*\[Op:{op}\]"):
            fn(z)
    with pytest.raises(UnimplementedError, match=r"no kernel for this dtype .*\[Op:Sort\]"):   # (no dtype list)
        tf.sort(z)
    with pytest.raises(InvalidArgumentError, match=r"\[Op:MatMul\]"):
        tf.matmul(z, tf.constant([[1.0], [2.0]]))
    with pytest.raises(InvalidArgumentError, match=r"\[Op:Real\]"):
        tf.math.real(tf.constant(["a"]))


def test_complex_ops_trace_in_graph_functions():
    @tf.function
    def f(re, im):
        z = tf.complex(re, im)
        return tf.abs(z * tf.math.conj(z)), tf.math.angle(z)

    m, a = f(tf.constant([3.0, 0.0]), tf.constant([4.0, -1.0]))
    np.testing.assert_allclose(m.numpy(), [25.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(a.numpy(), np.angle([3 + 4j, -1j]), rtol=1e-6)
