"""Constructor arguments of every public layer and optimizer: a wrong Python type is a TypeError naming the
class and what was allowed, never silently coerced (``Dense("3")``, ``Adam(learning_rate="x")``)."""
import inspect

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers

# what each class needs to be made at all, and its arguments without a typed default (None or required)
# with a value of the wrong type
NEEDS = {
    "Activation": ({"activation": "relu"}, {"activation": 3}),
    "Add": ({}, {}), "Average": ({}, {}), "Maximum": ({}, {}), "Minimum": ({}, {}), "Multiply": ({}, {}),
    "Subtract": ({}, {}), "Concatenate": ({}, {}), "Dot": ({"axes": 1}, {"axes": "1"}),
    "AveragePooling2D": ({}, {"strides": "2", "data_format": 1}),
    "BatchNormalization": ({}, {"axis": "x", "beta_regularizer": 3}),
    "Conv2D": ({"filters": 2, "kernel_size": 3},
               {"filters": "2", "kernel_size": 3.0, "kernel_regularizer": 1.5, "kernel_constraint": "x",
                "data_format": 1}),
    "Dense": ({"units": 3}, {"units": "3", "activation": 3, "kernel_regularizer": 3, "bias_constraint": "x"}),
    "Dropout": ({"rate": 0.5}, {"rate": "0.5", "seed": "1", "noise_shape": "1"}),
    "Embedding": ({"input_dim": 5, "output_dim": 2},
                  {"input_dim": "5", "output_dim": 2.0, "input_length": "3", "embeddings_regularizer": 3}),
    "Flatten": ({}, {}),
    "GRU": ({"units": 2}, {"units": "2", "activation": 1.0}),
    "GRUCell": ({"units": 2}, {"units": 2.0, "recurrent_activation": 0}),
    "GlobalAveragePooling1D": ({}, {"data_format": 1}),
    "GlobalAveragePooling2D": ({}, {"data_format": 1}),
    "GlobalMaxPooling2D": ({}, {"data_format": 1}),
    "InputLayer": ({"input_shape": (3,)}, {"input_shape": "3"}),
    "LSTM": ({"units": 2}, {"units": "2", "kernel_regularizer": 2}),
    "LSTMCell": ({"units": 2}, {"units": "2"}),
    "Lambda": ({"function": lambda t: t}, {"function": 3}),
    "Layer": ({}, {"name": 3, "input_shape": "3", "input_dim": "3", "batch_size": "2"}),
    "LayerNormalization": ({}, {"axis": 1.5}),
    "Masking": ({}, {}),
    "MaxPooling2D": ({}, {"strides": 2.0}),
    "Reshape": ({"target_shape": (2, 3)}, {"target_shape": "ab"}),
    # issue 13 item 3's layers
    "ReLU": ({}, {"max_value": "1"}), "LeakyReLU": ({}, {}), "PReLU": ({}, {"shared_axes": "1"}), "ELU": ({}, {}),
    "Softmax": ({}, {}),
    "Conv1D": ({"filters": 2, "kernel_size": 3}, {"filters": "2", "activity_regularizer": 3}),
    "Conv3D": ({"filters": 2, "kernel_size": 3}, {"kernel_size": "3"}),
    "Conv2DTranspose": ({"filters": 2, "kernel_size": 3}, {"filters": 2.0, "output_padding": "1"}),
    "DepthwiseConv2D": ({"kernel_size": 3}, {"kernel_size": "3", "depthwise_regularizer": 3}),
    "SeparableConv2D": ({"filters": 2, "kernel_size": 3}, {"filters": "2", "pointwise_constraint": "x"}),
    "MaxPooling1D": ({}, {"strides": "2"}), "AveragePooling1D": ({}, {"strides": 2.0}),
    "GlobalMaxPooling1D": ({}, {"data_format": 1}),
    "UpSampling2D": ({}, {}), "ZeroPadding2D": ({}, {}), "Cropping2D": ({}, {}),
    "RepeatVector": ({"n": 2}, {"n": "2"}), "Permute": ({"dims": (1,)}, {"dims": "1"}),
    "SimpleRNN": ({"units": 2}, {"units": "2", "seed": "1"}), "SimpleRNNCell": ({"units": 2}, {"units": 2.0}),
    "Bidirectional": ({"layer": L.LSTM(2)}, {"layer": 3, "backward_layer": 3}),
    "TimeDistributed": ({"layer": L.Dense(2)}, {"layer": "dense"}),
    "Attention": ({}, {"seed": "1"}),
    "MultiHeadAttention": ({"num_heads": 2, "key_dim": 2}, {"num_heads": "2", "value_dim": "2", "output_shape": "3"}),
    "Normalization": ({}, {"axis": "x"}), "Rescaling": ({"scale": 0.5}, {"scale": "0.5"}),
    "CategoryEncoding": ({"num_tokens": 3}, {"num_tokens": "3"}),
    "RandomFlip": ({}, {"seed": "1"}), "RandomRotation": ({"factor": 0.1}, {"factor": "0.1"}),
    "RandomZoom": ({"height_factor": 0.1}, {"width_factor": "0.1"}), "RandomCrop": ({"height": 2, "width": 2},
                                                                                    {"height": "2"}),
    "SpatialDropout2D": ({"rate": 0.5}, {"data_format": 1}), "GaussianNoise": ({"stddev": 0.1}, {"stddev": "0.1"}),
    # text layers (layers/text.py)
    "StringLookup": ({}, {"max_tokens": "3", "mask_token": 3}),
    "IntegerLookup": ({}, {"max_tokens": 2.5, "mask_token": "0"}),
    "TextVectorization": ({}, {"max_tokens": "3", "output_sequence_length": "4", "ngrams": "2"}),
    "SGD": ({}, {"clipnorm": "1", "weight_decay": "0.1", "name": 3}),
    "Adam": ({}, {"clipvalue": "1", "global_clipnorm": "1"}),
    "AdamW": ({}, {"weight_decay": "0.1"}),
    "RMSprop": ({}, {"clipnorm": "1"}),
    "Adagrad": ({}, {"clipnorm": "1"}),
}


def _public_classes():
    layers = {name: getattr(L, name) for name in L.__all__
              if isinstance(getattr(L, name), type) and issubclass(getattr(L, name), L.Layer)}
    opts = {name: getattr(tf.optimizers, name) for name in tf.optimizers.__all__
            if isinstance(getattr(tf.optimizers, name), type) and name != "Optimizer"}
    # aliases (MaxPool2D...) are the same classes: walk each class once, under its own name
    return {cls.__name__: cls for cls in list(layers.values()) + list(opts.values())}


CLASSES = _public_classes()

# a wrong-typed value for an argument, by the type of its default
WRONG = {bool: ["yes", 1.5], int: ["3", 2.5, True], float: ["0.1", True], str: [3]}


def _cases():
    for name, cls in sorted(CLASSES.items()):
        base, extra = NEEDS.get(name, ({}, {}))
        sig = inspect.signature(cls.__init__)
        for p, param in sig.parameters.items():
            if p == "self" or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
                continue
            d = param.default
            if p == "dtype" or d is None or d is inspect.Parameter.empty:
                continue  # covered by NEEDS (no type to infer from the default)
            kind = bool if isinstance(d, bool) else int if isinstance(d, int) else \
                float if isinstance(d, float) else str if isinstance(d, str) else \
                int if isinstance(d, tuple) and all(isinstance(v, int) for v in d) else None
            if kind is None:
                continue
            for bad in WRONG[kind]:
                yield pytest.param(cls, base, p, bad, id=f"{name}-{p}-{bad!r}")
        for p, bad in extra.items():
            yield pytest.param(cls, base, p, bad, id=f"{name}-{p}-{bad!r}")


def test_every_public_class_is_walked():
    assert set(CLASSES) == set(NEEDS), "add the class's required arguments to NEEDS in test_nn_args.py"


@pytest.mark.parametrize("cls,base,arg,bad", list(_cases()))
def test_a_wrong_typed_argument_is_a_type_error_naming_the_class(cls, base, arg, bad):
    cls(**base)  # the valid arguments make one
    with pytest.raises(TypeError) as e:
        cls(**{**base, arg: bad})
    msg = str(e.value)
    assert msg.startswith(f"{cls.__name__}: {arg}"), msg
    assert "must be" in msg or "must define" in msg or "a name" in msg, msg


@pytest.mark.parametrize("make,match", [
    (lambda: L.Dense(0), r"units must be a positive int, got 0 \[Op:Dense\]"),
    (lambda: L.Dropout(1.5), r"rate must be a float >= 0.0 and <= 1.0, got 1.5 \[Op:Dropout\]"),
    (lambda: L.Conv2D(2, (3, 3, 3)), r"kernel_size must be an int or a tuple of 2 ints >= 1.*\[Op:Conv2D\]"),
    (lambda: L.Conv2D(2, 3, strides=0), r"strides .* got \(0, 0\) \[Op:Conv2D\]"),
    (lambda: L.MaxPooling2D(padding="full"), r"padding must be one of 'valid', 'same'.*\[Op:MaxPooling2D\]"),
    (lambda: L.BatchNormalization(momentum=2.0), r"momentum .* \[Op:BatchNormalization\]"),
    (lambda: L.LSTM(4, dropout=-0.1), r"dropout .* \[Op:LSTMCell\]"),
    (lambda: L.Dense(3, kernel_initializer="nope"), r"kernel_initializer: unknown initializer.*\[Op:Dense\]"),
    (lambda: tf.optimizers.Adam(beta_1=1.0), r"beta_1 must be a float >= 0.0 and < 1.0, got 1.0 \[Op:Adam\]"),
    (lambda: tf.optimizers.SGD(momentum=-1), r"momentum .* \[Op:SGD\]"),
])
def test_a_value_out_of_range_is_an_invalid_argument_error(make, match):
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        make()


def test_the_issues_examples_and_what_still_converts():
    with pytest.raises(TypeError, match=r"Dense: units must be a positive int, got '3' \(str\)"):
        L.Dense("3")
    with pytest.raises(TypeError, match=r"Adam: learning_rate must be a float, a float scalar tensor, a "
                                        r"LearningRateSchedule or a callable, got 'x' \(str\)"):
        tf.optimizers.Adam(learning_rate="x")
    with pytest.raises(TypeError, match="SGD: learning_rate"):
        tf.optimizers.SGD().learning_rate = "0.1"
    # NumPy numbers, ints for floats, tensors and schedules are fine
    assert L.Dense(np.int64(3)).units == 3 and L.Dropout(np.float32(0.5)).rate == 0.5
    assert tf.optimizers.Adam(learning_rate=1).learning_rate == 1.0
    assert tf.optimizers.SGD(learning_rate=tf.constant(0.5)).learning_rate == 0.5
    sched = tf.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    assert tf.optimizers.SGD(learning_rate=sched).learning_rate == pytest.approx(0.1)
    assert L.Conv2D(2, [3, 1], strides=np.int32(2)).strides == (2, 2)
    assert L.Conv2D(2, 3, padding="SAME").padding == "same"
