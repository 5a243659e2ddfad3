"""Counts the docs state that the code can compute: each statement of one must
give the code's number, so a page cannot go stale when the code grows.

- custom-call targets ("two custom-call targets"): the entries of the CPU
  module's ``registrations()``;
- backends ("three backends"): ``BACKENDS``;
- the composition matrix's cells: ``tests/test_composition.py``'s cells.

Read: README.md, docs/*.md, the pages beside the code that the docs site shows
(benchmarks/README.md, ffi/ascend/README.md), and the Python sources of the
package and the tests (docstrings and comments say such counts too).
README.md stays short enough to read when deciding to use the package.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from jax_ascend_silu._ffi import BACKENDS, ext

ROOT = pathlib.Path(__file__).resolve().parents[1]
README_MAX_LINES = 150
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_NUMBER = r"(?P<n>\d[\d,]*|" + "|".join(WORDS) + r")"
#: name -> a pattern whose group n is the number it states; the sentence must hold `within` when given.
PATTERNS = {
    "custom-call targets": (re.compile(rf"\b{_NUMBER} custom-call targets?\b", re.I), None),
    "backends": (re.compile(rf"\b{_NUMBER} backends\b", re.I), None),
    "composition matrix cells": (re.compile(rf"\b{_NUMBER} cells\b", re.I), "matrix"),
}


def _files() -> list[pathlib.Path]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "benchmarks" / "README.md", ROOT / "ffi" / "ascend" / "README.md"]
    sources = sorted((ROOT / "jax_ascend_silu").rglob("*.py")) + sorted((ROOT / "tests").glob("*.py"))
    return pages + [path for path in sources if path.name != pathlib.Path(__file__).name]


def _value(text: str) -> int:
    text = text.lower().replace(",", "")
    return WORDS[text] if text in WORDS else int(text)


def statements(text: str, kind: str) -> list[tuple[int, int, str]]:
    """(line, number, sentence) of each place `text` states a count of `kind`."""
    pattern, within = PATTERNS[kind]
    found = []
    for match in pattern.finditer(text):
        start = max(text.rfind(". ", 0, match.start()), text.rfind("\n\n", 0, match.start()), 0)
        end = min((i for i in (text.find(". ", match.end()), text.find("\n\n", match.end())) if i >= 0),
                  default=len(text))
        sentence = " ".join(text[start:end].split())
        if within is None or within in sentence.lower():
            found.append((text.count("\n", 0, match.start()) + 1, _value(match["n"]), sentence))
    return found


def _matrix_cells() -> int:
    import test_composition  # the matrix's own definition (tests/ is on the path, as for every test here)

    return len(list(test_composition._cells()))


COUNTS = {
    "custom-call targets": lambda: len(ext.registrations()),
    "backends": lambda: len(BACKENDS),
    "composition matrix cells": _matrix_cells,
}


@pytest.mark.parametrize("kind", list(COUNTS))
def test_every_count_the_docs_state_is_the_codes(kind):
    want = COUNTS[kind]()
    wrong = [f"{path.relative_to(ROOT)}:{line}: {number} ({sentence!r})"
             for path in _files() for line, number, sentence in statements(path.read_text(), kind)
             if number != want]
    assert not wrong, f"the code has {want} {kind}; these say otherwise:\n" + "\n".join(wrong)


@pytest.mark.parametrize(("kind", "page"), [("custom-call targets", "docs/backends.md"),
                                            ("composition matrix cells", "docs/development.md")])
def test_the_page_that_owns_a_count_states_it(kind, page):
    """Each count has a home that states it, so the check above has something to check."""
    assert [number for _, number, _ in statements((ROOT / page).read_text(), kind)] == [COUNTS[kind]()], page


@pytest.mark.parametrize(("text", "kind", "number"), [
    ("The composition matrix's 1780 cells are the largest.", "composition matrix cells", 1780),
    ("One custom-call target, `jax_ascend_silu_silu_grad`, with a handler per platform.", "custom-call targets", 1),
    ("The package's two backends register at import.", "backends", 2),
])
def test_a_stale_count_is_found(text, kind, number):
    """The statements this check was written against (the first two stood in the docs) are found, and are wrong."""
    assert [n for _, n, _ in statements(text, kind)] == [number]
    assert number != COUNTS[kind]()


def test_a_count_of_other_cells_is_not_the_matrix():
    assert statements("Each such test keeps 24 cells of its sample.", "composition matrix cells") == []


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; keep it to {README_MAX_LINES}"
