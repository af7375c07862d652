"""The file cache (``Dataset.cache(filename)``): read-back equal to the first pass, and every damaged
file a DataLossError naming it (crafted here byte by byte)."""
import struct
import zlib

import ml_dtypes
import numpy as np
import pytest
import tapeflow as tf
from tapeflow.data import Dataset, TensorSpec, string

FOOTER = struct.Struct("<8sQQI")  # the format's footer: magic, element count, body length, CRC-32
PRELUDE = struct.Struct("<8s2sI")  # magic, version, header length

DTYPES = [(tf.float32, np.float32), (tf.float64, np.float64), (tf.float16, np.float16),
          (tf.bfloat16, ml_dtypes.bfloat16), (tf.int8, np.int8), (tf.uint8, np.uint8), (tf.int16, np.int16),
          (tf.int32, np.int32), (tf.int64, np.int64), (tf.bool, np.bool_)]


def host(e):
    """An element as nested Python values with dtype and shape kept (for exact comparison)."""
    if isinstance(e, tuple):
        return tuple(host(v) for v in e)
    if isinstance(e, dict):
        return {k: host(v) for k, v in e.items()}
    if isinstance(e, tf.Tensor):
        a = e.numpy()
        if e.dtype.is_string:
            return ("string", tuple(e.shape), a.tolist() if isinstance(a, np.ndarray) else a)
        return (e.dtype.name, tuple(e.shape), np.asarray(a, np.float64 if e.dtype.is_floating else a.dtype).tolist())
    if isinstance(e, np.ndarray):
        return ("string", e.shape, e.tolist())
    return ("string", (), e)


def conforms(e, spec):
    if isinstance(spec, tuple):
        return isinstance(e, tuple) and len(e) == len(spec) and all(conforms(a, s) for a, s in zip(e, spec))
    if isinstance(spec, dict):
        return isinstance(e, dict) and set(e) == set(spec) and all(conforms(e[k], spec[k]) for k in spec)
    return spec.is_compatible_with(TensorSpec.from_value(e))


def every_dtype_and_rank():
    comps = {}
    for dt, npd in DTYPES:
        base = np.arange(5 * 2 * 3).reshape(5, 2, 3) % 3
        arr = (base > 0) if npd is np.bool_ else base.astype(npd)
        comps[dt.name] = (tf.constant(arr[:, 0, 0], dt), tf.constant(arr[:, 0], dt), tf.constant(arr, dt),
                          tf.constant(np.zeros((5, 0, 2), npd), dt))
    return Dataset.from_tensor_slices(comps)


def unknown_shapes():
    def gen():
        for i in range(4):
            yield np.arange(i, dtype=np.float32), ["a" * i] * (i % 2), b"x" * i
    sig = (TensorSpec(None, tf.float32), TensorSpec([None], string), TensorSpec([], string))
    return Dataset.from_generator(gen, output_signature=sig)


PIPELINES = {
    "issue_scalar_map": lambda: Dataset.range(4).map(lambda v: v * 3),
    "every_dtype_and_rank": every_dtype_and_rank,
    "nested": lambda: Dataset.from_tensor_slices(
        {"x": np.arange(12, dtype=np.float32).reshape(6, 2), "y": (np.arange(6), np.arange(6) > 2)}).map(
        lambda e: {"x": e["x"] * 2.0, "y": (e["y"][0], e["y"][1]), "z": tf.constant(1.5, tf.float16)}),
    "batch_remainder": lambda: Dataset.range(7).map(lambda v: (v, tf.fill([2], v))).batch(3),
    "text": lambda: Dataset.from_tensor_slices((["x", "yy", "", "zzz"], [[1.0], [2.0], [3.0], [4.0]])).batch(3),
    "unknown_shapes": unknown_shapes,
    "empty": lambda: Dataset.range(0).map(lambda v: (v, tf.cast(v, tf.bfloat16))),
    "size0_elements": lambda: Dataset.range(3).map(lambda v: tf.zeros([v, 0])),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_second_pass_reads_back_the_first(tmp_path, name):
    prefix = str(tmp_path / "c")
    ds = PIPELINES[name]().cache(prefix)
    first = list(ds)
    assert (tmp_path / "c.tpfcache").exists()
    second = list(ds)
    third = list(PIPELINES[name]().cache(prefix))  # another dataset object reading the same file
    assert [host(e) for e in second] == [host(e) for e in first] == [host(e) for e in third]
    assert all(conforms(e, ds.element_spec) for e in first + second)


def test_the_second_pass_comes_from_the_file(tmp_path):
    calls = []
    ds = Dataset.range(3).map(lambda v: calls.append(1) or v * 3).cache(str(tmp_path / "c"))
    _ = ds.element_spec
    before = len(calls)
    assert [int(x) for x in ds] == [0, 3, 6] and len(calls) == before + 3
    assert [tuple(x.shape) for x in ds] == [(), (), ()] and len(calls) == before + 3


# ---- damaged files ---------------------------------------------------------------------------

def sample():
    return Dataset.from_tensor_slices(({"f": np.arange(10, dtype=np.float32).reshape(5, 2)}, np.arange(5),
                                       ["a", "bb", "", "c", "dddd"]))


def write(tmp_path, name, ds):
    list(ds.cache(str(tmp_path / name)))
    return (tmp_path / f"{name}.tpfcache").read_bytes()


def reseal(data: bytes) -> bytes:
    """``data`` with its CRC recomputed: damage the checksum alone cannot see."""
    return data[:-4] + struct.pack("<I", zlib.crc32(data[:-4]))


def footer(data):
    return FOOTER.unpack_from(data, len(data) - FOOTER.size)


def boundaries(tmp_path):
    """The valid file of sample() and the byte offsets where each of its elements starts (and the footer)."""
    full = write(tmp_path, "full", sample())
    out = []
    for k in range(6):
        part = write(tmp_path, f"take{k}", sample().take(k))
        end = len(part) - FOOTER.size
        assert full[:end] == part[:end] and footer(part)[1] == k
        out.append(end)
    return full, out


def damaged_variants(full, bounds):
    hlen = PRELUDE.unpack_from(full)[2]
    head_end = PRELUDE.size + hlen
    yield "empty", b""
    for cut in (3, 9, PRELUDE.size - 1, PRELUDE.size, head_end - 1, head_end):
        yield f"cut in the header at {cut}", full[:cut]
    for i, b in enumerate(bounds):
        yield f"cut at element boundary {i}", full[:b]
        if i + 1 < len(bounds):
            for cut in (b + 1, b + 3, (b + bounds[i + 1]) // 2, bounds[i + 1] - 1):
                yield f"cut inside element {i} at {cut}", full[:cut]
    for cut in (1, 4, 12, 20):
        yield f"cut {cut} bytes off the footer", full[:-cut]
    yield "footer dropped", full[:-FOOTER.size]
    yield "an element dropped, footer kept", full[:bounds[2]] + full[bounds[3]:]
    magic, count, body, _ = footer(full)
    for c in (4, 6, 0, 2 ** 40):
        bad = full[:-FOOTER.size] + FOOTER.pack(magic, c, body, 0)
        yield f"count {c}", bad
        yield f"count {c}, checksum fixed", reseal(bad)
    yield "body length changed", full[:-FOOTER.size] + FOOTER.pack(magic, count, body + 1, footer(full)[3])
    yield "version 1 (the old format)", b"TPFCACHE1\n" + full[10:]
    yield "trailing garbage", full + b"\0"
    for pos in range(len(full)):
        yield f"byte {pos} flipped", full[:pos] + bytes((full[pos] ^ 0xFF,)) + full[pos + 1:]
    # damage the checksum cannot see: each component's dtype code and shape, re-sealed
    first = bounds[0]
    # element 0: b"E", then the dict's "f" component: b"T", code, rank 1, one int64 dim, 8 bytes
    assert full[first:first + 2] == b"ET" and full[first + 3] == 1
    for off, new in ((2, tf.int32.code), (2, tf.float64.code), (2, 250), (3, 0), (3, 2), (3, 255)):
        yield f"element 0 byte {off} set to {new}, resealed", reseal(
            full[:first + off] + bytes((new,)) + full[first + off + 1:])
    for dim in (1, 3, 0, -1, 2 ** 40):
        yield f"element 0 shape [{dim}], resealed", reseal(
            full[:first + 4] + struct.pack("<q", dim) + full[first + 12:])
    yield "element marker changed, resealed", reseal(full[:first] + b"X" + full[first + 1:])
    # the int64 component's kind byte follows the "f" leaf (4 bytes, its dim, 2 float32 values)
    k = first + 20
    assert full[k:k + 1] == b"T"
    yield "int64 component's kind, resealed", reseal(full[:k] + b"B" + full[k + 1:])
    yield "int64 component's dtype code, resealed", reseal(full[:k + 1] + bytes((tf.int32.code,)) + full[k + 2:])


def test_every_damaged_cache_file_is_a_data_loss_error(tmp_path):
    full, bounds = boundaries(tmp_path)
    want = [(({"f": ("float32", (2,), [2.0 * i, 2.0 * i + 1])}, ("int64", (), i), ("string", (), s)))
            for i, s in enumerate([b"a", b"bb", b"", b"c", b"dddd"])]
    assert [host(e) for e in sample().cache(str(tmp_path / "full"))] == want
    path = tmp_path / "bad.tpfcache"
    seen = 0
    for what, data in damaged_variants(full, bounds):
        path.write_bytes(data)
        with pytest.raises(tf.errors.DataLossError) as info:
            list(sample().cache(str(tmp_path / "bad")))
        assert str(path) in str(info.value) and str(info.value).endswith("[Op:CacheDataset]"), what
        seen += 1
    assert seen > len(full)


def test_damage_is_found_before_the_first_element(tmp_path):
    full, bounds = boundaries(tmp_path)
    for data, why in ((full[:bounds[3]], "truncated or incomplete"),
                      (full[:bounds[3]] + full[bounds[4]:], "checksum mismatch"),
                      (full[:-30] + bytes((full[-30] ^ 1,)) + full[-29:], "checksum mismatch")):
        (tmp_path / "bad.tpfcache").write_bytes(data)
        with pytest.raises(tf.errors.DataLossError, match=why):
            next(iter(sample().cache(str(tmp_path / "bad"))))


# ---- another dataset's file; partial and concurrent writes -------------------------------------

@pytest.mark.parametrize("other", [
    lambda: Dataset.range(4).map(lambda v: tf.cast(v, tf.float32)),  # dtype (TF: "Data type mismatch")
    lambda: Dataset.range(4).map(lambda v: tf.fill([2], v)),  # shape (TF: "Incompatible shapes")
    lambda: Dataset.range(4).map(lambda v: (v, v)),  # structure (TF misreads it; we refuse)
    lambda: Dataset.range(4).map(lambda v: {"v": v}),
])
def test_a_file_of_other_elements_is_an_invalid_argument(tmp_path, other):
    prefix = str(tmp_path / "c")
    list(Dataset.range(4).map(lambda v: v * 3).cache(prefix))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"c\.tpfcache holds elements .* delete the file"):
        list(other().cache(prefix))


def test_a_compatible_spec_reads_the_file(tmp_path):
    prefix = str(tmp_path / "c")
    list(Dataset.range(5).batch(2).cache(prefix))  # (None,)
    got = Dataset.range(5).batch(2).map(lambda b: b + 0).cache(prefix)
    assert [x.numpy().tolist() for x in got] == [[0, 1], [2, 3], [4]]


def test_partial_iterations_leave_no_file(tmp_path):
    calls = []
    ds = Dataset.range(10).map(lambda v: calls.append(int(v)) or v).cache(str(tmp_path / "p"))
    _ = ds.element_spec
    for stop in (0, 3, 9):
        it = iter(ds)
        for _ in range(stop):
            next(it)
        it.close()
        assert list(tmp_path.iterdir()) == []
    del calls[:]
    assert [int(x) for x in ds] == list(range(10)) and calls == list(range(10))
    assert [p.name for p in tmp_path.iterdir()] == ["p.tpfcache"]
    assert [int(x) for x in ds] == list(range(10)) and calls == list(range(10))


def test_a_left_over_temporary_file_is_not_trusted(tmp_path):
    (tmp_path / "p.tpfcache.tmp-1-abc").write_bytes(b"TPFCACHE2\n garbage")
    assert [int(x) for x in Dataset.range(3).cache(str(tmp_path / "p"))] == [0, 1, 2]
    assert [int(x) for x in Dataset.range(3).cache(str(tmp_path / "p"))] == [0, 1, 2]


def test_two_iterations_writing_at_once(tmp_path):
    ds = Dataset.range(50).map(lambda v: tf.fill([3], v)).cache(str(tmp_path / "c"))
    a, b = iter(ds), iter(ds)
    out_a, out_b = [], []
    for _ in range(50):
        out_a.append(next(a).numpy().tolist())
        out_b.append(next(b).numpy().tolist())
    for it in (a, b):
        with pytest.raises(StopIteration):
            next(it)
    want = [[v] * 3 for v in range(50)]
    assert out_a == out_b == want
    assert [x.numpy().tolist() for x in ds] == want
    assert [p.name for p in tmp_path.iterdir()] == ["c.tpfcache"]


def test_an_element_that_breaks_its_spec_is_refused_on_write(tmp_path):
    # the spec comes from placeholder calls (values 1 and 2): shape (3,); element 6 has shape (2,)
    ds = Dataset.range(8).map(lambda v: tf.zeros([2]) if int(v) > 5 else tf.zeros([3]))
    assert ds.element_spec.shape == (3,)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"element 6, component 0 has dtype float32 and shape "
                                                            r"\(2,\); the dataset's element_spec says float32 \(3,\)"):
        list(ds.cache(str(tmp_path / "c")))
    assert list(tmp_path.iterdir()) == []
