"""The quick-start scripts install what they need and no more: ``scripts/plan`` the library
with every cloud's SDK (``.[all]``), ``scripts/test`` that and the test tools (``.[test]``),
each extra once per change of pyproject.toml. Run on a copy of the scripts with a venv of
stubs (``VENV``) that log what they are asked to do: nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPTS = ("_venv.sh", "plan", "test", "docs", "golden")
TOOLS = ("python", "modelstore", "ruff", "mypy")
INSTALL_ALL = "python -m pip install --quiet --disable-pip-version-check -e .[all]"
INSTALL_TEST = "python -m pip install --quiet --disable-pip-version-check -e .[test]"
CHECKS = ["ruff check .", "ruff format --check .", "mypy"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The scripts and pyproject.toml in a folder of their own, the npm tools up to date (so
    scripts/test runs no npm), and a venv at ``venv/`` whose tools only log their arguments."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in SCRIPTS:
        shutil.copy2(ROOT / "scripts" / name, repo / "scripts" / name)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    (repo / "package-lock.json").write_text("{}")
    (repo / "node_modules").mkdir()
    (repo / "node_modules" / ".package-lock.json").write_text("{}")
    lock = repo / "package-lock.json"
    os.utime(lock, (lock.stat().st_atime, lock.stat().st_mtime - 60))
    # The default .venv too, so a script that ignored VENV would log that, not install.
    for venv, mark in ((tmp_path / "venv", ""), (repo / ".venv", ".venv: ")):
        (venv / "bin").mkdir(parents=True)
        for tool in TOOLS:
            stub = venv / "bin" / tool
            stub.write_text(f'#!/bin/sh\necho "{mark}{tool} $*" >> "{tmp_path / "log"}"\n')
            stub.chmod(0o755)
    return repo


def run(repo: Path, script: str, *args: str) -> list[str]:
    """Run ``scripts/<script>`` in ``repo`` with the stub venv; the lines its tools logged."""
    log = repo.parent / "log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "VENV": str(repo.parent / "venv"), "PYTHON": sys.executable}
    out = subprocess.run(
        [str(repo / "scripts" / script), *args], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return [line.rstrip() for line in log.read_text().splitlines()] if log.exists() else []


def stamps(repo: Path) -> list[str]:
    prefix = ".modelstore-installed-"
    return sorted(p.name[len(prefix) :] for p in (repo.parent / "venv").glob(prefix + "*"))


def test_plan_installs_the_cloud_extras_only_and_once(repo):
    assert run(repo, "plan", "--stack", "local") == [INSTALL_ALL, "modelstore plan --stack local"]
    assert stamps(repo) == ["all", "aws", "azure", "gcp"]
    assert run(repo, "plan") == ["modelstore plan"]


def test_test_adds_the_test_tools_and_stamps_every_extra_they_include(repo):
    assert run(repo, "test", "-k", "x") == [INSTALL_TEST, *CHECKS, "python -m pytest -k x"]
    assert stamps(repo) == ["all", "aws", "azure", "gcp", "policy", "test"]
    # The test install includes the plan's extras: switching installs nothing.
    assert run(repo, "plan") == ["modelstore plan"]
    assert run(repo, "test") == [*CHECKS, "python -m pytest"]


def test_switching_from_plan_to_test_installs_the_test_tools_once(repo):
    run(repo, "plan")
    assert run(repo, "test") == [INSTALL_TEST, *CHECKS, "python -m pytest"]
    assert run(repo, "plan") == ["modelstore plan"]


def test_a_changed_pyproject_installs_again_each_extra_on_its_first_use(repo):
    run(repo, "test")
    with (repo / "pyproject.toml").open("a") as f:
        f.write("# changed\n")
    assert run(repo, "plan") == [INSTALL_ALL, "modelstore plan"]
    assert run(repo, "test") == [INSTALL_TEST, *CHECKS, "python -m pytest"]


def test_docs_and_golden_install_what_they_import(repo):
    # The docs read every cloud's components; the golden plans reuse the tests' programs.
    assert run(repo, "docs") == [INSTALL_ALL, "python -m pulumi_modelstore.docs"]
    assert run(repo, "golden") == [INSTALL_TEST, "python -m tests.golden"]
