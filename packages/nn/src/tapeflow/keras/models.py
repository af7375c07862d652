"""``tf.keras.models``: ``Model``, ``Sequential``, the functional model, ``load_model`` and ``save_model``.

>>> import tapeflow.keras.models as mod
>>> bool(mod.__all__)
True
"""
from tapeflow.keras._forward import forward
from tapeflow.nn import saving as _saving

forward(globals(), "tapeflow.nn.models", "tapeflow.nn.functional",
        extra={"load_model": _saving.load_model, "save_model": _saving.save_model})
