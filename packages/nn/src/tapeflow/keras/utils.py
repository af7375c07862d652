"""``tf.keras.utils``: ``tapeflow.nn.utils`` where installed, and Keras's serialization helpers
(``register_keras_serializable``, ``get_registered_object``, ...) from ``tapeflow.nn.saving``.

>>> import tapeflow as tf
>>> tf.keras.utils.register_keras_serializable is tf.keras.saving.register_keras_serializable
True
"""
from tapeflow.keras._forward import forward
from tapeflow.nn import saving as _saving

forward(globals(), "tapeflow.nn.utils",
        extra={n: getattr(_saving, n) for n in ("register_keras_serializable", "get_registered_object",
                                                 "get_registered_name", "serialize_keras_object",
                                                 "deserialize_keras_object", "get_custom_objects")})
