"""Sphinx configuration: MyST Markdown pages, the API reference from the
docstrings (autodoc, napoleon), the command line's help from its parser, links
to JAX's documentation (intersphinx).

Built in strict mode by .ci/docs: sphinx-build -W --keep-going -n docs build/docs
"""

import pathlib
import sys
import tempfile
import zlib

import jax_ascend_silu

sys.path.insert(0, str(pathlib.Path(__file__).parent / "_ext"))

project = "jax_ascend_silu"
release = version = jax_ascend_silu.__version__
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "cli_help",
    "included_pages",
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

# Links to JAX's documentation. Online, Sphinx reads JAX's own inventory; offline (CI builds
# without network) it falls back to a small inventory written here of the JAX names the
# docstrings link to, at the addresses JAX's docs give them, so the strict build passes either
# way: intersphinx warns only when every location of a project fails.
JAX_DOCS = "https://docs.jax.dev/en/latest/"
JAX_LINKED = {
    "py:function": ["jax.grad", "jax.vjp", "jax.jvp", "jax.jit", "jax.vmap", "jax.jacfwd", "jax.value_and_grad",
                    "jax.nn.silu", "jax.export.export", "jax.shard_map", "jax.ffi.register_ffi_target"],
    "py:class": ["jax.Array", "jax.custom_jvp", "jax.custom_vjp", "jax.extend.core.Primitive"],
}


def _fallback_inventory() -> str:
    """An objects.inv (version 2) of JAX_LINKED in the temporary folder, named by its content; its path."""
    lines = [f"{name} {role} 1 _autosummary/{name}.html#$ -" for role, names in JAX_LINKED.items() for name in names]
    body = zlib.compress("\n".join(lines).encode() + b"\n")
    header = (b"# Sphinx inventory version 2\n# Project: JAX\n# Version: \n"
              b"# The remainder of this file is compressed using zlib.\n")
    path = pathlib.Path(tempfile.gettempdir()) / f"jax_ascend_silu-docs-jax-{zlib.crc32(body):08x}.inv"
    path.write_bytes(header + body)
    return str(path)


intersphinx_mapping = {"jax": (JAX_DOCS, (None, _fallback_inventory()))}
intersphinx_timeout = 10

html_theme = "furo"
html_title = f"jax_ascend_silu {release}"
html_static_path: list[str] = []
html_show_copyright = False
