"""The CUDA backend: the kernel-table checks of test_opencl.py on a CUDA device, where one exists.

Everywhere: tapeflow imports without CUDA and the backend says what is missing;
where nvcc is installed, the shared kernel prelude compiles as CUDA C++ (the
``cuda_compile`` nox session compiles every family).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import tapeflow.kernels as K
from tapeflow.kernels import cuda
from test_opencl import GPUKernelChecks

ROOT = pathlib.Path(__file__).resolve().parents[3]
needs_cuda = pytest.mark.skipif(cuda.device_count() == 0, reason="this machine has no CUDA device")


@pytest.fixture(scope="module")
def dev():
    try:
        return K.get_backend("cuda")
    except K.BackendUnavailable:
        return cuda.CUDABackend()


@pytest.fixture(scope="module")
def cpu():
    return K.get_backend("cpu")


@needs_cuda
class TestCUDAKernels(GPUKernelChecks):
    """Every kernel-table entry on the CUDA device against the CPU."""


@needs_cuda
def test_device_description(dev):
    assert dev.name == "cuda" and dev.device_name == "cuda:0" and dev.device_type == "gpu"
    assert dev.cc >= (5, 0) and dev.compute_units() >= 1
    assert cuda.device_types() == ["gpu"] * cuda.device_count()


def test_without_a_cuda_driver_import_works_and_the_backend_says_why(tmp_path):
    code = ("import tapeflow, tapeflow.kernels as K\n"
            "from tapeflow.kernels import cuda\n"
            "assert cuda.device_count() == 0 and cuda.device_types() == []\n"
            "try:\n"
            "    cuda.CUDABackend()\n"
            "except K.BackendUnavailable as e:\n"
            "    print(e)\n")
    env = dict(os.environ, TAPEFLOW_CUDA_LIB=str(tmp_path / "libcuda-missing.so.1"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "cuda backend unavailable: the CUDA driver (libcuda.so.1; or set TAPEFLOW_CUDA_LIB) not found" in out.stdout


@pytest.mark.skipif(shutil.which("nvcc") is None and not os.path.exists("/usr/local/cuda/bin/nvcc"),
                    reason="this machine has no nvcc")
def test_the_shared_prelude_compiles_as_cuda():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "compile_cuda.py"), "--arch", "sm_75", "copy"],
                         capture_output=True, text=True, check=False, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok    sm_75  copy" in out.stdout and "12 kernels" in out.stdout
