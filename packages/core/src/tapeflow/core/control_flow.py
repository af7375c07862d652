"""Control flow: ``tf.cond``, ``tf.case``, ``tf.switch_case`` and ``tf.while_loop``, eager and in graphs.

Eagerly they are Python (the predicate's value picks the branch, the loop runs while the condition
holds).  Inside a graph function, a symbolic predicate or loop makes one node that holds each branch
(or the loop's condition and body) as a traced subgraph; running the node runs the branch taken, or
the body as many times as the condition says.  Each subgraph's ops are recorded on tapes as they run,
so gradients replay exactly the branch taken and the iterations made.

>>> import tapeflow as tf
>>> @tf.function
... def collatz_steps(n):
...     return tf.while_loop(lambda n, i: n > 1,
...                          lambda n, i: (tf.where(n % 2 == 0, n // 2, 3 * n + 1), i + 1), (n, 0))[1]
>>> int(collatz_steps(tf.constant(27)))
111
"""
from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, Callable

from . import errors, nest
from .dispatch import hooks
from .runner import _trace, primitive, run_tensors, tracing
from .tensor import Tensor, convert_to_tensor

if TYPE_CHECKING:
    from typing import TypeVar
    _T = TypeVar("_T")   # the structure of tensors a branch or a loop gives back

__all__ = ["case", "cond", "switch_case", "while_loop"]


def _symbolic(x) -> bool:
    return isinstance(x, Tensor) and x._h is None


def _outer_tapes_paused():
    """While a branch is traced, tapes active around it must not record its ops (tapes entered inside do)."""
    ad = sys.modules.get("tapeflow.autodiff")
    return ad.pause_all() if ad is not None else contextlib.nullcontext()


def _trace_branch(fn, args, name, what):
    """Trace ``fn(*args)`` into a subgraph of the graph being built: (graph, flat outputs, structure)."""
    from .function import FuncGraph

    parent = _trace.graph
    g = FuncGraph(name, allow_variables=getattr(parent, "allow_variables", True), parent=parent)
    g.inputs = list(args)
    with _outer_tapes_paused(), tracing(g):
        out = fn(*args)
        out = nest.map_structure(lambda x: x.read_value() if hasattr(x, "assign") and hasattr(x, "_as_tensor")
                                 else x, out)
    if g.variables and getattr(parent, "variables", None) is not None:
        parent.variables.extend(g.variables)
    flat = nest.flatten(out, expand_composites=True)
    for x in flat:
        if not isinstance(x, Tensor) and x is not None and not isinstance(x, (int, float, bool)):
            raise TypeError(f"{what}: {name} returned {type(x).__name__} {x!r:.60}; branches and loop bodies "
                            f"return tensors (or Python numbers)")
    return g, flat, out


def _as_tensors(flat, dtypes=None):
    out = []
    for i, x in enumerate(flat):
        if not isinstance(x, Tensor):
            x = convert_to_tensor(x, dtypes[i] if dtypes else None)
        out.append(x)
    return out


# ---- the branch node (cond, case, switch_case) -------------------------------------------------------

def _branch_infer(selector, *caps, plans, cap_index, specs, **_):
    return list(specs)


@primitive("branch", "Case", infer=_branch_infer,
           internal="tf.cond / tf.case / tf.switch_case in a graph (runs the subgraph of the branch taken)")
def _BRANCH(dev, selector, *caps, plans, cap_index, specs, fns, names, _graphs):
    i = int(selector.numpy())
    if not 0 <= i < len(plans):
        i = len(plans) - 1  # switch_case: out of range runs the default (the last branch)
    plan = plans[i]
    return tuple(plan.run([caps[j] for j in cap_index[i]], names[i]))


def _build_branches(selector, fns, names, what):
    """One node choosing among ``fns`` by the int32 ``selector`` (symbolic); returns the packed outputs."""
    from .function import Plan

    traced = [_trace_branch(fn, (), n, what) for fn, n in zip(fns, names)]
    structs = [t[2] for t in traced]
    for s, n in zip(structs[1:], names[1:]):
        try:
            nest.assert_same_structure(structs[0], s, check_types=False)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{what}: {names[0]} and {n} must return the same structure of tensors; {e}") from None
    leaves = [nest.flatten(st) for st in structs]
    if any(nest._composite(x) for x in leaves[0]):
        # a composite in one form in a branch and another in the next (a TensorArray written in one branch only):
        # every branch returns the written form
        for k in range(len(leaves[0])):
            for a in leaves:
                for b in leaves:
                    if nest._composite(a[k]):
                        a[k] = a[k]._tf_relax(b[k])
        structs = [nest.pack_sequence_as(st, lv) for st, lv in zip(structs, leaves)]
        traced = [(t[0], nest.flatten(st, expand_composites=True), st) for t, st in zip(traced, structs)]
    flats = [t[1] for t in traced]
    for f, n in zip(flats[1:], names[1:]):
        if len(f) != len(flats[0]):  # composites (a TensorArray written in one branch only) differ in form
            raise ValueError(f"{what}: {names[0]} returns {len(flats[0])} tensors and {n} {len(f)}; branches must "
                             f"return the same structure of tensors (write a TensorArray in every branch or none)")
    # Python values: equal in every branch (they stay Python), or all tensors (converted)
    n_out = len(flats[0])
    py = [all(not isinstance(f[k], Tensor) for f in flats) and all(f[k] == flats[0][k] for f in flats)
          for k in range(n_out)]
    specs, outs_per = [], [[] for _ in flats]
    for k in range(n_out):
        if py[k]:
            continue
        vals = [_as_tensors([f[k]])[0] for f in flats]
        d0 = vals[0]._dtype
        for v, n in zip(vals[1:], names[1:]):
            if v._dtype is not d0:
                raise TypeError(f"{what}: output {k} is {d0.name} in {names[0]} but {v._dtype.name} in {n}; "
                                f"every branch must return the same dtypes")
        shape = vals[0]._shape
        for v in vals[1:]:
            if len(v._shape) != len(shape):
                raise ValueError(f"{what}: output {k} has rank {len(shape)} in {names[0]} but {len(v._shape)} in "
                                 f"another branch; branches must return tensors of the same rank")
            shape = tuple(a if a == b else None for a, b in zip(shape, v._shape))
        specs.append((shape, d0))
        for j, v in enumerate(vals):
            outs_per[j].append(v)
    plans, cap_index, caps, pos = [], [], [], {}
    for (g, _, _), outs in zip(traced, outs_per):
        plan = Plan(g, [], outs, g.name)
        idx = []
        for c in plan.captures:
            if id(c) not in pos:
                pos[id(c)] = len(caps)
                caps.append(c)
            idx.append(pos[id(c)])
        plans.append(plan)
        cap_index.append(tuple(idx))
    graphs = tuple(t[0] for t in traced)
    res = run_tensors(_BRANCH, (selector, *caps), {"plans": tuple(plans), "cap_index": tuple(cap_index),
                                                   "specs": tuple(specs), "fns": tuple(fns), "names": tuple(names),
                                                   "_graphs": graphs})
    _trace.graph.reads.clear()  # a branch may have updated variables: read them again after it
    res = iter(res if isinstance(res, tuple) else (res,))
    flat = [flats[0][k] if py[k] else next(res) for k in range(n_out)]
    if nest.is_nested(structs[0]) or nest._composite(structs[0]):
        return nest.pack_sequence_as(structs[0], flat, expand_composites=True)
    return flat[0]


def _in_graph() -> bool:
    return hooks.tracing and _trace.graph is not None


def cond(pred: Any, true_fn: Callable[[], _T] | None = None, false_fn: Callable[[], _T] | None = None,
         name: str | None = None) -> _T:
    """``true_fn()`` if ``pred`` else ``false_fn()``; in a graph function, a node that runs the branch taken.

    Both functions take no arguments and return the same structure of tensors (same dtypes; shapes that
    differ become unknown dimensions).

    >>> import tapeflow as tf
    >>> x = tf.constant(3.0)
    >>> tf.cond(x > 2.0, lambda: x * 10.0, lambda: x).numpy()
    np.float32(30.0)
    >>> f = tf.function(lambda x: tf.cond(x > 2.0, lambda: x * 10.0, lambda: x))
    >>> f(tf.constant(1.0)).numpy(), f(tf.constant(5.0)).numpy()
    (np.float32(1.0), np.float32(50.0))
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(f"tf.cond needs callables true_fn and false_fn, got {type(true_fn).__name__} and "
                        f"{type(false_fn).__name__}")
    p = pred
    if hasattr(p, "_as_tensor") and not isinstance(p, Tensor):
        p = convert_to_tensor(p)
    if isinstance(p, Tensor):
        if p._shape != () or p._dtype.name != "bool":
            raise errors.InvalidArgumentError(f"pred must be a scalar bool tensor, got a {p._dtype.name} tensor "
                                              f"of shape {tuple(p._shape)}", "If")
    if not _symbolic(p):
        return true_fn() if bool(p) else false_fn()
    from .ops import cast, logical_not

    selector = cast(logical_not(p), "int32")  # 0: true branch, 1: false branch
    return _build_branches(selector, (true_fn, false_fn), ("true_fn", "false_fn"), "tf.cond")


def switch_case(branch_index, branch_fns, default=None, name=None):
    """``branch_fns[branch_index]()``; an index out of range runs ``default`` (else the last branch).

    ``branch_fns`` is a list of functions, or a dict (or list of pairs) from index to function.

    >>> import tapeflow as tf
    >>> fns = [lambda: tf.constant(10), lambda: tf.constant(20)]
    >>> tf.switch_case(tf.constant(1), fns).numpy(), tf.switch_case(tf.constant(7), fns).numpy()
    (np.int32(20), np.int32(20))
    """
    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and branch_fns and isinstance(branch_fns[0], (list, tuple)):
        pairs = sorted(branch_fns)
    elif isinstance(branch_fns, (list, tuple)):
        pairs = list(enumerate(branch_fns))
    else:
        raise TypeError(f"tf.switch_case: branch_fns must be a list or dict of functions, got "
                        f"{type(branch_fns).__name__}")
    if not pairs:
        raise ValueError("tf.switch_case needs at least one branch")
    keys = [k for k, _ in pairs]
    if keys != list(range(len(keys))):
        raise ValueError(f"tf.switch_case: branch keys must be 0..{len(keys) - 1}, got {keys}")
    fns = [f for _, f in pairs] + ([default] if default is not None else [])
    for f in fns:
        if not callable(f):
            raise TypeError(f"tf.switch_case: every branch must be callable, got {type(f).__name__}")
    idx = branch_index if isinstance(branch_index, Tensor) else convert_to_tensor(branch_index)
    if idx._shape != () or idx._dtype.name not in ("int32", "int64"):
        raise errors.InvalidArgumentError(f"branch_index must be a scalar int32 tensor, got a {idx._dtype.name} "
                                          f"tensor of shape {tuple(idx._shape)}", "Case")
    if not _symbolic(idx):
        i = int(idx.numpy())
        return fns[i if 0 <= i < len(pairs) else len(fns) - 1]()
    from .ops import cast

    names = [f"branch_{k}" for k in keys] + (["default"] if default is not None else [])
    return _build_branches(cast(idx, "int32"), tuple(fns), tuple(names), "tf.switch_case")


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate in ``pred_fn_pairs`` (``default`` when none is).

    With ``exclusive=True``, more than one true predicate is an error.

    >>> import tapeflow as tf
    >>> x = tf.constant(5)
    >>> tf.case([(x < 0, lambda: tf.constant(-1)), (x > 0, lambda: tf.constant(1))],
    ...         default=lambda: tf.constant(0)).numpy()
    np.int32(1)
    """
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    for p in pairs:
        if not (isinstance(p, (list, tuple)) and len(p) == 2 and callable(p[1])):
            raise TypeError(f"tf.case: pred_fn_pairs must be (predicate, function) pairs, got {p!r:.60}")
    if not pairs and default is None:
        raise ValueError("tf.case needs at least one (pred, fn) pair or a default")
    preds = [convert_to_tensor(p) if not isinstance(p, Tensor) else p for p, _ in pairs]
    for p in preds:
        if p._shape != () or p._dtype.name != "bool":
            raise errors.InvalidArgumentError(f"every predicate must be a scalar bool tensor, got a {p._dtype.name} "
                                              f"tensor of shape {tuple(p._shape)}", "Case")
    fns = [f for _, f in pairs]
    if default is None:  # TensorFlow: with no default, the last pair's function is the fallback
        default = fns[-1]
    if not any(_symbolic(p) for p in preds):
        vals = [bool(p) for p in preds]
        if exclusive and sum(vals) > 1:
            raise errors.InvalidArgumentError(f"tf.case with exclusive=True: {sum(vals)} predicates are true "
                                              f"(at most one may be)", "Case")
        for v, f in zip(vals, fns):
            if v:
                return f()
        return default()
    from .ops import argmax, cast, concat, reduce_sum, reshape, stack

    flags = cast(stack(preds), "int32")
    if exclusive:
        from .debugging import assert_less_equal

        assert_less_equal(reduce_sum(flags), 1, message="tf.case with exclusive=True: more than one predicate "
                                                        "is true")
    # the first true predicate's index, or len(preds) (the default) when none is
    index = cast(argmax(concat([flags, reshape(1, [1])], 0), output_type="int32"), "int32")
    return _build_branches(index, tuple(fns) + (default,),
                           tuple(f"pred_{i}" for i in range(len(fns))) + ("default",), "tf.case")


# ---- while_loop -------------------------------------------------------------------------------------

def _while_infer(*tensors, n_vars, specs, **_):
    return list(specs)


@primitive("while_loop", "While", infer=_while_infer,
           internal="tf.while_loop in a graph (runs the body subgraph while the condition subgraph holds)")
def _WHILE(dev, *tensors, n_vars, specs, cond_plan, body_plan, n_cond_caps, max_iter, name, _graphs):
    vals = list(tensors[:n_vars])
    rest = tensors[n_vars:]
    if max_iter == "input":
        limit, rest = int(rest[0].numpy()), rest[1:]
    else:
        limit = max_iter
    ccaps, bcaps = list(rest[:n_cond_caps]), list(rest[n_cond_caps:])
    i = 0
    while limit is None or i < limit:
        (c,) = cond_plan.run(vals + ccaps, f"{name}/cond")
        if not bool(c.numpy()):
            break
        vals = body_plan.run(vals + bcaps, f"{name}/body")
        i += 1
    return tuple(vals)


def _pack_loop(structure, flat):
    return nest.pack_sequence_as(structure, flat)


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: _T, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, return_same_structure: bool = True, name: str | None = None) -> _T:
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; returns the final ``loop_vars``.

    ``loop_vars`` is a list or tuple (any nesting) of tensors; ``body`` returns the same structure with
    the same dtypes.  In a graph function a variable's shape may change across iterations only where
    ``shape_invariants`` (a matching structure of shapes, None for unknown dimensions) allows it.
    ``maximum_iterations`` bounds the number of iterations.  Gradients replay the iterations that ran.

    >>> import tapeflow as tf
    >>> i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), (tf.constant(0), tf.constant(0)))
    >>> int(i), int(s)
    (5, 10)
    """
    if not callable(cond) or not callable(body):
        raise TypeError("tf.while_loop needs callables cond and body")
    if not isinstance(loop_vars, (list, tuple)) or isinstance(loop_vars, Tensor):
        raise TypeError(f"tf.while_loop: loop_vars must be a list or tuple of tensors, got "
                        f"{type(loop_vars).__name__} (wrap a single tensor: loop_vars=[x])")
    if parallel_iterations is not None and (not isinstance(parallel_iterations, int) or parallel_iterations < 1):
        raise ValueError(f"tf.while_loop: parallel_iterations must be a positive int, got {parallel_iterations!r}")
    structure = loop_vars
    if maximum_iterations is not None and not isinstance(maximum_iterations, Tensor):
        if isinstance(maximum_iterations, bool) or not hasattr(maximum_iterations, "__index__"):
            raise TypeError(f"tf.while_loop: maximum_iterations must be an int or a scalar int tensor, got "
                            f"{maximum_iterations!r}")
        maximum_iterations = int(maximum_iterations)
    # a composite loop variable (a TensorArray) is one leaf eagerly and its tensors in a graph
    graph = _in_graph()
    flat = [x if nest._composite(x) else convert_to_tensor(x) if not isinstance(x, Tensor) else x
            for x in nest.flatten(structure, expand_composites=graph)]
    if not graph:
        limit = maximum_iterations
        if isinstance(limit, Tensor):
            limit = int(limit.numpy())
        vals = nest.pack_sequence_as(structure, flat)
        i = 0
        while (limit is None or i < limit) and bool(_call(cond, vals)):
            new = _call(body, vals)
            new = _check_body(structure, new, [v._dtype for v in nest.flatten(vals)], None)
            vals = new
            i += 1
        return vals
    return _graph_while(cond, body, structure, flat, shape_invariants, maximum_iterations, name or "while")


def _call(fn, vals):
    return fn(*vals)


def _check_body(structure, new, dtypes, shapes):
    if not isinstance(new, (list, tuple)) or isinstance(structure, list) != isinstance(new, list):
        if len(nest.flatten(structure)) == 1 and not nest.is_nested(new):
            new = type(structure)([new]) if not hasattr(structure, "_fields") else new
        elif isinstance(new, (list, tuple)):
            new = type(structure)(new) if not hasattr(structure, "_fields") else type(structure)(*new)
    try:
        nest.assert_same_structure(structure, new, check_types=False)
    except (ValueError, TypeError) as e:
        raise ValueError(f"tf.while_loop: body must return the structure of loop_vars; {e}") from None
    expand = shapes is not None
    flat = nest.flatten(new, expand_composites=expand)
    out = []
    for k, (x, dt) in enumerate(zip(flat, dtypes)):
        if nest._composite(x):  # eager: a TensorArray stays itself
            out.append(x)
            continue
        t = x if isinstance(x, Tensor) else convert_to_tensor(x, dt)
        if t._dtype is not dt:
            raise TypeError(f"tf.while_loop: loop variable {k} enters the loop as {dt.name} but the body returns "
                            f"{t._dtype.name}; keep each loop variable's dtype (use tf.cast)")
        if shapes is not None and not _fits(shapes[k], t._shape):
            raise ValueError(f"tf.while_loop: loop variable {k} enters the loop with shape {tuple(shapes[k])}, but "
                             f"has shape {tuple(t._shape)} after one iteration. To allow the shape to vary across "
                             f"iterations, use the `shape_invariants` argument of tf.while_loop to specify a less-"
                             f"specific shape (None for the dimensions that change)")
        out.append(t)
    return nest.pack_sequence_as(structure, out, expand_composites=expand)


def _fits(spec, shape) -> bool:
    return len(spec) == len(shape) and all(a is None or a == b for a, b in zip(spec, shape))


def _graph_while(cond, body, structure, flat, shape_invariants, maximum_iterations, name, _relaxed=False):
    from .function import Plan
    from .runner import symbolic

    if shape_invariants is not None:
        inv = _invariants(shape_invariants, structure)
    else:  # a composite's tensors may change where it says (a growing TensorArray's length)
        inv = [s for x in nest.flatten(structure)
               for s in (x._tf_shapes() if nest._composite(x) else [tuple(x._shape) if isinstance(x, Tensor) else
                                                                       tuple(convert_to_tensor(x)._shape)])]
    for k, (s, t) in enumerate(zip(inv, flat)):
        if not _fits(s, t._shape):
            raise ValueError(f"tf.while_loop: shape_invariants[{k}] = {s} does not allow the initial shape "
                             f"{tuple(t._shape)} of loop variable {k}")
    dtypes = [t._dtype for t in flat]
    phs = [symbolic(tuple(s), t._dtype, t._dev) for s, t in zip(inv, flat)]
    packed = nest.pack_sequence_as(structure, phs, expand_composites=True)
    cg, cflat, _ = _trace_branch(lambda *a: cond(*packed), (), f"{name}/cond", "tf.while_loop")
    if len(cflat) != 1:
        raise TypeError(f"tf.while_loop: cond must return one boolean scalar, got {len(cflat)} values")
    c = cflat[0]
    if not isinstance(c, Tensor):
        c = convert_to_tensor(bool(c))
    if c._dtype.name != "bool" or tuple(c._shape) != ():
        raise TypeError(f"tf.while_loop: cond must return a boolean scalar, got a {c._dtype.name} tensor of shape "
                        f"{tuple(c._shape)}")
    bg, bflat, bout = _trace_branch(lambda *a: body(*packed), (), f"{name}/body", "tf.while_loop")
    relaxed = _relax(structure, bout)
    if relaxed is not structure and not _relaxed:
        # a composite changed form in the body (a TensorArray's first write): enter the loop in that form
        return _graph_while(cond, body, relaxed, nest.flatten(relaxed, expand_composites=True), shape_invariants,
                            maximum_iterations, name, _relaxed=True)
    new = _check_body(structure, bout, dtypes, inv)
    outs = nest.flatten(new, expand_composites=True)
    cond_plan = Plan(cg, phs, [c], cg.name)
    body_plan = Plan(bg, phs, outs, bg.name)
    inputs = list(flat)
    max_attr = maximum_iterations
    if isinstance(maximum_iterations, Tensor):
        inputs.append(maximum_iterations)
        max_attr = "input"
    inputs += cond_plan.captures + body_plan.captures
    res = run_tensors(_WHILE, tuple(inputs), {
        "n_vars": len(flat), "specs": tuple((tuple(s), d) for s, d in zip(inv, dtypes)), "cond_plan": cond_plan,
        "body_plan": body_plan, "n_cond_caps": len(cond_plan.captures), "max_iter": max_attr, "name": name,
        "_graphs": (cg, bg)})
    _trace.graph.reads.clear()
    res = list(res) if isinstance(res, tuple) else [res]
    return nest.pack_sequence_as(structure, res, expand_composites=True)


def _relax(structure, new):
    """``structure`` with each composite replaced by the form the body's output ``new`` needs (itself if none)."""
    a, b = nest.flatten(structure), None
    if not any(nest._composite(x) for x in a):
        return structure
    try:
        b = nest.flatten(_check_shape_only(structure, new))
    except (ValueError, TypeError):
        return structure
    out = [x._tf_relax(y) if nest._composite(x) else x for x, y in zip(a, b)]
    if all(x is y for x, y in zip(a, out)):
        return structure
    return nest.pack_sequence_as(structure, out)


def _check_shape_only(structure, new):
    if not isinstance(new, (list, tuple)) and len(nest.flatten(structure)) == 1:
        new = [new]
    nest.assert_same_structure(structure, new, check_types=False)
    return new


def _is_shape_list(x) -> bool:
    return isinstance(x, (list, tuple)) and all(d is None or isinstance(d, int) for d in x)


def _invariants(shape_invariants, structure) -> list:
    """Flatten ``shape_invariants`` against ``structure`` (each leaf a shape: list, tuple or TensorShape)."""
    out = []

    def walk(inv, s):
        if nest.is_nested(s):
            if not isinstance(inv, (list, tuple, dict)) or _is_shape_list(inv) and not any(
                    nest.is_nested(c) for c in (s.values() if isinstance(s, dict) else s)) and len(s) != len(inv):
                raise ValueError(f"tf.while_loop: shape_invariants {shape_invariants!r} do not match the "
                                 f"structure of loop_vars")
            kids = [inv[k] for k in sorted(s)] if isinstance(s, dict) else list(inv)
            subs = [s[k] for k in sorted(s)] if isinstance(s, dict) else list(s)
            if len(kids) != len(subs):
                raise ValueError(f"tf.while_loop: shape_invariants has {len(kids)} entries for {len(subs)} loop "
                                 f"variables")
            for a, b in zip(kids, subs):
                walk(a, b)
        else:
            out.append(tuple(None if d is None else int(d) for d in (inv.shape if hasattr(inv, "dtype") else inv)))

    walk(shape_invariants, structure)
    return out
