"""check_gradients: the tape's gradients against central differences, with a readable report."""
from __future__ import annotations

import math

import numpy as np
from tapeflow.core.tensor import Tensor, convert_to_tensor

from . import _nest
from .tape import GradientTape


class GradientCheck:
    """The result of :func:`check_gradients`: ``ok``, per-argument figures, and a printable report."""

    def __init__(self, name, order, dtype, eps, rtol, atol, rows, failures) -> None:
        self.name, self.order, self.dtype, self.eps, self.rtol, self.atol = name, order, dtype, eps, rtol, atol
        self.rows = rows            # per argument: dict(arg, shape, checked, max_abs, max_rel, worst)
        self.failures = failures    # (arg, index, analytic, numeric)
        self.ok = not failures

    @property
    def max_abs_error(self) -> float:
        return max((r["max_abs"] for r in self.rows), default=0.0)

    def __bool__(self):
        return self.ok

    def __str__(self):
        head = (f"check_gradients({self.name}): {'ok' if self.ok else 'FAILED'} (order {self.order}, {self.dtype}, "
                f"eps {self.eps:g}, rtol {self.rtol:g}, atol {self.atol:g})")
        lines = [head]
        if self.rows:
            hdr = ["arg", "shape", "checked", "max abs err", "max rel err", "worst at"]
            body = [[str(r["arg"]), str(tuple(r["shape"])), r["checked"], f"{r['max_abs']:.2e}",
                     f"{r['max_rel']:.2e}", str(r["worst"])] for r in self.rows]
            w = [max(len(x[i]) for x in [hdr] + body) for i in range(len(hdr))]
            lines.append("  " + "  ".join(h.ljust(n) for h, n in zip(hdr, w)))
            lines += ["  " + "  ".join(c.ljust(n) for c, n in zip(row, w)) for row in body]
        for arg, idx, ana, num in self.failures[:10]:
            if ana is None:
                lines.append(f"  arg {arg}: {idx}")
            else:
                lines.append(f"  arg {arg} at {idx}: tape {ana!r} vs numeric {num!r} (diff {abs(ana - num):.3e})")
        if len(self.failures) > 10:
            lines.append(f"  ... and {len(self.failures) - 10} more mismatches")
        return "\n".join(lines)

    __repr__ = __str__


def _weights(outs, rng):
    """Random weights for every floating-point, non-empty output (one backward pass checks them all)."""
    return [rng.standard_normal(o._shape).astype(o._dtype.np) for o in outs]


def _float_outputs(out) -> list:
    return [o for o in _nest.flatten(out) if isinstance(o, Tensor) and o._dtype.is_floating and o._size]


def _level(f, xs, ws, k):
    """(tensor, weight) pairs whose weighted gradient is the order-(k+1) derivative: f's outputs for
    k = 0, else the gradients of level k-1 with respect to ``xs`` (None and empty ones dropped).

    Weights enter as ``output_gradients``, so checking an op's rule needs no other op's rule."""
    if k == 0:
        return list(zip(_float_outputs(f(*xs)), ws[0]))
    with GradientTape() as tape:
        tape.watch(xs)
        pairs = _level(f, xs, ws, k - 1)
    if not pairs:
        return []
    grads = tape.gradient([p[0] for p in pairs], list(xs),
                          output_gradients=[convert_to_tensor(p[1]) for p in pairs])
    return [(gr, w) for gr, w in zip(grads, ws[k]) if gr is not None and gr._size]


def _value(pairs) -> float:
    """sum(tensor * weight) over the pairs, read back to the host in float64 (the checker's own arithmetic)."""
    return float(sum(np.sum(np.asarray(t, np.float64) * w) for t, w in pairs))


def check_gradients(f, args, order: int = 1, wrt=None, eps: float | None = None, rtol: float | None = None,
                    atol: float | None = None, max_elements: int = 64, seed: int = 0,
                    raise_on_failure: bool = False) -> GradientCheck:
    """Compare the tape's gradient of ``f(*args)`` with central differences; returns a :class:`GradientCheck`.

    Every floating-point argument is checked (or those at positions ``wrt``).  The
    outputs are projected on a random direction, so one backward pass covers them
    all; ``order=2`` checks the gradient of the gradient.  Up to ``max_elements``
    entries of each argument are perturbed one by one (larger ones along random
    directions).  Where the function overflows (a non-finite numeric difference)
    there is nothing to compare with; the report counts those checks.  Use float64
    inputs for tight checks; ``raise_on_failure`` turns a mismatch into an
    ``AssertionError`` carrying the report.

    >>> import tapeflow as tf
    >>> from tapeflow.autodiff import check_gradients
    >>> x = tf.constant([0.5, 1.5], dtype=tf.float64)
    >>> report = check_gradients(lambda x: tf.sin(x) * x, [x], order=2)
    >>> report.ok
    True
    """
    if order < 1:
        raise ValueError(f"order must be >= 1, got {order}")
    rng = np.random.default_rng(seed)
    xs = [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in args]
    pick = list(range(len(xs))) if wrt is None else list(wrt)
    pick = [i for i in pick if isinstance(xs[i], Tensor) and xs[i]._dtype.is_floating]
    if not pick:
        raise ValueError("check_gradients found no floating-point argument to differentiate")
    dts = {xs[i]._dtype.name for i in pick}
    dtype = "float64" if dts == {"float64"} else min(dts)
    f64 = dtype == "float64"
    eps = eps if eps is not None else (1e-6 if f64 else 1e-3)
    rtol = rtol if rtol is not None else (1e-5 if f64 else 2e-2)
    atol = atol if atol is not None else (1e-7 if f64 else 2e-3)
    name = getattr(f, "__name__", "f")

    def g(*sel):
        full = list(xs)
        for i, s in zip(pick, sel):
            full[i] = s
        return f(*full)

    sel = [xs[i] for i in pick]
    # one weight array per tensor of each level: f's outputs, then the gradients (shaped like sel)
    ws = [_weights(_float_outputs(g(*sel)), rng)]
    for _ in range(order - 1):
        ws.append(_weights(sel, rng))

    def scalar(vals):
        return _value(_level(g, vals, ws, order - 1))

    with GradientTape() as tape:
        tape.watch(sel)
        top = _level(g, sel, ws, order - 1)
    if top:
        analytic = tape.gradient([p[0] for p in top], sel,
                                 output_gradients=[convert_to_tensor(p[1]) for p in top])
    else:
        analytic = [None] * len(sel)
    rows, failures = [], []
    for a, (i, x, ga) in enumerate(zip(pick, sel, analytic)):
        ana = np.zeros(x._shape, np.float64) if ga is None else np.asarray(ga, np.float64)
        if ana.shape != tuple(x._shape):
            failures.append((i, f"gradient shape {ana.shape} != argument shape {tuple(x._shape)}", None, None))
            rows.append({"arg": i, "shape": x._shape, "checked": "0", "max_abs": float("inf"),
                         "max_rel": float("inf"), "worst": "gradient shape differs"})
            continue
        n = x._size
        if n <= max_elements:
            dirs = [(j, None) for j in range(n)]
        else:
            dirs = [(None, rng.standard_normal(x._shape)) for _ in range(8)]
        max_abs = max_rel = 0.0
        nonfinite = 0
        worst = "-"
        for j, d in dirs:
            basis = np.zeros(x._shape, x._dtype.np)
            if d is None:
                basis.reshape(-1)[j] = eps
                want_ana = float(ana.reshape(-1)[j])
                where = tuple(int(k) for k in np.unravel_index(j, x._shape)) if x._shape else ()
            else:
                basis[...] = d * eps
                want_ana = float(np.sum(ana * d))  # host readout of the report, not an op
                where = "random direction"
            step = convert_to_tensor(basis)
            plus = list(sel)
            minus = list(sel)
            plus[a] = x + step
            minus[a] = x - step
            num = (scalar(plus) - scalar(minus)) / (2 * eps)
            if not math.isfinite(num):
                # the function overflows near x: central differences have no answer to compare with
                nonfinite += 1
                continue
            if not math.isfinite(want_ana):
                failures.append((i, where, want_ana, num))
                continue
            err = abs(want_ana - num)
            rel = err / max(abs(want_ana), abs(num), atol)  # relative to the values (atol floors tiny ones)
            if err > max_abs:
                max_abs, worst = err, where
            max_rel = max(max_rel, rel)
            if not err <= atol + rtol * max(abs(want_ana), abs(num)):
                failures.append((i, where, want_ana, num))
        checked = f"{len(dirs)}/{n}" if n <= max_elements else f"{len(dirs)} dirs"
        if nonfinite:
            checked += f" ({nonfinite} not comparable: the function overflows)"
        rows.append({"arg": i, "shape": x._shape, "checked": checked, "max_abs": max_abs, "max_rel": max_rel,
                     "worst": worst})
    result = GradientCheck(name, order, dtype, eps, rtol, atol, rows, failures)
    if raise_on_failure and not result.ok:
        raise AssertionError(str(result))
    return result
