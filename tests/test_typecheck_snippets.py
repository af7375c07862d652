"""tools/typecheck_snippets.py reads every docs page a user copies code from (``nox -s typecheck`` runs pyright and
``mypy --strict`` over what it writes): a page added to docs/getting-started or docs/guides is checked without
anyone listing it, and a block left out of the check is left out for a stated reason."""
import ast
import importlib
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        return importlib.import_module("typecheck_snippets")
    finally:
        sys.path.remove(str(ROOT / "tools"))


@pytest.mark.parametrize("folder", ["getting-started", "guides"])
def test_every_page_of_the_user_guides_is_checked(tool, folder):
    pages = sorted((ROOT / "docs" / folder).glob("*.rst"))
    assert pages, f"docs/{folder} has no pages"
    missing = [p.name for p in pages if p not in tool.PAGES]
    assert not missing, f"tools/typecheck_snippets.py does not read docs/{folder}/{missing}"


def test_a_new_page_is_picked_up(tool, tmp_path, monkeypatch):
    """The page list is the folders' contents, not a list to keep up to date."""
    guides = tmp_path / "docs" / "guides"
    guides.mkdir(parents=True)
    (tmp_path / "docs" / "getting-started").mkdir()
    (guides / "new-topic.rst").write_text("New topic\n=========\n\n.. doctest::\n\n   >>> y = tf.ones([2]) * 2.0\n")
    monkeypatch.setattr(tool, "DOCS", tmp_path / "docs")
    monkeypatch.setattr(tool, "PAGES", tool.pages())
    out = tmp_path / "out"
    tool.main(str(out))
    code = (out / "docs_new_topic_00.py").read_text()
    assert "import tapeflow as tf" in code and "y = tf.ones([2]) * 2.0" in code


def test_every_page_gives_code_and_module_names_are_unique(tool, tmp_path):
    tool.main(str(tmp_path))
    written = {p.stem for p in tmp_path.glob("*.py")}
    for page in tool.PAGES:
        if page.stem == "performance":   # benchmark figures and a plot: no code block a user copies
            continue
        stem = tool.module_stem(page)
        assert any(n.startswith(stem + "_") for n in written), f"no code read from {page.relative_to(ROOT)}"
    stems = [tool.module_stem(p) for p in tool.PAGES]
    assert len(set(stems)) == len(stems)
    for p in tmp_path.glob("*.py"):
        ast.parse(p.read_text(), str(p))   # each is Python


def test_each_left_out_block_exists_and_says_why(tool):
    for (page, line), why in tool.EXCLUDED.items():
        text = (ROOT / "docs" / page).read_text()
        assert any(ln.strip() == line for ln in text.splitlines()), f"{page} no longer has {line!r}: drop the entry"
        assert len(why) > 20


def test_doctest_examples_that_fail_on_purpose_are_left_out(tool):
    body = (">>> x = tf.constant(1.0)\n>>> tf.placeholder\nTraceback (most recent call last):\n  ...\n"
            "AttributeError: module 'tapeflow' has no attribute 'placeholder'\n>>> y = x + 1\n")
    assert tool.doctest_code(body).split("\n") == ["x = tf.constant(1.0)", "y = x + 1"]
