"""The array ops (array_ops, slice_ops) are runner primitives: tracing infers their outputs without
running a kernel, eager runs record the same attrs as before, and values needed on the host are a
TypeError while tracing."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.dispatch import hooks
from tapeflow.core.runner import PRIMITIVES, tracing

ARRAY_PRIMITIVES = ["broadcast_to", "concat", "eye", "fill", "identity", "pad", "range", "rank", "reshape", "reverse",
                    "select", "shape", "size", "slice", "split", "stack", "strided_slice", "strided_slice_grad",
                    "tile", "transpose", "unstack", "where"]


def test_every_array_op_is_a_runner_primitive():
    assert [n for n in ARRAY_PRIMITIVES if n not in PRIMITIVES] == []


def _cases(x, c):
    """(op name, call, expected shapes) for every array primitive."""
    return [
        ("fill", lambda: tf.fill([2, 3], 1.5), [(2, 3)]),
        ("eye", lambda: tf.eye(2, 3, batch_shape=[4]), [(4, 2, 3)]),
        ("range", lambda: tf.range(1.0, 2.0, 0.25), [(4,)]),
        ("range", lambda: tf.range(5), [(5,)]),
        ("shape", lambda: tf.shape(x), [(3,)]),
        ("size", lambda: tf.size(x, out_type=tf.int64), [()]),
        ("rank", lambda: tf.rank(x), [()]),
        ("reshape", lambda: tf.reshape(x, [4, -1]), [(4, 6)]),
        ("identity", lambda: tf.identity(x), [(2, 3, 4)]),
        ("transpose", lambda: tf.transpose(x, [2, 0, 1]), [(4, 2, 3)]),
        ("broadcast_to", lambda: tf.broadcast_to(x, [5, 2, 3, 4]), [(5, 2, 3, 4)]),
        ("tile", lambda: tf.tile(x, [1, 2, 3]), [(2, 6, 12)]),
        ("reverse", lambda: tf.reverse(x, [0, 2]), [(2, 3, 4)]),
        ("concat", lambda: tf.concat([x, x[:, :1]], 1), [(2, 4, 4)]),
        ("stack", lambda: tf.stack([x, x], axis=-1), [(2, 3, 4, 2)]),
        ("split", lambda: tf.split(x, [1, -1], axis=2), [(2, 3, 1), (2, 3, 3)]),
        ("unstack", lambda: tf.unstack(x, axis=1), [(2, 4)] * 3),
        ("pad", lambda: tf.pad(x, [[1, 0], [0, 2], [1, 1]], constant_values=2.0), [(3, 5, 6)]),
        ("slice", lambda: tf.slice(x, [1, 0, 1], [1, -1, 2]), [(1, 3, 2)]),
        ("strided_slice", lambda: tf.strided_slice(x, [0, 2], [2, 0], [1, -1]), [(2, 2, 4)]),
        ("strided_slice", lambda: x[1, ::2, None], [(2, 1, 4)]),
        ("strided_slice_grad", lambda: tf.strided_slice_grad([2, 3, 4], [1], [2], [1], tf.ones([1, 3, 4])),
         [(2, 3, 4)]),
        ("select", lambda: tf.where(c, x, 0.0), [(2, 3, 4)]),
        ("where", lambda: tf.where(c), [(None, 3)]),
    ]


def test_tracing_infers_the_array_ops_without_running_kernels():
    x = tf.reshape(tf.range(24, dtype=tf.float32), [2, 3, 4])
    c = x > 5.0
    for name, call, shapes in _cases(x, c):
        with tracing() as graph:
            out = call()
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        assert [o._h for o in outs] == [None] * len(outs), f"{name}: a kernel ran while tracing"
        assert [tuple(o.shape) for o in outs] == shapes, name
        assert [n.prim.name for n in graph.nodes][-1:] == [name], (name, graph.nodes)
        if name != "where":  # the one data-dependent shape
            eager = call()
            eager = list(eager) if isinstance(eager, (list, tuple)) else [eager]
            assert [tuple(e.shape) for e in eager] == shapes, name
            assert [e.dtype for e in eager] == [o.dtype for o in outs], name


def test_a_data_dependent_dimension_is_none_and_reshape_keeps_it_unknown():
    with tracing():
        idx = tf.where(tf.constant([[True, False], [True, True]]))
        flat = tf.reshape(idx, [-1])
    assert tuple(idx.shape) == (None, 2) and idx.dtype == tf.int64 and tuple(flat.shape) == (None,)


def test_eager_runs_record_the_attrs_the_gradient_rules_read():
    x = tf.reshape(tf.range(6, dtype=tf.float32), [2, 3])
    seen = []
    sub = hooks.subscribe(lambda op, inputs, out, attrs: seen.append((op, attrs)))
    try:
        tf.reshape(x, [3, -1])
        tf.transpose(x)
        tf.tile(x, [2, 1])
        tf.reverse(x, [1, 0])
        tf.concat([x, x], -1)
        tf.stack([x, x], 1)
        tf.split(x, 3, axis=1)
        tf.unstack(x)
        tf.pad(x, [[1, 0], [0, 1]], "SYMMETRIC")
        tf.slice(x, [0, 1], [-1, 1])
        x[1:, ::-2]
        tf.where(x > 2.0, x, -x)
    finally:
        sub.remove()
    ss = {"begin": (1, 0), "end": (0, 0), "strides": (1, -2), "begin_mask": 2, "end_mask": 3, "ellipsis_mask": 0,
          "new_axis_mask": 0, "shrink_axis_mask": 0}
    assert [s for s in seen if s[0] != "greater" and s[0] != "negative"] == [
        ("reshape", {"shape": (3, 2)}), ("transpose", {"perm": (1, 0)}), ("tile", {"multiples": (2, 1)}),
        ("reverse", {"axis": (0, 1)}), ("concat", {"axis": 1}), ("stack", {"axis": 1}),
        ("split", {"num_or_size_splits": (1, 1, 1), "axis": 1}), ("unstack", {"num": 2, "axis": 0}),
        ("pad", {"paddings": ((1, 0), (0, 1)), "mode": "SYMMETRIC", "constant_values": 0}),
        ("slice", {"begin": (0, 1), "size": (2, 1)}), ("strided_slice", ss), ("select", None)]


def test_host_values_of_symbolic_tensors_are_a_type_error_naming_the_op():
    with tracing():
        v = tf.reduce_sum(tf.fill([2], 1.0))
        n = tf.size(tf.fill([3], 1))
        assert tuple(tf.range(n).shape) == (None,)  # a bound known when the graph runs: a run-time length
        for call, op in ((lambda: tf.fill([2], v), "Fill"),
                         (lambda: tf.pad(tf.fill([2], 1.0), [[1, 1]], constant_values=v), "PadV2"),
                         (lambda: tf.reshape(tf.fill([4], 1.0), tf.shape(tf.fill([2, 2], 1.0))), "Reshape")):
            with pytest.raises(TypeError, match=rf"needs a static value while tracing.*\[Op:{op}\]"):
                call()


def test_device_scopes_place_the_array_ops():
    x = tf.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    for dev in tf.config.list_logical_devices():
        with tf.device(dev.name):
            want = tf.constant(0.0).device
            for out in (tf.reshape(x, [3, 2]), tf.transpose(x), tf.concat([x, x], 0), tf.fill([2], 1.0), tf.range(3),
                        tf.where(x > 1.0), x[:, 1], tf.shape(x)):
                assert out.device == want, (dev, out)
