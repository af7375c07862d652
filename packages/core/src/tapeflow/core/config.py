"""tf.config: threads, devices, soft placement and denormal handling.

>>> import tapeflow as tf
>>> [d.name for d in tf.config.list_devices()][0]
'cpu:0'
"""
from __future__ import annotations

from . import devices as _device
from .devices import get_soft_device_placement as get_soft_device_placement  # noqa: F401 (re-exported)
from .devices import list_devices as list_devices, set_soft_device_placement as set_soft_device_placement  # noqa: F401
from .errors import InvalidArgumentError


def _cpu():
    return _device.get("cpu:0").backend


def set_num_threads(n: int) -> None:
    """Threads the CPU kernels (and OpenBLAS) use; 0 means all cores.

    >>> import tapeflow as tf
    >>> tf.config.set_num_threads(1); tf.config.get_num_threads()
    1
    >>> tf.config.set_num_threads(0)
    """
    n = int(n)
    if n < 0:
        raise InvalidArgumentError(f"number of threads must be >= 0 (0 = all cores), got {n}")
    be = _cpu()
    be.set_num_threads(n)
    be.blas_set_num_threads(n if n else be.get_num_threads())


def get_num_threads() -> int:
    """Threads the CPU kernels use."""
    return _cpu().get_num_threads()


# TensorFlow's spellings
def set_intra_op_parallelism_threads(n: int) -> None:
    set_num_threads(n)


def get_intra_op_parallelism_threads() -> int:
    return get_num_threads()


def set_flush_denormals(enabled: bool) -> None:
    """Flush float denormals to zero in kernels (on by default, as in TensorFlow and JAX).

    Denormal arithmetic is ~100x slower on x86; turn this off only when you need IEEE denormals.
    """
    from tapeflow import kernels

    _cpu().set_ftz(1 if enabled else 0)
    for be in list(kernels._instances.values()):  # accelerators follow the same switch
        if be.name != "cpu" and callable(getattr(be, "set_ftz", None)):
            be.set_ftz(1 if enabled else 0)


def get_flush_denormals() -> bool:
    return bool(_cpu().get_ftz())


def list_physical_devices(device_type: str | None = None) -> list:
    """Devices, optionally of one TensorFlow device type (case-insensitive).

    ``"CPU"`` is ``cpu:0``; ``"GPU"`` lists exactly the devices ``tf.device("/GPU:N")`` places on
    (CUDA devices, then OpenCL devices of GPU type), ``N`` being the index in this list;
    ``"OpenCL"`` and ``"CUDA"`` list the devices of that backend whatever their type (a
    CPU-type OpenCL device such as pocl's is listed there, never under ``"GPU"``).  Any other
    type lists nothing, as in TensorFlow.

    >>> import tapeflow as tf
    >>> [d.name for d in tf.config.list_physical_devices("CPU")]
    ['cpu:0']
    >>> from tapeflow.core import devices
    >>> [d.name for d in tf.config.list_physical_devices("GPU")] == devices.gpus()
    True
    """
    if device_type is None:
        return list_devices()
    if not isinstance(device_type, str):
        raise TypeError(f"device_type must be a str or None, got {type(device_type).__name__} {device_type!r:.40}; "
                        "allowed: 'CPU', 'GPU', 'OpenCL', 'CUDA' (any case) or None")
    kind = device_type.lower()
    if kind == "cpu":
        return [_device.get("cpu:0")]
    if kind == "gpu":
        return [_device.get(n) for n in _device.gpus()]
    return [_device.get(n) for n in _device.accelerators() if n.split(":")[0] == kind]


list_logical_devices = list_physical_devices


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Run every ``tf.function`` as plain Python (for debugging: prints and breakpoints run every call).

    >>> import tapeflow as tf
    >>> tf.config.run_functions_eagerly(True)
    >>> tf.config.functions_run_eagerly()
    True
    >>> tf.config.run_functions_eagerly(False)
    """
    from .function import _EAGER

    if not isinstance(run_eagerly, bool):
        raise TypeError(f"run_functions_eagerly takes True or False, got {run_eagerly!r}")
    _EAGER.flag = run_eagerly


def functions_run_eagerly() -> bool:
    """Whether ``tf.function``\\ s run as plain Python (see :func:`run_functions_eagerly`)."""
    from .function import _EAGER

    return _EAGER.flag


from . import config_experimental as experimental  # noqa: E402,F401  (tf.config.experimental)


class optimizer:
    """``tf.config.optimizer``: switch the graph passes of ``tf.function`` on and off (for debugging).

    >>> import tapeflow as tf
    >>> tf.config.optimizer.set_experimental_options({"arithmetic_optimization": False})
    >>> tf.config.optimizer.get_experimental_options()["arithmetic_optimization"]
    False
    >>> tf.config.optimizer.set_experimental_options({"arithmetic_optimization": True})
    """

    @staticmethod
    def set_experimental_options(options: dict) -> None:
        """Set passes on (True) or off (False): ``arithmetic_optimization`` (simplification and common
        subexpressions), ``constant_folding``, ``memory_optimizer``, ``disable_model_pruning``.  The
        options apply to functions traced afterwards."""
        from .graph_opt import set_options

        if not isinstance(options, dict):
            raise TypeError(f"set_experimental_options takes a dict, got {type(options).__name__}")
        set_options(options)

    @staticmethod
    def get_experimental_options() -> dict:
        """The passes and whether each is on."""
        from .graph_opt import OPTIONS

        return dict(OPTIONS)
