"""Devices: where a tensor lives and where an op runs.

Names are ``kind:index``: ``cpu:0``, ``opencl:0``, ``cuda:0``, or any kind a driver
registered with :func:`tapeflow.kernels.register_backend` (the kinds, their devices
and which of them are GPUs come from that registry, not from here); ``gpu`` means
the first GPU (CUDA, then an OpenCL GPU, in the registry's order).  TensorFlow spellings are accepted
(``/cpu:0``, ``/device:GPU:0``, ``/job:localhost/replica:0/task:0/device:CPU:0``).

An op runs on the device of the innermost ``tf.device(...)`` scope, else on the
device of its first tensor input, else on the default device (``cpu:0``, or the
``TAPEFLOW_DEVICE`` environment variable).  Inputs living elsewhere are copied.
With no GPU, ``gpu`` falls back to the CPU with one warning (soft
placement), or raises when soft placement is off.

>>> import tapeflow as tf
>>> with tf.device("/cpu:0"):
...     x = tf.constant([1.0, 2.0])
>>> x.device
'cpu:0'
"""
from __future__ import annotations

import os
import re
import threading
import warnings

from tapeflow import kernels

from . import errors

_SPEC = re.compile(r"^(?:/job:[^/]+)?(?:/replica:\d+)?(?:/task:\d+)?/?(?:device:)?([A-Za-z]+)(?::(\d+))?$")


class Device:
    """A device: ``kind`` (cpu, opencl, cuda, or another registered kind), ``index``, and the backend that
    runs its kernels."""

    __slots__ = ("__weakref__", "_backend", "index", "kind", "name")

    def __init__(self, kind: str, index: int = 0) -> None:
        self.kind, self.index = kind, index
        self.name = f"{kind}:{index}"
        self._backend = None

    @property
    def backend(self):
        be = self._backend
        if be is None:
            try:
                be = kernels.get_backend(self.kind) if self.index == 0 else kernels.get_backend(self.name)
            except kernels.BackendUnavailable as e:
                raise errors.NotFoundError(f"device {self.name} is not available: {e}") from None
            if self.kind != "cpu":
                # device out-of-memory errors become tapeflow's typed error
                from tapeflow.kernels.gpu_common import register_memory_error

                register_memory_error(errors.ResourceExhaustedError)
            self._backend = be
        return be

    @property
    def device_type(self) -> str:
        """TensorFlow's device type: ``"CPU"``, ``"GPU"`` (CUDA, GPU-type OpenCL) or ``"OpenCL"`` (any other
        OpenCL device, such as pocl's CPU device), what ``tf.config.list_physical_devices`` filters on.

        >>> import tapeflow as tf
        >>> tf.config.list_physical_devices("CPU")[0].device_type
        'CPU'
        """
        return device_type(self.name)

    def __repr__(self):
        return f"Device({self.name!r})"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, Device):
            return other.name == self.name
        if isinstance(other, str):
            try:
                return canonical_name(other) == self.name
            except ValueError:
                return False
        return NotImplemented

    def __hash__(self):
        return hash(self.name)


_devices: dict = {}
_lock = threading.Lock()
_state = {"soft_placement": True, "warned": False, "default": None}


class _Scope(threading.local):
    stack: list

    def __init__(self) -> None:
        self.stack = []


_scope = _Scope()


def canonical_name(spec: str) -> str:
    """``"/device:GPU:0"`` -> ``"gpu:0"``; raises ValueError on a malformed name, TypeError on a non-string."""
    if not isinstance(spec, str):
        raise TypeError(f"a device name must be a str, got {type(spec).__name__} {spec!r:.40}; allowed: a name "
                        "such as 'cpu:0', 'gpu:0', 'opencl:0', '/device:GPU:0', a tf device object, or None")
    m = _SPEC.match(spec.strip())
    if not m:
        raise ValueError(f"malformed device name {spec!r}; expected e.g. 'cpu:0', 'gpu:0', '/device:GPU:0'")
    kind, index = m.group(1).lower(), int(m.group(2) or 0)
    kinds = kernels.backend_names()
    if kind != "gpu" and kind not in kinds:
        allowed = ", ".join((kinds[0], "gpu", *kinds[1:]))
        raise ValueError(f"unknown device kind {kind!r} in {spec!r}; allowed: {allowed}")
    return f"{kind}:{index}"


def _probe() -> list:
    """``(name, device_type)`` of every accelerator device that works here, in the registry's order.

    The kernel library's backend registry (:func:`tapeflow.kernels.available_devices`) says
    which devices exist and which are GPUs; the device type is TensorFlow's: ``"GPU"`` for a
    GPU, else the kind's type name (``"OpenCL"`` for a CPU-type OpenCL device such as
    pocl's).  Listing (``tf.config.list_physical_devices``) and placement (``gpu:N``) both
    read this one list, so they agree.
    """
    return [(d.name, "GPU" if d.is_gpu else d.type_name) for d in kernels.available_devices() if d.kind != "cpu"]


def accelerators() -> list:
    """Names of the accelerator devices that work here (probes drivers on first call)."""
    return [name for name, _ in _probe()]


def gpus() -> list:
    """Names of the accelerators that are GPUs: CUDA devices, then OpenCL devices of GPU type.

    ``gpu`` means one of these, as in TensorFlow: a CPU-type OpenCL device (such as pocl's)
    is reachable as ``opencl:N`` but is not a GPU.

    >>> from tapeflow.core import devices
    >>> set(devices.gpus()) <= set(devices.accelerators())
    True
    """
    return [name for name, t in _probe() if t == "GPU"]


def device_type(name: str) -> str:
    """TensorFlow's device type of a device that works here: ``"CPU"``, ``"GPU"``, or ``"OpenCL"``
    (an OpenCL device that is not a GPU).

    >>> from tapeflow.core import devices
    >>> devices.device_type("cpu:0")
    'CPU'
    """
    if name == "cpu:0":
        return "CPU"
    for n, t in _probe():
        if n == name:
            return t
    raise errors.NotFoundError(f"device {name} is not available here")


def get(spec) -> Device:
    """The Device for a name or Device, resolving ``gpu`` and soft placement."""
    if isinstance(spec, Device):
        return spec
    name = canonical_name(spec)
    dev = _devices.get(name)
    if dev is not None:
        return dev
    kind, index = name.split(":")
    if kind == "gpu":
        accel = gpus()
        if int(index) < len(accel):
            dev = get(accel[int(index)])
        elif _state["soft_placement"]:
            if not _state["warned"]:
                _state["warned"] = True
                warnings.warn(f"no GPU found for {spec!r}; running on cpu:0 (soft placement). "
                              "tf.config.set_soft_device_placement(False) makes this an error.",
                              errors.DevicePlacementWarning, stacklevel=3)
            return get("cpu:0")
        else:
            raise errors.NotFoundError(
                f"device {spec!r} requested but no GPU is available; devices: "
                f"{', '.join(d.name for d in list_devices())}")
    else:
        if kind == "cpu" and index != "0":
            raise errors.NotFoundError(f"device {name} does not exist; the CPU is cpu:0")
        if kind != "cpu" and name not in accelerators():
            raise errors.NotFoundError(f"device {name} is not available here; available: "
                                       f"{', '.join(d.name for d in list_devices())}")
        dev = Device(kind, int(index))
    with _lock:
        return _devices.setdefault(name, dev)


def default_device() -> Device:
    dev = _state["default"]
    if dev is None:
        spec = os.environ.get("TAPEFLOW_DEVICE", "cpu:0")
        dev = _state["default"] = get(spec)
    return dev


def current() -> Device | None:
    """The device of the innermost ``tf.device`` scope on this thread, or None."""
    stack = _scope.stack
    return stack[-1] if stack else None


class device:
    """Context manager placing the ops inside it on a device.

    >>> import tapeflow as tf
    >>> with tf.device("cpu:0"):
    ...     y = tf.constant(1.0) + 1
    >>> y.device
    'cpu:0'
    """

    def __init__(self, name) -> None:
        self._dev = None if name is None else get(name)

    def __enter__(self):
        _scope.stack.append(self._dev)
        return self._dev

    def __exit__(self, *exc):
        _scope.stack.pop()
        return False


def list_devices() -> list:
    """Every device that works here, the CPU first."""
    return [get("cpu:0")] + [get(n) for n in accelerators()]


def set_soft_device_placement(enabled: bool) -> None:
    _state["soft_placement"] = bool(enabled)


def get_soft_device_placement() -> bool:
    return _state["soft_placement"]
