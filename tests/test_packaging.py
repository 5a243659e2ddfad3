"""What the installed package ships besides code: typing markers, the native
module's stub (checked against the built module), one version number."""

import ast
import importlib.metadata
import pathlib

import jax_ascend_silu as jas
from jax_ascend_silu import _silu_grad_ext

PACKAGE = pathlib.Path(jas.__file__).resolve().parent


def _parameters(signature: str) -> tuple[str, ...]:
    """Parameter names of a 'def name(...) -> T' line as nanobind prints it."""
    text = signature if signature.startswith("def ") else "def " + signature
    (fn,) = ast.parse(text + ": ...").body
    assert isinstance(fn, ast.FunctionDef)
    return tuple(a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs)


def _native_signatures(module) -> dict[str, list[tuple[str, ...]]]:
    found = {}
    for name in dir(module):
        fn = getattr(module, name)
        if name.startswith("_") or not callable(fn):
            continue
        lines = [entry[0] for entry in fn.__nb_signature__]  # one entry per overload
        found[name] = sorted(_parameters(line) for line in lines)
    return found


def _stub_signatures(path: pathlib.Path) -> dict[str, list[tuple[str, ...]]]:
    found: dict[str, list[tuple[str, ...]]] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            found.setdefault(node.name, []).append(_parameters(ast.unparse(node).splitlines()[0].rstrip(":")))
    return {name: sorted(params) for name, params in found.items()}


def test_package_is_typed_and_ships_the_extension_stub():
    assert (PACKAGE / "py.typed").is_file()
    ext = pathlib.Path(_silu_grad_ext.__file__)
    assert ext.parent == PACKAGE
    assert (PACKAGE / "_silu_grad_ext.pyi").is_file()


def test_stub_lists_every_native_function_with_its_parameters():
    native = _native_signatures(_silu_grad_ext)
    assert native, "the extension exposes no functions"
    assert _stub_signatures(PACKAGE / "_silu_grad_ext.pyi") == native


def test_version_has_one_source():
    assert jas.__version__ == importlib.metadata.version("jax_ascend_silu")


def test_public_api():
    assert [name for name in jas.__all__ if not hasattr(jas, name)] == []
    assert {"silu", "silu_grad", "silu_grad_p", "route", "__version__"} <= set(jas.__all__)
