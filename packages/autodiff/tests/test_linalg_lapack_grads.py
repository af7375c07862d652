"""Gradients of the LAPACK decompositions (grads/linalg.py): the typed refusals where TensorFlow defines
no gradient, expm's block-matrix derivative against central differences, and every rule against
TensorFlow's gradients where TensorFlow is installed (finite differences: tests/test_gradients_registry.py)."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.autodiff  # noqa: F401
InvalidArgumentError = tf.errors.InvalidArgumentError

RNG = np.random.default_rng(1234)
A = RNG.uniform(-1, 1, (2, 4, 3))     # tall, batched
W = RNG.uniform(-1, 1, (3, 5))        # wide
S = RNG.uniform(-1, 1, (2, 3, 3))     # square, batched


def test_gradients_where_tensorflow_has_none_for_the_factors_raise_typed_errors():
    x = tf.constant(A)
    with tf.GradientTape() as tape:
        tape.watch(x)
        _, u, _ = tf.linalg.svd(x, full_matrices=True)
        loss = tf.reduce_sum(u)
    with pytest.raises(InvalidArgumentError, match=r"full_matrices.*\[Op:Svd\]"):
        tape.gradient(loss, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        q, _ = tf.linalg.qr(x, full_matrices=True)
        loss = tf.reduce_sum(q)
    with pytest.raises(InvalidArgumentError, match=r"full_matrices.*\[Op:Qr\]"):
        tape.gradient(loss, x)


def test_expm_gradient_is_the_block_matrix_derivative():
    x = tf.constant(S[0])
    g = tf.constant(RNG.uniform(-1, 1, (3, 3)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.linalg.expm(x) * g)
    got = tape.gradient(loss, x).numpy()
    eps, num = 1e-6, np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            d = np.zeros((3, 3))
            d[i, j] = eps
            hi = np.sum(tf.linalg.expm(tf.constant(S[0] + d)).numpy() * g.numpy())
            lo = np.sum(tf.linalg.expm(tf.constant(S[0] - d)).numpy() * g.numpy())
            num[i, j] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-8)


# ---- against TensorFlow, where it is installed ------------------------------------------------

def _tf_cases(lib):
    """Sign-invariant results and gradients of the same computations, in ``lib`` (tapeflow or tensorflow)."""
    out = {}

    def grad(name, f, *xs):
        xs = [lib.Variable(x) for x in xs]
        with lib.GradientTape() as tape:
            ys = f(*xs)
            ys = ys if isinstance(ys, (list, tuple)) else [ys]
            loss = sum(lib.reduce_sum(lib.sin(y * (i + 1.3))) for i, y in enumerate(ys))
        out[name] = [np.asarray(loss.numpy())] + [g.numpy() for g in tape.gradient(loss, xs)]

    def svd_inv(x):
        s, u, v = lib.linalg.svd(x)
        return [s, lib.matmul(u[..., :, :1], v[..., :, :1], transpose_b=True)]

    def eigh_inv(x):
        e, v = lib.linalg.eigh(x)
        return [e, lib.matmul(v[..., :, :1], v[..., :, :1], transpose_b=True)]

    b = B4
    for label, x in (("tall", A), ("wide", W), ("square", S)):
        grad(f"svd-{label}", svd_inv, x)
        grad(f"qr-{label}", lambda t: list(lib.linalg.qr(t)), x)
        grad(f"pinv-{label}", lambda t: lib.linalg.pinv(t), x)
        grad(f"norm2-{label}", lambda t: lib.norm(t, ord=2, axis=[-2, -1]), x)
    grad("svd-values", lambda t: lib.linalg.svd(t, compute_uv=False), A)
    grad("eigh", eigh_inv, S)
    grad("eigvalsh", lambda t: lib.linalg.eigvalsh(t), S)
    grad("expm", lambda t: lib.linalg.expm(t * 4.0), S)
    grad("lstsq", lambda t, r: lib.linalg.lstsq(t, r, l2_regularizer=0.3), A, b)
    lu, p = lib.linalg.lu(S)
    out["lu"] = [lu.numpy(), p.numpy()]
    grad("lu_solve", lambda r: lib.linalg.lu_solve(lu, p, r), b[:, :3])
    out["rank"] = [lib.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])).numpy()]
    return out


B4 = RNG.uniform(-1, 1, (2, 4, 2))


def test_matches_tensorflow_values_and_gradients():
    tensorflow = pytest.importorskip("tensorflow")
    ours, theirs = _tf_cases(tf), _tf_cases(tensorflow)
    for key, want in theirs.items():
        for i, (g, w) in enumerate(zip(ours[key], want)):
            np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9, err_msg=f"{key} #{i}")
