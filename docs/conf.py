"""Sphinx configuration: the API reference is built from the docstrings (Google style, napoleon).

Build it with ``python3 -m sphinx -W -b html docs docs/_build`` (tests/test_docs.py runs the same
build, warnings as errors, in the test suite)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

project = "jaxmatch"
author = "the jaxmatch developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes:" as a field list, so NamedTuple fields are not described twice
autodoc_member_order = "bysource"
autodoc_typehints = "description"
exclude_patterns = ["_build"]
html_theme = "alabaster"
