"""Object-based checkpoints: save/restore, deferred restore, managers, weights files, atomicity and bad files."""
import os
import pathlib

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


def _model():
    return tf.keras.Sequential([L.Dense(4, activation="relu"), L.BatchNormalization(), L.Dense(2)])


def _values(vs):
    return [np.array(v.numpy()) for v in vs]


def _train(model, opt, x, y, steps=3):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))


def test_save_returns_numbered_prefixes_and_latest_checkpoint(tmp_path):
    v = tf.Variable(1.0)
    ckpt = tf.train.Checkpoint(v=v)
    prefix = str(tmp_path / "ckpt")
    assert ckpt.save(prefix) == prefix + "-1"
    v.assign(2.0)
    assert ckpt.save(prefix) == prefix + "-2"
    assert int(ckpt.save_counter) == 2
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix + "-2"
    assert os.path.exists(prefix + "-2.safetensors")
    ckpt.restore(prefix + "-1").assert_consumed()
    assert float(v) == 1.0 and int(ckpt.save_counter) == 1
    # write() writes exactly one file and does not touch the counter or the state file
    path = ckpt.write(str(tmp_path / "w"))
    assert path == str(tmp_path / "w") and os.path.exists(path + ".safetensors")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix + "-2"


def test_model_and_optimizer_round_trip_continues_identically(tmp_path, rng):
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = rng.normal(size=(8, 2)).astype(np.float32)
    model, opt = _model(), tf.optimizers.Adam(0.01)
    _train(model, opt, x, y)
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "ckpt"))
    keys = [k for k, _ in tf.train.list_variables(path)]
    assert "model/layers/0/kernel" in keys and "optimizer/iterations" in keys
    assert "optimizer/.slots/model/layers/0/kernel/momentum" in keys
    assert "model/layers/1/moving_mean" in keys
    # continue the original for two steps
    _train(model, opt, x, y, steps=2)
    expected = _values(model.variables)
    # a fresh model and optimizer, restored before they have any variables (deferred restore)
    model2, opt2 = _model(), tf.optimizers.Adam(0.01)
    status = tf.train.Checkpoint(model=model2, optimizer=opt2).restore(path)
    assert "model/layers/0/kernel" in status.pending
    _train(model2, opt2, x, y, steps=2)
    assert status.pending == []
    status.assert_consumed()
    assert int(opt2.iterations) == 5
    for a, b in zip(expected, _values(model2.variables)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_restore_into_built_objects_is_immediate_and_reports_mismatches(tmp_path):
    a = L.Dense(3)
    a(tf.ones([1, 2]))
    path = tf.train.Checkpoint(layer=a).write(str(tmp_path / "c"))
    b = L.Dense(3)
    b(tf.ones([1, 2]))
    status = tf.train.Checkpoint(layer=b).restore(path)
    np.testing.assert_array_equal(a.kernel.numpy(), b.kernel.numpy())
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    # a checkpoint that lacks some variables: existing objects not matched
    extra = tf.Variable(5.0)
    status = tf.train.Checkpoint(layer=b, extra=extra).restore(path)
    with pytest.raises(AssertionError, match="extra"):
        status.assert_existing_objects_matched()
    status.expect_partial()
    # values nobody takes: not consumed
    status = tf.train.Checkpoint(other=tf.Variable(1.0)).restore(path)
    with pytest.raises(AssertionError, match="layer/kernel"):
        status.assert_consumed()


def test_mismatched_shapes_raise_and_change_nothing(tmp_path):
    small = tf.keras.Sequential([L.Dense(3, input_shape=(2,)), L.Dense(1)])
    path = str(tmp_path / "w.safetensors")
    small.save_weights(path)
    big = tf.keras.Sequential([L.Dense(3, input_shape=(2,)), L.Dense(4)])
    before = _values(big.variables)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        big.load_weights(path)
    msg = str(e.value)
    assert "'layers/1/" in msg and "has shape" in msg and msg.endswith("[Op:RestoreV2]")
    assert ("(3, 1)" in msg and "(3, 4)" in msg) or ("(1,)" in msg and "(4,)" in msg)
    for a, b in zip(before, _values(big.variables)):
        np.testing.assert_array_equal(a, b)  # not even the matching first layer changed


def test_damaged_and_truncated_files_raise_data_loss_and_change_nothing(tmp_path):
    v = tf.Variable(np.arange(64, dtype=np.float32))
    path = tf.train.Checkpoint(v=v).write(str(tmp_path / "c"))
    fname = path + ".safetensors"
    data = pathlib.Path(fname).read_bytes()
    target = tf.Variable(np.zeros(64, np.float32))
    ckpt = tf.train.Checkpoint(v=target)
    # a flipped byte inside the tensor data
    bad = bytearray(data)
    bad[-10] ^= 0xFF
    pathlib.Path(fname).write_bytes(bytes(bad))
    with pytest.raises(tf.errors.DataLossError, match="checksum"):
        ckpt.restore(path)
    # a truncated file
    pathlib.Path(fname).write_bytes(data[: len(data) // 2])
    with pytest.raises(tf.errors.DataLossError, match="damaged or truncated"):
        ckpt.restore(path)
    # garbage
    pathlib.Path(fname).write_bytes(b"not a checkpoint at all")
    with pytest.raises(tf.errors.DataLossError):
        ckpt.restore(path)
    assert not target.numpy().any()
    # a missing file
    with pytest.raises(tf.errors.NotFoundError, match="no checkpoint"):
        ckpt.restore(str(tmp_path / "nope"))
    # a safetensors file that is not a tapeflow checkpoint
    from safetensors.numpy import save_file

    save_file({"v": np.zeros(64, np.float32)}, str(tmp_path / "foreign.safetensors"))
    with pytest.raises(tf.errors.DataLossError, match="not a tapeflow checkpoint"):
        ckpt.restore(str(tmp_path / "foreign"))


def test_writes_are_atomic(tmp_path, monkeypatch):
    v = tf.Variable([1.0, 2.0])
    ckpt = tf.train.Checkpoint(v=v)
    path = ckpt.write(str(tmp_path / "c"))
    good = pathlib.Path(path + ".safetensors").read_bytes()
    v.assign([3.0, 4.0])

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        ckpt.write(path)
    monkeypatch.undo()
    # the old file is intact and no temporary file is left behind
    assert pathlib.Path(path + ".safetensors").read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["c.safetensors"]


def test_checkpoint_manager_keeps_the_newest(tmp_path):
    step = tf.Variable(0)
    ckpt = tf.train.Checkpoint(step=step)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=3)
    assert manager.latest_checkpoint is None
    for i in range(5):
        step.assign(i)
        manager.save()
    names = [os.path.basename(p) for p in manager.checkpoints]
    assert names == ["ckpt-3", "ckpt-4", "ckpt-5"]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-3.safetensors", "ckpt-4.safetensors",
                                            "ckpt-5.safetensors"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == manager.latest_checkpoint == str(tmp_path / "ckpt-5")
    # a new manager picks up the directory's state; restore_or_initialize restores the newest
    step.assign(99)
    m2 = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), max_to_keep=3)
    assert [os.path.basename(p) for p in m2.checkpoints] == names
    assert m2.restore_or_initialize() == str(tmp_path / "ckpt-5") and int(step) == 4
    assert manager.save(checkpoint_number=100).endswith("ckpt-100")


def test_save_and_load_weights_with_deferred_build(tmp_path, rng):
    model = tf.keras.Sequential([L.Conv2D(4, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(3)])
    x = rng.normal(size=(2, 6, 6, 1)).astype(np.float32)
    want = model(x).numpy()
    model.save_weights(str(tmp_path / "weights"))
    assert os.path.exists(tmp_path / "weights.safetensors")
    fresh = tf.keras.Sequential([L.Conv2D(4, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(3)])
    fresh.load_weights(str(tmp_path / "weights"))
    np.testing.assert_allclose(fresh(x).numpy(), want, rtol=1e-6)


def test_subclassed_model_with_variables_and_nested_structures(tmp_path):
    class Linear(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.W = tf.Variable(5.0, name="weight")
            self.B = tf.Variable(10.0, name="bias")
            self.blocks = [L.Dense(2), {"head": L.Dense(1)}]

        def call(self, x):
            return self.blocks[1]["head"](self.blocks[0](x)) * self.W + self.B

    m = Linear()
    m(tf.ones([1, 3]))
    path = tf.train.Checkpoint(model=m).write(str(tmp_path / "c"))
    keys = [k for k, _ in tf.train.list_variables(path)]
    assert {"model/W", "model/B", "model/blocks/0/kernel", "model/blocks/1/head/bias"} <= set(keys)
    m2 = Linear()
    m2(tf.ones([1, 3]))
    tf.train.Checkpoint(model=m2).restore(path).assert_consumed()
    assert float(m2.W) == 5.0
    np.testing.assert_array_equal(m2.blocks[0].kernel.numpy(), m.blocks[0].kernel.numpy())
    np.testing.assert_array_equal(tf.train.load_variable(path, "model/W"), np.float32(5.0))
