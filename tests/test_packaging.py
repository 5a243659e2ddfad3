"""What the installed package ships besides code: typing markers, the native
module's stub (checked against the built module), one version number."""

import ast
import importlib
import importlib.metadata
import importlib.util
import pathlib
import shutil
import subprocess
import sys
import types

import pytest

import jax_ascend_silu as jas
from jax_ascend_silu import _silu_grad_cpu
from jax_ascend_silu._ffi import BACKENDS

PACKAGE = pathlib.Path(jas.__file__).resolve().parent


def _split_top_level(text: str) -> list[str]:
    """Splits a parameter list at commas outside brackets and quotes."""
    parts, depth, quote, current = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += ch
    return [p.strip() for p in [*parts, current] if p.strip()]


def _parameters(signature: str) -> tuple[str, ...]:
    """Parameter names (without self) of a 'def name(...) -> T' line, as
    nanobind prints it (its types and defaults need not be valid Python)."""
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    names = (p.split(":")[0].split("=")[0].strip() for p in _split_top_level(inner))
    return tuple(n for n in names if n not in ("self", "*", "/"))


def _native_surface(module) -> dict:
    """{name: what it is} for a native module: functions and methods by their
    parameters, classes by their members, other values as 'value'."""
    found: dict = {}
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if hasattr(value, "__nb_signature__"):
            found[name] = sorted(_parameters(entry[0]) for entry in value.__nb_signature__)
        elif isinstance(value, type):
            members = [m for m in dir(value) if not m.startswith("_")] + ["__init__"]
            found[name] = {
                m: sorted(_parameters(e[0]) for e in getattr(value, m).__nb_signature__)
                if hasattr(getattr(value, m), "__nb_signature__")
                else "attribute"
                for m in members
            }
        else:
            found[name] = "value"
    return found


def _stub_surface(path: pathlib.Path) -> dict:
    """The same description, read from a stub file."""

    def describe(body):
        found: dict = {}
        for node in body:
            if isinstance(node, ast.FunctionDef):
                if any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list):
                    found[node.name] = "attribute"
                else:
                    header = ast.unparse(node).split(") ->")[0] + ")"
                    found.setdefault(node.name, []).append(_parameters(header))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found[node.target.id] = "value"
            elif isinstance(node, ast.ClassDef):
                found[node.name] = describe(node.body)
        return {k: sorted(v) if isinstance(v, list) else v for k, v in found.items()}

    surface = describe(ast.parse(path.read_text()).body)
    return {k: ({m: ("attribute" if d == "value" else d) for m, d in v.items()} if isinstance(v, dict) else v)
            for k, v in surface.items()}


def _native_modules(module, prefix=""):
    """The module and its native submodules, as (dotted path below it, module)."""
    yield prefix, module
    for name in dir(module):
        value = getattr(module, name)
        if isinstance(value, types.ModuleType) and value.__name__ == f"{module.__name__}.{name}":
            yield from _native_modules(value, f"{prefix}{name}.")


def _stub_path(module_name: str, sub_path: str = "") -> pathlib.Path:
    """Where the stub of a native module (or of one of its submodules) lives:
    a stub package for modules with submodules, else a single .pyi."""
    package = PACKAGE / module_name
    if package.is_dir():
        return package / ((sub_path.rstrip(".").replace(".", "/") or "__init__") + ".pyi")
    assert not sub_path
    return PACKAGE / f"{module_name}.pyi"


# The CPU and Ascend modules are always built (the Ascend one opens CANN at run
# time); the CUDA one only with JAX_ASCEND_SILU_CUDA=ON, and is skipped without it.
NATIVE = [backend.module for backend in BACKENDS]


def _built(module_name: str):
    if importlib.util.find_spec(f"jax_ascend_silu.{module_name}") is None:
        pytest.skip(f"{module_name} is not built in this installation")
    return importlib.import_module(f"jax_ascend_silu.{module_name}")


def test_package_is_typed_and_ships_a_stub_for_every_native_module():
    assert (PACKAGE / "py.typed").is_file()
    # The compiled module is the package's own (an editable install keeps it
    # in the installed tree, beside no Python source).
    assert _silu_grad_cpu.__name__ == "jax_ascend_silu._silu_grad_cpu"
    assert pathlib.Path(_silu_grad_cpu.__file__).suffix in (".so", ".pyd")
    for name in NATIVE:
        assert _stub_path(name).is_file(), name


@pytest.mark.parametrize("module_name", NATIVE)
def test_stubs_match_the_built_module(module_name):
    for sub_path, module in _native_modules(_built(module_name)):
        native = _native_surface(module)
        assert native, f"{module.__name__} exposes nothing"
        assert _stub_surface(_stub_path(module_name, sub_path)) == native, module.__name__


@pytest.mark.parametrize("stub_folder", [True, False], ids=["stub-folder", "no-stub-folder"])
def test_source_folder_without_compiled_module_says_what_to_do(tmp_path, stub_folder):
    # `python -m jax_ascend_silu` from the repository root after a plain
    # `pip install .`: Python imports the source folder, which holds no
    # compiled module, ahead of the installed package. A copy of the source
    # folder stands in for it, imported without any editable install's import
    # hook (a plain install has none).
    source = pathlib.Path(__file__).resolve().parents[1] / "jax_ascend_silu"
    compiled = ["*.so", "*.pyd", "__pycache__"] + ([] if stub_folder else ["_silu_grad_cpu"])
    shutil.copytree(source, tmp_path / "jax_ascend_silu", ignore=shutil.ignore_patterns(*compiled))
    assert (tmp_path / "jax_ascend_silu" / "_silu_grad_cpu").is_dir() == stub_folder
    code = (
        "import importlib.machinery as m, sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if f in (m.BuiltinImporter, m.FrozenImporter, m.PathFinder)]\n"
        "import jax_ascend_silu\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: jax_ascend_silu was imported from {tmp_path / 'jax_ascend_silu'}"), run.stderr
    assert "no compiled module _silu_grad_cpu" in last and "pip install -e ." in last, last


def test_version_has_one_source():
    assert jas.__version__ == importlib.metadata.version("jax_ascend_silu")


def test_public_api():
    assert [name for name in jas.__all__ if not hasattr(jas, name)] == []
    assert {"silu", "silu_grad", "silu_grad_p", "route", "__version__"} <= set(jas.__all__)
