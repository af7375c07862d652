"""The OpenCL backend through its own interface (no tapeflow core involved), against the CPU backend.

Every entry of the kernel table runs on both backends with the same inputs; outputs
and statuses must agree: exactly where the device follows the CPU's arithmetic
(integers, data movement, sorting, pooling, the Philox streams), to a tolerance
where a math library or a summation order differs.  The checks live in
:class:`GPUKernelChecks`, which ``test_cuda.py`` runs again on a CUDA device.

The backend's own behaviour (asynchronous queue, caching allocator, typed
out-of-memory errors, a missing driver) is tested below the checks.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import tapeflow.kernels as K
from tapeflow.kernels import gpu_common, opencl

C = K.DTYPE_CODES
FLOATS = ("float32", "float64")
INTS = ("int8", "uint8", "int16", "int32", "int64")
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("bool",)
NP = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8,
      "int16": np.int16, "int32": np.int32, "int64": np.int64, "bool": np.bool_}


def _bf16():
    import ml_dtypes

    return ml_dtypes.bfloat16


def np_dtype(name):
    return _bf16() if name == "bfloat16" else NP[name]


def sample(rng, shape, dtype, lo=-3.0, hi=3.0, special=False):
    """Random values of a dtype; floats optionally with NaN, +-inf, -0.0 and ties mixed in."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(NP[dtype])
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(NP[dtype])
    x = rng.uniform(lo, hi, size=shape)
    if special and x.size >= 8:
        flat = x.reshape(-1)
        flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, flat[6]]
        rng.shuffle(flat)
    return x.astype(np_dtype(dtype))


# ---- calling one kernel on two backends ------------------------------------------------

class In:
    """An input array (uploaded to each backend)."""

    def __init__(self, arr):
        self.arr = np.ascontiguousarray(arr)


class Out:
    """An output buffer (read back and compared); ``init`` gives it starting values."""

    def __init__(self, shape, dtype, init=None):
        self.shape, self.dtype, self.init = tuple(shape), np.dtype(dtype), init


class I64:
    """A small host int64 array made by each backend's new_int64 (shapes, or results like a bad index)."""

    def __init__(self, values):
        self.values = list(values)


class Host:
    """Host bytes passed by value (each backend's host_ptr)."""

    def __init__(self, value, dtype):
        self.data = np.asarray(value, dtype).tobytes()


NULL = object()


def _run(be, name, args):
    conv, reads = [], []
    for a in args:
        if isinstance(a, In):
            conv.append(be.from_numpy(a.arr)[0])
        elif isinstance(a, Out):
            if a.init is not None:
                h, host = be.from_numpy(np.asarray(a.init, a.dtype).reshape(a.shape))
            else:
                h, host = be.alloc(a.shape, a.dtype)
            conv.append(h)
            reads.append(("buf", h, host, a))
        elif isinstance(a, I64):
            arr = be.new_int64(a.values)
            conv.append(arr)
            reads.append(("i64", arr, len(a.values)))
        elif isinstance(a, Host):
            conv.append(be.host_ptr(a.data))
        elif a is NULL:
            conv.append(be.ffi.NULL)
        elif isinstance(a, list) and a and isinstance(a[0], In):
            conv.append([be.from_numpy(x.arr)[0] for x in a])
        elif isinstance(a, list) and a and isinstance(a[0], Out):
            hs = []
            for o in a:
                h, host = be.alloc(o.shape, o.dtype)
                hs.append(h)
                reads.append(("buf", h, host, o))
            conv.append(hs)
        else:
            conv.append(a)
    st = getattr(be, name)(*conv)
    outs = []
    for r in reads:
        if r[0] == "buf":
            _, h, host, o = r
            outs.append(np.array(be.to_numpy(h, host, o.shape, o.dtype)))
        else:
            outs.append([int(r[1][i]) for i in range(r[2])])
    return st, outs


def _is_float(dtype) -> bool:
    return dtype.kind == "f" or dtype == _bf16()


def _assert_bits_equal(d, c, msg):
    """Bit-for-bit equality (so -0.0 differs from 0.0); any NaN matches any NaN."""
    assert d.shape == c.shape and d.dtype == c.dtype, msg
    if _is_float(c.dtype):
        nan = np.isnan(c.astype(np.float64)) & np.isnan(d.astype(np.float64))
        u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[c.dtype.itemsize]
        np.testing.assert_array_equal(np.where(nan, 0, d.view(u)), np.where(nan, 0, c.view(u)), err_msg=msg)
    else:
        np.testing.assert_array_equal(d, c, err_msg=msg)


class GPUKernelChecks:
    """Kernel-table checks of a device backend against the CPU backend (``dev`` and ``cpu`` fixtures)."""

    def both(self, dev, cpu, name, *args, rtol=0.0, atol=0.0, compare_outputs=True):
        st_c, out_c = _run(cpu, name, args)
        st_d, out_d = _run(dev, name, args)
        assert st_d == st_c, f"{name}: status {st_d} on {dev.name}, {st_c} on the CPU"
        if st_c == 0 and compare_outputs:
            for i, (c, d) in enumerate(zip(out_c, out_d)):
                if isinstance(c, list):
                    assert d == c, f"{name}: host result {i}: {d} != {c}"
                elif rtol == 0 and atol == 0 or not _is_float(c.dtype):
                    _assert_bits_equal(d, c, f"{name}: output {i}")
                else:
                    np.testing.assert_allclose(d.astype(np.float64), c.astype(np.float64), rtol=rtol, atol=atol,
                                               equal_nan=True, err_msg=f"{name}: output {i}")
        return st_c, out_c, out_d

    # ---- the table ----------------------------------------------------------------
    def test_every_cpu_kernel_is_implemented(self, dev, cpu):
        assert dev.missing_kernels() == []
        assert set(cpu.KERNELS) <= {n for n in dir(dev) if callable(getattr(dev, n, None))}

    def test_roundtrip_every_dtype_and_empty(self, dev):
        rng = np.random.default_rng(0)
        for dt in ALL + ("float16", "bfloat16"):
            for shape in [(), (0,), (1,), (3, 5), (2, 0, 4), (1000,)]:
                x = sample(rng, shape, dt if dt not in ("float16", "bfloat16") else "float32").astype(np_dtype(dt))
                h, _ = dev.from_numpy(x)
                back = dev.to_numpy(h, None, x.shape, x.dtype)
                assert back.dtype == x.dtype and back.shape == x.shape
                assert back.tobytes() == x.tobytes()

    # ---- elementwise ----------------------------------------------------------------
    def test_unary_every_op_and_dtype(self, dev, cpu):
        rng = np.random.default_rng(1)
        for name, code in K.UNARY_CODES.items():
            for dt in ALL:
                lo, hi = (0.1, 4.0) if name in ("log", "sqrt", "rsqrt", "lgamma", "digamma", "polygamma",
                                                "acosh") else (-0.9, 0.9) if name in ("asin", "acos", "atanh") \
                    else (-4.0, 4.0)
                if name == "acosh":
                    lo, hi = 1.0, 5.0
                x = sample(rng, (257,), dt, lo, hi, special=True)
                out_dt = np.bool_ if name in ("isnan", "isinf", "isfinite") else x.dtype
                param = 2.0 if name == "polygamma" else 0.2
                self.both(dev, cpu, "unary", code, C[dt], In(x), Out((257,), out_dt), 257, param,
                          rtol=2e-6 if dt == "float32" else 1e-13, atol=1e-6 if dt == "float32" else 1e-13)

    def test_unary_special_values_exactly(self, dev, cpu):
        """inf, -inf, +-0 and NaN map to exactly the CPU's results (signs of zeros included)."""
        special = [np.inf, -np.inf, 0.0, -0.0, np.nan]
        skip = {"lgamma", "digamma", "polygamma"}   # poles: the libraries agree on inf, not on its sign
        for name, code in K.UNARY_CODES.items():
            if name in skip:
                continue
            for dt in FLOATS:
                x = np.array(special, dt)
                out_dt = np.bool_ if name in ("isnan", "isinf", "isfinite") else x.dtype
                self.both(dev, cpu, "unary", code, C[dt], In(x), Out((5,), out_dt), 5, 0.5)

    def test_denormals_flush_to_zero_by_default_and_on_request_not(self, dev, cpu):
        tiny = In(np.array([1e-39, -1e-39, 3e-39], np.float32))
        one = In(np.array([1.0], np.float32))
        try:
            for on in (1, 0):
                assert dev.set_ftz(on) == 0 and cpu.set_ftz(on) == 0 and dev.get_ftz() == on
                _, (_c,), (d,) = self.both(dev, cpu, "binary_flat", K.BINARY_CODES["mul"], C["float32"], tiny, 0, one, 1,
                                          Out((3,), np.float32), 3)
                assert (d == 0).all() if on else (d == np.array([1e-39, -1e-39, 3e-39], np.float32)).all()
        finally:
            dev.set_ftz(1)
            cpu.set_ftz(1)

    def test_unary_statuses(self, dev, cpu):
        x = In(np.ones(4, np.float32))
        for args in [(len(K.UNARY_OPS), C["float32"], 4, 0.0), (K.UNARY_CODES["sqrt"], C["int32"], 4, 0.0),
                     (K.UNARY_CODES["exp"], C["float32"], -1, 0.0), (K.UNARY_CODES["polygamma"], C["float32"], 4, 0.5)]:
            st, _, _ = self.both(dev, cpu, "unary", args[0], args[1], x, Out((4,), np.float32), args[2], args[3])
            assert st != 0

    def test_binary_every_op_and_dtype_flat_scalar_strided(self, dev, cpu):
        rng = np.random.default_rng(2)
        for name, code in K.BINARY_CODES.items():
            cmp = name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
            for dt in ALL:
                a = sample(rng, (4, 6), dt, special=True)
                b = sample(rng, (4, 6), dt, special=True)
                if dt in INTS and name in ("floordiv", "mod", "truncatediv", "truncatemod"):
                    b[b == 0] = 3
                if dt in INTS and name == "pow":
                    b = np.abs(b) % 5
                if dt in INTS and name in ("left_shift", "right_shift"):
                    b = (np.abs(b) % 10).astype(b.dtype)
                od = np.bool_ if cmp else a.dtype
                tol = {"rtol": 2e-6, "atol": 1e-6} if dt == "float32" else {"rtol": 1e-13, "atol": 1e-13}
                self.both(dev, cpu, "binary_flat", code, C[dt], In(a), 0, In(b), 0, Out((4, 6), od), 24, **tol)
                self.both(dev, cpu, "binary_flat", code, C[dt], In(a), 0, In(b[:1, :1]), 1, Out((4, 6), od), 24,
                          **tol)
                # a (4, 6) against a row (1, 6) and a column (4, 1): strides 0 broadcast
                self.both(dev, cpu, "binary_strided", code, C[dt], 2, I64([4, 6]), In(b[:1]), I64([0, 1]), In(a[:, :1]),
                          I64([1, 0]), Out((4, 6), od), **tol)

    def test_binary_integer_statuses(self, dev, cpu):
        a, z = In(np.array([4, 5, -7], np.int32)), In(np.array([2, 0, 3], np.int32))
        for op in ("floordiv", "mod", "truncatediv", "truncatemod"):
            st, _, _ = self.both(dev, cpu, "binary_flat", K.BINARY_CODES[op], C["int32"], a, 0, z, 0,
                                 Out((3,), np.int32), 3)
            assert st == K.EDIVZERO
        st, _, _ = self.both(dev, cpu, "binary_flat", K.BINARY_CODES["pow"], C["int32"], a, 0,
                             In(np.array([1, -1, 2], np.int32)), 0, Out((3,), np.int32), 3)
        assert st == K.EBADARG
        st, _, _ = self.both(dev, cpu, "binary_strided", K.BINARY_CODES["floordiv"], C["int32"], 2, I64([2, 3]), a,
                             I64([0, 1]), z, I64([0, 1]), Out((2, 3), np.int32))
        assert st == K.EDIVZERO
        for args in [(len(K.BINARY_OPS), C["float32"]), (K.BINARY_CODES["logical_and"], C["float32"])]:
            st, _, _ = self.both(dev, cpu, "binary_flat", *args, a, 0, a, 0, Out((3,), np.float32), 3)
            assert st in (K.EBADOP, K.EBADDTYPE)

    # ---- reductions -------------------------------------------------------------------
    @pytest.mark.parametrize("view", [(3, 7, 5), (1, 100000, 1), (2, 9000, 3), (4, 0, 3), (0, 5, 2), (5, 1, 1)])
    def test_reduce_every_op_and_dtype(self, dev, cpu, view):
        rng = np.random.default_rng(3)
        outer, r, inner = view
        for name, code in K.REDUCE_CODES.items():
            for dt in ALL:
                x = sample(rng, (outer, r, inner), dt, -1.5, 1.5)
                if name == "prod" and dt in FLOATS:
                    x = (1 + x / 300).astype(x.dtype)
                tol = {"rtol": 1e-5, "atol": 1e-5} if dt == "float32" else {"rtol": 1e-9, "atol": 1e-9}
                self.both(dev, cpu, "reduce", code, C[dt], In(x), Out((outer, inner), x.dtype), outer, r, inner, **tol)

    def test_reduce_nan_and_argreduce(self, dev, cpu):
        rng = np.random.default_rng(4)
        for dt in ALL:
            for view in [(3, 8, 2), (1, 50000, 1), (2, 1, 3)]:
                x = sample(rng, view, dt, special=True)
                if dt in INTS:
                    x = (x % 4).astype(x.dtype)   # ties: the first index wins
                for op in (0, 1):
                    self.both(dev, cpu, "argreduce", op, C[dt], In(x), Out((view[0], view[2]), np.int64), *view)
                for name in ("max", "min"):
                    self.both(dev, cpu, "reduce", K.REDUCE_CODES[name], C[dt], In(x),
                              Out((view[0], view[2]), x.dtype), *view)
        st, _, _ = self.both(dev, cpu, "argreduce", 0, C["float32"], In(np.zeros(0, np.float32)),
                             Out((1,), np.int64), 1, 0, 1)
        assert st == K.EBADSIZE

    # ---- matmul -------------------------------------------------------------------------
    def test_matmul(self, dev, cpu):
        rng = np.random.default_rng(5)
        for dt in NUMERIC:
            for (batch, m, n, k) in [(1, 1, 1, 1), (1, 65, 70, 33), (3, 17, 5, 130), (2, 0, 3, 4), (2, 3, 4, 0)]:
                for ta in (0, 1):
                    for tb in (0, 1):
                        a = sample(rng, (batch, k, m) if ta else (batch, m, k), dt, -2, 2)
                        b = sample(rng, (k, n) if tb == 0 else (n, k), dt, -2, 2)   # broadcast over batch
                        tol = {"rtol": 1e-5, "atol": 1e-5} if dt == "float32" else {"rtol": 1e-12, "atol": 1e-12}
                        self.both(dev, cpu, "matmul", C[dt], ta, tb, batch, m, n, k, In(a), m * k, In(b), 0,
                                  Out((batch, m, n), a.dtype), **tol)
        st, _, _ = self.both(dev, cpu, "matmul", C["bool"], 0, 0, 1, 1, 1, 1, In(np.ones((1, 1), bool)), 0,
                             In(np.ones((1, 1), bool)), 0, Out((1, 1), bool))
        assert st == K.EBADDTYPE

    # ---- cast, copy, fill --------------------------------------------------------------------
    def test_cast_every_pair(self, dev, cpu):
        rng = np.random.default_rng(6)
        base = np.concatenate([rng.uniform(-300, 300, 60), [np.nan, np.inf, -np.inf, -0.0, 0.5, 1.5, 2.5, -2.5,
                                                           1e10, -1e10, 65519.0, 65520.0, 3.4e38, 1e-8]])
        names = ("float16", "bfloat16") + ALL
        for s in names:
            with np.errstate(over="ignore", invalid="ignore"):
                x = base.astype(np_dtype(s)) if s not in INTS + ("bool",) else \
                    np.nan_to_num(base, posinf=0, neginf=0).astype(np.int64).astype(np_dtype(s))
            for d in names:
                self.both(dev, cpu, "cast", C[s], In(x), C[d], Out(x.shape, np_dtype(d)), x.size)

    def test_strided_copy_fill_and_host_source(self, dev, cpu):
        rng = np.random.default_rng(7)
        for es, dt in ((1, np.uint8), (2, np.int16), (4, np.float32), (8, np.int64)):
            x = (rng.random(60) * 100).astype(dt)
            # a transpose with a negative stride: [4, 5] from [5, 12] reversed
            self.both(dev, cpu, "strided_copy", es, 2, [4, 5], In(x), 59, [-1, -12], Out((20,), dt), 0, [5, 1])
            self.both(dev, cpu, "strided_copy", es, 1, [60], In(x), 0, [1], Out((60,), dt), 0, [1])
            self.both(dev, cpu, "strided_copy", es, 0, [], In(x), 7, [], Out((1,), dt), 0, [])
            self.both(dev, cpu, "fill", es, Host(3, dt), Out((33,), dt), 33)
            # eye: a host value read with stride 0 into a diagonal
            self.both(dev, cpu, "strided_copy", es, 2, [2, 3], Host(1, dt), 0, [0, 0],
                      Out((2, 9), dt, np.zeros(18, dt)), 0, [9, 4])
        st, _, _ = self.both(dev, cpu, "fill", 3, Host(1, np.uint8), Out((3,), np.uint8), 1)
        assert st == K.EBADARG

    # ---- index -----------------------------------------------------------------------------------
    def test_gather_and_bad_index(self, dev, cpu):
        rng = np.random.default_rng(8)
        for es, dt in ((1, np.int8), (2, np.float16), (4, np.float32), (8, np.float64)):
            p = sample(rng, (2, 3, 5, 4), "float32").astype(dt)
            for idt in ("int32", "int64"):
                idx = rng.integers(0, 5, (2, 7)).astype(idt)
                self.both(dev, cpu, "gather", es, C[idt], In(p), In(idx), Out((2, 3, 7, 4), dt), 2, 3, 5, 7, 4, I64([0]))
                idx[1, 3] = 5
                idx[1, 5] = -1
                st, (_, bad), _ = self.both(dev, cpu, "gather", es, C[idt], In(p), In(idx), Out((2, 3, 7, 4), dt), 2, 3,
                                            5, 7, 4, I64([0]), compare_outputs=False)
                assert st == K.ERANGE and bad == [10]
                assert _run(dev, "gather", [es, C[idt], In(p), In(idx), Out((2, 3, 7, 4), dt), 2, 3, 5, 7, 4,
                                            I64([0])])[1][1] == [10]

    def test_scatter_add_axis(self, dev, cpu):
        rng = np.random.default_rng(9)
        for dt in NUMERIC:
            upd = sample(rng, (2, 3, 6, 4), dt)
            idx = np.array([[0, 2, 2, -1, 4, 0], [1, 1, 1, 1, 3, -3]], np.int64)
            tol = {"rtol": 1e-6, "atol": 1e-6} if dt == "float32" else {}
            self.both(dev, cpu, "scatter_add_axis", C[dt], C["int64"], In(upd), In(idx), Out((2, 3, 5, 4), upd.dtype),
                      2, 3, 5, 6, 4, 1, I64([0]), **tol)
            st, (_, bad), _ = self.both(dev, cpu, "scatter_add_axis", C[dt], C["int64"], In(upd), In(idx),
                                        Out((2, 3, 5, 4), upd.dtype), 2, 3, 5, 6, 4, 0, I64([0]), compare_outputs=False)
            assert st == K.ERANGE and bad == [3]   # -1 at position 3, not allowed without flag 1
            # sorted ids required (segment_sum): the first one smaller than its left neighbour
            srt = np.array([[0, 0, 1, 3, 3, 4], [0, 2, 2, 1, 4, 4]], np.int32)
            st, (_, _bad), _ = self.both(dev, cpu, "scatter_add_axis", C[dt], C["int32"], In(upd), In(srt),
                                        Out((2, 3, 5, 4), upd.dtype), 2, 3, 5, 6, 4, 2, I64([0]), compare_outputs=False)
            assert st == K.EBADARG
            assert _run(dev, "scatter_add_axis", [C[dt], C["int32"], In(upd), In(srt), Out((2, 3, 5, 4), upd.dtype),
                                                  2, 3, 5, 6, 4, 2, I64([0])])[1][1] == [9]
            srt[1] = [0, 1, 1, 2, 4, 4]
            self.both(dev, cpu, "scatter_add_axis", C[dt], C["int32"], In(upd), In(srt), Out((2, 3, 5, 4), upd.dtype),
                      2, 3, 5, 6, 4, 2, I64([0]), **tol)

    def test_gather_nd_scatter_nd_one_hot(self, dev, cpu):
        rng = np.random.default_rng(10)
        p = sample(rng, (2, 4, 3, 5), "float32")
        idx = np.stack([rng.integers(0, 4, (2, 6)), rng.integers(0, 3, (2, 6))], -1).astype(np.int32)
        self.both(dev, cpu, "gather_nd", 4, C["int32"], In(p), In(idx), Out((2, 6, 5), np.float32), 2, 6, 2, [4, 3], 5,
                  I64([0]))
        bad_idx = idx.copy()
        bad_idx[1, 2, 1] = 3
        st, (_, bad), _ = self.both(dev, cpu, "gather_nd", 4, C["int32"], In(p), In(bad_idx),
                                    Out((2, 6, 5), np.float32), 2, 6, 2, [4, 3], 5, I64([0]), compare_outputs=False)
        assert st == K.ERANGE
        assert _run(dev, "gather_nd", [4, C["int32"], In(p), In(bad_idx), Out((2, 6, 5), np.float32), 2, 6, 2,
                                       [4, 3], 5, I64([0])])[1][1] == bad
        for op in (0, 1):
            for dt in ("float32", "int64", "uint8", "float64"):
                start = sample(rng, (4, 3, 2), dt)
                upd = sample(rng, (7, 2), dt)
                ix = np.array([[0, 1], [3, 2], [0, 1], [2, 0], [3, 2], [0, 1], [1, 1]], np.int64)
                self.both(dev, cpu, "scatter_nd", op, C[dt], C["int64"], In(ix), In(upd),
                          Out((4, 3, 2), start.dtype, start), 7, 2, [4, 3], 2, I64([0]))
        for idt in ("int32", "int64"):
            ix = np.array([[0, 3, -1], [2, 2, 7]], idt)
            self.both(dev, cpu, "one_hot", 4, C[idt], In(ix), Host(1.5, np.float32), Host(-1, np.float32),
                      Out((2, 4, 3), np.float32), 2, 4, 3)

    def test_count_nonzero_where_select(self, dev, cpu):
        rng = np.random.default_rng(11)
        for dt in ALL + ("float16",):
            x = (sample(rng, (3, 5, 700), dt if dt != "float16" else "float32") * 0).astype(np_dtype(dt))
            flat = x.reshape(-1)
            flat[rng.integers(0, flat.size, 300)] = 1
            if dt in FLOATS:
                flat[5] = -0.0
                flat[9] = np.nan
            _st, (cnt,), _ = self.both(dev, cpu, "count_nonzero", C[dt], In(x), x.size, I64([0]))
            self.both(dev, cpu, "where_indices", C[dt], In(x), 3, [3, 5, 700], x.size, Out((cnt[0], 3), np.int64))
        c = rng.random((4, 1, 3)) < 0.5
        a = sample(rng, (1, 5, 3), "float64")
        b = sample(rng, (4, 5, 1), "float64")
        self.both(dev, cpu, "select", 8, 3, [4, 5, 3], In(c), [3, 0, 1], In(a), [0, 3, 1], In(b), [5, 1, 0],
                  Out((4, 5, 3), np.float64))

    # ---- join --------------------------------------------------------------------------------------
    def test_concat_split_pad_iota_linspace(self, dev, cpu):
        rng = np.random.default_rng(12)
        parts = [sample(rng, (3, w), "int16") for w in (2, 0, 5)]
        self.both(dev, cpu, "concat", 2, 3, [In(p) for p in parts], [2, 0, 5], 3, Out((3, 7), np.int16))
        whole = sample(rng, (3, 7), "float64")
        self.both(dev, cpu, "split", 8, 3, In(whole), [2, 0, 5], 3, [Out((3, 2), np.float64), Out((3, 0), np.float64),
                                                                     Out((3, 5), np.float64)])
        x = sample(rng, (3, 4), "float32")
        for mode in (0, 1, 2):
            self.both(dev, cpu, "pad", 4, mode, 2, [3, 4], [1, 2], [6, 9], In(x), Out((6, 9), np.float32),
                      Host(7.5, np.float32))
        self.both(dev, cpu, "pad", 4, 0, 0, [], [], [], In(np.float32(3.0)), Out((), np.float32), Host(0, np.float32))
        for dt in ALL[:-1] + ("float16", "bfloat16"):
            self.both(dev, cpu, "iota", C[dt], -2.5, 0.75, -3, 2, Out((40,), np_dtype(dt)), 40)
        for dt in ("float16", "bfloat16", "float32", "float64"):
            self.both(dev, cpu, "linspace", C[dt], -1.0, 3.0, Out((13,), np_dtype(dt)), 13)
        st, _, _ = self.both(dev, cpu, "linspace", C["int32"], 0.0, 1.0, Out((3,), np.int32), 3)
        assert st == K.EBADDTYPE

    # ---- sort ----------------------------------------------------------------------------------------
    def test_sort_argsort_top_k_exact(self, dev, cpu):
        rng = np.random.default_rng(13)
        for dt in ALL + ("float16",):
            x = sample(rng, (5, 37), dt if dt != "float16" else "float32", special=True).astype(np_dtype(dt))
            if dt in FLOATS + ("float16",):
                x.reshape(-1)[::7] = x.reshape(-1)[1]   # ties
            for desc in (0, 1):
                for idt in ("int32", "int64"):
                    self.both(dev, cpu, "sort", C[dt], In(x), Out((5, 37), x.dtype), Out((5, 37), NP[idt]), C[idt], 5,
                              37, desc, 3)
            for k in (0, 1, 4, 37):
                self.both(dev, cpu, "top_k", C[dt], In(x), Out((5, k), x.dtype), Out((5, k), np.int32), C["int32"], 5,
                          37, k)
        self.both(dev, cpu, "sort", C["float32"], In(np.zeros((2, 3), np.float32)), Out((2, 3), np.float32), NULL,
                  C["int64"], 2, 3, 0, 1)

    def test_cumulative(self, dev, cpu):
        rng = np.random.default_rng(14)
        for dt in NUMERIC:
            x = sample(rng, (3, 9, 4), dt, 0.5, 1.5)
            for op in (0, 1):
                for excl in (0, 1):
                    for rev in (0, 1):
                        self.both(dev, cpu, "cumulative", op, C[dt], In(x), Out(x.shape, x.dtype), 3, 9, 4, excl, rev)

    # ---- nn ---------------------------------------------------------------------------------------------
    def test_softmax_and_cross_entropies(self, dev, cpu):
        rng = np.random.default_rng(15)
        for dt in FLOATS:
            tol = {"rtol": 2e-6, "atol": 1e-6} if dt == "float32" else {"rtol": 1e-13, "atol": 1e-13}
            for view in [(4, 10, 1), (3, 5, 2), (2, 1, 1)]:
                x = sample(rng, view, dt, -5, 5)
                for log_ in (0, 1):
                    self.both(dev, cpu, "softmax", C[dt], log_, In(x), Out(view, x.dtype), *view, **tol)
                lab = rng.random(view).astype(x.dtype)
                self.both(dev, cpu, "softmax_xent", C[dt], In(lab), In(x), Out((view[0], view[2]), x.dtype),
                          Out(view, x.dtype), *view, **tol)
                self.both(dev, cpu, "softmax_xent", C[dt], In(lab), In(x), Out((view[0], view[2]), x.dtype), NULL,
                          *view, **tol)
            x = sample(rng, (6, 8), dt, -5, 5)
            for ldt in ("int32", "int64"):
                lab = rng.integers(0, 8, 6).astype(ldt)
                self.both(dev, cpu, "sparse_softmax_xent", C[dt], C[ldt], In(lab), In(x), Out((6,), x.dtype),
                          Out((6, 8), x.dtype), 6, 8, I64([0, 0]), **tol)
                lab[4] = 9
                st, (_, _bad), _ = self.both(dev, cpu, "sparse_softmax_xent", C[dt], C[ldt], In(lab), In(x),
                                               Out((6,), x.dtype), NULL, 6, 8, I64([0, 0]), compare_outputs=False)
                assert st == K.ERANGE
                assert _run(dev, "sparse_softmax_xent", [C[dt], C[ldt], In(lab), In(x), Out((6,), x.dtype), NULL, 6,
                                                         8, I64([0, 0])])[1][1] == [4, 9]

    # ---- random: bit for bit ----------------------------------------------------------------------------
    def test_philox_blocks_bit_identical(self, dev, cpu):
        ctr = np.array([0xFFFFFFFE, 0xFFFFFFFF, 7, 0], np.uint32)   # the counter carries across words
        key = np.array([0x12345678, 0x9ABCDEF0], np.uint32)
        want = np.empty(4 * 9, np.uint32)
        u32 = "uint32_t[]"
        assert cpu.philox4x32_10(cpu.ffi.from_buffer(u32, ctr), cpu.ffi.from_buffer(u32, key),
                                 cpu.ffi.from_buffer(u32, want), 9) == 0
        out, _ = dev.alloc((36,), np.uint32)
        assert dev.philox4x32_10(ctr, key, out, 9) == 0
        np.testing.assert_array_equal(dev.to_numpy(out, None, (36,), np.uint32), want)
        # Random123's known answer for counter 0, key 0
        assert dev.philox4x32_10([0, 0, 0, 0], [0, 0], out, 1) == 0
        assert dev.to_numpy(out, None, (4,), np.uint32).tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]

    def test_random_streams_bit_identical(self, dev, cpu):
        key, stream = 0x0123456789ABCDEF, 42
        for n in (0, 1, 7, 1001):
            for dt, lo, hi in (("float32", 0.0, 1.0), ("float32", -2.0, 5.0), ("float64", 0.0, 1.0),
                               ("float64", -1.0, 3.0), ("float16", -1.0, 1.0), ("bfloat16", 0.0, 10.0)):
                st, _, _ = self.both(dev, cpu, "random_uniform", C[dt], Out((n,), np_dtype(dt)), n, key, stream, lo, hi)
                assert st == 0
            self.both(dev, cpu, "random_uniform_int", C["int32"], Out((n,), np.int32), n, key, stream, -5, 1000)
            self.both(dev, cpu, "random_uniform_int", C["int64"], Out((n,), np.int64), n, key, stream, -2 ** 40, 2 ** 62)
            for dt in FLOATS:
                self.both(dev, cpu, "random_dropout_mask", C[dt], Out((n,), NP[dt]), n, key, stream, 0.3)
        x = np.arange(35, dtype=np.float32).reshape(7, 5)
        self.both(dev, cpu, "random_shuffle", 20, 7, In(x), Out((7, 5), np.float32), Out((7,), np.int64), key, stream)
        logits = np.array([[np.log(0.1), np.log(0.2), np.log(0.7)], [0.0, 0.0, -np.inf], [1, 1, 1]], np.float64)
        for odt in ("int32", "int64"):
            for dt in FLOATS:
                self.both(dev, cpu, "random_categorical", C[dt], In(logits.astype(dt)), 3, 3, 50, C[odt],
                          Out((3, 50), NP[odt]), key, stream, I64([-1]))
        bad_logits = logits.copy()
        bad_logits[1] = np.nan
        st, (_, _bad), _ = self.both(dev, cpu, "random_categorical", C["float64"], In(bad_logits), 3, 3, 5, C["int64"],
                                    Out((3, 5), np.int64), key, stream, I64([-1]), compare_outputs=False)
        assert st == K.EBADARG and _run(dev, "random_categorical", [C["float64"], In(bad_logits), 3, 3, 5, C["int64"],
                                                                     Out((3, 5), np.int64), key, stream, I64([-1])])[1][1] == [1]

    def test_random_normals_bit_identical(self, dev, cpu):
        # Box-Muller through csrc/random.c's own log, sin and cos: the same bits on every backend
        key, stream = 99, 3
        for dt in FLOATS:
            for kernel in ("random_normal", "random_truncated_normal"):
                for n in (1, 1003):
                    self.both(dev, cpu, kernel, C[dt], Out((n,), NP[dt]), n, key, stream, 0.5, 2.0)

    # ---- linear algebra -------------------------------------------------------------------------------------
    def test_lu_factor_solve_inverse_det(self, dev, cpu):
        rng = np.random.default_rng(17)
        for dt in FLOATS:
            tol = {"rtol": 2e-4, "atol": 2e-5} if dt == "float32" else {"rtol": 1e-10, "atol": 1e-12}
            for n in (0, 1, 5, 33):
                a = rng.standard_normal((3, n, n)).astype(dt)
                if n > 1:
                    a[1, :, 1] = 0.0          # singular: the first zero pivot is reported in info
                self.both(dev, cpu, "lu", C[dt], 3, n, Out(a.shape, a.dtype, a), Out((3, n), np.int32),
                          Out((3,), np.int32), **tol)
                # solve, invert and take determinants from the CPU's factors, so only those steps are compared
                _, (lu, piv, _info) = _run(cpu, "lu", [C[dt], 3, n, Out(a.shape, a.dtype, a), Out((3, n), np.int32),
                                                      Out((3,), np.int32)])
                rhs = rng.standard_normal((3, n, 4)).astype(dt)
                for trans in (0, 1):
                    self.both(dev, cpu, "lu_solve", C[dt], trans, 2, n, 4, In(lu[::2]), In(piv[::2]),
                              Out((2, n, 4), a.dtype, rhs[::2]), **tol)
                self.both(dev, cpu, "lu_det", C[dt], 3, n, In(lu), In(piv), Out((3,), a.dtype), Out((3,), a.dtype),
                          Out((3,), a.dtype), **tol)
                st, _, _ = self.both(dev, cpu, "lu_inverse", C[dt], 3, n, Out(lu.shape, a.dtype, lu), In(piv),
                                     compare_outputs=False)
                assert st == (K.ERANGE if n > 1 else 0)
                self.both(dev, cpu, "lu_inverse", C[dt], 2, n, Out((2, n, n), a.dtype, lu[::2]), In(piv[::2]), **tol)
        st, _, _ = self.both(dev, cpu, "lu", C["int32"], 1, 1, Out((1, 1), np.int32), Out((1,), np.int32),
                             Out((1,), np.int32))
        assert st == K.EBADDTYPE

    def test_cholesky_and_triangular_solve(self, dev, cpu):
        rng = np.random.default_rng(18)
        for dt in FLOATS:
            tol = {"rtol": 2e-4, "atol": 2e-5} if dt == "float32" else {"rtol": 1e-10, "atol": 1e-12}
            for n in (0, 1, 6, 40):
                m = rng.standard_normal((3, n, n))
                spd = (m @ np.swapaxes(m, 1, 2) + n * np.eye(n)).astype(dt)
                if n > 1:
                    spd[2, 1, 1] = -5.0       # not positive definite: info = 2
                _, (fc, ic), (fd, idv) = self.both(dev, cpu, "cholesky", C[dt], 3, n, Out(spd.shape, spd.dtype, spd),
                                                   Out((3,), np.int32), compare_outputs=False)
                # info agrees; so do the factors of the positive definite matrices (what a failed
                # factorization leaves behind depends on LAPACK's blocking, and nobody reads it)
                np.testing.assert_array_equal(idv, ic)
                np.testing.assert_allclose(fd[:2], fc[:2], **tol)
                tri = (np.tril(m) + 3 * np.eye(n)).astype(dt)
                rhs = rng.standard_normal((3, n, 5)).astype(dt)
                for lower in (0, 1):
                    t = tri if lower else np.swapaxes(tri, 1, 2).copy()
                    for trans in (0, 1):
                        self.both(dev, cpu, "triangular_solve", C[dt], lower, trans, 3, n, 5, In(t), n * n,
                                  Out(rhs.shape, rhs.dtype, rhs), **tol)
                        self.both(dev, cpu, "triangular_solve", C[dt], lower, trans, 3, n, 5, In(t[0]), 0,
                                  Out(rhs.shape, rhs.dtype, rhs), **tol)

    # ---- edge inputs: one behaviour on every backend (issue 10, items 13 and 14) ---------------------------
    def test_nan_matrices_factor_to_nan_like_the_cpu(self, dev, cpu):
        for dt in FLOATS:
            a = np.stack([np.eye(3) * 2, np.full((3, 3), np.nan), np.array([[4, 1, 0], [1, np.nan, 1], [0, 1, 4]]),
                          np.array([[1, np.nan, 0], [0, 1, 0], [0, 0, 1]])]).astype(dt)
            _, (lu, piv, info), _ = self.both(dev, cpu, "lu", C[dt], 4, 3, Out(a.shape, a.dtype, a),
                                              Out((4, 3), np.int32), Out((4,), np.int32))
            assert np.isnan(lu[1:]).all() and (piv[1:] == [1, 2, 3]).all() and (info == 0).all()
            _, (inv,), _ = self.both(dev, cpu, "lu_inverse", C[dt], 4, 3, Out(lu.shape, a.dtype, lu), In(piv),
                                     rtol=1e-6)   # (LAPACK's getri leaves -0.0 where the device writes 0.0)
            assert np.isnan(inv[1:]).all() and (inv[0] == np.eye(3) / 2).all()
            _, (ch, info), _ = self.both(dev, cpu, "cholesky", C[dt], 4, 3, Out(a.shape, a.dtype, a),
                                         Out((4,), np.int32))
            assert (info == 0).all()
            lower = np.tril(np.ones((3, 3), bool))
            assert np.isnan(ch[1][lower]).all() and (ch[1][~lower] == 0).all()
            np.testing.assert_array_equal(ch[3], np.eye(3))   # its NaN is above the diagonal: never read

    def test_huge_and_absurd_pool_and_conv_geometries_like_the_cpu(self, dev, cpu):
        x = np.arange(2 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 2)
        big = 2**31 - 1
        # SAME with a window far larger than the input: every window is the whole input
        g = [2, 3, 3, 2, big, big, 2, 3, 3, 1, 1, 1, 1, (big - 1) // 2, (big - 1) // 2]
        for name in ("max_pool2d", "avg_pool2d", "max_pool2d_grad_grad"):
            args = [In(x), In(x)] if name == "max_pool2d_grad_grad" else [In(x)]
            st, _, _ = self.both(dev, cpu, name, C["float32"], g, *args, Out(x.shape, np.float32), rtol=1e-6)
            assert st == K.OK
        for name in ("max_pool2d_grad", "avg_pool2d_grad"):
            args = [In(x), In(x)] if name == "max_pool2d_grad" else [In(x)]
            st, _, _ = self.both(dev, cpu, name, C["float32"], g, *args, Out(x.shape, np.float32), rtol=1e-6)
            assert st == K.OK
        huge = 2**62
        for geo in ([2, 3, 3, 2, 1, 1, 2, 3, 3, huge, 1, 1, 1, 0, 0], [2, 3, 3, 2, 3, 3, 2, 3, 3, 1, 1, huge, 1, 1, 1],
                    [2, 3, 3, 2, huge, huge, 2, 3, 3, 1, 1, 1, 1, 1, 1], [2, 3, 3, 2, 3, 3, 2, 3, 3, 1, 1, 1, 1, huge, 1],
                    [huge, huge, 3, 2, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1]):
            for name in ("conv2d", "depthwise_conv2d"):
                st, _, _ = self.both(dev, cpu, name, C["float32"], geo, In(x), In(x), Out(x.shape, np.float32),
                                     compare_outputs=False)
                assert st == K.EBADSIZE, (name, geo)
            st, _, _ = self.both(dev, cpu, "max_pool2d", C["float32"], geo, In(x), Out(x.shape, np.float32),
                                 compare_outputs=False)
            assert st == K.EBADSIZE, geo

    def test_integer_sums_and_products_wrap_like_the_cpu(self, dev, cpu):
        for dt in ("int32", "int64"):
            m = np.iinfo(dt).max
            x = np.array([[m, m - 1, 3, m // 2 + 2, -m, m, 2]] * 2, dt).T.copy()   # (7, 2)
            for op in (0, 1):
                for excl in (0, 1):
                    for rev in (0, 1):
                        for view in ((1, 7, 2), (7, 2, 1)):
                            self.both(dev, cpu, "cumulative", op, C[dt], In(x), Out(x.shape, x.dtype), *view, excl,
                                      rev)
            _, (s, _), _ = self.both(dev, cpu, "scatter_add_axis", C[dt], C["int64"], In(x),
                                     In(np.array([0, 0, 0, 1, 1, 2, 2])), Out((3, 2), x.dtype), 1, 1, 3, 7, 2, 0,
                                     I64([0]))
            ref = np.zeros((3, 2), dt)
            np.add.at(ref, [0, 0, 0, 1, 1, 2, 2], x)
            np.testing.assert_array_equal(s, ref)
            self.both(dev, cpu, "scatter_nd", 1, C[dt], C["int64"], In(np.array([[0], [0], [1], [0], [1], [2], [0]])),
                      In(x), Out((3, 2), x.dtype, np.zeros((3, 2), dt)), 7, 1, [3], 2, I64([0]))

    # ---- conv and pools -----------------------------------------------------------------------------------
    @pytest.mark.parametrize("geo", [
        # n, h, w, c, kh, kw, oc, oh, ow, sh, sw, dh, dw, pt, pl
        (2, 7, 6, 3, 3, 3, 4, 7, 6, 1, 1, 1, 1, 1, 1),     # SAME, unit strides
        (1, 9, 8, 2, 3, 2, 3, 4, 4, 2, 2, 1, 1, 0, 0),     # VALID, strided
        (2, 8, 8, 2, 3, 3, 2, 4, 4, 1, 1, 2, 2, 0, 0),     # dilated
        (1, 5, 5, 4, 1, 1, 4, 5, 5, 1, 1, 1, 1, 0, 0),     # pointwise
        (1, 6, 7, 2, 2, 3, 4, 3, 3, 2, 3, 1, 1, 0, 1),     # uneven strides, left padding
    ])
    def test_conv_and_pool(self, dev, cpu, geo):
        rng = np.random.default_rng(16)
        n, h, w, c, kh, kw, oc, oh, ow = geo[:9]
        for dt in FLOATS:
            tol = {"rtol": 1e-5, "atol": 1e-5} if dt == "float32" else {"rtol": 1e-12, "atol": 1e-12}
            x = sample(rng, (n, h, w, c), dt)
            f = sample(rng, (kh, kw, c, oc), dt)
            dy = sample(rng, (n, oh, ow, oc), dt)
            self.both(dev, cpu, "conv2d", C[dt], list(geo), In(x), In(f), Out(dy.shape, x.dtype), **tol)
            self.both(dev, cpu, "conv2d_backprop_input", C[dt], list(geo), In(dy), In(f), Out(x.shape, x.dtype), **tol)
            self.both(dev, cpu, "conv2d_backprop_filter", C[dt], list(geo), In(x), In(dy), Out(f.shape, x.dtype), **tol)
            m = oc // c
            if m * c == oc:
                fd = sample(rng, (kh, kw, c, m), dt)
                self.both(dev, cpu, "depthwise_conv2d", C[dt], list(geo), In(x), In(fd), Out(dy.shape, x.dtype), **tol)
                self.both(dev, cpu, "depthwise_conv2d_backprop_input", C[dt], list(geo), In(dy), In(fd),
                          Out(x.shape, x.dtype), **tol)
                self.both(dev, cpu, "depthwise_conv2d_backprop_filter", C[dt], list(geo), In(x), In(dy),
                          Out(fd.shape, x.dtype), **tol)
            pg = list(geo)
            pg[6] = c
            xs = x.copy()
            xs.reshape(-1)[::5] = xs.reshape(-1)[0]   # ties: the first in window order wins
            xs.reshape(-1)[3] = np.nan
            pdy = sample(rng, (n, oh, ow, c), dt)
            self.both(dev, cpu, "max_pool2d", C[dt], pg, In(xs), Out(pdy.shape, x.dtype))
            self.both(dev, cpu, "max_pool2d_grad", C[dt], pg, In(xs), In(pdy), Out(x.shape, x.dtype))
            self.both(dev, cpu, "max_pool2d_grad_grad", C[dt], pg, In(xs), In(x), Out(pdy.shape, x.dtype))
            self.both(dev, cpu, "avg_pool2d", C[dt], pg, In(x), Out(pdy.shape, x.dtype))
            self.both(dev, cpu, "avg_pool2d_grad", C[dt], pg, In(pdy), Out(x.shape, x.dtype))
        if hasattr(dev, "COL_BYTES"):   # the im2col route, one image at a time (big inputs go in blocks)
            saved, dev.COL_BYTES = dev.COL_BYTES, 1
            try:
                dt, tol = "float32", {"rtol": 1e-5, "atol": 1e-5}
                x, f, dy = sample(rng, (n, h, w, c), dt), sample(rng, (kh, kw, c, oc), dt), sample(rng, (n, oh, ow, oc), dt)
                self.both(dev, cpu, "conv2d", C[dt], list(geo), In(x), In(f), Out(dy.shape, x.dtype), **tol)
                self.both(dev, cpu, "conv2d_backprop_input", C[dt], list(geo), In(dy), In(f), Out(x.shape, x.dtype), **tol)
                self.both(dev, cpu, "conv2d_backprop_filter", C[dt], list(geo), In(x), In(dy), Out(f.shape, x.dtype),
                          **tol)
            finally:
                dev.COL_BYTES = saved
        bad = list(geo)
        bad[9] = 0
        st, _, _ = self.both(dev, cpu, "conv2d", C["float32"], bad, In(np.zeros(1, np.float32)),
                             In(np.zeros(1, np.float32)), Out((1,), np.float32))
        assert st == K.EBADARG


# ---- the OpenCL device ------------------------------------------------------------------------------------

needs_opencl = pytest.mark.skipif(opencl.device_count() == 0, reason="this machine has no OpenCL device")


def _opencl_backend():
    try:
        return K.get_backend("opencl")
    except K.BackendUnavailable:
        return opencl.OpenCLBackend()


@pytest.fixture(scope="module")
def dev():
    be = _opencl_backend()
    before = be.set_host_ops(0)   # the kernel checks run the device's kernels, on tiny inputs too
    yield be
    be.set_host_ops(before)


@pytest.fixture(scope="module")
def cpu():
    return K.get_backend("cpu")


@needs_opencl
class TestOpenCLKernels(GPUKernelChecks):
    """Every kernel-table entry on the OpenCL device against the CPU."""


@needs_opencl
def test_work_is_queued_and_the_host_waits_only_to_read():
    be = _opencl_backend()
    x, _ = be.from_numpy(np.arange(100000, dtype=np.float32))
    y, _ = be.alloc((100000,), np.float32)
    be.synchronize()
    syncs, launches = be.stats["syncs"], be.stats["launches"]
    for _ in range(20):
        assert be.unary(K.UNARY_CODES["sqrt"], C["float32"], x, y, 100000, 0.0) == 0
        assert be.binary_flat(K.BINARY_CODES["add"], C["float32"], y, 0, x, 0, y, 100000) == 0
    assert be.stats["launches"] == launches + 40
    assert be.stats["syncs"] == syncs   # nothing waited
    out = be.to_numpy(y, None, (100000,), np.float32)
    assert be.stats["syncs"] == syncs + 1
    assert out[4] == 2 + 4   # sqrt(x) + x, computed 20 times over


@needs_opencl
def test_threads_share_the_device():
    """Launches, data-dependent statuses (which read a flag back) and reads from several threads at once."""
    import threading

    be = _opencl_backend()
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(20):
                a = rng.standard_normal(1000).astype(np.float32)
                h, _ = be.from_numpy(a)
                o, _ = be.alloc((1000,), np.float32)
                assert be.unary(K.UNARY_CODES["square"], C["float32"], h, o, 1000, 0.0) == 0
                idx, _ = be.from_numpy(np.array([5, 1000 + seed], np.int64))
                bad = be.new_int64([0])
                out, _ = be.alloc((2,), np.float32)
                assert be.gather(4, C["int64"], h, idx, out, 1, 1, 1000, 2, 1, bad) == K.ERANGE and bad[0] == 1
                np.testing.assert_array_equal(be.to_numpy(o, None, (1000,), np.float32), a * a)
        except Exception as e:  # noqa: BLE001 - any failure in a thread is reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@needs_opencl
def test_caching_allocator_reuses_freed_buffers():
    be = _opencl_backend()
    h, _ = be.alloc((1000, 3), np.float32)
    cap = h.cap
    assert cap == gpu_common.bucket_size(12000) >= 12000
    del h
    assert be.pooled_bytes() >= cap
    reuses = be.stats["reuses"]
    h2, _ = be.alloc((3000,), np.int32)     # same bucket: served from the free list
    assert be.stats["reuses"] == reuses + 1 and h2.cap == cap
    del h2
    be.empty_cache()
    assert be.pooled_bytes() == 0


@needs_opencl
def test_out_of_device_memory_is_typed_and_names_the_device():
    be = _opencl_backend()
    with pytest.raises(MemoryError, match=r"opencl:0 is out of memory: cannot allocate .*GiB") as e:
        be.alloc((1 << 62,), np.uint8)
    assert isinstance(e.value, gpu_common.OutOfDeviceMemory) and e.value.device == "opencl:0"


@needs_opencl
def test_device_description():
    be = _opencl_backend()
    assert be.name == "opencl" and be.device_name == "opencl:0"
    assert be.device_type in ("cpu", "gpu", "accelerator", "other")
    assert be.compute_units() >= 1 and be.get_num_threads() >= 1
    assert opencl.device_count() >= 1
    assert "opencl:0" in repr(be)


def test_without_an_opencl_driver_import_works_and_the_backend_says_why(tmp_path):
    code = ("import tapeflow, tapeflow.kernels as K\n"
            "from tapeflow.kernels import opencl\n"
            "assert opencl.device_count() == 0\n"
            "try:\n"
            "    opencl.OpenCLBackend()\n"
            "except K.BackendUnavailable as e:\n"
            "    print(e)\n")
    env = dict(os.environ, TAPEFLOW_OPENCL_LIB=str(tmp_path / "libOpenCL-missing.so"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "opencl backend unavailable: libOpenCL not found" in out.stdout
    assert "TAPEFLOW_OPENCL_LIB" in out.stdout


@needs_opencl
def test_fused_programs_are_generated_once_and_keep_their_values_and_statuses(monkeypatch):
    """A program seen before runs its kernel without generating its source again (generating took 0.25 ms a
    call, more than the launch: the compiled linear regression's step on pocl was slower than eager)."""
    from tapeflow.kernels import gpu_fused

    be = _opencl_backend()
    made = []
    real = gpu_fused.fused_kernel_source
    monkeypatch.setattr(gpu_fused, "fused_kernel_source", lambda *a, **k: made.append(a) or real(*a, **k))
    ab, mul = K.UNARY_CODES["abs"], K.BINARY_CODES["mul"]
    # r2 = abs(r0); r3 = r2 * r1 (r1 a scalar); outputs r3 and r2 (exact ops: NumPy gives the same bits)
    prog = [0, ab, C["float32"], 2, 0, 0, 0, 1, mul, C["float32"], 3, 2, 1, 0]
    x = np.linspace(-2, 2, 300).astype(np.float32)
    s = np.array([1.5], np.float32)
    dx, _ = be.from_numpy(x)
    ds, _ = be.from_numpy(s)

    def run(program, params):
        outs = [be.alloc((300,), np.float32)[0] for _ in range(2)]
        st = be.fused_eval(program, params, 2, 4, [C["float32"]] * 4, [dx, ds], [0, 1], 2, outs, [3, 2], 2, 300)
        return st, [be.to_numpy(o, None, (300,), np.float32) for o in outs] if st == 0 else None

    for _ in range(3):
        st, got = run(prog, [0.0, 0.0])
        assert st == 0
        np.testing.assert_array_equal(got[0], np.abs(x) * s[0])
        np.testing.assert_array_equal(got[1], np.abs(x))
    assert len(made) == 1
    other = list(prog)
    other[1] = K.UNARY_CODES["neg"]   # another program: its own kernel
    st, got = run(other, [0.0, 0.0])
    assert st == 0 and len(made) == 2
    np.testing.assert_array_equal(got[1], -x)
    bad = list(prog)
    bad[11] = 7   # reads register 7 of 4: the same status every call, nothing generated
    assert run(bad, [0.0, 0.0])[0] == K.EBADARG
    assert run(bad, [0.0, 0.0])[0] == K.EBADARG
    assert len(made) == 2


_IDLE_DRIVER = r"""
import os, sys, threading, time
import numpy as np
import tapeflow.kernels as K
be = K.get_backend("opencl")
before = be.set_host_ops(0)
x, _ = be.from_numpy(np.arange(1 << 16, dtype=np.float32))
for _ in range(50):
    assert be.unary(K.UNARY_CODES["exp"], K.DTYPE_CODES["float32"], x, x, 1 << 16, 0.0) == 0
be.to_numpy(x, None, (1 << 16,), np.float32)   # a blocking read: the driver's workers are done
me = str(threading.get_native_id())

def others():
    total = 0.0
    for t in os.listdir("/proc/self/task"):
        if t != me:
            try:
                total += time.clock_gettime(((~int(t)) << 3) | 6)   # that thread's CPU clock
            except OSError:
                pass
    return total

done = threading.Event()
if sys.argv[1] == "spin":   # the check itself: a thread that busy-waits is seen
    def spin():
        while not done.is_set():
            pass
    threading.Thread(target=spin).start()
c0 = others()
time.sleep(0.3)
print(round((others() - c0) * 1e3, 1))
done.set()
"""


@needs_opencl
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread CPU clocks are Linux's")
def test_the_drivers_threads_sleep_while_the_process_is_idle():
    # bench_backends: the CPU MLP step took 12 ms beside pocl instead of 1.2: its threads were suspected of
    # spinning beside ours.  They do not (pocl's workers wait on a condition variable): after launches and a
    # blocking read, while the process sleeps 0.3 s, the threads other than the caller's take no CPU
    def run(mode):
        out = subprocess.run([sys.executable, "-c", _IDLE_DRIVER, mode], capture_output=True, text=True,
                             check=True, timeout=120)
        return float(out.stdout.split()[-1])
    assert run("idle") < 15.0   # ms of CPU over 300 ms
    assert run("spin") > 100.0  # the check can fail: a busy-waiting thread is counted
