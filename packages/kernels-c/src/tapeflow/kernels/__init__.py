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
import pathlib
import re
import threading

__version__ = "0.1.0"

# dtype codes shared with csrc/tpf.h
DTYPE_CODES = {
    "float16": 0, "bfloat16": 1, "float32": 2, "float64": 3, "int8": 4, "uint8": 5,
    "int16": 6, "int32": 7, "int64": 8, "bool": 9,
}

# Element-wise op codes: the rows of include/elementwise.def, the one list the C enums, the CPU
# loops and the GPU kernels are generated from.  Each op also has the kinds of its dtype classes
# (float, int, bool; "NO" for none): see the .def's header.
_DEF_ROW = re.compile(r"^TPF_(BINARY|UNARY)\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*\w+\s*,"
                      r"\s*(\w+)\s*,\s*\w+\s*,\s*(\w+)\s*,\s*\w+\s*\)", re.MULTILINE)
_KIND_DTYPES = {
    "FV": ("float32", "float64"), "F": ("float32", "float64"), "FS": ("float32", "float64"),
    "FB": ("float32", "float64"), "I": ("int8", "uint8", "int16", "int32", "int64"),
    "ID": ("int8", "uint8", "int16", "int32", "int64"), "IP": ("int8", "uint8", "int16", "int32", "int64"),
    "IB": ("int8", "uint8", "int16", "int32", "int64"), "B": ("bool",), "NO": (),
}


def _read_elementwise_def() -> dict:
    rows: dict = {"BINARY": {}, "UNARY": {}}
    text = (pathlib.Path(__file__).with_name("include") / "elementwise.def").read_text()
    for arity, name, upper, fk, ik, bk in _DEF_ROW.findall(text):
        if upper != name.upper() or name in rows[arity] or not {fk, ik, bk} <= set(_KIND_DTYPES):
            raise ImportError(f"elementwise.def: bad row for {name!r}")   # pragma: no cover
        rows[arity][name] = _KIND_DTYPES[fk] + _KIND_DTYPES[ik] + _KIND_DTYPES[bk]
    return rows


_ELEMENTWISE = _read_elementwise_def()
BINARY_OPS = tuple(_ELEMENTWISE["BINARY"])
UNARY_OPS = tuple(_ELEMENTWISE["UNARY"])


def elementwise_dtypes(op: str, arity: int = 2) -> tuple:
    """The dtypes the element-wise kernel ``op`` (``arity`` 1: unary, 2: binary) has loops for,
    as elementwise.def declares them (float16/bfloat16 reach float32 loops through casts in core;
    a GPU without float64 lacks the float64 ones).

    Raises KeyError for an op that is not in the list.

    >>> from tapeflow.kernels import elementwise_dtypes
    >>> elementwise_dtypes("logical_and"), elementwise_dtypes("sqrt", 1)
    (('bool',), ('float32', 'float64'))
    """
    table = _ELEMENTWISE["UNARY" if arity == 1 else "BINARY"]
    if arity not in (1, 2) or op not in table:
        raise KeyError(f"no {'unary' if arity == 1 else 'binary'} element-wise op {op!r} (arity {arity})")
    return table[op]


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
