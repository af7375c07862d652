"""``tapeflow.keras``: the Keras 3 module tree over ``tapeflow.nn`` (``import tapeflow as tf; tf.keras``).

``from tensorflow.keras.layers import Dense`` becomes ``from tapeflow.keras.layers import Dense``;
``tapeflow.keras.layers``, ``.models``, ``.optimizers``, ``.losses``, ``.metrics``, ``.callbacks``,
``.initializers``, ``.regularizers``, ``.activations``, ``.utils``, ``.datasets``,
``.mixed_precision``, ``.saving`` and ``.backend`` re-export the matching ``tapeflow.nn`` modules;
other names (``Input``, ``Model``, ``Sequential``, ...) are ``tapeflow.nn``'s.

>>> from tapeflow.keras import Input, Model
>>> from tapeflow.keras.layers import Dense
>>> x = Input(shape=(3,))
>>> Model(x, Dense(2)(x)).output_shape
(None, 2)
"""
from tapeflow.keras._forward import forward

from . import (activations, backend, callbacks, datasets, initializers, layers, losses, metrics,  # noqa: F401
               mixed_precision, models, optimizers, regularizers, saving, utils)

_SUBMODULES = {n: globals()[n] for n in ("activations", "backend", "callbacks", "datasets", "initializers", "layers",
                                         "losses", "metrics", "mixed_precision", "models", "optimizers",
                                         "regularizers", "saving", "utils")}
forward(globals(), "tapeflow.nn", extra=_SUBMODULES)
