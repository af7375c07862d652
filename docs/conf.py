"""Sphinx configuration of the tapeflow site.

What ``nox -s docs`` runs (both with warnings as errors):

    sphinx-build -W --keep-going -b html docs docs/_build/html
    sphinx-build -W --keep-going -b doctest docs docs/_build/doctest

The second command runs every code example on the site: the ``testcode``/``testoutput``
and ``doctest`` blocks of the pages, and the ``>>>`` examples of the docstrings the API
reference shows.  Examples print their real output; where an output depends on the machine
(timings) the page says so and the varying part is elided with ``...``.
"""
from __future__ import annotations

import doctest
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "tapeflow"
author = "the tapeflow authors"
copyright = "2026, the tapeflow authors"


def _version() -> str:
    try:
        from tapeflow.core import __version__
    except ImportError:
        return "?"
    return __version__


release = version = _version()

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",  # a copy button on every code block (prompts and outputs left out)
    "matplotlib.sphinxext.plot_directive",
    "tapeflow_api",     # the API pages, generated from the installed packages
    "tapeflow_bench",   # benchmark tables from benchmarks/results (or the committed snapshot)
    "tapeflow_viewcode",  # viewcode's [docs] back links to each object's own entry (check_anchors.py checks)
]
exclude_patterns = ["_build", "_data", "Thumbs.db", ".DS_Store"]

# -- HTML ----------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"tapeflow {release}"
html_static_path = ["_static"]
html_css_files = ["tapeflow.css"]
html_show_sourcelink = True
html_theme_options = {"navigation_with_keys": True}
pygments_style = "friendly"
pygments_dark_style = "monokai"

# -- copy button: ">>> " and "... " prompts are not copied, nor the output lines of a doctest block ---------
copybutton_prompt_text = r">>> |\.\.\. "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True

# -- autodoc -------------------------------------------------------------------------------------
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True
autodoc_typehints = "signature"

# -- doctest: every example on the site runs -----------------------------------------------------
# The flags the packages' own docstring test uses (tests/test_docstring_examples.py), so an
# example that passes there passes here; exception messages are compared in full.
doctest_default_flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.DONT_ACCEPT_TRUE_FOR_1
# Each page runs in a scratch directory of its own (checkpoints, event files, data files).
doctest_global_setup = """
import os as _os, tempfile as _tempfile
_docs_cwd = _os.getcwd()
_os.chdir(_tempfile.mkdtemp(prefix="tapeflow-docs-"))
import numpy as np
import tapeflow as tf
"""
doctest_global_cleanup = """
_os.chdir(_docs_cwd)
"""

# -- plots ---------------------------------------------------------------------------------------
plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.autolayout": True}
