"""math_ops' element-wise tables take their ops, codes and order from tapeflow.kernels'
list (include/elementwise.def); their own columns (names, TF names, dtypes, docs) agree with it."""
from tapeflow import kernels
from tapeflow.core import dtypes as _dt
from tapeflow.core.ops import _ew, math_ops


def _kernel_dtypes(allowed):
    # float16/bfloat16 run through the float32 loops
    return {"float32" if d.name in ("float16", "bfloat16") else d.name for d in allowed}


def test_every_kernel_op_has_exactly_one_python_row_or_function():
    for doc, own, ops in ((math_ops._UNARY_DOC, math_ops._UNARY_OWN, kernels.UNARY_OPS),
                          (math_ops._BINARY_DOC, math_ops._BINARY_OWN, kernels.BINARY_OPS)):
        assert set(doc) | set(own) == set(ops), set(ops) ^ (set(doc) | set(own))
        assert not set(doc) & set(own)


def test_rows_follow_the_kernel_list_and_its_codes():
    for rows, ops, codes in ((math_ops._UNARY, kernels.UNARY_OPS, _ew.UN),
                             (math_ops._BINARY, kernels.BINARY_OPS, _ew.BIN)):
        knames = [r[1] for r in rows]
        assert knames == [k for k in ops if k in knames]
        assert all(codes[k] == ops.index(k) for k in knames)


def test_allowed_dtypes_have_kernel_loops():
    for rows, arity in ((math_ops._UNARY, 1), (math_ops._BINARY, 2)):
        for name, kname, _tf, allowed, *_ in rows:
            missing = _kernel_dtypes(allowed) - set(kernels.elementwise_dtypes(kname, arity))
            assert not missing, (name, missing)
    for kname, allowed in (("gelu", _dt.FLOATS), ("leaky_relu", _dt.FLOATS), ("polygamma", _dt.FLOATS)):
        assert _kernel_dtypes(allowed) <= set(kernels.elementwise_dtypes(kname, 1))
