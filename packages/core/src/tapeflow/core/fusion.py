"""Element-wise fusion: chains of element-wise ops in a ``tf.function`` graph run as one kernel.

The last graph pass (``graph_opt.optimize``; switch: ``tf.config.optimizer.set_experimental_options(
{"elementwise_fusion": False})``).  It groups maximal sets of element-wise nodes (the unary and binary
ops of ``elementwise.def``, ``cast`` between float32 and float64, comparisons, ``select``) on
float32/float64 (and the booleans between them) of one device whose tensors all have the group's shape,
are scalars, or repeat along its leading dimensions (a bias of the last dimensions: a matmul's or a conv's
epilogue, bias + activation, is one pass over the product), where every intermediate is used only inside
the group or is also one of the group's outputs.  A reduction (``reduce_sum``/``mean``/``max``/``min``/
``prod``) of a group's tensor over all its axes joins the group: the kernel accumulates it tile by tile
(tpf_reduce's order, so the same bits) and never writes the reduced tensor unless something else uses
it.  Each group of two or more nodes (reductions counted) becomes one ``fused_elementwise`` node: a
register program (instructions ``(kind, op, dtype, dst, a, b, c)`` over registers holding the inputs and the
temporaries) that the CPU evaluates tile by tile (``csrc/fused.c``: one read of the inputs, one write
of the outputs; or, for 32768 elements or more, generated C compiled at first use that computes the whole chain
per element: ``tapeflow.kernels.codegen``, switch ``fusion_codegen``) and the GPU backends compile into one kernel
each (``tapeflow.kernels.gpu_fused``).
On the CPU the results are the unfused graph's, bit for bit: the same loops, in the same order.

A graph run under a ``GradientTape`` runs the unfused plan (the tape records each op); a tape inside
the function traces its gradient ops, which are fused like the others.

>>> import tapeflow as tf
>>> f = tf.function(lambda x: tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x))
>>> cf = f.get_concrete_function(tf.TensorSpec([4], tf.float32))
>>> [k["program"] for k in cf.fused_kernels()]
['multiply(tanh(add(multiply(x, 2.0), 1.0)), sigmoid(x))']
>>> [round(v, 4) for v in cf(tf.constant([0.0, 1.0, 2.0, 3.0])).numpy().tolist()]
[0.3808, 0.7274, 0.8807, 0.9526]
"""
from __future__ import annotations

from tapeflow import kernels

from . import dtypes as _dt
from .errors import InvalidArgumentError
from .runner import Node, PRIMITIVES, check, primitive
from .tensor import Tensor, make

F32, F64, BOOL = _dt.float32, _dt.float64, _dt.bool_
_REG_DTYPES = (F32, F64, BOOL)
UNARY, BINARY, CAST, SELECT = 0, 1, 2, 3
#: nodes in one fused kernel at most (the CPU interpreter keeps a tile per register: 512 x 8 KiB a thread)
MAX_GROUP = 512
_KIND_NAME = {UNARY: "unary", BINARY: "binary", CAST: "cast", SELECT: "select"}


def _tables():
    """primitive name -> kernel op name, for the unary and the binary element-wise primitives."""
    from .ops import math_ops as m

    un = {m._UNARY_DOC[k][0]: k for k in kernels.UNARY_OPS if k in m._UNARY_DOC}
    un.update({k: k for k in m._UNARY_OWN})
    bi = {m._BINARY_DOC[k][0]: k for k in kernels.BINARY_OPS if k in m._BINARY_DOC}
    bi.update({k: k for k in m._BINARY_OWN})
    return un, bi


_UN, _BI = _tables()
#: a unary primitive's attributes -> the kernel's scalar parameter
_PARAM = {"leaky_relu": lambda a: float(a["alpha"]), "gelu": lambda a: 1.0 if a["approximate"] else 0.0,
          "polygamma": lambda a: float(a["order"])}
_PARAM_TEXT = {"leaky_relu": lambda a: f"alpha={a['alpha']}", "gelu": lambda a: f"approximate={a['approximate']}",
               "polygamma": lambda a: f"order={a['order']}"}


def is_elementwise(node) -> bool:
    """Whether ``node`` is one of the element-wise primitives the pass knows (whatever its dtypes)."""
    n = node.prim.name
    return n in _UN or n in _BI or n in ("cast", "select")


def _why_not(node) -> str | None:
    """Why ``node`` cannot be an instruction of a fused program (its shapes aside), or None."""
    n = node.prim.name
    if getattr(node.prim, "stateful", False) or (node.attrs and node.attrs.get("_graphs")):
        return "it is stateful or has subgraphs"
    if not isinstance(node.outputs, Tensor):
        return "it has several outputs"
    out = node.outputs
    ins = node.inputs
    if any(not isinstance(t, Tensor) for t in ins):
        return "an input is not a tensor"
    if any(t._dev is not node.dev for t in ins) or out._dev is not node.dev:
        return "its inputs are on another device"
    dts = [t._dtype for t in ins]
    if n == "cast":
        if {dts[0], out._dtype} != {F32, F64}:
            return f"a cast from {dts[0].name} to {out._dtype.name} (only float32 <-> float64 fuse)"
        return None
    if n == "select":
        if dts[0] is not BOOL or dts[1] is not dts[2] or dts[1] not in _REG_DTYPES:
            return f"a select over {dts[1].name} (only float32, float64 and bool fuse)"
        return None
    op = _UN.get(n) or _BI.get(n)
    if op is None:
        return "it is not element-wise"
    arity = 1 if n in _UN else 2
    dt = dts[0]
    if dt not in _REG_DTYPES:
        return f"its dtype {dt.name} has no fused loop (only float32, float64 and bool)"
    if dt.name not in kernels.elementwise_dtypes(op, arity):
        return f"{op} has no {dt.name} loop"
    if arity == 1 and n in _PARAM and not node.attrs:
        return "its parameter is missing"
    if arity == 1 and n not in _PARAM and node.attrs:
        return f"it has attributes {sorted(node.attrs)}"
    return None


def _is_scalar(t) -> bool:
    return t._size == 1 and None not in tuple(t._shape)


def _period(t, shape) -> int | None:
    """How ``t`` broadcasts to ``shape`` in a fused kernel: 0 when it has that shape, p when it repeats every p
    elements (1: a scalar; a bias: its size, when its shape, leading 1s aside, is ``shape``'s last dimensions),
    None when it broadcasts another way."""
    s = tuple(t._shape)
    if s == shape:
        return 0
    if None in s or len(s) > len(shape):
        return None
    core = s
    while core and core[0] == 1:
        core = core[1:]
    if not core:
        return 1
    if tuple(shape[len(shape) - len(core):]) != core:
        return None
    p = 1
    for d in core:
        p *= d
    return p


def _fits(node, shape) -> str | None:
    """Whether every tensor of ``node`` has ``shape`` or repeats along its leading dimensions (a scalar, a bias)."""
    if tuple(node.outputs._shape) != shape:
        return f"its output shape {tuple(node.outputs._shape)} is not the group's {shape}"
    for t in node.inputs:
        s = tuple(t._shape)
        if _period(t, shape) is not None:
            continue
        return (f"it broadcasts {s} to {shape} (only scalars and tensors of the last dimensions broadcast in a fused "
                f"kernel)")
    return None


# ---- the pass ------------------------------------------------------------------------------------------

def fuse(graph, outputs, jit_compile: bool = False) -> int:
    """Replace each group of fusable element-wise nodes of ``graph`` by one ``fused_elementwise`` node.

    ``graph.nodes`` changes in place (``graph.unfused_nodes`` keeps the list before); returns the number
    of fused nodes made.  With ``jit_compile`` every element-wise node must end in a fused kernel (a lone
    one too), or this raises ``InvalidArgumentError`` naming the op and why it could not be fused.
    """
    nodes = list(graph.nodes)
    graph.unfused_nodes = nodes
    producer = {}
    for i, node in enumerate(nodes):
        for o in (node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)):
            producer[id(o)] = i
    # uses outside any group decide the outputs; the graph's outputs and replaced tensors count as uses
    external_ids = {id(t) for t in outputs if isinstance(t, Tensor)}
    for _, t in getattr(graph, "replaced", {}).values():
        if isinstance(t, Tensor):
            external_ids.add(id(t))
    consumers: dict = {}
    for i, node in enumerate(nodes):
        for t in node.inputs:
            if isinstance(t, Tensor):
                consumers.setdefault(id(t), []).append(i)
    # live nodes (what Plan keeps): only those are fused
    needed = set(external_ids)
    live = [False] * len(nodes)
    from .function import _stateful

    for i in range(len(nodes) - 1, -1, -1):
        node = nodes[i]
        outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
        if _stateful(node) or any(id(o) in needed for o in outs):
            live[i] = True
            needed.update(id(t) for t in node.inputs if isinstance(t, Tensor))
    # stateful nodes and variable reads keep their order (a read before or after an update): each depends on
    # the one before it, for the cycle check and for the order of the fused graph
    ordered = [i for i, node in enumerate(nodes) if _ordered(node)]
    prev_ordered = {b: a for a, b in zip(ordered, ordered[1:])}
    reasons = {}
    ok = [False] * len(nodes)
    for i, node in enumerate(nodes):
        if live[i] and is_elementwise(node):
            r = _why_not(node) or _fits(node, tuple(node.outputs._shape))
            ok[i] = r is None
            reasons[i] = r
    group = list(range(len(nodes)))  # union-find over node indices
    members = {i: [i] for i in range(len(nodes)) if ok[i]}

    def find(i):
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    def reaches_outside(a_set, b_set, lo):
        """A path from a member of ``a_set`` to a member of ``b_set`` through a node outside both, in the graph
        where the groups made so far are one node each (a path may enter a group at one member and leave it
        at another)."""
        both = a_set | b_set
        stack = [producer[id(t)] for j in b_set for t in nodes[j].inputs
                 if isinstance(t, Tensor) and id(t) in producer and producer[id(t)] not in both]
        seen = set()
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            if k in a_set:
                return True
            r = find(k) if ok[k] else k
            ms = members.get(r, (k,))
            if ms[-1] < lo:  # the whole group (or node) comes before both: it cannot follow a member of a_set
                continue
            seen.update(ms)
            stack.extend(producer[id(t)] for m in ms for t in nodes[m].inputs
                         if isinstance(t, Tensor) and id(t) in producer)
            stack.extend(prev_ordered[m] for m in ms if m in prev_ordered)
        return False

    for i, node in enumerate(nodes):
        if not ok[i]:
            continue
        shape = tuple(node.outputs._shape)
        for t in node.inputs:
            j = producer.get(id(t))
            if j is None or not ok[j]:
                continue
            gi, gj = find(i), find(j)
            if gi == gj or tuple(nodes[gj].outputs._shape) != shape or nodes[gj].dev is not node.dev:
                continue
            if len(members[gi]) + len(members[gj]) > MAX_GROUP:
                continue
            a, b = set(members[gj]), set(members[gi])
            lo = min(min(a), min(b))
            if reaches_outside(a, b, lo) or reaches_outside(b, a, lo):
                continue
            group[gi] = gj
            members[gj] = sorted(members[gj] + members.pop(gi))
    # reductions of a group's output over all its axes join the group: the kernel accumulates them as it goes
    reds: dict = {}
    for i, node in enumerate(nodes):
        if live[i] and node.prim.name in _RED and len(node.inputs) == 1 and not _stateful(node):
            j = producer.get(id(node.inputs[0]))
            if j is not None and ok[j] and _full_reduction(node):
                reds.setdefault(find(j), []).append(i)
    fused_at = {}
    count = 0
    for root, ms in members.items():
        rs = reds.get(root, [])
        if len(ms) + len(rs) < 2 and not jit_compile:
            continue
        fnode = _fused_node([nodes[k] for k in ms], consumers, external_ids, set(ms) | set(rs),
                            [nodes[k] for k in rs])
        fused_at[max(ms + rs)] = fnode
        for k in ms + rs:
            fused_at.setdefault(k, None)
        count += 1
    if jit_compile:
        for i, r in reasons.items():
            if r is not None:
                node = nodes[i]
                at = f" (created at {node.where})" if node.where else ""
                raise InvalidArgumentError(
                    f"tf.function(jit_compile=True): {node.prim.tf_name} ({node.prim.name}){at} cannot be compiled "
                    f"into a fused kernel: {r}; allowed: float32/float64 element-wise ops over tensors of one shape "
                    f"and scalars (or jit_compile=False)", node.prim.tf_name)
    if not count:
        return 0
    graph.nodes = _toposort(nodes, fused_at)
    return count


#: the reductions a fused kernel ends in: primitive -> reduce.h's code
_RED = {"reduce_sum": kernels.REDUCE_CODES["sum"], "reduce_prod": kernels.REDUCE_CODES["prod"],
        "reduce_mean": kernels.REDUCE_CODES["mean"], "reduce_max": kernels.REDUCE_CODES["max"],
        "reduce_min": kernels.REDUCE_CODES["min"]}


def _full_reduction(node) -> bool:
    """Whether reduction ``node`` reduces its float32/float64 input over every axis (to one value)."""
    x, out = node.inputs[0], node.outputs
    a = node.attrs or {}
    return (isinstance(x, Tensor) and isinstance(out, Tensor) and x._dtype in (F32, F64) and out._dtype is x._dtype
            and x._dev is node.dev and set(a.get("axis", ())) == set(range(len(x._shape)))
            and len(a.get("axis", ())) == len(x._shape))


def _ordered(node) -> bool:
    """A node whose place among the other such nodes is part of the program: stateful, or a variable read."""
    from .function import _stateful

    return _stateful(node) or bool(node.attrs and "var" in node.attrs)


def _dependencies(nodes) -> tuple:
    """The dependency graph of ``nodes`` (graph nodes), by index: ``deps[k]``, the set of nodes node ``k`` must
    follow (the producers of its inputs among ``nodes``; for a stateful node or a variable read, also the one such
    node before it in the list: their order is kept), and ``users[k]``, the nodes that must follow it, in order.
    The graph orderings (this pass's, and ``function.Plan``'s clustering of the executor's kernels) schedule over
    it."""
    made = {}
    for k, node in enumerate(nodes):
        for o in (node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)):
            made[id(o)] = k
    deps = [set() for _ in nodes]
    users = [[] for _ in nodes]
    last = None
    for k, node in enumerate(nodes):
        pre = [made.get(id(t)) for t in node.inputs]
        if _ordered(node):  # after the stateful node or variable read before it
            pre.append(last)
            last = k
        for j in pre:
            if j is not None and j != k and j not in deps[k]:
                deps[k].add(j)
                users[j].append(k)
    return deps, users


def _toposort(nodes, fused_at):
    """The nodes with each group replaced by its fused node, in an order where producers come first."""
    items = []  # (node, original position)
    for i, node in enumerate(nodes):
        if i in fused_at:
            if fused_at[i] is not None:
                items.append(fused_at[i])
        else:
            items.append(node)
    deps, users = _dependencies(items)
    import heapq

    ready = [k for k in range(len(items)) if not deps[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(items[k])
        for u in users[k]:
            deps[u].discard(k)
            if not deps[u]:
                heapq.heappush(ready, u)
    if len(order) != len(items):  # cannot happen: groups are merged only without a path through the outside
        raise AssertionError("element-wise fusion made a cycle")
    return order


def _fused_node(group, consumers, external_ids, idx, reductions=()):
    """One ``fused_elementwise`` node for ``group`` (nodes in graph order) ending in ``reductions`` (full
    reductions of group members' outputs)."""
    produced = {}
    for k, node in enumerate(group):
        produced[id(node.outputs)] = k
    inputs, reg = [], {}
    for node in group:
        for t in node.inputs:
            if id(t) not in produced and id(t) not in reg:
                reg[id(t)] = len(inputs)
                inputs.append(t)
    shape = tuple(group[-1].outputs._shape)
    program, params = [], []
    reg_dtypes = [t._dtype for t in inputs]
    for node in group:
        r = len(reg_dtypes)
        o = node.outputs
        reg[id(o)] = r
        reg_dtypes.append(o._dtype)
        n = node.prim.name
        src = [reg[id(t)] for t in node.inputs] + [0, 0]
        if n == "cast":
            ins = (CAST, 0, node.inputs[0]._dtype.code, r, src[0], 0, 0)
        elif n == "select":
            ins = (SELECT, 0, node.inputs[1]._dtype.code, r, src[0], src[1], src[2])
        elif n in _UN:
            ins = (UNARY, kernels.UNARY_CODES[_UN[n]], node.inputs[0]._dtype.code, r, src[0], 0, 0)
        else:
            ins = (BINARY, kernels.BINARY_CODES[_BI[n]], node.inputs[0]._dtype.code, r, src[0], src[1], 0)
        program.append(ins)
        params.append(_PARAM[n](node.attrs) if n in _PARAM else 0.0)
    outs = []
    for node in group:
        o = node.outputs
        if id(o) in external_ids or any(u not in idx for u in consumers.get(id(o), ())):
            outs.append(o)
    red = tuple((reg[id(rn.inputs[0])], _RED[rn.prim.name], tuple(rn.outputs._shape)) for rn in reductions)
    attrs = {
        "program": tuple(program), "params": tuple(params), "reg_dtypes": tuple(d.code for d in reg_dtypes),
        "period": tuple(_period(t, shape) for t in inputs),
        "out_regs": tuple(reg[id(o)] for o in outs), "shape": shape,
        "text": _text(group, inputs, outs, reg, consumers, idx, reductions),
        "nodes": tuple(group) + tuple(reductions),
        "red": red,
    }
    outs = outs + [rn.outputs for rn in reductions]
    last = reductions[-1] if reductions else group[-1]
    return Node(FUSED, tuple(inputs), outs[0] if len(outs) == 1 else tuple(outs), attrs, last.where, last.dev)


def _text(group, inputs, outs, reg, consumers, idx, reductions=()):
    """The program as expressions: inputs ``$0, $1, ...`` (scalar constants by value), a temporary used
    twice named once (``t3 = ...;``)."""
    expr = {}
    for k, t in enumerate(inputs):
        if t._h is not None and t._size == 1:
            v = t.numpy().reshape(()).item()
            expr[id(t)] = repr(v)
        else:
            expr[id(t)] = f"${k}"
    lets = []
    outset = {id(o) for o in outs}
    for node in group:
        n = node.prim.name
        args = [expr[id(t)] for t in node.inputs]
        if n == "cast":
            e = f"cast<{node.outputs._dtype.name}>({args[0]})"
        elif n in _PARAM:
            e = f"{n}({args[0]}, {_PARAM_TEXT[n](node.attrs)})"
        else:
            e = f"{n}({', '.join(args)})"
        o = node.outputs
        uses = sum(1 for u in consumers.get(id(o), ()) if u in idx)
        if uses > 1 and id(o) not in outset:
            name = f"t{reg[id(o)]}"
            lets.append(f"{name} = {e}")
            e = name
        expr[id(o)] = e
    body = [expr[id(o)] for o in outs] + [f"{rn.prim.name}({expr[id(rn.inputs[0])]})" for rn in reductions]
    return "; ".join(lets + [", ".join(body)])


# ---- the primitive ---------------------------------------------------------------------------------------

def _infer(*inputs, program, params, reg_dtypes, period, out_regs, shape, text, nodes, red=()):
    specs = [(shape, _dt.from_code(reg_dtypes[r])) for r in out_regs]
    specs += [(rshape, _dt.from_code(reg_dtypes[r])) for r, _, rshape in red]
    return specs if len(specs) > 1 else specs[0]


def _run_unfused(dev, inputs, nodes):
    """The group's nodes one by one (the shapes met at run time are not the fused kernel's): the value of
    each node's output by its id."""
    env = {}
    n = 0
    for node in nodes:  # the fused node's inputs are the nodes' outside inputs in order of first use
        for t in node.inputs:
            if id(t) not in env and all(id(t) != id(m.outputs) for m in nodes):
                env[id(t)] = inputs[n]
                n += 1
    for node in nodes:
        vals = tuple(env.get(id(t), t) for t in node.inputs)
        env[id(node.outputs)] = node.prim.impl(dev, *vals, **node.attrs) if node.attrs else node.prim.impl(dev, *vals)
    return env


@primitive("fused_elementwise", "FusedElementwise", infer=_infer,
           internal="made by graph_opt's element-wise fusion pass from ops of a traced graph")
def _fused(dev, *inputs, program, params, reg_dtypes, period, out_regs, shape, text, nodes, red=()):
    be = dev.backend
    prep = _PREPARED.get((id(program), id(be)))
    if prep is None or prep[0] is not program:
        prep = _prepare(be, program, params, reg_dtypes, period, out_regs, red, shape)
    _, args, out_dts, red_dts, first = prep
    run_shape = shape if first is None else inputs[first]._shape
    if run_shape != shape or None in shape:
        run_shape = tuple(run_shape)
        if None in run_shape or any(
                _period(t, run_shape) != (0 if not p else 1 if t._size == 1 else p) for t, p in zip(inputs, period)):
            env = _run_unfused(dev, inputs, nodes)  # unknown dimensions that broadcast when the graph runs
            n_in = len(reg_dtypes) - len(program)  # registers below are the inputs, then one per node
            outs = tuple(env[id(nodes[r - n_in].outputs)] for r in out_regs)
            outs += tuple(env[id(rn.outputs)] for rn in nodes[len(program):])
            return outs if len(outs) > 1 else outs[0]
    size = 1
    for d in run_shape:
        size *= d
    alloc = be.alloc
    hs, res = [], []
    for dt in out_dts:
        h, host = alloc(run_shape, dt.np)
        hs.append(h)
        res.append(make(h, host, run_shape, dt, dev, size))
    ins = [t._h for t in inputs]
    rhs = []
    for (_, _, rshape), dt in zip(red, red_dts):
        h, host = alloc(rshape, dt.np)
        rhs.append(h)
        res.append(make(h, host, rshape, dt, dev, 1))
    p, pa, nin, nr, rd, per, orr, nout, ro, rr, nred = args
    check(be.fused_eval_reduce(p, pa, nin, nr, rd, ins, per, len(ins), hs, orr, nout, ro, rr, rhs, nred, size),
          "fused_eval_reduce")
    return tuple(res) if len(res) > 1 else res[0]


#: (id(program), id(backend)) -> the kernel's arguments that do not change from call to call (on the CPU:
#: C arrays made once), held with the program they were made for
_PREPARED: dict = {}


#: programs of fewer elements are interpreted (compiling costs ~0.5 s once; the interpreter is as fast on a few
#: tiles)
CODEGEN_MIN_SIZE = 1 << 15
#: program signature -> whether a generated kernel serves it
_GENERATED: dict = {}


def _codegen(be, attrs) -> bool:
    """On the CPU, with ``fusion_codegen`` on: generate, compile (or find in the disk cache) and register the C
    kernel of fused program ``attrs`` (two instructions or more, or one and a reduction, and at least
    ``CODEGEN_MIN_SIZE`` elements when the size is known); whether one serves it.  Without a usable compiler
    the interpreter runs."""
    from .graph_opt import OPTIONS

    program, red = attrs["program"], attrs.get("red", ())
    if not OPTIONS.get("fusion_codegen", True) or getattr(be, "name", None) != "cpu" or \
            not hasattr(getattr(be, "lib", None), "tpfgen_register") or len(program) + len(red) < 2:
        return False
    size = 1
    for d in attrs["shape"]:
        size = size * d if d is not None and size is not None else None
    if size is not None and size < CODEGEN_MIN_SIZE:
        return False
    key = _codegen_key(attrs)
    done = _GENERATED.get(key)
    if done is None:
        from tapeflow.kernels import codegen

        codegen_switch(True)
        done = _GENERATED[key] = codegen.register(be, *_codegen_args(key))
    return done


def _codegen_key(attrs) -> tuple:
    """What a generated kernel depends on: the instructions, the registers' dtypes, which inputs are scalars, the
    output and reduced registers."""
    period = tuple(1 if p == 1 else 0 for p in attrs["period"])
    return (attrs["program"], attrs["reg_dtypes"], period, attrs["out_regs"],
            tuple(r for r, _, _ in attrs.get("red", ())))


def _codegen_args(key) -> tuple:
    """``codegen.register``'s arguments (after the backend) for signature ``key``."""
    program, reg_dtypes, period, out_regs, red_regs = key
    return ([v for ins in program for v in ins], len(reg_dtypes), list(reg_dtypes), list(period), len(period),
            list(out_regs), list(red_regs))


def codegen_switch(on: bool):
    """Turn the CPU's generated fused kernels on or off (``fusion_codegen``): off, every program is interpreted."""
    from tapeflow import kernels

    try:
        be = kernels.get_backend("cpu")
    except Exception:  # noqa: BLE001 (no CPU library: nothing to switch)
        return
    from .graph_opt import OPTIONS

    be.lib.tpfgen_enable(1 if (on and OPTIONS.get("fusion_codegen", True)) else 0)


def _prepare(be, program, params, reg_dtypes, period, out_regs, red, shape):
    _codegen(be, {"program": program, "red": red, "shape": shape, "reg_dtypes": reg_dtypes, "period": period,
                  "out_regs": out_regs})
    flat = [v for ins in program for v in ins]
    args = [flat, list(params), len(program), len(reg_dtypes), list(reg_dtypes), list(period),
            list(out_regs), len(out_regs), [c for _, c, _ in red], [r for r, _, _ in red], len(red)]
    if getattr(be, "name", None) == "cpu":
        ffi = be.ffi
        for i, ctype in ((0, "int32_t[]"), (1, "double[]"), (4, "int32_t[]"), (5, "int64_t[]"), (6, "int32_t[]"),
                         (8, "int32_t[]"), (9, "int32_t[]")):
            args[i] = ffi.new(ctype, args[i] or [0])
    first = next((k for k, p in enumerate(period) if not p), None)
    prep = (program, tuple(args), [_dt.from_code(reg_dtypes[r]) for r in out_regs],
            [_dt.from_code(reg_dtypes[r]) for r, _, _ in red], first)
    if len(_PREPARED) > 4096:
        _PREPARED.clear()
    _PREPARED[(id(program), id(be))] = prep
    return prep


FUSED = PRIMITIVES["fused_elementwise"]


# ---- the sparse softmax cross-entropy's gradient: one kernel ------------------------------------------------

def xent_backprop(nodes) -> list:
    """``nodes`` with each ``subtract(softmax(x), one_hot(y))`` (the gradient a traced sparse softmax
    cross-entropy's rule writes: softmax over the last axis, a one-hot of depth ``x``'s classes, 1 and 0, ``x``'s
    dtype) replaced by one ``sparse_softmax_xent_backprop(y, x)`` node, when the graph computes
    ``sparse_softmax_cross_entropy_with_logits(y, x)`` too (whose check of the labels it shares): the
    cross-entropy kernel's gradient output, one pass over the logits instead of three ops (float32/float64 on
    the CPU, where the kernel gives the same bits).  The softmax and one-hot nodes are left for dead-code
    elimination."""
    made = {}
    for node in nodes:
        for o in (node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)):
            made[id(o)] = node
    fwd = {(id(n.inputs[0]), id(n.inputs[1])) for n in nodes
           if n.prim.name == "sparse_softmax_cross_entropy_with_logits" and len(n.inputs) == 2}
    if not fwd:
        return nodes
    out = []
    for node in nodes:
        if node.prim.name == "subtract" and len(node.inputs) == 2 and isinstance(node.outputs, Tensor):
            a, b = (made.get(id(t)) for t in node.inputs)
            if a is not None and b is not None and a.prim.name == "softmax" and b.prim.name == "one_hot" and \
                    len(a.inputs) == 1 and len(b.inputs) == 1 and (id(b.inputs[0]), id(a.inputs[0])) in fwd and \
                    _is_xent_gradient(node, a, b):
                out.append(Node(XENT_BACKPROP, (b.inputs[0], a.inputs[0]), node.outputs, {}, node.where, node.dev))
                continue
        out.append(node)
    return out


def _is_xent_gradient(node, sm, oh) -> bool:
    x, y = sm.inputs[0], oh.inputs[0]
    rank = len(x._shape)
    a, h = sm.attrs or {}, oh.attrs or {}
    try:
        unit = float(h.get("on_value")) == 1.0 and float(h.get("off_value")) == 0.0
    except (TypeError, ValueError):
        return False
    return (x._dtype in (F32, F64) and y._dtype in (_dt.int32, _dt.int64) and rank >= 1
            and getattr(node.dev.backend, "name", None) == "cpu"
            and all(t._dev is node.dev for t in (x, y, node.inputs[0], node.inputs[1]))
            and a.get("axis") in (-1, rank - 1) and h.get("axis") in (-1, rank - 1) and unit
            and h.get("dtype") is x._dtype and x._shape[-1] is not None and h.get("depth") == x._shape[-1]
            and tuple(y._shape) == tuple(x._shape[:-1]) and node.outputs._dtype is x._dtype
            and tuple(node.outputs._shape) == tuple(x._shape))


@primitive("sparse_softmax_xent_backprop", "SparseSoftmaxCrossEntropyWithLogits",
           infer=lambda y, x: (x._shape, x._dtype),
           internal="made by the fusion pass from softmax(logits) - one_hot(labels) beside a sparse softmax "
                    "cross-entropy of the same tensors: that kernel's gradient output")
def _xent_backprop(dev, y, x):
    be = dev.backend
    classes = x._shape[-1]
    loss_h, _ = be.alloc(tuple(y._shape), x._dtype.np)  # (the loss: scratch)
    h, host = be.alloc(tuple(x._shape), x._dtype.np)
    bad = be.new_int64([0, 0])
    st = be.sparse_softmax_xent(x._dtype.code, y._dtype.code, y._h, x._h, loss_h, h, y._size, classes, bad)
    if st == kernels.ERANGE:  # (the cross-entropy node of the same labels says it too)
        raise InvalidArgumentError(f"labels[{int(bad[0])}] = {int(bad[1])} is not in [0, {classes}) (logits has "
                                   f"{classes} classes)", "SparseSoftmaxCrossEntropyWithLogits")
    check(st, "sparse_softmax_xent")
    return make(h, host, x._shape, x._dtype, dev, x._size)


XENT_BACKPROP = PRIMITIVES["sparse_softmax_xent_backprop"]


def kernel_program(node):
    """The fused program (``fused_elementwise``'s attributes) that computes plan step ``node`` when all its
    shapes are known: a fused node's own, a lone element-wise op's as a program of one instruction (the same
    loop as the op's kernel, so the same bits); None for any other step."""
    if node.prim.name == "fused_elementwise":
        attrs = node.attrs
    elif is_elementwise(node) and _why_not(node) is None and None not in tuple(node.outputs._shape) \
            and _fits(node, tuple(node.outputs._shape)) is None:
        attrs = _fused_node([node], {}, {id(node.outputs)}, {0}).attrs
    else:
        return None
    if None in attrs["shape"] or any(None in tuple(t._shape) for t in node.inputs):
        return None
    _codegen(node.dev.backend, attrs)
    return attrs


def _ty(t) -> str:
    return f"{t._dtype.name}[{','.join('?' if d is None else str(d) for d in t._shape)}]"


def kernel_info(node, graph=None) -> dict:
    """What ``ConcreteFunction.fused_kernels()`` shows of fused node ``node``: its program (inputs that are the
    graph's inputs by name, others as ``$k``), inputs, outputs and, on a GPU, the generated source."""
    import re

    names = {}
    if graph is not None:
        names = {id(t): n for t, n in zip(graph.inputs, graph.input_names)}
    ins = node.inputs
    text = re.sub(r"\$(\d+)", lambda m: names.get(id(ins[int(m.group(1))]), m.group(0)), node.attrs["text"])
    outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
    info = {"program": text, "inputs": [_ty(t) for t in ins], "outputs": [_ty(o) for o in outs]}
    source = getattr(node.dev.backend, "fused_source", None)
    if source is not None:
        a = node.attrs
        regs = list(a["out_regs"]) + [r for r, _, _ in a.get("red", ())]  # (a reduced register: to scratch)
        info["source"] = source([v for i in a["program"] for v in i], list(a["params"]), len(a["program"]),
                                len(a["reg_dtypes"]), list(a["reg_dtypes"]), list(a["period"]),
                                len(ins), regs, len(regs))
    elif _GENERATED.get(_codegen_key(node.attrs)):  # the CPU's generated C
        from tapeflow.kernels import codegen

        info["source"] = codegen.kernel_source(*_codegen_args(_codegen_key(node.attrs)), "tpfgen_kernel")
    return info
