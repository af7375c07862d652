"""``tf.config.experimental``: device memory (growth, current and peak use) and the device lists.

Device memory is the GPU backends' caching allocator's (tapeflow.kernels.gpu_common): ``current`` is
the bytes held by live buffers (bucket capacities), ``peak`` the most since the last reset.  CPU
tensors live in NumPy arrays that no allocator of ours counts: as in TensorFlow 2.21, get_memory_info
of the CPU reports zeros, and memory growth is a GPU setting only (a ValueError on the CPU).

>>> import tapeflow as tf
>>> tf.config.experimental.get_memory_info("CPU:0")
{'current': 0, 'peak': 0}
"""
from __future__ import annotations

from . import devices as _device
from .devices import list_devices

__all__ = ["get_memory_info", "reset_memory_stats", "get_memory_usage", "set_memory_growth", "get_memory_growth",
           "list_physical_devices", "list_logical_devices"]


def _resolve(device, what: str):
    """The Device for a tf.config device argument: a Device (as list_physical_devices gives), or a name such as
    ``"GPU:0"``, ``"/device:GPU:0"``, ``"opencl:0"``, ``"CPU:0"``.  No soft placement: an absent device is a
    ValueError, as in TensorFlow."""
    if isinstance(device, _device.Device):
        return device
    if not isinstance(device, str):
        raise TypeError(f"{what} takes a device name (such as 'GPU:0') or a device from "
                        f"tf.config.list_physical_devices, got {type(device).__name__}")
    try:
        name = _device.canonical_name(device)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    kind, index = name.split(":")
    if kind == "gpu":
        gpus = _device.gpus()
        if int(index) >= len(gpus):
            raise ValueError(f"No matching devices found for {device!r}")
        name = gpus[int(index)]
    elif name not in [d.name for d in list_devices()]:
        raise ValueError(f"No matching devices found for {device!r}")
    return _device.get(name)


def _allocator(dev):
    be = dev.backend
    return be if hasattr(be, "memory_info") else None


def get_memory_info(device) -> dict:
    """``{"current": bytes in use, "peak": the most in use}`` on ``device`` (a GPU backend's allocator; the CPU
    reports zeros, as TensorFlow 2.21 does).

    >>> import tapeflow as tf
    >>> info = tf.config.experimental.get_memory_info("CPU:0")
    >>> sorted(info)
    ['current', 'peak']
    """
    be = _allocator(_resolve(device, "get_memory_info"))
    return be.memory_info() if be is not None else {"current": 0, "peak": 0}


def reset_memory_stats(device) -> None:
    """Start ``device``'s peak memory over from what is in use now.

    >>> import tapeflow as tf
    >>> tf.config.experimental.reset_memory_stats("CPU:0")
    """
    be = _allocator(_resolve(device, "reset_memory_stats"))
    if be is not None:
        be.reset_peak_memory()


def get_memory_usage(device) -> int:
    """The bytes in use on ``device`` now (TensorFlow's deprecated form of get_memory_info(device)["current"]).

    >>> import tapeflow as tf
    >>> tf.config.experimental.get_memory_usage("CPU:0")
    0
    """
    return get_memory_info(device)["current"]


def set_memory_growth(device, enable: bool) -> None:
    """Whether ``device``'s allocator grows as buffers are needed and gives freed memory back (True, tapeflow's
    default), or keeps every freed buffer for reuse (False), as TensorFlow's arena does.  GPU devices only.

    >>> import tapeflow as tf
    >>> for gpu in tf.config.list_physical_devices("GPU"):
    ...     tf.config.experimental.set_memory_growth(gpu, True)
    """
    if not isinstance(enable, bool):
        raise TypeError(f"enable must be a bool, got {type(enable).__name__}")
    dev = _resolve(device, "set_memory_growth")
    be = _allocator(dev) if dev.kind != "cpu" else None
    if be is None:
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    be.set_memory_growth(enable)


def get_memory_growth(device) -> bool:
    """Whether ``device``'s allocator grows on demand and gives memory back (see set_memory_growth).

    >>> import tapeflow as tf
    >>> [tf.config.experimental.get_memory_growth(g) for g in tf.config.list_physical_devices("GPU")] == \\
    ...     [True] * len(tf.config.list_physical_devices("GPU"))
    True
    """
    dev = _resolve(device, "get_memory_growth")
    be = _allocator(dev) if dev.kind != "cpu" else None
    if be is None:
        raise ValueError(f"{dev.name} has no memory growth setting (a GPU setting)")
    return be.memory_growth()


def list_physical_devices(device_type=None):
    """As tf.config.list_physical_devices."""
    from .config import list_physical_devices as f

    return f(device_type)


list_logical_devices = list_physical_devices
