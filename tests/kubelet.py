"""A node that runs the planned model Jobs the way a kubelet would, for ``tests/test_kubelet.py``.

For each Job a plan would create, its pod: volumes laid out with the owner and mode their
driver gives (:data:`DRIVERS`, one row per backend citing the driver's source), the kubelet's
``fsGroup`` ownership change where the driver lets the kubelet make it (:func:`apply_fs_group`),
Secrets and ConfigMaps with their ``defaultMode``, the ServiceAccount token where
``automountServiceAccountToken`` lets it in; then each container, init containers first, run by
``tests/kubelet_runner.py`` as root in a private mount namespace: a tmpfs root (read-only under
``readOnlyRootFilesystem``), each volume mount bound at its ``mountPath`` (read-only where the
mount, the claim or the volume says so), the process as the pod's ``runAsUser``/``runAsGroup``
with ``fsGroup`` and ``supplementalGroups`` as supplementary groups and only the capabilities
its ``securityContext`` leaves (``setpriv``). The image's Python is the test's.

What stands in for the world: a stub of the Hugging Face Hub serving a small model for any
repository (gated where the Job mounts a token, which it then requires), a TLS stub of the
Kubernetes API for the seed that records its manifest's digest, and an FSx data repository
association's import laid out before a ``--publish imported`` seed. All on the loopback
address; the Jobs reach them through the environment (``HF_ENDPOINT``, the
``KUBERNETES_SERVICE_*`` variables the kubelet sets).

Where the world cannot be the plan's: a pinned ``manifest_sha256`` names a manifest the stub
model cannot have (its publish time is in it), so a program that pins one runs its seed once
unpinned first, and its Jobs then pin what that run published.

Needs root (mounts, chroot, other uids); :func:`unavailable` says why not where it is not.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pulumi_modelstore.plan.engine import Plan

RUNNER = Path(__file__).resolve().parent / "kubelet_runner.py"
ROLE = "modelstore.pulumi.com/role"
STORE = "modelstore.pulumi.com/store"
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
# python:3.12-slim's PATH (its image config): where `python` and `sh` are found.
IMAGE_PATH = "/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"
CONTAINER_TIMEOUT = 120
# The capabilities a container runtime gives a container by default (containerd's
# pkg/oci/spec.go defaultUnixCaps), before its securityContext drops and adds.
DEFAULT_CAPS = (
    *("CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID"),
    *("SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE"),
)


def unavailable() -> str | None:
    """Why pods cannot run here (None when they can): the harness mounts, chroots and runs
    processes as other users, which takes root and util-linux's ``unshare``, ``mount`` and
    ``setpriv``."""
    if os.geteuid() != 0:
        return "the kubelet harness runs pods as other users with mounts: it needs root (CI is)"
    missing = [tool for tool in ("unshare", "mount", "setpriv") if shutil.which(tool) is None]
    if missing:
        return f"the kubelet harness needs util-linux's {', '.join(missing)}"
    return None


# --- what each driver gives a pod ------------------------------------------------------------


@dataclass(frozen=True)
class Root:
    """A volume's root as a pod finds it: owner, mode and what the kubelet or the driver does
    at mount time."""

    uid: int
    gid: int
    mode: int
    fs_group: bool = False
    """The kubelet applies the pod's ``fsGroup`` to the volume (``SetVolumeOwnership``)."""
    chmod: int | None = None
    """The driver changes the root's mode to this at every mount."""
    acts_as_owner: bool = False
    """Every request through the mount runs as the volume's owner, whoever the pod is (an EFS
    access point's POSIX user): emulated by giving the root to the pod's own uid and gid."""


def _options(pv: Mapping[str, Any]) -> dict[str, str]:
    """A PV's mount options as ``key -> value`` (``uid=1000``, ``region us-west-2``, ``-o
    allow_other``: value ``""`` for a bare flag)."""
    found = {}
    for option in pv.get("mountOptions") or ():
        text = option.removeprefix("-o ").removeprefix("--")
        key, _, value = text.replace(" ", "=", 1).partition("=")
        found[key] = value
    return found


def _octal(value: str | None, default: int) -> int:
    return int(value, 8) if value else default


def hostpath_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """kubernetes pkg/volume/hostpath/host_path.go (commit 006d84d2): ``checkType`` creates a
    missing ``DirectoryOrCreate`` path with ``makeDir``, ``os.MkdirAll(pathname, 0755)``, as
    the kubelet's user, root; its ``SetUp`` applies no fsGroup (only the path type check)."""
    return Root(0, 0, 0o755)


def fsx_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """A new Lustre file system's root is root's, 0755, and root squash is off by default (AWS
    FSx for Lustre guide, "Lustre root squash"). aws-fsx-csi-driver (commit 5b227125) never
    chowns or chmods a volume (pkg/driver/mount.go:43 only makes the target folder, 0755), and
    its CSIDriver's ``fsGroupPolicy`` is ``ReadWriteOnceWithFSType``
    (charts/aws-fsx-csi-driver/values.yaml:11, templates/csidriver.yaml:7): the kubelet applies
    fsGroup only to a ReadWriteOnce volume with an fsType (kubernetes
    pkg/volume/csi/csi_mounter.go ``supportsFSGroup``), and the store's PVs are
    ReadWriteMany."""
    return Root(0, 0, 0o755)


def efs_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """An access point (``fs-…::fsap-…``) creates its root directory owned by its
    ``creation_info`` and runs every NFS request as its ``posix_user`` (AWS EFS guide,
    "Working with Amazon EFS access points": "enforce a user identity"), so a pod's own uid
    does not decide what it may do; without an access point, the file system's root is root's
    0755 (AWS EFS guide, "Working with users, groups, and permissions at the NFS level")."""
    if "::" in pv["csi"]["volumeHandle"]:
        return Root(0, 0, 0o755, acts_as_owner=True)
    return Root(0, 0, 0o755)


def nfs_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """An export's folder as its admin made it: root's, 0755. csi-driver-nfs (commit
    d3b27c00) chmods the mount only for a non-zero ``mountPermissions``
    (pkg/nfs/nodeserver.go:170-175; the store sets ``"0"``), and its CSIDriver has
    ``fsGroupPolicy: File`` (charts/latest/csi-driver-nfs/templates/csi-nfs-driverinfo.yaml:14):
    the kubelet applies fsGroup, as root, which the server must not squash (``no_root_squash``,
    as assumed here: docs/backends/kubernetes/nfs.md)."""
    permissions = pv["csi"].get("volumeAttributes", {}).get("mountPermissions")
    chmod = _octal(permissions, 0) or None
    return Root(0, 0, 0o755, fs_group=True, chmod=chmod)


def azure_files_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """A new NFS share's root: root's, 0755. azurefile-csi-driver (commit 7b5ae18e) chmods it to
    ``mountPermissions`` at every mount, 0777 unless the volume says otherwise
    (pkg/azurefile/azurefile_options.go:82; pkg/azurefile/nodeserver.go:367-368, 402-411: ``0``
    skips it), and chowns to the pod's fsGroup itself unless ``fsGroupChangePolicy`` is
    ``None`` (nodeserver.go:727-730; the store sets ``None``); its CSIDriver's
    ``ReadWriteOnceWithFSType`` (deploy/csi-azurefile-driver.yaml:15) keeps the kubelet's
    hands off a ReadWriteMany volume."""
    attributes = pv["csi"].get("volumeAttributes", {})
    permissions = attributes.get("mountPermissions")
    chmod = _octal(permissions, 0o777) or None
    changes_group = attributes.get("fsGroupChangePolicy") != "None"
    return Root(0, 0, 0o755, fs_group=changes_group, chmod=chmod)


def mountpoint_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """Mountpoint for S3 shows every file and folder with the mount's ``uid``/``gid`` (else
    the mounting process's, root's), folders ``dir-mode`` (default 0755) and files
    ``file-mode`` (0644) (awslabs/mountpoint-s3, commit 58817cab,
    ``mountpoint-s3-fs/src/fs/config.rs``:75-85), and lets the kernel check permissions
    (``mountpoint-s3-fs/src/fuse/config.rs``:39, ``DefaultPermissions``). The driver's
    CSIDriver sets no fsGroupPolicy (tests/charts/aws-mountpoint-s3-csi-driver-2.7.0)."""
    o = _options(pv)
    return Root(int(o.get("uid") or 0), int(o.get("gid") or 0), _octal(o.get("dir-mode"), 0o755))


def gcsfuse_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """Cloud Storage FUSE shows everything as root's, folders 0755 and files 0644, unless
    ``uid``, ``gid``, ``dir-mode``, ``file-mode`` say otherwise (GoogleCloudPlatform/
    gcs-fuse-csi-driver, commit 5fcdc04a, ``docs/troubleshooting.md``:60); given a pod's
    fsGroup the driver mounts with ``gid=<fsGroup>``, ``file-mode=664``, ``dir-mode=775``,
    before the PV's own options, which win (``pkg/csi_driver/utils.go``:377, "Delegate fsGroup
    to CSI Driver")."""
    o = _options(pv)
    gid, dir_mode = 0, 0o755
    if fs_group is not None:
        gid, dir_mode = fs_group, 0o775
    return Root(
        int(o.get("uid") or 0),
        int(o.get("gid") or gid),
        _octal(o.get("dir-mode"), dir_mode),
    )


def blobfuse_root(pv: Mapping[str, Any], fs_group: int | None) -> Root:
    """blobfuse2, mounted by the driver as root, shows files and folders 0777 with
    ``allow-other`` (Azure/azure-storage-fuse, commit 74098e3d, ``common/types.go``:64-66,
    ``DefaultAllowOtherPermissionBits``; 0755 files and 0775 folders without it) as the
    mounting user's."""
    allow_other = "allow_other" in _options(pv) or "allow-other" in _options(pv)
    return Root(0, 0, 0o777 if allow_other else 0o775)


def ext4_root(fs_group: int | None) -> Root:
    """A new ext4 file system's root (mkfs): root's, 0755. aws-ebs-csi-driver's CSIDriver has
    ``fsGroupPolicy: File`` (tests/charts/aws-ebs-csi-driver-2.64.0/templates/csidriver.yaml:19):
    the kubelet applies the pod's fsGroup."""
    return Root(0, 0, 0o755, fs_group=True)


DRIVERS: dict[str, Callable[[Mapping[str, Any], int | None], Root]] = {
    "hostPath": hostpath_root,
    "fsx.csi.aws.com": fsx_root,
    "efs.csi.aws.com": efs_root,
    "nfs.csi.k8s.io": nfs_root,
    "file.csi.azure.com": azure_files_root,
    "s3.csi.aws.com": mountpoint_root,
    "gcsfuse.csi.storage.gke.io": gcsfuse_root,
    "blob.csi.azure.com": blobfuse_root,
}
# Drivers whose mount shows its own owner and mode at every mount, whatever is stored.
FUSE_DRIVERS = ("s3.csi.aws.com", "gcsfuse.csi.storage.gke.io", "blob.csi.azure.com")
# Provisioners of dynamic claims whose volumes are block devices formatted ext4.
BLOCK_PROVISIONERS = {"ebs.csi.aws.com", "pd.csi.storage.gke.io", "disk.csi.azure.com"}


def driver_of(pv: Mapping[str, Any]) -> str:
    if "hostPath" in pv:
        return "hostPath"
    if "csi" in pv:
        return str(pv["csi"]["driver"])
    raise AssertionError(f"no row in DRIVERS for the volume source of {sorted(pv)}")


def pv_read_only(pv: Mapping[str, Any]) -> bool:
    """A PV the driver mounts read-only: its CSI ``readOnly``, or a read-only mount option."""
    o = _options(pv)
    return bool(pv.get("csi", {}).get("readOnly")) or "ro" in o or "read-only" in o


# --- the kubelet's own volumes ----------------------------------------------------------------

# kubernetes pkg/volume/volume_linux.go (commit 006d84d2) changeFilePermission: the group
# becomes fsGroup, the mode gains rwMask (0660) or, on a read-only volume, roMask (0440), and a
# folder also execMask (0110) and setgid.
RW_MASK, RO_MASK, EXEC_MASK = 0o660, 0o440, 0o110


def apply_fs_group(root: Path, fs_group: int, read_only: bool, on_root_mismatch: bool) -> None:
    """What ``SetVolumeOwnership`` does with a pod's fsGroup (kubernetes
    pkg/volume/volume_linux.go): every file and folder given the group and the mask above;
    with ``fsGroupChangePolicy: OnRootMismatch``, nothing where the root already has the group
    and the mask (``skipPermissionChange``)."""
    mask = RO_MASK if read_only else RW_MASK
    top = root.stat()
    if on_root_mismatch and top.st_gid == fs_group and (top.st_mode & mask) == mask:
        return
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        os.lchown(path, -1, fs_group)
        if path.is_symlink():
            continue
        extra = mask | (0o2000 | EXEC_MASK if path.is_dir() else 0)
        path.chmod((info.st_mode & 0o7777) | extra)


def lay_files(where: Path, files: Mapping[str, bytes], mode: int) -> None:
    """A Secret's or ConfigMap's items as the kubelet writes them (atomic writer): root's
    files with ``mode``, in root's 0755 folders."""
    where.mkdir(mode=0o755)
    for name, data in files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        path.write_bytes(data)
        path.chmod(mode)


# --- the stubs the Jobs talk to ---------------------------------------------------------------

STUB_MODEL = {
    "config.json": b'{"architectures": ["StubForCausalLM"]}',
    "generation_config.json": b"{}",
    "model.safetensors": os.urandom(64 * 1024),
    "tokenizer.json": b'{"version": "1.0"}',
    "tokenizer_config.json": b"{}",
    "README.md": b"# a stub model\n",
}


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


class HubStub(http.server.BaseHTTPRequestHandler):
    """The Hub's tree and resolve endpoints for every repository at every revision, serving
    :data:`STUB_MODEL`; a repository in ``gated`` answers 401 without ``Bearer <token>``."""

    gated: ClassVar[set[str]] = set()
    token = "hf_kubelet_harness"

    def do_GET(self) -> None:
        parts = self.path.split("?")[0].split("/")
        repo, files = None, STUB_MODEL
        if parts[1:4] == ["api", "models", parts[3]] and len(parts) >= 7 and parts[5] == "tree":
            repo = f"{parts[3]}/{parts[4]}"
        elif len(parts) >= 6 and parts[3] == "resolve":
            repo = f"{parts[1]}/{parts[2]}"
        if repo is None:
            self.send_error(404)
            return
        if repo in self.gated and self.headers.get("Authorization") != f"Bearer {self.token}":
            self.send_error(401)
            return
        if parts[5:6] == ["tree"]:
            body = json.dumps([self._entry(p, d) for p, d in sorted(files.items())]).encode()
        elif "/".join(parts[5:]) in files:
            body = files["/".join(parts[5:])]
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    @staticmethod
    def _entry(path: str, data: bytes) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "file", "path": path, "size": len(data)}
        if path.endswith(".safetensors"):
            lfs = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data)}
            return {**entry, "oid": "f" * 40, "lfs": {**lfs, "pointerSize": 134}}
        return {**entry, "oid": _git_blob_id(data)}

    def log_message(self, *args: object) -> None:
        pass


class ApiStub(http.server.BaseHTTPRequestHandler):
    """The Kubernetes API's ConfigMap endpoints, as much as ``model/record.py`` uses: create
    (201, or 409 when it exists), get, replace; a request without ``Bearer <token>`` is 401."""

    config_maps: ClassVar[dict[str, dict[str, Any]]] = {}
    token = "kubelet-harness-service-account-token"

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {self.token}":
            return True
        self._reply(401, {"kind": "Status", "message": "Unauthorized"})
        return False

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        return dict(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

    def do_POST(self) -> None:
        if not self._authorized():
            return
        body = self._body()
        key = f"{body['metadata']['namespace']}/{body['metadata']['name']}"
        if key in self.config_maps:
            self._reply(409, {"kind": "Status", "reason": "AlreadyExists"})
            return
        body["metadata"]["resourceVersion"] = "1"
        self.config_maps[key] = body
        self._reply(201, body)

    def do_GET(self) -> None:
        if not self._authorized():
            return
        key = self._key()
        if key not in self.config_maps:
            self._reply(404, {"kind": "Status", "reason": "NotFound"})
            return
        self._reply(200, self.config_maps[key])

    def do_PUT(self) -> None:
        if not self._authorized():
            return
        self.config_maps[self._key()] = self._body()
        self._reply(200, self.config_maps[self._key()])

    def _key(self) -> str:
        parts = self.path.split("/")  # /api/v1/namespaces/<ns>/configmaps/<name>
        return f"{parts[4]}/{parts[6]}"

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class World:
    """The stubs' addresses and the API's certificate authority."""

    hub: str
    api_port: int
    ca: str


def _self_signed(where: Path) -> tuple[Path, Path]:
    cert, key = where / "api.crt", where / "api.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@contextmanager
def world(where: Path) -> Iterator[World]:
    """The Hub stub and the TLS API stub on loopback ports, for the duration."""
    cert, key = _self_signed(where)
    with ExitStack() as stack:
        ports = []
        for handler, tls in ((HubStub, False), (ApiStub, True)):
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            if tls:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(cert, key)
                server.socket = context.wrap_socket(server.socket, server_side=True)
            # A short poll: shutdown() waits for the loop to look (0.5 s by default).
            poll = {"poll_interval": 0.02}
            threading.Thread(target=server.serve_forever, kwargs=poll, daemon=True).start()
            stack.callback(server.server_close)
            stack.callback(server.shutdown)
            ports.append(server.server_address[1])
        yield World(f"http://127.0.0.1:{ports[0]}", ports[1], cert.read_text())


# --- a cluster of one node, from a plan ----------------------------------------------------


@dataclass
class Run:
    """One container's run: its pod's Job, the container, what it printed and whether it read
    the ServiceAccount token."""

    job: str
    container: str
    returncode: int
    stdout: str
    stderr: str
    token_read: bool
    token_mounted: bool

    def line(self) -> str:
        said = (self.stderr.strip() or self.stdout.strip()).splitlines()[-1:] or [""]
        return f"{self.job}/{self.container}: exit {self.returncode}: {said[0]}"


@dataclass
class Node:
    """The plan's objects, the stubs, and a folder holding every volume's storage."""

    plan: Plan
    world: World
    where: Path
    storage: dict[str, Path] = field(default_factory=dict)
    pins: dict[str, str] = field(default_factory=dict)
    """A pinned manifest digest -> the one the stub model was published with."""

    def objects(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.plan.kubernetes_objects() if o["kind"] == kind]

    def jobs(self, role: str) -> list[dict[str, Any]]:
        jobs = self.objects("Job")
        return [j for j in jobs if j["spec"]["template"]["metadata"]["labels"].get(ROLE) == role]

    # -- claims to storage

    def _claim(self, namespace: str, name: str) -> tuple[str, Mapping[str, Any]]:
        """(storage key, PV spec) of a claim: its static PV's (the storage is the store's,
        shared by its claims), else a volume of its own from its class's provisioner (no PV
        spec: a block volume, :func:`ext4_root`)."""
        for pv in self.objects("PersistentVolume"):
            ref = pv["spec"].get("claimRef") or {}
            if (ref.get("namespace"), ref.get("name")) == (namespace, name):
                key = pv["metadata"].get("labels", {}).get(STORE) or pv["metadata"]["name"]
                return key, pv["spec"]
        claims = [
            c
            for c in self.objects("PersistentVolumeClaim")
            if (c["metadata"].get("namespace"), c["metadata"]["name"]) == (namespace, name)
        ]
        classes = {c["metadata"]["name"]: c for c in self.objects("StorageClass")}
        assert claims, f"claim {namespace}/{name} is neither bound to a PV nor made by the plan"
        provisioner = classes[claims[0]["spec"]["storageClassName"]]["provisioner"]
        assert provisioner in BLOCK_PROVISIONERS, f"no row for provisioner {provisioner}"
        return f"claim:{namespace}/{name}", {}

    def volume_root(self, namespace: str, name: str, pod: Mapping[str, Any]) -> tuple[Path, bool]:
        """The storage behind a claim, made the first time (as the storage's creator leaves
        it), with what the driver and the kubelet do at this pod's mount; and whether the
        driver mounts it read-only."""
        key, pv = self._claim(namespace, name)
        security = pod.get("securityContext") or {}
        fs_group = security.get("fsGroup")
        # The root as this pod's mount shows it.
        root = DRIVERS[driver_of(pv)](pv, fs_group) if pv else ext4_root(fs_group)
        path = self.storage.get(key)
        if path is None:
            path = self.where / "storage" / key.replace("/", "_").replace(":", "_")
            path.mkdir(parents=True)
            os.chown(path, root.uid, root.gid)
            path.chmod(root.mode)
            self.storage[key] = path
        elif pv and driver_of(pv) in FUSE_DRIVERS:
            # A FUSE mount shows its own owner and mode, whatever the last mount showed.
            os.chown(path, root.uid, root.gid)
            path.chmod(root.mode)
        read_only = pv_read_only(pv) if pv else False
        if root.chmod is not None and not read_only:
            path.chmod(root.chmod)
        if root.acts_as_owner:
            user = _identity(pod["containers"][0], pod)
            os.chown(path, user[0], user[1])
        if root.fs_group and fs_group is not None:
            policy = security.get("fsGroupChangePolicy") == "OnRootMismatch"
            apply_fs_group(path, fs_group, read_only, policy)
        return path, read_only

    def service_account_automounts(self, pod: Mapping[str, Any], namespace: str) -> bool:
        """Whether the kubelet mounts the ServiceAccount token: the pod's
        ``automountServiceAccountToken`` if set, else its ServiceAccount's, else true
        (kubernetes plugin/pkg/admission/serviceaccount/admission.go ``shouldAutomount``)."""
        if "automountServiceAccountToken" in pod:
            return bool(pod["automountServiceAccountToken"])
        name = pod.get("serviceAccountName") or "default"
        for account in self.objects("ServiceAccount"):
            meta = account["metadata"]
            if (meta.get("namespace"), meta["name"]) == (namespace, name):
                return bool(account.get("automountServiceAccountToken", True))
        return True

    # -- running a pod

    def run_job(self, job: Mapping[str, Any]) -> list[Run]:
        """Every container of the Job's pod, init containers first; stops at the first that
        fails, as the kubelet does."""
        namespace = job["metadata"]["namespace"]
        name = job["metadata"]["name"]
        pod = self._pinned(job["spec"]["template"]["spec"])
        where = self.where / "pods" / f"{namespace}-{name}-{len(list(self.where.glob('pods/*')))}"
        where.mkdir(parents=True)
        volumes = self._volumes(pod, namespace, where)
        token = self._token(pod, namespace)
        runs = []
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            run = self._run(f"{namespace}/{name}", container, pod, volumes, token, where)
            runs.append(run)
            if run.returncode != 0:
                break
        return runs

    def _pinned(self, pod: Mapping[str, Any]) -> dict[str, Any]:
        """The pod with every pinned digest the stub model stands in for replaced."""
        text = json.dumps(pod)
        for pinned, published in self.pins.items():
            text = text.replace(pinned, published)
        return dict(json.loads(text))

    def _volumes(
        self, pod: Mapping[str, Any], namespace: str, where: Path
    ) -> dict[str, tuple[Path, bool]]:
        """Each volume's folder on the node and whether it is read-only whatever the mount."""
        security = pod.get("securityContext") or {}
        fs_group = security.get("fsGroup")
        found: dict[str, tuple[Path, bool]] = {}
        for volume in pod["volumes"]:
            name = volume["name"]
            path = where / "volumes" / name
            path.parent.mkdir(exist_ok=True)
            if "emptyDir" in volume:
                # kubernetes pkg/volume/emptydir/empty_dir.go: a folder 0777 (``perm``), with
                # fsGroup applied.
                path.mkdir(mode=0o777)
                path.chmod(0o777)
                if fs_group is not None:
                    apply_fs_group(path, fs_group, False, False)
                found[name] = (path, False)
            elif "configMap" in volume:
                # ConfigMapVolumeSourceDefaultMode 0644 (kubernetes pkg/apis/core/types.go).
                cm = volume["configMap"]
                data = self._config_map(namespace, cm["name"])
                items = {i["path"]: data[i["key"]] for i in cm.get("items", [])} or data
                lay_files(path, items, cm.get("defaultMode", 0o644))
                if fs_group is not None:
                    apply_fs_group(path, fs_group, True, False)
                found[name] = (path, True)
            elif "secret" in volume:
                # SecretVolumeSourceDefaultMode 0644 (kubernetes pkg/apis/core/types.go); the
                # stubs' token under every key the pod names.
                secret = volume["secret"]
                data = HubStub.token.encode()
                items = {i["path"]: data for i in secret.get("items", [])} or {"token": data}
                lay_files(path, items, secret.get("defaultMode", 0o644))
                if fs_group is not None:
                    apply_fs_group(path, fs_group, True, False)
                found[name] = (path, True)
            elif "persistentVolumeClaim" in volume:
                claim = volume["persistentVolumeClaim"]
                root, pv_ro = self.volume_root(namespace, claim["claimName"], pod)
                found[name] = (root, pv_ro or bool(claim.get("readOnly")))
            else:
                raise AssertionError(f"no layout for volume {name}: {sorted(volume)}")
        return found

    def _config_map(self, namespace: str, name: str) -> dict[str, bytes]:
        """The data of a ConfigMap the plan makes (the programs' bundle)."""
        for cm in self.objects("ConfigMap"):
            if (cm["metadata"].get("namespace"), cm["metadata"]["name"]) == (namespace, name):
                return {k: v.encode() for k, v in cm["data"].items()}
        raise AssertionError(f"ConfigMap {namespace}/{name} is not in the plan")

    def _token(self, pod: Mapping[str, Any], namespace: str) -> dict[str, Any] | None:
        """The projected token volume (``kube-api-access-*``, defaultMode 0644: kubernetes
        plugin/pkg/admission/serviceaccount/admission.go) where the pod gets one."""
        if not self.service_account_automounts(pod, namespace):
            return None
        files = {
            "token": [ApiStub.token, 0o644],
            "ca.crt": [self.world.ca, 0o644],
            "namespace": [namespace, 0o644],
        }
        return {"target": TOKEN_PATH, "files": files}

    def _run(
        self,
        job: str,
        container: Mapping[str, Any],
        pod: Mapping[str, Any],
        volumes: Mapping[str, tuple[Path, bool]],
        token: dict[str, Any] | None,
        where: Path,
    ) -> Run:
        uid, gid, groups = _identity(container, pod)
        caps = _capabilities(container)
        argv = [*container.get("command", []), *container.get("args", [])]
        if argv and argv[0] == "python":
            argv[0] = os.path.realpath(sys.executable)  # the image's Python: the test's
        binds = []
        for mount in container.get("volumeMounts", []):
            source, read_only = volumes[mount["name"]]
            if mount.get("subPath"):
                source = source / mount["subPath"]
                if not source.exists():
                    # The kubelet does not start the container (CreateContainerConfigError).
                    missing = f"subPath {mount['subPath']} of volume {mount['name']} is missing"
                    return Run(job, container["name"], -1, "", missing, False, False)
            binds.append(
                {
                    "source": str(source),
                    "target": mount["mountPath"],
                    "read_only": read_only or bool(mount.get("readOnly")),
                }
            )
        log = where / f"termination-{container['name']}"
        log.touch()
        log.chmod(0o666)  # the kubelet's file for terminationMessagePath
        binds.append(
            {
                "source": str(log),
                "target": container.get("terminationMessagePath", "/dev/termination-log"),
                "read_only": False,
            }
        )
        env = {
            "PATH": IMAGE_PATH,
            "HOSTNAME": "pod",
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": str(self.world.api_port),
            "KUBERNETES_SERVICE_PORT_HTTPS": str(self.world.api_port),
            "HF_ENDPOINT": self.world.hub,
        }
        env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
        security = container.get("securityContext") or {}
        spec = {
            "root": str(where / f"root-{container['name']}"),
            "system": [str(Path(os.path.realpath(sys.executable)).parent.parent)],
            "binds": binds,
            "token": token,
            "read_only_root": bool(security.get("readOnlyRootFilesystem")),
            "argv": [
                "setpriv",
                f"--reuid={uid}",
                f"--regid={gid}",
                f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups",
                f"--bounding-set=-all{''.join(f',+{c.lower()}' for c in caps)}",
                "--inh-caps=-all",
                *(["--no-new-privs"] if security.get("allowPrivilegeEscalation") is False else []),
                "--",
                *argv,
            ],
            "env": env,
            "workdir": container.get("workingDir", "/"),
            "result": str(where / f"result-{container['name']}.json"),
            "timeout": CONTAINER_TIMEOUT,
        }
        (where / f"root-{container['name']}").mkdir()
        spec_path = where / f"spec-{container['name']}.json"
        spec_path.write_text(json.dumps(spec))
        runner = [os.path.realpath(sys.executable), "-I", str(RUNNER), str(spec_path)]
        done = subprocess.run(
            ["unshare", "-m", "--propagation", "private", *runner],
            capture_output=True,
            text=True,
            timeout=CONTAINER_TIMEOUT + 30,
        )
        if done.returncode != 0:
            raise AssertionError(f"the runner failed for {job}: {done.stderr}")
        result = json.loads(Path(spec["result"]).read_text())
        return Run(
            job,
            container["name"],
            result["returncode"],
            result["stdout"],
            result["stderr"],
            result["token_read"],
            token is not None,
        )


def _identity(container: Mapping[str, Any], pod: Mapping[str, Any]) -> tuple[int, int, list[int]]:
    """uid, gid and supplementary groups: the container's securityContext over the pod's;
    fsGroup and supplementalGroups join the primary group (the CRI's
    ``SupplementalGroups``: kubernetes pkg/kubelet/kuberuntime/security_context.go)."""
    pod_security = pod.get("securityContext") or {}
    security = {**pod_security, **(container.get("securityContext") or {})}
    uid = int(security.get("runAsUser", 0))
    gid = int(security.get("runAsGroup", 0))
    groups = [gid]
    if pod_security.get("fsGroup") is not None:
        groups.append(int(pod_security["fsGroup"]))
    groups += [int(g) for g in pod_security.get("supplementalGroups", [])]
    return uid, gid, sorted(set(groups))


def _capabilities(container: Mapping[str, Any]) -> list[str]:
    """The runtime's default capabilities less ``drop`` (``ALL``: every one) plus ``add``."""
    caps = (container.get("securityContext") or {}).get("capabilities") or {}
    drop = set(caps.get("drop", []))
    kept = [] if "ALL" in drop else [c for c in DEFAULT_CAPS if c not in drop]
    return sorted({*kept, *caps.get("add", [])})


# --- a program's model Jobs, end to end -------------------------------------------------------


def _arg(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


def run_model_jobs(plan: Plan, where: Path) -> list[Run]:
    """Every seed Job of the plan, then every verify Job, then every seed Job again, on one
    node; each seed's gated repository served only with the token its pod mounts, an imported
    source laid out as the storage's import leaves it, and a pinned digest replaced by the stub
    model's (module docstring)."""
    runs: list[Run] = []
    with world(where) as w:
        node = Node(plan, w, where)
        ApiStub.config_maps = {}
        HubStub.gated = set()
        seeds = node.jobs("seed")
        for seed in seeds:
            pod = seed["spec"]["template"]["spec"]
            args = pod["containers"][0]["args"]
            source = _arg(args, "--source") or ""
            if "--token-file" in args and source.startswith("hf://"):
                HubStub.gated.add(source.removeprefix("hf://"))
            if _arg(args, "--publish") == "imported":
                _import(node, seed)
            pinned = _arg(args, "--manifest-sha256")
            if pinned is not None and pinned not in node.pins:
                unpinned = json.loads(json.dumps(seed))
                container = unpinned["spec"]["template"]["spec"]["containers"][0]
                i = container["args"].index("--manifest-sha256")
                del container["args"][i : i + 2]
                first = node.run_job(unpinned)
                runs += first
                digest = _published_digest(first[-1])
                if digest is None:
                    return runs
                node.pins[pinned] = digest
            seed_runs = node.run_job(seed)
            runs += seed_runs
            if seed_runs[-1].returncode != 0:
                return runs
            record = _arg(args, "--record-configmap")
            if record is not None:
                digest = ApiStub.config_maps[record]["data"]["manifest-sha256"]
                _pin_recorded(node, seed, digest)
        for verify in node.jobs("verify"):
            runs += node.run_job(verify)
        # A seed Job run again (a replaced Job, a retried pod) on the store it published.
        for seed in seeds:
            runs += node.run_job(seed)
    return runs


def _published_digest(run: Run) -> str | None:
    """The manifest digest a seed's one line names (``... manifest sha256:<hex>``)."""
    for word in run.stdout.split():
        if word.startswith("sha256:"):
            return word.rstrip(",")
    return None


def _pin_recorded(node: Node, seed: Mapping[str, Any], digest: str) -> None:
    """The verify Jobs of the seed's store check the digest the seed recorded: what the plan
    holds there is the placeholder of a value read back after the seed ran."""
    store = seed["metadata"]["labels"].get(STORE)
    for verify in node.jobs("verify"):
        if verify["metadata"]["labels"].get(STORE) != store:
            continue
        args = verify["spec"]["template"]["spec"]["containers"][0]["args"]
        placeholder = _arg(args, "--manifest-sha256")
        if placeholder is not None:
            node.pins[placeholder] = digest


def _import(node: Node, seed: Mapping[str, Any]) -> None:
    """What an FSx data repository association leaves under ``revisions/<revision>/`` before
    the seed publishes: the source's objects as root's files, 0644, in root's 0755 folders (S3
    objects without POSIX metadata; AWS FSx for Lustre guide, "POSIX metadata support for data
    repositories")."""
    pod = seed["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    volume = next(v for v in pod["volumes"] if "persistentVolumeClaim" in v)
    namespace, claim = seed["metadata"]["namespace"], volume["persistentVolumeClaim"]["claimName"]
    store, _ = node.volume_root(namespace, claim, pod)
    revision = store / "revisions" / (_arg(args, "--revision") or "")
    revision.mkdir(parents=True, mode=0o755)
    (store / "revisions").chmod(0o755)
    revision.chmod(0o755)
    for name, data in STUB_MODEL.items():
        (revision / name).write_bytes(data)
        (revision / name).chmod(0o644)
