"""tf.signal: fast Fourier transforms (``csrc/fft.c``: mixed radix 2/3/4/5, Bluestein for other lengths)
and the short-time Fourier transform built on them.

``fft``/``ifft`` (and the 2-D and 3-D versions) transform the innermost 1, 2 or 3 axes of a complex
tensor; ``ifft`` divides by the number of points, as TensorFlow's does.  ``rfft`` takes a real tensor
and keeps the ``fft_length // 2 + 1`` non-negative frequencies of the innermost axis; ``irfft`` is its
inverse (the imaginary parts of the zero and, for an even length, the Nyquist frequency are ignored).
``fft_length`` crops or zero-pads the input first, as in TensorFlow.  ``frame``, ``overlap_and_add``,
``hann_window``, ``hamming_window``, ``stft``, ``inverse_stft``, ``fftshift`` and ``ifftshift`` are
compositions of other ops.

>>> import tapeflow as tf
>>> tf.signal.fft(tf.constant([1 + 0j, 1, 1, 1])).numpy().tolist()
[(4+0j), 0j, 0j, 0j]
>>> tf.signal.irfft(tf.signal.rfft(tf.constant([1.0, 2.0, 3.0])), fft_length=[3]).numpy().round(5).tolist()
[1.0, 2.0, 3.0]
"""
from __future__ import annotations

import math as _math

from .. import dtypes as _dt
from ..dispatch import dtype_arg, int_arg, int_list, register, to_tensor
from ..errors import InvalidArgumentError
from ..runner import check, primitive, run
from ..tensor import Tensor, make
from ._shape import _prod

C = _dt.COMPLEX
R = (_dt.float32, _dt.float64)
_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}
_REAL_OF = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}
_SUFFIX = {1: "", 2: "2D", 3: "3D"}
_NAME = {1: "", 2: "2d", 3: "3d"}


def _tensor(x, op):
    return x if type(x) is Tensor else to_tensor(x, op)


def _axes_view(shape, axis):
    """(outer, n, inner) of ``shape`` around ``axis``."""
    return _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1:])


def _c2c(dev, x, rank, inverse):
    """The complex transform of ``x``'s innermost ``rank`` axes (one kernel call per axis)."""
    be = dev.backend
    shape, nd = x._shape, len(x._shape)
    cur = x
    for axis in range(nd - 1, nd - 1 - rank, -1):
        outer, n, inner = _axes_view(shape, axis)
        h, host = be.alloc(shape, x._dtype.np)
        check(be.fft(x._dtype.code, int(inverse), outer, n, inner, cur._h, h), "fft")
        cur = make(h, host, shape, x._dtype, dev, x._size)
    if cur is x:  # a size-0 tensor: no axis ran
        h, host = be.alloc(shape, x._dtype.np)
        cur = make(h, host, shape, x._dtype, dev, x._size)
    return cur


def _check_rank(x, rank, op):
    if len(x._shape) < rank:
        raise InvalidArgumentError(f"input must have rank >= {rank} (the transformed axes), got shape "
                                   f"{tuple(x._shape)}", op)


def _c2c_primitive(rank, inverse):
    name = f"{'i' if inverse else ''}fft{_NAME[rank]}"
    tf_name = f"{'I' if inverse else ''}FFT{_SUFFIX[rank]}"

    @primitive(name, tf_name, infer=lambda x: (x._shape, x._dtype), dtypes=C)
    def impl(dev, x):
        return _c2c(dev, x, rank, inverse)

    def op(input, name=None):
        x = _tensor(input, tf_name)
        if not x._dtype.is_complex:
            raise InvalidArgumentError(f"{tf_name} does not support {x._dtype.name}; allowed: complex64, "
                                       "complex128 (tf.cast a real tensor, or use rfft)", tf_name)
        _check_rank(x, rank, tf_name)
        return run(impl, (x,))

    axes = {1: "innermost axis", 2: "innermost 2 axes", 3: "innermost 3 axes"}[rank]
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"The {'inverse ' if inverse else ''}discrete Fourier transform over the {axes} of a complex "
                  f"tensor{' (divided by the number of points)' if inverse else ''}.\n\n"
                  f"    out[k] = {'1/n ' if inverse else ''}sum_j x[j] exp({'+' if inverse else '-'}2 pi i j k / n)"
                  f"{' along each axis' if rank > 1 else ''}\n\n"
                  f"    >>> import tapeflow as tf\n"
                  f"    >>> tf.signal.{name}(tf.ones([{', '.join(['2'] * rank)}], tf.complex64)).numpy().real"
                  f".ravel().tolist()\n"
                  f"    {[float(2 ** rank) if not inverse else 1.0] + [0.0] * (2 ** rank - 1)}\n")
    register(name, tf_name)(op)
    return impl, op


(_FFT, fft), (_IFFT, ifft) = _c2c_primitive(1, False), _c2c_primitive(1, True)
(_FFT2D, fft2d), (_IFFT2D, ifft2d) = _c2c_primitive(2, False), _c2c_primitive(2, True)
(_FFT3D, fft3d), (_IFFT3D, ifft3d) = _c2c_primitive(3, False), _c2c_primitive(3, True)
C2C = {(1, False): fft, (1, True): ifft, (2, False): fft2d, (2, True): ifft2d, (3, False): fft3d, (3, True): ifft3d}


# ---- real transforms ----------------------------------------------------------

def _fit(x, sizes, op):
    """``x`` cropped or zero-padded so its innermost axes have ``sizes`` (recorded: slicing and pad)."""
    from .array_ops import pad

    shape = x._shape
    k = len(sizes)
    cur = tuple(shape[-k:])
    if cur == tuple(sizes):
        return x
    if any(c is None for c in cur):
        raise InvalidArgumentError(f"the transformed axes must be known to crop or pad them, got shape "
                                   f"{tuple(shape)}", op)
    if any(c > s for c, s in zip(cur, sizes)):
        idx = (Ellipsis,) + tuple(slice(0, min(c, s)) for c, s in zip(cur, sizes))
        x = x[idx]
        cur = tuple(min(c, s) for c, s in zip(cur, sizes))
    if any(c < s for c, s in zip(cur, sizes)):
        x = pad(x, [[0, 0]] * (len(shape) - k) + [[0, s - c] for c, s in zip(cur, sizes)])
    return x


def _fft_length(fft_length, x, rank, op, inverse):
    if fft_length is None:
        if any(d is None for d in x._shape[-rank:]):
            raise InvalidArgumentError(f"fft_length is needed when the transformed axes are unknown, got shape "
                                       f"{tuple(x._shape)}", op)
        dims = list(x._shape[-rank:])
        if inverse:
            dims[-1] = 2 * (dims[-1] - 1)
        return tuple(dims)
    if isinstance(fft_length, Tensor):
        from ..dispatch import static_value

        fft_length = static_value(fft_length, op, "fft_length").tolist()
    lengths = int_list(fft_length, op, "fft_length", scalar_ok=False)
    if len(lengths) != rank:
        raise InvalidArgumentError(f"fft_length must have {rank} element{'s' if rank > 1 else ''}, got "
                                   f"{list(lengths)}", op)
    if any(n < 0 for n in lengths):
        raise InvalidArgumentError(f"fft_length must be >= 0, got {list(lengths)}", op)
    return lengths


def _rfft_infer(x, *, fft_length):
    shape = tuple(x._shape[:-1]) + (fft_length[-1] // 2 + 1,)
    return shape, _COMPLEX_OF.get(x._dtype, _dt.complex64)


def _irfft_infer(x, *, fft_length):
    return tuple(x._shape[:-1]) + (fft_length[-1],), _REAL_OF.get(x._dtype, _dt.float32)


def _rfft_impl(dev, x, fft_length):
    be = dev.backend
    n = fft_length[-1]
    cdt = _COMPLEX_OF[x._dtype]
    shape = tuple(x._shape[:-1]) + (n // 2 + 1,)
    h, host = be.alloc(shape, cdt.np)
    size = _prod(shape)
    out = make(h, host, shape, cdt, dev, size)
    if n == 0 or size == 0:
        if size:
            check(be.fill(cdt.size, bytes(cdt.size), h, size), "fill")
        return out
    check(be.rfft(x._dtype.code, x._size // n, n, 1, x._h, h), "rfft")
    return _c2c_axes(dev, out, len(fft_length) - 1, False)


def _c2c_axes(dev, x, k, inverse):
    """The complex transform of the ``k`` axes before the innermost one."""
    be = dev.backend
    shape, nd = x._shape, len(x._shape)
    cur = x
    for axis in range(nd - 2, nd - 2 - k, -1):
        outer, n, inner = _axes_view(shape, axis)
        h, host = be.alloc(shape, x._dtype.np)
        check(be.fft(x._dtype.code, int(inverse), outer, n, inner, cur._h, h), "fft")
        cur = make(h, host, shape, x._dtype, dev, x._size)
    return cur


def _irfft_impl(dev, x, fft_length):
    be = dev.backend
    n = fft_length[-1]
    rdt = _REAL_OF[x._dtype]
    shape = tuple(x._shape[:-1]) + (n,)
    size = _prod(shape)
    h, host = be.alloc(shape, rdt.np)
    out = make(h, host, shape, rdt, dev, size)
    if size == 0:
        return out
    src = _c2c_axes(dev, x, len(fft_length) - 1, True)
    check(be.irfft(rdt.code, size // n, n, 1, src._h, h), "irfft")
    return out


def _real_primitive(rank, inverse):
    name = f"{'i' if inverse else ''}rfft{_NAME[rank]}"
    tf_name = f"{'I' if inverse else ''}RFFT{_SUFFIX[rank]}"

    if inverse:
        @primitive(name, tf_name, infer=_irfft_infer, dtypes=C)
        def impl(dev, x, *, fft_length):
            return _irfft_impl(dev, x, fft_length)
    else:
        @primitive(name, tf_name, infer=_rfft_infer, dtypes=R)
        def impl(dev, x, *, fft_length):
            return _rfft_impl(dev, x, fft_length)

    def op(input_tensor, fft_length=None, name=None):
        x = _tensor(input_tensor, tf_name)
        ok = x._dtype.is_complex if inverse else x._dtype in R
        if not ok:
            allowed = "complex64, complex128" if inverse else "float32, float64"
            raise InvalidArgumentError(f"{tf_name} does not support {x._dtype.name}; allowed: {allowed}", tf_name)
        _check_rank(x, rank, tf_name)
        lengths = _fft_length(fft_length, x, rank, tf_name, inverse)
        fit = list(lengths)
        if inverse:
            fit[-1] = lengths[-1] // 2 + 1
        x = _fit(x, fit, tf_name)
        return run(impl, (x,), {"fft_length": tuple(lengths)})

    kind = "real" if not inverse else "Hermitian"
    op.__name__ = op.__qualname__ = name
    if inverse:
        doc = (f"The inverse of rfft{_NAME[rank]}: a real signal of ``fft_length`` points from the non-negative "
               f"frequencies of the innermost axis{' (and all frequencies of the others)' if rank > 1 else ''}.\n\n"
               f"    out[j] = 1/n sum_k X[k] exp(+2 pi i j k / n), X Hermitian (X[n - k] = conj(X[k]))\n\n"
               f"    >>> import tapeflow as tf\n"
               f"    >>> tf.signal.{name}(tf.signal.rfft{_NAME[rank]}(tf.ones([{', '.join(['2'] * rank)}])))"
               f".numpy().ravel().tolist()\n"
               f"    {[1.0] * 2 ** rank}\n")
    else:
        doc = (f"The discrete Fourier transform of a {kind} signal over its innermost {rank} ax"
               f"{'is' if rank == 1 else 'es'}: the ``fft_length[-1] // 2 + 1`` non-negative frequencies of the "
               f"innermost axis.\n\n"
               f"    out[k] = sum_j x[j] exp(-2 pi i j k / n), k <= n / 2\n\n"
               f"    >>> import tapeflow as tf\n"
               f"    >>> tf.signal.{name}(tf.ones([{', '.join(['2'] * rank)}])).numpy().real.ravel().tolist()\n"
               f"    {[float(2 ** rank)] + [0.0] * (2 ** rank - 1)}\n")
    op.__doc__ = doc
    register(name, tf_name)(op)
    return impl, op


(_RFFT, rfft), (_IRFFT, irfft) = _real_primitive(1, False), _real_primitive(1, True)
(_RFFT2D, rfft2d), (_IRFFT2D, irfft2d) = _real_primitive(2, False), _real_primitive(2, True)
(_RFFT3D, rfft3d), (_IRFFT3D, irfft3d) = _real_primitive(3, False), _real_primitive(3, True)
RFFTS = {(1, False): rfft, (1, True): irfft, (2, False): rfft2d, (2, True): irfft2d, (3, False): rfft3d,
         (3, True): irfft3d}


# ---- compositions -------------------------------------------------------------

def _window(name, tf_name, a0, window_length, periodic, dtype):
    from .array_ops import range_
    from .math_ops import cast, cos, multiply, subtract

    n = int_arg(window_length, tf_name, "window_length")
    if n < 0:
        raise InvalidArgumentError(f"window_length must be >= 0, got {n}", tf_name)
    dtype = dtype_arg(dtype, tf_name)
    if not dtype.is_floating:
        raise InvalidArgumentError(f"dtype must be a floating dtype, got {dtype.name}; allowed: float16, bfloat16, "
                                   "float32, float64", tf_name)
    if not isinstance(periodic, (bool, int)) and not hasattr(periodic, "dtype"):
        raise TypeError(f"periodic must be a bool, got {type(periodic).__name__} [Op:{tf_name}]")
    if n == 1:
        from .array_ops import ones

        return ones([1], dtype)
    denom = n if periodic else n - 1
    k = cast(range_(n), _dt.float64)
    w = subtract(a0, multiply(cos(multiply(k, 2.0 * _math.pi / max(denom, 1))), 1.0 - a0))
    return cast(w, dtype)


@register("hann_window", "HannWindow", kind="composite")
def hann_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """The Hann window 0.5 - 0.5 cos(2 pi k / N), N = window_length (periodic) or window_length - 1.

    >>> import tapeflow as tf
    >>> tf.signal.hann_window(4).numpy().tolist()
    [0.0, 0.5, 1.0, 0.5]
    """
    return _window("hann_window", "HannWindow", 0.5, window_length, periodic, dtype)


@register("hamming_window", "HammingWindow", kind="composite")
def hamming_window(window_length, periodic=True, dtype=_dt.float32, name=None):
    """The Hamming window 0.54 - 0.46 cos(2 pi k / N), N = window_length (periodic) or window_length - 1.

    >>> import tapeflow as tf
    >>> tf.signal.hamming_window(4, dtype=tf.float64).numpy().round(4).tolist()
    [0.08, 0.54, 1.0, 0.54]
    """
    return _window("hamming_window", "HammingWindow", 0.54, window_length, periodic, dtype)


@register("frame", "Frame", kind="composite")
def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Overlapping frames of ``frame_length`` samples every ``frame_step`` samples along ``axis``: that axis
    becomes two, [frames, frame_length]; with ``pad_end`` the last frames run past the end into ``pad_value``.

    >>> import tapeflow as tf
    >>> tf.signal.frame(tf.range(5), 2, 2).numpy().tolist()
    [[0, 1], [2, 3]]
    """
    from .array_ops import pad, reshape
    from .array_ops import range_ as arange
    from .index_ops import gather
    from .math_ops import add

    op = "Frame"
    x = _tensor(signal, op)
    fl = int_arg(frame_length, op, "frame_length")
    fs = int_arg(frame_step, op, "frame_step")
    ax = int_arg(axis, op, "axis")
    r = len(x._shape)
    if r == 0 or not -r <= ax < r:
        raise InvalidArgumentError(f"axis = {ax} is not in [{-r}, {r}) for shape {tuple(x._shape)}", op)
    if fl <= 0 or fs <= 0:
        raise InvalidArgumentError(f"frame_length and frame_step must be > 0, got {fl} and {fs}", op)
    ax %= r
    n = x._shape[ax]
    if n is None:
        raise InvalidArgumentError("the framed axis must be known", op)
    if pad_end:
        frames = -(-n // fs) if n else 0
        need = max((frames - 1) * fs + fl, n) if frames else n
        if need > n:
            x = pad(x, [[0, 0]] * ax + [[0, need - n]] + [[0, 0]] * (r - ax - 1), constant_values=pad_value)
    else:
        frames = max(0, (n - fl) // fs + 1) if n >= fl else 0
    idx = add(reshape(arange(frames) * fs, [frames, 1]), reshape(arange(fl), [1, fl]))
    return gather(x, idx, axis=ax)


@register("overlap_and_add", "OverlapAndAdd", kind="composite")
def overlap_and_add(signal, frame_step, name=None):
    """The frames of ``signal`` [..., frames, frame_length] added back at every ``frame_step`` samples:
    [..., (frames - 1) * frame_step + frame_length].

    >>> import tapeflow as tf
    >>> tf.signal.overlap_and_add(tf.ones([3, 2]), 1).numpy().tolist()
    [1.0, 2.0, 2.0, 1.0]
    """
    from .array_ops import reshape, transpose
    from .array_ops import range_ as arange
    from .index_ops import unsorted_segment_sum
    from .math_ops import add

    op = "OverlapAndAdd"
    x = _tensor(signal, op)
    fs = int_arg(frame_step, op, "frame_step")
    r = len(x._shape)
    if r < 2:
        raise InvalidArgumentError(f"signal must have rank >= 2 ([..., frames, frame_length]), got shape "
                                   f"{tuple(x._shape)}", op)
    if fs <= 0:
        raise InvalidArgumentError(f"frame_step must be > 0, got {fs}", op)
    frames, fl = x._shape[-2], x._shape[-1]
    if frames is None or fl is None:
        raise InvalidArgumentError("the frames and frame_length axes must be known", op)
    out_len = (frames - 1) * fs + fl if frames else 0
    lead = tuple(x._shape[:-2])
    ids = reshape(add(reshape(arange(frames) * fs, [frames, 1]), reshape(arange(fl), [1, fl])), [frames * fl])
    if None in lead:
        raise InvalidArgumentError(f"the leading axes must be known, got shape {tuple(x._shape)}", op)
    flat = reshape(x, (_prod(lead), frames * fl))             # [batch, frames * fl]
    summed = unsorted_segment_sum(transpose(flat), ids, out_len)   # [out_len, batch]
    return reshape(transpose(summed), lead + (out_len,))


def _default_fft_length(frame_length):
    return 1 << max(0, (frame_length - 1).bit_length())


@register("stft", "Stft", kind="composite")
def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """The short-time Fourier transform: ``rfft`` of each windowed frame of the real ``signals``
    [..., samples] -> [..., frames, fft_length // 2 + 1] (fft_length: the power of 2 >= frame_length by default).

    >>> import tapeflow as tf
    >>> tf.signal.stft(tf.ones([8]), frame_length=4, frame_step=4, window_fn=None).shape
    TensorShape([2, 3])
    """
    from .math_ops import multiply

    op = "Stft"
    x = _tensor(signals, op)
    if x._dtype not in R:
        raise InvalidArgumentError(f"signals must be float32 or float64, got {x._dtype.name}; allowed: float32, "
                                   "float64", op)
    fl = int_arg(frame_length, op, "frame_length")
    n = _default_fft_length(fl) if fft_length is None else int_arg(fft_length, op, "fft_length")
    frames = frame(x, fl, frame_step, pad_end=pad_end, axis=-1)
    if window_fn is not None:
        frames = multiply(frames, window_fn(fl, dtype=x._dtype))
    return rfft(frames, [n])


@register("inverse_stft", "InverseStft", kind="composite")
def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None):
    """The inverse of ``stft``: ``irfft`` of each frame, cut to ``frame_length``, windowed and overlap-added
    (with ``window_fn=tf.signal.inverse_stft_window_fn(frame_step)`` the round trip is exact).

    >>> import tapeflow as tf
    >>> s = tf.signal.stft(tf.ones([8]), 4, 4, window_fn=None)
    >>> tf.signal.inverse_stft(s, 4, 4, window_fn=None).numpy().round(5).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    from .array_ops import pad
    from .math_ops import multiply

    op = "InverseStft"
    x = _tensor(stfts, op)
    if not x._dtype.is_complex:
        raise InvalidArgumentError(f"stfts must be complex64 or complex128, got {x._dtype.name}; allowed: "
                                   "complex64, complex128", op)
    fl = int_arg(frame_length, op, "frame_length")
    n = _default_fft_length(fl) if fft_length is None else int_arg(fft_length, op, "fft_length")
    real_frames = irfft(x, [n])
    if n > fl:
        real_frames = real_frames[..., :fl]
    elif n < fl:
        real_frames = pad(real_frames, [[0, 0]] * (len(real_frames._shape) - 1) + [[0, fl - n]])
    if window_fn is not None:
        real_frames = multiply(real_frames, window_fn(fl, dtype=real_frames._dtype))
    return overlap_and_add(real_frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """The window function for ``inverse_stft`` that undoes ``stft`` with ``forward_window_fn`` (the forward
    window divided by the overlapped sum of its squares).

    >>> import tapeflow as tf
    >>> x = tf.random.stateless_normal([64], seed=[1, 2])
    >>> s = tf.signal.stft(x, 16, 4)
    >>> y = tf.signal.inverse_stft(s, 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
    >>> bool(tf.reduce_max(tf.abs(y[12:-12] - x[12:-12])) < 1e-5)
    True
    """
    from .array_ops import reshape, tile
    from .math_ops import real_div, square
    from .reduce_ops import reduce_sum

    def fn(frame_length, dtype):
        w = forward_window_fn(frame_length, dtype=dtype)
        step = int_arg(frame_step, "InverseStftWindowFn", "frame_step")
        denom = square(w)
        reps = -(-frame_length // step)
        denom = _pad_to(denom, reps * step)
        denom = reduce_sum(reshape(denom, [reps, step]), 0, keepdims=True)
        denom = reshape(tile(denom, [reps, 1]), [reps * step])[:frame_length]
        return real_div(w, denom)
    return fn


def _pad_to(x, n):
    from .array_ops import pad

    return x if x._shape[0] == n else pad(x, [[0, n - x._shape[0]]])


def _shift(x, axes, inverse, op):
    from .array_ops import concat

    x = _tensor(x, op)
    r = len(x._shape)
    axes = tuple(range(r)) if axes is None else int_list(axes, op, "axes")
    for a in axes:
        if not -r <= a < r:
            raise InvalidArgumentError(f"axis = {a} is not in [{-r}, {r})", op)
        a %= r
        n = x._shape[a]
        if n is None:
            raise InvalidArgumentError("the shifted axes must be known", op)
        if n <= 1:
            continue
        cut = n // 2 if inverse else n - n // 2
        pre = (slice(None),) * a
        x = concat([x[pre + (slice(cut, None),)], x[pre + (slice(0, cut),)]], axis=a)
    return x


@register("fftshift", "FftShift", kind="composite")
def fftshift(x, axes=None, name=None):
    """The zero frequency moved to the centre: a roll by n // 2 along each of ``axes`` (all by default).

    >>> import tapeflow as tf
    >>> tf.signal.fftshift(tf.constant([0, 1, 2, -2, -1])).numpy().tolist()
    [-2, -1, 0, 1, 2]
    """
    return _shift(x, axes, False, "FftShift")


@register("ifftshift", "IfftShift", kind="composite")
def ifftshift(x, axes=None, name=None):
    """The inverse of fftshift: a roll by -(n // 2) along each of ``axes`` (all by default).

    >>> import tapeflow as tf
    >>> tf.signal.ifftshift(tf.constant([-2, -1, 0, 1, 2])).numpy().tolist()
    [0, 1, 2, -2, -1]
    """
    return _shift(x, axes, True, "IfftShift")


@register("dct", "Dct", kind="composite")
def dct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The discrete cosine transform of type 2 or 3 of the innermost axis, through an rfft of twice the length
    (as TensorFlow computes it).  Type 2: y[k] = 2 sum_j x[j] cos(pi k (2j + 1) / (2N)); type 3 (type 2's inverse up
    to 2N): y[k] = x[0] + 2 sum_{j>0} x[j] cos(pi j (2k + 1) / (2N)).  ``n`` crops or zero-pads the input first;
    ``norm="ortho"`` scales to an orthonormal transform.

    >>> import tapeflow as tf
    >>> tf.signal.dct(tf.constant([1.0, 1.0, 1.0, 1.0], tf.float64)).numpy().round(6).tolist()
    [8.0, 0.0, 0.0, 0.0]
    """
    kind = int_arg(type, "Dct", "type")
    if kind not in (2, 3):
        raise InvalidArgumentError(f"type = {kind} is not supported; allowed: 2, 3", "Dct")
    return _dct(input, kind, n, axis, norm, "Dct")


def _dct(input, kind, n, axis, norm, op):
    from .array_ops import pad, range_
    from .complex_ops import complex as make_complex
    from .complex_ops import real
    from .math_ops import cast, cos, multiply, sin

    x = _tensor(input, op)
    if int_arg(axis, op, "axis") != -1:
        raise InvalidArgumentError(f"axis = {axis}; allowed: -1 (as TensorFlow)", op)
    if norm not in (None, "ortho"):
        raise InvalidArgumentError(f"norm = {norm!r}; allowed: None, 'ortho'", op)
    if x._dtype not in R:
        raise InvalidArgumentError(f"input must be float32 or float64, got {x._dtype.name}; allowed: float32, float64",
                                   op)
    if not x._shape:
        raise InvalidArgumentError("input must have rank >= 1", op)
    if n is not None:
        n = int_arg(n, op, "n")
        if n < 1:
            raise InvalidArgumentError(f"n = {n} must be >= 1", op)
        x = _fit(x, [n], op)
    size = x._shape[-1]
    if size is None:
        raise InvalidArgumentError("the transformed axis must be known", op)
    if size == 0:
        raise InvalidArgumentError("the transformed axis must not be empty", op)
    k = cast(range_(size), x._dtype)
    ang = multiply(k, (-1.0 if kind == 2 else 1.0) * _math.pi / (2.0 * size))
    scale = make_complex(multiply(cos(ang), 2.0), multiply(sin(ang), 2.0))        # 2 exp(-+ i pi k / 2N)
    if norm == "ortho":
        first = (0.5 / _math.sqrt(size)) if kind == 2 else _math.sqrt(size)
        rest = first * _math.sqrt(2.0) if kind == 2 else first * _math.sqrt(0.5)
        from .array_ops import constant

        weights = constant([first] + [rest] * (size - 1), x._dtype)
    else:
        weights = None
    if kind == 2:
        y = real(multiply(rfft(x, [2 * size])[..., :size], scale))
        return y if weights is None else multiply(y, weights)
    x = multiply(x, weights) if weights is not None else multiply(x, float(size))
    from .array_ops import zeros_like

    spec = multiply(scale, make_complex(x, zeros_like(x)))
    spec = pad(spec, [[0, 0]] * (len(spec._shape) - 1) + [[0, 1]])
    return irfft(spec, [2 * size])[..., :size]


@register("idct", "Idct", kind="composite")
def idct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The inverse of ``dct`` of that type: dct of the inverse type (3 for 2, 2 for 3), so with ``norm="ortho"``
    ``idct(dct(x)) == x`` and without it ``idct(dct(x)) == 2N x``, as in TensorFlow.

    >>> import tapeflow as tf
    >>> x = tf.constant([1.0, 2.0, 4.0], tf.float64)
    >>> tf.signal.idct(tf.signal.dct(x, norm="ortho"), norm="ortho").numpy().round(6).tolist()
    [1.0, 2.0, 4.0]
    """
    kind = int_arg(type, "Idct", "type")
    if kind not in (2, 3):
        raise InvalidArgumentError(f"type = {kind} is not supported; allowed: 2, 3", "Idct")
    return _dct(input, 5 - kind, n, axis, norm, "Idct")


SIGNAL_API = {f.__name__: f for f in (fft, ifft, fft2d, ifft2d, fft3d, ifft3d, rfft, irfft, rfft2d, irfft2d, rfft3d,
                                      irfft3d, hann_window, hamming_window, frame, overlap_and_add, stft,
                                      inverse_stft, fftshift, ifftshift, dct, idct)}
SIGNAL_API["inverse_stft_window_fn"] = inverse_stft_window_fn

__all__: list = []   # tf.signal's names stay in tf.signal (api.py)
