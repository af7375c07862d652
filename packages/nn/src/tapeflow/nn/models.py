"""Model (subclass it and write ``call``), Sequential, and the training loop:
``compile``, ``fit`` (arrays or a tapeflow Dataset, with a progress bar and callbacks),
``evaluate``, ``predict``, ``summary``, ``save_weights``/``load_weights``.

>>> import numpy as np
>>> import tapeflow as tf
>>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), kernel_initializer="zeros")])
>>> model.compile(optimizer=tf.optimizers.SGD(0.3), loss="mse")
>>> x = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], np.float32)
>>> h = model.fit(x, x.sum(1, keepdims=True), epochs=200, verbose=0)   # learn y = x0 + x1
>>> bool(h.history["loss"][-1] < 1e-6), model.layers[0].kernel.numpy().round(2).ravel().tolist()
(True, [1.0, 1.0])
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import os

import numpy as np

from tapeflow.core.errors import InvalidArgumentError, TrainingWarning as _TrainingWarning
from tapeflow.core.tensor import Tensor
from tapeflow.core.variables import Variable

import tapeflow.core as K
from tapeflow.core.function import function as _tf_function, functions_run_eagerly
from tapeflow.autodiff import pause_all
from . import _distribute
from . import callbacks as _cb
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from .layers.base import InputLayer, Layer, _bump, _shape_of


_M = TypeVar("_M", bound="Model")  # Model(inputs, outputs) makes a Functional, a Model


class Model(Layer):
    """A layer with training and saving: subclass it, create layers in ``__init__``, use them in ``call``.

    >>> import tapeflow as tf
    >>> class MNISTModel(tf.keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.dense1 = tf.keras.layers.Dense(units=10)
    ...         self.dense2 = tf.keras.layers.Dense(units=10)
    ...     def call(self, input):
    ...         result = self.dense1(input)
    ...         result = self.dense2(result)
    ...         result = self.dense2(result)  # reuse variables from dense2 layer
    ...         return result
    >>> model = MNISTModel()
    >>> batch = tf.zeros([1, 1, 784])
    >>> print(batch.shape)
    (1, 1, 784)
    >>> model(batch).numpy().tolist()
    [[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]
    >>> len(model.variables)
    4
    """

    _mask_transparent = True  # the layers inside read the masks their inputs carry and attach their own

    def __new__(cls: type[_M], *args: Any, **kwargs: Any) -> _M:
        # Model(inputs, outputs) is a functional model (tapeflow.nn.functional), as Keras's
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            from .functional import Functional

            return object.__new__(Functional)
        return object.__new__(cls)

    def __init__(self, *args, **kwargs) -> None:
        if args or "inputs" in kwargs or "outputs" in kwargs:
            from .functional import Functional, functional_class

            inputs, outputs, kwargs = _functional_args(args, kwargs)
            if not isinstance(self, Functional):  # a subclass calling super().__init__(inputs, outputs)
                self.__class__ = functional_class(type(self))
            Model.__init__(self, **kwargs)
            self._init_graph(inputs, outputs)
            return
        super().__init__(**kwargs)
        d = self.__dict__
        d["_autocast"] = False  # a model passes inputs on as they are; its layers cast them
        d["optimizer"] = None
        d["compiled_loss"] = None
        d["compiled_metrics"] = []
        d["_compiled"] = False
        d["stop_training"] = False
        d["history"] = None
        d["_loss_tracker"] = None

    # -- building -------------------------------------------------------------------------------
    def build(self, input_shape=None) -> None:
        """Create the weights by running ``call`` once on zeros of ``input_shape`` (unknown sizes as 1)."""
        if input_shape is None:
            raise ValueError(f'model "{self.name}" needs an input shape to build, e.g. build((None, 784))')
        if type(self).call is Model.call:
            self.__dict__["built"] = True
            return
        shape = tuple(1 if d is None else int(d) for d in input_shape)
        with pause_all():
            self(K.zeros(shape, self.dtype))
        self.__dict__["built"] = True
        self.__dict__["_in_shape"] = tuple(input_shape)

    def _maybe_build(self, x):
        # a subclassed model builds as its layers run (Keras too marks it built before the first call)
        self.__dict__["_in_shape"] = _shape_of(x)
        self.__dict__["_in_dtype"] = getattr(x, "dtype", None)  # (what tf.saved_model.save's signature takes)
        self.__dict__["built"] = True

    def _saved_model_signature(self):
        """The ``tf.function`` that ``tf.saved_model.save(model, dir)`` exports: ``call`` at inference
        (``training=False``) over the model's inputs (their shapes with a free batch dimension; a functional
        model's ``Input`` names and dtypes).

        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
        >>> model._saved_model_signature().input_signature
        (TensorSpec(shape=(None, 3), dtype=tf.float32, name='inputs'),)
        """
        from tapeflow.core.tensor_spec import TensorSpec

        flat = self.__dict__.get("_flat_inputs")
        if flat:  # functional: the Inputs' names, shapes and dtypes
            specs = [TensorSpec((None,) + tuple(t.shape)[1:], t.dtype, getattr(_input_layer_of(t), "name", None)
                                or f"input_{i}") for i, t in enumerate(flat)]
        else:
            shape = self.__dict__.get("_in_shape")
            if not self.built or shape is None or not shape or isinstance(shape[0], (tuple, list)):
                raise ValueError(f'tf.saved_model.save: model "{self.name}" has no known input shape; build it '
                                 f'(model.build((None, ...))), call it once, or start it with tf.keras.Input')
            dtype = self.__dict__.get("_in_dtype") or _first_layer_dtype(self)
            specs = [TensorSpec((None,) + tuple(shape)[1:], dtype, "inputs")]
        model = self

        def serve(*inputs):
            return model(inputs[0] if len(inputs) == 1 else list(inputs), training=False)

        serve.__name__ = self.name
        return _tf_function(serve, input_signature=specs)

    # -- layers --------------------------------------------------------------------------------------
    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """A layer of the model by ``name`` or by ``index`` in ``model.layers`` (one of the two).

        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, name="hidden"), tf.keras.layers.Dense(1)])
        >>> model.get_layer("hidden").name, model.get_layer(index=1) is model.layers[1]
        ('hidden', True)
        """
        if (name is None) == (index is None):
            raise ValueError("get_layer takes a name or an index (exactly one)")
        layers = self.layers
        if index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"get_layer(index=...) takes an int; got {type(index).__name__}")
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"get_layer(index={index}): the model has {len(layers)} layers; allowed: "
                                 f"[{-len(layers)}, {len(layers)})")
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"no layer named {name!r} in model {self.name!r}; its layers: {[x.name for x in layers]}")

    # -- summary ----------------------------------------------------------------------------------
    def _summary_rows(self):
        rows = []
        for layer in self._lists()[4]:
            shape = layer._out_shape
            shown = "?" if shape is None else str((None,) + tuple(shape[1:]))
            rows.append((f"{layer.name} ({type(layer).__name__})", shown, _count(layer.weights)))
        return rows

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False) -> None:
        """Print each layer with its output shape and parameter count, then the totals (as Keras).

        >>> import tapeflow as tf
        >>> tf.keras.backend.clear_session()
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(10, input_shape=(784,)), tf.keras.layers.Dense(10)])
        >>> model.summary()
        Model: "sequential"
        _________________________________________________________________
         Layer (type)                Output Shape              Param #
        =================================================================
         dense (Dense)               (None, 10)                7,850
         dense_1 (Dense)             (None, 10)                110
        =================================================================
        Total params: 7,960
        Trainable params: 7,960
        Non-trainable params: 0
        _________________________________________________________________
        """
        if not self.built and not self.weights:
            raise ValueError(f'model "{self.name}" has not yet been built: build it first by calling build() or '
                             "by calling the model on a batch of data")
        print_fn = print_fn or print
        width = line_length or 65
        pos = [int(width * p) for p in (positions or (0.45, 0.85, 1.0))]
        lines = [f'Model: "{self.name}"', "_" * width,
                 _cols([" Layer (type)", "Output Shape", "Param #"], pos), "=" * width]
        for name, shape, n in self._summary_rows():
            lines.append(_cols([f" {name}", shape, f"{n:,}"], pos))
        trainable = _count(self.trainable_variables)
        non = _count(self.non_trainable_variables)
        lines += ["=" * width, f"Total params: {trainable + non:,}", f"Trainable params: {trainable:,}",
                  f"Non-trainable params: {non:,}", "_" * width]
        for line in lines:
            print_fn(line.rstrip())

    # -- compile ------------------------------------------------------------------------------------
    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None, loss_weights: Any = None,
                weighted_metrics: Any = None, run_eagerly: Any = None, steps_per_execution: int = 1,
                jit_compile: Any = None, auto_scale_loss: bool = True, **kwargs: Any) -> None:
        """Set the optimizer, the loss and the metrics for ``fit`` and ``evaluate``.

        ``loss`` and each metric may be a name (``"sparse_categorical_crossentropy"``,
        ``"accuracy"``), an object or a function; ``"accuracy"`` picks the binary, categorical
        or sparse form from the loss (or the shapes), as Keras does.  Logs and ``history`` use
        the names given: ``"mae"`` logs as ``mae``, a metric object by its ``name``, a function
        by its ``__name__``.  Without a loss, only a ``train_step``/``test_step`` of your own can
        run (the default ones raise when they need the loss).

        >>> import numpy as np
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer="sgd", loss="mse", metrics=["mae", "acc"])
        >>> h = model.fit(np.zeros((4, 2)), np.zeros((4, 1)), verbose=0)
        >>> sorted(h.history)
        ['acc', 'loss', 'mae']
        """
        if kwargs:
            raise TypeError(f"compile() got unexpected keyword arguments {sorted(kwargs)}; Keras 3's compile takes "
                            f"optimizer, loss, loss_weights, metrics, weighted_metrics, run_eagerly, "
                            f"steps_per_execution, jit_compile, auto_scale_loss")
        d = self.__dict__
        # what model.save() writes as the compile config (the optimizer as it is then)
        d["_compile_args"] = {k: v for k, v in (("optimizer", optimizer), ("loss", loss), ("metrics", metrics),
                                                ("loss_weights", loss_weights), ("weighted_metrics", weighted_metrics),
                                                ("run_eagerly", run_eagerly), ("jit_compile", jit_compile),
                                                ("steps_per_execution", steps_per_execution))
                              if v is not None and not (k == "steps_per_execution" and v == 1)}
        d["optimizer"] = _optimizers.get(optimizer)
        if auto_scale_loss and getattr(self.dtype_policy, "name", None) == "mixed_float16":
            from .mixed_precision import LossScaleOptimizer  # as Keras 3: float16 gradients need loss scaling

            if not isinstance(d["optimizer"], LossScaleOptimizer):
                d["optimizer"] = LossScaleOptimizer(d["optimizer"])
        from .functional import output_losses_and_metrics  # several outputs: a loss and metrics per output

        loss, metrics, weighted_metrics = output_losses_and_metrics(self, loss, metrics, weighted_metrics,
                                                                    loss_weights)
        d["compiled_loss"] = _losses.get(loss) if loss is not None else None
        weighted = [_resolve_metric(m, d["compiled_loss"]) for m in _as_list(weighted_metrics)]
        d["compiled_metrics"] = [_resolve_metric(m, d["compiled_loss"]) for m in _as_list(metrics)] + weighted
        if loss_weights is not None and not _several_outputs_loss(d["compiled_loss"]):
            d["compiled_loss"] = _WeightedLoss(d["compiled_loss"], loss_weights)  # one output: Keras scales its loss
        d["_weighted_ids"] = {id(m) for m in weighted}  # as Keras 3: only weighted_metrics see sample weights
        d["_loss_tracker"] = _metrics.Mean(name="loss")
        d["_compiled"] = True
        if run_eagerly is not None and not isinstance(run_eagerly, bool):
            raise TypeError(f"compile: run_eagerly must be True, False or None, got {run_eagerly!r}")
        if isinstance(steps_per_execution, bool) or not isinstance(steps_per_execution, int) or \
                steps_per_execution < 1:
            raise ValueError(f"compile: steps_per_execution must be a positive int, got {steps_per_execution!r}")
        # run_eagerly=False (the default): fit/evaluate/predict run their steps through tf.function;
        # jit_compile is TensorFlow's switch for XLA: tapeflow compiles every graph the same way
        d["run_eagerly"] = bool(run_eagerly)
        d["jit_compile"] = jit_compile
        d["steps_per_execution"] = steps_per_execution
        d["_step_functions"] = {}

    def _step_function(self, name):
        """``self.<name>`` (train_step, test_step or predict_step) as fit and evaluate call it: a graph
        function (traced once per input structure and batch shape), or the method itself when
        ``compile(run_eagerly=True)`` or ``tf.config.run_functions_eagerly(True)``."""
        method = getattr(self, name)
        if self.__dict__.get("run_eagerly", False) or functions_run_eagerly() or \
                (name == "train_step" and getattr(self.optimizer, "_needs_eager_step", False)):
            return method
        cache = self.__dict__.setdefault("_step_functions", {})
        hit = cache.get(name)
        if hit is None or hit[0] is not method.__func__:
            hit = cache[name] = (method.__func__, _tf_function(method))
        return hit[1]

    @property
    def metrics(self) -> list:
        """The loss tracker, the compiled metrics, then metrics held in the model's attributes (as Keras)."""
        out = [self._loss_tracker] if self._loss_tracker is not None else []
        out += self.compiled_metrics
        seen = {id(m) for m in out}
        for v in self.__dict__.values():
            if isinstance(v, _metrics.Metric) and id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return out

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def _need_compiled(self, what):
        if not self._compiled:
            raise RuntimeError(f"you must compile the model before {what}: model.compile(optimizer, loss, metrics)")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        """The compiled loss plus the layers' extra losses (regularization, ``add_loss``).

        With neither (``compile()`` without a loss and no extra losses) it raises Keras's
        ``ValueError``: the default ``train_step`` and ``test_step`` need a loss, a step of
        your own need not call this.
        """
        extra = self.losses
        if self.compiled_loss is None:
            if not extra:
                raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
            return K.add_n([K.cast(e, K.float32) if e.dtype != K.float32 else e for e in extra])
        loss = self.compiled_loss(y, y_pred, sample_weight)
        if extra:
            loss = K.add(loss, K.add_n([K.cast(e, loss.dtype) if e.dtype != loss.dtype else e for e in extra]))
        return loss

    def _update_metrics(self, loss, y, y_pred, sample_weight, batch_size):
        with pause_all():
            self._loss_tracker.update_state(loss, sample_weight=batch_size)
            weighted = self.__dict__.get("_weighted_ids", ())
            for m in self.compiled_metrics:
                m.update_state(y, y_pred, sample_weight=sample_weight if id(m) in weighted else None)

    def _logs(self, returned=None):
        """The logs after a step: what a train/test step of the user's returned as a dict, else the metrics."""
        if isinstance(returned, dict):
            return {k: _scalar_log(v) for k, v in returned.items()}
        return {m.name: float(m.result()) for m in self.metrics}

    # -- steps -------------------------------------------------------------------------------------
    def train_step(self, data) -> dict[str, Any]:
        """One optimization step on a batch ``data`` = (x, y) or (x, y, sample_weight); returns the logs."""
        from tapeflow.autodiff import GradientTape

        x, y, sw = unpack(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sw)
            scale = getattr(self.optimizer, "scale_loss", None)  # a LossScaleOptimizer (mixed precision)
            scaled = loss if scale is None else scale(loss)
        tvars = self.trainable_variables
        grads = tape.gradient(scaled, tvars)
        self.optimizer.apply_gradients(zip(grads, tvars))
        self._update_metrics(loss, y, y_pred, sw, _batch_size(x))
        return self.metrics

    def test_step(self, data) -> dict[str, Any]:
        """Loss and metrics on a batch without training; returns the metrics."""
        x, y, sw = unpack(data)
        with pause_all():
            y_pred = self(x, training=False)
            loss = self.compute_loss(x, y, y_pred, sw)
        self._update_metrics(loss, y, y_pred, sw, _batch_size(x))
        return self.metrics

    def predict_step(self, data):
        x, _, _ = unpack(data)
        with pause_all():
            return self(x, training=False)

    # -- loops ---------------------------------------------------------------------------------------
    def fit(self, x: Any = None, y: Any = None, batch_size: Any = None, epochs: int = 1, verbose: Any = "auto",
            callbacks: Any = None, validation_split: float = 0.0, validation_data: Any = None, shuffle: Any = True,
            class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0, steps_per_epoch: Any = None,
            validation_steps: Any = None, validation_batch_size: Any = None, validation_freq: Any = 1,
            seed: Any = None) -> Any:
        """Train for ``epochs`` over arrays ``x``, ``y`` (in batches of ``batch_size``), a tapeflow
        ``Dataset`` or any iterable of batches, a Python generator, or a ``keras.utils.Sequence``
        (``PyDataset``); batches are ``x``, ``(x, y)`` or ``(x, y, sample_weight)``.

        As Keras 3's: ``shuffle`` is True (a new order of the arrays each epoch, or of a Sequence's
        batches), ``"batch"`` (each batch's examples shuffled among themselves) or False;
        ``class_weight`` maps class index to a weight that multiplies each example's loss (sparse,
        one-hot or binary ``y``; not together with ``sample_weight``); ``steps_per_epoch`` takes
        that many batches per epoch, continuing through the data across epochs (a generator that
        runs out ends training with a warning); ``validation_data`` is ``(x, y)``, ``(x, y, w)`` or
        a dataset/generator, evaluated after each epoch in ``validation_freq`` (an int: every n-th
        epoch, or a list of epoch numbers counted from 1), ``validation_steps`` batches of it;
        ``initial_epoch`` resumes the epoch count.  Shows a progress bar with ``verbose=1``; runs
        ``callbacks``.  Returns a History whose ``history`` maps each log name to its values.

        >>> import numpy as np
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,), kernel_initializer="ones")])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
        >>> h = model.fit(x, 2 * x, batch_size=2, epochs=3, initial_epoch=1, validation_data=(x, 2 * x),
        ...               verbose=0)
        >>> h.epoch, sorted(h.history)
        ([1, 2], ['loss', 'val_loss'])
        """
        self._need_compiled("training")
        _check_freq(validation_freq)
        if validation_split and validation_data is None:
            if _is_dataset(x) or _is_sequence(x):
                raise ValueError("validation_split is only supported for arrays; got a dataset or generator: "
                                 "pass validation_data instead")
            (x, y, sample_weight), validation_data = _split(x, y, sample_weight, validation_split)
        strategy = _distribute.strategy_of(self)  # under tf.distribute: global batches split over the replicas
        seed = seed if strategy is None else strategy._shared_seed(seed, shuffle)
        train = DataAdapter(x, y, sample_weight, batch_size, steps_per_epoch, shuffle=shuffle, seed=seed,
                            class_weight=class_weight)
        val = None
        if validation_data is not None:
            vargs = _val_args(validation_data)
            val = DataAdapter(vargs["x"], vargs.get("y"), vargs.get("sample_weight"),
                              None if vargs["iterable"] else (validation_batch_size or batch_size),
                              validation_steps, shuffle=False)
        verbose = _verbose(verbose)
        history = _cb.History()
        cbs = _cb.CallbackList(_as_list(callbacks) + [history])
        if verbose:
            cbs.callbacks.insert(0, _cb.ProgbarLogger(verbose))
        cbs.set_model(self)
        cbs.set_params({"epochs": epochs, "steps": train.steps, "verbose": verbose})
        self.__dict__["stop_training"] = False
        cbs.on_train_begin()
        initial_epoch = self.__dict__.pop("_initial_epoch", None) or initial_epoch  # set by BackupAndRestore
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cbs.on_epoch_begin(epoch)
            done = 0
            returned = None
            spe = self.__dict__.get("steps_per_execution", 1)  # batch callbacks once per execution of spe steps
            for step, data in enumerate(train.epoch()):
                if step % spe == 0:
                    cbs.on_train_batch_begin(step)
                returned = self._step_function("train_step")(data) if strategy is None else \
                    strategy._fit_step(self, data)
                done = step + 1
                if done % spe == 0 or done == train.steps:
                    logs = self._logs(returned)
                    cbs.on_train_batch_end(step - step % spe + spe - 1, logs)  # Keras: begin + spe - 1
                    if self.stop_training:
                        break
            else:
                if done % spe and done != train.steps:  # the input ended within an execution
                    logs = self._logs(returned)
                    cbs.on_train_batch_end(done - 1 - (done - 1) % spe + spe - 1, logs)
            if done == 0:  # the input ran out before this epoch (a generator is read only once)
                _ran_out()
                break
            train.seen_epoch(done)
            if cbs.params.get("steps") is None and train.steps:
                cbs.params["steps"] = train.steps  # a dataset of unknown length: known after one pass
            logs = self._logs(returned)
            if val is not None and _should_eval(epoch, validation_freq):
                vlogs = self._run_test(val, cbs, verbose=0)
                logs.update({f"val_{k}": v for k, v in vlogs.items()})
            cbs.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cbs.on_train_end(logs)
        return history

    def _run_test(self, data, cbs, verbose):
        """Loss and metrics over one pass of a DataAdapter (evaluate, and fit's validation)."""
        self.reset_metrics()
        cbs.on_test_begin()
        bar = _cb.Progbar(data.steps, verbose=verbose) if verbose else None
        n = 0
        returned = None
        spe = self.__dict__.get("steps_per_execution", 1)
        strategy = _distribute.strategy_of(self)  # under tf.distribute: batches split, metrics summed over replicas
        for n, batch in enumerate(data.epoch(), 1):
            if (n - 1) % spe == 0:
                cbs.on_test_batch_begin(n - 1)
            returned = self._step_function("test_step")(batch) if strategy is None else \
                strategy._test_step(self, batch)
            if n % spe == 0 or n == data.steps:
                blogs = self._logs(returned)
                if bar is not None:
                    bar.update(n, list(blogs.items()), finalize=False)
                cbs.on_test_batch_end(n - 1 - (n - 1) % spe + spe - 1, blogs)
        if n and n % spe and n != data.steps:  # the input ended within an execution
            cbs.on_test_batch_end(n - 1 - (n - 1) % spe + spe - 1, self._logs(returned))
        if n == 0:
            raise ValueError("evaluate() got no data: the input is empty (or a generator already read to its end)")
        data.seen_epoch(n)
        logs = self._logs(returned)
        if bar is not None:
            bar.target = n
            bar.update(n, list(logs.items()), finalize=True)
        cbs.on_test_end(logs)
        return logs

    def evaluate(self, x: Any = None, y: Any = None, batch_size: Any = None, verbose: Any = "auto",
                 sample_weight: Any = None, steps: Any = None, callbacks: Any = None,
                 return_dict: bool = False) -> Any:
        """The loss and metrics over ``x``, ``y`` (arrays, a dataset, a generator or a Sequence).

        Returns the loss alone when there are no metrics, else the list ``[loss, metric, ...]``
        (``metrics_names`` order), or with ``return_dict=True`` a dict of them by name.

        >>> import numpy as np
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,), kernel_initializer="ones",
        ...                                                     bias_initializer="zeros")])
        >>> model.compile(loss="mse", metrics=["mae"])
        >>> x = np.array([[1.0], [2.0]], np.float32)
        >>> model.evaluate(x, x + 1, verbose=0, return_dict=True)
        {'loss': 1.0, 'mae': 1.0}
        """
        self._need_compiled("evaluating")
        data = DataAdapter(x, y, sample_weight, batch_size, steps, shuffle=False)
        cbs = _cb.CallbackList(_as_list(callbacks), model=self)
        cbs.set_params({"steps": data.steps, "verbose": _verbose(verbose)})
        logs = self._run_test(data, cbs, _verbose(verbose))
        if return_dict:
            return logs
        vals = list(logs.values())
        return vals[0] if len(vals) == 1 else vals

    def predict(self, x: Any, batch_size: Any = None, verbose: Any = "auto", steps: Any = None,
                callbacks: Any = None) -> Any:
        """The model's outputs over ``x`` (arrays, a dataset, a generator or a Sequence), batch by batch,
        as one NumPy array (a list or dict of them for several outputs); runs the callbacks'
        ``on_predict_*`` hooks (``logs={"outputs": ...}`` after each batch, as Keras).

        >>> import numpy as np
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), kernel_initializer="ones")])
        >>> model.predict(np.ones((3, 2)), batch_size=2, verbose=0).ravel().tolist()
        [2.0, 2.0, 2.0]
        """
        data = DataAdapter(x, None, None, batch_size, steps, shuffle=False)
        verbose = _verbose(verbose)
        cbs = _cb.CallbackList(_as_list(callbacks), model=self)
        cbs.set_params({"steps": data.steps, "verbose": verbose})
        bar = _cb.Progbar(data.steps, verbose=verbose) if verbose else None
        outs = []
        cbs.on_predict_begin()
        spe = self.__dict__.get("steps_per_execution", 1)
        first = 0
        for n, batch in enumerate(data.epoch(), 1):
            if (n - 1) % spe == 0:
                cbs.on_predict_batch_begin(n - 1)
                first = len(outs)
            out = self._step_function("predict_step")(batch)
            outs.append(_to_numpy(out))
            if n % spe == 0 or n == data.steps:  # the outputs of the execution's batches
                batch_outs = outs[first] if len(outs) - first == 1 else _concat_outputs(outs[first:])
                cbs.on_predict_batch_end(n - 1 - (n - 1) % spe + spe - 1, {"outputs": batch_outs})
                if bar is not None:
                    bar.update(n, finalize=False)
        if outs and len(outs) % spe and len(outs) != data.steps:  # the input ended within an execution
            cbs.on_predict_batch_end(first + spe - 1, {"outputs": _concat_outputs(outs[first:])})
        if bar is not None:
            bar.target = len(outs)
            bar.update(len(outs), finalize=True)
        cbs.on_predict_end()
        if not outs:
            raise ValueError("predict() got no data: the input is empty (or a generator already read to its end)")
        if isinstance(outs[0], dict):
            return {k: np.concatenate([o[k] for o in outs]) for k in outs[0]}
        if isinstance(outs[0], (list, tuple)):
            return type(outs[0])(np.concatenate([o[i] for o in outs]) for i in range(len(outs[0])))
        return np.concatenate(outs)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One training step on one batch; returns the loss (and metrics) for that batch.

        ``class_weight`` (a dict class -> weight) weighs each example by its class, as in ``fit``.

        >>> import numpy as np
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,), kernel_initializer="zeros")])
        >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        >>> model.train_on_batch(np.ones((2, 1)), np.ones((2, 1)), return_dict=True)
        {'loss': 1.0}
        >>> round(float(model.layers[0].kernel.numpy()[0, 0]), 4)   # w - 0.1 * d/dw mean((w + b - 1)^2)
        0.2
        """
        self._need_compiled("training")
        if class_weight is not None and sample_weight is not None:
            raise ValueError("you cannot give class_weight and sample_weight at the same time; allowed: one of them")
        batch = (_tensor(x), _tensor(y), None if sample_weight is None else _tensor(sample_weight))
        if class_weight is not None:
            batch = _apply_class_weight(batch, _class_weight_table(class_weight))
        self.reset_metrics()
        logs = self._logs(self._step_function("train_step")(batch))
        return logs if return_dict else (list(logs.values()) if len(logs) > 1 else next(iter(logs.values())))

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Loss (and metrics) on one batch, without training.

        >>> import numpy as np
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,), kernel_initializer="zeros")])
        >>> model.compile(loss="mse", metrics=["mae"])
        >>> model.test_on_batch(np.ones((2, 1)), np.full((2, 1), 3.0))
        [9.0, 3.0]
        """
        self._need_compiled("evaluating")
        self.reset_metrics()
        logs = self._logs(self._step_function("test_step")((_tensor(x), _tensor(y),
                                          None if sample_weight is None else _tensor(sample_weight))))
        return logs if return_dict else (list(logs.values()) if len(logs) > 1 else next(iter(logs.values())))

    def predict_on_batch(self, x):
        """The model's outputs for one batch, as a NumPy array (inference mode).

        >>> import numpy as np
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(1,), kernel_initializer="ones")])
        >>> model.predict_on_batch(np.array([[3.0]])).tolist()
        [[3.0, 3.0]]
        """
        return _to_numpy(self._step_function("predict_step")((_tensor(x), None, None)))

    # -- weights on disk -------------------------------------------------------------------------------
    def save_weights(self, filepath: str | os.PathLike[str], overwrite: bool = True, save_format: str | None = None,
                     options: Any = None) -> None:
        """Write every variable of the model to a safetensors checkpoint (``.safetensors`` appended if missing).

        >>> import tempfile
        >>> import tapeflow as tf
        >>> m = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        >>> path = tempfile.mkdtemp() + "/w.safetensors"
        >>> m.save_weights(path)
        >>> m2 = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        >>> _ = m2.load_weights(path)
        >>> bool((m2.weights[0].numpy() == m.weights[0].numpy()).all())
        True
        """
        import os

        from . import checkpoint

        if save_format not in (None, "safetensors"):
            raise InvalidArgumentError(f"save_format={save_format!r}: weights are written as safetensors files; "
                                       "allowed: None or 'safetensors'", "SaveV2")
        checkpoint._no_options(options, "SaveV2")
        if not overwrite and os.path.exists(checkpoint._file(filepath)):
            raise FileExistsError(f"{checkpoint._file(filepath)!r} exists and overwrite=False")
        checkpoint.save_into(self, filepath)

    def load_weights(self, filepath: str | os.PathLike[str], skip_mismatch: bool = False, by_name: bool = False,
                     options: Any = None) -> Any:
        """Restore the weights written by ``save_weights`` (into an unbuilt model: as it builds).

        As Keras 3's: a file with no value for one of the model's variables, or a value of another
        shape, raises InvalidArgumentError and changes nothing (into an unbuilt model the check
        runs as each variable is created); ``skip_mismatch=True`` loads what fits and warns about
        the rest.  Values in the file that the model has no variable for are ignored.  A damaged
        file raises DataLossError and changes nothing.

        >>> import tempfile
        >>> import tapeflow as tf
        >>> path = tempfile.mkdtemp() + "/w"
        >>> tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))]).save_weights(path)
        >>> two = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,)), tf.keras.layers.Dense(1)])
        >>> try:
        ...     two.load_weights(path)
        ... except tf.errors.InvalidArgumentError as e:
        ...     print("no value for", str(e).split("variable(s): ")[1].split("]")[0] + "]")
        no value for ['layers/1/bias', 'layers/1/kernel']
        """
        from . import checkpoint

        if by_name:
            raise InvalidArgumentError("load_weights(by_name=True) is for Keras's legacy HDF5 files; a safetensors "
                                       "weights file matches variables by their path in the model; allowed: "
                                       "by_name=False", "RestoreV2")
        checkpoint._no_options(options, "RestoreV2")
        return checkpoint.restore_into(self, filepath, on_missing="warn" if skip_mismatch else "raise",
                                       skip_mismatch=bool(skip_mismatch))

    def save(self, filepath, overwrite=True, zipped=None, **kwargs) -> None:
        """Write the whole model to a ``.keras`` file: a zip of ``config.json`` (the architecture and the
        compile arguments), ``metadata.json`` and ``model.weights.safetensors`` (written atomically).
        ``tf.keras.models.load_model`` rebuilds it.

        >>> import os, tempfile
        >>> import tapeflow as tf
        >>> model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
        >>> path = os.path.join(tempfile.mkdtemp(), "model.keras")
        >>> model.save(path)
        >>> again = tf.keras.models.load_model(path)
        >>> bool((again.get_weights()[0] == model.get_weights()[0]).all())
        True
        """
        from . import saving

        if zipped not in (None, True):
            raise InvalidArgumentError(f"zipped={zipped!r}: a model is saved as one .keras zip file; allowed: True "
                                       "or None", "SaveModel")
        if kwargs:
            raise TypeError(f"save() got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
        saving.save_model(self, filepath, overwrite=overwrite)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}


def load_model(filepath: str | os.PathLike[str], custom_objects: dict[str, Any] | None = None, compile: bool = True,
               safe_mode: bool = True) -> Model:
    """Rebuild a model written by ``model.save("....keras")``: architecture, weights and (with
    ``compile=True``) the optimizer, loss and metrics it was compiled with.  Classes of your own
    are found in ``custom_objects`` or by ``tf.keras.saving.register_keras_serializable``.

    >>> import os, tempfile
    >>> import tapeflow as tf
    >>> inputs = tf.keras.Input(shape=(2,))
    >>> model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
    >>> path = os.path.join(tempfile.mkdtemp(), "m.keras")
    >>> model.save(path)
    >>> type(tf.keras.models.load_model(path)).__name__
    'Functional'
    """
    from . import saving

    return saving.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def _input_layer_of(t):
    """The InputLayer that made functional input ``t`` (its name names the exported input)."""
    from .functional import keras_history

    return keras_history(t)[0]


def _first_layer_dtype(model):
    """What a model built from a shape alone takes: integers for an Embedding first, else its float dtype."""
    layers = getattr(model, "_layer_list", None) or []
    given = next((la for la in layers if isinstance(la, InputLayer)), None)
    if given is not None:
        return given.dtype
    first = next((la for la in layers if not isinstance(la, InputLayer)), None)
    if first is not None and type(first).__name__ == "Embedding":
        return K.int32
    return model.dtype


def _functional_args(args, kwargs):
    kwargs = dict(kwargs)
    args = list(args)
    inputs = kwargs.pop("inputs") if "inputs" in kwargs else (args.pop(0) if args else None)
    outputs = kwargs.pop("outputs") if "outputs" in kwargs else (args.pop(0) if args else None)
    if args:
        raise TypeError(f"Model(inputs, outputs, name=None, trainable=True) got {len(args)} extra positional "
                        "argument(s)")
    if inputs is None or outputs is None:
        raise TypeError("a functional Model(inputs, outputs) needs both inputs and outputs (symbolic tensors from "
                        "tf.keras.Input and layers called on them); got None")
    return inputs, outputs, kwargs


class Sequential(Model):
    """A stack of layers, each feeding the next.  With an input shape (``input_shape=`` on the first layer,
    or a ``tf.keras.Input`` first) it is built at once; otherwise on its first call.

    >>> import tapeflow as tf
    >>> model = tf.keras.Sequential([
    ...   tf.keras.layers.Dense(10, input_shape=(784,)),  # must declare input shape
    ...   tf.keras.layers.Dense(10)
    ... ])
    >>> model.built, [tuple(v.shape) for v in model.trainable_variables]
    (True, [(784, 10), (10,), (10, 10), (10,)])
    """

    def __init__(self, layers=None, name=None, trainable=True) -> None:
        super().__init__(name=name, trainable=trainable)
        self.__dict__["_layer_list"] = []
        self.__dict__["_input_layer"] = None
        for layer in layers or ():
            self.add(layer)

    def add(self, layer):
        """Append a layer (builds the model when the input shape is known)."""
        if isinstance(layer, Tensor):  # tf.keras.Input(...) as the first entry
            from .functional import keras_history

            h = keras_history(layer)
            if h is None or not isinstance(h[0], InputLayer):
                raise TypeError("Sequential takes layers, or a tf.keras.Input(...) first; got a tensor")
            layer = h[0]
        if isinstance(layer, InputLayer):
            if self._layer_list:
                raise ValueError("an Input must be the first layer of a Sequential model")
            self.__dict__["_input_layer"] = layer
            self.build(layer._batch_input_shape)
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential takes layers, got {type(layer).__name__}")
        self._layer_list.append(layer)
        _bump()
        shape = None
        if self._input_layer is not None:
            shape = self._input_layer._batch_input_shape
        elif self._layer_list[0]._batch_input_shape is not None:
            shape = self._layer_list[0]._batch_input_shape
        if shape is not None:
            self.build(shape)
        else:
            self.__dict__["built"] = False

    # -- the functional view (Keras 3's Sequential is a functional model once its input is known) -------------
    def _graph(self):
        """The layers called on a symbolic input of the model's input shape (made again after add/pop)."""
        key = tuple(id(layer) for layer in self._layer_list)
        g = self.__dict__.get("_sym")
        if g is not None and g.key == key:
            return g
        il = self._input_layer
        if il is None:
            first = self._layer_list[0] if self._layer_list else None
            if first is None or first._batch_input_shape is None:
                raise AttributeError("inputs")  # (Layer.__getattr__ says why)
            il = g.input_layer if g is not None else InputLayer(batch_shape=first._batch_input_shape,
                                                                 dtype=first.dtype)
        from .functional import input_tensor

        x = input_tensor(il)
        y = x
        for layer in self._layer_list:
            y = layer(y)
        g = _SymGraph(key, il, x, y)
        self.__dict__["_sym"] = g
        return g

    @property
    def inputs(self) -> list:
        """The symbolic input (a list of one), once the input shape is known (an Input first, or input_shape=)."""
        return [self._graph().inputs]

    @property
    def outputs(self) -> list:
        """The symbolic output of the last layer on ``inputs``, as a list of one."""
        return [self._graph().outputs]

    @property
    def input(self):
        return self._graph().inputs

    @property
    def output(self):
        return self._graph().outputs

    def pop(self):
        """Remove the last layer."""
        if not self._layer_list:
            raise IndexError("there is no layer to pop")
        layer = self._layer_list.pop()
        _bump()
        return layer

    @property
    def layers(self) -> list:
        return list(self._layer_list)

    def _tracked_children(self):
        own, subs = super()._tracked_children()
        return own, [s for s in subs if not isinstance(s, InputLayer)]

    def _checkpoint_children(self):
        for i, layer in enumerate(self._layer_list):
            yield f"layers/{i}", layer
        for k, v in self.__dict__.items():
            if isinstance(v, Variable):
                yield k, v

    def build(self, input_shape=None) -> None:
        """Build every layer by passing shapes through them (no data runs)."""
        if input_shape is None:
            raise ValueError(f'Sequential model "{self.name}" needs an input shape to build, e.g. build((None, 784))')
        shape = tuple(input_shape)
        self.__dict__["_in_shape"] = shape
        shapes = []
        for layer in self._layer_list:
            if not layer.built:
                layer.build(_tshape(shape))
                layer.__dict__["built"] = True
                layer.__dict__["_in_shape"] = shape
            shape = tuple(layer.compute_output_shape(shape))
            shapes.append(shape)
        self.__dict__["_shapes"] = shapes
        self.__dict__["built"] = True
        _bump()

    def call(self, inputs, training=None, mask=None):
        x = inputs
        for i, layer in enumerate(self._layer_list):
            # a mask given to the model goes to its first layer; later ones read the masks outputs carry
            x = layer(x, training=training, mask=mask) if i == 0 and mask is not None else layer(x, training=training)
        return x

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        for layer in self._layer_list:
            shape = tuple(layer.compute_output_shape(shape))
        return shape

    def _summary_rows(self):
        rows = []
        shapes = self.__dict__.get("_shapes")
        if shapes is None or len(shapes) != len(self._layer_list):
            in_shape = self.__dict__.get("_in_shape")
            shapes = [None] * len(self._layer_list)
            if in_shape is not None:
                s = (None,) + tuple(in_shape[1:])
                shapes = []
                for layer in self._layer_list:
                    s = tuple(layer.compute_output_shape(s))
                    shapes.append(s)
        for layer, shape in zip(self._layer_list, shapes):
            rows.append((f"{layer.name} ({type(layer).__name__})", "?" if shape is None else _shape_str(shape),
                         _count(layer.weights)))
        return rows

    def get_config(self):
        from .saving import serialize_keras_object

        layers = [serialize_keras_object(layer) for layer in self._layer_list]
        if self._input_layer is not None:
            layers.insert(0, serialize_keras_object(self._input_layer))
        cfg = {"name": self.name, "trainable": self.trainable, "layers": layers}
        shape = self.__dict__.get("_in_shape")
        if self.built and shape is not None:
            cfg["build_input_shape"] = list(shape)
        return cfg

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .saving import deserialize_keras_object

        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for entry in config.get("layers", ()):
            model.add(deserialize_keras_object(entry, custom_objects=custom_objects))
        shape = config.get("build_input_shape")
        if shape is not None and not model.built:
            model.build(tuple(shape))
        return model


# ---- helpers ------------------------------------------------------------------------------------

class _SymGraph:
    """A Sequential model's symbolic input and output (not a container: layers do not walk it)."""

    __slots__ = ("key", "input_layer", "inputs", "outputs")

    def __init__(self, key, input_layer, inputs, outputs) -> None:
        self.key, self.input_layer, self.inputs, self.outputs = key, input_layer, inputs, outputs


def _tshape(shape):
    from tapeflow.core.tensor import TensorShape

    return TensorShape(shape)


def _shape_str(shape):
    if isinstance(shape, list):
        return ", ".join(_shape_str(s) for s in shape)
    return str((None,) + tuple(shape[1:])) if shape else "()"


def _cols(fields, pos):
    line = ""
    for i, f in enumerate(fields):
        start = 0 if i == 0 else pos[i - 1]
        line = line[:start].ljust(start) + str(f)
        line = line[:pos[i]].ljust(pos[i]) if i < len(fields) - 1 else line
    return line


def _count(variables) -> int:
    n = 0
    for v in variables:
        s = 1
        for d in v.shape:
            s *= int(d)
        n += s
    return n


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, dict):
        raise TypeError("per-output dicts of metrics are not supported (models here have one output)")
    return [x]


def _resolve_metric(m, loss):
    """A compiled metric; one given by name logs under that name (``"mae"``, not ``mean_absolute_error``)."""
    if isinstance(m, str) and m in ("accuracy", "acc"):
        if isinstance(loss, _losses.SparseCategoricalCrossentropy):
            return _metrics.SparseCategoricalAccuracy(name=m)
        if isinstance(loss, _losses.CategoricalCrossentropy):
            return _metrics.CategoricalAccuracy(name=m)
        if isinstance(loss, _losses.BinaryCrossentropy):
            return _metrics.BinaryAccuracy(name=m)
        return _AutoAccuracy(name=m)
    if isinstance(m, str):
        return _metrics.get(m, name=m)
    return _metrics.get(m)


def _scalar_log(v):
    if isinstance(v, _metrics.Metric):
        v = v.result()
    if isinstance(v, Variable):
        v = v.read_value()
    if isinstance(v, Tensor) and v._size != 1:
        return np.array(v)
    return float(v)


class _AutoAccuracy(_metrics.Mean):
    """"accuracy" for a loss that does not say which: binary, categorical or sparse by the shapes."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _tensor(y_pred)
        y_true = _tensor(y_true)
        rp, rt = len(y_pred.shape), len(y_true.shape)
        if y_pred.shape and y_pred.shape[-1] == 1:
            fn = _metrics.binary_accuracy
        elif rt < rp or (rt == rp and y_true.shape[-1] == 1):
            fn = _metrics.sparse_categorical_accuracy
        elif y_pred.dtype.is_floating and rt == rp and y_pred.shape[-1] > 1:
            fn = _metrics.categorical_accuracy
        else:
            fn = _metrics.accuracy
        super().update_state(fn(y_true, y_pred), sample_weight=sample_weight)


def _tensor(x):
    if x is None or isinstance(x, Tensor):
        return x
    if isinstance(x, Variable):
        return x.read_value()
    if isinstance(x, (list, tuple)) and x and all(isinstance(e, (np.ndarray, Tensor)) for e in x):
        return type(x)(_tensor(e) for e in x)
    if isinstance(x, dict):
        return {k: _tensor(v) for k, v in x.items()}
    arr = np.asarray(x)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return K.constant(arr)


def _to_numpy(out):
    if isinstance(out, (list, tuple)):
        return type(out)(_to_numpy(o) for o in out)
    if isinstance(out, dict):  # a functional model's dict of outputs
        return {k: _to_numpy(v) for k, v in out.items()}
    return np.array(out)


def unpack(data):
    """(x, y, sample_weight) from a batch: ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``."""
    if isinstance(data, tuple):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
        raise ValueError(f"a batch must be x, (x,), (x, y) or (x, y, sample_weight); got a tuple of {len(data)}")
    if isinstance(data, list) and len(data) in (2, 3) and not isinstance(data[0], (int, float)):
        return unpack(tuple(data))
    return data, None, None


def _concat_outputs(outs):
    """Several batches' predictions (arrays, or lists/dicts of arrays) as one, batch by batch."""
    first = outs[0]
    if isinstance(first, dict):
        return {k: np.concatenate([o[k] for o in outs]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(np.concatenate([o[i] for o in outs]) for i in range(len(first)))
    return np.concatenate(outs)


def _several_outputs_loss(loss) -> bool:
    from .functional import _OutputLosses

    return isinstance(loss, _OutputLosses)


class _WeightedLoss:
    """A single output's loss times ``compile(loss_weights=...)`` (a number, or a list or dict of one)."""

    def __init__(self, loss, loss_weights) -> None:
        if loss is None:
            raise ValueError("compile: loss_weights was given without a loss")
        w = loss_weights
        if isinstance(w, dict):
            w = list(w.values())
        if isinstance(w, (list, tuple)):
            if len(w) != 1:
                raise ValueError(f"compile: the model has one output, so loss_weights takes one weight, "
                                 f"got {loss_weights!r}")
            w = w[0]
        if isinstance(w, bool) or not isinstance(w, (int, float, np.floating, np.integer)):
            raise TypeError(f"compile: loss_weights must be a number (or a list or dict of one), got {loss_weights!r}")
        self.loss, self.weight = loss, float(w)
        self.name = getattr(loss, "name", getattr(loss, "__name__", "loss"))

    def __call__(self, y_true, y_pred, sample_weight=None):
        return K.multiply(self.loss(y_true, y_pred, sample_weight), self.weight)


def _batch_size(x):
    while isinstance(x, (list, tuple)):
        x = x[0]
    if isinstance(x, dict):
        x = next(iter(x.values()))
    return int(x.shape[0]) if getattr(x, "shape", None) else 1


def _is_dataset(x) -> bool:
    """A tapeflow Dataset or another iterable of batches (a generator, an iterator, a data loader)."""
    try:
        from tapeflow.data import Dataset
    except ImportError:
        Dataset = None
    if Dataset is not None and isinstance(x, Dataset):
        return True
    if isinstance(x, (np.ndarray, Tensor, Variable, list, tuple, dict, str, bytes)) or x is None:
        return False
    return hasattr(x, "__iter__") and not _is_sequence(x)


def _is_sequence(x) -> bool:
    """A ``keras.utils.Sequence``/``PyDataset``-like object: batches by index (``len`` and ``[i]``)."""
    if isinstance(x, (np.ndarray, Tensor, Variable, list, tuple, dict, str, bytes)) or x is None:
        return False
    try:
        from tapeflow.data import Dataset
        if isinstance(x, Dataset):
            return False
    except ImportError:
        pass
    return hasattr(x, "__getitem__") and hasattr(x, "__len__")


def _split(x, y, sw, fraction):
    n = _num(x)
    cut = math.floor(n * (1.0 - fraction))
    if cut <= 0 or cut >= n:
        raise ValueError(f"validation_split={fraction} leaves no training or no validation data ({n} examples)")

    def part(a, s):
        return None if a is None else _map(lambda t: np.asarray(t)[s], a)

    return (part(x, slice(0, cut)), part(y, slice(0, cut)), part(sw, slice(0, cut))), \
        (part(x, slice(cut, None)), part(y, slice(cut, None)), part(sw, slice(cut, None)))


def _val_args(v):
    if _is_dataset(v) or _is_sequence(v):
        return {"x": v, "iterable": True}
    if isinstance(v, tuple) and len(v) in (2, 3):
        return {"x": v[0], "y": v[1], "sample_weight": v[2] if len(v) == 3 else None, "iterable": False}
    raise ValueError("validation_data must be (x, y), (x, y, sample_weight), a dataset, a generator or a Sequence; "
                     f"got {type(v).__name__}" + (f" of {len(v)}" if isinstance(v, (tuple, list)) else ""))


def _check_freq(freq):
    if isinstance(freq, bool) or not (isinstance(freq, (int, np.integer)) and freq >= 1 or
                                      isinstance(freq, (list, tuple)) and
                                      all(isinstance(e, (int, np.integer)) and not isinstance(e, bool) for e in freq)):
        raise ValueError(f"validation_freq={freq!r}; allowed: a positive int (validate every n-th epoch) or a "
                         "list of epoch numbers counted from 1")


def _should_eval(epoch, freq):
    return (epoch + 1) % int(freq) == 0 if isinstance(freq, (int, np.integer)) else (epoch + 1) in freq


def _verbose(verbose):
    if verbose == "auto":
        return 1
    if isinstance(verbose, bool) or not isinstance(verbose, (int, np.integer)) or verbose not in (0, 1, 2):
        raise ValueError(f"verbose={verbose!r}; allowed: 'auto', 0, 1 or 2")
    return int(verbose)


def _ran_out():
    import warnings

    warnings.warn("Your input ran out of data; interrupting training. Make sure that your dataset or generator can "
                  "generate at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` "
                  "function when building your dataset.", _TrainingWarning, stacklevel=3)


def _class_weight_table(class_weight):
    """``class_weight`` checked: a dict of class index -> weight."""
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be a dict mapping class indices to weights; got "
                         f"{type(class_weight).__name__}")
    table = {}
    for k, v in class_weight.items():
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"class_weight key {k!r}; allowed: class indices (ints >= 0)")
        try:
            table[int(k)] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"class_weight[{k}] = {v!r}; allowed: a number") from None
    return table


def _apply_class_weight(batch, table):
    """(x, y, w) with w the class weight of each example's class (Keras's class_weight_to_sample_weights):
    the argmax of one-hot ``y``, else ``y`` rounded; classes not in ``class_weight`` weigh 1."""
    x, y, sw = unpack(batch)
    if sw is not None:
        raise ValueError("you cannot give class_weight and sample_weight at the same time (the batches carry "
                         "sample weights); allowed: one of them")
    if y is None:
        raise ValueError("class_weight needs targets y to weigh examples by class; the batches have none")
    if isinstance(y, (list, tuple, dict)):
        raise ValueError("class_weight is only supported for models with a single output; weigh each output with "
                         "sample_weight instead")
    y = _tensor(y)
    if len(y.shape) > 1 and y.shape[-1] != 1:
        ids = K.argmax(y, axis=-1)
    else:
        ids = K.round(K.cast(K.reshape(y, [-1]) if len(y.shape) > 1 else y, K.float32))
    ids = np.asarray(ids).astype(np.int64).ravel()  # class ids to host: a dict lookup, no arithmetic
    w = np.array([table.get(int(c), 1.0) for c in ids], np.float32)
    return x, y, K.constant(w)


def _map(fn, x):
    if isinstance(x, (list, tuple)) and not (x and isinstance(x[0], (int, float))):
        return type(x)(_map(fn, e) for e in x)
    if isinstance(x, dict):
        return {k: _map(fn, v) for k, v in x.items()}
    return fn(x)


def _num(x):
    while isinstance(x, (list, tuple)) and x and not isinstance(x[0], (int, float)):
        x = x[0]
    if isinstance(x, dict):
        x = next(iter(x.values()))
    return int(np.shape(x)[0])


class DataAdapter:
    """Batches for the loops, as Keras 3's data adapters and epoch iterator give them.

    From arrays (sliced; ``shuffle`` True, ``"batch"`` or False), from a ``Sequence``-like object
    (``len``/``[i]``, its batch order shuffled with ``shuffle=True``, ``on_epoch_end()`` after
    each epoch), or from an iterable (a tapeflow Dataset, a generator: iterated each epoch; a
    generator is read once).  With ``steps``, each epoch takes that many batches and the next
    epoch continues where it stopped; a pass that runs out mid-epoch ends the epoch with Keras's
    warning.  ``class_weight`` turns each batch's ``y`` into sample weights.
    """

    def __init__(self, x, y, sample_weight, batch_size, steps, shuffle=False, seed=None, class_weight=None) -> None:
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1):
            raise ValueError(f"steps={steps!r}; allowed: a positive int or None")
        if shuffle not in (True, False, "batch") and not isinstance(shuffle, (np.bool_,)):
            raise ValueError(f"shuffle={shuffle!r}; allowed: True, False or 'batch'")
        self._steps_arg = None if steps is None else int(steps)
        self._iter = None
        self._cw = None if class_weight is None else _class_weight_table(class_weight)
        if class_weight is not None and sample_weight is not None:
            raise ValueError("you cannot give class_weight and sample_weight at the same time; allowed: one of them")
        self.shuffle = shuffle
        if seed is None and shuffle:
            # the order follows tf.random.set_seed (fresh without one), so seeded training repeats exactly
            seed = int(K.random_uniform((), 0, 2 ** 31 - 1, dtype=K.int64))
        self.rng = np.random.default_rng(seed)
        self._kind = "dataset" if _is_dataset(x) else "sequence" if _is_sequence(x) else "arrays"
        if self._kind != "arrays":
            what = "a dataset or generator" if self._kind == "dataset" else "a Sequence"
            if y is not None:
                raise ValueError(f"y must not be given when x is {what} (it yields (x, y) batches)")
            if sample_weight is not None:
                raise ValueError(f"sample_weight must not be given when x is {what} (it yields (x, y, "
                                 "sample_weight) batches)")
            if batch_size is not None:
                raise ValueError(f"batch_size must not be given when x is {what} (it makes the batches)")
            self.ds = x
            n = len(x) if self._kind == "sequence" else _cardinality(x)
            if n == -1 and steps is None:
                raise ValueError("the dataset is infinite (it repeats): pass steps_per_epoch (or steps) to say "
                                 "how many batches an epoch takes")
            self._passlen = None if n == -1 else n
            self.steps = steps if steps is not None else n
            return
        if x is None:
            raise ValueError("no input data: pass x (arrays, a dataset, a generator or a Sequence)")
        self.x = _map(_host, x)
        self.y = None if y is None else _map(_host, y)
        self.sw = None if sample_weight is None else _map(_host, sample_weight)
        self.n = _num(self.x)
        if self.y is not None and _num(self.y) != self.n:
            raise InvalidArgumentError(f"x has {self.n} examples but y has {_num(self.y)}; allowed: the same "
                                       "number", "Fit")
        if self.sw is not None and _num(self.sw) != self.n:
            raise InvalidArgumentError(f"x has {self.n} examples but sample_weight has {_num(self.sw)}; allowed: "
                                       "the same number", "Fit")
        self.batch_size = int(batch_size or 32)
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        full = max(1, -(-self.n // self.batch_size)) if self.n else 0
        self._passlen = full
        self.steps = steps if steps is not None else full

    def _pass(self):
        """One pass over the data (a fresh order for shuffled arrays and Sequences)."""
        if self._kind == "dataset":
            for b in self.ds:
                yield _batch(b)
            return
        if self._kind == "sequence":
            order = self.rng.permutation(len(self.ds)) if self.shuffle else range(len(self.ds))
            for i in order:
                yield _batch(self.ds[int(i)])
            return
        idx = self.rng.permutation(self.n) if self.shuffle and self.shuffle != "batch" else None
        for i in range(self._passlen):
            start, stop = i * self.batch_size, min(self.n, (i + 1) * self.batch_size)
            if self.shuffle == "batch":
                sel = self.rng.permutation(stop - start) + start
            else:
                sel = idx[start:stop] if idx is not None else slice(start, stop)

            def take(a, sel=sel):
                return K.constant(a[sel])

            yield (_map(take, self.x), None if self.y is None else _map(take, self.y),
                   None if self.sw is None else _map(take, self.sw))

    def _end_of_pass(self):
        if self._kind == "sequence" and hasattr(self.ds, "on_epoch_end"):
            self.ds.on_epoch_end()

    def epoch(self):
        """The batches of one epoch."""
        for b in self._epoch_raw():
            yield b if self._cw is None else _apply_class_weight(b, self._cw)

    def _epoch_raw(self):
        if self._steps_arg is None:
            yield from self._pass()
            self._end_of_pass()
            return
        for step in range(self._steps_arg):
            if self._iter is None:
                self._iter = self._pass()
            try:
                b = next(self._iter)
            except StopIteration:
                self._iter = None
                self._end_of_pass()
                if step == 0:  # the last epoch ended where the data did: a new pass (empty for a generator)
                    self._iter = self._pass()
                    try:
                        b = next(self._iter)
                    except StopIteration:
                        self._iter = None
                        return
                else:
                    _ran_out()
                    return
            yield b

    def seen_epoch(self, steps):
        if self.steps is None and steps:
            self.steps = steps


def _host(a):
    if isinstance(a, Variable):
        a = a.read_value()
    arr = np.asarray(a)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)  # Python/NumPy float64 data trains in float32, as Keras casts it
    return arr


def _batch(b):
    if isinstance(b, dict) and not all(isinstance(v, (np.ndarray, Tensor)) for v in b.values()):
        return b
    if isinstance(b, (tuple, list)):
        return tuple(_tensor(e) if not isinstance(e, (tuple, list, dict)) else _map(_tensor, e) for e in b)
    return _tensor(b)


def _cardinality(ds):
    for attr in ("cardinality",):
        f = getattr(ds, attr, None)
        if f is not None:
            try:
                n = int(f())
            except (TypeError, ValueError, RuntimeError):  # cardinality unknown to the dataset
                n = -1
            if n >= 0 or n == -1:
                return n  # -1: infinite (a repeated dataset)
    try:
        return len(ds)
    except TypeError:
        return None

