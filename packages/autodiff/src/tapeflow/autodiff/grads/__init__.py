"""The gradient rules of core's ops, one module per op family (array, math, nn, conv, ...).

Importing this package imports every module in it, so a new family file is picked
up without touching this one.  Each module registers its rules with
:func:`tapeflow.autodiff.registry.defgrad`.
"""
from __future__ import annotations

import importlib
import pkgutil

FAMILIES = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
for _name in FAMILIES:
    importlib.import_module(f"{__name__}.{_name}")
