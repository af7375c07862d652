"""The CPU kernel table on a device, part 1: element-wise, reductions, matmul, cast, copy, index, join.

Each method is the entry of the CPU ABI of the same name (``tpf_<name>`` in
``cdef/*.h``, same arguments, device buffers where C takes pointers, the same
status codes): it validates what the C kernel validates, in the same order, then
launches kernels of :data:`tapeflow.kernels.gpu_contract.TABLE` by name, passing
its arguments in the order the table declares.  Part 2 (sort, nn, random, conv,
linalg) is :mod:`tapeflow.kernels.gpu_entries_nn`; :class:`GPUBackend` joins both
with the device runtime (:mod:`tapeflow.kernels.gpu_common`), and a driver
(OpenCL, CUDA) subclasses it.

>>> from tapeflow.kernels.gpu_entries import GPUBackend
>>> from tapeflow.kernels import get_backend
>>> sorted(set(get_backend("cpu").KERNELS) - set(dir(GPUBackend)))
[]
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from .gpu_common import (
    EBADARG,
    EBADDTYPE,
    EBADOP,
    EBADSIZE,
    EDIVZERO,
    ERANGE,
    OK,
    DeviceBuffer,
    GPURuntime,
    _ints,
    _prod,
    _round_up,
    _value_bits,
)
from .gpu_contract import (
    BF16,
    BOOL,
    F16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    INTS,
    MAXDIMS,
    SIZE,
    SUF,
    U8,
)
from .gpu_entries_complex import ComplexEntries
from .gpu_entries_host import HostEntries
from .gpu_fused import FusedEntries
from .gpu_entries_image import ImageEntries
from .gpu_entries_nn import INT32_MAX, NNEntries

_INT_CHECKED = {BINARY_OPS.index(n) for n in ("floordiv", "mod", "truncatediv", "truncatemod", "pow")}
_POLYGAMMA = UNARY_OPS.index("polygamma")


class CoreEntries:
    """CPU ABI entries: element-wise, reductions, matmul, cast, copy, index, join (see the module docstring)."""

    # --------------------------------------------------------- elementwise
    def unary(self, op, dt, x, out, n, param):
        if op < 0 or op >= len(UNARY_OPS):
            return EBADOP
        if not 0 <= dt < 10:
            return EBADDTYPE
        name = f"unary_{UNARY_OPS[op]}_{SUF[dt]}"
        if not self.has_kernel(name):
            return EBADDTYPE
        if n < 0:
            return EBADSIZE
        if op == _POLYGAMMA and not (0 <= param <= 64 and param == int(param)):
            return EBADARG
        return self.launch(name, n, x, out, n, float(param))

    def _bin_kernel(self, op, dt):
        if op < 0 or op >= len(BINARY_OPS):
            return EBADOP, None
        name = f"binary_{BINARY_OPS[op]}_{SUF[dt]}" if 0 <= dt < 10 else None
        return (OK, name) if name is not None and self.has_kernel(name) else (EBADDTYPE, None)

    def _binary(self, k, op, dt, n, nd, shape, astr, bstr, a, b, out):
        if n == 0:
            return OK
        if not (op in _INT_CHECKED and dt in INTS):
            return self.launch(k, n, a, b, out, n, nd, shape, astr, bstr, None)
        with self._lock:   # integer division and powers: the kernel flags bad operands, the host reads the flag
            flag = self._reset_flag()
            self.launch(k, n, a, b, out, n, nd, shape, astr, bstr, flag)
            f = int(self._read_words(flag, 1)[0])
        return OK if not f else EDIVZERO if f == 1 else EBADARG

    def binary_flat(self, op, dt, a, a_scalar, b, b_scalar, out, n):
        st, k = self._bin_kernel(op, dt)
        if st:
            return st
        if n < 0:
            return EBADSIZE
        return self._binary(k, op, dt, n, 1, [n], [0 if a_scalar else 1], [0 if b_scalar else 1], a, b, out)

    def binary_strided(self, op, dt, ndim, shape, a, astr, b, bstr, out):
        st, k = self._bin_kernel(op, dt)
        if st:
            return st
        if ndim < 1 or ndim > MAXDIMS:
            return EBADSIZE
        shape = _ints(shape[:ndim])
        if any(d < 0 for d in shape):
            return EBADSIZE
        return self._binary(k, op, dt, _prod(shape), ndim, shape, _ints(astr[:ndim]), _ints(bstr[:ndim]), a, b, out)

    # ----------------------------------------------------------- reductions
    def _split(self, count: int, r: int):
        """(nparts, chunk): split the reduced axis when there are few outputs."""
        if count >= 1024 or r < 4096:
            return 1, r
        nparts = min(-(-r // 2048), max(1, 8192 // count))
        chunk = -(-r // nparts)
        return -(-r // chunk), chunk

    def reduce(self, op, dt, x, out, outer, r, inner):
        if op < 0 or op >= len(REDUCE_OPS):
            return EBADOP
        if not 0 <= dt < 10:
            return EBADDTYPE
        name = f"{REDUCE_OPS[op]}_{SUF[dt]}"
        if not self.has_kernel("reduce_" + name):
            return EBADDTYPE
        if outer < 0 or r < 0 or inner < 0:
            return EBADSIZE
        count = outer * inner
        if count == 0:
            return OK
        nparts, chunk = self._split(count, r)
        if nparts == 1:
            return self.launch("reduce_" + name, count, x, out, out, outer, r, inner, 1,
                             max(r, 1), 0)
        if dt == BOOL or REDUCE_OPS[op] in ("max", "min"):
            acc = SIZE[dt]
        else:
            acc = 8
        part = self._buffer(nparts * count * acc)
        il = 1 if inner == 1 and self.device_type != "cpu" else 0
        self.launch("reduce_" + name, nparts * count, x, out, part, outer, r, inner, nparts,
                  chunk, il)
        return self.launch("reducec_" + name, count, part, out, count, nparts, r)

    def argreduce(self, op, dt, x, out, outer, r, inner):
        if op < 0 or op > 1:
            return EBADOP
        if not 0 <= dt < 10:
            return EBADDTYPE
        name = f"{('max', 'min')[op]}_{SUF[dt]}"
        if not self.has_kernel("argreduce_" + name):
            return EBADDTYPE
        if outer < 0 or r < 1 or inner < 0:
            return EBADSIZE
        count = outer * inner
        if count == 0:
            return OK
        nparts, chunk = self._split(count, r)
        if nparts == 1:
            return self.launch("argreduce_" + name, count, x, out, out, outer, r, inner, 1, r)
        part = self._buffer(nparts * count * 8)
        self.launch("argreduce_" + name, nparts * count, x, out, part, outer, r, inner,
                  nparts, chunk)
        return self.launch("argreducec_" + name, count, x, part, out, count, nparts, r, inner)

    # ---------------------------------------------------------------- matmul
    def matmul(self, dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out):
        if batch < 0 or m < 0 or n < 0 or k < 0:
            return EBADSIZE
        if m > INT32_MAX or n > INT32_MAX or k > INT32_MAX:
            return EBADSIZE
        if not 0 <= dt < 10 or dt in (F16, BF16, BOOL):
            return EBADDTYPE
        if not self.has_kernel(f"matmul_{SUF[dt]}"):
            return EBADDTYPE
        if m * n == 0 or batch == 0:
            return OK
        if k == 0:
            return self._fill_bits(out, SIZE[dt], batch * m * n, 0)
        return self._matmul(dt, 1 if ta else 0, 1 if tb else 0, batch, m, n, k, a, a_bstride, b, b_bstride, out)

    #: CPU-type devices run float matmuls through explicit vectors (matmul_vec_*) rather than tiles
    _matmul_vec = False

    def _matmul(self, dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out):
        if dt in (F32, F64) and self._matmul_vec:
            vec = f"matmul_vec_{SUF[dt]}"
            if self.has_kernel(vec):
                if tb:   # the vector kernel streams rows of B: transpose it first (O(k n) against O(m n k))
                    nb = batch if b_bstride else 1
                    bt = self._buffer(nb * k * n * SIZE[dt])
                    self.strided_copy(SIZE[dt], 3, [nb, k, n], b, 0, [b_bstride, 1, k], bt, 0, [k * n, n, 1])
                    b, b_bstride = bt, (k * n if b_bstride else 0)
                w = 16 if dt == F32 else 8
                for b0 in range(0, batch, 65535):
                    nb = min(65535, batch - b0)
                    self.launch_grid(vec, (-(-n // w), -(-m // 8), nb), (1, 1, 1), ta, m, n, k, a, a_bstride, b,
                                     b_bstride, out, b0)
                return OK
        if dt in (F32, F64):
            gsize = [-(-n // 64) * 16, -(-m // 64) * 16]
        else:
            gsize = [_round_up(n, 16), _round_up(m, 16)]
        for b0 in range(0, batch, 65535):
            nb = min(65535, batch - b0)
            self.launch_grid(f"matmul_{SUF[dt]}", (gsize[0], gsize[1], nb), (16, 16, 1), ta, tb, m, n, k, a, a_bstride,
                             b, b_bstride, out, b0)
        return OK

    # ------------------------------------------------------------ cast, copy
    def cast(self, src, x, dst, o, n):
        if (src in (10, 11) or dst in (10, 11)) and 0 <= src < 12 and 0 <= dst < 12 and n >= 0:
            es = (2, 2, 4, 8, 1, 1, 2, 4, 8, 1, 8, 16)   # complex64/complex128: on the host (gpu_entries_complex)
            return self._host_call("cast", [(x, n * es[src])], [(o, n * es[dst])], [src, "in0", dst, "out0", n])
        if not (0 <= src < 10 and 0 <= dst < 10):
            return EBADDTYPE
        if n < 0:
            return EBADSIZE
        if src == dst:
            if n:
                self._copy(x.mem, o.mem, n * SIZE[src])
            return OK
        return self.launch(f"cast_{SUF[src]}_{SUF[dst]}", n, x, o, n)

    def _to_device(self, value, nbytes):
        """Host bytes (e.g. from host_ptr) as a temporary device buffer; device handles pass through."""
        if isinstance(value, DeviceBuffer):
            return value
        raw = np.frombuffer(bytes(value)[:nbytes].ljust(nbytes, b"\0"), np.uint8).copy()
        buf = self._buffer(nbytes)
        self._write(buf.mem, raw)
        return buf

    def strided_copy(self, elsize, ndim, shape, src, src_off, src_str, dst, dst_off, dst_str):
        if ndim < 0 or ndim > MAXDIMS:
            return EBADSIZE
        if elsize == 16 and ndim < MAXDIMS and isinstance(src, DeviceBuffer):   # complex128: pairs of 8 bytes
            return self.strided_copy(8, ndim + 1, _ints(shape[:ndim]) + [2], src, 2 * src_off,
                                     [2 * s for s in _ints(src_str[:ndim])] + [1], dst, 2 * dst_off,
                                     [2 * s for s in _ints(dst_str[:ndim])] + [1])
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        shape = _ints(shape[:ndim])
        if any(d < 0 for d in shape):
            return EBADSIZE
        total = _prod(shape)
        if total == 0:
            return OK
        sstr, dstr = _ints(src_str[:ndim]), _ints(dst_str[:ndim])
        if not isinstance(src, DeviceBuffer):   # a host value (e.g. the 1 of tf.eye), read with stride 0
            span = src_off + sum((d - 1) * s for d, s in zip(shape, sstr) if s > 0) + 1
            src = self._to_device(src, span * elsize)
        if ndim == 1 and sstr[0] == 1 and dstr[0] == 1:
            self._copy(src.mem, dst.mem, total * elsize, src_off * elsize, dst_off * elsize)
            return OK
        return self.launch(f"strided_copy_{elsize}", total, src, src_off, dst, dst_off, ndim,
                         shape, sstr, dstr, total)

    def _fill_bits(self, dst, elsize, n, bits):
        return self.launch(f"fill_{elsize}", n, dst, n, bits)

    def fill(self, elsize, value, dst, n):
        if n < 0:
            return EBADSIZE
        if elsize == 16 and bytes(value)[:8] == bytes(value)[8:16]:   # complex128 with equal halves (zeros)
            return self.fill(8, bytes(value)[:8], dst, 2 * n)
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        return self._fill_bits(dst, elsize, n, _value_bits(value, elsize))

    # ------------------------------------------------------------- validation
    def _first_bad(self, kname, n, *args):
        """Run a validate_* kernel over n items (in slices of 2**30); the first bad position or -1."""
        flag = self._flag_buffer()
        for base in range(0, n, 1 << 30):
            m = min(1 << 30, n - base)
            with self._lock:
                self._reset_flag(1, 0x7FFFFFFF7FFFFFFF)
                st = self.launch(kname, m, *args[:1], base, m, *args[1:], flag)
                if st:
                    return -2
                bad = int(self._read_words(flag, 1, np.int32)[0])
            if bad != 0x7FFFFFFF:
                return base + bad
        return -1

    def _read_int(self, buf, index, idx_dt):
        """Element ``index`` of an int32/int64 device array, read back (error paths only)."""
        dtype = np.int64 if idx_dt == I64 else np.int32
        out = np.empty(1, dtype)
        self._read(buf.mem, out, index * out.itemsize)
        return int(out[0])

    @staticmethod
    def _idx_suffix(idx_dt):
        return {I32: "i32", I64: "i64"}.get(idx_dt)

    # ------------------------------------------------------------------ index
    def gather(self, elsize, idx_dt, params, idx, out, batch, outer, axis_n, nidx, inner, bad):
        if elsize == 16 and inner >= 0:   # complex128: each row of inner elements as 2 * inner 8-byte ones
            return self.gather(8, idx_dt, params, idx, out, batch, outer, axis_n, nidx, 2 * inner, bad)
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if min(batch, outer, axis_n, nidx, inner) < 0:
            return EBADSIZE
        first = self._first_bad(f"validate_idx_{isuf}", batch * nidx, idx, 0, axis_n)
        if first >= 0:
            bad[0] = first
            return ERANGE
        total = batch * outer * nidx * inner
        return self.launch(f"gather_{elsize}_{isuf}", total, params, idx, out, outer, axis_n,
                         nidx, inner, total)

    def scatter_add_axis(self, dt, idx_dt, upd, idx, out, batch, outer, axis_n, nidx, inner, flags, bad):
        """flags: 1 drops negative indices (else an error), 2 requires them sorted within each batch row."""
        if not 0 <= dt < 10:
            return EBADDTYPE
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if not self.has_kernel(f"scatter_add_axis_{SUF[dt]}_{isuf}"):
            return EBADDTYPE
        if min(batch, outer, axis_n, nidx, inner) < 0:
            return EBADSIZE
        if flags & 2 and nidx:
            first = self._first_bad(f"validate_sorted_{isuf}", batch * nidx, idx, nidx)
            if first >= 0:
                bad[0] = first
                return EBADARG
        first = self._first_bad(f"validate_idx_{isuf}", batch * nidx, idx, 1 if flags & 1 else 0, axis_n)
        if first >= 0:
            bad[0] = first
            return ERANGE
        bo_n = batch * outer
        self._fill_bits(out, SIZE[dt], bo_n * axis_n * inner, 0)
        if bo_n == 0 or inner == 0 or nidx == 0:
            return OK
        return self.launch(f"scatter_add_axis_{SUF[dt]}_{isuf}", bo_n * inner, upd, idx, out,
                         bo_n, outer, axis_n, nidx, inner)

    def gather_nd(self, elsize, idx_dt, params, idx, out, batch, nrest, k, dims, inner, bad):
        if elsize == 16 and inner >= 0:   # complex128: each slice of inner elements as 2 * inner 8-byte ones
            return self.gather_nd(8, idx_dt, params, idx, out, batch, nrest, k, dims, 2 * inner, bad)
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if batch < 0 or nrest < 0 or k < 0 or inner < 0:
            return EBADSIZE
        if k > MAXDIMS:
            return EBADSIZE
        dims = _ints(dims[:k])
        first = self._first_bad(f"validate_nd_{isuf}", batch * nrest, idx, k, dims)
        if first >= 0:
            bad[0] = first
            return ERANGE
        total = batch * nrest * inner
        return self.launch(f"gather_nd_{elsize}_{isuf}", total, params, idx, out, nrest, k,
                         dims, _prod(dims), inner, total)

    def scatter_nd(self, op, dt, idx_dt, idx, upd, out, n, k, dims, inner, bad):
        if not 0 <= dt < 10:
            return EBADDTYPE
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if op not in (0, 1):
            return EBADOP
        if n < 0 or k < 0 or inner < 0 or k > MAXDIMS:
            return EBADSIZE
        name = f"scatter_nd_set_{SIZE[dt]}_{isuf}" if op == 0 else f"scatter_nd_add_{SUF[dt]}_{isuf}"
        if not self.has_kernel(name):
            return EBADDTYPE
        dims = _ints(dims[:k])
        first = self._first_bad(f"validate_nd_{isuf}", n, idx, k, dims)
        if first >= 0:
            bad[0] = first
            return ERANGE
        if n == 0 or inner == 0:
            return OK
        return self.launch(name, inner, idx, upd, out, n, k, dims, inner)

    def one_hot(self, elsize, idx_dt, idx, on, off, out, outer, depth, inner):
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        isuf = self._idx_suffix(idx_dt)
        if isuf is None:
            return EBADDTYPE
        if outer < 0 or depth < 0 or inner < 0:
            return EBADSIZE
        total = outer * depth * inner
        return self.launch(f"one_hot_{elsize}_{isuf}", total, idx, out, depth, inner,
                         _value_bits(on, elsize), _value_bits(off, elsize), total)

    _NZ: ClassVar[dict] = {F16: "h16", BF16: "h16", F32: "f32", F64: "f64", I8: "i8", U8: "u8", I16: "i16", I32: "i32",
           I64: "i64", BOOL: "u8"}
    _NZ_CHUNK = 1024

    def _nz_counts(self, dt, x, n):
        """Per-chunk non-zero counts, scanned to offsets; returns (offsets, total buffer, nchunks)."""
        nchunks = -(-n // self._NZ_CHUNK)
        counts = self._buffer(max(nchunks, 1) * 8)
        total = self._buffer(8)
        self.launch(f"nz_count_{self._NZ[dt]}", nchunks, x, n, self._NZ_CHUNK, counts)
        self.launch("nz_scan", 1, counts, nchunks, total)
        return counts, total, nchunks

    def count_nonzero(self, dt, x, n, count):
        if n < 0:
            return EBADSIZE
        if not 0 <= dt < 10:
            return EBADDTYPE
        if n == 0:
            count[0] = 0
            return OK
        _, total, _ = self._nz_counts(dt, x, n)
        count[0] = int(self._read_words(total, 1)[0])
        return OK

    def where_indices(self, dt, x, ndim, shape, n, out):
        if n < 0 or ndim < 0 or ndim > MAXDIMS:
            return EBADSIZE
        if not 0 <= dt < 10:
            return EBADDTYPE
        if n == 0:
            return OK
        counts, _, nchunks = self._nz_counts(dt, x, n)
        return self.launch(f"nz_write_{self._NZ[dt]}", nchunks, x, n, self._NZ_CHUNK, counts,
                         ndim, _ints(shape[:ndim]) or [1], out)

    def select(self, elsize, ndim, shape, cond, cstr, a, astr, b, bstr, out):
        if ndim < 1 or ndim > MAXDIMS:
            return EBADSIZE
        if elsize == 16 and ndim < MAXDIMS:   # complex128: a last axis of the two 8-byte halves
            two = lambda st: [2 * v for v in _ints(st[:ndim])] + [1]  # noqa: E731
            return self.select(8, ndim + 1, _ints(shape[:ndim]) + [2], cond, _ints(cstr[:ndim]) + [0], a, two(astr),
                               b, two(bstr), out)
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        shape = _ints(shape[:ndim])
        if any(d < 0 for d in shape):
            return EBADSIZE
        total = _prod(shape)
        return self.launch(f"select_{elsize}", total, cond, a, b, out, ndim, shape,
                         _ints(cstr[:ndim]), _ints(astr[:ndim]), _ints(bstr[:ndim]), total)

    # ------------------------------------------------------------------- join
    def _column_blocks(self, elsize, n, widths, outer, copy):
        """concat/split: check the arguments as the C kernels do, then ``copy(i, w, total, off)`` for each
        non-empty block of ``w`` columns at column ``off`` of the ``total``-wide joined matrix."""
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        if n < 0 or outer < 0:
            return EBADSIZE
        widths = _ints(widths[:n])
        if any(w < 0 for w in widths):
            return EBADSIZE
        total = sum(widths)
        if total == 0 or outer == 0:
            return OK
        off = 0
        for i, w in enumerate(widths):
            if w:
                copy(i, w, total, off)
            off += w
        return OK

    def concat(self, elsize, n, srcs, widths, outer, dst):
        if elsize == 16:   # complex128: twice as many 8-byte columns
            return self.concat(8, n, srcs, [2 * w for w in _ints(widths[:max(n, 0)])], outer, dst)
        srcs = list(srcs)[:n]
        return self._column_blocks(elsize, n, widths, outer, lambda i, w, total, off: self.launch(
            f"rows_copy_{elsize}", outer * w, srcs[i], w, 0, dst, total, off, w, outer))

    def split(self, elsize, n, src, widths, outer, dsts):
        if elsize == 16:   # complex128: twice as many 8-byte columns (as concat)
            return self.split(8, n, src, [2 * w for w in _ints(widths[:max(n, 0)])], outer, dsts)
        dsts = list(dsts)[:n]
        return self._column_blocks(elsize, n, widths, outer, lambda i, w, total, off: self.launch(
            f"rows_copy_{elsize}", outer * w, src, total, off, dsts[i], w, 0, w, outer))

    def pad(self, elsize, mode, ndim, in_shape, before, out_shape, src, dst, value):
        if elsize == 16 and 0 <= ndim < MAXDIMS and (mode != 0 or bytes(value)[:8] == bytes(value)[8:16]):
            # complex128 (padded with equal halves, e.g. zeros): pairs of 8-byte elements
            return self.pad(8, mode, ndim + 1, _ints(in_shape[:ndim]) + [2], _ints(before[:ndim]) + [0],
                            _ints(out_shape[:ndim]) + [2], src, dst, bytes(value)[:8])
        if elsize not in (1, 2, 4, 8):
            return EBADARG
        if mode < 0 or mode > 2:
            return EBADOP
        if ndim < 0 or ndim > MAXDIMS:
            return EBADSIZE
        ins, bef, outs = _ints(in_shape[:ndim]), _ints(before[:ndim]), _ints(out_shape[:ndim])
        if any(d < 0 for d in ins + outs):
            return EBADSIZE
        total = _prod(outs)
        return self.launch(f"pad_{elsize}", total, src, dst, ndim, ins or [1], bef or [0],
                         outs or [1], mode, _value_bits(value, elsize), total)

    def iota(self, dt, start, delta, istart, idelta, out, n):
        if n < 0:
            return EBADSIZE
        if not 0 <= dt < 10 or dt == BOOL:
            return EBADDTYPE
        return self.launch(f"iota_{SUF[dt]}", n, out, n, float(start), float(delta), int(istart),
                         int(idelta))

    def linspace(self, dt, start, stop, out, n):
        if n < 0:
            return EBADSIZE
        if dt not in (F16, BF16, F32, F64):
            return EBADDTYPE
        step = (stop - start) / float(n - 1) if n > 1 else 0.0
        return self.launch(f"linspace_{SUF[dt]}", n, out, n, float(start), float(stop), step)


class GPUBackend(CoreEntries, NNEntries, HostEntries, ImageEntries, ComplexEntries, FusedEntries, GPURuntime):
    """The CPU backend's kernel table on a device: a driver subclasses this and adds its primitives."""
