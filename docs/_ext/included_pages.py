"""Links to a file that a page of this site shows through MyST's ``include``.

``benchmarks/README.md`` and ``ffi/ascend/README.md`` live beside their code
and are shown on the site by the pages in ``INCLUDED``, which on GitHub are
only the include wrapper. So the pages link those files by their path in the
repository (``../benchmarks/README.md#on-an-idle-machine``), which GitHub
opens at the heading. To MyST that is a document outside the site; this
post-transform, run before MyST resolves its links, points each such link at
the page that shows the file, keeping the heading's anchor (the included
headings get the same slugs there).
"""

import pathlib

from sphinx.addnodes import pending_xref
from sphinx.transforms.post_transforms import SphinxPostTransform

#: A file shown on the site (its path from the repository root, without ``.md``) -> the page that shows it.
INCLUDED = {"benchmarks/README": "performance-notes", "ffi/ascend/README": "ascend"}


class IncludedPageLinks(SphinxPostTransform):
    default_priority = 5  # before MyST's MystReferenceResolver (9)

    def run(self, **kwargs) -> None:
        srcdir = pathlib.Path(self.env.srcdir).resolve()
        root = srcdir.parent
        for node in self.document.findall(pending_xref):
            if node.get("reftype") != "myst" or node.get("refdomain") != "doc":
                continue
            target = (srcdir / node["reftarget"]).resolve()
            if not target.is_relative_to(root):
                continue
            page = INCLUDED.get(target.relative_to(root).as_posix())
            if page is not None:
                node["reftarget"] = page


def setup(app):
    app.add_post_transform(IncludedPageLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
