"""``tf.saved_model.save``: each signature of a model, traced by ``tf.function``, as an ONNX model.

The manifest format (read by load.py) is defined here, once: ``MANIFEST`` in the export directory is JSON
``{"format": FORMAT, "format_version": FORMAT_VERSION, "tapeflow_version": ..., "opset": OPSET,
"default_signature": name, "signatures": {name: manifest_entry(...)}, "variables": [{"name", "trainable"}]}``,
where an entry is ``{"file": "<name>.onnx", "inputs": [{"name", "dtype", "shape"}], "outputs": [{"name", "dtype",
"shape"}], "output_structure": ..., "output_nest": ..., "trainable_variables": [...], "non_trainable_variables":
[...], "variable_keys": {...}}`` (shapes with ``null`` for free dimensions; ``output_structure`` is the output names
nested as the function returned them: a name, a list, or a dict of them; ``output_nest`` the same structure
exactly, tuples and namedtuples included (:func:`nest_entry`); ``*_variables`` name the initializers that are the
model's variables, the top-level ``variables`` in their order; ``variable_keys`` maps an initializer to its name
there where the two differ; a loader shares one variable between signatures by that name).

>>> import os, json, tempfile, tapeflow as tf
>>> m = tf.Module()
>>> m.f = tf.function(lambda x: {"y": tf.nn.relu(x)}, input_signature=[tf.TensorSpec([None, 3], name="x")])
>>> d = os.path.join(tempfile.mkdtemp(), "m")
>>> tf.saved_model.save(m, d, signatures={"relu": m.f})
>>> info = json.load(open(os.path.join(d, "tapeflow_saved_model.json")))
>>> info["signatures"]["relu"]["inputs"], info["signatures"]["relu"]["output_structure"]
([{'name': 'x', 'dtype': 'float32', 'shape': [None, 3]}], {'y': 'y'})
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from typing import Any

import numpy as np

from .. import errors, nest
from ..function import ConcreteFunction, Function, _Slot, _lifted_of, _stateful
from ..tensor import Tensor
from ..tensor_spec import TensorSpec
from . import onnx_ops

__all__ = ["save", "MANIFEST", "FORMAT", "FORMAT_VERSION", "OPSET", "DEFAULT_SIGNATURE", "manifest_entry"]

#: the manifest's file name in an export directory
MANIFEST = "tapeflow_saved_model.json"
FORMAT = "tapeflow-saved-model-onnx"
FORMAT_VERSION = 1
#: the ONNX opset the models are written for (the default domain)
OPSET = 18
#: the signature ``__call__`` and a Keras model export under (TensorFlow's name)
DEFAULT_SIGNATURE = "serving_default"
#: initializers larger than this in all (bytes) go to an external data file next to the model (protobuf's 2 GB)
EXTERNAL_DATA_BYTES = 2 ** 31 - 2 ** 24

_PIP = "pip install 'tapeflow-core[onnx]'"


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError(f"tf.saved_model.save writes ONNX models and needs the onnx package, which is not "
                          f"installed: {_PIP}") from None
    return onnx


# ---- the graph walk -------------------------------------------------------------------------------

def _outs(node) -> tuple:
    return node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)


def _shape_list(shape) -> list:
    return [None if d is None else int(d) for d in shape]


class Emitter:
    """Builds one ONNX graph (and its subgraphs) from traced nodes: the converters of onnx_ops call
    :meth:`node`, :meth:`const` and :meth:`i64`; tensors get their ONNX names in :attr:`names` (by id)."""

    def __init__(self, onnx, signature, fname, var_names=None) -> None:
        self.onnx, self.helper = onnx, onnx.helper
        self.var_names = var_names or {}  # id(variable) -> its name in the saved model (shared by signatures)
        self.var_inits: list = []  # (initializer name, variable), in first-use order
        self.signature, self.fname = signature, fname
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict = {}
        self.lifted: dict = {}
        self._consts: dict = {}  # id(tensor or variable) -> initializer name (kept alive in _held)
        self._held: list = []
        self._used: set = set()
        self._n = 0
        self._current = None  # the traced node being converted
        self.origin: dict = {}  # ONNX op type -> the traced nodes that emitted one (for type errors)

    # -- names and constants
    def fresh(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def unique(self, name: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_./-]", "_", name) or "t"
        out, k = base, 1
        while out in self._used:
            k += 1
            out = f"{base}_{k}"
        self._used.add(out)
        return out

    def onnx_dtype(self, name: str) -> int:
        return onnx_dtype(self.onnx, name)

    def tensor_attr(self, array):
        return self.onnx.numpy_helper.from_array(np.asarray(array))

    def const(self, array, hint="const") -> str:
        arr = np.asarray(array)
        name = self.unique(self.fresh(hint))
        self.initializers.append(_initializer(self.onnx, arr, name))
        return name

    def i64(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64), "i64")

    def variable(self, var) -> str:
        name = self._consts.get(id(var))
        if name is None:
            raw = self.var_names.get(id(var)) or getattr(var, "name", "variable").split(":")[0]
            name = self.unique(raw)
            self.initializers.append(_initializer(self.onnx, np.asarray(var.numpy()), name))
            self._consts[id(var)] = name
            self._held.append(var)
            self.var_inits.append((name, var))
        return name

    def name_of(self, t, node=None) -> str:
        n = self.names.get(id(t))
        if n is not None:
            return n
        n = self._consts.get(id(t))
        if n is not None:
            return n
        value = t if t._h is not None else self.lifted.get(id(t))
        if value is None:
            where = f" (input of {node.prim.name} at {node.where})" if node is not None else ""
            raise errors.InternalError(f"signature '{self.signature}': a symbolic tensor{where} is computed by no "
                                       f"node of the graph", "SaveModel")
        name = self.const(value.numpy())
        self._consts[id(t)] = name
        self._held.append(t)
        return name

    def node(self, op_type, inputs, n_out=1, **attrs):
        """Append ONNX node ``op_type`` over ``inputs`` (names); returns its output name (a list for ``n_out > 1``)."""
        if op_type not in onnx_ops.ONNX_OPS:  # the importer maps exactly ONNX_OPS back
            raise errors.InternalError(f"an ONNX converter emitted {op_type}, which onnx_ops.ONNX_OPS does not list",
                                       "SaveModel")
        outs = [self.fresh(op_type) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs, **attrs))
        if self._current is not None:
            self.origin.setdefault(op_type, []).append(self._current)
        return outs[0] if n_out == 1 else outs

    # -- nodes
    def emit(self, nodes):
        for node in nodes:
            conv = onnx_ops.CONVERTERS.get(node.prim.name)
            if conv is None:
                raise self.unsupported(node, onnx_ops.not_exportable_reason(node.prim.name))
            ins = [self.name_of(t, node) for t in node.inputs]
            outer, self._current = self._current, node
            try:
                wide = _widened(node)
                if wide is None:
                    res = conv(self, node, ins)
                else:  # 8- and 16-bit integers computed in int32 (few ONNX ops take them), cast back after
                    i32 = self.onnx_dtype("int32")
                    ins = [self.node("Cast", [n], to=i32) if t._dtype.name in NARROW_INTS else n
                           for n, t in zip(ins, node.inputs)]
                    res = conv(self, wide, ins)
                    res = res if isinstance(res, (tuple, list)) else (res,)
                    res = tuple(self.node("Cast", [r], to=self.onnx_dtype(o._dtype.name))
                                if o._dtype.name in NARROW_INTS else r for r, o in zip(res, _outs(node)))
            except errors.UnimplementedError as e:
                raise self.unsupported(node, e.message) from None
            finally:
                self._current = outer
            outs = _outs(node)
            res = res if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(outs):
                raise errors.InternalError(f"the ONNX converter of {node.prim.name} gave {len(res)} outputs for "
                                           f"{len(outs)}", "SaveModel")
            for o, r in zip(outs, res):
                self.names[id(o)] = r

    def unsupported(self, node, why):
        at = f", created at {node.where}" if node.where else ""
        return errors.UnimplementedError(
            f"cannot export op {node.prim.tf_name} ({node.prim.name}) of signature '{self.signature}' (graph "
            f"function '{self.fname}'{at}) to ONNX: {why}", node.prim.tf_name)

    # -- subgraphs (control flow)
    def _scoped(self, fn):
        saved_names, saved_nodes = self.names, self.nodes
        self.names, self.nodes = dict(saved_names), []
        try:
            out = fn()
            return out, self.nodes
        finally:
            self.names, self.nodes = saved_names, saved_nodes

    def _bind(self, plan, slot, name):
        for k, s in plan.slot.items():
            if s == slot:
                self.names[k] = name

    def _plan_nodes(self, plan):
        return [st[6] for st in plan.steps]

    def _plan_out(self, plan, k) -> str:
        s = plan.outs[k]
        for key, slot in plan.slot.items():
            if slot == s and key in self.names:
                return self.names[key]
        v = plan.template[s] if s < len(plan.template) else None
        if isinstance(v, Tensor):
            return self.name_of(v)
        raise errors.InternalError(f"signature '{self.signature}': output {k} of a subgraph has no value",
                                   "SaveModel")

    def _value_info(self, name, shape, dtype_name):
        return self.helper.make_tensor_value_info(name, self.onnx_dtype(dtype_name), _shape_list(shape))

    def _run_plan(self, plan, bindings, n_out):
        """Emit ``plan``'s nodes with its argument slots bound to ``bindings``; returns its output names."""
        for i, name in enumerate(bindings):
            self._bind(plan, i, name)
        self.emit(self._plan_nodes(plan))
        return [self._plan_out(plan, k) for k in range(n_out)]

    def _graph(self, name, nodes, outs, specs, inputs=()):
        final = []
        for o, (shape, dt) in zip(outs, specs):
            f = self.fresh(f"{name}_out")
            nodes.append(self.helper.make_node("Identity", [o], [f]))
            final.append(self._value_info(f, shape, dt.name))
        return self.helper.make_graph(nodes, self.fresh(name), list(inputs), final)

    def branch(self, node):
        a = node.attrs
        plans, cap_index, specs = a["plans"], a["cap_index"], a["specs"]
        for g in a.get("_graphs") or ():
            self.lifted.update(_lifted_of(g))
        caps = [self.name_of(t, node) for t in node.inputs[1:]]
        selector = self.name_of(node.inputs[0], node)

        def case(i):
            # a branch plan has no inputs: its argument slots are its captures, in order
            return self._run_plan(plans[i], [caps[j] for j in cap_index[i]], len(specs))

        def from_case(i):
            """The outputs of branch i if the selector is i, else of the branches after it (the last: any)."""
            if i == len(plans) - 1:
                outs, nodes = self._scoped(lambda: case(i))
                self.nodes.extend(nodes)
                return outs
            cond = self.node("Equal", [selector, self.const(np.asarray(i, np.int32))])
            outs, nodes = self._scoped(lambda: case(i))
            then_g = self._graph(f"branch_{i}", nodes, outs, specs)
            outs, nodes = self._scoped(lambda: from_case(i + 1))
            else_g = self._graph(f"branches_from_{i + 1}", nodes, outs, specs)
            res = self.node("If", [cond], n_out=len(specs), then_branch=then_g, else_branch=else_g)
            return res if isinstance(res, list) else [res]

        res = from_case(0)
        return tuple(res) if isinstance(node.outputs, tuple) else res[0]

    def while_loop(self, node):
        a = node.attrs
        n = a["n_vars"]
        specs = a["specs"]
        cond_plan, body_plan = a["cond_plan"], a["body_plan"]
        for g in a.get("_graphs") or ():
            self.lifted.update(_lifted_of(g))
        ins = [self.name_of(t, node) for t in node.inputs]
        vals, rest = ins[:n], ins[n:]
        if a["max_iter"] == "input":
            trip = self.node("Cast", [rest[0]], to=self.onnx_dtype("int64"))
            rest = rest[1:]
        elif a["max_iter"] is None:
            trip = ""
        else:
            trip = self.i64(int(a["max_iter"]))
        ccaps, bcaps = rest[:a["n_cond_caps"]], rest[a["n_cond_caps"]:]
        # the condition on the initial values, in the enclosing graph
        (c0,), nodes = self._scoped(lambda: self._run_plan(cond_plan, vals + ccaps, 1))
        self.nodes.extend(nodes)

        it, cin = self.fresh("iter"), self.fresh("cond_in")
        vin = [self.fresh("loop_var") for _ in range(n)]

        def body():
            outs = self._run_plan(body_plan, vin + bcaps, n)
            inner, cnodes = self._scoped(lambda: self._run_plan(cond_plan, outs + ccaps, 1))
            self.nodes.extend(cnodes)
            return [inner[0]] + outs

        outs, nodes = self._scoped(body)
        graph_inputs = [self.helper.make_tensor_value_info(it, self.onnx_dtype("int64"), []),
                        self.helper.make_tensor_value_info(cin, self.onnx_dtype("bool"), None)]
        graph_inputs += [self._value_info(v, s, d.name) for v, (s, d) in zip(vin, specs)]
        from .. import dtypes as _dtypes

        g = self._graph("loop_body", nodes, outs, [((), _dtypes.bool_)] + list(specs), graph_inputs)
        res = self.node("Loop", [trip, c0] + vals, n_out=n, body=g)
        res = res if isinstance(res, list) else [res]
        return tuple(res) if isinstance(node.outputs, tuple) else res[0]


#: integer dtypes most ONNX ops (and ONNX Runtime's kernels) do not take: computed in int32, which keeps
#: tapeflow's wrapping (the low bits of two's complement sums, products and bitwise ops do not depend on the width)
NARROW_INTS = frozenset({"int8", "uint8", "int16"})
#: ops that take any dtype as it is (or whose integer inputs are indices of any width)
_NOT_WIDENED = frozenset({"cast", "identity", "stop_gradient", "copy_to_device", "reshape", "transpose", "shape",
                          "size", "rank", "branch", "while_loop", "read_variable", "fill", "eye", "range"})


class _Typed:
    """A stand-in for a traced tensor, with another dtype (what a converter reads of it)."""

    __slots__ = ("_dtype", "_shape", "_h", "_orig")

    def __init__(self, t, dtype) -> None:
        self._dtype, self._shape, self._h, self._orig = dtype, t._shape, t._h, t


class _Widened:
    """A traced node seen with its 8- and 16-bit integer tensors as int32."""

    __slots__ = ("prim", "inputs", "outputs", "attrs", "where", "dev")

    def __init__(self, node, i32) -> None:
        def w(t):
            return _Typed(t, i32) if t._dtype.name in NARROW_INTS else t
        self.prim, self.attrs, self.where, self.dev = node.prim, node.attrs, node.where, node.dev
        self.inputs = tuple(w(t) for t in node.inputs)
        self.outputs = tuple(w(o) for o in node.outputs) if isinstance(node.outputs, tuple) else w(node.outputs)


def _widened(node):
    if node.prim.name in _NOT_WIDENED:
        return None
    if not any(t._dtype.name in NARROW_INTS for t in tuple(node.inputs) + _outs(node)):
        return None
    from .. import dtypes as _dtypes

    return _Widened(node, _dtypes.int32)


def _initializer(onnx, arr, name):
    if arr.dtype.name == "bfloat16":
        t = onnx.helper.make_tensor(name, onnx.TensorProto.BFLOAT16, arr.shape,
                                    arr.view(np.uint16).tobytes(), raw=True)
        return t
    return onnx.numpy_helper.from_array(np.array(arr, order="C", copy=True), name)


def onnx_dtype(onnx, name: str) -> int:
    """The ONNX TensorProto element type of tapeflow dtype ``name``."""
    tp = onnx.TensorProto
    table = {"float32": tp.FLOAT, "float64": tp.DOUBLE, "float16": tp.FLOAT16, "bfloat16": tp.BFLOAT16,
             "int8": tp.INT8, "uint8": tp.UINT8, "int16": tp.INT16, "int32": tp.INT32, "int64": tp.INT64,
             "bool": tp.BOOL, "string": tp.STRING}
    try:
        return table[name]
    except KeyError:
        raise errors.UnimplementedError(f"dtype {name} has no ONNX element type; allowed: {sorted(table)}",
                                        "SaveModel") from None


# ---- one signature --------------------------------------------------------------------------------

def _graph_nodes(graph, outputs) -> list:
    """The nodes an export converts: the graph before element-wise fusion, without the nodes no output needs
    (a stateful node always stays, so that exporting it fails instead of dropping its effect)."""
    nodes = getattr(graph, "unfused_nodes", None) or graph.nodes
    needed = {id(t) for t in outputs}
    keep = []
    for node in reversed(nodes):
        if _stateful(node) or any(id(o) in needed for o in _outs(node)):
            keep.append(node)
            needed.update(id(t) for t in node.inputs)
    keep.reverse()
    return keep


def _output_names(structured, n) -> tuple:
    """(a name per flat output, the names nested as ``structured``): dict keys where the function returned a dict,
    else ``output_0``, ``output_1``, ... (TensorFlow's names)."""
    names: list = [None] * n

    def walk(x, path):
        if isinstance(x, dict):
            return {k: walk(x[k], path + (str(k),)) for k in sorted(x)}
        if isinstance(x, (list, tuple)) and not isinstance(x, _Slot):
            return [walk(v, path + (str(i),)) for i, v in enumerate(x)]
        if type(x) is _Slot:
            names[x.i] = "_".join(path) if path and not path[0].isdigit() else None
            return x.i
        raise TypeError(f"returns the Python value {x!r:.60}; an exported signature returns tensors only")

    tree = walk(structured if not isinstance(structured, Tensor) else _Slot_of0(), ())
    used: set = set()
    for i in range(n):
        base = re.sub(r"[^A-Za-z0-9_]", "_", names[i]) if names[i] else f"output_{i}"
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        names[i] = name
    return names, nest.map_structure(lambda i: names[i], tree) if not isinstance(tree, int) else names[tree]


def _Slot_of0():
    s = _Slot.__new__(_Slot)
    s.i = 0
    return s


def manifest_entry(file, inputs, outputs, output_structure, output_nest=None, trainable=(), non_trainable=(),
                   variable_keys=None) -> dict:
    """One signature of the manifest: its ONNX file, inputs and outputs (name, dtype, shape), output structure
    (and its exact form, :func:`nest_entry`), and the initializers that are the model's variables."""
    entry = {"file": file, "inputs": inputs, "outputs": outputs, "output_structure": output_structure,
             "trainable_variables": list(trainable), "non_trainable_variables": list(non_trainable)}
    if output_nest is not None:
        entry["output_nest"] = output_nest
    if variable_keys:
        entry["variable_keys"] = dict(variable_keys)
    return entry


def nest_entry(structured, names):
    """The structure of a function's outputs exactly, as TensorFlow's nest knows it: a leaf is its output's name;
    a container is a one-key object, ``{"list": [...]}``, ``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``
    (keys sorted, as nest orders them) or ``{"namedtuple": {"name", "fields", "values"}}``.

    >>> import collections
    >>> from tapeflow.core.saved_model.export import nest_entry
    >>> from tapeflow.core.function import _Slot
    >>> s = [_Slot.__new__(_Slot) for _ in range(3)]
    >>> for i, x in enumerate(s): x.i = i
    >>> nest_entry((s[0], {"b": s[1], "a": [s[2]]}), ["y", "b", "a"])
    {'tuple': ['y', {'dict': [['a', {'list': ['a']}], ['b', 'b']]}]}
    """
    def walk(x):
        if type(x) is _Slot:
            return names[x.i]
        if isinstance(x, dict):
            return {"dict": [[k, walk(x[k])] for k in sorted(x)]}
        if isinstance(x, tuple) and hasattr(type(x), "_fields"):
            return {"namedtuple": {"name": type(x).__name__, "fields": list(x._fields), "values": [walk(v) for v in x]}}
        if isinstance(x, tuple):
            return {"tuple": [walk(v) for v in x]}
        if isinstance(x, list):
            return {"list": [walk(v) for v in x]}
        raise TypeError(f"returns the Python value {x!r:.60}; an exported signature returns tensors only")

    return names[0] if isinstance(structured, Tensor) else walk(structured)


def export_concrete(cf: ConcreteFunction, signature: str = DEFAULT_SIGNATURE, var_names=None):
    """``cf`` as an ONNX ModelProto, with its manifest entry (the file name left for the caller).  ``var_names``
    (id of a variable -> name) names the variables' initializers, the same in every signature of a model."""
    onnx = _onnx()
    helper = onnx.helper
    graph = cf.graph
    outputs = [t for t in graph.outputs if isinstance(t, Tensor)]
    try:
        out_names, out_tree = _output_names(graph.structured_outputs, len(outputs))
    except TypeError as e:
        raise TypeError(f"tf.saved_model.save: signature '{signature}' (graph function '{graph.name}') {e}") from None
    em = Emitter(onnx, signature, graph.name, var_names)
    em.lifted.update(_lifted_of(graph))
    in_names = []
    g_inputs = []
    for n in out_names:
        em._used.add(n)
    given = [x for x in nest.flatten(list(cf._args)) if isinstance(x, TensorSpec)]  # an input_signature's specs
    if len(given) != len(graph.inputs):
        given = cf._specs
    for t, spec, fallback in zip(graph.inputs, given, graph.input_names):
        name = em.unique(spec.name or fallback)
        in_names.append(name)
        em.names[id(t)] = name
    em.emit(_graph_nodes(graph, outputs))  # (first: an op that cannot be exported says so before a dtype does)
    for t, name in zip(graph.inputs, in_names):
        g_inputs.append(em._value_info(name, t._shape, t._dtype.name))
    g_outputs = []
    for t, name in zip(outputs, out_names):
        em.nodes.append(helper.make_node("Identity", [em.name_of(t)], [name]))
        g_outputs.append(em._value_info(name, t._shape, t._dtype.name))
    g = helper.make_graph(em.nodes, signature, g_inputs, g_outputs, initializer=em.initializers)
    from .. import __version__

    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tapeflow",
                              producer_version=__version__, doc_string=f"tapeflow signature {signature}")
    model.ir_version = min(model.ir_version, 10)  # readable by the ONNX Runtime releases of the last two years
    if sum(len(t.raw_data) for t in model.graph.initializer) <= EXTERNAL_DATA_BYTES:  # (larger: checked on disk)
        _type_check(onnx, model, em, signature, graph.name)
    io = [{"name": n, "dtype": t._dtype.name, "shape": _shape_list(t._shape)} for n, t in zip(in_names, graph.inputs)]
    oo = [{"name": n, "dtype": t._dtype.name, "shape": _shape_list(t._shape)} for n, t in zip(out_names, outputs)]
    keys = {name: (var_names or {}).get(id(v), name) for name, v in em.var_inits}
    return model, manifest_entry(None, io, oo, out_tree, nest_entry(graph.structured_outputs, out_names),
                                 [n for n, v in em.var_inits if v.trainable],
                                 [n for n, v in em.var_inits if not v.trainable],
                                 {n: k for n, k in keys.items() if n != k})


def _type_check(onnx, model, em, signature, fname):
    """ONNX's strict type and shape inference over ``model``: an op given a dtype its ONNX form does not take
    (CumSum of int8, say) fails the export naming the tapeflow ops that made it, not the runtime that loads it."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        msg = str(e).strip().splitlines()[0]
        m = re.search(r"op_type:\s*(\w+)", msg) or re.search(r"\((\w+)\)", msg)
        nodes = em.origin.get(m.group(1), []) if m else []
        seen, who = set(), []
        for n in nodes:
            key = (n.prim.name, n.where)
            if key not in seen:
                seen.add(key)
                who.append(f"{n.prim.tf_name} ({n.prim.name}) created at {n.where}")
        made = f" made by {', '.join(who[:3])}" if who else ""
        op = nodes[0].prim.tf_name if nodes else "SaveModel"
        raise errors.UnimplementedError(f"cannot export signature '{signature}' (graph function '{fname}') to ONNX: "
                                        f"the ONNX model{made} does not type-check ({msg}); ONNX's op does not "
                                        f"take these dtypes: cast to a wider dtype (int32, float32) in the "
                                        f"function", op) from None


# ---- save ----------------------------------------------------------------------------------------

def _concrete(fn, what):
    if isinstance(fn, ConcreteFunction):
        return fn
    if isinstance(fn, Function):
        if fn.input_signature is None:
            raise ValueError(f"tf.saved_model.save: {what} is tf.function '{fn._name}' without an input_signature; "
                             f"give it one (tf.function(input_signature=[tf.TensorSpec([None, ...])])) or pass "
                             f"fn.get_concrete_function(tf.TensorSpec(...))")
        return fn.get_concrete_function()
    raise TypeError(f"tf.saved_model.save: {what} must be a tf.function with an input_signature or a concrete "
                    f"function, got {type(fn).__name__}")


def _signatures(obj, signatures) -> dict:
    if signatures is None:
        many = getattr(obj, "_saved_model_signatures", None)
        if callable(many):  # a loaded model saved again: its signatures
            return {k: _concrete(v, f"signature '{k}'") for k, v in many().items()}
        hook = getattr(obj, "_saved_model_signature", None)
        if callable(hook):  # a Keras-style model says what it exports (tapeflow.nn's Model does)
            return {DEFAULT_SIGNATURE: _concrete(hook(), "the model's signature")}
        if isinstance(obj, (Function, ConcreteFunction)):
            return {DEFAULT_SIGNATURE: _concrete(obj, "obj")}
        found = {}
        for attr in sorted(dir(type(obj))):
            if isinstance(getattr(type(obj), attr, None), Function) or (
                    attr in getattr(obj, "__dict__", {}) and isinstance(obj.__dict__[attr], Function)):
                fn = getattr(obj, attr)
                if fn.input_signature is not None:
                    found[DEFAULT_SIGNATURE if attr == "__call__" else attr] = _concrete(fn, attr)
        for attr, fn in sorted(getattr(obj, "__dict__", {}).items()):
            if attr.startswith("__tf_function_"):  # a method's Function bound to obj (function.py's cache)
                continue
            if isinstance(fn, Function) and fn.input_signature is not None and attr not in found:
                found[attr] = _concrete(fn, attr)
        if not found:
            raise ValueError(f"tf.saved_model.save: {type(obj).__name__} has no tf.function with an input_signature "
                             f"to export; decorate one with @tf.function(input_signature=[...]) or pass "
                             f"signatures=")
        return found
    if isinstance(signatures, dict):
        if not signatures:
            raise ValueError("tf.saved_model.save: signatures is an empty dict")
        out = {}
        for k, v in signatures.items():
            if not isinstance(k, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", k):
                raise ValueError(f"tf.saved_model.save: signature name {k!r} must be a string of letters, digits, "
                                 f"'_', '.' and '-' (it names a file)")
            out[k] = _concrete(v, f"signature '{k}'")
        return out
    return {DEFAULT_SIGNATURE: _concrete(signatures, "signatures")}


def _write_model(onnx, model, path):
    size = sum(len(t.raw_data) for t in model.graph.initializer)
    if size > EXTERNAL_DATA_BYTES:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(path) + ".data", size_threshold=1024)
    else:
        onnx.save_model(model, path)
    onnx.checker.check_model(path, full_check=False)


def save(obj: Any, export_dir: str | os.PathLike[str], signatures: Any = None, options: Any = None) -> None:
    """Write ``obj``'s signatures to ``export_dir`` as ONNX models (one per signature) with a JSON manifest.

    ``obj`` is a ``tf.Module`` whose ``tf.function``\\ s have input signatures (``__call__`` exports as
    ``"serving_default"``, the others under their names), a Keras model with a known input shape (its
    ``call`` at inference, ``training=False``), or a ``tf.function``.  ``signatures`` picks them instead: a
    ``tf.function`` or concrete function (``"serving_default"``), or a dict of them by name.  Free dimensions
    (a ``None`` batch) stay free; input names are the signature's, outputs are named by the returned dict's keys
    (else ``output_0``, ...).  An op with no ONNX form raises ``UnimplementedError`` naming it, its source line
    and the signature.  Needs ``onnx`` (``pip install 'tapeflow-core[onnx]'``).  The directory is written
    atomically (a temporary directory renamed into place, replacing what was there).

    >>> import os, tempfile, tapeflow as tf
    >>> f = tf.function(lambda x: tf.nn.softmax(x), input_signature=[tf.TensorSpec([None, 4], name="logits")])
    >>> d = os.path.join(tempfile.mkdtemp(), "softmax")
    >>> tf.saved_model.save(f, d)
    >>> import onnx
    >>> [i.name for i in onnx.load(os.path.join(d, "serving_default.onnx")).graph.input]
    ['logits']
    """
    if options is not None:
        raise ValueError(f"tf.saved_model.save: options={options!r} (tf.saved_model.SaveOptions) are not supported; "
                         f"leave options unset")
    if not isinstance(export_dir, (str, os.PathLike)):
        raise TypeError(f"tf.saved_model.save: export_dir must be a path, got {type(export_dir).__name__}")
    onnx = _onnx()
    sigs = _signatures(obj, signatures)
    export_dir = os.path.abspath(os.fspath(export_dir))
    parent = os.path.dirname(export_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(export_dir)}.tmp-", dir=parent)
    try:
        entries = {}
        var_names, variables, used = {}, [], set()
        for cf in sigs.values():  # the model's variables, one name each, shared by the signatures
            for v in cf.variables:
                if id(v) not in var_names:
                    base = (getattr(v, "name", None) or "variable").split(":")[0]
                    key, k = base, 1
                    while key in used:
                        k += 1
                        key = f"{base}_{k}"
                    used.add(key)
                    var_names[id(v)] = key
                    variables.append({"name": key, "trainable": bool(v.trainable)})
        for name, cf in sigs.items():
            model, entry = export_concrete(cf, name, var_names)
            entry["file"] = f"{name}.onnx"
            _write_model(onnx, model, os.path.join(tmp, entry["file"]))
            entries[name] = entry
        from .. import __version__

        default = DEFAULT_SIGNATURE if DEFAULT_SIGNATURE in entries else next(iter(entries))
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "tapeflow_version": __version__,
                    "opset": OPSET, "default_signature": default, "signatures": entries, "variables": variables}
        with open(os.path.join(tmp, MANIFEST), "w") as f:
            json.dump(manifest, f, indent=1)
        old = None
        if os.path.lexists(export_dir):
            if not os.path.isdir(export_dir):
                raise FileExistsError(f"tf.saved_model.save: {export_dir} exists and is not a directory")
            old = tempfile.mkdtemp(prefix=f".{os.path.basename(export_dir)}.old-", dir=parent)
            os.rename(export_dir, os.path.join(old, "d"))
        os.rename(tmp, export_dir)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
