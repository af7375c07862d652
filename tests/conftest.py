import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def rng(request):
    import numpy as np

    # a seed per test, stable across runs, so a failure reproduces
    import zlib

    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
