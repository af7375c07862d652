"""Windows and groups: what ``Dataset.window``, ``group_by_window`` and ``bucket_by_sequence_length``
return, and :class:`DatasetSpec`, the spec of an element that is itself a dataset.

``window`` makes a dataset of *datasets*, as TensorFlow: an element of a tuple or dict dataset is
a tuple or dict of datasets, one per component, each holding that component's values of the
window (``flat_map(lambda w: w.batch(n))`` turns windows back into tensors).  ``group_by_window``
collects elements per int64 key; a group is handed to ``reduce_func(key, dataset)`` as soon as it
holds ``window_size`` elements, and the groups left at the end of the input are handed over in
increasing key order (TensorFlow keeps its groups in an ordered map).
"""
from __future__ import annotations

from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor, TensorShape, constant

from . import _structure as S
from ._common import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, _caller, _close, _count
from ._structure import TensorSpec
from .dataset import Dataset, Iterator

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


class DatasetSpec:
    """The spec of an element that is a dataset: its own ``element_spec`` (what ``window`` yields).

    >>> import tapeflow as tf
    >>> tf.data.Dataset.range(5).window(2).element_spec
    DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))
    """

    __slots__ = ("element_spec", "shape")

    def __init__(self, element_spec, dataset_shape=()) -> None:
        self.element_spec = element_spec
        self.shape = TensorShape(dataset_shape)

    def is_compatible_with(self, other) -> bool:
        """Whether ``other`` (a DatasetSpec or a Dataset) has a compatible element structure and specs."""
        spec = other.element_spec if isinstance(other, (Dataset, DatasetSpec)) else None
        if spec is None or not S.same_structure(spec, self.element_spec):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(S.flatten(self.element_spec), S.flatten(spec)))

    def most_specific_compatible(self, other):
        return DatasetSpec(S.map_structure(lambda a, b: a.most_specific_compatible(b), self.element_spec,
                                           other.element_spec), self.shape)

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and self.element_spec == other.element_spec \
            and self.shape == other.shape

    def __hash__(self):
        return hash(("DatasetSpec", self.shape))

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape({list(self.shape)}))"


def _spec_text(spec):
    return S.format_structure(spec, repr)


class _ListDataset(Dataset):
    """A finite dataset over elements already in memory (a window, a group)."""

    def __init__(self, elements, spec) -> None:
        self._elements, self._spec_cache = elements, spec

    def _iterator(self, ctx):
        return iter(self._elements)

    def _compute_spec(self):  # pragma: no cover - set at construction
        return self._spec_cache

    def _card(self):
        return len(self._elements)

    def _repr_name(self):
        return "_VariantDataset"


def dummy_element(spec, unknown=1, value=1):
    """:func:`_structure.dummy` that also makes placeholder datasets for DatasetSpec leaves."""
    flat = S.flatten(spec)
    if not any(isinstance(s, DatasetSpec) for s in flat):
        return S.dummy(spec, unknown, value)
    leaves = [_ListDataset([dummy_element(s.element_spec, unknown, value)], s.element_spec)
              if isinstance(s, DatasetSpec) else S.dummy(s, unknown, value) for s in flat]
    return S.pack(spec, leaves)


class WindowDataset(Dataset):
    """What ``Dataset.window`` returns: a dataset of (structures of) datasets."""

    def __init__(self, input_dataset, size, shift=None, stride=1, drop_remainder=False) -> None:
        op = "WindowDataset"
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._size = _count(size, "size", op, 1)
        self._shift = self._size if shift is None else _count(shift, "shift", op, 1)
        self._stride = _count(stride, "stride", op, 1)
        if not isinstance(drop_remainder, (bool, Tensor)):
            raise TypeError(f"drop_remainder must be a bool, got {type(drop_remainder).__name__} [Op:{op}]")
        self._drop = bool(drop_remainder)

    def _iterator(self, ctx):
        size, shift, stride, drop = self._size, self._shift, self._stride, self._drop
        spec = self._input.element_spec
        flat_spec = S.flatten(spec)
        it = self._input._iterator(ctx)
        buf, base, end = [], 0, False  # buf[i] is input element base + i
        try:
            start = 0
            while True:
                need = start + (size - 1) * stride  # the last input index this window wants
                while not end and base + len(buf) <= need:
                    try:
                        buf.append(next(it))
                    except StopIteration:
                        end = True
                have = base + len(buf)
                if start >= have:
                    return
                picked = [buf[i - base] for i in range(start, min(need + 1, have), stride)]
                if len(picked) < size and drop:
                    return
                flats = [S.flatten(e) for e in picked]
                yield S.pack(spec, [_ListDataset([f[j] for f in flats], s) for j, s in enumerate(flat_spec)])
                start += shift
                if start <= have:
                    del buf[:start - base]
                    base = start
                else:  # the next window starts past what was read: skip the input in between
                    buf, base = [], have
                    while base < start and not end:
                        try:
                            next(it)
                            base += 1
                        except StopIteration:
                            end = True
        finally:
            _close(it)

    def _compute_spec(self):
        return S.map_structure(lambda s: DatasetSpec(s), self._input.element_spec)

    def _card(self):
        n = self._input._card()
        if n < 0:
            return n
        if self._drop:
            return max(0, (n - (self._size - 1) * self._stride - 1) // self._shift + 1) if n else 0
        return -(-n // self._shift)

    def __repr__(self):
        return f"<WindowDataset element_spec={_spec_text(self.element_spec)}>"


def _key_of(call, e, op):
    k = call(e)
    if isinstance(k, Tensor):
        if k.dtype is not _dt.int64 or k.shape:
            raise InvalidArgumentError(f"key_func must return a scalar int64 tensor, got shape {tuple(k.shape)} and "
                                       f"dtype {k.dtype.name}", op)
        return int(k)
    if isinstance(k, int) and not isinstance(k, bool):
        return k
    raise InvalidArgumentError(f"key_func must return a scalar int64 tensor, got {type(k).__name__} {k!r:.40}", op)


class GroupByWindowDataset(Dataset):
    """What ``Dataset.group_by_window`` returns."""

    def __init__(self, input_dataset, key_func, reduce_func, window_size=None, window_size_func=None) -> None:
        op = "GroupByWindowDataset"
        if (window_size is None) == (window_size_func is None):
            raise InvalidArgumentError("Either the `window_size` argument or the `window_size_func` argument must be "
                                       "specified (exactly one of them)", op)
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._key = _caller(key_func, op)
        if not callable(reduce_func):
            raise InvalidArgumentError(f"reduce_func must be callable, got {type(reduce_func).__name__}", op)
        self._reduce = reduce_func
        if window_size is not None:
            size = _count(window_size, "window_size", op, 1)
            self._size_of = lambda key: size
        else:
            if not callable(window_size_func):
                raise InvalidArgumentError(f"window_size_func must be callable, got "
                                           f"{type(window_size_func).__name__}", op)
            self._size_of = lambda key: _window_size(window_size_func(constant(key, _dt.int64)), op)

    def _run(self, key, elems, spec, ctx):
        op = "GroupByWindowDataset"
        out = self._reduce(constant(key, _dt.int64), _ListDataset(elems, spec))
        if not isinstance(out, Dataset):
            raise InvalidArgumentError(f"reduce_func must return a Dataset, got {type(out).__name__}", op)
        it = out._iterator(ctx)
        try:
            yield from it
        finally:
            _close(it)

    def _iterator(self, ctx):
        op = "GroupByWindowDataset"
        spec = self._input.element_spec
        groups, sizes = {}, {}
        it = self._input._iterator(ctx)
        try:
            for e in it:
                key = _key_of(self._key, e, op)
                if key not in sizes:
                    sizes[key] = self._size_of(key)
                g = groups.setdefault(key, [])
                g.append(e)
                if len(g) >= sizes[key]:
                    del groups[key]
                    yield from self._run(key, g, spec, ctx)
        finally:
            _close(it)
        for key in sorted(groups):
            yield from self._run(key, groups[key], spec, ctx)

    def _compute_spec(self):
        spec = self._input.element_spec
        try:
            out = self._reduce(constant(0, _dt.int64), _ListDataset([dummy_element(spec)], spec))
        except Exception:  # noqa: BLE001 - reduce_func rejects a placeholder: use a real element
            out = None
        if isinstance(out, Dataset):
            return out.element_spec
        it = Iterator(self)
        try:
            first = next(it)
        except StopIteration:
            raise InvalidArgumentError("cannot infer the element_spec: reduce_func rejects placeholder windows and "
                                       "the dataset is empty", "GroupByWindowDataset") from None
        finally:
            it.close()
        return S.spec_of(first)

    def _card(self):
        n = self._input._card()
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY


def _window_size(v, op):
    if isinstance(v, Tensor):
        if v.shape or not v.dtype.is_integer:
            raise InvalidArgumentError(f"window_size_func must return a scalar int64, got shape {tuple(v.shape)} "
                                       f"and dtype {v.dtype.name}", op)
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise InvalidArgumentError(f"window_size_func must return a scalar int64, got {type(v).__name__}", op)
    if v <= 0:
        raise InvalidArgumentError(f"Window size must be greater than zero, but got {v}", op)
    return v


def bucket_by_sequence_length(ds, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """TensorFlow's composition: ``group_by_window`` keyed by the length's bucket, batched (padded) per bucket."""
    op = "BucketBySequenceLength"
    boundaries = [_count(b, "bucket_boundaries[i]", op) for b in bucket_boundaries]
    sizes = [_count(b, "bucket_batch_sizes[i]", op, 1) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise InvalidArgumentError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                                   f"`len(bucket_batch_sizes)={len(sizes)}` and "
                                   f"`len(bucket_boundaries)={len(boundaries)}`", op)
    if any(b >= c for b, c in zip(boundaries, boundaries[1:])):
        raise InvalidArgumentError(f"bucket_boundaries must be strictly increasing, got {boundaries}", op)
    length_of = _caller(element_length_func, op)
    lows = [_INT32_MIN] + boundaries
    highs = boundaries + [_INT32_MAX]

    def key_func(*args):
        n = length_of(args if len(args) > 1 else args[0])
        if isinstance(n, Tensor):
            if n.shape or not n.dtype.is_integer:
                raise InvalidArgumentError(f"element_length_func must return a scalar integer, got shape "
                                           f"{tuple(n.shape)} and dtype {n.dtype.name}", op)
        n = int(n)
        for i, (lo, hi) in enumerate(zip(lows, highs)):
            if lo <= n < hi:
                return constant(i, _dt.int64)
        raise InvalidArgumentError(f"element length {n} is outside every bucket [{_INT32_MIN}, {_INT32_MAX})", op)

    def batching(bucket_id, grouped):
        b = int(bucket_id)
        batch_size = sizes[b]
        if no_padding:
            return grouped.batch(batch_size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            if b >= len(sizes) - 1:
                raise InvalidArgumentError("When pad_to_bucket_boundary=True, elements must have length < "
                                           f"max(bucket_boundaries) = {boundaries[-1] if boundaries else None}", op)
            filler = boundaries[b] - 1
        spec = grouped.element_spec
        flat_spec = S.flatten(spec)
        if padded_shapes is None:
            shapes = [s.shape for s in flat_spec]
        else:
            from ._transforms import _flatten_up_to_spec

            shapes = _flatten_up_to_spec(spec, padded_shapes, "padded_shapes", op)
        shapes = S.pack(spec, [_fill_shape(x, filler) for x in shapes])
        return grouped.padded_batch(batch_size, shapes, padding_values, drop_remainder=drop_remainder)

    return GroupByWindowDataset(ds, key_func, batching, window_size_func=lambda k: sizes[int(k)])


def _fill_shape(shape, filler):
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if shape is None:
        raise InvalidArgumentError("a component of unknown rank cannot be padded; give padded_shapes",
                                   "BucketBySequenceLength")
    if isinstance(shape, int):
        shape = [shape]
    return [filler if d is None or d < 0 else int(d) for d in shape]


__all__ = ["DatasetSpec", "GroupByWindowDataset", "TensorSpec", "WindowDataset"]
