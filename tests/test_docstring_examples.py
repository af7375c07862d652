"""Every docstring example of every tapeflow module runs and prints what it says."""
import doctest
import importlib
import pkgutil

import pytest

import tapeflow


def _modules():
    names = []
    for info in pkgutil.walk_packages(tapeflow.__path__, "tapeflow."):
        if info.name.split(".")[-1].startswith("_") and not info.name.endswith("__init__"):
            continue
        names.append(info.name)
    return sorted(set(names) | {"tapeflow"})


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
