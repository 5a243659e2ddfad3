"""Sphinx configuration: MyST Markdown pages, the API reference from the
docstrings (autodoc, napoleon), the command line's help from its parser.

Built in strict mode by .ci/docs: sphinx-build -W --keep-going -n docs build/docs
"""

import pathlib
import sys

import jax_ascend_silu

sys.path.insert(0, str(pathlib.Path(__file__).parent / "_ext"))

project = "jax_ascend_silu"
release = version = jax_ascend_silu.__version__
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "cli_help",
]
exclude_patterns = ["_build"]
# Pages link each other by file name (getting-started.md#install), as GitHub
# renders them; MyST turns those into cross-references, and a heading's
# anchor is its slug.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# The docstrings are written in Google style (Args:, Returns:, Raises:).
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = "bysource"
# Signatures keep their annotations; the prose says what the types are. The
# docs build offline, so JAX's and NumPy's types cannot be linked to their
# own sites and are shown as written.
autodoc_typehints = "signature"
nitpick_ignore_regex = [("py:class", r"(jax|jaxlib|numpy|np|collections\.abc|typing)\..*"),
                        ("py:class", r"(Callable|Any|ArrayLike|Array)"),
                        ("py:class", r"jax_ascend_silu\.route\.F")]  # route's TypeVar: f's own type

html_theme = "furo"
html_title = f"jax_ascend_silu {release}"
html_static_path: list[str] = []
html_show_copyright = False
