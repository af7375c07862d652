import os
import sys

import pytest

# the shared fixtures (tapeflow/core/testing.py says why they are imported here)
from tapeflow.core.testing import rng  # noqa: F401

sys.path.insert(0, os.path.dirname(__file__))  # for nn_testutil


@pytest.fixture(autouse=True)
def _fresh_names():
    """Layer names start at 'dense' in each test (as after keras.backend.clear_session())."""
    import tapeflow as tf

    tf.keras.backend.clear_session()
    yield
