"""DLPack exchange: zero-copy both ways with NumPy (always) and PyTorch (where it is importable).

torch is not a declared test dependency (PyPI's Linux wheel brings ~2.5 GB of CUDA libraries): its tests run
where torch is installed (the dev venv, the bench session) and skip elsewhere; NumPy's run everywhere.
"""
import gc

import numpy as np
import pytest

import tapeflow as tf

dlpack = tf.experimental.dlpack


@pytest.fixture
def cpu():
    with tf.device("cpu:0"):
        yield


def _addr(t):
    return np.asarray(t).__array_interface__["data"][0]


def test_numpy_from_dlpack_shares_memory_read_only(cpu):
    t = tf.constant([[1., 2.], [3., 4.]])
    a = np.from_dlpack(t)
    assert a.dtype == np.float32 and a.shape == (2, 2)
    assert a.__array_interface__["data"][0] == _addr(t)  # zero-copy
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, [[1., 2.], [3., 4.]])
    assert t.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64",
                                   "bool"])
def test_round_trip_through_numpy_every_dtype(cpu, dtype):
    t = tf.cast(tf.constant([0, 1, 1, 0]), dtype)
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype)
    back = dlpack.from_dlpack(a)
    assert back.dtype == t.dtype and back.device == "cpu:0"
    assert _addr(back) == _addr(t)  # tapeflow -> NumPy -> tapeflow: still the same memory
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_from_numpy_array_is_zero_copy_and_aliases():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = dlpack.from_dlpack(a)
    assert t.shape == (2, 3) and t.dtype == tf.float32 and t.device == "cpu:0"
    assert _addr(t) == a.__array_interface__["data"][0]
    a[0, 0] = 7.  # documented: the tensor aliases a writable producer
    assert t.numpy()[0, 0] == 7.
    np.testing.assert_array_equal((t * 2).numpy(), a * 2)  # ops read the shared buffer


def test_capsule_round_trip_and_single_use(cpu):
    t = tf.constant([1, 2, 3])
    cap = dlpack.to_dlpack(t)
    back = dlpack.from_dlpack(cap)
    assert _addr(back) == _addr(t)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"consumed only once.*\[Op:FromDLPack\]"):
        dlpack.from_dlpack(cap)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"DLPack capsule.*got list"):
        dlpack.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="to_dlpack takes a tapeflow Tensor"):
        dlpack.to_dlpack(np.ones(2))


def test_non_contiguous_producer_is_copied_dense():
    a = np.arange(6, dtype=np.float32).reshape(2, 3).T
    t = dlpack.from_dlpack(a)
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(tf.reshape(t, [-1]).numpy(), a.reshape(-1))


def test_export_keeps_memory_alive_after_the_tensor_is_gone(cpu):
    a = np.from_dlpack(tf.constant(np.arange(1000, dtype=np.float32)))
    gc.collect()
    junk = [tf.constant(np.full(1000, -1., np.float32)) for _ in range(20)]  # reuse freed memory if any
    np.testing.assert_array_equal(a, np.arange(1000, dtype=np.float32))
    del junk


def test_import_keeps_producer_memory_alive():
    t = dlpack.from_dlpack(np.arange(1000, dtype=np.int64))
    gc.collect()
    junk = [np.full(1000, -1, np.int64) for _ in range(20)]
    np.testing.assert_array_equal(t.numpy(), np.arange(1000))
    del junk


def test_bad_arguments_raise_buffer_errors(cpu):
    t = tf.constant([1.])
    with pytest.raises(BufferError, match="takes no stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="no DLPack form"):
        tf.constant(["a"]).__dlpack__()
    with pytest.raises(BufferError, match=r"dl_device=\(2, 0\)"):
        t.__dlpack__(dl_device=(2, 0))


def test_legacy_consumer_gets_an_unversioned_capsule(cpu):
    cap = tf.constant([1., 2.]).__dlpack__()  # no max_version: a pre-1.0 consumer
    assert "dltensor" in repr(cap) and "versioned" not in repr(cap)
    assert dlpack.from_dlpack(cap).numpy().tolist() == [1., 2.]


def test_tensor_on_another_device_exports_a_host_copy_only_on_request():
    accel = [d.name for d in tf.config.list_devices() if d.name != "cpu:0"]
    if not accel:
        pytest.skip("no non-CPU device here (the opencl leg runs this)")
    with tf.device(accel[0]):
        t = tf.constant([1., 2.])
    assert t.__dlpack_device__()[0] != 1
    with pytest.raises(BufferError, match="use t.cpu"):
        t.__dlpack__(max_version=(1, 0))
    a = np.from_dlpack(t, device="cpu")  # NumPy asks for dl_device=(1, 0): a host copy
    assert a.tolist() == [1., 2.]
    assert dlpack.from_dlpack(dlpack.to_dlpack(t)).numpy().tolist() == [1., 2.]


# ---- PyTorch ------------------------------------------------------------------------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool"])
def test_torch_from_tapeflow_zero_copy(cpu, torch, dtype):
    t = tf.cast(tf.constant([[0, 1], [1, 0]]), dtype)
    pt = torch.from_dlpack(t)
    assert pt.dtype == getattr(torch, dtype)  # bfloat16 arrives as torch.bfloat16, not uint16
    assert pt.data_ptr() == _addr(t)
    np.testing.assert_array_equal(pt.float().numpy(), tf.cast(t, tf.float32).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int8", "bool"])
def test_tapeflow_from_torch_zero_copy(torch, dtype):
    pt = torch.tensor([[0, 1, 1], [1, 0, 1]]).to(getattr(torch, dtype))
    t = dlpack.from_dlpack(pt)
    assert t.dtype.name == dtype and t.shape == (2, 3)
    assert _addr(t) == pt.data_ptr()
    np.testing.assert_array_equal(tf.cast(t, tf.float32).numpy(), pt.float().numpy())
    # a capsule from torch's own to_dlpack works too
    t2 = dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(pt))
    assert _addr(t2) == pt.data_ptr()


def test_torch_producer_lifetime_and_aliasing(torch):
    pt = torch.arange(1000, dtype=torch.float32)
    t = dlpack.from_dlpack(pt)
    pt[0] = -5.  # aliasing: an in-place write to the producer shows
    assert float(t[0]) == -5.
    del pt
    gc.collect()
    junk = [torch.full((1000,), 3.) for _ in range(20)]
    assert t.numpy()[1:].tolist() == list(range(1, 1000))
    del junk


def test_torch_round_trip_and_gradientless_ops(cpu, torch):
    t = tf.random.stateless_normal([3, 4], seed=[1, 2])
    back = dlpack.from_dlpack(torch.from_dlpack(t))
    assert _addr(back) == _addr(t)
    np.testing.assert_array_equal(tf.matmul(back, back, transpose_b=True).numpy(),
                                  tf.matmul(t, t, transpose_b=True).numpy())


def test_producer_on_another_device_is_refused():
    class OnGPU:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kw):
            raise AssertionError("not asked for its capsule")

    with pytest.raises(BufferError, match=r"device type 2.*CPU memory"):
        dlpack.from_dlpack(OnGPU())
