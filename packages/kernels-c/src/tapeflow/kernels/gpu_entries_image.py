"""The CPU kernel table on a device, image part: resizing and the RGB <-> HSV conversions on the host.

Each entry copies its operands to host memory, runs the CPU library's ``tpf_<name>`` (``csrc/image.c``,
the same C code the CPU backend runs) and copies the result back (``HostEntries._host_call``): a
documented fallback, costing one transfer of the inputs and one of the outputs.  Image ops sit at the
input end of a model (augmentation, preprocessing), where a copy per call is small beside the network.

>>> from tapeflow.kernels.gpu_entries_image import ImageEntries
>>> callable(ImageEntries.resize)
True
"""
from __future__ import annotations

import numpy as np

from .gpu_contract import SIZE

_NO = np.empty(1, np.uint8)  # stands for a buffer when the arguments are refused before any copy


def _es(dt):
    return SIZE[dt] if 0 <= dt < len(SIZE) else 1


class ImageEntries:
    """Entries of the kernel table that a GPU backend runs with the CPU library on host copies."""

    def resize(self, method, antialias, dt, x, out, b, ih, iw, c, oh, ow):
        """Resize ``x`` [b, ih, iw, c] to ``out`` [b, oh, ow, c] with ``method`` (csrc/image.c)."""
        if min(b, ih, iw, c, oh, ow) < 0:
            return self._host_call("resize", [], [], [method, antialias, dt, _NO, _NO, b, ih, iw, c, oh, ow])
        es = _es(dt)
        return self._host_call("resize", [(x, b * ih * iw * c * es)], [(out, b * oh * ow * c * es)],
                               [method, antialias, dt, "in0", "out0", b, ih, iw, c, oh, ow])

    def resize_grad(self, method, antialias, dt, g, gin, b, ih, iw, c, oh, ow):
        """The transposed resize: ``g`` [b, oh, ow, c] back to ``gin`` [b, ih, iw, c]."""
        if min(b, ih, iw, c, oh, ow) < 0:
            return self._host_call("resize_grad", [], [], [method, antialias, dt, _NO, _NO, b, ih, iw, c, oh, ow])
        es = _es(dt)
        return self._host_call("resize_grad", [(g, b * oh * ow * c * es)], [(gin, b * ih * iw * c * es)],
                               [method, antialias, dt, "in0", "out0", b, ih, iw, c, oh, ow])

    def _colour(self, kernel, dt, x, out, n):
        if n < 0:
            return self._host_call(kernel, [], [], [dt, _NO, _NO, n])
        return self._host_call(kernel, [(x, 3 * n * _es(dt))], [(out, 3 * n * _es(dt))], [dt, "in0", "out0", n])

    def rgb_to_hsv(self, dt, x, out, n):
        """``n`` RGB pixels to HSV (TensorFlow's hue in [0, 1))."""
        return self._colour("rgb_to_hsv", dt, x, out, n)

    def hsv_to_rgb(self, dt, x, out, n):
        """``n`` HSV pixels to RGB."""
        return self._colour("hsv_to_rgb", dt, x, out, n)

    def colour_grad(self, inverse, dt, x, g, gx, n):
        """The vector-Jacobian product of rgb_to_hsv (``inverse`` 0) or hsv_to_rgb (1) at ``x``."""
        if n < 0:
            return self._host_call("colour_grad", [], [], [inverse, dt, _NO, _NO, _NO, n])
        nb = 3 * n * _es(dt)
        return self._host_call("colour_grad", [(x, nb), (g, nb)], [(gx, nb)], [inverse, dt, "in0", "in1", "out0", n])
