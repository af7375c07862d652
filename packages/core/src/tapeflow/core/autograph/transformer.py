"""AutoGraph's source transformation: a user function's ``ast`` rewritten so that its ``if``, ``while`` and
``for`` statements call the helpers of :mod:`.runtime`.

Three passes over the function (and every function defined inside it), as TensorFlow's AutoGraph does:

1. *Lowering*: ``if c: return a`` followed by more code becomes ``if c: return a else: <the rest>``;
   ``return``, ``break`` and ``continue`` inside compound statements become flag variables
   (``_ag_do_return``/``_ag_retval``, ``_ag_break_N``, ``_ag_continue_N``); the statements they skip
   are guarded by ``if not flag:``; loops gain the extra test ``not flag``; a loop's ``else`` runs
   under ``if not break_flag``.
2. *Liveness*: which names each control statement's successors read (backward data flow, loops to a
   fixed point), so that a tensor ``if`` or loop carries only the variables that are used afterwards.
3. *Control flow*: each ``if``/``while``/``for`` becomes nested functions (its body, its test, the
   ``get_state``/``set_state`` pair over the names it modifies, declared ``nonlocal``) and one call
   ``ag__.if_stmt(...)``/``ag__.while_stmt(...)``/``ag__.for_stmt(...)``; ``and``/``or``/``not``
   become ``ag__.and_``/``or_``/``not_`` (short-circuit kept), and calls ``ag__.converted_call``.

Every generated node carries the line of the statement it replaces, and the code is compiled with
the user's file name, so tracebacks point at the user's source.
"""
from __future__ import annotations

import ast
import copy
import sys

GEN = "_ag_"                      # prefix of every generated name
RETVAL, DO_RETURN = "_ag_retval", "_ag_do_return"
_DIRECT_CALLS = {"super", "locals", "globals", "vars", "eval", "exec", "dir", "iter", "next"}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class ConversionSyntaxError(Exception):
    """A construct AutoGraph refuses at conversion time (``lineno``: where, ``hint``: what to write)."""

    def __init__(self, message, lineno) -> None:
        super().__init__(message)
        self.lineno = lineno


# ---- small AST helpers -----------------------------------------------------------------------------

def _name(id_, ctx=None):
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _attr(name):
    return ast.Attribute(value=_name("ag__"), attr=name, ctx=ast.Load())


def _call(fn, *args, keywords=()):
    return ast.Call(func=fn, args=list(args), keywords=list(keywords))


def _assign(target, value):
    return ast.Assign(targets=[_name(target, ast.Store())], value=value)


def _not(expr):
    return ast.UnaryOp(op=ast.Not(), operand=expr)


def _const(v):
    return ast.Constant(value=v)


def _fdef(name, args, body):
    extra = {"type_params": []} if sys.version_info >= (3, 12) else {}
    return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in args],
                                                         vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                         defaults=[]),
                           body=body or [ast.Pass()], decorator_list=[], returns=None, **extra)


def _located(nodes, at):
    """Give the generated nodes among ``nodes`` (those without a position) the line of ``at``; the user's
    own nodes keep theirs."""
    for n in nodes:
        for sub in ast.walk(n):
            if isinstance(sub, (ast.stmt, ast.expr, ast.excepthandler, ast.arg, ast.keyword)) \
                    and getattr(sub, "lineno", None) is None:
                sub.lineno = getattr(at, "lineno", 1)
                sub.end_lineno = getattr(at, "end_lineno", None) or sub.lineno
                sub.col_offset, sub.end_col_offset = 0, 0
    return nodes


def _walk_scope(node):
    """Nodes of ``node`` in its own scope: nested functions, lambdas, classes and comprehensions excluded."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if isinstance(c, _SCOPES + _COMPREHENSIONS):
                if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    yield c  # the name it binds and its decorators belong to this scope
                    todo.extend(c.decorator_list)
                continue
            todo.append(c)


def assigned(nodes) -> list:
    """Names bound by ``nodes`` in their own scope, in first-seen order."""
    out = {}
    for node in nodes:
        for n in _walk_scope(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out[n.id] = None
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
                out[n.name] = None
            elif isinstance(n, ast.ExceptHandler) and n.name:
                out[n.name] = None
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    out[(a.asname or a.name).split(".")[0]] = None
            elif isinstance(n, ast.NamedExpr):
                out[n.target.id] = None
    return [k for k in out if not k.startswith(GEN + "fn")]


def loads(node) -> set:
    """Every name read anywhere inside ``node`` (nested scopes included: closures read them too)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _contains(nodes, kinds, into_loops=True):
    for node in nodes:
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, kinds):
                return n
            for c in ast.iter_child_nodes(n):
                if isinstance(c, _SCOPES + _COMPREHENSIONS):
                    continue
                if not into_loops and isinstance(c, (ast.While, ast.For, ast.AsyncFor)):
                    continue
                todo.append(c)
    return None


# ---- pass 1: lowering of return / break / continue ------------------------------------------------

def _always_returns(stmts) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _rewrite_conditional_returns(stmts):
    """``if c: ...return x`` + rest  ->  ``if c: ...return x else: rest`` (so every path sets the return value)."""
    out = []
    for i, s in enumerate(stmts):
        for field in ("body", "orelse", "finalbody"):
            if hasattr(s, field) and not isinstance(s, _SCOPES):
                setattr(s, field, _rewrite_conditional_returns(getattr(s, field)))
        if isinstance(s, ast.Try):
            for h in s.handlers:
                h.body = _rewrite_conditional_returns(h.body)
        rest = stmts[i + 1:]
        if isinstance(s, ast.If) and rest:
            if _always_returns(s.body) and not _always_returns(s.orelse):
                s.orelse = _rewrite_conditional_returns(s.orelse + rest)
                out.append(s)
                return out
            if _always_returns(s.orelse) and not _always_returns(s.body):
                s.body = _rewrite_conditional_returns(s.body + rest)
                out.append(s)
                return out
        out.append(s)
    return out


class _Lowering:
    def __init__(self, counter) -> None:
        self.counter = counter

    def _fresh(self, what):
        self.counter[0] += 1
        return f"{GEN}{what}_{self.counter[0]}"

    def _guarded(self, stmts, kind, replace, flag, into_loops):
        """``stmts`` with each ``kind`` statement replaced by ``replace(stmt)`` and what follows a statement
        that may set ``flag`` guarded by ``if not flag``."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, kind):
                out.extend(_located(replace(s), s))
                return out  # the rest of the block is unreachable
            may_jump = not isinstance(s, _SCOPES) and _contains([s], kind, into_loops) is not None \
                and (into_loops or not isinstance(s, (ast.While, ast.For)))
            if may_jump:
                self._guard_inside(s, kind, replace, flag, into_loops)
            out.append(s)
            if may_jump and stmts[i + 1:]:
                rest = self._guarded(stmts[i + 1:], kind, replace, flag, into_loops)
                guard = ast.If(test=_not(_name(flag)), body=rest, orelse=[])
                out.extend(_located([guard], s))
                return out
        return out

    def _guard_inside(self, s, kind, replace, flag, into_loops):
        if isinstance(s, (ast.While, ast.For)):
            if not into_loops:
                return
            s.body = self._guarded(s.body, kind, replace, flag, into_loops)
            self._extra_test(s, flag)
            return
        for field in ("body", "orelse", "finalbody"):
            if hasattr(s, field):
                setattr(s, field, self._guarded(getattr(s, field), kind, replace, flag, into_loops))
        if isinstance(s, ast.Try):
            for h in s.handlers:
                h.body = self._guarded(h.body, kind, replace, flag, into_loops)

    @staticmethod
    def _extra_test(loop, flag):
        loop._ag_extra = getattr(loop, "_ag_extra", []) + [flag]

    def loops(self, stmts):
        """Lower break/continue and loop ``else`` clauses, innermost loops first."""
        out = []
        for s in stmts:
            if isinstance(s, _SCOPES):
                out.append(s)
                continue
            for field in ("body", "orelse", "finalbody"):
                if hasattr(s, field):
                    setattr(s, field, self.loops(getattr(s, field)))
            if isinstance(s, ast.Try):
                for h in s.handlers:
                    h.body = self.loops(h.body)
            if not isinstance(s, (ast.While, ast.For)):
                out.append(s)
                continue
            orelse, s.orelse = s.orelse, []
            brk = None
            if _contains(s.body, ast.Continue, into_loops=False):
                flag = self._fresh("continue")
                s.body = _located([_assign(flag, _const(False))], s) + self._guarded(
                    s.body, ast.Continue, lambda st, f=flag: [_assign(f, _const(True))], flag, False)
            if _contains(s.body, ast.Break, into_loops=False):
                brk = self._fresh("break")
                out.extend(_located([_assign(brk, _const(False))], s))
                s.body = self._guarded(s.body, ast.Break, lambda st, f=brk: [_assign(f, _const(True))], brk, False)
                self._extra_test(s, brk)
            out.append(s)
            if orelse:
                out.extend(_located([ast.If(test=_not(_name(brk)), body=orelse, orelse=[])], s) if brk else orelse)
        return out

    def returns(self, fn):
        """Lower ``return`` statements nested in compound statements to ``_ag_retval``/``_ag_do_return``."""
        body = fn.body
        nested = any(_contains([s], ast.Return) for s in body if not isinstance(s, (ast.Return,) + _SCOPES))
        if not nested:
            return

        def replace(st):
            value = st.value if st.value is not None else _const(None)
            return [_assign(RETVAL, value), _assign(DO_RETURN, _const(True))]

        head = _located([_assign(DO_RETURN, _const(False)),
                         _assign(RETVAL, _call(_attr("UndefinedReturnValue")))], fn)
        tail = _located([ast.Return(value=_call(_attr("retval"), _name(RETVAL)))], fn.body[-1])
        fn.body = head + self._guarded(body, ast.Return, replace, DO_RETURN, True) + tail


# ---- pass 2: liveness --------------------------------------------------------------------------------

def _kills(s) -> set:
    if isinstance(s, (ast.Assign, ast.AnnAssign, ast.Delete, ast.Import, ast.ImportFrom)) or \
            (isinstance(s, ast.Expr) and isinstance(s.value, ast.NamedExpr)):
        return set(assigned([s]))
    return set()


def live_block(stmts, out: set) -> set:
    live = set(out)
    for s in reversed(stmts):
        live = _live_stmt(s, live)
    return live


def _live_stmt(s, out: set) -> set:
    if isinstance(s, ast.If):
        s._ag_live_out = set(out)
        return loads(s.test) | live_block(s.body, out) | live_block(s.orelse, out)
    if isinstance(s, (ast.While, ast.For)):
        s._ag_live_out = set(out)
        head_reads = (loads(s.test) if isinstance(s, ast.While) else set()) | set(getattr(s, "_ag_extra", ()))
        targets = set(assigned([s.target])) if isinstance(s, ast.For) else set()
        head = set(out) | head_reads
        while True:
            new = set(out) | head_reads | (live_block(s.body, head) - targets)
            if new == head:
                break
            head = new
        s._ag_loop_live = set(head)
        return head | (loads(s.iter) if isinstance(s, ast.For) else set())
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
        live_block(s.body, set())
        return (set(out) - {s.name}) | loads(s)
    if isinstance(s, ast.ClassDef):
        return (set(out) - {s.name}) | loads(s)
    if isinstance(s, ast.With):
        return live_block(s.body, out) | loads(ast.Module(body=[ast.Expr(i.context_expr) for i in s.items],
                                                             type_ignores=[]))
    if isinstance(s, ast.Try):
        after = set(out)
        for h in s.handlers:
            after |= live_block(h.body, out)
        fin = live_block(s.finalbody, out)
        after |= fin
        live_block(s.orelse, after)
        return live_block(s.body, after) | after | loads(s)
    return (set(out) - _kills(s)) | loads(s)


# ---- pass 3: control flow ------------------------------------------------------------------------------

class _ControlFlow(ast.NodeTransformer):
    def __init__(self, counter, filename, globals_) -> None:
        self.counter = counter
        self.filename = filename
        self.globals = globals_       # names declared global in the function being converted
        self.try_line = None          # line of an enclosing try statement

    def _fresh(self, what):
        self.counter[0] += 1
        return f"{GEN}fn_{what}_{self.counter[0]}"

    # scopes
    def visit_FunctionDef(self, node):
        saved = self.globals, self.try_line
        self.globals = {n for s in _walk_scope(node) if isinstance(s, ast.Global) for n in s.names}
        self.try_line = None
        if _contains(node.body, (ast.Yield, ast.YieldFrom)):  # a nested generator stays as written
            self.globals, self.try_line = saved
            return node
        node.body = self._block(node.body)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self.globals, self.try_line = saved
        return node

    def visit_AsyncFunctionDef(self, node):
        return node  # coroutines are not converted

    def visit_ClassDef(self, node):
        node.body = [self.visit(s) if isinstance(s, ast.FunctionDef) else s for s in node.body]
        return node

    def visit_Lambda(self, node):
        node.body = self.visit(node.body)
        return node

    def _block(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out or [ast.Pass()]

    def visit_Try(self, node):
        saved = self.try_line
        self.try_line = self.try_line or node.lineno
        node.body = self._block(node.body)
        self.try_line = saved
        node.handlers = [self.visit(h) for h in node.handlers]
        node.orelse = self._block(node.orelse) if node.orelse else []
        node.finalbody = self._block(node.finalbody) if node.finalbody else []
        return node

    def visit_ExceptHandler(self, node):
        node.body = self._block(node.body)
        if node.type is not None:
            node.type = self.visit(node.type)
        return node

    # expressions
    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        lambdas = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                 kw_defaults=[], kwarg=None, defaults=[]), body=v)
                   for v in node.values]
        return ast.copy_location(_call(_attr(fn), *lambdas), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call(_attr("not_"), node.operand), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and (f.id in _DIRECT_CALLS or f.id.startswith(GEN)):
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ag__":
            return node
        args = ast.Tuple(elts=node.args, ctx=ast.Load())
        keys = [_const(k.arg) if k.arg is not None else None for k in node.keywords]
        kwargs = ast.Dict(keys=keys, values=[k.value for k in node.keywords])
        return ast.copy_location(_call(_attr("converted_call"), f, args, kwargs), node)

    # statements
    def _state(self, node, names, extra_body=()):
        """Pre-definitions and the get_state/set_state pair over ``names``; the declaration for bodies."""
        ident = self._fresh("state")
        pre = [ast.Assign(targets=[_name(n, ast.Store())],
                          value=_call(_attr("ld"), ast.Lambda(args=ast.arguments(
                              posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                              defaults=[]), body=_name(n)), _const(n))) for n in names]
        tup = ast.Tuple(elts=[_name(n) for n in names], ctx=ast.Load())
        get = _fdef(f"{ident}_get", [], [ast.Return(value=tup)])
        setter_body = []
        if names:
            setter_body = [ast.Nonlocal(names=list(names)),
                           ast.Assign(targets=[ast.Tuple(elts=[_name(n, ast.Store()) for n in names],
                                                         ctx=ast.Store())], value=_name(f"{GEN}vars"))]
        put = _fdef(f"{ident}_set", [f"{GEN}vars"], setter_body)
        return pre, get, put

    def _decl(self, names, node_names):
        decl = []
        local = [n for n in names if n not in self.globals]
        glob = [n for n in node_names if n in self.globals]
        if local:
            decl.append(ast.Nonlocal(names=local))
        if glob:
            decl.append(ast.Global(names=glob))
        return decl

    def _split(self, stmts):
        all_names = assigned(stmts)
        return [n for n in all_names if n not in self.globals], all_names

    def _where(self, node):
        return _const(f"{self.filename}:{node.lineno}")

    def visit_If(self, node):
        names, all_names = self._split([node])
        live = sorted(getattr(node, "_ag_live_out", set(names)) & set(names))
        test = self.visit(node.test)
        body, orelse = self._block(node.body), self._block(node.orelse) if node.orelse else [ast.Pass()]
        pre, get, put = self._state(node, names)
        ident = get.name[:-4]
        decl = self._decl(names, all_names)
        tfn = _fdef(f"{ident}_if", [], decl + body)
        efn = _fdef(f"{ident}_else", [], decl + orelse)
        call = ast.Expr(_call(_attr("if_stmt"), test, _name(tfn.name), _name(efn.name), _name(get.name),
                              _name(put.name), _const(tuple(names)), _const(tuple(live)), self._where(node)))
        return _located(pre + [get, put, tfn, efn], node) + [ast.copy_location(call, node)]

    def _loop(self, node, names, all_names, body, params, iter_assign=()):
        live_out = getattr(node, "_ag_live_out", set(names))
        loop_live = getattr(node, "_ag_loop_live", set(names)) | live_out
        pre, get, put = self._state(node, names)
        ident = get.name[:-4]
        decl = self._decl(names, all_names)
        bfn = _fdef(f"{ident}_body", params, decl + list(iter_assign) + body)
        extra = getattr(node, "_ag_extra", [])
        opts = ast.Dict(keys=[_const("live_out"), _const("carried"), _const("where"), _const("try_line")],
                        values=[_const(tuple(sorted(live_out & set(names)))),
                                _const(tuple(sorted(loop_live & set(names)))),
                                self._where(node), _const(self.try_line)])
        return pre, get, put, bfn, extra, opts

    def visit_While(self, node):
        names, all_names = self._split([node])
        test = node.test
        for flag in reversed(getattr(node, "_ag_extra", [])):
            test = ast.BoolOp(op=ast.And(), values=[_not(_name(flag)), test])
        test = self.visit(_located([test], node)[0])
        body = self._block(node.body)
        pre, get, put, bfn, _, opts = self._loop(node, names, all_names, body, [])
        tfn = _fdef(bfn.name[:-5] + "_test", [], [ast.Return(value=test)])
        call = ast.Expr(_call(_attr("while_stmt"), _name(tfn.name), _name(bfn.name), _name(get.name),
                              _name(put.name), _const(tuple(names)), opts))
        return _located(pre + [get, put, tfn, bfn], node) + [ast.copy_location(call, node)]

    def visit_For(self, node):
        names, all_names = self._split([node])
        it = self.visit(node.iter)
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "converted_call":
            it.func = _attr("for_iter")  # tf.range over a symbolic bound iterates without a range tensor
        body = self._block(node.body)
        itr = f"{GEN}itr"
        assign = ast.Assign(targets=[node.target], value=_name(itr))
        pre, get, put, bfn, extra, opts = self._loop(node, names, all_names, body, [itr], [assign])
        if extra:
            test = ast.BoolOp(op=ast.And(), values=[_not(_name(f)) for f in extra]) if len(extra) > 1 \
                else _not(_name(extra[0]))
            efn = _fdef(bfn.name[:-5] + "_extra", [], [ast.Return(value=self.visit(_located([test], node)[0]))])
            defs, extra_arg = [efn], _name(efn.name)
        else:
            defs, extra_arg = [], _const(None)
        call = ast.Expr(_call(_attr("for_stmt"), it, extra_arg, _name(bfn.name), _name(get.name),
                              _name(put.name), _const(tuple(names)), opts))
        return _located(pre + [get, put] + defs + [bfn], node) + [ast.copy_location(call, node)]


# ---- the whole transformation ----------------------------------------------------------------------------

def _lower_all(fn, counter):
    """Lower every function definition inside ``fn`` (and ``fn`` itself), innermost first."""
    for n in list(ast.walk(fn)):
        if isinstance(n, ast.FunctionDef) and n is not fn:
            if not _contains(n.body, (ast.Yield, ast.YieldFrom)):
                _lower_one(n, counter)
    _lower_one(fn, counter)


def _lower_one(fn, counter):
    if getattr(fn, "_ag_lowered", False):
        return
    fn._ag_lowered = True
    low = _Lowering(counter)
    fn.body = _rewrite_conditional_returns(fn.body)
    fn.body = low.loops(fn.body)
    low.returns(fn)


class _ListAppends(ast.NodeTransformer):
    """``xs.append(v)`` on a local ``xs`` -> ``xs = ag__.list_append(xs, v)``: the list becomes a variable the
    statement modifies, so a tensor loop that grows a Python list is caught (TensorFlow's lists converter)."""

    def visit_FunctionDef(self, node):
        a = node.args
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None}
        scope = [s for s in _walk_scope(node) if s is not node]
        glob = {n for s in scope if isinstance(s, ast.Global) for n in s.names}
        nonloc = {n for s in scope if isinstance(s, ast.Nonlocal) for n in s.names}
        saved = getattr(self, "locals", set())
        self.locals = ((set(assigned(node.body)) | params) - glob) | nonloc
        node.body = [self.visit(s) for s in node.body]
        self.locals = saved
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_Lambda(self, node):
        return node

    def visit_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "append" \
                and isinstance(v.func.value, ast.Name) and v.func.value.id in self.locals \
                and len(v.args) == 1 and not v.keywords and not isinstance(v.args[0], ast.Starred):
            target = v.func.value.id
            new = _assign(target, _call(_attr("list_append"), _name(target), v.args[0]))
            return ast.copy_location(new, node)
        return node


class _SuperCalls(ast.NodeTransformer):
    """Zero-argument ``super()`` -> ``super(__class__, self)``: it keeps working inside generated functions."""

    def __init__(self, first_arg) -> None:
        self.first = first_arg

    def visit_FunctionDef(self, node):
        return node  # a nested function's super() is its own business

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args and not node.keywords:
            node.args = [_name("__class__"), _name(self.first)]
        return node


def transform(fn: ast.FunctionDef, filename: str, has_class_cell: bool) -> ast.FunctionDef:
    """The converted copy of function definition ``fn`` (decorators, defaults and annotations removed:
    the caller supplies the original function's evaluated defaults)."""
    fn = copy.deepcopy(fn)
    bad = _contains(fn.body, (ast.Yield, ast.YieldFrom))
    if bad is not None:
        raise ConversionSyntaxError(
            "a generator (yield) cannot be converted to graph code; collect the values in a list (or a "
            "tf.TensorArray in a tensor loop) and return them, or mark the generator with "
            "@autograph.do_not_convert", bad.lineno)
    fn.decorator_list = []
    fn.returns = None
    a = fn.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if arg is not None:
            arg.annotation = None
    a.defaults = [_const(None) for _ in a.defaults]
    a.kw_defaults = [None if d is None else _const(None) for d in a.kw_defaults]
    firsts = a.posonlyargs + a.args
    if has_class_cell and firsts:
        fn = _SuperCalls(firsts[0].arg).generic_visit(fn) or fn
    counter = [0]
    fn = _ListAppends().visit(fn)
    _lower_all(fn, counter)
    for n in ast.walk(fn):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            live_block(n.body, set())
    globals_ = {n for s in _walk_scope(fn) if isinstance(s, ast.Global) for n in s.names}
    cf = _ControlFlow(counter, filename, globals_)
    fn.body = cf._block(fn.body)
    fn.decorator_list = []
    ast.fix_missing_locations(fn)
    return fn
