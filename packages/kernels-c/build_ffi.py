"""Builds the CPU kernel library ``tapeflow.kernels._cpu`` with cffi (API mode).

Every ``csrc/*.c`` is compiled into one extension; every ``cdef/*.h`` is
declared to cffi.  A kernel family adds one C file and one cdef header and
touches nothing else here.  OpenBLAS comes from the ``scipy-openblas32``
wheel (the build NumPy and SciPy ship), linked with an rpath to its folder.
"""
import os
import pathlib
import platform
import sys

import cffi

HERE = pathlib.Path(__file__).resolve().parent
CSRC = HERE / "csrc"
CDEF = HERE / "cdef"


def _openblas():
    import scipy_openblas32 as ob

    return ob.get_include_dir(), ob.get_lib_dir(), ob.get_library()


def make_builder(absolute: bool = False):
    """setuptools wants source paths relative to setup.py; cffi's own compile() runs
    in a temporary folder and needs them absolute."""
    inc, libdir, lib = _openblas()
    ffi = cffi.FFI()
    decls = "".join(p.read_text() for p in sorted(CDEF.glob("*.h")))
    ffi.cdef(decls)
    sources = sorted(str(p if absolute else p.relative_to(HERE)) for p in CSRC.glob("*.c"))
    cflags = ["-O3", "-std=c11", "-fopenmp", "-fno-math-errno", "-fno-trapping-math",
              "-Wall", "-Wno-unused-function", "-Wno-unknown-pragmas"]
    if os.environ.get("TAPEFLOW_DEBUG_BUILD"):
        cflags = [f for f in cflags if f != "-O3"] + ["-O0", "-g"]
    ffi.set_source(
        "tapeflow.kernels._cpu",
        f'#include "tpf.h"\n{decls}',
        sources=sources,
        include_dirs=[str(CSRC), inc],
        libraries=[lib, "m"],
        library_dirs=[libdir],
        extra_compile_args=cflags,
        extra_link_args=["-fopenmp", f"-Wl,-rpath,{libdir}"],
        define_macros=[("_GNU_SOURCE", "1")],
    )
    return ffi


ffibuilder = make_builder()

if __name__ == "__main__":
    # Development build in place: python build_ffi.py  (serialised by a lock so
    # parallel rebuilds do not write the same .so at once)
    import fcntl
    import shutil
    import tempfile

    with open(HERE / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.chdir(HERE)
        with tempfile.TemporaryDirectory() as tmp:
            so = make_builder(absolute=True).compile(tmpdir=tmp, verbose="-v" in sys.argv)
            dest = HERE / "src" / "tapeflow" / "kernels" / pathlib.Path(so).name
            shutil.copy(so, str(dest) + ".tmp")
            os.replace(str(dest) + ".tmp", dest)
            print(f"built {dest.relative_to(HERE)} ({platform.machine()})")
