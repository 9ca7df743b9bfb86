"""Moving a revision's bytes: many files and ranged parts at once over kept-alive connections,
each file checked against what its source publishes, every request retried.

The seed calls :func:`download` with the files it keeps. A pool of :data:`WORKERS` threads
takes parts off one schedule: a file up to :data:`PART` bytes is one request, a larger one is
cut into :data:`PART`-byte ranges (``Range: bytes=a-b``), and at most :data:`WIDTH` large
files are in flight at once, their parts taken in turn, so several files' digests are computed
side by side and a file is finished (closed, checked) as soon as its last part is in. Each
thread keeps one ``http.client`` connection per origin (scheme, host, port) for every request
it makes: no TCP or TLS handshake per file. A part is read with ``readinto`` straight into a
buffer from a fixed pool (no copy in Python); the thread that completes the part a file waits
for next hashes it and writes it, then any later parts already in, in order: a file's sha256
is sequential, and its bytes are written front to back (Mountpoint for S3 takes sequential
writes only: awslabs/mountpoint-s3 ``doc/SEMANTICS.md``, "Writes"). The pool bounds memory:
:data:`BUFFERS` parts of :data:`PART` bytes.

Every request follows :data:`.net.RETRY`: a status of :data:`.net.RETRY_STATUS` (a 429 with
``Retry-After``, a 5xx, S3's 503 SlowDown) or a dropped connection is asked again after the
policy's backoff; a body cut short is asked again from the first byte that did not arrive
(``Range``), keeping what did. A redirect is followed by the thread itself, keeping the token
only to the same origin (:func:`.net.keeps_authorization`), and its target reused for the
file's next parts. Any other answer fails the seed with one line naming the request.

A source downloads this way when it has ``request(file)`` (the URL and headers of a GET of the
file's bytes, made anew for each request: a signature or token that expires is redone); it may
have ``published(file, headers)`` (digests the answer's headers publish, where the listing had
none) and ``hint(status)`` (what an error status likely means). A source without ``request``
(a local directory) is read with ``open(file)``, part by part through ``seek``.

The standard library only, as every module of this package: the seed runs in the image's
Python with nothing installed.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import queue
import ssl
import threading
import urllib.parse
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import crc, net
from .net import (
    RETRY_STATUS,
    USER_AGENT,
    Retry,
    SourceError,
    keeps_authorization,
    origin,
    retry_after,
    service_message,
)
from .runs import say

PART = 8 << 20  # a ranged request's size: what Mountpoint for S3 reads a part at; the
# request's cost vanishes, and the buffers of a mid-sized model are few to fill
WORKERS = 8  # threads, each with its own connections: a node's NIC, not one TCP stream
WIDTH = 4  # large files in flight at once: their sha256s run side by side
BUFFERS = 2 * WORKERS  # parts held in memory at most (BUFFERS * PART bytes)
TIMEOUT = 300.0  # a socket read that waits longer fails the try (and is retried)
REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 10


class SeedError(Exception):
    """A seed that cannot finish; its message is the one line the Job reports."""


# The CRCs S3 keeps that the standard library lacks run in pure Python (model/crc.py, a few
# tens of MB/s on one core): checked for files up to this size, where nothing stronger is
# published; above it the size is checked and the seed says so (the manifest's sha256, which
# the verification Jobs check, stands).
PURE_CRC_MAX_BYTES = 1 << 30


class FileDigests:
    """The digests of one file's bytes as they arrive, and the check of them against what its
    source publishes (``file``: a :class:`.sources.SourceFile`): the size, the sha256 (LFS
    sha256, S3 whole-object checksum), the Git blob id of a Hugging Face file kept in Git, and
    where the source publishes no sha256 the first it publishes of: MD5 (Cloud Storage's
    ``md5Hash``, Azure's ``Content-MD5``, a single-part S3 ETag), S3's CRC-32 (``zlib``),
    CRC-64/NVME or CRC-32C (:mod:`.crc`, up to :data:`PURE_CRC_MAX_BYTES`). :meth:`publish`
    adds what the bytes' answer published."""

    def __init__(self, file: Any, rel: str) -> None:
        self.file = file
        self.rel = rel
        self.sha256 = hashlib.sha256()
        # A Git blob id is the sha1 of "blob <size>\0" and the bytes.
        self.git = hashlib.sha1(f"blob {file.size}\0".encode()) if file.git_sha1 else None
        self.published: str | None = file.sha256
        self.published_md5: str | None = file.md5
        self.md5: Any = None
        self.crc: tuple[str, str, Any] | None = None  # (name, published hex, running CRC)
        self.size = 0
        self.publish(None, None)

    def publish(self, sha256: str | None, md5: str | None) -> None:
        """What the source published when the bytes were asked for, where the listing
        published nothing; before any byte is added."""
        self.published = self.published or sha256
        self.published_md5 = self.published_md5 or md5
        # MD5 only where the source publishes nothing stronger: it is the one digest Cloud
        # Storage and Azure Blob keep for a whole object.
        wanted = bool(self.published_md5) and not self.published
        self.md5 = hashlib.md5(usedforsecurity=False) if wanted else None
        self.crc = None if self.published or wanted else _crc_check(self.file, self.rel)

    def update(self, chunk: Any) -> None:
        self.sha256.update(chunk)
        if self.git is not None:
            self.git.update(chunk)
        if self.md5 is not None:
            self.md5.update(chunk)
        if self.crc is not None:
            self.crc[2].update(chunk)
        self.size += len(chunk)

    def entry(self) -> dict[str, Any]:
        """The file's manifest entry, or :class:`SeedError` naming the first mismatch."""
        rel, file = self.rel, self.file
        digest = self.sha256.hexdigest()
        if self.size != file.size:
            raise SeedError(
                f"size mismatch in {rel}: the source lists {file.size} bytes, {self.size} arrived"
            )
        if self.published is not None and digest != self.published:
            raise SeedError(
                f"sha256 mismatch in {rel}: the source publishes {self.published}, "
                f"the bytes that arrived hash to {digest}"
            )
        if self.md5 is not None and self.md5.hexdigest() != self.published_md5:
            raise SeedError(
                f"md5 mismatch in {rel}: the source publishes {self.published_md5}, "
                f"the bytes that arrived hash to {self.md5.hexdigest()}"
            )
        if self.crc is not None:
            name, published, running = self.crc
            value = running.hexdigest()
            if value != published:
                raise SeedError(
                    f"{name} mismatch in {rel}: the source publishes {published}, the bytes "
                    f"that arrived give {value}"
                )
        if self.git is not None and self.git.hexdigest() != file.git_sha1:
            raise SeedError(
                f"git blob id mismatch in {rel}: the source publishes {file.git_sha1}, "
                f"the bytes that arrived give {self.git.hexdigest()}"
            )
        return {"path": rel, "size": self.size, "sha256": digest}


class _Zlib32:
    """CRC-32 (zlib's) with :class:`.crc.Crc`'s interface."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Any) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


def _crc_check(file: Any, rel: str) -> tuple[str, str, Any] | None:
    """The CRC to check a file by where it publishes no sha256 or MD5 (class docstring)."""
    published = getattr(file, "crc32", None)
    if published:
        return "crc32", published, _Zlib32()
    for name, spec in (("crc64nvme", crc.CRC64NVME), ("crc32c", crc.CRC32C)):
        published = getattr(file, name, None)
        if not published:
            continue
        if file.size > PURE_CRC_MAX_BYTES:
            say(
                f"{rel}: its {name} is not checked ({file.size} bytes, over the pure-Python "
                f"CRC's {PURE_CRC_MAX_BYTES} bytes); its size is, and its sha256 goes into the "
                f"manifest"
            )
            return None
        return name, published, crc.Crc(spec)
    return None


class Connections:
    """One thread's kept-alive connections, one per origin."""

    def __init__(self, timeout: float = TIMEOUT) -> None:
        self.timeout = timeout
        self.open: dict[tuple[str, str, int], http.client.HTTPConnection] = {}
        self.context: ssl.SSLContext | None = None

    def get(self, url: str, headers: dict[str, str]) -> http.client.HTTPResponse:
        """The answer to ``GET url``, the connection kept for the next request; a connection
        the server closed while it was idle is opened again once."""
        key = origin(url)
        parts = urllib.parse.urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        for fresh in (False, True):
            conn = self.open.get(key)
            reused = conn is not None
            if conn is None:
                conn = self._connect(key)
            try:
                conn.request("GET", path, headers=headers)
                return conn.getresponse()
            except (OSError, http.client.HTTPException):
                self.drop(url)
                # A kept connection the server had closed: once more on a new one.
                if fresh or not reused:
                    raise
        raise AssertionError("unreachable: the loop returns or raises")

    def _connect(self, key: tuple[str, str, int]) -> http.client.HTTPConnection:
        scheme, host, port = key
        conn: http.client.HTTPConnection
        if scheme == "https":
            if self.context is None:
                self.context = ssl.create_default_context()
            conn = http.client.HTTPSConnection(
                host, port, timeout=self.timeout, context=self.context
            )
        elif scheme == "http":
            conn = http.client.HTTPConnection(host, port, timeout=self.timeout)
        else:
            raise SourceError(f"cannot download from {scheme}:// (http or https only)")
        self.open[key] = conn
        return conn

    def drop(self, url: str) -> None:
        conn = self.open.pop(origin(url), None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        for conn in self.open.values():
            conn.close()
        self.open.clear()


class _File:
    """One file being downloaded: its parts, the next one to hash and write, and where its
    GETs go (the source's URL, or where it redirected)."""

    def __init__(self, source: Any, file: Any, rel: str, path: Path) -> None:
        self.source = source
        self.file = file
        self.rel = rel
        self.path = path
        self.parts = max(1, -(-file.size // PART))
        self.dispatched = 0  # parts handed to a worker (under the schedule's lock)
        self.lock = threading.Lock()
        self.ready: dict[int, tuple[bytearray, int]] = {}
        self.next = 0  # the part to hash and write next
        self.busy = False  # a thread is hashing and writing this file's parts
        self.fd = -1
        self.offset = 0
        self.digests = FileDigests(file, rel)
        self.target: tuple[str, dict[str, str]] | None = None  # a redirect's target, kept
        self.entry: dict[str, Any] | None = None

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)


class Transfer:
    """One :func:`download` run: the schedule, the buffer pool, the workers."""

    def __init__(
        self,
        source: Any,
        jobs: list[_File],
        workers: int = WORKERS,
        policy: Retry | None = None,
        done: Callable[[dict[str, Any], Any], None] | None = None,
    ) -> None:
        self.source = source
        self.done = done
        self.pending = list(reversed(jobs))
        self.active: list[_File] = []
        self.turn = 0
        self.lock = threading.Lock()
        self.failure: BaseException | None = None
        self.workers = max(1, min(workers, sum(j.parts for j in jobs)))
        self.pool: queue.SimpleQueue[bytearray] = queue.SimpleQueue()
        # Made when first needed (a buffer is a PART-byte allocation): a revision of small
        # files uses one per worker.
        self.unmade = min(BUFFERS, self.workers * 2)
        # No larger than the largest file: a revision of small files holds small buffers.
        self.buffer_size = max(1, min(PART, max((j.file.size for j in jobs), default=0)))
        self.policy = policy or net.RETRY
        self.http = hasattr(source, "request")

    def run(self) -> None:
        threads = [
            threading.Thread(target=self._work, name=f"seed-{n}", daemon=True)
            for n in range(self.workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if self.failure is not None:
            raise self.failure

    def _next(self) -> tuple[_File, int] | None:
        """The next part to fetch: large files' parts in turn, at most :data:`WIDTH` files
        open at once (a small file is one part, in and out at once)."""
        with self.lock:
            if self.failure is not None:
                return None
            while len(self.active) < WIDTH and self.pending:
                job = self.pending.pop()
                job.open()
                self.active.append(job)
            if not self.active:
                return None
            self.turn %= len(self.active)
            job = self.active[self.turn]
            index = job.dispatched
            job.dispatched += 1
            if job.dispatched == job.parts:
                self.active.pop(self.turn)
            else:
                self.turn += 1
            return job, index

    def _work(self) -> None:
        conns = Connections()
        try:
            while True:
                # The buffer first, then the part: parts are taken in each file's order, so
                # a file's next part to hash always holds a buffer and the pool cannot run
                # dry with every buffer waiting on it.
                buffer = self._buffer()
                if buffer is None:
                    return  # failed: the buffers may be held by a file that will not finish
                task = self._next()
                if task is None:
                    self.pool.put(buffer)
                    return
                job, index = task
                if self.http:
                    size = self._fetch(conns, job, index, buffer)
                else:
                    size = self._read(job, index, buffer)
                self._completed(job, index, buffer, size)
        except BaseException as error:
            with self.lock:
                if self.failure is None:
                    self.failure = error
        finally:
            conns.close()

    def _buffer(self) -> bytearray | None:
        """A free buffer, made if the pool may still grow; None once the run failed."""
        while True:
            try:
                return self.pool.get_nowait()
            except queue.Empty:
                pass
            with self.lock:
                if self.unmade > 0:
                    self.unmade -= 1
                    return bytearray(self.buffer_size)
            try:
                return self.pool.get(timeout=0.5)
            except queue.Empty:
                if self.failure is not None:
                    return None

    def _read(self, job: _File, index: int, buffer: bytearray) -> int:
        """A part of a file a source opens (a local directory)."""
        start = index * PART
        length = min(PART, job.file.size - start)
        view = memoryview(buffer)
        got = 0
        with job.source.open(job.file) as stream:
            if start:
                stream.seek(start)
            while got < length:
                n = stream.readinto(view[got:length])
                if not n:
                    break
                got += n
            if index == job.parts - 1 and got == length:
                rest = 0
                while chunk := stream.read(1 << 20):
                    rest += len(chunk)
                if rest:
                    raise _too_long(job, rest)
        return got

    def _fetch(self, conns: Connections, job: _File, index: int, buffer: bytearray) -> int:
        """One part of a file into ``buffer``, over this thread's connections, tried again
        under the retry policy and resumed where a cut body stopped."""
        start = index * PART
        length = min(PART, job.file.size - start)
        view = memoryview(buffer)
        got = 0
        attempt = 0
        while True:
            attempt += 1
            url = "?"
            kept = job.target is not None
            try:
                url, headers = self._target(job)
                ranged = job.parts > 1 or got > 0
                if ranged:
                    headers = {**headers, "Range": f"bytes={start + got}-{start + length - 1}"}
                response, url = self._get(conns, job, url, headers)
                status = response.status
                if status in RETRY_STATUS:
                    wait = retry_after(response.getheader("Retry-After"))
                    _drain(conns, url, response)
                    if attempt >= self.policy.attempts:
                        raise SourceError(
                            f"source {job.source.uri}: GET {url} answered {status} "
                            f"{response.reason} {attempt} times"
                        )
                    self.policy.wait(attempt, wait)
                    continue
                if status in (401, 403) and kept and attempt < self.policy.attempts:
                    # Where a redirect led (a CDN's signed URL) expired: ask the source again.
                    job.target = None
                    _drain(conns, url, response)
                    continue
                if status not in (200, 206) or (status == 206 and not ranged):
                    raise self._refused(job, url, response)
                skip = self._check_answer(job, index, got, length, ranged, response)
                while skip:
                    n = response.readinto(view[: min(skip, len(view))])
                    if not n:
                        raise http.client.IncompleteRead(b"")
                    skip -= n
                while got < length:
                    n = response.readinto(view[got:length])
                    if not n:
                        raise http.client.IncompleteRead(bytes(0), length - got)
                    got += n
                if response.length is None and response.read(1):
                    raise _too_long(job, 1)  # a body of no stated length, longer
                return got
            except (SeedError, SourceError):
                conns.drop(url)
                raise
            except (OSError, http.client.HTTPException) as error:
                conns.drop(url)
                if attempt >= self.policy.attempts:
                    raise SourceError(
                        f"source {job.source.uri}: GET {url} failed {attempt} times, last: "
                        f"{_cause(error)}"
                    ) from None
                self.policy.wait(attempt)

    def _target(self, job: _File) -> tuple[str, dict[str, str]]:
        """Where the file's GETs go: where its first redirect led, else the source's."""
        if job.target is not None:
            return job.target
        url, headers = job.source.request(job.file)
        return url, {"User-Agent": USER_AGENT, **headers}

    def _get(
        self, conns: Connections, job: _File, url: str, headers: dict[str, str]
    ) -> tuple[http.client.HTTPResponse, str]:
        """The answer to GET ``url``, redirects followed (the token only to the same
        origin), and where it came from. A redirect's target is kept for the file's next
        parts."""
        redirected = False
        for _ in range(MAX_REDIRECTS + 1):
            response = conns.get(url, headers)
            if response.status not in REDIRECTS:
                if redirected:
                    job.target = (url, headers)
                return response, url
            location = response.getheader("Location")
            _drain(conns, url, response)
            if not location:
                raise SourceError(
                    f"source {job.source.uri}: GET {url} answered {response.status} "
                    "without a Location"
                )
            new = urllib.parse.urljoin(url, location)
            if not keeps_authorization(url, new):
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            url, redirected = new, True
        raise SourceError(f"source {job.source.uri}: more than {MAX_REDIRECTS} redirects")

    def _check_answer(
        self,
        job: _File,
        index: int,
        got: int,
        length: int,
        ranged: bool,
        response: http.client.HTTPResponse,
    ) -> int:
        """Bytes to skip before the part's first wanted byte (a server that answered a
        range with the whole file), after checking the answer is the file as listed."""
        start = index * PART + got
        if response.status == 206:
            first, _, total = (response.getheader("Content-Range") or "").partition("-")
            if first.strip().removeprefix("bytes").strip() != str(start):
                raise SourceError(
                    f"source {job.source.uri}: asked bytes from {start} of {job.rel}, got "
                    f"{response.getheader('Content-Range')}"
                )
            full = total.rpartition("/")[2]
            if full.isdigit() and int(full) != job.file.size:
                raise SeedError(
                    f"size mismatch in {job.rel}: the source lists {job.file.size} bytes, "
                    f"{full} arrived"
                )
            return 0
        # 200: the whole file.
        if response.length is not None and response.length != job.file.size:
            raise SeedError(
                f"size mismatch in {job.rel}: the source lists {job.file.size} bytes, "
                f"{response.length} arrived"
            )
        if index == 0 and got == 0:
            published = getattr(job.source, "published", None)
            if published is not None:
                job.digests.publish(*published(job.file, response.headers))
        return start if ranged else 0

    def _refused(self, job: _File, url: str, response: http.client.HTTPResponse) -> SourceError:
        """The one line for an answer that no retry changes."""
        try:
            detail = service_message(response.read(4096))
        except (OSError, http.client.HTTPException):
            detail = ""
        hint = getattr(job.source, "hint", lambda status: "")(response.status)
        return SourceError(
            f"source {job.source.uri}: GET {url} answered {response.status} {response.reason}"
            f"{f' ({detail})' if detail else ''}{f': {hint}' if hint else ''}"
        )

    def _completed(self, job: _File, index: int, buffer: bytearray, size: int) -> None:
        """Hand a fetched part to its file; the thread that completes the file's next part
        hashes and writes it and every later part already in, in order."""
        with job.lock:
            job.ready[index] = (buffer, size)
            if job.busy:
                return
            job.busy = True
        while True:
            with job.lock:
                item = job.ready.pop(job.next, None)
                if item is None:
                    job.busy = False
                    return
            buffer, size = item
            try:
                view = memoryview(buffer)[:size]
                job.digests.update(view)
                written = 0
                while written < size:
                    written += os.pwrite(job.fd, view[written:], job.offset + written)
                job.offset += size
            finally:
                self.pool.put(buffer)
            job.next += 1
            if job.next == job.parts:
                os.close(job.fd)
                job.fd = -1
                job.entry = job.digests.entry()
                if self.done is not None:
                    self.done(job.entry, job.file)


def _too_long(job: _File, more: int) -> SeedError:
    size = job.file.size
    return SeedError(
        f"size mismatch in {job.rel}: the source lists {size} bytes, at least {size + more} arrived"
    )


def _drain(conns: Connections, url: str, response: http.client.HTTPResponse) -> None:
    """Read a small answer's body so its connection is reused, or drop a large one's."""
    if response.length is not None and response.length <= 65536:
        try:
            response.read()
            return
        except (OSError, http.client.HTTPException):
            pass
    conns.drop(url)


def _cause(error: BaseException) -> str:
    if isinstance(error, http.client.IncompleteRead):
        return "the body was cut short"
    return str(error) or type(error).__name__


def download(
    source: Any,
    files: Sequence[Any],
    directory: Path,
    safe_relative: Callable[[str, str], str],
    workers: int = WORKERS,
    policy: Retry | None = None,
    done: Callable[[dict[str, Any], Any], None] | None = None,
) -> list[dict[str, Any]]:
    """Download ``files`` of ``source`` into ``directory`` (each at its relative path,
    ``safe_relative`` refusing one that escapes it), checked; their manifest entries, in the
    order given. ``done``: called with each file's entry and the file once it is written and
    checked (from the thread that finished it; default: nothing), where the seed records it
    for a rerun (:mod:`.runs`). Raises :class:`SeedError` or :class:`.net.SourceError` with
    one line."""
    jobs = []
    for file in files:
        rel = safe_relative(file.path, source.uri)
        jobs.append(_File(source, file, rel, directory / rel))
    transfer = Transfer(source, jobs, workers, policy, done)
    try:
        transfer.run()
    finally:
        for job in jobs:
            if job.fd >= 0:
                os.close(job.fd)
    entries = []
    for job in jobs:
        if job.entry is None:  # pragma: no cover - run() raised for it
            raise SeedError(f"{job.rel} was not downloaded")
        entries.append(job.entry)
    return entries
