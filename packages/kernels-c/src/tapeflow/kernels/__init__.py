"""tapeflow.kernels: the compute of tapeflow, in C, behind a small backend interface.

A backend is an allocator plus a kernel table.  Core asks for a backend by name
(:func:`get_backend`) and calls its kernels by name; every backend (CPU here,
OpenCL and CUDA beside it) offers the same table with the same signatures, so
adding a backend touches no op code.  Kernels return a status code; ``0`` is
success and :func:`status_message` explains the others.

Nothing is loaded at import: the compiled library is opened on first use.

>>> from tapeflow.kernels import get_backend
>>> get_backend("cpu").name
'cpu'
"""
from __future__ import annotations

import importlib
import threading

__version__ = "0.1.0"

# dtype codes shared with csrc/tpf.h
DTYPE_CODES = {
    "float16": 0, "bfloat16": 1, "float32": 2, "float64": 3, "int8": 4, "uint8": 5,
    "int16": 6, "int32": 7, "int64": 8, "bool": 9,
}

# op codes, in the order of the enums in csrc/*.h
BINARY_OPS = (
    "add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "minimum", "atan2",
    "squared_difference", "div_no_nan", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift", "relu_grad", "tanh_grad", "sigmoid_grad",
    "truncatediv", "truncatemod",
)
UNARY_OPS = (
    "neg", "abs", "sign", "square", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid",
    "relu", "softplus", "elu", "gelu", "selu", "floor", "ceil", "round", "reciprocal", "erf",
    "erfc", "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "relu6", "leaky_relu",
    "log_sigmoid", "silu", "lgamma", "digamma", "softsign", "polygamma",
)
REDUCE_OPS = ("sum", "prod", "mean", "max", "min", "any", "all")
BINARY_CODES = {name: i for i, name in enumerate(BINARY_OPS)}
UNARY_CODES = {name: i for i, name in enumerate(UNARY_OPS)}
REDUCE_CODES = {name: i for i, name in enumerate(REDUCE_OPS)}

# status codes from csrc/tpf.h
OK, EBADSIZE, EBADDTYPE, EBADOP, ERANGE, EDIVZERO, ENOMEM, EBADARG = range(8)
_STATUS = {
    EBADSIZE: "a negative or inconsistent size",
    EBADDTYPE: "no kernel for this dtype",
    EBADOP: "unknown op code",
    ERANGE: "an index out of range",
    EDIVZERO: "integer division by zero",
    ENOMEM: "out of memory",
    EBADARG: "invalid argument",
}

_BACKENDS = {
    "cpu": "tapeflow.kernels.cpu:CPUBackend",
    "opencl": "tapeflow.kernels.opencl:OpenCLBackend",
    "cuda": "tapeflow.kernels.cuda:CUDABackend",
}
_instances: dict = {}
_lock = threading.RLock()


class BackendUnavailable(RuntimeError):
    """A backend that cannot run on this machine (no driver, no device)."""


class KernelError(RuntimeError):
    """A kernel returned a non-zero status."""

    def __init__(self, kernel: str, status: int):
        self.kernel, self.status = kernel, status
        super().__init__(f"{kernel}: {status_message(status)} (status {status})")


def status_message(status: int) -> str:
    """The meaning of a kernel status code."""
    return _STATUS.get(status, f"unknown status {status}")


def register_backend(name: str, target: str) -> None:
    """Make a backend class importable by name (``"module:Class"``)."""
    _BACKENDS[name] = target


def backend_names() -> tuple:
    return tuple(_BACKENDS)


def get_backend(name: str = "cpu"):
    """The backend instance called ``name`` (``"cpu"``, ``"opencl"``, ``"opencl:1"``, ...), created on
    first use (once, even when several threads ask at the same time).

    Raises :class:`BackendUnavailable` when the backend cannot run here.
    """
    inst = _instances.get(name)
    if inst is None:
        with _lock:
            inst = _instances.get(name)
            if inst is None:
                kind, _, index = name.partition(":")
                try:
                    target = _BACKENDS[kind]
                except KeyError:
                    raise BackendUnavailable(
                        f"no backend named {name!r}; known: {', '.join(_BACKENDS)}") from None
                mod, _, cls = target.partition(":")
                klass = getattr(importlib.import_module(mod), cls)
                inst = klass(int(index)) if index not in ("", "0") else klass()
                _instances[name] = inst
    return inst
