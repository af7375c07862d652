"""The strategy API in one process: MultiWorkerMirroredStrategy without mpiexec (one replica) and
MirroredStrategy over local devices (one replica thread per device)."""
import numpy as np
import pytest

import tapeflow as tf
from tapeflow.core import devices as _devices
from tapeflow.distribute import _collective


def _devices_for_two():
    names = [d.name for d in _devices.list_devices()]
    return ["cpu:0", "opencl:0"] if "opencl:0" in names else ["cpu:0", "cpu:0"]


def test_multiworker_without_mpiexec_is_one_replica():
    s = tf.distribute.MultiWorkerMirroredStrategy()
    assert s.num_replicas_in_sync == 1 and s.cluster_resolver.task_id == 0
    assert tf.distribute.get_strategy() is not s
    with s.scope():
        assert tf.distribute.get_strategy() is s and tf.distribute.in_cross_replica_context()
        assert tf.distribute.get_replica_context() is None
        v = tf.Variable([1.0, 2.0])
    out = s.run(lambda x: (tf.distribute.get_replica_context().replica_id_in_sync_group, v * x), args=(3.0,))
    assert out[0] == 0 and out[1].numpy().tolist() == [3.0, 6.0]
    assert float(s.reduce("MEAN", tf.constant([1.0, 3.0]), axis=0)) == 2.0
    assert s.gather(tf.constant([[1.0]]), axis=0).numpy().tolist() == [[1.0]]


def test_compute_average_loss_is_tensorflows_rule():
    loss = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert float(tf.distribute.compute_average_loss(loss)) == 2.5
    assert float(tf.distribute.compute_average_loss(loss, sample_weight=[1.0, 0.0, 1.0, 0.0],
                                                    global_batch_size=8)) == 0.5
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])
    per = s.run(lambda: tf.distribute.compute_average_loss(tf.constant([2.0, 2.0])))
    assert [float(t) for t in s.experimental_local_results(per)] == [1.0, 1.0]   # batch 2 x 2 replicas
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"global_batch_size=0; allowed.*ComputeAverageLoss"):
        tf.distribute.compute_average_loss(loss, global_batch_size=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"int32; allowed: a floating-point"):
        tf.distribute.compute_average_loss(tf.constant([1, 2]))


def test_bad_arguments_are_typed_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"reduce_op='MAX'; allowed.*StrategyReduce"):
        tf.distribute.MultiWorkerMirroredStrategy().reduce("MAX", 1.0, axis=None)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"timeout_seconds=5.*allowed: None"):
        tf.distribute.experimental.CommunicationOptions(timeout_seconds=5)
    with pytest.raises(TypeError, match="overlap_backward must be True, False or None, not str"):
        tf.distribute.experimental.CommunicationOptions(overlap_backward="yes")
    with pytest.raises(TypeError, match="devices must be a non-empty list"):
        tf.distribute.MirroredStrategy("cpu:0")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"global batch of 1 example\(s\) cannot be split over 2"):
        list(tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"]).experimental_distribute_dataset([np.ones((1, 2))]))
    with pytest.raises(ValueError, match="Mixing different"):
        with tf.distribute.MirroredStrategy(["cpu:0"]).scope(), tf.distribute.MirroredStrategy(["cpu:0"]).scope():
            pass


def test_distribute_dataset_splits_each_global_batch_as_tensorflow():
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0", "cpu:0"])
    batch = (np.arange(10.0).reshape(5, 2), np.arange(5))
    (per,) = list(s.experimental_distribute_dataset([batch]))
    parts = [[t.numpy().tolist() for t in s.experimental_local_results(p)] for p in per]
    assert parts[1] == [[0, 1], [2, 3], [4]]   # 5 rows over 3 replicas: 2, 2, 1


def _train(strategy, steps=4, global_batch=8):
    """A custom loop: replicas all-reduce their gradients, each applies the same step (manual SGD)."""
    tf.random.set_seed(3)
    with strategy.scope():
        w = tf.Variable(tf.random.normal([4, 3]))
        b = tf.Variable(tf.zeros([3]))
    rng = np.random.default_rng(1)
    data = [(rng.normal(size=(global_batch, 4)).astype(np.float32),
             rng.normal(size=(global_batch, 3)).astype(np.float32)) for _ in range(steps)]

    def step(x, y):
        with tf.GradientTape() as tape:
            err = tf.reduce_sum(tf.square(tf.matmul(x, w) + b - y), axis=1)
            loss = tf.distribute.compute_average_loss(err, global_batch_size=global_batch)
        gw, gb = tf.distribute.get_replica_context().all_reduce("SUM", tape.gradient(loss, [w, b]))
        return gw, gb

    for xy in strategy.experimental_distribute_dataset(data):
        gw, gb = strategy.run(step, args=xy)
        gw = strategy.experimental_local_results(gw)
        gb = strategy.experimental_local_results(gb)
        for g in gw[1:]:
            assert g.numpy().tobytes() == gw[0].numpy().tobytes()    # every replica got the same sum
        w.assign_sub(0.1 * gw[0])
        b.assign_sub(0.1 * gb[0])
    return w.numpy(), b.numpy()


def test_mirrored_over_local_devices_equals_one_replica():
    want = _train(tf.distribute.MirroredStrategy(["cpu:0"]))
    got = _train(tf.distribute.MirroredStrategy(_devices_for_two()))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_a_failing_replica_cancels_the_others_and_its_error_is_raised():
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])

    def fn():
        if tf.distribute.get_replica_context().replica_id_in_sync_group == 1:
            raise RuntimeError("replica one failed")
        return tf.distribute.get_replica_context().all_reduce("SUM", tf.constant(1.0))   # would wait forever

    with pytest.raises(RuntimeError, match="replica one failed"):
        s.run(fn)
    assert float(s.reduce("SUM", s.run(lambda: tf.constant(2.0)), axis=None)) == 4.0   # usable afterwards


def test_mirrored_replicas_with_other_shapes_are_named():
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:0"])

    def fn():
        i = tf.distribute.get_replica_context().replica_id_in_sync_group
        return tf.distribute.get_replica_context().all_reduce("SUM", [tf.zeros([2 + i])])

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"float32\[2\] on rank 0 but .* float32\[3\] on rank 1"):
        s.run(fn)


def test_buckets_hold_at_most_bytes_per_pack_and_split_by_dtype():
    comm = _collective.MPIComm.__new__(_collective.MPIComm)
    ts = [tf.zeros([10]), tf.zeros([10]), tf.zeros([3], tf.int64), tf.zeros([100]), tf.zeros([5], tf.float16)]
    buckets = [(idx, nbytes, w.name) for idx, nbytes, w in comm._buckets(ts, 96)]
    # float16 travels as float32 with the other float32 tensors; a tensor bigger than a bucket is one message
    assert buckets == [([0, 1], 80, "float32"), ([2], 24, "int64"), ([3], 400, "float32"), ([4], 20, "float32")]


def test_bucket_results_are_views_of_a_buffer_reused_only_once_they_are_gone():
    from mpi4py import MPI

    from tapeflow.distribute import _collective as C

    class TwoEqualRanks:   # what MPI_Allreduce(SUM) gives when the other rank holds the same values
        def Get_rank(self):
            return 0

        def Get_size(self):
            return 2

        def Allreduce(self, send, recv, op):
            assert send is MPI.IN_PLACE and op is MPI.SUM
            recv *= 2

    comm = C.MPIComm(TwoEqualRanks())
    with tf.device("cpu:0"):   # host tensors (a GPU device's are staged through host memory instead)
        a = [tf.constant([1.0, 2.0]), tf.constant([[3.0]]), tf.constant(4.0)]
        a10 = [t * 10 for t in a]
    first = comm.all_reduce(a)
    second = comm.all_reduce(a10)                       # the first results are alive: another buffer
    assert [t.numpy().tolist() for t in first] == [[2.0, 4.0], [[6.0]], 8.0]
    assert [t.numpy().tolist() for t in second] == [[20.0, 40.0], [[60.0]], 80.0]
    assert all(np.asarray(t).base is np.asarray(first[0]).base for t in first)   # views of one buffer, no copy
    assert np.asarray(first[0]).base.size == 4 and np.asarray(second[0]).base is not np.asarray(first[0]).base

    def address(t):
        return np.asarray(t).__array_interface__["data"][0]

    where = address(first[0])
    del first
    third = comm.all_reduce(a)                          # now free: taken again
    assert address(third[0]) == where
    assert [t.numpy().tolist() for t in third] == [[2.0, 4.0], [[6.0]], 8.0]


def test_a_numpy_view_of_a_result_keeps_its_buffer_from_reuse():
    from tapeflow.distribute import _collective as C

    class TwoEqualRanks:
        def Get_rank(self):
            return 0

        def Get_size(self):
            return 2

        def Allreduce(self, send, recv, op):
            if isinstance(send, np.ndarray):
                np.copyto(recv, send)
            recv *= 2

    comm = C.MPIComm(TwoEqualRanks())
    n = 3 << 20   # 12 MiB of float32: one tensor bigger than a bucket; then 3 tensors of 4 MiB, two buckets
    with tf.device("cpu:0"):
        for tensors in ([tf.ones([n])], [tf.ones([n // 3]), tf.ones([n // 3]), tf.ones([n // 3])]):
            views = [np.asarray(t) for t in comm.all_reduce(tensors)]   # the tensors are gone, the views stay
            again = comm.all_reduce([t * 5 for t in tensors])
            assert all(float(v.min()) == float(v.max()) == 2.0 for v in views)
            assert all(float(np.asarray(t).min()) == 10.0 for t in again)
