"""tf.function: tracing and retracing, variables, side effects, control flow, errors, devices, inspection."""
from __future__ import annotations

import collections
import io
import warnings

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.function import RetracingWarning


def test_traces_once_per_signature_and_reuses_the_graph():
    calls = []

    @tf.function
    def f(x, k):
        calls.append(1)  # Python side effect: runs only while tracing
        return x * k

    a = f(tf.constant([1.0, 2.0]), 2)
    b = f(tf.constant([3.0, 4.0]), 2)  # same shape/dtype and same Python value: no retrace
    assert a.numpy().tolist() == [2.0, 4.0] and b.numpy().tolist() == [6.0, 8.0]
    assert f.experimental_get_tracing_count() == 1 and len(calls) == 1
    f(tf.constant([1.0, 2.0]), 3)  # a new Python value
    f(tf.constant([1.0, 2.0, 3.0]), 3)  # a new shape
    f(tf.constant([1, 2]), 3)  # a new dtype
    assert f.experimental_get_tracing_count() == 4
    f(tf.constant([5.0, 6.0]), 3)
    assert f.experimental_get_tracing_count() == 4


def test_structures_key_by_structure_and_namedtuples_come_back():
    Pair = collections.namedtuple("Pair", "a b")

    @tf.function
    def f(d, p):
        return {"s": d["x"] + p.a, "list": [p.b * 2.0]}

    out = f({"x": tf.constant(1.0)}, Pair(tf.constant(2.0), tf.constant(3.0)))
    assert float(out["s"]) == 3.0 and float(out["list"][0]) == 6.0
    f({"x": tf.constant(5.0)}, Pair(tf.constant(2.0), tf.constant(3.0)))
    assert f.experimental_get_tracing_count() == 1
    f({"x": tf.constant(5.0), "y": 1}, Pair(tf.constant(2.0), tf.constant(3.0)))
    assert f.experimental_get_tracing_count() == 2


def test_variables_are_captured_by_reference_and_keyed_by_identity():
    v = tf.Variable(1.0)

    @tf.function
    def read():
        return v * 2.0

    assert float(read()) == 2.0
    v.assign(5.0)  # changed outside: the graph reads it at call time
    assert float(read()) == 10.0 and read.experimental_get_tracing_count() == 1

    @tf.function
    def scale(var, x):
        return var * x

    a, b = tf.Variable(2.0), tf.Variable(3.0)
    assert float(scale(a, 1.0)) == 2.0 and float(scale(b, 1.0)) == 3.0
    assert scale.experimental_get_tracing_count() == 2  # by identity
    assert float(scale(a, 1.0)) == 2.0 and scale.experimental_get_tracing_count() == 2


def test_input_signature_fixes_the_trace_and_rejects_what_does_not_match():
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        return tf.reduce_sum(x, axis=1)

    assert f(tf.ones([2, 3])).numpy().tolist() == [3.0, 3.0]
    assert f(np.ones([5, 3], np.float32)).shape == (5,)
    assert f.experimental_get_tracing_count() == 1
    assert tuple(f.get_concrete_function().graph.inputs[0].shape) == (None, 3)
    with pytest.raises(TypeError, match=r"input_signature"):
        f(tf.ones([2, 4]))
    with pytest.raises(TypeError, match=r"int32 tensor.*input_signature|input_signature.*int32"):
        f(tf.ones([2, 3], tf.int32))
    with pytest.raises(TypeError, match="input_signature"):
        f(tf.ones([2, 3]), tf.ones([2, 3]))


def test_reduce_retracing_relaxes_shapes_to_unknown_dimensions():
    @tf.function(reduce_retracing=True)
    def f(x):
        return x + 1.0

    for n in (2, 3, 4, 5, 6):
        assert f(tf.zeros([n])).shape == (n,)
    assert f.experimental_get_tracing_count() == 2  # the second shape relaxed it to (None,)
    shapes = [tuple(cf.graph.inputs[0].shape) for cf in f._concretes()]
    assert (None,) in shapes


def test_many_retraces_warn_naming_the_argument_that_changed():
    @tf.function
    def f(x, step):
        return x * step

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(7):
            f(tf.constant(1.0), float(i))
    msgs = [str(m.message) for m in w if issubclass(m.category, RetracingWarning)]
    assert len(msgs) == 1
    assert [m.category for m in w if issubclass(m.category, tf.errors.PerformanceWarning)] == [RetracingWarning]
    assert "argument 'step' changed from Python float" in msgs[0] and "retracing" in msgs[0]


def test_assignments_take_effect_in_order_and_are_visible_outside():
    v = tf.Variable(1.0)

    @tf.function
    def f():
        v.assign(2.0)
        a = v.read_value()
        v.assign_add(3.0)
        b = v.read_value()
        v.assign_sub(1.0)
        return a, b

    a, b = f()
    assert (float(a), float(b), float(v)) == (2.0, 5.0, 4.0)
    f()
    assert float(v) == 4.0


def test_variables_only_on_the_first_trace():
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(tf.ones_like(x) * 2.0)  # the initial value is computed once, eagerly
            return self.v * x

    m = M()
    assert m(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert m(tf.constant([3.0, 1.0])).numpy().tolist() == [6.0, 2.0]
    assert len(m.variables) == 1

    @tf.function
    def bad(x):
        return tf.Variable(x) * 2.0

    with pytest.raises(ValueError, match="depends on the function's inputs"):
        bad(tf.constant(1.0))

    @tf.function
    def every_call(x):
        return tf.Variable(1.0) * x

    every_call(tf.constant(1.0))
    with pytest.raises(ValueError, match="only supports singleton tf.Variables created on the first call"):
        every_call(tf.constant([1.0, 2.0]))  # a retrace that creates a variable again


def test_random_ops_draw_fresh_numbers_on_every_call_and_follow_set_seed():
    f = tf.function(lambda: tf.random.uniform([4]))
    a, b = f().numpy(), f().numpy()
    assert not np.array_equal(a, b)
    tf.random.set_seed(7)
    g = tf.function(lambda: tf.random.normal([3], seed=1))
    first = [g().numpy() for _ in range(2)]
    tf.random.set_seed(7)
    eager = [tf.random.normal([3], seed=1).numpy() for _ in range(2)]
    np.testing.assert_array_equal(first, eager)


def test_tf_print_prints_on_every_call_python_print_only_while_tracing(capsys):
    buf = io.StringIO()

    @tf.function
    def f(x):
        print("tracing")
        tf.print("value:", x, output_stream=buf)
        return x + 1

    f(tf.constant(1))
    f(tf.constant(2))
    assert capsys.readouterr().out == "tracing\n"
    assert buf.getvalue() == "value: 1\nvalue: 2\n"


def test_an_op_error_in_a_graph_names_the_op_and_the_users_line():
    @tf.function
    def f(x, i):
        return tf.gather(x, i)  # the line the error must name

    line = f.__wrapped__.__code__.co_firstlineno + 2
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        f(tf.constant([1.0, 2.0]), tf.constant(5))
    msg = str(e.value)
    assert "GatherV2" in msg or "Gather" in msg
    assert f"test_function.py:{line}" in msg and "graph function 'f'" in msg


def test_while_loop_shape_invariants():
    @tf.function
    def grow(x):
        return tf.while_loop(lambda x: tf.shape(x)[0] < 8, lambda x: [tf.concat([x, x], 0)], [x],
                             shape_invariants=[tf.TensorShape([None])])[0]

    assert grow(tf.constant([1.0])).shape == (8,)

    @tf.function
    def bad(x):
        return tf.while_loop(lambda x: tf.shape(x)[0] < 8, lambda x: [tf.concat([x, x], 0)], [x])[0]

    with pytest.raises(ValueError, match="shape_invariants"):
        bad(tf.constant([1.0]))


def test_methods_bind_per_instance():
    class Counter(tf.Module):
        def __init__(self, k):
            super().__init__()
            self.k = tf.Variable(k)

        @tf.function
        def __call__(self, x):
            return x * self.k

    a, b = Counter(2.0), Counter(3.0)
    assert float(a(tf.constant(1.0))) == 2.0 and float(b(tf.constant(1.0))) == 3.0
    assert a.__call__ is a.__call__ and a.__call__ is not b.__call__
    assert a.trainable_variables == (a.k,)


def test_concrete_functions_graph_printing_and_signatures():
    @tf.function
    def f(x, y):
        return tf.nn.relu(x) + y

    cf = f.get_concrete_function(tf.TensorSpec([None, 2]), tf.TensorSpec([2]))
    assert cf(tf.ones([3, 2]), tf.ones([2])).shape == (3, 2)
    text = str(cf.graph)
    assert "add(relu(%x), %y)" in text and "float32[?,2]" in text  # one fused kernel (y: a bias of the last dim)
    assert cf.structured_input_signature[0][0] == tf.TensorSpec([None, 2], tf.float32, "x")
    with pytest.raises(TypeError, match="does not match"):
        cf(tf.ones([3, 3]), tf.ones([2]))
    sig = f.pretty_printed_concrete_signatures()
    assert "x: TensorSpec(shape=(None, 2), dtype=tf.float32, name='x')" in sig
    assert "Output Type" in sig


def test_device_scopes_inside_a_function_apply_per_op():
    devices = [d.name for d in tf.list_devices()]

    @tf.function
    def f(x):
        with tf.device(devices[-1]):
            y = x * 2.0
        return y, x + 1.0

    x = tf.constant([1.0])
    y, z = f(x)
    assert y.device.endswith(devices[-1]) and z.device == x.device
    assert y.numpy().tolist() == [2.0]


def test_defun_is_function_and_python_values_come_back():
    f = tf.defun(lambda x: (x + 1, "label", None))
    out = f(tf.constant(1))
    assert int(out[0]) == 2 and out[1:] == ("label", None)


def test_init_scope_leaves_the_graph():
    made = []

    @tf.function
    def f(x):
        with tf.init_scope():
            made.append(tf.ones([2]))
        return x

    f(tf.constant(1.0))
    assert made[0].numpy().tolist() == [1.0, 1.0]



def test_control_flow_nodes_run_the_branch_taken_and_the_iterations_needed():
    @tf.function
    def f(x):
        return tf.cond(x > 0.0, lambda: x * x, lambda: -3.0 * x)

    assert (float(f(tf.constant(2.0))), float(f(tf.constant(-1.0)))) == (4.0, 3.0)
    assert f.experimental_get_tracing_count() == 1
    assert "branch(" in str(f.get_concrete_function(tf.TensorSpec([])).graph)

    @tf.function
    def power(x, n):
        return tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * x), (0, tf.ones_like(x)),
                             maximum_iterations=10)[1]

    assert float(power(tf.constant(1.5), tf.constant(3))) == pytest.approx(1.5 ** 3)
    assert float(power(tf.constant(1.5), tf.constant(50))) == pytest.approx(1.5 ** 10)  # maximum_iterations


def test_range_with_bounds_the_graph_computes():
    f = tf.function(lambda x: tf.range(tf.size(x)) * 2)
    assert f(tf.ones([3])).numpy().tolist() == [0, 2, 4]
    g = tf.function(lambda n: tf.range(0, n, 0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="delta = 0"):
        g(tf.constant(3))


def test_indices_and_slice_bounds_the_graph_computes():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    row = tf.function(lambda x, i: x[i])
    col = tf.function(lambda x, i: x[1:, i])
    window = tf.function(lambda x, i: x[i:i + 2])
    for i in (0, 1, 2, -1, -3):
        np.testing.assert_array_equal(row(x, tf.constant(i)).numpy(), x.numpy()[i])
        np.testing.assert_array_equal(window(x, tf.constant(i)).numpy(), x.numpy()[i:i + 2])
    np.testing.assert_array_equal(col(x, tf.constant(1)).numpy(), [4.0, 6.0])
    assert row.experimental_get_tracing_count() == 1 and window.experimental_get_tracing_count() == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="combines only with ints and slices"):
        tf.function(lambda x, i: x[..., i])(x, tf.constant(0))


def test_signatures_print_structured_outputs():
    f = tf.function(lambda x: (x + 1, {"a": x * 2}))
    text = f.get_concrete_function(tf.TensorSpec([None], tf.float32)).pretty_printed_signature()
    assert text.splitlines()[-1] == ("  (TensorSpec(shape=(None,), dtype=tf.float32, name=None), "
                                     "{'a': TensorSpec(shape=(None,), dtype=tf.float32, name=None)})")
