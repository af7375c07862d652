"""The CPU kernel table on a device, part 3: kernels that run on the host (documented fallbacks).

Each entry copies its operands to host memory, calls the CPU library's ``tpf_<name>`` (the same C
code the CPU backend runs) and copies the results back to the device: the segment max/min/prod
and tensor_scatter_nd_max/min (``csrc/segment.c``: a scatter with a max/min/product needs atomics per
dtype on a device, and these ops are rare outside graph networks) and the CTC loss (``csrc/ctc.c``: a sequential
dynamic program per sequence), the gamma, Poisson and binomial draws (``csrc/random_dist.c``: rejection
samplers with a data-dependent number of tries per element), and the fused LSTM cell (``csrc/rnn.c``).  The cost
is one transfer of the inputs and one of the outputs.

>>> from tapeflow.kernels.gpu_entries_host import HostEntries
>>> callable(HostEntries.segment_reduce)
True
"""
from __future__ import annotations

import numpy as np

from .gpu_common import EBADSIZE, OK, _is_null
from .gpu_contract import I64, SIZE

SEGMENT_OPS = ("max", "min", "prod")


class HostEntries:
    """Entries of the kernel table that a GPU backend runs with the CPU library on host copies."""

    def _host_call(self, kernel, ins, outs, args, inout=None):
        """``tpf_<kernel>`` of the CPU library on host copies.  ``ins``/``outs`` are (device handle, nbytes)
        pairs; ``args`` lays out the call, ``"in0"``, ``"out1"``... naming the host copies, other values as
        they are (a NumPy array passes as its buffer).  ``inout`` maps an output to the input whose host copy it
        starts from (an update in place).  Outputs are copied back only when the kernel succeeds."""
        from . import cpu

        cpu._preload_openblas()
        from . import _cpu

        lib, ffi = _cpu.lib, _cpu.ffi
        host = {}
        for tag, pairs in (("in", ins), ("out", outs)):
            for i, (h, nbytes) in enumerate(pairs):
                arr = np.empty(max(int(nbytes), 1), np.uint8)
                if nbytes and tag == "in":
                    self._read(h.mem, arr[:nbytes])
                host[f"{tag}{i}"] = arr
        for o, i in (inout or {}).items():
            host[f"out{o}"] = host[f"in{i}"]
        call = []
        for a in args:
            if a is None:
                a = ffi.NULL
            elif isinstance(a, str) and a in host:
                a = host[a]
            if isinstance(a, np.ndarray):  # int64 arrays (a kernel's bad-index slot) as int64_t *, bytes as void *
                a = ffi.cast("int64_t *" if a.dtype == np.int64 else "void *", ffi.from_buffer(a))
            call.append(a)
        st = getattr(lib, f"tpf_{kernel}")(*call)
        if st:
            return st
        for i, (h, nbytes) in enumerate(outs):
            if nbytes:
                self._write(h.mem, host[f"out{i}"][:nbytes])
        return OK

    def segment_reduce(self, op, dt, lim_dt, idx_dt, data, idx, out, nidx, nseg, inner, bad):
        """Segment max (op 0), min (1) or product (2) of ``data`` [nidx, inner] by ``idx`` [nidx] into
        ``out`` [nseg, inner], on the host (csrc/segment.c)."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        ies = 8 if idx_dt == I64 else 4
        if min(nidx, nseg, inner) < 0:
            return self._host_call("segment_reduce", [], [], [op, dt, lim_dt, idx_dt, np.empty(1, np.uint8),
                                                              np.empty(1, np.uint8), np.empty(1, np.uint8),
                                                              nidx, nseg, inner, bad])
        return self._host_call("segment_reduce", [(data, nidx * inner * es), (idx, nidx * ies)],
                               [(out, nseg * inner * es)],
                               [op, dt, lim_dt, idx_dt, "in0", "in1", "out0", nidx, nseg, inner, bad])

    def scatter_nd_reduce(self, op, dt, idx_dt, idx, upd, out, n, k, dims, inner, bad):
        """``out[idx[t]] = max`` (op 0) or ``min`` (op 1) of itself and ``upd[t]``, on the host (csrc/segment.c);
        ``out`` holds the tensor on entry and is read and written back."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        ies = 8 if idx_dt == I64 else 4
        dims_arr = np.asarray(dims, np.int64) if not isinstance(dims, np.ndarray) else dims
        rows = 1
        for d in dims_arr[:k]:
            rows *= int(d)
        if min(n, k, inner) < 0 or rows < 0:
            return self._host_call("scatter_nd_reduce", [], [], [op, dt, idx_dt, np.empty(1, np.uint8),
                                                                 np.empty(1, np.uint8), np.empty(1, np.uint8),
                                                                 n, k, dims_arr, inner, bad])
        nbytes = rows * inner * es
        return self._host_call("scatter_nd_reduce", [(idx, n * k * ies), (upd, n * inner * es), (out, nbytes)],
                               [(out, nbytes)],
                               [op, dt, idx_dt, "in0", "in1", "out0", n, k, dims_arr, inner, bad], inout={0: 2})

    def ctc_loss(self, dt, logits, labels, label_len, logit_len, T, B, C, L, blank, loss, grad, bad):
        """The CTC loss of each sequence (and d loss / d logits when ``grad`` is not NULL), on the host
        (csrc/ctc.c): a sequential dynamic program per sequence."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        with_grad = not _is_null(grad)
        if min(T, B, C, L) < 0:
            return self._host_call("ctc_loss", [], [], [dt, np.empty(1, np.uint8), np.empty(1, np.int32),
                                                        np.empty(1, np.int32), np.empty(1, np.int32), T, B, C, L,
                                                        blank, np.empty(1, np.uint8), None, bad])
        outs = [(loss, B * es)] + ([(grad, T * B * C * es)] if with_grad else [])
        return self._host_call("ctc_loss", [(logits, T * B * C * es), (labels, B * L * 4), (label_len, B * 4),
                                            (logit_len, B * 4)], outs,
                               [dt, "in0", "in1", "in2", "in3", T, B, C, L, blank, "out0",
                                "out1" if with_grad else None, bad])

    def optim_update(self, kind, dt, flags, var, s0, s1, s2, grad, n, h0, h1, h2, h3, h4):
        """One fused optimizer step of a variable and its slots in place (``csrc/optim.c``), on the host: the
        framework runs it on CPU variables only (a device variable's step is the op-by-op update)."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        if n < 0:
            return self._host_call("optim_update", [], [], [kind, dt, flags, None, None, None, None, None, n,
                                                            h0, h1, h2, h3, h4])
        nb = n * es
        bufs = [b for b in (var, s0, s1, s2) if not _is_null(b)]
        call, k = [], 0
        for b in (var, s0, s1, s2):
            if _is_null(b):
                call.append(None)
            else:
                call.append(f"out{k}")
                k += 1
        return self._host_call("optim_update", [(b, nb) for b in bufs] + [(grad, nb)], [(b, nb) for b in bufs],
                               [kind, dt, flags, *call, f"in{len(bufs)}", n, h0, h1, h2, h3, h4],
                               inout={i: i for i in range(len(bufs))})

    def lstm_cell(self, dt, batch, units, z, c, h_out, c_out):
        """One LSTM step's gates (``csrc/rnn.c``) on the host: ``z`` [batch, 4 * units] and ``c`` [batch, units] in,
        the new ``h`` and ``c`` [batch, units] out (a device tensor's step costs a transfer each way)."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        if min(batch, units) < 0:
            return self._host_call("lstm_cell", [], [], [dt, batch, units, None, None, None, None])
        n = batch * units * es
        return self._host_call("lstm_cell", [(z, 4 * n), (c, n)], [(h_out, n), (c_out, n)],
                               [dt, batch, units, "in0", "in1", "out0", "out1"])

    def lstm_cell_grad(self, dt, batch, units, z, c, c_new, gh, gc, dz, dc):
        """The LSTM step's backward pass (``csrc/rnn.c``) on the host: ``z`` [batch, 4 * units], ``c``, ``c_new``,
        ``gh``, ``gc`` [batch, units] in; ``dz`` [batch, 4 * units] and ``dc`` [batch, units] out."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        if min(batch, units) < 0:
            return self._host_call("lstm_cell_grad", [], [], [dt, batch, units] + [None] * 7)
        n = batch * units * es
        return self._host_call("lstm_cell_grad", [(z, 4 * n), (c, n), (c_new, n), (gh, n), (gc, n)],
                               [(dz, 4 * n), (dc, n)],
                               [dt, batch, units, "in0", "in1", "in2", "in3", "in4", "out0", "out1"])

    def gru_cell(self, dt, batch, units, reset_after, xw, hu, h, h_out):
        """One GRU step (``csrc/rnn.c``) on the host: ``xw``, ``hu`` [batch, 3 * units] and ``h`` [batch, units]
        in, the new ``h`` out."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        if min(batch, units) < 0:
            return self._host_call("gru_cell", [], [], [dt, batch, units, reset_after] + [None] * 4)
        n = batch * units * es
        return self._host_call("gru_cell", [(xw, 3 * n), (hu, 3 * n), (h, n)], [(h_out, n)],
                               [dt, batch, units, reset_after, "in0", "in1", "in2", "out0"])

    def gru_cell_grad(self, dt, batch, units, reset_after, xw, hu, h, gout, dxw, dhu, dh):
        """The GRU step's backward pass (``csrc/rnn.c``) on the host: ``dxw``, ``dhu`` [batch, 3 * units] and
        ``dh`` [batch, units] from the step's inputs and the new ``h``'s gradient ``gout``."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        if min(batch, units) < 0:
            return self._host_call("gru_cell_grad", [], [], [dt, batch, units, reset_after] + [None] * 7)
        n = batch * units * es
        return self._host_call("gru_cell_grad", [(xw, 3 * n), (hu, 3 * n), (h, n), (gout, n)],
                               [(dxw, 3 * n), (dhu, 3 * n), (dh, n)],
                               [dt, batch, units, reset_after, "in0", "in1", "in2", "in3", "out0", "out1", "out2"])

    # ---- gamma, Poisson and binomial draws (csrc/random_dist.c): rejection samplers, on the host ----------

    def random_gamma(self, dt, alpha, nalpha, nsamples, out, key, stream):
        """Gamma(alpha, 1) draws ``out`` [nsamples, nalpha] on the host (csrc/random_dist.c)."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        if min(nalpha, nsamples) < 0:
            return EBADSIZE
        return self._host_call("random_gamma", [(alpha, nalpha * es)], [(out, nalpha * nsamples * es)],
                               [dt, "in0", nalpha, nsamples, "out0", key, stream])

    def random_gamma_grad(self, dt, alpha, nalpha, x, n, out):
        """d x / d alpha of gamma draws ``x`` [n] of ``alpha`` [nalpha], on the host (csrc/random_dist.c)."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        if min(nalpha, n) < 0:
            return EBADSIZE
        return self._host_call("random_gamma_grad", [(alpha, nalpha * es), (x, n * es)], [(out, n * es)],
                               [dt, "in0", nalpha, "in1", n, "out0"])

    def random_poisson(self, dt, rate, nrate, nsamples, out_dt, out, key, stream):
        """Poisson(rate) counts ``out`` [nsamples, nrate] in ``out_dt`` on the host (csrc/random_dist.c)."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        os_ = SIZE[out_dt] if 0 <= out_dt < len(SIZE) else 1
        if min(nrate, nsamples) < 0:
            return EBADSIZE
        return self._host_call("random_poisson", [(rate, nrate * es)], [(out, nrate * nsamples * os_)],
                               [dt, "in0", nrate, nsamples, out_dt, "out0", key, stream])

    def random_binomial(self, dt, counts, probs, n, out_dt, out, key, stream):
        """Binomial(counts, probs) counts ``out`` [n] in ``out_dt`` on the host (csrc/random_dist.c)."""
        es = SIZE[dt] if 0 <= dt < len(SIZE) else 1
        os_ = SIZE[out_dt] if 0 <= out_dt < len(SIZE) else 1
        if n < 0:
            return EBADSIZE
        return self._host_call("random_binomial", [(counts, n * es), (probs, n * es)], [(out, n * os_)],
                               [dt, "in0", "in1", n, out_dt, "out0", key, stream])
