import warnings

import pytest

import tapeflow as tf
from tapeflow.core import devices


def test_cpu_names_and_tensorflow_spellings():
    for spec in ("cpu", "cpu:0", "/cpu:0", "/device:CPU:0", "CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"):
        assert devices.canonical_name(spec) == "cpu:0"
        with tf.device(spec):
            assert tf.constant(1.0).device == "cpu:0"


def test_malformed_and_unknown_devices():
    with pytest.raises(ValueError, match="malformed device name"):
        tf.device("cpu::0")
    with pytest.raises(ValueError, match="unknown device kind 'tpu'"):
        tf.device("/tpu:0")
    with pytest.raises(tf.errors.NotFoundError, match="cpu:1 does not exist"):
        tf.device("cpu:1")


def test_soft_placement_falls_back_to_cpu_with_one_warning(monkeypatch):
    if devices.gpus():
        pytest.skip("this machine has a GPU, so 'gpu' does not fall back")
    monkeypatch.setitem(devices._state, "warned", False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with tf.device("/gpu:0"):
            x = tf.matmul([[1.0]], [[2.0]])
        with tf.device("gpu:0"):
            tf.constant(1.0)
    assert x.device == "cpu:0"
    assert len([m for m in w if "soft placement" in str(m.message)]) == 1


def test_no_soft_placement_raises(monkeypatch):
    if devices.gpus():
        pytest.skip("this machine has a GPU")
    monkeypatch.setitem(devices._state, "soft_placement", True)
    tf.config.set_soft_device_placement(False)
    try:
        with pytest.raises(tf.errors.NotFoundError, match="no GPU is available"):
            tf.device("/device:GPU:0")
    finally:
        tf.config.set_soft_device_placement(True)


def test_list_devices_and_moves():
    names = [d.name for d in tf.config.list_devices()]
    assert names[0] == "cpu:0"
    assert tf.config.list_physical_devices("CPU")[0] == "cpu:0"
    with tf.device("cpu:0"):
        x = tf.constant([1.0, 2.0])
    assert x.cpu() is x and x.to("/cpu:0") is x


def test_scopes_nest_and_are_per_thread():
    import threading

    seen = {}
    with tf.device("cpu:0"):
        with tf.device(None):
            assert devices.current() is None

        def worker():
            seen["dev"] = devices.current()

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert devices.current().name == "cpu:0"
    assert seen["dev"] is None


def test_config_threads_and_denormals():
    n = tf.config.get_num_threads()
    try:
        tf.config.set_num_threads(1)
        assert tf.config.get_num_threads() == 1
        x = tf.constant([[1.0] * 64] * 64)
        assert float(tf.reduce_sum(tf.matmul(x, x))) == 64.0 ** 3
    finally:
        tf.config.set_num_threads(0)
    assert tf.config.get_num_threads() == n
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.config.set_num_threads(-1)
    with tf.device("cpu:0"):  # the denormal switch is the CPU backend's
        tiny = tf.constant([1e-39], dtype=tf.float32)  # a float32 subnormal
        assert tf.config.get_flush_denormals()
        assert float(tiny * 1.0) == 0.0
        tf.config.set_flush_denormals(False)
        try:
            assert float(tiny * 1.0) > 0.0
        finally:
            tf.config.set_flush_denormals(True)


# ---- listing agrees with placement (issue 10 item 10) ---------------------------------------------

class _FakeBackend:
    def __init__(self, types):
        self._types = types

    def device_count(self):
        return len(self._types)

    def device_types(self):
        return list(self._types)


class _FakeKernels:
    """A backend registry: CUDA with one GPU, OpenCL with a CPU-type device (pocl) then a GPU."""

    BackendUnavailable = RuntimeError

    def __init__(self, cuda=("gpu",), opencl=("cpu", "gpu")):
        self._be = {"cuda": _FakeBackend(cuda), "opencl": _FakeBackend(opencl)}

    def backend_names(self):
        return ("cpu", "cuda", "opencl")

    def get_backend(self, name="cpu"):
        return self._be[name]

    def available_devices(self):
        from tapeflow.kernels import DeviceInfo

        return [DeviceInfo("cpu:0", "cpu", 0, False, "CPU")] + [
            DeviceInfo(f"{k}:{i}", k, i, t == "gpu", {"cuda": "CUDA", "opencl": "OpenCL"}[k])
            for k in ("cuda", "opencl") for i, t in enumerate(self._be[k].device_types())]


def _fake_registry(monkeypatch, **kw):
    monkeypatch.setattr(devices, "kernels", _FakeKernels(**kw))
    monkeypatch.setattr(devices, "_devices", {"cpu:0": devices._devices["cpu:0"]} if "cpu:0" in devices._devices
                        else {})
    monkeypatch.setitem(devices._state, "warned", False)


def _names(ds):
    return [d.name for d in ds]


def test_gpu_lists_exactly_the_devices_gpu_places_on(monkeypatch):
    _fake_registry(monkeypatch)
    gpus = tf.config.list_physical_devices("GPU")
    assert _names(gpus) == ["cuda:0", "opencl:1"]          # the CPU-type OpenCL device is not a GPU
    for i, d in enumerate(gpus):
        for spec in (f"/GPU:{i}", f"gpu:{i}", f"/device:GPU:{i}"):
            with tf.device(spec) as placed:
                assert placed is d
        assert d.device_type == "GPU"
    assert _names(tf.config.list_physical_devices("OpenCL")) == ["opencl:0", "opencl:1"]
    assert _names(tf.config.list_physical_devices("cuda")) == ["cuda:0"]
    assert _names(tf.config.list_physical_devices("CPU")) == ["cpu:0"]
    assert _names(tf.config.list_physical_devices()) == ["cpu:0", "cuda:0", "opencl:0", "opencl:1"]
    assert [d.device_type for d in tf.config.list_physical_devices()] == ["CPU", "GPU", "OpenCL", "GPU"]
    assert tf.config.list_physical_devices("TPU") == []
    assert _names(tf.config.list_logical_devices("GPU")) == ["cuda:0", "opencl:1"]


def test_a_cpu_type_opencl_device_alone_is_listed_as_opencl_and_gpu_falls_back(monkeypatch):
    _fake_registry(monkeypatch, cuda=(), opencl=("cpu",))
    assert tf.config.list_physical_devices("GPU") == []
    assert _names(tf.config.list_physical_devices("OpenCL")) == ["opencl:0"]
    assert tf.config.list_physical_devices("OpenCL")[0].device_type == "OpenCL"
    with pytest.warns(tf.errors.DevicePlacementWarning, match="soft placement"), tf.device("/GPU:0") as placed:
        assert placed.name == "cpu:0"
    tf.config.set_soft_device_placement(False)
    try:
        with pytest.raises(tf.errors.NotFoundError, match="no GPU is available"):
            tf.device("/GPU:0")
    finally:
        tf.config.set_soft_device_placement(True)


def test_listing_agrees_with_placement_on_this_machine():
    gpus = tf.config.list_physical_devices("GPU")
    assert _names(gpus) == devices.gpus()
    for i, d in enumerate(gpus):
        with tf.device(f"/GPU:{i}") as placed:
            assert placed is d
    listed = _names(tf.config.list_physical_devices())
    by_type = {t: _names(tf.config.list_physical_devices(t)) for t in ("CPU", "GPU", "OpenCL", "CUDA")}
    assert by_type["CPU"] == ["cpu:0"]
    assert set(listed) == set(by_type["CPU"]) | set(by_type["GPU"]) | set(by_type["OpenCL"]) | set(by_type["CUDA"])
    for d in tf.config.list_physical_devices():
        assert (d.device_type == "GPU") == (d.name in by_type["GPU"])


def test_device_type_must_be_a_str():
    with pytest.raises(TypeError, match="device_type must be a str or None, got int 1; allowed: 'CPU', 'GPU'"):
        tf.config.list_physical_devices(1)
