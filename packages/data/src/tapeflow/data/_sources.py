"""Sources: what ``Dataset.from_tensor_slices``, ``from_tensors``, ``range``, ``from_generator``,
``zip`` (and ``enumerate``) and ``concatenate`` return.  Readers of files are in
:mod:`tapeflow.data.readers`.
"""
from __future__ import annotations

from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor, constant

from . import _batching as B
from . import _structure as S
from ._common import (
    _RA,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    _arange_chunks,
    _close,
    _count,
    _fmt_shape,
    _ra_elements,
    _RangeTable,
    _SliceTable,
    _ZipTable,
)
from ._structure import TensorSpec
from .dataset import Dataset


def skipped(ctx, err):
    from ._stateful import skipped as _skipped

    return _skipped(ctx, err)


class TensorSliceDataset(Dataset):
    """What ``Dataset.from_tensor_slices`` returns: the rows of in-memory components."""

    def __init__(self, tensors) -> None:
        op = "TensorSliceDataset"
        structure = S.to_components(tensors, op)
        flat = S.flatten(structure)
        if not flat:
            raise InvalidArgumentError("from_tensor_slices needs at least one component, got an empty structure", op)
        dims = []
        for i, c in enumerate(flat):
            shape = B.leaf_shape(c)
            if not shape:
                raise InvalidArgumentError(f"component {i} is a scalar (shape ()); slicing needs rank >= 1", op)
            dims.append(shape[0])
        if len(set(dims)) > 1:
            raise InvalidArgumentError(
                "all components must have the same size in their first dimension; got "
                + ", ".join(f"{d} (component {i}, shape {tuple(B.leaf_shape(c))})" for i, (d, c) in
                            enumerate(zip(dims, flat))), op)
        self._structure, self._flat, self._n = structure, flat, dims[0]
        self._table = _SliceTable(structure, flat, dims[0])

    def _ra(self):
        n = self._n
        return _RA(self._table, lambda: _arange_chunks(n), identity=True)

    def _compute_spec(self):
        return S.pack(self._structure, [TensorSpec(B.leaf_shape(c)[1:], _leaf_dtype(c)) for c in self._flat])

    def _card(self):
        return self._n


def _leaf_dtype(c):
    return c.dtype if isinstance(c, Tensor) else S.string


class TensorDataset(Dataset):
    """What ``Dataset.from_tensors`` returns: one element."""

    def __init__(self, tensors) -> None:
        self._element = S.to_components(tensors, "TensorDataset")

    def _iterator(self, ctx):
        yield self._element

    def _compute_spec(self):
        return S.spec_of(self._element)

    def _card(self):
        return 1


class RangeDataset(Dataset):
    """What ``Dataset.range`` returns: int64 (or ``dtype``) scalars."""

    def __init__(self, *args, dtype=_dt.int64) -> None:
        op = "RangeDataset"
        if not 1 <= len(args) <= 3:
            raise InvalidArgumentError(f"range takes 1 to 3 arguments (stop; start, stop; start, stop, step), "
                                       f"got {len(args)}", op)
        vals = [_count(a, what, op) for a, what in zip(args, ("start", "stop", "step") if len(args) > 1 else ("stop",))]
        start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals + [1])[:3]
        if step == 0:
            raise InvalidArgumentError("step must be a non-zero integer, got 0", op)
        self._dtype = _dt.as_dtype(dtype)
        self._start, self._step = start, step
        self._n = len(range(start, stop, step))

    def _ra(self):
        n = self._n
        return _RA(_RangeTable(self._start, self._step, n, self._dtype), lambda: _arange_chunks(n), identity=True)

    def _compute_spec(self):
        return TensorSpec((), self._dtype)

    def _card(self):
        return self._n


class GeneratorDataset(Dataset):
    """What ``Dataset.from_generator`` returns: a Python generator's values, checked."""

    def __init__(self, generator, output_types, output_shapes, args, output_signature) -> None:
        op = "FromGenerator"
        if not callable(generator):
            raise InvalidArgumentError(f"generator must be a callable returning an iterator, got "
                                       f"{type(generator).__name__}", op)
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise InvalidArgumentError("give output_signature or output_types/output_shapes, not both", op)
            for s in S.flatten(output_signature):
                if not isinstance(s, TensorSpec) and type(s).__name__ != "TensorSpec":
                    raise InvalidArgumentError(f"output_signature must be a structure of tf.TensorSpec, found "
                                               f"{type(s).__name__}", op)
            # core's tf.TensorSpec is taken as this package's spec of the same shape, dtype and name
            spec = S.map_structure(lambda s: s if isinstance(s, TensorSpec) else
                                   TensorSpec(None if s.shape is None else tuple(s.shape), s.dtype, s.name),
                                   output_signature)
        elif output_types is not None:
            if output_shapes is None:
                spec = S.map_structure(lambda t: TensorSpec(None, t), _tuplify(output_types))
            else:
                types, shapes = _tuplify(output_types), output_shapes
                flat_t = S.flatten(types)
                flat_s = _flatten_up_to(types, shapes, op)
                spec = S.pack(types, [TensorSpec(s, t) for t, s in zip(flat_t, flat_s)])
        else:
            raise InvalidArgumentError("from_generator needs output_signature (or output_types)", op)
        self._gen, self._args, self._spec_cache = generator, tuple(args) if args is not None else (), spec
        self._flat_spec = S.flatten(spec)

    def _iterator(self, ctx):
        g = iter(self._gen(*self._args))
        try:
            for v in g:
                try:
                    e = self._convert(v)
                except Exception as err:  # noqa: BLE001 - inside ignore_errors: drop this value
                    if ctx.skip_errors and skipped(ctx, err):
                        continue
                    raise
                yield e
        finally:
            _close(g)

    def _convert(self, v):
        op = "FromGenerator"
        spec = self._spec_cache
        v = _like(spec, v)
        if not S.same_structure(v, spec):
            raise InvalidArgumentError(f"`generator` yielded an element that did not match the expected structure. "
                                       f"The expected structure was {S.describe(spec)}, but the yielded element "
                                       f"was {v!r:.80}", op)
        out = []
        for s, x in zip(self._flat_spec, S.flatten(v)):
            if s.dtype is S.string:
                t = S.to_text(x)
            elif type(x) is Tensor and x._dtype is s.dtype:
                t = x
            else:
                try:
                    t = constant(x, dtype=s.dtype)
                except InvalidArgumentError as e:
                    raise InvalidArgumentError(f"`generator` yielded an element that could not be converted to the "
                                               f"expected type {s.dtype.name}: {e.message}", op) from None
                except (TypeError, ValueError) as e:
                    raise InvalidArgumentError(f"`generator` yielded an element that could not be converted to the "
                                               f"expected type {s.dtype.name}: {e}", op) from None
            shape = B.leaf_shape(t)
            if not S.shapes_compatible(s.shape, shape):
                raise InvalidArgumentError(f"`generator` yielded an element of shape {tuple(shape)} where an element "
                                           f"of shape {_fmt_shape(s)} was expected", op)
            out.append(t)
        return S.pack(spec, out)

    def _compute_spec(self):
        return self._spec_cache


def _like(spec, v):
    """``v`` with lists where ``spec`` has tuples read as tuples (a generator may yield lists)."""
    if isinstance(spec, tuple) and type(v) in (list, tuple) and len(v) == len(spec):
        vals = [_like(s, x) for s, x in zip(spec, v)]
        return type(spec)(*vals) if hasattr(type(spec), "_fields") else tuple(vals)
    if isinstance(spec, dict) and isinstance(v, dict) and set(v) == set(spec):
        return type(v)((k, _like(spec[k], x)) for k, x in v.items())
    return v


def _tuplify(v):
    if type(v) is list:
        return tuple(_tuplify(x) for x in v)
    if type(v) is tuple:
        return tuple(_tuplify(x) for x in v)
    return v


def _flatten_up_to(types, shapes, op):
    if isinstance(types, tuple):
        if not isinstance(shapes, (tuple, list)) or len(shapes) != len(types):
            raise InvalidArgumentError(f"output_shapes {shapes!r} does not match the nesting of output_types", op)
        return [s for t, sh in zip(types, shapes) for s in _flatten_up_to(t, sh, op)]
    if isinstance(types, dict):
        if not isinstance(shapes, dict) or set(shapes) != set(types):
            raise InvalidArgumentError(f"output_shapes {shapes!r} does not match the nesting of output_types", op)
        return [s for k in sorted(types) for s in _flatten_up_to(types[k], shapes[k], op)]
    return [shapes]


class ZipDataset(Dataset):
    """What ``Dataset.zip`` (and ``enumerate``) returns."""

    def __init__(self, structure) -> None:
        flat = S.flatten(structure)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise InvalidArgumentError("The argument to `Dataset.zip()` must be a (nested) structure of `Dataset` "
                                       f"objects, got {structure!r:.80}", "ZipDataset")
        self._structure, self._inputs = structure, tuple(flat)
        self._pack = S.packer(structure)

    def _ra(self):
        ras = [d._ra() for d in self._inputs]
        if not all(r is not None and r.identity for r in ras):
            return None
        table = _ZipTable(self._structure, [r.table for r in ras])
        n = table.n
        return _RA(table, lambda: _arange_chunks(n), identity=True)

    def _iterator(self, ctx):
        ra = self._ra()
        if ra is not None:
            yield from _ra_elements(ra)
            return
        its = [d._iterator(ctx) for d in self._inputs]
        pk = self._pack
        try:
            while True:
                try:
                    vals = [next(it) for it in its]
                except StopIteration:
                    return
                yield pk(vals)
        finally:
            for it in its:
                _close(it)

    def _compute_spec(self):
        return S.pack(self._structure, [d.element_spec for d in self._inputs])

    def _card(self):
        cards = [d._card() for d in self._inputs]
        if UNKNOWN_CARDINALITY in cards:
            return UNKNOWN_CARDINALITY
        known = [c for c in cards if c >= 0]
        return min(known) if known else INFINITE_CARDINALITY


class ConcatenateDataset(Dataset):
    """What ``Dataset.concatenate`` returns."""

    def __init__(self, first, second) -> None:
        op = "ConcatenateDataset"
        if not isinstance(second, Dataset):
            raise InvalidArgumentError(f"concatenate needs a Dataset, got {type(second).__name__}", op)
        a, b = first.element_spec, second.element_spec
        if not S.same_structure(a, b):
            raise InvalidArgumentError(f"Incompatible dataset elements: nested as {S.describe(a)} vs. "
                                       f"{S.describe(b)}", op)
        for x, y in zip(S.flatten(a), S.flatten(b)):
            if x.dtype != y.dtype:
                raise InvalidArgumentError(f"Incompatible dataset elements: dtype {x.dtype.name} vs. {y.dtype.name}",
                                           op)
        self._inputs = (first, second)

    def _iterator(self, ctx):
        for d in self._inputs:
            it = d._iterator(ctx)
            try:
                yield from it
            finally:
                _close(it)

    def _compute_spec(self):
        a, b = (d.element_spec for d in self._inputs)
        return S.map_structure(lambda x, y: x.most_specific_compatible(y), a, b)

    def _card(self):
        a, b = (d._card() for d in self._inputs)
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        if UNKNOWN_CARDINALITY in (a, b):
            return UNKNOWN_CARDINALITY
        return a + b
