"""``tf.keras.backend``: ``tapeflow.nn.backend`` (``clear_session``, ``epsilon``, ``floatx``).

>>> import tapeflow.keras.backend as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.backend")
