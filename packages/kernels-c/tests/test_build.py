"""The build: a library built with other flags is never reused (issue 10, item 16)."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1]


def _library_info(so: pathlib.Path) -> str:
    code = ("import ctypes, sys\nlib = ctypes.CDLL(sys.argv[1])\n"
            "lib.tpf_build_info.restype = ctypes.c_char_p\nprint(lib.tpf_build_info().decode())")
    return subprocess.run([sys.executable, "-c", code, str(so)], check=True, capture_output=True,
                          text=True).stdout.strip()


def _build(src: pathlib.Path, tag: str) -> pathlib.Path:
    env = dict(os.environ, CFLAGS=f"-DTPF_BUILD_TAG={tag}", TAPEFLOW_DEBUG_BUILD="1")  # -O0: quick
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "-j2", "--build-lib", "lib",
                    "--build-temp", "temp"], cwd=src, env=env, check=True, capture_output=True)
    (so,) = (src / "lib" / "tapeflow" / "kernels").glob("_cpu*.so")
    return so


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler to build with")
def test_rebuild_with_new_cflags_ships_the_new_library(tmp_path):
    src = tmp_path / "kernels-c"
    src.mkdir()
    for name in ("setup.py", "build_ffi.py", "pyproject.toml", "README.md"):
        shutil.copy(PKG / name, src / name)
    for folder in ("csrc", "cdef", "src/tapeflow/kernels/include"):   # include/: headers shared with the GPU
        shutil.copytree(PKG / folder, src / folder)
    so = _build(src, "first")
    assert _library_info(so).endswith("TPF_BUILD_TAG=first")
    so = _build(src, "second")            # same build folders, new CFLAGS
    assert _library_info(so).endswith("TPF_BUILD_TAG=second")
    so = _build(src, "first")             # back: the first flags' objects are not trusted either
    assert _library_info(so).endswith("TPF_BUILD_TAG=first")


def test_build_info_reports_the_flags_of_the_loaded_library():
    import tapeflow.kernels as K

    info = K.get_backend("cpu").build_info()
    assert isinstance(info, str) and "-std=c11" in info and "-fopenmp" in info
