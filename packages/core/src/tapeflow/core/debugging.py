"""tf.debugging: assertions and check_numerics."""
from __future__ import annotations
