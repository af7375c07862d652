"""tf.vectorized_map: batching rules checked against a Python loop over the elements; the fallback loop;
gradients through it; inside tf.function; GradientTape.jacobian/batch_jacobian with experimental_use_pfor."""
from __future__ import annotations

import pathlib
import sys
import warnings
import zlib

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.autodiff.vectorize as vectorize

RNG = np.random.default_rng(1234)
X = tf.constant(RNG.standard_normal((4, 3, 5)))          # 4 elements of shape (3, 5)
V = tf.constant(RNG.standard_normal((4, 5)))             # 4 elements of shape (5,)
W = tf.constant(RNG.standard_normal((5, 2)))
SPD = tf.constant(np.stack([a @ a.T + 3 * np.eye(3) for a in RNG.standard_normal((4, 3, 3))]))
IMG = tf.constant(RNG.standard_normal((4, 2, 6, 6, 3)))  # 4 elements: batches of 2 images 6x6x3
C215 = tf.constant(RNG.standard_normal((2, 1, 5)))
FILT = tf.constant(RNG.standard_normal((3, 3, 3, 4)))

BATTERY = {
    "elementwise": (lambda x: tf.exp(tf.sin(x)) * 2.0 + tf.maximum(x, 0.1) ** 2, X),
    "broadcast-against-constant": (lambda x: x + C215, X),
    "matmul": (lambda x: tf.matmul(x, W), X),
    "matvec-as-matmul": (lambda v: tf.matmul(v[None, :], W)[0], V),
    "matmul-transposed": (lambda x: tf.matmul(x, x, transpose_b=True), X),
    "reductions": (lambda x: (tf.reduce_sum(x, 1), tf.reduce_mean(x), tf.reduce_max(x, 0, keepdims=True),
                              tf.reduce_prod(x[:, :2], -1)), X),
    "argmax-cumsum-softmax": (lambda x: (tf.argmax(x, 1), tf.cumsum(x, axis=0), tf.nn.softmax(x),
                                         tf.nn.log_softmax(x, axis=0)), X),
    "reshape-transpose": (lambda x: tf.transpose(tf.reshape(x, [5, 3])) + tf.reshape(x, [-1])[:3, None], X),
    "expand-squeeze-tile": (lambda x: tf.squeeze(tf.tile(tf.expand_dims(x, 0), [2, 1, 1])[:1], 0), X),
    "slicing": (lambda x: (x[1:, ::2], x[..., -1], x[:, None, 2]), X),
    "concat-stack-split": (lambda x: (tf.concat([x, tf.ones([3, 1], tf.float64)], 1), tf.stack([x, x * 2], -1),
                                      tf.split(x, [2, 3], axis=1)[1], tf.unstack(x)[2]), X),
    "gather": (lambda x: (tf.gather(x, [2, 0], axis=1), tf.gather(x, [1, 1, 0])), X),
    "gather-by-element": (lambda v: tf.gather(tf.constant([10.0, 20.0, 30.0], tf.float64),
                                              tf.cast(tf.abs(v[:2]) * 0 + 1, tf.int32)), V),
    "gather_nd": (lambda x: tf.gather_nd(x, [[0, 1], [2, 4]]), X),
    "pad-reverse-sort": (lambda x: (tf.pad(x, [[1, 0], [0, 2]]), tf.reverse(x, [1]), tf.sort(x, axis=0),
                                    tf.math.top_k(x[0], 2).values), X),
    "where-and-compare": (lambda x: tf.where(x > 0, x, -x * 0.5) + tf.cast(x > 0.3, tf.float64), X),
    "broadcast_to": (lambda v: tf.broadcast_to(v, [2, 5]), V),
    "scatter": (lambda v: (tf.scatter_nd([[1], [3]], v[:2], [6]),
                           tf.tensor_scatter_nd_add(tf.zeros([5], tf.float64), [[0], [0]], v[1:3])), V),
    "segment-sum": (lambda v: tf.math.unsorted_segment_sum(v, [0, 1, 0, 2, 1], 3), V),
    "linalg": (lambda a: (tf.linalg.inv(a), tf.linalg.det(a), tf.linalg.cholesky(a),
                          tf.linalg.solve(a, tf.ones([3, 1], tf.float64)), tf.linalg.diag_part(a)), SPD),
    "decompositions": (lambda a: (tf.linalg.eigh(a)[0], tf.linalg.svd(a)[0], tf.linalg.expm(a * 0.1)), SPD),
    "conv-pool": (lambda im: tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(im, FILT, 1, "SAME")), 2, 2, "VALID"), IMG),
    "avg-pool-depthwise": (lambda im: tf.nn.avg_pool2d(tf.nn.depthwise_conv2d(im, tf.ones([2, 2, 3, 1], tf.float64),
                                                                              [1, 1, 1, 1], "VALID"), 2, 1, "SAME"),
                           IMG),
    "structure": (lambda d: {"s": d["a"] + d["b"][0], "t": (d["a"] * 2,)}, {"a": V, "b": (V * 3,)}),
    "output-independent-of-the-element": (lambda v: (v * 2, tf.constant([1.0, 2.0])), V),
}


def _loop(fn, elems):
    flat = tf.nest.flatten(elems)
    outs = [fn(tf.nest.pack_sequence_as(elems, [x[i] for x in flat])) for i in range(int(flat[0].shape[0]))]
    return tf.nest.map_structure(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


@pytest.mark.parametrize("name", sorted(BATTERY))
def test_vectorized_matches_a_loop(name):
    fn, elems = BATTERY[name]
    got = tf.vectorized_map(fn, elems, fallback_to_while_loop=False)   # every op has a rule: no loop
    want = _loop(fn, elems)
    tf.nest.assert_same_structure(got, want)
    for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
        assert tuple(g.shape) == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12)


def test_runs_fn_once_on_the_batch():
    calls = []

    def fn(v):
        calls.append(1)
        return v * 2

    tf.vectorized_map(fn, V)
    assert len(calls) == 1


def test_fallback_loop_warns_naming_the_op():
    def fn(v):
        return v + tf.random.uniform([5], dtype=tf.float64, seed=1)

    with pytest.warns(tf.errors.PerformanceWarning, match="random_uniform.*stateful|loop over the elements"):
        out = tf.vectorized_map(fn, V)
    assert tuple(out.shape) == (4, 5)
    rows = out.numpy() - V.numpy()
    assert not np.allclose(rows[0], rows[1])   # one draw per element, as the loop does
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.vectorized_map(fn, V, warn=False)


def test_no_fallback_raises_naming_the_op():
    def fn(v):
        tf.print(v)
        return v

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"print.*\[Op:vectorized_map\]"):
        tf.vectorized_map(fn, V, fallback_to_while_loop=False)


def test_a_missing_rule_falls_back_with_the_same_values(monkeypatch):
    monkeypatch.delitem(vectorize.BATCH_RULES, "matmul")
    fn = BATTERY["matmul"][0]
    with pytest.warns(UserWarning, match="matmul.*no batching rule"):
        got = tf.vectorized_map(fn, X)
    np.testing.assert_allclose(got.numpy(), _loop(fn, X), rtol=1e-12)
    with pytest.raises(tf.errors.InvalidArgumentError, match="matmul"):
        tf.vectorized_map(fn, X, fallback_to_while_loop=False)


def test_a_function_that_reads_values_falls_back():
    def fn(v):
        return v * float(v[0].numpy())   # needs a value: cannot be traced

    with pytest.warns(UserWarning, match="could not be traced"):
        got = tf.vectorized_map(fn, V)
    np.testing.assert_allclose(got.numpy(), _loop(fn, V), rtol=1e-12)


def test_gradients_through_vectorized_map():
    x = tf.constant(RNG.standard_normal((4, 5)))
    w = tf.Variable(RNG.standard_normal((5, 2)))

    def per_example_loss(v):
        return tf.reduce_sum(tf.tanh(tf.matmul(v[None, :], w)) ** 2)

    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        batched = tf.reduce_sum(tf.vectorized_map(per_example_loss, x, fallback_to_while_loop=False))
        looped = tf.add_n([per_example_loss(x[i]) for i in range(4)])
    for src in (x, w):
        np.testing.assert_allclose(tape.gradient(batched, src).numpy(), tape.gradient(looped, src).numpy(),
                                   rtol=1e-10)


def test_inside_tf_function():
    fn = BATTERY["reductions"][0]

    @tf.function
    def f(x):
        return tf.vectorized_map(fn, x, fallback_to_while_loop=False)

    got = f(X)
    for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(_loop(fn, X))):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10)


def test_inside_tf_function_with_an_unknown_batch_size():
    @tf.function(input_signature=[tf.TensorSpec([None, 5], tf.float64)])
    def f(v):
        return tf.vectorized_map(lambda e: tf.reduce_sum(tf.exp(e) * e), v, fallback_to_while_loop=False)

    np.testing.assert_allclose(f(V).numpy(), np.sum(np.exp(V.numpy()) * V.numpy(), 1), rtol=1e-12)


def test_bad_arguments():
    with pytest.raises(TypeError, match="callable"):
        tf.vectorized_map(3, V)
    with pytest.raises(tf.errors.InvalidArgumentError, match="scalar"):
        tf.vectorized_map(lambda e: e, tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="same first dimension"):
        tf.vectorized_map(lambda e: e, (V, X[:3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
        tf.vectorized_map(lambda e: e, [])


# ---- jacobian / batch_jacobian with experimental_use_pfor -------------------------------------------------

JACOBIAN_FNS = {
    "mlp": lambda x: tf.tanh(tf.matmul(x, W)) * tf.reduce_sum(x ** 2),
    "softmax-xent": lambda x: tf.nn.softmax_cross_entropy_with_logits(labels=tf.nn.softmax(x * 0.3), logits=x),
    "gather-max-cumprod": lambda x: (tf.reduce_max(x, 1)
                                     + tf.gather(x, [1, 0, 3, 2])[:, 0] * tf.math.cumprod(x, 1)[:, -1]),
    "linalg": lambda x: tf.linalg.inv(tf.matmul(x, x, transpose_b=True) + tf.eye(4, dtype=tf.float64)),
}


@pytest.mark.parametrize("name", sorted(JACOBIAN_FNS))
def test_jacobian_pfor_equals_the_loop(name, monkeypatch):
    x = tf.constant(RNG.standard_normal((4, 5)))
    fn = JACOBIAN_FNS[name]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = fn(x)
    loop = tape.jacobian(y, x, experimental_use_pfor=False)
    batch_loop = tape.batch_jacobian(y, x, experimental_use_pfor=False) if y.shape.rank >= 1 else None
    monkeypatch.setattr(vectorize, "_loop", lambda *a: pytest.fail(f"{name}: jacobian fell back to the loop"))
    batched = []
    real = vectorize._vectorize
    monkeypatch.setattr(vectorize, "_vectorize", lambda *a: batched.append(1) or real(*a))
    pfor = tape.jacobian(y, x)
    np.testing.assert_allclose(pfor.numpy(), loop.numpy(), rtol=1e-12, atol=1e-14)
    if batch_loop is not None:
        np.testing.assert_allclose(tape.batch_jacobian(y, x).numpy(), batch_loop.numpy(), rtol=1e-12, atol=1e-14)
    assert len(batched) == (2 if batch_loop is not None else 1), "the pfor jacobians did not use vectorized_map"


def test_jacobian_pfor_unconnected_and_structures():
    x = tf.constant([1.0, 2.0])
    z = tf.constant([3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * x
    jx, jz = tape.jacobian(y, [x, z])
    assert jx.numpy().tolist() == [[2.0, 0.0], [0.0, 4.0]] and jz is None
    assert tape.jacobian(y, {"z": z}, unconnected_gradients="zero")["z"].numpy().tolist() == [[0.0], [0.0]]


def test_jacobian_pfor_falls_back_to_the_loop_when_an_op_has_no_rule(monkeypatch):
    x = tf.constant(RNG.standard_normal((3, 4)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.matmul(x, tf.transpose(x))
    loop = tape.jacobian(y, x, experimental_use_pfor=False)
    monkeypatch.delitem(vectorize.BATCH_RULES, "matmul")
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), loop.numpy(), rtol=1e-12)


# ---- every spec of tests/specs/: the batching rules against a loop ------------------------------------------

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests"))
from opspec import load_specs  # noqa: E402

FLOAT_SPECS = [s for s in load_specs() if any(d.startswith("float") for d in s.dtypes)]


@pytest.mark.parametrize("spec", FLOAT_SPECS, ids=str)
def test_batching_rules_match_a_loop_for_every_spec(spec):
    """Each sampled case, its float inputs batched as [a, a / 2]: vectorized (where every op has a rule) equals
    the loop; a failure names the op's spec (the rules are in packages/autodiff/src/tapeflow/autodiff/vectorize.py)."""
    dt = "float64" if "float64" in spec.dtypes else [d for d in spec.dtypes if d.startswith("float")][0]
    rng = np.random.default_rng(zlib.crc32(f"vm-{spec}".encode()))
    cases = spec.sample(rng, dt)
    for args, kwargs in (cases if isinstance(cases, list) else [cases])[:6]:
        pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        if not pos:
            continue
        elems = [tf.constant(np.stack([args[i], args[i] * 0.5])) for i in pos]

        def fn(es, _args=args, _kw=kwargs, _pos=pos):
            full = list(_args)
            for i, e in zip(_pos, es):
                full[i] = e
            return spec.run(tf, full, _kw)

        try:
            want = [fn([e[k] for e in elems]) for k in range(2)]
        except tf.errors.OpError:
            continue   # a case the op rejects (its bad-input tests cover it)
        got = vectorize._vectorize(fn, elems, elems, 2)
        if isinstance(got, str):
            assert "batching rule of" not in got, f"{spec}: {got}"
            continue   # an op without a rule (or a stateful one): vectorized_map would loop
        flat_w = [tf.nest.flatten(w) for w in want]
        for j, g in enumerate(tf.nest.flatten(got)):
            w = np.stack([np.asarray(flat_w[k][j]) for k in range(2)])
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-8, equal_nan=True,
                                       err_msg=f"{spec}: shapes {[tuple(e.shape) for e in elems]} {kwargs}")


def test_jacobian_pfor_in_chunks_of_parallel_iterations():
    x = tf.constant(RNG.standard_normal((3, 4)))
    w = tf.Variable(RNG.standard_normal((4, 2)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.tanh(tf.matmul(x, w))
    want = tape.jacobian(y, [x, w], experimental_use_pfor=False)
    want_b = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    for chunk in (1, 4, 100):
        for g, w_ in zip(tape.jacobian(y, [x, w], parallel_iterations=chunk), want):
            np.testing.assert_allclose(g.numpy(), w_.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(tape.batch_jacobian(y, x, parallel_iterations=chunk).numpy(), want_b.numpy(),
                                   rtol=1e-12, atol=1e-14)


def test_jacobian_pfor_inside_tf_function():
    x = tf.constant(RNG.standard_normal((3, 4)))

    def jac(x, pfor):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x) * tf.reduce_sum(x * x)
        return tape.jacobian(y, x, experimental_use_pfor=pfor)

    np.testing.assert_allclose(tf.function(lambda x: jac(x, True))(x).numpy(), jac(x, False).numpy(), rtol=1e-12)
