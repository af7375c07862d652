"""``tf.keras.saving``: whole-model saving and Keras 3's object serialization (``tapeflow.nn.saving``).

>>> import tapeflow.keras.saving as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.saving")
