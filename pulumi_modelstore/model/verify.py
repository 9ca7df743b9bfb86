"""Verify a published revision as readers see it: ``python -m pulumi_modelstore.model.verify``.

::

    python -m pulumi_modelstore.model.verify --root /store --revision <rev> \\
        [--all | --sample N] [--label <store>/<namespace>] [--termination-log PATH]

``--files <dir> --manifest <path>`` replace ``--root`` for a pod that mounts the revision's
``subPath`` exactly as readers do (and the manifest's directory beside it).

Reads only (readers' mounts are read-only). In order:

1. Reads ``.modelstore/<revision>/manifest.json`` and checks it is whole (its digest) and for
   this revision.
2. Checks every file it lists is under ``revisions/<revision>/`` with its size, and can be
   opened for reading, and that the revision holds nothing else: a file (or a symbolic link)
   the manifest does not list fails it (a file written after the seed, or left by one that
   did not finish, is served to readers unchecked). Where the revision is the volume's root
   (Hyperdisk ML), the store's own ``.modelstore/`` beside the files is not the model's.
3. Measures sequential read throughput on the largest files (before any hashing, so the page
   cache does not flatter it), up to ``--read-bytes`` (default 2 GiB).
4. Checks sha256: of every file with ``--all``; of N files chosen at random with
   ``--sample N``; by default of every file when the model is at most
   :data:`WHOLE_MODEL_BYTES`, else of files chosen at random until that many bytes are hashed.

It writes one line to the termination message file (``--termination-log``, default
``/dev/termination-log``) and stdout, ``ok: 12 files, 15.2 GiB, sha256 all, read 812 MB/s``,
or ``FAILED: <label>: <cause>`` (stderr) with an exit status per cause
(:class:`Failure`): permission denied, a missing file, a size mismatch, a sha256 mismatch, a
missing or torn manifest, a file the manifest does not list.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from .layout import STATE, Layout, manifest_digest, write_termination

GIB = 1 << 30
CHUNK = 16 << 20  # 16 MiB reads: big sequential requests, as a model loader makes
# Whole-model sha256 up to 32 GiB (every file of a model up to ~16B parameters in bf16), a
# random sample of that size above. Measured on the development machine (AMD EPYC with SHA
# extensions, 2 shared cores, 2026-12-01): reading a 512 MiB file from the page cache in
# 16 MiB reads and hashing it ran at 1,020-1,070 MB/s (3 runs; hashlib alone on memory:
# 2,200 MB/s), so 32 GiB costs ~33 s of one core. The storage is the usual bound: at
# 400 MiB/s (Hyperdisk ML's minimum provisioned throughput, FACTS.md) 32 GiB reads in ~82 s,
# which keeps one verification Job per reader namespace near a minute or two. Above it, each
# run hashes a different random sample, so successive runs cover the model.
WHOLE_MODEL_BYTES = 32 * GIB
DEFAULT_READ_BYTES = 2 * GIB


class Failure(IntEnum):
    """Exit status per cause, so a Job's status alone tells the cause."""

    MANIFEST = 2
    PERMISSION = 3
    MISSING = 4
    SIZE = 5
    SHA256 = 6
    EXTRA = 7


class VerifyError(Exception):
    """A failed check: ``cause`` is its exit status, the message its one line."""

    def __init__(self, cause: Failure, message: str) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class VerifyResult:
    """What passed: the file count and bytes, how much was hashed, the read speed."""

    files: int
    total_bytes: int
    hashed: int
    read_mb_s: float

    def line(self) -> str:
        scope = "all" if self.hashed == self.files else f"{self.hashed} of {self.files} files"
        return (
            f"ok: {self.files} files, {self.total_bytes / GIB:.1f} GiB, sha256 {scope}, "
            f"read {self.read_mb_s:.0f} MB/s"
        )


def load_manifest(path: Path, revision: str) -> dict[str, Any]:
    """The revision's manifest at ``path``, checked whole and for this revision."""
    try:
        manifest: dict[str, Any] = json.loads(path.read_text())
    except PermissionError:
        raise VerifyError(Failure.PERMISSION, f"permission denied reading {path}") from None
    except FileNotFoundError:
        raise VerifyError(
            Failure.MANIFEST, f"revision {revision} is not published: no {path}"
        ) from None
    except json.JSONDecodeError:
        raise VerifyError(Failure.MANIFEST, f"manifest {path} is not valid JSON") from None
    if manifest.get("digest") != manifest_digest(manifest):
        raise VerifyError(Failure.MANIFEST, f"manifest {path} does not match its own digest")
    if manifest.get("revision") != revision:
        raise VerifyError(
            Failure.MANIFEST,
            f"manifest {path} is for revision {manifest.get('revision')}, not {revision}",
        )
    return manifest


def check_present(base: Path, entries: list[dict[str, Any]]) -> None:
    """Every file there, at its size, and readable."""
    for entry in entries:
        path = base / entry["path"]
        try:
            size = path.stat().st_size
            path.open("rb").close()
        except PermissionError:
            raise VerifyError(
                Failure.PERMISSION, f"permission denied reading {entry['path']}"
            ) from None
        except FileNotFoundError:
            raise VerifyError(Failure.MISSING, f"missing file {entry['path']}") from None
        if size != entry["size"]:
            raise VerifyError(
                Failure.SIZE,
                f"size mismatch in {entry['path']}: the manifest says {entry['size']} bytes, "
                f"found {size}",
            )


def check_nothing_else(base: Path, entries: list[dict[str, Any]]) -> None:
    """No file (nor symbolic link) under ``base`` but those ``entries`` list; ``.modelstore/``
    at the top is the store's own (a revision at the volume's root, module docstring)."""
    listed = {entry["path"] for entry in entries}
    for dirpath, dirnames, filenames in os.walk(base):
        where = Path(dirpath).relative_to(base)
        if where == Path("."):
            dirnames[:] = [d for d in dirnames if d != STATE]
        links = [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
        for name in sorted(filenames + links):
            rel = (where / name).as_posix()
            if rel not in listed:
                raise VerifyError(
                    Failure.EXTRA,
                    f"{rel} is in the revision but not in its manifest (written after the "
                    f"seed, or left by one that did not finish): readers would load it unchecked",
                )


def read_throughput(base: Path, entries: list[dict[str, Any]], budget: int) -> float:
    """MB/s (10^6 bytes) reading the largest files sequentially, up to ``budget`` bytes."""
    done = 0
    started = time.perf_counter()
    for entry in sorted(entries, key=lambda e: e["size"], reverse=True):
        with (base / entry["path"]).open("rb", buffering=0) as stream:
            while done < budget and (chunk := stream.read(CHUNK)):
                done += len(chunk)
        if done >= budget:
            break
    elapsed = time.perf_counter() - started
    return done / 1e6 / elapsed if elapsed > 0 else 0.0


def choose(entries: list[dict[str, Any]], sample: int | None) -> list[dict[str, Any]]:
    """The files to hash: ``sample`` None means the default rule (module docstring), 0 all."""
    if sample == 0:
        return entries
    shuffled = random.SystemRandom().sample(entries, len(entries))
    if sample is not None:
        return shuffled[:sample]
    if sum(e["size"] for e in entries) <= WHOLE_MODEL_BYTES:
        return entries
    chosen, total = [], 0
    for entry in shuffled:
        if total >= WHOLE_MODEL_BYTES:
            break
        chosen.append(entry)
        total += entry["size"]
    return chosen


def check_sha256(base: Path, entries: list[dict[str, Any]]) -> None:
    """Each file's sha256 against the manifest."""
    for entry in entries:
        digest = hashlib.sha256()
        with (base / entry["path"]).open("rb", buffering=0) as stream:
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
        if digest.hexdigest() != entry["sha256"]:
            raise VerifyError(Failure.SHA256, f"sha256 mismatch in {entry['path']}")


def verify(
    root: Path | None,
    revision: str,
    *,
    sample: int | None = None,
    read_bytes: int = DEFAULT_READ_BYTES,
    files_dir: Path | None = None,
    manifest_path: Path | None = None,
    manifest_sha256: str | None = None,
) -> VerifyResult:
    """Verify ``revision`` under the store root ``root`` (see the module docstring).
    ``sample``: None for the default rule, 0 for every file, N for N random files.
    ``files_dir`` and ``manifest_path`` replace the paths under ``root`` (default
    ``revisions/<revision>`` and ``.modelstore/<revision>/manifest.json``): for a pod that
    mounts the revision's ``subPath`` as readers do, and the manifest's directory beside it.
    ``manifest_sha256``: the pinned manifest digest (default: none); another is refused."""
    if root is None and (files_dir is None or manifest_path is None):
        raise ValueError("verify needs root, or both files_dir and manifest_path")
    layout = Layout(root or Path("/"))
    manifest = load_manifest(manifest_path or layout.manifest(revision), revision)
    if manifest_sha256 is not None and manifest["digest"] != manifest_sha256:
        raise VerifyError(
            Failure.MANIFEST,
            f"manifest of revision {revision} is {manifest['digest']}, not the pinned "
            f"{manifest_sha256}",
        )
    entries: list[dict[str, Any]] = manifest["files"]
    base = files_dir or layout.revision_dir(revision)
    check_present(base, entries)
    check_nothing_else(base, entries)
    mb_s = read_throughput(base, entries, read_bytes)
    hashed = choose(entries, sample)
    check_sha256(base, hashed)
    return VerifyResult(len(entries), manifest["total_bytes"], len(hashed), mb_s)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (0, or a :class:`Failure`)."""
    parser = argparse.ArgumentParser(
        prog="python -m pulumi_modelstore.model.verify", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--root", type=Path, help="the store's root (mounted)")
    parser.add_argument("--files", type=Path, help="the revision's directory (else under root)")
    parser.add_argument("--manifest", type=Path, help="its manifest.json (else under root)")
    parser.add_argument("--revision", required=True)
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--all", action="store_true", help="sha256 of every file")
    how.add_argument("--sample", type=int, help="sha256 of N files chosen at random")
    parser.add_argument("--read-bytes", type=int, default=DEFAULT_READ_BYTES)
    parser.add_argument("--label", default="", help="<store>/<namespace>, named on failure")
    parser.add_argument("--manifest-sha256", help="refuse any other manifest (sha256:<hex>)")
    parser.add_argument("--termination-log", default="/dev/termination-log")
    args = parser.parse_args(argv)
    if args.root is None and (args.files is None or args.manifest is None):
        parser.error("--root is required unless both --files and --manifest are given")
    if args.sample is not None and args.sample < 1:
        parser.error(f"--sample must be 1 or more, got {args.sample}")
    try:
        result = verify(
            args.root,
            args.revision,
            sample=0 if args.all else args.sample,
            read_bytes=args.read_bytes,
            files_dir=args.files,
            manifest_path=args.manifest,
            manifest_sha256=args.manifest_sha256,
        )
    except VerifyError as error:
        label = f"{args.label}: " if args.label else ""
        line = f"FAILED: {label}{error}"
        print(line, file=sys.stderr)
        write_termination(args.termination_log, line)
        return int(error.cause)
    line = result.line()
    print(line)
    write_termination(args.termination_log, line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
