"""``tf.keras.datasets``: the data set loaders (``mnist.load_data()``, ``fashion_mnist.load_data()``, ...)
of ``tapeflow.nn.datasets`` or, where tapeflow-data is installed, ``tapeflow.data.datasets``.

>>> import tapeflow as tf
>>> callable(tf.keras.datasets.mnist.load_data)
True
"""
from tapeflow.keras._forward import forward

forward(globals(), "tapeflow.nn.datasets", "tapeflow.data.datasets")
