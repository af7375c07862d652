"""tf.nn names of issue 14: l2_loss, embedding_lookup, local_response_normalization (composites over
primitives, differentiated through them) and ctc_loss (a C kernel, csrc/ctc.c).  nn_ops lists them, so
tf.nn has them."""
from __future__ import annotations

from tapeflow import kernels

from .. import dtypes as _dt
from ..dispatch import alloc, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor
from ._shape import _INDEX, _int_arg
from .array_ops import concat, pad, transpose
from .index_ops import gather
from .math_ops import _cast_raw, add, cast, maximum, minimum, multiply, pow, real_div, sqrt, square
from .reduce_ops import reduce_sum

__all__ = ["l2_loss", "embedding_lookup", "local_response_normalization", "lrn", "ctc_loss"]

F = _dt.FLOATS


def _float(x, op, what="t"):
    t = x if isinstance(x, Tensor) else to_tensor(x, op)
    if t._dtype not in F:
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: {', '.join(d.name for d in F)}", op)
    return t


@register("l2_loss", "L2Loss", kind="composite")
def l2_loss(t, name=None) -> Tensor:
    """Half the sum of the squares of ``t``: sum(t ** 2) / 2, a scalar of t's dtype.

    >>> import tapeflow as tf
    >>> tf.nn.l2_loss(tf.constant([1.0, 2.0, 3.0])).numpy().item()
    7.0
    """
    x = _float(t, "L2Loss")
    return real_div(reduce_sum(square(x)), cast(2, x._dtype))


def _number(v, op, what, positive=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, Tensor) and not v._shape:
            return v
        raise TypeError(f"{what} must be a number, got {type(v).__name__} [Op:{op}]")
    if positive and not v > 0:
        raise InvalidArgumentError(f"{what} = {v}; allowed: > 0", op)
    return float(v)


@register("embedding_lookup", "EmbeddingLookup", kind="composite")
def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of ``params`` at ``ids``: gather(params, ids), shape ids.shape + params.shape[1:].

    ``params`` may be a list of shards split by TensorFlow 2's "div" strategy (contiguous blocks of rows,
    in order); ``max_norm`` rescales each looked-up row whose L2 norm exceeds it.

    >>> import tapeflow as tf
    >>> table = tf.constant([[0.0, 0.0], [1.0, 1.0], [3.0, 4.0]])
    >>> tf.nn.embedding_lookup(table, [[2, 1]]).numpy().tolist()
    [[[3.0, 4.0], [1.0, 1.0]]]
    >>> tf.nn.embedding_lookup(table, [2], max_norm=1.0).numpy().tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    op = "EmbeddingLookup"
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not shards:
        raise InvalidArgumentError("params is an empty list; allowed: a tensor or a non-empty list of shards", op)
    shards = [s if isinstance(s, Tensor) else to_tensor(s, op) for s in shards]
    idx = ids if isinstance(ids, Tensor) else to_tensor(ids, op)
    if idx._dtype not in _INDEX:
        raise InvalidArgumentError(f"ids has dtype {idx._dtype.name}; allowed: int32, int64", op)
    first = shards[0]
    for s in shards:
        if not s._shape:
            raise InvalidArgumentError("params is a scalar; allowed: rank >= 1 (rows to look up)", op)
        if s._dtype is not first._dtype or len(s._shape) != len(first._shape):
            kinds = [(t._dtype.name, len(t._shape)) for t in shards]
            raise InvalidArgumentError(f"the shards have dtypes/ranks {kinds}; allowed: one dtype and rank", op)
    if max_norm is not None:
        max_norm = _number(max_norm, op, "max_norm", positive=True)
    # TensorFlow 2 splits a table over a list of shards by its "div" strategy: contiguous blocks in order
    out = gather(first if len(shards) == 1 else concat(shards, 0), idx)
    if max_norm is not None and out._dtype.is_floating:
        axes = list(range(len(idx._shape), len(out._shape)))
        if axes:
            norm = sqrt(reduce_sum(square(out), axis=axes, keepdims=True))
            scale = minimum(to_tensor(1, op, out._dtype), real_div(to_tensor(max_norm, op, out._dtype),
                                                                   maximum(norm, to_tensor(1e-30, op, out._dtype))))
            out = multiply(out, scale)
    return out


@register("local_response_normalization", "LRN", kind="composite")
def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):
    """Each entry of a 4-D input divided by (bias + alpha * sqr_sum) ** beta, where sqr_sum sums the squares
    of the entries within ``depth_radius`` of it along the last axis (clipped at the ends).

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.constant([1.0, 2.0, 3.0]), [1, 1, 1, 3])
    >>> [round(float(v), 4) for v in tf.nn.local_response_normalization(x, depth_radius=1, alpha=0.5).numpy().ravel()]
    [0.5345, 0.7071, 1.0954]
    """
    op = "LRN"
    x = _float(input, op, "input")
    if len(x._shape) != 4:
        raise InvalidArgumentError(f"input has shape {list(x._shape)}; allowed: rank 4 ([batch, height, width, "
                                   "depth])", op)
    if isinstance(depth_radius, bool) or not isinstance(depth_radius, int):
        raise TypeError(f"depth_radius must be an int, got {type(depth_radius).__name__} [Op:{op}]")
    if depth_radius < 0:
        raise InvalidArgumentError(f"depth_radius = {depth_radius}; allowed: >= 0", op)
    b, a, e = (_number(v, op, w) for v, w in ((bias, "bias"), (alpha, "alpha"), (beta, "beta")))
    r = depth_radius
    work = cast(x, _dt.float32) if x._dtype in (_dt.float16, _dt.bfloat16) else x
    sq = pad(square(work), [[0, 0], [0, 0], [0, 0], [r, r]])
    window = None
    for i in range(2 * r + 1):  # the 2r + 1 shifted views of the padded squares
        view = sq[..., i:(i - 2 * r) or None]
        window = view if window is None else add(window, view)
    dt = work._dtype
    den = pow(add(to_tensor(b, op, dt), multiply(to_tensor(a, op, dt), window)), to_tensor(e, op, dt))
    out = real_div(work, den)
    return cast(out, x._dtype) if out._dtype is not x._dtype else out


lrn = local_response_normalization


# ---- CTC loss -------------------------------------------------------------------------------------

def _ctc_infer(labels, logits, label_len, logit_len, *, blank):
    return (logits._shape[1],), logits._dtype


def _ctc_grad_infer(labels, logits, label_len, logit_len, *, blank):
    return logits._shape, logits._dtype


def _ctc_run(dev, labels, logits, label_len, logit_len, blank, with_grad):
    """The kernel on time-major ``logits`` [T, B, C]: (loss [B], grad [T, B, C] or None)."""
    work = _cast_raw(logits, _dt.float32) if logits._dtype in (_dt.float16, _dt.bfloat16) else logits
    T, B, C = logits._shape
    L = labels._shape[1]
    if not -C <= blank < C:  # checked here when the classes were unknown at the call (traced)
        raise InvalidArgumentError(f"blank_index = {blank} is not in [{-C}, {C})", "CTCLoss")
    blank %= C
    be = dev.backend
    loss = alloc((B,), work._dtype, dev)
    grad = alloc(logits._shape, work._dtype, dev) if with_grad else None
    bad = be.new_int64([0, 0, 0])
    st = be.ctc_loss(work._dtype.code, work._h, labels._h, label_len._h, logit_len._h, T, B, C, L, blank, loss._h,
                     grad._h if grad is not None else be.ffi.NULL, bad)
    if st == kernels.ERANGE:
        b, v, what = int(bad[0]), int(bad[1]), int(bad[2])
        if what == 0:
            lab = int(labels.numpy()[b, v])
            msg = (f"labels[{b}, {v}] = {lab} is the blank class {blank}; allowed: the other classes" if lab == blank
                   else f"labels[{b}, {v}] = {lab} is not in [0, {C}) (logits has {C} classes)")
        elif what == 1:
            msg = f"label_length[{b}] = {v} is not in [0, {L}] (labels has {L} columns)"
        else:
            msg = f"logit_length[{b}] = {v} is not in [0, {T}] (logits has {T} frames)"
        raise InvalidArgumentError(msg, "CTCLoss")
    check(st, "ctc_loss")
    back = (lambda t: t) if work is logits else (lambda t: _cast_raw(t, logits._dtype))
    return back(loss), (back(grad) if grad is not None else None)


@primitive("ctc_loss", "CTCLoss", infer=_ctc_infer, dtypes=(_dt.int32,))
def _CTC(dev, labels, logits, label_len, logit_len, *, blank):
    return _ctc_run(dev, labels, logits, label_len, logit_len, blank, False)[0]


@primitive("ctc_loss_grad", "CTCLossGrad", infer=_ctc_grad_infer, dtypes=(_dt.int32,),
           internal="the gradient of ctc_loss (d loss / d logits, time-major), for its gradient rule")
def _CTC_GRAD(dev, labels, logits, label_len, logit_len, *, blank):
    return _ctc_run(dev, labels, logits, label_len, logit_len, blank, True)[1]


def _int32_vector(v, op, what, n):
    t = v if isinstance(v, Tensor) else to_tensor(v, op)
    if t._dtype not in _INDEX:
        raise InvalidArgumentError(f"{what} has dtype {t._dtype.name}; allowed: int32, int64", op)
    if len(t._shape) != 1 or (n is not None and t._shape[0] is not None and t._shape[0] != n):
        raise InvalidArgumentError(f"{what} has shape {list(t._shape)}; allowed: [batch] = [{n}]", op)
    return cast(t, _dt.int32) if t._dtype is not _dt.int32 else t


@register("ctc_loss", "CTCLoss")
def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None,
             name=None):
    """The connectionist temporal classification loss of each sequence: -log p(labels | logits), summed over
    every alignment of the label sequence (with blanks) to the frames (Graves et al., 2006).

    ``labels`` [batch, max_label_length] (dense; the first label_length[b] of row b count), ``logits``
    [frames, batch, classes] ([batch, frames, classes] with ``logits_time_major=False``), unnormalised;
    ``blank_index`` is the blank class (default 0; negative counts from the end).  The result has shape
    [batch]; an alignment that cannot exist (too few frames) gives inf.  GPU backends compute on the host
    (tapeflow.kernels.gpu_entries_host), copying the logits there and the result back.

    >>> import tapeflow as tf
    >>> logits = tf.zeros([2, 1, 3])   # two frames, uniform over blank and two symbols
    >>> round(float(tf.nn.ctc_loss([[1]], logits, label_length=[1], logit_length=[2])[0]), 4)   # -log(3 / 9)
    1.0986
    """
    op = "CTCLoss"
    if unique is not None:
        raise InvalidArgumentError("unique (ctc_unique_labels' speed-up hint) is not supported; allowed: None "
                                   "(the loss is the same)", op)
    x = _float(logits, op, "logits")
    if len(x._shape) != 3:
        raise InvalidArgumentError(f"logits has shape {list(x._shape)}; allowed: rank 3 ([frames, batch, classes] "
                                   "or, with logits_time_major=False, [batch, frames, classes])", op)
    if not isinstance(logits_time_major, bool):
        raise TypeError(f"logits_time_major must be a bool, got {type(logits_time_major).__name__} [Op:{op}]")
    if not logits_time_major:
        x = transpose(x, [1, 0, 2])
    frames, batch, classes = x._shape
    y = labels if isinstance(labels, Tensor) else to_tensor(labels, op)
    if y._dtype not in _INDEX:
        raise InvalidArgumentError(f"labels has dtype {y._dtype.name}; allowed: int32, int64 (dense labels)", op)
    if len(y._shape) != 2 or (batch is not None and y._shape[0] is not None and y._shape[0] != batch):
        raise InvalidArgumentError(f"labels has shape {list(y._shape)}; allowed: [batch, max_label_length] with "
                                   f"batch = {batch}", op)
    y = cast(y, _dt.int32) if y._dtype is not _dt.int32 else y
    if label_length is None:
        raise InvalidArgumentError("label_length is None; allowed: a [batch] vector (dense labels need it)", op)
    lab_len = _int32_vector(label_length, op, "label_length", batch)
    log_len = _int32_vector(logit_length, op, "logit_length", batch)
    if blank_index is None:
        blank = 0
    else:
        blank = _int_arg(blank_index, op, "blank_index")
        if classes is not None:  # else checked when the graph runs
            if not -classes <= blank < classes:
                raise InvalidArgumentError(f"blank_index = {blank} is not in [{-classes}, {classes})", op)
            blank %= classes
    return run(_CTC, (y, x, lab_len, log_len), {"blank": blank})
