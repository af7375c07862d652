"""Device kinds come from the kernel library's backend registry (issue 11 item 4).

A backend kind registered in-process with ``tapeflow.kernels.register_backend``, here a
thin wrapper over the CPU backend, is a device of core with no change to core.
"""
from __future__ import annotations

import pytest
import tapeflow as tf
import tapeflow.kernels as K
from tapeflow.core import devices


class FakeGPU:
    """Backend ``fakegpu``: the CPU backend's memory and kernels, counting the kernel calls."""

    name = "fakegpu"

    def __init__(self, index):
        self._cpu = K.get_backend("cpu")
        self.device_name = f"fakegpu:{index}"
        self.calls = []

    def __getattr__(self, attr):
        value = getattr(self._cpu, attr)
        if attr in self._cpu.KERNELS:
            def call(*args, _k=value, _name=attr):
                self.calls.append(_name)
                return _k(*args)
            return call
        return value


@pytest.fixture
def fake_kinds(monkeypatch):
    monkeypatch.setattr(devices, "_devices", dict(devices._devices))
    K.register_backend("fakegpu", FakeGPU, is_gpu=True, count=lambda: 2, type_name="FakeGPU")
    K.register_backend("fakeaccel", FakeGPU, is_gpu=False, count=lambda: 1, type_name="FakeAccel")
    yield
    K.unregister_backend("fakegpu")
    K.unregister_backend("fakeaccel")


def _names(ds):
    return [d.name for d in ds]


def test_a_registered_kind_places_ops_and_is_listed(fake_kinds):
    with tf.device("fakegpu:1") as placed:
        y = tf.constant([1.0, 2.0]) * 3.0 + 1.0
    assert placed.name == "fakegpu:1" and y.device == "fakegpu:1"
    assert y.numpy().tolist() == [4.0, 7.0]
    be = placed.backend
    assert isinstance(be, FakeGPU) and be.device_name == "fakegpu:1"
    assert {"binary_flat", "binary_strided"} & set(be.calls)
    listed = _names(tf.config.list_physical_devices())
    assert listed[0] == "cpu:0" and listed[-3:] == ["fakegpu:0", "fakegpu:1", "fakeaccel:0"]
    assert _names(tf.config.list_physical_devices("GPU"))[-2:] == ["fakegpu:0", "fakegpu:1"]
    assert _names(tf.config.list_physical_devices("fakegpu")) == ["fakegpu:0", "fakegpu:1"]
    assert [d.device_type for d in tf.config.list_physical_devices("fakegpu")] == ["GPU", "GPU"]


def test_gpu_n_means_a_registered_gpu_and_a_non_gpu_kind_is_not_one(fake_kinds):
    gpus = _names(tf.config.list_physical_devices("GPU"))
    with tf.device(f"/GPU:{gpus.index('fakegpu:0')}") as placed:
        assert placed.name == "fakegpu:0"
    assert "fakeaccel:0" not in gpus
    accel = tf.config.list_physical_devices("fakeaccel")
    assert _names(accel) == ["fakeaccel:0"] and accel[0].device_type == "FakeAccel"
    with tf.device("/device:FAKEACCEL:0"):
        z = tf.reduce_sum(tf.constant([1, 2, 3]))
    assert z.device == "fakeaccel:0" and int(z) == 6


def test_unregistered_and_missing_kinds_are_refused(fake_kinds):
    with pytest.raises(tf.errors.NotFoundError, match="fakegpu:2 is not available here"):
        tf.device("fakegpu:2")
    with pytest.raises(ValueError, match=r"unknown device kind 'tpu'.*allowed: cpu, gpu, .*fakegpu"):
        tf.device("tpu:0")
    with pytest.raises(ValueError, match="lower-case word other than 'gpu'"):
        K.register_backend("gpu", FakeGPU, is_gpu=True)
    with pytest.raises(TypeError, match="is_gpu must be a bool or a callable"):
        K.register_backend("fakex", FakeGPU, is_gpu="yes")
