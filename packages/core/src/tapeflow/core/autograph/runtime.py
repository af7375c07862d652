"""The helpers AutoGraph's converted code calls (``ag__.if_stmt``, ``ag__.while_stmt``, ...).

Each helper looks at its condition (or iterable): a symbolic tensor while a graph is traced makes graph
control flow (``control_flow.cond``/``while_loop`` over the variables the statement modifies, which the
converted code reads and writes through ``get_state``/``set_state``); anything else (a Python value, a
concrete eager tensor, a list, a range) runs the statement as plain Python, unchanged.
"""
from __future__ import annotations

import threading

from .. import errors
from ..runner import Graph, current_graph, tracing
from ..tensor import Tensor, convert_to_tensor
from .transformer import DO_RETURN as DO_RETURN_NAME, RETVAL as RETVAL_NAME


class ConversionError(errors.OpError):
    """A construct AutoGraph cannot turn into graph code; the message names the user's file and line and
    says what to write instead.  Not a ValueError, so that the user's own ``except ValueError`` around the
    construct does not swallow it.

    >>> from tapeflow.core.autograph import ConversionError
    >>> issubclass(ConversionError, ValueError), issubclass(ConversionError, tf.errors.OpError)
    (False, True)
    """


class Undefined:
    """The value of a variable that the converted code has not assigned yet.

    >>> from tapeflow.core.autograph.runtime import Undefined
    >>> Undefined("x")
    <undefined x>
    """

    __slots__ = ("name",)

    def __init__(self, name) -> None:
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError(f"local variable '{self.name}' is referenced before assignment")

    __bool__ = __call__ = __iter__ = __len__ = __getitem__ = __index__ = __int__ = __float__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __matmul__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = _fail

    def __getattr__(self, name):
        self._fail()


class UndefinedReturnValue:
    """The return value of a converted function before a ``return`` statement ran.

    >>> from tapeflow.core.autograph.runtime import UndefinedReturnValue, retval
    >>> retval(UndefinedReturnValue()) is None
    True
    """

    __slots__ = ()

    def __repr__(self):
        return "<no return value>"


def retval(value):
    """What the converted function returns: None when no ``return`` statement ran."""
    return None if isinstance(value, UndefinedReturnValue) else value


def list_append(target, value):
    """``target.append(value)``, returning ``target`` (the converted code assigns it back)."""
    target.append(value)
    return target


def ld(getter, name):
    """``getter()``, or ``Undefined(name)`` when the variable it reads is not bound yet."""
    try:
        return getter()
    except NameError:
        return Undefined(name)


def is_symbolic(x) -> bool:
    """Whether ``x`` is a tensor with no value yet: an op's output while a graph is traced."""
    return isinstance(x, Tensor) and x._h is None and x._arr is None and current_graph() is not None


# ---- and / or / not ----------------------------------------------------------------------------------

def and_(*fns):
    """``a and b and ...`` over thunks: Python's short-circuit, ``tf.logical_and`` once a value is symbolic."""
    value = fns[0]()
    for fn in fns[1:]:
        if is_symbolic(value):
            from ..ops import logical_and
            value = logical_and(value, fn())
        elif not value:
            return value
        else:
            value = fn()
    return value


def or_(*fns):
    """``a or b or ...`` over thunks: Python's short-circuit, ``tf.logical_or`` once a value is symbolic."""
    value = fns[0]()
    for fn in fns[1:]:
        if is_symbolic(value):
            from ..ops import logical_or
            value = logical_or(value, fn())
        elif value:
            return value
        else:
            value = fn()
    return value


def not_(value):
    """``not value``; ``tf.logical_not`` for a symbolic tensor."""
    if is_symbolic(value):
        from ..ops import logical_not
        return logical_not(value)
    return not value


# ---- checks and messages --------------------------------------------------------------------------------

def _err(where, message, op):
    message = message.replace(RETVAL_NAME, "the return value").replace(DO_RETURN_NAME, "the returned flag")
    return ConversionError(f"{where}: {message}", op)


def _condition(value, where, what, op):
    """A symbolic condition must be a scalar bool tensor."""
    if value._dtype.name != "bool" or value._size != 1:
        raise _err(where, f"the condition of the {what} is a {value._dtype.name} tensor of shape "
                          f"{tuple(value._shape)}; a tensor condition must be a scalar bool (compare it, "
                          "e.g. x > 0, or reduce it with tf.reduce_any/tf.reduce_all)", op)
    return value


def _kind(v):
    if isinstance(v, Tensor):
        return f"a {v._dtype.name} tensor"
    return f"a Python {type(v).__name__}"


_PY_SCALARS = (bool, int, float)


def _as_tensor(v):
    return v if isinstance(v, Tensor) else convert_to_tensor(v)


def _control_flow():
    from .. import control_flow
    return control_flow


# ---- if --------------------------------------------------------------------------------------------------

def if_stmt(cond, body, orelse, get_state, set_state, names, outputs, where):
    """Run ``if cond: body() else: orelse()``; a symbolic ``cond`` builds ``cond`` over ``outputs``."""
    if is_symbolic(cond):
        _graph_if(cond, body, orelse, get_state, set_state, names, outputs, where)
    elif cond:
        body()
    else:
        orelse()


def _flatten(v):
    """``(structure, leaves)`` of a state value: tuples (namedtuples included) are opened, the rest is a leaf."""
    if isinstance(v, tuple):
        structs, leaves = [], []
        for x in v:
            st, lv = _flatten(x)
            structs.append(st)
            leaves.extend(lv)
        return (type(v), tuple(structs)), leaves
    return None, [v]


def _unflatten(struct, it):
    if struct is None:
        return next(it)
    kind, children = struct
    values = [_unflatten(c, it) for c in children]
    return kind(*values) if hasattr(kind, "_fields") else kind(values)


def _missing(v) -> bool:
    return isinstance(v, (Undefined, UndefinedReturnValue))


class _Dry(threading.local):
    depth = 0


_dry = _Dry()


def _graph_if(cond, body, orelse, get_state, set_state, names, outputs, where):
    _condition(cond, where, "if statement", "If")
    init = get_state()
    positions = [i for i, n in enumerate(names) if n in outputs]
    if _dry.depth:  # a dry run only learns what the branches produce: run both, keep what either defines
        set_state(init)
        body()
        after_if = get_state()
        set_state(init)
        orelse()
        after_else = get_state()
        set_state(tuple(b if _missing(a) and not _missing(b) else a for a, b in zip(after_if, after_else)))
        return
    first = {}   # the first traced branch's layout: per output, its structure and its non-tensor leaves

    def branch(fn, label):
        def run():
            set_state(init)
            fn()
            values = get_state()
            out, layout = [], {}
            for i in positions:
                struct, leaves = _flatten(values[i])
                sides = []
                for v in leaves:
                    if isinstance(v, _PY_SCALARS):
                        v = convert_to_tensor(v)
                    carried = isinstance(v, Tensor) or hasattr(type(v), "_tf_flat")  # a TensorArray goes through
                    sides.append(None if carried else v)
                    if carried:
                        out.append(v)
                layout[i] = (struct, sides)
            if not first:
                first.update(label=label, layout=layout, dtypes=[t._dtype for t in out])
            else:
                _same_branches(first, label, layout, [t._dtype for t in out], names, where)
            return tuple(out)
        return run

    result = _control_flow().cond(cond, branch(body, "if"), branch(orelse, "else"))
    result = iter(list(result) if isinstance(result, (tuple, list)) else [result])
    final = list(init)
    for i in positions:
        struct, sides = first["layout"][i]
        final[i] = _unflatten(struct, iter([next(result) if side is None else side for side in sides]))
    set_state(tuple(final))


def _same_branches(first, label, layout, dtypes, names, where):
    for i, (struct, sides) in layout.items():
        name = names[i]
        struct0, sides0 = first["layout"][i]
        if struct != struct0 and not any(_missing(v) for v in sides + sides0):
            raise _err(where, f"{name} has a different structure in the two branches of an if statement with a "
                              "tensor condition; give it the same tuple structure in both", "If")
        if struct != struct0:  # one branch leaves it undefined: its one leaf against the other's first
            sides, sides0 = sides[:1], sides0[:1]
        for mine, theirs in zip(sides, sides0):
            if (mine is None) == (theirs is None) and (mine is None or mine is theirs):
                continue
            a, b = (mine, theirs) if label == "if" else (theirs, mine)
            if isinstance(a, UndefinedReturnValue) or isinstance(b, UndefinedReturnValue):
                raise _err(where, "this if statement has a tensor condition and only one of its branches "
                                  "returns a value; with a tensor condition every branch must return (add a "
                                  "return statement to the other branch or after the if statement)", "If")
            if isinstance(a, Undefined) or isinstance(b, Undefined):
                missing = "if" if isinstance(a, Undefined) else "else"
                raise _err(where, f"{name} is defined in only one branch of an if statement with a tensor "
                                  f"condition (not in the {missing} branch) and used after it; {name} must be "
                                  f"defined before the if statement or in both branches", "If")
            what_if = "a tensor" if a is None else _kind(a)
            what_else = "a tensor" if b is None else _kind(b)
            raise _err(where, f"{name} is {what_if} in the if branch but {what_else} in the else branch of an "
                              f"if statement with a tensor condition; both branches must give {name} a tensor "
                              "(or the same Python object)", "If")
    tensor_names = [names[i] for i, (_, sides) in layout.items() for side in sides if side is None]
    for name, a, b in zip(tensor_names, first["dtypes"], dtypes):
        if a is not b:
            raise _err(where, f"{name} is {a.name} in one branch and {b.name} in the other of an if statement "
                              f"with a tensor condition; give both the same dtype (tf.cast)", "If")


# ---- while -----------------------------------------------------------------------------------------------

class _LoopState(threading.local):
    python_loops = 0


def while_stmt(test, body, get_state, set_state, names, opts):
    """Run ``while test(): body()``; a symbolic first test builds ``while_loop`` over the carried names."""
    cond = test()
    if is_symbolic(cond):
        _graph_loop(test, lambda: body(), get_state, set_state, names, opts, "while loop", None)
        return
    n = 0
    while _py_cond(cond, opts, "while loop", n):
        body()
        n += 1
        cond = test()


def _py_cond(value, opts, what, n):
    if is_symbolic(value):
        raise _err(opts["where"], f"the condition of this {what} became a tensor after {n} iteration(s) of a "
                                  "Python loop; a loop runs as a graph loop only when its condition is a tensor "
                                  "from the start: make the loop variables tensors before the loop (e.g. "
                                  "tf.constant(0))", "While")
    return value


def _loop_leaf(name, v, where, what):
    """A loop variable's initial leaf as a tensor, or the error that says what to write instead."""
    if isinstance(v, Undefined):
        raise _err(where, f"{name} is first assigned inside this {what}, which has a tensor condition, and is "
                          f"used after it or read in it before it is assigned; {name} must be defined before the "
                          f"loop (e.g. {name} = tf.zeros(shape, dtype) or tf.constant(0)), with the dtype it keeps "
                          "in the loop", "While")
    if isinstance(v, list):
        raise _err(where, f"{name} is a Python list carried through this {what}, which has a tensor condition; "
                          "a Python list cannot grow in a graph loop: use tf.TensorArray (or stack the values "
                          "after the loop)", "While")
    if isinstance(v, _PY_SCALARS):
        return convert_to_tensor(v)
    if hasattr(type(v), "_tf_flat"):  # a composite (TensorArray): while_loop carries its tensors
        return v
    if not isinstance(v, Tensor):
        raise _err(where, f"{name} is {_kind(v)} ({v!r}) carried through this {what}, which has a tensor "
                          f"condition; only tensors (and Python numbers, which become tensors) can be loop "
                          f"variables: initialize {name} to a tensor before the loop", "While")
    return v


def _graph_loop(test, body, get_state, set_state, names, opts, what, index):
    """Stage ``while test(): body()`` as ``control_flow.while_loop``; ``index`` (for loops): an extra
    first loop variable ``(init, step)`` that ``test``/``body`` receive."""
    where = opts["where"]
    if opts.get("try_line"):
        raise _err(where, f"this {what} has a tensor condition and is inside the try statement at line "
                          f"{opts['try_line']}; errors raised while a graph runs are not Python exceptions, so "
                          "the try cannot catch them: move the try outside the function (or check values with "
                          "tf.debugging.assert_* before the loop)", "While")
    if _dry.depth:  # a dry run only learns what one iteration produces
        body(index[0]) if index is not None else body()
        return
    init = list(get_state())
    carried = set(opts["carried"])
    positions, structs, start = [], [], []
    for i, name in enumerate(names):
        if name not in carried:
            continue
        if isinstance(init[i], UndefinedReturnValue):
            init[i] = _return_placeholder(body, get_state, set_state, init, i, where, what, index)
        struct, leaves = _flatten(init[i])
        leaves = [_loop_leaf(name, v, where, what) for v in leaves]
        init[i] = _unflatten(struct, iter(leaves))
        positions.append(i)
        structs.append(struct)
        start.extend(leaves)

    def state_from(values):
        full, it = list(init), iter(values)
        for i, struct in zip(positions, structs):
            full[i] = _unflatten(struct, it)
        return tuple(full)

    def split(values):
        return (values[0], values[1:]) if index is not None else (None, values)

    def cond_fn(*values):
        i, values = split(values)
        set_state(state_from(values))
        c = test(i) if index is not None else test()
        if isinstance(c, bool):
            c = convert_to_tensor(c)
        if not isinstance(c, Tensor):
            raise _err(where, f"the condition of this {what} is {_kind(c)}; it must be a scalar bool tensor",
                       "While")
        return _condition(c, where, what, "While")

    def body_fn(*values):
        i, values = split(values)
        set_state(state_from(values))
        body(i) if index is not None else body()
        after = get_state()
        out, before = [], iter(values)
        for k, struct in zip(positions, structs):
            name = names[k]
            struct2, leaves = _flatten(after[k])
            if struct2 != struct:
                raise _err(where, f"{name} changes structure in one iteration of this {what} ({_kind(after[k])} "
                                  "after it); a loop variable keeps its structure", "While")
            for v in leaves:
                b = next(before)
                if isinstance(v, _PY_SCALARS):
                    v = convert_to_tensor(v, b._dtype)
                if hasattr(type(b), "_tf_flat") and type(v) is type(b):
                    out.append(v)
                    continue
                if not isinstance(v, Tensor):
                    raise _err(where, f"{name} is a tensor before this {what} but {_kind(v)} after one "
                                      "iteration; a loop variable must stay a tensor", "While")
                if v._dtype is not b._dtype:
                    raise _err(where, f"{name} has dtype {b._dtype.name} before this {what} but dtype "
                                      f"{v._dtype.name} after one iteration; a loop variable keeps its dtype: cast "
                                      f"it before the loop (tf.cast({name}, tf.{v._dtype.name})) or inside the "
                                      f"loop (tf.cast(..., tf.{b._dtype.name}))", "While")
                out.append(v)
        if index is not None:
            return (index[1](i),) + tuple(out)
        return tuple(out)

    if index is not None:
        start = [index[0]] + start
    result = _control_flow().while_loop(cond_fn, body_fn, tuple(start))
    result = list(result) if isinstance(result, (tuple, list)) else [result]
    if index is not None:
        result = result[1:]
    set_state(state_from(result))


def _return_placeholder(body, get_state, set_state, init, i, where, what, index):
    """A ``return`` inside a graph loop: the return value's structure, shapes and dtypes come from running the
    body once into a throwaway graph (as TensorFlow does); the loop starts it at zeros."""
    from ..ops import zeros
    _dry.depth += 1
    try:
        with tracing(Graph()):
            set_state(tuple(init))
            body(index[0]) if index is not None else body()
            value = get_state()[i]
    finally:
        _dry.depth -= 1
        set_state(tuple(init))
    struct, leaves = _flatten(value)
    for v in leaves:
        if isinstance(v, _PY_SCALARS):
            v = convert_to_tensor(v)
        if not isinstance(v, Tensor) or None in v._shape:
            raise _err(where, f"this {what} with a tensor condition returns {_kind(v)} of unknown shape or type; "
                              "return tensors of a fixed shape (or assign the result to a variable defined before "
                              "the loop and return it after the loop)", "While")
    return _unflatten(struct, iter([zeros(tuple(v._shape), v._dtype) for v in
                                    (convert_to_tensor(x) if isinstance(x, _PY_SCALARS) else x for x in leaves)]))


# ---- for -------------------------------------------------------------------------------------------------

def for_stmt(iterable, extra_test, body, get_state, set_state, names, opts):
    """Run ``for x in iterable: body(x)`` (while ``extra_test()`` holds); a symbolic tensor iterable builds a
    ``while_loop`` over an index (``tf.range`` iterates its values directly)."""
    if is_symbolic(iterable) or isinstance(iterable, RangeSpec):
        _graph_for(iterable, extra_test, body, get_state, set_state, names, opts)
        return
    n = 0
    for value in iterable:
        if extra_test is not None and not _py_cond(extra_test(), opts, "for loop", n):
            break
        body(value)
        n += 1


class RangeSpec:
    """``tf.range(start, limit, delta)`` with a symbolic bound, as a for loop's iterable: the loop runs over
    its values without building the range tensor (whose length is unknown while tracing)."""

    __slots__ = ("start", "limit", "delta")

    def __init__(self, start, limit, delta) -> None:
        self.start, self.limit, self.delta = start, limit, delta


def for_iter(fn, args, kwargs):
    """A for loop's iterable ``fn(*args, **kwargs)``: ``tf.range`` over a symbolic bound gives a RangeSpec."""
    from ..ops import range_
    if fn is range_ and any(is_symbolic(a) for a in list(args) + list(kwargs.values())):
        from inspect import signature
        bound = signature(range_).bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        start, limit, delta = a["start"], a["limit"], a["delta"]
        if limit is None:
            start, limit = 0, start
        dtype = a["dtype"] or next(v._dtype for v in (start, limit, delta) if is_symbolic(v))
        start, limit, delta = (convert_to_tensor(v, dtype) if not isinstance(v, Tensor) else v
                               for v in (start, limit, delta))
        return RangeSpec(start, limit, delta)
    from . import converted_call
    return converted_call(fn, args, kwargs)


def _range_node(t):
    g = current_graph()
    for node in reversed(g.nodes if g is not None else ()):
        if node.outputs is t:
            return node if node.prim.name == "range" else None
    return None


def _graph_for(iterable, extra_test, body, get_state, set_state, names, opts):
    from ..ops import gather, greater, less, logical_and, logical_or, shape
    if isinstance(iterable, Tensor) and not iterable._shape:
        raise _err(opts["where"], "this for loop iterates over a scalar tensor; iterate over a tensor with at "
                                  "least one dimension (or tf.range(n))", "While")
    spec = iterable if isinstance(iterable, RangeSpec) else None
    node = _range_node(iterable) if spec is None else None
    if node is not None:
        a = node.attrs
        spec = RangeSpec(*(convert_to_tensor(a[k], a["dtype"]) for k in ("start", "limit", "delta")))
    if spec is not None:  # for i in tf.range(...): iterate the values, no index into a range tensor
        delta, limit = spec.delta, spec.limit

        def in_range(v):
            if not is_symbolic(delta):
                return (less if delta._host().item() > 0 else greater)(v, limit)
            return logical_or(logical_and(greater(delta, 0), less(v, limit)),
                              logical_and(less(delta, 0), greater(v, limit)))

        def test(v):
            ok = in_range(v)
            return ok if extra_test is None else and_(lambda: ok, extra_test)

        _graph_loop(test, body, get_state, set_state, names, opts, "for loop", (spec.start, lambda v: v + delta))
        return
    size = iterable._shape[0]
    limit = size if size is not None else shape(iterable)[0]

    def test_i(i):
        ok = less(i, limit)
        return ok if extra_test is None else and_(lambda: ok, extra_test)

    index = (convert_to_tensor(0), lambda i: i + 1)
    _graph_loop(test_i, lambda i: body(gather(iterable, i)), get_state, set_state, names, opts,
                "for loop", index)
