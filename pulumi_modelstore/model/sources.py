"""Model sources: one parser for the source URI, and per scheme a source that lists the files of
a revision (with the sha256 the source publishes, where it publishes one) and streams them.

Schemes: ``hf://<org>/<repo>`` (a revision is a commit SHA), ``s3://<bucket>/<prefix>``,
``gs://<bucket>/<prefix>``, ``az://<account>/<container>/<prefix>`` and ``file:///<path>`` (a
local directory: tests and air-gapped copies). The object stores are spoken to over HTTP with
the standard library (:mod:`.aws`, :mod:`.gcs`, :mod:`.azure`), so the seed Job's image needs
no SDK.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import aws, azure, gcs
from . import names as n
from .net import (
    USER_AGENT,
    Body,
    SourceError,
    keeps_authorization,
    md5_hex,
    next_link,
    urlopen,
)
from .transfer import PART

SCHEMES = ("hf", "s3", "gs", "az", "file")
FORMS = (
    "hf://<org>/<repo>, s3://<bucket>/<prefix>, gs://<bucket>/<prefix>, "
    "az://<account>/<container>/<prefix> or file:///<absolute path>"
)
COMMIT_SHA = re.compile(r"[0-9a-f]{40}")
# A revision becomes a directory name (revisions/<revision>/): one safe path component.
REVISION_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# .modelstore/partial/ holds downloads in progress, so no revision may be called that.
RESERVED_REVISION = "partial"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"
CHUNK = 8 << 20  # 8 MiB reads: large enough that per-call overhead vanishes next to hashing


@dataclass(frozen=True)
class SourceFile:
    """One file of a revision: its path relative to the revision's root, its size, and what the
    source publishes to check its bytes against (``sha256``: hex; ``git_sha1``: the Git blob id
    of a Hugging Face file not stored with LFS; ``md5``: hex, Cloud Storage's ``md5Hash`` or
    Azure's ``Content-MD5``). None where the source publishes nothing."""

    path: str
    size: int
    sha256: str | None = None
    git_sha1: str | None = None
    md5: str | None = None
    crc32: str | None = None
    """S3's whole-object CRC-32 (``x-amz-checksum-crc32``), as hex of its big-endian bytes."""
    crc32c: str | None = None
    """S3's whole-object CRC-32C, likewise."""
    crc64nvme: str | None = None
    """S3's CRC-64/NVME (every object uploaded since S3's default integrity protections),
    likewise."""


class Source(Protocol):
    """What seed needs of a source: the files of its revision, and each file's bytes."""

    uri: str
    revision: str

    def files(self) -> list[SourceFile]:
        """Every file of the revision (before include patterns), sorted by path."""
        ...

    def open(self, file: SourceFile) -> Any:
        """A context manager yielding a binary stream of the file's bytes. The stream may
        carry ``sha256``/``md5`` (hex): what the source published when the bytes were asked
        for, checked when the listing published none."""
        ...


@dataclass(frozen=True)
class SourceURI:
    """A parsed source URI. ``location`` is the scheme's first part (the Hugging Face org/repo,
    the bucket, the storage account, or the local directory); ``container`` is Azure's only;
    ``prefix`` is the path inside the bucket or container (no leading or trailing ``/``)."""

    uri: str
    scheme: str
    location: str
    container: str = ""
    prefix: str = ""


def parse_source(uri: str) -> SourceURI:
    """Parse a model source URI, or raise :class:`SourceError` naming what is wrong."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in SCHEMES:
        raise SourceError(f"source must be {FORMS}, got {uri!r}")
    if scheme == "file":
        if not rest.startswith("/"):
            raise SourceError(f"source must be file:///<absolute path>, got {uri!r}")
        return SourceURI(uri, scheme, os.path.normpath(rest))
    parts = [p for p in rest.split("/")]
    if scheme == "hf":
        if len(parts) != 2 or not all(parts):
            raise SourceError(
                f"source must be hf://<org>/<repo> (the organisation and the repository, "
                f"nothing after them), got {uri!r}"
            )
        if not n.is_hf_repo_id(f"{parts[0]}/{parts[1]}"):
            raise SourceError(f"source must be {n.HF_REPO_ID_RULE}, got {uri!r}")
        return SourceURI(uri, scheme, f"{parts[0]}/{parts[1]}")
    if scheme == "az":
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise SourceError(
                f"source must be az://<account>/<container>/<prefix> (the storage account "
                f"and the container at least), got {uri!r}"
            )
        if not n.is_azure_account_name(parts[0]):
            raise SourceError(f"source must be az:// then {n.AZURE_ACCOUNT_RULE}, got {uri!r}")
        if not n.is_azure_container_name(parts[1]):
            raise SourceError(
                f"source must be az://<account>/ then {n.AZURE_CONTAINER_RULE}, got {uri!r}"
            )
        return SourceURI(uri, scheme, parts[0], parts[1], "/".join(parts[2:]).strip("/"))
    if not parts[0]:
        raise SourceError(f"source must be {scheme}://<bucket>/<prefix> (a bucket), got {uri!r}")
    valid, rule = (
        (n.is_s3_bucket_name, n.S3_BUCKET_RULE)
        if scheme == "s3"
        else (n.is_gcs_bucket_name, n.GCS_BUCKET_RULE)
    )
    if not valid(parts[0]):
        raise SourceError(f"source must be {scheme}:// then {rule}, got {uri!r}")
    return SourceURI(uri, scheme, parts[0], prefix="/".join(parts[1:]).strip("/"))


def check_revision(scheme: str, revision: str) -> str:
    """The revision, if it suits the scheme: a commit SHA for Hugging Face (a branch or a tag
    moves, so the bytes behind it are not one revision), else a label that is one safe path
    component (it names the directory ``revisions/<revision>/``)."""
    if scheme == "hf" and not COMMIT_SHA.fullmatch(revision):
        raise SourceError(
            "revision must be a commit SHA (40 lowercase hexadecimal characters) for a "
            "Hugging Face source: a branch or tag moves; pin the commit it points to "
            f"(the repository's commit history shows it), got {revision!r}"
        )
    if not REVISION_LABEL.fullmatch(revision) or revision == RESERVED_REVISION:
        raise SourceError(
            "revision must be 1-128 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit, other than 'partial' (it names the directories revisions/<revision>/ "
            f"and .modelstore/<revision>/, beside .modelstore/partial/), got {revision!r}"
        )
    return revision


INCLUDE_RULE = (
    "fnmatch patterns of paths inside the revision: relative, without '.', '..' or empty "
    "segments (a file's path never has them, so such a pattern matches nothing; one "
    "trailing '/' takes a folder)"
)


def can_match(pattern: str) -> bool:
    """Whether an include pattern can match a file's path at all: a path is relative and has
    no ``.``, ``..`` or empty segment (:func:`safe_relative`), so a pattern starting with
    ``/`` or holding such a segment never matches and the seed would find no file. One
    trailing ``/`` is a folder pattern (:func:`included`), not an empty segment."""
    parts = (pattern[:-1] if pattern.endswith("/") else pattern).split("/")
    return bool(pattern) and not any(p in ("", ".", "..") for p in parts)


def check_include(include: Sequence[str]) -> tuple[str, ...]:
    """The include patterns, refused when given as one string (iterated, it would be one
    pattern per character, ``*`` among them perhaps: every file) or holding a non-string."""
    if isinstance(include, str) or not all(isinstance(p, str) and p for p in include):
        raise SourceError(
            "include must be a list of fnmatch patterns such as ['*.safetensors', 'onnx/'] (a "
            f"string would be read one character at a time), got {include!r}"
        )
    return tuple(include)


def included(path: str, include: Sequence[str]) -> bool:
    """Whether a relative path matches one of the include patterns, as huggingface_hub's
    ``snapshot_download(allow_patterns=...)`` matches them (``filter_repo_objects`` and
    ``_add_wildcard_to_directories`` in ``src/huggingface_hub/utils/_paths.py``): fnmatch on
    the whole relative path, so ``*`` also crosses ``/``, and a pattern ending in ``/`` (a
    folder, ``onnx/``) matches everything under it; no patterns include every file."""
    return not include or any(
        fnmatch.fnmatchcase(path, f"{pattern}*" if pattern.endswith("/") else pattern)
        for pattern in include
    )


def safe_relative(path: str, uri: str) -> str:
    """A source file's path, refused when it could escape the revision's directory."""
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise SourceError(
            f"source {uri} lists a file path that is not a plain relative path: {path!r}"
        )
    return path


def read_token(token_file: str | None, token_env: str | None) -> str | None:
    """A token from a file (a mounted Secret) or an environment variable (a Secret's key set as
    env); never from a literal argument, so it never lands in a Job spec or a process list."""
    if token_file:
        return Path(token_file).read_text().strip() or None
    if token_env:
        return os.environ.get(token_env) or None
    return None


def open_source(
    uri: str,
    revision: str,
    *,
    token: str | None = None,
    hf_endpoint: str | None = None,
) -> Source:
    """The source for a URI and revision. ``hf_endpoint`` defaults to ``$HF_ENDPOINT``, else
    ``https://huggingface.co`` (the same variable huggingface_hub reads)."""
    parsed = parse_source(uri)
    check_revision(parsed.scheme, revision)
    if parsed.scheme == "file":
        return LocalSource(uri, revision, Path(parsed.location))
    if parsed.scheme == "hf":
        endpoint = hf_endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_HF_ENDPOINT
        return HuggingFaceSource(uri, revision, parsed.location, endpoint.rstrip("/"), token)
    if parsed.scheme == "s3":
        return S3Source(uri, revision, parsed.location, parsed.prefix)
    if parsed.scheme == "gs":
        return GcsSource(uri, revision, parsed.location, parsed.prefix)
    return AzureBlobSource(uri, revision, parsed.location, parsed.container, parsed.prefix)


class LocalSource:
    """A local directory: every regular file under it, no published digests. A symbolic link
    is followed only where it resolves inside the directory (a folder linked twice is walked
    once); one that leads out of it, or to something that is not a regular file or folder,
    is refused, naming it: a source serves the files of its folder and nothing else on the
    machine. A Hugging Face cache's ``snapshots/<commit>/`` links every file into the cache's
    ``blobs/``, outside it: ``hf download --local-dir`` writes the files themselves."""

    def __init__(self, uri: str, revision: str, root: Path) -> None:
        self.uri = uri
        self.revision = revision
        self.root = root

    def files(self) -> list[SourceFile]:
        if not self.root.is_dir():
            raise SourceError(f"source {self.uri}: {self.root} is not a directory")
        # Paths are taken relative to the folder as named; links are judged by where they
        # resolve, against the folder's own resolved path.
        real_root = Path(os.path.realpath(self.root))
        seen = {real_root}
        found = []
        for dirpath, dirs, names in os.walk(self.root, followlinks=True):
            kept = []
            for name in sorted(dirs):
                real = self._inside(Path(dirpath, name), real_root)
                if real not in seen:
                    seen.add(real)
                    kept.append(name)
            dirs[:] = kept
            for name in names:
                full = Path(dirpath, name)
                self._inside(full, real_root)
                rel = full.relative_to(self.root).as_posix()
                if not full.is_file():
                    raise SourceError(
                        f"source {self.uri}: {rel} is not a regular file (a device, pipe or "
                        f"socket, or a broken link): a source holds files and folders only"
                    )
                found.append(SourceFile(rel, full.stat().st_size))
        return sorted(found, key=lambda f: f.path)

    def _inside(self, path: Path, real_root: Path) -> Path:
        """Where ``path`` resolves, refused when that is outside the source's folder."""
        real = Path(os.path.realpath(path))
        if real != real_root and not real.is_relative_to(real_root):
            rel = path.relative_to(self.root).as_posix()
            raise SourceError(
                f"source {self.uri}: {rel} is a symbolic link to {real}, outside the source's "
                f"folder {real_root}: copy the file into the folder (a Hugging Face cache "
                f"snapshot links into its blobs/: use hf download --local-dir)"
            )
        return real

    def open(self, file: SourceFile) -> Any:
        path = self.root / file.path
        self._inside(path, Path(os.path.realpath(self.root)))
        return path.open("rb")


class HuggingFaceSource:
    """A Hugging Face model repository at a commit, over the Hub's HTTP API (urllib only).

    Files come from the tree endpoint, ``GET {endpoint}/api/models/{repo}/tree/{revision}
    ?recursive=true``, paginated by RFC 8288 ``Link`` headers (``rel="next"``, quoted or not:
    :func:`.net.next_link`): the request
    huggingface_hub's ``HfApi.list_repo_tree`` makes (``src/huggingface_hub/hf_api.py``; pages
    followed by ``utils/_pagination.py``). Each entry has ``type``, ``path``, ``size``, ``oid``
    (the Git blob id) and, for LFS files, ``lfs: {oid, size, pointerSize}`` whose ``oid`` is
    the file's sha256 (``RepoFile.__init__``: ``BlobLfsInfo(size=lfs["size"],
    sha256=lfs["oid"], ...)``). ``expand=true`` is not asked for: per ``RepoFile``'s
    docstring only ``last_commit`` and ``security`` need it, and it costs a lookup per file.
    Bytes come from ``{endpoint}/{repo}/resolve/{revision}/{path}``
    (``hf_hub_url``), following the Hub's redirect to its CDN.
    """

    def __init__(
        self, uri: str, revision: str, repo: str, endpoint: str, token: str | None
    ) -> None:
        self.uri = uri
        self.revision = revision
        self.repo = repo
        self.endpoint = endpoint
        self.token = token

    def _open(self, url: str, timeout: float) -> Any:
        opener = urllib.request.build_opener(_SameHostAuthRedirect())
        try:
            return urlopen(self._request(url), timeout, opener)
        except urllib.error.HTTPError as error:
            hint = self.hint(error.code)
            raise SourceError(
                f"source {self.uri}: GET {url} answered {error.code} {error.reason}"
                f"{f': {hint}' if hint else ''}"
            ) from None

    def _request(self, url: str) -> urllib.request.Request:
        return urllib.request.Request(url, headers=self._headers())

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def hint(self, status: int) -> str:
        """What an error status of the Hub likely means."""
        return {
            401: "the repository is private or gated; give a token with read access",
            403: "the token may not read this repository (gated: accept its terms)",
            404: "no such repository, revision or file",
        }.get(status, "")

    def request(self, file: SourceFile) -> tuple[str, dict[str, str]]:
        """The URL and headers of a GET of the file's bytes (:mod:`.transfer`)."""
        return self._url(file), self._headers()

    def _url(self, file: SourceFile) -> str:
        quoted = urllib.parse.quote(file.path)
        return f"{self.endpoint}/{self.repo}/resolve/{self.revision}/{quoted}"

    def files(self) -> list[SourceFile]:
        url: str | None = (
            f"{self.endpoint}/api/models/{self.repo}/tree/{self.revision}?recursive=true"
        )
        found: list[SourceFile] = []
        while url:
            with self._open(url, timeout=60) as response:
                entries = json.load(response)
                url = next_link(response.headers.get("Link"), url)
            for entry in entries:
                if entry.get("type") != "file":
                    continue
                lfs = entry.get("lfs")
                size = int(entry["size"])
                if lfs:
                    found.append(SourceFile(entry["path"], size, sha256=lfs["oid"]))
                else:
                    found.append(SourceFile(entry["path"], size, git_sha1=entry.get("oid")))
        return sorted(found, key=lambda f: f.path)

    def open(self, file: SourceFile) -> Any:
        return self._open(self._url(file), timeout=300)


class _SameHostAuthRedirect(urllib.request.HTTPRedirectHandler):
    """Follows redirects, but drops the token when one leaves the origin (scheme, host or
    port: :func:`.net.keeps_authorization`); urllib would forward every header."""

    def redirect_request(
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and not keeps_authorization(req.full_url, newurl):
            new.remove_header("Authorization")
        return new


class _ObjectSource:
    """Objects under ``<bucket>/<prefix>/`` of an object store (an S3 or GCS bucket, a Blob
    container) through its client: the listing, less folder placeholders, as files relative to
    the prefix, each with the digests :meth:`_digests` finds; a file's bytes by its key."""

    client: Any

    def __init__(self, uri: str, revision: str, bucket: str, prefix: str) -> None:
        self.uri = uri
        self.revision = revision
        self.bucket = bucket
        self.prefix = f"{prefix}/" if prefix else ""

    def _listing(self) -> Iterable[tuple[str, int, Any]]:
        """Each object under the prefix: its key, size and what the listing says of it."""
        raise NotImplementedError

    def _digests(self, key: str, listed: Any) -> dict[str, str | None]:
        """The :class:`SourceFile` digests the store publishes for the object ``key``."""
        raise NotImplementedError

    def files(self) -> list[SourceFile]:
        found = []
        for key, size, listed in self._listing():
            if key.endswith("/"):
                continue  # a folder placeholder, not a file
            found.append(SourceFile(key[len(self.prefix) :], size, **self._digests(key, listed)))
        return sorted(found, key=lambda f: f.path)

    def open(self, file: SourceFile) -> Body:
        return Body(self.client.get(self.bucket, self.prefix + file.path))

    def request(self, file: SourceFile) -> tuple[str, dict[str, str]]:
        """The URL and headers of a GET of the file's bytes (:mod:`.transfer`), made anew
        for each request (a token or signature that expires)."""
        url, headers = self.client.get_request(self.bucket, self.prefix + file.path)
        return url, headers

    def hint(self, status: int) -> str:
        """What an error status likely means."""
        hint = getattr(self.client, "hint", None)
        return hint(status) if hint is not None else ""


class S3Source(_ObjectSource):
    """Objects under ``s3://<bucket>/<prefix>/`` through :class:`.aws.S3Client` (the standard
    library only: credentials, endpoint and region as that module says). What an object's
    ``HEAD`` publishes (asked with ``x-amz-checksum-mode: ENABLED``) is checked
    (:func:`s3_digests`): its whole-object ``x-amz-checksum-sha256``, ``-crc32``, ``-crc32c``
    and ``-crc64nvme`` (a multipart upload's composite value ends in ``-<parts>`` and is not a
    digest of the bytes, so it is not used), and its ETag where that is the MD5 of the bytes."""

    def __init__(
        self,
        uri: str,
        revision: str,
        bucket: str,
        prefix: str,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(uri, revision, bucket, prefix)
        self.client = aws.S3Client(uri, env)

    def _listing(self) -> Iterable[tuple[str, int, Any]]:
        for key, size in self.client.list(self.bucket, self.prefix):
            yield key, size, None

    def _digests(self, key: str, listed: Any) -> dict[str, str | None]:
        return s3_digests(aws.checksums(self.client.head(self.bucket, key)))

    def open(self, file: SourceFile) -> Body:
        response = self.client.get(self.bucket, self.prefix + file.path)
        return Body(response, sha256=_s3_sha256(aws.checksums(response.headers)))

    def request(self, file: SourceFile) -> tuple[str, dict[str, str]]:
        """A signed GET of the file (:mod:`.transfer`); a file fetched whole asks for its
        checksum (S3 sends a whole-object checksum with no ranged answer)."""
        key = self.prefix + file.path
        return self.client.get_request(self.bucket, key, checksum=file.size <= PART)

    def published(self, file: SourceFile, headers: Any) -> tuple[str | None, str | None]:
        """The sha256 S3 sent with the object's bytes (sha256, md5)."""
        return _s3_sha256(aws.checksums(headers)), None


def _s3_sha256(head: dict[str, Any]) -> str | None:
    return _s3_whole(head, "ChecksumSHA256")


def _s3_whole(head: dict[str, Any], name: str) -> str | None:
    """A whole-object checksum as hex: a composite one (a multipart upload's, ``-<parts>``
    or ``ChecksumType: COMPOSITE``) is a checksum of the parts' checksums, not of the bytes."""
    value = head.get(name)
    if not value or "-" in value or head.get("ChecksumType", "FULL_OBJECT") != "FULL_OBJECT":
        return None
    return base64.b64decode(value).hex()


# Encryption under which an object's ETag is not the MD5 of its bytes (S3 API reference,
# "Object", ETag: "Objects encrypted by SSE-C or SSE-KMS have ETags that are not an MD5
# digest of their object data"; DSSE-KMS is KMS too).
KMS_ENCRYPTION = frozenset({"aws:kms", "aws:kms:dsse"})
ETAG_MD5 = re.compile(r'"?([0-9a-fA-F]{32})"?')


def s3_digests(head: dict[str, Any]) -> dict[str, str | None]:
    """The :class:`SourceFile` digests an object's headers publish (:func:`.aws.checksums`):
    its whole-object SHA-256, CRC-32, CRC-32C and CRC-64/NVME checksums, and its ETag as the
    MD5 of its bytes where it is one: a single-part upload (a multipart ETag ends in
    ``-<parts>``) neither SSE-KMS nor SSE-C encrypted."""
    etag = ETAG_MD5.fullmatch(head.get("ETag", ""))
    md5_etag = (
        etag is not None
        and head.get("ServerSideEncryption") not in KMS_ENCRYPTION
        and not head.get("SSECustomerAlgorithm")
    )
    return {
        "sha256": _s3_whole(head, "ChecksumSHA256"),
        "md5": etag.group(1).lower() if etag is not None and md5_etag else None,
        "crc32": _s3_whole(head, "ChecksumCRC32"),
        "crc32c": _s3_whole(head, "ChecksumCRC32C"),
        "crc64nvme": _s3_whole(head, "ChecksumCRC64NVME"),
    }


class GcsSource(_ObjectSource):
    """Objects under ``gs://<bucket>/<prefix>/`` through :class:`.gcs.GcsClient` (the JSON
    API over urllib, the GKE metadata server's token). An object's ``md5Hash`` is checked
    when it has one; a composite object has only its ``crc32c``, checked in pure Python up to
    :data:`.transfer.PURE_CRC_MAX_BYTES` (see :mod:`.gcs`)."""

    def __init__(
        self,
        uri: str,
        revision: str,
        bucket: str,
        prefix: str,
        env: dict[str, str] | None = None,
        endpoint: str | None = None,
    ) -> None:
        super().__init__(uri, revision, bucket, prefix)
        self.client = gcs.GcsClient(uri, env, endpoint)

    def _listing(self) -> Iterable[tuple[str, int, Any]]:
        for item in self.client.list(self.bucket, self.prefix):
            yield item["name"], int(item["size"]), item

    def _digests(self, key: str, listed: Any) -> dict[str, str | None]:
        crc32c = listed.get("crc32c")
        return {
            "md5": md5_hex(listed.get("md5Hash")),
            "crc32c": base64.b64decode(crc32c).hex() if crc32c else None,
        }


class AzureBlobSource(_ObjectSource):
    """Blobs under ``az://<account>/<container>/<prefix>/`` through
    :class:`.azure.BlobClient` (the Blob REST API over urllib, the pod's AKS workload
    identity); the container is the source's bucket. A blob's ``Content-MD5`` is checked
    when it has one."""

    def __init__(
        self,
        uri: str,
        revision: str,
        account: str,
        container: str,
        prefix: str,
        env: dict[str, str] | None = None,
        endpoint: str | None = None,
    ) -> None:
        super().__init__(uri, revision, container, prefix)
        self.client = azure.BlobClient(uri, account, env, endpoint)

    def _listing(self) -> Iterable[tuple[str, int, Any]]:
        return self.client.list(self.bucket, self.prefix)

    def _digests(self, key: str, listed: Any) -> dict[str, str | None]:
        return {"md5": md5_hex(listed)}
