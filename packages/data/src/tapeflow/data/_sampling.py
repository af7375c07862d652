"""Choosing among datasets: what ``Dataset.choose_from_datasets``, ``sample_from_datasets`` and
``rejection_resample`` return.

Random choices (which dataset to sample, whether to accept an element) are drawn from NumPy's
``Generator`` seeded as ``shuffle`` seeds (the op's seed, or ``tf.random``'s global seed): which
element comes next is bookkeeping, not the math of an op.  ``sample_from_datasets`` draws the same
sequence each epoch unless ``rerandomize_each_iteration=True``.  The distributions
``rejection_resample`` works with are computed with tapeflow ops, as TensorFlow's composition does.
"""
from __future__ import annotations

import itertools

import numpy as np
from tapeflow.core import dtypes as _dt
from tapeflow.core import ops as _ops
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor, constant, convert_to_tensor

from . import _structure as S
from ._common import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, _caller, _close, _seed_key
from ._structure import TensorSpec
from .dataset import Dataset


def _datasets(datasets, op):
    if isinstance(datasets, Dataset) or not isinstance(datasets, (list, tuple)) or not datasets:
        raise InvalidArgumentError(f"datasets must be a non-empty list of tf.data.Dataset, got {datasets!r:.60}", op)
    for i, d in enumerate(datasets):
        if not isinstance(d, Dataset):
            raise InvalidArgumentError(f"datasets[{i}] is a {type(d).__name__}, not a tf.data.Dataset", op)
    first = datasets[0].element_spec
    for i, d in enumerate(datasets[1:], 1):
        spec = d.element_spec
        ok = S.same_structure(first, spec) and all(
            a.dtype == b.dtype for a, b in zip(S.flatten(first), S.flatten(spec)))
        if not ok:
            raise InvalidArgumentError(f"Incompatible dataset elements: datasets[0] has "
                                       f"{S.format_structure(first, repr)} and datasets[{i}] has "
                                       f"{S.format_structure(spec, repr)}", op)
    return list(datasets)


def _merged_spec(datasets):
    spec = datasets[0].element_spec
    for d in datasets[1:]:
        spec = S.map_structure(lambda a, b: a.most_specific_compatible(b), spec, d.element_spec)
    return spec


class _Directed(Dataset):
    """Elements of ``datasets`` in the order a stream of indices picks them."""

    _op = "DirectedInterleaveDataset"

    def __init__(self, datasets, stop_on_empty_dataset) -> None:
        self._datasets = datasets
        self._inputs = tuple(datasets)
        self._stop = bool(stop_on_empty_dataset)

    def _choices(self, ctx, active):
        raise NotImplementedError  # pragma: no cover - each subclass defines it

    def _iterator(self, ctx):
        n = len(self._datasets)
        its = [d._iterator(ctx) for d in self._datasets]
        active = [True] * n
        choices = self._choices(ctx, active)
        try:
            for i in choices:
                if not 0 <= i < n:
                    raise InvalidArgumentError(f"Selector index out of range: {i} >= {n}", self._op)
                if not active[i]:
                    continue
                try:
                    e = next(its[i])
                except StopIteration:
                    if self._stop:
                        return
                    active[i] = False
                    if not any(active):
                        return
                    continue
                yield e
        finally:
            _close(choices)
            for it in its:
                _close(it)

    def _compute_spec(self):
        return _merged_spec(self._datasets)

    def _card(self):
        return UNKNOWN_CARDINALITY


class ChooseFromDatasetsDataset(_Directed):
    """What ``Dataset.choose_from_datasets`` returns."""

    def __init__(self, datasets, choice_dataset, stop_on_empty_dataset=True) -> None:
        op = self._op
        datasets = _datasets(datasets, op)
        if not isinstance(choice_dataset, Dataset):
            raise InvalidArgumentError(f"choice_dataset must be a tf.data.Dataset, got {type(choice_dataset).__name__}",
                                       op)
        cs = choice_dataset.element_spec
        if not isinstance(cs, TensorSpec) or cs.dtype is not _dt.int64 or cs.shape != ():
            raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of type `tf.int64`, "
                            f"got {S.format_structure(cs, repr)} [Op:{op}]")
        super().__init__(datasets, stop_on_empty_dataset)
        self._choice = choice_dataset
        self._inputs = (choice_dataset, *datasets)

    def _choices(self, ctx, active):
        it = self._choice._iterator(ctx)
        try:
            for c in it:
                yield int(c)
        finally:
            _close(it)


def _weights_vector(w, n, op):
    if isinstance(w, Tensor):
        w = w.numpy()
    arr = np.asarray(w, np.float64).reshape(-1) if not isinstance(w, np.ndarray) else w.astype(np.float64).reshape(-1)
    if arr.shape != (n,):
        raise InvalidArgumentError(f"weights must have one entry per dataset ({n}), got shape {np.shape(w)}", op)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise InvalidArgumentError(f"weights must be finite and >= 0, got {arr.tolist()}", op)
    return arr


class SampleFromDatasetsDataset(_Directed):
    """What ``Dataset.sample_from_datasets`` returns."""

    def __init__(self, datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                 rerandomize_each_iteration=None) -> None:
        op = self._op
        datasets = _datasets(datasets, op)
        super().__init__(datasets, stop_on_empty_dataset)
        n = len(datasets)
        self._wds = None
        if weights is None:
            self._w = np.full(n, 1.0 / n)
        elif isinstance(weights, Dataset):
            ws = weights.element_spec
            if not isinstance(ws, TensorSpec) or not ws.dtype.is_floating or (ws.shape is not None and
                                                                             tuple(ws.shape) not in ((n,), (None,))):
                raise InvalidArgumentError(f"a weights dataset must have float vectors of length {n} as elements, got "
                                           f"{S.format_structure(ws, repr)}", op)
            self._wds = weights
            self._inputs = (*datasets, weights)
        else:
            self._w = _weights_vector(weights, n, op)
            if not self._w.sum() > 0:
                raise InvalidArgumentError(f"weights must not all be zero, got {self._w.tolist()}", op)
        self._key = _seed_key(seed)
        self._epochs = itertools.count()
        self._reshuffle = bool(rerandomize_each_iteration)

    def _choices(self, ctx, active):
        epoch = next(self._epochs) if self._reshuffle else 0
        rng = np.random.default_rng(self._key + (epoch,))
        n = len(self._datasets)
        act = np.asarray(active)
        wit = self._wds._iterator(ctx) if self._wds is not None else None
        try:
            while True:
                if wit is None:
                    w = self._w
                else:
                    try:
                        w = _weights_vector(next(wit), n, self._op)
                    except StopIteration:
                        return
                act[:] = active
                p = np.where(act, w, 0.0) if not self._stop else w
                total = p.sum()
                if not total > 0:
                    return
                cum = np.cumsum(p / total)
                yield int(min(np.searchsorted(cum, rng.random(), side="right"), n - 1))
        finally:
            if wit is not None:
                _close(wit)

    def _card(self):
        cards = [d._card() for d in self._datasets]
        if self._wds is None and all(c == INFINITE_CARDINALITY for c in cards):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY


# ---- rejection_resample -------------------------------------------------------------------

def _class_of(call, e, num_classes, op):
    c = call(e)
    if isinstance(c, Tensor):
        if c.shape or not c.dtype.is_integer:
            raise InvalidArgumentError(f"class_func must return a scalar integer tensor, got shape {tuple(c.shape)} "
                                       f"and dtype {c.dtype.name}", op)
    elif isinstance(c, bool) or not isinstance(c, (int, np.integer)):
        raise InvalidArgumentError(f"class_func must return a scalar integer tensor, got {type(c).__name__}", op)
    k = int(c)
    if not 0 <= k < num_classes:
        raise InvalidArgumentError(f"class_func returned class {k}, not in [0, {num_classes})", op)
    return c if isinstance(c, Tensor) else constant(k, _dt.int32), k


def _acceptance(initial, target):
    """TensorFlow's ``_calculate_acceptance_probs_with_mixing``: per-class acceptance and the mixing ratio."""
    tiny = float(np.finfo(np.float32).tiny)
    ratio = _ops.divide(target, _ops.add(initial, constant(tiny, _dt.float32)))
    hi, lo = _ops.reduce_max(ratio), _ops.reduce_min(ratio)
    accept = _ops.divide(_ops.subtract(ratio, lo), _ops.subtract(hi, lo))
    return accept.numpy(), float(lo)


class RejectionResampleDataset(Dataset):
    """What ``Dataset.rejection_resample`` returns: ``(class, element)`` pairs resampled towards ``target_dist``.

    As TensorFlow, each element either comes straight from the input (with the mixing probability
    ``m = min(target / initial)``) or from a rejection sampler that accepts class ``i`` with probability
    ``(t_i/p_i - m) / (max(t/p) - m)``; without ``initial_dist``, ``p`` is estimated from the classes
    seen so far (counts starting at 10 each, updated every 32 elements).
    """

    _op = "RejectionResample"

    def __init__(self, input_dataset, class_func, target_dist, initial_dist=None, seed=None) -> None:
        op = self._op
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._call = _caller(class_func, op)
        self._target = self._dist(target_dist, "target_dist")
        self._k = int(self._target.shape[0])
        self._initial = None if initial_dist is None else self._dist(initial_dist, "initial_dist")
        if self._initial is not None and self._initial.shape != self._target.shape:
            raise InvalidArgumentError(f"initial_dist has shape {tuple(self._initial.shape)}, target_dist has "
                                       f"{tuple(self._target.shape)}", op)
        self._key = _seed_key(seed)
        self._epochs = itertools.count()

    def _dist(self, d, what):
        op = self._op
        try:
            t = _ops.cast(convert_to_tensor(d), _dt.float32)
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError(f"{what} must be a vector of probabilities: {e}", op) from None
        if len(t.shape) != 1 or not t.shape[0]:
            raise InvalidArgumentError(f"{what} must be a non-empty vector, got shape {tuple(t.shape)}", op)
        v = t.numpy()
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise InvalidArgumentError(f"{what} must hold probabilities >= 0, got {v.tolist()}", op)
        return t

    def _iterator(self, ctx):
        # two streams over the input, as TensorFlow's composition: the original (taken with the mixing
        # probability) and the rejection-filtered one
        rng = np.random.default_rng(self._key + (next(self._epochs),))
        k, target, op = self._k, self._target, self._op
        orig = self._input._iterator(ctx)
        filt = self._input._iterator(ctx)
        try:
            if self._initial is not None:
                accept, m = _acceptance(self._initial, target)
                while True:
                    src = 0 if rng.random() < m else 1
                    if src == 0:
                        try:
                            e = next(orig)
                        except StopIteration:
                            return
                        c, _ = _class_of(self._call, e, k, op)
                        yield c, e
                        continue
                    while True:
                        try:
                            e = next(filt)
                        except StopIteration:
                            return
                        c, ci = _class_of(self._call, e, k, op)
                        if rng.random() < accept[ci]:
                            yield c, e
                            break
            else:
                yield from self._estimated(rng, orig, filt)
        finally:
            _close(orig)
            _close(filt)

    def _estimated(self, rng, orig, filt):
        """Without ``initial_dist``: the distribution estimated per batch of 32 classes of the filtered stream
        (TensorFlow's ``_estimate_initial_dist_ds``), the mixing ratio following it."""
        k, target, op = self._k, self._target, self._op
        counts = _ops.fill([k], constant(10, _dt.int64))
        pending = []  # (class tensor, class index, element, acceptance, mixing) of the current batch

        def refill():
            nonlocal counts
            batch = []
            for _ in range(32):
                try:
                    e = next(filt)
                except StopIteration:
                    break
                c, ci = _class_of(self._call, e, k, op)
                batch.append((c, ci, e))
            if not batch:
                return False
            onehot = _ops.one_hot(constant(np.array([b[1] for b in batch], np.int64)), k, dtype=_dt.int64)
            counts = _ops.add(counts, _ops.reduce_sum(onehot, 0))
            est = _ops.cast(_ops.divide(counts, _ops.reduce_sum(counts)), _dt.float32)
            accept, m = _acceptance(est, target)
            pending.extend((c, ci, e, accept, m) for c, ci, e in batch)
            return True

        while True:
            if not pending and not refill():
                return
            if rng.random() < pending[0][4]:
                try:
                    e = next(orig)
                except StopIteration:
                    return
                c, _ = _class_of(self._call, e, k, op)
                yield c, e
                continue
            while True:
                if not pending and not refill():
                    return
                c, ci, e, accept, _ = pending.pop(0)
                if rng.random() < accept[ci]:
                    yield c, e
                    break

    def _compute_spec(self):
        from ._windows import dummy_element

        e = dummy_element(self._input.element_spec)
        c = self._call(e)
        cs = TensorSpec((), c.dtype if isinstance(c, Tensor) else _dt.int32)
        return cs, self._input.element_spec

    def _card(self):
        return UNKNOWN_CARDINALITY
