"""Transformations that carry state from element to element: what ``Dataset.scan``, ``unique`` and
``ignore_errors`` return.

``ignore_errors`` iterates its input with the iteration's ``skip_errors`` set: a ``map`` or ``filter``
function, or a generator's value, that raises an error (an ``Exception``) for one element drops
that element and the pipeline goes on; an error a stage cannot resume from (a source that fails)
ends the iteration quietly, as TensorFlow ends it.  Between the failing stage and
``ignore_errors``, a ``batch`` batches the elements that survived, where TensorFlow drops the whole
partial batch.
"""
from __future__ import annotations

import logging

from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor

from . import _structure as S
from ._common import _close
from ._structure import TensorSpec
from .dataset import Dataset

_log = logging.getLogger("tapeflow.data")


class _Unary(Dataset):
    def __init__(self, input_dataset) -> None:
        self._input = input_dataset
        self._inputs = (input_dataset,)

    def _compute_spec(self):
        return self._input.element_spec

    def _card(self):
        return self._input._card()


def _check_state(new, state, specs, op):
    if not S.same_structure(new, state):
        raise InvalidArgumentError(f"scan_func returned a state nested as {S.describe(new)}; the initial state is "
                                   f"nested as {S.describe(state)}", op)
    for a, b in zip(specs, S.flatten(new)):
        bd = TensorSpec.from_value(b).dtype
        if bd != a.dtype:
            raise InvalidArgumentError(f"scan_func returned a state component of dtype {bd.name} where the initial "
                                       f"state has {a.dtype.name}", op)


class ScanDataset(_Unary):
    """What ``Dataset.scan`` returns."""

    _op = "ScanDataset"

    def __init__(self, input_dataset, initial_state, scan_func) -> None:
        super().__init__(input_dataset)
        op = self._op
        self._state = S.normalize(S.to_components(initial_state, op), op)
        if not callable(scan_func):
            raise InvalidArgumentError(f"scan_func must be callable, got {type(scan_func).__name__}", op)
        self._fn = scan_func

    def _step(self, state, e):
        op = self._op
        out = self._fn(S.for_user(state), S.for_user(e))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise InvalidArgumentError(f"scan_func must return a pair (new_state, output_element), got "
                                       f"{type(out).__name__} {out!r:.60}", op)
        return S.normalize(out[0], op), S.normalize(out[1], op)

    def _iterator(self, ctx):
        state = self._state
        specs = S.flatten(S.spec_of(state))
        it = self._input._iterator(ctx)
        try:
            for e in it:
                new, out = self._step(state, e)
                _check_state(new, state, specs, self._op)
                state = new
                yield out
        finally:
            _close(it)

    def _compute_spec(self):
        from ._transforms import _spec_from_first
        from ._windows import dummy_element

        try:
            _, out1 = self._step(self._state, dummy_element(self._input.element_spec, 1, 1))
            _, out2 = self._step(self._state, dummy_element(self._input.element_spec, 2, 2))
            s1, s2 = S.spec_of(out1), S.spec_of(out2)
        except Exception:  # noqa: BLE001 - the function rejects placeholders: use a real element
            return _spec_from_first(self)
        if not S.same_structure(s1, s2):
            return _spec_from_first(self)
        return S.map_structure(lambda a, b: a.most_specific_compatible(b), s1, s2)


class UniqueDataset(_Unary):
    """What ``Dataset.unique`` returns: each distinct element (equal shape and values) once, in order of first
    appearance."""

    _op = "UniqueDataset"

    def __init__(self, input_dataset) -> None:
        super().__init__(input_dataset)
        spec = input_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype not in (_dt.int32, _dt.int64, S.string):
            raise TypeError("Dataset.unique() does not support the element_spec "
                            f"{S.format_structure(spec, repr)}: elements must be single tensors of dtype tf.int32, "
                            f"tf.int64 or tf.string [Op:{self._op}]")

    def _iterator(self, ctx):
        seen = set()
        it = self._input._iterator(ctx)
        try:
            for e in it:
                if isinstance(e, Tensor):
                    key = (tuple(e.shape), e.numpy().tobytes())
                else:
                    key = (S.to_text(e),) if isinstance(e, bytes) else (e.shape, tuple(bytes(x) for x in e.reshape(-1)))
                if key not in seen:
                    seen.add(key)
                    yield e
        finally:
            _close(it)

    def _card(self):
        from ._common import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY

        n = self._input._card()
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY


class IgnoreErrorsDataset(_Unary):
    """What ``Dataset.ignore_errors`` returns."""

    def __init__(self, input_dataset, log_warning=False) -> None:
        super().__init__(input_dataset)
        if not isinstance(log_warning, bool):
            raise TypeError(f"log_warning must be a bool, got {type(log_warning).__name__} [Op:IgnoreErrorsDataset]")
        self._log = log_warning

    def _iterator(self, ctx):
        inner = ctx.replace(skip_errors=_warner if self._log else True)
        it = self._input._iterator(inner)
        try:
            while True:
                try:
                    e = next(it)
                except StopIteration:
                    return
                except Exception as err:  # noqa: BLE001 - the input cannot resume: end the iteration
                    if self._log:
                        _warner(err)
                    return
                yield e
        finally:
            _close(it)

    def _card(self):
        from ._common import UNKNOWN_CARDINALITY

        return UNKNOWN_CARDINALITY


def _warner(err):
    _log.warning("Error raised with error message %s", err)


def skipped(ctx, err) -> bool:
    """Whether an element whose computation raised ``err`` is dropped (inside ``ignore_errors``)."""
    flag = ctx.skip_errors
    if not flag or not isinstance(err, Exception):
        return False
    if flag is not True:
        flag(err)
    return True
