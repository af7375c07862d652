"""Specs of the complex ops (tf.complex, tf.math.real/imag/conj/angle) and tf.signal (core's complex_ops and
fft_ops), against NumPy's FFT (the reference only: tapeflow's transforms are csrc/fft.c).

Complex tensors enter and leave through real ones: each spec builds its complex input with tf.complex from two
real arrays and returns the real and imaginary parts of the result, so the differential and gradient walks
(which sample real dtypes) check the complex paths and their gradients too."""
from __future__ import annotations

import numpy as np
from opspec import FLOATS, Spec, uniform

# lengths with every kind of plan: 1, powers of 2 and 4, radix 3 and 5 mixes, primes (Bluestein), 0
LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 15, 16, 30, 31, 45, 64, 97)


def _pair(rng, shape, dtype):
    return uniform(rng, shape, dtype), uniform(rng, shape, dtype)


def _parts(tf, y):
    return [tf.math.real(y), tf.math.imag(y)]


def _np_parts(y):
    return [np.real(y), np.imag(y)]


def _cast_like(ref, x):
    return [np.asarray(r).astype(x.dtype) for r in ref]


# ---- complex, real, imag, conj, angle -------------------------------------------------------

def _ew_sample(rng, dtype):
    return [(_pair(rng, s, dtype), {}) for s in [(), (5,), (3, 4), (2, 1, 3), (0,), (3, 0)]]


def _complex_bcast_sample(rng, dtype):
    return _ew_sample(rng, dtype) + [((uniform(rng, (3, 4), dtype), uniform(rng, (4,), dtype)), {}),
                                     ((uniform(rng, (), dtype), uniform(rng, (2, 3), dtype)), {})]


def _run_complex(tf, re, im):
    return _parts(tf, tf.complex(tf.constant(re), tf.constant(im)))


def _ref_complex(re, im):
    return _cast_like(_np_parts(re + 1j * im), re)


def _z(tf, re, im):
    return tf.complex(tf.constant(re), tf.constant(im))


SPECS = [
    Spec("complex", _ref_complex, _complex_bcast_sample, dtypes=FLOATS, fn=_run_complex),
    # real(z * z) covers the complex multiply; imag(exp(z) - z) the complex exp and subtract
    Spec("real", lambda re, im: np.real((re + 1j * im) ** 2).astype(re.dtype), _ew_sample, dtypes=FLOATS,
         fn=lambda tf, re, im: tf.math.real(_z(tf, re, im) * _z(tf, re, im)), rtol=1e-5, atol=1e-5),
    Spec("imag", lambda re, im: np.imag(np.exp(re + 1j * im) - (re + 1j * im)).astype(re.dtype), _ew_sample,
         dtypes=FLOATS, fn=lambda tf, re, im: tf.math.imag(tf.exp(_z(tf, re, im)) - _z(tf, re, im)), rtol=1e-5,
         atol=1e-5),
    # conj(z) / (|w| + 1 + w) covers conj, divide, abs and add
    Spec("conj", lambda re, im: _cast_like(_np_parts(np.conj(re + 1j * im) / (np.abs(im + 1j * re) + 1 + im + 1j * re)),
                                           re),
         _ew_sample, dtypes=FLOATS, rtol=1e-5, atol=1e-5,
         fn=lambda tf, re, im: _parts(tf, tf.math.conj(_z(tf, re, im)) / (
             tf.complex(tf.abs(_z(tf, im, re)) + 1.0, tf.zeros_like(tf.constant(re))) + _z(tf, im, re)))),
    Spec("angle", lambda re, im: np.angle(re + 1j * im).astype(re.dtype), _ew_sample, dtypes=FLOATS,
         fn=lambda tf, re, im: tf.math.angle(_z(tf, re, im)), rtol=1e-5, atol=1e-6),
]


# ---- complex transforms -----------------------------------------------------------------------

def _c2c_sample(rank):
    def sample(rng, dtype):
        if rank == 1:
            shapes = [(n,) for n in LENGTHS] + [(3, 7), (2, 3, 8), (0, 5), (4, 0)]
        elif rank == 2:
            shapes = [(1, 1), (3, 5), (4, 7), (2, 6, 9), (0, 3, 4), (2, 0, 3)]
        else:
            shapes = [(1, 1, 1), (2, 3, 5), (2, 4, 3, 7), (3, 0, 2)]
        return [(_pair(rng, s, dtype), {}) for s in shapes]
    return sample


def _c2c_ref(fn, rank):
    def ref(re, im):
        z = re.astype(np.float64) + 1j * im
        axes = tuple(range(-rank, 0))
        return _cast_like(_np_parts(fn(z, axes=axes) if z.size else z), re)
    return ref


def _c2c_run(name):
    def run(tf, re, im):
        return _parts(tf, getattr(tf.signal, name)(_z(tf, re, im)))
    return run


for _name, _fn, _rank in (("fft", np.fft.fftn, 1), ("ifft", np.fft.ifftn, 1), ("fft2d", np.fft.fftn, 2),
                          ("ifft2d", np.fft.ifftn, 2), ("fft3d", np.fft.fftn, 3), ("ifft3d", np.fft.ifftn, 3)):
    SPECS.append(Spec(_name, _c2c_ref(_fn, _rank), _c2c_sample(_rank), dtypes=FLOATS, fn=_c2c_run(_name),
                      rtol=2e-5, atol=2e-5, f64_tol=(1e-9, 1e-10)))


# ---- real transforms ------------------------------------------------------------------------------

def _rfft_sample(rank):
    def sample(rng, dtype):
        if rank == 1:
            cases = [((n,), None) for n in LENGTHS] + [((3, 8), [8]), ((3, 8), [5]), ((2, 5), [11]), ((2, 6), [1]),
                                                       ((0, 4), None), ((3, 4), [0])]
        elif rank == 2:
            cases = [((3, 5), None), ((2, 4, 6), None), ((4, 7), [3, 9]), ((2, 2, 3), [5, 2]), ((0, 2, 2), None)]
        else:
            cases = [((2, 3, 4), None), ((2, 3, 5, 7), None), ((2, 2, 3), [3, 1, 4])]
        return [((uniform(rng, s, dtype),), {} if n is None else {"fft_length": n}) for s, n in cases]
    return sample


def _rfft_ref(rank):
    def ref(x, fft_length=None):
        axes = tuple(range(-rank, 0))
        s = tuple(fft_length) if fft_length is not None else tuple(x.shape[-rank:])
        cdt = np.complex64 if x.dtype == np.float32 else np.complex128
        out_shape = x.shape[:-rank] + s[:-1] + (s[-1] // 2 + 1,)
        if 0 in x.shape or 0 in s:
            y = np.zeros(out_shape, cdt)
        else:
            y = np.fft.rfftn(x.astype(np.float64), s=s, axes=axes)
        return _cast_like(_np_parts(y), x)
    return ref


def _rfft_run(name):
    def run(tf, x, fft_length=None):
        return _parts(tf, getattr(tf.signal, name)(tf.constant(x), fft_length=fft_length))
    return run


def _irfft_sample(rank):
    def sample(rng, dtype):
        if rank == 1:
            cases = [((n // 2 + 1,), [n]) for n in LENGTHS] + [((3, 5), None), ((3, 5), [5]), ((2, 4), [12]),
                                                               ((2, 6), [4]), ((0, 3), [4])]
        elif rank == 2:
            cases = [((3, 3), [3, 4]), ((2, 4, 4), [4, 7]), ((4, 5), None), ((3, 4), [5, 3]), ((0, 2, 2), [2, 2])]
        else:
            cases = [((2, 3, 3), [2, 3, 4]), ((2, 2, 3, 4), [3, 3, 7])]
        return [(_pair(rng, s, dtype), {} if n is None else {"fft_length": n}) for s, n in cases]
    return sample


def _irfft_ref(rank):
    def ref(re, im, fft_length=None):
        axes = tuple(range(-rank, 0))
        z = re.astype(np.float64) + 1j * im
        s = tuple(fft_length) if fft_length is not None else tuple(z.shape[-rank:-1]) + (2 * (z.shape[-1] - 1),)
        out_shape = z.shape[:-rank] + s
        if 0 in z.shape or 0 in s:
            return np.zeros(out_shape, re.dtype)
        return np.fft.irfftn(z, s=s, axes=axes).astype(re.dtype)
    return ref


def _irfft_run(name):
    def run(tf, re, im, fft_length=None):
        return getattr(tf.signal, name)(_z(tf, re, im), fft_length=fft_length)
    return run


for _name, _rank in (("rfft", 1), ("rfft2d", 2), ("rfft3d", 3)):
    SPECS.append(Spec(_name, _rfft_ref(_rank), _rfft_sample(_rank), dtypes=FLOATS, fn=_rfft_run(_name),
                      rtol=2e-5, atol=2e-5, f64_tol=(1e-9, 1e-10)))
for _name, _rank in (("irfft", 1), ("irfft2d", 2), ("irfft3d", 3)):
    SPECS.append(Spec(_name, _irfft_ref(_rank), _irfft_sample(_rank), dtypes=FLOATS, fn=_irfft_run(_name),
                      rtol=2e-5, atol=2e-5, f64_tol=(1e-9, 1e-10)))


# ---- compositions ---------------------------------------------------------------------------------

def _window_sample(rng, dtype):
    return [((n,), {"periodic": p, "dtype": dtype}) for n in (0, 1, 2, 5, 8) for p in (True, False)]


def _window_ref(a0):
    def ref(n, periodic=True, dtype="float32"):
        if n == 1:
            return np.ones(1, dtype)
        k = np.arange(n)
        d = n if periodic else n - 1
        return (a0 - (1 - a0) * np.cos(2 * np.pi * k / max(d, 1))).astype(dtype)
    return ref


def _frame_sample(rng, dtype):
    x = uniform(rng, (2, 9), dtype)
    return [((x, 3, 2), {}), ((x, 4, 3), {"pad_end": True}), ((x, 9, 1), {}), ((x, 10, 1), {}),
            ((uniform(rng, (7, 2), dtype), 2, 2), {"axis": 0}), ((x, 3, 4), {"pad_end": True, "pad_value": 2})]


def _frame_ref(x, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1):
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    if pad_end:
        frames = -(-n // frame_step)
        need = max((frames - 1) * frame_step + frame_length, n)
        x = np.concatenate([x, np.full(x.shape[:-1] + (need - n,), pad_value, x.dtype)], -1)
    else:
        frames = (n - frame_length) // frame_step + 1 if n >= frame_length else 0
    out = np.stack([x[..., f * frame_step:f * frame_step + frame_length] for f in range(frames)], -2) if frames else \
        np.zeros(x.shape[:-1] + (0, frame_length), x.dtype)
    return np.moveaxis(out, (-2, -1), (axis % (x.ndim) if axis >= 0 else axis - 1, axis % x.ndim + 1)) \
        if axis not in (-1, x.ndim - 1) else out


def _ola_sample(rng, dtype):
    return [((uniform(rng, (3, 4), dtype), 2), {}), ((uniform(rng, (2, 5, 3), dtype), 3), {}),
            ((uniform(rng, (4, 2), dtype), 5), {}), ((uniform(rng, (0, 3), dtype), 1), {})]


def _ola_ref(x, step):
    frames, fl = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + ((frames - 1) * step + fl if frames else 0,), np.float64)
    for f in range(frames):
        out[..., f * step:f * step + fl] += x[..., f, :]
    return out.astype(x.dtype)


def _stft_sample(rng, dtype):
    return [((uniform(rng, (40,), dtype), 16, 8), {}), ((uniform(rng, (2, 30), dtype), 10, 4), {"fft_length": 12}),
            ((uniform(rng, (33,), dtype), 8, 5), {"pad_end": True})]


def _hann(n):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)


def _stft_ref(x, fl, fs, fft_length=None, pad_end=False):
    n = fft_length or 1 << (fl - 1).bit_length()
    frames = _frame_ref(x, fl, fs, pad_end=pad_end)
    return _cast_like(_np_parts(np.fft.rfft(frames * _hann(fl), n)), x)


def _stft_run(tf, x, fl, fs, **kw):
    return _parts(tf, tf.signal.stft(tf.constant(x), fl, fs, **kw))


def _istft_sample(rng, dtype):
    return [(_pair(rng, (5, 9), dtype) + (16, 8), {}), (_pair(rng, (2, 3, 7), dtype) + (10, 4), {"fft_length": 12}),
            (_pair(rng, (4, 3), dtype) + (6, 3), {"fft_length": 4})]


def _istft_ref(re, im, fl, fs, fft_length=None):
    n = fft_length or 1 << (fl - 1).bit_length()
    frames = np.fft.irfft(re + 1j * im, n)
    frames = frames[..., :fl] if n >= fl else np.concatenate([frames, np.zeros(frames.shape[:-1] + (fl - n,))], -1)
    return _ola_ref(frames * _hann(fl), fs).astype(re.dtype)


def _shift_sample(rng, dtype):
    return [((uniform(rng, (5,), dtype),), {}), ((uniform(rng, (4, 7), dtype),), {}),
            ((uniform(rng, (4, 7), dtype),), {"axes": 1}), ((uniform(rng, (3, 2, 5), dtype),), {"axes": [0, -1]}),
            ((uniform(rng, (0, 3), dtype),), {})]


SPECS += [
    Spec("hann_window", _window_ref(0.5), _window_sample, dtypes=FLOATS, grad=False, atol=1e-6,
         fn=lambda tf, *a, **k: tf.signal.hann_window(*a, **k)),
    Spec("hamming_window", _window_ref(0.54), _window_sample, dtypes=FLOATS, grad=False, atol=1e-6,
         fn=lambda tf, *a, **k: tf.signal.hamming_window(*a, **k)),
    Spec("frame", _frame_ref, _frame_sample, dtypes=FLOATS + ("int32",), exact=True, grad_args=(0,),
         fn=lambda tf, x, *a, **k: tf.signal.frame(tf.constant(x), *a, **k)),
    Spec("overlap_and_add", _ola_ref, _ola_sample, dtypes=FLOATS, grad_args=(0,),
         fn=lambda tf, x, *a: tf.signal.overlap_and_add(tf.constant(x), *a)),
    Spec("stft", _stft_ref, _stft_sample, dtypes=FLOATS, fn=_stft_run, rtol=1e-4, atol=1e-4, f64_tol=(1e-9, 1e-10),
         grad_args=(0,)),
    Spec("inverse_stft", _istft_ref, _istft_sample, dtypes=FLOATS, rtol=1e-4, atol=1e-5, f64_tol=(1e-9, 1e-10),
         fn=lambda tf, re, im, fl, fs, **kw: tf.signal.inverse_stft(_z(tf, re, im), fl, fs, **kw), grad_args=(0, 1)),
    Spec("fftshift", lambda x, axes=None: np.fft.fftshift(x, axes), _shift_sample, dtypes=FLOATS + ("int32",),
         exact=True, grad_args=(0,), fn=lambda tf, x, **k: tf.signal.fftshift(tf.constant(x), **k)),
    Spec("ifftshift", lambda x, axes=None: np.fft.ifftshift(x, axes), _shift_sample, dtypes=FLOATS + ("int32",),
         exact=True, grad_args=(0,), fn=lambda tf, x, **k: tf.signal.ifftshift(tf.constant(x), **k)),
]


# ---- discrete cosine transforms ---------------------------------------------------------------------

def _dct_matrix(size, kind, norm):
    """The DCT-II (kind 2) or DCT-III (kind 3) matrix without normalisation (TensorFlow's and SciPy's scaling)."""
    j, k = np.meshgrid(np.arange(size), np.arange(size))      # k: output row, j: input column
    if kind == 2:
        return 2 * np.cos(np.pi * k * (2 * j + 1) / (2 * size))
    return np.where(j == 0, 1.0, 2 * np.cos(np.pi * j * (2 * k + 1) / (2 * size)))


def _dct_ref(inverse):
    def ref(x, type=2, n=None, norm=None):
        kind = 5 - type if inverse else type
        if n is not None:
            x = x[..., :n] if x.shape[-1] >= n else np.concatenate([x, np.zeros(x.shape[:-1] + (n - x.shape[-1],),
                                                                                  x.dtype)], -1)
        size = x.shape[-1]
        if kind == 3 and norm == "ortho":
            w = np.where(np.arange(size) == 0, np.sqrt(1.0 / size), np.sqrt(2.0 / size))
            m = np.cos(np.pi * np.arange(size)[None, :] * (2 * np.arange(size)[:, None] + 1) / (2 * size)) * w[None, :]
        else:
            m = _dct_matrix(size, kind, None)
            if kind == 2 and norm == "ortho":
                m = m * np.where(np.arange(size) == 0, 0.5 / np.sqrt(size), np.sqrt(0.5 / size))[:, None]
        return (x.astype(np.float64) @ m.T).astype(x.dtype)
    return ref


def _dct_sample(rng, dtype):
    x = uniform(rng, (3, 7), dtype)
    return [((x,), {}), ((x,), {"norm": "ortho"}), ((x,), {"type": 3}), ((x,), {"type": 3, "norm": "ortho"}),
            ((x,), {"n": 5}), ((x,), {"n": 9, "type": 3}), ((uniform(rng, (1,), dtype),), {}),
            ((uniform(rng, (2, 2, 8), dtype),), {"norm": "ortho"})]


SPECS += [
    Spec("dct", _dct_ref(False), _dct_sample, dtypes=FLOATS, rtol=1e-4, atol=1e-4, f64_tol=(1e-9, 1e-10),
         fn=lambda tf, x, **k: tf.signal.dct(tf.constant(x), **k)),
    Spec("idct", _dct_ref(True), _dct_sample, dtypes=FLOATS, rtol=1e-4, atol=1e-4, f64_tol=(1e-9, 1e-10),
         fn=lambda tf, x, **k: tf.signal.idct(tf.constant(x), **k)),
]
