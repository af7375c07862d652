"""Why is my gradient None?  A walk over what a tape recorded, naming the cause."""
from __future__ import annotations

from tapeflow.core.dispatch import REGISTRY
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

from .registry import GRADIENTS


def _what(x) -> str:
    if isinstance(x, Variable):
        return f"variable {x.name!r}"
    return f"a {x._dtype.name} tensor of shape {tuple(x._shape)}"


def _outs(out):
    return (out,) if type(out) is Tensor else tuple(out)


def _blocker(op, out) -> str | None:
    """Why gradients cannot pass through this recorded op (None when they can)."""
    if op == "stop_gradient":
        return "stop_gradient (it blocks gradients by definition)"
    d = REGISTRY.get(op)
    if d is not None and d.nondiff:
        return f"{op} ({d.tf_name}), which has no gradient: {d.nondiff}"
    if op not in GRADIENTS and op not in REGISTRY:
        return f"{op}, which has no registered gradient"
    bad = [o for o in _outs(out) if not o._dtype.is_floating]
    if bad and len(bad) == len(_outs(out)):
        return f"{op}, whose output is {bad[0]._dtype.name} (gradients flow only through floating-point tensors)"
    return None


def explain(state, target, source) -> str:
    """A sentence on why ``d target / d source`` is None, from a tape's recorded state."""
    ops, tracked, _watched, watched_vars, vars_, auto = state
    tgt = target._value if isinstance(target, Variable) else target
    if not isinstance(tgt, Tensor):
        raise TypeError(f"explain() needs the target tensor; got {type(target).__name__}")
    if not isinstance(source, (Tensor, Variable)):
        raise TypeError(f"explain() needs a source tensor or variable; got {type(source).__name__}")
    what = _what(source)
    dtype = source.dtype
    head = "no gradient: "
    if not dtype.is_floating:
        return (f"{head}the source ({what}) has dtype {dtype.name}; gradients are defined only for floating-point "
                f"tensors. Cast it first (tf.cast(x, tf.float32)) and compute from the float tensor.")
    if not tgt._dtype.is_floating:
        return (f"{head}the target has dtype {tgt._dtype.name}; only a floating-point target has a gradient. "
                f"Compute the loss in floating point (cast before, not after, the last op).")
    # the tensors that stand for the source on this tape
    if isinstance(source, Variable):
        ids = {id(v) for v in vars_.get(source, ())}
        if not ids:
            if source not in watched_vars and not source.trainable:
                return (f"{head}the source ({what}) is not trainable, so the tape does not watch it when it is "
                        f"read; call tape.watch({_short_name(source)}) or create it with trainable=True.")
            if source not in watched_vars and not auto:
                return (f"{head}the tape was created with watch_accessed_variables=False and the source ({what}) "
                        f"was never passed to tape.watch(); call tape.watch(v) inside the `with` block.")
            return (f"{head}the source ({what}) was never read while the tape was recording: it was used only "
                    f"before the tape started (or after it stopped, or inside stop_recording()). Compute with "
                    f"it inside the tape's `with` block.")
    else:
        k = id(source)
        if k not in tracked:
            return (f"{head}the source ({what}) was never watched by this tape. Tensors are not watched "
                    f"automatically (only trainable variables are): call tape.watch(x) inside the `with` block "
                    f"before computing with x.")
        ids = {k}
    consumers = [i for i, e in enumerate(ops) if any(id(t) in ids for t in e[1])]
    if not consumers and id(tgt) not in ids:
        return (f"{head}the source ({what}) is watched, but no op recorded on this tape used it: the "
                f"computation of the target from it ran before the tape started (or outside its `with` block, "
                f"or inside stop_recording()). Compute the target inside the tape's `with` block, after watching.")
    if id(tgt) in ids:
        return f"the gradient is not None: the target is the source itself ({what})."
    if id(tgt) not in tracked:
        return (f"{head}the target was not produced by an op this tape recorded: it was computed before the tape "
                f"started, after it stopped, inside stop_recording(), or from a NumPy/Python copy of a tensor "
                f"(e.g. tf.constant(x.numpy()), float(x)), which cuts the recording.")
    # ancestors of the target over the recorded ops
    producer = {}
    for i, (op, ins, out, attrs) in enumerate(ops):
        for o in _outs(out):
            producer[id(o)] = i
    anc = {id(tgt)}
    on_path = set()
    for i in range(len(ops) - 1, -1, -1):
        _op, ins, out, _attrs = ops[i]
        if any(id(o) in anc for o in _outs(out)):
            on_path.add(i)
            anc.update(id(t) for t in ins)
    if not ids & anc:
        return (f"{head}the target does not depend on the source ({what}) through the ops this tape recorded: "
                f"the source's values reached the target only through a copy (NumPy, Python number) or not at "
                f"all.")
    # descendants of the source, ignoring and then honouring blockers
    desc, free = set(ids), set(ids)
    blockers = {}
    for i in range(len(ops)):
        op, ins, out, _attrs = ops[i]
        ins_ids = [id(t) for t in ins]
        if any(k in desc for k in ins_ids):
            desc.update(id(o) for o in _outs(out))
            if i in on_path:
                why = _blocker(op, out)
                if why is not None and any(k in free for k in ins_ids):
                    blockers.setdefault(why, None)
        if any(k in free for k in ins_ids) and _blocker(op, out) is None:
            free.update(id(o) for o in _outs(out) if o._dtype.is_floating)
    if id(tgt) in free:
        customs = sorted({ops[i][0] for i in on_path if ops[i][0] == "custom_gradient"})
        extra = (" If it still comes back None, a custom_gradient on the path returned None for this input."
                 if customs else "")
        return (f"the gradient is not None: the target depends on the source ({what}) through "
                f"{len(on_path)} recorded ops whose gradients are defined.{extra}")
    names = "; ".join(blockers) or "an op without a gradient"
    return (f"{head}every path from the source ({what}) to the target passes through an op gradients cannot "
            f"cross: {names}.")


def _short_name(v) -> str:
    return v.name.split(":")[0] if isinstance(v, Variable) else "x"
