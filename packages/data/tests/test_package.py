"""The package itself: the facade's names, and tapeflow.data needing only tapeflow-core."""
import subprocess
import sys

import tapeflow as tf


def test_facade_names():
    assert tf.data.Dataset is __import__("tapeflow.data", fromlist=["Dataset"]).Dataset
    assert tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1
    assert tf.data.INFINITE_CARDINALITY == tf.data.experimental.INFINITE_CARDINALITY == -1
    assert tf.data.UNKNOWN_CARDINALITY == tf.data.experimental.UNKNOWN_CARDINALITY == -2
    assert callable(tf.data.datasets.mnist.load_data) and callable(tf.data.datasets.fashion_mnist.load_data)
    assert callable(tf.data.datasets.digits)
    assert "datasets" in dir(tf.data)


def test_imports_only_core():
    code = ("import sys, tapeflow as tf\n"
            "ds = tf.data.Dataset.range(4).map(lambda x: x * 2).shuffle(4).batch(2).prefetch(1)\n"
            "assert sorted(int(v) for b in ds for v in b) == [0, 2, 4, 6]\n"
            "bad = [m for m in sys.modules if m.startswith(('tapeflow.autodiff', 'tapeflow.nn', 'urllib.request',"
            " 'sklearn', 'tensorflow', 'torch'))]\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_distribution_metadata():
    from importlib import metadata

    import tapeflow.core
    import tapeflow.data

    md = metadata.metadata("tapeflow-data")
    assert md["Version"] == tapeflow.data.__version__
    reqs = metadata.requires("tapeflow-data")
    assert f"tapeflow-core=={tapeflow.core.__version__}" in reqs
    # the digits ship in the package: the digits extra stays, empty, so old install commands still work
    assert "digits" in md.get_all("Provides-Extra")
    assert not any("scikit-learn" in r or 'extra == "digits"' in r for r in reqs)
    assert not any(r.startswith(("tapeflow-autodiff", "tapeflow-nn")) for r in reqs)
