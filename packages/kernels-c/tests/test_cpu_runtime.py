"""The CPU library's runtime: flush-to-zero in every thread a kernel runs on (OpenBLAS's
GEMM blocks included), the caching allocator, the element-wise and reduction fast paths."""
import numpy as np
import pytest

import tapeflow.kernels as K

F32 = 2  # TPF_F32


@pytest.fixture(scope="module")
def cpu():
    return K.get_backend("cpu")


def _matmul(cpu, a, b):
    m, k = a.shape
    n = b.shape[1]
    out, host = cpu.alloc((m, n), np.float32)
    st = cpu.matmul(F32, 0, 0, 1, m, n, k, cpu.host_ptr(a), 0, cpu.host_ptr(b), 0, out)
    assert st == 0
    return host


def test_gemm_flushes_denormals_in_every_blas_thread(cpu):
    # 1e-21 * 1e-21 = 1e-42 is a float32 subnormal: flushed to 0 with flush-to-zero on, kept
    # (512 of them sum to ~5e-40) with it off.  512 x 512 x 512 runs on several BLAS threads;
    # every row must follow the switch, not only the rows of the calling thread.
    a = np.full((512, 512), 1e-21, np.float32)
    cpu.blas_set_num_threads(2)
    try:
        assert cpu.get_ftz() == 1
        flushed = _matmul(cpu, a, a)
        assert np.count_nonzero(flushed) == 0
        assert cpu.set_ftz(0) == 0
        kept = _matmul(cpu, a, a)
        assert np.all(kept > 0) and np.all(kept < np.finfo(np.float32).tiny)
        assert cpu.set_ftz(1) == 0
        assert np.count_nonzero(_matmul(cpu, a, a)) == 0
    finally:
        cpu.set_ftz(1)
        cpu.blas_set_num_threads(cpu.get_num_threads())
