"""TensorBoard summaries (``tf.summary``): scalars, histograms, images and text in event files.

Event files are written with tensorboardX (the optional extra ``tapeflow-nn[summary]``),
in the format TensorBoard reads.  Summaries go to the default writer set by
``writer.as_default()``; with no default writer they are dropped (and return False).

>>> import tempfile
>>> import tapeflow as tf
>>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
>>> with writer.as_default():
...     for step in range(1, 1001):
...         loss = 1 - 0.001 * step
...         if step % 100 == 0:
...             _ = tf.summary.scalar("loss", loss, step=step)
>>> writer.flush()
"""
from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import sys
import time
import weakref

import numpy as np

from tapeflow.core import dtypes as _dt
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

import tapeflow.core as K

from . import _distribute

_DEFAULT = []   # stack of default writers
_STEP = [None]  # tf.summary.experimental.set_step
_RECORD = [True]


def _import_tensorboardx():
    """Import tensorboardX without the PyTorch import it attempts at import time.

    tensorboardX tries ``import torch`` (seconds, when PyTorch is installed) only to recognise
    torch tensors, which tapeflow never hands it; unless PyTorch is already loaded, the
    attempt is made to fail fast, and the process can still import PyTorch afterwards.
    """
    if "tensorboardX" in sys.modules:
        return
    block = "torch" not in sys.modules
    if block:
        sys.modules["torch"] = None
    try:
        import tensorboardX  # noqa: F401
    finally:
        if block and sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


def _tbx():
    try:
        _import_tensorboardx()
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
    except ImportError as e:
        raise ImportError("tf.summary writes TensorBoard event files with tensorboardX, which is not installed: "
                          f"pip install 'tapeflow-nn[summary]' ({e})") from None
    return (EventsWriter, event_pb2), summary_pb2, tensor_pb2, tensor_shape_pb2


_OPEN: "weakref.WeakSet" = weakref.WeakSet()
_SERIAL = itertools.count()


@atexit.register
def _close_all():
    for w in list(_OPEN):
        w.close()


class SummaryWriter:
    """Writes summaries to an event file in ``logdir`` (made by ``create_file_writer``).

    Events are written synchronously and buffered: the file is flushed every ``max_queue``
    events, after ``flush_millis``, on ``flush()`` and on ``close()`` (and at exit), so
    ``flush()`` guarantees that everything written so far is on disk.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> w = tf.summary.create_file_writer(tempfile.mkdtemp())
    >>> with w.as_default(step=3):
    ...     tf.summary.scalar("x", 1.5)
    True
    >>> w.close()
    """

    def __init__(self, logdir, max_queue=10, flush_millis=120000, filename_suffix="") -> None:
        (EventsWriter, event_pb2), _, _, _ = _tbx()
        self.logdir = os.fspath(logdir)
        os.makedirs(self.logdir, exist_ok=True)
        # the pid and a serial number keep two writers opened in the same second apart
        suffix = f".{os.getpid()}.{next(_SERIAL)}.v2{filename_suffix or ''}"
        self._writer = EventsWriter(os.path.join(self.logdir, "events"), suffix)
        self._event = event_pb2.Event
        self._max_queue, self._flush_secs = max(1, int(max_queue)), flush_millis / 1000.0
        self._pending, self._last_flush = 0, time.monotonic()
        self._closed = False
        _OPEN.add(self)

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Make this the default writer inside the ``with`` block (and set the step, if given)."""
        _DEFAULT.append(self)
        old = _STEP[0]
        if step is not None:
            _STEP[0] = step
        try:
            yield self
        finally:
            _DEFAULT.pop()
            if step is not None:
                _STEP[0] = old
            self.flush()

    def set_as_default(self, step=None):
        """Make this the default writer from now on."""
        _DEFAULT[:] = [self]
        if step is not None:
            _STEP[0] = step

    def init(self):
        """The event file is created on construction: nothing to do."""

    def _add(self, summary, step):
        if self._closed:
            raise InvalidArgumentError(f"the summary writer for {self.logdir!r} is closed", "WriteSummary")
        self._writer.write_event(self._event(wall_time=time.time(), step=int(step), summary=summary))
        self._pending += 1
        if self._pending >= self._max_queue or time.monotonic() - self._last_flush >= self._flush_secs:
            self.flush()

    def flush(self) -> None:
        """Write every pending event to disk."""
        if not self._closed:
            self._writer.flush()
            self._pending, self._last_flush = 0, time.monotonic()

    def close(self) -> None:
        """Flush and close the event file."""
        if not self._closed:
            self._writer.close()
            self._closed = True
            _OPEN.discard(self)


class _NoopWriter:
    @contextlib.contextmanager
    def as_default(self, step=None):
        _DEFAULT.append(self)
        try:
            yield self
        finally:
            _DEFAULT.pop()

    def set_as_default(self, step=None):
        _DEFAULT[:] = [self]

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def init(self):
        pass


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False) -> SummaryWriter:
    """A SummaryWriter for ``logdir`` (the directory is created).

    >>> import tempfile
    >>> import tapeflow as tf
    >>> type(tf.summary.create_file_writer(tempfile.mkdtemp())).__name__
    'SummaryWriter'
    """
    if not _distribute.is_chief():  # under tf.distribute only the chief (MPI rank 0) writes summaries
        return _NoopWriter()
    return SummaryWriter(logdir, max_queue=10 if max_queue is None else max_queue,
                         flush_millis=120000 if flush_millis is None else flush_millis,
                         filename_suffix=filename_suffix or "")


def create_noop_writer():
    """A writer that writes nothing (summaries under it are dropped).

    >>> import tapeflow as tf
    >>> with tf.summary.create_noop_writer().as_default():
    ...     tf.summary.scalar("x", 1.0, step=0)
    False
    """
    return _NoopWriter()


def _target(step):
    """The writer and step for a summary call, or (None, None) when nothing is recorded."""
    if not _DEFAULT or not _RECORD[0] or not isinstance(_DEFAULT[-1], SummaryWriter):
        return None, None
    if step is None:
        step = _STEP[0]
    if step is None:
        raise ValueError("no step set: pass step= or call tf.summary.experimental.set_step() first")
    return _DEFAULT[-1], int(step)


def _host(data):
    if isinstance(data, Variable):
        data = data.read_value()
    if isinstance(data, Tensor):
        return data
    return K.convert_to_tensor(data)


def scalar(name, data, step=None, description=None) -> bool:
    """Write a scalar (a Python number or a one-element tensor) under ``name`` at ``step``.

    >>> import tapeflow as tf
    >>> tf.summary.scalar("loss", 0.5, step=1)   # no default writer: nothing written
    False
    """
    writer, step = _target(step)
    if writer is None:
        return False
    t = _host(data)
    if t.shape.num_elements() != 1:
        raise InvalidArgumentError(f"summary scalar {name!r} needs one value, got shape {tuple(t.shape)}",
                                   "WriteScalarSummary")
    _, pb, _, _ = _tbx()
    value = pb.Summary.Value(tag=name, simple_value=float(K.reshape(t, ())))
    if description:
        value.metadata.summary_description = description
    writer._add(pb.Summary(value=[value]), step)
    return True


def histogram(name, data, step=None, buckets=None, description=None) -> bool:
    """Write a histogram of ``data``'s values (``buckets`` equal-width buckets, 30 by default).

    The bucket counts and statistics are computed with tapeflow ops.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> with tf.summary.create_file_writer(tempfile.mkdtemp()).as_default(step=0):
    ...     tf.summary.histogram("w", tf.constant([1.0, 2.0, 2.0, 3.0]))
    True
    """
    writer, step = _target(step)
    if writer is None:
        return False
    k = 30 if buckets is None else int(buckets)
    if k <= 0:
        raise InvalidArgumentError(f"buckets must be positive, got {k}", "WriteHistogramSummary")
    x = K.reshape(_host(data), (-1,))
    if x.dtype is not _dt.float64:
        x = K.cast(x, _dt.float64)
    n = x.shape[0]
    _, pb, _, _ = _tbx()
    if n == 0:
        histo = pb.HistogramProto(min=0.0, max=0.0, num=0, sum=0.0, sum_squares=0.0, bucket_limit=[], bucket=[])
    else:
        lo, hi = float(K.reduce_min(x)), float(K.reduce_max(x))
        total, sq = float(K.reduce_sum(x)), float(K.reduce_sum(K.square(x)))
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
        width = (hi - lo) / k
        # bucket i holds [lo + i * width, lo + (i + 1) * width); the maximum goes to the last one
        idx = K.cast(K.floor(K.truediv(K.subtract(x, lo), width)), _dt.int32)
        idx = K.clip_by_value(idx, 0, k - 1)
        counts = [int(c) for c in K.unsorted_segment_sum(K.ones_like(x), idx, k).numpy().tolist()]
        edges = [lo + width * (i + 1) for i in range(k)]
        edges[-1] = hi
        histo = pb.HistogramProto(min=lo, max=hi, num=float(n), sum=total, sum_squares=sq,
                                  bucket_limit=edges, bucket=[float(c) for c in counts])
    value = pb.Summary.Value(tag=name, histo=histo)
    if description:
        value.metadata.summary_description = description
    writer._add(pb.Summary(value=[value]), step)
    return True


def image(name, data, step=None, max_outputs=3, description=None) -> bool:
    """Write up to ``max_outputs`` images from ``data`` of shape (k, h, w, c), c in {1, 3, 4}.

    Floats are taken in [0, 1], uint8 in [0, 255].  One image is written under ``name``;
    several under ``name/image/0``, ``name/image/1``...  PNG encoding needs Pillow.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> with tf.summary.create_file_writer(tempfile.mkdtemp()).as_default(step=0):
    ...     tf.summary.image("digit", tf.zeros([1, 8, 8, 1]))
    True
    """
    writer, step = _target(step)
    if writer is None:
        return False
    t = _host(data)
    if len(t.shape) != 4 or t.shape[-1] not in (1, 3, 4):
        raise InvalidArgumentError(f"summary image {name!r} needs shape (k, h, w, c) with c in 1, 3, 4; "
                                   f"got {tuple(t.shape)}", "WriteImageSummary")
    if t.dtype is not _dt.uint8:
        t = K.cast(K.clip_by_value(K.cast(t, _dt.float32), 0.0, 1.0) * 255.0 + 0.5, _dt.uint8)
    arr = np.asarray(t)
    _, pb, _, _ = _tbx()
    k = min(int(max_outputs), arr.shape[0])
    values = []
    for i in range(k):
        tag = name if k == 1 else f"{name}/image/{i}"
        values.append(pb.Summary.Value(tag=tag, image=_png(pb, arr[i])))
    writer._add(pb.Summary(value=values), step)
    return True


def _png(pb, img):
    """A Summary.Image holding ``img`` (h, w, c uint8) encoded as PNG."""
    import io

    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"tf.summary.image encodes PNG with Pillow, which is not installed: "
                          f"pip install 'tapeflow-nn[summary]' ({e})") from None
    h, w, c = img.shape
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(img[..., 0] if c == 1 else img)).save(buf, format="PNG")
    return pb.Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue())


def text(name, data, step=None, description=None) -> bool:
    """Write a string (TensorBoard's text plugin) under ``name``.

    >>> import tempfile
    >>> import tapeflow as tf
    >>> with tf.summary.create_file_writer(tempfile.mkdtemp()).as_default(step=0):
    ...     tf.summary.text("note", "hello")
    True
    """
    writer, step = _target(step)
    if writer is None:
        return False
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    if not isinstance(data, str):
        raise InvalidArgumentError(f"summary text {name!r} needs a string, got {type(data).__name__}",
                                   "WriteTextSummary")
    _, pb, tpb, spb = _tbx()
    from tensorboardX.proto.plugin_text_pb2 import TextPluginData

    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    if description:
        meta.summary_description = description
    tensor = tpb.TensorProto(dtype="DT_STRING", string_val=[data.encode("utf-8")],
                             tensor_shape=spb.TensorShapeProto(dim=[]))
    writer._add(pb.Summary(value=[pb.Summary.Value(tag=name, metadata=meta, tensor=tensor)]), step)
    return True


def flush(writer=None, name=None):
    """Flush ``writer`` (default: the default writer)."""
    w = writer if writer is not None else (_DEFAULT[-1] if _DEFAULT else None)
    if w is not None:
        w.flush()


@contextlib.contextmanager
def record_if(condition):
    """Record summaries inside the block only if ``condition`` (a bool or a function returning one) holds.

    >>> import tapeflow as tf
    >>> with tf.summary.record_if(False):
    ...     tf.summary.should_record_summaries()
    False
    """
    old = _RECORD[0]
    _RECORD[0] = bool(condition() if callable(condition) else condition)
    try:
        yield
    finally:
        _RECORD[0] = old


def should_record_summaries() -> bool:
    """Whether a summary call now would be written (a default writer is set and recording is on)."""
    return bool(_DEFAULT) and isinstance(_DEFAULT[-1], SummaryWriter) and _RECORD[0]


class experimental:
    """``tf.summary.experimental``: the default step.

    >>> import tapeflow as tf
    >>> tf.summary.experimental.set_step(5)
    >>> tf.summary.experimental.get_step()
    5
    >>> tf.summary.experimental.set_step(None)
    """

    @staticmethod
    def set_step(step):
        _STEP[0] = step

    @staticmethod
    def get_step():
        return _STEP[0]


__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "scalar", "histogram", "image", "text",
           "flush", "record_if", "should_record_summaries", "experimental"]
