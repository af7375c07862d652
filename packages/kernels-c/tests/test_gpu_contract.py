"""The declarative GPU contract (gpu_contract.TABLE) against the kernel sources, and the shared launcher.

Needs no device: the sources are run through the C preprocessor as OpenCL C, and the
launcher is exercised through a recording driver.
"""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest
import tapeflow.kernels as K
from tapeflow.kernels import gpu_common, gpu_contract
from tapeflow.kernels.gpu_entries import GPUBackend

GPU = pathlib.Path(gpu_common.__file__).with_name("gpu")
#: a kernel parameter's type after preprocessing -> its code in the signature language
_CODE = {"i64": "l", "int": "i", "i32": "i", "u32": "I", "u64": "L", "double": "d", "float": "f", "param_t": "p",
         "wf": "p", "dims_t": "D", "geom_t": "G"}


def _kernels_of(family: str) -> dict:
    """{kernel name: signature} of gpu/<family>.cl, read off the preprocessed OpenCL C source."""
    cpp = shutil.which("cpp") or shutil.which("gcc")
    assert cpp, "the contract test needs the C preprocessor (cpp or gcc), as building kernels-c does"
    args = [cpp] + (["-E"] if cpp.endswith("gcc") else []) + ["-P", "-D__OPENCL_VERSION__=120", "-DTPF_FP64=1",
                                                           f"-I{GPU}", f"-I{GPU.with_name('include')}", "-"]
    text = gpu_common.source(family)   # what the drivers compile
    out = subprocess.run(args, input=text, capture_output=True, text=True, check=True).stdout
    found = {}
    for name, params in re.findall(r"__kernel void (\w+)\s*\(([^)]*)\)", out):
        codes = []
        for p in params.split(","):
            words = p.replace("*", " * ").split()
            codes.append("B" if "*" in words else _CODE[words[-2]])
        found[name] = "".join(codes)
    return found


@pytest.fixture(scope="module")
def sources():
    return {fam: _kernels_of(fam) for fam in gpu_contract.FAMILIES}


def test_every_kernel_in_the_sources_is_declared_once_with_its_parameters(sources):
    assert sum(len(k) for k in sources.values()) > 500
    for family, kernels in sources.items():
        for name, sig in kernels.items():
            rows = gpu_contract.matches(name)
            assert len(rows) == 1, (name, rows)
            assert rows[0].family == family, name
            assert rows[0].signature == sig, (name, rows[0].signature, sig)


def test_every_declared_row_names_kernels_that_exist(sources):
    for row in gpu_contract.SPECS:
        have = [n for n in sources[row.family] if row in gpu_contract.matches(n)]
        assert have, f"{row.name} ({row.family}) names no kernel of gpu/{row.family}.cl"


def test_the_device_kernel_table_covers_the_cpu_abi():
    assert sorted(set(K.get_backend("cpu").KERNELS) - set(dir(GPUBackend))) == []


def test_marshalling_codes():
    assert gpu_contract.ctype("p", fp64=True) == ("double", 8)
    assert gpu_contract.ctype("p", fp64=False) == ("float", 4)
    assert gpu_contract.ctype("G") == ("int64_t[16]", 128)
    with pytest.raises(KeyError, match="not declared"):
        gpu_contract.spec("no_such_kernel_f32")


class _Recorder(GPUBackend):
    """A driver that runs nothing: kernels are names, launches are recorded (host memory as 'device')."""

    name = "recorder"
    device_name = "recorder:0"

    def __init__(self, missing=()):
        super().__init__()
        self.launches, self._missing = [], set(missing)

    def _dev_alloc(self, nbytes):
        return bytearray(nbytes)

    def _dev_free(self, mem):
        pass

    def _arg_of(self, mem):
        return mem

    def _kernel(self, family, name):
        return None if name in self._missing else (family, name)

    def _launch(self, k, gsize, lsize, sig, args):
        self.launches.append((k, gsize, lsize, sig, args))

    def synchronize(self):
        pass


def test_the_launcher_takes_family_signature_and_layout_from_the_table():
    rec = _Recorder(missing={"unary_sqrt_f64"})
    x, _ = rec.alloc((1000,), np.float32)
    assert rec.unary(K.UNARY_CODES["sqrt"], K.DTYPE_CODES["float32"], x, x, 1000, 0.0) == K.OK
    assert rec.launches[-1][:4] == (("elementwise", "unary_sqrt_f32"), (1024,), (256,), "BBlp")
    assert rec.unary(K.UNARY_CODES["sqrt"], K.DTYPE_CODES["float64"], x, x, 1000, 0.0) == K.EBADDTYPE
    assert rec.launch("lu_f32", 3, x, x, x, 4) == K.OK                  # one work-group of 64 per matrix
    assert rec.launches[-1][1:4] == ((192,), (64,), "BBBl")
    assert rec.launch_grid("matmul_f32", (20, 33, 2), (16, 16, 1), 0, 0, 1, 2, 3, x, 0, x, 0, x, 0) == K.OK
    assert rec.launches[-1][1:3] == ((32, 48, 2), (16, 16, 1))
    n = len(rec.launches)
    assert rec.launch("fill_4", 0, x, 0, 0) == K.OK and len(rec.launches) == n   # nothing to do
    with pytest.raises(TypeError, match=r"fill_4 takes 3 arguments \(BlL\), got 2"):
        rec.launch("fill_4", 10, x, 10)
    with pytest.raises(TypeError, match="use launch_grid"):
        rec.launch("matmul_f32", 10, 0, 0, 1, 2, 3, x, 0, x, 0, x, 0)
    with pytest.raises(KeyError, match="not declared"):
        rec.launch("fill_3", 10, x, 10, 0)
