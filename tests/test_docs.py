"""Every Python block of README.md and docs/*.md, run by Sybil.

The blocks of a page run in order, in one namespace per page: a test for one
block first runs the page's earlier blocks it has not run yet, so any
selection of tests (-k, one id) works. A block marked ``<!-- skip: next -->``
(MyST also takes ``% skip: next``) does not run; the marker is on the line
before the block in the source. A block whose import fails for want of an
optional extra is skipped, naming the extra. README.md and getting-started.md
run once more with ``jax_enable_x64`` on: their examples write their dtypes
out so that they hold there too.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import re
import tomllib
from unittest import SkipTest

import jax
import pytest
from sybil import Example, Sybil
from sybil.example import NotEvaluated
from sybil.parsers.myst import PythonCodeBlockParser, SkipParser

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
X64_PAGES = {ROOT / "README.md", ROOT / "docs" / "getting-started.md"}
SYBIL = Sybil(parsers=[PythonCodeBlockParser(), SkipParser()])

# Import names whose distribution is named otherwise in pyproject.toml's extras.
_DISTRIBUTION = {"haiku": "dm-haiku"}


def _extra_of(module: str) -> str | None:
    """The optional extra of pyproject.toml that installs `module`, if any."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    wanted = _DISTRIBUTION.get(module, module).lower().replace("_", "-")
    for extra, requirements in extras.items():
        for requirement in requirements:
            if re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-") == wanted:
                return extra
    return None


@dataclasses.dataclass
class _Page:
    """One page parsed once, its examples and how far they have run."""

    path: pathlib.Path
    x64: bool
    examples: list[Example] = dataclasses.field(init=False)
    ran: int = 0
    outcomes: list[str] = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.examples = list(SYBIL.parse(self.path))

    def where(self, example: Example) -> str:
        return f"{self.path.relative_to(ROOT)}:{example.line}"

    def run_one(self, example: Example) -> str:
        """Runs `example`; returns "" or why it was skipped."""
        try:
            with jax.enable_x64(self.x64):
                example.evaluate()
        except NotEvaluated:
            return ""
        except SkipTest as skip:
            return f"{self.where(example)}: marked skip: {skip}"
        except ModuleNotFoundError as err:
            top = (err.name or "").partition(".")[0]
            extra = _extra_of(top)
            if extra is None or importlib.util.find_spec(top) is not None:
                raise
            return f"{self.where(example)} needs {top}, from the [{extra}] extra, which is not installed"
        return ""

    def run_through(self, index: int) -> str:
        """Runs the examples up to `index`, each once; the outcome of `index`."""
        while self.ran <= index:
            example = self.examples[self.ran]
            self.ran += 1
            try:
                self.outcomes.append(self.run_one(example))
            except BaseException:
                self.outcomes.append("failed")
                if self.ran - 1 != index:
                    pytest.fail(f"an earlier block of the page failed: {self.where(example)}", pytrace=False)
                raise
        if self.outcomes[index] == "failed":
            pytest.fail(f"{self.where(self.examples[index])} failed in an earlier test", pytrace=False)
        return self.outcomes[index]


_PAGES = {(path, x64): None for path in PAGES for x64 in ((False, True) if path in X64_PAGES else (False,))}


def _page(path: pathlib.Path, x64: bool) -> _Page:
    if _PAGES[path, x64] is None:
        _PAGES[path, x64] = _Page(path, x64)
    return _PAGES[path, x64]


def _cases():
    for path, x64 in _PAGES:
        for index, example in enumerate(SYBIL.parse(path)):
            if example.region.evaluator is not None and isinstance(example.parsed, str):
                name = f"{path.relative_to(ROOT)}:{example.line}" + (":x64" if x64 else "")
                # A block on keras-hub runs where its extra is installed (.ci/accelerators selects the marker).
                marks = [pytest.mark.keras_hub] if "keras_hub" in example.parsed else []
                yield pytest.param(path, x64, index, id=name, marks=marks)


@pytest.mark.parametrize(("path", "x64", "index"), list(_cases()))
def test_block_runs(path, x64, index):
    skipped = _page(path, x64).run_through(index)
    if skipped:
        pytest.skip(skipped)


#: Fence languages a page may use: Python runs; the others are shown, never run.
#: Not here, so failing the test: no language, or one that could be Python run
#: by no one (py, pycon, a misspelling).
FENCES = {"python", "bash", "sh", "shell", "console", "text", "toml", "ini", "cmake", "cpp", "c++", "diff",
          "{eval-rst}", "{include}", "{cli-help}", "{toctree}"}


def _fence_languages(text: str) -> list[str]:
    """The first word of each fenced block's info string (CommonMark fences of
    backticks, and MyST's colon fences), in order."""
    languages, opened = [], None
    for line in text.splitlines():
        fence = re.match(r" {0,3}(`{3,}|:{3,})\s*(\S*)", line)
        if fence is None:
            continue
        if opened is None:
            opened = fence.group(1)
            languages.append(fence.group(2))
        elif fence.group(1).startswith(opened) and not fence.group(2):
            opened = None
    return languages


def test_every_block_is_run_or_marked_as_not_python():
    """A fence without a language, or with a misspelt one (```pyton), would
    leave a block untested without anyone noticing: each fence names a
    language of FENCES, and Sybil finds every ```python block."""
    for path in PAGES:
        languages = _fence_languages(path.read_text())
        where = path.relative_to(ROOT)
        assert set(languages) <= FENCES, f"{where}: fences {sorted(set(languages) - FENCES)} are not in {FENCES}"
        found = sum(isinstance(e.parsed, str) for e in SYBIL.parse(path))
        assert found == languages.count("python"), f"{where}: {languages.count('python')} python fences, Sybil found {found}"
    assert any(_cases()), "no Python blocks found in README.md or docs/"


def test_extras_are_named_for_the_modules_they_install():
    """What a block skipped for want of a library names: the extra that installs it."""
    assert _extra_of("flax") == "flax"
    assert _extra_of("equinox") == "equinox"
    assert _extra_of("haiku") == "haiku"  # the distribution is dm-haiku
    assert _extra_of("sphinx") == "docs"
    assert _extra_of("jax_ascend_silu_no_such_module") is None
