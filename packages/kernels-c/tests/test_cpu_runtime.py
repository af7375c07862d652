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


def _strides(shape, bshape):
    """Element strides reading an array of bshape (right-aligned) broadcast to shape."""
    bshape = (1,) * (len(shape) - len(bshape)) + tuple(bshape)
    st, p = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = p if bshape[d] != 1 else 0
        p *= bshape[d]
    return st


@pytest.mark.parametrize("shape, bshape", [
    ((32, 24, 24, 16), (16,)),          # a bias over channels: period 16
    ((7, 5, 3), (5, 3)),                # period 15, not a divisor of the tile
    ((3, 4, 2, 9), (1, 1, 2, 9)),       # period 18 behind two broadcast axes
    ((50000, 3), (3,)),                 # many tiles, split over threads
    ((2, 1, 5), (1, 5)),                # an axis of length 1
])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("op, dtype", [("add", np.float32), ("sub", np.float64), ("less", np.float32),
                                       ("floordiv", np.int32), ("mul", np.int8)])
def test_binary_broadcast_of_a_short_period_matches_numpy(cpu, shape, bshape, swap, op, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    b = (rng.standard_normal(bshape) * 10).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        b[b == 0] = 3
    ref = {"add": np.add, "sub": np.subtract, "less": np.less, "floordiv": np.floor_divide,
           "mul": np.multiply}[op]
    x, y, sx, sy = (b, a, _strides(shape, bshape), _strides(shape, shape)) if swap else \
        (a, b, _strides(shape, shape), _strides(shape, bshape))
    if swap and op == "floordiv":
        x, y = x, np.where(y == 0, 1, y).astype(dtype)
    want = ref(x, y)
    out, host = cpu.alloc(shape, want.dtype)
    st = cpu.binary_strided(K.BINARY_CODES[op], K.DTYPE_CODES[np.dtype(dtype).name], len(shape),
                            cpu.new_int64(shape), cpu.host_ptr(np.ascontiguousarray(x)), cpu.new_int64(sx),
                            cpu.host_ptr(np.ascontiguousarray(y)), cpu.new_int64(sy), out)
    assert st == 0
    np.testing.assert_array_equal(host, want)


def test_binary_broadcast_of_a_short_period_checks_integer_divisors(cpu):
    a = np.arange(12, dtype=np.int32).reshape(4, 3)
    b = np.array([1, 0, 2], np.int32)
    out, _ = cpu.alloc((4, 3), np.int32)
    st = cpu.binary_strided(K.BINARY_CODES["floordiv"], K.DTYPE_CODES["int32"], 2, cpu.new_int64([4, 3]),
                            cpu.host_ptr(a), cpu.new_int64([3, 1]), cpu.host_ptr(b), cpu.new_int64([0, 1]), out)
    assert st == 5   # TPF_EDIVZERO


@pytest.mark.parametrize("outer, r, inner", [(32, 576, 16), (3, 7, 5), (2, 1000, 3), (5, 2, 128),
                                             (1, 300000, 2), (4, 0, 6), (64, 33, 100)])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reduce_over_few_columns_matches_numpy(cpu, outer, r, inner, op, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((outer, r, inner))
    if op == "prod":
        x = 1 + x / 100
    x = (x * 50).astype(dtype) if np.issubdtype(dtype, np.integer) else x.astype(dtype)
    out, host = cpu.alloc((outer, inner), dtype)
    st = cpu.reduce(K.REDUCE_CODES[op], K.DTYPE_CODES[np.dtype(dtype).name], cpu.host_ptr(x), out, outer, r, inner)
    assert st == 0
    if r == 0 and op in ("max", "min"):   # the identity: the lowest (highest) value
        info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
        lo, hi = (info.min, info.max) if info else (-np.inf, np.inf)
        np.testing.assert_array_equal(host, np.full((outer, inner), lo if op == "max" else hi, dtype))
    elif np.issubdtype(dtype, np.integer):
        wide = x.astype(np.int64)
        acc = {"sum": lambda: wide.sum(1), "prod": lambda: wide.prod(1), "max": lambda: x.max(1),
               "min": lambda: x.min(1), "mean": lambda: np.trunc(wide.sum(1) / max(r, 1))}[op]()
        np.testing.assert_array_equal(host, acc.astype(dtype))
    else:
        with np.errstate(invalid="ignore"):
            want = getattr(x.astype(np.float64), op)(axis=1).astype(dtype) if r else \
                np.full((outer, inner), {"sum": 0, "prod": 1, "mean": np.nan}[op], dtype)
        np.testing.assert_allclose(host, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_reduce_over_few_columns_propagates_nan(cpu):
    x = np.zeros((2, 500, 4), np.float32)
    x[1, 333, 2] = np.nan
    for op in ("max", "min", "sum"):
        out, host = cpu.alloc((2, 4), np.float32)
        assert cpu.reduce(K.REDUCE_CODES[op], K.DTYPE_CODES["float32"], cpu.host_ptr(x), out, 2, 500, 4) == 0
        assert np.isnan(host[1, 2]) and np.count_nonzero(np.isnan(host)) == 1


def test_large_buffers_are_reused_from_the_cache(cpu):
    import gc

    gc.collect()
    h, host = cpu.alloc((300, 1000), np.float32)          # 1.2 MB: the caching allocator's
    assert host.shape == (300, 1000) and host.dtype == np.float32 and host.flags.writeable
    host[...] = 7
    addr = host.ctypes.data
    assert addr % 64 == 0
    before = cpu.memory_stats()
    del h, host
    gc.collect()
    freed = cpu.memory_stats()
    assert freed["in_use"] < before["in_use"] and freed["cached"] > before["cached"]
    h, host = cpu.alloc((1000, 300), np.float32)          # the same size class: the same buffer
    assert host.ctypes.data == addr
    assert cpu.memory_stats()["from_cache"] == freed["from_cache"] + 1
    view = host[10:]                                     # a view keeps the buffer alive
    del h, host
    gc.collect()
    assert cpu.memory_stats()["in_use"] == before["in_use"]
    view[...] = 1
    del view


def test_cached_memory_stays_flat_and_is_capped(cpu):
    import gc

    gc.collect()
    for _ in range(3):   # a step's sizes, warm
        bufs = [cpu.alloc((n,), np.float32) for n in (40000, 100000, 300000, 300000, 77777)]
        del bufs
    gc.collect()
    warm = cpu.memory_stats()
    for _ in range(200):
        bufs = [cpu.alloc((n,), np.float32) for n in (40000, 100000, 300000, 300000, 77777)]
        del bufs
    gc.collect()
    after = cpu.memory_stats()
    assert after["in_use"] == warm["in_use"] and after["cached"] == warm["cached"]
    assert after["from_system"] == warm["from_system"]          # every one came from the cache
    old = cpu.set_cache_limit(0)
    try:
        assert cpu.memory_stats()["cached"] == 0
        with pytest.raises(ValueError, match="negative"):
            cpu.set_cache_limit(-1)
        with pytest.raises(TypeError, match="int"):
            cpu.set_cache_limit(1.5)
    finally:
        cpu.set_cache_limit(old)


def _omp_env(env):
    """(GOMP_SPINCOUNT as our libgomp runs with it, the variable as the process sees it after the import)."""
    import os
    import re
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")} | env
    code = ("import ctypes, os, tapeflow.kernels as K; K.get_backend('cpu'); "
            "print(os.environ.get('GOMP_SPINCOUNT'), flush=True); ctypes.CDLL('libgomp.so.1').omp_display_env(1)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return re.search(r"GOMP_SPINCOUNT = '(\d+)'", out.stdout + out.stderr).group(1), out.stdout.split()[0]


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="libgomp's omp_display_env")
def test_openmp_threads_spin_briefly_before_sleeping():
    # a parallel region pays no futex wake-up when the previous one ended moments ago; the setting is
    # for our libgomp's load only (a PyTorch imported later keeps its own default)
    assert _omp_env({}) == ("30000", "None")
    # the user's choice wins (GOMP_SPINCOUNT would override their OMP_WAIT_POLICY)
    assert _omp_env({"OMP_WAIT_POLICY": "PASSIVE"}) == ("0", "None")
    assert _omp_env({"GOMP_SPINCOUNT": "5"}) == ("5", "5")


_IDLE_THREADS = """
import os, time
import numpy as np, tapeflow.kernels as K
cpu = K.get_backend("cpu")
print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
a = np.ones((512, 512), np.float32)
out, _ = cpu.alloc((512, 512), np.float32)
cpu.blas_set_num_threads(2)     # OpenBLAS starts its worker thread here if it has none
assert cpu.matmul(2, 0, 0, 1, 512, 512, 512, cpu.host_ptr(a), 0, cpu.host_ptr(a), 0, out) == 0
def ticks():
    return {t: sum(map(int, open(f"/proc/self/task/{t}/stat").read().rsplit(")", 1)[1].split()[11:13]))
            for t in os.listdir("/proc/self/task")}
before = ticks(); time.sleep(0.5); after = ticks()
print(max(after[t] - before.get(t, 0) for t in after))
"""


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self/task"), reason="reads Linux's /proc")
def test_openblas_worker_threads_sleep_instead_of_spinning():
    # csrc/matmul.c runs OpenBLAS's jobs on our threads, so OpenBLAS's own workers never get
    # work; busy-waiting for it (2**28 cycles by default) took a core from our GEMMs.  While
    # the process sleeps, no thread may burn CPU (10 ms ticks over 0.5 s).
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    def run(extra):
        out = subprocess.run([sys.executable, "-c", _IDLE_THREADS], env=env | extra, capture_output=True,
                             text=True, check=True).stdout.split()
        return out[0], int(out[1])
    leaked, busiest = run({})
    assert leaked == "None"       # set for OpenBLAS's load only: other libraries keep their default
    assert busiest <= 2
    # the check can fail: a spinning worker (the user's own timeout wins) burns CPU while idle
    assert run({"OPENBLAS_THREAD_TIMEOUT": "30"})[1] > 5


def test_thread_count_ignores_other_libraries_resetting_openmp(cpu):
    # PyTorch shares the process's libgomp: torch.set_num_threads(1) calls omp_set_num_threads,
    # which must not change how many threads tapeflow's kernels use
    import ctypes

    gomp = ctypes.CDLL("libgomp.so.1")
    before = cpu.get_num_threads()
    old = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(1)
    try:
        assert cpu.get_num_threads() == before
    finally:
        gomp.omp_set_num_threads(old)


def _ulps(a, b):
    ai, bi = (np.asarray(v, np.float32).view(np.int32).astype(np.int64) for v in (a, b))
    ai, bi = (np.where(v < 0, -(v & 0x7FFFFFFF), v) for v in (ai, bi))
    return np.abs(ai - bi)


@pytest.mark.parametrize("op, ref, sample", [
    ("exp", np.exp, lambda r: r.uniform(-87, 88, 1 << 18)),
    ("log", np.log, lambda r: np.exp(r.uniform(-69, 69, 1 << 18))),
    ("tanh", np.tanh, lambda r: r.uniform(-10, 10, 1 << 18)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), lambda r: r.uniform(-80, 80, 1 << 18)),
])
def test_float32_vector_math_is_within_two_ulps_of_numpy(cpu, op, ref, sample):
    # include/scalar_math.h's branch-free polynomials (the loops gcc vectorizes; fused.c and the GPU
    # kernels use the same formulas): at most 2 ulp from the correctly rounded value (measured: exp, log,
    # tanh 1 ulp, sigmoid 2)
    rng = np.random.default_rng(3)
    x = np.concatenate([sample(rng), np.linspace(0.25, 4, 20001) if op == "log" else np.linspace(-1, 1, 20001)])
    x = x.astype(np.float32)
    out, host = cpu.alloc(x.shape, np.float32)
    assert cpu.unary(K.UNARY_CODES[op], F32, cpu.host_ptr(x), out, x.size, 0.0) == 0
    assert _ulps(host, ref(x.astype(np.float64)).astype(np.float32)).max() <= 2
