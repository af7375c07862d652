"""The GPU kernel contract: a signature language and the table of device kernels, declared once.

The device backends (OpenCL, CUDA) run the kernels of ``gpu/*.cl`` by *name*
(``backend.launch("unary_sqrt_f32", n, x, out, n, 0.0)``); what a kernel takes is
declared once, in :data:`TABLE` below, as a string of argument codes, one letter
per kernel parameter:

====  ====================  =================================  ==========================  ===========================
code  kernel parameter      the host passes                    OpenCL (``clSetKernelArg``)  CUDA (``cuLaunchKernel``)
====  ====================  =================================  ==========================  ===========================
B     ``G T *`` (a buffer)  a ``DeviceBuffer`` or ``None``     its ``cl_mem`` (8 bytes);   a pointer to its
                                                               ``None``: a 256-byte        ``CUdeviceptr``; ``None``:
                                                               scratch buffer              the scratch buffer
l     ``i64``               an ``int``                         ``int64_t``, 8 bytes        pointer to ``int64_t``
i     ``int``               an ``int`` (flags, ranks, modes)   ``int32_t``, 4 bytes        pointer to ``int32_t``
I     ``u32``               an ``int`` in [0, 2**32)           ``uint32_t``, 4 bytes       pointer to ``uint32_t``
L     ``u64``               an ``int`` in [0, 2**64): keys,    ``uint64_t``, 8 bytes       pointer to ``uint64_t``
                            streams, a value's bit pattern
d     ``double``            a ``float``                        ``double``, 8 bytes         pointer to ``double``
f     ``float``             a ``float``                        ``float``, 4 bytes          pointer to ``float``
p     ``param_t``/``wf``    a ``float`` (a parameter)          ``double`` where the device  pointer to ``double``
                                                               has fp64, else ``float``    (CUDA always has fp64)
D     ``dims_t``            up to 12 ``int`` (shape, strides)  ``int64_t[12]`` by value,   pointer to ``int64_t[12]``
                                                               96 bytes
G     ``geom_t``            16 ``int`` (a conv geometry)       ``int64_t[16]`` by value,   pointer to ``int64_t[16]``
                                                               128 bytes
====  ====================  =================================  ==========================  ===========================

Each row of :data:`TABLE` reads ``family  name  signature  [launch]``: the source file
(``gpu/<family>.cl``), the kernel name with placeholders for the parts that vary
(``{t}`` a dtype suffix such as ``f32``, ``{e}`` an element size 1/2/4/8, ``{i}`` an
index dtype ``i32``/``i64``, ``{op}`` an op name, any other ``{x}`` one word), the
signature, and how work-items are laid out: ``items`` (default) is one work-item per
unit of the count the caller gives, in work-groups of :data:`LOCAL`; ``groups`` is one
work-group of :data:`GROUP` work-items per unit (a matrix of a batch); ``grid`` takes
the global and local sizes from the caller (``launch_grid``).  A name may also be
declared outright (no placeholder): exact names win over templates.

``packages/kernels-c/tests/test_gpu_contract.py`` preprocesses every ``gpu/*.cl`` and checks that each
kernel there is declared here with its exact parameter list, and that each row
names kernels that exist.  The entries of the CPU ABI (``cdef/*.h``) that the
device backends offer with the same names and signatures are the methods of
:mod:`tapeflow.kernels.gpu_entries`: each validates its arguments like the C
kernel, then launches table kernels by name, its arguments in the declared order.

>>> from tapeflow.kernels.gpu_contract import spec
>>> s = spec("binary_add_f32")
>>> s.family, s.signature, s.launch
('elementwise', 'BBBliDDDB', 'items')
>>> spec("matmul_vec_f64").signature
'illlBlBlBl'
"""
from __future__ import annotations

import re
from typing import NamedTuple

# dtype codes of csrc/tpf.h and the kernel-name suffix, element size of each
F16, BF16, F32, F64, I8, U8, I16, I32, I64, BOOL = range(10)
SUF = ("f16", "bf16", "f32", "f64", "i8", "u8", "i16", "i32", "i64", "b")
SIZE = (2, 2, 4, 8, 1, 1, 2, 4, 8, 1)
INTS = (I8, U8, I16, I32, I64)
MAXDIMS = 12
LOCAL = 256      # work-items per work-group of ``items`` launches
GROUP = 64       # work-items per work-group of ``groups`` launches (linalg: one matrix each)
FAMILIES = ("elementwise", "reduce", "matmul", "cast", "copy", "index", "join", "sort", "nn", "random", "conv",
            "linalg")

#: code -> (C type of the value the driver passes, its size in bytes); ``B`` is the driver's handle,
#: ``p`` is ``double`` or ``float`` by the device (:func:`ctype`)
CODES = {
    "B": ("handle", 8), "l": ("int64_t", 8), "i": ("int32_t", 4), "I": ("uint32_t", 4), "L": ("uint64_t", 8),
    "d": ("double", 8), "f": ("float", 4), "p": ("double", 8), "D": ("int64_t[12]", 96), "G": ("int64_t[16]", 128),
}


def ctype(code: str, fp64: bool = True) -> tuple:
    """(C type, bytes) a kernel argument of ``code`` is marshalled as on a device with or without fp64.

    >>> ctype("p", fp64=False), ctype("D")
    (('float', 4), ('int64_t[12]', 96))
    """
    if code == "p" and not fp64:
        return "float", 4
    return CODES[code]


TABLE = """
elementwise  unary_{op}_{t}                  BBlp
elementwise  binary_{op}_{t}                 BBBliDDDB
reduce       reduce_{op}_{t}                 BBBllllli
reduce       reducec_{op}_{t}                BBlll
reduce       argreduce_{op}_{t}              BBBlllll
reduce       argreducec_{op}_{t}             BBBllll
matmul       matmul_{t}                      iilllBlBlBl   grid
matmul       matmul_vec_{t}                  illlBlBlBl    grid
cast         cast_{s}_{d}                    BBl
copy         fill_{e}                        BlL
copy         strided_copy_{e}                BlBliDDDl
copy         rows_copy_{e}                   BllBllll
index        validate_idx_{i}                BllilB
index        validate_sorted_{i}             BlllB
index        validate_nd_{i}                 BlliDB
index        gather_{e}_{i}                  BBBlllll
index        scatter_add_axis_{t}_{i}        BBBlllll
index        gather_nd_{e}_{i}               BBBliDlll
index        scatter_nd_set_{e}_{i}          BBBliDl
index        scatter_nd_add_{t}_{i}          BBBliDl
index        one_hot_{e}_{i}                 BBllLLl
index        nz_count_{nz}                   BllB
index        nz_scan                         BlB
index        nz_write_{nz}                   BllBiDB
index        select_{e}                      BBBBiDDDDl
join         pad_{e}                         BBiDDDiLl
join         iota_{t}                        Blppll
join         linspace_{t}                    Blppp
sort         sort_load_{t}                   BBBll
sort         sort_merge_{k}_{order}          BBBBlll
sort         sort_emit_{e}_{i}               BBBBlliil
sort         cumulative_{t}                  BBilllii
nn           softmax_{t}                     BBilll
nn           softmax_xent_{t}                BBBBilll
nn           sparse_softmax_xent_{t}_{i}     BBBBill
random       philox_raw                      IIIIIIBl
random       random_uniform_{t}              BlLLpp
random       random_uniform_f64              BlLLdd
random       random_uniform_int_{t}          BlLLll
random       random_normal_{t}               BlLLdd
random       random_truncated_normal_{t}     BlLLdd
random       random_dropout_mask_f32         BlLLpf
random       random_dropout_mask_f64         BlLLpd
random       random_categorical_{t}_{i}      BlllBLLBB
random       shuffle_perm                    BlLL
random       shuffle_rows_{e}                BBBll
conv         conv2d_{t}                      BBBG
conv         conv2d_backprop_input_{t}       BBBG
conv         conv2d_backprop_filter_{t}      BBBG
conv         depthwise_conv2d_{t}            BBBG
conv         depthwise_conv2d_backprop_input_{t}   BBBG
conv         depthwise_conv2d_backprop_filter_{t}  BBBG
conv         max_pool2d_{t}                  BBG
conv         max_pool2d_grad_{t}             BBBG
conv         max_pool2d_grad_grad_{t}        BBBG
conv         avg_pool2d_{t}                  BBG
conv         avg_pool2d_grad_{t}             BBG
conv         im2col_{t}                      BBGll
conv         col2im_{t}                      BBGll
linalg       lu_{t}                          BBBl          groups
linalg       lu_solve_{t}                    BBBilll
linalg       lu_singular_{t}                 BllB
linalg       eye_{t}                         Bll
linalg       lu_det_{t}                      BBBBBll
linalg       cholesky_{t}                    BBl           groups
linalg       triangular_solve_{t}            BlBiilll
"""

LAUNCHES = ("items", "groups", "grid")


class Spec(NamedTuple):
    """One declared kernel (or family of kernels): where it lives, what it takes, how it is launched."""

    family: str
    name: str
    signature: str
    launch: str


def _parse(text: str) -> list:
    rows = []
    for line in text.strip().splitlines():
        family, name, sig, *rest = line.split()
        launch = rest[0] if rest else "items"
        if family not in FAMILIES or launch not in LAUNCHES or set(sig) - set(CODES):  # pragma: no cover
            raise ValueError(f"bad row in the GPU kernel table: {line!r}")
        rows.append(Spec(family, name, sig, launch))
    return rows


SPECS = _parse(TABLE)
_EXACT = {s.name: s for s in SPECS if "{" not in s.name}


_DTYPE = "(?:" + "|".join(SUF) + ")"
_PLACEHOLDERS = {"{t}": _DTYPE, "{s}": _DTYPE, "{d}": _DTYPE, "{e}": "[1248]", "{i}": "i(?:32|64)",
                 "{op}": "[a-z0-9_]+"}


def _pattern(template: str):
    parts = re.split(r"(\{\w+\})", template)
    rx = "".join(_PLACEHOLDERS.get(p, "[a-z0-9]+") if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(rx + r"\Z")


_TEMPLATES = [(_pattern(s.name), s) for s in SPECS if "{" in s.name]
_resolved: dict = {}


def matches(name: str) -> list:
    """Every row of the table that declares kernel ``name`` (exactly one for a kernel that exists).

    >>> [s.name for s in matches("random_uniform_int_i64")]
    ['random_uniform_int_{t}']
    """
    if name in _EXACT:
        return [_EXACT[name]]
    return [s for rx, s in _TEMPLATES if rx.match(name)]


def spec(name: str) -> Spec:
    """The declaration of kernel ``name``; KeyError for a kernel the table does not declare.

    >>> spec("lu_f64").launch
    'groups'
    """
    s = _resolved.get(name)
    if s is None:
        found = matches(name)
        if len(found) != 1:
            raise KeyError(f"GPU kernel {name!r} is {'not declared' if not found else 'declared twice'} in "
                           f"tapeflow.kernels.gpu_contract.TABLE")
        s = _resolved[name] = found[0]
    return s
