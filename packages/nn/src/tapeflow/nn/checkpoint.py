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
import time
import warnings
import weakref

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import CheckpointWarning, DataLossError, InvalidArgumentError, NotFoundError
from tapeflow.core.tensor import constant
from tapeflow.core.variables import Variable

from . import _distribute
from .layers import base as _base
from .layers.base import Layer
from .metrics import Metric
from .optimizers import Optimizer

try:
    import fcntl as _fcntl
except ImportError:  # Windows: no flock (there a file being written cannot be deleted anyway)
    _fcntl = None

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
#
# A checkpoint file is a safetensors file whose metadata says ``format: tapeflow-checkpoint``,
# ``version`` ("3"; "1" and "2" files of earlier builds still read), ``dtypes`` (JSON: tensors stored as
# uint16 that are bfloat16, in version 1 and 2 files; version 3 stores bfloat16 as safetensors' own ``BF16``, so
# torch and safetensors' other readers see bfloat16, and writes ``{}``) and ``sha256``: in versions 2 and 3
# the SHA-256 of the JSON list of [name, dtype, shape] of every tensor (sorted by name) and of every
# other metadata entry, then of the tensors' bytes in the same order; in version 1 of the tensors only.  A reader checks
# every field before it returns anything.
#
# Writes go to a temporary beside the target (``<file>.<8 hex>.tmp``, locked with flock while
# it is written) renamed into place; a temporary nobody holds locked was left by a killed
# write, and the next save of the same prefix removes it.

_VERSION = "3"
_VERSIONS = ("1", "2", "3")
_SPECIAL = {"bfloat16": np.dtype(np.uint16)}  # (version 1, 2) dtypes stored as another dtype -> the one stored
# safetensors' dtype codes -> NumPy (safetensors.numpy's own table has no BF16)
_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": _dt.bfloat16.np, "I64": np.int64,
              "U64": np.uint64, "I32": np.int32, "U32": np.uint32, "I16": np.int16, "U16": np.uint16, "I8": np.int8,
              "U8": np.uint8, "BOOL": np.bool_, "C64": np.complex64, "C128": np.complex128}
_TMP_TAIL = r"\.[a-z0-9_]{8}\.tmp"  # what _tmp_name appends (the mkstemp names of earlier builds match too)
_HOLDABLE = {d.np for d in _dt.ALL}


def _file(path) -> str:
    path = os.fspath(path)  # a Keras-style "x.weights.h5" name is kept (the file inside is safetensors)
    return path if path.endswith((_SUFFIX, ".h5")) else path + _SUFFIX


def _digest(tensors: dict, meta=None) -> str:
    """The checksum of a file's tensors (version 1) or of its tensors and metadata (version 2: ``meta``)."""
    h = hashlib.sha256()
    keys = sorted(tensors)
    if meta is None:
        for k in keys:
            a = tensors[k]
            h.update(k.encode())
            h.update(str(a.dtype).encode())
            h.update(str(a.shape).encode())
            h.update(np.array(a, order="C", copy=True).tobytes())
        return h.hexdigest()
    layout = [[k, str(tensors[k].dtype), list(tensors[k].shape)] for k in keys]
    rest = {k: v for k, v in meta.items() if k != "sha256"}
    h.update(json.dumps([layout, rest], sort_keys=True).encode())
    for k in keys:
        h.update(np.array(tensors[k], order="C", copy=True).tobytes())
    return h.hexdigest()


def _to_host(var):
    return np.array(var.numpy()), None  # bfloat16 included: safetensors writes an ml_dtypes bfloat16 array as BF16


def _st_load(data: bytes) -> dict:
    """{name: read-only array} of a safetensors file's bytes, BF16 as bfloat16."""
    from safetensors import deserialize

    out = {}
    for k, v in deserialize(data):
        np_dtype = _ST_DTYPES.get(v["dtype"])
        if np_dtype is None:
            raise ValueError(f"{k!r} has safetensors dtype {v['dtype']}; allowed: {', '.join(_ST_DTYPES)}")
        out[k] = np.frombuffer(v["data"], dtype=np_dtype).reshape(v["shape"])
    return out


def _tmp_name(path) -> str:
    """The name of the temporary a write of ``path`` goes through (``<path>.<8 hex>.tmp``)."""
    return f"{path}.{os.urandom(4).hex()}.tmp"


def _tmp_pattern(*names) -> re.Pattern:
    """Matches the temporaries of writes of the files named by the regular expressions ``names``."""
    return re.compile(f"(?:{'|'.join(names)}){_TMP_TAIL}")


def _atomic_write(path: str, data: bytes):
    """Write ``data`` to ``path`` through a locked temporary renamed into place (readers see the old
    file or the new one, never half of one; a failed write removes its temporary)."""
    if not _distribute.is_chief():  # under tf.distribute only the chief (MPI rank 0) writes
        return
    d = os.path.dirname(os.path.abspath(path))
    while True:
        tmp = _tmp_name(path)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            if _fcntl is not None:
                _fcntl.flock(f.fileno(), _fcntl.LOCK_EX)  # "in use" for _sweep_temporaries, until closed or killed
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            if _fcntl is not None:
                os.replace(tmp, path)  # still under the lock
        if _fcntl is None:
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _sweep_temporaries(directory, pattern: re.Pattern):
    """Remove the temporaries in ``directory`` whose names ``pattern`` matches and that no live write
    holds (a killed write's lock went with its process); other files are never touched."""
    if not _distribute.is_chief():  # the chief's temporaries are its own
        return
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for n in names:
        if not pattern.fullmatch(n):
            continue
        p = os.path.join(directory, n)
        if os.path.islink(p) or not os.path.isfile(p):
            continue
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        try:
            if _fcntl is not None:
                try:
                    _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
                except OSError:
                    continue  # a write in progress (this process or another) holds it
            try:
                os.unlink(p)
            except OSError:
                pass
        finally:
            os.close(fd)


def _write_file(path: str, leaves: dict, extra_meta=None) -> str:
    from safetensors.numpy import save as st_save

    tensors, special = {}, {}
    for k, v in leaves.items():
        arr, dt = _to_host(v)
        tensors[k] = np.array(arr, order="C", copy=True)  # (ascontiguousarray would make 0-d arrays 1-d)
        if dt:
            special[k] = dt
    meta = {"format": _FORMAT, "version": _VERSION, "dtypes": json.dumps(special, sort_keys=True)}
    for k, val in (extra_meta or {}).items():
        if k in meta or k == "sha256" or not isinstance(k, str) or not isinstance(val, str):
            raise InvalidArgumentError(f"checkpoint metadata {k!r}: {val!r} is not allowed; allowed: string keys "
                                       "and values other than format, version, dtypes and sha256", "SaveV2")
        meta[k] = val
    meta["sha256"] = _digest(tensors, meta)
    data = st_save(tensors, metadata=meta)
    path = _file(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    _sweep_temporaries(d, _tmp_pattern(re.escape(os.path.basename(path))))
    _atomic_write(path, data)
    return path


def _read_file(path) -> dict:
    """{key: array} from a checkpoint file, every field verified first: a damaged, truncated or
    crafted file raises DataLossError naming the file and what is wrong."""
    fname = _file(path)
    if not os.path.isfile(fname):
        raise NotFoundError(f"no checkpoint at {os.fspath(path)!r} (looked for {fname!r})", "RestoreV2")
    with open(fname, "rb") as f:
        data = f.read()
    n = len(data)

    def damaged(what):
        return DataLossError(f"checkpoint file {fname!r} is damaged or truncated ({n} bytes): {what}", "RestoreV2")

    if n < 8:
        raise damaged("shorter than the 8-byte header size")
    hlen = int.from_bytes(data[:8], "little")
    if hlen > n - 8:
        raise damaged(f"the header size says {hlen} bytes, but {n - 8} follow")
    try:
        header = json.loads(data[8:8 + hlen].decode("utf-8"))
    except Exception as e:  # noqa: BLE001 (JSON and UTF-8 errors, RecursionError for absurd nesting)
        raise damaged(f"the header is not JSON ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(header, dict):
        raise damaged(f"the header is a JSON {type(header).__name__}; allowed: an object")
    meta = header.get("__metadata__")
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        fmt = meta.get("format") if isinstance(meta, dict) else None
        raise DataLossError(f"{fname!r} is not a tapeflow checkpoint (format {fmt!r}; allowed: {_FORMAT!r}); "
                            "a damaged one, or a safetensors file written by something else", "RestoreV2")
    odd = sorted(k for k, v in meta.items() if not isinstance(v, str))
    if odd:
        raise damaged(f"metadata {odd} are not strings")
    version = meta.get("version")
    if version not in _VERSIONS:
        raise damaged(f"format version {version!r}; allowed: {', '.join(map(repr, _VERSIONS))}")
    sha = meta.get("sha256")
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise damaged(f"its checksum {sha!r} is not a SHA-256 hex digest")
    try:
        special = json.loads(meta["dtypes"])
    except KeyError:
        raise damaged("it has no 'dtypes' metadata") from None
    except Exception as e:  # noqa: BLE001
        raise damaged(f"its 'dtypes' metadata is not JSON ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(special, dict) or any(not isinstance(v, str) or v not in _SPECIAL for v in special.values()):
        raise damaged(f"its 'dtypes' metadata {meta['dtypes'][:200]!r} is not a map of tensor names to one of "
                      f"{sorted(_SPECIAL)}")
    try:
        tensors = _st_load(data)
    except Exception as e:  # noqa: BLE001 (safetensors raises its own error types for bad layouts and short files)
        raise damaged(f"{type(e).__name__}: {str(e)[:300]}") from None
    for k, dt in special.items():
        if k not in tensors:
            raise damaged(f"its 'dtypes' metadata names {k!r}, which the file does not hold")
        if tensors[k].dtype != _SPECIAL[dt]:
            raise damaged(f"{k!r} is marked {dt} but stored as {tensors[k].dtype}; allowed: {_SPECIAL[dt]}")
    if sha != _digest(tensors, meta if version != "1" else None):
        raise damaged("its contents do not match their checksum")
    for k, arr in tensors.items():
        if k in special:
            tensors[k] = arr.view(_dt.BY_NAME[special[k]].np)
        elif arr.dtype not in _HOLDABLE:
            raise damaged(f"{k!r} is stored as {arr.dtype}, which no tapeflow variable holds; allowed: "
                          f"{', '.join(d.name for d in _dt.ALL)}")
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

    ``on_missing`` says what a variable with no value in the file does: ``"ignore"`` (``Checkpoint.restore``,
    as TensorFlow's: the assertions report it), ``"raise"`` (``Model.load_weights``, as Keras 3's) or
    ``"warn"``; with ``skip_mismatch`` a value whose shape or dtype differs from its variable's is
    skipped with a warning instead of raising (Keras's ``skip_mismatch``).
    """

    def __init__(self, root, path, values, on_missing="ignore", skip_mismatch=False) -> None:
        self._root = _root_ref(root)
        self.save_path = os.fspath(path)
        self._keys = frozenset(values)  # (values are dropped as variables take them)
        self._pending = dict(values)
        self._matched = set()
        self._on_missing, self._skip_mismatch, self._warned = on_missing, skip_mismatch, set()
        self._seen = None

    def _apply(self):
        root = self._root()
        if root is None:
            return False
        if self._on_missing != "ignore":
            # load_weights into a model: every variable it creates is checked, so the status waits as long
            # as the model lives; it looks again only when what layers track has changed
            if self._seen == _base._VERSION[0]:
                return True
            self._seen = _base._VERSION[0]
        leaves = _leaves(root)
        if self._on_missing != "ignore":
            missing = sorted(k for k in leaves if k not in self._keys and k not in self._warned)
            if missing:
                msg = (f"checkpoint {self.save_path!r} has no value for {len(missing)} variable(s): "
                       f"{missing[:20]}")
                if self._on_missing == "raise":
                    raise InvalidArgumentError(msg + "; allowed: a file holding every variable, or "
                                               "load_weights(..., skip_mismatch=True) for a partial restore",
                                               "RestoreV2")
                self._warned.update(missing)
                warnings.warn(msg + "; they keep their values", CheckpointWarning, stacklevel=3)
        pairs = [(k, self._pending[k], leaves[k]) for k in list(self._pending) if k in leaves]
        if self._skip_mismatch:
            fits = []
            for key, arr, var in pairs:
                try:
                    _check(self.save_path, key, arr, var)
                except InvalidArgumentError as e:
                    warnings.warn(f"skipped: {e.message}", CheckpointWarning, stacklevel=3)
                    del self._pending[key]
                else:
                    fits.append((key, arr, var))
            pairs = fits
        if pairs:
            _assign_all(self.save_path, pairs)
            for k, _, _ in pairs:
                del self._pending[k]
                self._matched.add(k)
        return self._on_missing != "ignore" or bool(self._pending)

    def assert_consumed(self):
        """Raise AssertionError unless every checkpoint value and every variable were matched."""
        self._apply()
        if self._pending:
            raise AssertionError(f"unresolved values in checkpoint {self.save_path!r} (no variable took them): "
                                 f"{sorted(self._pending)[:20]}")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Raise AssertionError if a variable reachable from the root got no value from the checkpoint."""
        root = self._root()
        missing = sorted(k for k in (_leaves(root) if root is not None else {}) if k not in self._keys)
        if missing:
            raise AssertionError(f"variables with no value in checkpoint {self.save_path!r}: {missing[:20]}")
        return self

    def assert_nontrivial_match(self):
        """Raise AssertionError unless at least one variable was restored."""
        if not self._matched:
            raise AssertionError(f"nothing in {self.save_path!r} matched any variable")
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
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

    def __init__(self, root) -> None:
        super().__init__(root, "", {})

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        raise AssertionError("no checkpoint was restored (restore(None))")


class _RootView:
    """A Checkpoint's children held weakly: waiting values must not keep a model alive, and the
    Checkpoint object itself is often a temporary (``Checkpoint(model=m).restore(path)``)."""

    def __init__(self, ckpt) -> None:
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
    done = set()
    try:
        for status in list(_base._PENDING_RESTORES):
            try:
                if not status._apply():
                    done.add(id(status))
            except BaseException:
                done.add(id(status))  # a restore that failed has raised where its variable appeared; it stops waiting
                raise
    finally:
        _base._PENDING_RESTORES[:] = [s for s in _base._PENDING_RESTORES if id(s) not in done]
        _RUNNING[0] = False


def restore_into(root, path, on_missing="ignore", skip_mismatch=False) -> CheckpointLoadStatus:
    """Restore the variables reachable from ``root`` from the checkpoint at ``path`` (see CheckpointLoadStatus)."""
    values = _read_file(path)
    status = CheckpointLoadStatus(root, path, values, on_missing, skip_mismatch)
    if status._apply():
        _base._PENDING_RESTORES.append(status)
    return status


def save_into(root, path, extra_meta=None) -> str:
    """Write every variable reachable from ``root`` to ``path`` (``.safetensors`` appended if missing)."""
    return _write_file(path, _leaves(root), extra_meta)


def _no_options(options, op):
    if options is not None:
        raise InvalidArgumentError(f"options={options!r}: tapeflow has no checkpoint options (no "
                                   "tf.train.CheckpointOptions); allowed: None", op)


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

    def __init__(self, root=None, **kwargs) -> None:
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
        _no_options(options, "SaveV2")
        save_into(self, file_prefix)
        return os.fspath(file_prefix)

    def save(self, file_prefix, options=None) -> str:
        """Write ``file_prefix-N`` (N = the save count) and make it the directory's latest checkpoint."""
        _no_options(options, "SaveV2")
        n = int(self.save_counter) + 1
        self.save_counter.assign(np.int64(n))
        path = f"{os.fspath(file_prefix)}-{n}"
        try:
            d = os.path.dirname(os.path.abspath(path))
            os.makedirs(d, exist_ok=True)
            _sweep_temporaries(d, _tmp_pattern(re.escape(os.path.basename(os.fspath(file_prefix))) + r"-\d+"
                                               + re.escape(_SUFFIX), re.escape(_STATE_FILE)))
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
        _no_options(options, "RestoreV2")
        if save_path is None:
            return InitializationOnlyStatus(self)
        return restore_into(self, save_path)

    def read(self, save_path, options=None) -> CheckpointLoadStatus:
        """Like ``restore`` for a file from ``write``."""
        return self.restore(save_path, options)


# ---- the directory's state file and the manager ---------------------------------------------
#
# The state file (``checkpoint``, TensorFlow's text format) names the latest checkpoint and the
# kept ones.  Only paths inside its own directory count (after resolving ``..`` and symlinks):
# a manager reads, lists and deletes nothing else, whatever a damaged or crafted state file says.

def _inside(directory, path) -> bool:
    """Whether ``path`` and its checkpoint file resolve to places inside ``directory``."""
    root = os.path.realpath(directory)
    try:
        return all(os.path.commonpath([root, os.path.realpath(p)]) == root for p in (path, _file(path)))
    except ValueError:  # another drive
        return False


def _read_state(directory, filename=_STATE_FILE) -> dict:
    fname = os.path.join(directory, filename)
    if not os.path.isfile(fname):
        return {}
    with open(fname, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    latest, all_paths, preserved, outside = None, [], None, []
    for line in text.splitlines():
        m = re.match(r'\s*(model_checkpoint_path|all_model_checkpoint_paths)\s*:\s*"(.*)"\s*$', line)
        if not m:
            m = re.match(r"\s*last_preserved_timestamp\s*:\s*([0-9.eE+]+)\s*$", line)
            if m:
                try:
                    preserved = float(m.group(1))
                except ValueError:
                    pass
            continue
        p = m.group(2)
        p = p if os.path.isabs(p) else os.path.join(directory, p)
        if not _inside(directory, p):
            outside.append(m.group(2))
            continue
        if m.group(1) == "model_checkpoint_path":
            latest = p
        else:
            all_paths.append(p)
    if outside:
        warnings.warn(f"checkpoint state file {fname!r} names paths outside {os.fspath(directory)!r}, ignored: "
                      f"{sorted(set(outside))[:10]}", CheckpointWarning, stacklevel=3)
    return {"latest": latest, "all": all_paths, "last_preserved": preserved}


def _write_state(directory, latest, all_paths, last_preserved=None):
    """Replace the state file atomically (a reader sees the old one or the new one)."""
    lines = [f'model_checkpoint_path: "{os.path.relpath(latest, directory)}"']
    lines += [f'all_model_checkpoint_paths: "{os.path.relpath(p, directory)}"' for p in all_paths]
    if last_preserved is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved!r}")
    _atomic_write(os.path.join(directory, _STATE_FILE), ("\n".join(lines) + "\n").encode())


def latest_checkpoint(checkpoint_dir, latest_filename=None) -> str:
    """The newest checkpoint saved in ``checkpoint_dir`` (a path for ``restore``), or None.

    ``latest_filename`` names the state file (default ``checkpoint``).  A state file naming a
    path outside ``checkpoint_dir`` is ignored with a warning.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> tf.train.latest_checkpoint(tempfile.mkdtemp()) is None
    True
    """
    state = _read_state(os.fspath(checkpoint_dir), latest_filename or _STATE_FILE)
    latest = state.get("latest")
    if latest and os.path.exists(_file(latest)):
        return latest
    return None


class CheckpointManager:
    """Saves numbered checkpoints in ``directory`` and deletes all but the newest ``max_to_keep``
    (and, with ``keep_checkpoint_every_n_hours``, keeps one checkpoint per that many hours out of
    the deletions, as TensorFlow's).

    A save writes the new checkpoint, then records it in the state file, then deletes old ones,
    then records that: killed at any point, the directory's latest checkpoint is the newest one
    that is complete.  It also removes what killed saves of its prefix left (temporaries no live
    write holds) and never touches a file outside ``directory``.

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
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None) -> None:
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"max_to_keep must be positive or None, got {max_to_keep}")
        if keep_checkpoint_every_n_hours is not None and not keep_checkpoint_every_n_hours > 0:
            raise ValueError(f"keep_checkpoint_every_n_hours must be positive or None, got "
                             f"{keep_checkpoint_every_n_hours}")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._name = checkpoint_name
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter, self._interval, self._init_fn = step_counter, checkpoint_interval, init_fn
        self._last_step = None
        state = _read_state(self._directory)
        self._checkpoints = [p for p in state.get("all", []) if os.path.exists(_file(p))]
        self._latest = state.get("latest") if state.get("latest") in self._checkpoints else \
            (self._checkpoints[-1] if self._checkpoints else None)
        self._last_preserved = state.get("last_preserved")
        if self._keep_hours is not None and self._last_preserved is None:
            self._last_preserved = time.time()

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

    def save(self, checkpoint_number=None, check_interval=True, options=None) -> str:
        """Save ``ckpt-N`` (N = ``checkpoint_number``, else the checkpoint's save count) and prune old ones."""
        _no_options(options, "SaveV2")
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
        _sweep_temporaries(self._directory, _tmp_pattern(re.escape(self._name) + r"-\d+" + re.escape(_SUFFIX),
                                                         re.escape(_STATE_FILE)))
        if isinstance(self._checkpoint, Checkpoint):
            self._checkpoint.write(path)
        else:
            save_into(self._checkpoint, path)
        kept = [p for p in self._checkpoints if p != path] + [path]
        # record the new checkpoint before deleting anything: killed in the sweep, it is still the latest
        _write_state(self._directory, path, kept, self._last_preserved)
        self._checkpoints, self._latest = kept, path
        if self._max_to_keep is not None and len(kept) > self._max_to_keep:
            drop, self._checkpoints = kept[:-self._max_to_keep], kept[-self._max_to_keep:]
            for old in drop:
                if self._keep_hours is not None and self._preserve(old):
                    continue
                if _inside(self._directory, old) and _distribute.is_chief():
                    try:
                        os.unlink(_file(old))
                    except FileNotFoundError:
                        pass
            _write_state(self._directory, path, self._checkpoints, self._last_preserved)
        return path

    def _preserve(self, old) -> bool:
        """Whether ``old`` is the one to keep for its ``keep_checkpoint_every_n_hours`` period (it leaves
        the managed list but stays on disk)."""
        try:
            saved = os.stat(_file(old)).st_mtime
        except OSError:
            return False
        if saved - self._keep_hours * 3600.0 >= self._last_preserved:
            self._last_preserved = saved
            return True
        return False

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


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
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
