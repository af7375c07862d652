"""The everyday tf.* names of issue 14 item 1: each exists with TensorFlow 2's semantics.

References are NumPy (or TensorFlow 2.21's documented results, written out)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.errors import InvalidArgumentError


# ---- tf.newaxis, tf.UnconnectedGradients, tf.math.divide_no_nan -----------------------------

def test_newaxis_inserts_an_axis():
    x = tf.reshape(tf.range(6), [2, 3])
    assert tf.newaxis is None
    assert x[:, tf.newaxis].shape == (2, 1, 3)
    assert x[tf.newaxis, ..., tf.newaxis].shape == (1, 2, 3, 1)
    np.testing.assert_array_equal(x[tf.newaxis, 1].numpy(), [[3, 4, 5]])


def test_unconnected_gradients_at_top_level():
    autodiff = pytest.importorskip("tapeflow.autodiff")  # tf.UnconnectedGradients lives in tapeflow-autodiff
    assert tf.UnconnectedGradients is autodiff.UnconnectedGradients
    x, y = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        z = x * 3.0
    assert tape.gradient(z, y, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy() == 0.0


def test_divide_no_nan():
    out = tf.math.divide_no_nan(tf.constant([1.0, -2.0, 0.0]), tf.constant([0.0, 4.0, 0.0]))
    np.testing.assert_array_equal(out.numpy(), [0.0, -0.5, 0.0])
    assert tf.math.divide_no_nan is tf.math.div_no_nan
    with pytest.raises(InvalidArgumentError, match=r"\[Op:DivNoNan\]"):
        tf.math.divide_no_nan(tf.constant([1, 2]), tf.constant([1, 0]))


# ---- segment reductions -------------------------------------------------------------------

def test_unsorted_segment_reductions_follow_tensorflow():
    data = tf.constant([[1.0, 5.0], [3.0, -2.0], [7.0, 0.5]])
    ids = tf.constant([2, 0, 2])
    np.testing.assert_array_equal(tf.math.unsorted_segment_max(data, ids, 3).numpy(),
                                  [[3.0, -2.0], [np.finfo(np.float32).min] * 2, [7.0, 5.0]])
    np.testing.assert_array_equal(tf.math.unsorted_segment_min(data, ids, 3).numpy(),
                                  [[3.0, -2.0], [np.finfo(np.float32).max] * 2, [1.0, 0.5]])
    np.testing.assert_array_equal(tf.math.unsorted_segment_prod(data, ids, 3).numpy(), [[3, -2], [1, 1], [7, 2.5]])
    np.testing.assert_allclose(tf.math.unsorted_segment_mean(data, ids, 3).numpy(), [[3, -2], [0, 0], [4, 2.75]])
    np.testing.assert_allclose(tf.math.unsorted_segment_sqrt_n(data, ids, 3).numpy(),
                               [[3, -2], [0, 0], [8 / np.sqrt(2), 5.5 / np.sqrt(2)]], rtol=1e-6)
    # negative ids are dropped; the half types keep their own lowest value (TensorFlow: -65504 for float16)
    half = tf.math.unsorted_segment_max(tf.constant([1.0, 2.0], tf.float16), [0, -1], 2)
    assert half.numpy().tolist() == [1.0, -65504.0]
    # integer means divide as tf.truediv does; sorted integer means keep the dtype
    assert tf.math.unsorted_segment_mean(tf.constant([1, 2]), [0, 0], 1).dtype == tf.float64
    assert tf.math.segment_mean(tf.constant([1, 2, 4]), [0, 0, 2]).numpy().tolist() == [1, 0, 4]


def test_sorted_segment_reductions_give_zero_for_missing_ids():
    x = tf.constant([4.0, -1.0, 6.0])
    assert tf.math.segment_max(x, [0, 0, 2]).numpy().tolist() == [4.0, 0.0, 6.0]
    assert tf.math.segment_min(x, [0, 0, 2]).numpy().tolist() == [-1.0, 0.0, 6.0]
    assert tf.math.segment_prod(x, [0, 0, 2]).numpy().tolist() == [-4.0, 1.0, 6.0]
    assert tf.math.segment_mean(x, [0, 0, 2]).numpy().tolist() == [1.5, 0.0, 6.0]


@pytest.mark.parametrize("op,tf_name", [("unsorted_segment_max", "UnsortedSegmentMax"),
                                        ("unsorted_segment_min", "UnsortedSegmentMin"),
                                        ("unsorted_segment_prod", "UnsortedSegmentProd"),
                                        ("unsorted_segment_mean", "UnsortedSegmentMean"),
                                        ("unsorted_segment_sqrt_n", "UnsortedSegmentSqrtN")])
def test_unsorted_segment_bad_input(op, tf_name):
    f = getattr(tf.math, op)
    with pytest.raises(InvalidArgumentError, match=r"segment_ids\[1\] = 5 is not in \[0, 3\) \[Op:"):
        f(tf.constant([1.0, 2.0]), [0, 5], 3)
    with pytest.raises(InvalidArgumentError, match=rf"num_segments = -1.*\[Op:{tf_name}\]"):
        f(tf.constant([1.0, 2.0]), [0, 1], -1)
    with pytest.raises(InvalidArgumentError, match=rf"does not start with segment_ids.shape.*\[Op:{tf_name}\]"):
        f(tf.constant([1.0, 2.0]), [0, 1, 1], 3)
    with pytest.raises(TypeError):
        f(tf.constant([1.0, 2.0]), [0, 1], 2.5)
    with pytest.raises(InvalidArgumentError, match=rf"\[Op:{tf_name}\]"):
        f(tf.constant([True, False]), [0, 1], 2)


def test_sqrt_n_refuses_integers():
    with pytest.raises(InvalidArgumentError, match=r"allowed: float16.*\[Op:UnsortedSegmentSqrtN\]"):
        tf.math.unsorted_segment_sqrt_n(tf.constant([1, 2]), [0, 0], 1)


@pytest.mark.parametrize("op,tf_name", [("segment_max", "SegmentMax"), ("segment_min", "SegmentMin"),
                                        ("segment_prod", "SegmentProd"), ("segment_mean", "SegmentMean")])
def test_sorted_segment_bad_input(op, tf_name):
    f = getattr(tf.math, op)
    with pytest.raises(InvalidArgumentError, match=rf"not sorted: segment_ids\[2\] = 0.*\[Op:{tf_name}\]"):
        f(tf.constant([1.0, 2.0, 3.0]), [0, 1, 0])
    with pytest.raises(InvalidArgumentError, match=rf"segment_ids has shape \[2\].*\[Op:{tf_name}\]"):
        f(tf.constant([1.0, 2.0, 3.0]), [0, 1])
    with pytest.raises(InvalidArgumentError, match=rf"segment_ids\[0\] = -1.*\[Op:{tf_name}\]"):
        f(tf.constant([1.0, 2.0]), [-1, 0])


def test_segment_max_gradient_splits_ties():
    autodiff = pytest.importorskip("tapeflow.autodiff")
    x = tf.constant([2.0, 2.0, 1.0, 0.0])
    with autodiff.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.unsorted_segment_max(x, [0, 0, 0, 1], 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.5, 0.5, 0.0, 1.0])
    with autodiff.GradientTape() as tape:  # one zero: the product of the rest; two zeros: nothing
        tape.watch(x)
        y = tf.math.unsorted_segment_prod(tf.stack([x[0], x[3], x[2], x[3], x[3]]), [0, 0, 0, 1, 1], 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 0.0, 0.0, 2.0])


def test_segment_reductions_run_inside_tf_function():
    f = tf.function(lambda x, ids: tf.math.unsorted_segment_max(x, ids, 2) + tf.math.unsorted_segment_prod(x, ids, 2))
    x, ids = tf.constant([1.0, 4.0, 3.0]), tf.constant([1, 0, 1])
    np.testing.assert_array_equal(f(x, ids).numpy(), [8.0, 6.0])


# ---- unique, bincount, confusion_matrix, histogram_fixed_width, searchsorted ----------------------------

def test_unique_and_counts_keep_first_occurrence_order():
    y, idx = tf.unique(tf.constant([7.0, 1.0, 7.0, 3.0, 1.0]))
    assert y.numpy().tolist() == [7.0, 1.0, 3.0] and idx.numpy().tolist() == [0, 1, 0, 2, 1]
    y, idx, count = tf.unique_with_counts(tf.constant([True, True, False]), out_idx=tf.int64)
    assert y.numpy().tolist() == [True, False] and count.numpy().tolist() == [2, 1] and idx.dtype == tf.int64
    traced = tf.function(lambda x: tf.unique(x).y)(tf.constant([2, 2, 5]))
    assert traced.numpy().tolist() == [2, 5]


def test_set_ops_bad_input():
    with pytest.raises(InvalidArgumentError, match=r"allowed: a vector.*\[Op:Unique\]"):
        tf.unique(tf.constant([[1, 2]]))
    with pytest.raises(InvalidArgumentError, match=r"out_idx = float32; allowed: int32, int64 \[Op:UniqueWithCounts\]"):
        tf.unique_with_counts(tf.constant([1]), out_idx=tf.float32)
    with pytest.raises(InvalidArgumentError, match=r"arr holds -1; allowed: non-negative values \[Op:Bincount\]"):
        tf.math.bincount(tf.constant([1, -1]))
    with pytest.raises(InvalidArgumentError, match=r"arr has dtype float32.*\[Op:Bincount\]"):
        tf.math.bincount(tf.constant([1.0]))
    with pytest.raises(InvalidArgumentError, match=r"weights and binary_output.*\[Op:Bincount\]"):
        tf.math.bincount(tf.constant([1]), weights=tf.constant([1.0]), binary_output=True)
    with pytest.raises(InvalidArgumentError, match=r"labels holds 3, not in \[0, 3\).*\[Op:ConfusionMatrix\]"):
        tf.math.confusion_matrix([0, 3], [1, 1], num_classes=3)
    with pytest.raises(InvalidArgumentError, match=r"labels has 2 entries but predictions 1.*\[Op:ConfusionMatrix\]"):
        tf.math.confusion_matrix([0, 1], [1])
    with pytest.raises(InvalidArgumentError, match=r"value_range = \[1.0, 1.0\]; allowed: lo < hi"):
        tf.histogram_fixed_width(tf.constant([1.0]), [1.0, 1.0])
    with pytest.raises(InvalidArgumentError, match=r"nbins = 0.*\[Op:HistogramFixedWidth\]"):
        tf.histogram_fixed_width(tf.constant([1.0]), [0.0, 1.0], nbins=0)
    with pytest.raises(InvalidArgumentError, match=r"side = 'middle'.*\[Op:SearchSorted\]"):
        tf.searchsorted([1.0, 2.0], [1.5], side="middle")
    with pytest.raises(InvalidArgumentError, match=r"same leading dimensions \[Op:SearchSorted\]"):
        tf.searchsorted([[1.0, 2.0]], [[1.5], [0.5]])


def test_counting_ops_match_tensorflow_examples():
    # results from TensorFlow 2.21's documentation and runs
    assert tf.math.bincount(tf.constant([[1, 1], [2, 5]]), axis=-1, maxlength=3).numpy().tolist() == \
        [[0, 2, 0], [0, 0, 1]]
    assert tf.math.bincount([1, 2], weights=[0.5, 1.5], minlength=4).numpy().tolist() == [0.0, 0.5, 1.5, 0.0]
    assert tf.math.confusion_matrix([1, 2], [2, 2], num_classes=3, weights=[0.5, 2.0],
                                    dtype=tf.float32).numpy().tolist() == [[0, 0, 0], [0, 0, 0.5], [0, 0, 2.0]]
    assert tf.histogram_fixed_width(tf.constant([0, 1, 9, 10]), [0, 10], nbins=2).numpy().tolist() == [2, 2]
    assert tf.searchsorted([[0, 3, 9], [1, 2, 3]], [[3], [0]], side="right", out_type=tf.int64).numpy().tolist() \
        == [[2], [0]]


# ---- roll, identity_n, tensor_scatter_nd_sub/max/min ------------------------------------------------

def test_roll_follows_tensorflow():
    x = tf.reshape(tf.range(6), [2, 3])
    assert tf.roll(x, shift=tf.constant([1, 1]), axis=[1, 1]).numpy().tolist() == [[1, 2, 0], [4, 5, 3]]
    assert tf.roll(x, shift=-7, axis=-1).numpy().tolist() == [[1, 2, 0], [4, 5, 3]]
    f = tf.function(lambda t, s: tf.roll(t, s, 0), input_signature=[tf.TensorSpec([None], tf.float32),
                                                                    tf.TensorSpec([], tf.int32)])
    assert f(tf.constant([1.0, 2.0, 3.0]), tf.constant(1)).numpy().tolist() == [3.0, 1.0, 2.0]
    with pytest.raises(InvalidArgumentError, match=r"axis = 2 is not in \[-2, 2\) \[Op:Roll\]"):
        tf.roll(x, 1, 2)
    with pytest.raises(InvalidArgumentError, match=r"one shift per axis \[Op:Roll\]"):
        tf.roll(x, [1, 2], 0)
    with pytest.raises(InvalidArgumentError, match=r"shift has dtype float32.*\[Op:Roll\]"):
        tf.roll(x, 1.5, 0)


def test_identity_n_and_scatter_family():
    a, b = tf.identity_n([tf.constant([1.0]), [2, 3]])
    assert a.numpy().tolist() == [1.0] and b.numpy().tolist() == [2, 3]
    with pytest.raises(TypeError, match=r"\[Op:IdentityN\]"):
        tf.identity_n(tf.constant([1.0]))
    x = tf.constant([[1.0, 9.0], [4.0, 2.0]])
    assert tf.tensor_scatter_nd_max(x, [[0, 0], [1, 1], [0, 0]], [3.0, 1.0, 2.0]).numpy().tolist() == \
        [[3.0, 9.0], [4.0, 2.0]]
    assert tf.tensor_scatter_nd_min(x, [[1]], [[5.0, -1.0]]).numpy().tolist() == [[1.0, 9.0], [4.0, -1.0]]
    assert tf.tensor_scatter_nd_sub(x, [[1, 0]], [4.0]).numpy().tolist() == [[1.0, 9.0], [0.0, 2.0]]
    with pytest.raises(InvalidArgumentError, match=r"\[2\].*\[Op:TensorScatterMax\]"):
        tf.tensor_scatter_nd_max(x, [[2]], [[1.0, 1.0]])
    with pytest.raises(InvalidArgumentError, match=r"updates has dtype int32.*\[Op:TensorScatterMin\]"):
        tf.tensor_scatter_nd_min(x, [[0]], tf.constant([[1, 1]]))
    with pytest.raises(InvalidArgumentError, match=r"tensor has dtype bool.*\[Op:TensorScatterSub\]"):
        tf.tensor_scatter_nd_sub(tf.constant([True]), [[0]], [False])


def test_tensor_scatter_max_gradient_goes_to_the_winner():
    autodiff = pytest.importorskip("tapeflow.autodiff")
    x, u = tf.constant([1.0, 5.0]), tf.constant([3.0, 5.0])
    with autodiff.GradientTape() as tape:
        tape.watch([x, u])
        y = tf.tensor_scatter_nd_max(x, [[0], [1]], u)
    gx, gu = tape.gradient(y, [x, u])
    assert gx.numpy().tolist() == [0.0, 0.5] and gu.numpy().tolist() == [1.0, 0.5]


# ---- tf.nn.l2_loss, embedding_lookup, local_response_normalization ---------------------------------

def test_nn_names_follow_tensorflow():
    nn = pytest.importorskip("tapeflow.nn")
    assert nn.l2_loss(tf.constant([[1.0, 2.0], [3.0, 0.0]])).numpy().item() == 7.0
    table = tf.constant([[0.0, 0.0], [1.0, 1.0], [3.0, 4.0]])
    # TensorFlow 2.21: shards are contiguous blocks ("div"); max_norm rescales long rows
    assert nn.embedding_lookup([table[:2], table[2:]], [2, 1]).numpy().tolist() == [[3.0, 4.0], [1.0, 1.0]]
    np.testing.assert_allclose(nn.embedding_lookup(table, [2], max_norm=1.0).numpy(), [[0.6, 0.8]], rtol=1e-6)
    x = tf.reshape(tf.constant([1.0, 2.0, 3.0]), [1, 1, 1, 3])
    np.testing.assert_allclose(nn.local_response_normalization(x, depth_radius=1, alpha=0.5).numpy().ravel(),
                               [0.5345225, 0.70710677, 1.0954452], rtol=1e-6)
    assert nn.lrn is nn.local_response_normalization


def test_nn_names_bad_input():
    nn = pytest.importorskip("tapeflow.nn")
    with pytest.raises(InvalidArgumentError, match=r"t has dtype int32.*\[Op:L2Loss\]"):
        nn.l2_loss(tf.constant([1, 2]))
    with pytest.raises(InvalidArgumentError, match=r"indices.*\[Op:Gather\]"):
        nn.embedding_lookup(tf.constant([[1.0]]), [3])
    with pytest.raises(InvalidArgumentError, match=r"ids has dtype float32.*\[Op:EmbeddingLookup\]"):
        nn.embedding_lookup(tf.constant([[1.0]]), [0.0])
    with pytest.raises(InvalidArgumentError, match=r"max_norm = 0.*\[Op:EmbeddingLookup\]"):
        nn.embedding_lookup(tf.constant([[1.0]]), [0], max_norm=0)
    with pytest.raises(InvalidArgumentError, match=r"allowed: rank 4.*\[Op:LRN\]"):
        nn.local_response_normalization(tf.ones([2, 3]))
    with pytest.raises(TypeError, match=r"depth_radius must be an int.*\[Op:LRN\]"):
        nn.local_response_normalization(tf.ones([1, 1, 1, 3]), depth_radius=1.5)
    with pytest.raises(InvalidArgumentError, match=r"depth_radius = -1.*\[Op:LRN\]"):
        nn.local_response_normalization(tf.ones([1, 1, 1, 3]), depth_radius=-1)


# ---- tf.nn.ctc_loss ---------------------------------------------------------------------------------

def test_ctc_loss_counts_every_alignment():
    nn = pytest.importorskip("tapeflow.nn")
    # two uniform frames over (blank, a, b): label "a" has 3 of 9 paths (a a, - a, a -): -log(1/3)
    logits = tf.zeros([2, 1, 3], tf.float64)
    np.testing.assert_allclose(nn.ctc_loss([[1]], logits, [1], [2]).numpy(), [np.log(3.0)], rtol=1e-12)
    # "a a" needs a blank between the repeats: three frames, one path (a - a) of 27
    np.testing.assert_allclose(nn.ctc_loss([[1, 1]], tf.zeros([3, 1, 3]), [2], [3]).numpy(), [np.log(27.0)],
                               rtol=1e-6)
    assert nn.ctc_loss([[1, 1]], tf.zeros([2, 1, 3]), [2], [2]).numpy().tolist() == [np.inf]
    # blank_index=-1: the last class is the blank; batch-major logits
    got = nn.ctc_loss([[0]], tf.zeros([1, 2, 3]), [1], [2], logits_time_major=False, blank_index=-1)
    np.testing.assert_allclose(got.numpy(), [np.log(3.0)], rtol=1e-6)


def test_ctc_loss_gradient_is_softmax_minus_occupancy():
    autodiff = pytest.importorskip("tapeflow.autodiff")
    nn = pytest.importorskip("tapeflow.nn")
    logits = tf.zeros([2, 1, 3], tf.float64)
    with autodiff.GradientTape() as tape:
        tape.watch(logits)
        loss = nn.ctc_loss([[1]], logits, [1], [2])
    # each frame: softmax 1/3 each; the label occupies 2/3 of the mass, the blank 1/3
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), [[[0.0, -1 / 3, 1 / 3]]] * 2, atol=1e-12)


def test_ctc_loss_bad_input():
    nn = pytest.importorskip("tapeflow.nn")
    x = tf.zeros([4, 2, 3])
    with pytest.raises(InvalidArgumentError, match=r"labels\[1, 0\] = 3 is not in \[0, 3\).*\[Op:CTCLoss\]"):
        nn.ctc_loss([[1], [3]], x, [1, 1], [4, 4])
    with pytest.raises(InvalidArgumentError, match=r"labels\[0, 0\] = 0 is the blank class 0.*\[Op:CTCLoss\]"):
        nn.ctc_loss([[0], [1]], x, [1, 1], [4, 4])
    with pytest.raises(InvalidArgumentError, match=r"logit_length\[1\] = 5 is not in \[0, 4\].*\[Op:CTCLoss\]"):
        nn.ctc_loss([[1], [1]], x, [1, 1], [4, 5])
    with pytest.raises(InvalidArgumentError, match=r"label_length\[0\] = 2 is not in \[0, 1\].*\[Op:CTCLoss\]"):
        nn.ctc_loss([[1], [1]], x, [2, 1], [4, 4])
    with pytest.raises(InvalidArgumentError, match=r"blank_index = 3 is not in \[-3, 3\).*\[Op:CTCLoss\]"):
        nn.ctc_loss([[1], [1]], x, [1, 1], [4, 4], blank_index=3)
    with pytest.raises(InvalidArgumentError, match=r"logits has shape \[4, 6\].*\[Op:CTCLoss\]"):
        nn.ctc_loss([[1], [1]], tf.zeros([4, 6]), [1, 1], [4, 4])
    with pytest.raises(InvalidArgumentError, match=r"unique.*not supported.*\[Op:CTCLoss\]"):
        nn.ctc_loss([[1], [1]], x, [1, 1], [4, 4], unique=([[1], [1]], [[0], [0]]))
    with pytest.raises(InvalidArgumentError, match=r"label_length is None.*\[Op:CTCLoss\]"):
        nn.ctc_loss([[1], [1]], x, None, [4, 4])


# ---- tf.config.experimental memory ----------------------------------------------------------------

def test_memory_info_counts_the_device_allocator():
    cpu = tf.config.list_physical_devices("CPU")[0]
    assert tf.config.experimental.get_memory_info("CPU:0") == {"current": 0, "peak": 0}   # as TensorFlow 2.21
    with pytest.raises(ValueError, match="Cannot set memory growth on non-GPU"):
        tf.config.experimental.set_memory_growth(cpu, True)
    with pytest.raises(ValueError, match="No matching devices found for 'GPU:7'"):
        tf.config.experimental.get_memory_info("GPU:7")
    with pytest.raises(TypeError, match="enable must be a bool"):
        tf.config.experimental.set_memory_growth(cpu, 1)
    accel = tf.config.list_physical_devices("OpenCL") + tf.config.list_physical_devices("CUDA")
    for dev in accel:  # pocl's OpenCL device where installed: its allocator counts bytes of live buffers
        tf.config.experimental.reset_memory_stats(dev)
        before = tf.config.experimental.get_memory_info(dev)["current"]
        with tf.device(dev.name):
            x = tf.ones([1024, 1024])
            info = tf.config.experimental.get_memory_info(dev)
            assert info["current"] - before >= 4 * 1024 * 1024 and info["peak"] >= info["current"]
            del x
        after = tf.config.experimental.get_memory_info(dev)
        assert after["current"] == before and after["peak"] == info["peak"]
        tf.config.experimental.set_memory_growth(dev, False)
        assert tf.config.experimental.get_memory_growth(dev) is False
        tf.config.experimental.set_memory_growth(dev, True)
        assert tf.config.experimental.get_memory_growth(dev) is True


# ---- sliced variable assignment ---------------------------------------------------------------------

def test_sliced_assignment_follows_tensorflow():
    # the sequence checked against TensorFlow 2.21
    v = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert v[0].assign([7.0, 8.0, 9.0]) is v
    assert v.numpy().tolist() == [[7, 8, 9], [4, 5, 6]]
    v[:, 1].assign(0.0)                                   # broadcast to the slice
    assert v.numpy().tolist() == [[7, 0, 9], [4, 0, 6]]
    v[tf.newaxis, 1, ::2].assign([[5.0, 5.0]])
    assert v.numpy().tolist() == [[7, 0, 9], [5, 0, 5]]
    v[1:].assign_add(tf.constant([[1.0, 1.0, 1.0]]))
    v[-1, ...].assign_sub(2.0)
    assert v.numpy().tolist() == [[7, 0, 9], [4, -1, 4]]
    before = v[0]                                         # a slice is a tensor read when made
    v[0].assign([0.0, 0.0, 0.0])
    assert before.numpy().tolist() == [7, 0, 9] and v[0].numpy().tolist() == [0, 0, 0]
    assert not hasattr(tf.constant([1.0]), "assign") and not hasattr(v.read_value(), "assign_add")


def test_sliced_assignment_bad_input():
    v = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(InvalidArgumentError, match=r"Cannot broadcast input shape \[2\] into final shape \[3\].*"
                                                    r"\[Op:ResourceStridedSliceAssign\]"):
        v[0].assign([1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match=r"int32 value to a slice of the float32.*"
                                                    r"\[Op:ResourceStridedSliceAssign\]"):
        v[0].assign(tf.constant([1, 2, 3]))
    with pytest.raises(InvalidArgumentError, match=r"\[Op:StridedSlice\]"):
        v[5].assign(1.0)
    assert v.numpy().tolist() == [[1, 2, 3], [4, 5, 6]]   # nothing was written


def test_sliced_assignment_inside_tf_function_and_tapes():
    v = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    @tf.function
    def step(d):
        v[1].assign(v[1] * 2.0)
        v[0, 1:].assign_add(d)
        return v.read_value()

    step(tf.constant(1.0))
    np.testing.assert_array_equal(step(tf.constant(1.0)).numpy(), [[1, 4, 5], [16, 20, 24]])   # fresh per call
    assert step.experimental_get_tracing_count() == 1
    autodiff = pytest.importorskip("tapeflow.autodiff")
    with autodiff.GradientTape() as tape:
        y = tf.reduce_sum(v[1] * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [[0, 0, 0], [3, 3, 3]])


def test_sliced_updates_are_atomic():
    import threading

    v = tf.Variable(tf.zeros([3, 4]))

    def work():
        for _ in range(100):
            v[1, 2:].assign_add(1.0)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert v.numpy()[1].tolist() == [0, 0, 400, 400] and float(tf.reduce_sum(v)) == 800.0


# ---- top_k / in_top_k, tf.random.Generator, stateless_categorical -----------------------------------

def test_top_k_index_type_and_in_top_k():
    v, i = tf.math.top_k(tf.constant([1.0, 3.0, 2.0]), k=2, index_type=tf.int64)
    assert i.dtype == tf.int64 and i.numpy().tolist() == [1, 2] and v.numpy().tolist() == [3.0, 2.0]
    with pytest.raises(InvalidArgumentError, match=r"index_type = float32.*\[Op:TopKV2\]"):
        tf.math.top_k(tf.constant([1.0]), index_type=tf.float32)
    # TensorFlow 2.21: ties at the boundary are in; a non-finite row or an unknown class is not
    preds = [[0.1, 0.5, 0.4], [0.2, 0.2, 0.6], [1.0, 2.0, 3.0], [float("nan"), 1.0, 1.0]]
    assert tf.math.in_top_k([2, 0, 5, 1], preds, k=2).numpy().tolist() == [True, True, False, False]
    assert tf.math.in_top_k([1, 0], [[1.0, float("inf"), 3.0], [1.0, 1.0, 1.0]], k=1).numpy().tolist() == \
        [False, True]
    with pytest.raises(InvalidArgumentError, match=r"predictions has dtype float64.*\[Op:InTopKV2\]"):
        tf.math.in_top_k([0], tf.constant([[1.0]], tf.float64), 1)
    with pytest.raises(InvalidArgumentError, match=r"targets has 2 entries for 1 rows.*\[Op:InTopKV2\]"):
        tf.math.in_top_k([0, 1], [[1.0, 2.0]], 1)


def test_generator_draws_fresh_per_compiled_call():
    g, ref = tf.random.Generator.from_seed(1), tf.random.Generator.from_seed(1)
    step = tf.function(lambda: g.normal([3]) + g.uniform([2], maxval=4, dtype=tf.int64)[0].astype(tf.float32))
    got = [step().numpy() for _ in range(3)]
    want = [(ref.normal([3]) + ref.uniform([2], maxval=4, dtype=tf.int64)[0].astype(tf.float32)).numpy()
            for _ in range(3)]
    np.testing.assert_array_equal(got, want)     # the compiled draws are the eager sequence, call after call
    assert not np.array_equal(got[0], got[1]) and g.counter == ref.counter == 6
    assert step.experimental_get_tracing_count() == 1
    seeds = g.make_seeds(4)
    assert seeds.shape == (2, 4) and seeds.dtype == tf.int64
    a = tf.random.stateless_uniform([3], seed=seeds[:, 0])
    np.testing.assert_array_equal(a.numpy(), tf.random.stateless_uniform([3], seed=seeds[:, 0]).numpy())
    assert tf.random.Generator.from_seed(1, alg="philox").algorithm == 1
    with pytest.raises(InvalidArgumentError, match=r"alg = 'threefry'"):
        tf.random.Generator.from_seed(1, alg="threefry")
    with pytest.raises(InvalidArgumentError, match=r"count = -1"):
        g.make_seeds(-1)


def test_stateless_categorical_depends_only_on_its_seed():
    logits = tf.math.log([[0.2, 0.8], [0.9, 0.1]])
    a = tf.random.stateless_categorical(logits, 50, seed=[4, 2], dtype=tf.int32)
    b = tf.function(lambda x: tf.random.stateless_categorical(x, 50, seed=[4, 2], dtype=tf.int32))(logits)
    assert a.dtype == tf.int32 and a.numpy().tolist() == b.numpy().tolist()
    other = tf.random.stateless_categorical(logits, 50, seed=[4, 3], dtype=tf.int32)
    assert a.numpy().tolist() != other.numpy().tolist()
    with pytest.raises(InvalidArgumentError, match=r"seed must be a pair.*\[Op:StatelessMultinomial\]"):
        tf.random.stateless_categorical(logits, 2, seed=7)


# ---- tf.experimental.numpy ------------------------------------------------------------------------

_A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
_I = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
_B = np.array([[True, False, True], [False, False, True]])
_V = np.array([3.0, 1.0, 2.0])
# name -> the NumPy arguments of one call (each compared with numpy.<name> on values and dtype)
TNP_CALLS = {
    "negative": (_A,), "positive": (_I,), "abs": (_A,), "absolute": (_I,), "sqrt": (np.abs(_A),), "square": (_I,),
    "exp": (_A,), "expm1": (_A,), "log": (np.abs(_A),), "log1p": (np.abs(_A),), "log2": (np.abs(_A),),
    "log10": (np.abs(_A),), "sin": (_A,), "cos": (_I,), "tan": (_A / 4,), "arcsin": (_A / 5,), "arccos": (_A / 5,),
    "arctan": (_A,), "sinh": (_A,), "cosh": (_A,), "tanh": (_I,), "arcsinh": (_A,), "arccosh": (np.abs(_A) + 1,),
    "arctanh": (_A / 5,), "sign": (_A,), "floor": (_A,), "ceil": (_A,), "rint": (_A,), "reciprocal": (_A,),
    "isnan": (_A,), "isinf": (_A,), "isfinite": (_I,), "logical_not": (_B,),
    "add": (_I, 1.5), "subtract": (_A, _I), "multiply": (_I.astype(np.int8), np.uint8(3)), "divide": (_I, 4),
    "true_divide": (_I, _I), "floor_divide": (_I, 4), "mod": (_A, 2.0), "remainder": (-_I, 4),
    "power": (_A, 2), "maximum": (_A, _I), "minimum": (_I, 2.5), "arctan2": (_A, _I), "equal": (_I, 2),
    "not_equal": (_A, _I), "less": (_A, 1), "less_equal": (_I, _I), "greater": (_A, _I),
    "greater_equal": (_A, 0.5), "logical_and": (_B, True), "logical_or": (_B, _B), "logical_xor": (_B, _B[::-1]),
    "around": (_A * 1.234, 2), "clip": (_A, -1.0, 2.0), "isclose": (_A, _A + 1e-9), "allclose": (_A, _A),
    "array_equal": (_I, _I), "zeros": ((2, 3),), "ones": (4,), "empty": ((2,),), "full": ((2, 2), 3),
    "zeros_like": (_I,), "ones_like": (_A,), "full_like": (_I, 7), "arange": (1, 10, 3), "linspace": (0, 1, 5),
    "eye": (3, 4, 1), "identity": (3,), "diag": (_V,), "diagonal": (_A,), "trace": (_I,), "shape": (_A,),
    "ndim": (_A,), "size": (_A,), "copy": (_I,), "reshape": (_I, (3, 2)), "ravel": (_A,), "transpose": (_A,),
    "swapaxes": (_A, 0, 1), "moveaxis": (np.zeros((2, 3, 4)), 0, -1), "expand_dims": (_I, 1),
    "squeeze": (np.zeros((1, 3, 1)),), "atleast_1d": (5.0,), "atleast_2d": (_V,), "concatenate": ([_I, _A],),
    "stack": ([_I, _I],), "hstack": ([_V, _V],), "vstack": ([_V, _V],), "tile": (_V, (2, 2)),
    "repeat": (_I, 2, 1), "flip": (_A,), "roll": (_I, 1), "broadcast_to": (_V, (2, 3)), "take": (_A, [4, 0]),
    "where": (_B, _A, _I), "sort": (_A,), "argsort": (_V,), "sum": (_I,), "prod": (_A,), "mean": (_I,),
    "var": (_A,), "std": (_I,), "amax": (_A,), "amin": (_I,), "max": (_I,), "min": (_A,), "all": (_B,),
    "any": (_B,), "argmax": (_A,), "argmin": (_I,), "cumsum": (_I,), "cumprod": (_A,), "count_nonzero": (_B,),
    "average": (_V,), "matmul": (_A, _I.T), "dot": (_V, _V), "vdot": (_A, _A), "inner": (_A, _A),
    "outer": (_V, _I), "tensordot": (_A, _I.T, 1), "einsum": ("ij,jk->ik", _A, _I.T), "meshgrid": (_V, _V[:2]),
    "split": (np.arange(6), 3), "result_type": (_I, 1.5), "array": ([[1, 2]],), "asarray": ([1.5, 2.0],),
    "empty_like": (_A,), "round": (_A * 1.234, 1),
}


@contextlib.contextmanager
def _kept_random_state():
    """tnp.random.seed is the global seed: later tests get the random state they would have had."""
    from tapeflow.core.ops.random_ops import STATE

    saved = (STATE.global_seed, STATE.op_counter, {k: list(v) for k, v in STATE.calls.items()})
    try:
        yield
    finally:
        STATE.global_seed, STATE.op_counter = saved[0], saved[1]
        STATE.calls.clear()
        STATE.calls.update(saved[2])


def _as_np(x):
    if isinstance(x, (list, tuple)):
        return [_as_np(v) for v in x]
    return x.numpy() if isinstance(x, tf.Tensor) else np.asarray(x)


@pytest.mark.parametrize("name", sorted(TNP_CALLS))
def test_tnp_matches_numpy(name):
    import tapeflow.experimental.numpy as tnp

    args = TNP_CALLS[name]
    got = getattr(tnp, name)(*[tnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
    want = getattr(np, name)(*args)
    if name == "result_type":
        assert got.np == want
        return
    got, want = _as_np(got), _as_np(want)
    if name in ("empty", "empty_like"):   # NumPy's are uninitialised: shape and dtype only
        want = np.zeros_like(want)
    for g, w in zip(got, want) if isinstance(want, list) else [(got, want)]:
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"{name}: dtype {g.dtype} != NumPy's {w.dtype}"
        assert g.shape == w.shape, f"{name}: shape {g.shape} != NumPy's {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=name)


def test_tnp_namespace():
    import tapeflow.experimental.numpy as tnp

    assert tf.experimental.numpy is tnp and tnp.ndarray is tf.Tensor
    names = [n for n in tnp.__all__ if callable(getattr(tnp, n)) and not isinstance(getattr(tnp, n), tf.DType)
             and n not in ("ndarray", "random")]
    missing = sorted(set(names) - set(TNP_CALLS))
    assert not missing, f"tnp functions without a NumPy comparison here: {missing}"
    assert len(names) >= 80
    with _kept_random_state():
        tnp.random.seed(3)
        a = tnp.random.randn(4)
        tnp.random.seed(3)
        assert a.dtype == tnp.float64 and a.numpy().tolist() == tnp.random.randn(4).numpy().tolist()
        assert tnp.random.randint(5, size=(3,)).dtype == tnp.int64
    # traced and differentiated through tapeflow ops
    f = tf.function(lambda x: tnp.sum(tnp.square(x), axis=0))
    np.testing.assert_allclose(f(tf.constant(_A)).numpy(), np.sum(np.square(_A), axis=0))
    autodiff = pytest.importorskip("tapeflow.autodiff")
    x = tf.constant(_V)
    with autodiff.GradientTape() as tape:
        tape.watch(x)
        y = tnp.sum(tnp.square(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * _V)
    assert tnp.zeros([2], dtype=np.complex64).dtype == tf.complex64   # as TensorFlow's tnp
    with pytest.raises(InvalidArgumentError, match=r"uint16.*not a tapeflow dtype"):
        tnp.zeros([2], dtype=np.uint16)
    with pytest.raises(InvalidArgumentError, match=r"repeats must be an int"):
        tnp.repeat([1, 2], [1, 2])


@pytest.mark.parametrize("modname", ["tapeflow.experimental", "tapeflow.experimental.numpy"])
def test_tnp_docstring_examples(modname):
    """tests/test_docstring_examples.py walks tapeflow.core & co.; tapeflow.experimental lives beside them."""
    import doctest
    import importlib

    mod = importlib.import_module(modname)
    with _kept_random_state():
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_global_generator_and_seed_derivation():
    saved = tf.random.get_global_generator()
    try:
        g = tf.random.Generator.from_seed(9)
        tf.random.set_global_generator(g)
        assert tf.random.get_global_generator() is g and tf.random.experimental.get_global_generator() is g
        ref = tf.random.Generator.from_key_counter(g.key, g.counter)
        step = tf.function(lambda: tf.random.get_global_generator().uniform([3]))
        np.testing.assert_array_equal(step().numpy(), ref.uniform([3]).numpy())
        np.testing.assert_array_equal(step().numpy(), ref.uniform([3]).numpy())
        with pytest.raises(TypeError, match="takes a tf.random.Generator"):
            tf.random.set_global_generator(3)
    finally:
        tf.random.set_global_generator(saved)
    full = tf.random.Generator.from_seed(1).uniform_full_int([1000], tf.int32).numpy()
    assert full.min() < -2 ** 30 and full.max() > 2 ** 30          # the whole int32 range is drawn from
    with pytest.raises(InvalidArgumentError, match=r"dtype float32; allowed: int32, int64"):
        tf.random.Generator.from_seed(1).uniform_full_int([2], tf.float32)
    pairs = tf.random.experimental.stateless_split([1, 2], num=3)
    assert pairs.shape == (3, 2) and len({tuple(p) for p in pairs.numpy().tolist()}) == 3
    np.testing.assert_array_equal(pairs.numpy(), tf.random.experimental.stateless_split([1, 2], 3).numpy())
    a, b = (tf.random.experimental.stateless_fold_in([1, 2], d) for d in (7, 8))
    assert a.numpy().tolist() != b.numpy().tolist()
    np.testing.assert_array_equal(a.numpy(), tf.random.experimental.stateless_fold_in([1, 2], 7).numpy())
    with pytest.raises(InvalidArgumentError, match=r"num = -1"):
        tf.random.experimental.stateless_split([1, 2], -1)


def test_random_split_fold_in_and_algorithm_names():
    np.testing.assert_array_equal(tf.random.split([3, 4], 2).numpy(),
                                  tf.random.experimental.stateless_split([3, 4], 2).numpy())
    np.testing.assert_array_equal(tf.random.fold_in([3, 4], 5).numpy(),
                                  tf.random.experimental.stateless_fold_in([3, 4], 5).numpy())
    for alg in (tf.random.Algorithm.PHILOX, tf.random.Algorithm.AUTO_SELECT, "auto_select", 1):
        assert tf.random.Generator.from_seed(1, alg=alg).algorithm == 1
    with pytest.raises(InvalidArgumentError, match="alg = <Algorithm.THREEFRY: 2>"):
        tf.random.Generator.from_seed(1, alg=tf.random.Algorithm.THREEFRY)


def test_module_name_scope_name_ends_with_a_slash_as_tensorflow():
    m = tf.Module(name="m")
    assert m.name_scope.name == "m/"  # TensorFlow 2.21: tf.Module(name="m").name_scope.name == "m/"
    with m.name_scope as scope:
        assert scope == "m/"
