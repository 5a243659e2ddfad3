"""Every public name has its own documentation, and the docs site shows it.

Public: the names of ``jax_ascend_silu.__all__`` and the command line (its
commands and options). The first tests read the package and docs/*.md alone;
the last builds the site (the ``docs`` extra) and reads the rendered pages.
Each public docstring's ``Examples:`` run here, as doctests.
"""

from __future__ import annotations

import argparse
import doctest
import html
import inspect
import pathlib
import re

import pytest

import jax_ascend_silu as jas
from jax_ascend_silu.__main__ import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Public names that cannot carry a docstring (a str): the API page documents them in its own words.
WRITTEN_IN_PAGE = {"__version__"}


def _own_doc(obj) -> str:
    """The docstring written for `obj` in this package: a function's own, or
    for a class the package defines (RouteReport), its own; for an instance (silu_grad_p) its
    class's when the package defines the class."""
    if inspect.isroutine(obj) or (inspect.isclass(obj) and obj.__module__.startswith("jax_ascend_silu.")):
        return inspect.getdoc(obj) or ""
    cls = type(obj)
    if cls.__module__.startswith("jax_ascend_silu."):
        return inspect.getdoc(cls) or ""
    return ""


def _directives(page: str) -> dict[str, str]:
    """{documented name: directive} of a page's autodoc and py directives."""
    text = (DOCS / page).read_text()
    return {name: kind for kind, name in re.findall(r"^\.\. (auto\w+|py:\w+):: (\S+)", text, re.M)}


class _Stop(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    """The command line's parser, as main builds it (stopped before it parses)."""
    seen = []

    def stop(self, args=None, namespace=None):
        seen.append(self)
        raise _Stop

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_known_args", stop)
        with pytest.raises(_Stop):
            main(["info"])
    return seen[0]


def _commands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """{command: (its help line, its parser)}."""
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {a.dest: a.help for a in sub._choices_actions}
    return {name: (helps.get(name) or "", p) for name, p in sub.choices.items()}


@pytest.mark.parametrize("name", jas.__all__)
def test_public_name_has_its_own_docstring(name):
    if name in WRITTEN_IN_PAGE:
        assert isinstance(getattr(jas, name), str)
        return
    doc = _own_doc(getattr(jas, name))
    assert len(doc.split()) >= 5, f"jax_ascend_silu.{name} has no docstring of its own: {doc!r}"


@pytest.mark.parametrize("name", [name for name in jas.__all__ if name not in WRITTEN_IN_PAGE])
def test_public_docstring_examples_run(name):
    """Each public docstring has an ``Examples:`` section, and its examples give what they show."""
    doc = _own_doc(getattr(jas, name))
    assert re.search(r"^Examples:$", doc, re.M), f"jax_ascend_silu.{name}'s docstring has no Examples: section"
    test = doctest.DocTestParser().get_doctest(doc, {}, f"jax_ascend_silu.{name}", None, 0)
    assert test.examples, f"jax_ascend_silu.{name}'s Examples: section holds no >>> example"
    report: list[str] = []
    result = doctest.DocTestRunner().run(test, out=report.append)
    assert result.failed == 0, "".join(report)


def test_api_page_documents_exactly_the_public_names():
    documented = {name.removeprefix("jax_ascend_silu.") for name in _directives("api.md")}
    assert documented - {"jax_ascend_silu"} == set(jas.__all__)
    for name in WRITTEN_IN_PAGE:
        assert _directives("api.md")[f"jax_ascend_silu.{name}"] == "py:data"


def test_every_command_and_option_has_help():
    parser = _parser()
    assert parser.description
    commands = _commands(parser)
    assert set(commands) == {"info", "demo", "bench"}
    for command, (line, sub) in commands.items():
        assert line, f"command {command} has no help line"
        for action in sub._actions:
            assert action.help, f"{command} {'/'.join(action.option_strings)} has no help"
    assert inspect.getdoc(main)


def test_cli_page_shows_every_command():
    text = (DOCS / "cli.md").read_text()
    shown = re.findall(r"^```\{cli-help\} ?(\S*)", text, re.M)
    assert sorted(shown) == sorted(["", *_commands(_parser())])
    assert _directives("cli.md") == {"jax_ascend_silu.__main__.main": "autofunction"}


def _squeeze(text: str) -> str:
    """`text` without whitespace: rendered markup splits and joins words at will."""
    return "".join(text.split())


def _page_text(path: pathlib.Path) -> str:
    """A built page's main text, tags and whitespace stripped."""
    text = path.read_text()
    return _squeeze(html.unescape(re.sub(r"<[^>]+>", "", text[text.index("<article"):text.index("</article>")])))


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """The site built strictly, as .ci/docs builds it."""
    build = pytest.importorskip("sphinx.cmd.build", reason="Sphinx not installed (extra [docs])")
    out = tmp_path_factory.mktemp("site")
    assert build.build_main(["-W", "--keep-going", "-n", "-q", "-b", "html", str(DOCS), str(out)]) == 0
    return out


# Sphinx's warnings about its own next major version (napoleon and MyST use
# interfaces it deprecates) say nothing about these pages.
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_built_reference_shows_each_docstring_and_help(built_site):
    api = _page_text(built_site / "api.html")
    for name in jas.__all__:
        if name in WRITTEN_IN_PAGE:
            assert f"jax_ascend_silu.{name}" in api, name
            continue
        # The docstring's first sentence, as rendered (reST markup gone).
        first = _own_doc(getattr(jas, name)).split("\n\n")[0].replace("``", "")
        assert _squeeze(first) in api, f"{name}: {first!r} is not on the API page"
    cli = _page_text(built_site / "cli.html")
    for command, (line, sub) in _commands(_parser()).items():
        assert _squeeze(f"usage: jax-ascend-silu {command}") in cli, command
        assert _squeeze(line) in cli, f"{command}: its help line {line!r} is not on the CLI page"
        for action in sub._actions:
            assert _squeeze(action.help) in cli, f"{command}: {action.help!r} is not on the CLI page"
