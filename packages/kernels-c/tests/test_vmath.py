"""include/vmath.h's float32 exp, expm1, tanh, sigmoid (and scalar_math.h's log) through the CPU's element-wise
loops, against NumPy's float64 functions over a dense sweep of all float32 bit patterns plus the values around
every threshold of the formulas, with flush-to-zero off (so subnormal results count too).

The error of a result is |y - f(x)| in units of the last place of f(x) (f(x) in float64; 2**-149 below the normal
range).  Exhaustive runs over all 2**32 inputs (a C loop against libm's double functions) gave: exp 1.02,
expm1 1.44, tanh 1.33, sigmoid 1.998, log 0.83 ulp (the previous sigmoid: 2.7 ulp; exp with expm1's degree-7
polynomial: 1.01).  The fused kernels, the
generated kernels and the GPUs compute the same formulas."""
import numpy as np
import pytest

import tapeflow.kernels as K

F32 = K.DTYPE_CODES["float32"]
STRIDE = 1021          # every 1021st float32 bit pattern: 4.2 million inputs an op


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


REF = {"exp": np.exp, "expm1": np.expm1, "tanh": np.tanh, "sigmoid": _sigmoid, "log": np.log}
# the thresholds of the formulas and the worst inputs the exhaustive runs found (previous and current formulas)
EDGES = {
    "exp": [88.72283935546875, 88.8, -87.33654, -103.97208, -104.0, 0.34657359, -0.34657359, -5.87788439, 26.7168999,
            -5.83807802, -27.3779926],
    "expm1": [88.72283935546875, 88.8, -30.0, -17.32868, 0.34657359, -0.34657359, 0.355252475, 1e-8],
    "tanh": [0.625, -0.625, 9.5, -9.5, 9.01, 0.637859523, -0.637859523, 4.50023508, -0.00776717532, 0.631044209],
    "sigmoid": [-88.72284, -87.33654, -103.97208, -104.0, 0.34657359, -1.99264133, -1.10995066, -3.43988323,
                -3.46511626],
    "log": [1.17549435e-38, 0.70710678, 1.41421356, 0.70618856, 1.0, 2.0],
}


def _inputs(op):
    bits = np.arange(0, 1 << 32, STRIDE, dtype=np.uint64).astype(np.uint32)
    x = [bits.view(np.float32)]
    for e in EDGES[op]:                              # 2000 floats on each side of each edge, both signs
        c = np.float32(e).view(np.int32).astype(np.int64)
        near = np.arange(c - 2000, c + 2001).astype(np.int32).view(np.float32)
        x += [near, -near]
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.4e-45, -1.4e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38]
    x.append(np.array(specials, np.float32))
    return np.concatenate(x)


def _run(cpu, op, x):
    out, host = cpu.alloc(x.shape, np.float32)
    assert cpu.unary(K.UNARY_CODES[op], F32, cpu.host_ptr(x), out, x.size, 0.0) == K.OK
    return np.array(host, copy=True)


def _ulp_errors(y, x, op):
    with np.errstate(all="ignore"):
        ref = REF[op](x.astype(np.float64))
        rf = ref.astype(np.float32)
        e = np.abs(y.astype(np.float64) - ref)
        mag = np.abs(ref)
        ulp = np.where(mag < 2.0 ** -126, 2.0 ** -149, 2.0 ** (np.floor(np.log2(np.maximum(mag, 2.0 ** -126))) - 23))
        err = e / ulp
    nan = np.isnan(ref)
    special = np.isinf(rf) | np.isinf(y)
    err = np.where(special, np.where(y == rf, 0.0, np.inf), err)
    return np.where(nan, np.where(np.isnan(y), 0.0, np.inf), err)


@pytest.fixture()
def ieee_cpu():
    cpu = K.get_backend("cpu")
    cpu.set_ftz(0)
    yield cpu
    cpu.set_ftz(1)


@pytest.mark.parametrize("op, bound", [("exp", 1.1), ("expm1", 1.5), ("tanh", 1.4), ("sigmoid", 2.0), ("log", 1.0)])
def test_float32_vector_math_is_within_its_ulp_bound_over_a_dense_sweep(ieee_cpu, op, bound):
    x = _inputs(op)
    y = _run(ieee_cpu, op, x)
    err = _ulp_errors(y, x, op)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, f"{op}({x[worst]!r}) = {y[worst]!r}: {err[worst]:.3f} ulp"


@pytest.mark.parametrize("op, x, want", [
    ("exp", [np.inf, -np.inf, 88.8, 88.73, -104.0, -1e30, 0.0, -0.0],
     [np.inf, 0.0, np.inf, np.inf, 0.0, 0.0, 1.0, 1.0]),
    ("expm1", [np.inf, -np.inf, -0.0, 0.0, 89.0, -40.0, 1e-30], [np.inf, -1.0, -0.0, 0.0, np.inf, -1.0, 1e-30]),
    ("tanh", [np.inf, -np.inf, -0.0, 0.0, 9.6, -20.0, 1e-30], [1.0, -1.0, -0.0, 0.0, 1.0, -1.0, 1e-30]),
    ("sigmoid", [np.inf, -np.inf, 0.0, -0.0, -110.0, 90.0], [1.0, 0.0, 0.5, 0.5, 0.0, 1.0]),
])
def test_special_values_come_out_exactly(ieee_cpu, op, x, want):
    x = np.array(x + [np.nan], np.float32)
    y = _run(ieee_cpu, op, x)
    np.testing.assert_array_equal(y[:-1], np.array(want, np.float32))
    assert np.array_equal(np.signbit(y[:-1]), np.signbit(np.array(want, np.float32)))
    assert np.isnan(y[-1])


def test_subnormal_results_are_rounded_once(ieee_cpu):
    # e**x for x in the subnormal range of its result, and sigmoid there (sigmoid(x) = e**x to float32)
    x = np.linspace(-103.9, -87.4, 50001, dtype=np.float32)
    for op in ("exp", "sigmoid"):
        err = _ulp_errors(_run(ieee_cpu, op, x), x, op)
        assert err.max() <= 1.0, op


def test_a_generated_kernel_compiled_against_other_headers_is_not_reused(tmp_path, monkeypatch):
    # the disk cache of generated kernels is keyed by the headers' contents too: after the scalar math changes
    # (an upgrade, a rebuilt checkout), a kernel compiled against the previous headers is compiled anew
    import ctypes
    import shutil

    from tapeflow.kernels import codegen

    if codegen.compiler() is None:
        pytest.skip("no GCC here: generated kernels are not built (the interpreter runs; tests/test_fusion.py)")
    inc = tmp_path / "include"
    shutil.copytree(codegen.INCLUDE, inc)
    monkeypatch.setattr(codegen, "INCLUDE", inc)
    monkeypatch.setenv("TAPEFLOW_KERNEL_CACHE", str(tmp_path / "kernels"))
    src = ('#include "scalar_math.h"\n#ifndef TPF_TEST_MARK\n#define TPF_TEST_MARK 1\n#endif\n'
           "int tpf_test_mark(void) { return TPF_TEST_MARK + (int)tpf_vm_expf(0.0f); }\n")

    def mark():
        addr = codegen.build(src, "tpf_test_mark")
        assert addr
        return ctypes.CFUNCTYPE(ctypes.c_int)(addr)()

    assert mark() == 2
    with open(inc / "vmath.h", "a") as f:
        f.write("\n#define TPF_TEST_MARK 41\n")
    assert mark() == 42


# a program whose results feed adds, subtractions, multiplies and unary ops: (kind, op, dst, a, b), registers 0
# and 1 the inputs
_U, _B = K.UNARY_CODES, K.BINARY_CODES
_CONTRACTIBLE = [(1, _B["mul"], 2, 0, 1), (1, _B["add"], 3, 2, 0), (0, _U["tanh"], 4, 3, 0),
                 (0, _U["sigmoid"], 5, 0, 0), (1, _B["add"], 6, 4, 5), (0, _U["neg"], 7, 6, 0),
                 (1, _B["mul"], 8, 7, 1), (1, _B["sub"], 9, 8, 5), (0, _U["exp"], 10, 9, 0),
                 (1, _B["sub"], 11, 10, 2), (1, _B["add"], 12, 11, 6)]


def _flat(program):
    return [v for kind, op, d, a, b in program for v in (kind, op, F32, d, a, b, 0)]


def test_generated_kernels_barrier_only_results_that_a_later_instruction_could_fold():
    # GCC contracts a multiply's result into a later add (a rounding fewer than the interpreter, which stores each
    # result), folds a negation into a later add and swaps a binary op's operands (which NaN comes out): the
    # results that a later instruction reads go through the barrier, except an add's or subtraction's read only
    # by tanh or exp (never a multiply's, and read whole); the last register is only stored
    from tapeflow.kernels import codegen

    src = codegen.kernel_source(_flat(_CONTRACTIBLE), 13, [F32] * 13, [0, 0], 2, [12, 3], [], "f")
    barred = {int(line.split("const float r")[1].split(" ")[0]) for line in src.splitlines() if "bar32(" in line
              and "const float r" in line}
    assert barred == {2, 4, 5, 6, 7, 8, 10, 11}


@pytest.mark.parametrize("n", [37, 40000])
def test_generated_kernels_keep_the_interpreters_bits_where_results_feed_adds(tmp_path, monkeypatch, n):
    from tapeflow.kernels import codegen

    if codegen.compiler() is None:
        pytest.skip("no GCC here: generated kernels are not built (the interpreter runs; tests/test_fusion.py)")
    monkeypatch.setenv("TAPEFLOW_KERNEL_CACHE", str(tmp_path / "kernels"))
    cpu = K.get_backend("cpu")
    ffi, lib = cpu.ffi, cpu.lib
    flat, rdt, outs = _flat(_CONTRACTIBLE), [F32] * 13, [12, 3]
    assert codegen.register(cpu, flat, 13, rdt, [0, 0], 2, outs, [])
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    y = (rng.standard_normal(n) * 3).astype(np.float32)
    x[:4] = [0.0, -0.0, np.nan, np.inf]

    def run(generated):
        before = lib.tpfgen_calls()
        was = lib.tpfgen_enable(1 if generated else 0)
        try:
            got = [cpu.alloc((n,), np.float32) for _ in outs]
            st = lib.tpf_fused_eval_reduce(
                ffi.new("int32_t[]", flat), ffi.new("double[]", [0.0] * len(_CONTRACTIBLE)), len(_CONTRACTIBLE), 13,
                ffi.new("int32_t[]", rdt), ffi.new("void *[]", [ffi.from_buffer(x), ffi.from_buffer(y)]),
                ffi.new("int64_t[]", [0, 0]), 2, ffi.new("void *[]", [h for h, _ in got]),
                ffi.new("int32_t[]", outs), len(outs), ffi.NULL, ffi.NULL, ffi.NULL, 0, n)
        finally:
            lib.tpfgen_enable(was)
        assert st == K.OK and (lib.tpfgen_calls() > before) == generated
        return [np.array(host, copy=True) for _, host in got]

    for g, w in zip(run(True), run(False)):
        # bit for bit (signed zeros included); which NaN comes out of an op on two (x * y with x and y NaN of
        # either sign) is the compiler's choice of operand order, as it was before: NaN for NaN
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan) and g[~nan].tobytes() == w[~nan].tobytes()
