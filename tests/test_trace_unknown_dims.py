"""Every op traces with unknown dimensions (None), as tf.function's input_signature and Keras' Input make them.

Walks the per-op specs (tests/specs/*.py, primitives and composite ops alike) and traces each case twice
(``runner.tracing``) with its array inputs replaced by symbolic tensors: once with every dimension unknown,
once with only the first (batch) dimension unknown; arguments that are attributes (shapes, axes, sizes given
as Python values) stay concrete.  The traced outputs must have eager's rank, and every dimension the trace
knows must equal eager's: a dimension that depends on an unknown one is None, never a wrong number, and no
op fails with Python arithmetic on None.  The op's own file (packages/core/src/tapeflow/core/ops/<family>.py:
its wrapper's checks or its primitive's ``infer``) is what to fix when a case fails.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
import tapeflow as tf
from opspec import load_specs
from tapeflow.core import devices as _device
from tapeflow.core.dispatch import REGISTRY
from tapeflow.core.runner import Graph, symbolic, tracing

SPECS = load_specs()

# Ops whose result needs a value, or a dimension, that a trace with unknown dimensions does not have: they raise
# a typed error naming the op (no other failure is allowed), and only in these cases.
NEEDS_KNOWN = {
    "squeeze": "without axis, which axes have size 1 decides the result's rank (pass axis=)",
    # tf.image (core's image_ops): sizes that follow the image's own height, width or channels
    "pad_to_bounding_box": "the padding is the target size less the image's height and width",
    "central_crop": "the crop box is a fraction of the image's height and width",
    "resize_with_crop_or_pad": "the crop and the padding follow the image's height and width",
    "resize_with_pad": "the resized size follows the image's aspect ratio",
    "ssim": "the Gaussian window is one depthwise filter per channel",
    "sobel_edges": "the filter pair is one depthwise filter per channel",
    "extract_patches": "the patch grid follows the image's height and width",
    "unstack": "the number of outputs is the size of the unstacked axis (pass num=)",
    "gather_nd": "the length of the index tuples (indices' last axis) decides the result's rank",
    "segment_sum": "the number of segments is the largest sorted id: a value (use unsorted_segment_sum)",
    "segment_max": "as segment_sum: the number of segments is the largest sorted id",
    "segment_min": "as segment_sum: the number of segments is the largest sorted id",
    "segment_prod": "as segment_sum: the number of segments is the largest sorted id",
    "segment_mean": "as segment_sum: the number of segments is the largest sorted id",
    "bincount": "without minlength == maxlength the output length is max(arr) + 1: a value",
    "confusion_matrix": "without num_classes it is max(labels, predictions) + 1: a value",
    "boolean_mask": "a mask of rank > 1 over several unknown dimensions flattens them into one reshape target "
                    "with several unknowns",
    "dropout": "the random mask has x's shape: unknown dimensions need a noise_shape with 1 there",
    # tf.signal (core's fft_ops): the transform length is the kernel's plan, an attribute known when traced
    "rfft": "the transform length is the innermost size (or fft_length, which crops or pads to it)",
    "rfft2d": "as rfft: the transform lengths are the innermost sizes",
    "rfft3d": "as rfft: the transform lengths are the innermost sizes",
    "irfft": "the output length is 2 * (m - 1) of the innermost size m (or fft_length, which crops or pads to it)",
    "irfft2d": "as irfft: the transform lengths follow the innermost sizes",
    "irfft3d": "as irfft: the transform lengths follow the innermost sizes",
    "frame": "the number of frames follows the framed axis' length",
    "overlap_and_add": "the output length is (frames - 1) * frame_step + frame_length",
    "stft": "as frame: the number of frames follows the signal's length",
    "inverse_stft": "as overlap_and_add: the output length follows the number of frames",
    "fftshift": "the shift is half the shifted axis' length",
    "ifftshift": "the shift is half the shifted axis' length",
    "dct": "as rfft: the transform length is the innermost size",
    "idct": "as rfft: the transform length is the innermost size",
    # core's everyday_ops
    "dynamic_stitch": "the output length is max(indices) + 1: a value",
    "broadcast_dynamic_shape": "the result's length is the longer shape vector's length",
    "space_to_batch_nd": "the blocks are a reshape with one unknown dimension at most (the batch)",
    "batch_to_space": "the blocks are a reshape with one unknown dimension at most (the batch)",
}
# Specs whose input builder (not the op) needs the matrix side: _sym_spd (tests/specs/linalg.py) adds
# tf.eye(n) with n = the last dimension, so the last two dimensions stay known and the others are unknown.
KEEP_LAST_TWO = {"cholesky", "logdet"}
# Ops whose output size depends on input values: they trace to None there (the check below allows any None).
DATA_DEPENDENT = {
    "repeat": "the output length is the sum of the repeat counts",
    "where": "with one argument: the number of true entries",
    "boolean_mask": "the number of true entries of the mask",
}


def _unknown(a, batch_only, keep_last=0):
    if isinstance(a, np.ndarray):
        nd = a.ndim
        shape = tuple(d if i >= nd - keep_last or (batch_only and i > 0) else None for i, d in enumerate(a.shape))
        return symbolic(shape, tf.constant(a).dtype, _device.default_device())
    if isinstance(a, (list, tuple)) and a and all(isinstance(v, np.ndarray) for v in a):
        return type(a)(_unknown(v, batch_only, keep_last) for v in a)
    return a


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _flat(v)]
    return [x]


def _cases(spec, dtype, rng):
    cases = spec.sample(rng, dtype)
    return (cases if isinstance(cases, list) else [cases])[:6]


def _file_of(spec):
    d = REGISTRY.get(spec.op)
    mod = getattr(d.fn, "__module__", "?") if d is not None else "?"
    return mod.replace("tapeflow.core.ops.", "packages/core/src/tapeflow/core/ops/") + ".py"


@pytest.mark.parametrize("batch_only", [False, True], ids=["all-unknown", "batch-unknown"])
@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_op_traces_with_unknown_dimensions(spec, batch_only):
    for dtype in spec.dtypes[:3]:
        rng = np.random.default_rng(zlib.crc32(f"unknown-{spec}-{dtype}".encode()))
        for args, kwargs in _cases(spec, dtype, rng):
            want = _flat(spec.run(tf, args, kwargs))
            sym = [_unknown(a, batch_only, 2 if spec.op in KEEP_LAST_TWO else 0) for a in args]
            where = (f"{spec} dtype={dtype} shapes={[np.shape(a) if isinstance(a, np.ndarray) else a for a in args]}"
                     f" kwargs={kwargs} traced with {'the first' if batch_only else 'every'} dimension unknown "
                     f"(fix {_file_of(spec)})")
            try:
                with tracing(Graph()):
                    got = _flat(spec.run(tf, sym, kwargs))
            except (tf.errors.InvalidArgumentError, TypeError) as e:
                if spec.op in NEEDS_KNOWN and "[Op:" in str(e) and "NoneType" not in str(e):
                    continue  # the allowed typed refusal (see NEEDS_KNOWN)
                raise AssertionError(f"{where}: {type(e).__name__}: {e}") from e
            assert len(got) == len(want), f"{where}: {len(got)} outputs traced, {len(want)} eager"
            for g, w in zip(got, want):
                if any(isinstance(a, np.ndarray) for a in _flat(args)):  # (with none, the result is a constant)
                    assert g._h is None, f"{where}: a kernel ran while tracing (the output has a value)"
                assert len(g.shape) == len(w.shape), f"{where}: traced shape {g.shape} has not eager's rank {w.shape}"
                wrong = [i for i, (t, e) in enumerate(zip(g.shape, w.shape)) if t is not None and t != e]
                assert not wrong, f"{where}: traced shape {g.shape} != eager {w.shape} at axes {wrong}"
                assert g.dtype == w.dtype, f"{where}: traced dtype {g.dtype.name} != eager {w.dtype.name}"


def _sym(*shape, dtype=tf.float32):
    return symbolic(tuple(shape), dtype, _device.default_device())


def test_known_dimensions_stay_known():
    with tracing():
        assert tuple(tf.nn.conv2d(_sym(None, 8, 8, 3), tf.ones([3, 3, 3, 4]), 1, "SAME").shape) == (None, 8, 8, 4)
        assert tuple(tf.nn.conv2d(_sym(None, 8, 8, 3), tf.ones([3, 3, 3, 4]), 2, "VALID").shape) == (None, 3, 3, 4)
        assert tuple(tf.nn.max_pool2d(_sym(None, 8, 8, 3), 2, 2, "VALID").shape) == (None, 4, 4, 3)
        assert tuple(tf.matmul(_sym(None, 3), tf.ones([3, 4])).shape) == (None, 4)
        assert tuple(tf.matmul(_sym(None, 2, 3), _sym(None, 3, 5)).shape) == (None, 2, 5)
        assert tuple(tf.reduce_mean(_sym(None, 3, None), axis=1).shape) == (None, None)
        assert tuple(tf.reduce_sum(_sym(None, 3), axis=0).shape) == (3,)
        assert tuple((_sym(None, 1) + _sym(1, 5)).shape) == (None, 5)
        assert tuple((_sym(None, 5) * _sym(3, None)).shape) == (3, 5)
        assert tuple(_sym(None, 8)[:, 1:3].shape) == (None, 2)
        assert tuple(_sym(None, 8)[0].shape) == (8,)
        assert tuple(tf.transpose(_sym(None, 8, 8, 3)).shape) == (3, 8, 8, None)
        assert tuple(tf.reshape(_sym(None, 2, 3), [-1, 6]).shape) == (None, 6)
        assert tuple(tf.concat([_sym(None, 3), _sym(2, 3)], 0).shape) == (None, 3)
        assert tuple(tf.concat([_sym(None, 3), _sym(2, None)], 1).shape) == (2, None)
        assert tuple(tf.zeros_like(_sym(None, 3)).shape) == (None, 3)
        assert [tuple(t.shape) for t in tf.split(_sym(None, 6), 3, axis=1)] == [(None, 2)] * 3


def test_wrappers_still_check_what_is_known():
    with tracing():
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"inner dimensions differ.*\[Op:MatMul\]"):
            tf.matmul(_sym(None, 3), tf.ones([4, 5]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"incompatible shapes.*\[Op:AddV2\]"):
            _sym(None, 3) + _sym(None, 4)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:Reshape\]"):
            tf.reshape(_sym(2, 3), [-1, 4])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:Reshape\]"):
            tf.reshape(_sym(None, 3), [-1, -1])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:Unpack\]"):
            tf.unstack(_sym(None, 3))
    with tracing():
        assert len(tf.unstack(_sym(None, 3), num=2)) == 2


def test_symbolic_tensors_behave_as_graph_tensors():
    t = _sym(None, 3)
    assert t.shape == tf.TensorShape([None, 3]) and t.shape[0] is None and t.shape.as_list() == [None, 3]
    assert repr(t) == str(t) == "<tf.Tensor shape=(None, 3) dtype=float32>"
    for use, instead in [(bool, "tf.cond"), (int, "tapeflow ops"), (float, "tapeflow ops"), (len, r"tf.shape\(t\)"),
                         (iter, "tf.unstack"), (lambda v: v.numpy(), "tapeflow ops"),
                         (np.asarray, "tapeflow ops")]:
        with pytest.raises(TypeError, match=rf"symbolic tensor \(shape=\(None, 3\), dtype=float32\) inside a graph "
                                            rf"function.*use {instead}"):
            use(t)
    s = _sym(dtype=tf.bool)
    with pytest.raises(TypeError, match=r"its truth value is not available; use tf.cond"):
        if s:
            pass
    with tracing() as graph:
        n = tf.shape(t)
    assert n._h is None and tuple(n.shape) == (2,) and [nd.prim.name for nd in graph.nodes] == ["shape"]
