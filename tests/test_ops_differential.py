"""Every registered op against NumPy, on random shapes, broadcasts and dtypes."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.core
from opspec import load_specs

SPECS = load_specs()


def _cases(spec, dtype, rng):
    cases = spec.sample(rng, dtype)
    return cases if isinstance(cases, list) else [cases]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_matches_numpy(spec):
    for dtype in spec.dtypes:
        rng = np.random.default_rng(zlib.crc32(f"{spec}-{dtype}".encode()))
        for args, kwargs in _cases(spec, dtype, rng):
            got = spec.run(tf, args, kwargs)
            want = spec.ref(*args, **kwargs)
            _compare(spec, dtype, got, want, args, kwargs)


def _compare(spec, dtype, got, want, args, kwargs):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), f"{spec}: {len(want)} outputs expected"
        for g, w in zip(got, want):
            _compare(spec, dtype, g, w, args, kwargs)
        return
    assert isinstance(got, tf.Tensor), f"{spec}: returned {type(got).__name__}, not a Tensor"
    want = np.asarray(want)
    g = got.numpy()
    where = f"{spec} dtype={dtype} shapes={[np.shape(a) for a in args]} kwargs={kwargs}"
    assert tuple(got.shape) == want.shape, f"{where}: shape {tuple(got.shape)} != {want.shape}"
    if want.dtype != object:
        assert got.dtype == tf.as_dtype(want.dtype), f"{where}: dtype {got.dtype} != {want.dtype}"
    rtol, atol = spec.tolerances(dtype)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(np.asarray(g), want, err_msg=where)
    else:
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=where)


def test_registry_coverage():
    """An op in core's registry without a spec fails the suite."""
    covered = {s.op for s in SPECS}
    missing = sorted(set(tapeflow.core.REGISTRY) - covered)
    assert not missing, f"ops without a differential spec in tests/specs/: {missing}"


def test_specs_name_real_ops():
    unknown = sorted({s.op for s in SPECS} - set(tapeflow.core.REGISTRY))
    assert not unknown, f"specs for ops that are not registered: {unknown}"
