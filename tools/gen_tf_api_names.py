"""Write docs/_data/tf_api_names.txt: TensorFlow 2's public ``tf.*`` names, one per line.

Run once with a Python that has TensorFlow (the list is committed; tools/api_coverage.py reads it)::

    /path/to/tf-venv/bin/python tools/gen_tf_api_names.py

It walks ``tf`` and its public submodules (``tf.math``, ``tf.linalg``, ``tf.nn``, ``tf.io.gfile``,
``tf.data.experimental``, ``tf.keras.layers``, ...) depth first: every attribute whose name does not
start with ``_`` is a name; a submodule is also walked (once, under its shortest path).  ``tf.compat``
(the v1 and v2 copies of the whole API) and ``tf.raw_ops`` (one binding per C++ kernel) are left out,
as are modules of other libraries; ``tf.keras`` is Keras 3: it is walked, and the page shows it as
its own section.
"""
from __future__ import annotations

import os
import pathlib
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SKIP = {"tf.compat", "tf.raw_ops"}  # the v1/v2 copies of the whole API; the generated op-level bindings
OUT = pathlib.Path(__file__).resolve().parent.parent / "docs" / "_data" / "tf_api_names.txt"


def _is_api_module(mod) -> bool:
    """TensorFlow's generated API modules (``tensorflow._api.v2.*``, and ``tf.experimental``) and Keras 3's
    public ones (``keras.*`` outside ``keras.src``); not ``tensorflow.dtensor``'s implementation packages."""
    name = getattr(mod, "__name__", "")
    if name.startswith(("tensorflow._api.v2", "tensorflow.experimental")):
        return True
    return name.startswith("keras") and not name.startswith("keras.src")


def walk(root, names: set):
    """Breadth first, so each module is listed under its shortest public path (TensorFlow re-exports modules
    under several names: ``tf.keras.layers`` is also reachable deeper down)."""
    seen = {id(root)}
    queue = [(root, "tf")]
    while queue:
        mod, prefix = queue.pop(0)
        for attr in sorted(dir(mod)):
            if attr.startswith("_"):
                continue
            full = f"{prefix}.{attr}"
            if full in SKIP:
                continue
            try:
                value = getattr(mod, attr)
            except Exception:  # noqa: BLE001,S112 - a lazily loaded name that fails to load is not API
                continue
            if isinstance(value, types.ModuleType):
                if not _is_api_module(value):
                    continue  # a stray import of another library
                names.add(full)
                if id(value) not in seen:
                    seen.add(id(value))
                    queue.append((value, full))
            else:
                names.add(full)


def main() -> int:
    import tensorflow as tf

    names = set()
    walk(tf, names)
    header = (f"# TensorFlow {tf.__version__}'s public tf.* names (tools/gen_tf_api_names.py); "
              "tf.compat and tf.raw_ops are left out\n")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(header + "".join(n + "\n" for n in sorted(names)))
    print(f"{len(names)} names -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
