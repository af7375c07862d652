"""tapeflow-autodiff stands on tapeflow-core alone."""
import importlib.metadata
import subprocess
import sys


def test_depends_only_on_core():
    import tapeflow.autodiff
    import tapeflow.core

    assert importlib.metadata.version("tapeflow-autodiff") == tapeflow.autodiff.__version__
    reqs = [r for r in importlib.metadata.requires("tapeflow-autodiff") or [] if "extra ==" not in r]
    assert reqs == [f"tapeflow-core=={tapeflow.core.__version__}"]


def test_importing_autodiff_loads_no_upper_layer():
    code = ("import sys, tapeflow as tf, tapeflow.autodiff\n"
            "tf.GradientTape\n"
            "print(sorted(m for m in sys.modules if m.startswith(('tapeflow.nn', 'tapeflow.data'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_facade_names_come_from_autodiff():
    import tapeflow as tf
    import tapeflow.autodiff as ad

    for name in ("GradientTape", "gradients_function", "value_and_gradients_function", "implicit_gradients",
                 "implicit_value_and_gradients", "custom_gradient", "register_gradient"):
        assert getattr(tf, name) is getattr(ad, name), name
