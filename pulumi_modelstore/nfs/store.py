"""A model store on an existing NFS export (an on-prem NAS, GlusterFS through NFS-Ganesha, a
Google Filestore instance, any NFSv3 or NFSv4 server), mounted through the ``nfs.csi.k8s.io``
driver from kubernetes-csi/csi-driver-nfs. The store makes no storage: it installs the driver
once per cluster (or finds it there) and gives each consumer namespace a static PV and claim.

Upstream facts below were checked in kubernetes-csi/csi-driver-nfs at tag v4.13.4.
"""

# No `from __future__ import annotations`: the component analyzer reads the annotations.

import ipaddress
import posixpath
import re
from collections.abc import Hashable, Sequence
from types import MappingProxyType
from typing import Any, Required

import pulumi

from .. import validation as v
from ..cluster import ClusterScope
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..kube.drivers import CsiDriverChart, helm_release
from ..kube.volumes import DYNAMIC_SUFFIX, DynamicClass
from ..store import Binding, DynamicClaims, ModelStore, ModelStoreArgs, Spec
from .options import options_fit_the_client

# charts/v4.13.4/csi-driver-nfs/Chart.yaml (version and appVersion 4.13.4, the newest entry of
# charts/index.yaml); the repository is charts/README.md's "Option 1". The one place this
# version lives.
NFS_CSI = CsiDriverChart(
    driver="nfs.csi.k8s.io",
    chart="csi-driver-nfs",
    repo="https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts",
    version="4.13.4",
    app_version="4.13.4",
)
# values.yaml: `driver.name` is the name our PVs use; `node.tolerations` defaults to
# [{operator: Exists}] already (so GPU-tainted nodes get the node plugin), set here so a changed
# default cannot drop it. The controller only serves dynamic volumes; static PVs never reach it.
HELM_VALUES = {
    "driver": {"name": NFS_CSI.driver},
    "node": {"tolerations": [{"operator": "Exists"}]},
}
DRIVER_INSTALLS = ("helm", "none")
NFS_VERSIONS = ("3", "4", "4.0", "4.1", "4.2")
# Options the store sets itself: the version comes from nfs_version, ro/rw from the consumer's
# access (an `rw` on a reader, or `vers=3` next to `nfsvers=4.1`, would contradict them). The
# Linux client also reads a version from the flags v2 to v4.2 (fs/nfs/fs_context.c,
# nfs_fs_parameters: fsparam_flag("v3", Opt_v), ...).
MANAGED_OPTIONS = (
    "nfsvers",
    "vers",
    "minorversion",
    "v2",
    "v3",
    "v4",
    "v4.0",
    "v4.1",
    "v4.2",
    "ro",
    "rw",
)
# RFC 1123 section 2.1 host names: labels of 1-63 letters, digits and '-', neither first nor
# last a '-', at most 253 characters in all (RFC 1035 2.3.4's 255 less the root's dot and length).
_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?"
    r"(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*$"
)
SERVER_RULE = (
    "set to the NFS server's hostname or IP address (e.g. nas01.corp.example or 10.0.0.2; the "
    "export path goes in share)"
)
IPV4_RULE = (
    "a valid IPv4 address: four numbers from 0 to 255 without leading zeros (a name whose last "
    "label is all digits is read as an address, RFC 1123 section 2.1), or a host name"
)


class NfsModelStoreArgs(ModelStoreArgs, total=False):
    """Arguments of :class:`NfsModelStore`: the export (``server``, ``share``) and a consumer
    namespace are required, the rest optional."""

    server: Required[pulumi.Input[str]]
    """The NFS server: a hostname or IP address (``nas01.corp.example``, ``10.0.0.2``; a
    Filestore instance's IP). Required."""
    share: Required[pulumi.Input[str]]
    """The export's absolute path on the server (``/exports/models``; ``/vol1`` for a Filestore
    instance whose file share is ``vol1``). Required."""
    sub_dir: pulumi.Input[str]
    """A directory inside the export to mount instead of its root, relative (no leading ``/``,
    no ``..``); it must exist on the server. Default: none, the export's root."""
    nfs_version: str
    """NFS protocol version, the ``nfsvers`` mount option: one of ``3``, ``4``, ``4.0``,
    ``4.1``, ``4.2``, as a string (quote it in YAML). Servers that speak only NFSv3 need ``3``:
    many older NAS, and Filestore instances not created with NFSv4.1 (every basic-tier one).
    Default: ``"4.1"``."""
    extra_mount_options: Sequence[pulumi.Input[str]]
    """NFS mount options added after the store's own (``nfsvers``, ``hard``, and ``ro`` for
    readers), e.g. ``nconnect=4`` (Linux 5.3+: several TCP connections, faster large reads),
    ``tcp`` (recommended with NFSv3, e.g. on Filestore), ``noresvport``, ``actimeo=30``;
    ``soft`` replaces ``hard``. Version and ``ro``/``rw`` options are refused: use
    ``nfs_version`` and the readers/writers lists. Numbers and listed values must be ones the
    Linux client takes (``nconnect`` 1 to 16, ``timeo`` at least 1, ``proto`` tcp, udp, rdma
    and their 6 forms, ``udp`` only with ``nfs_version: "3"``...). Default: none."""
    capacity_gib: int
    """Capacity the PVs and claims advertise, in GiB. Nominal: the driver enforces no size on
    an NFS export (the server's quota does). Kept small so the claims do not eat a namespace's
    storage ResourceQuota. Default: ``1``."""
    driver_install: str
    """How the cluster gets the ``nfs.csi.k8s.io`` driver, once per cluster whichever store asks
    first: ``helm`` (the ``csi-driver-nfs`` chart pinned here, node pods tolerating every taint
    so GPU nodes get it) or ``none`` when the cluster has the driver already. Stores on one
    cluster asking for different installs are refused. Default: ``helm``."""
    driver_namespace: str
    """Namespace of the driver's Helm release. Default: ``kube-system``."""
    cluster_name: str
    """A name for the cluster's scope (its namespaces, PV names and driver install), for a
    program that serves two clusters, each with its own Kubernetes provider. Default:
    ``kubernetes``."""


def server_is_a_host(store: str, server: Any) -> None:
    """An RFC 1123 host name, or an IPv4 or IPv6 address the driver and the kernel take."""
    if v.is_output(server):
        return
    if not isinstance(server, str):
        raise ModelStoreInputError(store, "server", server, SERVER_RULE)
    address = _address(server)
    if address is None and _HOSTNAME.fullmatch(server):
        if server.rsplit(".", 1)[-1].isdigit():  # e.g. 10.0.0.256, 10.0.1, 010.0.0.1
            raise ModelStoreInputError(store, "server", server, IPV4_RULE)
        return
    if address is None:
        raise ModelStoreInputError(store, "server", server, SERVER_RULE)
    if isinstance(address, ipaddress.IPv6Address) and (
        address.scope_id is not None or address.ipv4_mapped is not None
    ):
        # csi-driver-nfs builds the source as host:path and brackets the host only when
        # k8s.io/utils/net IsIPv6String says it is IPv6 (getServerFromSource, pkg/nfs/utils.go),
        # which is false for a zoned address (Go's ParseIP takes no zone) and for an IPv4-mapped
        # one: mount.nfs then splits the source at the address's first ':'.
        raise ModelStoreInputError(
            store,
            "server",
            server,
            "an IPv6 address without a zone (%...) that is not IPv4-mapped (::ffff:a.b.c.d): "
            "the driver puts such addresses unbracketed before ':<share>' (or give the IPv4 "
            "address)",
        )
    if address.is_unspecified:
        # nfs_verify_server_address (fs/nfs/fs_context.c) refuses the ANY address.
        raise ModelStoreInputError(
            store, "server", server, "an address other than 0.0.0.0 or :: (the any address)"
        )


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``text`` as an IP address (IPv4 without leading zeros, which glibc reads as octal and Go
    as decimal), else None."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def share_is_an_export_path(store: str, share: Any) -> None:
    if v.is_output(share):
        return
    if not isinstance(share, str) or not share.startswith("/") or ".." in share.split("/"):
        raise ModelStoreInputError(
            store,
            "share",
            share,
            "set to the export's absolute path on the server, starting with '/', without '..' "
            "(e.g. /exports/models, or /vol1 on Filestore)",
        )


def sub_dir_is_relative(store: str, field: str, sub_dir: Any) -> None:
    # The driver refuses '..' segments only when it mounts (validatePath, pkg/nfs/utils.go).
    if v.is_output(sub_dir):
        return
    if not sub_dir or sub_dir.startswith("/") or ".." in sub_dir.split("/"):
        raise ModelStoreInputError(
            store,
            field,
            sub_dir,
            "a path inside the share, without a leading '/' or '..' (e.g. llama-3-8b)",
        )


def _option_keys(option: str) -> list[str]:
    """``nconnect=4,ro`` -> ``["nconnect", "ro"]``: kubelet joins the PV's options with commas,
    so one entry may carry several."""
    return [part.split("=", 1)[0].strip().casefold() for part in option.split(",")]


def options_are_not_managed(store: str, field: str, options: Sequence[Any]) -> None:
    for option in options:
        if v.is_output(option):
            continue
        keys = _option_keys(option)
        if "" in keys or set(keys) & set(MANAGED_OPTIONS):
            raise ModelStoreInputError(
                store,
                field,
                option,
                "NFS mount options the store does not set itself (not empty, not nfsvers, vers, "
                "minorversion, v2 to v4.2: use nfs_version; not ro, rw: readers get ro, writers "
                "rw)",
            )


def no_udp_with_nfs4(store: str, options: Sequence[Any] | None, nfs_version: str) -> None:
    """NFSv4 runs on TCP or RDMA: the Linux client refuses UDP for version 4 ("NFS: Unsupported
    transport protocol udp": nfs_server_transport_udp_invalid, fs/nfs/fs_context.c)."""
    if not nfs_version.startswith("4"):
        return
    for option in options or ():
        if v.is_output(option):
            continue
        parts = [p.strip().casefold().replace(" ", "") for p in option.split(",")]
        if "udp" in parts or any(p in ("proto=udp", "proto=udp6") for p in parts):
            raise ModelStoreInputError(
                store,
                "extra_mount_options",
                option,
                f"a TCP or RDMA transport with nfs_version {nfs_version} (the Linux client "
                "refuses UDP for NFSv4; UDP needs nfs_version 3)",
            )


def mount_options(nfs_version: str, extra: Sequence[Any], read_only: bool) -> list[Any]:
    """The PV's mount options: the version, ``hard`` (I/O waits out a server restart instead of
    failing a model load) unless ``soft`` is asked for, the extras, ``ro`` for readers."""
    keys = {k for o in extra if not v.is_output(o) for k in _option_keys(o)}
    hard = [] if "soft" in keys else ["hard"]
    return [f"nfsvers={nfs_version}", *hard, *extra, *(["ro"] if read_only else [])]


def dynamic_class(spec: Spec[NfsModelStoreArgs]) -> DynamicClass:
    """A subdirectory per claim, ``<store>-dynamic/<namespace>/<claim>`` in the share, which
    the driver's controller creates (kubernetes-csi/csi-driver-nfs docs/driver-parameters.md:
    ``server``, ``share``, ``subDir`` with ``${pvc.metadata.namespace}`` and
    ``${pvc.metadata.name}``, ``onDelete``). The chart pinned here installs that controller
    (csi-nfs-controller); with ``driver_install: none`` the cluster's driver needs it too, and
    the export must let it (as root) create directories: ``no_root_squash``, or a squash user
    that owns the share."""
    a = spec.args
    return DynamicClass(
        provisioner=NFS_CSI.driver,
        parameters={
            "server": a["server"],
            "share": a["share"],
            "subDir": (
                f"{spec.common.name}{DYNAMIC_SUFFIX}/${{pvc.metadata.namespace}}/"
                "${pvc.metadata.name}"
            ),
            # The directory goes with its claim: scratch, not data to keep.
            "onDelete": "delete",
        },
        reclaim_policy="Delete",
        # An NFS server has no zones: a claim binds at once.
        volume_binding_mode="Immediate",
        mount_options=mount_options(a["nfs_version"], a.get("extra_mount_options") or (), False),
    )


def volume_handle(server: Any, share: Any, sub_dir: Any, pv_name: str) -> pulumi.Output[str]:
    """``{server}#{share}#{subdir}#{pv name}``: docs/driver-parameters.md's recommended form
    plus the PV's name. kubelet keys a CSI volume by driver and handle, so PVs sharing a handle
    collide on a node (kubernetes/kubernetes#132921; csi-driver-nfs#428, #369): each PV gets its
    own. The driver parses handles only for volumes it provisioned (getNfsVolFromID); a static
    PV is mounted from its volumeAttributes (NodePublishVolume, pkg/nfs/nodeserver.go)."""
    return pulumi.Output.concat(server, "#", share, "#", sub_dir or "", "#", pv_name)


class _ExportDirectories:
    """Where a store of an export keeps its model: ``server:share`` and ``sub_dir`` (None: the
    whole share), normalised as the driver joins them."""

    def __init__(self, store: str, server: Any, share: Any, sub_dir: Any) -> None:
        self.store = store
        self.unknown = any(v.is_output(x) for x in (server, share, sub_dir))
        self.server = server if isinstance(server, str) else ""
        self.share = posixpath.normpath(share) if isinstance(share, str) else ""
        self.export = (self.server.lower(), self.share)
        # An Output (known only at deploy) leaves the store out of the check: ``unknown``.
        self.sub_dir = (
            posixpath.normpath(sub_dir).strip("/") if isinstance(sub_dir, str) and sub_dir else None
        )

    def sees(self, directory: str) -> bool:
        """Whether the store's mount shows ``directory`` of the share: its ``sub_dir`` is it,
        is under it, or (no ``sub_dir``) is the whole share."""
        return (
            self.sub_dir is None
            or self.sub_dir == directory
            or self.sub_dir.startswith(f"{directory}/")
        )


class NfsModelStore(ModelStore[NfsModelStoreArgs, ClusterScope], DynamicClaims, backend="nfs"):
    """A store on an existing NFS export. Readers mount it read-only at every layer (ReadOnlyMany
    on PV and claim, the PV's ``csi.readOnly``, the ``ro`` mount option: the driver adds ``ro``
    only for a read-only publish and checks no access mode, so a pod that forgets ``readOnly``
    still cannot write); writers mount it ReadWriteMany. Access control is the server's
    (exports, root squash): the store adds none."""

    args_type = NfsModelStoreArgs  # type: ignore[assignment]  # Required keys: no structural subtype of the base's args
    # an NFS server: vLLM loader settings in kube/serving.py.
    loader_profile = "network-fs"
    example_args = MappingProxyType[str, Any](
        {"server": "nas01.example.internal", "share": "/exports/models"}
    )
    # None: the export is the NAS's, the store only points at it.
    data_bearing_types = tuple[str, ...]()

    server: pulumi.Output[str]
    """The NFS server."""
    export_path: pulumi.Output[str]
    """The path on the server every PV mounts: the share, then ``sub_dir`` if set."""

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.rule(server_is_a_host, "server")
        p.rule(share_is_an_export_path, "share")
        p.field_rule(sub_dir_is_relative, "sub_dir")
        p.field_rule(v.one_of, "nfs_version", NFS_VERSIONS)
        p.field_rule(options_are_not_managed, "extra_mount_options")
        p.field_rule(options_fit_the_client, "extra_mount_options")
        p.rule(no_udp_with_nfs4, "extra_mount_options", "nfs_version")
        p.field_rule(v.capacity_gib, "capacity_gib")
        p.field_rule(v.one_of, "driver_install", DRIVER_INSTALLS)
        p.field_rule(v.dns_label, "driver_namespace")
        p.field_rule(v.dns_label, "cluster_name")

    @classmethod
    def dynamic_claims_refusal(cls, p: Parser) -> str | None:
        """A subdirectory per claim under ``<store>-dynamic`` in the share, beside
        ``sub_dir`` (the model's): so the store needs a ``sub_dir`` other than that one."""
        sub_dir = p["sub_dir"] if p.ok("sub_dir") else None
        if not sub_dir:
            return "without sub_dir the readers mount the whole share, claims' directories too"
        if sub_dir.split("/")[0] == f"{p.store}{DYNAMIC_SUFFIX}":
            return f"sub_dir {sub_dir!r} is where the claims' directories go"
        return None

    @classmethod
    def check_across(cls, spec: Spec[NfsModelStoreArgs], book: dict[Hashable, Any]) -> None:
        """Stores on one export of one cluster: a store whose directory (``sub_dir``, else the
        whole share) is, is under, or holds another store's claims' directory
        (``<store>-dynamic``) is refused, naming both stores: its readers would see (and its
        writers change) the other store's scratch claims."""
        a = spec.args
        here = _ExportDirectories(spec.common.name, a["server"], a["share"], a.get("sub_dir"))
        if here.unknown:
            return
        dynamic = f"{spec.common.name}{DYNAMIC_SUFFIX}" if a["dynamic_claims"] else None
        stores = book.setdefault("nfs-export-directories", [])
        export = f"{here.server}:{here.share}"
        for other, other_dynamic in stores:
            if other.export != here.export:
                continue
            if other_dynamic is not None and here.sees(other_dynamic):
                seen = f"its sub_dir {here.sub_dir!r}" if here.sub_dir else "the whole share"
                raise ModelStoreInputError(
                    here.store,
                    "sub_dir",
                    here.sub_dir,
                    f"a directory apart from {other_dynamic}/ on {export}, where store "
                    f"{other.store!r} makes its dynamic claims' directories ({seen} would "
                    f"show {here.store}'s readers those scratch claims)",
                )
            if dynamic is not None and other.sees(dynamic):
                seen = f"its sub_dir {other.sub_dir!r}" if other.sub_dir else "the whole share"
                raise ModelStoreInputError(
                    here.store,
                    "dynamic_claims",
                    True,
                    f"false while store {other.store!r} mounts {dynamic}/ on {export} ({seen}), "
                    f"where this store's claims' directories would go: {other.store}'s readers "
                    "would see them",
                )
        stores.append((here, dynamic))

    def provision_storage(
        self, spec: Spec[NfsModelStoreArgs], cluster: ClusterScope, facts: Any
    ) -> Binding:
        a = spec.args
        server, share, sub_dir = a["server"], a["share"], a.get("sub_dir")
        self.server = pulumi.Output.from_input(server)
        # As the driver joins them (NodePublishVolume): share without trailing '/', then sub_dir.
        self.export_path = pulumi.Output.all(share, sub_dir).apply(
            lambda s: f"{s[0].rstrip('/')}/{s[1]}" if s[1] else s[0]
        )
        attributes = {
            "server": server,
            "share": share,
            **({"subdir": sub_dir} if sub_dir else {}),
            # "0": no chmod after mounting (a chmod fails on a read-only mount, and the store
            # never changes an existing export's permissions), whatever the driver's default.
            "mountPermissions": "0",
        }
        extra = a.get("extra_mount_options") or ()
        driver = self._driver(spec, cluster)
        return Binding(
            capacity=f"{a['capacity_gib']}Gi",
            source=lambda ns, ro: {
                "csi": {
                    "driver": NFS_CSI.driver,
                    "volumeHandle": volume_handle(server, share, sub_dir, self.volume_name(ns)),
                    "readOnly": ro,
                    "volumeAttributes": attributes,
                },
                "mountOptions": mount_options(a["nfs_version"], extra, ro),
            },
            reader_access_mode="ReadOnlyMany",
            writer_access_mode="ReadWriteMany",
            # The PVs (and so the claims workloads wait for) come after the driver, so pods do
            # not start before the node plugin exists and fail their mounts until it does
            # (order: driver-before-volume).
            ready=[driver] if driver is not None else [],
            dynamic_class=dynamic_class(spec) if a["dynamic_claims"] else None,
        )

    def _driver(
        self, spec: Spec[NfsModelStoreArgs], cluster: ClusterScope
    ) -> pulumi.Resource | None:
        """The driver's Helm release, made once per cluster by the scope (``none``: whatever
        another store of the cluster installed, if any)."""
        namespace = spec.args["driver_namespace"]
        how = (
            None
            if spec.args["driver_install"] == "none"
            else f"helm chart {NFS_CSI.chart} {NFS_CSI.version} in {namespace}"
        )
        return cluster.install_once(
            NFS_CSI.driver,
            spec.common.name,
            how,
            lambda: helm_release(
                f"{cluster.scope_name}-{NFS_CSI.chart}",
                NFS_CSI,
                namespace=namespace,
                values=HELM_VALUES,
                parent=cluster,
            ),
        )
