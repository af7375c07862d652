"""``tf.TensorArray``: a list of same-dtype tensors written one index at a time, read, stacked or concatenated.

Eagerly a TensorArray is a Python list of tensors (a tape sees each write's value and the ``stack`` that
joins them, so gradients flow through ``write``/``read``/``stack`` as TensorFlow's do).  Inside a graph
function it is one buffer tensor of shape ``[size, *element_shape]``: ``write`` is a
``tensor_scatter_nd_update`` of one row, ``read`` a ``gather``, ``dynamic_size`` growth a ``concat`` of zero
rows, so a TensorArray is a loop variable of ``tf.while_loop`` (and of AutoGraph's ``for i in tf.range(n)``)
like any tensor: it flattens to its buffer (``_tf_flat``) and is rebuilt from it (``_tf_pack``).  Until its
first write in a graph, a TensorArray with no ``element_shape`` carries only its size; a loop that writes
it restarts with the buffer the body showed (``_tf_relax``).

>>> import tapeflow as tf
>>> ta = tf.TensorArray(tf.float32, size=2)
>>> ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
>>> ta.stack().numpy().tolist()
[[1.0, 2.0], [3.0, 4.0]]
>>> @tf.function
... def squares(n):
...     ta = tf.TensorArray(tf.int32, size=n)
...     for i in tf.range(n):
...         ta = ta.write(i, i * i)
...     return ta.stack()
>>> squares(tf.constant(4)).numpy().tolist()
[0, 1, 4, 9]
"""
from __future__ import annotations

from . import dtypes as _dt
from .dispatch import dtype_arg, static_value, to_tensor
from .errors import InvalidArgumentError, OutOfRangeError
from .runner import current_graph
from .tensor import Tensor, TensorShape, convert_to_tensor

__all__ = ["TensorArray"]


def _ops():
    from . import ops

    return ops


def _symbolic(t) -> bool:
    return isinstance(t, Tensor) and t._h is None and t._arr is None


def _compatible(a, b) -> bool:
    """Shapes ``a`` and ``b`` (tuples with None for unknown dims) can be the same."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _zero_rows(n, template: Tensor) -> Tensor:
    """``n`` rows of zeros shaped like ``template`` (``n`` an int or a scalar int tensor, symbolic or not)."""
    o = _ops()
    shape = tuple(template._shape)
    if isinstance(n, int) and None not in shape:
        return o.zeros((n,) + shape, template._dtype)
    if template._dtype is _dt.bool_:
        return o.cast(_zero_rows(n, o.cast(template, _dt.int32)), _dt.bool_)
    rows = o.reshape(o.cast(o.range_(n) * 0, template._dtype), [-1] + [1] * len(shape))
    return rows + o.expand_dims(o.zeros_like(template), 0)


class TensorArray:
    """A list of tensors of one dtype, as TensorFlow's ``tf.TensorArray``.

    ``size`` elements (an int or a scalar int tensor); ``dynamic_size=True`` lets writes past the end grow it;
    ``clear_after_read=True`` makes a second eager ``read`` of an index an error (as TensorFlow); with
    ``infer_shape=True`` every element has the shape of the first write (or ``element_shape``).  ``write``,
    ``unstack``, ``scatter`` and ``split`` return the TensorArray to use next (reassign it:
    ``ta = ta.write(i, x)``, which a graph loop needs).  Unwritten elements read as zeros.

    >>> import tapeflow as tf
    >>> ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    >>> ta = ta.write(2, 5.0)
    >>> int(ta.size()), ta.stack().numpy().tolist()
    (3, [0.0, 0.0, 5.0])
    >>> ta = tf.TensorArray(tf.int32, size=3).unstack([[1, 2], [3, 4], [5, 6]])
    >>> ta.gather([2, 0]).numpy().tolist(), ta.concat().numpy().tolist()
    ([[5, 6], [1, 2]], [1, 2, 3, 4, 5, 6])
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, infer_shape=True,
                 element_shape=None, name=None) -> None:
        op = "TensorArrayV3"
        self._dtype = dtype_arg(dtype, op)
        if size is None:
            if not dynamic_size:
                raise InvalidArgumentError("size is None and dynamic_size is False; allowed: a size, or "
                                           "dynamic_size=True", op)
            size = 0
        self._dynamic = bool(dynamic_size)
        self._clear = True if clear_after_read is None else bool(clear_after_read)
        self._infer = bool(infer_shape)
        self._eshape = None if element_shape is None else tuple(
            None if d is None else int(d) for d in (element_shape.as_list() if hasattr(element_shape, "as_list")
                                                     else element_shape))
        self._name = name or "TensorArray"
        self._graph = current_graph() is not None
        self._items = self._buf = None
        self._read = set()
        if isinstance(size, Tensor) and _symbolic(size):
            if size._dtype not in (_dt.int32, _dt.int64) or size._shape:
                raise InvalidArgumentError(f"size is a {size._dtype.name} tensor of shape {tuple(size._shape)}; "
                                           "allowed: a scalar int32 tensor or an int", op)
            self._size = _ops().cast(size, _dt.int32)
        else:
            n = static_value(size, op, "size")
            n = int(n) if not isinstance(n, bool) else -1
            if n < 0:
                raise InvalidArgumentError(f"size = {size!r}; allowed: an int >= 0", op)
            self._size = n
        if not self._graph:
            self._items = [None] * self._size
        elif self._eshape is not None and None not in self._eshape:
            self._buf = _zero_rows(self._size, _ops().zeros(self._eshape, self._dtype))

    # ---- construction for loops ------------------------------------------------------------------

    def _copy(self, buf=None, size=None):
        ta = object.__new__(TensorArray)
        ta.__dict__.update(self.__dict__)
        ta._read = set()
        ta._buf = buf
        if buf is not None:
            ta._eshape = tuple(buf._shape[1:])
        if size is not None:
            ta._size = size
        return ta

    def _tf_flat(self) -> list:
        """The tensors a graph loop carries: the buffer, or the size before the first write."""
        if not self._graph:
            raise InvalidArgumentError("an eager TensorArray is no graph loop variable; create it inside the "
                                       "tf.function", "TensorArrayV3")
        if self._buf is not None:
            return [self._buf]
        return [convert_to_tensor(self._size, _dt.int32) if not isinstance(self._size, Tensor)
                else self._size]

    def _tf_shapes(self) -> list:
        """The loop invariant of each flat tensor: a dynamic_size buffer may grow along its first axis."""
        if self._buf is not None:
            return [((None if self._dynamic else self._buf._shape[0]),) + tuple(self._buf._shape[1:])]
        return [()]

    def _tf_pack(self, flat) -> TensorArray:
        (t,) = flat
        return self._copy(buf=t) if self._buf is not None else self._copy(size=t)

    def _tf_relax(self, other) -> TensorArray:
        """This TensorArray as it must enter a loop whose body turns it into ``other``: with a buffer once the
        body writes it (element shape from the body)."""
        if self._buf is not None or not isinstance(other, TensorArray) or other._buf is None:
            return self
        eshape = tuple(other._buf._shape[1:])
        if None in eshape:
            raise InvalidArgumentError(f"a loop writes elements of shape {eshape} into this TensorArray; give it an "
                                       "element_shape (all dimensions known) when you create it",
                                       "TensorArrayV3")
        return self._copy(buf=_zero_rows(self._size, _ops().zeros(eshape, self._dtype)))

    # ---- properties ------------------------------------------------------------------------------------

    @property
    def dtype(self):
        """The elements' dtype.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.int32, size=1).dtype.name
        'int32'
        """
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        """Whether writes past the end grow the array.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.int32, size=0, dynamic_size=True).dynamic_size
        True
        """
        return self._dynamic

    @property
    def element_shape(self):
        """The elements' shape (None dimensions where unknown), or None before it is known.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.float32, size=1).write(0, [1.0, 2.0]).element_shape
        TensorShape([2])
        """
        return None if self._eshape is None else TensorShape(self._eshape)

    def size(self, name=None) -> Tensor:
        """The number of elements, an int32 scalar.

        >>> import tapeflow as tf
        >>> int(tf.TensorArray(tf.float32, size=4).size())
        4
        """
        o = _ops()
        if self._items is not None:
            return convert_to_tensor(len(self._items), _dt.int32)
        if self._buf is not None:
            return o.shape(self._buf, out_type=_dt.int32)[0]
        return self._size if isinstance(self._size, Tensor) else convert_to_tensor(self._size, _dt.int32)

    def __repr__(self):
        return (f"<tf.TensorArray '{self._name}': dtype={self._dtype.name}, element_shape={self.element_shape}, "
                f"dynamic_size={self._dynamic}>")

    # ---- checks ----------------------------------------------------------------------------------------

    def _value(self, value, op) -> Tensor:
        t = value if isinstance(value, Tensor) else to_tensor(value, op, self._dtype)
        if t._dtype is not self._dtype:
            raise InvalidArgumentError(f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                                       f"{t._dtype.name}", op)
        return t

    def _check_shape(self, shape, op):
        shape = tuple(shape)
        if self._infer and self._eshape is not None and not _compatible(self._eshape, shape):
            raise InvalidArgumentError(f"Incompatible shape for value ({shape}), expected ({self._eshape})", op)
        if self._infer and (self._eshape is None or None in self._eshape):
            self._eshape = shape

    def _index(self, index, op):
        """A Python int index (eager), or the index tensor (graph)."""
        if self._items is None and _symbolic(index):
            if index._dtype not in (_dt.int32, _dt.int64) or index._shape:
                raise InvalidArgumentError(f"index is a {index._dtype.name} tensor of shape {tuple(index._shape)}; "
                                           "allowed: a scalar int32 tensor", op)
            return _ops().cast(index, _dt.int32)
        v = static_value(index, op, "index")
        try:
            i = int(v)
        except (TypeError, ValueError):
            raise TypeError(f"index must be an integer, got {v!r}; allowed: an int or a scalar int tensor "
                            f"[Op:{op}]") from None
        if i < 0:
            raise InvalidArgumentError(f"index = {i}; allowed: an index >= 0", op)
        return i

    def _grow(self, need, op):
        """Make room for index ``need - 1`` (eager list)."""
        if need > len(self._items):
            if not self._dynamic:
                raise OutOfRangeError(f"Tried to write to index {need - 1} but array is not resizeable and size is: "
                                      f"{len(self._items)}", op)
            self._items.extend([None] * (need - len(self._items)))

    def _zero(self, op):
        if self._eshape is None or None in self._eshape:
            raise InvalidArgumentError("an element that was never written has an unknown shape; give the "
                                       "TensorArray an element_shape or write every element", op)
        return _ops().zeros(self._eshape, self._dtype)

    # ---- graph buffer ----------------------------------------------------------------------------------

    def _graph_buf(self, template: Tensor):
        if self._buf is not None:
            return self._buf
        return _zero_rows(self._size, template)

    def _graph_update(self, indices: Tensor, values: Tensor, top, op) -> TensorArray:
        """Scatter rows ``values`` at ``indices`` (int32, [k, 1]); ``top`` the largest index written."""
        o = _ops()
        buf = self._graph_buf(values[0] if values._shape[0] != 0 else o.zeros(values._shape[1:], self._dtype))
        if self._dynamic:
            n = o.shape(buf, out_type=_dt.int32)[0]
            more = o.maximum(top + 1 - n, 0)
            buf = o.concat([buf, _zero_rows(more, o.zeros_like(values[0]) if values._shape[0] != 0
                                            else o.zeros(values._shape[1:], self._dtype))], 0)
        elif isinstance(top, int) and buf._shape[0] is not None and top >= buf._shape[0]:
            raise OutOfRangeError(f"Tried to write to index {top} but array is not resizeable and size is: "
                                  f"{buf._shape[0]}", op)
        return self._copy(buf=o.tensor_scatter_nd_update(buf, indices, values))

    # ---- element access --------------------------------------------------------------------------------

    def write(self, index, value, name=None) -> TensorArray:
        """Element ``index`` becomes ``value``; returns the TensorArray to use next.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.int32, size=2).write(1, 7).stack().numpy().tolist()
        [0, 7]
        """
        op = "TensorArrayWriteV3"
        i = self._index(index, op)
        v = self._value(value, op)
        self._check_shape(v._shape, op)
        if self._items is not None:
            self._grow(i + 1, op)
            self._items[i] = v
            self._read.discard(i)
            return self
        o = _ops()
        return self._graph_update(o.reshape(i, [1, 1]), o.expand_dims(v, 0), i, op)

    def read(self, index, name=None) -> Tensor:
        """Element ``index`` (zeros if it was never written).

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.float32, size=1).write(0, [1.0, 2.0]).read(0).numpy().tolist()
        [1.0, 2.0]
        """
        op = "TensorArrayReadV3"
        i = self._index(index, op)
        if self._items is not None:
            if i >= len(self._items):
                raise InvalidArgumentError(f"Tried to read from index {i} but array size is: {len(self._items)}", op)
            if i in self._read:
                raise InvalidArgumentError(f"Could not read index {i} twice because it was cleared after a previous "
                                           "read (perhaps try setting clear_after_read = false?)", op)
            v = self._items[i]
            if v is None:
                v = self._zero(op)
            if self._clear:
                self._read.add(i)
            return v
        if self._buf is None:
            return self._zero(op)
        return _ops().gather(self._buf, i)

    def stack(self, name=None) -> Tensor:
        """All elements stacked along a new first axis.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack().shape
        TensorShape([0, 2])
        """
        op = "TensorArrayGatherV3"
        o = _ops()
        if self._items is not None:
            if not self._items:
                return o.zeros((0,) + (self._eshape or ()), self._dtype)
            return o.stack([v if v is not None else self._zero(op) for v in self._items], 0)
        if self._buf is not None:
            return self._buf
        if self._eshape is None:
            if isinstance(self._size, int) and self._size == 0:
                return o.zeros((0,), self._dtype)
            raise InvalidArgumentError("stacking a TensorArray that was never written and has no element_shape", op)
        return _zero_rows(self._size, self._zero(op))

    def gather(self, indices, name=None) -> Tensor:
        """The elements at ``indices``, stacked.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.int32, size=3).unstack([4, 5, 6]).gather([2, 0]).numpy().tolist()
        [6, 4]
        """
        op = "TensorArrayGatherV3"
        o = _ops()
        if self._items is not None:
            idx = static_value(indices, op, "indices")
            idx = [int(i) for i in (idx.reshape(-1) if hasattr(idx, "reshape") else idx)]
            for i in idx:
                if not 0 <= i < len(self._items):
                    raise InvalidArgumentError(f"indices contains {i}, not in [0, {len(self._items)})", op)
            if not idx:
                return o.zeros((0,) + (self._eshape or ()), self._dtype)
            return o.stack([self._items[i] if self._items[i] is not None else self._zero(op) for i in idx], 0)
        return o.gather(self.stack(), indices)

    def unstack(self, value, name=None) -> TensorArray:
        """Element ``i`` becomes ``value[i]``.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.float32, size=2).unstack([[1.0], [2.0]]).read(1).numpy().tolist()
        [2.0]
        """
        op = "TensorArrayScatterV3"
        v = self._value(value, op)
        if not v._shape:
            raise InvalidArgumentError("value is a scalar; allowed: a tensor of rank >= 1", op)
        o = _ops()
        if self._items is not None:
            n = v._shape[0]
            if not self._dynamic and n > len(self._items):
                raise InvalidArgumentError(f"Cannot unstack {n} tensors into a TensorArray of static size "
                                           f"{len(self._items)}", op)
            return self.scatter(list(range(n)), v)
        return self.scatter(o.range_(o.shape(v, out_type=_dt.int32)[0]), v)

    def scatter(self, indices, value, name=None) -> TensorArray:
        """Element ``indices[k]`` becomes ``value[k]``.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.int32, size=3).scatter([2, 0], [7, 8]).stack().numpy().tolist()
        [8, 0, 7]
        """
        op = "TensorArrayScatterV3"
        v = self._value(value, op)
        if not v._shape:
            raise InvalidArgumentError("value is a scalar; allowed: a tensor of rank >= 1", op)
        self._check_shape(v._shape[1:], op)
        o = _ops()
        if self._items is not None:
            idx = static_value(indices, op, "indices")
            idx = [int(i) for i in (idx.reshape(-1) if hasattr(idx, "reshape") else idx)]
            if len(idx) != v._shape[0]:
                raise InvalidArgumentError(f"{len(idx)} indices for {v._shape[0]} values", op)
            if any(i < 0 for i in idx):
                raise InvalidArgumentError(f"indices {idx}; allowed: indices >= 0", op)
            if idx:
                self._grow(max(idx) + 1, op)
            for k, i in enumerate(idx):
                self._items[i] = v[k]
                self._read.discard(i)
            return self
        idx = o.cast(to_tensor(indices, op), _dt.int32)
        top = o.reduce_max(idx) if idx._shape[0] != 0 else -1
        return self._graph_update(o.reshape(idx, [-1, 1]), v, top, op)

    def concat(self, name=None) -> Tensor:
        """All elements concatenated along their first axis.

        >>> import tapeflow as tf
        >>> tf.TensorArray(tf.int32, size=2, infer_shape=False).write(0, [1]).write(1, [2, 3]).concat().numpy().tolist()
        [1, 2, 3]
        """
        op = "TensorArrayConcatV3"
        o = _ops()
        if self._items is not None:
            items = [v if v is not None else self._zero(op) for v in self._items]
            if any(not v._shape for v in items):
                raise InvalidArgumentError("concat needs elements of rank >= 1; an element is a scalar", op)
            if not items:
                return o.zeros((0,) + (self._eshape or ())[1:], self._dtype)
            return o.concat(items, 0)
        s = self.stack()
        if len(s._shape) < 2:
            raise InvalidArgumentError("concat needs elements of rank >= 1; the elements are scalars", op)
        return o.reshape(s, [-1] + list(s._shape[2:]))

    def split(self, value, lengths, name=None) -> TensorArray:
        """Element ``i`` becomes the ``i``-th piece of ``value`` cut along its first axis by ``lengths``.

        Inside a graph the pieces must have one length (the buffer holds elements of one shape).

        >>> import tapeflow as tf
        >>> ta = tf.TensorArray(tf.float32, size=2, infer_shape=False).split([1.0, 2.0, 3.0], [1, 2])
        >>> ta.read(1).numpy().tolist()
        [2.0, 3.0]
        """
        op = "TensorArraySplitV3"
        v = self._value(value, op)
        if not v._shape:
            raise InvalidArgumentError("value is a scalar; allowed: a tensor of rank >= 1", op)
        lens = static_value(lengths, op, "lengths")
        lens = [int(n) for n in (lens.reshape(-1) if hasattr(lens, "reshape") else lens)]
        if any(n < 0 for n in lens) or (v._shape[0] is not None and sum(lens) != v._shape[0]):
            raise InvalidArgumentError(f"lengths {lens} do not cut the {v._shape[0]} rows of value; allowed: "
                                       "lengths >= 0 summing to value's first dimension", op)
        o = _ops()
        if self._items is not None:
            if not self._dynamic and len(lens) > len(self._items):
                raise InvalidArgumentError(f"Cannot split into {len(lens)} tensors a TensorArray of static size "
                                           f"{len(self._items)}", op)
            pieces = o.split(v, lens, 0) if lens else []
            for p in pieces:
                self._check_shape(p._shape, op)
            self._grow(len(lens), op)
            for i, p in enumerate(pieces):
                self._items[i] = p
                self._read.discard(i)
            return self
        if len(set(lens)) > 1:
            raise InvalidArgumentError(f"lengths {lens} differ; inside a graph function a TensorArray holds elements "
                                       "of one shape: split into equal lengths", op)
        k = lens[0] if lens else 0
        return self.unstack(o.reshape(v, [len(lens), k] + list(v._shape[1:])))
