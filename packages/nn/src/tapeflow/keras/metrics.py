"""``tf.keras.metrics``: ``tapeflow.nn.metrics``.

>>> import tapeflow.keras.metrics as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.metrics")
