"""What nn asks tapeflow-distribute, when a program uses it: nn never imports that (higher) package; it looks
it up in ``sys.modules``, so without a strategy these are a dictionary lookup and return the one-process answer.
"""
from __future__ import annotations

import sys


def _mod():
    return sys.modules.get("tapeflow.distribute")


def update_context():
    """The replica context whose replicas sum their gradients before an update, or None."""
    d = _mod()
    return None if d is None else d._update_context()


def current_strategy():
    """The strategy whose scope is open on this thread, or None."""
    d = _mod()
    return None if d is None else d._current_strategy()


def strategy_of(model):
    """The strategy ``fit`` trains ``model`` under: the open scope's, else its optimizer's (made in one)."""
    d = _mod()
    if d is None:
        return None
    return d._current_strategy() or getattr(getattr(model, "optimizer", None), "_distribute_strategy", None)


def is_chief() -> bool:
    """Whether this process writes checkpoints and summaries (every process but MPI ranks other than 0)."""
    d = _mod()
    return True if d is None else d._is_chief()
