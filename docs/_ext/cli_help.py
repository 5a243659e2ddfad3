"""The ``cli-help`` directive: the command line's own ``--help`` text.

    ```{cli-help} demo
    ```

runs ``jax-ascend-silu demo --help`` through :func:`jax_ascend_silu.__main__.main`
at build time and shows what it prints, so the reference is the parser's help
strings and cannot drift from them. Without an argument: the top-level help.
"""

import contextlib
import io
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def help_text(command: str | None) -> str:
    """What ``jax-ascend-silu [command] --help`` prints."""
    from jax_ascend_silu.__main__ import main

    out = io.StringIO()
    # argparse wraps to the terminal's width; the page is the same from any terminal.
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main([command, "--help"] if command else ["--help"])
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return out.getvalue()


class CliHelp(SphinxDirective):
    optional_arguments = 1

    def run(self):
        text = help_text(self.arguments[0] if self.arguments else None)
        if not text.startswith("usage:"):
            raise self.error(f"jax-ascend-silu {' '.join(self.arguments)} --help printed no usage: {text!r}")
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app):
    app.add_directive("cli-help", CliHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
