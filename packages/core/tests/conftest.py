# the shared fixtures (tapeflow/core/testing.py says why they are imported here)
from tapeflow.core.testing import rng  # noqa: F401
