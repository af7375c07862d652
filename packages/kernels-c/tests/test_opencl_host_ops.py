"""Tiny element-wise ops on the OpenCL backend's host mirrors (issue 16 item 5).

The host path must give the device kernel's bits, never launch, never wait, and keep
the device copy coherent: a host result is written to the device before a device
command uses it, a device write drops the mirror.
"""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow.kernels as K
from tapeflow.kernels import opencl

pytestmark = pytest.mark.skipif(opencl.device_count() == 0, reason="this machine has no OpenCL device")

C = K.DTYPE_CODES
B = K.BINARY_CODES
U = K.UNARY_CODES
INTS = ("int8", "uint8", "int16", "int32", "int64")
CMP = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


@pytest.fixture
def be():
    try:
        be = K.get_backend("opencl")
    except K.BackendUnavailable:
        be = opencl.OpenCLBackend()
    before = be.set_host_ops(1024)
    yield be
    be.set_host_ops(before)


def values(rng, dtype, n):
    if dtype == "bool":
        return rng.random(n) < 0.5
    if dtype in INTS:
        info = np.iinfo(dtype)
        # extremes too: integer add/sub/mul wrap the same on both sides
        x = rng.integers(max(info.min, -100), min(info.max, 100), size=n, endpoint=True).astype(dtype)
        x[:2] = [info.min, info.max]
        return x
    x = rng.uniform(-3, 3, n).astype(dtype)
    x[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-39 if dtype == "float32" else 1e-310, 1.5, -2.5]
    return x


def run(be, host_ops, fn, *arrays, out_shape, out_dtype):
    """``fn(bufs, out)`` on uploaded copies of ``arrays``; (status, result, host ops taken, launches)."""
    prev = be.set_host_ops(1024 if host_ops else 0)
    try:
        bufs = [be.from_numpy(a)[0] for a in arrays]
        out, _ = be.alloc(out_shape, out_dtype)
        h0, l0 = be.stats["host_ops"], be.stats["launches"]
        st = fn(bufs, out)
        taken, launched = be.stats["host_ops"] - h0, be.stats["launches"] - l0
        return st, be.to_numpy(out, None, out_shape, out_dtype), taken, launched
    finally:
        be.set_host_ops(prev)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


BINARY = ("add", "sub", "mul", "div", *CMP, "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "relu_grad")
UNARY = ("neg", "abs", "sign", "square", "relu", "floor", "ceil", "logical_not", "bitwise_not", "isnan", "isfinite")


def test_host_ops_give_the_device_kernels_bits_and_launch_nothing(be):
    rng = np.random.default_rng(0)
    checked = 0
    for name in BINARY:
        for dt in ("float32", "float64", *INTS, "bool"):
            a, b = values(rng, dt, 24), values(rng, dt, 24)
            od = np.bool_ if name in CMP else np.dtype(dt)
            calls = {
                "flat": lambda bufs, out, code=B[name], dt=dt: be.binary_flat(code, C[dt], bufs[0], 0, bufs[1], 0,
                                                                              out, 24),
                "scalar": lambda bufs, out, code=B[name], dt=dt: be.binary_flat(code, C[dt], bufs[0], 0, bufs[1], 1,
                                                                                out, 24),
                "strided": lambda bufs, out, code=B[name], dt=dt: be.binary_strided(
                    code, C[dt], 2, be.new_int64([4, 6]), bufs[0], be.new_int64([6, 1]), bufs[1],
                    be.new_int64([0, 1]), out),
            }
            for how, fn in calls.items():
                st_d, dev, _, _ = run(be, False, fn, a, b, out_shape=(24,), out_dtype=od)
                st_h, hst, taken, launched = run(be, True, fn, a, b, out_shape=(24,), out_dtype=od)
                where = f"{name} {dt} {how}"
                assert st_h == st_d, where
                if st_d != 0:
                    continue
                assert same_bits(hst, dev), f"{where}: host {hst} != device {dev}"
                assert (taken, launched) == (1, 0), f"{where}: ran on the device"
                checked += 1
    for name in UNARY:
        for dt in ("float32", "float64", *INTS, "bool"):
            x = values(rng, dt, 24)
            od = np.bool_ if name in ("isnan", "isinf", "isfinite") else np.dtype(dt)

            def fn(bufs, out, code=U[name], dt=dt):
                return be.unary(code, C[dt], bufs[0], out, 24, 0.0)

            st_d, dev, _, _ = run(be, False, fn, x, out_shape=(24,), out_dtype=od)
            st_h, hst, taken, launched = run(be, True, fn, x, out_shape=(24,), out_dtype=od)
            assert st_h == st_d, f"{name} {dt}"
            if st_d == 0:
                assert same_bits(hst, dev), f"{name} {dt}: host {hst} != device {dev}"
                assert (taken, launched) == (1, 0), f"{name} {dt}: ran on the device"
                checked += 1
    assert checked > 250


def test_only_exact_ops_on_tiny_mirrored_buffers_run_on_the_host(be):
    x = np.linspace(0.1, 2.0, 8).astype(np.float32)
    for fn, dt, expect in [
        (lambda b, o: be.unary(U["exp"], C["float32"], b[0], o, 8, 0.0), np.float32, 0),   # the device's exp
        (lambda b, o: be.unary(U["neg"], C["float16"], b[0], o, 8, 0.0), np.float16, 0),   # half: the device
        (lambda b, o: be.binary_flat(B["pow"], C["float32"], b[0], 0, b[0], 0, o, 8), np.float32, 0),
        (lambda b, o: be.binary_flat(B["maximum"], C["float32"], b[0], 0, b[0], 0, o, 8), np.float32, 0),
        (lambda b, o: be.unary(U["neg"], C["float32"], b[0], o, 8, 0.0), np.float32, 1),
    ]:
        assert run(be, True, fn, x.astype(dt), out_shape=(8,), out_dtype=dt)[2] == expect
    big = np.ones(1024, np.float32)   # 4 KiB: over the limit, no mirror
    assert run(be, True, lambda b, o: be.unary(U["neg"], C["float32"], b[0], o, 1024, 0.0), big,
               out_shape=(1024,), out_dtype=np.float32)[2:] == (0, 1)
    # the device flushing denormals differently from the CPU: the device computes
    cpu = K.get_backend("cpu")
    try:
        be.set_ftz(0)
        assert run(be, True, lambda b, o: be.unary(U["neg"], C["float32"], b[0], o, 8, 0.0), x,
                   out_shape=(8,), out_dtype=np.float32)[2:] == (0, 1)
        cpu.set_ftz(0)
        assert run(be, True, lambda b, o: be.unary(U["neg"], C["float32"], b[0], o, 8, 0.0), x,
                   out_shape=(8,), out_dtype=np.float32)[2:] == (1, 0)
    finally:
        be.set_ftz(1)
        cpu.set_ftz(1)


def test_host_results_reach_the_device_and_device_writes_drop_mirrors(be):
    f32 = C["float32"]
    a, _ = be.from_numpy(np.arange(1, 9, dtype=np.float32))
    assert be.mirrored(a)
    s, _ = be.alloc((8,), np.float32)
    assert be.binary_flat(B["add"], f32, a, 0, a, 0, s, 8) == 0 and be.mirrored(s)   # host: s = 2a
    syncs = be.stats["syncs"]
    assert be.to_numpy(s, None, (8,), np.float32).tolist() == [2.0 * i for i in range(1, 9)]
    assert be.stats["syncs"] == syncs   # served from the mirror
    # a device kernel reads s: the host result is written first; s (a const parameter) keeps its mirror
    e, _ = be.alloc((8,), np.float32)
    assert be.unary(U["sqrt"], f32, s, e, 8, 0.0) == 0 and be.mirrored(s) and not be.mirrored(e)
    host_ops = be.stats["host_ops"]
    assert be.binary_flat(B["add"], f32, s, 0, s, 1, s, 8) == 0 and be.stats["host_ops"] == host_ops + 1
    assert be.to_numpy(s, None, (8,), np.float32).tolist() == [2.0 * i + 2.0 for i in range(1, 9)]
    np.testing.assert_array_equal(be.to_numpy(e, None, (8,), np.float32),
                                  np.sqrt(2 * np.arange(1, 9, dtype=np.float32)))
    # in place on the host, then the device reads the buffer: it sees the new value
    assert be.binary_flat(B["mul"], f32, a, 0, a, 0, a, 8) == 0 and be.mirrored(a)   # a = a*a, host
    assert be.unary(U["sqrt"], f32, a, e, 8, 0.0) == 0
    np.testing.assert_array_equal(be.to_numpy(e, None, (8,), np.float32), np.arange(1, 9, dtype=np.float32))
    # the device writes a mirrored buffer in place: the mirror goes, reads see the device's value
    c, _ = be.from_numpy(np.full(8, 4.0, np.float32))
    assert be.mirrored(c)
    assert be.unary(U["sqrt"], f32, c, c, 8, 0.0) == 0 and not be.mirrored(c)
    assert be.to_numpy(c, None, (8,), np.float32).tolist() == [2.0] * 8
    assert be.mirrored(c)   # read back: mirrored again
    # a copy from a host result and into a mirrored buffer
    d, _ = be.alloc((8,), np.float32)
    assert be.binary_flat(B["sub"], f32, c, 0, c, 0, d, 8) == 0 and be.mirrored(d)   # d = 0, host
    be._copy(d.mem, c.mem, 16, 0, 0)                                                   # c[:4] = d[:4]
    assert not be.mirrored(c)
    assert be.to_numpy(c, None, (8,), np.float32).tolist() == [0.0] * 4 + [2.0] * 4


def test_a_freed_host_result_leaves_nothing_stale_in_the_pool(be):
    f32 = C["float32"]
    a, _ = be.from_numpy(np.ones(8, np.float32))
    for _ in range(50):
        s, _ = be.alloc((8,), np.float32)
        assert be.binary_flat(B["add"], f32, a, 0, a, 0, s, 8) == 0
        del s   # back to the pool, with its (stale) mirror forgotten
    t, _ = be.alloc((8,), np.float32)
    assert not be.mirrored(t)
    assert be.unary(U["exp"], f32, a, t, 8, 0.0) == 0   # the device writes t
    np.testing.assert_allclose(be.to_numpy(t, None, (8,), np.float32), np.e, rtol=1e-6)


def test_set_host_ops_checks_its_argument_and_off_means_the_device_computes(be):
    with pytest.raises(ValueError, match="set_host_ops"):
        be.set_host_ops(-1)
    with pytest.raises(TypeError, match="set_host_ops"):
        be.set_host_ops(1.5)
    f32 = C["float32"]
    a, _ = be.from_numpy(np.ones(4, np.float32))
    s, _ = be.alloc((4,), np.float32)
    assert be.binary_flat(B["add"], f32, a, 0, a, 0, s, 4) == 0 and be.mirrored(s)   # host: s = 2
    be.set_host_ops(0)
    b, _ = be.from_numpy(np.ones(4, np.float32))
    assert not be.mirrored(b)
    t, _ = be.alloc((4,), np.float32)
    launches, host_ops = be.stats["launches"], be.stats["host_ops"]
    assert be.binary_flat(B["add"], f32, s, 0, s, 0, t, 4) == 0   # the device, after s's value is written there
    assert be.stats["launches"] == launches + 1 and be.stats["host_ops"] == host_ops
    assert not be.mirrored(t) and be.to_numpy(t, None, (4,), np.float32).tolist() == [4.0] * 4
    assert not be.mirrored(t)   # reads make no mirrors either


def test_object_arrays_get_no_mirror(be):
    h, _ = be.from_numpy(np.array([b"ab", b"c"], dtype=object))   # (core's string tensors pass through here)
    assert not be.mirrored(h)
