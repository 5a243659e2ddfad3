"""What the package ships: the operator's native modules with the stubs
nanobind generates for them at build time, typing markers and one version
number; not the test module."""

import ast
import importlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest
from packaging.utils import parse_wheel_filename

import jax_ascend_silu as jas
from jax_ascend_silu import _silu_grad_cpu
from jax_ascend_silu._ffi import BACKENDS

PACKAGE = pathlib.Path(jas.__file__).resolve().parent
ROOT = pathlib.Path(__file__).resolve().parents[1]
LICENSE = ROOT / "LICENSE"


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


@pytest.mark.backends
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


def _editable() -> bool:
    """Whether this is an editable install (README's test command), whose files are not a wheel's."""
    direct_url = importlib.metadata.distribution("jax_ascend_silu").read_text("direct_url.json")
    return bool(direct_url) and json.loads(direct_url).get("dir_info", {}).get("editable", False)


def _given_wheel() -> pathlib.Path | None:
    """The wheel CI built and installed (.ci/wheel sets JAX_ASCEND_SILU_WHEEL), or None."""
    given = os.environ.get("JAX_ASCEND_SILU_WHEEL")
    return pathlib.Path(given) if given else None


def _shipped_files() -> list[str]:
    """The files a wheel ships, as paths inside it: JAX_ASCEND_SILU_WHEEL's, else the installed
    ones (its RECORD). An editable install has no wheel to read: building one here would cost the
    README's run minutes (an isolated build environment, a full compile), so the test skips there,
    saying where it runs."""
    given = _given_wheel()
    if given:
        return zipfile.ZipFile(given).namelist()
    if _editable():
        pytest.skip("an editable install ships no wheel: .ci/wheel checks the wheel it builds "
                    "(set JAX_ASCEND_SILU_WHEEL=path/to.whl to check one here)")
    return [str(f) for f in importlib.metadata.files("jax_ascend_silu") or []]


def test_wheel_ships_the_operator_and_its_stubs_not_the_test_module():
    names = _shipped_files()
    files = {pathlib.PurePosixPath(n).name for n in names if n.startswith("jax_ascend_silu/")}
    for module in ALWAYS_BUILT:
        assert any(f.startswith(f"{module}.") and f.endswith((".so", ".pyd")) for f in files), (module, files)
        assert f"{module}.pyi" in files, (module, files)
    assert "py.typed" in files
    assert not [n for n in names if TEST_MODULE in n or n.startswith("tests/")], names


#: The newest glibc a wheel may need: openEuler 20.03 LTS and RHEL/Rocky 8, which Ascend servers run.
NEWEST_GLIBC = (2, 28)


def test_wheel_is_abi3_from_python_3_12_and_manylinux_where_repaired():
    # The tags the installed distribution was built with: cp312-abi3 on 3.12 and newer (one wheel for every
    # later Python), cp311-cp311 on 3.11; an editable install is tagged as its wheel would be.
    wheel_info = importlib.metadata.distribution("jax_ascend_silu").read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_info.splitlines() if line.startswith("Tag:")]
    want = "cp311-cp311" if sys.version_info < (3, 12) else "cp312-abi3"
    assert tags and all(tag.startswith(f"{want}-") for tag in tags), tags
    # The product modules are built for the stable ABI there (nanobind's STABLE_ABI): named .abi3.so.
    for name in ALWAYS_BUILT:
        module = importlib.import_module(f"jax_ascend_silu.{name}")
        assert module.__file__.endswith(".abi3.so") == (sys.version_info >= (3, 12)), module.__file__
    given = _given_wheel()
    if given:
        # auditwheel's repaired wheel: manylinux platform tags only, none newer than NEWEST_GLIBC.
        platforms = {tag.platform for tag in parse_wheel_filename(given.name)[3]}
        assert platforms and all(p.startswith("manylinux") for p in platforms), platforms
        glibcs = [tuple(map(int, p.split("_")[1:3])) for p in platforms if p.startswith("manylinux_")]
        assert glibcs and max(glibcs) <= NEWEST_GLIBC, platforms


def test_the_given_wheel_is_what_runs():
    # In .ci/wheel, the package the tests import is the installed wheel, not the source tree next to them.
    given = _given_wheel()
    if not given:
        pytest.skip("JAX_ASCEND_SILU_WHEEL is not set: this run tests the package as installed here")
    assert not _editable()
    assert not PACKAGE.is_relative_to(ROOT), PACKAGE
    assert PACKAGE.is_relative_to(pathlib.Path(sysconfig.get_path("platlib")).resolve()), PACKAGE
    installed = {str(f) for f in importlib.metadata.files("jax_ascend_silu") or []}
    shipped = {n for n in zipfile.ZipFile(given).namelist() if not n.endswith("/")}
    assert shipped - installed == set(), shipped - installed


def test_source_folder_without_compiled_module_says_what_to_do(tmp_path):
    # `python -m jax_ascend_silu` from the repository root after a plain
    # `pip install .`: Python imports the source folder, which holds no
    # compiled module, ahead of the installed package. A copy of the source
    # folder stands in for it, imported without any editable install's import
    # hook (a plain install has none).
    source = ROOT / "jax_ascend_silu"
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


def _test_only_functions() -> list[bytes]:
    """The executor controls only tests use: the functions kernel/cpu/testing.h declares, by the names
    their symbols carry in a module's symbol table (the source of the shipped modules, read beside the tests)."""
    header = ROOT / "kernel" / "cpu" / "testing.h"
    names = re.findall(r"^Status (\w+)\(", header.read_text(), flags=re.MULTILINE)
    assert len(names) >= 4, names
    return [name.encode() for name in names]


def test_product_modules_carry_no_test_only_kernel_api():
    test_only = _test_only_functions()
    # The test module links them, and its symbol table names them (where it is built: an editable
    # install): so a module that carried them would show it.
    spec = importlib.util.find_spec(f"jax_ascend_silu.{TEST_MODULE}")
    if spec is not None:
        testing = pathlib.Path(spec.origin).read_bytes()
        assert [name for name in test_only if name not in testing] == []
    for name in NATIVE:
        spec = importlib.util.find_spec(f"jax_ascend_silu.{name}")
        if spec is None:
            continue
        image = pathlib.Path(spec.origin).read_bytes()
        assert b"SiluGradGetWorkspaceSize" in image or name != "_silu_grad_cpu", name  # symbols are there to see
        assert [s for s in test_only if s in image] == [], name


# ----------------------------------------------------------------- licence --


def test_licence_is_the_apache_2_text_and_the_metadata_names_it():
    text = LICENSE.read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"], text[:200]
    assert "END OF TERMS AND CONDITIONS" in text and "Copyright 2026 the jax_ascend_silu authors" in text
    # PEP 639 metadata, read from the installed distribution (editable or wheel alike).
    metadata = importlib.metadata.metadata("jax_ascend_silu")
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]


def _licence_in(names: list[str]) -> str:
    """The one path of `names` that is the dist-info's copy of LICENSE."""
    found = [n for n in names if re.fullmatch(r"jax_ascend_silu-[^/]+\.dist-info/licenses/LICENSE", n)]
    assert len(found) == 1, sorted(n for n in names if ".dist-info/" in n)
    return found[0]


def test_wheel_ships_the_licence():
    given = _given_wheel()
    if given:
        with zipfile.ZipFile(given) as wheel:
            shipped = wheel.read(_licence_in(wheel.namelist()))
    else:
        # The installed distribution's dist-info: an editable install's carries it too.
        files = importlib.metadata.files("jax_ascend_silu") or []
        path = _licence_in([str(f) for f in files])
        shipped = next(f for f in files if str(f) == path).locate().read_bytes()
    assert shipped == LICENSE.read_bytes()


def _sdist(tmp_path: pathlib.Path) -> pathlib.Path:
    """The sdist .ci/checks built (JAX_ASCEND_SILU_SDIST), or one built here by scikit-build-core
    (the dev extra; a second or so, nothing compiled), or a skip saying so."""
    given = os.environ.get("JAX_ASCEND_SILU_SDIST")
    if given:
        return pathlib.Path(given)
    if importlib.util.find_spec("scikit_build_core") is None:
        pytest.skip("scikit-build-core, from the dev extra, is not installed: .ci/checks checks the sdist it "
                    "builds (set JAX_ASCEND_SILU_SDIST=path/to.tar.gz to check one here)")
    code = "import sys\nfrom scikit_build_core.build import build_sdist\nprint(build_sdist(sys.argv[1]))"
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return tmp_path / run.stdout.strip().splitlines()[-1]


def test_sdist_ships_the_licence(tmp_path):
    with tarfile.open(_sdist(tmp_path)) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        assert sdist.extractfile(f"{top}/LICENSE").read() == LICENSE.read_bytes()
        pkg_info = sdist.extractfile(f"{top}/PKG-INFO").read().decode()
    assert "License-Expression: Apache-2.0" in pkg_info.splitlines()
    assert "License-File: LICENSE" in pkg_info.splitlines()
