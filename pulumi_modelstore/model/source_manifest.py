"""Publish a revision's manifest into its source: ``python -m
pulumi_modelstore.model.source_manifest``.

::

    python -m pulumi_modelstore.model.source_manifest --source gs://<bucket>/<prefix> \\
        --revision <rev> [--manifest-sha256 sha256:<hex>] [--termination-log PATH]

For a storage that copies a source folder whole and that no Job can write after: Hyperdisk ML,
filled by GKE's volume populator, a disk read-only for good once attached read-only
(FACTS.md). The manifest is computed from the source itself, every object's bytes streamed and
hashed (and checked against the md5 the bucket publishes, as a seed checks them), and written
as the object ``<prefix>/.modelstore/<revision>/manifest.json`` in one request. The populator
then copies it with the model, so the disk holds the model's files at its root and the manifest
at ``.modelstore/<revision>/manifest.json``: what the readers' gate waits for and what their
verification Job checks, as readers see the disk.

A rerun that finds the manifest object, whole, for this revision and listing every file of the
source at its size, does nothing. The manifest's own objects (under ``.modelstore/``) are never
taken as the model's files. Only ``gs://`` sources: the one store that needs it reads them.

It writes one line to the termination message file and stdout, as the seed does (``ok: seeded
v1: 12 files, 15.2 GiB, manifest sha256:...``), or ``FAILED: <cause>`` with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from .layout import STATE, make_manifest, manifest_digest, report_one_line
from .seed import SeedError, SeedResult, check_new, check_pinned, fetch
from .sources import GcsSource, SourceError, SourceFile, open_source


def manifest_key(prefix: str, revision: str) -> str:
    """The manifest's object name under the source's prefix (``prefix`` ends in '/' or is
    empty, as a source keeps it)."""
    return f"{prefix}{STATE}/{revision}/manifest.json"


def publish_source(uri: str, revision: str, *, manifest_sha256: str | None = None) -> SeedResult:
    """Publish ``revision``'s manifest into the ``gs://`` source ``uri`` (module docstring).
    ``manifest_sha256``: the manifest digest pinned (default: none); the source must then hold
    exactly that manifest, and nothing is written."""
    source = open_source(uri, revision)
    if not isinstance(source, GcsSource):
        raise SeedError(f"the manifest is written into a gs:// source only, got {uri}")
    return publish_to_source(source, manifest_sha256=manifest_sha256)


def publish_to_source(source: GcsSource, *, manifest_sha256: str | None = None) -> SeedResult:
    """Hash every file of ``source`` and write its manifest into it, unless it is there."""
    revision = source.revision
    listed = source.files()
    own = f"{STATE}/{revision}/manifest.json"
    files = [f for f in listed if not f.path.startswith(f"{STATE}/")]
    if not files:
        raise SeedError(f"source {source.uri} holds no file to publish")
    existing = _existing(source, [f for f in listed if f.path == own], files)
    check_pinned(existing, revision, manifest_sha256, "publish")
    if existing is not None:
        return SeedResult(False, revision, len(files), existing["total_bytes"], existing["digest"])
    entries = [fetch(source, f) for f in files]
    manifest = make_manifest(source.uri, revision, entries, datetime.now(UTC).isoformat())
    check_new(manifest, manifest_sha256)
    key = manifest_key(source.prefix, revision)
    source.client.put(source.bucket, key, json.dumps(manifest, indent=1).encode())
    return SeedResult(True, revision, len(entries), manifest["total_bytes"], manifest["digest"])


def _existing(
    source: GcsSource, manifests: list[SourceFile], files: list[SourceFile]
) -> dict[str, Any] | None:
    """The manifest already in the source when it is whole, for this revision and lists
    exactly ``files`` at their sizes (a file added or replaced since makes a new one)."""
    if not manifests:
        return None
    with source.open(manifests[0]) as stream:
        try:
            manifest: dict[str, Any] = json.loads(stream.read())
        except json.JSONDecodeError:
            return None
    if manifest.get("digest") != manifest_digest(manifest):
        return None
    listed = sorted((f.path, f.size) for f in files)
    if manifest.get("revision") != source.revision or listed != sorted(
        (e["path"], e["size"]) for e in manifest.get("files", [])
    ):
        return None
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m pulumi_modelstore.model.source_manifest",
        description=__doc__.split("\n")[0],
    )
    parser.add_argument("--source", required=True, help="gs://<bucket>/<prefix>")
    parser.add_argument("--revision", required=True, help="the revision's label")
    parser.add_argument("--manifest-sha256", help="refuse any other manifest (sha256:<hex>)")
    parser.add_argument("--termination-log", default="/dev/termination-log")
    args = parser.parse_args(argv)

    def run() -> str:
        return publish_source(
            args.source, args.revision, manifest_sha256=args.manifest_sha256
        ).line()

    return report_one_line(args.termination_log, run, (SeedError, SourceError))


if __name__ == "__main__":
    sys.exit(main())
