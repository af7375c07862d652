"""Forward-mode rules: one Jacobian-vector product (JVP) rule per differentiable primitive.

A rule receives the input tangents (a tuple, one per input: ``None`` where that input carries no
tangent), the op's output ``ans``, its inputs and its attributes as keywords; it returns the
output's tangent (a tuple of them for ops with several outputs, ``None`` for an output without
one).  Rules are written with tapeflow ops, so an enclosing accumulator or tape differentiates
them again (forward-over-forward, backward-over-forward).

Most rules come in a few shapes, named where they are registered:

* **linear** ops (reshape, slicing, gathers, concat, reductions that sum, cumsum, pooling by
  average, ...) are their own JVP: the op runs again on the tangents (zeros for an input without
  one; a padding or fill value becomes 0);
* **bilinear** ops (matmul, the convolutions and their backprops) give ``op(du, y) + op(x, dv)``;
* **element-wise** ops have a diagonal Jacobian, so ``J u`` equals ``J^T u``: their VJP rule
  (``grads/math.py``) applied to the tangent broadcast to the output's shape *is* the JVP;
* **reductions over a Jacobian row** (max/min/prod, segment max/min/prod): the VJP of ones gives
  each entry's weight ``w``, and the JVP is the same reduction's sum of ``w * u``;
* **pixel-wise** ops (colour conversions) build each pixel's small Jacobian from the VJP of one-hots;
* the rest have formulas of their own below (solve, det, cholesky, softmax, sort, ...);
* **via the VJP** (the transpose trick), for the decompositions whose forward formulas are long
  (svd, eigh, qr, lu, expm): ``J u = d/dg <VJP(g), u>``, the gradient of the VJP rule (linear in
  ``g``) with respect to ``g`` taken with a second tape.  Exact, and as differentiable as the VJP
  rule; it costs two backward passes of the op.

>>> import tapeflow as tf
>>> from tapeflow.autodiff.forward_rules import JVPS
>>> x = tf.constant(2.0)
>>> JVPS["exp"]((tf.constant(1.0),), tf.exp(x), x).numpy()
np.float32(7.389056)
"""
from __future__ import annotations

from tapeflow.core import ops as _ops
from tapeflow.core.ops import math_ops as _math_ops
from tapeflow.core.ops.linalg_ops import matrix_transpose as _mT
from tapeflow.core.ops.linalg_ops import solve as _solve
from tapeflow.core.ops.linalg_ops import triangular_solve as _tri_solve
from tapeflow.core.dispatch import REGISTRY as _REGISTRY
from tapeflow.core.runner import PRIMITIVES, primitive, run_tensors
from tapeflow.core.tensor import Tensor

from .grads.fft import HOLOMORPHIC
from .registry import GRADIENTS, PER_INPUT

JVPS: dict = {}
#: ops whose JVP is computed through their VJP rule (the transpose trick): op -> why
VIA_VJP: dict = {}


def defjvp(op: str, fn=None):
    """Register the JVP rule of primitive ``op`` (usable as a decorator).

    >>> from tapeflow.autodiff.forward_rules import JVPS, defjvp
    >>> _ = defjvp("doc_negate", lambda ts, ans, x: -ts[0])
    >>> "doc_negate" in JVPS
    True
    >>> _ = JVPS.pop("doc_negate")
    """
    def deco(f):
        JVPS[op] = f
        return f

    return deco(fn) if fn is not None else deco


# ---- helpers ----------------------------------------------------------------------------------

def _zero_filled(ts, ins):
    return tuple(t if t is not None else (_ops.zeros_like(x) if x._dtype.is_floating else x)
                 for t, x in zip(ts, ins))


def _to_shape(t, like):
    """``t`` broadcast to ``like``'s shape (an element-wise op's broadcast inputs)."""
    if t._shape == like._shape:
        return t
    if None in like._shape or None in t._shape:
        return _ops.add(t, _ops.zeros_like(like))
    return _ops.broadcast_to(t, like._shape)


def linear(op: str, **fixed):
    """The rule of an op linear in its floating inputs jointly: the op itself on the tangents.

    >>> import tapeflow as tf
    >>> from tapeflow.autodiff.forward_rules import JVPS
    >>> x = tf.constant([[1.0, 2.0]])
    >>> JVPS["transpose"]((tf.constant([[3.0, 4.0]]),), tf.transpose(x), x, perm=(1, 0)).numpy().tolist()
    [[3.0], [4.0]]
    """
    prim = PRIMITIVES[op]

    def rule(ts, ans, *ins, **attrs):
        if fixed:
            attrs = {**attrs, **fixed}
        return run_tensors(prim, _zero_filled(ts, ins), attrs or None)

    rule.__name__ = f"{op}_jvp"
    return defjvp(op, rule)


def bilinear(op: str):
    """The rule of an op linear in each of its two floating inputs: op(du, y) + op(x, dv).

    >>> import tapeflow as tf
    >>> from tapeflow.autodiff.forward_rules import JVPS
    >>> a, b = tf.constant([[2.0]]), tf.constant([[5.0]])
    >>> JVPS["matmul"]((tf.ones([1, 1]), tf.ones([1, 1])), a @ b, a, b, transpose_a=False,
    ...                transpose_b=False).numpy().tolist()
    [[7.0]]
    """
    prim = PRIMITIVES[op]

    def rule(ts, ans, x, y, **attrs):
        out = None
        if ts[0] is not None:
            out = run_tensors(prim, (ts[0], y), attrs or None)
        if ts[1] is not None:
            b = run_tensors(prim, (x, ts[1]), attrs or None)
            out = b if out is None else _ops.add(out, b)
        return out

    rule.__name__ = f"{op}_jvp"
    return defjvp(op, rule)


def diagonal(op: str):
    """The rule of an element-wise op: its Jacobian is diagonal, so its VJP rule on the tangent is the JVP.

    >>> import tapeflow as tf
    >>> from tapeflow.autodiff.forward_rules import JVPS
    >>> x, y = tf.constant([1.0, 2.0]), tf.constant(3.0)
    >>> JVPS["multiply"]((tf.ones([2]), None), x * y, x, y).numpy().tolist()
    [3.0, 3.0]
    """
    def rule(ts, ans, *ins, **attrs):
        per, whole = PER_INPUT.get(op), GRADIENTS[op]
        if op in HOLOMORPHIC and ins[0]._dtype.is_complex:  # the unconjugated rules: t * f'(z)
            per, whole = HOLOMORPHIC[op]
        out = None
        for i, t in enumerate(ts):
            if t is None:
                continue
            t = _to_shape(t, ans)
            d = per[i](t, ans, *ins, **attrs) if per is not None else whole(t, ans, *ins, **attrs)[i]
            if d is None:
                continue
            out = d if out is None else _ops.add(out, d)
        return out

    rule.__name__ = f"{op}_jvp"
    return defjvp(op, rule)


def via_vjp(op: str, why: str):
    """The transpose trick: ``J u = d/dg <VJP(g), u>`` with a second tape (the VJP rule is linear in ``g``).

    >>> import tapeflow as tf
    >>> from tapeflow.autodiff.forward_rules import JVPS, VIA_VJP
    >>> z = tf.zeros([2, 2])
    >>> JVPS["expm"]((tf.eye(2),), tf.linalg.expm(z), z).numpy().tolist()   # d expm at 0 is the identity map
    [[1.0, 0.0], [0.0, 1.0]]
    >>> "expm" in VIA_VJP
    True
    """
    def rule(ts, ans, *ins, **attrs):
        from .tape import GradientTape, _unbroadcast

        outs = ans if isinstance(ans, tuple) else (ans,)
        gs = [_ops.zeros_like(o) for o in outs]
        floats = [g for g in gs if g._dtype.is_floating]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(floats)
            res = GRADIENTS[op](tuple(gs) if isinstance(ans, tuple) else gs[0], ans, *ins, **attrs)
            res = res if isinstance(res, (tuple, list)) else (res,)
            total = None
            for r, t, x in zip(res, ts, ins):
                if r is None or t is None:
                    continue
                if r._shape != x._shape:
                    r = _unbroadcast(r, x._shape, op)
                s = _ops.reduce_sum(_ops.multiply(r, t))
                total = s if total is None else _ops.add(total, s)
        if total is None:
            return None
        got = tape.gradient(total, floats, unconnected_gradients="zero")
        it = iter(got)
        full = tuple(next(it) if g._dtype.is_floating else None for g in gs)
        return full if isinstance(ans, tuple) else full[0]

    rule.__name__ = f"{op}_jvp_via_vjp"
    VIA_VJP[op] = why
    return defjvp(op, rule)


def _weights(op, ans, *ins, **attrs):
    """Each input entry's weight in a reduction: the op's VJP of ones."""
    return GRADIENTS[op](_ops.ones_like(ans), ans, *ins, **attrs)[0]


# ---- element-wise -------------------------------------------------------------------------------

_ELEMENTWISE = ({r[0] for r in _math_ops._UNARY} | {r[0] for r in _math_ops._BINARY}
                | {"leaky_relu", "gelu", "polygamma", "relu_grad", "tanh_grad", "sigmoid_grad",
                   "sigmoid_cross_entropy_with_logits", "check_numerics"})
for _op in sorted(_ELEMENTWISE):
    # differentiable: a rule now, or declared differentiable in core (a grads module imported after this one, as
    # one imported by a family file that sorts first, registers its rule later; the JVP reads it when called)
    if _op in GRADIENTS or (_op in _REGISTRY and not _REGISTRY[_op].nondiff):
        diagonal(_op)


@defjvp("cast")
def _cast_jvp(ts, ans, x, dtype):
    if x._dtype.is_inexact and dtype.is_inexact:   # float and complex dtypes (complex -> real: the real part)
        return _ops.cast(ts[0], dtype)
    return None


# ---- complex numbers and tf.signal: linear (over the reals), but angle and the modulus -------------------

for _op in ("complex", "real", "imag", "conj", "fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft",
            "rfft2d", "irfft2d", "rfft3d", "irfft3d"):
    linear(_op)


@defjvp("angle")
def _angle_jvp(ts, ans, x):
    # d atan2(y, u) = (u dy - y du) / |z|^2 = imag(conj(z) dz) / |z|^2
    return _ops.div_no_nan(_ops.imag(_ops.multiply(_ops.conj(x), ts[0])), _ops.square(_ops.abs(x)))


_real_abs_jvp = JVPS["abs"]


@defjvp("abs")
def _abs_jvp(ts, ans, x):
    if x._dtype.is_complex:   # d|z| = real(conj(z) dz) / |z| (0 at z = 0)
        return _ops.div_no_nan(_ops.real(_ops.multiply(_ops.conj(x), ts[0])), ans)
    return _real_abs_jvp(ts, ans, x)


@defjvp("select")
def _select_jvp(ts, ans, cond, x, y):
    tx = ts[1] if ts[1] is not None else _ops.zeros_like(ans)
    ty = ts[2] if ts[2] is not None else _ops.zeros_like(ans)
    return _ops.where(cond, tx, ty)


# ---- shape ops, slicing, gathers and scatters: linear -----------------------------------------------

for _op in ("reshape", "identity", "transpose", "broadcast_to", "tile", "reverse", "concat", "stack", "split",
            "unstack", "slice", "strided_slice", "strided_slice_grad", "gather", "gather_nd", "scatter_nd",
            "tensor_scatter_nd_update", "tensor_scatter_nd_add", "unsorted_segment_sum", "cumsum",
            "reduce_sum", "reduce_mean", "diag_part", "avg_pool2d", "avg_pool_grad", "copy_to_device"):
    linear(_op)
linear("pad", constant_values=0)
linear("diag", padding_value=0)
# the window maxima move by jumps only: linear in ``grad``, no tangent from orig_input/orig_output (as the VJP)
for _op in ("max_pool_grad", "max_pool_grad_grad"):
    defjvp(_op, lambda ts, ans, x, y, grad, _p=PRIMITIVES[_op], **attrs:
           None if ts[2] is None else run_tensors(_p, (x, y, ts[2]), attrs))


@defjvp("max_pool2d")
def _max_pool2d_jvp(ts, ans, x, ksize, strides, padding):
    # the tangent at each window's maximum (max_pool_grad_grad picks exactly that entry)
    return _ops.max_pool_grad_grad(x, ans, ts[0], ksize, strides, padding)


for _op in ("matmul", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "depthwise_conv2d",
            "depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter"):
    bilinear(_op)


# ---- reductions and scans --------------------------------------------------------------------------------

def _reduce_weighted(ts, ans, x, axis, keepdims, _op):
    return _ops.reduce_sum(_ops.multiply(_weights(_op, ans, x, axis=axis, keepdims=keepdims), ts[0]), axis,
                           keepdims=keepdims)


for _op in ("reduce_max", "reduce_min", "reduce_prod"):
    defjvp(_op, lambda ts, ans, x, axis, keepdims, _o=_op: _reduce_weighted(ts, ans, x, axis, keepdims, _o))


def _segment_weighted(ts, ans, data, ids, num_segments, _op):
    w = GRADIENTS[_op](_ops.ones_like(ans), ans, data, ids, num_segments)[0]
    return _ops.unsorted_segment_sum(_ops.multiply(w, ts[0]), ids, num_segments)


for _op in ("unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod"):
    defjvp(_op, lambda ts, ans, data, ids, num_segments, _o=_op: _segment_weighted(ts, ans, data, ids,
                                                                                 num_segments, _o))


def _scatter_extreme_jvp(ts, ans, x, indices, updates, _op):
    # the winners' tangents, shared among ties: the VJP of ones gives each entry's weight
    wx, _, wu = GRADIENTS[_op](_ops.ones_like(ans), ans, x, indices, updates)
    out = None if ts[0] is None else _ops.multiply(wx, ts[0])
    if ts[2] is not None:
        d = _ops.scatter_nd(indices, _ops.multiply(wu, ts[2]), ans._shape)
        out = d if out is None else _ops.add(out, d)
    return out


for _op in ("tensor_scatter_nd_max", "tensor_scatter_nd_min"):
    if _op in PRIMITIVES:
        defjvp(_op, lambda ts, ans, x, indices, updates, _o=_op: _scatter_extreme_jvp(ts, ans, x, indices, updates,
                                                                                        _o))


@defjvp("cumprod")
def _cumprod_jvp(ts, ans, x, axis, exclusive, reverse):
    # d prod_{j<=i} x_j = prod * sum_{j<=i} dx_j / x_j (exact for non-zero x, as TensorFlow's VJP)
    return _ops.multiply(ans, _ops.cumsum(_ops.real_div(ts[0], x), axis, exclusive=exclusive, reverse=reverse))


# ---- sorting --------------------------------------------------------------------------------------------

def _take_last(t, idx):
    last = len(t._shape) - 1
    return _ops.gather(t, idx, axis=last, batch_dims=last)


@defjvp("sort")
def _sort_jvp(ts, ans, x, axis, direction):
    idx = _ops.argsort(x, axis, direction)  # the stable permutation the sort applied
    last = len(x._shape) - 1
    if axis == last:
        return _take_last(ts[0], idx)
    perm = [i for i in range(len(x._shape)) if i != axis] + [axis]
    inv = [perm.index(i) for i in range(len(perm))]
    return _ops.transpose(_take_last(_ops.transpose(ts[0], perm), _ops.transpose(idx, perm)), inv)


@defjvp("top_k")
def _top_k_jvp(ts, ans, x, k, sorted):
    return (_take_last(ts[0], ans[1]), None)


# ---- nn ----------------------------------------------------------------------------------------------

@defjvp("softmax")
def _softmax_jvp(ts, ans, x, axis):
    # the softmax Jacobian diag(y) - y y^T is symmetric: y * (u - sum(u * y))
    return GRADIENTS["softmax"](ts[0], ans, x, axis=axis)[0]


@defjvp("log_softmax")
def _log_softmax_jvp(ts, ans, x, axis):
    return _ops.subtract(ts[0], _ops.reduce_sum(_ops.multiply(_ops.exp(ans), ts[0]), axis, keepdims=True))


@defjvp("softmax_cross_entropy_with_logits")
def _xent_jvp(ts, ans, labels, logits, axis, backprop=None):
    out = None
    if ts[0] is not None:   # d loss / d labels = -log_softmax(logits)
        out = _ops.negative(_ops.reduce_sum(_ops.multiply(ts[0], _ops.log_softmax(logits, axis)), axis))
    if ts[1] is not None:   # d loss / d logits = softmax(logits) - labels (as the VJP)
        d = _ops.reduce_sum(_ops.multiply(ts[1], _ops.subtract(_ops.softmax(logits, axis), labels)), axis)
        out = d if out is None else _ops.add(out, d)
    return out


@defjvp("sparse_softmax_cross_entropy_with_logits")
def _sparse_xent_jvp(ts, ans, labels, logits, backprop=None):
    if ts[1] is None:
        return None
    n = logits._shape[-1]
    d = _ops.subtract(_ops.softmax(logits), _ops.one_hot(labels, n, dtype=logits._dtype))
    return _ops.reduce_sum(_ops.multiply(ts[1], d), -1)


# ---- linear algebra --------------------------------------------------------------------------------------

def _trace(m):
    return _ops.reduce_sum(_ops.diag_part(m), -1)


defjvp("inv", lambda ts, ans, x: _ops.negative(_ops.matmul(ans, _ops.matmul(ts[0], ans))))
defjvp("det", lambda ts, ans, x: _ops.multiply(ans, _trace(_solve(x, ts[0]))))
# the sign is piecewise constant; d log|det A| = tr(A^-1 dA)
defjvp("slogdet", lambda ts, ans, x: (_ops.zeros_like(ans[0]), _trace(_solve(x, ts[0]))))


@defjvp("solve")
def _solve_jvp(ts, ans, a, b, adjoint):
    # op(A) X = B: op(A) dX = dB - op(dA) X
    rhs = ts[1] if ts[1] is not None else _ops.zeros_like(ans)
    if ts[0] is not None:
        rhs = _ops.subtract(rhs, _ops.matmul(ts[0], ans, transpose_a=adjoint))
    return _solve(a, rhs, adjoint=adjoint)


@defjvp("triangular_solve")
def _triangular_solve_jvp(ts, ans, a, b, lower, adjoint):
    rhs = ts[1] if ts[1] is not None else _ops.zeros_like(ans)
    if ts[0] is not None:
        da = _ops.band_part(ts[0], -1, 0) if lower else _ops.band_part(ts[0], 0, -1)   # only that triangle is read
        rhs = _ops.subtract(rhs, _ops.matmul(da, ans, transpose_a=adjoint))
    return _tri_solve(a, rhs, lower=lower, adjoint=adjoint)


@defjvp("cholesky")
def _cholesky_jvp(ts, ans, x):
    # dL = L Phi(L^-1 sym(dA) L^-T), Phi: the lower triangle with the diagonal halved
    da = _ops.multiply(_ops.add(ts[0], _mT(ts[0])), 0.5)   # the VJP reads A as symmetric: so does the JVP
    s = _tri_solve(ans, da, lower=True)
    s = _mT(_tri_solve(ans, _mT(s), lower=True))
    phi = _ops.band_part(s, -1, 0)
    phi = _ops.subtract(phi, _ops.multiply(_ops.diag(_ops.diag_part(phi)), 0.5))
    return _ops.matmul(ans, phi)


for _op, _why in (("svd", "the singular-vector tangents need the same gap matrix as the VJP, written once there"),
                  ("eigh", "the eigenvector tangents need the same gap matrix as the VJP, written once there"),
                  ("qr", "TensorFlow's QR rule is written for the VJP (deep and wide cases)"),
                  ("lu", "the pivoted LU tangent is the VJP's triangular solves transposed"),
                  ("expm", "the block-matrix identity is the same both ways; the VJP already writes it")):
    via_vjp(_op, _why)
if "ctc_loss" in PRIMITIVES:
    via_vjp("ctc_loss", "the loss's forward-backward recursion gives its gradient in the kernel; the tangent is "
                        "that gradient against the logits' tangent, per sequence")


# ---- images ---------------------------------------------------------------------------------------------

def _pixelwise(op: str):
    """The rule of an op acting on each pixel's channel vector (a C x C Jacobian per pixel): the VJP of the
    channel one-hots gives the Jacobian's rows, each dotted with the tangent (C calls of the VJP)."""
    def rule(ts, ans, x):
        c = ans._shape[-1]
        rows = []
        for k in range(c):
            e = _to_shape(_ops.one_hot(k, c, dtype=ans._dtype), ans)
            rows.append(_ops.reduce_sum(_ops.multiply(GRADIENTS[op](e, ans, x)[0], ts[0]), -1))
        return _ops.stack(rows, -1)

    rule.__name__ = f"{op}_jvp"
    return defjvp(op, rule)


for _op in ("resize", "resize_grad"):
    if _op in PRIMITIVES:
        linear(_op)
for _op in ("rgb_to_hsv", "hsv_to_rgb"):
    if _op in PRIMITIVES:
        _pixelwise(_op)


# ---- graph control flow (an accumulator inside a traced function) ------------------------------------------

def _accumulate(fn, pairs):
    """fn() under an accumulator watching ``pairs`` (tensor, tangent): the tangents of its tensor outputs."""
    from tapeflow.core import nest

    from .forward import ForwardAccumulator

    with ForwardAccumulator([c for c, _ in pairs], [t for _, t in pairs]) as acc:
        out = fn()
    flat = [x for x in nest.flatten(out) if isinstance(x, Tensor)]
    return [acc.jvp(x, unconnected_gradients="zero") if x._dtype.is_floating else _ops.zeros_like(x) for x in flat]


@defjvp("branch")
def _branch_jvp(ts, ans, selector, *caps, plans, cap_index, specs, fns, names, _graphs):
    # a branch node on the same selector whose branches are the original ones under an accumulator
    from tapeflow.core.control_flow import _build_branches

    pairs = [(c, t) for c, t in zip(caps, ts[1:]) if t is not None and c._dtype.is_floating]
    res = _build_branches(selector, tuple((lambda f=f: _accumulate(f, pairs)) for f in fns),
                          tuple(f"jvp_{n}" for n in names), "the JVP of tf.cond")
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    return tuple(res) if isinstance(ans, tuple) else res[0]


def _while_jvp_infer(*tensors, n_in, attrs, specs):
    return specs[0] if len(specs) == 1 else list(specs)


@primitive("while_loop_jvp", "WhileJvp", infer=_while_jvp_infer,
           internal="the JVP of a tf.while_loop taken inside the traced function (replays the loop)")
def _WHILE_JVP(dev, *tensors, n_in, attrs, specs):
    from tapeflow.core.control_flow import _WHILE

    ins, tans = tensors[:n_in], tensors[n_in:]
    pairs = list(zip([t for t in ins if t._dtype.is_floating], tans))
    got = [t for t in _accumulate(lambda: _WHILE.impl(dev, *ins, **attrs), pairs) if t._dtype.is_floating]
    return tuple(got) if len(got) != 1 else got[0]


@defjvp("while_loop")
def _while_jvp(ts, ans, *inputs, **attrs):
    outs = ans if isinstance(ans, tuple) else (ans,)
    tans = tuple(t if t is not None else _ops.zeros_like(x) for x, t in zip(inputs, ts) if x._dtype.is_floating)
    specs = tuple((o._shape, o._dtype) for o in outs if o._dtype.is_floating)
    res = run_tensors(_WHILE_JVP, tuple(inputs) + tans, {"n_in": len(inputs), "attrs": attrs, "specs": specs})
    it = iter((res,) if isinstance(res, Tensor) else res)
    full = tuple(next(it) if o._dtype.is_floating else None for o in outs)
    return full if isinstance(ans, tuple) else full[0]


def missing() -> list:
    """Differentiable primitives (those with a gradient rule or not declared ``nondiff``) without a JVP rule.

    >>> from tapeflow.autodiff.forward_rules import missing
    >>> isinstance(missing(), list)
    True
    """
    from tapeflow.core.dispatch import REGISTRY

    return sorted(name for name, d in REGISTRY.items()
                  if d.kind == "primitive" and not d.nondiff and name not in JVPS)
