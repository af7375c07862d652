"""Text layers (StringLookup, IntegerLookup, TextVectorization): vocabularies, adapt, every output_mode,
max_tokens, output_sequence_length, ngrams, invert; compared with Keras 3 where TensorFlow is installed."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from nn_testutil import tf_or_none

TF = tf_or_none()
L = tf.keras.layers
DOCS = ["The cat sat on the mat.", "The dog ate my homework!", "a cat, a dog; a bird?", "", "Cat cat CAT dog"]


def _np(v):
    return v.numpy() if hasattr(v, "numpy") else np.asarray(v)


def both(make, adapt=None, inputs=None, cast=None):
    """make(layers) with tapeflow and (when installed) Keras 3; adapt on ``adapt``; the outputs on ``inputs``
    and the vocabularies must agree.  Returns tapeflow's (layer, output)."""
    ours = make(L)
    if adapt is not None:
        ours.adapt(adapt)
    out = ours(inputs)
    if TF is not None:
        theirs = make(TF.keras.layers)
        if adapt is not None:
            theirs.adapt(adapt)
        ref = theirs(inputs)
        assert ours.get_vocabulary() == [v.decode() if isinstance(v, bytes) else v for v in theirs.get_vocabulary()]
        got, want = _np(out), _np(ref)
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            assert got.tolist() == want.tolist()
        assert out.dtype.name == ref.dtype.name
    return ours, out


def test_string_lookup_int_mode_and_vocabulary():
    layer, out = both(lambda m: m.StringLookup(vocabulary=["a", "b", "c"]), inputs=[["a", "c"], ["d", "b"]])
    assert out.numpy().tolist() == [[1, 3], [0, 2]] and out.dtype == tf.int64
    assert layer.get_vocabulary() == ["[UNK]", "a", "b", "c"] and layer.vocabulary_size() == 4
    data = np.array([["a", "b", "b"], ["c", "b", "a"], ["d", "d", "d"]])
    layer, _ = both(lambda m: m.StringLookup(), adapt=data, inputs=data)
    assert layer.get_vocabulary() == ["[UNK]", "d", "b", "a", "c"]  # by count, ties by the greater token first
    both(lambda m: m.StringLookup(max_tokens=3, mask_token="", oov_token="?"), adapt=data,
         inputs=[["a", ""], ["z", "d"]])
    both(lambda m: m.StringLookup(num_oov_indices=3), adapt=data,
         inputs=["never", "seen", "tokens", "hash", "a", "into", "buckets"])
    both(lambda m: m.StringLookup(vocabulary=["a", "b"], invert=True), inputs=[[1, 2], [0, 2]])


def test_string_lookup_vector_modes():
    data = ["a", "b", "b", "c", "c", "c"]
    for mode in ("one_hot", "multi_hot", "count"):
        both(lambda m: m.StringLookup(output_mode=mode), adapt=data, inputs=["a", "c", "z"])
    both(lambda m: m.StringLookup(output_mode="multi_hot"), adapt=data, inputs=[["a", "c", "c"], ["z", "b", "a"]])
    both(lambda m: m.StringLookup(output_mode="one_hot"), adapt=data, inputs="c")
    both(lambda m: m.StringLookup(output_mode="multi_hot"), adapt=data, inputs="c")
    both(lambda m: m.StringLookup(output_mode="one_hot"), adapt=data, inputs=[["a"], ["c"]])
    both(lambda m: m.StringLookup(output_mode="count", max_tokens=6, pad_to_max_tokens=True), adapt=data,
         inputs=[["a", "c", "c"], ["z", "b", "a"]])
    layer, out = both(lambda m: m.StringLookup(output_mode="tf_idf"), adapt=[["a", "b"], ["b", "c"], ["c", "c"]],
                      inputs=[["a", "c", "c"], ["z", "b", "a"]])
    assert out.dtype == tf.float32 and both(lambda m: m.StringLookup(output_mode="count"), adapt=data,
                                            inputs=["a"])[1].dtype == tf.int64
    both(lambda m: m.StringLookup(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[0.5, 2.0]),
         inputs=[["a", "b", "b"]])


def test_integer_lookup():
    data = np.array([12, 36, 12, 7, 36, 36], np.int64)
    layer, out = both(lambda m: m.IntegerLookup(), adapt=data, inputs=np.array([12, 7, 99], np.int64))
    assert out.numpy().tolist() == [2, 3, 0] and layer.get_vocabulary() == [-1, 36, 12, 7]
    both(lambda m: m.IntegerLookup(mask_token=0, num_oov_indices=2), adapt=data,
         inputs=np.array([[12, 0], [5, 8]], np.int64))
    both(lambda m: m.IntegerLookup(output_mode="multi_hot"), adapt=data, inputs=np.array([[12, 36], [7, 5]], np.int64))
    both(lambda m: m.IntegerLookup(vocabulary=[12, 36], invert=True), inputs=np.array([[1, 2], [0, 2]], np.int64))


def test_text_vectorization_int_mode():
    layer, out = both(lambda m: m.TextVectorization(), adapt=DOCS, inputs=DOCS)
    assert out.dtype == tf.int64 and out.shape[0] == len(DOCS)
    assert layer.get_vocabulary()[:3] == ["", "[UNK]", "cat"]
    both(lambda m: m.TextVectorization(output_sequence_length=4), adapt=DOCS, inputs=DOCS)
    both(lambda m: m.TextVectorization(output_sequence_length=12, max_tokens=6), adapt=DOCS, inputs=DOCS)
    both(lambda m: m.TextVectorization(ngrams=2, output_sequence_length=8), adapt=DOCS, inputs=DOCS[:2])
    both(lambda m: m.TextVectorization(standardize="lower", split="whitespace"), adapt=DOCS, inputs=DOCS)
    both(lambda m: m.TextVectorization(standardize=None, vocabulary=["The", "cat"]), inputs=DOCS[:1])
    both(lambda m: m.TextVectorization(split="character", output_sequence_length=5), adapt=DOCS[:2],
         inputs=["tac", "dog"])
    both(lambda m: m.TextVectorization(output_sequence_length=3), adapt=DOCS, inputs=np.array([[d] for d in DOCS]))


def test_text_vectorization_vector_modes():
    for mode in ("multi_hot", "count", "tf_idf"):
        both(lambda m: m.TextVectorization(output_mode=mode), adapt=DOCS, inputs=DOCS)
    both(lambda m: m.TextVectorization(output_mode="count", max_tokens=5, pad_to_max_tokens=True, ngrams=(1, 2)),
         adapt=DOCS, inputs=DOCS)


def test_text_vectorization_adapts_from_a_dataset_and_runs_in_tf_function():
    pytest.importorskip("tapeflow.data", reason="adapts from a tf.data pipeline (tapeflow-data)")
    ds = tf.data.Dataset.from_tensor_slices(DOCS).batch(2)
    layer = L.TextVectorization(output_sequence_length=6)
    layer.adapt(ds)
    direct = L.TextVectorization(output_sequence_length=6)
    direct.adapt(DOCS)
    assert layer.get_vocabulary() == direct.get_vocabulary()

    @tf.function
    def f(x):
        return layer(x)

    eager = layer(tf.constant(DOCS))
    assert f(tf.constant(DOCS)).numpy().tolist() == eager.numpy().tolist()
    mapped = ds.map(lambda x: layer(x)).unbatch()
    assert [v.tolist() for v in mapped.as_numpy_iterator()] == eager.numpy().tolist()


def test_a_text_model_trains():
    vec = L.TextVectorization(max_tokens=20, output_sequence_length=5)
    texts = ["good movie", "great film", "bad movie", "awful film", "good great", "bad awful"]
    labels = np.array([1, 1, 0, 0, 1, 0], np.float32)
    vec.adapt(texts)
    tf.random.set_seed(3)
    model = tf.keras.Sequential([L.Embedding(20, 4), L.GlobalAveragePooling1D(), L.Dense(1, activation="sigmoid")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="binary_crossentropy")
    x = vec(texts)
    hist = model.fit(x, labels, epochs=30, verbose=0)
    assert hist.history["loss"][-1] < hist.history["loss"][0] * 0.5
    assert (model.predict(vec(["good film", "awful movie"]), verbose=0).ravel() > 0.5).tolist() == [True, False]


def test_bad_arguments_raise_typed_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="output_mode"):
        L.StringLookup(output_mode="bag")
    with pytest.raises(tf.errors.InvalidArgumentError, match="invert=True needs output_mode='int'"):
        L.StringLookup(invert=True, output_mode="count")
    with pytest.raises(tf.errors.InvalidArgumentError, match="needs a vocabulary"):
        L.StringLookup(output_mode="multi_hot")(["a"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="repeated tokens"):
        L.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="needs idf_weights"):
        L.StringLookup(output_mode="tf_idf", vocabulary=["a"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_oov_indices=0"):
        L.StringLookup(vocabulary=["a"], num_oov_indices=0)(["b"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="standardize"):
        L.TextVectorization(standardize="upper")
    with pytest.raises(tf.errors.InvalidArgumentError, match="last dimension 1"):
        L.TextVectorization(vocabulary=["a"])(np.array([["a", "b"]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sparse=True"):
        L.IntegerLookup(sparse=True)
    with pytest.raises(TypeError, match="integers"):
        L.IntegerLookup(vocabulary=["a"])
