"""csrc/copy.c's strided copy (merged axes, an odometer per thread, short rows, fills) and conv.c's
max-pool gradient for windows that do not overlap (one write per element, channels in vector blocks),
checked bit for bit against NumPy references, through the CPU backend alone (issue 16)."""
import numpy as np
import pytest

import tapeflow.kernels as K

ELSIZE_DTYPES = {1: np.int8, 2: np.int16, 4: np.float32, 8: np.int64, 16: np.complex128}


@pytest.fixture(scope="module")
def cpu():
    return K.get_backend("cpu")


def _strided_case(cpu, rng, shape, src_str, dtype, dst_str=None, guard=3):
    """Copy the view (shape, src_str) of a random source into a guarded destination; compare with
    NumPy's view of the same bytes and check nothing outside the written elements changed."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    lo = sum(min(0, (s - 1) * st) for s, st in zip(shape, src_str) if s)
    hi = sum(max(0, (s - 1) * st) for s, st in zip(shape, src_str) if s)
    src_off = -lo + 1
    src = (rng.integers(-100, 100, src_off + hi + 2) + (1j if dtype.kind == "c" else 0)).astype(dtype)
    if dst_str is None:
        dst_str = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    dlo = sum(min(0, (s - 1) * st) for s, st in zip(shape, dst_str) if s)
    dhi = sum(max(0, (s - 1) * st) for s, st in zip(shape, dst_str) if s)
    dst_off = -dlo + guard
    dst = np.full(dst_off + dhi + 1 + guard, 77, dtype)
    want = dst.copy()
    if all(shape):
        isz = dtype.itemsize
        view = np.lib.stride_tricks.as_strided(src[src_off:], shape, [s * isz for s in src_str])
        np.lib.stride_tricks.as_strided(want[dst_off:], shape, [s * isz for s in dst_str])[...] = view
    hs, _ = cpu.from_numpy(src)
    hd, out = cpu.from_numpy(dst)
    st = cpu.strided_copy(dtype.itemsize, len(shape), list(shape), hs, src_off, list(src_str), hd, dst_off,
                          list(dst_str))
    assert st == K.OK
    np.testing.assert_array_equal(out, want, err_msg=f"shape {shape} src strides {src_str} dst {dst_str}")


def test_strided_copy_matches_numpy_for_every_element_size_and_stride_kind(cpu):
    rng = np.random.default_rng(16)
    for trial in range(400):
        el = [1, 2, 4, 8, 16][trial % 5]
        nd = int(rng.integers(1, 6))
        shape = [int(rng.choice([1, 1, 2, 3, 5, 8, 17])) for _ in range(nd)]
        if trial % 40 == 0:
            shape[int(rng.integers(0, nd))] = 0   # empty
        contig = [int(np.prod(shape[d + 1:])) for d in range(nd)]
        kind = trial % 4
        if kind == 0:     # dense (everything merges into one run)
            src = contig
        elif kind == 1:   # a transpose
            src = [contig[p] for p in rng.permutation(nd)]
        elif kind == 2:   # broadcast: some strides 0 (the last one too: a fill)
            src = [c if rng.random() < 0.5 else 0 for c in contig]
        else:             # reversed and stepped
            src = [c * int(rng.choice([-1, 2, -3])) for c in contig]
        dst = None
        if trial % 3 == 0:   # a strided destination: a padded layout, some axes reversed (never overlapping)
            padded = [d + int(rng.integers(0, 3)) for d in shape]
            dst = [int(np.prod(padded[d + 1:])) * int(rng.choice([1, -1])) for d in range(nd)]
        _strided_case(cpu, rng, shape, src, ELSIZE_DTYPES[el], dst)


@pytest.mark.parametrize("el", [1, 2, 4, 8, 16])
def test_strided_copy_rows_of_every_short_length(cpu, el):
    # contiguous rows of 1..80 elements (1..1280 bytes: the fixed-size moves and their tails), the source
    # row repeated down the middle axis (a broadcast) or stepping; and a size-1 axis between them
    rng = np.random.default_rng(el)
    for n in range(1, 81):
        _strided_case(cpu, rng, (3, 1, 5, n), (0, 999, n, 1), ELSIZE_DTYPES[el])
        _strided_case(cpu, rng, (7, n), (0, 1), ELSIZE_DTYPES[el])                    # one row, repeated
        _strided_case(cpu, rng, (2, 7, n), (n, 0, 1), ELSIZE_DTYPES[el], [7 * n + 8, n + 1, 1])
        _strided_case(cpu, rng, (2, 4, n), (4 * n + 1, n, 1), ELSIZE_DTYPES[el])


def test_strided_copy_threads_split_inside_the_middle_axis(cpu):
    # >= 32768 elements run on the threads: rows split between them mid-way through an axis, and the
    # odometer of each thread must start from its own row
    rng = np.random.default_rng(3)
    _strided_case(cpu, rng, (3, 7, 1601, 3), (0, 3, 21, 1), np.float32)          # broadcast over axes 0
    _strided_case(cpu, rng, (5, 333, 41), (1, 205, 5), np.float64)               # a transpose
    _strided_case(cpu, rng, (2, 3, 4099, 2), (-16394, 0, 2, 1), np.int16)         # reversed + repeated
    _strided_case(cpu, rng, (32, 24, 24, 16), (16, 0, 0, 1), np.float32)          # mean's gradient broadcast


def test_strided_copy_rejects_bad_arguments(cpu):
    h, _ = cpu.alloc((4,), np.float32)
    assert cpu.strided_copy(3, 1, [4], h, 0, [1], h, 0, [1]) == K.EBADARG
    assert cpu.strided_copy(4, 1, [-1], h, 0, [1], h, 0, [1]) == K.EBADSIZE
    assert cpu.strided_copy(4, 13, [1] * 13, h, 0, [1] * 13, h, 0, [1] * 13) == K.EBADSIZE


# ---- max-pool gradient, non-overlapping windows ------------------------------------------------

def _pool_geom(n, h, w, c, kh, kw, sh, sw, padding):
    if padding == "VALID":
        oh, ow, pt, pl = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
    else:
        oh, ow = -(-h // sh), -(-w // sw)
        pt = max((oh - 1) * sh + kh - h, 0) // 2
        pl = max((ow - 1) * sw + kw - w, 0) // 2
    return [n, h, w, c, kh, kw, c, oh, ow, sh, sw, 1, 1, pt, pl], (oh, ow, pt, pl)


def _max_pool_grad_ref(x, g, kh, kw, sh, sw, pt, pl):
    """dx: 0 + g at each window's maximum (the first in row-major window order; NaN never wins; a window of
    only NaN or -inf names its first element), +0.0 elsewhere; windows clipped to the input."""
    n, h, w, c = x.shape
    dx = np.zeros_like(x)
    for b in range(n):
        for i in range(g.shape[1]):
            for j in range(g.shape[2]):
                h0, w0 = max(i * sh - pt, 0), max(j * sw - pl, 0)
                h1, w1 = min(i * sh - pt + kh, h), min(j * sw - pl + kw, w)
                if h0 >= h1 or w0 >= w1:
                    continue
                for q in range(c):
                    best, at = -np.inf, (h0, w0)
                    for a in range(h0, h1):
                        for e in range(w0, w1):
                            if x[b, a, e, q] > best:
                                best, at = x[b, a, e, q], (a, e)
                    dx[b, at[0], at[1], q] += g[b, i, j, q]   # += on +0.0: the kernel's bits
    return dx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_grad_without_overlap_matches_the_reference_bit_for_bit(cpu, dtype):
    rng = np.random.default_rng(7)
    code = K.DTYPE_CODES[np.dtype(dtype).name]
    # channel counts around the vector block (8 floats, 4 doubles) and its tail; windows that tile the
    # image, leave rows/columns out (VALID), skip some (stride > window) or are clipped (SAME)
    for c in (1, 3, 4, 8, 9, 16, 17):
        for (kh, kw, sh, sw, pad, h, w) in ((2, 2, 2, 2, "VALID", 6, 4), (2, 2, 2, 2, "VALID", 7, 5),
                                            (2, 3, 3, 3, "VALID", 8, 9), (3, 3, 3, 3, "SAME", 7, 8),
                                            (1, 1, 2, 2, "VALID", 5, 5), (2, 2, 2, 2, "SAME", 5, 3)):
            x = rng.standard_normal((2, h, w, c)).astype(dtype)
            x[0, :2] = np.round(x[0, :2])   # ties
            x[1, 0, :, 0] = np.nan
            x[1, 1, :, -1] = -np.inf
            geom, (oh, ow, pt, pl) = _pool_geom(2, h, w, c, kh, kw, sh, sw, pad)
            g = rng.standard_normal((2, oh, ow, c)).astype(dtype)
            g[0, 0] = -0.0
            hx, _ = cpu.from_numpy(x)
            hg, _ = cpu.from_numpy(g)
            hd, dx = cpu.from_numpy(np.full(x.shape, 5.0, dtype))   # stale values must all be overwritten
            assert cpu.max_pool2d_grad(code, cpu.new_int64(geom), hx, hg, hd) == K.OK
            want = _max_pool_grad_ref(x, g, kh, kw, sh, sw, pt, pl)
            assert dx.tobytes() == want.tobytes(), (c, kh, kw, sh, sw, pad)
