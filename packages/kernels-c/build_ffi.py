"""Builds the CPU kernel library ``tapeflow.kernels._cpu`` with cffi (API mode).

Every ``csrc/*.c`` is compiled into one extension; every ``cdef/*.h`` is
declared to cffi.  ``src/tapeflow/kernels/include/`` (the scalar math, Philox and
the element-wise op list, shared with the GPU kernels) is on the include path.  A
kernel family adds one C file and one cdef header and touches nothing else here.
OpenBLAS comes from the ``scipy-openblas32`` wheel (the build NumPy and SciPy
ship), linked with an rpath to its folder.

The library records how it was built: ``tpf_build_info()`` returns the compile
flags, the CFLAGS/LDFLAGS/CC of the environment and ``TPF_BUILD_TAG`` when one was
defined (``CFLAGS=-DTPF_BUILD_TAG=x``).  ``flags_signature()`` hashes the same
things: setup.py keys its build folder by it and rebuilds whenever it changes, so
a build never reuses objects or a library made with other flags.
"""
import hashlib
import json
import os
import pathlib
import platform
import sys

import cffi

HERE = pathlib.Path(__file__).resolve().parent
CSRC = HERE / "csrc"
CDEF = HERE / "cdef"
# headers shared with the GPU kernels (scalar_math.h, philox.h, elementwise.def); they ship in the wheel
INCLUDE = HERE / "src" / "tapeflow" / "kernels" / "include"


def _openblas():
    import scipy_openblas32 as ob

    return ob.get_include_dir(), ob.get_lib_dir(), ob.get_library()


# the environment variables a compiler driver or distutils reads for a build
ENV_FLAGS = ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED")


def _openmp() -> tuple:
    """(compile flags, link flags) for OpenMP: GCC's -fopenmp; on macOS, Apple clang's -Xclang -fopenmp with
    Homebrew's libomp (``LIBOMP_PREFIX``, default ``brew --prefix libomp``'s usual place; delocate ships it)."""
    if sys.platform == "darwin":
        prefix = os.environ.get("LIBOMP_PREFIX", "/opt/homebrew/opt/libomp")
        return (["-Xclang", "-fopenmp", f"-I{prefix}/include"],
                # scipy-openblas32's dylib beside us in site-packages (the build env's folder is gone by then)
                [f"-L{prefix}/lib", "-lomp", f"-Wl,-rpath,{prefix}/lib",
                 "-Wl,-rpath,@loader_path/../../scipy_openblas32/lib"])
    return ["-fopenmp"], ["-fopenmp"]


def compile_flags() -> list:
    cflags = ["-O3", "-std=c11", *_openmp()[0], "-fno-math-errno", "-fno-trapping-math",
              "-Wall", "-Wno-unused-function", "-Wno-unknown-pragmas"]
    if os.environ.get("TAPEFLOW_DEBUG_BUILD"):
        cflags = [f for f in cflags if f != "-O3"] + ["-O0", "-g"]
    return cflags


def build_info() -> str:
    """The flags of a build from this environment, as ``tpf_build_info()`` reports them."""
    env = " ".join(f"{k}={os.environ[k]}" for k in ENV_FLAGS if os.environ.get(k))
    return " ".join(compile_flags()) + (f" {env}" if env else "")


def flags_signature() -> str:
    """A hash of everything that changes the compiled objects other than the sources."""
    inc, libdir, lib = _openblas()
    key = json.dumps([build_info(), inc, libdir, lib, sys.version_info[:2]])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


_BUILD_INFO_C = """
#define TPF_STR2_(x) #x
#define TPF_STR_(x) TPF_STR2_(x)
const char *tpf_build_info(void) {
#ifdef TPF_BUILD_TAG
    return %s " TPF_BUILD_TAG=" TPF_STR_(TPF_BUILD_TAG);
#else
    return %s;
#endif
}
"""


def make_builder(absolute: bool = False):
    """setuptools wants source paths relative to setup.py; cffi's own compile() runs
    in a temporary folder and needs them absolute."""
    inc, libdir, lib = _openblas()
    ffi = cffi.FFI()
    decls = "".join(p.read_text() for p in sorted(CDEF.glob("*.h")))
    ffi.cdef(decls)
    sources = sorted(str(p if absolute else p.relative_to(HERE)) for p in CSRC.glob("*.c"))
    cflags = compile_flags()
    info = json.dumps(build_info(), ensure_ascii=True)   # a valid C string literal
    ffi.set_source(
        "tapeflow.kernels._cpu",
        f'#include "tpf.h"\n{decls}' + _BUILD_INFO_C % (info, info),
        sources=sources,
        include_dirs=[str(CSRC), str(INCLUDE), inc],
        libraries=[lib, "m"],
        library_dirs=[libdir],
        extra_compile_args=cflags,
        extra_link_args=[*_openmp()[1], f"-Wl,-rpath,{libdir}"],
        define_macros=[("_GNU_SOURCE", "1")],
    )
    return ffi


# The C fast path of small eager ops (csrc/py/fastpath.c): a CPython extension of its own on the stable ABI
# (not a kernel: cffi's library holds those); core falls back to its Python path when it is missing.
FASTPATH = CSRC / "py" / "fastpath.c"


def fastpath_extension(absolute: bool = False):
    """The ``tapeflow.kernels._fastpath`` extension (setup.py builds it beside cffi's library)."""
    from setuptools import Extension

    limited = not hasattr(sys, "gettotalrefcount") and not __import__("sysconfig").get_config_var("Py_GIL_DISABLED")
    return Extension("tapeflow.kernels._fastpath", [str(FASTPATH if absolute else FASTPATH.relative_to(HERE))],
                     py_limited_api=limited, define_macros=[("TPF_LIMITED_API", "1")] if limited else [],
                     extra_compile_args=["-O2", "-Wall"])


def build_fastpath_inplace(tmp: str) -> pathlib.Path:
    """Compile the fast path into ``src/tapeflow/kernels/`` (the development build)."""
    from setuptools import Distribution

    dist = Distribution({"name": "tapeflow-kernels", "ext_modules": [fastpath_extension(absolute=True)]})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_temp, cmd.build_lib = os.path.join(tmp, "fp-temp"), os.path.join(tmp, "fp-lib")
    cmd.ensure_finalized()
    cmd.run()
    return pathlib.Path(cmd.get_ext_fullpath("tapeflow.kernels._fastpath"))


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
            so = build_fastpath_inplace(tmp)
            dest = HERE / "src" / "tapeflow" / "kernels" / so.name
            shutil.copy(so, str(dest) + ".tmp")
            os.replace(str(dest) + ".tmp", dest)
            print(f"built {dest.relative_to(HERE)}")
