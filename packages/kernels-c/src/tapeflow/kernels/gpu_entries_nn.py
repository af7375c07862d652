"""The CPU kernel table on a device, part 2: sort, nn, random, conv, linalg (see :mod:`tapeflow.kernels.gpu_entries`).

>>> from tapeflow.kernels.gpu_entries_nn import NNEntries
>>> callable(NNEntries.conv2d) and callable(NNEntries.cholesky)
True
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import BINARY_OPS
from .gpu_common import (
    EBADARG,
    EBADDTYPE,
    EBADOP,
    EBADSIZE,
    ERANGE,
    OK,
    _ints,
    _is_null,
)
from .gpu_contract import BF16, BOOL, F16, F32, F64, I8, I16, I32, I64, SIZE, SUF, U8

GEOM_MAX = 1 << 60   # csrc/conv.c: the largest size or product of sizes of a conv/pool geometry
INT32_MAX = 2 ** 31 - 1


class NNEntries:
    """CPU ABI entries: sort, nn, random, conv, linalg."""

    # ------------------------------------------------------------------- sort
    _KEY: ClassVar[dict] = {F16: ("f", 4), BF16: ("f", 4), F32: ("f", 4), F64: ("d", 8), I8: ("l", 8), U8: ("l", 8),
            I16: ("l", 8), I32: ("l", 8), I64: ("l", 8), BOOL: ("l", 8)}

    def _sort(self, dt, x, vals, idx, idx_dt, outer, n, descending, k):
        if dt not in self._KEY:
            return EBADDTYPE
        want_idx = not _is_null(idx)
        want_vals = not _is_null(vals)
        isuf = self._idx_suffix(idx_dt) if want_idx else "i64"
        if isuf is None:
            return EBADDTYPE
        if outer < 0 or n < 0 or k > n:
            return EBADSIZE
        if outer == 0 or n == 0 or k == 0:
            return OK
        kind, ks = self._KEY[dt]
        if not self.has_kernel(f"sort_load_{SUF[dt]}"):
            return EBADDTYPE
        total = outer * n
        keys = [self._buffer(total * ks), self._buffer(total * ks)]
        ids = [self._buffer(total * 8), self._buffer(total * 8)]
        self.launch(f"sort_load_{SUF[dt]}", total, x, keys[0], ids[0], n, total)
        merge = f"sort_merge_{kind}_{'desc' if descending else 'asc'}"
        cur, w = 0, 1
        while w < n:
            self.launch(merge, total, keys[cur], ids[cur], keys[1 - cur], ids[1 - cur], n, w, total)
            cur, w = 1 - cur, w * 2
        m = n if k < 0 else k
        return self.launch(f"sort_emit_{SIZE[dt]}_{isuf}", outer * m, x, ids[cur], vals, idx, n,
                         m, 1 if want_vals else 0, 1 if want_idx else 0, outer * m)

    def sort(self, dt, x, vals, idx, idx_dt, outer, n, descending, want):
        if not want & 3:
            return EBADARG
        return self._sort(dt, x, vals if want & 1 else None, idx if want & 2 else None, idx_dt, outer, n,
                          1 if descending else 0, -1)

    def top_k(self, dt, x, vals, idx, idx_dt, outer, n, k):
        if k < 0:
            return EBADSIZE
        return self._sort(dt, x, vals, idx, idx_dt, outer, n, 1, k)

    def cumulative(self, op, dt, x, out, outer, n, inner, exclusive, reverse):
        if op not in (0, 1):
            return EBADOP
        if outer < 0 or n < 0 or inner < 0:
            return EBADSIZE
        if outer == 0 or n == 0 or inner == 0:
            return OK
        if not 0 <= dt < 10:
            return EBADDTYPE
        return self.launch(f"cumulative_{SUF[dt]}", outer * inner, x, out, op, outer, n, inner,
                         1 if exclusive else 0, 1 if reverse else 0)

    # --------------------------------------------------------------------- nn
    def softmax(self, dt, log_, x, out, outer, r, inner):
        if outer < 0 or r < 0 or inner < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        if outer * r * inner == 0:
            return OK
        return self.launch(f"softmax_{SUF[dt]}", outer * inner, x, out, 1 if log_ else 0, outer, r,
                         inner)

    def softmax_xent(self, dt, labels, logits, loss, backprop, outer, r, inner):
        if outer < 0 or r < 0 or inner < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        if outer * inner == 0:
            return OK
        want = not _is_null(backprop)
        return self.launch(f"softmax_xent_{SUF[dt]}", outer * inner, labels, logits, loss,
                         backprop if want else None, 1 if want else 0, outer, r, inner)

    def sparse_softmax_xent(self, dt, label_dt, labels, logits, loss, backprop, rows, r, bad):
        if rows < 0 or r < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        lsuf = self._idx_suffix(label_dt)
        if lsuf is None:
            return EBADDTYPE
        first = self._first_bad(f"validate_idx_{lsuf}", rows, labels, 0, r)
        if first >= 0:
            bad[0] = first
            bad[1] = self._read_int(labels, first, label_dt)
            return ERANGE
        if rows == 0:
            return OK
        want = not _is_null(backprop)
        return self.launch(f"sparse_softmax_xent_{SUF[dt]}_{lsuf}", rows, labels, logits, loss,
                         backprop if want else None, 1 if want else 0, rows, r)

    # ----------------------------------------------------------------- random
    def philox4x32_10(self, ctr, key, out, nblocks):
        """Raw Philox blocks; ``ctr`` (4 words) and ``key`` (2 words) are host values, ``out`` a device buffer."""
        if nblocks < 0:
            return EBADSIZE
        c = [int(ctr[i]) & 0xFFFFFFFF for i in range(4)]
        kk = [int(key[i]) & 0xFFFFFFFF for i in range(2)]
        return self.launch("philox_raw", nblocks, *c, *kk, out, nblocks)

    def random_uniform(self, dt, out, n, key, stream, lo, hi):
        if n < 0:
            return EBADSIZE
        if not lo < hi:
            return EBADARG
        if dt not in (F32, F64, F16, BF16):
            return EBADDTYPE
        per = 2 if dt == F64 else 4
        return self.launch(f"random_uniform_{SUF[dt]}", -(-n // per), out, n, key, stream,
                         float(lo), float(hi))

    def random_uniform_int(self, dt, out, n, key, stream, lo, hi):
        if n < 0:
            return EBADSIZE
        if not lo < hi:
            return EBADARG
        if dt == I32:
            if lo < -2 ** 31 or hi > 2 ** 31:
                return EBADARG
            per = 4
        elif dt == I64:
            per = 2
        else:
            return EBADDTYPE
        return self.launch(f"random_uniform_int_{SUF[dt]}", -(-n // per), out, n, key, stream,
                         int(lo), int(hi))

    def random_normal(self, dt, out, n, key, stream, mean, stddev):
        if n < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        per = 2 if dt == F64 else 4
        return self.launch(f"random_normal_{SUF[dt]}", -(-n // per), out, n, key, stream,
                         float(mean), float(stddev))

    def random_truncated_normal(self, dt, out, n, key, stream, mean, stddev):
        if n < 0 or n > 1 << 56:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        return self.launch(f"random_truncated_normal_{SUF[dt]}", n, out, n, key, stream,
                         float(mean), float(stddev))

    def random_dropout_mask(self, dt, out, n, key, stream, rate):
        if n < 0:
            return EBADSIZE
        if not 0.0 <= rate < 1.0:
            return EBADARG
        if dt not in (F32, F64):
            return EBADDTYPE
        keep = 1.0 / (1.0 - rate)
        if dt == F32:
            keep = float(np.float32(keep))
        return self.launch(f"random_dropout_mask_{SUF[dt]}", -(-n // 4), out, n, key, stream, float(rate), keep)

    def random_categorical(self, dt, logits, batch, classes, num_samples, out_dt, out, key, stream, bad_row):
        if batch < 0 or classes < 0 or num_samples < 0:
            return EBADSIZE
        if dt not in (F32, F64):
            return EBADDTYPE
        osuf = self._idx_suffix(out_dt)
        if osuf is None:
            return EBADDTYPE
        if batch == 0 or num_samples == 0:
            return OK
        if classes == 0:
            bad_row[0] = 0
            return EBADARG
        name = f"random_categorical_{SUF[dt]}_{osuf}"
        if not self.has_kernel(name):
            return EBADDTYPE
        cdf = self._buffer(batch * classes * 8)
        flag = self._flag_buffer()
        with self._lock:
            self._reset_flag(1, 0x7FFFFFFF7FFFFFFF)
            self.launch(name, batch, logits, batch, classes, num_samples, out, key, stream,
                      cdf, flag)
            first = int(self._read_words(flag, 1, np.int32)[0])
        if first != 0x7FFFFFFF:
            bad_row[0] = first
            return EBADARG
        return OK

    def random_shuffle(self, rowbytes, n, src, dst, perm_buf, key, stream):
        if rowbytes < 0 or n < 0:
            return EBADSIZE
        if n == 0:
            return OK
        self.launch("shuffle_perm", 1, perm_buf, n, key, stream)
        if rowbytes == 0:
            return OK
        e = 8 if rowbytes % 8 == 0 else 4 if rowbytes % 4 == 0 else 2 if rowbytes % 2 == 0 else 1
        roww = rowbytes // e
        return self.launch(f"shuffle_rows_{e}", n * roww, src, dst, perm_buf, n, roww)

    # ------------------------------------------------------------------- conv
    @staticmethod
    def _geom(geom, depthwise=False, pool=False):
        """csrc/conv.c's load_geom / conv_geom: every size, stride, dilation, padding and every
        product the kernels form from them up to 2**60 (int64 indices never overflow)."""
        g = _ints(geom[:15])
        if len(g) < 15:
            return EBADARG, None
        n, h, w, c, kh, kw, oc, oh, ow, sh, sw, dh, dw, pt, pl = g
        if min(n, h, w, c, kh, kw, oc, oh, ow) < 0:
            return EBADSIZE, None
        if min(sh, sw, dh, dw) < 1:
            return EBADARG, None
        products = [*g, -pt, -pl, max(kh - 1, 0) * dh, max(kw - 1, 0) * dw, max(oh - 1, 0) * sh, max(ow - 1, 0) * sw,
                    n * h * w * c, n * oh * ow * oc]
        if not pool:
            products += [kh * kw * c, kh * kw * oc, kh * kw * c * oc]
        if max(products) > GEOM_MAX:
            return EBADSIZE, None
        if pool and min(kh, h) * min(kw, w) > INT32_MAX:
            return EBADSIZE, None
        if not pool and (kh * kw * c > INT32_MAX or oc > INT32_MAX or c > INT32_MAX):
            return EBADSIZE, None
        if depthwise and (oc != 0 if c == 0 else oc % c):
            return EBADSIZE, None
        return OK, g + [0]

    def _conv(self, name, dt, geom, depthwise, count_of, *bufs, zero_out=False):
        st, g = self._geom(geom, depthwise, pool="pool" in name)
        if st:
            return st
        if dt not in (F32, F64):
            return EBADDTYPE
        n = count_of(g)
        return self.launch(f"{name}_{SUF[dt]}", n, *bufs, g)

    @staticmethod
    def _outs(g):
        return g[0] * g[7] * g[8] * g[6]

    @staticmethod
    def _ins(g):
        return g[0] * g[1] * g[2] * g[3]

    @staticmethod
    def _pool_outs(g):
        return g[0] * g[7] * g[8] * g[3]

    #: convolutions as im2col + matmul (fast where matmul is); else the direct kernels
    _conv_gemm = True
    #: the largest column matrix built at once (whole images per block)
    COL_BYTES = 128 << 20

    def _gemm_plan(self, dt, geom):
        """(status, geometry, images per block) for the im2col route, or a status to stop on."""
        st, g = self._geom(geom)
        if st:
            return st, None, 0
        if dt not in (F32, F64):
            return EBADDTYPE, None, 0
        n, oh, ow, k = g[0], g[7], g[8], g[4] * g[5] * g[3]
        per_image = max(1, oh * ow * k * SIZE[dt])
        return OK, g, max(1, min(n, self.COL_BYTES // per_image))

    def _matmul_into(self, dt, ta, tb, m, n, k, a, b, out):
        if not self.has_kernel(f"matmul_{SUF[dt]}"):
            return EBADDTYPE
        if m * n == 0:
            return OK
        if k == 0:
            return self._fill_bits(out, SIZE[dt], m * n, 0)
        return self._matmul(dt, ta, tb, 1, m, n, k, a, 0, b, 0, out)

    def conv2d(self, dt, geom, x, w, y):
        if not self._conv_gemm:
            return self._conv("conv2d", dt, geom, False, self._outs, x, w, y)
        st, g, per = self._gemm_plan(dt, geom)
        if st:
            return st
        n, oc, plane, k, es = g[0], g[6], g[7] * g[8], g[4] * g[5] * g[3], SIZE[dt]
        if n * plane * oc == 0:
            return OK
        for n0 in range(0, n, per):
            nb = min(per, n - n0)
            rows = nb * plane
            col = self._buffer(rows * k * es)
            self.launch(f"im2col_{SUF[dt]}", rows, x, col, g, n0, rows)
            dst = y if nb == n else self._buffer(rows * oc * es)
            self._matmul_into(dt, 0, 0, rows, oc, k, col, w, dst)
            if dst is not y:
                self._copy(dst.mem, y.mem, rows * oc * es, 0, n0 * plane * oc * es)
        return OK

    def conv2d_backprop_input(self, dt, geom, dy, w, dx):
        if not self._conv_gemm:
            return self._conv("conv2d_backprop_input", dt, geom, False, self._ins, dy, w, dx)
        st, g, per = self._gemm_plan(dt, geom)
        if st:
            return st
        n, h, wd, c, oc, plane, k, es = g[0], g[1], g[2], g[3], g[6], g[7] * g[8], g[4] * g[5] * g[3], SIZE[dt]
        if n * h * wd * c == 0:
            return OK
        for n0 in range(0, n, per):
            nb = min(per, n - n0)
            rows = nb * plane
            dcol = self._buffer(rows * k * es)
            # dcol [rows, k] = dy [rows, oc] @ w^T (w is [k, oc])
            dy_b = dy if nb == n else self._slice(dy, n0 * plane * oc * es, rows * oc * es)
            self._matmul_into(dt, 0, 1, rows, k, oc, dy_b, w, dcol)
            self.launch(f"col2im_{SUF[dt]}", nb * h * wd, dcol, dx, g, n0, nb)
        return OK

    def conv2d_backprop_filter(self, dt, geom, x, dy, dw):
        if not self._conv_gemm:
            return self._conv("conv2d_backprop_filter", dt, geom, False, lambda g: g[4] * g[5] * g[3] * g[6], x, dy,
                              dw)
        st, g, per = self._gemm_plan(dt, geom)
        if st:
            return st
        n, oc, plane, k, es = g[0], g[6], g[7] * g[8], g[4] * g[5] * g[3], SIZE[dt]
        if k * oc == 0:
            return OK
        if n * plane == 0:
            return self._fill_bits(dw, es, k * oc, 0)
        part = None
        for n0 in range(0, n, per):
            nb = min(per, n - n0)
            rows = nb * plane
            col = self._buffer(rows * k * es)
            self.launch(f"im2col_{SUF[dt]}", rows, x, col, g, n0, rows)
            dy_b = dy if nb == n else self._slice(dy, n0 * plane * oc * es, rows * oc * es)
            # dw [k, oc] (+)= col^T [k, rows] @ dy [rows, oc]
            if n0 == 0:
                self._matmul_into(dt, 1, 0, k, oc, rows, col, dy_b, dw)
            else:
                part = part or self._buffer(k * oc * es)
                self._matmul_into(dt, 1, 0, k, oc, rows, col, dy_b, part)
                self.binary_flat(BINARY_OPS.index("add"), dt, dw, 0, part, 0, dw, k * oc)
        return OK

    def _slice(self, buf, offset, nbytes):
        """A copy of bytes [offset, offset + nbytes) of a buffer (a block of rows)."""
        out = self._buffer(nbytes)
        self._copy(buf.mem, out.mem, nbytes, offset, 0)
        return out

    def depthwise_conv2d(self, dt, geom, x, w, y):
        return self._conv("depthwise_conv2d", dt, geom, True, self._outs, x, w, y)

    def depthwise_conv2d_backprop_input(self, dt, geom, dy, w, dx):
        return self._conv("depthwise_conv2d_backprop_input", dt, geom, True, self._ins, dy, w, dx)

    def depthwise_conv2d_backprop_filter(self, dt, geom, x, dy, dw):
        return self._conv("depthwise_conv2d_backprop_filter", dt, geom, True, lambda g: g[4] * g[5] * g[6], x, dy,
                          dw)

    def max_pool2d(self, dt, geom, x, y):
        return self._conv("max_pool2d", dt, geom, False, self._pool_outs, x, y)

    def max_pool2d_grad(self, dt, geom, x, dy, dx):
        return self._conv("max_pool2d_grad", dt, geom, False, self._ins, x, dy, dx)

    def max_pool2d_grad_grad(self, dt, geom, x, ggx, ggy):
        return self._conv("max_pool2d_grad_grad", dt, geom, False, self._pool_outs, x, ggx, ggy)

    def avg_pool2d(self, dt, geom, x, y):
        return self._conv("avg_pool2d", dt, geom, False, self._pool_outs, x, y)

    def avg_pool2d_grad(self, dt, geom, dy, dx):
        return self._conv("avg_pool2d_grad", dt, geom, False, self._ins, dy, dx)


    # ----------------------------------------------------------------- linalg
    @staticmethod
    def _la_check(dt, batch, n, k=0):
        if dt not in (F32, F64):
            return EBADDTYPE
        if batch < 0 or n < 0 or k < 0 or n > INT32_MAX or k > INT32_MAX:
            return EBADSIZE
        return OK

    def lu(self, dt, batch, n, a, piv, info):
        st = self._la_check(dt, batch, n)
        return st or self.launch(f"lu_{SUF[dt]}", batch, a, piv, info, n)

    def lu_solve(self, dt, trans, batch, n, nrhs, lu, piv, b):
        st = self._la_check(dt, batch, n, nrhs)
        if st or n == 0 or nrhs == 0:
            return st
        return self.launch(f"lu_solve_{SUF[dt]}", batch * nrhs, lu, piv, b, 1 if trans else 0,
                         batch, n, nrhs)

    def lu_inverse(self, dt, batch, n, lu, piv):
        st = self._la_check(dt, batch, n)
        if st or n == 0 or batch == 0:
            return st
        flag = self._flag_buffer()
        with self._lock:
            self._reset_flag(1, 0x7FFFFFFF7FFFFFFF)
            self.launch(f"lu_singular_{SUF[dt]}", batch * n, lu, batch, n, flag)
            singular = int(self._read_words(flag, 1, np.int32)[0]) != 0x7FFFFFFF
        if singular:
            return ERANGE
        x = self._buffer(batch * n * n * SIZE[dt])
        self.launch(f"eye_{SUF[dt]}", batch * n * n, x, batch, n)
        self.launch(f"lu_solve_{SUF[dt]}", batch * n, lu, piv, x, 0, batch, n, n)
        self._copy(x.mem, lu.mem, batch * n * n * SIZE[dt])
        return OK

    def lu_det(self, dt, batch, n, lu, piv, det, sign, logabs):
        st = self._la_check(dt, batch, n)
        return st or self.launch(f"lu_det_{SUF[dt]}", batch, lu, piv, det, sign, logabs, batch, n)

    def cholesky(self, dt, batch, n, a, info):
        st = self._la_check(dt, batch, n)
        return st or self.launch(f"cholesky_{SUF[dt]}", batch, a, info, n)

    def triangular_solve(self, dt, lower, trans, batch, n, nrhs, a, a_bstride, b):
        st = self._la_check(dt, batch, n, nrhs)
        if st or n == 0 or nrhs == 0:
            return st
        return self.launch(f"triangular_solve_{SUF[dt]}", batch * nrhs, a, a_bstride, b,
                         1 if lower else 0, 1 if trans else 0, batch, n, nrhs)

    # ------------------------------------------------- LAPACK decompositions (host)
    # svd, eigh, qr, lu_perm and expm run csrc/lapack.c on the host: the operands are
    # copied to host memory, the CPU library computes, the results are copied back.  An
    # iterative decomposition (divide and conquer SVD, syevd) has no kernel here worth
    # its size; the copies cost two transfers of the matrices.
    def _host_lapack(self, kernel, ins, outs, args):
        """Call ``tpf_<kernel>`` of the CPU library on host copies: ``ins``/``outs`` are
        (handle, nbytes) pairs (outputs are read back too, as the kernels update work
        copies in place); ``args`` lays out the call with ``"in0"``, ``"out1"``... naming
        the buffers and anything else passed as is."""
        from . import cpu

        cpu._preload_openblas()
        from . import _cpu

        host = {}
        for tag, pairs in (("in", ins), ("out", outs)):
            for i, (h, nbytes) in enumerate(pairs):
                arr = np.empty(max(int(nbytes), 1), np.uint8)
                if nbytes and not _is_null(h):
                    self._read(h.mem, arr[:nbytes])
                host[f"{tag}{i}"] = arr
        call = [(_cpu.ffi.from_buffer(host[a]) if isinstance(a, str) and a in host else a) for a in args]
        st = getattr(_cpu.lib, f"tpf_{kernel}")(*call)
        if st:
            return st
        for i, (h, nbytes) in enumerate(outs):
            if nbytes and not _is_null(h):
                self._write(h.mem, host[f"out{i}"][:nbytes])
        return OK

    def svd(self, dt, batch, m, n, a, s, u, v, full_matrices, compute_uv, info):
        st = self._la_check(dt, batch, m, n)
        if st:
            return st
        es, k = SIZE[dt], min(m, n)
        uc, vr = (m, n) if full_matrices else (k, k)
        uv = bool(compute_uv)
        outs = [(a, batch * m * n * es), (s, batch * k * es), (u, batch * m * uc * es if uv else 0),
                (v, batch * n * vr * es if uv else 0), (info, batch * 4)]
        return self._host_lapack("svd", [], outs, args=[dt, batch, m, n, "out0", "out1", "out2", "out3",
                                                        int(full_matrices), int(uv), "out4"])

    def eigh(self, dt, batch, n, a, w, compute_v, info):
        st = self._la_check(dt, batch, n)
        if st:
            return st
        es = SIZE[dt]
        outs = [(a, batch * n * n * es), (w, batch * n * es), (info, batch * 4)]
        return self._host_lapack("eigh", [], outs, args=[dt, batch, n, "out0", "out1", int(compute_v), "out2"])

    def qr(self, dt, batch, m, n, a, q, r, full_matrices):
        st = self._la_check(dt, batch, m, n)
        if st:
            return st
        es, k = SIZE[dt], min(m, n)
        qc = m if full_matrices else k
        outs = [(a, batch * m * n * es), (q, batch * m * qc * es), (r, batch * qc * n * es)]
        return self._host_lapack("qr", [], outs, args=[dt, batch, m, n, "out0", "out1", "out2",
                                                       int(full_matrices)])

    def lu_perm(self, batch, n, piv, perm, perm_dt):
        if perm_dt not in (I32, I64):
            return EBADDTYPE
        if batch < 0 or n < 0 or n > INT32_MAX:
            return EBADSIZE
        return self._host_lapack("lu_perm", [(piv, batch * n * 4)], [(perm, batch * n * SIZE[perm_dt])],
                                 args=[batch, n, "in0", "out0", perm_dt])

    def expm(self, dt, batch, n, a, out):
        st = self._la_check(dt, batch, n)
        if st:
            return st
        nbytes = batch * n * n * SIZE[dt]
        return self._host_lapack("expm", [(a, nbytes)], [(out, nbytes)], args=[dt, batch, n, "in0", "out0"])
