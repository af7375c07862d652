"""The text of the GPU kernel families, with the headers they share with the C kernels.

A family is ``gpu/<family>.cl``; the host compiles ``gpu/tpf_gpu.h`` followed by it, as
one string (OpenCL's ``clCreateProgramWithSource``, NVRTC), so an ``#include "x"`` of
a header from ``include/`` (``scalar_math.h``, ``philox.h``, ``elementwise.def``: the
scalar math and the op list the C kernels compile too) is replaced here by the
header's text: a ``.h`` header (all of them are guarded) at its first place only, an
X-macro list (``.def``) at every place it stands.  The text is therefore all a kernel
cache has to hash.  Standard library only: ``tools/compile_cuda.py`` loads this file
without importing tapeflow.

>>> from tapeflow.kernels.kernel_sources import gpu_source
>>> src = gpu_source("elementwise")
>>> '#include "' in src, "tpf_vexpf" in src, "KERNEL" in src
(False, True, True)
"""
from __future__ import annotations

import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
GPU_DIR = HERE / "gpu"
INCLUDE_DIR = HERE / "include"
PRELUDE = "tpf_gpu.h"

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.MULTILINE)


def expand_includes(text: str, where: str = "source", _depth: int = 0, _seen: set | None = None) -> str:
    """``text`` with every ``#include "name"`` replaced by ``include/name``'s expanded text
    (a ``.h`` header once: a later include of it becomes a comment).

    Raises FileNotFoundError naming the header and the file that asked for it when the
    header is not in ``include/``.

    >>> "TPF_PHILOX_M0" in expand_includes('#include "philox.h"\\n')
    True
    """
    if _depth > 8:
        raise RecursionError(f"{where}: #include nested more than 8 deep")
    seen = set() if _seen is None else _seen

    def one(m):
        name = m.group(1)
        path = INCLUDE_DIR / name
        if "/" in name or "\\" in name or not path.is_file():
            raise FileNotFoundError(f'{where}: #include "{name}": no such header in {INCLUDE_DIR}')
        if name.endswith(".h"):
            if name in seen:
                return f"/* {name}: included above */"
            seen.add(name)
        return expand_includes(path.read_text(), name, _depth + 1, seen)

    return _INCLUDE.sub(one, text)


def gpu_source(family: str) -> str:
    """The full source of a GPU kernel family: the prelude, then the family, includes expanded.

    >>> gpu_source("random").count("DEV words_t philox(")
    1
    """
    path = GPU_DIR / f"{family}.cl"
    if not re.fullmatch(r"\w+", family) or not path.is_file():
        raise FileNotFoundError(f"no GPU kernel family {family!r} in {GPU_DIR}")
    return expand_includes((GPU_DIR / PRELUDE).read_text() + "\n" + path.read_text(), f"{family}.cl")
