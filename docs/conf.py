"""Sphinx configuration of the ldpsim documentation site (built in CI with warnings as errors)."""

import os
import re
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("COLUMNS", "100")  # a fixed width for the --help texts on the commands page
sys.path.insert(0, str(Path(__file__).parent / "_ext"))

from ldpsim import __version__  # noqa: E402

project = "ldpsim"
author = "the ldpsim developers"
copyright = "the ldpsim developers, MIT licence"
release = __version__
version = ".".join(__version__.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",
    "cli_help",
    "gallery",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_gallery", "_gallery_cache", "README.md"]
templates_path = ["_templates"]

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 4

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()

# Figures in the gallery are drawn by ldpsim's own plotting functions at build time.
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]

html_theme = "pydata_sphinx_theme"
html_title = f"ldpsim {release}"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}


_LITERAL = re.compile(r"(``.*?``)")


def _plain_bars(app, what, name, obj, options, lines):
    """Docstrings write |x| for an absolute value or a set's size, never an RST substitution: escape the bars
    outside inline literals and doctest lines, so that the math reads as written."""
    for i, line in enumerate(lines):
        if "|" in line and not line.lstrip().startswith((">>>", "...")):
            lines[i] = "".join(part if part.startswith("``") else part.replace("|", r"\|")
                               for part in _LITERAL.split(line))


def setup(app):
    app.connect("autodoc-process-docstring", _plain_bars)
