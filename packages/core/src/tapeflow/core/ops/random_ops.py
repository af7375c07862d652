"""Random ops (Philox 4x32-10): the same seed gives the same numbers on every backend.

Every draw is a Philox stream: a 64-bit key and a 64-bit stream number; element
``i`` of the output depends only on (key, stream, i) (the word-to-value mapping is
the contract written at the top of ``kernels-c/csrc/random.c``).  Where the
(key, stream) pair comes from follows TensorFlow's seed rules:

- ``tf.random.set_seed(g)`` and an op seed ``s``: key = H(g, s); the n-th call with
  that pair uses stream n (so repeated calls differ, and re-running the program
  after ``set_seed`` repeats them);
- a global seed and no op seed: the op seed is a counter of random ops since
  ``set_seed`` (so the sequence of ops is reproducible);
- an op seed and no global seed: the global seed defaults to 87654321, as in TensorFlow;
- no seed at all: a per-process random key and a fresh stream per call;
- stateless ops take the seed pair ``(s0, s1)`` as key = s0, stream = s1 (mod 2^64).

H is SplitMix64 applied twice (``key = splitmix64(splitmix64(g) ^ s)``).
"""
from __future__ import annotations

import os
import threading

from .. import devices as _device
from .. import dtypes as _dt
from ..dispatch import (
    alloc,
    dtype_arg,
    int_arg,
    int_list,
    register,
    static_value,
    to_tensor,
)
from ..errors import InvalidArgumentError
from ..runner import check, current_graph, primitive, run
from .math_ops import _cast_raw
from ..tensor import Tensor

__all__ = ["random_normal", "random_uniform", "truncated_normal", "random_shuffle"]

_M64 = (1 << 64) - 1
DEFAULT_GLOBAL_SEED = 87654321
_F = (_dt.float32, _dt.float64)
_FLOATS = _dt.FLOATS
_NONDIFF = "random sampling"


def splitmix64(x: int) -> int:
    """One step of Vigna's SplitMix64 on a 64-bit integer (seed mixing).

    >>> hex(splitmix64(0))
    '0xe220a8397b1dcdaf'
    """
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def philox_key(global_seed: int, op_seed: int) -> int:
    """The Philox key of a (global seed, op seed) pair.

    >>> philox_key(1, 2) == philox_key(1, 2) != philox_key(2, 1)
    True
    """
    return splitmix64(splitmix64(int(global_seed) & _M64) ^ (int(op_seed) & _M64))


class _SeedState:
    """The process-wide seed state behind stateful random ops (see the module docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.global_seed = None
        self.op_counter = 0
        self.calls: dict = {}
        self.fresh_key = None
        self.fresh_stream = 0

    def set_seed(self, seed):
        with self.lock:
            self.global_seed = None if seed is None else int(seed)
            self.op_counter = 0
            self.calls.clear()

    def next_stream(self, seed):
        """(key, stream) for one call of a stateful random op with op seed ``seed``."""
        with self.lock:
            g = self.global_seed
            if g is None and seed is None:
                if self.fresh_key is None:
                    self.fresh_key = int.from_bytes(os.urandom(8), "little")
                self.fresh_stream += 1
                return self.fresh_key, self.fresh_stream
            if g is None:
                g = DEFAULT_GLOBAL_SEED
            if seed is None:
                seed = self.op_counter
                self.op_counter += 1
            pair = (g, seed)
            entry = self.calls.get(pair)
            if entry is None:
                entry = self.calls[pair] = [philox_key(g, seed), 0]
            n = entry[1]
            entry[1] = n + 1
        return entry[0], n


STATE = _SeedState()


class LateStream:
    """The Philox stream of a stateful random op in a graph being traced: the graph draws the next
    ``(key, stream)`` each time it runs (``late_attrs``), exactly as the eager op would at that point of
    the program, so a compiled step draws the numbers the eager step draws (after ``tf.random.set_seed``,
    the same sequence) and every call gives new ones."""

    __slots__ = ("seed", "reserved")

    def __init__(self, seed, reserved=None) -> None:
        self.seed = seed
        self.reserved = reserved  # the op-seed counter the trace took, for the first run (as eager takes it)

    def late_attrs(self) -> dict:
        seed, self.reserved = (self.seed, None) if self.reserved is None else (self.reserved, None)
        key, stream = STATE.next_stream(seed)
        return {"key": key, "stream": stream}

    def __repr__(self):
        return f"LateStream(seed={self.seed})"


def next_stream(seed):
    """``(key, stream)`` for one stateful random op: numbers now, or a LateStream while tracing."""
    if current_graph() is None:
        return STATE.next_stream(seed)
    reserved = None
    with STATE.lock:
        if seed is None and STATE.global_seed is not None:
            # the op takes its place in the program's sequence of random ops while traced, as eagerly
            reserved = STATE.op_counter
            STATE.op_counter += 1
    late = LateStream(seed, reserved)
    return late, late


# ---- argument handling ----------------------------------------------------

_INF = float("inf")
_I64_MAX = 2 ** 63 - 1


def _shape(shape, op):
    if type(shape) in (list, tuple):  # the common case: a list of Python ints
        for d in shape:
            if type(d) is not int or not 0 <= d <= _I64_MAX:
                break
        else:
            return tuple(shape)
    dims = int_list(shape, op, "shape")
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"shape must be a list of non-negative ints, got {list(dims)}", op)
    return dims


def _seed_int(seed, op, what="seed"):
    if type(seed) is int:
        return seed
    if isinstance(seed, Tensor):
        if seed._size != 1:
            raise InvalidArgumentError(f"{what} must be a scalar int, got a tensor of shape {tuple(seed._shape)}", op)
        seed = static_value(seed, op, what).item()
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise InvalidArgumentError(f"{what} must be an int, got {seed!r}", op)
    return int(seed.__index__())


def _seed_pair(seed, op):
    """A stateless seed: two ints (a list, tuple, or int tensor of shape [2])."""
    if isinstance(seed, Tensor):
        if seed._dtype not in (_dt.int32, _dt.int64) or tuple(seed._shape) != (2,):
            raise InvalidArgumentError(f"seed must be an int32/int64 tensor of shape [2], got "
                                       f"{seed._dtype.name} of shape {tuple(seed._shape)}", op)
        seed = static_value(seed, op, "seed").tolist()
    try:
        s0, s1 = seed
        return _seed_int(s0, op) & _M64, _seed_int(s1, op) & _M64
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"seed must be a pair of ints (shape [2]), got {seed!r}", op) from None


def _as_dtype(dtype, op):
    return dtype_arg(dtype, op)


def _float_dtype(dtype, op, allowed=_FLOATS):
    dt = _as_dtype(dtype, op)
    if not any(dt is a for a in allowed):
        raise InvalidArgumentError(f"dtype {dt.name} is not supported; allowed: "
                                   f"{', '.join(d.name for d in allowed)}", op)
    return dt


def _scalar_param(v, op, what):
    """A Python float for a scalar parameter, or None when it is a non-scalar tensor."""
    if type(v) is float or type(v) is int:
        if v != v or v == _INF or v == -_INF:
            raise InvalidArgumentError(f"{what} must be finite, got {float(v)}", op)
        return float(v)
    if isinstance(v, Tensor) or hasattr(v, "_as_tensor"):
        t = to_tensor(v, op)
        if t._size != 1 or t._shape or (t._h is None and t._arr is None):
            return None  # a tensor parameter (symbolic while tracing): scales a standard draw
        v = t.numpy().item()
    if isinstance(v, (list, tuple)):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{what} must be a number, got {v!r}", op) from None
    if f != f or f in (float("inf"), float("-inf")):
        raise InvalidArgumentError(f"{what} must be finite, got {f}", op)
    return f


def _device_for(dev=None):
    return dev or _device.current() or _device.default_device()


def _run_on(prim, inputs, attrs, dev):
    """run(), on ``dev`` when one is given (else the scope's or the default device)."""
    if dev is None:
        return run(prim, inputs, attrs)
    with _device.device(dev):
        return run(prim, inputs, attrs)


def _uniform_primitive(name, tf_name):
    """Uniform values in [minval, maxval) from the Philox stream (key, stream): attrs only, no inputs."""
    @primitive(name, tf_name, infer=lambda *, shape, dtype, **_: (shape, dtype))
    def impl(dev, *, shape, dtype, minval, maxval, key, stream):
        out = alloc(shape, dtype, dev)  # float16/bfloat16 draw directly, so values stay below maxval
        kernel = "random_uniform_int" if dtype is _dt.int32 or dtype is _dt.int64 else "random_uniform"
        check(getattr(dev.backend, kernel)(dtype.code, out._h, out._size, key, stream, minval, maxval), kernel)
        return out
    return impl


def _normal_primitive(name, tf_name, kernel):
    """mean + stddev * (normal or truncated normal) values from (key, stream); halves draw in float32."""
    @primitive(name, tf_name, infer=lambda *, shape, dtype, **_: (shape, dtype))
    def impl(dev, *, shape, dtype, mean, stddev, key, stream):
        compute = dtype if dtype in _F else _dt.float32
        out = alloc(shape, compute, dev)
        check(getattr(dev.backend, kernel)(compute.code, out._h, out._size, key, stream, mean, stddev), kernel)
        return out if compute is dtype else _cast_raw(out, dtype)
    return impl


_RANDOM_UNIFORM = _uniform_primitive("random_uniform", "RandomUniform")
_STATELESS_UNIFORM = _uniform_primitive("stateless_random_uniform", "StatelessRandomUniformV2")
_RANDOM_NORMAL = _normal_primitive("random_normal", "RandomStandardNormal", "random_normal")
_STATELESS_NORMAL = _normal_primitive("stateless_random_normal", "StatelessRandomNormalV2", "random_normal")
_TRUNCATED_NORMAL = _normal_primitive("truncated_normal", "TruncatedNormal", "random_truncated_normal")
_STATELESS_TRUNCATED = _normal_primitive("stateless_truncated_normal", "StatelessTruncatedNormalV2",
                                         "random_truncated_normal")


def _affine(z, scale, shift, op):
    """z * scale + shift for non-scalar parameters (broadcast with the sample's shape)."""
    from .math_ops import add, multiply

    scale = to_tensor(scale, op, z._dtype) if not isinstance(scale, Tensor) else scale
    shift = to_tensor(shift, op, z._dtype) if not isinstance(shift, Tensor) else shift
    out = add(multiply(z, scale), shift)
    if out._shape != z._shape:
        raise InvalidArgumentError(f"parameters of shapes {tuple(scale._shape)} and {tuple(shift._shape)} do not "
                                   f"broadcast to the sample shape {tuple(z._shape)}", op)
    return out


# ---- the kernels behind every entry point --------------------------------------

def uniform_from(shape, minval, maxval, dtype, key, stream, op, dev=None, prim=_RANDOM_UNIFORM):
    """Uniform values from an explicit Philox stream (floats in [minval, maxval), ints too), drawn by
    primitive ``prim`` (the draw is recorded under its name)."""
    shape = _shape(shape, op)
    dt = _as_dtype(dtype, op)
    if dt is _dt.int32 or dt is _dt.int64:
        if maxval is None:
            raise InvalidArgumentError(f"maxval must be given for integer dtype {dt.name}", op)
        lo, hi = _seed_int(minval, op, "minval"), _seed_int(maxval, op, "maxval")
        if not lo < hi:
            raise InvalidArgumentError(f"need minval < maxval, got minval = {lo}, maxval = {hi}", op)
        if lo < dt.min or hi - 1 > dt.max:
            raise InvalidArgumentError(f"[{lo}, {hi}) does not fit {dt.name} [{dt.min}, {dt.max}]", op)
        return _run_on(prim, (), {"shape": shape, "dtype": dt, "minval": lo, "maxval": hi, "key": key,
                                  "stream": stream}, dev)
    if not dt.is_floating:
        raise InvalidArgumentError(f"dtype {dt.name} is not supported; allowed: "
                                   f"{', '.join(d.name for d in _FLOATS + (_dt.int32, _dt.int64))}", op)
    if maxval is None:
        maxval = 1.0
    lo, hi = _scalar_param(minval, op, "minval"), _scalar_param(maxval, op, "maxval")
    if lo is None or hi is None:  # tensor bounds: scale a [0, 1) draw
        u = _run_on(prim, (), {"shape": shape, "dtype": dt if dt in _F else _dt.float32, "minval": 0.0,
                               "maxval": 1.0, "key": key, "stream": stream}, dev)
        if dt not in _F:
            from .math_ops import cast

            u = cast(u, dt)
        from .math_ops import subtract

        lo_t, hi_t = to_tensor(minval, op, dt), to_tensor(maxval, op, dt)
        return _affine(u, subtract(hi_t, lo_t), lo_t, op)
    if not lo < hi:
        raise InvalidArgumentError(f"need minval < maxval, got minval = {lo}, maxval = {hi}", op)
    return _run_on(prim, (), {"shape": shape, "dtype": dt, "minval": lo, "maxval": hi, "key": key,
                              "stream": stream}, dev)


def _normal_kind(prim, shape, mean, stddev, dtype, key, stream, op, dev=None):
    shape = _shape(shape, op)
    dt = _float_dtype(dtype, op)
    m, s = _scalar_param(mean, op, "mean"), _scalar_param(stddev, op, "stddev")
    if m is None or s is None:
        z = _run_on(prim, (), {"shape": shape, "dtype": dt, "mean": 0.0, "stddev": 1.0, "key": key,
                               "stream": stream}, dev)
        return _affine(z, stddev, mean, op)
    if s < 0:
        raise InvalidArgumentError(f"stddev must be >= 0, got {s}", op)
    return _run_on(prim, (), {"shape": shape, "dtype": dt, "mean": m, "stddev": s, "key": key, "stream": stream},
                   dev)


def normal_from(shape, mean, stddev, dtype, key, stream, op, dev=None, prim=_RANDOM_NORMAL):
    """Normal values from an explicit Philox stream (drawn by primitive ``prim``)."""
    return _normal_kind(prim, shape, mean, stddev, dtype, key, stream, op, dev)


def truncated_normal_from(shape, mean, stddev, dtype, key, stream, op, dev=None, prim=_TRUNCATED_NORMAL):
    """Normal values within two standard deviations, from an explicit Philox stream."""
    return _normal_kind(prim, shape, mean, stddev, dtype, key, stream, op, dev)


def dropout_mask(shape, dtype, rate: float, seed, op="Dropout", dev=None) -> Tensor:
    """A tensor of 0 (dropped, with probability ``rate``) and 1 / (1 - rate) (kept)."""
    key, stream = next_stream(seed)
    return _run_on(_DROPOUT_MASK, (), {"shape": tuple(shape), "dtype": dtype, "rate": rate, "key": key,
                                       "stream": stream}, dev)


@primitive("dropout_mask", "DropoutMask", infer=lambda *, shape, dtype, **_: (shape, dtype), stateful=True,
           internal="the random mask of tf.nn.dropout (its gradient is the dropout's)")
def _DROPOUT_MASK(dev, *, shape, dtype, rate, key, stream):
    compute = dtype if dtype in _F else _dt.float32
    out = alloc(shape, compute, dev)
    check(dev.backend.random_dropout_mask(compute.code, out._h, out._size, key, stream, rate), "random_dropout_mask")
    return out if compute is dtype else _cast_raw(out, dtype)


# ---- stateful ops ------------------------------------------------------------

@register("random_uniform", "RandomUniform", nondiff=_NONDIFF)
def random_uniform(shape, minval=0, maxval=None, dtype=_dt.float32, seed=None, name=None) -> Tensor:
    """Uniform random values in [minval, maxval) (floats; int32/int64 with ``maxval`` given).

    Each value is u = (32 random bits >> 8) * 2^-24 scaled to the range (float64 uses
    53 bits); integers are minval + floor(bits * (maxval - minval) / 2^32) (2^64 for int64).

    >>> import tapeflow as tf
    >>> tf.random.set_seed(1)
    >>> x = tf.random.uniform([2, 2])
    >>> x.shape, x.dtype, bool(tf.reduce_all((x >= 0) & (x < 1)))
    (TensorShape([2, 2]), tf.float32, True)
    >>> tf.random.uniform([3], 0, 10, dtype=tf.int32, seed=7).dtype
    tf.int32
    """
    op = "RandomUniformInt" if _is_int(dtype) else "RandomUniform"
    if seed is not None:
        seed = _seed_int(seed, op)
    key, stream = next_stream(seed)
    return uniform_from(shape, minval, maxval, dtype, key, stream, op)


def _is_int(dtype):
    if dtype is _dt.float32:
        return False
    try:
        return _dt.as_dtype(dtype).is_integer
    except TypeError:
        return False


@register("random_normal", "RandomStandardNormal", nondiff=_NONDIFF)
def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None) -> Tensor:
    """Normal random values: mean + stddev * z with z from the Box-Muller transform.

    >>> import tapeflow as tf
    >>> tf.random.set_seed(0)
    >>> x = tf.random.normal([10000])
    >>> abs(float(tf.reduce_mean(x))) < 0.05, abs(float(tf.reduce_mean(x * x)) - 1) < 0.05
    (True, True)
    """
    if seed is not None:
        seed = _seed_int(seed, "RandomStandardNormal")
    key, stream = next_stream(seed)
    return normal_from(shape, mean, stddev, dtype, key, stream, "RandomStandardNormal")


@register("truncated_normal", "TruncatedNormal", nondiff=_NONDIFF)
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None) -> Tensor:
    """Normal random values redrawn until within two standard deviations of the mean.

    >>> import tapeflow as tf
    >>> x = tf.random.truncated_normal([1000], mean=5.0, stddev=1.0, seed=3)
    >>> bool(tf.reduce_all((x >= 3.0) & (x <= 7.0)))
    True
    """
    if seed is not None:
        seed = _seed_int(seed, "TruncatedNormal")
    key, stream = next_stream(seed)
    return truncated_normal_from(shape, mean, stddev, dtype, key, stream, "TruncatedNormal")


@register("categorical", "Multinomial", nondiff=_NONDIFF)
def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Class indices drawn from the categorical distributions softmax(logits[i]).

    ``logits`` has shape [batch, classes]; the result [batch, num_samples] (int64 by default).

    >>> import tapeflow as tf
    >>> s = tf.random.categorical(tf.math.log([[0.5, 0.5], [0.0, 1.0]]), 5, seed=1)
    >>> s.shape, s.dtype, s.numpy()[1].tolist()
    (TensorShape([2, 5]), tf.int64, [1, 1, 1, 1, 1])
    """
    op = "Multinomial"
    x, n, out_dt = _categorical_args(logits, num_samples, dtype, op)
    if seed is not None:
        seed = _seed_int(seed, op)
    key, stream = next_stream(seed)
    return run(_CATEGORICAL, (x,), {"num_samples": n, "dtype": out_dt, "key": key, "stream": stream})


def _categorical_infer(x, *, num_samples, dtype, key, stream):
    return (x._shape[0], num_samples), dtype


@primitive("categorical", "Multinomial", infer=_categorical_infer, dtypes=_FLOATS)
def _CATEGORICAL(dev, x, *, num_samples, dtype, key, stream):
    if x._dtype not in _F:
        x = _cast_raw(x, _dt.float32)
    out = alloc((x._shape[0], num_samples), dtype, dev)
    be = dev.backend
    bad = be.new_int64([-1])
    st = be.random_categorical(x._dtype.code, x._h, x._shape[0], x._shape[1], num_samples, dtype.code, out._h, key,
                               stream, bad)
    if st == 7:  # TPF_EBADARG: a row without a finite, positive total
        raise InvalidArgumentError(f"logits row {bad[0]} has no finite maximum (NaN, +inf, or every value -inf)",
                                   "Multinomial")
    check(st, "random_categorical")
    return out


@primitive("stateless_categorical", "StatelessMultinomial", infer=_categorical_infer, dtypes=_FLOATS)
def _STATELESS_CATEGORICAL(dev, x, *, num_samples, dtype, key, stream):
    return _CATEGORICAL.impl(dev, x, num_samples=num_samples, dtype=dtype, key=key, stream=stream)


def _categorical_args(logits, num_samples, dtype, op):
    x = logits if type(logits) is Tensor else to_tensor(logits, op)
    if x._dtype not in _FLOATS:
        raise InvalidArgumentError(f"logits has dtype {x._dtype.name}; allowed: "
                                   f"{', '.join(d.name for d in _FLOATS)}", op)
    if len(x._shape) != 2:
        raise InvalidArgumentError(f"logits must be 2-D [batch, classes], got shape {tuple(x._shape)}", op)
    n = int_arg(num_samples, op, "num_samples")
    if n < 0:
        raise InvalidArgumentError(f"num_samples must be >= 0, got {n}", op)
    out_dt = _dt.int64 if dtype is None else dtype_arg(dtype, op)
    if out_dt not in (_dt.int32, _dt.int64):
        raise InvalidArgumentError(f"dtype {out_dt.name} is not supported; allowed: int32, int64", op)
    batch, classes = x._shape
    if classes == 0 and batch and n:
        raise InvalidArgumentError("logits has 0 classes; need at least one", op)
    return x, n, out_dt


@register("stateless_categorical", "StatelessMultinomial", nondiff=_NONDIFF)
def stateless_categorical(logits, num_samples, seed, dtype=_dt.int64, name=None):
    """Class indices drawn from softmax(logits[i]) that depend only on ``seed`` (a pair of ints): the draws of
    tf.random.categorical with the Philox key seed[0] and stream seed[1].

    >>> import tapeflow as tf
    >>> logits = tf.math.log([[0.5, 0.5]])
    >>> a = tf.random.stateless_categorical(logits, 6, seed=[3, 4])
    >>> a.numpy().tolist() == tf.random.stateless_categorical(logits, 6, seed=[3, 4]).numpy().tolist()
    True
    """
    op = "StatelessMultinomial"
    x, n, out_dt = _categorical_args(logits, num_samples, dtype_arg(dtype, op), op)
    key, stream = _seed_pair(seed, op)
    return run(_STATELESS_CATEGORICAL, (x,), {"num_samples": n, "dtype": out_dt, "key": key, "stream": stream})


@register("random_shuffle", "RandomShuffle", nondiff=_NONDIFF)
def random_shuffle(value, seed=None, name=None):
    """``value`` with its first axis randomly permuted (Fisher-Yates over Philox draws).

    >>> import tapeflow as tf
    >>> sorted(tf.random.shuffle(tf.range(5), seed=2).numpy().tolist())
    [0, 1, 2, 3, 4]
    """
    op = "RandomShuffle"
    x = value if type(value) is Tensor else to_tensor(value, op)
    if seed is not None:
        seed = _seed_int(seed, op)
    key, stream = next_stream(seed)
    if not x._shape:
        return x
    return run(_SHUFFLE, (x,), {"key": key, "stream": stream})


@primitive("random_shuffle", "RandomShuffle", infer=lambda x, **_: (x._shape, x._dtype))
def _SHUFFLE(dev, x, *, key, stream):
    out = alloc(x._shape, x._dtype, dev)
    n = x._shape[0]
    row = (x._size // n if n else 0) * x._dtype.size
    perm = alloc((n,), _dt.int64, dev)
    check(dev.backend.random_shuffle(row, n, x._h, out._h, perm._h, key, stream), "random_shuffle")
    return out


for _p in (_RANDOM_UNIFORM, _RANDOM_NORMAL, _TRUNCATED_NORMAL, _CATEGORICAL, _SHUFFLE):
    _p.stateful = True  # a draw: runs on every call of a graph, never merged or folded
del _p


# ---- stateless ops -------------------------------------------------------------

@register("stateless_random_uniform", "StatelessRandomUniformV2", nondiff=_NONDIFF)
def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=_dt.float32, name=None):
    """Uniform values that depend only on ``seed`` (a pair of ints) and the shape.

    >>> import tapeflow as tf
    >>> a = tf.random.stateless_uniform([3], seed=[1, 2])
    >>> b = tf.random.stateless_uniform([3], seed=[1, 2])
    >>> a.numpy().tolist() == b.numpy().tolist()
    True
    """
    op = "StatelessRandomUniformV2"
    key, stream = _seed_pair(seed, op)
    return uniform_from(shape, minval, maxval, dtype, key, stream, op, prim=_STATELESS_UNIFORM)


@register("stateless_random_normal", "StatelessRandomNormalV2", nondiff=_NONDIFF)
def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
    """Normal values that depend only on ``seed`` (a pair of ints) and the shape.

    >>> import tapeflow as tf
    >>> tf.random.stateless_normal([2], seed=[4, 2]).numpy().tolist() == \\
    ...     tf.random.stateless_normal([2], seed=[4, 2]).numpy().tolist()
    True
    """
    op = "StatelessRandomNormalV2"
    key, stream = _seed_pair(seed, op)
    return normal_from(shape, mean, stddev, dtype, key, stream, op, prim=_STATELESS_NORMAL)


@register("stateless_truncated_normal", "StatelessTruncatedNormalV2", nondiff=_NONDIFF)
def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
    """Truncated normal values (within two stddev) that depend only on ``seed`` and the shape.

    >>> import tapeflow as tf
    >>> x = tf.random.stateless_truncated_normal([100], seed=[0, 0])
    >>> bool(tf.reduce_all(tf.abs(x) <= 2.0))
    True
    """
    op = "StatelessTruncatedNormalV2"
    key, stream = _seed_pair(seed, op)
    return truncated_normal_from(shape, mean, stddev, dtype, key, stream, op, prim=_STATELESS_TRUNCATED)

