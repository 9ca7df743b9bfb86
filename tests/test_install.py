"""The package as a user installs it: the wheel built from this checkout, installed with one
extra (``[aws]``) into a fresh virtual environment, imports that cloud's stores and plans one,
and a user's type checker sees its types (``py.typed``).

Installing pulumi-aws and the rest from PyPI at every run would download hundreds of MB, so the
fresh venv takes its dependencies from this test venv's site-packages, through a ``.pth`` line
naming a folder of links to it. The links leave out this package (its editable install) and
the SDKs of the clouds not asked for (pulumi-gcp, pulumi-azure-native), so the fresh venv holds
only what ``pip install "pulumi-modelstore[aws]"`` would: pip (``--no-index``) resolves the
core's and the extra's requirements against those links and installs nothing but the wheel.

What this proves: the wheel carries every module and the ``py.typed`` marker; its metadata
declares what the ``aws`` extra needs (pip refuses the install when pulumi-aws is absent);
``pulumi_modelstore.aws`` imports and plans without the other clouds' SDKs; the
``modelstore`` command is installed. What it does not: that the version ranges resolve on
PyPI (the dependencies are this venv's versions, not the lowest allowed or the newest), nor
the ``[gcp]``, ``[azure]`` or ``[all]`` extras.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import ROOT

WHEEL_NAME = "pulumi_modelstore-*.whl"
# The cloud SDKs the aws extra does not install, and this package itself (the test venv has
# it installed editable, pointing at a checkout): none of them may be visible in the fresh venv.
LEFT_OUT = ("pulumi_modelstore", "__editable__", "pulumi_gcp", "pulumi_azure_native")


@dataclass(frozen=True)
class FreshVenv:
    root: Path
    python: Path
    site_packages: Path


def run(*cmd: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``cmd`` in ``cwd`` with no PYTHONPATH or MYPYPATH that could reach the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    out = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if check and out.returncode:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed:\n{out.stdout}{out.stderr}")
    return out


def build_wheel(tmp: Path) -> Path:
    """The wheel of this checkout, built from a copy (setuptools writes ``build/`` and
    ``*.egg-info`` next to the sources) with this venv's setuptools, offline."""
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "pulumi_modelstore",
        src / "pulumi_modelstore",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    # Without build isolation the build backend is this venv's: setuptools 70.1 and later
    # build wheels by themselves, older ones (the one venv bundles on Python 3.11) need wheel.
    setuptools = tuple(int(n) for n in metadata.version("setuptools").split(".")[:2])
    if setuptools < (70, 1) and importlib.util.find_spec("wheel") is None:
        pytest.fail(
            f"setuptools {metadata.version('setuptools')} cannot build a wheel without the wheel "
            "package: install setuptools>=70.1 or wheel into the test venv"
        )
    dist = tmp / "dist"
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    run(*pip, "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", dist, ".", cwd=src)
    [wheel] = dist.glob(WHEEL_NAME)
    return wheel


def fresh_venv(tmp: Path, leave_out: tuple[str, ...] = LEFT_OUT) -> FreshVenv:
    """A venv without pip whose ``.pth`` names a folder of links to this venv's installed
    distributions, less those whose names start with one of ``leave_out``."""
    root = tmp / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", root, cwd=tmp)
    python = root / "bin" / "python"
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_packages = Path(run(python, "-c", query, cwd=tmp).stdout.strip())
    deps = tmp / "deps"
    deps.mkdir()
    paths = sysconfig.get_paths()
    for folder in {Path(paths["purelib"]), Path(paths["platlib"])}:
        for entry in folder.iterdir():
            # .pth files only work from a site directory; the links folder is not one.
            if entry.name.lower().startswith(leave_out) or entry.suffix == ".pth":
                continue
            if not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    (site_packages / "_test_dependencies.pth").write_text(f"{deps}\n")
    return FreshVenv(root, python, site_packages)


def pip_install(venv: FreshVenv, wheel: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pip install "<wheel>[aws]"`` in ``venv``, offline: every requirement of the core and
    the extra must already be there. pip runs from the links (the fresh venv has none)."""
    return run(
        venv.python,
        *("-m", "pip", "install", "--no-index", "--disable-pip-version-check"),
        f"{wheel}[aws]",
        cwd=cwd,
        check=False,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    tmp = tmp_path_factory.mktemp("install")
    venv = fresh_venv(tmp)
    out = pip_install(venv, wheel, tmp)
    assert out.returncode == 0, out.stdout + out.stderr
    return venv


# Run in the fresh venv, from a folder outside the checkout: what a user's program sees.
PROBE = """
import importlib.metadata as md, importlib.util, json, sys
import pulumi_modelstore
from pulumi_modelstore.aws import EfsModelStore, FsxLustreModelStore, MountpointS3ModelStore
from pulumi_modelstore.plan.engine import plan_program

dist = md.distribution("pulumi-modelstore")
plan = plan_program(
    lambda: EfsModelStore("llama", {"cluster_name": "prod", "readers": ["inference"]}),
    config={"aws:region": "us-west-2"},
)
print(json.dumps({
    "module": pulumi_modelstore.__file__,
    "metadata": str(dist.locate_file("")),
    "direct_url": json.loads(dist.read_text("direct_url.json")),
    "typed": any(str(f) == "pulumi_modelstore/py.typed" for f in dist.files),
    "aws_requires": sorted(r for r in dist.requires if r.endswith('extra == "aws"')),
    "core_requires": sorted(r for r in dist.requires if "extra ==" not in r),
    "sdks_imported": sorted(m for m in ("pulumi_aws", "pulumi_gcp", "pulumi_azure_native")
                            if m in sys.modules),
    "sdks_installed": sorted(m for m in ("pulumi_aws", "pulumi_gcp", "pulumi_azure_native")
                             if importlib.util.find_spec(m)),
    "planned": [len(plan.by_type(t)) for t in
                ("modelstore:index:EfsModelStore", "aws:efs/fileSystem:FileSystem")],
}))
"""


def test_the_wheel_with_the_aws_extra_installs_and_plans_an_aws_store(installed, tmp_path):
    out = run(installed.python, "-c", PROBE, cwd=tmp_path)
    found = json.loads(out.stdout)
    site = str(installed.site_packages)
    assert found["module"] == f"{site}/pulumi_modelstore/__init__.py"
    assert found["metadata"] == site
    # Installed from the wheel file, not an editable checkout.
    assert found["direct_url"]["url"].endswith(".whl")
    assert "dir_info" not in found["direct_url"]
    assert found["typed"] is True
    assert found["aws_requires"] == ['pulumi-aws<8,>=7.0; extra == "aws"']
    core = sorted(r.split("<")[0].split(">")[0] for r in found["core_requires"])
    assert core == ["PyYAML", "pulumi", "pulumi-kubernetes"]
    assert found["sdks_installed"] == found["sdks_imported"] == ["pulumi_aws"]
    assert found["planned"] == [1, 1]  # the store and its file system
    # The console script the wheel declares.
    help_text = run(installed.root / "bin" / "modelstore", "--help", cwd=tmp_path).stdout
    assert help_text.startswith("usage: modelstore")


def test_the_aws_extra_is_refused_where_pulumi_aws_is_missing(wheel, tmp_path):
    """The check above is real: pip resolves the extra against the links, and without
    pulumi-aws among them it refuses the wheel."""
    venv = fresh_venv(tmp_path, (*LEFT_OUT, "pulumi_aws"))
    out = pip_install(venv, wheel, tmp_path)
    assert out.returncode == 1
    assert "No matching distribution found for pulumi-aws<8,>=7.0" in out.stderr


# A user's program, type-checked against the installed package (not this checkout).
GOOD = """\
import pulumi
from pulumi_modelstore.aws import EfsModelStore, EfsModelStoreArgs
from pulumi_modelstore.nfs import NfsModelStore

args: EfsModelStoreArgs = {"cluster_name": "prod", "readers": ["inference"]}
efs = EfsModelStore("llama", args)
nfs = NfsModelStore("nas", {"server": "nas01", "share": "/exports", "readers": ["inference"]})
claims: pulumi.Output[dict[str, str]] = efs.claim_names
"""
BAD = """\
from pulumi_modelstore.aws import EfsModelStore
from pulumi_modelstore.nfs import NfsModelStore

EfsModelStore("llama", {"cluster_name": "prod", "reader": ["inference"]})
NfsModelStore("nas", {"server": "nas01", "share": "/exports", "capacity_gib": "10"})
NfsModelStore("nas2", {"server": "nas01", "readers": ["inference"]})
"""
# The cloud SDKs' own types are skipped (as Any): they are not what is checked here, and
# reading pulumi-aws alone takes mypy about 40 s and 3 GB.
MYPY_INI = """\
[mypy]
python_version = 3.11

[mypy-pulumi_aws.*,pulumi_kubernetes.*,pulumi_gcp.*,pulumi_azure_native.*]
follow_imports = skip
"""


def test_a_users_type_checker_reads_the_installed_packages_types(installed, tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "mypy.ini").write_text(MYPY_INI)
    out = run(
        *(sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-error-summary"),
        *("--python-executable", installed.python, "--cache-dir", tmp_path / "cache"),
        *("good.py", "bad.py"),
        cwd=tmp_path,
        check=False,
    )
    assert out.stdout.splitlines() == [
        'bad.py:4: error: Extra key "reader" for TypedDict "EfsModelStoreArgs"  '
        "[typeddict-unknown-key]",
        'bad.py:5: error: Incompatible types (expression has type "str", TypedDict item '
        '"capacity_gib" has type "int")  [typeddict-item]',
        'bad.py:6: error: Missing key "share" for TypedDict "NfsModelStoreArgs"  [typeddict-item]',
    ], out.stderr
