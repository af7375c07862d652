"""Object-based checkpoints (``tf.train.Checkpoint``, ``CheckpointManager``, ``latest_checkpoint``,
``list_variables``, ``load_variable``) and the weights files of ``Model.save_weights``/``load_weights``.

A checkpoint stores every variable reachable from its root objects, keyed by the path of
attribute names that leads to it (``model/dense1/kernel``, ``optimizer/iterations``; an
optimizer's slots under the path of their variable).  Tensors are stored in one
safetensors file, written to a temporary file and renamed into place, with a checksum
of the contents: a damaged, truncated or mismatched file raises a clear error before any
variable changes.  Values for variables that do not exist yet (a model not built) wait
and are assigned the moment those variables are created.

>>> import os, tempfile
>>> import tapeflow as tf
>>> d = tempfile.mkdtemp()
>>> v = tf.Variable(2.0)
>>> ckpt = tf.train.Checkpoint(v=v)
>>> path = ckpt.save(os.path.join(d, "ckpt"))
>>> os.path.basename(path), tf.train.latest_checkpoint(d) == path
('ckpt-1', True)
>>> _ = v.assign(11.0)
>>> _ = ckpt.restore(path).assert_consumed()
>>> float(v)
2.0
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import weakref

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import DataLossError, InvalidArgumentError, NotFoundError
from tapeflow.core.tensor import constant
from tapeflow.core.variables import Variable

from .layers import base as _base
from .layers.base import Layer
from .metrics import Metric
from .optimizers import Optimizer

_FORMAT = "tapeflow-checkpoint"
_SUFFIX = ".safetensors"
_STATE_FILE = "checkpoint"


# ---- the object graph -----------------------------------------------------------------------

def _esc(name) -> str:
    return str(name).replace("%", "%25").replace("/", "%2F")


def _expand(name, value):
    if isinstance(value, (Variable, Layer, Optimizer, Metric, Checkpoint)) or hasattr(value, "_checkpoint_children"):
        yield name, value
    elif isinstance(value, (list, tuple)):
        for i, e in enumerate(value):
            if not isinstance(e, (str, int, float, bytes)):
                yield from _expand(f"{name}/{i}", e)
    elif isinstance(value, dict):
        for k, e in value.items():
            yield from _expand(f"{name}/{_esc(k)}", e)


def _children(obj):
    """(name, child) pairs of a checkpointable object, in a stable order."""
    custom = getattr(obj, "_checkpoint_children", None)
    if custom is not None:
        yield from custom()
        return
    if isinstance(obj, Checkpoint):
        for k, v in obj._ckpt_children.items():
            yield from _expand(_esc(k), v)
    elif isinstance(obj, Layer):
        names = obj.__dict__.get("_weight_names", {})
        for v in obj.__dict__.get("_weights", ()):
            yield _esc(names.get(id(v), "variable")), v
        for k, v in obj.__dict__.items():
            if k in _base._INTERNAL or isinstance(v, (str, bytes, int, float, np.ndarray)):
                continue
            if isinstance(v, (Optimizer, Metric)):
                continue  # a compiled model's optimizer is checkpointed only when passed to Checkpoint
            yield from _expand(_esc(k), v)
    elif isinstance(obj, Optimizer):
        yield "iterations", obj.iterations
    elif isinstance(obj, Metric):
        for v in obj._variables:
            yield _esc(v.name.split("/")[-1].split(":")[0]), v


def _leaves(root) -> dict:
    """{key: variable} for every variable reachable from ``root`` (slots under their variable's path)."""
    out, seen, opts = {}, {id(root)}, []

    def walk(obj, path):
        for name, child in _children(obj):
            if id(child) in seen:
                continue
            seen.add(id(child))
            p = f"{path}/{name}" if path else name
            if isinstance(child, Variable):
                out[p] = child
            else:
                if isinstance(child, Optimizer):
                    opts.append((p, child))
                walk(child, p)

    walk(root, "")
    paths = {id(v): p for p, v in out.items()}
    for p, opt in opts:
        for var in opt._order:
            vp = paths.get(id(var))
            if vp is None:
                continue  # as TensorFlow: slots are saved only for variables the checkpoint holds
            for sn, sv in opt._slots[var].items():
                out[f"{p}/.slots/{vp}/{sn}"] = sv
    return out


# ---- files ------------------------------------------------------------------------------------

def _file(path) -> str:
    path = os.fspath(path)
    return path if path.endswith(_SUFFIX) else path + _SUFFIX


def _digest(tensors: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(tensors):
        a = tensors[k]
        h.update(k.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(np.array(a, order="C", copy=True).tobytes())
    return h.hexdigest()


def _to_host(var):
    arr = np.array(var.numpy())
    if var.dtype is _dt.bfloat16:
        return arr.view(np.uint16), "bfloat16"
    return arr, None


def _write_file(path: str, leaves: dict, extra_meta=None) -> str:
    from safetensors.numpy import save as st_save

    tensors, special = {}, {}
    for k, v in leaves.items():
        arr, dt = _to_host(v)
        tensors[k] = np.array(arr, order="C", copy=True)  # (ascontiguousarray would make 0-d arrays 1-d)
        if dt:
            special[k] = dt
    meta = {"format": _FORMAT, "version": "1", "sha256": _digest(tensors), "dtypes": json.dumps(special)}
    meta.update(extra_meta or {})
    data = st_save(tensors, metadata=meta)
    path = _file(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # atomic: readers see the old file or the new one, never half of one
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _read_file(path) -> dict:
    """{key: array} from a checkpoint file, verified (a damaged file raises DataLossError)."""
    from safetensors import safe_open  # noqa: F401  (the package must be importable)
    from safetensors.numpy import load as st_load

    fname = _file(path)
    if not os.path.exists(fname):
        raise NotFoundError(f"no checkpoint at {os.fspath(path)!r} (looked for {fname!r})", "RestoreV2")
    with open(fname, "rb") as f:
        data = f.read()
    try:
        tensors = st_load(data)
        header_len = int.from_bytes(data[:8], "little")
        meta = json.loads(data[8:8 + header_len]).get("__metadata__") or {}
    except Exception as e:  # noqa: BLE001 (safetensors raises its own error types for bad headers and short files)
        raise DataLossError(f"checkpoint file {fname!r} is damaged or truncated ({len(data)} bytes): "
                            f"{type(e).__name__}: {e}", "RestoreV2") from None
    if meta.get("format") != _FORMAT:
        raise DataLossError(f"{fname!r} is a safetensors file but not a tapeflow checkpoint "
                            f"(format {meta.get('format')!r}; allowed: {_FORMAT!r})", "RestoreV2")
    if meta.get("sha256") != _digest(tensors):
        raise DataLossError(f"checkpoint file {fname!r} is damaged: its contents do not match their checksum",
                            "RestoreV2")
    for k, dt in json.loads(meta.get("dtypes", "{}")).items():
        if dt == "bfloat16":
            tensors[k] = tensors[k].view(_dt.bfloat16.np)
    return tensors


# ---- restoring ----------------------------------------------------------------------------------

def _check(path, key, arr, var):
    if tuple(arr.shape) != tuple(var.shape):
        raise InvalidArgumentError(
            f"checkpoint {os.fspath(path)!r} holds {key!r} with shape {tuple(arr.shape)}, but the variable "
            f"{var.name!r} has shape {tuple(var.shape)}; allowed: the same shape (was the model built "
            "differently?)", "RestoreV2")
    if np.dtype(arr.dtype) != np.dtype(var.dtype.np):
        raise InvalidArgumentError(
            f"checkpoint {os.fspath(path)!r} holds {key!r} as {np.dtype(arr.dtype).name}, but the variable "
            f"{var.name!r} is {var.dtype.name}; allowed: the same dtype", "RestoreV2")


def _assign_all(path, pairs):
    """Check every (key, array, variable) first, then assign: a mismatch changes nothing."""
    for key, arr, var in pairs:
        _check(path, key, arr, var)
    for _, arr, var in pairs:
        var.assign(constant(arr, dtype=var.dtype))


class CheckpointLoadStatus:
    """What a restore matched; values for variables not created yet are assigned when they appear.

    ``assert_consumed()`` checks every value in the file found its variable and every variable
    reachable from the root got a value; ``assert_existing_objects_matched()`` checks only the
    variables that exist now; ``expect_partial()`` accepts a partial match.
    """

    def __init__(self, root, path, values):
        self._root = _root_ref(root)
        self.save_path = os.fspath(path)
        self._values = values
        self._pending = dict(values)
        self._matched = set()

    def _apply(self):
        root = self._root()
        if root is None:
            return False
        leaves = _leaves(root)
        pairs = [(k, self._pending[k], leaves[k]) for k in list(self._pending) if k in leaves]
        if pairs:
            _assign_all(self.save_path, pairs)
            for k, _, _ in pairs:
                del self._pending[k]
                self._matched.add(k)
        return bool(self._pending)

    def assert_consumed(self):
        """Raise AssertionError unless every checkpoint value and every variable were matched."""
        self._apply()
        if self._pending:
            raise AssertionError(f"unresolved values in checkpoint {self.save_path!r} (no variable took them): "
                                 f"{sorted(self._pending)[:20]}")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Raise AssertionError if a variable reachable from the root got no value from the checkpoint."""
        root = self._root()
        missing = sorted(k for k in (_leaves(root) if root is not None else {}) if k not in self._values)
        if missing:
            raise AssertionError(f"variables with no value in checkpoint {self.save_path!r}: {missing[:20]}")
        return self

    def assert_nontrivial_match(self):
        """Raise AssertionError unless at least one variable was restored."""
        if not self._matched:
            raise AssertionError(f"nothing in {self.save_path!r} matched any variable")
        return self

    def expect_partial(self):
        """Accept a partial restore (no check)."""
        return self

    def run_restore_ops(self, session=None):
        """Values are assigned eagerly; nothing left to run."""

    def initialize_or_restore(self, session=None):
        """Values are assigned eagerly; nothing left to run."""

    @property
    def pending(self) -> list:
        """Keys still waiting for their variables."""
        return sorted(self._pending)


class InitializationOnlyStatus(CheckpointLoadStatus):
    """``restore(None)``: nothing to restore (variables keep their initial values)."""

    def __init__(self, root):
        super().__init__(root, "", {})

    def assert_existing_objects_matched(self):
        raise AssertionError("no checkpoint was restored (restore(None))")


class _RootView:
    """A Checkpoint's children held weakly: waiting values must not keep a model alive, and the
    Checkpoint object itself is often a temporary (``Checkpoint(model=m).restore(path)``)."""

    def __init__(self, ckpt):
        self._refs = []
        for k, v in ckpt._ckpt_children.items():
            try:
                self._refs.append((k, weakref.ref(v)))
            except TypeError:  # lists and dicts cannot be weakly referenced: hold them
                self._refs.append((k, (lambda v=v: v)))

    def _checkpoint_children(self):
        for k, ref in self._refs:
            v = ref()
            if v is not None:
                yield from _expand(_esc(k), v)

    def alive(self):
        return any(ref() is not None for k, ref in self._refs if k != "save_counter")


def _root_ref(root):
    if isinstance(root, Checkpoint):
        view = _RootView(root)
        return lambda: view if view.alive() else None
    return weakref.ref(root)


_RUNNING = [False]


def _run_deferred():
    """Give waiting checkpoint values to variables created since (called when variables appear)."""
    if _RUNNING[0]:
        return
    _RUNNING[0] = True
    try:
        keep = []
        for status in list(_base._PENDING_RESTORES):
            if status._apply():
                keep.append(status)
        _base._PENDING_RESTORES[:] = keep
    finally:
        _RUNNING[0] = False


def restore_into(root, path) -> CheckpointLoadStatus:
    """Restore the variables reachable from ``root`` from the checkpoint at ``path``."""
    values = _read_file(path)
    status = CheckpointLoadStatus(root, path, values)
    if status._apply():
        _base._PENDING_RESTORES.append(status)
    return status


def save_into(root, path, extra_meta=None) -> str:
    """Write every variable reachable from ``root`` to ``path`` (``.safetensors`` appended if missing)."""
    return _write_file(path, _leaves(root), extra_meta)


# ---- Checkpoint ---------------------------------------------------------------------------------

class Checkpoint:
    """Groups objects to save and restore: ``Checkpoint(model=model, optimizer=opt)``.

    ``save(prefix)`` writes ``prefix-N`` (N counts saves) and records it as the directory's
    latest checkpoint; ``write(path)`` writes exactly one file; ``restore(path)`` assigns every
    matching variable now and the rest as they are created.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    >>> _ = model(tf.ones([1, 3]))
    >>> ckpt = tf.train.Checkpoint(model=model)
    >>> path = ckpt.write(tempfile.mkdtemp() + "/weights")
    >>> fresh = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    >>> status = tf.train.Checkpoint(model=fresh).restore(path)   # fresh is not built yet
    >>> _ = fresh(tf.ones([1, 3]))                                  # ... its weights are restored now
    >>> bool((fresh.layers[0].kernel.numpy() == model.layers[0].kernel.numpy()).all())
    True
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_ckpt_children", {})
        for k, v in kwargs.items():
            if not (isinstance(v, (Variable, Layer, Optimizer, Metric, Checkpoint, list, tuple, dict))
                    or hasattr(v, "_checkpoint_children")):
                raise ValueError(f"Checkpoint value {k}={type(v).__name__} is not checkpointable; allowed: "
                                 "variables, layers, models, optimizers, metrics, checkpoints and lists/dicts of them")
            self._ckpt_children[k] = v
        if root is not None:
            for name, child in _children(root):
                self._ckpt_children.setdefault(name, child)
        self._ckpt_children.setdefault("save_counter", Variable(np.int64(0), trainable=False, name="save_counter"))

    def __getattr__(self, name):
        try:
            return self.__dict__["_ckpt_children"][name]
        except KeyError:
            raise AttributeError(f"'Checkpoint' object has no attribute {name!r}") from None

    def __setattr__(self, name, value):
        self._ckpt_children[name] = value
        if _base._PENDING_RESTORES:
            _run_deferred()

    @property
    def save_counter(self):
        """How many times ``save`` ran (saved in the checkpoint too)."""
        return self._ckpt_children["save_counter"]

    def write(self, file_prefix, options=None) -> str:
        """Write one checkpoint file at ``file_prefix`` (``.safetensors`` appended); returns ``file_prefix``."""
        save_into(self, file_prefix)
        return os.fspath(file_prefix)

    def save(self, file_prefix, options=None) -> str:
        """Write ``file_prefix-N`` (N = the save count) and make it the directory's latest checkpoint."""
        n = int(self.save_counter) + 1
        self.save_counter.assign(np.int64(n))
        path = f"{os.fspath(file_prefix)}-{n}"
        try:
            self.write(path)
        except BaseException:
            self.save_counter.assign(np.int64(n - 1))
            raise
        d = os.path.dirname(os.path.abspath(path))
        state = _read_state(d)
        paths = [p for p in state.get("all", []) if p != path] + [path]
        _write_state(d, path, paths)
        return path

    def restore(self, save_path, options=None) -> CheckpointLoadStatus:
        """Restore from ``save_path`` (a prefix such as ``ckpt-3``); ``None`` restores nothing."""
        if save_path is None:
            return InitializationOnlyStatus(self)
        return restore_into(self, save_path)

    def read(self, save_path, options=None) -> CheckpointLoadStatus:
        """Like ``restore`` for a file from ``write``."""
        return self.restore(save_path)


# ---- the directory's state file and the manager ---------------------------------------------

def _read_state(directory) -> dict:
    fname = os.path.join(directory, _STATE_FILE)
    if not os.path.exists(fname):
        return {}
    latest, all_paths = None, []
    with open(fname) as f:
        for line in f:
            m = re.match(r'\s*(model_checkpoint_path|all_model_checkpoint_paths)\s*:\s*"(.*)"\s*$', line)
            if not m:
                continue
            p = m.group(2)
            p = p if os.path.isabs(p) else os.path.join(directory, p)
            if m.group(1) == "model_checkpoint_path":
                latest = p
            else:
                all_paths.append(p)
    return {"latest": latest, "all": all_paths}


def _write_state(directory, latest, all_paths):
    def rel(p):
        r = os.path.relpath(p, directory)
        return r if not r.startswith("..") else os.path.abspath(p)

    lines = [f'model_checkpoint_path: "{rel(latest)}"'] + [f'all_model_checkpoint_paths: "{rel(p)}"'
                                                           for p in all_paths]
    fd, tmp = tempfile.mkstemp(prefix=_STATE_FILE + ".", suffix=".tmp", dir=directory)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(directory, _STATE_FILE))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint saved in ``checkpoint_dir`` (a path for ``restore``), or None.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> tf.train.latest_checkpoint(tempfile.mkdtemp()) is None
    True
    """
    state = _read_state(os.fspath(checkpoint_dir))
    latest = state.get("latest")
    if latest and os.path.exists(_file(latest)):
        return latest
    return None


class CheckpointManager:
    """Saves numbered checkpoints in ``directory`` and deletes all but the newest ``max_to_keep``.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> ckpt = tf.train.Checkpoint(step=tf.Variable(0))
    >>> manager = tf.train.CheckpointManager(ckpt, tempfile.mkdtemp(), max_to_keep=2)
    >>> for _ in range(3):
    ...     _ = manager.save()
    >>> [p.rsplit("/", 1)[-1] for p in manager.checkpoints]
    ['ckpt-2', 'ckpt-3']
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"max_to_keep must be positive or None, got {max_to_keep}")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter, self._interval, self._init_fn = step_counter, checkpoint_interval, init_fn
        self._last_step = None
        state = _read_state(self._directory)
        self._checkpoints = [p for p in state.get("all", []) if os.path.exists(_file(p))]
        self._latest = state.get("latest") if state.get("latest") in self._checkpoints else \
            (self._checkpoints[-1] if self._checkpoints else None)

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoints(self) -> list:
        """The kept checkpoints, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        """The newest checkpoint, or None."""
        return self._latest

    def save(self, checkpoint_number=None, check_interval=True):
        """Save ``ckpt-N`` (N = ``checkpoint_number``, else the checkpoint's save count) and prune old ones."""
        if self._interval is not None and check_interval and self._step_counter is not None:
            step = int(self._step_counter)
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        counter = self._checkpoint.save_counter if isinstance(self._checkpoint, Checkpoint) else None
        if counter is not None:
            counter.assign(counter.read_value() + np.int64(1))
        if checkpoint_number is None:
            checkpoint_number = int(counter) if counter is not None else len(self._checkpoints) + 1
        path = f"{self._prefix}-{int(checkpoint_number)}"
        os.makedirs(self._directory, exist_ok=True)
        if isinstance(self._checkpoint, Checkpoint):
            self._checkpoint.write(path)
        else:
            save_into(self._checkpoint, path)
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                old = self._checkpoints.pop(0)
                try:
                    os.unlink(_file(old))
                except FileNotFoundError:
                    pass
        self._latest = path
        _write_state(self._directory, path, self._checkpoints)
        return path

    def restore_or_initialize(self):
        """Restore the latest checkpoint if there is one (returns its path), else run ``init_fn``."""
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None


def list_variables(ckpt_dir_or_file) -> list:
    """(key, shape) of every value in a checkpoint (a file, a prefix, or a directory's latest).

    >>> import tempfile
    >>> import tapeflow as tf
    >>> p = tf.train.Checkpoint(w=tf.Variable([1.0, 2.0])).write(tempfile.mkdtemp() + "/c")
    >>> tf.train.list_variables(p)
    [('save_counter', []), ('w', [2])]
    """
    path = _resolve(ckpt_dir_or_file)
    return [(k, list(v.shape)) for k, v in sorted(_read_file(path).items())]


def load_variable(ckpt_dir_or_file, name):
    """The value stored under ``name`` in a checkpoint, as a NumPy array."""
    path = _resolve(ckpt_dir_or_file)
    values = _read_file(path)
    if name not in values:
        raise NotFoundError(f"{name!r} is not in checkpoint {path!r}; it holds {sorted(values)[:20]}", "RestoreV2")
    return values[name]


def _resolve(p):
    p = os.fspath(p)
    if os.path.isdir(p):
        latest = latest_checkpoint(p)
        if latest is None:
            raise NotFoundError(f"no checkpoint recorded in directory {p!r}", "RestoreV2")
        return latest
    return p


__all__ = [
    "Checkpoint",
    "CheckpointLoadStatus",
    "CheckpointManager",
    "latest_checkpoint",
    "list_variables",
    "load_variable",
]
