"""Each optimizer step equals the update rule written in NumPy and TensorFlow's (Keras 3) step."""
import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

f32 = np.float32


# ---- NumPy references (Keras 3's rules, float32) --------------------------------------------------

def np_sgd(lr, momentum=0.0, nesterov=False, **_):
    def step(w, g, s, t):
        if not momentum:
            return w - g * f32(lr)
        m = s.setdefault("m", np.zeros_like(w))
        m[...] = m * f32(momentum) - g * f32(lr)
        return w + (m * f32(momentum) - g * f32(lr) if nesterov else m)
    return step


def np_adam(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, weight_decay=None, **_):
    def step(w, g, s, t):
        if weight_decay:
            w = w - w * f32(weight_decay) * f32(lr)
        m = s.setdefault("m", np.zeros_like(w))
        v = s.setdefault("v", np.zeros_like(w))
        m += (g - m) * f32(1 - beta_1)
        v += (g * g - v) * f32(1 - beta_2)
        alpha = f32(lr) * np.sqrt(f32(1) - f32(beta_2) ** f32(t)) / (f32(1) - f32(beta_1) ** f32(t))
        if amsgrad:
            vh = s.setdefault("vh", np.zeros_like(w))
            vh[...] = np.maximum(vh, v)
            v = vh
        return w - m * alpha / (np.sqrt(v) + f32(epsilon))
    return step


def np_rmsprop(lr, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **_):
    def step(w, g, s, t):
        v = s.setdefault("v", np.zeros_like(w))
        v[...] = rho * v + (1 - rho) * g * g
        if centered:
            a = s.setdefault("a", np.zeros_like(w))
            a[...] = rho * a + (1 - rho) * g
            denom = v - a * a + f32(epsilon)
        else:
            denom = v + f32(epsilon)
        inc = f32(lr) * g / np.sqrt(denom)
        if momentum:
            m = s.setdefault("m", np.zeros_like(w))
            m[...] = f32(momentum) * m + inc
            return w - m
        return w - inc
    return step


def np_adagrad(lr, initial_accumulator_value=0.1, epsilon=1e-7, **_):
    def step(w, g, s, t):
        acc = s.setdefault("acc", np.full_like(w, initial_accumulator_value))
        acc += g * g
        return w - f32(lr) * g / np.sqrt(acc + f32(epsilon))
    return step


CASES = [
    ("SGD", {"learning_rate": 0.1}, np_sgd),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9}, np_sgd),
    ("SGD", {"learning_rate": 0.05, "momentum": 0.8, "nesterov": True}, np_sgd),
    ("Adam", {"learning_rate": 0.01}, np_adam),
    ("Adam", {"learning_rate": 0.02, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-5, "amsgrad": True}, np_adam),
    ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.1}, np_adam),
    ("RMSprop", {"learning_rate": 0.01}, np_rmsprop),
    ("RMSprop", {"learning_rate": 0.01, "rho": 0.8, "momentum": 0.5, "centered": True}, np_rmsprop),
    ("Adagrad", {"learning_rate": 0.1}, np_adagrad),
    ("Adagrad", {"learning_rate": 0.3, "initial_accumulator_value": 0.5, "epsilon": 1e-4}, np_adagrad),
]


def _np_lr_kwargs(cfg):
    out = dict(cfg)
    out["lr"] = out.pop("learning_rate")
    return out


@pytest.mark.parametrize("name,cfg,ref", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_steps_equal_numpy_rule_and_tensorflow(name, cfg, ref, rng):
    w0 = rng.normal(size=(3, 4)).astype(f32)
    grads = [rng.normal(size=(3, 4)).astype(f32) for _ in range(6)]
    # tapeflow
    v = tf.Variable(w0)
    opt = getattr(tf.optimizers, name)(**cfg)
    ours = []
    for g in grads:
        opt.apply_gradients([(tf.constant(g), v)])
        ours.append(v.numpy().copy())
    assert int(opt.iterations) == len(grads)
    # the rule in NumPy
    step, state, w = ref(**_np_lr_kwargs(cfg)), {}, w0.copy()
    for t, (g, got) in enumerate(zip(grads, ours), 1):
        w = step(w, g, state, t)
        np.testing.assert_allclose(got, w, rtol=2e-6, atol=1e-7, err_msg=f"step {t}")
    # TensorFlow
    tensorflow = tf_or_none()
    if tensorflow is not None:
        tv = tensorflow.Variable(w0)
        topt = getattr(tensorflow.keras.optimizers, name)(**cfg)
        for t, (g, got) in enumerate(zip(grads, ours), 1):
            topt.apply_gradients([(tensorflow.constant(g), tv)])
            np.testing.assert_allclose(got, tv.numpy(), rtol=2e-6, atol=1e-7, err_msg=f"step {t} vs TF")


CLIP = [
    ("SGD", {"learning_rate": 0.1, "clipnorm": 1.0}),
    ("Adam", {"learning_rate": 0.01, "clipvalue": 0.3}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.5, "global_clipnorm": 0.5}),
]


@pytest.mark.parametrize("name,cfg", CLIP, ids=["clipnorm", "clipvalue", "global_clipnorm"])
def test_gradient_clipping_equals_tensorflow(name, cfg, rng):
    ws = [rng.normal(size=(3, 4)).astype(f32), rng.normal(size=(5,)).astype(f32)]
    steps = [[3 * rng.normal(size=w.shape).astype(f32) for w in ws] for _ in range(3)]
    vs = [tf.Variable(w) for w in ws]
    opt = getattr(tf.optimizers, name)(**cfg)
    for gs in steps:
        opt.apply_gradients(zip([tf.constant(g) for g in gs], vs))
    # NumPy: clip, then the plain rule
    clipped = []
    for gs in steps:
        if "clipnorm" in cfg:
            gs = [g * f32(cfg["clipnorm"]) / max(np.sqrt((g * g).sum()), f32(cfg["clipnorm"])) for g in gs]
        elif "clipvalue" in cfg:
            gs = [np.clip(g, -cfg["clipvalue"], cfg["clipvalue"]) for g in gs]
        else:
            norm = np.sqrt(sum((g * g).sum() for g in gs))
            gs = [g * f32(cfg["global_clipnorm"]) * min(1 / norm, 1 / f32(cfg["global_clipnorm"])) for g in gs]
        clipped.append(gs)
    plain = {k: v for k, v in cfg.items() if k not in ("clipnorm", "clipvalue", "global_clipnorm")}
    ref = {"SGD": np_sgd, "Adam": np_adam}[name](**_np_lr_kwargs(plain))
    for i, w in enumerate(ws):
        state, x = {}, w.copy()
        for t, gs in enumerate(clipped, 1):
            x = ref(x, gs[i], state, t)
        np.testing.assert_allclose(vs[i].numpy(), x, rtol=2e-6, atol=1e-6)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        tvs = [tensorflow.Variable(w) for w in ws]
        topt = getattr(tensorflow.keras.optimizers, name)(**cfg)
        for gs in steps:
            topt.apply_gradients(zip([tensorflow.constant(g) for g in gs], tvs))
        for v, tv in zip(vs, tvs):
            np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=2e-6, atol=1e-6)


SCHEDULES = [
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.5}),
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.5, "staircase": True}),
    ("PiecewiseConstantDecay", {"boundaries": [2, 4], "values": [0.1, 0.05, 0.01]}),
    ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.3}),
    ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 4, "end_learning_rate": 0.01, "power": 2.0}),
    ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 5, "alpha": 0.1}),
    ("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 5, "warmup_target": 0.1, "warmup_steps": 3}),
]


@pytest.mark.parametrize("name,cfg", SCHEDULES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SCHEDULES)])
def test_schedules_equal_keras_and_drive_the_optimizer(name, cfg, rng):
    sched = getattr(tf.optimizers.schedules, name)(**cfg)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        ks = getattr(tensorflow.keras.optimizers.schedules, name)(**cfg)
        for step in range(12):
            np.testing.assert_allclose(sched(step), float(ks(step)), rtol=1e-6, atol=1e-9)
    # the optimizer uses the rate at its step count before each update
    w0 = rng.normal(size=(4,)).astype(f32)
    v = tf.Variable(w0)
    opt = tf.optimizers.SGD(learning_rate=sched)
    w = w0.copy()
    for t in range(8):
        g = rng.normal(size=(4,)).astype(f32)
        assert opt.learning_rate == pytest.approx(sched(t))
        opt.apply_gradients([(tf.constant(g), v)])
        w = w - g * f32(sched(t))
        np.testing.assert_allclose(v.numpy(), w, rtol=1e-6, atol=1e-7)


def test_state_lives_in_variables_and_iterations_counts():
    v = tf.Variable([1.0, 2.0])
    opt = tf.optimizers.Adam(0.1)
    opt.apply_gradients([(tf.constant([0.5, -0.5]), v)])
    slots = opt.variables
    assert len(slots) == 3 and all(isinstance(s, tf.Variable) for s in slots)
    np.testing.assert_allclose(opt.get_slot(v, "momentum").numpy(), [0.05, -0.05], rtol=1e-6)
    assert opt.iterations.dtype == tf.int64 and int(opt.iterations) == 1
    assert not any(s.trainable for s in slots)


def test_none_gradients_are_skipped_but_all_none_is_an_error():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    opt = tf.optimizers.SGD(0.5)
    opt.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert float(a) == 0.5 and float(b) == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="no gradients provided"):
        opt.apply_gradients([(None, a), (None, b)])


def test_gradient_shape_mismatch_is_a_clear_error():
    v = tf.Variable(tf.zeros([3]))
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.optimizers.SGD(0.1).apply_gradients([(tf.zeros([4]), v)])
    assert "shape (4,)" in str(e.value) and "(3,)" in str(e.value) and str(e.value).endswith("[Op:ApplyGradients]")


def test_minimize_with_function_and_global_step():
    x = tf.Variable(3.0)
    step = tf.Variable(np.int64(0), trainable=False)
    opt = tf.optimizers.SGD(0.1)
    for _ in range(100):
        loss = opt.minimize(lambda: (x - 1.0) * (x - 1.0), global_step=step)
    assert abs(float(x) - 1.0) < 1e-4 and float(loss) < 1e-7
    assert int(step) == 100 and int(opt.iterations) == 100
    # with an explicit var_list and a tape
    y = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        value = y * y
    tf.optimizers.SGD(0.25).minimize(value, var_list=[y], tape=tape)
    assert float(y) == 1.0


def test_learning_rate_is_settable_and_constraints_apply():
    v = tf.Variable([1.0, -1.0])
    v.constraint = lambda w: tf.maximum(w, 0.0)
    opt = tf.optimizers.SGD(0.1)
    opt.learning_rate = 0.5
    opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [0.5, 0.0])


def test_get_and_errors():
    assert isinstance(tf.optimizers.get("rmsprop"), tf.optimizers.RMSprop)
    with pytest.raises(ValueError, match="unknown optimizer"):
        tf.optimizers.get("adamax2")
    with pytest.raises(ValueError, match="momentum"):
        tf.optimizers.SGD(momentum=1.5)
    assert tf.train.GradientDescentOptimizer(0.1).learning_rate == pytest.approx(0.1)
