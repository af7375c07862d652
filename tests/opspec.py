"""Per-op test specs: a NumPy reference, how to sample inputs, tolerances.

Each file in ``tests/specs/`` defines ``SPECS``, a list of :class:`Spec`.  The
differential suite (``test_ops_differential.py``) runs every spec against NumPy
over random shapes (including size 0 and broadcasts) and dtypes; the gradient
suite (``test_gradients_registry.py``) checks every differentiable spec against
central differences in float64.  ``test_registry_coverage`` fails when an op in
core's registry has no spec, so nothing escapes.
"""
from __future__ import annotations

import dataclasses
import importlib
import pathlib
from typing import Callable

import numpy as np

FLOATS = ("float32", "float64")
HALF = ("float16", "bfloat16")
INTS = ("int8", "uint8", "int16", "int32", "int64")
SIGNED = ("int8", "int16", "int32", "int64")
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("bool",)

# shapes used by default: scalars, vectors, matrices, rank 3-4 and size-0 tensors
SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0,), (3, 0)]
# broadcasting pairs for binary ops
BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), ()), ((), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)),
                   ((2, 3, 4), (3, 1)), ((1,), (5,)), ((2, 1, 3), (4, 1)), ((0, 3), (3,)), ((4, 1, 2), (4, 3, 2))]


@dataclasses.dataclass
class Spec:
    """How to test one registered op.

    ``sample(rng, dtype)`` returns ``(args, kwargs)`` of NumPy inputs (a list of
    such cases is fine too, as ``cases``); ``fn(tf, *args, **kwargs)`` runs
    tapeflow (default ``getattr(tf, op)``) and ``ref(*args, **kwargs)`` runs NumPy.
    ``grad_args`` are the positions of differentiable inputs (default: every
    float array argument); ``grad=False`` with ``nondiff`` reason skips the
    gradient check (the op must be declared non-differentiable in core).
    """

    op: str
    ref: Callable
    sample: Callable | None = None
    dtypes: tuple = FLOATS
    fn: Callable | None = None
    rtol: float | None = None
    atol: float | None = None
    grad: bool = True
    grad_args: tuple | None = None
    grad_rtol: float = 1e-4
    grad_atol: float = 1e-5
    exact: bool = False          # compare exactly (integer results, shape ops)
    name: str = ""               # distinguishes several specs of one op
    second_order: bool = False   # also check the gradient of the gradient
    f64_tol: tuple | None = None  # (rtol, atol) for float64 where the defaults are too loose
    # the gradient's reference where central differences of the op do not give it (a random draw's implicit
    # reparameterization gradient): grad_ref(args, kwargs, output, w) -> d sum(output * w) / d args[grad_args[0]]
    grad_ref: Callable | None = None

    def __str__(self):
        return f"{self.op}{'-' + self.name if self.name else ''}"

    def run(self, tf, args, kwargs):
        f = self.fn or getattr(tf, self.op)
        return f(*[tf.constant(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs) if self.fn is None \
            else f(tf, *args, **kwargs)

    def tolerances(self, dtype: str):
        if self.exact:
            return 0, 0
        defaults = {"float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-6),
                    "float64": (1e-10, 1e-12)}
        rtol, atol = defaults.get(dtype, (0, 0))
        if dtype == "float64" and self.f64_tol is not None:
            return self.f64_tol
        if dtype in ("float32", "float16", "bfloat16", "float64"):
            rtol = self.rtol if self.rtol is not None and dtype != "float64" else rtol
            atol = self.atol if self.atol is not None and dtype != "float64" else atol
        return rtol, atol


def uniform(rng, shape, dtype, lo=-3.0, hi=3.0):
    """Random values of ``dtype`` in [lo, hi) (integers: a small range; bool: coin flips)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        lo_i, hi_i = (0, 10) if dtype == "uint8" else (-10, 10)
        return rng.integers(max(lo_i, int(lo)) if dtype == "uint8" else lo_i, hi_i, size=shape).astype(dtype)
    import ml_dtypes  # noqa: F401  (bfloat16 as a NumPy dtype)

    return rng.uniform(lo, hi, size=shape).astype(np.dtype(dtype) if dtype != "bfloat16" else ml_dtypes.bfloat16)


def load_specs() -> list:
    specs = []
    for path in sorted((pathlib.Path(__file__).parent / "specs").glob("*.py")):
        if path.name.startswith("_"):
            continue
        mod = importlib.import_module(f"specs.{path.stem}")
        specs.extend(mod.SPECS)
    return specs
