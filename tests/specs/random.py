"""Specs of the random ops: each is compared with a NumPy re-implementation of the
Philox 4x32-10 contract written at the top of ``kernels-c/csrc/random.c`` (uniform
and integer draws bit for bit, normals to rounding), under a fixed seed.

Stateful ops run after ``tf.random.set_seed(GLOBAL)`` with op seed ``OP``: their
first call uses key ``philox_key(GLOBAL, OP)`` and stream 0.  Stateless ops use
key = seed[0], stream = seed[1].
"""
from __future__ import annotations

import numpy as np

from opspec import ALL, FLOATS, HALF, Spec, uniform

GLOBAL, OP = 2024, 7
_M32 = 0xFFFFFFFF
_M64 = (1 << 64) - 1


# ---- the reference generator ----------------------------------------------------------

def philox4x32_10(ctr, key):
    """Philox 4x32-10 on arrays: ``ctr`` is 4 uint32 arrays, ``key`` two ints; returns 4 arrays."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in ctr)
    k0, k1 = key[0] & _M32, key[1] & _M32
    m0, m1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    m32, s32 = np.uint64(_M32), np.uint64(32)
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & _M32, (k1 + 0xBB67AE85) & _M32
        p0, p1 = m0 * c0, m1 * c2
        c0, c1, c2, c3 = (p1 >> s32) ^ c1 ^ np.uint64(k0), p1 & m32, (p0 >> s32) ^ c3 ^ np.uint64(k1), p0 & m32
    return c0, c1, c2, c3


def philox_words(key, stream, nblocks, first=0):
    """The words w[4b .. 4b+3] of blocks b = first .. first+nblocks-1 of a stream, as uint64."""
    b = np.arange(first, first + nblocks, dtype=np.uint64)
    ctr = (b & np.uint64(_M32), b >> np.uint64(32), np.full_like(b, stream & _M32), np.full_like(b, stream >> 32))
    out = philox4x32_10(ctr, (key & _M32, key >> 32))
    return np.stack(out, axis=1).reshape(-1)


def u24(w):
    return (w >> np.uint64(8)).astype(np.float32) * np.float32(2.0 ** -24)


def u53(a, b):
    return ((a << np.uint64(21)) | (b >> np.uint64(11))).astype(np.float64) * 2.0 ** -53


def _box_muller(u1, u2):
    r = np.sqrt(-2.0 * np.log(u1))
    t = 2.0 * np.pi * u2
    return r * np.cos(t), r * np.sin(t)


def _compute(dtype):
    return np.dtype(np.float32) if dtype in HALF else np.dtype(dtype)


def _out(values, dtype):
    if dtype == "bfloat16":
        import ml_dtypes

        return values.astype(ml_dtypes.bfloat16)
    return values.astype(dtype)


def ref_uniform(shape, minval, maxval, dtype, key, stream):
    n = int(np.prod(shape))
    if dtype in ("int32", "int64"):
        lo, hi = int(minval), int(maxval)
        rng = hi - lo
        if dtype == "int32":
            w = philox_words(key, stream, (n + 3) // 4)[:n]
            return np.asarray([lo + ((int(v) * rng) >> 32) for v in w], dtype=np.int32).reshape(shape)
        w = philox_words(key, stream, (n + 1) // 2)
        vals = []
        for i in range(n):
            u = (int(w[2 * i]) << 32) | int(w[2 * i + 1])
            vals.append(((lo + ((u * rng) >> 64)) + (1 << 63)) % (1 << 64) - (1 << 63))
        return np.asarray(vals, dtype=np.int64).reshape(shape)
    cd = _compute(dtype)
    if dtype in HALF:  # drawn in the narrow type: (w >> 21) * 2^-11 or (w >> 24) * 2^-8, scaled in float32
        w = philox_words(key, stream, (n + 3) // 4)[:n]
        shift, scale = (21, 2.0 ** -11) if dtype == "float16" else (24, 2.0 ** -8)
        lo, hi = np.float32(minval), np.float32(maxval)
        v = lo + (w >> np.uint64(shift)).astype(np.float32) * np.float32(scale) * (hi - lo)
        h = _out(v.astype(np.float32), dtype)
        top = _out(np.asarray([hi]), dtype)
        while top[0].astype(np.float32) >= hi:  # the largest value of the dtype below hi
            top = _step_down(top)
        return np.where(h.astype(np.float32) < hi, h, top[0]).reshape(shape)
    if cd == np.float32:
        u = u24(philox_words(key, stream, (n + 3) // 4)[:n])
        lo, hi = np.float32(minval), np.float32(maxval)
        v = u if (lo, hi) == (0, 1) else lo + u * (hi - lo)
        v = np.where(v < hi, v, np.nextafter(hi, lo)).astype(np.float32)
    else:
        w = philox_words(key, stream, (n + 1) // 2).reshape(-1, 2)[:n]
        u = u53(w[:, 0], w[:, 1])
        v = u if (minval, maxval) == (0, 1) else minval + u * (maxval - minval)
        v = np.where(v < maxval, v, np.nextafter(maxval, minval))
    return _out(np.asarray(v).reshape(shape), dtype)


def _step_down(top):
    """The next float16/bfloat16 value toward -inf (through the bits)."""
    bits = top.view(np.uint16).copy()
    bits += np.uint16(1) if bits[0] & 0x8000 else np.uint16(0xFFFF)  # step toward -inf
    return bits.view(top.dtype)


def ref_normal(shape, mean, stddev, dtype, key, stream):
    n = int(np.prod(shape))
    if _compute(dtype) == np.float32:
        w = philox_words(key, stream, (n + 3) // 4).reshape(-1, 4).astype(np.float64)
        z0, z1 = _box_muller((w[:, 0] + 1) * 2.0 ** -32, w[:, 1] * 2.0 ** -32)
        z2, z3 = _box_muller((w[:, 2] + 1) * 2.0 ** -32, w[:, 3] * 2.0 ** -32)
        z = np.stack([z0, z1, z2, z3], axis=1).reshape(-1)[:n]
        return _out((mean + stddev * z).astype(np.float32).reshape(shape), dtype)
    w = philox_words(key, stream, (n + 1) // 2).reshape(-1, 4)
    z0, z1 = _box_muller(u53(w[:, 0], w[:, 1]) + 2.0 ** -53, u53(w[:, 2], w[:, 3]))
    z = np.stack([z0, z1], axis=1).reshape(-1)[:n]
    return (mean + stddev * z).reshape(shape)


def ref_truncated_normal(shape, mean, stddev, dtype, key, stream):
    n = int(np.prod(shape))
    z = np.zeros(n)
    todo = np.arange(n, dtype=np.uint64)
    for t in range(256):
        if not todo.size:
            break
        ctr = (todo & np.uint64(_M32), (todo >> np.uint64(32)) | np.uint64(t << 24),
               np.full_like(todo, stream & _M32), np.full_like(todo, stream >> 32))
        w = philox4x32_10(ctr, (key & _M32, key >> 32))
        a, b = _box_muller(u53(w[0], w[1]) + 2.0 ** -53, u53(w[2], w[3]))
        pick = np.where(np.abs(a) <= 2, a, b)
        ok = (np.abs(a) <= 2) | (np.abs(b) <= 2)
        z[todo[ok].astype(np.int64)] = pick[ok]
        todo = todo[~ok]
    v = mean + stddev * z
    return _out(v.astype(_compute(dtype)).reshape(shape), dtype)


def ref_categorical(logits, num_samples, key, stream):
    logits = logits.astype(np.float64)
    batch = logits.shape[0]
    out = np.zeros((batch, num_samples), dtype=np.int64)
    if batch * num_samples == 0:
        return out
    n = batch * num_samples
    w = philox_words(key, stream, (n + 1) // 2).reshape(-1, 2)[:n]
    u = u53(w[:, 0], w[:, 1]).reshape(batch, num_samples)
    for r in range(batch):
        cdf = np.cumsum(np.exp(logits[r] - logits[r].max()))
        out[r] = np.minimum(np.searchsorted(cdf, u[r] * cdf[-1], side="right"), logits.shape[1] - 1)
    return out


def ref_shuffle(x, key, stream):
    n = x.shape[0] if x.ndim else 0
    if x.ndim == 0:
        return x
    perm = list(range(n))
    w = philox_words(key, stream, max(n, 1) // 2 + 1)
    for i in range(n - 1, 0, -1):
        j = i & 1
        u = (int(w[4 * (i >> 1) + 2 * j]) << 32) | int(w[4 * (i >> 1) + 2 * j + 1])
        k = (u * (i + 1)) >> 64
        perm[i], perm[k] = perm[k], perm[i]
    return x[np.asarray(perm, dtype=np.int64)] if n else x


def _key():
    from tapeflow.core.ops.random_ops import philox_key

    return philox_key(GLOBAL, OP)


def _seeded(tf, f):
    tf.random.set_seed(GLOBAL)
    try:
        return f()
    finally:
        tf.random.set_seed(None)


# ---- samplers and runners -----------------------------------------------------------

_SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 7), (0,), (3, 0), (1001,)]


def _shape_sample(params):
    def sample(rng, dtype):
        return [((shape, dtype) + p, {}) for shape in _SHAPES for p in params]
    return sample


_UNIFORM_F = [(0.0, 1.0), (-2.0, 3.0), (5.0, 5.5)]
_UNIFORM_I = [(0, 10), (-5, 5), (-(2 ** 31), 2 ** 31 - 1), (7, 8)]
_NORMAL = [(0.0, 1.0), (3.0, 0.5)]


def _run_uniform(tf, shape, dtype, lo, hi):
    return _seeded(tf, lambda: tf.random.uniform(shape, lo, hi, dtype=dtype, seed=OP))


def _run_normal(tf, shape, dtype, mean, std):
    return _seeded(tf, lambda: tf.random.normal(shape, mean, std, dtype=dtype, seed=OP))


def _run_truncated(tf, shape, dtype, mean, std):
    return _seeded(tf, lambda: tf.random.truncated_normal(shape, mean, std, dtype=dtype, seed=OP))


def _run_stateless_uniform(tf, shape, dtype, lo, hi):
    return tf.random.stateless_uniform(shape, [OP, GLOBAL], lo, hi, dtype=dtype)


def _run_stateless_normal(tf, shape, dtype, mean, std):
    return tf.random.stateless_normal(shape, [OP, GLOBAL], mean, std, dtype=dtype)


def _run_stateless_truncated(tf, shape, dtype, mean, std):
    return tf.random.stateless_truncated_normal(shape, [OP, GLOBAL], mean, std, dtype=dtype)


def _categorical_sample(rng, dtype):
    cases = []
    for shape, n in [((2, 3), 10), ((1, 5), 1000), ((4, 1), 3), ((0, 3), 5), ((3, 4), 0), ((5, 100), 7)]:
        cases.append(((uniform(rng, shape, dtype, -3, 3), n), {}))
    x = uniform(rng, (2, 4), dtype, -3, 3)
    x[0, 1] = -np.inf  # a class that is never drawn
    cases.append(((x, 50), {}))
    return cases


def _run_categorical(tf, logits, n):
    return _seeded(tf, lambda: tf.random.categorical(tf.constant(logits), n, seed=OP))


def _shuffle_sample(rng, dtype):
    return [((uniform(rng, s, dtype),), {}) for s in [(5,), (4, 3), (0,), (1,), (6, 2, 2), (), (100,), (3, 0)]]


def _run_shuffle(tf, x):
    return _seeded(tf, lambda: tf.random.shuffle(tf.constant(x), seed=OP))


SPECS = [
    Spec("random_uniform", lambda s, d, lo, hi: ref_uniform(s, lo, hi, d, _key(), 0), _shape_sample(_UNIFORM_F),
         dtypes=FLOATS + HALF, fn=_run_uniform, exact=True, grad=False),
    Spec("random_uniform", lambda s, d, lo, hi: ref_uniform(s, lo, hi, d, _key(), 0), _shape_sample(_UNIFORM_I),
         dtypes=("int32", "int64"), fn=_run_uniform, exact=True, grad=False, name="int"),
    Spec("random_normal", lambda s, d, m, sd: ref_normal(s, m, sd, d, _key(), 0), _shape_sample(_NORMAL),
         dtypes=FLOATS + HALF, fn=_run_normal, grad=False),
    Spec("truncated_normal", lambda s, d, m, sd: ref_truncated_normal(s, m, sd, d, _key(), 0),
         _shape_sample(_NORMAL), dtypes=FLOATS + HALF, fn=_run_truncated, grad=False),
    Spec("stateless_random_uniform", lambda s, d, lo, hi: ref_uniform(s, lo, hi, d, OP, GLOBAL),
         _shape_sample(_UNIFORM_F), dtypes=FLOATS + HALF, fn=_run_stateless_uniform, exact=True, grad=False),
    Spec("stateless_random_uniform", lambda s, d, lo, hi: ref_uniform(s, lo, hi, d, OP, GLOBAL),
         _shape_sample(_UNIFORM_I), dtypes=("int32", "int64"), fn=_run_stateless_uniform, exact=True, grad=False,
         name="int"),
    Spec("stateless_random_normal", lambda s, d, m, sd: ref_normal(s, m, sd, d, OP, GLOBAL), _shape_sample(_NORMAL),
         dtypes=FLOATS + HALF, fn=_run_stateless_normal, grad=False),
    Spec("stateless_truncated_normal", lambda s, d, m, sd: ref_truncated_normal(s, m, sd, d, OP, GLOBAL),
         _shape_sample(_NORMAL), dtypes=FLOATS + HALF, fn=_run_stateless_truncated, grad=False),
    Spec("categorical", lambda x, n: ref_categorical(x, n, _key(), 0), _categorical_sample, dtypes=FLOATS + HALF,
         fn=_run_categorical, exact=True, grad=False),
    Spec("random_shuffle", lambda x: ref_shuffle(x, _key(), 0), _shuffle_sample, dtypes=ALL + HALF,
         fn=_run_shuffle, exact=True, grad=False),
]
