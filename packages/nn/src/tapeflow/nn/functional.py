"""The Keras functional API: symbolic inputs (``keras.Input``), layers called on them, ``Model(inputs, outputs)``.

``keras.Input(shape)`` gives a symbolic tensor: a tensor with a shape (``None`` for sizes
known only when data arrives), a dtype and no value.  Calling a layer on symbolic tensors
builds the layer (its weights are created eagerly, from the input shapes) and runs its
``call`` under core's tracing (``tapeflow.core.runner.tracing``): every op infers its
output's shape and dtype without running a kernel.  The call is recorded as a node of the
*layer* graph (the layer, the symbolic arguments, the symbolic outputs).  ``Model(inputs,
outputs)`` walks that graph back from ``outputs`` to ``inputs`` and, called on data, runs the
layers in order on concrete tensors.

>>> import tapeflow as tf
>>> inputs = tf.keras.Input(shape=(4,), name="features")
>>> hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
>>> outputs = tf.keras.layers.Dense(1)(hidden)
>>> model = tf.keras.Model(inputs, outputs)
>>> hidden.shape, model(tf.ones([3, 4])).shape
(TensorShape([None, 8]), TensorShape([3, 1]))
"""
from __future__ import annotations

import weakref

from tapeflow.core import devices as _devices
from tapeflow.core import runner as _runner
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

from ._masks import get_mask as _get_mask, set_mask as _set_mask
from .layers import base as _base
from .layers.base import InputLayer, Layer, _bump
from .models import Model, _cols, _count

_HISTORY = _base._KERAS_HISTORY  # id(symbolic tensor) -> (weak reference, (layer, node_index, tensor_index))
_STATE = _base._SYMBOLIC  # depth > 0 while a layer's call runs on symbolic inputs (nested calls: plain traced)


def keras_history(t):
    """``(layer, node_index, tensor_index)`` of a symbolic tensor made by ``keras.Input`` or a layer, else None.

    >>> import tapeflow as tf
    >>> from tapeflow.nn.functional import keras_history
    >>> x = tf.keras.Input(shape=(2,), name="x")
    >>> layer, node_index, tensor_index = keras_history(x)
    >>> layer.name, node_index, tensor_index
    ('x', 0, 0)
    """
    if type(t) is not Tensor:
        return None
    e = _HISTORY.get(id(t))
    if e is None or e[0]() is not t:
        return None
    return e[1]


def is_keras_tensor(x) -> bool:
    """Whether ``x`` is a symbolic tensor of the functional API (an ``Input`` or a layer's output on one).

    >>> import tapeflow as tf
    >>> from tapeflow.nn.functional import is_keras_tensor
    >>> is_keras_tensor(tf.keras.Input(shape=(3,))), is_keras_tensor(tf.ones([3]))
    (True, False)
    """
    return keras_history(x) is not None


def _set_history(t, history):
    key = id(t)

    def drop(ref, key=key):
        e = _HISTORY.get(key)
        if e is not None and e[0] is ref:
            del _HISTORY[key]

    _HISTORY[key] = (weakref.ref(t, drop), history)


def _flatten(x, out=None):
    """The leaves of a nest of lists, tuples and dicts (dicts in key order as given)."""
    if out is None:
        out = []
    if isinstance(x, (list, tuple)):
        for e in x:
            _flatten(e, out)
    elif isinstance(x, dict):
        for e in x.values():
            _flatten(e, out)
    else:
        out.append(x)
    return out


def _map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_map(fn, e) for e in x)
    if isinstance(x, dict):
        return {k: _map(fn, v) for k, v in x.items()}
    return fn(x)


def eager_scope():
    """A context that runs ops eagerly even inside ``tracing``: layers create their weights in it.

    >>> import tapeflow as tf
    >>> from tapeflow.core.runner import tracing
    >>> from tapeflow.nn.functional import eager_scope
    >>> with tracing():
    ...     with eager_scope():
    ...         v = tf.ones([2]) * 3
    >>> v.numpy().tolist()
    [3.0, 3.0]
    """
    return _base._leave_tracing()


class Node:
    """One call of a layer in the functional graph: ``outputs = layer(*args, **kwargs)`` on symbolic tensors.

    >>> import tapeflow as tf
    >>> x = tf.keras.Input(shape=(2,))
    >>> d = tf.keras.layers.Dense(3)
    >>> y = d(x)
    >>> node = d._inbound_nodes[0]
    >>> node.layer is d, len(node.input_tensors), node.outputs[0] is y
    (True, 1, True)
    """

    __slots__ = ("layer", "args", "kwargs", "out_struct", "outputs", "input_tensors", "index")

    def __init__(self, layer, args, kwargs, out_struct) -> None:
        self.layer, self.args, self.kwargs, self.out_struct = layer, args, kwargs, out_struct
        self.outputs = _flatten(out_struct)
        self.input_tensors = [t for t in _flatten(list(args)) + _flatten(list(kwargs.values()))
                              if keras_history(t) is not None]
        nodes = layer.__dict__.setdefault("_inbound_nodes", [])
        self.index = len(nodes)
        nodes.append(self)
        for i, t in enumerate(self.outputs):
            _set_history(t, (layer, self.index, i))

    @property
    def parent_nodes(self) -> list:
        out = []
        for t in self.input_tensors:
            layer, ni, _ = keras_history(t)
            out.append(layer._inbound_nodes[ni])
        return out

    def __repr__(self):
        return f"<Node {self.layer.name}[{self.index}]>"


def input_tensor(layer: InputLayer) -> Tensor:
    """The symbolic tensor of an InputLayer (made once: ``Input`` returns it)."""
    nodes = layer.__dict__.get("_inbound_nodes")
    if nodes:
        return nodes[0].outputs[0]
    shape = layer._batch_input_shape
    if shape is None:
        raise ValueError(f'InputLayer "{layer.name}" has no shape: pass shape= (without the batch axis) or '
                         "batch_shape=")
    t = _runner.symbolic(tuple(shape), layer.dtype, _devices.default_device())
    Node(layer, (), {}, t)
    return t


def _fresh(t, seen):
    """``t`` itself, or a new symbolic tensor like it when ``t`` already belongs to a node (a layer that returns
    its input, or a tensor returned twice): each node owns its outputs."""
    if type(t) is not Tensor:
        return t
    if id(t) in seen or keras_history(t) is not None or t._h is not None or t._arr is not None:
        new = _runner.symbolic(tuple(t._shape), t._dtype, t._dev)
        m = _get_mask(t)
        if m is not None:
            _set_mask(new, m)
        t = new
    seen.add(id(t))
    return t


def _traced(layer, args, kwargs):
    g = _runner.Graph()
    g.variables = []  # a variable a call creates is made eagerly (core's Variable does so while tracing)
    _STATE.depth += 1
    try:
        with _runner.tracing(g):
            return Layer.__call__(layer, *args, **kwargs)
    finally:
        _STATE.depth -= 1


def _sized(x, size):
    """A symbolic tensor like ``x`` with its unknown sizes set to ``size`` (for an op whose shape
    inference does not take None yet)."""
    if type(x) is Tensor and None in x._shape:
        return _runner.symbolic(tuple(size if d is None else d for d in x._shape), x._dtype, x._dev)
    return x


# layers whose calls needed the fallback below (ops in their call whose shape inference does not take None yet)
NONE_FALLBACKS: set = set()


def symbolic_call(layer: Layer, args: tuple, kwargs: dict):
    """Call ``layer`` on arguments holding symbolic tensors: builds it, infers its outputs by tracing ``call``,
    and records the call as a node of the layer graph.  Returns the symbolic outputs.

    When an op of the call cannot infer shapes with unknown (None) sizes, the call is traced twice with
    those sizes set to 2 and to 3, and output sizes that differ between the two are unknown."""
    if not layer.built and args:
        x = args[0]
        layer._maybe_build(layer._convert(x) if not isinstance(x, Tensor) else x)
    try:
        out = _traced(layer, args, kwargs)
    except Exception:
        if not any(type(t) is Tensor and None in t._shape for t in _flatten([list(args), kwargs])):
            raise
        outs = [_traced(layer, _map(lambda t: _sized(t, n), args), _map(lambda t: _sized(t, n), kwargs))
                for n in (2, 3)]
        NONE_FALLBACKS.add(type(layer).__name__)
        flat2, flat3 = _flatten(outs[0]), _flatten(outs[1])
        merged = iter([_runner.symbolic(tuple(a if a == b else None for a, b in zip(t2._shape, t3._shape)),
                                        t2._dtype, t2._dev) if type(t2) is Tensor else t2
                       for t2, t3 in zip(flat2, flat3)])
        out = _map(lambda _: next(merged), outs[0])
    seen: set = set()
    out = _map(lambda t: _fresh(t, seen), out)
    bad = [type(t).__name__ for t in _flatten(out) if type(t) is not Tensor and t is not None]
    if bad:
        raise TypeError(f'layer "{layer.name}" ({type(layer).__name__}) returned {", ".join(bad)} from call on '
                        "symbolic inputs; allowed: tensors (or lists, tuples and dicts of them)")
    Node(layer, tuple(args), dict(kwargs), out)
    return out


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None,
          optional=False, ragged=None):
    """A symbolic input of a functional model: a tensor with a shape and dtype but no value.

    ``shape`` excludes the batch axis (``None`` entries for sizes known only with data);
    ``batch_shape`` gives it whole.  Layers called on it build themselves and give symbolic
    outputs; ``tf.keras.Model(inputs, outputs)`` then runs the graph on data.  As the first
    entry of a ``Sequential`` it declares that model's input shape.

    >>> import tapeflow as tf
    >>> x = tf.keras.Input(shape=(28, 28, 1), name="image")
    >>> x.shape, x.dtype.name
    (TensorShape([None, 28, 28, 1]), 'float32')
    """
    for arg, v in (("sparse", sparse), ("ragged", ragged), ("optional", optional)):
        if v:
            raise InvalidArgumentError(f"{arg}={v!r}: tapeflow's inputs are dense tensors; allowed: {arg}=False "
                                       "(or None)", "Input")
    if tensor is not None:
        raise InvalidArgumentError("tensor=: an Input wrapping an existing tensor is a TF1 graph feature; allowed: "
                                   "tensor=None (call the model on the tensor instead)", "Input")
    if shape is None and batch_shape is None:
        raise ValueError("Input needs shape= (without the batch axis, e.g. shape=(784,)) or batch_shape=")
    if shape is not None and not isinstance(shape, (list, tuple)):
        if isinstance(shape, int):
            shape = (shape,)
        else:
            raise TypeError(f"Input(shape=...): allowed: a tuple of ints (None for unknown sizes); got {shape!r}")
    layer = InputLayer(input_shape=shape, batch_size=batch_size, dtype=dtype, name=name, batch_shape=batch_shape)
    return input_tensor(layer)


# ---- the functional model ------------------------------------------------------------------------------

def _structure_of(x, what):
    """Inputs/outputs as given (a tensor, a list/tuple or a dict of them), each checked to be symbolic."""
    for t in _flatten(x):
        if keras_history(t) is None:
            raise TypeError(f"Model({what}=...) takes symbolic tensors from tf.keras.Input and layers called on "
                            f"them; got {type(t).__name__}" + (" (a tensor with a value)" if isinstance(t, Tensor)
                                                                else ""))
    if isinstance(x, tuple):
        x = list(x)
    return x


def _walk(outputs, inputs):
    """The nodes needed to compute ``outputs`` from ``inputs``, in an order that runs each after its inputs."""
    input_ids = {id(t) for t in inputs}
    order, state = [], {}

    def visit(node):
        k = id(node)
        if state.get(k) == 2:
            return
        if state.get(k) == 1:
            raise ValueError(f"the layer graph has a cycle at layer {node.layer.name!r}")
        state[k] = 1
        for t in node.input_tensors:
            if id(t) in input_ids:
                continue
            layer, ni, _ = keras_history(t)
            if isinstance(layer, InputLayer):
                raise ValueError(f"Model(inputs, outputs): output depends on input {layer.name!r} ({tuple(t.shape)}) "
                                 "that is not among the model's inputs; allowed: pass every Input the outputs "
                                 "need in inputs=")
            visit(layer._inbound_nodes[ni])
        state[k] = 2
        order.append(node)

    for t in outputs:
        if id(t) in input_ids:
            continue
        layer, ni, _ = keras_history(t)
        visit(layer._inbound_nodes[ni])
    return order


class Functional(Model):
    """A model defined by its symbolic inputs and outputs: ``tf.keras.Model(inputs, outputs)``.

    Inputs and outputs may be one tensor, a list or a dict of them; layers may be shared
    (called on several inputs) and models may be used as layers.  Called on data it runs
    its layers in graph order; ``fit``, ``evaluate``, ``predict``, ``summary``, ``save`` work
    as for any model.

    >>> import tapeflow as tf
    >>> a = tf.keras.Input(shape=(2,), name="a")
    >>> b = tf.keras.Input(shape=(3,), name="b")
    >>> merged = tf.keras.layers.Concatenate()([a, b])
    >>> model = tf.keras.Model(inputs=[a, b], outputs={"sum": tf.keras.layers.Dense(1, name="sum")(merged)})
    >>> [layer.name for layer in model.layers]
    ['a', 'b', 'concatenate', 'sum']
    >>> model([tf.ones([4, 2]), tf.ones([4, 3])])["sum"].shape
    TensorShape([4, 1])
    """

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._init_graph(inputs, outputs)

    def _init_graph(self, inputs, outputs):
        if inputs is None or outputs is None:
            raise TypeError("a functional Model(inputs, outputs) needs both inputs and outputs (symbolic tensors "
                            "from tf.keras.Input and layers called on them); got None")
        d = self.__dict__
        inputs = _structure_of(inputs, "inputs")
        outputs = _structure_of(outputs, "outputs")
        flat_in, flat_out = _flatten(inputs), _flatten(outputs)
        if not flat_in or not flat_out:
            raise ValueError("Model(inputs, outputs) needs at least one input and one output")
        for t in flat_in:
            layer = keras_history(t)[0]
            if not isinstance(layer, InputLayer):
                raise ValueError(f"Model inputs must come from tf.keras.Input; {layer.name!r} "
                                 f"({type(layer).__name__}) made this one")
        nodes = _walk(flat_out, flat_in)
        layers, seen = [], set()
        for t in flat_in:
            layer = keras_history(t)[0]
            if id(layer) not in seen:
                seen.add(id(layer))
                layers.append(layer)
        for node in nodes:
            if id(node.layer) not in seen:
                seen.add(id(node.layer))
                layers.append(node.layer)
        names = {}
        for layer in layers:
            if layer.name in names:
                raise ValueError(f"the layer name {layer.name!r} is used by two layers of the model; allowed: "
                                 "unique names (pass name= to one of them)")
            names[layer.name] = layer
        d["_input_struct"], d["_output_struct"] = inputs, outputs
        d["_flat_inputs"], d["_flat_outputs"] = flat_in, flat_out
        d["_nodes"] = nodes
        self._functional_layers = layers  # tracked: the layers' variables are the model's, in this order
        d["built"] = True
        d["_in_shape"] = _map(lambda t: tuple(t.shape), inputs)
        _bump()

    # -- properties --------------------------------------------------------------------------------------
    @property
    def layers(self) -> list:
        """The model's layers, inputs first, then in the order the graph runs them (as Keras 3)."""
        return list(self._functional_layers)

    @property
    def inputs(self) -> list:
        """The symbolic inputs, as a list."""
        return list(self._flat_inputs)

    @property
    def outputs(self) -> list:
        """The symbolic outputs, as a list."""
        return list(self._flat_outputs)

    @property
    def input(self):
        """The symbolic input(s) in the structure given to the constructor."""
        return self._input_struct

    @property
    def output(self):
        """The symbolic output(s) in the structure given to the constructor."""
        return self._output_struct

    @property
    def input_shape(self):
        return _map(lambda t: tuple(t.shape), self._input_struct)

    @property
    def output_shape(self):
        return _map(lambda t: tuple(t.shape), self._output_struct)

    def _tracked_children(self):
        own, subs = super()._tracked_children()
        return own, [s for s in subs if not isinstance(s, InputLayer)]

    def _checkpoint_children(self):
        for layer in self._functional_layers:
            if not isinstance(layer, InputLayer):
                yield f"layers/{layer.name.replace('/', '%2F')}", layer
        for k, v in self.__dict__.items():
            if isinstance(v, Variable):
                yield k, v

    # -- running ---------------------------------------------------------------------------------------------
    def _bind_inputs(self, inputs):
        """The data for each symbolic input, matched by the structure given to the constructor."""
        struct = self._input_struct
        flat = self._flat_inputs
        if isinstance(inputs, dict) and not isinstance(struct, dict):
            by_name = {keras_history(t)[0].name: t for t in flat}
            missing = [n for n in by_name if n not in inputs]
            if missing:
                raise InvalidArgumentError(f"model {self.name!r} was called with a dict without input(s) {missing}; "
                                           f"allowed keys: {sorted(by_name)}", "Functional")
            return [inputs[n] for n in by_name]
        if isinstance(struct, dict):
            if not isinstance(inputs, dict):
                if isinstance(inputs, (list, tuple)) and len(inputs) == len(flat):
                    return list(inputs)
                raise InvalidArgumentError(f"model {self.name!r} takes a dict with keys {sorted(struct)}; got "
                                           f"{type(inputs).__name__}", "Functional")
            missing = [k for k in struct if k not in inputs]
            if missing:
                raise InvalidArgumentError(f"model {self.name!r} was called without input(s) {missing}; allowed "
                                           f"keys: {sorted(struct)}", "Functional")
            return _flatten({k: inputs[k] for k in struct})
        if isinstance(struct, list):
            if isinstance(inputs, (list, tuple)):
                got = _flatten(list(inputs))
            elif len(flat) == 1:
                got = [inputs]
            else:
                raise InvalidArgumentError(f"model {self.name!r} takes {len(flat)} inputs (a list); got one "
                                           f"{type(inputs).__name__}", "Functional")
        else:
            got = [inputs]
            if isinstance(inputs, (list, tuple)) and len(inputs) == 1 and isinstance(inputs[0], (Tensor, Variable)):
                got = [inputs[0]]
        if len(got) != len(flat):
            raise InvalidArgumentError(f"model {self.name!r} takes {len(flat)} input(s); got {len(got)}", "Functional")
        return got

    def call(self, inputs, training=None, mask=None):
        flat = self._bind_inputs(inputs)
        values = {}
        masks = _flatten(mask) if isinstance(mask, (list, tuple, dict)) else [mask] * len(flat)
        for sym, x, m in zip(self._flat_inputs, flat, masks):
            layer = keras_history(sym)[0]
            x = layer._convert(x) if not isinstance(x, Tensor) else x
            if isinstance(x, Tensor) and x._dtype is not sym._dtype and x._dtype.is_floating and \
                    sym._dtype.is_floating:
                x = layer._convert(x)
            if m is not None:
                _set_mask(x, m)
            values[id(sym)] = x

        def get(t):
            if type(t) is Tensor and id(t) in values:
                return values[id(t)]
            if keras_history(t) is not None:
                raise ValueError(f"model {self.name!r}: a layer needs a tensor the graph has not computed")
            return t

        for node in self._nodes:
            args = _map(get, node.args)
            kwargs = _map(get, node.kwargs)
            out = node.layer(*args, **kwargs)
            got = _flatten(out)
            if len(got) != len(node.outputs):
                raise ValueError(f'layer "{node.layer.name}" returned {len(got)} output(s) on data but '
                                 f"{len(node.outputs)} on symbolic inputs")
            for sym, val in zip(node.outputs, got):
                values[id(sym)] = val
        return _map(get, self._output_struct)

    def compute_output_shape(self, input_shape):
        return self.output_shape

    # -- summary ----------------------------------------------------------------------------------------------
    def _connections(self, node):
        out = []
        for t in node.input_tensors:
            layer, ni, ti = keras_history(t)
            out.append(f"{layer.name}[{ni}][{ti}]")
        return out

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False):
        """Each layer with its output shape, parameter count and the layers it is connected to, then the totals.

        ``Connected to`` names each input of a layer call as ``layer[node][tensor]`` (Keras 3's column).

        >>> import tapeflow as tf
        >>> tf.keras.backend.clear_session()
        >>> x = tf.keras.Input(shape=(3,), name="x")
        >>> y = tf.keras.layers.Add()([tf.keras.layers.Dense(2)(x), tf.keras.layers.Dense(2)(x)])
        >>> tf.keras.Model(x, y, name="two_heads").summary()
        Model: "two_heads"
        ____________________________________________________________________________________________
         Layer (type)                 Output Shape          Param #     Connected to
        ============================================================================================
         x (InputLayer)               (None, 3)             0           -
         dense (Dense)                (None, 2)             8           x[0][0]
         dense_1 (Dense)              (None, 2)             8           x[0][0]
         add (Add)                    (None, 2)             0           dense[0][0]
                                                                        dense_1[0][0]
        ============================================================================================
        Total params: 16
        Trainable params: 16
        Non-trainable params: 0
        ____________________________________________________________________________________________
        """
        print_fn = print_fn or print
        width = line_length or 92
        pos = [int(width * p) for p in (positions or (0.33, 0.56, 0.69, 1.0))]
        lines = [f'Model: "{self.name}"', "_" * width,
                 _cols([" Layer (type)", "Output Shape", "Param #", "Connected to"], pos), "=" * width]
        model_nodes = {id(n) for n in self._nodes}
        for layer in self._functional_layers:
            nodes = [n for n in layer.__dict__.get("_inbound_nodes", ()) if id(n) in model_nodes or
                     isinstance(layer, InputLayer)]
            shapes = [_shape_str(n.out_struct) for n in nodes[:1]]
            conns = []
            for n in nodes:
                conns.extend(self._connections(n))
            conns = conns or ["-"]
            names = [" " + t for t in _wrap(f"{layer.name} ({type(layer).__name__})", pos[0] - 2)]
            out_shape = _wrap(shapes[0] if shapes else "?", pos[1] - pos[0] - 1)
            rows = max(len(names), len(out_shape), len(conns))
            for i in range(rows):
                lines.append(_cols([names[i] if i < len(names) else "", out_shape[i] if i < len(out_shape) else "",
                                    f"{_count(layer.weights)}" if i == 0 else "", conns[i] if i < len(conns) else ""],
                                   pos))
        trainable = _count(self.trainable_variables)
        non = _count(self.non_trainable_variables)
        lines += ["=" * width, f"Total params: {trainable + non:,}", f"Trainable params: {trainable:,}",
                  f"Non-trainable params: {non:,}", "_" * width]
        for line in lines:
            print_fn(line.rstrip())

    # -- config ---------------------------------------------------------------------------------------------
    def get_config(self):
        """The graph as Keras 3 writes it: each layer's config with its ``inbound_nodes``, and the input and
        output layers as ``[layer name, node index, tensor index]``."""
        from . import saving

        def refc(v):
            h = keras_history(v)
            if h is None:
                return saving.serialize_keras_object(v)
            layer, ni, ti = h
            return {"class_name": "__keras_tensor__",
                    "config": {"shape": list(v.shape), "dtype": v.dtype.name,
                               "keras_history": [layer.name, self._node_position(layer, ni), ti]}}

        layer_cfgs = []
        model_nodes = {id(n) for n in self._nodes}
        for layer in self._functional_layers:
            entry = saving.serialize_keras_object(layer)
            entry["name"] = layer.name
            inbound = []
            for n in layer.__dict__.get("_inbound_nodes", ()):
                if id(n) not in model_nodes:
                    continue
                inbound.append({"args": _map(refc, list(n.args)), "kwargs": _map(refc, n.kwargs)})
            entry["inbound_nodes"] = inbound
            layer_cfgs.append(entry)

        def ref(t):
            layer, ni, ti = keras_history(t)
            return [layer.name, self._node_position(layer, ni), ti]

        return {"name": self.name, "trainable": self.trainable, "layers": layer_cfgs,
                "input_layers": _map(ref, self._input_struct), "output_layers": _map(ref, self._output_struct)}

    def _node_position(self, layer, ni):
        """The index of node ``ni`` of ``layer`` among that layer's nodes in this model (what configs count)."""
        if isinstance(layer, InputLayer):
            return 0
        model_nodes = {id(n) for n in self._nodes}
        kept = [n for n in layer._inbound_nodes if id(n) in model_nodes]
        return kept.index(layer._inbound_nodes[ni])

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Rebuild the graph from ``get_config``: create each layer, then replay its calls in order."""
        from . import saving

        created, pending = {}, []
        produced: dict = {}  # (layer name, node position) -> output structure
        for entry in config["layers"]:
            layer = saving.deserialize_keras_object(entry, custom_objects=custom_objects)
            created[entry["name"]] = layer
            if isinstance(layer, InputLayer):
                produced[(entry["name"], 0)] = input_tensor(layer)
            else:
                for i, nd in enumerate(entry.get("inbound_nodes", ())):
                    pending.append((entry["name"], i, nd))

        def resolve(v):
            if isinstance(v, dict) and v.get("class_name") == "__keras_tensor__":
                name, ni, ti = v["config"]["keras_history"]
                out = produced.get((name, ni))
                if out is None:
                    raise KeyError((name, ni))
                return _flatten(out)[ti]
            if isinstance(v, dict) and v.get("class_name") == "__tuple__":
                return tuple(resolve(e) for e in v["config"]["value"])
            if isinstance(v, list):
                return [resolve(e) for e in v]
            if isinstance(v, dict):
                return {k: resolve(e) for k, e in v.items()}
            return v

        while pending:
            progress, left = False, []
            for name, i, nd in pending:
                try:
                    args, kwargs = resolve(nd["args"]), resolve(nd["kwargs"])
                except KeyError:
                    left.append((name, i, nd))
                    continue
                produced[(name, i)] = created[name](*args, **kwargs)
                progress = True
            if not progress:
                raise ValueError(f"the model config's graph cannot be rebuilt: layer(s) "
                                 f"{sorted({p[0] for p in left})} wait on tensors no layer produces")
            pending = left

        def out_ref(r):
            if isinstance(r, list) and len(r) == 3 and isinstance(r[0], str):
                return _flatten(produced[(r[0], r[1])])[r[2]]
            return _map(out_ref, r) if isinstance(r, (list, dict)) else r

        inputs = _nest_refs(config["input_layers"], out_ref)
        outputs = _nest_refs(config["output_layers"], out_ref)
        return cls(inputs, outputs, name=config.get("name"), trainable=config.get("trainable", True))


def _nest_refs(r, fn):
    if isinstance(r, list) and len(r) == 3 and isinstance(r[0], str) and isinstance(r[1], int):
        return fn(r)
    if isinstance(r, list):
        return [_nest_refs(e, fn) for e in r]
    if isinstance(r, dict):
        return {k: _nest_refs(e, fn) for k, e in r.items()}
    return r


def _wrap(text, width):
    """``text`` in lines of at most ``width`` characters, broken at spaces (a longer word is cut), as Keras's table."""
    lines, cur = [], ""
    for w in text.split():
        while len(w) > width:
            if cur:
                lines.append(cur)
                cur = ""
            lines.append(w[:width])
            w = w[width:]
        if not cur:
            cur = w
        elif len(cur) + 1 + len(w) <= width:
            cur += " " + w
        else:
            lines.append(cur)
            cur = w
    lines.append(cur)
    return lines


def _shape_str(x):
    if isinstance(x, (list, tuple)):
        return ", ".join(_shape_str(e) for e in x)
    if isinstance(x, dict):
        return ", ".join(_shape_str(e) for e in x.values())
    if isinstance(x, Tensor):
        return str(tuple(x.shape))
    return "?"


_FUNCTIONAL_CLASSES: dict = {}


def functional_class(cls):
    """``cls`` (a Model subclass whose ``__init__`` calls ``super().__init__(inputs, outputs)``) with the
    functional model's graph running, as Keras 3 makes such a subclass functional."""
    c = _FUNCTIONAL_CLASSES.get(cls)
    if c is None:
        c = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
        _FUNCTIONAL_CLASSES[cls] = c
    return c


# ---- compile for several outputs ----------------------------------------------------------------------------

def _output_names(model, loss, metrics):
    """The output names and keys (dict key or list index) of a model whose losses or metrics go per output,
    or None for a model of one plain output compiled with one loss."""
    struct = model.__dict__.get("_output_struct") if isinstance(model, Functional) else None
    if isinstance(struct, dict):
        return [(k, k) for k in struct]
    if isinstance(struct, list):
        return [(keras_history(t)[0].name, i) for i, t in enumerate(struct)]
    if isinstance(loss, dict):
        return [(k, k) for k in loss]
    if isinstance(loss, (list, tuple)):
        return [(f"output_{i + 1}", i) for i in range(len(loss))]
    if isinstance(metrics, dict):
        return [(k, k) for k in metrics]
    return None


def _per_output(value, names, what):
    """A loss or loss weight given per output (a dict by name, a list in order) or one for all outputs."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - {n for n, _ in names})
        if unknown:
            raise ValueError(f"compile({what}=...) names output(s) {unknown} the model does not have; allowed: "
                             f"{[n for n, _ in names]}")
        return [value.get(n) for n, _ in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(f"compile({what}=...) has {len(value)} entries for a model of {len(names)} output(s) "
                             f"{[n for n, _ in names]}; allowed: one per output, or a dict by output name")
        return list(value)
    return [value] * len(names)


def _metrics_per_output(value, names, what):
    """Metrics per output: a dict by output name, a list of lists in order, or (one output) a plain list."""
    if value is None:
        return [None] * len(names)
    if isinstance(value, dict) or (isinstance(value, (list, tuple)) and value and
                                   all(v is None or isinstance(v, (list, tuple)) for v in value)):
        return _per_output(value, names, what)
    if len(names) == 1:
        return [value]
    raise ValueError(f"compile({what}=...) of a model of {len(names)} outputs {[n for n, _ in names]}: allowed: a "
                     "dict by output name or a list with one list of metrics per output (as Keras 3)")


def _pick(struct, key, name, what):
    if isinstance(struct, dict):
        for k in (key, name):
            if k in struct:
                return struct[k]
        raise InvalidArgumentError(f"{what} has no entry for output {name!r}; it has {sorted(struct)}", "Fit")
    if isinstance(struct, (list, tuple)):
        if not isinstance(key, int):
            raise InvalidArgumentError(f"{what} is a list but the model's outputs are named {name!r}...; allowed: a "
                                       "dict by output name", "Fit")
        if key >= len(struct):
            raise InvalidArgumentError(f"{what} has {len(struct)} entries; the model has more outputs", "Fit")
        return struct[key]
    if key in (0, name) or not isinstance(key, int):
        return struct
    raise InvalidArgumentError(f"{what} is one tensor but the model has several outputs; allowed: one per output",
                               "Fit")


def _batch(y_pred):
    leaves = [t for t in _flatten(y_pred) if isinstance(t, Tensor)]
    return int(leaves[0].shape[0]) if leaves and leaves[0].shape and leaves[0].shape[0] is not None else 1


def output_losses_and_metrics(model, loss, metrics, weighted_metrics, loss_weights):
    """``compile``'s loss and metrics for a model of several outputs (or a functional model whose outputs are a
    list or dict): one loss per output (the same for all when one is given), summed with ``loss_weights``,
    per-output loss trackers (``<output>_loss``) and metrics named ``<output>_<metric>``, as Keras 3.  Returns
    ``(loss, metrics, weighted_metrics)`` as ``compile`` goes on with them (unchanged for a single output)."""
    names = _output_names(model, loss, metrics)
    if names is None:
        return loss, metrics, weighted_metrics
    from . import losses as _losses
    from . import metrics as _metrics
    from .models import _as_list, _resolve_metric

    fns = [None if v is None else _losses.get(v) for v in _per_output(loss, names, "loss")]
    weights = _per_output(loss_weights, names, "loss_weights")
    several = len(names) > 1
    out_loss = _OutputLosses(names, fns, [1.0 if w is None else float(w) for w in weights])

    def per_output(ms, what):
        out = []
        for (name, key), m_list, fn in zip(names, _metrics_per_output(ms, names, what), fns):
            for m in _as_list(m_list):
                metric = _resolve_metric(m, fn)
                out.append(_OutputMetric(metric, name, key, f"{name}_{metric.name}" if several else metric.name))
        return out

    plain = per_output(metrics, "metrics")
    weighted = per_output(weighted_metrics, "weighted_metrics")
    if several:
        trackers = {n: _OutputLossTracker(out_loss, n, _metrics.Mean(name=f"{n}_loss")) for n, _ in names}
        ordered = []
        for name, _ in names:
            ordered.append(trackers[name])
            ordered.extend(m for m in plain if m.output == name)
        plain = ordered
    return out_loss, plain, weighted


def _losses_module():
    from . import losses

    return losses


def _metrics_module():
    from . import metrics

    return metrics


class _OutputLosses(_losses_module().Loss):
    """The compiled loss of a model of several outputs: sum over outputs of weight * loss(y_true[o], y_pred[o])."""

    def __init__(self, names, fns, weights) -> None:
        super().__init__(name="loss")
        self.names, self.fns, self.weights, self.last = names, fns, weights, {}

    def __call__(self, y_true, y_pred, sample_weight=None):
        import tapeflow.core as K

        total = None
        self.last = {}
        for (name, key), fn, w in zip(self.names, self.fns, self.weights):
            if fn is None:
                continue
            yt = _pick(y_true, key, name, "y")
            yp = _pick(y_pred, key, name, "the model's output")
            sw = sample_weight if not isinstance(sample_weight, (dict, list, tuple)) else \
                _pick(sample_weight, key, name, "sample_weight")
            v = fn(yt, yp, sw)
            self.last[name] = v
            term = v if w == 1.0 else K.multiply(v, K.cast(w, v.dtype))
            total = term if total is None else K.add(total, term)
        if total is None:
            raise ValueError("compile(loss=...) gives no output a loss; allowed: a loss for at least one output")
        return total

    def call(self, y_true, y_pred):
        return self(y_true, y_pred)


class _OutputMetric(_metrics_module().Metric):
    """A metric of one output of a model of several: reads that output of ``y_true`` and ``y_pred``."""

    def __init__(self, metric, output, key, name) -> None:
        super().__init__(name=name)
        self.metric, self.output, self.key = metric, output, key
        self._variables = metric._variables

    def update_state(self, y_true, y_pred, sample_weight=None):
        sw = sample_weight if not isinstance(sample_weight, (dict, list, tuple)) else \
            _pick(sample_weight, self.key, self.output, "sample_weight")
        return self.metric.update_state(_pick(y_true, self.key, self.output, "y"),
                                        _pick(y_pred, self.key, self.output, "the model's output"), sample_weight=sw)

    def result(self):
        return self.metric.result()

    def reset_state(self):
        self.metric.reset_state()


class _OutputLossTracker(_metrics_module().Metric):
    """``<output>_loss``: the mean of one output's (unweighted) loss over the batches, as Keras 3 logs it."""

    def __init__(self, losses, output, mean) -> None:
        super().__init__(name=mean.name)
        self.losses, self.output, self.mean = losses, output, mean
        self._variables = mean._variables

    def update_state(self, y_true, y_pred, sample_weight=None):
        v = self.losses.last.get(self.output)
        if v is not None:
            self.mean.update_state(v, sample_weight=_batch(y_pred))

    def result(self):
        return self.mean.result()

    def reset_state(self):
        self.mean.reset_state()
