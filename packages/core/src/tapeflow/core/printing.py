"""``tf.print``: print tensors (and any Python values) when the op runs: eagerly at once, in a graph
function on every call (Python's ``print`` runs only while the function is traced)."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import nest
from .runner import primitive, run_tensors
from .tensor import Tensor

__all__ = ["print_"]


def _elem(v, dtype) -> str:
    if dtype.kind == "b":
        return "1" if v else "0"
    if dtype.kind == "f":
        return "%.17g" % v if dtype.itemsize == 8 else "%.9g" % float(v)
    return str(v)


_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("'"): "\\'",
            ord("\\"): "\\\\"}


def _quoted(b: bytes) -> str:
    """A string element as TensorFlow prints it inside a tensor: double-quoted, C escapes, UTF-8 kept."""
    out = bytearray()
    for c in b:
        if c in _ESCAPES:
            out += _ESCAPES[c].encode()
        elif c < 0x20 or c == 0x7F:
            out += b"\\%03o" % c
        else:
            out.append(c)
    return '"' + out.decode("utf-8", "backslashreplace") + '"'


def format_tensor(arr: np.ndarray, summarize: int = 3) -> str:
    """A tensor's value as ``tf.print`` writes it (``summarize`` leading and trailing entries per axis; strings
    double-quoted with C escapes, a scalar string as it is).

    >>> import numpy as np
    >>> format_tensor(np.arange(10), 2)
    '[0 1 ... 8 9]'
    >>> format_tensor(np.array([b"a", b'b"c'], dtype=object))
    '["a" "b\\\\"c"]'
    """
    if arr.dtype == object:  # strings (bytes)
        if arr.ndim == 0:
            return bytes(arr.item()).decode("utf-8", "backslashreplace")
        return _format_rec(arr, summarize, _quoted)
    dt = arr.dtype if arr.dtype.kind != "V" else np.dtype(np.float32)
    if arr.dtype.kind not in "biuf":
        arr = arr.astype(np.float32)
        dt = arr.dtype
    return _format_rec(arr, summarize, lambda v: _elem(v, dt))


def _format_rec(arr, summarize, elem) -> str:
    def one(v):  # an entry: a NumPy scalar or 0-d array, or the bytes of a string array
        return elem(v.item() if isinstance(v, (np.ndarray, np.generic)) else v)

    def rec(a, indent):
        if a.ndim == 0:
            return one(a)
        n = a.shape[0]
        idx = list(range(summarize)) + [None] + list(range(n - summarize, n)) \
            if 0 <= summarize and 2 * summarize < n else list(range(n))
        if a.ndim == 1:
            return "[" + " ".join("..." if i is None else one(a[i]) for i in idx) + "]"
        sep = "\n" * (a.ndim - 1) + " " * (indent + 1)
        return "[" + sep.join("..." if i is None else rec(a[i], indent + 1) for i in idx) + "]"

    return rec(arr, 0)


def _text(x, summarize) -> str:
    if isinstance(x, Tensor):
        return format_tensor(x._host() if x._dtype.is_string else x.numpy(), summarize)
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v, summarize)}" for k, v in x.items()) + "}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_text(v, summarize) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return str(x)


def _infer(*tensors, template, output_stream, summarize, sep, end):
    return []


@primitive("print", "PrintV2", infer=_infer, stateful=True,
           internal="an output-less side effect (tf.print)")
def _PRINT(dev, *tensors, template, output_stream, summarize, sep, end):
    it = iter(tensors)
    values = nest.map_structure(lambda x: next(it) if x is _HOLE else x, template)
    text = sep.join(_text(v, summarize) for v in values) + end
    _write(output_stream, text)
    return ()


class _Hole:
    def __repr__(self):
        return "<tensor>"


_HOLE = _Hole()


def _write(stream, text):
    if isinstance(stream, str):
        if not stream.startswith("file://"):
            raise ValueError(f"tf.print: output_stream {stream!r} is not a stream or a 'file://path' string")
        with open(stream[len("file://"):], "a", encoding="utf-8") as f:
            f.write(text)
        return
    stream.write(text)
    flush = getattr(stream, "flush", None)
    if flush is not None:
        flush()


def print_(*inputs: Any, output_stream: Any = None, summarize: int | None = 3, sep: str = " ", end: str = "\n",
           name: str | None = None) -> Any:
    """Print ``inputs`` (tensors and Python values, also nested in lists and dicts) when the op runs.

    Each tensor shows ``summarize`` leading and trailing entries per axis (``-1``: all); the stream is
    ``sys.stderr`` by default, or ``sys.stdout``, any object with ``write``, or ``"file://path"``.
    Inside ``tf.function`` it prints on every call.

    >>> import sys
    >>> import tapeflow as tf
    >>> tf.print("x:", tf.range(10), output_stream=sys.stdout)
    x: [0 1 2 ... 7 8 9]
    >>> tf.print(tf.constant([0.5, 1.0]), {"n": 2}, output_stream=sys.stdout, sep=" | ")
    [0.5 1] | {'n': 2}
    """
    if isinstance(summarize, bool) or not isinstance(summarize, int):
        raise TypeError(f"tf.print: summarize must be an int (-1 for everything), got {summarize!r}")
    if output_stream is None:
        output_stream = sys.stderr
    elif not isinstance(output_stream, str) and not hasattr(output_stream, "write"):
        raise TypeError(f"tf.print: output_stream must be sys.stdout, sys.stderr, an object with write() or a "
                        f"'file://path' string; got {output_stream!r}")
    tensors = []

    def hole(x):
        if isinstance(x, Tensor) or (hasattr(x, "_as_tensor") and hasattr(x, "assign")):
            tensors.append(x.read_value() if hasattr(x, "assign") else x)
            return _HOLE
        return x

    template = nest.map_structure(hole, list(inputs))
    run_tensors(_PRINT, tuple(tensors), {"template": template, "output_stream": output_stream,
                                         "summarize": summarize, "sep": sep, "end": end})
