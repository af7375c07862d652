"""Every op spec, wrapped in a ``tf.function`` and exported to ONNX, gives in ONNX Runtime what tapeflow gives.

Walks the per-op specs (tests/specs/*.py) as test_function_registry.py does: each sampled case becomes a
``tf.function`` of the case's tensor arguments (non-tensor arguments closed over), traced with their shapes,
exported with ``export_concrete`` (what ``tf.saved_model.save`` writes per signature) and run by ONNX Runtime.

* When every primitive of the traced graph has a converter (``onnx_ops.CONVERTERS``), the export must succeed
  and ONNX Runtime's outputs equal tapeflow's (exactly for integer and bool results, within the spec's
  tolerances for floats).
* When the graph holds a primitive that has no ONNX form (``onnx_ops.NOT_EXPORTABLE``, each with its reason),
  the export must raise ``UnimplementedError`` naming that primitive, the signature and the source line.

The dtypes walked: float32 where the spec samples it, else the spec's first among int32, int64 and bool, else its
first; and the spec's first 8- or 16-bit integer (which the export computes in int32: few ONNX ops take them).
``ORT_LIMITS`` lists the cases ONNX Runtime itself cannot run, with the reason, and the test checks that they still
fail there (so an entry goes when it runs).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX export tests need onnx: pip install 'tapeflow-core[onnx]'")
ort = pytest.importorskip("onnxruntime", reason="the ONNX export tests need onnxruntime (noxfile TEST_DEPS)")

import tapeflow as tf  # noqa: E402
from opspec import load_specs  # noqa: E402
from tapeflow.core import errors  # noqa: E402
from tapeflow.core.runner import PRIMITIVES  # noqa: E402
from tapeflow.core.saved_model import export, onnx_ops  # noqa: E402
from test_function_registry import _call_with, _cases, _flat, _tensor_positions  # noqa: E402

SPECS = load_specs()
WALKED = ("float32", "int32", "int64", "bool")
NARROW = ("int8", "int16", "uint8")  # computed in int32 by the export (export.NARROW_INTS)

#: spec -> why ONNX Runtime cannot run its exported model (the test checks it still cannot)
ORT_LIMITS: dict = {}


def _dtypes(spec) -> list:
    """The walked dtype (WALKED's first the spec samples, else its first), and its first 8- or 16-bit integer."""
    first = next((d for d in WALKED if d in spec.dtypes), spec.dtypes[0])
    narrow = next((d for d in NARROW if d in spec.dtypes and d != first), None)
    return [first] + ([narrow] if narrow else [])


def _primitives(nodes) -> list:
    out = []
    for n in nodes:
        out.append(n)
        for g in (n.attrs or {}).get("_graphs") or ():
            out += _primitives(g.nodes)
    return out


def _session(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _check(spec, dtype, args, kwargs, where):
    pos = _tensor_positions(spec, args)
    fn = tf.function(_call_with(spec, args, kwargs, pos))
    tensors = [tf.constant(args[i]) for i in pos]
    want = fn(*tensors)
    cf = fn.get_concrete_function(*tensors)
    nodes = _primitives(export._graph_nodes(cf.graph, [t for t in cf.graph.outputs if isinstance(t, tf.Tensor)]))
    blocked = sorted({n.prim.name for n in nodes if n.prim.name not in onnx_ops.CONVERTERS})
    partial = sorted({n.prim.name for n in nodes if n.prim.name in onnx_ops.PARTIAL})
    if partial and not blocked:  # exported, unless the attributes are the ones PARTIAL says raise
        try:
            export.export_concrete(cf, "walk")
        except errors.UnimplementedError as e:
            assert any(f"({p})" in str(e) for p in partial), f"{where}: raised naming none of {partial}: {e}"
            return "raised"
    if blocked:
        with pytest.raises(errors.UnimplementedError) as e:
            export.export_concrete(cf, "walk")
        msg = str(e.value)
        assert any(f"({b})" in msg for b in blocked), f"{where}: the error names none of {blocked}: {msg}"
        assert "signature 'walk'" in msg and "created at" in msg, f"{where}: {msg}"
        assert all(b in onnx_ops.NOT_EXPORTABLE for b in blocked), \
            f"{where}: {blocked} have neither a converter nor a reason in onnx_ops.NOT_EXPORTABLE"
        return "raised"
    model, entry = export.export_concrete(cf, "walk")
    onnx.checker.check_model(model, full_check=True)
    feeds = {i["name"]: np.asarray(t.numpy()) for i, t in zip(entry["inputs"], tensors)}
    if str(spec) in ORT_LIMITS:
        with pytest.raises(Exception):
            _session(model).run(None, feeds)
        return "ort-limit"
    got = _session(model).run(None, feeds)
    want = [w for w in _flat(want) if isinstance(w, tf.Tensor)]
    assert len(got) == len(want), f"{where}: ONNX gives {len(got)} outputs, tapeflow {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        wv = np.asarray(w.numpy())
        assert tuple(g.shape) == wv.shape, f"{where}: output {k} has shape {g.shape} in ONNX, {wv.shape} in tapeflow"
        assert g.dtype == wv.dtype, f"{where}: output {k} is {g.dtype} in ONNX, {wv.dtype} in tapeflow"
        if wv.dtype.kind in "biu":
            np.testing.assert_array_equal(g, wv, err_msg=f"{where}: output {k}")
        else:
            rtol, atol = spec.tolerances(wv.dtype.name)
            np.testing.assert_allclose(g, wv, rtol=max(rtol, 2e-5), atol=max(atol, 2e-5), equal_nan=True,
                                       err_msg=f"{where}: output {k}")
    return "matched"


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_exported_op_matches_tapeflow(spec):
    results = []
    for dtype in _dtypes(spec):
        rng = np.random.default_rng(zlib.crc32(f"onnx-{spec}-{dtype}".encode()))
        for args, kwargs in _cases(spec, dtype, rng):
            where = f"{spec} dtype={dtype} shapes={[np.shape(a) for a in args]} kwargs={kwargs}"
            results.append(_check(spec, dtype, args, kwargs, where))
    assert results


def test_every_primitive_is_mapped_or_has_a_reason():
    """A registered primitive either converts to ONNX or says why it cannot; never both, never neither."""
    missing = sorted(p for p in PRIMITIVES if p not in onnx_ops.CONVERTERS and p not in onnx_ops.NOT_EXPORTABLE)
    assert not missing, f"primitives with neither an ONNX converter nor a reason in NOT_EXPORTABLE: {missing}"
    both = sorted(set(onnx_ops.CONVERTERS) & set(onnx_ops.NOT_EXPORTABLE))
    assert not both, f"primitives both converted and listed as not exportable: {both}"


def test_not_exportable_ops_raise_naming_the_op():
    """Each not-exportable primitive that a spec traces fails the export with its name (random, stateful,
    strings, io and the ops ONNX has no form for)."""
    seen = set()
    for spec in SPECS:
        if spec.op not in onnx_ops.NOT_EXPORTABLE or spec.op in seen:
            continue
        dtype = spec.dtypes[0]
        rng = np.random.default_rng(zlib.crc32(f"onnx-raise-{spec}".encode()))
        args, kwargs = _cases(spec, dtype, rng)[0]
        pos = _tensor_positions(spec, args)
        fn = tf.function(_call_with(spec, args, kwargs, pos))
        cf = fn.get_concrete_function(*[tf.constant(args[i]) for i in pos])
        nodes = _primitives(export._graph_nodes(cf.graph, [t for t in cf.graph.outputs if isinstance(t, tf.Tensor)]))
        names = {n.prim.name for n in nodes}
        if spec.op not in names:  # folded to a constant (an op of static arguments only): nothing to refuse
            continue
        blocked = "|".join(sorted(n for n in names if n in onnx_ops.NOT_EXPORTABLE))
        with pytest.raises(errors.UnimplementedError, match=rf"\(({blocked})\) of signature 'walk'"):
            export.export_concrete(cf, "walk")
        seen.add(spec.op)
    assert {"random_uniform", "string_join", "decode_png", "svd", "cumprod"} <= seen


def test_stateful_op_is_not_dropped():
    """A variable update nothing returns still fails the export (an ONNX graph cannot keep its effect)."""
    v = tf.Variable(1.0)

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def step(x):
        v.assign_add(x)
        return x * 2.0

    with pytest.raises(errors.UnimplementedError, match=r"AssignVariableOp \(variable_update\) of signature "
                                                        r"'serving_default'.*created at .*test_onnx_registry"):
        export.export_concrete(step.get_concrete_function())


def test_onnx_ops_list_every_op_converters_emit():
    """The converters emit only ONNX_OPS (the set the importer maps back): Emitter.node checks each."""
    assert {"If", "Loop", "Conv", "MatMul", "Softmax"} <= onnx_ops.ONNX_OPS
    assert all(op[0].isupper() for op in onnx_ops.ONNX_OPS)
