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
from typing import NamedTuple

__version__ = "0.1.0"

# dtype codes shared with csrc/tpf.h
DTYPE_CODES = {
    "float16": 0, "bfloat16": 1, "float32": 2, "float64": 3, "int8": 4, "uint8": 5,
    "int16": 6, "int32": 7, "int64": 8, "bool": 9,
    # complex: only the complex, fft and cast kernels take these (csrc/complex.c, fft.c, cast.c)
    "complex64": 10, "complex128": 11,
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

#: the modules of the built-in drivers, imported on the first question to the registry (each calls
#: register_backend for its kind); the order is the listing order (CUDA GPUs before OpenCL ones)
_DRIVERS = ("tapeflow.kernels.cpu", "tapeflow.kernels.cuda", "tapeflow.kernels.opencl")
_REGISTRY: dict = {}
_driver_errors: dict = {}
_drivers_loaded = False
_instances: dict = {}
_lock = threading.RLock()


class BackendUnavailable(RuntimeError):
    """A backend that cannot run on this machine (no driver, no device)."""


class KernelError(RuntimeError):
    """A kernel returned a non-zero status."""

    def __init__(self, kernel: str, status: int) -> None:
        self.kernel, self.status = kernel, status
        super().__init__(f"{kernel}: {status_message(status)} (status {status})")


def status_message(status: int) -> str:
    """The meaning of a kernel status code."""
    return _STATUS.get(status, f"unknown status {status}")


class BackendKind(NamedTuple):
    """A registered backend kind: how to make its backends, how many devices it has, which are GPUs."""

    kind: str
    factory: object
    is_gpu: object
    count: object
    type_name: str

    def device_count(self) -> int:
        """Devices of this kind on this machine (0 when its driver or device is missing)."""
        try:
            return int(self.count())
        except Exception:  # noqa: BLE001 - a missing or broken driver: no device of this kind here
            return 0

    def device_is_gpu(self, index: int) -> bool:
        """Whether device ``index`` of this kind is a GPU (what ``gpu:N`` and ``list_physical_devices("GPU")`` mean)."""
        return bool(self.is_gpu(index) if callable(self.is_gpu) else self.is_gpu)


class DeviceInfo(NamedTuple):
    """A device that works here: ``name`` (``"kind:index"``), its kind, index, whether it is a GPU, and its
    kind's type name (``"CPU"``, ``"OpenCL"``, ``"CUDA"``, ...)."""

    name: str
    kind: str
    index: int
    is_gpu: bool
    type_name: str


def register_backend(kind: str, factory, *, is_gpu, count=None, type_name: str | None = None) -> None:
    """Add a backend kind to the registry, or replace one: ``tf.device(f"{kind}:N")`` then runs on it.

    ``factory(index)`` makes the backend of device ``index`` (called once per device, on first
    use; it raises :class:`BackendUnavailable` when it cannot run); a ``"module:attr"`` string is
    imported then.  ``is_gpu``: ``True``/``False`` for every device of the kind, or a callable
    ``is_gpu(index) -> bool`` (OpenCL: a GPU-type device is a GPU, pocl's CPU device is not).
    ``count()`` says how many devices the kind has here (default: one); ``type_name`` is
    TensorFlow's device type of its non-GPU devices (default: the kind).  A driver module calls
    this when imported; the built-in drivers are imported on the first question to the registry.

    >>> import tapeflow.kernels as K
    >>> K.register_backend("doctestcpu", lambda index: K.get_backend("cpu"), is_gpu=False)
    >>> "doctestcpu" in K.backend_names(), K.get_backend("doctestcpu:0") is K.get_backend("cpu")
    (True, True)
    >>> [d.name for d in K.available_devices() if d.kind == "doctestcpu"]
    ['doctestcpu:0']
    >>> K.unregister_backend("doctestcpu")
    """
    if not isinstance(kind, str) or not kind.isalpha() or kind != kind.lower() or kind == "gpu":
        raise ValueError(f"a backend kind is a lower-case word other than 'gpu', got {kind!r}")
    if not (callable(factory) or isinstance(factory, str)):
        raise TypeError(f"factory must be a callable or a 'module:attr' string, got {type(factory).__name__}")
    if not (isinstance(is_gpu, bool) or callable(is_gpu)):
        raise TypeError(f"is_gpu must be a bool or a callable(index), got {type(is_gpu).__name__}")
    if count is not None and not callable(count):
        raise TypeError(f"count must be a callable returning the number of devices, got {type(count).__name__}")
    with _lock:
        _load_drivers()   # the built-in kinds first (a no-op while a driver registers itself)
        _REGISTRY[kind] = BackendKind(kind, factory, is_gpu, count or (lambda: 1), type_name or kind)
        for name in [n for n in _instances if n.partition(":")[0] == kind]:
            del _instances[name]


def unregister_backend(kind: str) -> None:
    """Remove a backend kind (and its backends) from the registry.

    >>> import tapeflow.kernels as K
    >>> K.unregister_backend("nosuchkind")
    Traceback (most recent call last):
    ...
    KeyError: "no backend kind 'nosuchkind' is registered"
    """
    with _lock:
        _load_drivers()
        if kind not in _REGISTRY:
            raise KeyError(f"no backend kind {kind!r} is registered")
        del _REGISTRY[kind]
        for name in [n for n in _instances if n.partition(":")[0] == kind]:
            del _instances[name]


def _load_drivers() -> None:
    global _drivers_loaded
    if _drivers_loaded:
        return
    with _lock:
        if not _drivers_loaded:
            _drivers_loaded = True
            for mod in _DRIVERS:
                try:
                    importlib.import_module(mod)
                except ImportError as e:   # the kind stays unregistered; get_backend says why
                    _driver_errors[mod.rpartition(".")[2]] = f"{type(e).__name__}: {e}"


def _ordered() -> list:
    """The registered kinds: the built-in drivers in ``_DRIVERS``' order (whichever was imported first),
    then the others in registration order."""
    builtin = [m.rpartition(".")[2] for m in _DRIVERS]
    return sorted(_REGISTRY, key=lambda k: builtin.index(k) if k in builtin else len(builtin))


def backend_names() -> tuple:
    """The registered backend kinds, in listing order (the CPU first).

    >>> from tapeflow.kernels import backend_names
    >>> backend_names()[:3]
    ('cpu', 'cuda', 'opencl')
    """
    _load_drivers()
    return tuple(_ordered())


def backend_kind(kind: str) -> BackendKind:
    """The registry's entry for ``kind``; :class:`BackendUnavailable` for a kind nobody registered.

    >>> from tapeflow.kernels import backend_kind
    >>> backend_kind("cuda").device_is_gpu(0), backend_kind("cpu").type_name
    (True, 'CPU')
    """
    _load_drivers()
    try:
        return _REGISTRY[kind]
    except KeyError:
        why = f" ({_driver_errors[kind]})" if kind in _driver_errors else ""
        raise BackendUnavailable(f"no backend named {kind!r}{why}; known: {', '.join(_ordered())}") from None


def available_devices() -> list:
    """Every device that works here, as :class:`DeviceInfo`, kind by kind in registration order.

    A kind's devices are listed when it has some and its first one starts.

    >>> from tapeflow.kernels import available_devices
    >>> available_devices()[0]
    DeviceInfo(name='cpu:0', kind='cpu', index=0, is_gpu=False, type_name='CPU')
    """
    _load_drivers()
    found = []
    for entry in [_REGISTRY[k] for k in _ordered()]:
        n = entry.device_count()
        if n <= 0:
            continue
        try:
            get_backend(entry.kind)
        except Exception:  # noqa: BLE001, S112 - no driver or no usable device: nothing of this kind here
            continue
        found += [DeviceInfo(f"{entry.kind}:{i}", entry.kind, i, entry.device_is_gpu(i), entry.type_name)
                  for i in range(n)]
    return found


def get_backend(name: str = "cpu"):
    """The backend instance called ``name`` (``"cpu"``, ``"opencl"``, ``"opencl:1"``, ...), created on
    first use (once, even when several threads ask at the same time).

    Raises :class:`BackendUnavailable` when the backend cannot run here.
    """
    inst = _instances.get(name)
    if inst is None:
        kind, _, index = name.partition(":")
        if index in ("", "0"):
            name, idx = kind, 0
        elif index.isdigit():
            idx = int(index)
        else:
            raise BackendUnavailable(f"malformed backend name {name!r}; expected 'kind' or 'kind:index'")
        with _lock:
            inst = _instances.get(name)
            if inst is None:
                factory = backend_kind(kind).factory
                if isinstance(factory, str):
                    mod, _, attr = factory.partition(":")
                    factory = getattr(importlib.import_module(mod), attr)
                inst = factory(idx)
                _instances[name] = inst
                if idx == 0:
                    _instances[kind + ":0"] = inst
    return inst
