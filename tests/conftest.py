"""Test set-up shared by every test module.

Eight CPU devices for the sharding tests, and the `report` fixture: measured
figures (the accuracy table) printed in pytest's terminal summary.
"""

import jax
import pytest

# Eight CPU devices for the sharding tests; must happen before the backend starts.
jax.config.update("jax_num_cpu_devices", 8)

from jax_ascend_silu._ffi import BACKENDS  # noqa: E402

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


# Platforms the platform-parametrised tests run on: each backend JAX names
# (the CPU always, a CUDA GPU when this machine has one, skipped otherwise).
PLATFORMS = tuple(b.lowering_platform for b in BACKENDS if b.lowering_platform)


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
