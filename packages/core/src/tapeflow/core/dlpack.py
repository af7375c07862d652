"""DLPack: tensors shared with NumPy, PyTorch, JAX, ... without a copy (``tf.experimental.dlpack``).

A CPU tensor's memory is a host buffer; exporting it hands the consumer that buffer (zero-copy), and
importing a CPU DLPack tensor wraps the producer's buffer as a tapeflow tensor (zero-copy too).

Semantics, as in TensorFlow and PyTorch:

- **Aliasing.** The exporter and the importer share memory. A tapeflow tensor is immutable, so an export is
  read-only: DLPack 1.0 consumers (NumPy 2, PyTorch 2.4+) receive the read-only flag; an older consumer
  (no ``max_version``) cannot be told, and must not write. A tensor imported from a writable producer (a
  ``torch.Tensor``) changes when the producer is written in place: copy it (``tf.identity``) to keep a
  snapshot.
- **Lifetime.** The capsule's deleter holds a reference to the buffer's owner, so the memory stays alive for as
  long as either side uses it, whichever is dropped first.
- **Devices.** Only CPU memory is exchanged without a copy. A tensor on another device (``opencl:0``) exports
  a host copy when the consumer asks for the CPU (``dl_device=(1, 0)``) or allows a copy (``copy=True``), else
  raises ``BufferError``; an imported tensor lives on ``cpu:0`` (``t.to(...)`` moves it).
- **Layouts.** A non-contiguous producer (a transposed ``torch.Tensor``) is copied into a dense tensor on
  import, as tapeflow's kernels read row-major buffers.

bfloat16 travels as DLPack's ``kDLBfloat`` (PyTorch's ``torch.bfloat16``), which NumPy cannot exchange: the
capsule is built through NumPy as uint16 and its type code rewritten in place (and the reverse on import).

>>> import numpy as np, tapeflow as tf
>>> with tf.device("cpu:0"):
...     t = tf.constant([1., 2., 3.])
>>> a = np.from_dlpack(t)            # zero-copy, read-only view
>>> a.flags.writeable
False
>>> tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(t)).numpy().tolist()
[1.0, 2.0, 3.0]
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import devices as _device
from . import dtypes as _dt
from .errors import InvalidArgumentError
from .tensor import Tensor, make

__all__ = ["to_dlpack", "from_dlpack"]

# DLDeviceType codes (dlpack.h)
kDLCPU, kDLCUDA, kDLOpenCL = 1, 2, 4
_DEVICE_CODES = {"cpu": kDLCPU, "cuda": kDLCUDA, "opencl": kDLOpenCL}
# DLDataTypeCode codes (dlpack.h)
kDLUInt, kDLBfloat = 1, 4


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):  # DLPack >= 1.0: "dltensor_versioned" capsules
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_capi = ctypes.pythonapi
_capi.PyCapsule_GetName.restype = ctypes.c_char_p
_capi.PyCapsule_GetName.argtypes = [ctypes.py_object]
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_IsValid.restype = ctypes.c_int
_capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

_CAPSULE_NAMES = (b"dltensor", b"dltensor_versioned")


def _dl_tensor(capsule) -> _DLTensor:
    """The DLTensor inside an unconsumed DLPack capsule (a view of the producer's struct, writable)."""
    name = _capi.PyCapsule_GetName(capsule) if type(capsule).__name__ == "PyCapsule" else None
    if name not in _CAPSULE_NAMES:
        raise InvalidArgumentError(f"expected a DLPack capsule named 'dltensor' or 'dltensor_versioned' (or an "
                                   f"object with __dlpack__), got {_describe(capsule, name)}", "FromDLPack")
    ptr = _capi.PyCapsule_GetPointer(capsule, name)
    if name == b"dltensor":  # DLManagedTensor starts with its DLTensor
        return _DLTensor.from_address(ptr)
    return _DLManagedTensorVersioned.from_address(ptr).dl_tensor


def _describe(obj, name) -> str:
    if name is not None:
        return f"a capsule named {name.decode(errors='replace')!r} (a capsule can be consumed only once)"
    return f"{type(obj).__name__}"


def _device_of(t: Tensor) -> tuple:
    dev = t._dev
    return (_DEVICE_CODES.get(dev.kind, kDLCPU if dev.kind == "cpu" else 0), dev.index)


def dlpack_device(t: Tensor) -> tuple:
    """``(device_type, device_id)`` of ``t``'s memory, as DLPack codes (``Tensor.__dlpack_device__``).

    >>> import tapeflow as tf
    >>> with tf.device("cpu:0"):
    ...     tf.constant([1.]).__dlpack_device__()
    (1, 0)
    """
    return _device_of(t)


def dlpack(t: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of ``t`` (``Tensor.__dlpack__``): zero-copy and read-only on the CPU.

    ``stream`` must be None (CPU memory needs no synchronisation); ``dl_device=(1, 0)`` or ``copy=True``
    allow a host copy of a tensor on another device; ``copy=False`` forbids any copy.

    >>> import numpy as np, tapeflow as tf
    >>> with tf.device("cpu:0"):
    ...     t = tf.constant([1, 2])
    >>> np.from_dlpack(t).tolist()
    [1, 2]
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"__dlpack__ takes a tapeflow Tensor, got {type(t).__name__}")
    if stream is not None and stream != -1:
        raise BufferError(f"stream={stream!r}: tapeflow exports CPU memory, which takes no stream; allowed: None")
    if t._dtype.is_string:
        raise BufferError("a string tensor has no DLPack form; allowed: numeric, bool and bfloat16 tensors")
    if t._h is None and t._arr is None:
        raise BufferError("a symbolic tensor (inside tf.function while tracing) has no memory to share")
    on_cpu = t._dev.kind == "cpu"
    if dl_device is not None and tuple(dl_device) not in ((kDLCPU, 0), _device_of(t)):
        raise BufferError(f"dl_device={tuple(dl_device)}: tensor on {t.device} exports to itself or to the "
                          f"CPU (1, 0)")
    if not on_cpu:
        if copy is False or (copy is None and dl_device is None):
            raise BufferError(f"the tensor is on {t.device}: DLPack shares CPU memory only; use t.cpu() first, "
                              "or ask for a host copy (dl_device=(1, 0) or copy=True)")
        arr = t._host()  # a fresh host array (the device's copy out)
    else:
        arr = t._host()
        if copy:
            arr = arr.copy()
    bf16 = t._dtype is _dt.bfloat16
    if bf16:
        arr = arr.view(np.uint16)
    if max_version is None or tuple(max_version) < (1, 0):
        # a pre-1.0 consumer cannot be told the memory is read-only (NumPy refuses read-only arrays here)
        capsule = arr.__dlpack__(stream=None)
    else:
        view = arr.view()
        view.flags.writeable = False
        capsule = view.__dlpack__(stream=None, max_version=max_version)
    if bf16:
        _dl_tensor(capsule).dtype.code = kDLBfloat
    return capsule


def to_dlpack(tf_tensor) -> object:
    """A DLPack capsule ("dltensor") holding ``tf_tensor``'s memory (zero-copy on the CPU).

    A capsule can be consumed once (by ``from_dlpack`` here, ``torch.utils.dlpack.from_dlpack``, ...).
    Objects with ``__dlpack__`` (tensors themselves) are the modern way: ``np.from_dlpack(t)``.

    >>> import tapeflow as tf
    >>> cap = tf.experimental.dlpack.to_dlpack(tf.constant([1., 2.]))
    >>> tf.experimental.dlpack.from_dlpack(cap).numpy().tolist()
    [1.0, 2.0]
    """
    if not isinstance(tf_tensor, Tensor):
        conv = getattr(tf_tensor, "_as_tensor", None)  # a Variable: its current value
        if conv is None:
            raise TypeError(f"to_dlpack takes a tapeflow Tensor or Variable, got {type(tf_tensor).__name__}")
        tf_tensor = conv()
    return dlpack(tf_tensor, dl_device=(kDLCPU, 0) if tf_tensor._dev.kind != "cpu" else None)


class _Capsule:
    """Hands a ready capsule to ``np.from_dlpack`` (which asks for ``__dlpack__``/``__dlpack_device__``)."""

    __slots__ = ("_capsule", "_device")

    def __init__(self, capsule, device) -> None:
        self._capsule, self._device = capsule, device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def from_dlpack(dlcapsule) -> Tensor:
    """A tensor sharing the memory of a DLPack capsule or of any object with ``__dlpack__`` (zero-copy on the CPU).

    ``dlcapsule``: a capsule from ``to_dlpack`` (or another framework's), a NumPy array, a ``torch.Tensor``, a
    JAX array, ... The tensor lives on ``cpu:0``; it aliases the producer's memory (see the module's notes).

    >>> import numpy as np, tapeflow as tf
    >>> a = np.arange(3, dtype=np.float32)
    >>> t = tf.experimental.dlpack.from_dlpack(a)
    >>> t.dtype, t.numpy().tolist()
    (tf.float32, [0.0, 1.0, 2.0])
    """
    if isinstance(dlcapsule, Tensor):
        return dlcapsule
    if hasattr(dlcapsule, "__dlpack__"):
        if hasattr(dlcapsule, "__dlpack_device__"):
            dev_type = int(dlcapsule.__dlpack_device__()[0])
            if dev_type != kDLCPU:
                raise BufferError(f"{type(dlcapsule).__name__} lives on DLPack device type {dev_type}: tapeflow "
                                  "imports CPU memory (device type 1) only; move it to the CPU first")
        try:
            capsule = dlcapsule.__dlpack__(stream=None, max_version=(1, 0))
        except TypeError:  # a producer older than DLPack 1.0's keywords
            capsule = dlcapsule.__dlpack__()
    else:
        capsule = dlcapsule
    dl = _dl_tensor(capsule)
    if dl.device_type != kDLCPU:
        raise BufferError(f"the DLPack tensor lives on device type {dl.device_type}: tapeflow imports CPU memory "
                          "(device type 1) only; move it to the CPU first")
    bf16 = dl.dtype.code == kDLBfloat and dl.dtype.bits == 16 and dl.dtype.lanes == 1
    if bf16:
        dl.dtype.code = kDLUInt  # NumPy knows no bfloat16: read the bits as uint16, then view them as bfloat16
    arr = np.from_dlpack(_Capsule(capsule, (kDLCPU, 0)))
    if bf16:
        arr = arr.view(_dt.bfloat16.np)
    try:
        dtype = _dt.as_dtype(arr.dtype)
    except TypeError as e:
        raise InvalidArgumentError(f"cannot import a DLPack tensor of NumPy dtype {arr.dtype}: {e}",
                                   "FromDLPack") from None
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)  # the kernels read dense row-major buffers
    dev = _device.get("cpu:0")
    size = 1
    for d in arr.shape:
        size *= d
    # the buffer handle keeps ``arr`` (and through it the capsule's owner) alive as long as the tensor
    return make(dev.backend.ffi.from_buffer(arr), arr, tuple(arr.shape), dtype, dev, size)
