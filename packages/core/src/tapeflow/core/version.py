"""``tf.version``: the version of the tapeflow that runs (tapeflow-core's), as TensorFlow's module.

``VERSION`` is tapeflow's own version string (not TensorFlow's), ``GIT_VERSION`` says which build it is and
``COMPILER_VERSION`` the Python that runs it (tapeflow's kernels are C built per machine).

>>> import tapeflow as tf
>>> tf.version.VERSION == tf.__version__
True
"""
from __future__ import annotations

import platform

from . import __version__ as VERSION  # noqa: N812

GIT_VERSION = f"tapeflow-{VERSION}"
COMPILER_VERSION = f"{platform.python_implementation()} {platform.python_version()}"

__all__ = ["VERSION", "GIT_VERSION", "COMPILER_VERSION"]
