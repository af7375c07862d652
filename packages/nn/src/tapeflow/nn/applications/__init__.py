"""Keras's applications (``tf.keras.applications``): ResNet50, MobileNetV2, VGG16 and EfficientNetB0 as
functional models with Keras 3's layer names, weight shapes and order and constructor arguments
(``include_top``, ``weights``, ``input_tensor``, ``input_shape``, ``pooling``, ``classes``,
``classifier_activation``), so Keras's weight files load into them.

``weights=None`` starts from random weights; ``weights="<path>"`` loads a weights file Keras wrote
(Keras 3's ``.weights.h5`` or the legacy HDF5 weights Keras publishes for these models; needs
h5py, the ``h5`` extra of tapeflow-nn) or a tapeflow ``.safetensors`` checkpoint;
``weights="imagenet"`` takes Keras's published file from ``$KERAS_HOME/models/`` (downloading it
when online; offline the error says where to put it).

>>> import tapeflow as tf
>>> model = tf.keras.applications.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), weights=None, classes=5)
>>> model.output_shape, model.count_params()
((None, 5), 416613)
"""
from __future__ import annotations

from ._models import EfficientNetB0, MobileNetV2, ResNet50, VGG16, load_keras_weights

__all__ = ["EfficientNetB0", "MobileNetV2", "ResNet50", "VGG16", "load_keras_weights"]
