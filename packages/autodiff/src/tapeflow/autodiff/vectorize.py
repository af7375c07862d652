"""``tf.vectorized_map``: run a per-element function once on the whole batch.

``fn`` is traced on one element's symbolic spec (``tapeflow.core.runner.tracing``: no kernel runs,
each primitive becomes a node).  The nodes are then emitted again in order on real tensors: a node
none of whose inputs depend on the element runs as traced (once, for every element); a node with an
input that does runs through its primitive's **batching rule** (``BATCH_RULES``), which computes
all elements at once with a leading batch axis:

* element-wise ops align their inputs' ranks and broadcast (``x`` batched, ``y`` not: ``x + y``);
* ops with axis attributes (reductions, scans, softmax, sort, concat, stack, split, ...) shift the
  axes by one; ``transpose`` keeps axis 0 in front; ``reshape``, ``tile``, ``pad``, ``slice`` and
  ``strided_slice`` gain a leading batch entry;
* ``matmul`` and the matrix ops (inv, det, solve, cholesky, svd, ...) take the batch axis as one
  more batch dimension; ``gather``/``gather_nd``/the scatters gain a batch dimension;
* 2-D convolutions and pooling fold the batch axis into the images' batch axis.

When a node has no rule (a stateful op such as a random draw or a print, control flow, a custom
gradient, ...) or ``fn`` cannot be traced, ``fallback_to_while_loop=True`` runs ``fn`` in a Python
loop over the elements and stacks the results (warning which op had no rule when ``warn=True``);
``fallback_to_while_loop=False`` raises naming the op.  Tapes and accumulators record the batched
ops, so gradients flow through ``vectorized_map``; inside ``tf.function`` the batched ops trace.
"""
from __future__ import annotations

import warnings

from tapeflow.core import nest as _nest
from tapeflow.core import ops as _ops
from tapeflow.core.dispatch import hooks as _hooks
from tapeflow.core.errors import InvalidArgumentError, PerformanceWarning
from tapeflow.core.ops import math_ops as _math_ops
from tapeflow.core.runner import PRIMITIVES, Graph, run_tensors, symbolic, tracing
from tapeflow.core.tensor import Tensor, convert_to_tensor

BATCH_RULES: dict = {}


class _NoRule(Exception):
    """A node cannot be batched (this rule does not cover the case it met)."""


def defbatch(*names):
    """Register a batching rule for primitives ``names`` (a decorator).

    A rule ``rule(prim, ins, bat, attrs, n)`` gets the inputs (those with ``bat[i]`` true carry a
    leading batch axis of size ``n``, which is None when unknown) and returns the outputs with that
    leading axis.

    >>> from tapeflow.autodiff.vectorize import BATCH_RULES, defbatch
    >>> @defbatch("doc_op")
    ... def _(prim, ins, bat, attrs, n):
    ...     return ins[0]
    >>> _ = BATCH_RULES.pop("doc_op")
    """
    def deco(f):
        for name in names:
            BATCH_RULES[name] = f
        return f

    return deco


# ---- helpers ---------------------------------------------------------------------------------------

def _run(prim, ins, attrs):
    return run_tensors(prim, tuple(ins), attrs or None)


def _erank(x, b):
    return len(x._shape) - (1 if b else 0)


def _lift(x, b, r, n):
    """A batched ``x`` reshaped to rank ``r + 1`` (ones after the batch axis); unbatched ``x`` unchanged."""
    if not b or _erank(x, b) == r:
        return x
    if None in x._shape[1:]:
        raise _NoRule("an unknown dimension")
    lead = n if n is not None else -1
    return _ops.reshape(x, (lead,) + (1,) * (r - _erank(x, b)) + tuple(x._shape[1:]))


def _tile(x, b, n):
    """``x`` with the batch axis: as is when batched, else repeated ``n`` times."""
    if b:
        return x
    if n is None or None in x._shape:
        raise _NoRule("a batch of unknown size")
    return _ops.broadcast_to(_ops.reshape(x, (1,) + tuple(x._shape)), (n,) + tuple(x._shape))


def _shift(a):
    if a is None:
        return None
    if isinstance(a, (tuple, list)):
        return type(a)(_shift(v) for v in a)
    return a + 1 if a >= 0 else a


# ---- element-wise ---------------------------------------------------------------------------------

_ELEMENTWISE = ({r[0] for r in _math_ops._UNARY} | {r[0] for r in _math_ops._BINARY}
                | {"leaky_relu", "gelu", "polygamma", "relu_grad", "tanh_grad", "sigmoid_grad", "select", "cast",
                   "check_numerics", "identity", "copy_to_device", "stop_gradient",
                   "sigmoid_cross_entropy_with_logits"})


def _elementwise(prim, ins, bat, attrs, n):
    r = max(_erank(x, b) for x, b in zip(ins, bat))
    return _run(prim, [_lift(x, b, r, n) for x, b in zip(ins, bat)], attrs)


defbatch(*sorted(name for name in _ELEMENTWISE if name in PRIMITIVES))(_elementwise)


# ---- matrices: the batch axis is one more batch dimension --------------------------------------------

@defbatch("matmul")
def _matmul(prim, ins, bat, attrs, n):
    r = max(_erank(x, b) for x, b in zip(ins, bat))
    return _run(prim, [_lift(x, b, r, n) for x, b in zip(ins, bat)], attrs)


@defbatch("inv", "det", "slogdet", "cholesky", "svd", "eigh", "qr", "lu", "expm", "diag_part", "diag", "top_k")
def _trailing(prim, ins, bat, attrs, n):
    return _run(prim, ins, attrs)   # ops on the trailing dimensions: any leading batch axes go along


@defbatch("solve", "triangular_solve")
def _solves(prim, ins, bat, attrs, n):
    a, b = (_tile(x, bt, n) for x, bt in zip(ins, bat))
    if len(a._shape) != len(b._shape):
        raise _NoRule("matrices of different batch ranks")
    return _run(prim, (a, b), attrs)


# ---- axis attributes --------------------------------------------------------------------------------

def _axis_rule(*keys):
    def rule(prim, ins, bat, attrs, n):
        ins = [_tile(x, b, n) for x, b in zip(ins, bat)]
        attrs = dict(attrs or {})
        for k in keys:
            if k in attrs:
                attrs[k] = _shift(attrs[k])
        return _run(prim, ins, attrs)

    return rule


defbatch("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all", "reduce_any",
         "argmax", "argmin", "cumsum", "cumprod", "softmax", "log_softmax", "reverse", "sort", "argsort", "split",
         "unstack", "concat", "stack", "one_hot")(_axis_rule("axis"))


# ---- shapes --------------------------------------------------------------------------------------------

@defbatch("reshape")
def _reshape(prim, ins, bat, attrs, n):
    shape = tuple(attrs["shape"])
    if n is None and -1 in shape:
        raise _NoRule("two unknown dimensions")
    return _run(prim, ins, {**attrs, "shape": (n if n is not None else -1,) + shape})


@defbatch("transpose")
def _transpose(prim, ins, bat, attrs, n):
    return _run(prim, ins, {**attrs, "perm": (0,) + tuple(p + 1 for p in attrs["perm"])})


@defbatch("broadcast_to")
def _broadcast_to(prim, ins, bat, attrs, n):
    shape = tuple(attrs["shape"])
    if n is None:
        raise _NoRule("a batch of unknown size")
    return _run(prim, (_lift(ins[0], True, len(shape), n),), {**attrs, "shape": (n,) + shape})


@defbatch("tile")
def _tile_rule(prim, ins, bat, attrs, n):
    return _run(prim, ins, {**attrs, "multiples": (1,) + tuple(attrs["multiples"])})


@defbatch("pad")
def _pad(prim, ins, bat, attrs, n):
    return _run(prim, ins, {**attrs, "paddings": ((0, 0),) + tuple(tuple(p) for p in attrs["paddings"])})


@defbatch("slice")
def _slice(prim, ins, bat, attrs, n):
    if n is None:
        raise _NoRule("a batch of unknown size")
    return _run(prim, ins, {**attrs, "begin": (0,) + tuple(attrs["begin"]), "size": (n,) + tuple(attrs["size"])})


def _strided(attrs):
    out = dict(attrs)
    out["begin"] = (0,) + tuple(attrs["begin"])
    out["end"] = (0,) + tuple(attrs["end"])
    out["strides"] = (1,) + tuple(attrs["strides"])
    out["begin_mask"] = (attrs["begin_mask"] << 1) | 1
    out["end_mask"] = (attrs["end_mask"] << 1) | 1
    for k in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        out[k] = attrs[k] << 1
    return out


@defbatch("strided_slice")
def _strided_slice(prim, ins, bat, attrs, n):
    return _run(prim, ins, _strided(attrs))


@defbatch("strided_slice_grad")
def _strided_slice_grad(prim, ins, bat, attrs, n):
    if n is None:
        raise _NoRule("a batch of unknown size")
    out = _strided(attrs)
    out["shape"] = (n,) + tuple(attrs["shape"])
    return _run(prim, ins, out)


@defbatch("shape")
def _shape(prim, ins, bat, attrs, n):
    return _ops.strided_slice(_run(prim, ins, attrs), [1], [0], [1], end_mask=1), False


@defbatch("size", "rank")
def _size_rank(prim, ins, bat, attrs, n):
    elem = ins[0]._shape[1:]
    if None in elem:
        raise _NoRule("an unknown dimension")
    value = len(elem) if prim.name == "rank" else _prod(elem)
    from tapeflow.core import dtypes

    return convert_to_tensor(value, (attrs or {}).get("out_type", dtypes.int32)), False


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


# ---- losses --------------------------------------------------------------------------------------------

@defbatch("softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits")
def _xent(prim, ins, bat, attrs, n):
    from tapeflow.core.ops.nn_ops import _backprop_buffer

    labels, logits = (_tile(x, b, n) for x, b in zip(ins, bat))
    attrs = {**attrs, "backprop": _backprop_buffer(logits)}   # the tape's gradient reads it (or rebuilds it)
    if "axis" in attrs:
        attrs["axis"] = _shift(attrs["axis"])
    return _run(prim, (labels, logits), attrs)


# ---- gathers and scatters -------------------------------------------------------------------------------

@defbatch("gather")
def _gather(prim, ins, bat, attrs, n):
    params, indices = ins
    axis, bd = attrs["axis"], attrs["batch_dims"]
    if bat[0] and not bat[1] and bd == 0:
        return _run(prim, ins, {**attrs, "axis": axis + 1})
    if bat[1] and not bat[0] and bd == 0 and axis == 0:
        return _run(prim, ins, attrs)
    return _run(prim, (_tile(params, bat[0], n), _tile(indices, bat[1], n)),
                {**attrs, "axis": axis + 1, "batch_dims": bd + 1})


@defbatch("gather_nd")
def _gather_nd(prim, ins, bat, attrs, n):
    return _run(prim, [_tile(x, b, n) for x, b in zip(ins, bat)], {**attrs, "batch_dims": attrs["batch_dims"] + 1})


def _batch_indices(indices, b, n):
    """Index tuples (..., k) for each element, as (n, ..., 1 + k) tuples led by the element's number."""
    idx = _tile(indices, b, n)
    lead = _ops.cast(_ops.range_(n), idx._dtype)
    shape = tuple(idx._shape[:-1]) + (1,)
    lead = _ops.broadcast_to(_ops.reshape(lead, (n,) + (1,) * (len(shape) - 1)), shape)
    return _ops.concat([lead, idx], -1)


@defbatch("scatter_nd")
def _scatter_nd(prim, ins, bat, attrs, n):
    if n is None:
        raise _NoRule("a batch of unknown size")
    indices, updates = ins
    return _run(prim, (_batch_indices(indices, bat[0], n), _tile(updates, bat[1], n)),
                {**attrs, "shape": (n,) + tuple(attrs["shape"])})


@defbatch("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_max", "tensor_scatter_nd_min")
def _tensor_scatter(prim, ins, bat, attrs, n):
    if n is None:
        raise _NoRule("a batch of unknown size")
    tensor, indices, updates = ins
    return _run(prim, (_tile(tensor, bat[0], n), _batch_indices(indices, bat[1], n), _tile(updates, bat[2], n)),
                attrs)


@defbatch("unsorted_segment_sum")
def _segment_sum(prim, ins, bat, attrs, n):
    attrs = dict(attrs)
    axis, bd = attrs.get("axis", 0), attrs.get("batch_dims", 0)
    if bat[1]:
        return _run(prim, (_tile(ins[0], bat[0], n), ins[1]), {**attrs, "axis": axis + 1, "batch_dims": bd + 1})
    return _run(prim, ins, {**attrs, "axis": axis + 1})


@defbatch("unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod")
def _segment_reduce(prim, ins, bat, attrs, n):
    data, ids = ins
    if bat[1] or len(ids._shape) != 1:
        raise _NoRule("batched segment ids")
    rank = len(data._shape)
    perm = (1, 0) + tuple(range(2, rank))   # the segmented axis in front, the batch second
    return _ops.transpose(_run(prim, (_ops.transpose(data, perm), ids), attrs), perm)


# ---- images: the batch axis folds into the images' batch axis ------------------------------------------

def _images(image_inputs, size_attr=None):
    def rule(prim, ins, bat, attrs, n):
        if any(b for i, b in enumerate(bat) if i not in image_inputs):
            raise _NoRule("batched filters")
        ins = list(ins)
        lead = None
        for i in image_inputs:
            x = _tile(ins[i], bat[i], n)
            lead = x._shape[:2]
            if None in x._shape[1:]:
                raise _NoRule("an unknown dimension")
            ins[i] = _ops.reshape(x, (-1,) + tuple(x._shape[2:]))
        attrs = dict(attrs)
        if size_attr is not None:
            size = tuple(attrs[size_attr])
            if n is None:
                raise _NoRule("a batch of unknown size")
            attrs[size_attr] = (n * size[0],) + size[1:]
        out = _run(prim, ins, attrs)
        return _ops.reshape(out, (lead[0] if lead[0] is not None else -1, lead[1]) + tuple(out._shape[1:]))

    return rule


defbatch("conv2d", "depthwise_conv2d")(_images((0,)))
defbatch("max_pool2d", "avg_pool2d")(_images((0,)))
defbatch("conv2d_backprop_input", "depthwise_conv2d_backprop_input")(_images((1,), "input_sizes"))
defbatch("avg_pool_grad")(_images((0,), "orig_input_shape"))
defbatch("max_pool_grad", "max_pool_grad_grad")(_images((0, 1, 2)))


# ---- the map ----------------------------------------------------------------------------------------------

def _no_rule(node, bat):
    p = node.prim
    if p.stateful:
        return f"{p.name} ({p.tf_name}) is stateful"
    if p.name not in BATCH_RULES:
        return f"{p.name} ({p.tf_name}) has no batching rule"
    return None


def _vectorize(fn, elems, flat, n):
    """fn over the batch at once, or the reason it cannot be (a string)."""
    specs = [symbolic(tuple(x._shape[1:]), x._dtype, x._dev) for x in flat]
    graph = Graph()
    try:
        with _hooks.paused(), tracing(graph):
            out = fn(_nest.pack_sequence_as(elems, specs))
    except Exception as e:   # noqa: BLE001 - fn could not be traced (it reads a value, ...): the loop runs it
        return f"fn could not be traced ({type(e).__name__}: {e})"
    env = {id(s): (x, True) for s, x in zip(specs, flat)}
    keep = list(specs)   # the symbolic tensors stay alive while their ids key env
    for node in graph.nodes:
        ins, bat = [], []
        for t in node.inputs:
            hit = env.get(id(t))
            if hit is None:
                ins.append(t)
                bat.append(False)
            else:
                ins.append(hit[0])
                bat.append(hit[1])
        outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
        keep.extend(outs)
        if node.prim.name == "read_variable":
            res, batched = node.attrs["var"].read_value(), False
        elif not any(bat):
            if node.prim.stateful:
                return f"{node.prim.name} ({node.prim.tf_name}) is stateful"
            res, batched = _run(node.prim, ins, node.attrs), False
        else:
            why = _no_rule(node, bat)
            if why:
                return why
            try:
                res = BATCH_RULES[node.prim.name](node.prim, ins, bat, node.attrs or {}, n)
            except _NoRule as e:
                return f"{node.prim.name} ({node.prim.tf_name}) cannot be batched here ({e})"
            except Exception as e:   # noqa: BLE001 - the loop computes what the rule could not
                return f"the batching rule of {node.prim.name} ({node.prim.tf_name}) failed ({type(e).__name__}: {e})"
            batched = True
            if isinstance(res, tuple) and len(res) == 2 and isinstance(res[1], bool):
                res, batched = res
        res = res if isinstance(res, tuple) else (res,)
        for o, r in zip(outs, res):
            env[id(o)] = (r, batched)
    flat_out = _nest.flatten(out)
    results = []
    for o in flat_out:
        if o is None:
            results.append(None)
            continue
        hit = env.get(id(o)) if isinstance(o, Tensor) else None
        if hit is None:
            o = o if isinstance(o, Tensor) else convert_to_tensor(o)
            hit = (o, False)
        r, b = hit
        if not b:
            if n is None:
                return "an output does not depend on the elements and the batch size is unknown"
            r = _tile(r, False, n)
        results.append(r)
    return _nest.pack_sequence_as(out, results)


def _loop(fn, elems, flat, n):
    if n is None:
        raise InvalidArgumentError("vectorized_map fell back to a loop over the elements, but their number is "
                                   "unknown (a graph input with an unknown first dimension); allowed: elements "
                                   "of a known number, or a function whose every op has a batching rule",
                                   "vectorized_map")
    outs = [fn(_nest.pack_sequence_as(elems, [x[i] for x in flat])) for i in range(n)]
    if not outs:
        raise InvalidArgumentError("vectorized_map over 0 elements needs a function every op of which has a "
                                   "batching rule (the output's shape comes from tracing it)", "vectorized_map")
    flat_outs = [_nest.flatten(o) for o in outs]
    stacked = [None if col[0] is None else _ops.stack([c if isinstance(c, Tensor) else convert_to_tensor(c)
                                                      for c in col])
               for col in zip(*flat_outs)]
    return _nest.pack_sequence_as(outs[0], stacked)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each element of ``elems`` (unpacked along axis 0), computed on the whole batch at once.

    ``elems`` is a tensor or a nested structure of tensors with the same first dimension; ``fn``
    takes one element (the same structure, without that axis) and returns tensors (or a nested
    structure of them), which come back stacked along a new axis 0.  When some op ``fn`` uses has
    no batching rule, ``fallback_to_while_loop=True`` runs ``fn`` once per element (and warns which
    op, with ``warn=True``); ``False`` raises instead.

    >>> import tapeflow as tf
    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> w = tf.constant([[1.0], [10.0]])
    >>> tf.vectorized_map(lambda row: tf.matmul(row[None, :], w)[0] + tf.reduce_sum(row), x).numpy().tolist()
    [[24.0], [50.0], [76.0]]
    """
    if not callable(fn):
        raise TypeError(f"vectorized_map needs a callable fn; got {type(fn).__name__}")
    flat = _nest.flatten(elems)
    if not flat:
        raise InvalidArgumentError("vectorized_map needs at least one tensor in elems; got an empty structure",
                                   "vectorized_map")
    try:
        flat = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in flat]
    except (TypeError, ValueError) as e:
        raise TypeError(f"vectorized_map takes tensors (or nested structures of them) as elems: {e}") from None
    for x in flat:
        if not x._shape:
            raise InvalidArgumentError("vectorized_map unpacks elems along axis 0, but one is a scalar; allowed: "
                                       "tensors of rank >= 1", "vectorized_map")
    sizes = {x._shape[0] for x in flat}
    known = {s for s in sizes if s is not None}
    if len(known) > 1:
        raise InvalidArgumentError(f"vectorized_map needs elems with the same first dimension; got "
                                   f"{sorted(known)}", "vectorized_map")
    n = known.pop() if known else None
    got = _vectorize(fn, elems, flat, n)
    if not isinstance(got, str):
        return got
    if not fallback_to_while_loop:
        raise InvalidArgumentError(f"vectorized_map cannot vectorize fn: {got}; allowed: ops with a batching "
                                   f"rule (tapeflow.autodiff.vectorize.BATCH_RULES), or "
                                   f"fallback_to_while_loop=True", "vectorized_map")
    if warn:
        warnings.warn(f"vectorized_map runs fn in a loop over the elements: {got}", PerformanceWarning, stacklevel=2)
    return _loop(fn, elems, flat, n)
