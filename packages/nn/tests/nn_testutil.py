"""Helpers shared by the nn tests."""


def tf_or_none():
    """TensorFlow to compare against, or None when it is not installed (the NumPy references still run)."""
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow
    except Exception:  # noqa: BLE001 (a broken TensorFlow install is as good as none)
        return None
    return tensorflow
