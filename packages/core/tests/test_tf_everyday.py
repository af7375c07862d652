"""The everyday top-level tf.* names (issue 14): TensorFlow 2's behaviour, eagerly and inside tf.function.

The expected values are TensorFlow 2.21's (checked with the reference install, /tmp/briefs4/tf_everyday.py)."""
from __future__ import annotations

import io
import logging

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError


# ---- map_fn / scan / foldl / foldr --------------------------------------------------------------

def test_map_fn_eager_nested_and_signature():
    assert tf.map_fn(lambda x: x * 2, tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    a, b = tf.map_fn(lambda p: (p[0], p[1] + 1), (tf.constant([1, 2]), tf.constant([3, 4])))
    assert a.numpy().tolist() == [1, 2] and b.numpy().tolist() == [4, 5]
    out = tf.map_fn(lambda x: tf.cast(x, tf.float32), tf.constant([1, 2]), fn_output_signature=tf.float32)
    assert out.dtype == tf.float32 and out.numpy().tolist() == [1.0, 2.0]
    out = tf.map_fn(lambda x: {"s": tf.reduce_sum(x)}, tf.ones([3, 4]),
                    fn_output_signature={"s": tf.TensorSpec([], tf.float32)})
    assert out["s"].numpy().tolist() == [4.0, 4.0, 4.0]
    assert tf.map_fn(lambda x: x, tf.zeros([0, 3])).shape == (0,)  # TensorFlow's shape for no elements
    # the older dtype= spelling
    assert tf.map_fn(lambda x: tf.cast(x, tf.int64), tf.constant([1, 2]), dtype=tf.int64).dtype == tf.int64


def test_map_fn_wrong_dtype_and_arguments():
    with pytest.raises(InvalidArgumentError, match="TensorArray dtype is int32 but Op is trying to write dtype fl"):
        tf.map_fn(lambda x: tf.cast(x, tf.float32), tf.constant([1, 2]))
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tf.map_fn(lambda x: x, tf.constant(1.0))
    with pytest.raises(ValueError, match="same first dimension"):
        tf.map_fn(lambda p: p[0], (tf.ones([2]), tf.ones([3])))
    with pytest.raises(ValueError, match="parallel_iterations"):
        tf.map_fn(lambda x: x, tf.ones([2]), parallel_iterations=0)
    with pytest.raises(TypeError, match="swap_memory"):
        tf.map_fn(lambda x: x, tf.ones([2]), swap_memory="yes")
    with pytest.raises(TypeError, match="fn_output_signature"):
        tf.map_fn(lambda x: x, tf.ones([2]), fn_output_signature="nope")
    with pytest.raises(ValueError, match="structure"):
        tf.map_fn(lambda x: (x, x), tf.ones([2]))


def test_map_fn_hints_change_no_result():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    want = tf.map_fn(tf.reduce_sum, x).numpy()
    got = tf.map_fn(tf.reduce_sum, x, parallel_iterations=1, swap_memory=True, back_prop=False).numpy()
    np.testing.assert_array_equal(got, want)


def test_map_fn_in_tf_function_is_one_loop_with_unknown_length():
    calls = []

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        calls.append(1)
        return tf.map_fn(lambda r: r[0] * r[1], x)

    assert f(tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist() == [2.0, 12.0]
    assert f(tf.constant([[2.0, 2.0], [3.0, 4.0], [1.0, 5.0]])).numpy().tolist() == [4.0, 12.0, 5.0]
    assert len(calls) == 1  # traced once: the loop runs in the graph
    graph = f.get_concrete_function().graph
    assert "while_loop" in {n.prim.name for n in graph.nodes}


def test_scan_foldl_foldr():
    assert tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3])).numpy().tolist() == [1, 3, 6]
    assert tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]), initializer=10, reverse=True).numpy().tolist() == \
        [16, 15, 13]
    assert tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]), reverse=True).numpy().tolist() == [6, 5, 3]
    assert int(tf.foldl(lambda a, x: a - x, tf.constant([1, 2, 3]))) == -4
    assert int(tf.foldr(lambda a, x: a - x, tf.constant([1, 2, 3]))) == 0
    assert int(tf.foldl(lambda a, x: a + x, tf.constant([1, 2]), initializer=5)) == 8
    # a structured accumulator: (running sum, running product)
    s, p = tf.scan(lambda a, x: (a[0] + x, a[1] * x), tf.constant([1.0, 2.0, 3.0]),
                   initializer=(tf.constant(0.0), tf.constant(1.0)))
    assert s.numpy().tolist() == [1.0, 3.0, 6.0] and p.numpy().tolist() == [1.0, 2.0, 6.0]
    with pytest.raises(TypeError, match="keep its dtype"):
        tf.foldl(lambda a, x: tf.cast(a, tf.float32), tf.constant([1, 2]), initializer=tf.constant(0))


def test_scan_and_fold_in_tf_function():
    @tf.function
    def f(x):
        return tf.scan(lambda a, v: a * v, x, initializer=tf.constant(1.0)), tf.foldr(lambda a, v: a - v, x)

    s, r = f(tf.constant([2.0, 3.0, 4.0]))
    assert s.numpy().tolist() == [2.0, 6.0, 24.0] and float(r) == -1.0


# ---- scopes, state ------------------------------------------------------------------------------

def test_name_scope_prefixes_variables():
    with tf.name_scope("s"):
        v = tf.Variable(1.0, name="v")
        assert tf.get_current_name_scope() == "s"
        with tf.name_scope("t") as scope:
            assert scope == "s/t/" and tf.get_current_name_scope() == "s/t"
            w = tf.Variable(1.0, name="w")
        with tf.name_scope("abs/") as scope:
            assert scope == "abs/" and tf.get_current_name_scope() == "abs"
        with tf.name_scope("") as scope:
            assert scope == "" and tf.get_current_name_scope() == ""
    assert v.name == "s/v:0" and w.name == "s/t/w:0"
    assert tf.get_current_name_scope() == "" and tf.Variable(1.0, name="u").name == "u:0"
    with pytest.raises(ValueError, match="must be a string"):
        tf.name_scope(3)
    with pytest.raises(ValueError, match="not a valid scope name"):
        tf.name_scope("a b")


def test_executing_eagerly_and_inside_function():
    assert tf.executing_eagerly() and not tf.inside_function()
    seen = []

    @tf.function
    def f(x):
        seen.append((tf.executing_eagerly(), tf.inside_function()))
        with tf.init_scope():
            seen.append((tf.executing_eagerly(), tf.inside_function()))
        return x + 1

    f(tf.constant(1.0))
    assert seen == [(False, True), (True, False)]


def test_is_tensor_and_get_static_value():
    assert tf.is_tensor(tf.constant(1.0)) and tf.is_tensor(tf.Variable(1.0))
    assert tf.is_tensor(tf.ragged.constant([[1], [2, 3]]))
    assert not tf.is_tensor(np.ones(2)) and not tf.is_tensor(1.0) and not tf.is_tensor([1])
    assert tf.get_static_value(3) == 3 and tf.get_static_value([1, 2]) == [1, 2]
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2]
    assert tf.get_static_value(tf.Variable(1.0)) is None
    seen = []

    @tf.function
    def f(x):
        seen.append(tf.get_static_value(x))
        return x

    f(tf.constant(1.0))
    assert seen == [None]


# ---- py_function / numpy_function ---------------------------------------------------------------

def test_py_function_eager_and_several_results():
    assert float(tf.py_function(lambda x: x * 2, [tf.constant(2.0)], Tout=tf.float32)) == 4.0
    a, b = tf.py_function(lambda x: (x + 1, tf.cast(x, tf.int32)), [tf.constant(1.5)], Tout=[tf.float32, tf.int32])
    assert float(a) == 2.5 and int(b) == 1
    with pytest.raises(InvalidArgumentError, match="dtype int32 but Tout says float32"):
        tf.py_function(lambda x: tf.cast(x, tf.int32), [tf.constant(1.0)], Tout=tf.float32)
    with pytest.raises(TypeError, match="Tout"):
        tf.py_function(lambda x: x, [tf.constant(1.0)], Tout=None)


def test_py_function_in_graph_calls_python_each_run():
    calls = []

    def host(x):
        calls.append(float(x.numpy()[0]))  # an eager tensor: .numpy() works
        return x + 1

    @tf.function
    def f(x):
        return tf.py_function(host, [x], Tout=tf.float32) * 2

    assert f(tf.constant([1.0, 2.0])).numpy().tolist() == [4.0, 6.0]
    assert f(tf.constant([5.0, 2.0])).numpy().tolist() == [12.0, 6.0]
    assert calls == [1.0, 5.0]  # one call per run, none while tracing


def test_py_function_tensorspec_states_the_traced_shape():
    @tf.function
    def f(x):
        y = tf.py_function(lambda a: tf.reshape(a, [2, 2]), [x], Tout=tf.TensorSpec([2, 2], tf.float32))
        assert tuple(y.shape) == (2, 2)
        return tf.reduce_sum(y, axis=1)

    assert f(tf.constant([1.0, 2.0, 3.0, 4.0])).numpy().tolist() == [3.0, 7.0]


def test_numpy_function_eager_and_graph():
    calls = []

    def host(a):
        assert isinstance(a, np.ndarray)
        calls.append(1)
        return np.sort(a)

    assert tf.numpy_function(host, [tf.constant([3, 1, 2])], Tout=tf.int32).numpy().tolist() == [1, 2, 3]
    f = tf.function(lambda x: tf.numpy_function(host, [x], Tout=tf.int32))
    assert f(tf.constant([9, 7, 8])).numpy().tolist() == [7, 8, 9]
    assert f(tf.constant([2, 3, 1])).numpy().tolist() == [1, 2, 3]
    assert len(calls) == 3
    with pytest.raises(InvalidArgumentError, match="Tout lists 2"):
        tf.numpy_function(lambda a: a, [tf.constant(1)], Tout=[tf.int32, tf.int32])


# ---- checks, grouping, logging, version ---------------------------------------------------------

def test_ensure_shape_static_and_runtime():
    assert tf.ensure_shape(tf.ones([2, 3]), [None, 3]).shape == (2, 3)
    with pytest.raises(InvalidArgumentError, match=r"Shape of tensor input \[2,3\] is not compatible with expected "
                                                   r"shape \[\?,4\]. \[Op:EnsureShape\]"):
        tf.ensure_shape(tf.ones([2, 3]), [None, 4])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        y = tf.ensure_shape(x, [3])
        assert tuple(y.shape) == (3,)  # the check also states the shape to the trace
        return y * 2

    assert f(tf.constant([1.0, 2.0, 3.0])).numpy().tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(InvalidArgumentError, match=r"input \[2\] is not compatible with expected shape \[3\]"):
        f(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"\[Op:EnsureShape\]"):
        tf.ensure_shape(tf.ones([2]), [2.5])


def test_assert_eager_and_graph():
    assert tf.Assert(tf.constant(True), ["never"]) is None
    with pytest.raises(InvalidArgumentError, match="Summarized data: x is\n1, 2"):
        tf.Assert(tf.constant(1) > 2, ["x is", tf.constant([1, 2])])
    with pytest.raises(InvalidArgumentError, match="allowed: a scalar bool"):
        tf.Assert(tf.constant([True, False]), ["x"])

    @tf.function
    def f(x):
        tf.Assert(tf.reduce_all(x > 0), ["x is", x])
        return x * 2

    assert f(tf.constant([1, 2])).numpy().tolist() == [2, 4]
    with pytest.raises(InvalidArgumentError, match=r"assertion failed: \[x is\] \[-1 -2\]"):
        f(tf.constant([-1, -2]))


def test_top_level_assert_aliases():
    assert tf.assert_equal is tf.debugging.assert_equal and tf.assert_rank is tf.debugging.assert_rank
    with pytest.raises(InvalidArgumentError):
        tf.assert_less(tf.constant([1, 5]), 3)
    tf.assert_greater(tf.constant([4, 5]), 3)


def test_no_op_group_control_dependencies():
    assert tf.no_op() is None and tf.group(tf.constant(1.0), [tf.constant(2.0)]) is None
    with pytest.raises(TypeError, match="tensors or operations"):
        tf.group("x")
    v = tf.Variable(1.0)
    with tf.control_dependencies([v.assign(2.0)]):
        y = v + 1.0
    assert float(y) == 3.0

    @tf.function
    def f():
        with tf.control_dependencies([v.assign_add(1.0)]):
            return v.read_value() * 10.0  # program order: the update comes first

    assert float(f()) == 30.0 and float(f()) == 40.0
    with pytest.raises(TypeError, match="list of tensors"):
        tf.control_dependencies(tf.constant(1.0))
    ran = []
    with tf.control_dependencies([lambda: ran.append(1)]):
        pass
    assert ran == [1]


def test_version_and_logger():
    assert tf.version.VERSION == tf.__version__ and isinstance(tf.version.GIT_VERSION, str)
    logger = tf.get_logger()
    assert logger is logging.getLogger("tapeflow") and logger.name == "tapeflow"
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    try:
        logger.warning("hello")
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == "hello\n"


# ---- array names --------------------------------------------------------------------------------

def test_repeat_and_sequence_mask():
    assert tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy().tolist() == [[1, 2], [3, 4], [3, 4]]
    assert tf.repeat([1, 2], 2).numpy().tolist() == [1, 1, 2, 2]
    assert tf.repeat([[1, 2], [3, 4]], 2).numpy().tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    with pytest.raises(InvalidArgumentError, match=r"repeats has 3 entries.*\[Op:Repeat\]"):
        tf.repeat(tf.constant([[1, 2], [3, 4]]), [1, 2, 3], axis=1)
    with pytest.raises(InvalidArgumentError, match="negative"):
        tf.repeat([1, 2], [1, -1], axis=0)
    assert tf.sequence_mask([1, 3, 2], 5).numpy().tolist() == [[True, False, False, False, False],
                                                               [True, True, True, False, False],
                                                               [True, True, False, False, False]]
    assert tf.sequence_mask([[1], [2]]).numpy().tolist() == [[[True, False]], [[True, True]]]
    assert tf.sequence_mask([1, 2], dtype=tf.float32).dtype == tf.float32
    with pytest.raises(InvalidArgumentError, match=r"lengths has dtype float32.*\[Op:SequenceMask\]"):
        tf.sequence_mask([1.0, 2.0])


def test_partition_stitch_reverse_sequence_unravel():
    assert tf.reverse_sequence(tf.constant([[1, 2, 3], [4, 5, 6]]), [2, 3], seq_axis=1,
                               batch_axis=0).numpy().tolist() == [[2, 1, 3], [6, 5, 4]]
    with pytest.raises(InvalidArgumentError, match=r"seq_lens\(0\) = 4.*\[Op:ReverseSequence\]"):
        tf.reverse_sequence(tf.constant([[1, 2, 3], [4, 5, 6]]), [4, 3], seq_axis=1)
    parts = tf.dynamic_partition(tf.constant([10, 20, 30, 40]), [0, 1, 0, 1], 2)
    assert [t.numpy().tolist() for t in parts] == [[10, 30], [20, 40]]
    with pytest.raises(InvalidArgumentError, match=r"partitions\[1\] = 2 is not in \[0, 2\)"):
        tf.dynamic_partition(tf.constant([1, 2]), [0, 2], 2)
    assert tf.dynamic_stitch([[0, 2], [1, 3]], [[1, 2], [3, 4]]).numpy().tolist() == [1, 3, 2, 4]
    assert tf.dynamic_stitch([[0, 3]], [[1.0, 2.0]]).numpy().tolist() == [1.0, 0.0, 0.0, 2.0]  # gaps: zeros
    assert tf.dynamic_stitch([[0, 1], [1]], [[1, 2], [9]]).numpy().tolist() == [1, 9]  # the later one wins
    assert tf.unravel_index([5, 7], [3, 4]).numpy().tolist() == [[1, 1], [1, 3]]
    with pytest.raises(InvalidArgumentError, match=r"index is out of bound as with dims \[Op:UnravelIndex\]"):
        tf.unravel_index(tf.constant([12]), [3, 4])


def test_shapes_casts_division_stack():
    assert [s.numpy().tolist() for s in tf.shape_n([tf.ones([2, 3]), tf.ones([4])])] == [[2, 3], [4]]
    assert tf.shape_n([tf.ones([2])], out_type=tf.int64)[0].dtype == tf.int64
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4]))
    assert tf.broadcast_dynamic_shape([2, 1], [3]).numpy().tolist() == [2, 3]
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[2, 3\] vs. \[4\] \[Op:BroadcastArgs\]"):
        tf.broadcast_dynamic_shape([2, 3], [4])
    assert tf.saturate_cast(tf.constant([300.0, -5.0]), tf.uint8).numpy().tolist() == [255, 0]
    assert tf.saturate_cast(tf.constant([1e20, -1e20, 3.7]), tf.int32).numpy().tolist() == \
        [2147483520, -2147483648, 3]  # TensorFlow's values (the largest float32 below 2**31)
    assert tf.saturate_cast(tf.constant([1e300], tf.float64), tf.float32).numpy().tolist() == \
        [float(np.finfo(np.float32).max)]
    assert tf.saturate_cast(tf.constant([70000, -70000], tf.int64), tf.int16).numpy().tolist() == [32767, -32768]
    assert float(tf.realdiv(1.0, 2.0)) == 0.5
    with pytest.raises(InvalidArgumentError, match=r"\[Op:RealDiv\]"):
        tf.realdiv(tf.constant([7]), tf.constant([2]))
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        tf.parallel_stack([tf.constant(1.0), tf.constant(2.0)])
    f = tf.function(lambda a, b: tf.parallel_stack([a, b]))
    assert f(tf.constant([1, 2]), tf.constant([3, 4])).numpy().tolist() == [[1, 2], [3, 4]]


def test_space_to_batch_round_trip_and_histogram_bins():
    x = tf.reshape(tf.range(2 * 4 * 6 * 3), [2, 4, 6, 3])
    y = tf.space_to_batch_nd(x, [2, 3], [[0, 0], [0, 0]])
    assert y.shape == (12, 2, 2, 3)
    assert tf.space_to_batch(x, [2, 3], [[0, 0], [0, 0]]).numpy().tolist() == y.numpy().tolist()
    assert tf.batch_to_space(y, [2, 3], [[0, 0], [0, 0]]).numpy().tolist() == x.numpy().tolist()
    z = tf.space_to_batch_nd(tf.ones([1, 3, 3, 1]), [2, 2], [[1, 0], [0, 1]])
    assert z.shape == (4, 2, 2, 1) and int(tf.reduce_sum(z)) == 9
    with pytest.raises(InvalidArgumentError, match=r"not a multiple of block_shape.*\[Op:SpaceToBatchND\]"):
        tf.space_to_batch_nd(tf.ones([1, 3, 3, 1]), [2, 2], [[0, 0], [0, 0]])
    bins = tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 15], [0.0, 5.0], nbins=5)
    assert bins.numpy().tolist() == [0, 0, 1, 2, 4, 4]
    with pytest.raises(InvalidArgumentError, match=r"nbins = 0.*\[Op:HistogramFixedWidthBins\]"):
        tf.histogram_fixed_width_bins([1.0], [0.0, 5.0], nbins=0)


# ---- initializers -------------------------------------------------------------------------------

def test_initializers():
    assert tf.zeros_initializer()([2], tf.int32).numpy().tolist() == [0, 0]
    assert tf.ones_initializer()([2]).numpy().tolist() == [1.0, 1.0]
    assert tf.constant_initializer(3)([2], tf.int32).numpy().tolist() == [3, 3]
    assert tf.constant_initializer([1, 2, 3, 4])([2, 2], tf.int32).numpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="has 3 elements, but got `shape` \\(2, 2\\) with 4 elements"):
        tf.constant_initializer([1, 2, 3])([2, 2])
    seeded = tf.random_normal_initializer(stddev=0.1, seed=1)
    np.testing.assert_array_equal(seeded([3]).numpy(), seeded([3]).numpy())  # a seed draws the same each call
    u = tf.random_uniform_initializer(0.0, 1.0)([1000])
    assert float(tf.reduce_min(u)) >= 0.0 and float(tf.reduce_max(u)) < 1.0
    n = tf.random_normal_initializer(mean=2.0, stddev=0.5)([4000])
    assert abs(float(tf.reduce_mean(n)) - 2.0) < 0.05
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal_initializer()([2], tf.int32)
    with pytest.raises(ValueError, match="numeric or boolean"):
        tf.zeros_initializer()([2], tf.string)
    assert tf.random_uniform_initializer(0, 1, seed=3).get_config() == {"minval": 0, "maxval": 1, "seed": 3}
    assert tf.constant_initializer.from_config({"value": 3})([1]).numpy().tolist() == [3.0]
    v = tf.Variable(tf.ones_initializer()([2, 2]))
    assert v.shape == (2, 2)
