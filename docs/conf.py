"""Sphinx configuration for the tapeflow site (the full site is its own issue; this is the base)."""
project = "tapeflow"
author = "the tapeflow authors"
copyright = "2026, the tapeflow authors"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.doctest", "sphinx.ext.napoleon",
              "sphinx.ext.viewcode"]
html_theme = "furo"
autodoc_default_options = {"members": True, "undoc-members": False}
doctest_global_setup = "import tapeflow as tf\nimport numpy as np"
exclude_patterns = ["_build"]
