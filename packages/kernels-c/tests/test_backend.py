"""The CPU backend through its own interface (no tapeflow core involved)."""
import numpy as np
import pytest

import tapeflow.kernels as K


@pytest.fixture(scope="module")
def cpu():
    return K.get_backend("cpu")


def test_backend_registry():
    assert "cpu" in K.backend_names()
    assert K.get_backend("cpu") is K.get_backend("cpu")
    with pytest.raises(K.BackendUnavailable, match="no backend named 'tpu'"):
        K.get_backend("tpu")


def test_kernel_table_is_complete(cpu):
    for name in ("unary", "binary_flat", "binary_strided", "reduce", "argreduce", "matmul", "cast",
                 "strided_copy", "fill"):
        assert name in cpu.KERNELS and callable(getattr(cpu, name))
    assert cpu.missing_kernels() == []


def test_alloc_copy_in_copy_out(cpu):
    h, host = cpu.alloc((2, 3), np.float32)
    assert host.shape == (2, 3) and host.dtype == np.float32
    src = np.arange(6, dtype=np.int64).reshape(2, 3)
    h2, host2 = cpu.from_numpy(src)
    src[0, 0] = 99  # a copy, not a view
    assert cpu.to_numpy(h2, host2, (2, 3), np.int64)[0, 0] == 0


def test_binary_flat_and_status_codes(cpu):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    ha, _ = cpu.from_numpy(a)
    ho, out = cpu.alloc((3,), np.float32)
    code, f32 = K.BINARY_CODES["mul"], K.DTYPE_CODES["float32"]
    assert cpu.binary_flat(code, f32, ha, 0, ha, 0, ho, 3) == K.OK
    assert out.tolist() == [1.0, 4.0, 9.0]
    assert cpu.binary_flat(len(K.BINARY_OPS), f32, ha, 0, ha, 0, ho, 3) == K.EBADOP
    assert cpu.binary_flat(K.BINARY_CODES["logical_and"], f32, ha, 0, ha, 0, ho, 3) == K.EBADDTYPE
    assert cpu.binary_flat(code, f32, ha, 0, ha, 0, ho, -1) == K.EBADSIZE


def test_integer_division_by_zero_is_a_status(cpu):
    a = np.array([4, 5], np.int32)
    z = np.array([2, 0], np.int32)
    ha, _ = cpu.from_numpy(a)
    hz, _ = cpu.from_numpy(z)
    ho, _ = cpu.alloc((2,), np.int32)
    assert cpu.binary_flat(K.BINARY_CODES["floordiv"], K.DTYPE_CODES["int32"], ha, 0, hz, 0, ho, 2) == K.EDIVZERO


def test_large_inputs_use_threads_and_agree(cpu):
    n = 1 << 20
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    hx, _ = cpu.from_numpy(x)
    ho, out = cpu.alloc((n,), np.float32)
    assert cpu.unary(K.UNARY_CODES["square"], K.DTYPE_CODES["float32"], hx, ho, n, 0.0) == K.OK
    np.testing.assert_array_equal(out, x * x)
    assert cpu.threads() >= 1


def test_status_messages():
    assert "division by zero" in K.status_message(K.EDIVZERO)
    err = K.KernelError("tpf_matmul", K.EBADSIZE)
    assert "tpf_matmul" in str(err) and "size" in str(err)


def test_the_c_fast_path_extension_is_built_on_the_stable_abi():
    """tapeflow.kernels._fastpath (csrc/py/fastpath.c) ships beside the kernel library, cp310-abi3 where the
    interpreter has a limited API (core's eager hot path of small ops; core falls back to Python without it)."""
    import sys
    import sysconfig

    from tapeflow.kernels import _fastpath

    assert callable(_fastpath.binary) and callable(_fastpath.unary) and callable(_fastpath.matmul)
    if not hasattr(sys, "gettotalrefcount") and not sysconfig.get_config_var("Py_GIL_DISABLED"):
        assert _fastpath.__file__.endswith(".abi3.so")
    assert _fastpath.binary("add", 0, 1, False, 1.0, 2.0) is None   # not set up, not tensors: the Python path
