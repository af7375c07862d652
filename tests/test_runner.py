"""Every primitive goes through the runner, and tracing infers what eager computes.

Walks core's op registry and the per-op specs (tests/specs/*.py):

* every registered primitive op is a runner primitive (``tapeflow.core.runner.PRIMITIVES``);
  the failure names the file whose op still calls its kernels itself;
* in tracing mode (``runner.tracing``) every spec's op returns symbolic tensors (no kernel
  runs) whose shapes and dtypes equal those of the eager result on the same inputs, and the
  graph holds a node of the op (an op whose output size depends on its input values, such as
  ``where(condition)``, infers None for those dimensions).
"""
from __future__ import annotations

import inspect
import zlib

import numpy as np
import pytest
import tapeflow as tf
from opspec import load_specs
from tapeflow.core.dispatch import REGISTRY
from tapeflow.core.runner import INTERNAL, PRIMITIVES, tracing

SPECS = [s for s in load_specs() if s.op in PRIMITIVES]
# ops whose output size depends on input values: their traced shape has None where eager's has a number
DATA_DEPENDENT = {"where", "string_split", "string_bytes_split", "unicode_decode"}  # (strings: how many pieces)
# (tf.io: an image's size is in its bytes; a VarLenFeature's number of values in the Examples)
DATA_DEPENDENT |= {"decode_png", "decode_jpeg", "decode_image", "encode_png", "encode_jpeg", "parse_example",
                   "parse_tensor"}


def test_every_primitive_goes_through_the_runner():
    missing = {}
    for name, d in REGISTRY.items():
        if d.kind == "primitive" and name not in PRIMITIVES:
            missing.setdefault(inspect.getsourcefile(d.fn), []).append(name)
    assert not missing, "primitive ops that do not go through the runner (declare a runner primitive with " \
        "@primitive(name, tf_name, infer=..., dtypes=...) and call run(); see docs/architecture.rst):\n" + \
        "\n".join(f"  {f}: {sorted(ops)}" for f, ops in sorted(missing.items()))


def test_runner_primitives_are_registered_ops():
    unknown = sorted(set(PRIMITIVES) - set(REGISTRY) - set(INTERNAL))
    assert not unknown, f"runner primitives with no registered op (register the public function): {unknown}"


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _flat(v)]
    return [x]


def _cases(spec, dtype, rng):
    cases = spec.sample(rng, dtype)
    return (cases if isinstance(cases, list) else [cases])[:4]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_tracing_infers_shapes_and_dtypes_without_running_kernels(spec):
    for dtype in spec.dtypes[:3]:
        rng = np.random.default_rng(zlib.crc32(f"trace-{spec}-{dtype}".encode()))
        for args, kwargs in _cases(spec, dtype, rng):
            want = _flat(spec.run(tf, args, kwargs))
            with tracing() as graph:
                got = _flat(spec.run(tf, args, kwargs))
            where = f"{spec} dtype={dtype} shapes={[np.shape(a) for a in args]} kwargs={kwargs}"
            assert len(got) == len(want), where
            for g, w in zip(got, want):
                assert g._h is None, f"{where}: a kernel ran while tracing (the output has a value)"
                traced = tuple(g.shape)
                if spec.op in DATA_DEPENDENT:
                    traced = tuple(d if t is None else t for t, d in zip(traced, w.shape)) \
                        if len(traced) == len(w.shape) else traced
                assert traced == tuple(w.shape), f"{where}: traced shape {g.shape} != eager {w.shape}"
                assert g.dtype == w.dtype, f"{where}: traced dtype {g.dtype.name} != eager {w.dtype.name}"
            assert spec.op in {n.prim.name for n in graph.nodes}, f"{where}: no {spec.op} node in {graph.nodes}"
