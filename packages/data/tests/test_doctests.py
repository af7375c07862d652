"""Every docstring example in tapeflow.data runs and prints what it says."""
import doctest
import importlib
import pkgutil

import pytest
import tapeflow.data

MODULES = ["tapeflow.data"] + [m.name for m in pkgutil.walk_packages(tapeflow.data.__path__, "tapeflow.data.")]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(mod, name, globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_every_public_function_has_a_summary_and_an_example():
    from tapeflow.data import dataset, datasets, experimental, readers
    from tapeflow.data.datasets import fashion_mnist, mnist

    missing = []
    for owner in (dataset, dataset.Dataset, readers, experimental, datasets, mnist, fashion_mnist, tapeflow.data):
        for attr in dir(owner):
            if attr.startswith("_"):
                continue
            obj = getattr(owner, attr)
            if not callable(obj) or getattr(obj, "__module__", "").split(".")[:2] != ["tapeflow", "data"]:
                continue
            doc = obj.__doc__ or ""
            if not doc.strip() or (">>>" not in doc and not isinstance(obj, type)):
                missing.append(f"{getattr(owner, '__name__', owner)}.{attr}")
    assert missing == []
