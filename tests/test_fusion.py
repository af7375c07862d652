"""Element-wise fusion (fusion.py): chains of element-wise ops in a tf.function run as one kernel with the
unfused graph's results (bit for bit on the CPU, within 1 ulp on a GPU), gradients included."""
from __future__ import annotations

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.core.testing import seeded_rng

ON_CPU = tf.constant(0.0)._dev.kind == "cpu"


@pytest.fixture
def options():
    saved = tf.config.optimizer.get_experimental_options()
    yield tf.config.optimizer.set_experimental_options
    tf.config.optimizer.set_experimental_options(saved)


@pytest.fixture(params=[False, True], ids=["interpreted", "codegen"])
def codegen(request, options, monkeypatch, tmp_path_factory):
    """Fused kernels interpreted, or generated as C and compiled (every size; a disk cache for the session):
    yields ``ran()``, whether the evaluations since the start ran the kernels the parameter asks for (generated
    ones only with codegen on the CPU when a compiler is found; none otherwise)."""
    from tapeflow.core import fusion
    from tapeflow.kernels import codegen as cg

    monkeypatch.setattr(fusion, "CODEGEN_MIN_SIZE", 0)
    monkeypatch.setenv("TAPEFLOW_KERNEL_CACHE", str(tmp_path_factory.getbasetemp() / "kernels"))
    options({"fusion_codegen": request.param})
    before = _gen_calls()
    expect = request.param and ON_CPU and cg.compiler() is not None
    yield lambda: (_gen_calls() > before) == expect


def _gen_calls():
    from tapeflow import kernels

    return kernels.get_backend("cpu").lib.tpfgen_calls()


def _ops(cf):
    return [st[6].prim.name for st in cf._plan.steps]


def _both(fn, *args):
    """``fn`` compiled with fusion and without: the flat outputs of each, and the fused concrete function."""
    specs = [tf.TensorSpec(a.shape, a.dtype) for a in args]
    tf.config.optimizer.set_experimental_options({"elementwise_fusion": True})
    fused = tf.function(fn).get_concrete_function(*specs)
    tf.config.optimizer.set_experimental_options({"elementwise_fusion": False})
    plain = tf.function(fn).get_concrete_function(*specs)
    tf.config.optimizer.set_experimental_options({"elementwise_fusion": True})
    a, b = tf.nest.flatten(fused(*args)), tf.nest.flatten(plain(*args))
    return [t.numpy() for t in a], [t.numpy() for t in b], fused


def _assert_same(got, want, dtype):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if ON_CPU or g.dtype == np.bool_:
            assert g.tobytes() == w.tobytes()  # bit for bit (NaNs and signed zeros included)
        else:  # within 1 ulp
            np.testing.assert_array_max_ulp(g, w, maxulp=1)


CHAINS = {
    "issue": lambda x: tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x) - tf.exp(-x * x),
    "unary": lambda x: tf.math.log1p(tf.abs(tf.sin(tf.cos(x)))) + tf.sqrt(tf.square(x) + 1.0),
    "activations": lambda x: tf.nn.gelu(tf.nn.silu(x)) + tf.nn.leaky_relu(x, 0.3) + tf.nn.gelu(x, approximate=True)
    + tf.nn.softplus(x) - tf.nn.relu6(x * 3.0),
    "scalars_left": lambda x: 2.0 - 3.0 / (1.0 + tf.exp(-x)) + tf.maximum(0.5, x) * tf.minimum(x, -0.25),
    "shared": lambda x: (lambda e: (e * e + e) / (1.0 + e))(tf.exp(tf.tanh(x))),
    "compare_select": lambda x: tf.where(x > 0.25, tf.exp(x), x * x - 1.0) + tf.cast(tf.equal(x, x), x.dtype),
    "special": lambda x: tf.math.floormod(x * 7.0, 3.0) + tf.math.atan2(x, 2.0) + tf.math.pow(tf.abs(x), 0.5)
    + tf.math.erf(x) + tf.math.lgamma(tf.abs(x) + 1.0),
}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("n", [1, 1000, 1025, 70001])  # one tile, several, threads (>= 32768 elements)
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_fused_chains_equal_unfused(codegen, name, n, dtype):
    rng = seeded_rng(f"fusion-{name}-{n}")
    v = rng.normal(size=n) * 2
    v[: min(n, 4)] = [0.0, -0.0, np.nan, np.inf][: min(n, 4)] if n > 1 else [0.5]
    x = tf.constant(v, dtype)
    got, want, cf = _both(CHAINS[name], x)
    assert _ops(cf).count("fused_elementwise") == 1, _ops(cf)
    _assert_same(got, want, dtype)
    assert codegen()


def test_several_outputs_and_intermediates_used_outside(codegen):
    def f(x, y):
        a = x * y + 1.0
        b = tf.tanh(a)
        m = tf.matmul(tf.reshape(a, [4, 8]), tf.ones([8, 2]))  # a is also used by a matmul
        return b * 2.0, a - y, m

    x, y = tf.random.normal([32], seed=1), tf.random.normal([32], seed=2)
    got, want, cf = _both(f, x, y)
    _assert_same(got, want, tf.float32)
    fused = [n for n in cf.graph.nodes if n.prim.name == "fused_elementwise"]
    assert len(fused) == 1 and len(fused[0].outputs) == 3  # a, b * 2 and a - y: one kernel, three outputs
    assert codegen()


def test_casts_between_float_types_fuse(codegen):
    def f(x):
        y = tf.cast(tf.exp(x), tf.float64) * 3.0
        return tf.cast(tf.sqrt(y + 1.0), tf.float32) - x

    x = tf.constant(seeded_rng("cast").normal(size=2049), tf.float32)
    got, want, cf = _both(f, x)
    assert _ops(cf) == ["fused_elementwise"]
    _assert_same(got, want, tf.float32)
    assert codegen()


def test_no_cycle_through_an_unfused_op(options):
    # a feeds a reduction whose result feeds c: a and c cannot be one kernel (c needs the sum of a)
    def f(x):
        a = tf.exp(x) + 1.0
        s = tf.reduce_sum(a)
        return tf.tanh(a) * s - a

    x = tf.random.normal([100], seed=3)
    got, want, cf = _both(f, x)
    _assert_same(got, want, tf.float32)
    # the sum ends a's kernel; the kernel that uses it comes after
    assert _ops(cf) == ["fused_elementwise", "fused_elementwise"]
    assert "reduce_sum(" in cf.fused_kernels()[0]["program"]


REDUCTIONS = {"sum": tf.reduce_sum, "mean": tf.reduce_mean, "max": tf.reduce_max, "min": tf.reduce_min,
              "prod": tf.reduce_prod}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("n", [0, 1, 127, 128, 1000, 1025, 70001, 300007])  # lanes or not, tiles, threads
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reductions_end_a_fused_kernel_bit_for_bit(codegen, op, n, dtype):
    red = REDUCTIONS[op]

    def f(x):
        return red(tf.tanh(x * 0.5 + 0.25) * 1.5 + 0.75)

    x = tf.constant(seeded_rng(f"red{n}").standard_normal(n), dtype)
    got, want, cf = _both(f, x)
    _assert_same(got, want, dtype)
    assert _ops(cf) == ["fused_elementwise"] and cf.fused_kernels()[0]["outputs"] == [f"{dtype.name}[]"]
    assert codegen()


def test_reductions_keepdims_nan_and_an_output_also_reduced(options):
    def f(x):
        y = tf.exp(x) - 1.0
        return y, tf.reduce_sum(y, axis=[0, 1], keepdims=True), tf.reduce_max(y * 2.0), tf.reduce_min(y, axis=[1, 0])

    v = seeded_rng("red-keepdims").standard_normal((300, 257)).astype(np.float32)
    v[17, 3] = np.nan
    got, want, cf = _both(f, tf.constant(v))
    _assert_same(got, want, tf.float32)
    assert _ops(cf) == ["fused_elementwise"]
    assert [g.shape for g in got] == [(300, 257), (1, 1), (), ()] and np.isnan(got[2])


def test_partial_reductions_stay_unfused(options):
    got, want, cf = _both(lambda x: tf.reduce_sum(tf.exp(x) * 2.0, axis=1), tf.random.normal([4, 5], seed=2))
    _assert_same(got, want, tf.float32)
    assert _ops(cf) == ["fused_elementwise", "reduce_sum"]


def test_no_cycle_through_another_group(options):
    # x1 -> x2 is a scalar group, y1 + y2 a vector group; x1 feeds y1 and y2 feeds x2 through a sum: fusing
    # y2 into y1's group would make the two groups need each other
    def f(v, s):
        x1 = tf.exp(s)
        y1 = v * x1
        y2 = tf.tanh(v)
        x2 = x1 + tf.reduce_sum(y2)
        return y1 + y2, x2 * 2.0

    got, want, cf = _both(f, tf.random.normal([50], seed=7), tf.constant(0.5))
    _assert_same(got, want, tf.float32)


def test_variable_reads_and_updates_keep_their_order(options):
    v = tf.Variable(tf.ones([8]))

    def step(x):
        a = tf.exp(x)
        v.assign_add(a)  # the update needs a; the read after it must see it
        r = v.read_value()
        return tf.tanh(a * r)

    x = tf.random.normal([8], seed=8)
    want = step(x).numpy()  # eagerly: v = 1 + exp(x)
    v.assign(tf.ones([8]))
    f = tf.function(step)
    got = f(x).numpy()
    assert got.tobytes() == want.tobytes()
    np.testing.assert_array_equal(v.numpy(), (1.0 + tf.exp(x)).numpy())  # tapeflow's exp (NumPy's may differ by an ulp)


def test_long_chains_are_cut_into_kernels_of_at_most_max_group_nodes(options):
    from tapeflow.core.fusion import MAX_GROUP

    def f(x):
        for _ in range(MAX_GROUP + 100):
            x = x * 0.999 + 0.001
        return x

    got, want, cf = _both(f, tf.random.normal([64], seed=9))
    _assert_same(got, want, tf.float32)
    sizes = [len(n.attrs["nodes"]) for n in cf.graph.nodes if n.prim.name == "fused_elementwise"]
    total = 2 * (MAX_GROUP + 100)  # a multiply and an add a step
    assert max(sizes) <= MAX_GROUP and sum(sizes) == total and len(sizes) == -(-total // MAX_GROUP)


def test_broadcasts_and_other_dtypes_stay_unfused(options):
    f = tf.function(lambda x, b: tf.nn.relu(x + b) * 2.0)  # x [3, 4] + b [3, 1]: a broadcast of a column
    cf = f.get_concrete_function(tf.TensorSpec([3, 4]), tf.TensorSpec([3, 1]))
    assert _ops(cf) == ["add", "fused_elementwise"]  # relu and * 2.0 fuse, the broadcast add does not
    g = tf.function(lambda i: (i * 2 + 1) * 3)
    assert "fused_elementwise" not in _ops(g.get_concrete_function(tf.TensorSpec([5], tf.int32)))
    h = tf.function(lambda x: tf.exp(x) + 1.0)
    assert _ops(h.get_concrete_function(tf.TensorSpec([5], tf.float16))) == ["exp", "add"]


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("shape", [(3, 4), (300, 257), (2, 70, 513)])  # one tile; tiles and threads; rank 3
def test_a_bias_broadcast_over_leading_dimensions_fuses_after_a_matmul(codegen, shape, dtype):
    # the matmul's epilogue: bias + activation (and more) in one pass over the product
    def f(a, w, b, c):
        return tf.nn.gelu(tf.matmul(a, w) + b) * c - 0.5

    rng = seeded_rng(f"bias{shape}")
    a = tf.constant(rng.standard_normal(shape[:-1] + (8,)), dtype)
    w = tf.constant(rng.standard_normal((8, shape[-1])), dtype)
    b = tf.constant(rng.standard_normal(shape[-1]), dtype)
    c = tf.constant(rng.standard_normal((1,) + shape[1:]), dtype)  # a leading 1, then the last dimensions
    got, want, cf = _both(f, a, w, b, c)
    _assert_same(got, want, dtype)
    assert _ops(cf) == ["matmul", "fused_elementwise"]
    assert cf.fused_kernels()[0]["inputs"][1:3] == [f"{dtype.name}[{shape[-1]}]",
                                                    f"{dtype.name}[1,{','.join(map(str, shape[1:]))}]"]
    assert codegen()


def test_switched_off_and_single_ops_stay(options):
    f = tf.function(lambda x: tf.exp(x) * 2.0)
    assert _ops(f.get_concrete_function(tf.TensorSpec([3]))) == ["fused_elementwise"]
    assert _ops(tf.function(lambda x: tf.exp(x)).get_concrete_function(tf.TensorSpec([3]))) == ["exp"]
    options({"elementwise_fusion": False})
    assert _ops(tf.function(lambda x: tf.exp(x) * 2.0).get_concrete_function(tf.TensorSpec([3]))) == \
        ["exp", "multiply"]
    assert tf.config.optimizer.get_experimental_options()["elementwise_fusion"] is False


def test_unknown_dimensions_fuse_and_broadcast_at_run_time(options):
    f = tf.function(lambda x, y: tf.tanh(x * y) + x)
    cf = f.get_concrete_function(tf.TensorSpec([None]), tf.TensorSpec([None]))
    assert _ops(cf) == ["fused_elementwise"]
    x = tf.random.normal([6], seed=4)
    for y in (tf.random.normal([6], seed=5), tf.constant([3.0])):  # equal shapes, then a (1,) that broadcasts
        np.testing.assert_array_equal(cf(x, y).numpy(), (tf.tanh(x * y) + x).numpy())


def test_graph_prints_the_program_and_fused_kernels_lists_it():
    f = tf.function(lambda x: tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x))
    cf = f.get_concrete_function(tf.TensorSpec([8]))
    text = str(cf.graph)
    assert "fused_elementwise[multiply(tanh(add(multiply(%x, 2.0), 1.0)), sigmoid(%x))](%x" in text
    (k,) = cf.fused_kernels()
    assert k["program"] == "multiply(tanh(add(multiply(x, 2.0), 1.0)), sigmoid(x))"
    assert k["outputs"] == ["float32[8]"]
    if not ON_CPU:
        assert "tanh" in k["source"] and ("__kernel" in k["source"] or "__global__" in k["source"])
    shared = tf.function(lambda x: (lambda e: e * e)(tf.exp(x) + 1.0)).get_concrete_function(tf.TensorSpec([2]))
    assert shared.fused_kernels()[0]["program"] == "t3 = add(exp(x), 1.0); multiply(t3, t3)"


def test_gradients_through_fused_functions_equal_eager():
    x = tf.Variable(tf.random.normal([300], seed=6, dtype=tf.float64))

    def loss(v):
        return tf.reduce_sum(tf.tanh(v * 2.0 + 1.0) * tf.sigmoid(v) - tf.exp(-v * v))

    f = tf.function(loss)
    assert "fused_elementwise" in _ops(f.get_concrete_function(x))
    with tf.GradientTape() as tape:  # the tape outside: the unfused plan runs and each op is recorded
        y = f(x)
    g = tape.gradient(y, x)
    with tf.GradientTape() as tape:
        y0 = loss(x)
    g0 = tape.gradient(y0, x)
    assert y.numpy() == y0.numpy()
    np.testing.assert_array_equal(g.numpy(), g0.numpy())

    @tf.function
    def inside(v):  # the tape inside: the gradient's ops are traced and fused too
        with tf.GradientTape() as t:
            t.watch(v)
            z = loss(v)
        return t.gradient(z, v)

    ops = _ops(inside.get_concrete_function(x.read_value()))
    assert ops.count("fused_elementwise") >= 1
    np.testing.assert_allclose(inside(x.read_value()).numpy(), g0.numpy(), rtol=1e-14, atol=1e-15)


def test_jit_compile_fuses_everything_or_names_the_op():
    f = tf.function(lambda x: tf.exp(x), jit_compile=True)  # one op: a kernel of its own
    cf = f.get_concrete_function(tf.TensorSpec([4]))
    assert _ops(cf) == ["fused_elementwise"]
    x = tf.constant([0.0, 1.0, -1.0, 2.0])
    np.testing.assert_array_equal(f(x).numpy(), tf.exp(x).numpy())
    ok = tf.function(lambda x: tf.reduce_sum(tf.exp(x) * 2.0), jit_compile=True)  # a reduction is fine
    assert ok(x).numpy() == pytest.approx(float(tf.reduce_sum(tf.exp(x) * 2.0)))
    bad = tf.function(lambda x, b: tf.exp(x + b), jit_compile=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"AddV2 \(add\).*broadcasts \(3, 1\) to \(3, 4\)"):
        bad(tf.ones([3, 4]), tf.ones([3, 1]))
    ints = tf.function(lambda i: i * 2, jit_compile=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Mul.*int32 has no fused loop"):
        ints(tf.constant([1, 2]))


@pytest.mark.skipif(ON_CPU, reason="generated kernels are built on a GPU backend (the CPU interprets the program)")
def test_generated_kernels_are_built_once_per_program(options, monkeypatch):
    x = tf.random.normal([300], seed=11)
    be = x._dev.backend
    builds = []
    real = be._fused_build_cuda if hasattr(be, "nvrtc") else be._fused_build_opencl
    monkeypatch.setattr(be, "_fused_build_cuda" if hasattr(be, "nvrtc") else "_fused_build_opencl",
                        lambda src: builds.append(src) or real(src))
    f = tf.function(lambda x: tf.reduce_sum(tf.exp(x) * 3.25 - 1.0))
    f(x)
    f(x)
    f(tf.random.normal([300], seed=12))
    tf.function(lambda x: tf.reduce_sum(tf.exp(x) * 3.25 - 1.0))(x)  # another function, the same program
    assert len(builds) == 1


def test_sample_fused_kernel_sources_for_the_offline_compiler():
    from tapeflow.kernels import gpu_fused

    srcs = gpu_fused.sample_sources()
    assert len(srcs) == 4
    for name, src in srcs.items():
        assert f"KERNEL {name}(" in src and "out0[i] = " in src
    assert "in1[0]" in srcs["issue_chain_f32"] and "TPF_X_TANH" in srcs["issue_chain_f32"].upper()


@pytest.mark.skipif(not ON_CPU, reason="generated C kernels are the CPU's (a GPU builds its own, tested above)")
def test_codegen_falls_back_to_the_interpreter_without_a_compiler(options, monkeypatch, tmp_path):
    from tapeflow.core import fusion
    from tapeflow.kernels import codegen as cg

    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("TAPEFLOW_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.setattr(fusion, "CODEGEN_MIN_SIZE", 0)
    options({"fusion_codegen": True})
    assert cg.compiler() is None
    failed, before = cg.stats["failed"], _gen_calls()
    x = tf.constant(seeded_rng("no-cc").normal(size=5000), tf.float32)
    got, want, _ = _both(lambda x: tf.nn.softsign(x) * tf.nn.relu6(x * 1.75) - 0.125, x)  # a program of its own
    _assert_same(got, want, tf.float32)
    assert cg.stats["failed"] > failed and _gen_calls() == before  # interpreted
    assert not (tmp_path / "kernels").exists() or not list((tmp_path / "kernels").iterdir())


@pytest.mark.skipif(not ON_CPU, reason="generated C kernels are the CPU's")
def test_codegen_caches_compiled_kernels_on_disk_and_can_be_switched_off(options, monkeypatch, tmp_path):
    from tapeflow.core import fusion
    from tapeflow.kernels import codegen as cg

    if cg.compiler() is None:
        pytest.skip("no GCC here: the interpreter runs (test_codegen_falls_back_... covers it)")
    monkeypatch.delenv("TAPEFLOW_KERNEL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    src = cg.kernel_source([0, 8, 3, 1, 0, 0, 0], 2, [3, 3], [0], 1, [1], [], "tpfgen_cache_test")
    compiled, cached = cg.stats["compiled"], cg.stats["cached"]
    addr = cg.build(src, "tpfgen_cache_test")
    files = list((tmp_path / "tapeflow" / "kernels").iterdir())
    assert addr and [f.suffix for f in files] == [".so"] and cg.stats["compiled"] == compiled + 1  # no temp left
    cg._LOADED.pop(str(files[0]))  # a new process: found on disk, not compiled again
    assert cg.build(src, "tpfgen_cache_test") and cg.stats["compiled"] == compiled + 1
    assert cg.stats["cached"] == cached + 1
    assert cg.build(src.replace("log", "log "), "tpfgen_cache_test")  # another source: another file
    assert len(list((tmp_path / "tapeflow" / "kernels").iterdir())) == 2

    # switched off: the same program interpreted, the same values
    monkeypatch.setattr(fusion, "CODEGEN_MIN_SIZE", 0)
    f = tf.function(lambda x: tf.exp(tf.sin(x) * 0.375) - x)
    x = tf.constant(seeded_rng("switch").normal(size=3000), tf.float64)
    before = _gen_calls()
    on = f(x).numpy()
    assert _gen_calls() == before + 1
    src = f.get_concrete_function(x).fused_kernels()[0]["source"]  # the generated C, to read
    assert "TPF_X_SIN(" in src and "for (int64_t i = 0; i < m; i++)" in src
    options({"fusion_codegen": False})
    off = f(x).numpy()
    assert _gen_calls() == before + 1 and on.tobytes() == off.tobytes()
    assert tf.config.optimizer.get_experimental_options()["fusion_codegen"] is False


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_xent_gradient_is_the_kernels_backprop(options, dtype):
    """softmax(x) - one_hot(y), the traced gradient of a sparse softmax cross-entropy, is one node: the
    cross-entropy kernel's gradient output, bit for bit the ops' (and eager's)."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal([6, 5]).astype(dtype))
    y = tf.constant([0, 4, 1, 3, 2, 2], tf.int64)

    def grad(x, y):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x))
        return tape.gradient(loss, x)

    f = tf.function(grad)
    names = [st[6].prim.name for st in f.get_concrete_function(x, y)._plan.steps]
    if ON_CPU:  # (the rewrite is the CPU kernel's; other devices keep the ops)
        assert "sparse_softmax_xent_backprop" in names and "one_hot" not in names and "softmax" not in names
    got = f(x, y).numpy()
    np.testing.assert_array_equal(got, grad(x, y).numpy())
    if ON_CPU:  # labels out of range: the kernel's error, as eager's (the ops' one-hot gave a zero row)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"labels\[1\] = 7 is not in \[0, 5\)"):
            f(x, tf.constant([0, 7, 1, 3, 2, 2], tf.int64))
    with tf.GradientTape() as tape:  # under a tape the graph runs its ops one by one: second order works
        tape.watch(x)
        s = tf.reduce_sum(f(x, y) ** 2)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        s2 = tf.reduce_sum(grad(x, y) ** 2)
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), tape2.gradient(s2, x).numpy(), rtol=1e-6)
    options({"elementwise_fusion": False})
    g = tf.function(grad)
    assert "one_hot" in [st[6].prim.name for st in g.get_concrete_function(x, y)._plan.steps]
    np.testing.assert_array_equal(g(x, y).numpy(), got)
