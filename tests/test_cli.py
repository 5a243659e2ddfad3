"""The command line: usage and errors name how it was run (the console script
or python -m), and a bad flag is reported as such."""

import os
import pathlib
import subprocess
import sys

import pytest

from jax_ascend_silu import __main__ as cli

SCRIPT = pathlib.Path(sys.executable).parent / ("jax-ascend-silu" + (".exe" if os.name == "nt" else ""))


def _run(command, cwd):
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--bogus"], "error: unrecognized arguments: --bogus"),
        (["info", "--bogus"], "info: error: unrecognized arguments: --bogus"),
        (["demo", "--steps", "2", "--bogus", "x"], "demo: error: unrecognized arguments: --bogus x"),
        ([], "error: a command is required: one of info, demo, bench"),
        (["nope"], "invalid choice: 'nope'"),
        (["demo", "--steps", "x"], "argument --steps: must be a positive integer, got 'x'"),
        (["demo", "--steps", "0"], "argument --steps: must be a positive integer, got 0"),
    ],
    ids=["flag-alone", "info-flag", "demo-flags", "no-command", "bad-command", "steps-text", "steps-zero"],
)
def test_errors_name_the_problem(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.startswith("usage: jax-ascend-silu")
    if argv == ["--bogus"]:
        assert "required" not in err


def test_python_dash_m_names_itself(tmp_path):
    run = _run([sys.executable, "-m", "jax_ascend_silu", "--bogus"], tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith("usage: python -m jax_ascend_silu [-h] [--version] {info,demo,bench}")
    assert "python -m jax_ascend_silu: error: unrecognized arguments: --bogus" in run.stderr
    assert "jax-ascend-silu" not in run.stderr
    help_run = _run([sys.executable, "-m", "jax_ascend_silu", "demo", "--help"], tmp_path)
    assert help_run.returncode == 0 and help_run.stdout.startswith("usage: python -m jax_ascend_silu demo")


def test_console_script_names_itself(tmp_path):
    assert SCRIPT.exists(), f"the console script is installed next to {sys.executable}"
    run = _run([str(SCRIPT), "--bogus"], tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith("usage: jax-ascend-silu [-h]")
    assert "jax-ascend-silu: error: unrecognized arguments: --bogus" in run.stderr
    info = _run([str(SCRIPT), "info"], tmp_path)
    assert info.returncode == 0, info.stderr
    assert info.stdout.startswith("jax_ascend_silu ")
