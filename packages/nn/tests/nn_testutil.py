"""Helpers shared by the nn tests."""
import numpy as np


def tf_or_none():
    """TensorFlow to compare against, or None when it is not installed (the NumPy references still run)."""
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow
    except Exception:
        return None
    return tensorflow
