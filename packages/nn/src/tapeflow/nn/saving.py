"""Whole-model saving (``model.save("m.keras")``, ``load_model``) and Keras 3's object (de)serialization.

A ``.keras`` file is a zip archive of

* ``config.json``: the model as ``serialize_keras_object`` writes it (class name, module, config:
  the functional graph or the Sequential layer list, each layer's config and build shape) and
  its ``compile_config`` (optimizer, loss, metrics) when it was compiled;
* ``metadata.json``: the tapeflow version and the date it was saved;
* ``model.weights.safetensors``: the weights, a tapeflow checkpoint file (checksummed), keyed
  by each variable's path in the model;
* ``optimizer.safetensors`` (a compiled model): the optimizer's step count and slots, restored
  when ``load_model(compile=True)`` compiles the model again, so training resumes where it was.

The archive is written to a temporary file and renamed into place.  Classes of your own are
found on loading through ``custom_objects=`` or the ``register_keras_serializable`` decorator.

>>> import tapeflow as tf
>>> @tf.keras.saving.register_keras_serializable(package="Demo")
... class Double(tf.keras.layers.Layer):
...     def call(self, x):
...         return x * 2
>>> tf.keras.saving.get_registered_name(Double), tf.keras.saving.get_registered_object("Demo>Double") is Double
('Demo>Double', True)
"""
from __future__ import annotations

import datetime
import importlib
import io
import json
import os
import tempfile
import threading
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np

from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import CheckpointWarning as _CheckpointWarning
from tapeflow.core.errors import DataLossError, InvalidArgumentError, NotFoundError
from tapeflow.core.tensor import TensorShape

if TYPE_CHECKING:
    from typing import Callable, TypeVar

    from .models import Model
    _T = TypeVar("_T")   # a registered class or function, returned as it is

_GLOBAL_CUSTOM_OBJECTS: dict = {}  # registered name ("package>name") -> class or function
_GLOBAL_CUSTOM_NAMES: dict = {}  # class or function -> registered name

_CONFIG, _METADATA, _WEIGHTS = "config.json", "metadata.json", "model.weights.safetensors"
_OPTIMIZER = "optimizer.safetensors"  # a compiled model's optimizer state: step count and slots
# modules a config's class is looked up in when it names no module of its own (or a Keras one)
_SEARCH = ("tapeflow.nn.layers", "tapeflow.nn.models", "tapeflow.nn.functional", "tapeflow.nn.initializers",
           "tapeflow.nn.regularizers", "tapeflow.nn.optimizers", "tapeflow.nn.losses", "tapeflow.nn.metrics",
           "tapeflow.nn.activations", "tapeflow.nn.optimizers.schedules")


def register_keras_serializable(package: str = "Custom", name: str | None = None) -> Callable[[_T], _T]:
    """Register a class or function under ``"package>name"`` so ``load_model`` and
    ``deserialize_keras_object`` find it without ``custom_objects``.

    >>> import tapeflow as tf
    >>> @tf.keras.saving.register_keras_serializable(package="Docs", name="triple")
    ... def triple(x):
    ...     return x * 3
    >>> tf.keras.saving.get_registered_name(triple)
    'Docs>triple'
    """
    if not isinstance(package, str) or ">" in package:
        raise InvalidArgumentError(f"package={package!r}: allowed: a string without '>'", "RegisterSerializable")

    def deco(obj: _T) -> _T:
        key = f"{package}>{name or obj.__name__}"
        if isinstance(obj, type) and not hasattr(obj, "get_config"):
            raise TypeError(f"register_keras_serializable: class {obj.__name__} has no get_config(); allowed: "
                            "classes with get_config/from_config, or functions")
        _GLOBAL_CUSTOM_OBJECTS[key] = obj
        _GLOBAL_CUSTOM_NAMES[obj] = key
        return obj

    return deco


def get_registered_name(obj) -> str:
    """The name ``obj`` was registered under (``"package>name"``), else its own name.

    >>> import tapeflow as tf
    >>> tf.keras.saving.get_registered_name(tf.keras.layers.Dense)
    'Dense'
    """
    key = _GLOBAL_CUSTOM_NAMES.get(obj)
    return key if key is not None else getattr(obj, "__name__", type(obj).__name__)


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class or function registered (or given in ``custom_objects``/``module_objects``) as ``name``, or None.

    >>> import tapeflow as tf
    >>> tf.keras.saving.get_registered_object("Nothing>here") is None
    True
    """
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name in _GLOBAL_CUSTOM_OBJECTS:
        return _GLOBAL_CUSTOM_OBJECTS[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def get_custom_objects() -> dict:
    """The live registry of registered objects (``"package>name"`` -> object), as Keras's.

    >>> import tapeflow as tf
    >>> isinstance(tf.keras.saving.get_custom_objects(), dict)
    True
    """
    return _GLOBAL_CUSTOM_OBJECTS


# ---- serialization --------------------------------------------------------------------------------

def serialize_keras_object(obj):
    """A JSON-ready description of ``obj`` (Keras 3's format): plain values as they are, tuples as
    ``{"class_name": "__tuple__", ...}``, functions by name, objects as ``{"module", "class_name",
    "config", "registered_name"}`` (layers also with their ``build_config``).

    >>> import tapeflow as tf
    >>> cfg = tf.keras.saving.serialize_keras_object(tf.keras.layers.Dense(2, name="d"))
    >>> cfg["class_name"], cfg["config"]["units"]
    ('Dense', 2)
    """
    from .layers.base import Layer

    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return {"class_name": "__numpy__", "config": {"value": obj.tolist(), "dtype": str(obj.dtype)}}
    if isinstance(obj, _dt.DType):
        return obj.name
    if isinstance(obj, (tuple, TensorShape)):
        return {"class_name": "__tuple__", "config": {"value": [serialize_keras_object(e) for e in obj]}}
    if isinstance(obj, list):
        return [serialize_keras_object(e) for e in obj]
    if isinstance(obj, dict):
        return {str(k): serialize_keras_object(v) for k, v in obj.items()}
    if isinstance(obj, type):
        raise TypeError(f"cannot serialize the class {obj.__name__} itself; allowed: instances, functions, values")
    if callable(obj) and not hasattr(obj, "get_config"):
        name = getattr(obj, "__name__", None)
        if name is None or name == "<lambda>":
            raise ValueError(f"cannot serialize {obj!r}: a lambda has no name to save; allowed: a named function "
                             "(registered with register_keras_serializable when it is your own) or a layer")
        return {"module": getattr(obj, "__module__", None), "class_name": "function", "config": name,
                "registered_name": _GLOBAL_CUSTOM_NAMES.get(obj)}
    get_config = getattr(obj, "get_config", None)
    if get_config is None:
        raise TypeError(f"cannot serialize {type(obj).__name__}: it has no get_config(); allowed: layers, models, "
                        "optimizers, losses, metrics, initializers, regularizers, functions and JSON values")
    cls = type(obj)
    out = {"module": cls.__module__, "class_name": cls.__name__, "config": serialize_keras_object(get_config()),
           "registered_name": _GLOBAL_CUSTOM_NAMES.get(cls)}
    if isinstance(obj, Layer) and obj.built:
        shape = obj.__dict__.get("_in_shape")
        if shape is not None and _jsonable_shape(shape):
            out["build_config"] = {"input_shape": serialize_keras_object(_plain_shape(shape))}
    return out


def _plain_shape(s):
    if isinstance(s, (list, tuple)) and all(d is None or isinstance(d, (int, np.integer)) for d in s):
        return tuple(None if d is None else int(d) for d in s)
    if isinstance(s, (list, tuple)):
        return [_plain_shape(e) for e in s]
    if isinstance(s, dict):
        return {k: _plain_shape(v) for k, v in s.items()}
    return s


def _jsonable_shape(s) -> bool:
    if isinstance(s, (list, tuple)):
        return all(d is None or isinstance(d, (int, np.integer)) or _jsonable_shape(d) for d in s)
    if isinstance(s, dict):
        return all(_jsonable_shape(v) for v in s.values())
    return False


def _lookup(cfg, custom_objects, safe_mode=True):
    class_name, module = cfg.get("class_name"), cfg.get("module")
    reg = cfg.get("registered_name")
    for key in (reg, class_name):
        if key:
            found = get_registered_object(key, custom_objects)
            if found is not None:
                return found
    if module and (module.startswith("tapeflow.") or not safe_mode):
        # another module's class is imported only with safe_mode=False: importing runs that module's code
        try:
            mod = importlib.import_module(module)
        except ImportError:
            mod = None
        found = getattr(mod, class_name, None) if mod is not None else None
        if found is not None:
            return found
    for name in _SEARCH:
        found = getattr(importlib.import_module(name), class_name, None)
        if found is not None and (isinstance(found, type) or callable(found)):
            return found
    raise TypeError(f"could not find class or function {reg or class_name!r} (module {module!r}) to deserialize; "
                    "allowed: tapeflow's own, a class given in custom_objects={...}, one decorated with "
                    "@tf.keras.saving.register_keras_serializable(), or (safe_mode=False, for a file you trust) "
                    "one imported from the module the file names")


class _Scope(threading.local):
    safe_mode = True  # what nested from_config calls (a functional model's layers) deserialize with


_SCOPE = _Scope()


def deserialize_keras_object(config, custom_objects=None, safe_mode=None, **kwargs):
    """Rebuild what ``serialize_keras_object`` wrote (classes looked up in ``custom_objects``, the
    registry, then tapeflow's modules; with ``safe_mode=False`` also imported from the module the
    config names, which runs that module's code: only for configs you trust).

    >>> import tapeflow as tf
    >>> layer = tf.keras.layers.Dense(3, activation="relu", name="hidden")
    >>> again = tf.keras.saving.deserialize_keras_object(tf.keras.saving.serialize_keras_object(layer))
    >>> type(again).__name__, again.units, again.name
    ('Dense', 3, 'hidden')
    """
    if kwargs:
        raise TypeError(f"deserialize_keras_object() got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
    if safe_mode is None:
        safe_mode = _SCOPE.safe_mode
    elif safe_mode is not _SCOPE.safe_mode:
        prev, _SCOPE.safe_mode = _SCOPE.safe_mode, bool(safe_mode)
        try:
            return deserialize_keras_object(config, custom_objects, None)
        finally:
            _SCOPE.safe_mode = prev
    if config is None or isinstance(config, (bool, int, float, str)):
        return config
    if isinstance(config, list):
        return [deserialize_keras_object(e, custom_objects, safe_mode) for e in config]
    if not isinstance(config, dict):
        raise TypeError(f"cannot deserialize {type(config).__name__}; allowed: what serialize_keras_object wrote")
    cn = config.get("class_name")
    if cn is None or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects, safe_mode) for k, v in config.items()}
    inner = config["config"]
    if cn == "__tuple__":
        return tuple(deserialize_keras_object(e, custom_objects, safe_mode) for e in inner["value"])
    if cn == "__numpy__":
        return np.array(inner["value"], dtype=inner["dtype"])
    if cn == "__keras_tensor__":
        raise ValueError("a symbolic tensor reference outside a functional model's config")
    if cn == "function":
        probe = {"class_name": inner, "module": config.get("module"), "registered_name": config.get("registered_name")}
        return _lookup(probe, custom_objects, safe_mode)
    cls = _lookup(config, custom_objects, safe_mode)
    from .models import Model

    if isinstance(cls, type) and issubclass(cls, Model) and _takes_custom_objects(cls.from_config):
        obj = cls.from_config(inner, custom_objects=custom_objects)
    else:
        obj = cls.from_config(deserialize_keras_object(inner, custom_objects, safe_mode))
    build = config.get("build_config")
    if build is not None and not getattr(obj, "built", True):
        shape = deserialize_keras_object(build.get("input_shape"), custom_objects, safe_mode)
        if shape is not None:
            obj.build(shape)
    return obj


def _takes_custom_objects(fn) -> bool:
    import inspect

    try:
        return "custom_objects" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# ---- .keras files ---------------------------------------------------------------------------------------

def _check_path(filepath, op):
    path = os.fspath(filepath)
    if not str(path).endswith(".keras"):
        raise InvalidArgumentError(f"{path!r}: a whole model is saved as a .keras file; allowed: a path ending in "
                                   "'.keras' (save_weights writes the weights alone)", op)
    return path


def save_model(model, filepath, overwrite=True):
    """Write ``model`` to ``filepath`` (a ``.keras`` zip: config, metadata, safetensors weights), atomically.

    >>> import os, tempfile
    >>> import tapeflow as tf
    >>> model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.keras")
    >>> tf.keras.saving.save_model(model, path)
    >>> import zipfile; sorted(zipfile.ZipFile(path).namelist())
    ['config.json', 'metadata.json', 'model.weights.safetensors']
    """
    from . import __version__, checkpoint

    path = _check_path(filepath, "SaveModel")
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path!r} exists and overwrite=False")
    config = serialize_keras_object(model)
    compile_args = model.__dict__.get("_compile_args")
    if compile_args is not None and model.__dict__.get("_compiled"):
        config["compile_config"] = _compile_config(model, compile_args)
    meta = {"keras_version": "3", "tapeflow_version": __version__,
            "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    opt_leaves = _optimizer_leaves(model) if "compile_config" in config else {}
    with tempfile.TemporaryDirectory() as d:
        wpath = checkpoint._write_file(os.path.join(d, _WEIGHTS), checkpoint._leaves(model))
        with open(wpath, "rb") as f:
            weights = f.read()
        opt_bytes = None
        if opt_leaves:
            opath = checkpoint._write_file(os.path.join(d, _OPTIMIZER), opt_leaves)
            with open(opath, "rb") as f:
                opt_bytes = f.read()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(_CONFIG, json.dumps(config))
        z.writestr(_METADATA, json.dumps(meta))
        z.writestr(_WEIGHTS, weights)
        if opt_bytes is not None:
            z.writestr(_OPTIMIZER, opt_bytes)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    checkpoint._atomic_write(path, buf.getvalue())


def _optimizer_leaves(model) -> dict:
    """{key: variable} of the compiled optimizer's state (``iterations``, the slots under their variables' paths)."""
    from . import checkpoint

    opt = model.__dict__.get("optimizer")
    if opt is None or not hasattr(opt, "_slots"):
        return {}
    leaves = checkpoint._leaves(checkpoint.Checkpoint(model=model, optimizer=opt))
    return {k: v for k, v in leaves.items() if k.startswith("optimizer/")}


def _restore_optimizer(model, data: bytes, path):
    """Give the compiled optimizer the state saved with the model (its slots are made first, as Keras 3
    builds the optimizer on loading); a saved value with no variable to take it is a warning."""
    import warnings

    from . import checkpoint

    opt = model.optimizer
    if hasattr(opt, "build"):
        opt.build(model.trainable_variables)
    with tempfile.TemporaryDirectory() as d:
        opath = os.path.join(d, _OPTIMIZER)
        with open(opath, "wb") as f:
            f.write(data)
        values = checkpoint._read_file(opath)
    leaves = _optimizer_leaves(model)
    checkpoint._assign_all(path, [(k, values[k], leaves[k]) for k in values if k in leaves])
    left = sorted(k for k in values if k not in leaves)
    if left:
        warnings.warn(f"{path!r}: the optimizer's saved state {left[:10]} matches no variable of the compiled "
                      f"{type(opt).__name__}; it starts without it", _CheckpointWarning, stacklevel=3)


def _compile_config(model, args):
    out = {}
    for k, v in args.items():
        if k == "optimizer":
            v = model.optimizer
        out[k] = serialize_keras_object(v)
    return out


def load_model(filepath: str | os.PathLike[str], custom_objects: dict[str, Any] | None = None, compile: bool = True,
               safe_mode: bool = True) -> Model:
    """Rebuild a model saved with ``model.save``: architecture, weights and (``compile=True``) its compile
    arguments.  A missing file raises NotFoundError; a file that is not a ``.keras`` archive, DataLossError.
    Classes come from tapeflow, ``custom_objects`` and the registry; ``safe_mode=False`` (a file you trust)
    also imports the module a class was defined in.  Python code (a lambda) is never saved or loaded.

    >>> import os, tempfile
    >>> import tapeflow as tf
    >>> model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])
    >>> model.compile(optimizer="adam", loss="mse")
    >>> path = os.path.join(tempfile.mkdtemp(), "compiled.keras")
    >>> model.save(path)
    >>> again = tf.keras.saving.load_model(path)
    >>> type(again.optimizer).__name__, again.compiled_loss is not None
    ('Adam', True)
    """
    from . import checkpoint

    path = _check_path(filepath, "LoadModel")
    if not os.path.isfile(path):
        raise NotFoundError(f"no model file at {path!r}", "LoadModel")
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            missing = [n for n in (_CONFIG, _WEIGHTS) if n not in names]
            if missing:
                raise DataLossError(f"{path!r} is not a tapeflow .keras archive: it lacks {missing}", "LoadModel")
            config = json.loads(z.read(_CONFIG).decode("utf-8"))
            weights = z.read(_WEIGHTS)
            opt_state = z.read(_OPTIMIZER) if _OPTIMIZER in names else None
    except (zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError, EOFError) as e:
        raise DataLossError(f"{path!r} is damaged or not a .keras archive ({type(e).__name__}: {e})",
                            "LoadModel") from None
    model = deserialize_keras_object({k: v for k, v in config.items() if k != "compile_config"},
                                     custom_objects=custom_objects, safe_mode=safe_mode)
    with tempfile.TemporaryDirectory() as d:
        wpath = os.path.join(d, _WEIGHTS)
        with open(wpath, "wb") as f:
            f.write(weights)
        checkpoint.restore_into(model, wpath, on_missing="raise")
    cc = config.get("compile_config")
    if compile and cc:
        args = {k: deserialize_keras_object(v, custom_objects, safe_mode) for k, v in cc.items()}
        model.compile(**args)
        if opt_state is not None:
            _restore_optimizer(model, opt_state, path)
    return model
