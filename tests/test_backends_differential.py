"""Every backend present against the CPU backend, through tapeflow's ops.

Each op spec of ``tests/specs/`` runs its cases once on ``cpu:0`` and once on each
accelerator backend present (``opencl:0``, ``cuda:0``); results must live on the
device they were computed on and agree with the CPU's: exactly for integer,
boolean and exact specs (and for the seeded random ops, which share the Philox
contract), within the spec's tolerances otherwise.  Then random shapes, dtypes
and broadcasts go through the element-wise, reduction, matmul and shape ops.

A backend that this machine does not have is skipped, saying so.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.kernels as K
from opspec import ALL, FLOATS, INTS, load_specs, uniform

SPECS = load_specs()


def _present(name: str) -> bool:
    try:
        K.get_backend(name)
        return True
    except K.BackendUnavailable:
        return False
    except Exception:  # noqa: BLE001 - a driver that fails to start counts as absent; test_opencl/test_cuda say why
        return False


BACKENDS = [pytest.param(name, marks=pytest.mark.skipif(not _present(name), reason=f"this machine has no {name} "
                                                                                      "device (or no backend)"))
            for name in ("opencl", "cuda")]


def _cases(spec, dtype, rng):
    cases = spec.sample(rng, dtype)
    return cases if isinstance(cases, list) else [cases]


def _run_on(device, spec, args, kwargs):
    with tf.device(device):
        try:
            return spec.run(tf, args, kwargs), None
        except Exception as e:  # noqa: BLE001 - the same error on both devices is agreement too
            return None, e


def _exact(spec, dtype) -> bool:
    return spec.exact or dtype in INTS or dtype == "bool" or spec.op.startswith(("random", "stateless_random")) \
        and not ("normal" in spec.op or "truncated" in spec.op)


# ops whose result goes to the device their arguments name, not to the scope's
_EXPLICIT_DEVICE = {"copy_to_device"}


def _compare(spec, dtype, cpu_out, dev_out, device, where):
    if isinstance(cpu_out, (tuple, list)):
        assert isinstance(dev_out, (tuple, list)) and len(dev_out) == len(cpu_out), where
        for c, d in zip(cpu_out, dev_out):
            _compare(spec, dtype, c, d, device, where)
        return
    if not isinstance(cpu_out, tf.Tensor):
        assert dev_out == cpu_out, where
        return
    assert isinstance(dev_out, tf.Tensor), where
    want = cpu_out.device if spec.op in _EXPLICIT_DEVICE else device
    assert dev_out.device == want, f"{where}: the result lives on {dev_out.device}, not {want}"
    assert dev_out.dtype == cpu_out.dtype and tuple(dev_out.shape) == tuple(cpu_out.shape), where
    c, d = np.asarray(cpu_out.numpy()), np.asarray(dev_out.numpy())
    if _exact(spec, dtype) or c.dtype.kind in "biu":
        np.testing.assert_array_equal(d, c, err_msg=where)
    else:
        rtol, atol = spec.tolerances(dtype)
        rtol, atol = max(rtol, 1e-6 if dtype != "float64" else 1e-12), max(atol, 1e-6 if dtype != "float64" else 1e-12)
        np.testing.assert_allclose(d.astype(np.float64), c.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=where)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_spec_matches_cpu(backend, spec):
    device = f"{backend}:0"
    for dtype in spec.dtypes:
        rng = np.random.default_rng(zlib.crc32(f"{spec}-{dtype}-backends".encode()))
        for args, kwargs in _cases(spec, dtype, rng):
            where = f"{spec} on {device}, dtype={dtype} shapes={[np.shape(a) for a in args]} kwargs={kwargs}"
            cpu_out, cpu_err = _run_on("cpu:0", spec, args, kwargs)
            dev_out, dev_err = _run_on(device, spec, args, kwargs)
            if cpu_err is not None:
                assert dev_err is not None and type(dev_err) is type(cpu_err), \
                    f"{where}: the CPU raised {cpu_err!r}, {device} {'raised ' + repr(dev_err) if dev_err else 'not'}"
                assert str(dev_err) == str(cpu_err), where
                continue
            assert dev_err is None, f"{where}: {device} raised {dev_err!r}, the CPU did not"
            _compare(spec, dtype, cpu_out, dev_out, device, where)


# ---- random shapes, dtypes and broadcasts ------------------------------------------------

def _random_broadcast_pair(rng):
    rank = int(rng.integers(0, 5))
    out = [int(d) for d in rng.integers(0, 5, rank)]
    a = [d if rng.random() < 0.6 else 1 for d in out]
    b = [d if rng.random() < 0.6 else 1 for d in out]
    a = a[int(rng.integers(0, rank + 1)):] if rng.random() < 0.3 else a
    b = b[int(rng.integers(0, rank + 1)):] if rng.random() < 0.3 else b
    return tuple(a), tuple(b)


_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "less", "greater_equal"]
_FLOAT_BINARY = ["truediv", "pow", "squared_difference", "atan2"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_broadcasts_dtypes_and_reductions(backend):
    device = f"{backend}:0"
    rng = np.random.default_rng(20260101)
    for trial in range(60):
        sa, sb = _random_broadcast_pair(rng)
        dtype = str(rng.choice(FLOATS + INTS))
        x, y = uniform(rng, sa, dtype), uniform(rng, sb, dtype)
        if dtype in FLOATS:
            y = np.where(np.abs(y) < 0.1, 0.5, y).astype(dtype)
        ops = _BINARY + (_FLOAT_BINARY if dtype in FLOATS else [])
        name = ops[trial % len(ops)]
        if name in ("pow", "atan2"):
            x = np.abs(x).astype(dtype) + 0.5
        where = f"{name} {dtype} {sa} {sb} on {device}"
        with tf.device("cpu:0"):
            c = getattr(tf, name)(tf.constant(x), tf.constant(y))
        xd, yd = tf.constant(x), tf.constant(y)
        with tf.device(device):
            d = getattr(tf, name)(xd, yd)           # inputs made on the CPU: copied to the device
        assert d.device == device and d.shape == c.shape and d.dtype == c.dtype, where
        _close(d, c, dtype, where)
        # a reduction of the result over random axes
        if d.shape.rank:
            axes = sorted({int(a) for a in rng.integers(0, d.shape.rank, int(rng.integers(1, d.shape.rank + 1)))})
            red = ["reduce_sum", "reduce_max", "reduce_min"][trial % 3] if c.dtype != tf.bool else "reduce_any"
            with tf.device("cpu:0"):
                rc = getattr(tf, red)(c, axis=axes, keepdims=bool(trial % 2))
            with tf.device(device):
                rd = getattr(tf, red)(d, axis=axes, keepdims=bool(trial % 2))
            assert rd.device == device, where
            _close(rd, rc, dtype, f"{red} {axes} of {where}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_matmuls_transposes_and_slices(backend):
    device = f"{backend}:0"
    rng = np.random.default_rng(7)
    for trial in range(30):
        dtype = ("float32", "float64", "int32", "int64")[trial % 4]
        batch = tuple(int(b) for b in rng.integers(1, 4, int(rng.integers(0, 3))))
        m, n, k = (int(v) for v in rng.integers(0, 70, 3))
        ta, tb = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        a = uniform(rng, batch + ((k, m) if ta else (m, k)), dtype, -2, 2)
        b = uniform(rng, ((n, k) if tb else (k, n)), dtype, -2, 2)
        where = f"matmul {dtype} {a.shape} {b.shape} ta={ta} tb={tb} on {device}"
        outs = []
        for dev in ("cpu:0", device):
            with tf.device(dev):
                p = tf.matmul(tf.constant(a), tf.constant(b), transpose_a=ta, transpose_b=tb)
                t = tf.transpose(p)[..., ::2] if p.shape.rank else p
                outs.append((p, t))
        for (c, d), what in zip(zip(*outs), ("product", "strided view of its transpose")):
            assert d.device == device, where
            _close(d, c, dtype, f"{what} of {where}", rtol=1e-5 if dtype == "float32" else None)


def _close(d, c, dtype, where, rtol=None):
    dn, cn = np.asarray(d.numpy()), np.asarray(c.numpy())
    if dtype in FLOATS and cn.dtype.kind == "f":
        tol = rtol or (2e-6 if dtype == "float32" else 1e-12)
        np.testing.assert_allclose(dn, cn, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(dn, cn, err_msg=where)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_dtype_round_trips_through_the_device(backend):
    device = f"{backend}:0"
    rng = np.random.default_rng(3)
    for dtype in ALL + ("float16", "bfloat16"):
        x = uniform(rng, (3, 0, 2) if dtype == "bool" else (7, 3), dtype)
        t = tf.constant(x)
        on = t.to(device)
        assert on.device == device and on.dtype == t.dtype
        back = on.cpu()
        assert back.device == "cpu:0"
        assert np.asarray(back.numpy()).tobytes() == np.asarray(x).tobytes(), dtype
