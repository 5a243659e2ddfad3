"""Test set-up shared by every test module.

The tests must exercise the installed package with its compiled extension, not
the source folder at the repository root (which has no extension): that folder
is taken off sys.path before anything imports jax_ascend_silu.

It also provides the `report` fixture: measured figures (the accuracy table)
printed in pytest's terminal summary.
"""

import os
import pathlib
import sys

import pytest

_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if pathlib.Path(p or os.getcwd()).resolve() != _ROOT]

import jax  # noqa: E402

# Eight CPU devices for the sharding tests; must happen before the backend starts.
jax.config.update("jax_num_cpu_devices", 8)

_REPORT = pytest.StashKey[list]()


def pytest_configure(config):
    config.stash[_REPORT] = []


@pytest.fixture
def report(request):
    """report(title, lines): printed in the terminal summary at the end of the run,
    so measured figures show without -s."""

    def add(title: str, lines: list[str]) -> None:
        request.config.stash[_REPORT].append((title, lines))

    return add


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for title, lines in config.stash.get(_REPORT, []):
        terminalreporter.write_sep("-", title)
        for line in lines:
            terminalreporter.write_line(line)


# Platforms the platform-parametrised tests run on: the CPU always, a CUDA GPU
# when this machine has one (skipped otherwise).
PLATFORMS = ("cpu", "cuda")


def device_of(platform: str):
    """The first device of `platform`, or None when this machine has none."""
    try:
        return jax.devices(platform)[0]
    except RuntimeError:
        return None


@pytest.fixture(params=PLATFORMS)
def platform(request):
    """Runs the test with `platform`'s first device as JAX's default device."""
    device = device_of(request.param)
    if device is None:
        pytest.skip(f"no {request.param} device on this machine")
    with jax.default_device(device):
        yield request.param
