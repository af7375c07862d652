"""tapeflow-autodiff stands on tapeflow-core alone."""
import importlib.metadata
import subprocess
import sys


def test_depends_only_on_core():
    assert importlib.metadata.version("tapeflow-autodiff") == "0.1.0"
    reqs = [r for r in importlib.metadata.requires("tapeflow-autodiff") or [] if "extra ==" not in r]
    assert reqs == ["tapeflow-core==0.1.0"]


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
