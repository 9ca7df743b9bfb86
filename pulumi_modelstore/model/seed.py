"""Seed a model revision into a store: ``python -m pulumi_modelstore.model.seed``.

::

    python -m pulumi_modelstore.model.seed --source hf://org/repo --revision <sha> \\
        --dest /store [--include '*.safetensors' ...] [--keep-revisions 2] [--in-use <rev> ...]

What it does, in order:

1. If ``.modelstore/<revision>/manifest.json`` exists, is whole (its digest matches), names the
   same source, revision and include patterns, and every file it lists is under
   ``revisions/<revision>/`` with its size, it does nothing and says so (exit 0): a rerun of
   the Job is free. Published from another source or with other include patterns, the
   revision is seeded anew, unless readers mount it (``--in-use``): then it is refused, with
   the reason.
2. Lists the source's files at the revision (keeping those matching ``--include``, matched as
   huggingface_hub matches ``allow_patterns``: :func:`.sources.included`), and streams
   each into this run's own folder, ``.modelstore/partial/<revision>/run-<id>/``, holding
   the revision's lock (:mod:`.runs`: another run of the revision waits, and a file an
   earlier run downloaded and checked is taken over, not downloaded again), taking its size
   and sha256 on the way and checking them against what the source
   publishes (Hugging Face: the LFS sha256, or the Git blob id for a small file; S3: a
   whole-object ``ChecksumSHA256``). A mismatch stops the seed with the file named; nothing
   is published. With ``--layout lustre`` the directory it downloads into first gets the read
   layout of :mod:`.lustre` (files striped for many readers), before any file is created.
3. Publishes in one step: renames the run's folder to ``revisions/<revision>/`` (never over
   one that appeared meanwhile, and not once the lock is another run's), then writes the
   manifest (atomically, last): a revision without a manifest is never published.
   With ``--publish manifest-last`` (object-store mounts: Mountpoint for S3 cannot rename, and
   Cloud Storage FUSE and blobfuse2 rename a directory object by object) the files are written
   straight into ``revisions/<revision>/`` and the manifest, written last, is what publishes;
   a rerun keeps the files an earlier run recorded as checked
   (:class:`.runs.InPlaceRecords`) and removes the others.
   With ``--publish imported`` (a store that fills itself: FSx for Lustre's data repository
   association imports the source into ``revisions/<revision>/``) nothing is downloaded and the
   source is not opened: every file already there is read whole, each hashed, and the
   manifest written last publishes them (``--include`` is refused: readers see them all).
   Reading them also loads every file an association imported lazily, so readers never wait
   on S3 and the association can go.
4. Removes published revisions beyond ``--keep-revisions`` (the oldest first, by publish time),
   never the one just seeded and never one named by ``--in-use`` (what readers mount).
5. With ``--record-configmap <namespace>/<name>``, records the published manifest's digest in
   that ConfigMap through the Kubernetes API (:mod:`.record`), where the store reads it back
   as its ``model_manifest_sha256`` output, labelled with each ``--record-label <key>=<value>``
   (the store's labels: its backups select them); a refusal fails the seed with the API's reason.

It writes one line to the termination message file (``--termination-log``, default
``/dev/termination-log``) and to stdout: ``ok: seeded <revision>: 12 files, 15.2 GiB, manifest
sha256:...``, or ``FAILED: <cause>`` with exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import transfer
from .layout import (
    Layout,
    fsync_dir,
    include_key,
    make_manifest,
    manifest_digest,
    remove_tree,
    report_one_line,
    write_atomically,
)
from .lustre import LayoutError, set_default_layout
from .record import (
    TOKEN_DIR,
    Api,
    RecordError,
    Target,
    in_cluster_api,
    parse_label,
    record_digest,
)
from .runs import (
    LOCK,
    InPlaceRecords,
    RevisionLock,
    Run,
    clean_other_revisions,
    new_run_id,
    remove,
    say,
)
from .sources import (
    CHUNK,
    Source,
    SourceError,
    SourceFile,
    check_include,
    check_revision,
    included,
    open_source,
    parse_source,
    read_token,
    safe_relative,
)
from .transfer import FileDigests, SeedError

GIB = 1 << 30
# How a revision is published: a rename of the finished directory (file systems: EFS, FSx,
# NFS, Azure Files, local, a block volume), or files written in place with the manifest last
# (object stores behind FUSE). Mountpoint for S3 does not emulate rename (awslabs/mountpoint-s3
# doc/SEMANTICS.md, "Semantics tenets"); Cloud Storage FUSE renames a directory only in a
# hierarchical-namespace bucket, else refuses or copies object by object (gcsfuse
# docs/semantics.md, "Renaming directories is only supported in Hierarchical Namespace").
PUBLISH = ("rename", "manifest-last", "imported")
# The read layout the seed sets on what it writes: none, or Lustre's (model/lustre.py). With
# --publish imported the storage made the files (an FSx association, in its own chunks).
LAYOUTS = ("none", "lustre")


@dataclass(frozen=True)
class SeedResult:
    """What a seed did: ``seeded`` False when a complete manifest was already there."""

    seeded: bool
    revision: str
    files: int
    total_bytes: int
    digest: str
    removed: tuple[str, ...] = ()

    def line(self) -> str:
        size = f"{self.total_bytes / GIB:.1f} GiB"
        verb = "seeded" if self.seeded else "already seeded, nothing to do:"
        removed = f", removed old revisions {', '.join(self.removed)}" if self.removed else ""
        return (
            f"ok: {verb} {self.revision}: {self.files} files, {size}, manifest {self.digest}"
            f"{removed}"
        )


def seed(
    source: Source,
    dest: Path,
    *,
    include: Sequence[str] = (),
    keep_revisions: int = 2,
    in_use: Sequence[str] = (),
    publish: str = "rename",
    manifest_sha256: str | None = None,
    read_layout: str = "none",
) -> SeedResult:
    """Seed ``source``'s revision into the store at ``dest`` (see the module docstring).
    ``publish``: ``rename`` (default; file systems) or ``manifest-last`` (object-store
    mounts). ``read_layout``: ``none`` (default) or ``lustre``, the read layout set on the
    directory the files are written into (:mod:`.lustre`). ``manifest_sha256``: the manifest
    digest pinned (default: none); a revision published with another manifest is refused, and
    one seeded anew is published only when its manifest has exactly that digest (the digest
    leaves out the publish time: the same files give the same digest). Raises
    :class:`SeedError` or :class:`SourceError` with a one-line message."""
    if keep_revisions < 1:
        raise SeedError(f"keep_revisions must be 1 or more, got {keep_revisions}")
    # `imported` opens no source: publish_imported() is that mode.
    if publish not in PUBLISH[:2]:
        raise SeedError(f"publish must be one of {', '.join(PUBLISH[:2])}, got {publish!r}")
    if read_layout not in LAYOUTS:
        raise SeedError(f"layout must be one of {', '.join(LAYOUTS)}, got {read_layout!r}")
    include = check_include(include)
    layout = Layout(dest)
    revision = source.revision
    done = already_published(
        layout, source.uri, revision, manifest_sha256, keep_revisions, in_use, "seed", include
    )
    if done is not None:
        return done
    if publish == "manifest-last":
        wanted = _wanted(source, layout, include, in_use)
        target = layout.revision_dir(revision)
        if layout.manifest(revision).exists():
            layout.manifest(revision).unlink()  # unpublished before anything is replaced
        # The files an earlier run wrote and checked stay; every other file goes.
        records = InPlaceRecords(layout.partial(revision) / "done")
        kept = records.keep(target, {f.path: _listing(f) for f in wanted}, _remove_file)
        if kept:
            say(f"kept {len(kept)} files an earlier run downloaded and checked")
        new = not target.exists()
        # exist_ok: on Mountpoint a directory emptied by remove_tree may still be found by a
        # lookup the mount serves from its metadata cache (layout.remove_tree).
        target.mkdir(parents=True, exist_ok=True)
        if new:
            _set_layout(target, read_layout)
        fresh = transfer.download(
            source,
            [f for f in wanted if f.path not in kept],
            target,
            safe_relative,
            done=lambda entry, file: records.done(entry, _listing(file)),
        )
        manifest = make_manifest(
            source.uri, revision, [*kept.values(), *fresh], datetime.now(UTC).isoformat(),
            include,
        )  # fmt: skip
        check_new(manifest, manifest_sha256)
        # An object is visible whole or not at all once written: no rename needed (and
        # Mountpoint for S3 cannot rename).
        layout.manifest(revision).parent.mkdir(parents=True, exist_ok=True)
        layout.manifest(revision).write_bytes(json.dumps(manifest, indent=1).encode())
        remove_tree(layout.partial(revision))
        _remove_if_empty(layout.partial(revision).parent)
    else:
        run_id = new_run_id()
        with contextlib.ExitStack() as after:
            # Last, once the lock is released: the revision's partial folder, if empty.
            after.callback(_remove_if_empty, layout.partial(revision))
            lock = after.enter_context(RevisionLock(layout.partial(revision) / LOCK, run_id))
            # The run waited for may have published it meanwhile.
            done = already_published(
                layout, source.uri, revision, manifest_sha256, keep_revisions, in_use, "seed",
                include,
            )  # fmt: skip
            if done is not None:
                return done
            published = _seed_by_rename(
                source, layout, include, in_use, lock, Run(layout.partial(revision), run_id),
                manifest_sha256, read_layout,
            )  # fmt: skip
            if published is None:  # another run published the same files meanwhile
                done = already_published(
                    layout, source.uri, revision, manifest_sha256, keep_revisions, in_use,
                    "seed", include,
                )  # fmt: skip
                assert done is not None
                return done
            manifest = published
    removed = collect(layout, keep_revisions, {revision, *in_use})
    return SeedResult(
        True, revision, len(manifest["files"]), manifest["total_bytes"], manifest["digest"],
        removed,
    )  # fmt: skip


def _remove_file(path: Path) -> None:
    path.unlink(missing_ok=True)


def _remove_if_empty(directory: Path) -> None:
    with contextlib.suppress(OSError):
        directory.rmdir()


def _wanted(
    source: Source, layout: Layout, include: Sequence[str], in_use: Sequence[str]
) -> list[SourceFile]:
    """The files to seed, after refusing to replace a revision readers mount that was
    published from another source or with other include patterns."""
    revision = source.revision
    other = read_manifest(layout, revision)
    if other is not None and other.get("source") != source.uri and revision in in_use:
        raise SeedError(
            f"revision {revision} is published from {other.get('source')} and readers mount "
            f"it; seed {source.uri} as a new revision instead of replacing it under them"
        )
    if other is not None and not same_include(other, include) and revision in in_use:
        raise SeedError(
            f"revision {revision} is published with include {other['include']} and readers "
            f"mount it; include is now {include_key(include)}: a published revision's files "
            f"are not replaced under its readers (set include back, or seed the new selection "
            f"as another revision)"
        )
    wanted = [f for f in source.files() if included(f.path, include)]
    if not wanted:
        patterns = ", ".join(include) or "(none)"
        raise SeedError(
            f"source {source.uri} at {revision} has no file matching the include patterns "
            f"{patterns}"
        )
    return wanted


def _unpublish(layout: Layout, revision: str) -> None:
    """Unpublish first (a manifest of another source or include, or one whose files are not
    all there), so no reader's gate opens on the directory while it is replaced; a revision
    directory without a complete manifest was never published (a run that died after the
    rename, or, on object stores, while writing): it goes."""
    if layout.manifest(revision).exists():
        layout.manifest(revision).unlink()
    if layout.revision_dir(revision).exists():
        remove_tree(layout.revision_dir(revision))


def _seed_by_rename(
    source: Source,
    layout: Layout,
    include: Sequence[str],
    in_use: Sequence[str],
    lock: RevisionLock,
    run: Run,
    manifest_sha256: str | None,
    read_layout: str,
) -> dict[str, Any] | None:
    """Download into this run's own folder (taking over the files earlier runs checked),
    rename it to ``revisions/<revision>/`` and write the manifest, holding the revision's
    lock (:mod:`.runs`). Returns the manifest; None when another run published the same
    files while this one downloaded. Refuses a revision directory of other files that
    appeared meanwhile, and publishes nothing once the lock is another run's."""
    revision = source.revision
    wanted = _wanted(source, layout, include, in_use)
    target = layout.revision_dir(revision)
    _unpublish(layout, revision)
    clean_other_revisions(layout.partial(revision).parent, keep=[revision])
    run.start()
    _set_layout(run.dir, read_layout)
    listed = {f.path: _listing(f) for f in wanted}
    kept = run.adopt(listed)
    if kept:
        say(f"kept {len(kept)} files an earlier run downloaded and checked")
    fresh = transfer.download(
        source,
        [f for f in wanted if f.path not in kept],
        run.dir,
        safe_relative,
        done=lambda entry, file: run.done(entry, _listing(file)),
    )
    manifest = make_manifest(
        source.uri, revision, [*kept.values(), *fresh], datetime.now(UTC).isoformat(), include
    )
    check_new(manifest, manifest_sha256)
    fsync_dir(run.dir)
    if lock.lost():
        raise SeedError(
            f"revision {revision}: another run took this run's lock over (no heartbeat for "
            f"{lock.stale:.0f} s): nothing published, that run publishes it"
        )
    if target.exists():
        there = complete_manifest(layout, source.uri, revision, include)
        if there is not None and there["digest"] == manifest["digest"]:
            remove(run.dir)
            run.finish()
            return None
        raise SeedError(
            f"revisions/{revision} appeared while this run downloaded (another run published "
            f"it without the lock): it is not replaced; nothing published"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    run.dir.rename(target)
    fsync_dir(target.parent)
    write_atomically(layout.manifest(revision), json.dumps(manifest, indent=1).encode())
    run.finish()
    return manifest


def _listing(file: SourceFile) -> dict[str, Any]:
    """What the source lists for a file: a file an earlier run checked is taken over only
    when the source still lists the same."""
    return {
        "path": file.path,
        "size": file.size,
        "sha256": file.sha256,
        "git_sha1": file.git_sha1,
        "md5": file.md5,
    }


def _set_layout(directory: Path, layout: str) -> None:
    """The read layout of the (new, empty) directory the files are written into."""
    if layout == "lustre":
        set_default_layout(directory)


def publish_imported(
    dest: Path,
    uri: str,
    revision: str,
    *,
    include: Sequence[str] = (),
    keep_revisions: int = 2,
    in_use: Sequence[str] = (),
    manifest_sha256: str | None = None,
) -> SeedResult:
    """Publish the files the storage itself put under ``revisions/<revision>/`` (``--publish
    imported``, module docstring): hash each, write the manifest last. A complete manifest
    already there is kept (a rerun does nothing); ``manifest_sha256`` as for :func:`seed`.
    ``include`` is refused: readers see every file the storage imported, so the manifest
    lists them all (a file left out would fail verification). Raises :class:`SeedError` when
    no file is there."""
    if keep_revisions < 1:
        raise SeedError(f"keep_revisions must be 1 or more, got {keep_revisions}")
    if include:
        raise SeedError(
            f"include patterns ({', '.join(include)}) do not apply to --publish imported: the "
            f"storage imported every file under {uri}, and readers see them all; publish only "
            f"the files to serve there"
        )
    layout = Layout(dest)
    done = already_published(
        layout, uri, revision, manifest_sha256, keep_revisions, in_use, "publish", ()
    )
    if done is not None:
        return done
    target = layout.revision_dir(revision)
    found_files = (
        sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
        if target.is_dir()
        else []
    )
    wanted = found_files
    if not wanted:
        raise SeedError(
            f"revisions/{revision} holds no file: has the storage imported {uri} there?"
        )
    entries = []
    for rel in wanted:
        digest = hashlib.sha256()
        size = 0
        with (target / rel).open("rb", buffering=0) as stream:
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
        entries.append({"path": rel, "size": size, "sha256": digest.hexdigest()})
    manifest = make_manifest(uri, revision, entries, datetime.now(UTC).isoformat())
    check_new(manifest, manifest_sha256)
    write_atomically(layout.manifest(revision), json.dumps(manifest, indent=1).encode())
    removed = collect(layout, keep_revisions, {revision, *in_use})
    return SeedResult(
        True, revision, len(entries), manifest["total_bytes"], manifest["digest"], removed
    )


def fetch(
    source: Source, file: SourceFile, write: Callable[[bytes], Any] | None = None
) -> dict[str, Any]:
    """Stream one file's bytes to ``write`` (default: nowhere, only hashed), checking its size
    and digest against what the source publishes (:class:`.transfer.FileDigests`); its
    manifest entry. The seed itself downloads with :func:`.transfer.download`."""
    digests = FileDigests(file, safe_relative(file.path, source.uri))
    with source.open(file) as stream:
        # What the source published when the bytes were asked for (S3 sends its checksum
        # with the object), where the listing published nothing.
        digests.publish(getattr(stream, "sha256", None), getattr(stream, "md5", None))
        while chunk := stream.read(CHUNK):
            digests.update(chunk)
            if write is not None:
                write(chunk)
    return digests.entry()


def check_pinned(
    existing: dict[str, Any] | None, revision: str, manifest_sha256: str | None, verb: str
) -> None:
    """Refuse a pinned ``manifest_sha256`` that is not the ``existing`` complete manifest's
    digest, naming how to ``verb`` the revision anew. Unpinned (None), or no complete
    manifest there (the revision is then made anew and :func:`check_new` checks the result):
    nothing to check."""
    if manifest_sha256 is None or existing is None:
        return
    if existing["digest"] != manifest_sha256:
        raise SeedError(
            f"revision {revision} must be published with the pinned manifest "
            f"{manifest_sha256}, found {existing['digest']} (unpin manifest_sha256 to {verb} "
            f"it anew)"
        )


def check_new(manifest: dict[str, Any], manifest_sha256: str | None) -> None:
    """Refuse a manifest just made whose digest is not the pinned ``manifest_sha256`` (the
    files are not the ones pinned), before it publishes anything. Unpinned: nothing to check."""
    if manifest_sha256 is not None and manifest["digest"] != manifest_sha256:
        raise SeedError(
            f"revision {manifest['revision']} must be published with the pinned manifest "
            f"{manifest_sha256}, the files seeded give {manifest['digest']}: nothing "
            f"published (unpin manifest_sha256 to publish these files)"
        )


def already_published(
    layout: Layout,
    uri: str,
    revision: str,
    manifest_sha256: str | None,
    keep_revisions: int,
    in_use: Sequence[str],
    verb: str,
    include: Sequence[str],
) -> SeedResult | None:
    """The result of a rerun when ``revision`` is already published from ``uri`` with
    ``include`` and a complete manifest (old revisions collected, nothing written), else
    None. A pinned
    ``manifest_sha256`` must be the published one's: any other is refused, naming how to
    ``verb`` the revision anew (none there: the caller makes it and :func:`check_new` checks
    it)."""
    existing = complete_manifest(layout, uri, revision, include)
    check_pinned(existing, revision, manifest_sha256, verb)
    if existing is None:
        return None
    removed = collect(layout, keep_revisions, {revision, *in_use})
    return SeedResult(
        False,
        revision,
        len(existing["files"]),
        existing["total_bytes"],
        existing["digest"],
        removed,
    )


def read_manifest(layout: Layout, revision: str) -> dict[str, Any] | None:
    """The revision's manifest if it is there and whole (its digest matches), else None."""
    path = layout.manifest(revision)
    try:
        manifest: dict[str, Any] = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    if manifest.get("digest") != manifest_digest(manifest):
        return None
    return manifest


def same_include(manifest: dict[str, Any], include: Sequence[str]) -> bool:
    """Whether ``manifest`` was made with ``include`` (a format 1 manifest recorded none, and
    is taken as made with it)."""
    return "include" not in manifest or manifest["include"] == include_key(include)


def complete_manifest(
    layout: Layout, uri: str, revision: str, include: Sequence[str] = ()
) -> dict[str, Any] | None:
    """The manifest when the revision is published from this source with ``include`` and
    every file at its size (a full re-hash is the verification Job's part), else None."""
    manifest = read_manifest(layout, revision)
    if manifest is None or manifest.get("source") != uri or manifest.get("revision") != revision:
        return None
    if not same_include(manifest, include):
        return None
    base = layout.revision_dir(revision)
    for entry in manifest["files"]:
        path = base / entry["path"]
        if not path.is_file() or path.stat().st_size != entry["size"]:
            return None
    return manifest


def collect(layout: Layout, keep: int, protected: set[str]) -> tuple[str, ...]:
    """Remove published revisions beyond the newest ``keep`` (by publish time), never one in
    ``protected``. The manifest goes first, so a reader's gate sees the revision unpublished
    before its files go."""
    dated = []
    for revision in layout.published():
        manifest = read_manifest(layout, revision)
        if manifest is not None:
            dated.append((manifest.get("published_at", ""), revision))
    newest_first = [r for _, r in sorted(dated, reverse=True)]
    kept = [r for r in newest_first if r in protected]
    removed = []
    for revision in newest_first:
        if revision in kept:
            continue
        if len(kept) < keep:
            kept.append(revision)
            continue
        layout.manifest(revision).unlink()
        # On Mountpoint the manifest's folder went with the manifest: remove_tree says how.
        remove_tree(layout.manifest(revision).parent)
        remove_tree(layout.revision_dir(revision))
        removed.append(revision)
    return tuple(removed)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m pulumi_modelstore.model.seed", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--source", required=True, help="hf://, s3://, gs://, az:// or file://")
    parser.add_argument("--revision", required=True, help="hf: a commit SHA; else a label")
    parser.add_argument("--dest", required=True, type=Path, help="the store's root (mounted)")
    parser.add_argument("--include", action="append", default=[], help="fnmatch pattern")
    parser.add_argument("--keep-revisions", type=int, default=2)
    parser.add_argument("--in-use", action="append", default=[], help="a revision readers mount")
    parser.add_argument("--token-file", help="a file holding the source's token (a Secret)")
    parser.add_argument("--token-env", default="HF_TOKEN", help="else this variable's value")
    parser.add_argument("--hf-endpoint", help="default: $HF_ENDPOINT, else huggingface.co")
    parser.add_argument("--publish", choices=PUBLISH, default="rename")
    parser.add_argument("--layout", choices=LAYOUTS, default="none", help="read layout to set")
    parser.add_argument("--manifest-sha256", help="refuse any other manifest (sha256:<hex>)")
    parser.add_argument(
        "--record-configmap", help="<namespace>/<name>: record the manifest digest there"
    )
    parser.add_argument(
        "--record-label",
        action="append",
        default=[],
        help="<key>=<value>: a label of the record (the store's, so backups hold it)",
    )
    parser.add_argument("--kube-api", help="default: the in-cluster API server (record.py)")
    parser.add_argument("--kube-token-dir", type=Path, default=TOKEN_DIR)
    parser.add_argument("--termination-log", default="/dev/termination-log")
    args = parser.parse_args(argv)
    try:
        labels = dict(parse_label(text) for text in args.record_label)
    except RecordError as error:
        parser.error(str(error))

    def run() -> str:
        target = Target.parse(args.record_configmap) if args.record_configmap else None
        if args.publish == "imported":
            # The storage filled itself: the source is named, never opened.
            check_revision(parse_source(args.source).scheme, args.revision)
            result = publish_imported(
                args.dest,
                args.source,
                args.revision,
                include=args.include,
                keep_revisions=args.keep_revisions,
                in_use=args.in_use,
                manifest_sha256=args.manifest_sha256,
            )
        else:
            result = _seed_from(args)
        recorded = ""
        if target is not None:
            api = Api(args.kube_api or in_cluster_api(), args.kube_token_dir)
            done = record_digest(
                api,
                target,
                digest=result.digest,
                revision=args.revision,
                source=args.source,
                labels=labels,
            )
            recorded = f", {done} ConfigMap {target}"
        return result.line() + recorded

    return report_one_line(
        args.termination_log, run, (SeedError, SourceError, RecordError, LayoutError)
    )


def _seed_from(args: argparse.Namespace) -> SeedResult:
    """Open the source the command line names and seed it."""
    source = open_source(
        args.source,
        args.revision,
        token=read_token(args.token_file, args.token_env),
        hf_endpoint=args.hf_endpoint,
    )
    return seed(
        source,
        args.dest,
        include=args.include,
        keep_revisions=args.keep_revisions,
        in_use=args.in_use,
        publish=args.publish,
        manifest_sha256=args.manifest_sha256,
        read_layout=args.layout,
    )


if __name__ == "__main__":
    sys.exit(main())
