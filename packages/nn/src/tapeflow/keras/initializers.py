"""``tf.keras.initializers``: ``tapeflow.nn.initializers``.

>>> import tapeflow.keras.initializers as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.initializers")
