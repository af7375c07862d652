"""``tf.keras.losses``: ``tapeflow.nn.losses``.

>>> import tapeflow.keras.losses as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.losses")
