"""The API reference's page per public symbol (docs/_ext/tapeflow_api.py).

A small site is built with Sphinx over a sample package standing in for tapeflow's surface: each public
function and class gets a page of its own with its signature, its whole docstring and a ``[source]`` link
that resolves (docs/_ext/check_anchors.py); the package page lists them in a table linking there, and the
doctest builder runs each docstring's examples once.  Over the real packages, every public function and
class of every namespace the API pages list has a page.
"""
from __future__ import annotations

import importlib
import inspect
import io
import pathlib
import re
import sys
import textwrap
from html import unescape

import pytest
from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXT = ROOT / "docs" / "_ext"

SAMPLE_IMPL = '''
"""The sample's implementation module."""


def scale(x, factor=2.0):
    """Multiply ``x`` by ``factor``.

    Only the symbol page shows this second paragraph.

    >>> scale(3)
    6.0
    """
    return x * factor


class Scale:
    """A scale as an object (its name differs from ``scale`` only in case).

    >>> Scale(3.0)(2.0)
    6.0
    """

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, x):
        return x * self.factor


class Unit:
    """A unit: its class body has no methods."""

    name = "m"


class Accumulator:
    """Sums what it is given.

    >>> acc = Accumulator()
    >>> acc.add(2)
    >>> acc.total
    2
    """

    def __init__(self):
        self._total = 0

    def add(self, value):
        """Add ``value`` to the total."""
        self._total += value

    @property
    def total(self):
        """The sum so far."""
        return self._total


def _make(k):
    def op(x):
        return x * k
    op.__name__ = op.__qualname__ = f"times{k}"
    op.__doc__ = f"``x`` times {k}."
    return op


for _k in (3,):
    globals()[f"times{_k}"] = _make(_k)   # made by a factory: no def of that name in the source
'''

SAMPLE_INIT = '''
"""A sample surface for the API pages' test."""
from ._impl import Accumulator, Scale, Unit, scale, times3  # noqa: F401


def shout(text):
    """``text`` in capitals.

    >>> shout("hi")
    'HI'
    """
    return text.upper()


Acc = Accumulator   # a second name of one class: documented once, under its own name
Accumulator.__module__ = Unit.__module__ = __name__   # re-homed, as tapeflow.distribute does: source in _impl
'''

SURFACE = {"scale", "Scale", "Accumulator", "Unit", "times3", "shout"}   # the sample's functions and classes


@pytest.fixture
def api(monkeypatch):
    """docs/_ext/tapeflow_api.py, imported from the checkout (and its sibling tapeflow_viewcode)."""
    monkeypatch.syspath_prepend(str(EXT))
    for name in ("tapeflow_api", "tapeflow_viewcode", "check_anchors"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("tapeflow_api")


def _sample_site(tmp_path, monkeypatch, api, all_names=None):
    pkg = tmp_path / "pkgs" / "tfsample"
    pkg.mkdir(parents=True)
    (pkg / "_impl.py").write_text(SAMPLE_IMPL)
    init = SAMPLE_INIT + (f"\n__all__ = {all_names!r}\n" if all_names is not None else "")
    (pkg / "__init__.py").write_text(init)
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    for name in [m for m in sys.modules if m == "tfsample" or m.startswith("tfsample.")]:
        monkeypatch.delitem(sys.modules, name)
    importlib.invalidate_caches()
    monkeypatch.setattr(api, "PACKAGES", {"sample": {
        "dist": "tfsample", "version_module": "tfsample", "prefix": "tfsample",
        "namespaces": [("tfsample", "tfsample", "The sample namespace.")]}})
    src = tmp_path / "src"
    (src / "api").mkdir(parents=True)
    (src / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(EXT)!r})
        project = "sample"
        extensions = ["sphinx.ext.autodoc", "sphinx.ext.doctest", "sphinx.ext.viewcode", "tapeflow_api",
                      "tapeflow_viewcode"]
        exclude_patterns = ["_build"]
        doctest_global_setup = "from tfsample import *"
    """))
    (src / "index.rst").write_text("Sample\n======\n\n.. toctree::\n\n   guide\n   api/sample\n")
    (src / "guide.rst").write_text("Guide\n=====\n\nScale with :func:`tfsample.scale`; sum with "
                                   ":class:`tfsample.Accumulator`.\n")
    (src / "api" / "sample.rst").write_text("tfsample\n========\n\n.. tapeflow-api:: sample\n")
    return src


def _build(src, builder, parallel=0):
    warnings = io.StringIO()
    out = src.parent / "_build" / builder
    with docutils_namespace():   # (each build registers its nodes and directives afresh, as sphinx-build's)
        app = Sphinx(str(src), str(src), str(out), str(src.parent / "_build" / "doctrees"), builder,
                     status=io.StringIO(), warning=warnings, freshenv=True, parallel=parallel)
        app.build()
    return out, app, warnings.getvalue()


def _text(html: str) -> str:
    body = re.search(r'<div class="body" role="main">(.*?)<div class="sphinxsidebar"', html, re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", "", (body.group(1) if body else html))).split())


def test_each_public_function_and_class_gets_a_page_with_signature_docstring_and_source_link(
        tmp_path, monkeypatch, api):
    src = _sample_site(tmp_path, monkeypatch, api)
    out, app, warnings = _build(src, "html", parallel=2)   # (the extensions are parallel-safe: sphinx-build -j)
    assert warnings == ""
    pages = {p.stem: p.read_text() for p in (out / "api" / "_generated").glob("*.html")}
    # one page per name; names equal but for case get their kind in the file name
    assert set(pages) == {"tfsample.scale-function", "tfsample.Scale-class", "tfsample.Accumulator",
                          "tfsample.Unit", "tfsample.times3", "tfsample.shout"}
    assert not (src / "api" / "_generated" / "tfsample.Acc.rst").exists()

    scale = pages["tfsample.scale-function"]
    assert "tfsample.scale(x, factor=2.0)[source]" in _text(scale)                          # the signature
    assert "Only the symbol page shows this second paragraph." in _text(scale)           # the whole docstring
    assert 'href="../../_modules/tfsample/_impl.html#scale"' in scale                    # the [source] link
    acc = pages["tfsample.Accumulator"]
    assert 'id="tfsample.Accumulator.add"' in acc and 'id="tfsample.Accumulator.total"' in acc  # method, property
    assert "Also: tfsample.Acc" in _text(acc)
    assert 'href="../../_modules/tfsample/_impl.html#times3"' in pages["tfsample.times3"]  # a factory's function
    assert 'href="../../_modules/tfsample/_impl.html#Accumulator"' in acc   # (its __module__ says tfsample)
    assert 'href="../../_modules/tfsample/_impl.html#Accumulator.add"' in acc
    assert 'href="../../_modules/tfsample/_impl.html#Unit"' in pages["tfsample.Unit"]
    assert 'href="../../_modules/tfsample/_impl.html#Accumulator.total"' in acc   # a property's too

    # the package page: a table of names and first lines, linking to the pages; not the docstrings
    package = (out / "api" / "sample.html").read_text()
    assert 'href="_generated/tfsample.scale-function.html#tfsample.scale"' in package
    assert "Multiply x by factor." in _text(package)
    assert "second paragraph" not in package and "&gt;&gt;&gt;" not in package
    # cross-references from other pages land on the symbol pages
    guide = (out / "guide.html").read_text()
    assert 'href="api/_generated/tfsample.scale-function.html#tfsample.scale"' in guide
    assert 'href="api/_generated/tfsample.Accumulator.html#tfsample.Accumulator"' in guide

    # every link and #anchor of the site resolves (viewcode's [source] and [docs] included)
    check_anchors = importlib.import_module("check_anchors")
    assert check_anchors.broken_links(out) == []
    back = (out / "_modules" / "tfsample" / "_impl.html").read_text()
    assert 'href="../../api/_generated/tfsample.times3.html#tfsample.times3"' in back


def test_the_doctest_builder_runs_each_docstring_once(tmp_path, monkeypatch, api):
    src = _sample_site(tmp_path, monkeypatch, api)
    out, app, warnings = _build(src, "doctest")
    assert warnings == ""
    report = (out / "output.txt").read_text()
    # scale 1, Scale 1, Accumulator 3, shout 1: each example once, all passing
    assert re.search(r"^\s*6 tests\s*$", report, re.M), report
    assert re.search(r"^\s*0 failures in tests\s*$", report, re.M), report
    assert "Document: api/sample\n" not in report


def test_a_name_that_leaves_the_surface_loses_its_page(tmp_path, monkeypatch, api):
    src = _sample_site(tmp_path, monkeypatch, api, all_names=sorted(SURFACE))
    _build(src, "html")
    assert (src / "api" / "_generated" / "tfsample.shout.rst").exists()
    monkeypatch.setattr(sys.modules["tfsample"], "__all__", sorted(SURFACE - {"shout"}))
    _, _, warnings = _build(src, "html")
    assert warnings == ""
    assert not (src / "api" / "_generated" / "tfsample.shout.rst").exists()


def _documented_objects(api, pages) -> dict:
    """{id(object): page} of what each generated page documents (its autodoc directive)."""
    out = {}
    for stem, lines in pages.items():
        targets = [ln.split("::", 1)[1].strip() for ln in lines if ln.startswith((".. autofunction::",
                                                                                  ".. autoclass::"))]
        assert len(targets) == 1, (stem, targets)
        ns, _, name = targets[0].rpartition(".")
        out[id(getattr(api._import(ns), name))] = stem
    return out


def test_the_sample_surface_has_a_page_per_public_function_and_class(tmp_path, monkeypatch, api):
    _sample_site(tmp_path, monkeypatch, api)
    import tfsample

    documented = _documented_objects(api, api.symbol_pages())
    for name in SURFACE:
        assert id(getattr(tfsample, name)) in documented, f"tfsample.{name} has no page"
    # a new public function gets its page without any edit of the docs
    monkeypatch.setattr(tfsample, "whisper", lambda text: text.lower(), raising=False)
    tfsample.whisper.__module__ = "tfsample"
    api._SURFACES.clear()
    assert id(tfsample.whisper) in _documented_objects(api, api.symbol_pages())


def test_every_public_function_and_class_of_the_packages_has_a_page(api):
    pages = api.symbol_pages()
    assert len({stem.lower() for stem in pages}) == len(pages) > 500   # unpacks on a case-insensitive disk
    documented = _documented_objects(api, pages)
    missing = []
    for key, spec in api.PACKAGES.items():
        prefix = spec["prefix"]
        for ns, _, _ in spec["namespaces"]:
            try:
                mod = api._import(ns)
            except ImportError:
                continue   # (a backend this machine lacks: its section says so)
            listed = getattr(mod, "__all__", None)
            for name in (listed if listed is not None else dir(mod)):
                obj = getattr(mod, name, None)
                if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                    continue
                where = getattr(obj, "__module__", "") or ""
                if listed is None and not (where == ns or where == prefix or where.startswith(prefix + ".")):
                    continue   # imported from elsewhere, not this package's
                if id(obj) not in documented:
                    missing.append(f"{ns}.{name}")
    assert missing == []
