"""``tf.keras.callbacks``: ``tapeflow.nn.callbacks``.

>>> import tapeflow.keras.callbacks as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.callbacks")
