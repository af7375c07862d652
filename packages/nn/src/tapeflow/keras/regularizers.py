"""``tf.keras.regularizers``: ``tapeflow.nn.regularizers``.

>>> import tapeflow.keras.regularizers as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.regularizers")
