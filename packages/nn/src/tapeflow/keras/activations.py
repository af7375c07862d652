"""``tf.keras.activations``: ``tapeflow.nn.activations``.

>>> import tapeflow.keras.activations as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.activations")
