"""tf.TensorArray, tf.RaggedTensor / tf.ragged and tf.SparseTensor / tf.sparse: TensorFlow 2's semantics
(the expected values are TensorFlow 2.21's; compared with TensorFlow itself when it is installed)."""
from __future__ import annotations

import os

import pytest
import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError, OutOfRangeError


def _tf_or_none():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow
    except Exception:  # noqa: BLE001 (a broken TensorFlow install is as good as none)
        return None
    return tensorflow


TF = _tf_or_none()


def _l(t):
    return t.numpy().tolist()


# ---- TensorArray -----------------------------------------------------------------------------------------

def test_tensor_array_write_read_stack_eager():
    ta = tf.TensorArray(tf.float32, size=3)
    ta.write(0, [1.0, 2.0])  # eagerly the write lands in place, as TensorFlow's
    assert _l(ta.read(0)) == [1.0, 2.0]
    assert _l(ta.read(1)) == [0.0, 0.0]  # never written: zeros of the inferred element shape
    assert _l(ta.stack()) == [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
    assert int(ta.size()) == 3 and ta.size().dtype == tf.int32
    assert ta.element_shape == tf.TensorShape([2]) and ta.dtype == tf.float32


def test_tensor_array_clear_after_read():
    ta = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
    ta.read(0)
    with pytest.raises(InvalidArgumentError, match="Could not read index 0 twice"):
        ta.read(0)
    tb = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, 1.0)
    assert float(tb.read(0)) == float(tb.read(0)) == 1.0


def test_tensor_array_dynamic_size_and_errors():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(2, 1.0)
    assert int(ta.size()) == 3 and _l(ta.stack()) == [0.0, 0.0, 1.0]
    with pytest.raises(OutOfRangeError, match="not resizeable and size is: 3"):
        tf.TensorArray(tf.float32, size=3).write(5, 1.0)
    with pytest.raises(InvalidArgumentError, match="dtype is float32 but Op is trying to write dtype int32"):
        tf.TensorArray(tf.float32, size=2).write(0, tf.constant(1))
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shape for value \(\(3,\)\), expected \(\(2,\)\)"):
        tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])
    with pytest.raises(InvalidArgumentError, match="Cannot unstack 3 tensors into a TensorArray of static size 2"):
        tf.TensorArray(tf.float32, size=2).unstack([1.0, 2.0, 3.0])
    with pytest.raises(InvalidArgumentError, match=r"\[Op:TensorArrayV3\]"):
        tf.TensorArray(tf.float32, size=-1)
    with pytest.raises(TypeError, match="dtype"):
        tf.TensorArray("no dtype", size=1)


def test_tensor_array_unstack_gather_scatter_concat_split():
    ta = tf.TensorArray(tf.int32, size=2).unstack([[1, 2], [3, 4]])
    assert _l(ta.gather([1, 0])) == [[3, 4], [1, 2]]
    te = tf.TensorArray(tf.int32, size=4).scatter([3, 0], [[1, 2], [3, 4]])
    assert _l(te.stack()) == [[3, 4], [0, 0], [0, 0], [1, 2]]
    tc = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False, clear_after_read=False)
    tc = tc.split([1.0, 2.0, 3.0, 4.0, 5.0], [2, 3])
    assert _l(tc.read(1)) == [3.0, 4.0, 5.0] and _l(tc.concat()) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert int(tc.size()) == 2
    assert tf.TensorArray(tf.float32, size=0).stack().shape == tf.TensorShape([0])
    assert tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack().shape == tf.TensorShape([0, 2])


def test_tensor_array_in_while_loop_graph():
    @tf.function
    def g(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        i = tf.constant(0)
        i, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, tf.cast(i, tf.float32) * 2.0)),
                              (i, ta))
        return ta.stack(), ta.size()

    s, n = g(tf.constant(4))
    assert _l(s) == [0.0, 2.0, 4.0, 6.0] and int(n) == 4
    s, n = g(tf.constant(0))
    assert _l(s) == [] and int(n) == 0


def test_tensor_array_in_autograph_for_loop():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0])
        for i in tf.range(tf.shape(x)[0]):
            ta = ta.write(i, tf.gather(x, i) * 2.0)
        s = ta.stack()
        assert s.shape.as_list() == [None, 2]  # as TensorFlow's: the length is known when the graph runs
        return s

    assert _l(f(tf.constant([[1.0, 2.0], [3.0, 4.0]]))) == [[2.0, 4.0], [6.0, 8.0]]
    assert _l(f(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))) == [[2.0, 4.0], [6.0, 8.0], [10.0, 12.0]]


def test_tensor_array_graph_read_gather_unstack():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=3).unstack(x)
        acc = tf.constant(0.0)
        for i in tf.range(3):
            acc = acc + tf.reduce_sum(ta.read(i))
        return acc, ta.gather([2, 0]), ta.concat()

    acc, g, c = f(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert float(acc) == 21.0 and _l(g) == [[5.0, 6.0], [1.0, 2.0]] and _l(c) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_tensor_array_through_cond_and_autograph_if():
    @tf.function
    def g(x, flag):
        ta = tf.TensorArray(tf.float32, size=2)
        ta = tf.cond(flag, lambda: ta.write(0, x), lambda: ta)  # written in one branch only
        return ta.stack()

    assert _l(g(tf.constant(3.0), tf.constant(True))) == [3.0, 0.0]
    assert _l(g(tf.constant(3.0), tf.constant(False))) == [0.0, 0.0]

    @tf.function
    def evens(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            if i % 2 == 0:
                ta = ta.write(ta.size(), tf.cast(i, tf.float32))
        return ta.stack()

    assert _l(evens(tf.constant(5))) == [0.0, 2.0, 4.0]


def test_tensor_array_eager_while_loop_keeps_it():
    ta = tf.TensorArray(tf.int32, size=3)
    i, ta = tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, i * i)), (tf.constant(0), ta))
    assert _l(ta.stack()) == [0, 1, 4]


@pytest.mark.skipif(TF is None, reason="compares with TensorFlow where it is installed")
def test_tensor_array_matches_tensorflow():
    def run(mod):
        ta = mod.TensorArray(mod.float32, size=0, dynamic_size=True, clear_after_read=False)
        ta = ta.write(1, [1.0, 2.0]).scatter([3, 0], [[5.0, 6.0], [7.0, 8.0]])
        return [ta.stack().numpy().tolist(), ta.gather([3, 1]).numpy().tolist(), int(ta.size()),
                ta.concat().numpy().tolist()]

    assert run(tf) == run(TF)


@pytest.mark.skipif(TF is None, reason="compares with TensorFlow where it is installed")
def test_tensor_array_in_graph_loop_matches_tensorflow():
    def run(mod):
        @mod.function
        def f(x):
            ta = mod.TensorArray(mod.float32, size=0, dynamic_size=True)
            for i in mod.range(mod.shape(x)[0]):
                if i % 2 == 0:
                    ta = ta.write(ta.size(), mod.gather(x, i) * 2.0)
            return ta.stack(), ta.size()

        s, n = f(mod.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        return s.numpy().tolist(), int(n)

    assert run(tf) == run(TF)


# ---- RaggedTensor ----------------------------------------------------------------------------------------

def test_ragged_constant_parts_and_printing():
    rt = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    assert isinstance(rt, tf.RaggedTensor) and rt.dtype == tf.int32 and rt.ragged_rank == 1
    assert str(rt) == repr(rt) == "<tf.RaggedTensor [[1, 2], [3], [], [4, 5, 6]]>"
    assert rt.shape == tf.TensorShape([4, None]) and rt.shape.as_list() == [4, None]
    assert _l(rt.row_lengths()) == [2, 1, 0, 3] and rt.row_lengths().dtype == tf.int64
    assert _l(rt.row_splits) == [0, 2, 3, 3, 6] and rt.row_splits.dtype == tf.int64
    assert _l(rt.values) == [1, 2, 3, 4, 5, 6] and _l(rt.value_rowids()) == [0, 0, 1, 3, 3, 3]
    assert int(rt.nrows()) == 4 and rt.nrows().dtype == tf.int64
    assert [a.tolist() for a in rt.numpy()] == [[1, 2], [3], [], [4, 5, 6]]
    assert str(tf.ragged.constant([[1.5, 2.0], [3.0]])) == "<tf.RaggedTensor [[1.5, 2.0], [3.0]]>"
    assert tf.ragged.constant([[1.5], []]).dtype == tf.float32
    assert str(tf.ragged.constant([["a", "b"], ["c"]])) == "<tf.RaggedTensor [[b'a', b'b'], [b'c']]>"


def test_ragged_nested_and_uniform_inner():
    n = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert n.shape.as_list() == [2, None, None] and n.ragged_rank == 2
    assert _l(n.flat_values) == [1, 2, 3, 4] and n.values.to_list() == [[1, 2], [3], [4]]
    assert n.to_list() == [[[1, 2], [3]], [[4]]] and n[0].to_list() == [[1, 2], [3]]
    assert _l(n.to_tensor()) == [[[1, 2], [3, 0]], [[4, 0], [0, 0]]]
    u = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert u.shape.as_list() == [2, None, 2] and _l(u.values) == [[1, 2], [3, 4], [5, 6]]
    assert _l(tf.reduce_sum(u, axis=1)) == [[4, 6], [5, 6]] and u.row_lengths().numpy().tolist() == [2, 1]
    with pytest.raises(InvalidArgumentError, match="not uniform"):
        tf.ragged.constant([[[1, 2], [3]]], ragged_rank=1)


def test_ragged_factories():
    assert tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, 0, 1]).to_list() == [[1, 2], [], [3]]
    assert tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 1, 3]).to_list() == [[1], [2, 3]]
    assert tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=4).to_list() == [[1, 2], [], [3], []]
    dense = [[1, 0, 0], [2, 3, 0]]
    assert tf.RaggedTensor.from_tensor(dense, padding=0).to_list() == [[1], [2, 3]]
    assert tf.RaggedTensor.from_tensor(dense, lengths=[1, 3]).to_list() == [[1], [2, 3, 0]]
    assert tf.RaggedTensor.from_tensor(dense).to_list() == dense
    with pytest.raises(InvalidArgumentError, match=r"row_lengths \[2, 2\] do not cut 3 values.*\[Op:RaggedTensorFrom"):
        tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, 2])
    with pytest.raises(InvalidArgumentError, match="row_splits"):
        tf.RaggedTensor.from_row_splits([1, 2, 3], [1, 3])
    with pytest.raises(InvalidArgumentError, match="value_rowids"):
        tf.RaggedTensor.from_value_rowids([1, 2, 3], [1, 0, 0])


def test_ragged_to_tensor_indexing():
    rt = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    assert _l(rt.to_tensor()) == [[1, 2, 0], [3, 0, 0], [0, 0, 0], [4, 5, 6]]
    assert _l(rt.to_tensor(default_value=-1, shape=[3, 2])) == [[1, 2], [3, -1], [-1, -1]]
    assert _l(rt[0]) == [1, 2] and _l(rt[-1]) == [4, 5, 6] and rt[1:3].to_list() == [[3], []]
    assert rt[::2].to_list() == [[1, 2], []] and int(rt[3, 1]) == 5
    assert _l(tf.ragged.constant([["a"], ["b", "c"]]).to_tensor()) == [[b"a", b""], [b"b", b"c"]]
    with pytest.raises(InvalidArgumentError, match=r"row 4 is out of range for 4 rows"):
        rt[4]


def test_ragged_arithmetic_and_map_flat_values():
    rt = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    assert (rt + 1).to_list() == [[2, 3], [4], [], [5, 6, 7]]
    assert (rt * rt).to_list() == [[1, 4], [9], [], [16, 25, 36]]
    assert (2 - rt).to_list() == [[1, 0], [-1], [], [-2, -3, -4]]
    assert (-rt).to_list() == [[-1, -2], [-3], [], [-4, -5, -6]]
    assert (rt > 2).to_list() == [[False, False], [True], [], [True, True, True]]
    assert tf.ragged.map_flat_values(tf.square, rt).to_list() == [[1, 4], [9], [], [16, 25, 36]]
    with pytest.raises(InvalidArgumentError, match="different row splits"):
        rt + tf.ragged.constant([[1], [2], [3], [4]])
    with pytest.raises(InvalidArgumentError, match="allowed: a RaggedTensor with the same row splits, or a scalar"):
        rt + tf.constant([1, 2])


def test_ragged_reductions():
    rt = tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]])
    assert _l(tf.reduce_sum(rt, axis=1)) == [3, 3, 0, 15] and _l(tf.reduce_sum(rt, axis=0)) == [8, 7, 6]
    assert int(tf.reduce_sum(rt)) == 21
    assert _l(tf.reduce_max(rt, axis=1)) == [2, 3, -2147483648, 6]  # an empty row: the dtype's lowest, as TF
    assert _l(tf.reduce_min(rt, axis=-1)) == [1, 3, 2147483647, 4]
    f = tf.ragged.constant([[1.0, 2.0], []])
    m = tf.reduce_mean(f, axis=1).numpy()
    assert m[0] == 1.5 and m[1] != m[1]  # NaN for the empty row
    assert _l(tf.reduce_max(f, axis=1)) == [2.0, float(tf.float32.min)]
    with pytest.raises(InvalidArgumentError, match="keepdims"):
        tf.reduce_sum(rt, axis=1, keepdims=True)
    with pytest.raises(InvalidArgumentError, match=r"axis = 2 for a RaggedTensor of rank 2"):
        tf.reduce_sum(rt, axis=2)


def test_strings_split_returns_tf_ragged_tensor():
    r = tf.strings.split(["a b", "c"])
    assert isinstance(r, tf.RaggedTensor) and r.to_list() == [[b"a", b"b"], [b"c"]]


@pytest.mark.skipif(TF is None, reason="compares with TensorFlow where it is installed")
def test_ragged_matches_tensorflow():
    rows = [[1.0, 2.0], [3.0], [], [4.0, 5.0, 6.0]]

    def run(mod):
        rt = mod.ragged.constant(rows)
        return [rt.to_list(), rt.row_lengths().numpy().tolist(), rt.to_tensor(default_value=-1.0).numpy().tolist(),
                mod.reduce_sum(rt, axis=1).numpy().tolist(), mod.reduce_sum(rt, axis=0).numpy().tolist(),
                (rt * 2.0 + rt).to_list(), rt[1:].to_list(), str(rt)]

    assert run(tf) == run(TF)


# ---- SparseTensor ----------------------------------------------------------------------------------------

def _st():
    return tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])


def test_sparse_tensor_parts_and_printing():
    st = _st()
    assert tf.SparseTensor is tf.sparse.SparseTensor
    assert st.shape == tf.TensorShape([3, 4]) and st.dtype == tf.float32
    assert st.indices.dtype == tf.int64 and st.dense_shape.dtype == tf.int64
    assert str(st) == repr(st) == (f"SparseTensor(indices={st.indices}, values={st.values}, "
                                   f"dense_shape={st.dense_shape})")
    assert str(st).startswith("SparseTensor(indices=Tensor(\n[[0 0]\n [1 2]], shape=(2, 2), dtype=int64), values=")
    with pytest.raises(InvalidArgumentError, match=r"indices of shape \(1, 2\) for 2 values.*\[Op:SparseTensor\]"):
        tf.SparseTensor([[0, 0]], [1.0, 2.0], [3, 4])


def test_sparse_from_dense_to_dense():
    st = tf.sparse.from_dense(tf.constant([[0, 3, 0], [4, 0, 5]]))
    assert _l(st.indices) == [[0, 1], [1, 0], [1, 2]] and _l(st.values) == [3, 4, 5]
    assert _l(st.dense_shape) == [2, 3] and st.dtype == tf.int32
    assert _l(tf.sparse.to_dense(st)) == [[0, 3, 0], [4, 0, 5]]
    assert _l(tf.sparse.to_dense(_st(), default_value=-1.0))[0] == [1.0, -1.0, -1.0, -1.0]
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = \[0, 0\] is out of order.*\[Op:SparseToDense\]"):
        tf.sparse.to_dense(tf.SparseTensor([[1, 2], [0, 0]], [2.0, 1.0], [3, 4]))
    with pytest.raises(InvalidArgumentError, match=r"indices\[0\] = \[0, 5\] is out of bounds"):
        tf.sparse.to_dense(tf.SparseTensor([[0, 5]], [1.0], [2, 2]))


def test_sparse_dense_matmul():
    st = _st()
    assert _l(tf.sparse.sparse_dense_matmul(st, tf.ones([4, 2]))) == [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]
    assert _l(tf.sparse.sparse_dense_matmul(st, tf.ones([3, 2]), adjoint_a=True)) == [[1.0, 1.0], [0.0, 0.0],
                                                                                     [2.0, 2.0], [0.0, 0.0]]
    b = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    assert _l(tf.sparse.sparse_dense_matmul(st, b, adjoint_b=True)) == [[1.0], [6.0], [0.0]]
    # the dense operand first: a @ sp
    assert _l(tf.sparse.sparse_dense_matmul(tf.ones([2, 3]), st)) == [[1.0, 0.0, 2.0, 0.0]] * 2
    with pytest.raises(InvalidArgumentError, match=r"inner dimensions differ: \(3, 4\) @ \(3, 2\)"):
        tf.sparse.sparse_dense_matmul(st, tf.ones([3, 2]))


def test_sparse_reduce_sum_add_reorder_transpose_retain():
    st = _st()
    assert float(tf.sparse.reduce_sum(st)) == 3.0
    assert _l(tf.sparse.reduce_sum(st, axis=1)) == [1.0, 2.0, 0.0]
    assert _l(tf.sparse.reduce_sum(st, axis=0, keepdims=True)) == [[1.0, 0.0, 2.0, 0.0]]
    r = tf.sparse.reduce_sum(st, axis=1, output_is_sparse=True)
    assert _l(r.indices) == [[0], [1]] and _l(r.values) == [1.0, 2.0] and _l(r.dense_shape) == [3]
    s = tf.sparse.add(st, tf.SparseTensor([[0, 1], [2, 0]], [5.0, 6.0], [3, 4]))
    assert _l(s.indices) == [[0, 0], [0, 1], [1, 2], [2, 0]] and _l(s.values) == [1.0, 5.0, 2.0, 6.0]
    assert _l(tf.sparse.add(st, tf.ones([3, 4])))[1] == [1.0, 1.0, 3.0, 1.0]
    t = tf.sparse.add(st, tf.SparseTensor([[1, 2]], [-1.5], [3, 4]), threshold=0.6)
    assert _l(t.indices) == [[0, 0]] and _l(t.values) == [1.0]
    u = tf.sparse.reorder(tf.SparseTensor([[1, 2], [0, 0]], [2.0, 1.0], [3, 4]))
    assert _l(u.indices) == [[0, 0], [1, 2]] and _l(u.values) == [1.0, 2.0]
    tr = tf.sparse.transpose(st)
    assert _l(tr.indices) == [[0, 0], [2, 1]] and _l(tr.dense_shape) == [4, 3]
    kept = tf.sparse.retain(st, [False, True])
    assert _l(kept.indices) == [[1, 2]] and _l(kept.values) == [2.0]
    with pytest.raises(InvalidArgumentError, match="shapes differ"):
        tf.sparse.add(st, tf.SparseTensor([[0, 0]], [1.0], [2, 2]))
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sparse.reorder(tf.ones([2]))


@pytest.mark.skipif(TF is None, reason="compares with TensorFlow where it is installed")
def test_sparse_matches_tensorflow():
    def run(mod):
        st = mod.sparse.from_dense(mod.constant([[0.0, 3.0, 0.0], [4.0, 0.0, 5.0]]))
        other = mod.sparse.SparseTensor([[0, 0], [1, 0]], [1.0, 1.0], [2, 3])
        return [mod.sparse.to_dense(mod.sparse.add(st, other)).numpy().tolist(),
                mod.sparse.sparse_dense_matmul(st, mod.ones([3, 2])).numpy().tolist(),
                mod.sparse.reduce_sum(st, axis=0).numpy().tolist(),
                mod.sparse.to_dense(mod.sparse.transpose(st)).numpy().tolist()]

    assert run(tf) == run(TF)


def test_sparse_reduce_sum_runs_inside_tf_function():
    st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2], [1, 2]], values=[1.0, 2.0, 3.0], dense_shape=[3, 4])
    f = tf.function(lambda s: (tf.sparse.reduce_sum(s, axis=0), tf.sparse.reduce_sum(s, axis=1, keepdims=True),
                               tf.sparse.reduce_sum(s)))
    cols, rows, total = f(st)
    assert cols.numpy().tolist() == [1.0, 0.0, 5.0, 0.0]  # TensorFlow 2.21's values (duplicates summed)
    assert rows.numpy().tolist() == [[1.0], [5.0], [0.0]] and float(total) == 6.0


def test_elementwise_string_ops_and_cast_take_ragged_and_sparse_tensors():
    # TensorFlow dispatches these to the flat values: tf.strings.to_number(tf.strings.split(s, ",")) is ragged
    r = tf.strings.split(tf.constant(["1,2", "3"]), ",")
    assert tf.strings.to_number(r).to_list() == [[1.0, 2.0], [3.0]]
    assert tf.strings.length(r).to_list() == [[1, 1], [1]]
    assert tf.strings.upper(tf.strings.split(tf.constant(["a b", "c"]))).to_list() == [[b"A", b"B"], [b"C"]]
    assert tf.strings.substr(tf.strings.split(tf.constant(["abc de"])), 0, 2).to_list() == [[b"ab", b"de"]]
    f = tf.function(lambda t: tf.strings.to_number(tf.strings.split(t, ",")).to_tensor())
    assert f(tf.constant(["1,2", "3"])).numpy().tolist() == [[1.0, 2.0], [3.0, 0.0]]
    c = tf.cast(tf.ragged.constant([[1, 2], [3]]), tf.float32)
    assert c.dtype is tf.float32 and c.to_list() == [[1.0, 2.0], [3.0]]
    sp = tf.cast(tf.sparse.SparseTensor([[0], [2]], [1, 2], [3]), tf.float64)
    assert sp.dtype is tf.float64 and tf.sparse.to_dense(sp).numpy().tolist() == [1.0, 0.0, 2.0]


def test_concat_of_ragged_tensors_as_tensorflow():
    rt = tf.ragged.constant([[1, 2], [], [3, 4, 5]])
    assert tf.concat([rt, rt], axis=0).to_list() == [[1, 2], [], [3, 4, 5], [1, 2], [], [3, 4, 5]]
    assert tf.concat([rt, rt], axis=1).to_list() == [[1, 2, 1, 2], [], [3, 4, 5, 3, 4, 5]]  # TensorFlow 2.21's
    assert tf.concat([rt, tf.constant([[9], [8], [7]])], axis=1).to_list() == [[1, 2, 9], [8], [3, 4, 5, 7]]
    words = tf.concat([tf.ragged.constant([["a"], ["b", "c"]]), tf.ragged.constant([["d"], []])], axis=-1)
    assert words.to_list() == [[b"a", b"d"], [b"b", b"c"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"RaggedConcat"):
        tf.concat([rt, tf.ragged.constant([[1]])], axis=1)
