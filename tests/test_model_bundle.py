"""The seed and verify programs run from the bundle a Job mounts (``bundle.program_files()``),
by an interpreter that can import the standard library and nothing else (``python -I -S``):
what a bare ``python:3.12-slim`` image gives them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pulumi_modelstore.model import bundle

# A ConfigMap holds at most 1 MiB of data (kubernetes.io/docs/concepts/configuration/configmap/,
# "The data stored in a ConfigMap cannot exceed 1 MiB"); the object's metadata counts too, so
# the programs keep well below it.
CONFIGMAP_LIMIT = 1 << 20


def materialize(where: Path) -> Path:
    """The bundle's files written under ``where``, as a ConfigMap volume lays them out."""
    for path, text in bundle.program_files().items():
        (where / path).parent.mkdir(parents=True, exist_ok=True)
        (where / path).write_text(text)
    return where


def run_bundled(root: Path, program: str, *args: str, env: dict[str, str] | None = None):
    """``program`` from the bundle at ``root`` with ``bundle.command`` (``python -I -S``), from
    an unrelated working directory and with ``PYTHONPATH`` pointing at the repository: -I
    ignores it, so the package installed in the test venv cannot leak in."""
    argv = [sys.executable, *bundle.command(program, str(root))[1:], *args]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        cwd=root.parent,
        env={
            **os.environ,
            "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
            **(env or {}),
        },
        timeout=120,
    )


def seed_bundled(root: Path, source: str, dest: Path, env: dict[str, str] | None = None):
    """The bundled seed of revision ``v1`` from ``source`` into ``dest``, writing no
    termination log (:func:`run_bundled`)."""
    args = ["--source", source, "--revision", "v1", "--dest", str(dest), "--termination-log", ""]
    return run_bundled(root, "seed", *args, env=env)


def test_seed_and_verify_run_from_the_bundle_with_the_standard_library_only(tmp_path: Path):
    root = materialize(tmp_path / "bundle")
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "model.safetensors").write_bytes(os.urandom(50_000))
    (src / "sub" / "config.json").write_bytes(b"{}")
    store = tmp_path / "store"
    store.mkdir()
    seeded = seed_bundled(root, f"file://{src}", store)
    assert seeded.returncode == 0, seeded.stderr
    manifest = json.loads((store / ".modelstore/v1/manifest.json").read_text())
    assert seeded.stdout == f"ok: seeded v1: 2 files, 0.0 GiB, manifest {manifest['digest']}\n"
    verified = run_bundled(
        root, "verify", "--root", str(store), "--revision", "v1", "--termination-log", ""
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("ok: 2 files, 0.0 GiB, sha256 all, read ")
    # The interpreter really was bare: no site-packages on its path, so pulumi (installed in
    # the test venv) cannot import there.
    probe = run_bundled(root, "verify", "--help")
    assert probe.returncode == 0, probe.stderr
    bare = subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import pulumi"], capture_output=True, text=True
    )
    assert "No module named 'pulumi'" in bare.stderr


def test_the_bundle_is_the_model_package_and_an_empty_top_level_init():
    files = bundle.program_files()
    assert files["pulumi_modelstore/__init__.py"] == ""
    model = bundle.MODEL_DIR
    assert {p for p in files if p != "pulumi_modelstore/__init__.py"} == {
        f"pulumi_modelstore/model/{m.name}" for m in model.glob("*.py")
    }


def test_the_bundle_digest_follows_every_program_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "model"
    shutil.copytree(bundle.MODEL_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(bundle, "MODEL_DIR", copy)
    before = bundle.bundle_digest()
    assert bundle.bundle_digest() == before  # deterministic
    seed = copy / "seed.py"
    seed.write_text(seed.read_text() + "\n# one more line\n")
    assert bundle.bundle_digest() != before


def test_the_bundle_fits_a_configmap() -> None:
    size = sum(len(p.encode()) + len(t.encode()) for p, t in bundle.program_files().items())
    # Half the limit: room for the programs to grow and for the object's metadata.
    assert size < CONFIGMAP_LIMIT // 2, size


def test_command_names_only_the_programs() -> None:
    with pytest.raises(
        ValueError, match=r"^program must be one of seed, verify, source_manifest, got 'x'$"
    ):
        bundle.command("x", "/opt/modelstore")
