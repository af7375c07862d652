"""The CPU kernel table on a device, part 4: complex numbers and FFTs, run on the host (documented fallbacks).

Each entry copies its operands to host memory, calls the CPU library's ``tpf_<name>`` (``csrc/complex.c`` and
``csrc/fft.c``: the same C code the CPU backend runs) and copies the results back
(``HostEntries._host_call``).  The cost is one transfer of the inputs and one of the outputs per call; the
FFT's plans (twiddles, Bluestein's chirp) are built on the host per call as on the CPU.  Casts to and
from complex64/complex128 go the same way (``cast`` in ``gpu_entries``); data movement of complex tensors
(copies, concat, pad, fill) runs on the device as 8-byte elements.

>>> from tapeflow.kernels.gpu_entries_complex import ComplexEntries
>>> callable(ComplexEntries.fft)
True
"""
from __future__ import annotations

import numpy as np

from .gpu_common import EBADDTYPE, EBADSIZE

C64, C128 = 10, 11
_CSIZE = {C64: 8, C128: 16}
_RSIZE = {2: 4, 3: 8}          # float32, float64
_NO = np.empty(1, np.uint8)    # a placeholder buffer for calls that fail their checks on the host


def _ints(values, n):
    return np.asarray([int(v) for v in list(values)[:n]], np.int64)


class ComplexEntries:
    """Entries of the kernel table for complex tensors, run with the CPU library on host copies."""

    def cbinary(self, op, dt, nd, shape, a, astr, b, bstr, out):
        """``out = a (op) b`` over complex elements broadcast through strides (csrc/complex.c)."""
        es = _CSIZE.get(dt)
        if es is None or not 1 <= nd <= 12:
            return self._host_call("cbinary", [], [], [op, dt, nd, _ints(shape, 1), _NO, _ints(astr, 1), _NO,
                                                       _ints(bstr, 1), _NO])
        sh, sa, sb = _ints(shape, nd), _ints(astr, nd), _ints(bstr, nd)
        if (sh < 0).any():
            return EBADSIZE
        span = lambda st: int(sum((d - 1) * s for d, s in zip(sh, st)) + 1) if sh.all() else 0  # noqa: E731
        n = int(np.prod(sh))
        return self._host_call("cbinary", [(a, span(sa) * es), (b, span(sb) * es)], [(out, n * es)],
                               [op, dt, nd, sh, "in0", sa, "in1", sb, "out0"])

    def cunary(self, op, dt, x, out, n):
        """``out = op(x)`` for ``n`` complex elements: negative, conj, exp, square, reciprocal."""
        es = _CSIZE.get(dt, 1)
        if dt not in _CSIZE or n < 0:
            return self._host_call("cunary", [], [], [op, dt, _NO, _NO, n])
        return self._host_call("cunary", [(x, n * es)], [(out, n * es)], [op, dt, "in0", "out0", n])

    def cpart(self, op, dt, x, out, n):
        """The real part, imaginary part, modulus or argument of ``n`` complex elements (a real output)."""
        if dt not in _CSIZE or n < 0:
            return self._host_call("cpart", [], [], [op, dt, _NO, _NO, n])
        es = _CSIZE[dt]
        return self._host_call("cpart", [(x, n * es)], [(out, n * es // 2)], [op, dt, "in0", "out0", n])

    def cmake(self, dt, re, im, out, n):
        """``out = re + i im`` for ``n`` elements (parts of the complex dtype's precision)."""
        if dt not in _CSIZE or n < 0:
            return self._host_call("cmake", [], [], [dt, _NO, _NO, _NO, n])
        es = _CSIZE[dt]
        return self._host_call("cmake", [(re, n * es // 2), (im, n * es // 2)], [(out, n * es)],
                               [dt, "in0", "in1", "out0", n])

    def creduce_sum(self, dt, x, out, outer, r, inner):
        """The sum over the middle axis of complex ``x`` [outer, r, inner]."""
        if dt not in _CSIZE or min(outer, r, inner) < 0:
            return self._host_call("creduce_sum", [], [], [dt, _NO, _NO, outer, r, inner])
        es = _CSIZE[dt]
        return self._host_call("creduce_sum", [(x, outer * r * inner * es)], [(out, outer * inner * es)],
                               [dt, "in0", "out0", outer, r, inner])

    def cmatmul(self, dt, ta, tb, batch, m, n, k, a, a_bstride, b, b_bstride, out):
        """Batched complex matmul (cgemm/zgemm of the host's OpenBLAS)."""
        if dt not in _CSIZE or min(batch, m, n, k) < 0:
            return self._host_call("cmatmul", [], [], [dt, ta, tb, batch, m, n, k, _NO, a_bstride, _NO, b_bstride,
                                                       _NO])
        es = _CSIZE[dt]
        na = ((batch - 1) * a_bstride + m * k) if batch else 0
        nb = ((batch - 1) * b_bstride + k * n) if batch else 0
        return self._host_call("cmatmul", [(a, na * es), (b, nb * es)], [(out, batch * m * n * es)],
                               [dt, ta, tb, batch, m, n, k, "in0", a_bstride, "in1", b_bstride, "out0"])

    def fft(self, dt, inverse, outer, n, inner, x, out):
        """The complex FFT along the middle axis of ``x`` [outer, n, inner] (csrc/fft.c)."""
        if dt not in _CSIZE or min(outer, n, inner) < 0:
            return self._host_call("fft", [], [], [dt, inverse, outer, n, inner, _NO, _NO])
        nb = outer * n * inner * _CSIZE[dt]
        return self._host_call("fft", [(x, nb)], [(out, nb)], [dt, inverse, outer, n, inner, "in0", "out0"])

    def rfft(self, dt, outer, n, inner, x, out):
        """Real ``x`` [outer, n, inner] to its non-negative frequencies [outer, n // 2 + 1, inner]."""
        if dt not in _RSIZE or min(outer, n, inner) < 0:
            return self._host_call("rfft", [], [], [dt, outer, n, inner, _NO, _NO]) if dt in _RSIZE else EBADDTYPE
        es = _RSIZE[dt]
        return self._host_call("rfft", [(x, outer * n * inner * es)], [(out, outer * (n // 2 + 1) * inner * 2 * es)],
                               [dt, outer, n, inner, "in0", "out0"])

    def irfft(self, dt, outer, n, inner, x, out):
        """Non-negative frequencies [outer, n // 2 + 1, inner] to the real signal [outer, n, inner]."""
        if dt not in _RSIZE or min(outer, n, inner) < 0:
            return self._host_call("irfft", [], [], [dt, outer, n, inner, _NO, _NO]) if dt in _RSIZE else EBADDTYPE
        es = _RSIZE[dt]
        return self._host_call("irfft", [(x, outer * (n // 2 + 1) * inner * 2 * es)], [(out, outer * n * inner * es)],
                               [dt, outer, n, inner, "in0", "out0"])
