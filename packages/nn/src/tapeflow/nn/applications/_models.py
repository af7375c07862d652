"""The four architectures, written as Keras 3 writes them (same layer names and creation order), and the
loader of Keras's weight files."""
from __future__ import annotations

import math
import os

import numpy as np

from tapeflow.core.errors import InvalidArgumentError

from .. import layers as L
from .. import utils as _utils

_KERAS_APPS = "https://storage.googleapis.com/tensorflow/keras-applications/"


# -- arguments ----------------------------------------------------------------------------------------

def _check(name, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
           default_size, min_size):
    if not isinstance(include_top, bool):
        raise TypeError(f"{name}: include_top must be a bool, got {type(include_top).__name__}")
    if not (weights in (None, "imagenet") or isinstance(weights, (str, os.PathLike))):
        raise ValueError(f"{name}: weights={weights!r}; allowed: None (random), 'imagenet' or the path of a "
                         "weights file")
    if isinstance(weights, (str, os.PathLike)) and weights != "imagenet" and not os.path.exists(weights):
        raise ValueError(f"{name}: the weights file {os.fspath(weights)!r} does not exist; allowed: None, "
                         "'imagenet' or the path of a weights file")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(f"{name}: with weights='imagenet' and include_top=True, classes must be 1000; got {classes}")
    if pooling not in (None, "avg", "max"):
        raise ValueError(f"{name}: pooling={pooling!r}; allowed: None, 'avg' or 'max'")
    if isinstance(classes, bool) or not isinstance(classes, (int, np.integer)) or classes < 1:
        raise ValueError(f"{name}: classes={classes!r}; allowed: a positive int")
    if weights == "imagenet" and include_top and classifier_activation not in (None, "softmax"):
        raise ValueError(f"{name}: with weights='imagenet', classifier_activation must be None or 'softmax'; got "
                         f"{classifier_activation!r}")
    if input_tensor is not None:
        shape = tuple(input_tensor.shape)[1:]
        if input_shape is not None and tuple(input_shape) != shape:
            raise ValueError(f"{name}: input_shape {tuple(input_shape)} differs from input_tensor's {shape}")
        input_shape = shape
    if input_shape is None:
        input_shape = (default_size, default_size, 3) if include_top or weights == "imagenet" else (None, None, 3)
    input_shape = tuple(input_shape)
    if len(input_shape) != 3:
        raise ValueError(f"{name}: input_shape must be (height, width, channels); got {input_shape}")
    if weights == "imagenet" and input_shape[-1] != 3:
        raise ValueError(f"{name}: with weights='imagenet' the input must have 3 channels; got {input_shape}")
    if include_top and weights == "imagenet" and input_shape[:2] != (default_size, default_size):
        raise ValueError(f"{name}: with include_top=True and weights='imagenet', input_shape must be "
                         f"({default_size}, {default_size}, 3); got {input_shape}")
    for d in input_shape[:2]:
        if d is not None and d < min_size:
            raise ValueError(f"{name}: input size must be at least {min_size}x{min_size}; got "
                             f"input_shape={input_shape}")
    if include_top and None in input_shape[:2] and name == "VGG16":
        raise ValueError("VGG16: include_top=True needs a fixed input_shape (the Flatten feeds Dense layers)")
    return input_shape


def _input(input_tensor, input_shape):
    from .. import Input

    return (Input(shape=input_shape) if input_tensor is None else input_tensor), \
        (None if input_tensor is None else input_tensor)


def _head(x, include_top, pooling, classes, classifier_activation, name_pool=True, dense_init=None):
    if include_top:
        x = L.GlobalAveragePooling2D(**({"name": "avg_pool"} if name_pool else {}))(x)
        return x
    if pooling == "avg":
        x = L.GlobalAveragePooling2D(**({"name": "avg_pool"} if name_pool else {}))(x)
    elif pooling == "max":
        x = L.GlobalMaxPooling2D(**({"name": "max_pool"} if name_pool else {}))(x)
    return x


def _finish(inputs, x, name, weights, imagenet_file, imagenet_url):
    from ..models import Model  # Model(inputs, outputs): the functional API

    model = Model(inputs, x, name=name)
    if weights == "imagenet":
        path = _utils.get_file(imagenet_file, imagenet_url, cache_subdir="models")
        load_keras_weights(model, path)
    elif weights is not None:
        load_keras_weights(model, weights)
    return model


def _correct_pad(x, kernel_size):
    size = tuple(x.shape)[1:3]
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    c = (kernel_size // 2, kernel_size // 2)
    return ((c[0] - adjust[0], c[0]), (c[1] - adjust[1], c[1]))


# -- ResNet50 -----------------------------------------------------------------------------------------

def _res_block(x, filters, stride=1, conv_shortcut=True, name=None):
    if conv_shortcut:
        shortcut = L.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = L.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_1_bn")(x)
    x = L.Activation("relu", name=f"{name}_1_relu")(x)
    x = L.Conv2D(filters, 3, padding="same", name=f"{name}_2_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_2_bn")(x)
    x = L.Activation("relu", name=f"{name}_2_relu")(x)
    x = L.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_3_bn")(x)
    x = L.Add(name=f"{name}_add")([shortcut, x])
    return L.Activation("relu", name=f"{name}_out")(x)


def _res_stack(x, filters, blocks, stride1=2, name=None):
    x = _res_block(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = _res_block(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name="resnet50"):
    """ResNet50 (He et al. 2015) as ``keras.applications.ResNet50``: 25,636,712 parameters with the top.

    >>> import tapeflow as tf
    >>> m = tf.keras.applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    >>> m.output_shape
    (None, 2048)
    """
    shape = _check("ResNet50", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, 224, 32)
    img, _ = _input(input_tensor, shape)
    x = L.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img)
    x = L.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=1.001e-5, name="conv1_bn")(x)
    x = L.Activation("relu", name="conv1_relu")(x)
    x = L.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = L.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = _res_stack(x, 64, 3, stride1=1, name="conv2")
    x = _res_stack(x, 128, 4, name="conv3")
    x = _res_stack(x, 256, 6, name="conv4")
    x = _res_stack(x, 512, 3, name="conv5")
    x = _head(x, include_top, pooling, classes, classifier_activation)
    if include_top:
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    f = "resnet50_weights_tf_dim_ordering_tf_kernels" + ("" if include_top else "_notop") + ".h5"
    return _finish(img, x, name, weights, f, _KERAS_APPS + "resnet/" + f)


# -- MobileNetV2 --------------------------------------------------------------------------------------

def _make_divisible(v, divisor, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    in_channels = tuple(inputs.shape)[-1]
    pointwise = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    bn = {"axis": -1, "epsilon": 1e-3, "momentum": 0.999}
    if block_id:
        x = L.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                     name=f"{prefix}expand")(x)
        x = L.BatchNormalization(**bn, name=f"{prefix}expand_BN")(x)
        x = L.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = L.ZeroPadding2D(padding=_correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = L.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                          padding="same" if stride == 1 else "valid", name=f"{prefix}depthwise")(x)
    x = L.BatchNormalization(**bn, name=f"{prefix}depthwise_BN")(x)
    x = L.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = L.Conv2D(pointwise, kernel_size=1, padding="same", use_bias=False, activation=None,
                 name=f"{prefix}project")(x)
    x = L.BatchNormalization(**bn, name=f"{prefix}project_BN")(x)
    if in_channels == pointwise and stride == 1:
        return L.Add(name=f"{prefix}add")([inputs, x])
    return x


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                classes=1000, classifier_activation="softmax", name=None):
    """MobileNetV2 (Sandler et al. 2018) as ``keras.applications.MobileNetV2``: width multiplier ``alpha``;
    3,538,984 parameters at ``alpha=1.0`` with the top.

    >>> import tapeflow as tf
    >>> m = tf.keras.applications.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), weights=None, classes=10)
    >>> m.name, m.output_shape
    ('mobilenetv2_0.35_32', (None, 10))
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0:
        raise ValueError(f"MobileNetV2: alpha={alpha!r}; allowed: a positive float")
    if weights == "imagenet" and alpha not in (0.35, 0.50, 0.75, 1.0, 1.3, 1.4):
        raise ValueError(f"MobileNetV2: with weights='imagenet', alpha must be one of 0.35, 0.50, 0.75, 1.0, 1.3 or "
                         f"1.4; got alpha={alpha}")
    shape = _check("MobileNetV2", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, 224, 32) if include_top and weights == "imagenet" else \
        _check("MobileNetV2", include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation, 224, 1)
    rows = shape[0] if shape[0] == shape[1] and shape[0] is not None else 224
    img, _ = _input(input_tensor, shape)
    x = L.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                 name="Conv1")(img)
    x = L.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name="bn_Conv1")(x)
    x = L.ReLU(6.0, name="Conv1_relu")(x)
    plan = [(16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6),
            (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6),
            (320, 1, 6)]
    for block_id, (filters, stride, expansion) in enumerate(plan):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion,
                                block_id=block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = L.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = L.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name="Conv_1_bn")(x)
    x = L.ReLU(6.0, name="out_relu")(x)
    x = _head(x, include_top, pooling, classes, classifier_activation, name_pool=False)
    if include_top:
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    name = name or f"mobilenetv2_{alpha:0.2f}_{rows}"
    f = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}" + ("" if include_top else "_no_top") \
        + ".h5"
    return _finish(img, x, name, weights, f, _KERAS_APPS + "mobilenet_v2/" + f)


# -- VGG16 --------------------------------------------------------------------------------------------

def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax", name="vgg16"):
    """VGG16 (Simonyan & Zisserman 2014) as ``keras.applications.VGG16``: 138,357,544 parameters with the top.

    >>> import tapeflow as tf
    >>> tf.keras.applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3)).output_shape
    (None, 1, 1, 512)
    """
    shape = _check("VGG16", include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation,
                   224, 32)
    img, _ = _input(input_tensor, shape)
    x = img
    for block, (filters, convs) in enumerate(((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)), 1):
        for i in range(1, convs + 1):
            x = L.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{i}")(x)
        x = L.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = L.Flatten(name="flatten")(x)
        x = L.Dense(4096, activation="relu", name="fc1")(x)
        x = L.Dense(4096, activation="relu", name="fc2")(x)
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = L.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = L.GlobalMaxPooling2D()(x)
    f = "vgg16_weights_tf_dim_ordering_tf_kernels" + ("" if include_top else "_notop") + ".h5"
    return _finish(img, x, name, weights, f, _KERAS_APPS + "vgg16/" + f)


# -- EfficientNetB0 -----------------------------------------------------------------------------------

_CONV_INIT = {"class_name": "VarianceScaling",
              "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
_DENSE_INIT = {"class_name": "VarianceScaling", "config": {"scale": 1.0 / 3.0, "mode": "fan_out",
                                                           "distribution": "uniform"}}
_B0_BLOCKS = [(3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
              (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1)]
_IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def _eff_block(inputs, activation, drop_rate, name, filters_in, filters_out, kernel_size, strides, expand_ratio,
               se_ratio=0.25):
    from .. import initializers

    conv_init = initializers.get(_CONV_INIT)
    filters = filters_in * expand_ratio
    if expand_ratio != 1:
        x = L.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=conv_init,
                     name=f"{name}expand_conv")(inputs)
        x = L.BatchNormalization(axis=3, name=f"{name}expand_bn")(x)
        x = L.Activation(activation, name=f"{name}expand_activation")(x)
    else:
        x = inputs
    if strides == 2:
        x = L.ZeroPadding2D(padding=_correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
        pad = "valid"
    else:
        pad = "same"
    x = L.DepthwiseConv2D(kernel_size, strides=strides, padding=pad, use_bias=False, depthwise_initializer=conv_init,
                          name=f"{name}dwconv")(x)
    x = L.BatchNormalization(axis=3, name=f"{name}bn")(x)
    x = L.Activation(activation, name=f"{name}activation")(x)
    filters_se = max(1, int(filters_in * se_ratio))
    se = L.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = L.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
    se = L.Conv2D(filters_se, 1, padding="same", activation=activation, kernel_initializer=conv_init,
                  name=f"{name}se_reduce")(se)
    se = L.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=conv_init,
                  name=f"{name}se_expand")(se)
    x = L.Multiply(name=f"{name}se_excite")([x, se])
    x = L.Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=conv_init,
                 name=f"{name}project_conv")(x)
    x = L.BatchNormalization(axis=3, name=f"{name}project_bn")(x)
    if strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = L.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = L.Add(name=f"{name}add")([x, inputs])
    return x


def EfficientNetB0(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                   classes=1000, classifier_activation="softmax", name="efficientnetb0"):
    """EfficientNetB0 (Tan & Le 2019) as ``keras.applications.EfficientNetB0``: 5,330,571 parameters with the
    top (its input is images in [0, 255]: the model rescales and normalizes them itself).

    >>> import tapeflow as tf
    >>> tf.keras.applications.EfficientNetB0(weights=None, include_top=False, input_shape=(32, 32, 3)).output_shape
    (None, 1, 1, 1280)
    """
    from .. import initializers

    shape = _check("EfficientNetB0", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, 224, 1)
    img, _ = _input(input_tensor, shape)
    activation = "swish"
    x = L.Rescaling(1.0 / 255.0)(img)
    norm = L.Normalization(axis=3)
    norm.build((None,) + tuple(x.shape)[1:])  # an unadapted Normalization is the identity (mean 0, variance 1)
    norm.__dict__["built"] = True
    if hasattr(norm, "_finalize"):
        norm._finalize()
    x = norm(x)
    if weights == "imagenet":
        x = L.Lambda(lambda t, s=[1.0 / math.sqrt(v) for v in _IMAGENET_STDDEV_RGB]: t * s, name="rescaling_1")(x)
    x = L.ZeroPadding2D(padding=_correct_pad(x, 3), name="stem_conv_pad")(x)
    x = L.Conv2D(32, 3, strides=2, padding="valid", use_bias=False, kernel_initializer=initializers.get(_CONV_INIT),
                 name="stem_conv")(x)
    x = L.BatchNormalization(axis=3, name="stem_bn")(x)
    x = L.Activation(activation, name="stem_activation")(x)
    total = float(sum(b[1] for b in _B0_BLOCKS))
    b = 0
    for i, (k, repeats, f_in, f_out, expand, strides) in enumerate(_B0_BLOCKS):
        for j in range(repeats):
            x = _eff_block(x, activation, 0.2 * b / total, f"block{i + 1}{chr(j + 97)}_",
                           f_out if j else f_in, f_out, k, 1 if j else strides, expand)
            b += 1
    x = L.Conv2D(1280, 1, padding="same", use_bias=False, kernel_initializer=initializers.get(_CONV_INIT),
                 name="top_conv")(x)
    x = L.BatchNormalization(axis=3, name="top_bn")(x)
    x = L.Activation(activation, name="top_activation")(x)
    x = _head(x, include_top, pooling, classes, classifier_activation)
    if include_top:
        x = L.Dropout(0.2, name="top_dropout")(x)
        x = L.Dense(classes, activation=classifier_activation, kernel_initializer=initializers.get(_DENSE_INIT),
                    name="predictions")(x)
    f = "efficientnetb0" + (".h5" if include_top else "_notop.h5")
    return _finish(img, x, name, weights, f, "https://storage.googleapis.com/keras-applications/" + f)


# -- weights ------------------------------------------------------------------------------------------

def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError("reading Keras's .h5 weight files needs h5py: pip install 'tapeflow-nn[h5]'") from None
    return h5py


def _keras3_groups(f):
    """{layer name: [arrays]} from a Keras 3 ``.weights.h5`` (``layers/<key>/vars/<i>``, the name in an attr)."""
    out = {}

    def walk(group):
        for key in group:
            g = group[key]
            if not hasattr(g, "keys"):
                continue
            if "vars" in g and hasattr(g["vars"], "keys"):
                name = g["vars"].attrs.get("name", g.attrs.get("name", key))
                name = name.decode() if isinstance(name, bytes) else str(name)
                vs = g["vars"]
                arrays = [np.asarray(vs[str(i)]) for i in range(len(vs))]
                if arrays:
                    out[name] = arrays
            if "layers" in g:
                walk(g["layers"])
    if "layers" in f:
        walk(f["layers"])
    return out


def _legacy_groups(f):
    """{layer name: [arrays]} from a legacy Keras HDF5 weights file (``layer_names``/``weight_names`` attrs)."""
    if "layer_names" not in f.attrs and "model_weights" in f:
        f = f["model_weights"]
    out = {}
    for name in f.attrs["layer_names"]:
        name = name.decode() if isinstance(name, bytes) else str(name)
        g = f[name]
        wn = [w.decode() if isinstance(w, bytes) else str(w) for w in g.attrs.get("weight_names", [])]
        if wn:
            out[name] = [np.asarray(g[w]) for w in wn]
    return out


def load_keras_weights(model, path):
    """Load a weights file Keras wrote into ``model``, layer by layer by name: Keras 3's ``.weights.h5``,
    the legacy HDF5 weights Keras publishes for its applications, or a tapeflow checkpoint
    (``.safetensors``, read by ``model.load_weights``).  A layer of the model with weights missing
    from the file, or of another shape, raises InvalidArgumentError naming the file and the layer;
    nothing is assigned then.

    >>> import tapeflow as tf
    >>> tf.keras.applications.load_keras_weights.__name__
    'load_keras_weights'
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InvalidArgumentError(f"the weights file {path!r} does not exist", "LoadWeights")
    h5py = _h5py() if path.endswith((".h5", ".hdf5")) else None
    if h5py is None:
        return model.load_weights(path)
    try:
        with h5py.File(path, "r") as f:
            groups = _legacy_groups(f) if ("layer_names" in f.attrs or "model_weights" in f) else _keras3_groups(f)
    except OSError as e:
        raise InvalidArgumentError(f"{path!r} is not a readable HDF5 weights file ({e})", "LoadWeights") from None
    plan = []
    for layer in _all_layers(model):
        ws = layer.weights  # Keras's order: trainable, then non-trainable
        if not ws:
            continue
        arrays = groups.get(layer.name)
        if arrays is None:
            raise InvalidArgumentError(f"{path!r} has no weights for layer {layer.name!r} "
                                       f"({type(layer).__name__}); the file holds layers "
                                       f"{sorted(groups)[:8]}{'...' if len(groups) > 8 else ''}", "LoadWeights")
        if len(arrays) != len(ws):
            raise InvalidArgumentError(f"{path!r} holds {len(arrays)} weights for layer {layer.name!r}, which has "
                                       f"{len(ws)}", "LoadWeights")
        for v, a in zip(ws, arrays):
            if tuple(a.shape) != tuple(v.shape):
                raise InvalidArgumentError(f"{path!r}: weight {v.name} of layer {layer.name!r} has shape "
                                           f"{tuple(v.shape)}, the file's has {tuple(a.shape)}", "LoadWeights")
            plan.append((v, a))
    import tapeflow.core as K

    for v, a in plan:
        v.assign(K.constant(np.asarray(a, dtype=v.dtype.as_numpy_dtype)))
    for layer in _all_layers(model):
        if hasattr(layer, "_finalize"):  # layers that cache values derived from their weights (Normalization)
            layer._finalize()
    return model


def _all_layers(model):
    out, seen = [], set()

    def walk(m):
        for layer in getattr(m, "layers", []):
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            if getattr(layer, "layers", None) and type(layer).__name__ not in ("Bidirectional", "TimeDistributed"):
                walk(layer)
            else:
                out.append(layer)

    walk(model)
    return out
