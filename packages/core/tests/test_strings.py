"""String tensors (tf.string) and tf.strings: creation, printing, the ops, the generic ops over strings,
tf.function, placement; compared with TensorFlow 2 when it is installed (Python references otherwise)."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.ops.string_ops import fingerprint64, ragged_to_dense


def _tf_or_none():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow
    except Exception:  # noqa: BLE001 (a broken TensorFlow install is as good as none)
        return None
    return tensorflow


TF = _tf_or_none()
WORDS = ["", "a", "Hello World", "  padded\t", "na\u00efve caf\u00e9", "x" * 70, "12", "-3.5", "UPPER lower"]


def _same(got, want):
    """got (tapeflow) equals want (TensorFlow's tensor/RaggedTensor, or a NumPy value)."""
    if TF is not None and isinstance(want, TF.RaggedTensor):
        assert got.to_list() == want.to_list()
        return
    w = want.numpy() if hasattr(want, "numpy") else np.asarray(want)
    g = got.numpy()
    assert np.shape(g) == np.shape(w), (g, w)
    if isinstance(w, np.ndarray) and w.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=1e-6)
    else:
        assert np.asarray(g == w).all(), (g, w)
        if hasattr(want, "dtype") and TF is not None:
            assert got.dtype.name == want.dtype.name


def both(fn, *args, **kwargs):
    """fn(module, *args) with tapeflow and, when installed, TensorFlow: the results must agree."""
    got = fn(tf, *args, **kwargs)
    if TF is not None:
        _same(got, fn(TF, *args, **kwargs))
    return got


# ---- the dtype, creation and printing --------------------------------------------------------------------

def test_string_dtype():
    assert tf.string.name == "string" and tf.string.is_string and not tf.string.is_integer
    assert tf.as_dtype(bytes) is tf.string and tf.as_dtype(str) is tf.string
    assert tf.as_dtype(np.dtype("S3")) is tf.string and tf.as_dtype(object) is tf.string
    assert tf.as_dtype("string") is tf.string and tf.string.as_numpy_dtype is np.object_


def test_creation_and_numpy_give_object_arrays_of_bytes():
    t = tf.constant([["a", b"b"], ["\u00e9", "d"]])
    assert t.dtype == tf.string and t.shape == (2, 2)
    arr = t.numpy()
    assert arr.dtype == object and arr.tolist() == [[b"a", b"b"], [b"\xc3\xa9", b"d"]]
    assert tf.constant("hi").numpy() == b"hi"
    assert tf.constant(np.array([b"x", b"yz"])).numpy().tolist() == [b"x", b"yz"]
    assert tf.constant(np.array(["x", "yz"])).numpy().tolist() == [b"x", b"yz"]
    assert tf.convert_to_tensor(["a"]).dtype == tf.string
    assert tf.constant("a", shape=[2, 2]).numpy().tolist() == [[b"a", b"a"], [b"a", b"a"]]
    assert tf.constant([], dtype=tf.string).shape == (0,)


def test_printing_as_tensorflow():
    assert str(tf.constant("h\u00e9")) == "Tensor(b'h\\xc3\\xa9', shape=(), dtype=string)"
    assert str(tf.constant(["a", "b"])) == "Tensor([b'a' b'b'], shape=(2,), dtype=string)"
    assert repr(tf.constant(["a", "b"])) == \
        "<Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>"
    assert repr(tf.constant("a")) == "<Tensor: shape=(), dtype=string, numpy=b'a'>"


def test_bad_string_conversions_raise_typed_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="mixed strings and int"):
        tf.constant(["a", 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="holds strings"):
        tf.constant(["a"], dtype=tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="string tensor"):
        tf.constant([1.0], dtype=tf.string)
    with pytest.raises(tf.errors.InvalidArgumentError, match="ragged"):
        tf.constant([["a"], ["b", "c"]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:StringLength\]"):
        tf.strings.length([1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"does not support string"):
        tf.subtract(tf.constant(["a"]), tf.constant(["b"]))  # add concatenates (AddV2 takes strings), Sub does not


# ---- the ops, against TensorFlow ------------------------------------------------------------------------

def test_elementwise_ops_match_tensorflow():
    both(lambda m: m.strings.lower(WORDS))
    both(lambda m: m.strings.upper(WORDS))
    both(lambda m: m.strings.upper(WORDS, encoding="utf-8"))
    both(lambda m: m.strings.strip(WORDS))
    both(lambda m: m.strings.length(WORDS))
    assert both(lambda m: m.strings.length(WORDS, unit="UTF8_CHAR")).numpy()[4] == 10
    both(lambda m: m.strings.join(["a", ["x", "y"], ["1", "2"]], separator="|"))
    both(lambda m: m.strings.substr(["hello", "hi", "tensor"], 1, 3))
    both(lambda m: m.strings.substr(["hello", "tensor"], [-3, 0], [2, 9]))
    both(lambda m: m.strings.substr("na\u00efve", 1, 3, unit="UTF8_CHAR"))
    both(lambda m: m.strings.regex_replace(WORDS, r"[aeiou]", "_"))
    both(lambda m: m.strings.regex_replace(["abcab"], "a(b)", r"<\1\0>", replace_global=False))
    both(lambda m: m.strings.regex_full_match(WORDS, r"[A-Za-z ]+"))


def test_numbers_and_formatting_match_tensorflow():
    both(lambda m: m.strings.to_number(["1.5", "-2", "1e3", " 7 "]))
    both(lambda m: m.strings.to_number(["12", "-3"], out_type=m.int64))
    both(lambda m: m.strings.to_number(["0.1"], out_type=m.float64))
    both(lambda m: m.strings.as_string(m.constant([1.5, -2.25, 1e-9])))
    both(lambda m: m.strings.as_string(m.constant([1.5, 12345678.0]), shortest=True))
    both(lambda m: m.strings.as_string(m.constant([1.5]), precision=2, width=8, fill="0"))
    both(lambda m: m.strings.as_string(m.constant([1.5]), scientific=True))
    both(lambda m: m.strings.as_string(m.constant([3, -40]), width=4))
    both(lambda m: m.strings.as_string(m.constant([True, False])))
    both(lambda m: m.strings.format("x={} y={}", (m.constant("a"), m.constant([1, 2, 3, 4, 5, 6, 7]))))
    both(lambda m: m.strings.format("{}", m.constant([[1.5, 2.0], [3.0, 4.0]])))
    both(lambda m: m.strings.format("{}", m.constant(["a", "b"])))


def test_joins_splits_and_ngrams_match_tensorflow():
    both(lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-"))
    both(lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]]))
    both(lambda m: m.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0, keepdims=True))
    both(lambda m: m.strings.split("a b  c "))
    both(lambda m: m.strings.split("a,b,,c", ","))
    both(lambda m: m.strings.split("a b c", " ", maxsplit=1))
    r = both(lambda m: m.strings.split(["a b", "", "c d e"]))
    assert r.row_lengths().numpy().tolist() == [2, 0, 3]
    assert r.flat_values.numpy().tolist() == [b"a", b"b", b"c", b"d", b"e"]
    assert r.to_tensor().numpy().tolist() == [[b"a", b"b", b""], [b"", b"", b""], [b"c", b"d", b"e"]]
    both(lambda m: m.strings.bytes_split("abc"))
    both(lambda m: m.strings.bytes_split(["ab", "c"]))
    both(lambda m: m.strings.ngrams(["a", "b", "c", "d"], 2))
    both(lambda m: m.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], 3, separator="_"))
    both(lambda m: m.strings.ngrams(["a", "b", "c"], (1, 2), pad_values=("<s>", "</s>")))
    both(lambda m: m.strings.ngrams(["a", "b", "c"], 3, pad_values="#", padding_width=1))


def test_unicode_decode_and_encode_match_tensorflow():
    both(lambda m: m.strings.unicode_decode("na\u00efve \u20ac", "UTF-8"))
    both(lambda m: m.strings.unicode_decode(["h\u00e9", "", "abc"], "UTF-8"))
    both(lambda m: m.strings.unicode_encode([104, 233, 8364], "UTF-8"))
    both(lambda m: m.strings.unicode_encode([[104, 105], [233, 97]], "UTF-8"))
    r = tf.strings.unicode_decode(["h\u00e9", "abc"], "UTF-8")
    assert tf.strings.unicode_encode(r, "UTF-8").numpy().tolist() == ["h\u00e9".encode(), b"abc"]


def test_to_hash_bucket_fast_is_tensorflows_fingerprint():
    # TensorFlow 2.21's values (always checked); more strings against TensorFlow itself when installed
    want = {b"": 263, b"a": 939, b"Hello": 151, b"tf": 248, b"na\xc3\xafve": 233, b"UPPER lower": 686}
    got = tf.strings.to_hash_bucket_fast(list(want), 1000).numpy().tolist()
    assert got == list(want.values())
    assert fingerprint64(b"") == 0x9ae16a3b2f90404f
    rng = np.random.default_rng(14)
    words = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in list(range(0, 140)) + [200, 255, 256, 1000]]
    ours = tf.strings.to_hash_bucket_fast(np.array(words, dtype=object), 2 ** 62 + 1).numpy()
    assert ours.dtype == np.int64 and (ours >= 0).all()
    if TF is not None:
        theirs = TF.strings.to_hash_bucket_fast(np.array(words, dtype=object), 2 ** 62 + 1).numpy()
        np.testing.assert_array_equal(ours, theirs)


def test_string_op_errors_name_the_op():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"could not correctly convert string: x \[Op:StringToNumber\]"):
        tf.strings.to_number(["1", "x"])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"pos 9 out of range .*\[Op:Substr\]"):
        tf.strings.substr("hello", 9, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"unit = 'CHAR'.*\[Op:StringLength\]"):
        tf.strings.length("a", unit="CHAR")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:StringSplitV2\]"):
        tf.strings.split([["a b"]])
    with pytest.raises(TypeError, match=r"\[Op:StringSplitV2\]"):
        tf.strings.split("a b", sep=3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"num_buckets = 0.*\[Op:StringToHashBucketFast\]"):
        tf.strings.to_hash_bucket_fast("a", 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"out_type = bool.*\[Op:StringToNumber\]"):
        tf.strings.to_number("1", out_type=tf.bool)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"2 placeholders but 1 inputs.*\[Op:StringFormat\]"):
        tf.strings.format("{} {}", [tf.constant(1)])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"invalid pattern.*\[Op:StaticRegexReplace\]"):
        tf.strings.regex_replace("a", "(", "b")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Input shapes do not match.*\[Op:StringJoin\]"):
        tf.strings.join([["a", "b"], [["a", "b"]]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"errors = 'x'.*\[Op:UnicodeDecode\]"):
        tf.strings.unicode_decode("a", "UTF-8", errors="x")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"invalid UTF-8.*\[Op:UnicodeDecode\]"):
        tf.strings.unicode_decode(b"\xff", "UTF-8", errors="strict")


# ---- the generic ops over strings ------------------------------------------------------------------------

def test_generic_ops_take_strings():
    s = tf.constant([["a", "b", "c"], ["d", "e", "f"]])
    both(lambda m: m.reshape(m.constant([["a", "b", "c"], ["d", "e", "f"]]), [3, 2]))
    both(lambda m: m.gather(m.constant(["a", "b", "c"]), [2, 0, 2]))
    both(lambda m: m.gather(m.constant([["a", "b"], ["c", "d"]]), [[1], [0]], axis=1, batch_dims=1))
    both(lambda m: m.concat([m.constant([["a"]]), m.constant([["b"]])], axis=1))
    both(lambda m: m.stack([m.constant(["a", "b"]), m.constant(["c", "d"])], axis=1))
    both(lambda m: m.equal(m.constant(["a", "b"]), "b"))
    both(lambda m: m.not_equal(m.constant(["a", "b"]), m.constant(["a", "c"])))
    both(lambda m: m.where([True, False], m.constant(["a", "b"]), m.constant(["x", "y"])))
    both(lambda m: m.identity(m.constant(["a"])))
    both(lambda m: m.size(m.constant([["a", "b"]])))
    both(lambda m: m.shape(m.constant([["a", "b"]])))
    both(lambda m: m.boolean_mask(m.constant(["a", "b", "c"]), [True, False, True]))
    both(lambda m: m.transpose(m.constant([["a", "b"]])))
    both(lambda m: m.tile(m.constant(["a", "b"]), [2]))
    assert (s == "e").numpy().tolist() == [[False, False, False], [False, True, False]]
    assert s[1, ::-1].numpy().tolist() == [b"f", b"e", b"d"]
    assert s[:, 1].numpy().tolist() == [b"b", b"e"]
    assert [t.numpy() for t in tf.constant(["p", "q"])] == [b"p", b"q"]
    assert [t.numpy().tolist() for t in tf.split(tf.constant(["a", "b", "c"]), [1, 2])] == [[b"a"], [b"b", b"c"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"is not in \[0, 3\)"):
        tf.gather(tf.constant(["a", "b", "c"]), [3])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.equal(tf.constant(["a"]), tf.constant([1]))


def test_string_ops_inside_tf_function():
    @tf.function
    def f(x):
        words = tf.strings.split(x[0])
        return tf.strings.length(tf.strings.upper(x)), tf.strings.join([x, "!"]), words, x == "b", \
            tf.strings.to_hash_bucket_fast(x, 10)

    for x in (["a b", "b"], ["hello big world", "x", "y"]):
        eager = f.python_function(tf.constant(x))
        compiled = f(tf.constant(x))
        for e, c in zip(eager, compiled):
            assert e.dtype == c.dtype and e.numpy().tolist() == c.numpy().tolist()
    assert f.experimental_get_tracing_count() == 2


def test_string_tensors_stay_in_host_memory_on_other_devices():
    accel = [d for d in tf.config.list_physical_devices() if d.device_type != "CPU"]
    if not accel:
        pytest.skip("no accelerator device here (the opencl leg runs this)")
    name = accel[0].name.replace("/physical_device:", "").lower()
    with tf.device(name):
        s = tf.constant(["ab", "cde"])
        n = tf.strings.length(s)
        picked = tf.gather(s, tf.constant([1]))
    assert s.device == name and n.device == name and n.numpy().tolist() == [2, 3]
    assert picked.numpy().tolist() == [b"cde"] and s.cpu().numpy().tolist() == [b"ab", b"cde"]


def test_unique_of_strings():
    y, idx = both(lambda m: m.unique(m.constant(["b", "a", "b", "c", "a"]))[0]), \
        both(lambda m: m.unique(m.constant(["b", "a", "b", "c", "a"]))[1])
    assert y.numpy().tolist() == [b"b", b"a", b"c"] and idx.numpy().tolist() == [0, 1, 0, 2, 1]
    assert both(lambda m: m.unique_with_counts(m.constant(["x", "y", "x"]))[2]).numpy().tolist() == [2, 1]

    @tf.function
    def f(x):
        return tf.unique(x)

    assert f(tf.constant(["q", "p", "q"])).y.numpy().tolist() == [b"q", b"p"]


def test_ragged_results_trace_in_tf_function():
    @tf.function
    def f(x):
        r = tf.strings.split(x)
        return r.flat_values, r.row_splits, ragged_to_dense(r.flat_values, r.row_splits, b"-", 2)

    values, splits, dense = f(tf.constant(["a b c", "", "d"]))
    assert values.numpy().tolist() == [b"a", b"b", b"c", b"d"] and splits.numpy().tolist() == [0, 3, 3, 4]
    assert dense.numpy().tolist() == [[b"a", b"b"], [b"-", b"-"], [b"d", b"-"]]


def test_add_concatenates_strings_as_tensorflows_addv2():
    assert (tf.constant("a") + b"!").numpy() == b"a!"
    assert ("p" + tf.constant(["a", "b"])).numpy().tolist() == [b"pa", b"pb"]
    got = tf.add(tf.constant([["a"], ["b"]]), tf.constant(["1", "2"])).numpy().tolist()
    assert got == [[b"a1", b"a2"], [b"b1", b"b2"]]
    if TF is not None:
        assert got == TF.add(TF.constant([["a"], ["b"]]), TF.constant(["1", "2"])).numpy().tolist()
    assert tf.function(lambda s: s + "!")(tf.constant("q")).numpy() == b"q!"
    with pytest.raises(TypeError, match=r"cannot convert 1 to a string.*\[Op:AddV2\]"):
        tf.constant("a") + 1
    with pytest.raises(TypeError, match=r"\[Op:Equal\]"):  # TensorFlow: TypeError (it returned False)
        tf.constant(["a"]) == 1


def test_a_list_of_string_tensors_packs_into_one():
    # TensorFlow: tf.constant([tf.constant("a"), tf.constant("b")]) is a string vector (serialized records, PNGs)
    assert tf.constant([tf.constant("a"), tf.constant("b")]).numpy().tolist() == [b"a", b"b"]
    assert tf.convert_to_tensor([tf.constant(["a", "c"]), tf.constant(["b", "d"])]).shape == (2, 2)
    assert tf.constant([[tf.constant("a")], [b"b"]]).numpy().tolist() == [[b"a"], [b"b"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="mixed strings and int"):
        tf.constant([tf.constant("a"), 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="ragged"):
        tf.constant([tf.constant(["a", "c"]), tf.constant(["b"])])


def test_string_zeros_scatter_update_and_sparse_to_dense():
    # TensorFlow: tf.zeros([2], tf.string) is [b'', b'']; tensor_scatter_nd_update and sparse.to_dense take strings
    assert tf.zeros([2], tf.string).numpy().tolist() == [b"", b""]
    got = tf.tensor_scatter_nd_update(tf.constant([["a", "b"], ["c", "d"]]), [[1, 0], [0, 1]], ["x", "y"])
    assert got.numpy().tolist() == [[b"a", b"y"], [b"x", b"d"]]
    assert tf.tensor_scatter_nd_update(tf.constant([["a", "b"], ["c", "d"]]), [[1]], [["p", "q"]]).numpy().tolist() \
        == [[b"a", b"b"], [b"p", b"q"]]
    st = tf.sparse.SparseTensor([[0, 1], [1, 0]], ["u", "v"], [2, 3])
    assert tf.sparse.to_dense(st).numpy().tolist() == [[b"", b"u", b""], [b"v", b"", b""]]
    assert tf.sparse.to_dense(st, default_value="-").numpy().tolist() == [[b"-", b"u", b"-"], [b"v", b"-", b"-"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"TensorScatterUpdate"):
        tf.tensor_scatter_nd_update(tf.constant(["a"]), [[3]], ["x"])


def test_split_to_tensor_inside_tf_function():
    # TensorFlow: tf.strings.split(t).to_tensor() traces (a ragged-to-dense node); it needed the splits' values
    s = tf.constant(["Hello World", "  tapeflow  "])
    f = tf.function(lambda t: tf.strings.reduce_join(tf.strings.split(t).to_tensor(), axis=1, separator="_"))
    assert f(s).numpy().tolist() == [b"Hello_World", b"tapeflow_"]
    g = tf.function(lambda t: tf.strings.split(t).to_tensor(default_value="?", shape=[None, 3]))
    assert g(s).numpy().tolist() == [[b"Hello", b"World", b"?"], [b"tapeflow", b"?", b"?"]]
    assert g(s).numpy().tolist() == tf.strings.split(s).to_tensor(default_value="?", shape=[None, 3]).numpy().tolist()


def test_tf_print_of_string_tensors_as_tensorflow(capsys):
    import sys

    tf.print(tf.constant("hé"), tf.constant(["a", 'b"c', "d\n"]), output_stream=sys.stdout)
    tf.print(tf.constant(["x"] * 10), output_stream=sys.stdout)

    @tf.function
    def f(x):
        tf.print("str:", tf.constant([["a"], ["b"]]), x, output_stream=sys.stdout)
        return x

    f(tf.constant(3))
    # TensorFlow 2.21's output: a scalar string as it is, elements double-quoted with C escapes
    assert capsys.readouterr().out == 'hé ["a" "b\\"c" "d\\n"]\n["x" "x" "x" ... "x" "x" "x"]\nstr: [["a"]\n ["b"]] 3\n'
