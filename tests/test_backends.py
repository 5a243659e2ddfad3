"""Backends: what is compiled and registered, and the lowering per platform
(the CUDA backend on a GPU: tests/test_gpu.py).

CI builds one installation with every backend (CUDA compiled but not run; the
Ascend module, built everywhere, opens CANN at run time) and sets
JAX_ASCEND_SILU_EXPECT_BACKENDS=cpu,cuda,ascend, so a backend that silently
failed to build fails here. It also sets JAX_ASCEND_SILU_FAKE_CANN to the fake
CANN installs its build made (<build>/ascend_fake, see cmake/ascend_backend.cmake),
which the Ascend tests below then find at run time, as a real CANN is found.
"""

import dataclasses
import functools
import importlib
import importlib.util
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_ascend_silu as jas
from jax_ascend_silu import __main__ as cli
from jax_ascend_silu._ffi import BACKENDS

# Every test here depends on the backends built (.ci/accelerators runs them with every one).
pytestmark = pytest.mark.backends


def test_backends_reports_each_backend_as_built():
    status = jas.backends()
    assert list(status) == [b.name for b in BACKENDS]
    for backend in BACKENDS:
        built = importlib.util.find_spec(f"jax_ascend_silu.{backend.module}") is not None
        assert status[backend.name]["compiled"] is built, (backend, status[backend.name])
        assert isinstance(status[backend.name]["detail"], str) and status[backend.name]["detail"]
    assert status["cpu"]["platforms"] == ["cpu"]
    expected = os.environ.get("JAX_ASCEND_SILU_EXPECT_BACKENDS")
    if expected:  # CI: exactly these were built
        assert {n for n, s in status.items() if s["compiled"]} == set(expected.split(","))


def test_compiled_backends_register_for_their_platform():
    status = jas.backends()
    platform = {b.name: b.xla_platform for b in BACKENDS}
    if status["ascend"]["compiled"]:
        assert status["ascend"]["platforms"] == [platform["ascend"]], status["ascend"]
        cann = status["ascend"]["cann"]
        assert cann["found"] is (cann["problem"] == ""), cann
        assert status["ascend"]["detail"].startswith("CANN " if cann["found"] else "CANN not found" if not cann["libraries"] else "CANN incomplete")
    if status["cuda"]["compiled"]:
        plugin = jas._ffi._jax_cuda_plugin_present()
        assert status["cuda"]["platforms"] == ([platform["cuda"]] if plugin else []), status["cuda"]
        assert "architectures" in status["cuda"]["detail"]
    for name in [b.name for b in BACKENDS if b.name != "cpu"]:  # the optional ones
        if not status[name]["compiled"]:
            assert status[name]["platforms"] == [] and status[name]["detail"] == "not built"


@pytest.mark.parametrize("backend", [b for b in BACKENDS if importlib.util.find_spec(f"jax_ascend_silu.{b.module}")],
                         ids=lambda b: b.name)
def test_each_module_registers_the_operations_its_table_row_names_by_name(backend):
    # Targets are looked up by operation name (ffi/handlers.h), not by position.
    module = importlib.import_module(f"jax_ascend_silu.{backend.module}")
    targets = module.targets()
    assert targets == {op: jas._ffi.TARGETS[op] for op in backend.operations}, targets
    assert set(module.registrations()) == set(targets.values())
    assert jas._ffi.TARGETS["SiluGrad"] == "jax_ascend_silu_silu_grad"
    assert jas._ffi.TARGETS["SwiGluGrad"] == "jax_ascend_silu_swiglu_grad"


def test_a_backend_without_an_operation_refuses_it_by_name(monkeypatch):
    from jax.extend.core import Primitive

    from jax_ascend_silu import _op_layer

    cpu = next(b for b in BACKENDS if b.name == "cpu")
    without = dataclasses.replace(cpu, operations=("SiluGrad",))
    monkeypatch.setattr(_op_layer, "BACKENDS", tuple(without if b is cpu else b for b in BACKENDS))
    prim = Primitive("jax_ascend_silu_test_refused")
    prim.def_abstract_eval(lambda x, **params: x)
    _op_layer.register_custom_call(prim, "SwiGluGrad", kernel_call=lambda x, **params: x,
                                   per_shard=None, overwrite="overwrite")
    lowered = jax.jit(lambda x: prim.bind(x, devices=None, overwrite=False))
    with pytest.raises(NotImplementedError, match=r"the cpu backend has no SwiGluGrad handler; SwiGluGrad runs on "
                                                  r"cuda, ascend: jax.device_put"):
        lowered.lower(jnp.ones(3, jnp.float32))


def test_the_ascend_module_is_built_everywhere_and_imports_without_cann():
    assert importlib.util.find_spec("jax_ascend_silu._silu_grad_ascend") is not None
    status = jas.backends()["ascend"]
    assert status["compiled"] and status["platforms"] == ["ASCEND"], status


def _info_in_a_fresh_process(**env) -> subprocess.CompletedProcess:
    """`python -m jax_ascend_silu info` with CANN's variables and the loader path set only as given
    (the search for CANN runs once per process)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH", "ASCEND_CUSTOM_OPP_PATH",
                          "LD_LIBRARY_PATH")}
    return subprocess.run([sys.executable, "-m", "jax_ascend_silu", "info"], env={**clean, **env},
                          capture_output=True, text=True, timeout=120, check=False)


def test_info_without_cann_says_what_was_looked_for_and_where():
    if jas.backends()["ascend"]["cann"]["found"] and not any(
            os.environ.get(v) for v in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_OPP_PATH", "LD_LIBRARY_PATH")):
        pytest.skip("CANN is installed on this machine's default library path")
    run = _info_in_a_fresh_process()
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "ascend  compiled, registered for ASCEND (CANN not found at run time)" in out
    for looked_for in ("libacl_rt.so or libascendcl.so", "libnnopbase.so",
                       "aclnnSiluBackwardGetWorkspaceSize in libcust_opapi.so, libopapi_*.so, libopapi.so",
                       "the loader path", "$ASCEND_TOOLKIT_HOME, $ASCEND_HOME_PATH, $ASCEND_OPP_PATH are unset"):
        assert looked_for in out, out
    assert "PJRT backend for ASCEND: no" in out


def _fake_cann(variant: str) -> str:
    root = os.environ.get("JAX_ASCEND_SILU_FAKE_CANN")
    if not root:
        pytest.skip("JAX_ASCEND_SILU_FAKE_CANN (the fake CANN installs of a test build) is not set")
    assert os.path.isdir(os.path.join(root, variant)), root
    return os.path.join(root, variant)


def test_info_with_the_fake_cann_names_its_libraries_and_version():
    home = _fake_cann("cann9")
    run = _info_in_a_fresh_process(ASCEND_HOME_PATH=home)
    assert run.returncode == 0, run.stderr
    assert "(CANN 9.0.0-fake found at run time: libacl_rt.so, libnnopbase.so, libopapi_nn.so)" in run.stdout
    for role, name in (("ACL runtime", "libacl_rt.so"), ("aclnn tensor API", "libnnopbase.so"),
                       ("aclnnSiluBackward from", "libopapi_nn.so")):
        assert f"{role}: {home}/lib64/{name} ($ASCEND_HOME_PATH/lib64)" in run.stdout, run.stdout
    assert f"aclnnSwiGluGrad from: {home}/lib64/libopapi_nn.so" in run.stdout, run.stdout
    assert "aclnnSwiGluGrad: not found" not in run.stdout, run.stdout


@pytest.mark.parametrize("custom, vendors, provider, origin", [
    (True, True, "custom/op_api/lib/libcust_opapi.so", "$ASCEND_CUSTOM_OPP_PATH entry {root}/custom"),
    (False, True, "vendors/opp/vendors/vendor_b/op_api/lib/libcust_opapi.so",
     "vendor vendor_b of $ASCEND_OPP_PATH/vendors/config.ini"),
    (False, False, "cann9/lib64/libopapi_nn.so", "$ASCEND_HOME_PATH/lib64"),
], ids=["custom-opp-path", "vendor-config", "per-repository-library"])
def test_info_names_the_library_that_provides_the_operator_in_torch_npus_order(custom, vendors, provider, origin):
    root = os.path.dirname(_fake_cann("cann9"))
    env = {"ASCEND_HOME_PATH": f"{root}/cann9"}
    if vendors:
        env["ASCEND_OPP_PATH"] = f"{root}/vendors/opp"
    if custom:
        env["ASCEND_CUSTOM_OPP_PATH"] = f"{root}/custom"
    run = _info_in_a_fresh_process(**env)
    assert run.returncode == 0, run.stderr
    assert f"aclnnSiluBackward from: {root}/{provider} ({origin.format(root=root)})" in run.stdout, run.stdout


def test_info_with_an_older_fake_cann_says_what_it_lacks():
    run = _info_in_a_fresh_process(ASCEND_HOME_PATH=_fake_cann("legacy"))
    assert run.returncode == 0, run.stderr
    assert "CANN 7.0.0-fake found at run time: libascendcl.so, libnnopbase.so, libopapi.so" in run.stdout
    assert "aclDestroyAclOpExecutor not found (it is documented since CANN 8.0)" in run.stdout
    # SwiGluGrad's operator is missing there: a note naming it and what to install; SiluGrad is found.
    assert "aclnnSwiGluGradGetWorkspaceSize in libcust_opapi.so, libopapi_*.so, libopapi.so not found" in run.stdout
    assert "install CANN 8.0.RC1 or later" in run.stdout, run.stdout
    assert "aclnnSwiGluGrad from" not in run.stdout
    assert "aclnnSwiGluGrad: not found (SwiGluGrad on Ascend fails as the note below says" in run.stdout, run.stdout


@pytest.mark.parametrize("variant, missing", [
    ("no_operator", "operator library: aclnnSiluBackwardGetWorkspaceSize in libcust_opapi.so, libopapi_*.so, "
                    "libopapi.so not found in {home}/lib64"),
    ("no_phase2", "operator library: {home}/lib64/libopapi_nn.so has no aclnnSiluBackward"),
])
def test_info_with_a_half_installed_cann_names_what_is_missing(variant, missing):
    home = _fake_cann(variant)
    run = _info_in_a_fresh_process(ASCEND_HOME_PATH=home)
    assert run.returncode == 0, run.stderr  # a message, not a crash
    assert "(CANN incomplete at run time:" in run.stdout
    assert missing.format(home=home) in run.stdout, run.stdout


def test_importing_the_package_does_not_open_cann():
    home = _fake_cann("cann9")
    code = ("import jax_ascend_silu as jas\n"
            "maps = lambda: open('/proc/self/maps').read()\n"
            "assert 'libnnopbase.so' not in maps(), 'opened at import'\n"
            "assert jas.backends()['ascend']['cann']['found']\n"
            "assert 'libnnopbase.so' in maps(), 'not opened by backends()'\n")
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ASCEND_HOME_PATH": home},
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr


# A PJRT plugin installs its custom-call handler for ASCEND before this package
# registers: one with another signature (jax calls it with five arguments), or
# one that raises.
_BROKEN_HANDLERS = {
    "wrong-signature": ("def handler(name):\n    pass\n",
                        "TypeError: handler() takes 1 positional argument but 5 were given"),
    "raises": ("def handler(name, fn, platform, api_version, traits):\n"
               "    raise RuntimeError('this plugin takes no FFI handlers')\n",
               "RuntimeError: this plugin takes no FFI handlers"),
}

_AFTER_A_BROKEN_HANDLER = """
import sys
import numpy as np
import jax
import jax.numpy as jnp
import ml_dtypes
sys.path.insert(0, {tests!r})
from reference import assert_silu_grad
import jax_ascend_silu as jas
from jax_ascend_silu import __main__ as cli
status = jas.backends()["ascend"]
assert status["platforms"] == [], status
print("refused:", status["refused"])
assert status["registration_reached"] is False and status["registration"].startswith("no: "), status
assert jas.backends()["cpu"]["platforms"] == ["cpu"]
rng = np.random.default_rng(0)
for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
    for g_shape, x_shape in (((7,), (7,)), ((5,), (3, 5)), ((), (2, 3))):
        g = (rng.standard_normal(g_shape) * 2).astype(dtype)
        x = (rng.standard_normal(x_shape) * 6).astype(dtype)
        assert_silu_grad(np.asarray(jax.jit(jas.silu_grad)(g, x)), g, x, dtype)
        assert_silu_grad(np.asarray(jas.silu_grad(g, x)), g, x, dtype)
grad = jax.grad(lambda v: jas.silu(v).sum())(jnp.linspace(-4.0, 4.0, 9))
np.testing.assert_allclose(grad, jax.grad(lambda v: jax.nn.silu(v).sum())(jnp.linspace(-4.0, 4.0, 9)), rtol=1e-6)
cli.main(["info"])
"""


@pytest.mark.parametrize("kind", list(_BROKEN_HANDLERS))
def test_a_broken_ascend_plugin_handler_leaves_import_and_cpu_working(kind):
    handler, error = _BROKEN_HANDLERS[kind]
    code = ("from jax._src.lib import xla_client\n" + handler +
            "xla_client.register_custom_call_handler('ASCEND', handler)\n" +
            _AFTER_A_BROKEN_HANDLER.format(tests=os.path.dirname(os.path.abspath(__file__))))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    why = f"the custom-call handler installed for platform ASCEND refused {jas._ffi.TARGET}: {error}"
    assert f"refused: {{'ASCEND': {why!r}}}" in run.stdout, run.stdout
    ascend = next(line for line in run.stdout.splitlines() if line.startswith("  ascend "))
    assert ascend.startswith("  ascend  compiled, not registered (") and f"; {why})" in ascend, ascend
    assert f"handler registration reached it: no: {why}" in run.stdout, run.stdout


def test_a_refused_cpu_registration_is_raised_at_import():
    # The CPU backend is the package's own: a failure there is never hidden.
    code = ("from jax._src.lib import xla_client\n"
            "def handler(name, fn, platform, api_version, traits):\n"
            "    if b'jax_ascend_silu' in (name if isinstance(name, bytes) else name.encode()):\n"
            "        raise RuntimeError('no cpu handlers here')\n"
            "xla_client.register_custom_call_handler('cpu', handler)\n"
            "import jax_ascend_silu\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode != 0
    assert "RuntimeError: no cpu handlers here" in run.stderr, run.stderr


# A stand-in for jax's CUDA plugin (jax_plugins.xla_cuda13, found ahead of any
# real one): its initialize() installs the CUDA custom-call handler, as the real
# one does when jax first starts its backends, which replays the registrations
# queued before; it has no PJRT backend to offer.
_FAKE_CUDA_PLUGIN = """
from jax._src.lib import xla_client
TAKEN = []
def handler(name, fn, platform, api_version, traits):
    name = name.decode() if isinstance(name, bytes) else name
    if {refuse!r} and name.startswith("jax_ascend_silu"):
        raise RuntimeError("this plugin takes no jax_ascend_silu handlers")
    TAKEN.append((name, platform))
def initialize():
    xla_client.register_custom_call_handler("CUDA", handler)
"""

_WITH_THE_FAKE_CUDA_PLUGIN = """
import jax
import numpy as np
import jax_ascend_silu as jas
from jax_ascend_silu import __main__ as cli
from jax_ascend_silu._ffi import _STATUS
assert _STATUS["cuda"]["platforms"] == ["CUDA"], _STATUS["cuda"]  # queued at import: the plugin has not started
status = jas.backends()["cuda"]
import jax_plugins.xla_cuda13 as plugin
print("taken:", [t for t in plugin.TAKEN if t[0].startswith("jax_ascend_silu")])  # not jax's own
print("status:", repr(status))
assert jas.backends()["cpu"]["platforms"] == ["cpu"]
np.testing.assert_array_equal(np.asarray(jas.silu_grad(np.float32([1, 2]), np.float32([0, 0]))), [0.5, 1.0])
cli.main(["info"])
"""


def _with_a_fake_cuda_plugin(tmp_path, refuse: bool) -> subprocess.CompletedProcess:
    if not jas.backends()["cuda"]["compiled"]:
        pytest.skip("the CUDA module is not built here (-Ccmake.define.JAX_ASCEND_SILU_CUDA=ON)")
    plugin = tmp_path / "jax_plugins" / "xla_cuda13"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(_FAKE_CUDA_PLUGIN.format(refuse=refuse))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", _WITH_THE_FAKE_CUDA_PLUGIN], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_cuda_registration_refused_when_the_plugin_initialises_is_reported(tmp_path):
    run = _with_a_fake_cuda_plugin(tmp_path, refuse=True)
    assert run.returncode == 0, run.stderr
    # The refusal came from the plugin's initialize(), which jax logs and moves past...
    assert "Exception when calling jax_plugins.xla_cuda13.initialize()" in run.stderr, run.stderr
    assert "RuntimeError: this plugin takes no jax_ascend_silu handlers" in run.stderr, run.stderr
    # ... and backends() says so, as it does for a refusing Ascend plugin.
    why = ("the custom-call handler installed for platform CUDA refused jax_ascend_silu_silu_grad: "
           "RuntimeError: this plugin takes no jax_ascend_silu handlers")
    status = eval(run.stdout.split("status: ", 1)[1].splitlines()[0])
    assert status["platforms"] == [] and status["refused"] == {"CUDA": why}, status
    assert status["registration_reached"] is False and status["registration"] == f"no: {why}", status
    assert status["detail"].endswith(f"; {why}"), status
    cuda = next(line for line in run.stdout.splitlines() if line.startswith("  cuda "))
    assert cuda.startswith("  cuda    compiled, not registered (") and cuda.endswith(f"; {why})"), cuda


def test_a_cuda_registration_the_plugin_takes_is_reported_as_registered(tmp_path):
    run = _with_a_fake_cuda_plugin(tmp_path, refuse=False)
    assert run.returncode == 0, run.stderr
    assert "initialize()" not in run.stderr, run.stderr
    # Replayed by initialize(), then handed straight to the plugin's handler: accepted both times,
    # SiluGrad's handler and SwiGluGrad's each time.
    both = "('jax_ascend_silu_silu_grad', 'CUDA'), ('jax_ascend_silu_swiglu_grad', 'CUDA')"
    assert f"taken: [{both}, {both}]" in run.stdout
    status = eval(run.stdout.split("status: ", 1)[1].splitlines()[0])
    assert status["platforms"] == ["CUDA"] and "refused" not in status, status
    assert status["registration_reached"] is False and status["registration"].startswith(
        "pending: jax's CUDA plugin took it, and this process has no CUDA backend"), status
    assert "handler registration reached jax's CUDA plugin: pending" in run.stdout, run.stdout


def test_no_ascend_pjrt_backend_without_a_plugin_that_could_provide_one():
    if jas._ffi._other_jax_plugins():
        pytest.skip("a PJRT plugin besides jax's own is installed here")
    status = jas.backends()["ascend"]
    assert status["pjrt_backend"] is False and status["registration_reached"] is False, status
    assert "no PJRT plugin besides jax's own" in status["pjrt"]
    assert status["registration"].startswith("pending")


def test_an_installed_plugin_without_ascend_is_reported_as_such(monkeypatch):
    monkeypatch.setattr(jas._ffi, "_other_jax_plugins", lambda: ["some_plugin"])
    devices, how = jas._ffi._ascend_devices()
    assert devices == []
    assert how == "PJRT plugins some_plugin are installed, but none provides platform ASCEND"


def test_a_backend_with_platform_ascend_is_found_and_its_registration_probed(monkeypatch):
    class Client:
        platform = "ascend"

        def devices(self):
            return ["npu:0"]

    import jax.extend.backend

    monkeypatch.setattr(jas._ffi, "_other_jax_plugins", lambda: ["ascend_plugin"])
    monkeypatch.setattr(jax.extend.backend, "backends", lambda: {"cpu": jax.devices("cpu")[0].client, "npu": Client()})
    assert jas._ffi._ascend_devices() == (["npu:0"], "PJRT backend 'npu' (platform 'ascend')")
    # The probe compiles a real SiluGrad call; on CPU, where the handler is registered, it reaches it.
    reached, how = jas._ffi._registration_reaches(jax.devices("cpu")[0])
    assert reached and how.startswith("yes"), how


def test_backends_returns_a_copy():
    jas.backends()["cpu"]["platforms"].append("tampered")
    assert jas.backends()["cpu"]["platforms"] == ["cpu"]


def test_info_prints_every_backend(capsys):
    # The variables are read once per process (tests/test_first_week.py sets them in fresh ones).
    cap = jas._silu_grad_cpu.environment()["JAX_ASCEND_SILU_THREADS"]["cap"]
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "backends:" in out
    assert f"kernel ISA: {jas._silu_grad_cpu.isa()}" in out
    assert ("capped at" in out) is (cap is not None), out
    for name, status in jas.backends().items():
        line = next(text for text in out.splitlines() if text.strip().startswith(name + " "))
        assert ("not compiled" not in line) is status["compiled"], line
        for platform in status["platforms"]:
            assert f"registered for {platform}" in line


def test_info_says_what_each_backend_computes(capsys):
    # The Ascend numbers are CANN's (checked in C++ against the fake CANN, which
    # computes its formula: tests/backends/test_ascend_glue.cc); the CPU ones are
    # checked here, at the infinities where the two part.
    assert cli.main(["info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, status in jas.backends().items():
        if not status["compiled"]:
            continue
        at = next(i for i, text in enumerate(lines) if text.strip().startswith(name + " "))
        silu, swiglu = lines[at + 1].strip(), lines[at + 2].strip()
        if name == "ascend":
            assert silu.startswith("SiluGrad computes: CANN's aclnnSiluBackward, not this package's kernel"), silu
            assert "x = +-inf gives NaN" in silu and "plain formula" in silu, silu
            assert swiglu.startswith("SwiGluGrad computes: CANN's aclnnSwiGluGrad, not this package's kernel"), swiglu
            assert "A = +-inf gives NaN" in swiglu and "plain formula" in swiglu, swiglu
        else:
            assert silu.startswith("SiluGrad computes: this package's kernel: x = +-inf gives the limits"), silu
            assert swiglu.startswith("SwiGluGrad computes: this package's kernel: A = +-inf gives the limits"), swiglu
    out = np.asarray(jas.silu_grad(jnp.full(2, 1.5, jnp.float32), jnp.array([np.inf, -np.inf], jnp.float32)))
    np.testing.assert_array_equal(out, [1.5, -0.0])
    assert np.signbit(out[1])
    # SwiGluGrad's limits, with g = 1.5 and B = 2: dA = g*B*s'(A) -> 3 and -0.0, dB = g*silu(A) -> inf and -0.0.
    d_gate, d_up = (np.asarray(d) for d in jas.silu_mul_grad(
        jnp.full(2, 1.5, jnp.float32), jnp.array([np.inf, -np.inf], jnp.float32), jnp.full(2, 2.0, jnp.float32)))
    np.testing.assert_array_equal(d_gate, [3.0, -0.0])
    np.testing.assert_array_equal(d_up, [np.inf, -0.0])


def _lowered(platform, g, x, **kwargs):
    fn = functools.partial(jas.silu_grad, **kwargs)
    return jax.jit(fn).trace(g, x).lower(lowering_platforms=(platform,)).as_text()


@pytest.mark.parametrize("platform, in_place", [("cuda", True), ("tpu", False)], ids=["cuda", "other-accelerator"])
def test_only_cuda_writes_over_grad_output(platform, in_place):
    # This package's CUDA kernel reads each element before writing it; CANN
    # does not document whether aclnnSiluBackward may, so the default rule
    # (the Ascend plugin's) never aliases.
    g = jnp.ones((6, 10), jnp.float32)
    call = next(line for line in _lowered(platform, g, g, overwrite_grad_output=True).splitlines() if "custom_call @jax_ascend_silu_silu_grad" in line)
    assert ("output_operand_aliases" in call) is in_place, call
