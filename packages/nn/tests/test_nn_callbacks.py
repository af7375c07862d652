"""Keras 3's training callbacks: ReduceLROnPlateau, CSVLogger, LambdaCallback, TerminateOnNaN,
BackupAndRestore, ProgbarLogger and History, in fit (seeded, deterministic) and against Keras 3's own
callbacks on the same logs where TensorFlow is installed."""
import io
import os
import types

import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

f32 = np.float32
cbs = tf.keras.callbacks


def _data(n=16):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 2)).astype(f32)
    return x, (x @ np.array([[2.0], [-1.0]], f32) + 0.5).astype(f32)


def _model(lr=0.05):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), kernel_initializer="ones",
                                                       bias_initializer="zeros")])
    model.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse")
    return model


def _fit(model, epochs, callbacks, **kw):
    x, y = _data()
    return model.fit(x, y, batch_size=4, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks, **kw)


# ---- ReduceLROnPlateau ----------------------------------------------------------------------

MONITORED = [1.0, 0.9, 0.9, 0.9, 0.95, 0.5, 0.5, 0.5]
# factor 0.5, patience 1, cooldown 1, min_lr 0.02 from 0.1: worked out epoch by epoch (the rate logged
# at an epoch's end is the one it trained with)
EXPECTED_LR = [0.1, 0.1, 0.1, 0.05, 0.025, 0.02, 0.02, 0.02]


def _inject(values):
    def put(epoch, logs):
        logs["val_score"] = values[epoch]
    return cbs.LambdaCallback(on_epoch_end=put)


def test_reduce_lr_on_plateau_in_fit():
    model = _model(lr=0.1)
    cb = cbs.ReduceLROnPlateau(monitor="val_score", factor=0.5, patience=1, cooldown=1, min_lr=0.02)
    h = _fit(model, len(MONITORED), [_inject(MONITORED), cb])
    np.testing.assert_allclose(h.history["learning_rate"], EXPECTED_LR, rtol=1e-6)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.02)


def test_reduce_lr_on_plateau_checks_and_warns():
    with pytest.raises(ValueError, match="factor >= 1.0"):
        cbs.ReduceLROnPlateau(factor=1.0)
    with pytest.raises(TypeError, match="unexpected arguments"):
        cbs.ReduceLROnPlateau(epsilon=0.1)
    with pytest.warns(tf.errors.TrainingWarning, match="not available"):
        _fit(_model(), 1, [cbs.ReduceLROnPlateau(monitor="val_missing")])
    assert cbs.ReduceLROnPlateau(monitor="val_accuracy").mode == "max"


def _keras():
    if tf_or_none() is None:
        pytest.skip("comparing with Keras 3 needs TensorFlow (the fit tests run without it)")
    import keras

    return keras


def test_reduce_lr_on_plateau_equals_keras():
    keras = _keras()
    trajectories = []
    for make in (keras.callbacks.ReduceLROnPlateau, cbs.ReduceLROnPlateau):
        model = types.SimpleNamespace(optimizer=types.SimpleNamespace(learning_rate=0.1))
        cb = make(monitor="val_score", factor=0.5, patience=1, cooldown=1, min_lr=0.02, mode="min",
                  min_delta=0.04)
        cb.set_model(model)
        cb.on_train_begin()
        lrs = []
        for epoch, v in enumerate(MONITORED):
            logs = {"val_score": v}
            cb.on_epoch_end(epoch, logs)
            lrs.append((logs["learning_rate"], model.optimizer.learning_rate))
        trajectories.append(lrs)
    np.testing.assert_allclose(trajectories[1], trajectories[0], rtol=1e-7)


# ---- CSVLogger --------------------------------------------------------------------------------

def test_csv_logger_writes_keras_columns_and_appends(tmp_path):
    path = tmp_path / "train.csv"
    x, y = _data()
    model = _model()
    h = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0, validation_data=(x, y),
                  callbacks=[cbs.CSVLogger(path)])
    lines = path.read_text().splitlines()
    assert lines[0] == "epoch,loss,val_loss"
    rows = [line.split(",") for line in lines[1:]]
    assert [r[0] for r in rows] == ["0", "1"]
    np.testing.assert_allclose([[float(v) for v in r[1:]] for r in rows],
                               np.stack([h.history["loss"], h.history["val_loss"]], 1), rtol=1e-6)
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0, validation_data=(x, y),
              callbacks=[cbs.CSVLogger(path, append=True)])
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and lines.count("epoch,loss,val_loss") == 1
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[cbs.CSVLogger(path, separator=";")])
    header, row = path.read_text().splitlines()  # append=False starts the file over
    assert header == "epoch;loss;val_loss" and row.startswith("0;") and row.endswith(";NA")


def _csv_run(make, path):
    cb = make(str(path), separator=";")
    cb.on_train_begin()
    cb.on_epoch_end(0, {"loss": 0.5, "accuracy": 0.25, "lr": np.float32(0.125)})
    cb.on_epoch_end(1, {"loss": 0.375, "accuracy": 0.5, "vec": [1.0, 2.0]})
    cb.on_train_end()
    return path.read_text()


def test_csv_logger_equals_keras(tmp_path):
    keras = _keras()
    assert _csv_run(cbs.CSVLogger, tmp_path / "a.csv") == _csv_run(keras.callbacks.CSVLogger, tmp_path / "b.csv")


# ---- LambdaCallback, TerminateOnNaN, ProgbarLogger, History --------------------------------

def test_lambda_callback_hooks_run_in_fit():
    calls = []
    cb = cbs.LambdaCallback(on_train_begin=lambda logs: calls.append("begin"),
                            on_epoch_begin=lambda epoch, logs: calls.append(f"e{epoch}"),
                            on_train_batch_end=lambda batch, logs: calls.append(f"b{batch}"),
                            on_train_end=lambda logs: calls.append("end"),
                            on_test_end=lambda logs: calls.append("test"), tag="mine")
    x, y = _data(8)
    _model().fit(x, y, batch_size=4, epochs=2, verbose=0, validation_data=(x, y), callbacks=[cb])
    assert calls == ["begin", "e0", "b0", "b1", "test", "e1", "b0", "b1", "test", "end"]  # validation: on_test_*
    assert cb.tag == "mine"
    with pytest.raises(ValueError, match="unknown callback hook 'on_epoch_finish'"):
        cbs.LambdaCallback(on_epoch_finish=print)
    with pytest.raises(TypeError, match="on_epoch_end must be a function"):
        cbs.LambdaCallback(on_epoch_end=3)


def test_terminate_on_nan_stops_or_raises():
    x, y = _data()
    x[5, 0] = np.nan  # the second batch of 4
    seen = []
    model = _model()
    record = cbs.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(b))
    h = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0, callbacks=[cbs.TerminateOnNaN(), record])
    assert seen == [0, 1] and len(h.history["loss"]) == 1
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 1"):
        _model().fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0,
                     callbacks=[cbs.TerminateOnNaN(raise_error=True)])


def test_progbar_logger_prints_epochs_only_when_several():
    x, y = _data()
    out = io.StringIO()
    _model().fit(x, y, batch_size=4, epochs=2, verbose=0, callbacks=[cbs.ProgbarLogger(verbose=1, stream=out)])
    lines = out.getvalue().splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    assert lines[1].startswith("4/4 [==============================]") and "loss: " in lines[1]
    one = io.StringIO()
    _model().fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[cbs.ProgbarLogger(verbose=1, stream=one)])
    assert [line.split(" ")[0] for line in one.getvalue().splitlines()] == ["4/4"]
    quiet = io.StringIO()
    bar = cbs.ProgbarLogger(stream=quiet)  # takes fit's verbose
    _model().fit(x, y, batch_size=4, epochs=2, verbose=0, callbacks=[bar])
    assert bar.verbose == 0 and quiet.getvalue() == ""


class _Tty(io.StringIO):
    """A terminal as a test sees it: isatty, no real size (``COLUMNS`` gives it)."""

    def isatty(self):
        return True


class _JupyterOut(io.StringIO):
    """Stands for ipykernel's OutStream: not a tty, but shows carriage-return redraws."""


_JupyterOut.__module__ = "ipykernel.iostream"


def _redraws(text):
    """The drawn states of a carriage-return progress bar: every piece between "\r" and "\n"."""
    return [p for line in text.split("\n") for p in line.split("\r") if p]


def _long_logs(i):
    return [(f"metric_with_a_long_name_{k}", 0.5 + i) for k in range(6)]


def test_progbar_redraws_fit_an_80_column_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = _Tty()
    bar = cbs.Progbar(20, interval=0, stream=out)
    for i in range(1, 21):
        bar.update(i, _long_logs(i))
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # one line per bar, however many redraws
    draws = _redraws(text)
    assert len(draws) == 20
    assert all(len(d.rstrip()) <= 79 for d in draws[:-1]), [len(d) for d in draws]  # no wrap, no new row
    assert draws[0].startswith(" 1/20 [>") and " - ETA: " in draws[0]
    assert "metric_with_a_long_name_5: " in draws[-1]  # the final line keeps every metric
    monkeypatch.setenv("COLUMNS", "200")
    wide = _Tty()
    bar = cbs.Progbar(2, interval=0, stream=wide)
    bar.update(1, _long_logs(1))
    assert "metric_with_a_long_name_2: " in _redraws(wide.getvalue())[0]


def test_progbar_is_live_in_jupyter_and_one_line_per_epoch_when_piped(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    x, y = _data()
    nb = _JupyterOut()
    bar = cbs.ProgbarLogger(verbose=1, stream=nb)
    _model().fit(x, y, batch_size=4, epochs=2, verbose=0, callbacks=[bar])
    nb_text = nb.getvalue()
    assert "\r" in nb_text  # redrawn in place, as under a terminal
    assert nb_text.splitlines()[0] == "Epoch 1/2" and nb_text.count("\n") == 4
    piped = io.StringIO()
    _model().fit(x, y, batch_size=4, epochs=3, verbose=0, callbacks=[cbs.ProgbarLogger(verbose=1, stream=piped)])
    lines = piped.getvalue().split("\n")
    assert "\r" not in piped.getvalue() and lines[-1] == ""
    assert [line.split(" ")[0] for line in lines[:-1]] == ["Epoch", "4/4", "Epoch", "4/4", "Epoch", "4/4"]


def test_callback_messages_go_through_the_tapeflow_logger(caplog, capsys):
    x, y = _data()
    stop = cbs.EarlyStopping(monitor="loss", patience=0, min_delta=100, verbose=1)
    _model().fit(x, y, batch_size=4, epochs=5, verbose=0, callbacks=[stop])
    assert "early stopping" in capsys.readouterr().out  # logging not set up for INFO: printed, as Keras does
    caplog.set_level("INFO", logger="tapeflow")
    stop = cbs.EarlyStopping(monitor="loss", patience=0, min_delta=100, verbose=1)
    _model().fit(x, y, batch_size=4, epochs=5, verbose=0, callbacks=[stop])
    assert [r.name for r in caplog.records if "early stopping" in r.getMessage()] == ["tapeflow"]
    assert "early stopping" not in capsys.readouterr().out


def test_history_keeps_accumulating_across_fits():
    h = cbs.History()
    model = _model()
    _fit(model, 2, [h])
    _fit(model, 3, [h])
    assert len(h.history["loss"]) == 5 and h.epoch == [0, 1, 2]
    assert model.history is not None


# ---- BackupAndRestore -------------------------------------------------------------------------

class _Interrupt(cbs.Callback):
    def __init__(self, at):
        super().__init__()
        self.at = at

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.at:
            raise RuntimeError("interrupted")


def test_backup_and_restore_resumes_at_the_right_epoch(tmp_path):
    backup = str(tmp_path / "backup")
    reference = _model()
    ref_hist = _fit(reference, 5, [])
    model = _model()
    with pytest.raises(RuntimeError, match="interrupted"):
        _fit(model, 5, [cbs.BackupAndRestore(backup), _Interrupt(at=2)])
    assert sorted(os.listdir(backup)) == ["latest.weights.h5", "training_metadata.json"]
    resumed = _model()  # a new process would start from fresh weights
    h = _fit(resumed, 5, [cbs.BackupAndRestore(backup)])
    assert h.epoch == [3, 4]
    np.testing.assert_allclose(h.history["loss"], ref_hist.history["loss"][3:], rtol=1e-5)
    for a, b in zip(resumed.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    assert not os.path.exists(backup)  # delete_checkpoint: removed once training ends normally


def test_backup_and_restore_by_batches_and_keeps_files(tmp_path):
    backup = str(tmp_path / "b")
    model = _model()
    with pytest.raises(RuntimeError, match="interrupted"):
        _fit(model, 4, [cbs.BackupAndRestore(backup, save_freq=3, double_checkpoint=True, delete_checkpoint=False),
                        _Interrupt(at=1)])
    assert sorted(os.listdir(backup)) == ["latest.weights.h5", "latest.weights.h5.bkp", "training_metadata.json",
                                          "training_metadata.json.bkp"]
    import json

    with open(os.path.join(backup, "training_metadata.json")) as f:
        # every 3 batches of 4 a epoch: saved after epoch 0's batch 2 and epoch 1's batch 1 (Keras's count)
        assert json.load(f) == {"epoch": 1, "batch": 1}
    h = _fit(_model(), 4, [cbs.BackupAndRestore(backup, delete_checkpoint=False)])
    assert h.epoch == [1, 2, 3] and os.path.exists(backup)
    with pytest.raises(ValueError, match="save_freq must be 'epoch' or a positive int"):
        cbs.BackupAndRestore(backup, save_freq="batch")
    with pytest.raises(ValueError, match="empty backup_dir"):
        cbs.BackupAndRestore("")
