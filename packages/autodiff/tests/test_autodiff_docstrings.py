"""Every docstring example in tapeflow.autodiff runs and prints what it says."""
import doctest
import importlib
import pkgutil

import pytest
import tapeflow
import tapeflow.autodiff


def _modules():
    names = ["tapeflow.autodiff"]
    for info in pkgutil.walk_packages(tapeflow.autodiff.__path__, "tapeflow.autodiff."):
        if not info.name.split(".")[-1].startswith("_"):
            names.append(info.name)
    return sorted(names)


def test_every_public_module_is_collected():
    assert {"tapeflow.autodiff.tape", "tapeflow.autodiff.custom", "tapeflow.autodiff.functions",
            "tapeflow.autodiff.check", "tapeflow.autodiff.registry"} <= set(_modules())


@pytest.mark.parametrize("modname", _modules())
def test_docstring_examples(modname):
    mod = importlib.import_module(modname)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(mod, modname) if t.examples]
    for t in tests:
        t.globs.setdefault("tf", tapeflow)
        runner.run(t)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{res.failed} docstring example(s) failed in {modname} (see output above)"


def test_public_functions_have_docstrings_with_examples():
    import inspect

    missing = []
    for name in tapeflow.autodiff.__all__:
        obj = getattr(tapeflow.autodiff, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        doc = inspect.getdoc(obj) or ""
        if not doc or (">>>" not in doc and name not in ("GradientCheck", "UnconnectedGradients")):
            missing.append(name)
    assert not missing, f"public names without a docstring example: {missing}"
