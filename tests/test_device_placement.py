"""Device placement with an accelerator present (DESIGN.md section 3, issue 6).

Scopes, implicit copies of inputs, moves (``to``, ``cpu``, ``gpu``), the process
default from ``TAPEFLOW_DEVICE``, variables living on one device, asynchronous
values, and typed, precise device errors.  The accelerator is the first backend
present of OpenCL and CUDA; a machine with neither skips, saying so (the CPU-only
behaviour is tested in packages/core/tests/test_devices.py).

``gpu`` means a GPU: CUDA devices, then OpenCL devices of GPU type.  pocl's
OpenCL device is a CPU, so where it is the only accelerator, ``gpu`` falls back to
``cpu:0`` (soft placement) rather than onto it, as TensorFlow would.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
import tapeflow as tf
import tapeflow.kernels as K
from tapeflow.core import devices


def _accelerator():
    for kind in ("cuda", "opencl"):
        try:
            be = K.get_backend(kind)
        except Exception:  # noqa: BLE001, S112 - not registered, no driver, no device: not an accelerator here
            continue
        return f"{kind}:0", be
    return None, None


ACCEL, BACKEND = _accelerator()
pytestmark = pytest.mark.skipif(ACCEL is None, reason="this machine has no accelerator backend (OpenCL or CUDA)")
KIND = ACCEL.split(":")[0] if ACCEL else None



def _gpu_devices():
    """The GPUs among the accelerators, by the backends' own device types."""
    found = []
    for kind in ("cuda", "opencl"):
        try:
            be = K.get_backend(kind)
        except Exception:  # noqa: BLE001, S112 - no such backend here
            continue
        found += [f"{kind}:{i}" for i, t in enumerate(be.device_types()) if t == "gpu"]
    return found


# ---- names, listing, scopes ---------------------------------------------------------------

def test_the_accelerator_is_listed_after_the_cpu():
    names = [d.name for d in tf.config.list_devices()]
    assert names[0] == "cpu:0" and ACCEL in names
    assert ACCEL in devices.accelerators()
    assert [d.name for d in tf.config.list_physical_devices(KIND)] == [n for n in names if n.startswith(KIND)]


def test_tensorflow_spellings_name_the_accelerator():
    for spec in (ACCEL, f"/{ACCEL}", f"/device:{KIND.upper()}:0", f"/job:localhost/replica:0/task:0/device:{ACCEL}"):
        with tf.device(spec):
            assert tf.constant(1.0).device == ACCEL


def test_ops_run_on_the_scope_device_and_scopes_nest():
    with tf.device(ACCEL):
        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        b = tf.matmul(a, a) + 1
        with tf.device("cpu:0"):
            c = b * 2                      # b is copied to the CPU for this op
            assert devices.current().name == "cpu:0"
        with tf.device(None):
            assert devices.current() is None
        d = tf.exp(b)
    assert (a.device, b.device, c.device, d.device) == (ACCEL, ACCEL, "cpu:0", ACCEL)
    assert b.numpy().tolist() == [[8.0, 11.0], [16.0, 23.0]] and c.numpy().tolist() == [[16.0, 22.0], [32.0, 46.0]]
    assert devices.current() is None


def _op_zoo(x, i):
    return {
        "add": lambda: x + 1, "exp": lambda: tf.exp(x), "reduce_sum": lambda: tf.reduce_sum(x),
        "reduce_max": lambda: tf.reduce_max(x, axis=0), "argmax": lambda: tf.argmax(x, axis=1),
        "matmul": lambda: tf.matmul(x, x), "cast": lambda: tf.cast(x, tf.int32),
        "transpose": lambda: tf.transpose(x), "reshape": lambda: tf.reshape(x, [4]),
        "expand_dims": lambda: tf.expand_dims(x, 0), "identity": lambda: tf.identity(x),
        "slice": lambda: x[:, 1], "concat": lambda: tf.concat([x, x], 0), "stack": lambda: tf.stack([x, x]),
        "split": lambda: tf.split(x, 2)[0], "tile": lambda: tf.tile(x, [2, 1]),
        "pad": lambda: tf.pad(x, [[1, 1], [0, 0]]), "gather": lambda: tf.gather(x, i),
        "one_hot": lambda: tf.one_hot(i, 3), "where": lambda: tf.where(x > 1),
        "select": lambda: tf.where(x > 1, x, -x), "sort": lambda: tf.sort(x), "top_k": lambda: tf.math.top_k(x, 1)[0],
        "cumsum": lambda: tf.cumsum(x), "softmax": lambda: tf.nn.softmax(x), "zeros_like": lambda: tf.zeros_like(x),
        "clip": lambda: tf.clip_by_value(x, 0.0, 2.0), "broadcast_to": lambda: tf.broadcast_to(x[0], [2, 2]),
        "conv2d": lambda: tf.nn.conv2d(tf.reshape(x, [1, 2, 2, 1]), tf.ones([1, 1, 1, 1]), 1, "SAME"),
    }


def test_every_op_runs_on_the_scope_device_whatever_its_inputs():
    """DESIGN: an op runs on the device of the innermost scope, its inputs copied there."""
    misplaced = []
    for here, there in ((ACCEL, "cpu:0"), ("cpu:0", ACCEL)):
        with tf.device(there):
            x, i = tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1, 0])
        with tf.device(here):
            for name, op in _op_zoo(x, i).items():
                out = op()
                if out.device != here:
                    misplaced.append(f"{name} ran on {out.device} inside tf.device({here!r})")
                assert np.asarray(out.numpy()).size >= 0
    assert not misplaced, "ops that ran on their input's device instead of the scope's: " + "; ".join(misplaced)


def test_scopes_are_per_thread():
    seen = {}

    def worker():
        seen["scope"] = devices.current()
        seen["device"] = tf.constant(1.0).device

    with tf.device(ACCEL):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert tf.constant(1.0).device == ACCEL
    assert seen["scope"] is None and seen["device"] == devices.default_device().name


# ---- implicit copies ---------------------------------------------------------------------------

def test_inputs_living_elsewhere_are_copied_to_the_op_device():
    with tf.device("cpu:0"):
        x = tf.constant([1.0, 2.0, 3.0])
    with tf.device(ACCEL):
        y = tf.constant([10.0, 20.0, 30.0])
        z = x + y                                   # x copied to the accelerator
        g = tf.gather(x, tf.constant([2, 0]))       # both inputs from elsewhere or here
    assert z.device == ACCEL and z.numpy().tolist() == [11.0, 22.0, 33.0]
    assert g.device == ACCEL and g.numpy().tolist() == [3.0, 1.0]
    assert x.device == "cpu:0"                      # the input itself stays where it was


def test_without_a_scope_an_op_runs_on_its_first_inputs_device():
    with tf.device("cpu:0"):
        c = tf.constant([1.0, 2.0])
    a = c.to(ACCEL)
    assert (a + c).device == ACCEL and (c + a).device == "cpu:0"
    assert tf.concat([a, c], 0).device == ACCEL
    assert tf.matmul(tf.reshape(c, [1, 2]), tf.reshape(a, [2, 1])).device == "cpu:0"


# ---- moves ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32",
                                   "int64", "bool"])
def test_to_and_cpu_round_trip_every_dtype_exactly(dtype):
    rng = np.random.default_rng(0)
    with tf.device("cpu:0"):
        x = tf.cast(tf.constant(rng.uniform(-50, 50, (3, 4))), dtype)
    on = x.to(ACCEL)
    assert on.device == ACCEL and on.dtype == x.dtype and on.shape == x.shape
    assert on.to(ACCEL) is on and on.to(f"/{ACCEL}") is on
    back = on.cpu()
    assert back.device == "cpu:0"
    assert np.asarray(back.numpy()).tobytes() == np.asarray(x.numpy()).tobytes()
    assert np.asarray(on.numpy()).tobytes() == np.asarray(x.numpy()).tobytes()   # numpy() reads the device


def test_empty_and_scalar_tensors_move():
    for shape in [(), (0,), (2, 0, 3)]:
        with tf.device("cpu:0"):
            x = tf.zeros(shape)
        on = x.to(ACCEL)
        assert on.shape == shape and on.device == ACCEL and on.cpu().shape == shape


def test_gpu_means_a_gpu():
    gpus = _gpu_devices()
    with tf.device("cpu:0"):
        x = tf.constant([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # soft placement, where there is no GPU
        moved = x.gpu()
        with tf.device("/device:GPU:0"):
            y = tf.constant(1.0)
    want = gpus[0] if gpus else "cpu:0"
    assert devices.gpus() == gpus
    assert moved.device == want and y.device == want
    # listing agrees with placement: "GPU" lists exactly these; a CPU-type OpenCL device is listed as OpenCL
    assert [d.name for d in tf.config.list_physical_devices("GPU")] == gpus
    assert all(d.device_type == "GPU" for d in tf.config.list_physical_devices("GPU"))
    others = [d for d in tf.config.list_physical_devices("OpenCL") if d.name not in gpus]
    assert all(d.device_type == "OpenCL" for d in others)


def test_without_a_gpu_gpu_falls_back_to_the_cpu_once_warned_or_raises(monkeypatch):
    if _gpu_devices():
        pytest.skip("this machine has a GPU, so 'gpu' does not fall back")
    monkeypatch.setitem(devices._state, "warned", False)
    for name in [n for n in list(devices._devices) if n.startswith("gpu")]:
        monkeypatch.delitem(devices._devices, name)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with tf.device("gpu:0"):
            a = tf.constant(1.0)
        with tf.device("/gpu:0"):
            b = tf.constant(2.0)
    assert a.device == b.device == "cpu:0"
    assert len([m for m in w if "soft placement" in str(m.message)]) == 1
    tf.config.set_soft_device_placement(False)
    try:
        with pytest.raises(tf.errors.NotFoundError, match="no accelerator is available|no GPU"):
            tf.device("/device:GPU:0")
    finally:
        tf.config.set_soft_device_placement(True)


# ---- the process default ------------------------------------------------------------------------------

def test_TAPEFLOW_DEVICE_sets_the_process_default():
    code = ("import tapeflow as tf\n"
            "x = tf.constant([1.0, 2.0])\n"
            "y = tf.reduce_sum(x * 3) + tf.zeros([])\n"
            "v = tf.Variable(tf.ones([2]))\n"
            "print(x.device, y.device, v.device, float(y))\n"
            "with tf.device('cpu:0'):\n"
            "    print(tf.constant(1).device)\n")
    env = dict(os.environ, TAPEFLOW_DEVICE=f"/device:{KIND.upper()}:0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [ACCEL, ACCEL, ACCEL, "9.0", "cpu:0"]


def test_a_bad_TAPEFLOW_DEVICE_is_a_clear_error():
    env = dict(os.environ, TAPEFLOW_DEVICE=f"{KIND}:9")
    out = subprocess.run([sys.executable, "-c", "import tapeflow as tf; tf.constant(1.0)"], env=env,
                         capture_output=True, text=True, check=False, timeout=300)
    assert out.returncode != 0
    assert f"NotFoundError: device {KIND}:9 is not available here; available: cpu:0, {ACCEL}" in out.stderr


# ---- variables --------------------------------------------------------------------------------------------

def test_a_variable_lives_on_one_device():
    with tf.device(ACCEL):
        v = tf.Variable([1.0, 2.0, 3.0])
    assert v.device == ACCEL
    with tf.device("cpu:0"):
        delta = tf.constant([1.0, 1.0, 1.0])
        v.assign_add(delta)                 # a CPU delta: copied to the variable's device
        r = v * 2                           # read inside a CPU scope: the op runs on the CPU
    assert v.device == ACCEL and r.device == "cpu:0"
    v.assign(tf.constant([0.0, 5.0, 0.0]).cpu())
    v.assign_sub(tf.constant([1.0, 1.0, 1.0]).to(ACCEL))
    assert v.device == ACCEL and v.numpy().tolist() == [-1.0, 4.0, -1.0]
    assert r.numpy().tolist() == [4.0, 6.0, 8.0]


def test_gradients_of_device_variables_live_on_the_device():
    with tf.device(ACCEL):
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
        x = tf.constant([[1.0, 1.0]])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
    g = tape.gradient(loss, w)
    assert loss.device == ACCEL and g.device == ACCEL
    np.testing.assert_allclose(g.numpy(), [[8.0, 12.0], [8.0, 12.0]])


# ---- values are computed asynchronously and read on demand ---------------------------------------------

def test_reading_a_value_waits_for_the_queue():
    with tf.device(ACCEL):
        x = tf.constant(np.arange(1 << 16, dtype=np.float32))
        for _ in range(10):
            x = tf.sqrt(x * x + 1.0)
        total = tf.reduce_sum(x)
        flag = tf.reduce_all(x > 0)
    assert bool(flag) is True                         # __bool__ reads the device
    want = float(np.sum(np.sqrt(np.arange(1 << 16, dtype=np.float64) ** 2 + 10)))
    assert float(total) == pytest.approx(want, rel=1e-6)
    assert "shape=(65536,)" in str(x) and "dtype=float32" in repr(x)


# ---- errors ------------------------------------------------------------------------------------------------

def test_device_errors_are_typed_and_name_the_device():
    with pytest.raises(tf.errors.NotFoundError) as e:
        tf.device(f"{KIND}:7")
    assert f"{KIND}:7" in str(e.value) and "available: cpu:0" in str(e.value) and ACCEL in str(e.value)
    other = "cuda" if KIND == "opencl" else "opencl"
    if not any(d.name.startswith(other) for d in tf.config.list_devices()):
        with pytest.raises(tf.errors.NotFoundError, match=f"{other}:0"):
            tf.device(f"{other}:0")
    with pytest.raises(ValueError, match="unknown device kind 'tpu'"):
        tf.device("tpu:0")


def test_out_of_device_memory_is_a_memory_error_naming_the_device():
    with tf.device(ACCEL), pytest.raises(MemoryError, match=f"{ACCEL} is out of memory: cannot allocate") as e:
        tf.zeros([1 << 40, 1 << 20])
    assert isinstance(e.value, tf.errors.ResourceExhaustedError)


def test_no_op_falls_back_to_the_cpu():
    """Every result of a device op lives on the device: no silent CPU fallback, whatever the op family."""
    with tf.device(ACCEL):
        x = tf.random.normal([4, 6, 6, 3], seed=1)
        w = tf.random.uniform([3, 3, 3, 2], seed=2)
        outs = [tf.nn.conv2d(x, w, 1, "SAME"), tf.nn.max_pool2d(x, 2, 2, "VALID"), tf.sort(x, axis=-1),
                tf.math.top_k(tf.reshape(x, [4, -1]), 3)[1], tf.cumsum(x, axis=1), tf.nn.softmax(x),
                tf.one_hot(tf.constant([0, 2]), 3), tf.where(x > 0), tf.argmax(x, axis=-1), tf.cast(x, tf.bfloat16),
                tf.pad(x, [[0, 0], [1, 1], [0, 0], [0, 0]], mode="REFLECT"), tf.random.shuffle(tf.range(10)),
                tf.linspace(0.0, 1.0, 5), tf.gather_nd(x, [[0, 1], [3, 2]])]
    assert [o.device for o in outs] == [ACCEL] * len(outs)
