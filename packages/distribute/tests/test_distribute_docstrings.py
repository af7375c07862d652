"""Every docstring example of tapeflow.distribute runs and prints what it says."""
import doctest
import importlib

import pytest

import tapeflow


@pytest.mark.parametrize("modname", ["tapeflow.distribute", "tapeflow.distribute.testing"])
def test_docstring_examples(modname):
    mod = importlib.import_module(modname)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(mod, modname) if t.examples]
    assert tests, f"{modname} has no docstring examples"
    for t in tests:
        t.globs.setdefault("tf", tapeflow)
        runner.run(t)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{res.failed} docstring example(s) failed in {modname} (see output above)"


def test_every_public_name_has_an_example():
    import tapeflow.distribute as d

    missing = [n for n in d.__all__ if n != "DEFAULT_BYTES_PER_PACK" and ">>>" not in (getattr(d, n).__doc__ or "")]
    assert missing == []
