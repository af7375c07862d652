"""One element-wise op list (include/elementwise.def) for the C enums and loops, the GPU
kernels and the Python tables; one scalar-math source (include/*.h) for C and the GPUs."""
import pathlib
import re

import numpy as np
import pytest

import tapeflow.kernels as K
from tapeflow.kernels import kernel_sources

PKG = pathlib.Path(__file__).resolve().parents[1]
NP = {"float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
      "int32": np.int32, "int64": np.int64, "bool": np.bool_}
BOOL_OUT = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isnan", "isinf", "isfinite"}


@pytest.fixture(scope="module")
def cpu():
    return K.get_backend("cpu")


def _status(cpu, arity, op, dtype):
    t = NP[dtype]
    h1, _ = cpu.from_numpy(np.ones(3, t))
    ho, _ = cpu.alloc((3,), np.uint8 if op in BOOL_OUT else t)
    code = K.DTYPE_CODES[dtype]
    if arity == 1:
        return cpu.unary(K.UNARY_CODES[op], code, h1, ho, 3, 1.0)
    return cpu.binary_flat(K.BINARY_CODES[op], code, h1, 0, h1, 0, ho, 3)


@pytest.mark.parametrize("arity", [1, 2])
def test_the_c_library_has_loops_for_exactly_the_dtypes_the_list_declares(cpu, arity):
    ops = K.UNARY_OPS if arity == 1 else K.BINARY_OPS
    assert len(ops) > 30
    for op in ops:
        declared = K.elementwise_dtypes(op, arity)
        assert declared, op
        for dtype in NP:
            st = _status(cpu, arity, op, dtype)
            assert (st == K.OK) == (dtype in declared), (op, dtype, st)
            assert st in (K.OK, K.EBADDTYPE), (op, dtype, st)
    # the C enum ends where the Python list ends
    f32 = K.DTYPE_CODES["float32"]
    h, _ = cpu.from_numpy(np.ones(3, np.float32))
    ho, _ = cpu.alloc((3,), np.float32)
    if arity == 1:
        assert cpu.unary(len(ops), f32, h, ho, 3, 0.0) == K.EBADOP
    else:
        assert cpu.binary_flat(len(ops), f32, h, 0, h, 0, ho, 3) == K.EBADOP


def test_codes_follow_the_rows_of_the_def_file():
    text = (PKG / "src" / "tapeflow" / "kernels" / "include" / "elementwise.def").read_text()
    assert tuple(re.findall(r"^TPF_BINARY\(\s*(\w+)", text, re.M)) == K.BINARY_OPS
    assert tuple(re.findall(r"^TPF_UNARY\(\s*(\w+)", text, re.M)) == K.UNARY_OPS
    assert K.BINARY_CODES == {n: i for i, n in enumerate(K.BINARY_OPS)}
    assert K.UNARY_CODES["polygamma"] == len(K.UNARY_OPS) - 1
    with pytest.raises(KeyError, match="no unary element-wise op 'add'"):
        K.elementwise_dtypes("add", 1)


def test_the_op_list_and_scalar_math_are_not_written_twice():
    # the enum, the CPU loops and the GPU kernels all include the .def; no hand-written list is left
    for path in (PKG / "csrc" / "elementwise.h", PKG / "csrc" / "elementwise.c",
                 PKG / "src" / "tapeflow" / "kernels" / "gpu" / "elementwise.cl"):
        text = path.read_text()
        assert '#include "elementwise.def"' in text, path
        assert "TPF_BIN_SQUARED_DIFFERENCE" not in text and "binary_squared_difference" not in text, path
    # the float32 polynomials, Python's divmod and Philox's rounds live once, in include/
    sources = [*(PKG / "csrc").glob("*.[ch]"), *(PKG / "src" / "tapeflow" / "kernels" / "gpu").glob("*")]
    for marker in ("1.9875691500e-4f", "7.0376836292e-2f", "if (div - f > (T)0.5)", "0xD2511F53",
                   "6.666666666666735130e-01", "174611.0 / 330", "0x7c00 | (man ? 0x200 : 0)"):
        assert [p.name for p in sources if marker in p.read_text()] == [], marker


def test_gpu_sources_have_the_shared_headers_expanded():
    src = kernel_sources.gpu_source("elementwise")
    assert '#include "' not in src
    assert src.count("TPF_FN float tpf_vexpf(float x)") == 1   # a header appears once (prelude and family include it)
    assert src.count("TPF_BINARY(add,") == 2   # the X-macro list, once for the binary, once for the unary kernels
    rnd = kernel_sources.gpu_source("random")
    assert "tpf_philox_block" in rnd and '#include "' not in rnd
    with pytest.raises(FileNotFoundError, match='x.cl: #include "nosuch.h"'):
        kernel_sources.expand_includes('#include "nosuch.h"\n', "x.cl")
    with pytest.raises(FileNotFoundError, match="no GPU kernel family"):
        kernel_sources.gpu_source("../csrc/elementwise")
