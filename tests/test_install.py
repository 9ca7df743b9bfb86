"""The package as a user installs it: the wheel built from this checkout, installed with one
extra (``[aws]``) into a fresh virtual environment, imports that cloud's stores and plans one,
and a user's type checker sees its types (``py.typed``).

Installing pulumi-aws and the rest from PyPI at every run would download hundreds of MB, so the
fresh venv takes its dependencies from this test venv, through a ``.pth`` line naming a folder
of links: to the files of the distributions the wheel's own requirements (the core's and the
``aws`` extra's) pull in, followed through their requirements as pip would, and to nothing
else. pip (``--no-index``) then resolves the wheel's requirements against those links and
installs the wheel alone.

What this proves: the wheel carries every module and the ``py.typed`` marker; its metadata
declares what the ``aws`` extra needs (pip refuses the wheel when only the core's dependencies
are there); ``pulumi_modelstore.aws`` imports and plans a store with only the declared
dependencies present (an undeclared import fails), without the other clouds' SDKs, and every
other module imports too but the GCP and Azure rooms (refused, naming their extra) and the
CrossGuard wrapper (the ``policy`` extra); the ``modelstore`` command is installed.

What it does not: that the version ranges resolve on PyPI (the dependencies are this venv's
versions, not the lowest allowed or the newest); a namespace package's folder (``google``) is
linked whole, so its other members are visible too; nor the ``[gcp]``, ``[azure]`` or ``[all]``
extras.
"""

from __future__ import annotations

import email.parser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

WHEEL_NAME = "pulumi_modelstore-*.whl"


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
    # The build backend pyproject.toml declares, called as a PEP 517 frontend calls it (pip
    # would call the same hook, after half a second of its own start-up).
    with (ROOT / "pyproject.toml").open("rb") as f:
        backend = tomllib.load(f)["build-system"]["build-backend"]
    dist = tmp / "dist"
    hook = "import importlib, sys; importlib.import_module(sys.argv[1]).build_wheel(sys.argv[2])"
    run(sys.executable, "-c", hook, backend, dist, cwd=src)
    [wheel] = dist.glob(WHEEL_NAME)
    return wheel


def wheel_requires(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of the wheel's own metadata."""
    with zipfile.ZipFile(wheel) as z:
        [name] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        message = email.parser.Parser().parsestr(z.read(name).decode())
    return message.get_all("Requires-Dist") or []


def closure(requires: list[str], extras: frozenset[str]) -> list[metadata.Distribution]:
    """The distributions of this venv that ``requires`` (with ``extras`` asked for) pulls in,
    and what they pull in, markers evaluated here: what pip would install for them."""
    found: dict[str, metadata.Distribution] = {}
    todo = [(text, extras) for text in requires]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        text, asked = todo.pop()
        req = Requirement(text)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in asked or {""}):
            continue
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        dist = found.setdefault(key[0], metadata.distribution(req.name))
        todo += [(r, key[1]) for r in dist.requires or []]
    return list(found.values())


def fresh_venv(tmp: Path, wheel: Path, extras: frozenset[str]) -> FreshVenv:
    """A venv without pip whose ``.pth`` names a folder of links to the files of this venv's
    distributions the wheel's requirements with ``extras`` pull in, and to nothing else."""
    root = tmp / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", root, cwd=tmp)
    python = root / "bin" / "python"
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_packages = Path(run(python, "-c", query, cwd=tmp).stdout.strip())
    deps = tmp / "deps"
    deps.mkdir()
    for dist in closure(wheel_requires(wheel), extras):
        # Each top-level entry (package, module, .dist-info) once; not scripts ("../bin") nor
        # the shared __pycache__.
        for top in {f.parts[0] for f in dist.files or ()} - {"..", "__pycache__"}:
            if not (deps / top).exists():
                (deps / top).symlink_to(Path(str(dist.locate_file(top))))
    (site_packages / "_test_dependencies.pth").write_text(f"{deps}\n")
    return FreshVenv(root, python, site_packages)


def pip_install(venv: FreshVenv, wheel: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pip install "<wheel>[aws]"`` into ``venv``, offline (every requirement of the core and
    the extra must be there already), by this venv's pip (``--python``: the fresh one has none)."""
    return run(
        *(sys.executable, "-m", "pip", "--python", venv.python, "install"),
        *("--no-index", "--disable-pip-version-check", f"{wheel}[aws]"),
        cwd=cwd,
        check=False,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    tmp = tmp_path_factory.mktemp("install")
    venv = fresh_venv(tmp, wheel, frozenset({"aws"}))
    out = pip_install(venv, wheel, tmp)
    assert out.returncode == 0, out.stdout + out.stderr
    return venv


# Run in the fresh venv, from a folder outside the checkout: what a user's program sees.
PROBE = """
import importlib, importlib.metadata as md, importlib.util, json, pkgutil, sys
import pulumi_modelstore
from pulumi_modelstore.aws import EfsModelStore, FsxLustreModelStore, MountpointS3ModelStore
from pulumi_modelstore.plan.engine import plan_program

def unimportable():  # every module of the package that does not import here, and why
    found = []
    for m in pkgutil.walk_packages(pulumi_modelstore.__path__, "pulumi_modelstore."):
        try:
            importlib.import_module(m.name)
        except ImportError as e:
            found.append([m.name, str(e)])
    return found

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
    "unimportable": unimportable(),
}))
"""


AZURE = "pulumi-azure-native, which is not installed: pip install 'pulumi-modelstore[azure]'"
GCP = "pulumi-gcp, which is not installed: pip install 'pulumi-modelstore[gcp]'"


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
    # Every other module imports too, but those of other extras, which say which.
    assert found["unimportable"] == [
        ["pulumi_modelstore.azure", f"pulumi_modelstore.azure needs {AZURE}"],
        ["pulumi_modelstore.gcp", f"pulumi_modelstore.gcp needs {GCP}"],
        ["pulumi_modelstore.policy.crossguard", "No module named 'pulumi_policy'"],
    ]
    # The console script the wheel declares.
    help_text = run(installed.root / "bin" / "modelstore", "--help", cwd=tmp_path).stdout
    assert help_text.startswith("usage: modelstore")


def test_the_aws_extra_is_refused_where_pulumi_aws_is_missing(wheel, tmp_path):
    """The check above is real: pip resolves the extra against the links, and with only the
    core's dependencies among them it refuses the wheel."""
    venv = fresh_venv(tmp_path, wheel, frozenset())
    out = pip_install(venv, wheel, tmp_path)
    assert out.returncode == 1
    assert "No matching distribution found for pulumi-aws<8,>=7.0" in out.stderr


# A user's program, type-checked against the installed package (not this checkout).
GOOD = """\
import pulumi
from pulumi_modelstore.aws import EbsCsiDriver, EbsModelCache, EfsModelStore, EfsModelStoreArgs
from pulumi_modelstore.nfs import NfsModelStore

args: EfsModelStoreArgs = {"cluster_name": "prod", "readers": ["inference"]}
efs = EfsModelStore("llama", args)
nfs = NfsModelStore("nas", {"server": "nas01", "share": "/exports", "readers": ["inference"]})
claims: pulumi.Output[dict[str, str]] = efs.claim_names

# Outputs of other resources, where the library takes them (pulumi.Input fields).
key_arn: pulumi.Output[str] = pulumi.Output.from_input("arn:aws:kms:us-west-2:1:key/k")
server: pulumi.Output[str] = pulumi.Output.from_input("10.20.0.2")
EfsModelStore("qwen", {"cluster_name": "prod", "readers": ["qwen"], "kms_key_arn": key_arn})
NfsModelStore("filestore", {"server": server, "share": "/models", "readers": ["inference"]})
driver = EbsCsiDriver("ebs", {"cluster_name": "prod", "kms_key_arns": [key_arn]})
EbsModelCache(
    "cache",
    {
        "readers": ["inference"],
        "volume_size": "100Gi",
        "loader": {"image": "python:3.12-slim"},
        "kms_key_arn": key_arn,
        "snapshot_class_name": driver.snapshot_class_name,
    },
)
"""
BAD = """\
import pulumi
from pulumi_modelstore.aws import EfsModelStore
from pulumi_modelstore.nfs import NfsModelStore

EfsModelStore("llama", {"cluster_name": "prod", "reader": ["inference"]})
NfsModelStore("nas", {"server": "nas01", "share": "/exports", "capacity_gib": "10"})
NfsModelStore("nas2", {"server": "nas01", "readers": ["inference"]})
# A field known before deploy takes no Output.
claim: pulumi.Output[str] = pulumi.Output.from_input("llama")
NfsModelStore("nas3", {"server": "nas01", "share": "/x", "claim_name": claim})
"""
# The cloud SDKs' own types are skipped (as Any): they are not what is checked here, and
# reading pulumi-aws alone takes mypy about 40 s and 3 GB.
MYPY_INI = """\
[mypy]
python_version = 3.11

[mypy-pulumi_aws.*,pulumi_kubernetes.*,pulumi_gcp.*,pulumi_azure_native.*]
follow_imports = skip
"""


# ---- a user's type checker ---------------------------------------------------------------------

# Each example is a program of its own, all named ``__main__.py``: each is copied to a package
# of its own (``examples/app-vllm`` -> ``app_vllm``), its folder also on the path for the
# modules beside it (``vllm_server``). One mypy run reads them with the user's two programs
# above, against the package installed from the wheel (errors inside it are the checkout's
# ``.venv/bin/mypy`` run's to report). The GCP and Azure SDKs are not installed there (the
# ``aws`` extra only): what reaches them is Any, as the SDKs' own types are above.
TYPE_CHECK_INI = f"""\
{MYPY_INI}
[mypy-pulumi_gcp.*,pulumi_azure_native.*]
ignore_missing_imports = True
"""


@dataclass(frozen=True)
class TypeChecked:
    examples: list[str]
    """The examples' programs, as mypy names them."""
    findings: list[str]
    returncode: int
    stderr: str


@pytest.fixture(scope="module")
def type_checked(installed: FreshVenv, tmp_path_factory: pytest.TempPathFactory) -> TypeChecked:
    tmp = tmp_path_factory.mktemp("mypy")
    (tmp / "good.py").write_text(GOOD)
    (tmp / "bad.py").write_text(BAD)
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/__main__.py"))
    paths, files = [], []
    for example in examples:
        package = tmp / "examples" / example.name.replace("-", "_")
        shutil.copytree(example, package, ignore=shutil.ignore_patterns("__pycache__"))
        (package / "__init__.py").write_text("")
        paths.append(str(package))
        files.append(str((package / "__main__.py").relative_to(tmp)))
    config = TYPE_CHECK_INI.replace("[mypy]\n", f"[mypy]\nmypy_path = {':'.join(paths)}\n", 1)
    (tmp / "mypy.ini").write_text(config)
    out = run(
        *(sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-error-summary"),
        *("--python-executable", installed.python, "--cache-dir", "/dev/null"),  # one run: no cache
        *("good.py", "bad.py", *files),
        cwd=tmp,
        check=False,
    )
    return TypeChecked(files, out.stdout.splitlines(), out.returncode, out.stderr)


def test_a_users_type_checker_reads_the_installed_packages_types(type_checked):
    assert (type_checked.returncode, type_checked.stderr) == (1, "")
    assert [f for f in type_checked.findings if f.startswith(("good.py", "bad.py"))] == [
        'bad.py:5: error: Extra key "reader" for TypedDict "EfsModelStoreArgs"  '
        "[typeddict-unknown-key]",
        'bad.py:6: error: Incompatible types (expression has type "str", TypedDict item '
        '"capacity_gib" has type "int")  [typeddict-item]',
        'bad.py:7: error: Missing key "share" for TypedDict "NfsModelStoreArgs"  [typeddict-item]',
        'bad.py:10: error: Incompatible types (expression has type "Output[str]", TypedDict item '
        '"claim_name" has type "str")  [typeddict-item]',
    ], type_checked.findings


def test_every_example_type_checks_against_the_librarys_types(type_checked):
    """A program that passes an Output where the library takes one (the EBS cache's
    ``snapshot_class_name`` from the driver's output) type-checks, as it plans."""
    assert len(type_checked.examples) == len(list(ROOT.glob("examples/*/Pulumi.yaml"))) >= 12
    assert type_checked.stderr == ""
    assert [f for f in type_checked.findings if not f.startswith("bad.py")] == []
