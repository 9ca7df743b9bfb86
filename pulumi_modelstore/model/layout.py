"""Where a store keeps its revisions, and the manifest that publishes one.

Under the store's root::

    revisions/<revision>/...                 the published files, what readers mount (subPath)
    .modelstore/<revision>/manifest.json     written last: its presence publishes the revision
    .modelstore/partial/<revision>/...       downloads in progress, never read by readers: the
                                             revision's lock and a folder per run (runs.py)

The manifest holds the source, the revision, the include patterns that selected the files
(from format 2 on: sorted, each once; empty for every file), every file's path, size and
sha256, when it was published, and ``digest``: the sha256 of the manifest's canonical JSON
(sorted keys, no spaces) without that key and, from format 2 on, without ``published_at``, so
a consumer can pin the exact manifest, a reader can tell a torn one, and the same files seeded
again (a store rebuilt, a revision collected and seeded anew) give the same digest: a pinned
``manifest_sha256`` can be seeded again. Format 1 manifests (the digest over ``published_at``
too, no include patterns) are still read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 2
# What the digest is not taken over: the digest itself and, from format 2 on, the publish time
# (when a revision was published says nothing of its content).
UNDIGESTED = ("digest", "published_at")
UNDIGESTED_FORMAT_1 = ("digest",)
STATE = ".modelstore"
REVISIONS = "revisions"


@dataclass(frozen=True)
class Layout:
    """The paths of one store root."""

    root: Path

    def revision_dir(self, revision: str) -> Path:
        return self.root / REVISIONS / revision

    def manifest(self, revision: str) -> Path:
        return self.root / STATE / revision / "manifest.json"

    def partial(self, revision: str) -> Path:
        return self.root / STATE / "partial" / revision

    def published(self) -> list[str]:
        """Revisions with a directory under ``revisions/``, published or not."""
        base = self.root / REVISIONS
        return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def canonical(body: dict[str, Any]) -> bytes:
    """The bytes the manifest digest is taken over."""
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def manifest_digest(manifest: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the manifest without its ``digest`` key and, from format 2 on, its
    ``published_at`` (module docstring)."""
    skipped = UNDIGESTED_FORMAT_1 if manifest.get("format") == 1 else UNDIGESTED
    body = {k: v for k, v in manifest.items() if k not in skipped}
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def include_key(include: Sequence[str]) -> list[str]:
    """The include patterns as a manifest records them: sorted, each once (the files they
    select do not depend on their order)."""
    return sorted(set(include))


def make_manifest(
    source: str,
    revision: str,
    files: list[dict[str, Any]],
    published_at: str,
    include: Sequence[str] = (),
) -> dict[str, Any]:
    """A manifest for ``files`` (each ``{"path", "size", "sha256"}``) selected by ``include``
    (default: none, every file), its digest included."""
    body: dict[str, Any] = {
        "format": FORMAT,
        "source": source,
        "revision": revision,
        "include": include_key(include),
        "published_at": published_at,
        "total_bytes": sum(f["size"] for f in files),
        "files": sorted(files, key=lambda f: f["path"]),
    }
    return {**body, "digest": manifest_digest(body)}


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``path`` so that a reader sees the old file or the whole new one, never a part:
    a temporary file beside it, flushed to disk, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    tmp.replace(path)
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    """Flush a directory's entries (a rename is durable only once its directory is)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass  # some network file systems refuse fsync on a directory; the rename stands
    finally:
        os.close(fd)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it, as ``shutil.rmtree`` does, on every mount the
    store uses, Mountpoint for S3's included. Mountpoint deletes files (with
    ``allow-delete``) but never removes a directory that S3 knows through its files: ``rmdir``
    of one fails with EPERM, and it is gone once its last file is (awslabs/mountpoint-s3
    doc/SEMANTICS.md, "Directory operations", at mountpoint-s3-1.22.3; superblock.rs
    ``rmdir``, ``CannotRemoveRemoteDirectory``). So a directory that vanished (ENOENT), or
    that refuses ``rmdir`` with EPERM while no file is left below it, counts as removed; a
    path that is already gone too. Anything else (a file that cannot be deleted, a directory
    still holding a file) raises as ``rmtree`` would. A lookup the mount serves from its
    metadata cache may still find such a directory, empty: make it again with
    ``exist_ok``."""
    try:
        entries = list(os.scandir(path))
    except FileNotFoundError:
        return
    except NotADirectoryError:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            remove_tree(Path(entry.path))
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return
    except PermissionError:
        if any(files for _, _, files in os.walk(path)):
            raise


def report_one_line(
    termination_log: str | None,
    run: Callable[[], str],
    refusals: tuple[type[Exception], ...],
) -> int:
    """A Job's command around ``run`` (which returns its result line): the line on stdout and
    exit status 0; one of ``refusals`` as ``FAILED: <cause>``, any other exception (a network
    or client error) as ``FAILED: <type>: <cause>``, on stderr with exit status 1. Either line
    goes to ``termination_log`` too (:func:`write_termination`)."""
    try:
        line = run()
    except refusals as error:
        line = f"FAILED: {error}"
    except Exception as error:  # still one line for the Job
        line = f"FAILED: {type(error).__name__}: {error}"
    else:
        print(line)
        write_termination(termination_log, line)
        return 0
    print(line, file=sys.stderr)
    write_termination(termination_log, line)
    return 1


def write_termination(path: str | None, line: str) -> None:
    """Write the one-line result to the termination message file Kubernetes reads
    (``/dev/termination-log`` in a Job), ignoring a path that cannot be written outside a pod."""
    if not path:
        return
    with contextlib.suppress(OSError):
        Path(path).write_text(line + "\n")
