import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # for nn_testutil


@pytest.fixture
def rng(request):
    # a seed per test, stable across runs, so a failure reproduces
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture(autouse=True)
def _fresh_names():
    """Layer names start at 'dense' in each test (as after keras.backend.clear_session())."""
    import tapeflow as tf

    tf.keras.backend.clear_session()
    yield
