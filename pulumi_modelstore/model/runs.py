"""Seed runs of one revision that overlap, die and run again (``--publish rename``).

A Job's replacement pod can start while the old one still runs (a node lost, a pod evicted):
two runs of one revision at once. So, under the revision's partial folder
``.modelstore/partial/<revision>/``:

- ``lock``: made with ``O_CREAT | O_EXCL`` (one run holds it; NFS, EFS, Lustre
  and Azure Files NFS create exclusively) and holding the run's id. The holder touches it
  every :data:`HEARTBEAT_SECONDS`; another run waits, polling, and takes it over once it has
  not changed for :data:`STALE_SECONDS` (or is that old by the clock): the holder is gone (a
  pod killed without its ``finally``). A holder whose lock file is no longer its own stops
  before it publishes anything.
- ``run-<id>/``: what one run downloads, its own folder (the id is unique per pod
  and process), renamed whole to ``revisions/<revision>/`` to publish.
- ``run-<id>.done``: one JSON line per file downloaded and checked (its path, what
  the source listed for it, its sha256), written after the file is flushed to disk. The next
  run that holds the lock moves those files into its own folder instead of downloading them
  again, and removes whatever else earlier runs left (a failed run's partial folder). A
  revision's partial folder that no live run holds is removed by the next seed of any other
  revision (a revision given up after a failure).

The Jobs set ``podReplacementPolicy: Failed`` too, so Kubernetes itself starts a replacement
only once the old pod has stopped (kube/model_jobs.py); the lock keeps a run from publishing
over another whatever starts them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HEARTBEAT_SECONDS = 30.0
STALE_SECONDS = 300.0
POLL_SECONDS = 1.0
RUN_PREFIX = "run-"
DONE_SUFFIX = ".done"
LOCK = "lock"


def new_run_id() -> str:
    """A run's id: the host name (a pod's name), the process id and a random part."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname() or "host")[:63]
    return f"{host}-{os.getpid()}-{secrets.token_hex(4)}"


def say(line: str) -> None:
    """A progress line for the Job's log (stderr: stdout carries the result line)."""
    print(line, file=sys.stderr, flush=True)


class RevisionLock:
    """The lock file of one revision (module docstring): ``heartbeat``, ``stale`` and ``poll``
    in seconds."""

    def __init__(
        self,
        path: Path,
        run: str,
        *,
        heartbeat: float = HEARTBEAT_SECONDS,
        stale: float = STALE_SECONDS,
        poll: float = POLL_SECONDS,
    ) -> None:
        self.path = path
        self.run = run
        self.heartbeat = heartbeat
        self.stale = stale
        self.poll = poll
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._beat: threading.Thread | None = None

    def _owner(self) -> str | None:
        try:
            return self.path.read_text().strip() or None
        except FileNotFoundError:
            return None

    def _create(self) -> bool:
        while True:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            except FileNotFoundError:
                continue  # the folder went between the two calls (its last run finished)
            break
        with os.fdopen(fd, "w") as out:
            out.write(self.run + "\n")
            out.flush()
            os.fsync(out.fileno())
        return True

    def acquire(self) -> None:
        """Hold the lock, waiting while another live run holds it, taking over a stale one."""
        seen: tuple[Any, ...] | None = None
        since = time.monotonic()
        told = False
        while not self._create():
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                continue  # released meanwhile: try again at once
            state = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            if state != seen:
                seen, since = state, time.monotonic()
            quiet = time.monotonic() - since
            if quiet >= self.stale or time.time() - stat.st_mtime >= self.stale:
                self._take_over()
                continue
            if not told:
                say(
                    f"waiting: run {self._owner()} is seeding this revision "
                    f"({self.path}; taken over after {self.stale:.0f} s without a heartbeat)"
                )
                told = True
            time.sleep(self.poll)
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)
        self._beat.start()

    def _take_over(self) -> None:
        """Move the stale lock aside (one rename: of two runs taking over, one wins) and
        drop it."""
        owner = self._owner()
        aside = self.path.with_name(f"{self.path.name}.stale-{self.run}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        aside.unlink(missing_ok=True)
        say(f"took over the lock of run {owner}: no heartbeat for {self.stale:.0f} s")

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.heartbeat):
            if self._owner() != self.run:
                self._lost.set()
                return
            with contextlib.suppress(OSError):
                os.utime(self.path)

    def lost(self) -> bool:
        """Whether another run has taken the lock over (this run must publish nothing)."""
        return self._lost.is_set() or self._owner() != self.run

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self._owner() == self.run:
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> RevisionLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_is_live(path: Path, stale: float = STALE_SECONDS) -> bool:
    """Whether a lock file is there and touched within ``stale`` seconds (by the clock)."""
    try:
        return time.time() - path.stat().st_mtime < stale
    except FileNotFoundError:
        return False


class Run:
    """One run's folder and its record of checked files, under the revision's partial folder
    ``base`` (module docstring)."""

    def __init__(self, base: Path, run: str) -> None:
        self.base = base
        self.dir = base / f"{RUN_PREFIX}{run}"
        self.record = base / f"{RUN_PREFIX}{run}{DONE_SUFFIX}"
        self._writing = threading.Lock()  # files finish on several download threads

    def start(self) -> None:
        self.dir.mkdir(parents=True)

    def done(self, entry: dict[str, Any], listed: dict[str, Any]) -> None:
        """Record a file downloaded and checked: its bytes are flushed to disk first, so a
        recorded file is whole."""
        path = self.dir / entry["path"]
        with path.open("rb") as stream:
            os.fsync(stream.fileno())
        line = json.dumps({**entry, "listed": listed}, sort_keys=True) + "\n"
        with self._writing, self.record.open("a") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())

    def adopt(self, wanted: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Move into this run's folder the files earlier runs recorded as checked, where what
        the source lists for them now (``wanted``: path -> listing) is what it listed then and
        the file is there at its size; then remove everything else earlier runs left. Returns
        path -> manifest entry of the files taken over (recorded again as this run's)."""
        taken: dict[str, dict[str, Any]] = {}
        for record in sorted(self.base.glob(f"{RUN_PREFIX}*{DONE_SUFFIX}")):
            if record == self.record:
                continue
            folder = record.with_name(record.name[: -len(DONE_SUFFIX)])
            for entry, listed in _records(record):
                path = entry["path"]
                if path in taken or wanted.get(path) != listed:
                    continue
                found = folder / path
                if not found.is_file() or found.stat().st_size != listed["size"]:
                    continue
                (self.dir / path).parent.mkdir(parents=True, exist_ok=True)
                os.rename(found, self.dir / path)
                taken[path] = entry
                self.done(entry, listed)
        for leftover in self.base.iterdir():
            if leftover not in (self.dir, self.record) and leftover.name != LOCK:
                remove(leftover)
        return taken

    def finish(self) -> None:
        """After the publish: the record goes (the revision's partial folder goes once the
        lock in it is released)."""
        self.record.unlink(missing_ok=True)


def _records(path: Path) -> Iterable[tuple[dict[str, Any], dict[str, Any]]]:
    """The (entry, listing) pairs a record holds; a torn last line is skipped."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return
    for line in lines:
        try:
            item = json.loads(line)
            listed = item.pop("listed")
        except (ValueError, KeyError, AttributeError):
            continue
        if isinstance(listed, dict) and {"path", "size", "sha256"} <= set(item):
            yield {k: item[k] for k in ("path", "size", "sha256")}, listed


def remove(path: Path) -> None:
    """A file or a folder, gone (already gone is fine)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def clean_other_revisions(partial_root: Path, keep: Sequence[str]) -> list[str]:
    """Remove the partial folders of revisions other than ``keep`` that no live run holds
    (a failed run's, of a revision since given up): the names removed."""
    removed: list[str] = []
    if not partial_root.is_dir():
        return removed
    for entry in sorted(partial_root.iterdir()):
        if not entry.is_dir() or entry.name in keep:
            continue
        if lock_is_live(entry / LOCK):
            continue
        remove(entry)
        removed.append(entry.name)
    return removed


class InPlaceRecords:
    """Per-file records for a seed that writes straight into ``revisions/<revision>/``
    (``--publish manifest-last``, object-store mounts): one small file per file checked under
    ``folder`` (``.modelstore/partial/<revision>/done/``), each written once, since an object
    store mount cannot append to a file. A rerun keeps the files they record (where the source
    lists them alike and the file is there at its size) and removes every other file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _record(self, path: str) -> Path:
        return self.folder / (hashlib.sha256(path.encode()).hexdigest() + ".json")

    def done(self, entry: dict[str, Any], listed: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        record = self._record(entry["path"])
        record.unlink(missing_ok=True)  # a file the source changed: its new record
        record.write_text(json.dumps({**entry, "listed": listed}, sort_keys=True) + "\n")

    def keep(
        self, target: Path, wanted: dict[str, dict[str, Any]], remove_file: Any
    ) -> dict[str, dict[str, Any]]:
        """The files under ``target`` recorded as checked and still listed alike (path ->
        manifest entry); every other file under it goes through ``remove_file``."""
        recorded: dict[str, dict[str, Any]] = {}
        if self.folder.is_dir():
            for record in self.folder.glob("*.json"):
                for entry, listed in _records(record):
                    if wanted.get(entry["path"]) == listed:
                        recorded[entry["path"]] = entry
        kept: dict[str, dict[str, Any]] = {}
        if target.is_dir():
            for dirpath, _dirs, names in os.walk(target):
                for name in names:
                    full = Path(dirpath, name)
                    rel = full.relative_to(target).as_posix()
                    found = recorded.get(rel)
                    if found is not None and full.stat().st_size == found["size"]:
                        kept[rel] = found
                    else:
                        remove_file(full)
        return kept
