"""``tf.io``: files (``read_file``, ``write_file``, ``gfile``), TFRecord files (``TFRecordWriter``,
``TFRecordOptions``), ``tf.train.Example`` parsing (``parse_example``, ``parse_single_example`` and
the feature specs), CSV (``decode_csv``), serialized tensors (``serialize_tensor``, ``parse_tensor``)
and images (``decode_png``/``encode_png``/``decode_jpeg``/``encode_jpeg``/``decode_image``, with Pillow).

These are host computations over bytes, as TensorFlow's own file ops run on the CPU: they read
and write files and protobuf bytes in Python and return tensors on the default device.  The
formats are TensorFlow's, so files and bytes go both ways between TensorFlow and tapeflow.

>>> import tapeflow as tf
>>> tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([b"a"])), tf.string).numpy().tolist()
[b'a']
"""
from __future__ import annotations

from . import gfile
from ._ops import (decode_csv, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png, parse_tensor,
                   read_file, serialize_tensor, write_file)
from ._parsing import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, parse_example, parse_single_example
from ._proto import BytesList, Example, Feature, Features, FloatList, Int64List
from ._tfrecord import TFRecordOptions, TFRecordWriter

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "TFRecordOptions", "TFRecordWriter", "VarLenFeature",
           "decode_csv", "decode_image", "decode_jpeg", "decode_png", "encode_jpeg", "encode_png", "gfile",
           "parse_example", "parse_single_example", "parse_tensor", "read_file", "serialize_tensor", "write_file"]

#: the ``tf.train`` messages (``tf.train.Example`` and its parts) defined here
TRAIN_API = {"Example": Example, "Features": Features, "Feature": Feature, "BytesList": BytesList,
             "FloatList": FloatList, "Int64List": Int64List}
