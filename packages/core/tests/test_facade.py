import subprocess
import sys

import pytest

import tapeflow as tf
import tapeflow.core


def test_import_is_light():
    code = ("import sys, tapeflow\n"
            "bad = [m for m in ('tapeflow.autodiff', 'tapeflow.nn', 'tapeflow.data', 'tapeflow.kernels._cpu',"
            " 'cffi', 'scipy_openblas32') if m in sys.modules]\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_namespaces():
    assert tf.math.log is tf.log and tf.math.reduce_sum is tf.reduce_sum
    assert tf.linalg.matmul is tf.matmul
    assert callable(tf.config.set_num_threads) and callable(tf.config.list_devices)
    assert tf.errors.InvalidArgumentError.__name__ == "InvalidArgumentError"
    import tapeflow.math  # the namespaces are importable modules too
    assert tapeflow.math is tf.math


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'frobnicate'"):
        tf.frobnicate


def test_missing_package_says_how_to_install(monkeypatch):
    import tapeflow
    from tapeflow.core import api

    def fail(name, *a, **k):
        e = ModuleNotFoundError(f"No module named {name!r}")
        e.name = name
        raise e

    monkeypatch.setattr(api.importlib, "import_module", fail)
    monkeypatch.delitem(tapeflow.__dict__, "data", raising=False)
    with pytest.raises(ImportError, match="pip install tapeflow-data"):
        tapeflow.__getattr__("data")
    nn = tapeflow.__getattr__("nn")  # core's nn ops stand in for tf.nn
    assert nn.relu is tf.relu
    with pytest.raises(AttributeError, match="pip install tapeflow-nn"):
        nn.Dense


def test_registry_lists_ops_with_tf_names():
    assert tapeflow.core.REGISTRY["matmul"].tf_name == "MatMul"
    assert tapeflow.core.REGISTRY["add"].tf_name == "AddV2"
    assert all(op.kind in ("primitive", "composite") for op in tapeflow.core.REGISTRY.values())
