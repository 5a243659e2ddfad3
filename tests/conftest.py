"""Test set-up shared by every test module.

Eight CPU devices for the sharding tests; the CPU as JAX's default device and
the only platform of child processes, so that on a GPU machine the CPU tests
still test the CPU kernel; the GPU tests (the `platform` fixture, `gpu`) on the
GPU, and failing instead of skipping without one when
JAX_ASCEND_SILU_REQUIRE_GPU=1; and the `report` fixture: measured figures (the
accuracy table) printed in pytest's terminal summary.
"""

import os

import jax
import pytest

#: Set to 1 on a GPU machine (.ci/gpu does): every test that would skip for want
#: of a CUDA GPU fails instead, and tests/test_gpu.py checks the CUDA handler is registered.
REQUIRE_GPU_VARIABLE = "JAX_ASCEND_SILU_REQUIRE_GPU"
REQUIRE_GPU = os.environ.get(REQUIRE_GPU_VARIABLE, "") not in ("", "0")

# Eight CPU devices for the sharding tests; must happen before the backend starts.
jax.config.update("jax_num_cpu_devices", 8)
# jax's CUDA client would take 75% of GPU memory at start, in this process and in
# each child process a test starts; on demand, they share the GPU.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# Tests that name no device run on the CPU, whatever accelerator jax finds (a
# CUDA GPU would otherwise be the default); the GPU tests ask for the GPU.
jax.config.update("jax_default_device", "cpu")
# Child processes (ISA comparisons, the CLI, the examples, several processes
# on CPU devices) run on the CPU alone. jax read JAX_PLATFORMS when it was
# imported above, so this process keeps every platform.
os.environ["JAX_PLATFORMS"] = "cpu"

import sampling  # noqa: E402
from jax_ascend_silu._ffi import BACKENDS  # noqa: E402

#: The user property under which the `report` fixture hands its figures over:
#: test reports carry user properties from pytest-xdist's workers to the
#: process that prints the summary.
_REPORT = "jax_ascend_silu_report"
_REPORTED: list[tuple[str, list[str]]] = []
_PLAN = pytest.StashKey[sampling.Plan]()


def pytest_configure(config):
    config.stash[_PLAN] = sampling.configure(config)


def pytest_report_header(config):
    return config.stash[_PLAN].describe()


#: Fixtures whose tests depend on which backends are built and which devices
#: jax finds: their tests are marked `backends` (pyproject.toml's markers).
BACKEND_FIXTURES = frozenset({"platform", "gpu"})


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(config, items):
    """Marks the tests on the platform and gpu fixtures `backends`; then the
    combinatorial tests' seeded sample (tests/sampling.py), the rest reported
    as deselected, as -k and -m report theirs."""
    for item in items:
        if BACKEND_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.backends)
    kept, dropped = sampling.select(items, config.stash[_PLAN])
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def report(request):
    """report(title, lines): printed in the terminal summary at the end of the run,
    so measured figures show without -s."""

    def add(title: str, lines: list[str]) -> None:
        request.node.user_properties.append((_REPORT, (title, list(lines))))

    return add


def pytest_runtest_logreport(report):
    if report.when == "call":
        _REPORTED.extend(value for name, value in report.user_properties if name == _REPORT)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    terminalreporter.write_line(config.stash[_PLAN].describe())
    for title, lines in _REPORTED:
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


def skip_without(platform: str):
    """Skips the test for want of a `platform` device, or fails it where
    JAX_ASCEND_SILU_REQUIRE_GPU asks for a GPU."""
    if REQUIRE_GPU:
        pytest.fail(f"{REQUIRE_GPU_VARIABLE}=1, but jax finds no {platform} device on this machine "
                    f"(jax.devices({platform!r}) fails; is jax's CUDA plugin installed, e.g. pip install -e "
                    "'.[test,cuda]', and JAX_PLATFORMS unset or naming cuda?)", pytrace=False)
    pytest.skip(f"no {platform} device on this machine")


@pytest.fixture(params=PLATFORMS)
def platform(request):
    """Runs the test with `platform`'s first device as JAX's default device."""
    device = device_of(request.param)
    if device is None:
        skip_without(request.param)
    with jax.default_device(device):
        yield request.param


@pytest.fixture
def gpu():
    """The first CUDA device (skips, or fails under JAX_ASCEND_SILU_REQUIRE_GPU=1, without one)."""
    device = device_of("cuda")
    if device is None:
        skip_without("cuda")
    return device
