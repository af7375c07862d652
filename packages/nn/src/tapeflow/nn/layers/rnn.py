"""Recurrent layers: LSTM and GRU (and their cells), run step by step in eager mode.

Inputs are (batch, time, features), with an optional (batch, time) mask (from
Embedding(mask_zero=True), Masking or ``mask=``) whose False steps are skipped.
The input projection of every time step is
one matmul up front; each step then costs one matmul with the recurrent kernel
and a handful of element-wise ops.
"""
from __future__ import annotations

from .. import _args as A
import tapeflow.core as K
from .. import activations as _act
from .. import initializers as _init
from .. import regularizers as _reg
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.ops.rnn_ops import gru_cell as _gru_cell, lstm_cell as _lstm_cell

from .base import InputSpec, Layer


#: the activations the fused LSTM kernel computes (Keras's defaults, given by name or as functions)
_TANH, _SIGMOID = (_act.tanh, K.tanh), (_act.sigmoid, K.sigmoid)
_FUSED_DTYPES = (K.float32, K.float64)


def _split(z, n):
    return K.split(z, n, axis=-1)


class _ForgetBiasInit(_init.Initializer):
    """Zeros, except ones for the forget gate (the LSTM's ``unit_forget_bias``)."""

    def __init__(self, units, base) -> None:
        self.units, self.base = units, _init.get(base)

    def __call__(self, shape, dtype=None):
        u = self.units
        b = self.base((4 * u,), dtype)
        idx = K.range(4 * u)
        mask = K.cast(K.logical_and(K.greater_equal(idx, u), K.less(idx, 2 * u)), b.dtype)
        return b * (1.0 - mask) + mask


class LSTMCell(Layer):
    """One LSTM step: gates i, f, o = sigmoid, candidate g = tanh of ``x @ kernel + h @ recurrent_kernel + bias``;
    ``c = f * c + i * g``, ``h = o * tanh(c)``.  Gate order in the weights: i, f, g, o (as Keras).

    >>> import tapeflow as tf
    >>> cell = tf.keras.layers.LSTMCell(4)
    >>> h, (h2, c) = cell(tf.ones([2, 3]), [tf.zeros([2, 4]), tf.zeros([2, 4])])
    >>> h.shape, cell.count_params()
    (TensorShape([2, 4]), 128)
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 dropout=0.0, recurrent_dropout=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.units = A.integer(units, "units", self, lo=1)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.recurrent_activation = A.resolved(_act.get, recurrent_activation, "recurrent_activation", self)
        A.lookups(self, kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        self.unit_forget_bias = A.boolean(unit_forget_bias, "unit_forget_bias", self)
        self.kernel_initializer, self.recurrent_initializer = kernel_initializer, recurrent_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer, self.recurrent_regularizer = kernel_regularizer, recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.dropout = A.number(dropout, "dropout", self, lo=0.0, hi=1.0)
        self.recurrent_dropout = A.number(recurrent_dropout, "recurrent_dropout", self, lo=0.0, hi=1.0)
        self.state_size = [self.units, self.units]

    def build(self, input_shape):
        u = self.units
        self.kernel = self.add_weight("kernel", (int(input_shape[-1]), 4 * u), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (u, 4 * u),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer)
        if self.use_bias:
            init = _ForgetBiasInit(u, self.bias_initializer) if self.unit_forget_bias else self.bias_initializer
            self.bias = self.add_weight("bias", (4 * u,), initializer=init, regularizer=self.bias_regularizer)
        else:
            self.bias = None

    def step(self, xw, h, c):
        """One step from the input projection ``xw = x @ kernel + bias``."""
        z = K.add(xw, K.matmul(h, self.recurrent_kernel.read_value()))
        if self.activation in _TANH and self.recurrent_activation in _SIGMOID and z._dtype in _FUSED_DTYPES \
                and c._dtype is z._dtype and len(c._shape) == 2 and c._shape[0] == z._shape[0]:
            return _lstm_cell(z, c)  # the default activations: one fused kernel for the gates and the new h, c
        zi, zf, zg, zo = _split(z, 4)
        ra, a = self.recurrent_activation, self.activation
        c = K.add(K.multiply(ra(zf), c), K.multiply(ra(zi), a(zg)))
        h = K.multiply(ra(zo), a(c))
        return h, c

    def call(self, inputs, states, training=None):
        h, c = states
        xw = K.matmul(inputs, self.kernel.read_value())
        if self.bias is not None:
            xw = K.add(xw, self.bias.read_value())
        h, c = self.step(xw, h, c)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": _act.serialize(self.activation),
                "recurrent_activation": _act.serialize(self.recurrent_activation), "use_bias": self.use_bias,
                "unit_forget_bias": self.unit_forget_bias, **_cell_config(self)}


def _cell_config(cell) -> dict:
    """The initializer, regularizer and dropout arguments of an LSTM/GRU cell, as its config holds them."""
    return {"kernel_initializer": _init.serialize(_init.get(cell.kernel_initializer)),
            "recurrent_initializer": _init.serialize(_init.get(cell.recurrent_initializer)),
            "bias_initializer": _init.serialize(_init.get(cell.bias_initializer)),
            "kernel_regularizer": _reg.serialize(cell.kernel_regularizer),
            "recurrent_regularizer": _reg.serialize(cell.recurrent_regularizer),
            "bias_regularizer": _reg.serialize(cell.bias_regularizer), "dropout": cell.dropout,
            "recurrent_dropout": cell.recurrent_dropout}


class GRUCell(Layer):
    """One GRU step (``reset_after=True``, Keras's default): z, r = sigmoid(x W + b_x + h U + b_h) per gate,
    ``hh = tanh(x W_h + b_xh + r * (h U_h + b_hh))``, ``h = z * h + (1 - z) * hh``.  Gate order: z, r, h.

    >>> import tapeflow as tf
    >>> cell = tf.keras.layers.GRUCell(4)
    >>> h, _ = cell(tf.ones([2, 3]), [tf.zeros([2, 4])])
    >>> h.shape, cell.count_params()
    (TensorShape([2, 4]), 108)
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 reset_after=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 dropout=0.0, recurrent_dropout=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.units = A.integer(units, "units", self, lo=1)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.recurrent_activation = A.resolved(_act.get, recurrent_activation, "recurrent_activation", self)
        A.lookups(self, kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        self.reset_after = A.boolean(reset_after, "reset_after", self)
        self.kernel_initializer, self.recurrent_initializer = kernel_initializer, recurrent_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer, self.recurrent_regularizer = kernel_regularizer, recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.dropout = A.number(dropout, "dropout", self, lo=0.0, hi=1.0)
        self.recurrent_dropout = A.number(recurrent_dropout, "recurrent_dropout", self, lo=0.0, hi=1.0)
        self.state_size = self.units

    def build(self, input_shape):
        u = self.units
        self.kernel = self.add_weight("kernel", (int(input_shape[-1]), 3 * u), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (u, 3 * u),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer)
        if self.use_bias:
            shape = (2, 3 * u) if self.reset_after else (3 * u,)
            self.bias = self.add_weight("bias", shape, initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer)
        else:
            self.bias = None

    def project(self, x):
        """``x @ kernel + input bias`` (for one step or all steps at once)."""
        xw = K.matmul(x, self.kernel.read_value())
        if self.bias is not None:
            b = self.bias.read_value()
            xw = K.add(xw, b[0] if self.reset_after else b)
        return xw

    def step(self, xw, h, rmask=None):
        """One step from the input projection ``xw``; ``rmask`` drops parts of ``h`` in the recurrent product."""
        u = self.units
        ra, a = self.recurrent_activation, self.activation
        hd = h if rmask is None else K.multiply(h, rmask)
        if a in _TANH and ra in _SIGMOID and xw._dtype in _FUSED_DTYPES and h._dtype is xw._dtype \
                and len(h._shape) == 2 and len(xw._shape) == 2:
            # the default activations: one fused kernel for the gates and the new h (Keras's formulas)
            rk = self.recurrent_kernel.read_value()
            if self.reset_after:
                hu = K.matmul(hd, rk)
                if self.bias is not None:
                    hu = K.add(hu, self.bias.read_value()[1])
                return _gru_cell(xw, hu, h, reset_after=True)
            hzr = K.matmul(hd, rk[:, :2 * u])
            r = ra(K.add(xw[:, u:2 * u], hzr[:, u:]))
            hu = K.concat([hzr, K.matmul(K.multiply(r, hd), rk[:, 2 * u:])], axis=1)
            return _gru_cell(xw, hu, h, reset_after=False)
        xz, xr, xh = _split(xw, 3)
        if self.reset_after:
            hu = K.matmul(hd, self.recurrent_kernel.read_value())
            if self.bias is not None:
                hu = K.add(hu, self.bias.read_value()[1])
            hz, hr, hh = _split(hu, 3)
            z = ra(K.add(xz, hz))
            r = ra(K.add(xr, hr))
            cand = a(K.add(xh, K.multiply(r, hh)))
        else:
            rk = self.recurrent_kernel.read_value()
            hzr = K.matmul(hd, rk[:, :2 * u])
            hz, hr = _split(hzr, 2)
            z = ra(K.add(xz, hz))
            r = ra(K.add(xr, hr))
            cand = a(K.add(xh, K.matmul(K.multiply(r, hd), rk[:, 2 * u:])))
        return K.add(K.multiply(z, h), K.multiply(1.0 - z, cand))

    def call(self, inputs, states, training=None):
        h = states[0] if isinstance(states, (list, tuple)) else states
        h = self.step(self.project(inputs), h)
        return h, [h]

    def get_config(self):
        return {**super().get_config(), "units": self.units, "activation": _act.serialize(self.activation),
                "recurrent_activation": _act.serialize(self.recurrent_activation), "use_bias": self.use_bias,
                "reset_after": self.reset_after, **_cell_config(self)}


class _RNN(Layer):
    _cell_cls = None
    supports_masking = True

    def __init__(self, units, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, **kwargs) -> None:
        base_keys = ("trainable", "name", "dtype", "input_shape", "batch_input_shape", "input_dim", "batch_size")
        base = {k: kwargs.pop(k) for k in base_keys if k in kwargs}
        super().__init__(**base)
        if A.boolean(stateful, "stateful", self):
            raise ValueError("stateful=True is not supported: pass initial_state and keep the returned states")
        self.units = A.integer(units, "units", self, lo=1)
        self.return_sequences = A.boolean(return_sequences, "return_sequences", self)
        self.return_state = A.boolean(return_state, "return_state", self)
        self.go_backwards = A.boolean(go_backwards, "go_backwards", self)
        self.unroll = A.boolean(unroll, "unroll", self)  # eager steps are always unrolled
        try:
            self.cell = self._cell_cls(units, name=f"{self.name}_cell", dtype=base.get("dtype"), **kwargs)
        except TypeError as e:  # name the layer the user built, not its cell
            raise TypeError(str(e).replace(f"{self._cell_cls.__name__}:", f"{type(self).__name__}:", 1)) from None
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape):
        self.cell.build((input_shape[0], input_shape[-1]))
        self.input_spec = InputSpec(ndim=3, axes={-1: int(input_shape[-1])})

    def _masks(self, inputs, training):
        """Dropout masks fixed for the whole sequence (inputs and recurrent state), as Keras."""
        cell = self.cell
        b, _, f = inputs._shape
        if training and cell.dropout > 0.0:
            inputs = K.dropout(inputs, rate=cell.dropout, noise_shape=(b, 1, f))
        rmask = None
        if training and cell.recurrent_dropout > 0.0:
            rmask = K.dropout(K.ones((b, self.units), self._dtype), rate=cell.recurrent_dropout)
        return inputs, rmask

    def _steps(self, inputs):
        b, t, f = inputs._shape
        # one matmul projects every time step; then (time, batch, 4u) split into steps
        xw = self._project(K.reshape(inputs, (-1, f)))  # (-1: a batch traced as unknown)
        xw = K.transpose(K.reshape(xw, (-1 if b is None else b, t, xw._shape[-1])), (1, 0, 2))
        steps = K.unstack(xw, axis=0) if t else []
        return steps[::-1] if self.go_backwards else steps

    def _zeros(self, b):
        # the compute dtype (float16 under mixed precision); a batch traced as unknown (a saved model's signature):
        # one row, which the first step broadcasts to the batch
        return K.zeros((1 if b is None else b, self.units), self._dtype)

    def _step_masks(self, mask, b, t):
        """The (batch, time) mask as one (batch, 1) bool tensor per step, in the order steps run."""
        if tuple(mask._shape) != (b, t):
            raise InvalidArgumentError(f"the mask of layer \"{self.name}\" has shape {tuple(mask._shape)}; allowed: "
                                       f"(batch, time) = {(b, t)}", type(self).__name__)
        if mask.dtype is not K.bool_:
            mask = K.cast(mask, K.bool_)
        steps = K.unstack(K.expand_dims(K.transpose(mask, (1, 0)), -1), axis=0) if t else []
        return steps[::-1] if self.go_backwards else steps

    def compute_mask(self, inputs, mask=None):
        """The input's (batch, time) mask for ``return_sequences`` outputs (states carry none), as Keras."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out = mask if self.return_sequences else None
        return [out] + [None] * self._n_states if self.return_state else out

    def compute_output_shape(self, input_shape):
        b, t = input_shape[0], input_shape[1]
        out = (b, t, self.units) if self.return_sequences else (b, self.units)
        if self.return_state:
            return [out] + [(b, self.units)] * self._n_states
        return out

    def _finish(self, outputs, last, states):
        if self.return_sequences:
            out = K.stack(outputs, axis=1) if outputs else K.zeros((states[0]._shape[0], 0, self.units), self._dtype)
        else:
            out = last
        return [out] + list(states) if self.return_state else out

    def get_config(self):
        cfg = {**super().get_config(), **self.cell.get_config(), "return_sequences": self.return_sequences,
               "return_state": self.return_state, "go_backwards": self.go_backwards, "stateful": False,
               "unroll": self.unroll}
        cfg["name"] = self.name
        return cfg


class LSTM(_RNN):
    """Long short-term memory over (batch, time, features) inputs.

    Returns the last output (batch, units), or every output (batch, time, units) with
    ``return_sequences=True``; ``return_state=True`` adds the final ``h`` and ``c``.
    Weights: kernel (features, 4 * units), recurrent_kernel (units, 4 * units), bias (4 * units).

    >>> import tapeflow as tf
    >>> lstm = tf.keras.layers.LSTM(8, return_sequences=True)
    >>> lstm(tf.ones([2, 5, 3])).shape, lstm.count_params()
    (TensorShape([2, 5, 8]), 384)
    """

    _cell_cls = LSTMCell
    _n_states = 2

    def _project(self, x):
        cell = self.cell
        xw = K.matmul(x, cell.kernel.read_value())
        return xw if cell.bias is None else K.add(xw, cell.bias.read_value())

    def call(self, inputs, initial_state=None, mask=None, training=None):
        b = inputs._shape[0]
        if initial_state is None:
            h = c = self._zeros(b)
        else:
            h, c = initial_state
        cell = self.cell
        inputs, rmask = self._masks(inputs, training)
        outputs = []
        if mask is None:
            for xw in self._steps(inputs):
                h, c = cell.step(xw, h if rmask is None else K.multiply(h, rmask), c)
                if self.return_sequences:
                    outputs.append(h)
            return self._finish(outputs, h, (h, c))
        # masked steps carry h and c through, and repeat the previous output (zeros before the first), as Keras
        out = self._zeros(b)
        for xw, m in zip(self._steps(inputs), self._step_masks(mask, b, inputs._shape[1])):
            h2, c2 = cell.step(xw, h if rmask is None else K.multiply(h, rmask), c)
            h, c, out = K.where(m, h2, h), K.where(m, c2, c), K.where(m, h2, out)
            if self.return_sequences:
                outputs.append(out)
        return self._finish(outputs, out, (h, c))


class GRU(_RNN):
    """Gated recurrent unit over (batch, time, features) inputs (``reset_after=True`` by default, as Keras).

    Weights: kernel (features, 3 * units), recurrent_kernel (units, 3 * units), bias (2, 3 * units).

    >>> import tapeflow as tf
    >>> gru = tf.keras.layers.GRU(8)
    >>> gru(tf.ones([2, 5, 3])).shape, gru.count_params()
    (TensorShape([2, 8]), 312)
    """

    _cell_cls = GRUCell
    _n_states = 1

    def _project(self, x):
        return self.cell.project(x)

    def call(self, inputs, initial_state=None, mask=None, training=None):
        b = inputs._shape[0]
        if initial_state is None:
            h = self._zeros(b)
        else:
            h = initial_state[0] if isinstance(initial_state, (list, tuple)) else initial_state
        cell = self.cell
        inputs, rmask = self._masks(inputs, training)
        outputs = []
        if mask is None:
            for xw in self._steps(inputs):
                h = cell.step(xw, h, rmask)
                if self.return_sequences:
                    outputs.append(h)
            return self._finish(outputs, h, (h,))
        out = self._zeros(b)  # masked steps: as LSTM
        for xw, m in zip(self._steps(inputs), self._step_masks(mask, b, inputs._shape[1])):
            h2 = cell.step(xw, h, rmask)
            h, out = K.where(m, h2, h), K.where(m, h2, out)
            if self.return_sequences:
                outputs.append(out)
        return self._finish(outputs, out, (h,))


from .convolutional import _reg_config  # noqa: E402 (the helpers of the layers added for issue 13)


class SimpleRNNCell(Layer):
    """One fully connected recurrent step: ``h = activation(x @ kernel + h @ recurrent_kernel + bias)``.

    >>> import tapeflow as tf
    >>> cell = tf.keras.layers.SimpleRNNCell(4)
    >>> h, [h2] = cell(tf.ones([2, 3]), [tf.zeros([2, 4])])
    >>> h.shape, [w.shape for w in cell.weights]
    (TensorShape([2, 4]), [TensorShape([3, 4]), TensorShape([4, 4]), TensorShape([4])])
    """

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.units = A.integer(units, "units", self, lo=1)
        self.activation = A.resolved(_act.get, activation, "activation", self)
        self.use_bias = A.boolean(use_bias, "use_bias", self)
        A.lookups(self, kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
                  kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
                  bias_constraint=bias_constraint)
        self._args = dict(kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
                          kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
                          bias_constraint=bias_constraint)
        self.dropout = A.number(dropout, "dropout", self, lo=0.0, hi=1.0)
        self.recurrent_dropout = A.number(recurrent_dropout, "recurrent_dropout", self, lo=0.0, hi=1.0)
        self.seed = A.integer(seed, "seed", self, none_ok=True)
        self.state_size = self.units

    def _w(self, name, shape, kind):
        a = self._args
        return self.add_weight(name, shape, initializer=a[f"{kind}_initializer"], regularizer=a[f"{kind}_regularizer"],
                               constraint=a[f"{kind}_constraint"])

    def build(self, input_shape):
        u = self.units
        self.kernel = self._w("kernel", (int(input_shape[-1]), u), "kernel")
        self.recurrent_kernel = self._w("recurrent_kernel", (u, u), "recurrent")
        self.bias = self._w("bias", (u,), "bias") if self.use_bias else None

    def project(self, x):
        xw = K.matmul(x, self.kernel.read_value())
        return xw if self.bias is None else K.add(xw, self.bias.read_value())

    def step(self, xw, h, rmask=None):
        """One step from the input projection ``xw = x @ kernel + bias``."""
        if rmask is not None:
            h = K.multiply(h, rmask)
        return self.activation(K.add(xw, K.matmul(h, self.recurrent_kernel.read_value())))

    def call(self, inputs, states, training=None):
        h = states[0] if isinstance(states, (list, tuple)) else states
        if training and self.dropout > 0.0:
            inputs = K.dropout(inputs, rate=self.dropout)
        rmask = None
        if training and self.recurrent_dropout > 0.0:
            rmask = K.dropout(K.ones_like(h), rate=self.recurrent_dropout)
        h = self.step(self.project(inputs), h, rmask)
        return h, [h]

    def get_config(self):
        cfg = {**super().get_config(), "units": self.units, "activation": _act.serialize(self.activation),
               "use_bias": self.use_bias, "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
               "seed": self.seed}
        for k, v in self._args.items():
            cfg[k] = _init.serialize(_init.get(v)) if k.endswith("initializer") else \
                _reg_config(v) if k.endswith("regularizer") else v
        return cfg


class SimpleRNN(_RNN):
    """A fully connected RNN over (batch, time, features): ``h_t = activation(x_t W + h_{t-1} U + b)``.

    Weights: kernel (features, units), recurrent_kernel (units, units), bias (units,).  Masked
    steps carry the state through, as LSTM and GRU.

    >>> import tapeflow as tf
    >>> rnn = tf.keras.layers.SimpleRNN(8, return_sequences=True)
    >>> rnn(tf.ones([2, 5, 3])).shape, rnn.count_params()
    (TensorShape([2, 5, 8]), 96)
    """

    _cell_cls = SimpleRNNCell
    _n_states = 1

    def _project(self, x):
        return self.cell.project(x)

    def call(self, inputs, initial_state=None, mask=None, training=None):
        b = inputs._shape[0]
        if initial_state is None:
            h = self._zeros(b)
        else:
            h = initial_state[0] if isinstance(initial_state, (list, tuple)) else initial_state
        cell = self.cell
        inputs, rmask = self._masks(inputs, training)
        outputs = []
        if mask is None:
            for xw in self._steps(inputs):
                h = cell.step(xw, h, rmask)
                if self.return_sequences:
                    outputs.append(h)
            return self._finish(outputs, h, (h,))
        out = self._zeros(b)  # masked steps: as LSTM
        for xw, m in zip(self._steps(inputs), self._step_masks(mask, b, inputs._shape[1])):
            h2 = cell.step(xw, h, rmask)
            h, out = K.where(m, h2, h), K.where(m, h2, out)
            if self.return_sequences:
                outputs.append(out)
        return self._finish(outputs, out, (h,))


def _layer_from(value, what, owner):
    """A layer, or a ``{"class_name", "config"}`` dict (what ``get_config`` gives) made into one."""
    if isinstance(value, Layer):
        return value
    if isinstance(value, dict) and "class_name" in value:
        from .. import layers as _layers

        cls = getattr(_layers, value["class_name"], None)
        if cls is None:
            raise InvalidArgumentError(f"{what}: unknown layer class {value['class_name']!r}", type(owner).__name__)
        return cls.from_config(dict(value.get("config", {})))
    raise A._type_error(owner, what, value, "a Layer")


def _layer_config(layer):
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def _copy_unbuilt(layer, name, go_backwards, owner):
    import copy

    if layer.built or layer.weights:
        raise InvalidArgumentError(f'layer "{layer.name}" is already built; allowed: an unbuilt layer (each direction '
                                   "makes its own weights)", type(owner).__name__)
    new = copy.deepcopy(layer)
    new.__dict__["_name"] = name
    cell = new.__dict__.get("cell")
    if isinstance(cell, Layer):
        cell.__dict__["_name"] = f"{name}_cell"
    new.__dict__["go_backwards"] = go_backwards
    return new


class Bidirectional(Layer):
    """Runs a recurrent layer forwards and a copy of it backwards over the sequence and merges the two
    (``merge_mode`` "concat", "sum", "mul", "ave", or None for a list of both).

    The backward outputs are reversed in time before merging, so step t of both refers to
    input step t.  Weights: the forward layer's, then the backward layer's.

    >>> import tapeflow as tf
    >>> bi = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4, return_sequences=True))
    >>> bi(tf.ones([2, 5, 3])).shape, len(bi.weights)
    (TensorShape([2, 5, 8]), 6)
    """

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs) -> None:
        super().__init__(**kwargs)
        layer = _layer_from(layer, "layer", self)
        if not hasattr(layer, "go_backwards") or not hasattr(layer, "return_sequences"):
            raise InvalidArgumentError(f"layer must be a recurrent layer (LSTM, GRU, SimpleRNN), got "
                                       f"{type(layer).__name__}", "Bidirectional")
        if merge_mode is not None:
            merge_mode = A.choice(merge_mode, "merge_mode", self, ("concat", "sum", "mul", "ave"))
        self.merge_mode = merge_mode
        base = layer.name[len("forward_"):] if layer.name.startswith("forward_") else layer.name
        self.forward_layer = _copy_unbuilt(layer, "forward_" + base, layer.go_backwards, self)
        if backward_layer is None:
            self.backward_layer = _copy_unbuilt(layer, "backward_" + base, not layer.go_backwards, self)
            self._backward_given = False
        else:
            backward_layer = _layer_from(backward_layer, "backward_layer", self)
            if getattr(backward_layer, "go_backwards", None) == layer.go_backwards or \
                    getattr(backward_layer, "return_sequences", None) != layer.return_sequences or \
                    getattr(backward_layer, "return_state", None) != layer.return_state:
                raise InvalidArgumentError("backward_layer must have the opposite go_backwards of layer and the same "
                                           "return_sequences and return_state", "Bidirectional")
            self.backward_layer = backward_layer
            self._backward_given = True
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self._initial_weights = None if weights is None else list(weights)
        self.input_spec = layer.input_spec

    def build(self, input_shape):
        self.forward_layer.build(input_shape)
        self.backward_layer.build(input_shape)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def call(self, inputs, initial_state=None, mask=None, training=None):
        fkw = {"mask": mask, "training": training}
        bkw = dict(fkw)
        if initial_state is not None:
            states = list(initial_state)
            if len(states) % 2:
                raise InvalidArgumentError(f'layer "{self.name}" got {len(states)} initial states; allowed: an even '
                                           "number (the forward layer's, then the backward layer's)", "Bidirectional")
            half = len(states) // 2
            fkw["initial_state"], bkw["initial_state"] = states[:half], states[half:]
        yf = self.forward_layer(inputs, **fkw)
        yb = self.backward_layer(inputs, **bkw)
        if self.return_state:
            yf, sf = yf[0], list(yf[1:])
            yb, sb = yb[0], list(yb[1:])
        if self.return_sequences:
            yb = K.reverse(yb, axis=[1])
            if mask is not None:  # as Keras's zero_output_for_mask: masked steps of both directions are 0
                keep = K.expand_dims(K.cast(mask, K.bool_), -1)
                yf = K.where(keep, yf, K.zeros_like(yf))
                yb = K.where(keep, yb, K.zeros_like(yb))
        mode = self.merge_mode
        if mode == "concat":
            out = K.concat([yf, yb], axis=-1)
        elif mode == "sum":
            out = K.add(yf, yb)
        elif mode == "mul":
            out = K.multiply(yf, yb)
        elif mode == "ave":
            out = K.multiply(K.add(yf, yb), 0.5)
        else:
            out = [yf, yb]
        if self.return_state:
            return (out if isinstance(out, list) else [out]) + sf + sb
        return out

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if self.return_sequences:
            out = [mask, mask] if self.merge_mode is None else mask
        else:
            out = [None, None] if self.merge_mode is None else None
        if self.return_state:
            n = 2 * self.forward_layer._n_states
            return (out if isinstance(out, list) else [out]) + [None] * n
        return out

    def compute_output_shape(self, input_shape):
        shape = self.forward_layer.compute_output_shape(input_shape)
        states = []
        if self.return_state:
            shape, states = shape[0], list(shape[1:])
        shape = tuple(shape)
        if self.merge_mode == "concat":
            out = shape[:-1] + (shape[-1] * 2,)
        elif self.merge_mode is None:
            out = [shape, shape]
        else:
            out = shape
        if self.return_state:
            return (out if isinstance(out, list) else [out]) + states * 2
        return out

    def get_config(self):
        return {**super().get_config(), "layer": _layer_config(self.forward_layer), "merge_mode": self.merge_mode,
                "backward_layer": _layer_config(self.backward_layer) if self._backward_given else None}


class TimeDistributed(Layer):
    """Applies ``layer`` to every time step of (batch, time, ...) inputs: step t of the output is
    ``layer(inputs[:, t])`` (one call per step, as Keras, so per-batch statistics are per step).

    >>> import tapeflow as tf
    >>> td = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(4))
    >>> td(tf.ones([2, 5, 3])).shape, td.layer.kernel.shape
    (TensorShape([2, 5, 4]), TensorShape([3, 4]))
    """

    supports_masking = True
    _casts_ints = False  # the wrapped layer decides (TimeDistributed(Embedding) takes ids)

    def __init__(self, layer, **kwargs) -> None:
        super().__init__(**kwargs)
        self.layer = _layer_from(layer, "layer", self)

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise InvalidArgumentError(f'layer "{self.name}" needs inputs of rank >= 3 (batch, time, ...), got shape '
                                       f"{tuple(input_shape)}", "TimeDistributed")
        if not self.layer.built:
            self.layer.build((input_shape[0],) + tuple(input_shape[2:]))

    def call(self, inputs, training=None, mask=None):
        b, t = inputs.shape[:2]
        if mask is not None and tuple(mask.shape[:2]) != (b, t):
            raise InvalidArgumentError(f'the mask of layer "{self.name}" has shape {tuple(mask.shape)}; allowed: '
                                       f"(batch, time, ...) = {(b, t)}", "TimeDistributed")
        steps = K.unstack(inputs, axis=1)
        masks = K.unstack(mask, axis=1) if mask is not None and self.layer._takes_mask else [None] * t
        outs = []
        for x, m in zip(steps, masks):
            kw = {"training": training}
            if m is not None:
                kw["mask"] = m
            outs.append(self.layer(x, **kw))
        if not outs:
            shape = self.layer.compute_output_shape((b,) + tuple(inputs.shape[2:]))
            return K.zeros((b, 0) + tuple(shape[1:]), self._dtype)
        return K.stack(outs, axis=1)

    def compute_output_shape(self, input_shape):
        inner = self.layer.compute_output_shape((input_shape[0],) + tuple(input_shape[2:]))
        return (input_shape[0], input_shape[1]) + tuple(inner[1:])

    def get_config(self):
        return {**super().get_config(), "layer": _layer_config(self.layer)}
