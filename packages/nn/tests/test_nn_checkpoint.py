"""Object-based checkpoints: save/restore, deferred restore, managers, weights files, atomicity and bad files."""
import json
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


# ---- interrupted saves, crafted state files, stale temporaries, damaged metadata (issue 10) ----------------

def _run_killed(script, *args):
    """Run ``script`` in a fresh interpreter (it kills itself with SIGKILL at a hook); returns its exit status."""
    import signal
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    return proc.returncode


_KILL_AT_SWEEP = """
import os, signal, sys
import tapeflow as tf
step = tf.Variable(0)
manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), sys.argv[1], max_to_keep=1)
step.assign(1)
manager.save()
step.assign(2)
def kill(path, *a, **k):  # SIGKILL right after the save deleted an old checkpoint
    real(path, *a, **k)
    if str(path).endswith(".safetensors"):
        os.kill(os.getpid(), signal.SIGKILL)
real, os.unlink, os.remove = os.unlink, kill, kill
manager.save()
"""


def test_save_killed_while_deleting_old_checkpoints_keeps_the_new_one_latest(tmp_path):
    _run_killed(_KILL_AT_SWEEP, tmp_path)
    assert os.path.exists(tmp_path / "ckpt-2.safetensors")
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-2")
    step = tf.Variable(0)
    ckpt = tf.train.Checkpoint(step=step)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
    assert manager.restore_or_initialize() == str(tmp_path / "ckpt-2") and int(step) == 2
    step.assign(3)
    manager.save()  # the next save finishes the interrupted sweep
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-3.safetensors"]


def test_state_file_naming_paths_outside_the_directory_is_ignored(tmp_path):
    import warnings

    d = tmp_path / "ckpts"
    d.mkdir()
    outside = [tmp_path / "outside.safetensors", tmp_path / "victim.safetensors", tmp_path / "linked.safetensors"]
    for p in outside:
        p.write_bytes(b"precious")
    os.symlink(tmp_path / "linked.safetensors", d / "link.safetensors")
    (d / "checkpoint").write_text(f'model_checkpoint_path: "{tmp_path / "outside"}"\n'
                                  f'all_model_checkpoint_paths: "{tmp_path / "outside"}"\n'
                                  'all_model_checkpoint_paths: "../victim"\n'
                                  'all_model_checkpoint_paths: "link"\n')
    with pytest.warns(tf.errors.CheckpointWarning, match="outside") as rec:
        assert tf.train.latest_checkpoint(str(d)) is None
    assert len(rec) == 1 and "victim" in str(rec[0].message)
    step = tf.Variable(0)
    with pytest.warns(tf.errors.CheckpointWarning, match="outside"):
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(d), max_to_keep=1)
    assert manager.checkpoints == [] and manager.latest_checkpoint is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the manager rewrote the state file: no more warnings
        for i in range(3):
            step.assign(i)
            manager.save()
        assert tf.train.latest_checkpoint(str(d)) == str(d / "ckpt-3")
    for p in outside:
        assert p.read_bytes() == b"precious"
    assert os.path.islink(d / "link.safetensors")
    assert sorted(os.listdir(d)) == ["checkpoint", "ckpt-3.safetensors", "link.safetensors"]


_KILL_IN_WRITE = """
import os, signal, sys
import numpy as np
import tapeflow as tf
big = tf.Variable(np.ones(1 << 20, np.float32))  # 4 MiB
manager = tf.train.CheckpointManager(tf.train.Checkpoint(big=big), sys.argv[1], max_to_keep=2)
manager.save()
def kill(src, dst, *a, **k):  # SIGKILL after the temporary is written in full, before it is renamed into place
    if str(dst).endswith(".safetensors"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *a, **k)
real, os.replace, os.rename = os.replace, kill, kill
manager.save()
"""


def test_next_save_removes_temporaries_that_killed_saves_left(tmp_path):
    import fcntl

    _run_killed(_KILL_IN_WRITE, tmp_path)
    stale = [n for n in os.listdir(tmp_path) if n.startswith("ckpt-2.safetensors.") and n.endswith(".tmp")]
    assert len(stale) == 1 and os.path.getsize(tmp_path / stale[0]) > (4 << 20)
    (tmp_path / "checkpoint.0a1b2c3d.tmp").write_text("half a state file")  # a killed state write
    keep = ["ckpt-2.safetensors.notes.tmp", "other-1.safetensors.abcdefgh.tmp", "ckpt-1.safetensors.abcdefgh.tmp.bak",
            "data.tmp", "ckpt.safetensors.abcdefgh.tmp", "ckpt-x.safetensors.abcdefgh.tmp"]
    for n in keep:
        (tmp_path / n).write_text("not ours")
    busy = tmp_path / "ckpt-7.safetensors.0123abcd.tmp"  # a save in progress elsewhere holds its lock
    with open(busy, "wb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        big = tf.Variable(np.zeros(4, np.float32))
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(big=big), str(tmp_path), max_to_keep=2)
        manager.save(checkpoint_number=3)
        assert os.path.exists(busy)
    assert sorted(os.listdir(tmp_path)) == sorted(["checkpoint", "ckpt-1.safetensors", "ckpt-3.safetensors",
                                                   busy.name] + keep)


def test_save_removes_stale_temporaries_of_its_prefix(tmp_path):
    # the same through Checkpoint.save and write (save_weights): only names of that prefix and pattern go
    for n in ["run-4.safetensors.0a1b2c3d.tmp", "w.safetensors.k2_x9zq1.tmp", "run.safetensors.0a1b2c3d.tmp",
              "w2.safetensors.0a1b2c3d.tmp"]:
        (tmp_path / n).write_bytes(b"x" * 100)
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    ckpt.save(str(tmp_path / "run"))
    ckpt.write(str(tmp_path / "w"))
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "run-1.safetensors", "run.safetensors.0a1b2c3d.tmp",
                                            "w.safetensors", "w2.safetensors.0a1b2c3d.tmp"]


def _v1_sha(tensors):
    """The checksum of version-1 files (tensors only): files written before the metadata was covered."""
    import hashlib

    h = hashlib.sha256()
    for k in sorted(tensors):
        a = tensors[k]
        h.update(k.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(np.array(a, order="C", copy=True).tobytes())
    return h.hexdigest()


def _craft_v1(fname, tensors, **meta_changes):
    """A version-1 file with a valid checksum whose metadata is ``meta_changes`` over the right one (None drops)."""
    from safetensors.numpy import save

    meta = {"format": "tapeflow-checkpoint", "version": "1", "sha256": _v1_sha(tensors),
            "dtypes": '{"b": "bfloat16"}'}
    meta.update(meta_changes)
    meta = {k: v for k, v in meta.items() if v is not None}
    pathlib.Path(fname).write_bytes(save(tensors, metadata=meta))


def _raw(fname, header, body):
    hb = json.dumps(header).encode() if not isinstance(header, bytes) else header
    pathlib.Path(fname).write_bytes(len(hb).to_bytes(8, "little") + hb + body)



def test_damaged_and_crafted_files_raise_data_loss_naming_the_file_and_change_nothing(tmp_path):
    src = {"v": tf.Variable(np.arange(6, dtype=np.float32)), "b": tf.Variable(np.arange(3), dtype=tf.bfloat16)}
    path = tf.train.Checkpoint(**src).write(str(tmp_path / "c"))
    fname = path + ".safetensors"
    good = pathlib.Path(fname).read_bytes()
    hlen = 8 + int.from_bytes(good[:8], "little")
    v, b = tf.Variable(np.full(6, -1, np.float32)), tf.Variable(np.full(3, -1), dtype=tf.bfloat16)
    ckpt = tf.train.Checkpoint(v=v, b=b)

    def unchanged():
        assert (v.numpy() == -1).all() and (b.numpy().astype(np.float32) == -1).all()

    def damaged(data, what):
        pathlib.Path(fname).write_bytes(data)
        try:
            ckpt.restore(path)
        except tf.errors.DataLossError as e:
            assert repr(fname) in str(e) and str(e).endswith("[Op:RestoreV2]"), (what, str(e))
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"{what}: {type(e).__name__}: {e}")
        else:
            pytest.fail(f"{what}: restored without an error")
        unchanged()

    for n in range(len(good)):
        damaged(good[:n], f"truncated at {n}")
    for i in range(hlen):
        damaged(good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:], f"byte {i} flipped")
    rng = np.random.default_rng(10)
    printable = [c for c in range(33, 127)]  # no whitespace: a blank for a blank keeps JSON the same
    for i in rng.integers(8, hlen, size=300):
        c = int(rng.choice([c for c in printable if c != good[i]]))
        damaged(good[:i] + bytes([c]) + good[i + 1:], f"byte {i} {chr(good[i])!r} -> {chr(c)!r}")
    for i in range(hlen, len(good)):
        damaged(good[:i] + bytes([good[i] ^ 0x01]) + good[i + 1:], f"data byte {i} flipped")
    damaged(good + b"\0", "one byte appended")
    damaged(b"", "empty")

    # crafted files: well-formed safetensors with valid checksums and wrong metadata
    t = {"v": np.arange(6, dtype=np.float32), "b": np.arange(3, dtype=np.uint16), "save_counter": np.array(0, np.int64)}
    _craft_v1(fname, t)
    ckpt.restore(path).assert_consumed()  # the crafting is right: the unchanged file loads (version 1 reads)
    assert v.numpy().tolist() == list(range(6))
    v.assign(np.full(6, -1, np.float32))
    b.assign(tf.constant(np.full(3, -1), dtype=tf.bfloat16))
    crafted = {
        "dtypes not JSON": {"dtypes": "{not json"},
        "dtypes a list": {"dtypes": "[1, 2]"},
        "dtypes a string": {"dtypes": '"bfloat16"'},
        "unknown special dtype": {"dtypes": '{"b": "float8"}'},
        "special dtype not a string": {"dtypes": '{"b": 3}'},
        "dtypes names a missing tensor": {"dtypes": '{"zzz": "bfloat16"}'},
        "bfloat16 over float32 storage": {"dtypes": '{"v": "bfloat16"}'},
        "no dtypes": {"dtypes": None},
        "no checksum": {"sha256": None},
        "checksum not hex": {"sha256": "x" * 64},
        "no version": {"version": None},
        "unknown version": {"version": "99"},
        "no format": {"format": None},
    }
    for what, change in crafted.items():
        _craft_v1(fname, t, **change)
        damaged(pathlib.Path(fname).read_bytes(), what)
    _craft_v1(fname, {"v": np.arange(6, dtype=np.float32), "b": np.arange(3, dtype=np.uint32)}, dtypes="{}",
              sha256=_v1_sha({"v": np.arange(6, dtype=np.float32), "b": np.arange(3, dtype=np.uint32)}))
    damaged(pathlib.Path(fname).read_bytes(), "uint16-less dtype not a tapeflow dtype (uint32)")
    _craft_v1(fname, {"v": np.arange(6, dtype=np.float32), "b": np.arange(3, dtype=np.uint16)}, dtypes="{}")
    damaged(pathlib.Path(fname).read_bytes(), "uint16 storage without its bfloat16 mark")
    meta = {"format": "tapeflow-checkpoint", "version": "1", "sha256": _v1_sha({}), "dtypes": "{}"}
    for what, header, body in [
        ("header a list", [1, 2], b""),
        ("header a number", 7, b""),
        ("metadata a list", {"__metadata__": [1]}, b""),
        ("metadata value a number", {"__metadata__": dict(meta, version=1)}, b""),
        ("unknown tensor dtype", {"__metadata__": meta, "v": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 4]}},
         b"\0" * 4),
        ("shape larger than the bytes", {"__metadata__": meta,
                                         "v": {"dtype": "F32", "shape": [6], "data_offsets": [0, 4]}}, b"\0" * 4),
        ("negative shape", {"__metadata__": meta, "v": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}},
         b"\0" * 4),
        ("missing data_offsets", {"__metadata__": meta, "v": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
        ("deeply nested header", b"[" * 100000 + b"]" * 100000, b""),
        ("header not UTF-8", b'{"\xff": 1}', b""),
    ]:
        _raw(fname, header, body)
        damaged(pathlib.Path(fname).read_bytes(), what)
    # list_variables and load_variable read through the same checks
    _craft_v1(fname, t, dtypes='{"b": "float8"}')
    with pytest.raises(tf.errors.DataLossError, match="float8"):
        tf.train.list_variables(path)
    with pytest.raises(tf.errors.DataLossError, match="float8"):
        tf.train.load_variable(path, "v")


def test_load_weights_of_a_file_missing_variables_raises_unless_partial_is_asked(tmp_path):
    small = tf.keras.Sequential([L.Dense(3, input_shape=(2,))])
    path = str(tmp_path / "small.safetensors")
    small.save_weights(path)
    big = tf.keras.Sequential([L.Dense(3, input_shape=(2,)), L.Dense(4)])
    before = _values(big.variables)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"layers/1/kernel.*layers/1/bias|layers/1/bias.*kernel"):
        big.load_weights(path)
    for a, b in zip(before, _values(big.variables)):
        np.testing.assert_array_equal(a, b)  # nothing changed, not even the layer the file has
    # a partial restore, asked for: what matches is loaded, the rest is reported
    with pytest.warns(tf.errors.CheckpointWarning, match="layers/1/kernel"):
        big.load_weights(path, skip_mismatch=True)
    np.testing.assert_array_equal(big.layers[0].kernel.numpy(), small.layers[0].kernel.numpy())
    np.testing.assert_array_equal(big.layers[1].kernel.numpy(), before[2])
    # skip_mismatch also skips variables whose shapes differ (Keras 3), with a warning
    other = tf.keras.Sequential([L.Dense(5, input_shape=(2,))])
    keep = _values(other.variables)
    with pytest.warns(tf.errors.CheckpointWarning, match="shape"):
        other.load_weights(path, skip_mismatch=True)
    for a, b in zip(keep, _values(other.variables)):
        np.testing.assert_array_equal(a, b)
    # into an unbuilt model the check runs as its variables are created
    fresh = tf.keras.Sequential([L.Dense(3), L.Dense(4)])
    fresh.load_weights(path)
    with pytest.raises(tf.errors.InvalidArgumentError, match="layers/1/kernel"):
        fresh(tf.ones([1, 2]))
    fresh2 = tf.keras.Sequential([L.Dense(3), L.Dense(4)])
    fresh2.load_weights(path, skip_mismatch=True)
    with pytest.warns(tf.errors.CheckpointWarning) as rec:
        fresh2(tf.ones([1, 2]))
    assert sorted(str(w.message).split("[")[-1].split("]")[0] for w in rec) == ["'layers/1/bias'", "'layers/1/kernel'"]
    np.testing.assert_array_equal(fresh2.layers[0].kernel.numpy(), small.layers[0].kernel.numpy())
    L.Dense(2)(tf.ones([1, 2]))  # a failed deferred restore does not haunt later layers
    # a file holding more than the model (Keras: not an error); by_name is for legacy HDF5 files only
    small.load_weights(str(tmp_path / "small.safetensors"))
    big.save_weights(str(tmp_path / "big"))
    tf.keras.Sequential([L.Dense(3, input_shape=(2,))]).load_weights(str(tmp_path / "big"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="by_name"):
        small.load_weights(path, by_name=True)


def test_keep_checkpoint_every_n_hours_keeps_one_per_period_out_of_the_deletions(tmp_path):
    import time

    step = tf.Variable(0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), max_to_keep=1,
                                         keep_checkpoint_every_n_hours=1)
    first = manager.save()
    later = time.time() + 2 * 3600  # as if ckpt-1 were written two hours after the manager started
    os.utime(first + ".safetensors", (later, later))
    manager.save()  # ckpt-1 leaves the kept list but stays on disk: its hour is preserved
    manager.save()  # ckpt-2 is less than an hour after ckpt-1: deleted
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3"]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1.safetensors", "ckpt-3.safetensors"]
    with pytest.raises(ValueError, match="keep_checkpoint_every_n_hours"):
        tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), 1, keep_checkpoint_every_n_hours=0)


def test_arguments_that_cannot_be_honoured_raise(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    for call in (lambda: ckpt.write(str(tmp_path / "a"), options=object()),
                 lambda: ckpt.save(str(tmp_path / "a"), options=object()),
                 lambda: ckpt.restore(str(tmp_path / "a"), options=object())):
        with pytest.raises(tf.errors.InvalidArgumentError, match="options"):
            call()
    m = tf.keras.Sequential([L.Dense(1, input_shape=(1,))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="save_format"):
        m.save_weights(str(tmp_path / "w"), save_format="h5")
    assert not os.path.exists(tmp_path / "w.safetensors")
    # latest_filename names the state file
    ckpt.save(str(tmp_path / "s"))
    os.rename(tmp_path / "checkpoint", tmp_path / "other_state")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path), latest_filename="other_state") == str(tmp_path / "s-1")


def test_bfloat16_is_stored_as_safetensors_bf16(tmp_path):
    vals = np.array([1.5, -2., 3.25], dtype=tf.bfloat16.as_numpy_dtype)
    path = tf.train.Checkpoint(b=tf.Variable(vals, dtype=tf.bfloat16)).write(str(tmp_path / "c"))
    raw = pathlib.Path(path + ".safetensors").read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    entry = next(v for k, v in header.items() if k != "__metadata__" and k.startswith("b"))
    assert entry["dtype"] == "BF16"  # safetensors' own bfloat16, not U16 (which torch reads as uint16)
    assert header["__metadata__"]["dtypes"] == "{}"
    b = tf.Variable(np.zeros(3), dtype=tf.bfloat16)
    tf.train.Checkpoint(b=b).restore(path).assert_consumed()
    assert b.numpy().astype(np.float32).tolist() == [1.5, -2., 3.25]
    torch = pytest.importorskip("torch")  # torch is not a test dependency (see core's test_dlpack.py)
    from safetensors.torch import load_file

    loaded = [v for k, v in load_file(path + ".safetensors").items() if k.startswith("b")]
    assert loaded[0].dtype == torch.bfloat16 and loaded[0].float().tolist() == [1.5, -2., 3.25]
