"""Training callbacks (``tf.keras.callbacks``): History, ProgbarLogger, TensorBoard, ModelCheckpoint,
EarlyStopping, LearningRateScheduler, ReduceLROnPlateau, CSVLogger, BackupAndRestore, TerminateOnNaN,
LambdaCallback, and the progress bar.

>>> import tapeflow as tf
>>> stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=2)
>>> stop.monitor, stop.patience
('loss', 2)
"""
from __future__ import annotations

import io
import logging
import math
import os
import shutil
import sys
import time
import warnings

from tapeflow.core.errors import TrainingWarning as _TrainingWarning


class Progbar:
    """A Keras-style progress bar: ``12/45 [=====>......] - ETA: 1s - loss: 0.4321``.

    On a terminal it redraws in place (at most ~10 times a second), each redraw cut to the terminal's
    width (``shutil.get_terminal_size``) so that a narrow terminal never wraps it onto new lines; in
    Jupyter (an ipykernel output stream) it redraws in place with carriage returns, as Keras does;
    otherwise (piped to a file) it prints one line when ``target`` is reached, so logs stay readable.

    >>> import io
    >>> import tapeflow as tf
    >>> out = io.StringIO()
    >>> bar = tf.keras.callbacks.Progbar(2, stream=out)
    >>> bar.update(1, [("loss", 0.5)]); bar.update(2, [("loss", 0.25)])
    >>> out.getvalue().split(" - ")[0]
    '2/2 [==============================]'
    """

    def __init__(self, target, width=30, verbose=1, interval=0.1, stateful_metrics=None, unit_name="step",
                 stream=None) -> None:
        self.target, self.width, self.verbose, self.interval = target, width, verbose, interval
        self.unit_name = unit_name
        self.stream = stream if stream is not None else sys.stdout
        self._dynamic = _is_live(self.stream)
        self._start = time.perf_counter()
        self._last = 0.0
        self._seen = 0
        self._values = {}
        self._prev_len = 0

    def update(self, current, values=None, finalize=None):
        """Show progress ``current`` with ``values`` (name, value) pairs (the latest value of each is shown)."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for k, v in values or ():
            self._values[k] = v
        self._seen = current
        if self.verbose == 0:
            return
        now = time.perf_counter()
        if not finalize and (now - self._last < self.interval or not self._dynamic):
            return
        self._last = now
        line = self._line(current, now, finalize)
        if self._dynamic:
            if not finalize:  # a redraw longer than the terminal would wrap, and "\r" goes back one row only
                line = _fit(line, _columns(self.stream) - 1)
            pad = max(0, min(self._prev_len, _columns(self.stream) - 1) - len(line))
            self.stream.write("\r" + line + " " * pad + ("\n" if finalize else ""))
            self._prev_len = len(line)
        elif finalize:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _line(self, current, now, finalize):
        elapsed = now - self._start
        per = elapsed / max(current, 1)
        if self.target is not None:
            w = len(str(self.target))
            frac = min(current / self.target, 1.0) if self.target else 1.0
            done = int(self.width * frac)
            bar = "=" * done
            if current < self.target:
                bar = bar[:-1] + ">" if done else ">"
            bar = f"{current:>{w}}/{self.target} [{bar}{'.' * (self.width - len(bar))}]"
        else:
            bar = f"{current}/Unknown"
        if self.verbose == 2 and not finalize:
            return bar
        if finalize or self.target is None:
            t = f"{elapsed:.0f}s" if elapsed >= 1 else f"{elapsed * 1000:.0f}ms"
            timing = f"{t} {_fmt_time(per)}/{self.unit_name}"
        else:
            eta = per * (self.target - current)
            timing = f"ETA: {eta:.0f}s" if eta >= 1 else f"ETA: {eta * 1000:.0f}ms"
        parts = [bar, timing] + [f"{k}: {_fmt_value(v)}" for k, v in self._values.items()]
        return " - ".join(parts)

    def add(self, n, values=None):
        self.update(self._seen + n, values)


_logger = logging.getLogger("tapeflow")


def _message(text: str) -> None:
    """Show a verbose message (a callback's ``verbose=1`` notes, a loader's): through the ``tapeflow`` logger
    when the application lets it log INFO (``logging.basicConfig(level="INFO")``), else on stdout, as Keras
    prints them.

    >>> import logging, tapeflow as tf
    >>> from tapeflow.nn.callbacks import _message
    >>> _message("Epoch 3: early stopping")
    Epoch 3: early stopping
    """
    if _logger.hasHandlers() and _logger.isEnabledFor(logging.INFO):
        _logger.info(text)
    else:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _is_live(stream) -> bool:
    """Whether ``stream`` shows carriage-return redraws: a terminal, or a Jupyter (ipykernel) output stream."""
    isatty = getattr(stream, "isatty", None)
    try:
        if isatty is not None and isatty():
            return True
    except ValueError:  # a closed stream
        return False
    return type(stream).__module__.split(".")[0] == "ipykernel"


def _columns(stream) -> int:
    """The width a redraw may take: the terminal's (``COLUMNS`` wins), 80 where there is none (Jupyter)."""
    try:
        cols = os.get_terminal_size(stream.fileno()).columns if "COLUMNS" not in os.environ else 0
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        cols = 0
    return max(cols or shutil.get_terminal_size((80, 24)).columns, 20)


def _fit(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters: the metrics that do not fit are dropped whole, then the rest is cut."""
    if len(line) <= width:
        return line
    parts = line.split(" - ")
    while len(parts) > 1 and len(" - ".join(parts)) > width:
        parts.pop()
    return " - ".join(parts)[:width]


def _fmt_time(sec):
    if sec >= 1:
        return f"{sec:.0f}s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.0f}ms"
    return f"{sec * 1e6:.0f}us"


def _fmt_value(v):
    v = float(v)
    return f"{v:.4f}" if abs(v) >= 1e-3 or v == 0 else f"{v:.4e}"


class Callback:
    """Base class: override the hooks you need (``on_epoch_end(epoch, logs)``, ``on_train_batch_end``...).

    ``self.model`` is the model being trained; set ``self.model.stop_training = True`` to stop.

    >>> import tapeflow as tf
    >>> class Count(tf.keras.callbacks.Callback):
    ...     def on_epoch_end(self, epoch, logs=None):
    ...         print("epoch", epoch, sorted(logs))
    >>> Count().on_epoch_end(0, {"loss": 1.0})
    epoch 0 ['loss']
    """

    def __init__(self) -> None:
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass


class CallbackList(Callback):
    """Calls each hook on every callback in order."""

    def __init__(self, callbacks=None, model=None, **params) -> None:
        super().__init__()
        self.callbacks = list(callbacks or [])
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, cb):
        self.callbacks.append(cb)

    def set_model(self, model):
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def _call(self, hook, *args):
        for c in self.callbacks:
            getattr(c, hook)(*args)

    def on_train_begin(self, logs=None): self._call("on_train_begin", logs)
    def on_train_end(self, logs=None): self._call("on_train_end", logs)
    def on_epoch_begin(self, epoch, logs=None): self._call("on_epoch_begin", epoch, logs)
    def on_epoch_end(self, epoch, logs=None): self._call("on_epoch_end", epoch, logs)
    def on_train_batch_begin(self, batch, logs=None): self._call("on_train_batch_begin", batch, logs)
    def on_train_batch_end(self, batch, logs=None): self._call("on_train_batch_end", batch, logs)
    def on_test_begin(self, logs=None): self._call("on_test_begin", logs)
    def on_test_end(self, logs=None): self._call("on_test_end", logs)
    def on_test_batch_begin(self, batch, logs=None): self._call("on_test_batch_begin", batch, logs)
    def on_test_batch_end(self, batch, logs=None): self._call("on_test_batch_end", batch, logs)
    def on_predict_begin(self, logs=None): self._call("on_predict_begin", logs)
    def on_predict_end(self, logs=None): self._call("on_predict_end", logs)
    def on_predict_batch_begin(self, batch, logs=None): self._call("on_predict_batch_begin", batch, logs)
    def on_predict_batch_end(self, batch, logs=None): self._call("on_predict_batch_end", batch, logs)


class History(Callback):
    """Records each epoch's logs: ``history.history["loss"]`` (``fit`` returns it).

    >>> import tapeflow as tf
    >>> h = tf.keras.callbacks.History()
    >>> h.on_train_begin(); h.on_epoch_end(0, {"loss": 0.5})
    >>> h.history, h.epoch
    ({'loss': [0.5]}, [0])
    """

    def __init__(self) -> None:
        super().__init__()
        self.history, self.epoch = {}, []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Prints ``Epoch i/n`` (when n > 1) and a progress bar with the running loss and metrics; its
    verbosity, epochs and steps come from ``fit``'s params (``verbose`` and ``stream`` override them).
    Outside ``fit`` it shows ``evaluate``'s and ``predict``'s progress.

    >>> import io
    >>> import tapeflow as tf
    >>> out = io.StringIO()
    >>> bar = tf.keras.callbacks.ProgbarLogger(stream=out)
    >>> bar.set_params({"verbose": 1, "epochs": 2, "steps": 1})
    >>> bar.on_train_begin(); bar.on_epoch_begin(0); bar.on_train_batch_end(0, {"loss": 0.5})
    >>> bar.on_epoch_end(0, {"loss": 0.5})
    >>> out.getvalue().splitlines()[0]
    'Epoch 1/2'
    """

    def __init__(self, verbose=None, stream=None) -> None:
        super().__init__()
        self._verbose_arg, self.stream = verbose, stream
        self.verbose = 1 if verbose is None else int(verbose)
        self.epochs, self.target, self.seen = 1, None, 0
        self.progbar = None
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        if self._verbose_arg is None:
            v = params.get("verbose", 1)
            self.verbose = 1 if v == "auto" else int(v)
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def _reset(self):
        self.seen, self.progbar = 0, None

    def _bar(self):
        if self.progbar is None:
            self.progbar = Progbar(self.target, verbose=self.verbose, stream=self.stream)
        return self.progbar

    def _update(self, batch, logs):
        self.seen = batch + 1
        if self.verbose == 1:
            self._bar().update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs):
        bar = self._bar()
        if self.target is None:
            self.target = self.seen
        bar.target = self.target if self.target is not None else bar.target
        bar.update(self.target, list((logs or {}).items()), finalize=True)

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_train_end(self, logs=None):
        self._called_in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        self._bar()
        if self.verbose and self.epochs > 1:
            out = self.stream or sys.stdout
            out.write(f"Epoch {epoch + 1}/{self.epochs}\n")
            out.flush()

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_begin(self, logs=None):
        self._reset()

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)

    def on_predict_end(self, logs=None):
        self._finalize(logs)


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved by ``min_delta`` for ``patience`` epochs.

    ``mode`` is ``"min"``, ``"max"`` or ``"auto"`` (max for accuracy/AUC-like names);
    ``restore_best_weights`` puts back the weights of the best epoch.

    >>> import tapeflow as tf
    >>> tf.keras.callbacks.EarlyStopping(monitor="val_accuracy").mode
    'max'
    """

    def __init__(self, monitor="val_loss", min_delta=0.0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0) -> None:
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, int(patience), verbose
        self.baseline, self.restore_best_weights, self.start_from_epoch = baseline, restore_best_weights, \
            start_from_epoch
        self.mode = _mode(mode, monitor)
        self.min_delta = abs(min_delta) if self.mode == "max" else -abs(min_delta)
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best = None
        self.best_weights = None

    def _better(self, value, ref):
        if ref is None:
            return True
        return (value - self.min_delta > ref) if self.mode == "max" else (value - self.min_delta < ref)

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best = None
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None or epoch < self.start_from_epoch:
            return
        current = float(current)
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._better(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._better(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch and self.restore_best_weights and self.best_weights is not None:
            self.model.set_weights(self.best_weights)
        if self.stopped_epoch and self.verbose:
            _message(f"Epoch {self.stopped_epoch + 1}: early stopping (best {self.monitor} {self.best:.4f} "
                  f"at epoch {self.best_epoch + 1})")


def _mode(mode, monitor):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode != "auto":
        return mode
    m = monitor.lower()
    return "max" if any(s in m for s in ("acc", "auc", "precision", "recall", "fmeasure")) else "min"


class ModelCheckpoint(Callback):
    """Save the model's weights (a safetensors checkpoint) every epoch, or only when ``monitor`` improves.

    ``filepath`` may use ``{epoch}`` and log names, e.g. ``"ckpt/w-{epoch:02d}-{val_loss:.2f}"``;
    ``save_freq`` is ``"epoch"`` or a number of batches.  tapeflow saves weights only
    (``load_weights`` into a model of the same structure restores them).

    >>> import tapeflow as tf
    >>> tf.keras.callbacks.ModelCheckpoint("w-{epoch:02d}", save_best_only=True).monitor
    'val_loss'
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=True,
                 mode="auto", save_freq="epoch", initial_value_threshold=None) -> None:
        super().__init__()
        self.filepath, self.monitor, self.verbose = os.fspath(filepath), monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.mode = _mode(mode, monitor)
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError(f"save_freq must be 'epoch' or a positive number of batches, got {save_freq!r}")
        self.save_freq = save_freq
        self.best = initial_value_threshold
        self._batches = 0
        self._epoch = 0
        self.saved = []

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq != "epoch":
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._save(self._epoch, logs, batch)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, logs)

    def _save(self, epoch, logs, batch=None):
        logs = {k: float(v) for k, v in (logs or {}).items()}
        path = self.filepath.format(epoch=epoch + 1, batch=(batch or 0) + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                return
            better = self.best is None or (current > self.best if self.mode == "max" else current < self.best)
            if not better:
                return
            if self.verbose:
                _message(f"Epoch {epoch + 1}: {self.monitor} improved to {current:.5f}, saving to {path}")
            self.best = current
        self.model.save_weights(path)
        self.saved.append(path)


class TensorBoard(Callback):
    """Write the losses and metrics to TensorBoard: ``log_dir/train`` and ``log_dir/validation``.

    Each epoch writes ``epoch_<name>`` scalars; ``update_freq=N`` also writes ``batch_<name>``
    every N batches; ``histogram_freq=N`` writes weight histograms every N epochs.

    >>> import tapeflow as tf
    >>> tf.keras.callbacks.TensorBoard("logs").update_freq
    'epoch'
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False, update_freq="epoch",
                 profile_batch=0, embeddings_freq=0, embeddings_metadata=None) -> None:
        super().__init__()
        self.log_dir, self.histogram_freq, self.update_freq = os.fspath(log_dir), histogram_freq, update_freq
        self._writers = {}
        self._step = 0

    def _writer(self, kind):
        w = self._writers.get(kind)
        if w is None:
            from . import summary

            w = self._writers[kind] = summary.create_file_writer(os.path.join(self.log_dir, kind))
        return w

    def on_train_begin(self, logs=None):
        self._step = 0
        self._writer("train")

    def on_train_batch_end(self, batch, logs=None):
        self._step += 1
        if isinstance(self.update_freq, int) and self.update_freq > 0 and self._step % self.update_freq == 0:
            from . import summary

            with self._writer("train").as_default(step=self._step):
                for k, v in (logs or {}).items():
                    summary.scalar(f"batch_{k}", float(v))

    def on_epoch_end(self, epoch, logs=None):
        from . import summary

        logs = logs or {}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        with self._writer("train").as_default(step=epoch):
            for k, v in train.items():
                summary.scalar(f"epoch_{k}", float(v))
            if self.histogram_freq and epoch % self.histogram_freq == 0 and self.model is not None:
                for w in self.model.weights:
                    summary.histogram(w.name.split(":")[0] + "/histogram", w)
        if val:
            with self._writer("validation").as_default(step=epoch):
                for k, v in val.items():
                    summary.scalar(f"epoch_{k}", float(v))

    def on_train_end(self, logs=None):
        for w in self._writers.values():
            w.close()
        self._writers = {}


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate at each epoch to ``schedule(epoch, lr)``.

    >>> import tapeflow as tf
    >>> cb = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
    >>> cb.schedule(0, 0.1)
    0.05
    """

    def __init__(self, schedule, verbose=0) -> None:
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        opt = self.model.optimizer
        lr = float(self.schedule(epoch, opt.learning_rate))
        opt.learning_rate = lr
        if self.verbose:
            _message(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = self.model.optimizer.learning_rate


class TerminateOnNaN(Callback):
    """Stop training when the loss becomes NaN or infinite (``raise_error=True``: raise a RuntimeError
    at once instead).

    >>> import tapeflow as tf
    >>> cb = tf.keras.callbacks.TerminateOnNaN(raise_error=True)
    >>> try:
    ...     cb.on_train_batch_end(3, {"loss": float("nan")})
    ... except RuntimeError as e:
    ...     print(str(e).split(".")[0])
    NaN or Inf loss encountered at batch 3
    """

    def __init__(self, raise_error=False) -> None:
        super().__init__()
        self.raise_error = bool(raise_error)

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {float(loss)}. "
                                   "Terminating training immediately.")
            _message(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``; any hook of
    Callback may be given (``on_test_batch_end=...``); other keyword arguments become attributes, as Keras.

    >>> import tapeflow as tf
    >>> cb = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: print("done", e))
    >>> cb.on_epoch_end(3, {})
    done 3
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs) -> None:
        super().__init__()
        hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end, "on_train_begin": on_train_begin,
                 "on_train_end": on_train_end, "on_train_batch_begin": on_train_batch_begin,
                 "on_train_batch_end": on_train_batch_end}
        for name, value in kwargs.items():
            if name.startswith("on_"):
                if not hasattr(Callback, name):
                    raise ValueError(f"LambdaCallback: unknown callback hook {name!r}; allowed: the on_* methods of "
                                     "Callback")
                hooks[name] = value
            else:
                setattr(self, name, value)
        for name, fn in hooks.items():
            if fn is None:
                continue
            if not callable(fn):
                raise TypeError(f"LambdaCallback: {name} must be a function, got {type(fn).__name__}")
            setattr(self, name, fn)


class _MonitorMode:
    """Keras's MonitorCallback rule: improvement is ``current < best - min_delta`` ("min") or
    ``current > best + min_delta`` ("max"); "auto" is max for accuracy/AUC-like names, else min."""

    def _set_monitor(self, monitor, mode, min_delta):
        self.monitor = monitor
        self.mode = _mode(mode, monitor)
        self.min_delta = abs(float(min_delta))
        self.best = None

    def _is_improvement(self, current, best):
        if best is None:
            return True
        if self.mode == "max":
            return current - self.min_delta > best
        return current + self.min_delta < best


class ReduceLROnPlateau(_MonitorMode, Callback):
    """Multiply the learning rate by ``factor`` (never below ``min_lr``) when ``monitor`` has not improved
    by ``min_delta`` for ``patience`` epochs, then wait ``cooldown`` epochs; logs ``learning_rate``.

    >>> import tapeflow as tf
    >>> cb = tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1)
    >>> cb.factor, cb.patience, cb.mode
    (0.5, 1, 'min')
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs) -> None:
        super().__init__()
        if kwargs:
            raise TypeError(f"ReduceLROnPlateau: unexpected arguments {sorted(kwargs)}")
        if float(factor) >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0, got factor={factor}")
        self._set_monitor(monitor, mode, min_delta)
        self.factor, self.min_lr, self.patience = float(factor), float(min_lr), int(patience)
        self.verbose, self.cooldown = verbose, int(cooldown)
        self.cooldown_counter = self.wait = 0

    def on_train_begin(self, logs=None):
        self.best, self.cooldown_counter, self.wait = None, 0, 0

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _reduce(self, epoch):
        opt = self.model.optimizer
        old = float(opt.learning_rate)
        if old > float(_f32(self.min_lr)):
            new = max(old * self.factor, self.min_lr)
            opt.learning_rate = new
            if self.verbose > 0:
                _message(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
            return True
        return False

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["learning_rate"] = float(self.model.optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs)}.", _TrainingWarning, stacklevel=2)
            return
        current = float(current)
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience and self._reduce(epoch):
                self.cooldown_counter, self.wait = self.cooldown, 0


def _f32(x):
    import numpy as np

    return np.float32(x)


class CSVLogger(Callback):
    """Append each epoch's logs to a CSV file: an ``epoch`` column, then the log names sorted (with
    ``val_`` columns added when the first epoch has none, as Keras).  Each row is written and flushed
    as the epoch ends; ``append=True`` continues an existing file (its header is kept).

    >>> import os, tempfile
    >>> import tapeflow as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "log.csv")
    >>> cb = tf.keras.callbacks.CSVLogger(path)
    >>> cb.on_train_begin(); cb.on_epoch_end(0, {"loss": 0.5}); cb.on_train_end()
    >>> open(path).read().splitlines()
    ['epoch,loss,val_loss', '0,0.5,NA']
    """

    def __init__(self, filename, separator=",", append=False) -> None:
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, bool(append)
        self.writer = self.keys = self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")  # noqa: SIM115 (closed in on_train_end)
        self.writer = self.keys = None

    @staticmethod
    def _value(v):
        import numpy as np

        if isinstance(v, str):
            return v
        if hasattr(v, "numpy") and not isinstance(v, np.ndarray):
            v = v.numpy()
        if isinstance(v, np.ndarray) and v.ndim == 0:
            return v.item()
        if isinstance(v, (list, tuple, np.ndarray)):
            return f'"[{", ".join(map(str, np.asarray(v).ravel().tolist()))}]"'
        return v

    def on_epoch_end(self, epoch, logs=None):
        import collections
        import csv

        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])
        if self.writer is None:
            dialect = type("_Dialect", (csv.excel,), {"delimiter": self.sep})
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=dialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict({"epoch": epoch})
        row.update((k, self._value(logs.get(k, "NA"))) for k in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class BackupAndRestore(Callback):
    """Back up the weights and the epoch reached to ``backup_dir`` every epoch (or
    every ``save_freq`` batches), so a ``fit`` interrupted by an error resumes, when run again with this
    callback, from the last backup at the right epoch.  ``double_checkpoint`` keeps the previous
    backup too (used when the latest is unreadable); ``delete_checkpoint`` removes the directory when
    training ends normally.

    >>> import os, tempfile
    >>> import tapeflow as tf
    >>> cb = tf.keras.callbacks.BackupAndRestore(os.path.join(tempfile.mkdtemp(), "backup"))
    >>> os.path.basename(cb._weights_path)
    'latest.weights.h5'
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True) -> None:
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore: an empty backup_dir was passed")
        if save_freq != "epoch" and not (isinstance(save_freq, int) and not isinstance(save_freq, bool)
                                         and save_freq > 0):
            raise ValueError(f"BackupAndRestore: save_freq must be 'epoch' or a positive int, got {save_freq!r}")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq, self.double_checkpoint = save_freq, bool(double_checkpoint)
        self.delete_checkpoint = bool(delete_checkpoint)
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._prev_weights_path = self._weights_path + ".bkp"
        self._prev_metadata_path = self._metadata_path + ".bkp"
        self._batches_since_save = self._last_batch_seen = self._current_epoch = 0

    def on_train_begin(self, logs=None):
        try:
            self._load()
        except Exception:  # noqa: BLE001 (a damaged latest backup: fall back on the previous one if kept)
            if not os.path.exists(self._prev_weights_path):
                raise
            shutil.copyfile(self._prev_weights_path, self._weights_path)
            if os.path.exists(self._prev_metadata_path):
                shutil.copyfile(self._prev_metadata_path, self._metadata_path)
            elif os.path.exists(self._metadata_path):
                os.remove(self._metadata_path)
            self._load()

    def _load(self):
        import json

        if os.path.exists(self._weights_path):
            self.model.load_weights(self._weights_path)
        if os.path.exists(self._metadata_path):
            with open(self._metadata_path) as f:
                meta = json.loads(f.read())
            self._current_epoch = int(meta["epoch"])
            self.model._initial_epoch = self._current_epoch  # fit starts from here

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch = epoch + 1
        self._last_batch_seen = 0
        if self.save_freq == "epoch":
            self._save()

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        add = batch + 1 if batch <= self._last_batch_seen else batch - self._last_batch_seen
        self._batches_since_save += add
        self._last_batch_seen = batch
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save()

    def _save(self):
        import json

        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint:
            for src, dst in ((self._weights_path, self._prev_weights_path),
                             (self._metadata_path, self._prev_metadata_path)):
                if os.path.exists(src):
                    shutil.copyfile(src, dst)
        self.model.save_weights(self._weights_path)
        tmp = self._metadata_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps({"epoch": self._current_epoch, "batch": self._last_batch_seen}))
        os.replace(tmp, self._metadata_path)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)
