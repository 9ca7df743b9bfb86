"""What a FUSE-backed PV gives a pod, emulated from the PV's mount options the way each driver
and FUSE daemon reads them: who owns what with which mode, and whether a pod of a given
uid/groups may read or write. The tests plan a store, take its PVs and its Jobs' pods, and ask
whether the seed may write and every reader read.

Sources (facts only, cited where used):
- Mountpoint for S3 CSI driver v2.7.0 (awslabs/mountpoint-s3-csi-driver): mount options are
  ``key value`` or ``key=value`` (pkg/mountpoint/args.go, ``ParseArgs``); a pod's fsGroup
  adds ``--gid <fsGroup>``, ``--allow-other``, ``--dir-mode 0770`` and ``--file-mode 0660``
  where the PV does not set them, and a mount without ``--allow-other`` gets ``--allow-root``
  (pkg/driver/node/node.go lines 135-151); Mountpoint runs as uid 1000
  (pkg/cluster/cluster.go line 29, pkg/podmounter/mppod/creator.go lines 135 and 147).
- Mountpoint 1.22.3 (awslabs/mountpoint-s3): files 0644 and directories 0755 owned by the
  mounting user unless ``--uid``/``--gid``/``--file-mode``/``--dir-mode`` say otherwise
  (doc/SEMANTICS.md, "File and directory metadata and permissions"); the kernel checks those
  modes (``MountOption::DefaultPermissions``, mountpoint-s3-fs/src/fuse/config.rs line 39);
  ``--uid``/``--gid`` take 1 and up (mountpoint-s3/src/cli.rs, ``range(1..)``).
- Cloud Storage FUSE CSI driver (GoogleCloudPlatform/gcs-fuse-csi-driver): gcsfuse runs with
  ``uid=0``/``gid=0`` unless the PV says otherwise (pkg/sidecar_mounter/
  sidecar_mounter_config.go lines 232-233) and with ``allow_other,default_permissions``
  (pkg/util/util.go lines 453-458); a pod's fsGroup adds ``gid=<fsGroup>``, ``file-mode=664``
  and ``dir-mode=775``, which the PV's own options override (pkg/csi_driver/utils.go lines
  374-379); gcsfuse's own defaults are file-mode 644, dir-mode 755
  (docs/troubleshooting.md, "Permission denied").
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MOUNTPOINT_PROCESS_UID = 1000
READ = {"dir": 0o5, "file": 0o4}  # list a directory needs r and x; read a file r
WRITE = {"dir": 0o3, "file": 0o2}  # create or delete in a directory needs w and x


@dataclass(frozen=True)
class View:
    """A FUSE mount as the kernel presents it to a pod's processes."""

    uid: int
    gid: int
    dir_mode: int
    file_mode: int
    mounter: int
    """The uid the FUSE daemon runs as: the one user a mount without allow_other admits."""
    allow_other: bool
    allow_root: bool
    read_only: bool
    kernel_checks: bool = True
    """Whether the kernel checks the modes (FUSE ``default_permissions``); without it the
    daemon alone decides."""

    def may(self, uid: int, groups: Sequence[int], want: str, kind: str) -> bool:
        """Whether a process of ``uid`` in ``groups`` may ``want`` ("read" or "write") a
        ``kind`` ("dir" or "file") of the mount. The pods drop every capability, so root's
        DAC override plays no part."""
        if uid != self.mounter and not self.allow_other and not (uid == 0 and self.allow_root):
            return False  # FUSE refuses every other user outright (EACCES)
        if want == "write" and self.read_only:
            return False
        if not self.kernel_checks:
            return True  # blobfuse2 checks no caller's uid either
        mode = self.dir_mode if kind == "dir" else self.file_mode
        if uid == self.uid:
            bits = mode >> 6
        elif self.gid in groups:
            bits = mode >> 3
        else:
            bits = mode
        need = (READ if want == "read" else WRITE)[kind]
        return bits & need == need


def _options(options: Sequence[str], separators: str) -> dict[str, str]:
    """``key value`` / ``key=value`` / ``--key`` -> {key: value}, later ones winning."""
    out: dict[str, str] = {}
    for option in options:
        parts = re.split(separators, option.strip(), maxsplit=1)
        out[parts[0].removeprefix("--")] = parts[1].strip() if len(parts) > 1 else ""
    return out


def mountpoint_view(pv_spec: Mapping[str, Any], fs_group: int | None = None) -> View:
    """A Mountpoint for S3 PV as a pod with ``fs_group`` (or none) sees it."""
    given = _options(pv_spec.get("mountOptions") or (), r"[ =]")
    if fs_group is not None:
        for key, value in (
            ("gid", str(fs_group)),
            ("allow-other", ""),
            ("dir-mode", "0770"),
            ("file-mode", "0660"),
        ):
            given.setdefault(key, value)
    if "allow-other" not in given:
        given.setdefault("allow-root", "")
    for key in ("uid", "gid"):
        if key in given and int(given[key]) < 1:
            raise ValueError(f"Mountpoint refuses --{key} {given[key]} (1 and up)")
    return View(
        uid=int(given.get("uid", MOUNTPOINT_PROCESS_UID)),
        gid=int(given.get("gid", MOUNTPOINT_PROCESS_UID)),
        dir_mode=int(given.get("dir-mode", "0755"), 8),
        file_mode=int(given.get("file-mode", "0644"), 8),
        mounter=MOUNTPOINT_PROCESS_UID,
        allow_other="allow-other" in given,
        allow_root="allow-root" in given,
        read_only="read-only" in given or bool(pv_spec["csi"].get("readOnly")),
    )


def gcsfuse_view(pv_spec: Mapping[str, Any], fs_group: int | None = None) -> View:
    """A Cloud Storage FUSE PV as a pod with ``fs_group`` (or none) sees it."""
    given: dict[str, str] = {"uid": "0", "gid": "0", "file-mode": "644", "dir-mode": "755"}
    if fs_group is not None:
        given.update({"gid": str(fs_group), "file-mode": "664", "dir-mode": "775"})
    given.update(_options(pv_spec.get("mountOptions") or (), r"="))
    return View(
        uid=int(given["uid"]),
        gid=int(given["gid"]),
        dir_mode=int(given["dir-mode"], 8),
        file_mode=int(given["file-mode"], 8),
        mounter=0,
        allow_other=True,
        allow_root=True,
        read_only="ro" in given or bool(pv_spec["csi"].get("readOnly")),
    )


def blobfuse_view(pv_spec: Mapping[str, Any], fs_group: int | None = None) -> View:
    """An Azure Blob (blobfuse2) PV as a pod sees it. The driver mounts as root and ignores
    fsGroup (blob-csi-driver docs/driver-parameters.md); blobfuse2 shows everything 0777 with
    ``-o allow_other`` (else 0775 folders, 0755 files: Azure/azure-storage-fuse
    component/libfuse/libfuse.go lines 238-248, common/types.go lines 64-66), and drops
    ``-o default_permissions`` (common/types.go line 81, ``FuseIgnoredFlags``), so the kernel
    checks no mode: whoever FUSE admits may read and write, unless the mount is read-only."""
    given = _options(
        [o.removeprefix("-o ").strip() for o in pv_spec.get("mountOptions") or ()], r"="
    )
    allow_other = "allow_other" in given or "--allow-other" in given or "allow-other" in given
    return View(
        uid=0,
        gid=0,
        dir_mode=0o777 if allow_other else 0o775,
        file_mode=0o777 if allow_other else 0o755,
        mounter=0,
        allow_other=allow_other,
        allow_root="allow_root" in given,
        read_only="ro" in given or "read-only" in given or bool(pv_spec["csi"].get("readOnly")),
        kernel_checks=False,
    )


def pod_identity(pod_spec: Mapping[str, Any]) -> tuple[int, list[int], int | None]:
    """(uid, groups, fsGroup) of a pod's first container as the kubelet runs it: the
    container's runAsUser/runAsGroup over the pod's, the fsGroup as a supplementary group."""
    pod = pod_spec.get("securityContext") or {}
    container = pod_spec["containers"][0].get("securityContext") or {}
    uid = container.get("runAsUser", pod.get("runAsUser"))
    gid = container.get("runAsGroup", pod.get("runAsGroup"))
    fs_group = pod.get("fsGroup")
    groups = [g for g in (gid, fs_group, *pod.get("supplementalGroups", ())) if g is not None]
    return uid, groups, fs_group


def mountpoint_negative_ttl(pv_spec: Mapping[str, Any]) -> float:
    """How many seconds a Mountpoint mount keeps a lookup's "not found" (``inf``: until it is
    remounted), from its ``metadata-ttl`` and ``negative-metadata-ttl`` as Mountpoint 1.22.3
    reads them (mountpoint-s3-fs/src/fs/config.rs, ``CacheConfig::new`` and
    ``with_negative_metadata_ttl``: ``minimal`` caches no negative entry, ``indefinite``
    caches it for ever, and the negative TTL follows ``metadata-ttl`` unless set; without
    either option the default is ``minimal``, mountpoint-s3/src/cli.rs)."""
    given = _options(pv_spec.get("mountOptions") or (), r"[ =]")

    def seconds(value: str) -> float:
        presets = {"minimal": 0.0, "indefinite": float("inf")}
        return presets[value] if value in presets else float(value)

    ttl = given.get("negative-metadata-ttl", given.get("metadata-ttl", "minimal"))
    return seconds(ttl)


class MountpointFs:
    """A directory that behaves, for the seed program's operations, as a Mountpoint for S3
    mount of it does (awslabs/mountpoint-s3 doc/SEMANTICS.md, "Deletes", "Directory
    operations" and "File and directory rename", at mountpoint-s3-1.22.3):

    - ``unlink`` fails with EPERM unless the mount has ``allow-delete``;
    - a directory is "remote" once a file below it is written (as is every directory there at
      mount time): ``rmdir`` of it fails with EPERM (superblock.rs ``rmdir``:
      ``CannotRemoveRemoteDirectory``, fs/error.rs maps it to EPERM); once no file is left
      below it, it is gone (S3 has no directories: it existed only as its files' prefix);
    - ``rmdir`` of an empty directory made by ``mkdir`` with no file written below it works;
    - ``rename`` of anything fails (ENOSYS: general purpose buckets, ``RenameNotSupported``).

    Used as a context manager: ``os.unlink``, ``os.rmdir``, ``os.rename`` and ``os.replace``
    (what pathlib and shutil call, ``dir_fd`` forms included) follow these rules for paths
    under ``root`` and are put back after."""

    def __init__(self, root: Path, *, allow_delete: bool, vanish: bool = True) -> None:
        """``vanish``: a directory left without files is gone at once (default); else it
        stays visible, empty and refusing ``rmdir``, as a mount serving lookups from its
        metadata cache (``metadata-ttl indefinite``) may show it for a while."""
        self.root = root.resolve()
        self.allow_delete = allow_delete
        self.vanish = vanish
        self.remote: set[Path] = set()
        self.refused: list[str] = []
        self._real: dict[str, Any] = {}

    # -- the state: which directories S3 knows (through their files) ----------------------

    def _sync(self) -> None:
        """Mark every directory with a file below it remote; a remote directory with nothing
        left below it is gone."""
        for path in self.root.rglob("*"):
            if not path.is_dir() or path.is_symlink():
                for parent in path.parents:
                    if parent == self.root:
                        break
                    self.remote.add(parent)
        if not self.vanish:
            return
        for directory in sorted(self.remote, key=lambda p: len(p.parts), reverse=True):
            if directory.is_dir() and not any(directory.iterdir()):
                self._real["rmdir"](directory)
                self.remote.discard(directory)

    def _path(self, path: Any, dir_fd: int | None) -> Path:
        if dir_fd is not None:
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), os.fsdecode(path))
        return Path(os.path.abspath(os.fsdecode(path)))

    def _mine(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    def _refuse(self, err: int, what: str, path: Path) -> OSError:
        self.refused.append(f"{what} {path.relative_to(self.root)}")
        return OSError(err, os.strerror(err), str(path))

    # -- the operations ---------------------------------------------------------------------

    def unlink(self, path: Any, *, dir_fd: int | None = None) -> None:
        where = self._path(path, dir_fd)
        if not self._mine(where):
            return self._real["unlink"](path, dir_fd=dir_fd)
        self._sync()
        if not where.exists() and not where.is_symlink():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(where))
        if not self.allow_delete:
            raise self._refuse(errno.EPERM, "unlink", where)
        self._real["unlink"](where)
        self._sync()

    def rmdir(self, path: Any, *, dir_fd: int | None = None) -> None:
        where = self._path(path, dir_fd)
        if not self._mine(where):
            return self._real["rmdir"](path, dir_fd=dir_fd)
        self._sync()
        if where.is_dir() and where in self.remote:
            raise self._refuse(errno.EPERM, "rmdir", where)
        self._real["rmdir"](where)

    def rename(self, src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        where = self._path(src, kwargs.get("src_dir_fd"))
        if not self._mine(where):
            return self._real["rename"](src, dst, *args, **kwargs)
        raise self._refuse(errno.ENOSYS, "rename", where)

    def __enter__(self) -> MountpointFs:
        for name in ("unlink", "rmdir", "rename", "replace"):
            self._real[name] = getattr(os, name)
        self._real["remove"] = os.remove
        os.unlink = self.unlink  # type: ignore[assignment]
        os.remove = self.unlink  # type: ignore[assignment]
        os.rmdir = self.rmdir  # type: ignore[assignment]
        os.rename = self.rename  # type: ignore[assignment]
        os.replace = self.rename  # type: ignore[assignment]
        self._sync()
        return self

    def __exit__(self, *exc: Any) -> None:
        for name in ("unlink", "rmdir", "rename", "replace", "remove"):
            setattr(os, name, self._real[name])


def assert_seed_writes_and_readers_read(
    plan: Any, view: Callable[[Mapping[str, Any], int | None], View], loader: str = "llama-loader"
) -> None:
    """The store's seed Job (65532, its pod's fsGroup) writes its loader namespace's PV and
    reads it back, as ``view`` (a driver's) presents it; readers of any uid, with an fsGroup of
    their own or none, read the ``inference`` PV and cannot write it."""
    from pulumi_modelstore.kube import model_jobs
    from tests.conftest import PV, by_namespace

    pvs = {ns: s["inputs"]["spec"] for ns, s in by_namespace(plan, PV).items()}
    (seed,) = [
        j["inputs"]["spec"]["template"]["spec"]
        for j in plan.by_type("kubernetes:batch/v1:Job")
        if j["inputs"]["metadata"]["labels"].get(model_jobs.ROLE_LABEL) == "seed"
    ]
    uid, groups, fs_group = pod_identity(seed)
    seed_view = view(pvs[loader], fs_group)
    assert seed_view.may(uid, groups, "write", "dir"), seed_view
    assert seed_view.may(uid, groups, "read", "file"), seed_view
    for reader_uid in (1000, model_jobs.RUN_AS, 4242):
        for reader_fs_group in (None, 2000):
            reader_view = view(pvs["inference"], reader_fs_group)
            reader_groups = [reader_uid] + ([reader_fs_group] if reader_fs_group else [])
            for kind in ("dir", "file"):
                assert reader_view.may(reader_uid, reader_groups, "read", kind), (
                    reader_uid,
                    reader_view,
                )
            assert not reader_view.may(reader_uid, reader_groups, "write", "dir")
