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


def event_accumulator():
    """TensorBoard's event reader, on TensorBoard's own TF stub (reading events needs no TensorFlow,
    and importing TensorFlow only for that would cost seconds); skips when TensorBoard is absent."""
    import sys
    import types

    import pytest

    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    return pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                               reason="reading events back needs TensorBoard (the test extra of tapeflow-nn)")
