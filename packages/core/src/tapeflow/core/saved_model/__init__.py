"""Saved models as ONNX: ``tf.saved_model.save`` writes each signature of a model as an ONNX model.

A saved model is a directory: one ``<signature>.onnx`` per signature (ONNX opset
:data:`~tapeflow.core.saved_model.export.OPSET`, weights as initializers) and the manifest
``tapeflow_saved_model.json`` (signatures, their inputs and outputs with dtypes and shapes, the tapeflow
version).  Any ONNX runtime runs the files; ``onnx`` is needed to write them
(``pip install 'tapeflow-core[onnx]'``).

Notes for the two halves (exporter: export.py and onnx_ops.py; importer: load.py):

* the manifest's format is defined once, by the constants at the top of export.py (``MANIFEST``,
  ``FORMAT``, ``FORMAT_VERSION`` and the keys of :func:`export.manifest_entry`); load.py reads them from there;
* the ONNX ops an export may contain are ``onnx_ops.ONNX_OPS`` (a converter never emits another): the
  importer maps each of them back;
* the guide is docs/guides/saving.rst ("Saving and deploying"): the exporter writes the save section,
  the importer adds the load section.

>>> import tempfile, os, tapeflow as tf
>>> class Scale(tf.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = tf.Variable([2.0, 3.0])
...     @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
...     def __call__(self, x):
...         return x * self.w
>>> d = os.path.join(tempfile.mkdtemp(), "scale")
>>> tf.saved_model.save(Scale(), d)
>>> sorted(os.listdir(d))
['serving_default.onnx', 'tapeflow_saved_model.json']
"""
from __future__ import annotations

from .export import DEFAULT_SIGNATURE, MANIFEST, OPSET, save
from .load import load  # the importer (load.py)

__all__ = ["save", "load", "MANIFEST", "OPSET", "DEFAULT_SIGNATURE"]
