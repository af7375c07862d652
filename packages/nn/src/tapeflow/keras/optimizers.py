"""``tf.keras.optimizers``: ``tapeflow.nn.optimizers`` (SGD, Adam, ... and ``schedules``).

>>> import tapeflow.keras.optimizers as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.optimizers")
