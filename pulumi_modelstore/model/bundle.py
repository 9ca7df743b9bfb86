"""The seed and verification programs as files a Job mounts (a ConfigMap), so the Job's image
needs Python and nothing else: no wheel of this package, no pulumi.

The programs are this package's own ``model`` modules, byte for byte (one source of truth); the
bundle adds an empty ``pulumi_modelstore/__init__.py`` so ``python -m
pulumi_modelstore.model.seed`` imports the programs without the library's ``__init__`` (which
imports pulumi).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

MODEL_DIR = Path(__file__).resolve().parent
PACKAGE = "pulumi_modelstore"


def program_files() -> dict[str, str]:
    """Relative path (as ``PYTHONPATH`` sees it) -> text: the ``model`` package's modules and
    an empty top-level package ``__init__``. Sorted by path, so the bundle is deterministic."""
    files = {f"{PACKAGE}/__init__.py": ""}
    for module in sorted(MODEL_DIR.glob("*.py")):
        files[f"{PACKAGE}/model/{module.name}"] = module.read_text(encoding="utf-8")
    return dict(sorted(files.items()))


def bundle_digest() -> str:
    """sha256 over every path and text of :func:`program_files`: names the ConfigMap, so a
    change to the programs makes a new one (and new Jobs) instead of editing one in place."""
    digest = hashlib.sha256()
    for path, text in program_files().items():
        digest.update(path.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()


PROGRAMS = ("seed", "verify", "source_manifest")


def command(program: str, root: str) -> list[str]:
    """The argv that runs ``program`` (one of :data:`PROGRAMS`) from the bundle mounted at
    ``root``, before the program's own arguments: ``python -I -S -u``, so the interpreter
    reads no ``PYTHON*`` variable, no user or site packages and not the working directory (the
    image's Python and this bundle are all it can import). ``-I`` also ignores
    ``PYTHONPATH``, hence ``root`` goes on ``sys.path`` in the one-line launcher, and
    ``PYTHONUNBUFFERED``, hence ``-u``: each progress line reaches the Job's log when it is
    written."""
    if program not in PROGRAMS:
        raise ValueError(f"program must be one of {', '.join(PROGRAMS)}, got {program!r}")
    launcher = (
        f"import runpy,sys;sys.path.insert(0,{root!r});"
        f"runpy.run_module('{PACKAGE}.model.{program}',run_name='__main__',alter_sys=True)"
    )
    return ["python", "-I", "-S", "-u", "-c", launcher]
