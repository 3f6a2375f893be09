"""Sphinx configuration of the arrowmm manual (``python -m sphinx -W docs build/docs``).

Sphinx rather than MkDocs: autodoc imports the package, so the Cython extension modules'
classes and signatures are documented as Python sees them (static analysis cannot read a
compiled module), and MyST keeps the pages in Markdown.  CONTRIBUTING.md says more.
"""
from __future__ import annotations

import arrowmm

project = "arrowmm"
author = "the arrowmm authors"
copyright = "the arrowmm authors"  # noqa: A001  (Sphinx's name for it)
version = release = arrowmm.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

myst_heading_anchors = 3          # [Appending](writing.md#appending) links to a heading
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = False  # the docstrings are numpydoc (STYLE.md)
napoleon_numpy_docstring = True
napoleon_use_ivar = True           # an "Attributes" section beside autodoc's own entries
# A numpydoc parameter type ("src : path or buffer") is a cross-reference to Sphinx; a word
# that several classes have as an attribute (path) is ambiguous, not an error in the docs.
suppress_warnings = ["ref.python"]

html_theme = "alabaster"
html_title = f"arrowmm {release}"
html_theme_options = {"description": "Arrow IPC files and streams, zero-copy from memory maps",
                      "fixed_sidebar": True}
