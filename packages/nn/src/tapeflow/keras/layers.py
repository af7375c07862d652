"""``tf.keras.layers``: the layers of ``tapeflow.nn.layers`` (``from tapeflow.keras.layers import Dense``).

>>> import tapeflow.keras.layers as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.layers")
