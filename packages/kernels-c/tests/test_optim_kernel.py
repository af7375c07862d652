"""tpf_optim_update (csrc/optim.c): one optimizer step of a variable and its slots, in place.

The CPU kernel against the formulas evaluated in NumPy in the same dtype and order (bitwise), and the
device backends' host entry (gpu_entries_host.optim_update) against the CPU kernel.
"""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow.kernels as K
from tapeflow.kernels import opencl

F32, F64 = K.DTYPE_CODES["float32"], K.DTYPE_CODES["float64"]


def _reference(kind, flags, w, s, g, h):
    """The step in NumPy, operation by operation as csrc/optim.c's header states it."""
    t = w.dtype.type
    c = [t(x) for x in h]
    w, s = w.copy(), [x.copy() for x in s]
    with np.errstate(all="ignore"):
        if kind == 0:
            st = g * c[0]
            if not flags & 1:
                w = w - st
            else:
                s[0] = s[0] * c[1] - st
                w = w + (s[0] * c[1] - st if flags & 2 else s[0])
        elif kind == 1:
            s[0] = s[0] + (g - s[0]) * c[1]
            s[1] = s[1] + (g * g - s[1]) * c[2]
            v = s[1]
            if flags & 1:
                s[2] = np.where(np.isnan(s[2]) | (s[2] > v), s[2], v)
                v = s[2]
            w = w - (s[0] * c[0]) / (np.sqrt(v) + c[3])
        elif kind == 2:
            s[0] = s[0] * c[1] + (g * g) * c[2]
            if flags & 2:
                s[1] = s[1] * c[1] + g * c[2]
                den = (s[0] - s[1] * s[1]) + c[4]
            else:
                den = s[0] + c[4]
            inc = (g * c[0]) / np.sqrt(den)
            if flags & 1:
                s[2] = s[2] * c[3] + inc
                w = w - s[2]
            else:
                w = w - inc
        else:
            s[0] = s[0] + g * g
            w = w - (g * c[0]) / np.sqrt(s[0] + c[1])
    return w, s


CASES = [(0, 0, 0), (0, 1, 1), (0, 3, 1), (1, 0, 2), (1, 1, 3), (2, 0, 1), (2, 1, 3), (2, 2, 2), (2, 3, 3),
         (3, 0, 1)]  # kind, flags, slots used
H = (0.01, 0.9, 0.001, 0.5, 1e-7)


def _operands(dtype, n, nslots):
    rng = np.random.default_rng(3)
    w, g = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    slots = [np.abs(rng.standard_normal(n)).astype(dtype) * 0.1 for _ in range(3)]
    return w, g, slots[:nslots]


def _call(be, kind, dt, flags, w, slots, g, n, put, null):
    hw, hs = put(w), [put(x) for x in slots]
    rs = hs + [null] * (3 - len(slots))
    if kind == 2 and flags == 1:  # RMSprop with momentum, not centered: s1 is NULL, s2 the momentum
        rs = [hs[0], null, hs[1]]
    return be.optim_update(kind, dt, flags, hw, rs[0], rs[1], rs[2], put(g), n, *H), [hw] + hs


@pytest.mark.parametrize("kind,flags,nslots", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [0, 7, 70001])
def test_cpu_kernel_matches_the_formulas(kind, flags, nslots, dtype, n):
    cpu = K.get_backend("cpu")
    if kind == 2 and flags == 1:
        nslots = 2  # v and the momentum slot
    w, g, slots = _operands(dtype, n, nslots)
    ref_slots = list(slots)
    if kind == 2 and flags == 1:
        ref_slots = [slots[0], np.zeros_like(slots[0]), slots[1]]
    want_w, want_s = _reference(kind, flags, w, ref_slots, g, H)
    if kind == 2 and flags == 1:
        want_s = [want_s[0], want_s[2]]
    got_w, got_s = w.copy(), [x.copy() for x in slots]
    st, _ = _call(cpu, kind, F32 if dtype == "float32" else F64, flags, got_w, got_s, g, n,
                  cpu.ffi.from_buffer, cpu.ffi.NULL)
    assert st == 0
    np.testing.assert_array_equal(got_w, want_w)
    for a, b in zip(got_s, want_s, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(opencl.device_count() == 0, reason="this machine has no OpenCL device")
def test_device_host_entry_matches_the_cpu_kernel():
    try:
        dev = K.get_backend("opencl")
    except K.BackendUnavailable:
        dev = opencl.OpenCLBackend()
    cpu = K.get_backend("cpu")
    for kind, flags, nslots in CASES:
        if kind == 2 and flags == 1:
            nslots = 2
        w, g, slots = _operands("float32", 33, nslots)
        cw, cs = w.copy(), [x.copy() for x in slots]
        assert _call(cpu, kind, F32, flags, cw, cs, g, 33, cpu.ffi.from_buffer, cpu.ffi.NULL)[0] == 0
        st, hs = _call(dev, kind, F32, flags, w, slots, g, 33, lambda a: dev.from_numpy(a)[0], None)
        assert st == 0
        for h, want in zip(hs, [cw] + cs, strict=True):
            np.testing.assert_array_equal(dev.to_numpy(h, None, (33,), np.float32), want)
    assert dev.optim_update(1, F32, 0, None, None, None, None, None, -1, *H) == 1  # TPF_EBADSIZE, as the CPU
