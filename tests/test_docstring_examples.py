"""Every docstring example of every tapeflow module runs and prints what it says."""
import doctest
import importlib
import pkgutil

import pytest

import tapeflow


PACKAGES = ("tapeflow.kernels", "tapeflow.core", "tapeflow.autodiff", "tapeflow.nn", "tapeflow.data")


def _modules():
    """Every public module of every installed tapeflow package (editable installs included,
    whose folders ``tapeflow.__path__`` does not list)."""
    names = {"tapeflow"}
    for pkg in PACKAGES:
        try:
            mod = importlib.import_module(pkg)
        except ImportError:
            continue  # that distribution is not installed
        names.add(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.add(info.name)
    return sorted(names)


@pytest.mark.parametrize("modname", _modules())
def test_docstring_examples(modname):
    try:
        mod = importlib.import_module(modname)
    except ImportError as e:  # an optional extra of an installed package (e.g. the summary writer)
        pytest.skip(f"{modname} needs an optional dependency: {e}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(mod, modname) if t.examples]
    for t in tests:
        t.globs.setdefault("tf", tapeflow)
        runner.run(t)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{res.failed} docstring example(s) failed in {modname} (see output above)"
