"""What the package ships: the operator's native modules with the stubs
nanobind generates for them at build time, typing markers and one version
number; not the test module."""

import ast
import importlib
import importlib.metadata
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import jax_ascend_silu as jas
from jax_ascend_silu import _silu_grad_cpu
from jax_ascend_silu._ffi import BACKENDS

PACKAGE = pathlib.Path(jas.__file__).resolve().parent


# The CPU and Ascend modules are always built (the Ascend one opens CANN at run
# time); the CUDA one only with JAX_ASCEND_SILU_CUDA=ON.
NATIVE = [backend.module for backend in BACKENDS]
ALWAYS_BUILT = ["_silu_grad_cpu", "_silu_grad_ascend"]
TEST_MODULE = "_silu_grad_cpu_testing"


def _public_names(module) -> set[str]:
    return {name for name in dir(module) if not name.startswith("_")}


def _stub_names(path: pathlib.Path) -> set[str]:
    """Top-level names a stub file defines."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {name for name in names if not name.startswith("_")}


def test_package_is_typed_and_every_built_module_has_its_generated_stub():
    assert (PACKAGE / "py.typed").is_file()
    # The compiled module is the package's own (an editable install keeps it
    # in the installed tree, beside no Python source).
    assert _silu_grad_cpu.__name__ == "jax_ascend_silu._silu_grad_cpu"
    assert pathlib.Path(_silu_grad_cpu.__file__).suffix in (".so", ".pyd")
    built = [name for name in NATIVE if importlib.util.find_spec(f"jax_ascend_silu.{name}") is not None]
    assert set(ALWAYS_BUILT) <= set(built), built
    for name in built:
        module = importlib.import_module(f"jax_ascend_silu.{name}")
        stub = pathlib.Path(module.__file__).with_name(f"{name}.pyi")
        assert stub.is_file(), f"no stub generated for {name} beside {module.__file__}"
        assert _stub_names(stub) == _public_names(module), stub


def _wheel(tmp_path) -> pathlib.Path:
    """The wheel to inspect: JAX_ASCEND_SILU_WHEEL (CI passes the one it
    built), else one built here with `pip wheel` and no options, as a user
    would (pyproject.toml's build folder makes a rebuild incremental)."""
    given = os.environ.get("JAX_ASCEND_SILU_WHEEL")
    if given:
        return pathlib.Path(given)
    root = pathlib.Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(root)],
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-4000:]
    (wheel,) = tmp_path.glob("jax_ascend_silu-*.whl")
    return wheel


def test_wheel_ships_the_operator_and_its_stubs_not_the_test_module(tmp_path):
    names = zipfile.ZipFile(_wheel(tmp_path)).namelist()
    files = {pathlib.PurePosixPath(n).name for n in names if n.startswith("jax_ascend_silu/")}
    for module in ALWAYS_BUILT:
        assert any(f.startswith(f"{module}.") and f.endswith((".so", ".pyd")) for f in files), (module, files)
        assert f"{module}.pyi" in files, (module, files)
    assert "py.typed" in files
    assert not [n for n in names if TEST_MODULE in n or n.startswith("tests/")], names


def test_source_folder_without_compiled_module_says_what_to_do(tmp_path):
    # `python -m jax_ascend_silu` from the repository root after a plain
    # `pip install .`: Python imports the source folder, which holds no
    # compiled module, ahead of the installed package. A copy of the source
    # folder stands in for it, imported without any editable install's import
    # hook (a plain install has none).
    source = pathlib.Path(__file__).resolve().parents[1] / "jax_ascend_silu"
    shutil.copytree(source, tmp_path / "jax_ascend_silu", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
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


# The executor controls only tests use (kernel/cpu/testing.h), by the names
# their symbols carry in a module's symbol table.
TEST_ONLY_SYMBOLS = (b"SiluGradSetIsa", b"SiluGradSetChunkElements", b"SiluGradSetRepeatable", b"SiluGradSetData")


def test_product_modules_carry_no_test_only_kernel_api():
    from checks import kernel_module

    testing = pathlib.Path(kernel_module().__file__).read_bytes()
    # The test module links them, and its symbol table names them: so a module that carried them would show it.
    assert all(name in testing for name in TEST_ONLY_SYMBOLS)
    for name in NATIVE:
        spec = importlib.util.find_spec(f"jax_ascend_silu.{name}")
        if spec is None:
            continue
        image = pathlib.Path(spec.origin).read_bytes()
        assert b"SiluGradGetWorkspaceSize" in image or name != "_silu_grad_cpu", name  # symbols are there to see
        assert [s for s in TEST_ONLY_SYMBOLS if s in image] == [], name
