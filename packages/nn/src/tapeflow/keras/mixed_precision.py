"""``tf.keras.mixed_precision``: the dtype policies of ``tapeflow.nn.mixed_precision`` (re-exported by
that module's ``__all__``; an attribute it does not have raises AttributeError naming it).

>>> import tapeflow.keras.mixed_precision as mp
>>> isinstance(mp.__all__, list)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.mixed_precision")
