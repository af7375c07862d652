"""tf.random: seeded random numbers (Philox 4x32-10)."""
from __future__ import annotations
