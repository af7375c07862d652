"""How each ``tapeflow.keras`` module re-exports its ``tapeflow.nn`` module: by that module's ``__all__``
(or, without one, the public names it defines), at import and again on attribute access, so names
added to ``tapeflow.nn`` later show up here with no list to keep.

>>> from tapeflow.keras import layers
>>> from tapeflow.nn import layers as nn_layers
>>> layers.Dense is nn_layers.Dense
True
"""
from __future__ import annotations

import importlib
import types


def public_names(mod) -> list:
    """The names ``mod`` exports: its ``__all__``, else the public classes, functions and submodules it defines."""
    names = getattr(mod, "__all__", None)
    if names is not None:
        return list(names)
    out = []
    for n, v in vars(mod).items():
        if n.startswith("_"):
            continue
        if isinstance(v, types.ModuleType):
            if v.__name__.startswith(mod.__name__ + "."):
                out.append(n)
        elif getattr(v, "__module__", None) == mod.__name__:
            out.append(n)
    return out


def forward(namespace: dict, *targets: str, extra: dict | None = None):
    """Fill ``namespace`` (a module's globals) with the public names of the modules ``targets`` (the first
    one that defines a name wins) and give it a ``__getattr__``/``__dir__`` that look there for names
    added later.  A target not installed yet is looked up again on each access."""
    def mods():
        out = []
        for t in targets:
            try:
                out.append(importlib.import_module(t))
            except ModuleNotFoundError as e:
                if e.name is None or not t.startswith(e.name):
                    raise
        return out

    names = []
    for mod in mods():
        for n in public_names(mod):
            if n not in namespace and hasattr(mod, n):
                namespace[n] = getattr(mod, n)
                names.append(n)
    for k, v in (extra or {}).items():
        namespace[k] = v
        names.append(k)
    namespace["__all__"] = sorted(set(names))
    here = namespace["__name__"]

    def __getattr__(name):
        if not name.startswith("__"):
            for mod in mods():
                if hasattr(mod, name):
                    return getattr(mod, name)
        raise AttributeError(f"module {here!r} has no attribute {name!r} (looked in {', '.join(targets)})")

    def __dir__():
        out = set(namespace)
        for mod in mods():
            out.update(public_names(mod))
        return sorted(out)

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
