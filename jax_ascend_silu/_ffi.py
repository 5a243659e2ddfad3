"""The backends: one table, read by the loader below, the op layer's lowering
(``_op_layer.py``), :func:`backends`, ``python -m jax_ascend_silu info`` and the tests.

The CPU and Ascend extensions are always built; the CUDA one is optional
(CMake option ``JAX_ASCEND_SILU_CUDA``) and otherwise absent without error.
Each registers its handler for its platform when it imports. The Ascend module
needs nothing of CANN to import: it opens CANN's libraries when first used,
and :func:`backends` says what it found.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import pkgutil

import jax


def _cpu_module():
    """The compiled CPU module, or an ImportError that says how to get it.

    Run from the repository root, Python imports this source folder ahead of
    an installed copy, and a plain ``pip install .`` leaves no compiled module
    here: the import then fails (or finds a namespace package of that name,
    which has no ``__file__``).
    """
    name = f"{__package__}._silu_grad_cpu"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        module = None
    if module is None or getattr(module, "__file__", None) is None:
        folder = os.path.dirname(os.path.abspath(__file__))
        raise ImportError(
            f"jax_ascend_silu was imported from {folder}, which has no compiled module _silu_grad_cpu. "
            "If that is the source folder (Python looks in the current directory first), run from another "
            "folder, or install with `pip install -e .`, which lets this folder import its compiled modules; "
            "otherwise reinstall the package.",
            name=name,
        ) from None
    return module


ext = _cpu_module()

#: The custom-call target of each operation, by its name (named once, in
#: ffi/handlers.h); every backend registers its handlers under them for its
#: own platform.
TARGETS: dict[str, str] = ext.targets()
TARGET, SWIGLU_TARGET = TARGETS["SiluGrad"], TARGETS["SwiGluGrad"]


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str  #: as backends() and the CLI report it
    module: str  #: its extension module in this package
    xla_platform: str  #: the platform its FFI handler is registered for
    #: JAX's platform name for its lowering rule; None is the default rule, which
    #: serves an Ascend PJRT plugin whatever name it gives its platform.
    lowering_platform: str | None
    #: The operations its module has handlers for (names of ``TARGETS``); on a
    #: backend without one, that operation's lowering refuses it (_op_layer.py).
    operations: tuple[str, ...]
    #: The operations whose handler may write results over dead inputs. CANN
    #: does not document whether its operators may, so the Ascend rule never asks.
    in_place: tuple[str, ...]
    #: What its SiluGrad returns, as docs/accuracy.md and docs/api.md's limits say.
    numbers: str
    #: What its SwiGluGrad returns, likewise.
    swiglu_numbers: str


_KERNEL_NUMBERS = ("this package's kernel: x = +-inf gives the limits (grad_output, grad_output * -0.0); "
                   "within 4 ulp (float32), 1 ulp (float16, bfloat16)")
_KERNEL_SWIGLU_NUMBERS = ("this package's kernel: A = +-inf gives the limits; dA and dB within 4 ulp (float32), "
                          "1 ulp (float16, bfloat16)")

# Every backend has every operation today; a backend without one lists the
# others, and that operation's lowering refuses it there.
_ALL = tuple(TARGETS)

BACKENDS = (
    Backend("cpu", "_silu_grad_cpu", "cpu", "cpu", operations=_ALL, in_place=_ALL, numbers=_KERNEL_NUMBERS,
            swiglu_numbers=_KERNEL_SWIGLU_NUMBERS),
    Backend("cuda", "_silu_grad_cuda", "CUDA", "cuda", operations=_ALL, in_place=_ALL, numbers=_KERNEL_NUMBERS,
            swiglu_numbers=_KERNEL_SWIGLU_NUMBERS),
    Backend("ascend", "_silu_grad_ascend", "ASCEND", None, operations=_ALL, in_place=(),
            numbers="CANN's aclnnSiluBackward, not this package's kernel: sigma*(1 + x*(1-sigma)) in float32 "
                    "(float16/bfloat16 upcast, rounded to nearest even), so x = +-inf gives NaN and the accuracy "
                    "is the plain formula's (float32 near the root x = -1.2785: about 1e-6*|grad_output| absolute)",
            swiglu_numbers="CANN's aclnnSwiGluGrad, not this package's kernel: dA = (g*B)*(sigma*(1 + A*(1-sigma))), "
                           "dB = g*(A*sigma) in float32 (float16/bfloat16 upcast, rounded to nearest even), so "
                           "A = +-inf gives NaN and the accuracy is the plain formula's"),
)


def _jax_cuda_plugin_present() -> bool:
    """Whether jax's CUDA PJRT plugin is installed (checked without starting any backend)."""
    try:
        return any(importlib.util.find_spec(f"jax_plugins.xla_cuda{v}") for v in (12, 13))
    except ImportError:  # no jax_plugins namespace at all
        return False


def _load(backend: Backend) -> dict:
    name = f"{__package__}.{backend.module}"
    if importlib.util.find_spec(name) is None:
        return {"compiled": False, "platforms": [], "detail": "not built"}
    try:
        mod = importlib.import_module(name)
    except ImportError as err:  # e.g. the CANN runtime libraries are not on the library path
        return {"compiled": True, "platforms": [], "detail": f"built, but failed to load: {err}"}
    detail = mod.build_info() if hasattr(mod, "build_info") else f"kernel ISA {ext.isa()}"
    if backend.name == "cuda" and not _jax_cuda_plugin_present():
        detail += "; not registered: jax's CUDA plugin is not installed"
        return {"compiled": True, "platforms": [], "detail": detail}
    refused = _register(mod, backend.xla_platform)
    if refused:
        detail += f"; {refused}"
        return {"compiled": True, "platforms": [], "detail": detail, "refused": {backend.xla_platform: refused}}
    return {"compiled": True, "platforms": [backend.xla_platform], "detail": detail}


def _register(mod, platform: str) -> str:
    """Registers the module's handlers for `platform`; returns "" or, for a
    platform other than cpu, why registering failed.

    jax hands a registration straight to the custom-call handler a PJRT plugin
    installed for that platform, and raises whatever it raises (one plugin's
    handler takes one argument where jax passes five: a TypeError). Such a
    plugin must not break the import, nor the CPU path; a failure on cpu is
    this package's own and is raised.
    """
    for target, capsule in mod.registrations().items():
        try:
            jax.ffi.register_ffi_target(target, capsule, platform=platform)
        except Exception as err:
            if platform == "cpu":
                raise
            return (f"the custom-call handler installed for platform {platform} refused {target}: "
                    f"{type(err).__name__}: {err}")
    return ""


_STATUS = {backend.name: _load(backend) for backend in BACKENDS}


# PJRT plugins that come with jax (or Google's TPU runtime); none of them is Ascend's.
_JAX_OWN_PLUGINS = ("xla_cuda", "xla_rocm", "cuda", "rocm", "libtpu", "tpu")


def _other_jax_plugins() -> list[str]:
    """PJRT plugins jax would load that are not jax's own (found without loading any)."""
    names = {ep.name for ep in importlib.metadata.entry_points(group="jax_plugins")}
    try:
        namespace = importlib.import_module("jax_plugins")  # the namespace package plugins install into
    except ImportError:
        pass
    else:
        names |= {m.name for m in pkgutil.iter_modules(namespace.__path__)}
    if os.environ.get("PJRT_NAMES_AND_LIBRARY_PATHS"):  # plugins jax loads by path
        names.add("PJRT_NAMES_AND_LIBRARY_PATHS")
    return sorted(n for n in names if not n.startswith(_JAX_OWN_PLUGINS))


def _ascend_devices() -> tuple[list, str]:
    """The devices of an ASCEND PJRT backend in this process, and how that was decided.

    jax's backends are started only when some plugin besides jax's own is
    installed, since only such a plugin could provide ASCEND.
    """
    plugins = _other_jax_plugins()
    if not plugins:
        return [], "no PJRT plugin besides jax's own is installed, so no ASCEND backend can exist"
    import jax.extend.backend

    try:
        clients = jax.extend.backend.backends()
    except Exception as err:  # a plugin that fails to start: reported, never raised from backends()
        return [], f"PJRT plugins {', '.join(plugins)} are installed; starting jax's backends failed: {err}"
    for name, client in clients.items():
        if name.lower() == "ascend" or client.platform.lower() == "ascend":
            return list(client.devices()), f"PJRT backend {name!r} (platform {client.platform!r})"
    return [], f"PJRT plugins {', '.join(plugins)} are installed, but none provides platform ASCEND"


def _registration_reaches(device) -> tuple[bool, str]:
    """Whether XLA, compiling for `device`, finds the handler registered for its platform.

    jax.ffi.register_ffi_target only queues a target for a platform until that
    platform's plugin takes it (through the PJRT FFI extension); compiling a
    call is the one public way to see whether it did.
    """
    import jax.numpy as jnp

    from . import silu_grad  # the public function, so the probe lowers what users call

    arg = jax.ShapeDtypeStruct((8,), jnp.float32, sharding=jax.sharding.make_single_device_sharding(device))
    try:
        jax.jit(silu_grad).lower(arg, arg).compile()
    except Exception as err:  # whatever the plugin's compiler raises
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return False, f"no: compiling a SiluGrad call for {device} failed: {first}"
    return True, f"yes: a SiluGrad call compiles for {device}"


@functools.cache
def _ascend_report() -> dict:
    """CANN as the Ascend module finds it, and the ASCEND PJRT backend: looked up once, on first request."""
    mod = importlib.import_module(f"{__package__}._silu_grad_ascend")
    cann = mod.cann()
    if cann["found"]:
        names = ", ".join(lib["name"] for lib in cann["libraries"])
        detail = f"CANN {cann['version'] or '(version not reported)'} found at run time: {names}"
    elif cann["libraries"]:
        detail = "CANN incomplete at run time: " + ", ".join(lib["name"] for lib in cann["libraries"]) + " found"
    else:
        detail = "CANN not found at run time"
    devices, pjrt = _ascend_devices()
    refused = _STATUS["ascend"].get("refused")
    if refused:
        reached, registration = False, f"no: {next(iter(refused.values()))}"
    elif devices:
        reached, registration = _registration_reaches(devices[0])
    else:
        reached, registration = False, (
            "pending: jax keeps the ASCEND registration until a PJRT plugin for ASCEND takes it")
    return {"cann": cann, "pjrt_backend": bool(devices), "pjrt": pjrt,
            "registration_reached": reached, "registration": registration, "detail": detail}


@functools.cache
def _cuda_report() -> dict:
    """Whether jax's CUDA plugin took the CUDA registration: looked up once, on first request.

    A registration made before the plugin initialises waits in jax's queue, and
    the plugin's ``initialize()`` (run when jax first starts its backends)
    replays it; a refusal then raises inside ``initialize()``, which jax logs and
    moves past, never reaching ``_register``. So jax's backends are started here
    and the handlers registered again: the plugin's handler now takes them
    directly, so a refusal is caught by ``_register`` (an identical second
    registration is accepted). A CUDA device, if any, then compiles a call.
    """
    import jax.extend.backend

    try:
        clients = jax.extend.backend.backends()  # runs every plugin's initialize()
    except Exception as err:  # a plugin that fails to start: reported, never raised from backends()
        return {"registration_reached": False, "registration": f"pending: starting jax's backends failed: {err}"}
    refused = _register(importlib.import_module(f"{__package__}._silu_grad_cuda"), "CUDA")
    if refused:
        return {"refused": {"CUDA": refused}, "registration_reached": False, "registration": f"no: {refused}"}
    if "cuda" not in clients:
        return {"registration_reached": False, "registration": (
            "pending: jax's CUDA plugin took it, and this process has no CUDA backend to compile for "
            "(no GPU, or JAX_PLATFORMS leaves cuda out)")}
    reached, registration = _registration_reaches(clients["cuda"].local_devices()[0])
    return {"registration_reached": reached, "registration": registration}


def backends() -> dict[str, dict]:
    """Which backends this installation has.

    Returns ``{backend: {"compiled": bool, "platforms": [XLA platform names its
    handler is registered for], "detail": str}}`` for each backend of
    ``BACKENDS`` (cpu, cuda, ascend). A compiled backend is registered when its module loads (and,
    for CUDA, when jax's CUDA plugin is installed). When the custom-call
    handler a PJRT plugin installed for a platform other than cpu refuses the
    registration, that backend is left unregistered and says why in
    ``"refused"`` (``{platform: reason}``) and its ``"detail"``; the package
    imports and the other backends work.

    A compiled CUDA entry also says whether jax's CUDA plugin took the
    registration (``"registration_reached"``, ``"registration"``): the first
    call starts jax's backends to find out (a plugin that initialises after
    import takes the registration then, and may refuse it then).

    The Ascend entry also says what the run-time search for CANN found
    (``"cann"``: found, problem, libraries with the origin of each,
    operator_library (the file ``aclnnSiluBackward`` comes from),
    swiglu_operator_library (``aclnnSwiGluGrad``'s, or ''), swiglu_problem
    (why SwiGluGrad cannot run there, or ''), version, version_note, notes; its
    ``"detail"`` names the libraries and version, or what was looked for and
    not found), whether this process has a PJRT backend for platform ASCEND
    (``"pjrt_backend"``, ``"pjrt"``) and whether the handler registration
    reached it (``"registration_reached"``, ``"registration"``). These are
    looked up on the first call, not at import.

    Examples:
      >>> import jax_ascend_silu as jas
      >>> status = jas.backends()
      >>> sorted(status)
      ['ascend', 'cpu', 'cuda']
      >>> status["cpu"]["compiled"], status["cpu"]["platforms"]
      (True, ['cpu'])
    """
    report = {name: {**status, "platforms": list(status["platforms"])} for name, status in _STATUS.items()}
    for status in report.values():
        if "refused" in status:
            status["refused"] = dict(status["refused"])
    cuda = report["cuda"]
    if cuda["platforms"]:
        found = _cuda_report()
        cuda.update({k: v for k, v in found.items() if k != "refused"})
        if "refused" in found:
            cuda.update(platforms=[], refused=dict(found["refused"]))
            cuda["detail"] += f"; {found['refused']['CUDA']}"
    elif "refused" in cuda:
        cuda.update(registration_reached=False, registration=f"no: {cuda['refused']['CUDA']}")
    if report["ascend"]["compiled"] and (report["ascend"]["platforms"] or "refused" in report["ascend"]):
        ascend = _ascend_report()
        report["ascend"].update({**ascend, "cann": {**ascend["cann"], "libraries": list(ascend["cann"]["libraries"]),
                                                      "notes": list(ascend["cann"]["notes"])}})
        for why in report["ascend"].get("refused", {}).values():
            report["ascend"]["detail"] += f"; {why}"
    return report

