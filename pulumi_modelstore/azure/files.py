"""Azure Files NFS model store on AKS: a premium FileStorage account (new or existing) reachable
only from the cluster's subnets (virtual network rules) or through a private endpoint, an NFS
4.1 share, and a static PV/PVC per consumer namespace on the Azure Files CSI driver.

Upstream facts this module encodes (kubernetes-sigs/azurefile-csi-driver, main, 2026; Azure
docs ``storage/files/files-nfs-protocol``, ``understanding-billing``):
- the static volume handle is ``rg#account#share#<disk name>#<uuid>#<secret ns>#<sub>``
  (pkg/azurefile/azurefile.go ``GetFileShareInfo``): field 4 is never read, so the per-PV
  suffix goes there; field 3 (a VHD disk name) stays empty; field 0 stays non-empty (an
  empty resource group moves the namespace to field 4);
- the driver always adds ``vers=4,minorversion=1,sec=sys`` for NFS (nodeserver.go
  ``NodeStageVolume``) and refuses none of them, so they are refused here; since v1.30 it also
  appends ``noresvport`` and ``actimeo=30`` unless given (``appendDefaultNfsMountOptions``);
- after an NFS mount the driver chmods the mount point to ``mountPermissions`` (default
  0777), which fails on a read-only mount: ``mountPermissions: "0"`` skips it (v1.18);
- ``ro`` comes from a ReadOnlyMany access mode (``isReadOnlyFromCapability``, v1.31) and the
  bind mount from ``csi.readOnly``;
- the driver applies the pod's fsGroup itself (VOLUME_MOUNT_GROUP) with the PV attribute
  ``fsGroupChangePolicy`` (default OnRootMismatch), see :data:`FS_GROUP_CHANGE_POLICY`;
- NFS shares are authorised by the network alone: no account key (``GetAccountInfo`` returns
  without one for ``protocol: nfs``), no Entra ID role; IP rules do not work for NFS, only
  virtual network rules (the subnet needs the ``Microsoft.Storage`` or
  ``Microsoft.Storage.Global`` service endpoint) or a private endpoint.
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.
# Signatures naming a provider SDK class quote it (keeps the SDK's modules lazily loaded).

import math
import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from .. import validation as v
from ..backup import BackupSupport
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..kube.volumes import DynamicClass
from ..store import Binding, DynamicClaims, Spec
from . import identity as ident
from . import network as net
from . import validation as az_v
from .cluster import (
    AksCluster,
    require_control_plane_identity_for_dynamic_claims,
    require_file_csi_driver,
)
from .storage import account_baseline, account_rules, metadata_marks
from .store import AzureModelStore, AzureModelStoreArgs, Placement

DRIVER = "file.csi.azure.com"
SKUS_V1 = ("Premium_LRS", "Premium_ZRS")
SKUS_V2 = ("PremiumV2_LRS", "PremiumV2_ZRS")
SKUS = (*SKUS_V1, *SKUS_V2)
# Provisioned share sizes in GiB (learn.microsoft.com/azure/storage/files/understanding-billing).
QUOTA_V1 = (100, 102400)
QUOTA_V2 = (32, 262144)
IOPS_V2 = (3000, 102400)
BANDWIDTH_V2 = (100, 10340)
ROOT_SQUASH = ("NoRootSquash", "RootSquash", "AllSquash")
DEFAULT_MOUNT_OPTIONS = ("nconnect=4", "noresvport", "actimeo=30")
# The driver sets `vers=4,minorversion=1,sec=sys` itself for NFS and documents that NFS
# version options are not supported (docs/driver-parameters.md).
DRIVER_MOUNT_OPTIONS = ("vers", "nfsvers", "minorversion", "sec")
PRIVATE_DNS_ZONE = net.FILE.zone
# FACTS.md says only "pods fsGroupChangePolicy: None", which does nothing for this driver: it
# advertises VOLUME_MOUNT_GROUP, so kubelet hands the pod's fsGroup to NodeStage, and
# pkg/azurefile/nodeserver.go (NodeStageVolume: `if volumeMountGroup != "" &&
# fsGroupChangePolicy != FSGroupChangeNone { SetVolumeOwnership(...) }`) reads the policy from
# the PV's volumeAttributes (default OnRootMismatch); docs/driver-parameters.md: "pod
# securityContext.fsGroupChangePolicy is ignored". A chown walk of a read-only share fails and
# of a large one takes minutes: the PV attribute says None. Never the pod's field: a pod's
# securityContext.fsGroupChangePolicy takes only Always or OnRootMismatch and the API server
# refuses the pod otherwise (kubernetes pkg/apis/core/validation/validation.go
# validFSGroupChangePolicies).
FS_GROUP_CHANGE_POLICY = "None"


class AzureFilesNfsModelStoreArgs(AzureModelStoreArgs, total=False):
    """Arguments of :class:`AzureFilesNfsModelStore`. ``cluster_name`` and
    ``cluster_resource_group_name`` (or ``cluster``) are required; everything else has a
    default."""

    create_storage_account: bool
    """Create the storage account. ``false`` serves from an existing FileStorage account named by
    ``storage_account_name`` (in ``resource_group_name``): the store then creates no account
    resources (no network rules, no private endpoint) and leaves its settings alone; it still
    creates the share in it. Default: ``true``."""
    storage_account_name: str
    """The storage account's name (3-24 lowercase letters and digits, unique in Azure), known
    before deploy (it is in the volume handle). Default: for a new account, ``ms`` + the
    store's name + a hash of the subscription, resource group and store; required with
    ``create_storage_account: false``."""
    sku_name: str
    """The FileStorage account's SKU: ``Premium_LRS`` or ``Premium_ZRS`` (provisioned v1: IOPS
    and throughput follow the share size) or ``PremiumV2_LRS`` or ``PremiumV2_ZRS``
    (provisioned v2: IOPS and throughput set apart from the size). With an existing account,
    the SKU it has (the share's size rules depend on it). Default: ``Premium_LRS``."""
    allowed_subnet_ids: Sequence[pulumi.Input[str]]
    """The subnets (ARM ids) the new account admits by virtual network rule; each must have
    the ``Microsoft.Storage`` or ``Microsoft.Storage.Global`` service endpoint (checked before
    deploy). Default: the cluster's node subnets (a cluster on the AKS-managed VNet has none
    the store can name: give these or ``private_endpoint_subnet_id``)."""
    private_endpoint_subnet_id: pulumi.Input[str]
    """Reach the new account through a private endpoint in this subnet (ARM id) instead of
    virtual network rules: the store creates the endpoint (group ``file``) and its zone group,
    and turns the account's public network access off. The private DNS zone
    ``privatelink.file.core.windows.net`` is ``private_dns_zone_id``, or one the cluster's
    stores share per resource group, linked once to each endpoint subnet's virtual network.
    The subnet must be in the cluster's subscription, and the endpoint is made in the
    cluster's region (Azure creates an endpoint in its virtual network's subscription and
    region only). Not with ``allowed_subnet_ids``. Default: none (virtual network rules)."""
    private_dns_zone_id: pulumi.Input[str]
    """With ``private_endpoint_subnet_id``: an existing private DNS zone named
    ``privatelink.file.core.windows.net`` (ARM id ``/subscriptions/<sub>/resourceGroups/<rg>/
    providers/Microsoft.Network/privateDnsZones/privatelink.file.core.windows.net``, e.g. a
    hub's central zone, in any subscription) for the endpoint's zone group. The store then
    creates no zone and no virtual network link: the zone's owner must link the endpoint
    subnet's virtual network to it, or mounts resolve the account's public address, which
    refuses them. Default: none (the store creates the zone in ``resource_group_name``, one
    per resource group shared by the cluster's stores, and links it to the endpoint subnet's
    virtual network)."""
    share_name: str
    """The NFS share's name (3-63 lowercase letters, digits and '-', no '--'). Default: the
    claim name (``-share`` appended when shorter than 3)."""
    share_quota_gib: int
    """The share's provisioned size in GiB. Provisioned v1 (``Premium_*``): 100 to 102400;
    baseline IOPS ``min(3000 + GiB, 102400)``, throughput ``100 + ceil(0.04 * GiB) +
    ceil(0.06 * GiB)`` MiB/s (1024 GiB: 4024 IOPS, 203 MiB/s; 100 GiB: 3100 IOPS, 110 MiB/s).
    Provisioned v2 (``PremiumV2_*``): 32 to 262144, IOPS and throughput default to
    ``3000 + GiB`` and ``100 + ceil(0.1 * GiB)`` MiB/s, or as set below. A decrease is allowed
    only 24 hours after an increase. Default: ``1024``."""
    provisioned_iops: int
    """Provisioned v2 only: the share's IOPS, 3000 to 102400. Default: Azure's recommendation
    for the size (``3000 + GiB``)."""
    provisioned_bandwidth_mibps: int
    """Provisioned v2 only: the share's throughput in MiB/s, 100 to 10340. Default: Azure's
    recommendation for the size (``100 + ceil(0.1 * GiB)``)."""
    root_squash: str
    """How the share maps a client's root: ``NoRootSquash`` (a writer copying as root owns the
    files as root), ``RootSquash`` (root becomes nobody) or ``AllSquash`` (everyone becomes
    nobody). Readers mount read-only whatever this is. Default: ``NoRootSquash``."""
    extra_mount_options: Sequence[str]
    """More NFS mount options for every PV, after ``nconnect=4``, ``noresvport`` and
    ``actimeo=30`` (an option with one of those names replaces the store's). Default: none.
    ``vers``, ``nfsvers``, ``minorversion`` and ``sec`` are refused: the driver sets
    ``vers=4,minorversion=1,sec=sys`` itself."""


# ---- rules --------------------------------------------------------------------------------


def is_v2(sku: str) -> bool:
    return sku in SKUS_V2


def baseline_v1(quota_gib: int) -> tuple[int, int]:
    """Provisioned v1's baseline (IOPS, MiB/s) for a share of ``quota_gib``."""
    iops = min(3000 + quota_gib, 102400)
    return iops, 100 + math.ceil(0.04 * quota_gib) + math.ceil(0.06 * quota_gib)


def default_bandwidth_v2(quota_gib: int) -> int:
    """Provisioned v2's throughput in MiB/s for a share of ``quota_gib`` when
    ``provisioned_bandwidth_mibps`` is not set (Azure's recommendation for the size)."""
    return 100 + math.ceil(0.1 * quota_gib)


def quota_in_range(store: str, quota: int, sku: str) -> None:
    low, high = QUOTA_V2 if is_v2(sku) else QUOTA_V1
    if not low <= quota <= high:
        model = "provisioned v2" if is_v2(sku) else "provisioned v1"
        raise ModelStoreInputError(
            store,
            "share_quota_gib",
            quota,
            f"{low} to {high} GiB for {sku} ({model}; the minimum is {low} GiB)",
        )


def v2_setting(store: str, field: str, value: Any, sku: str, bounds: tuple[int, int]) -> None:
    """``provisioned_iops`` and ``provisioned_bandwidth_mibps``: provisioned v2 only, in range."""
    if not is_v2(sku):
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"unset unless sku_name is {' or '.join(SKUS_V2)} (provisioned v1 derives it from "
            f"share_quota_gib; sku_name is {sku})",
        )
    low, high = bounds
    if not low <= value <= high:
        raise ModelStoreInputError(store, field, value, f"{low} to {high} for {sku}")


def mount_options_allowed(store: str, field: str, options: Sequence[str]) -> None:
    for option in options:
        key = option.split("=", 1)[0].strip()
        if key in DRIVER_MOUNT_OPTIONS or not key:
            raise ModelStoreInputError(
                store,
                field,
                option,
                "NFS mount options other than vers, nfsvers, minorversion and sec (the driver "
                "sets vers=4,minorversion=1,sec=sys itself)",
            )


def default_share_name(claim_name: str) -> str:
    name = re.sub(r"-+", "-", claim_name)
    return name if len(name) >= 3 else f"{name}-share"


FILES_NO_BACKUP = BackupSupport(
    refusal=(
        "the Files API takes a share snapshot one call at a time (FileREST Snapshot Share, "
        "GA for NFS shares) with no schedule or retention of its own; scheduled snapshots are "
        "Azure Backup's (a Recovery Services vault and policy), which this store does not make"
    )
)
"""Azure Files NFS: snapshots exist, a schedule does not (outside Azure Backup)."""


class AzureFilesNfsModelStore(
    AzureModelStore[AzureFilesNfsModelStoreArgs], DynamicClaims, backend="azure-files-nfs"
):
    """A shared model store on an Azure Files NFS 4.1 share, mounted with the AKS Azure Files
    CSI driver.

    A premium FileStorage account (new, or an existing one) holds one NFS share. "Secure
    transfer required" is off on a new account (NFS does not use TLS), so access is the
    network: a new account denies all traffic except from the cluster's node subnets (virtual
    network rules; each subnet needs the storage service endpoint, checked before deploy) or
    arrives through a private endpoint (public network access off). Every consumer namespace
    gets a static PV (driver ``file.csi.azure.com``, ``protocol: nfs``, handle
    ``rg#account#share##<pv name>``, mount options ``nconnect=4``, ``noresvport``,
    ``actimeo=30``) bound to its claim: ReadOnlyMany with ``csi.readOnly`` and
    ``mountPermissions: "0"`` for readers, ReadWriteMany for writers.

    No identities and no role assignments for the mounts: an NFS mount presents no key and no
    token, and Azure Files authorises NFS by network rules alone (Entra ID roles and account
    keys apply to SMB and the REST API, which NFS shares do not serve). Whoever reaches the
    share from an admitted subnet can mount it; what keeps a reader from writing is its
    read-only mount (ReadOnlyMany and ``readOnly``), and ``root_squash`` limits what root may
    do. With ``dynamic_claims`` one role assignment: Storage Account Contributor on the account
    for the cluster's control plane identity, as which the driver's controller creates each
    claim's share (refused before deploy on a cluster without a managed identity).

    The account and the share are protected and retained on delete unless ``protect`` is
    ``false``.
    """

    args_type = AzureFilesNfsModelStoreArgs
    cluster_needs = (require_file_csi_driver,)
    # Azure Files over NFS: vLLM loader settings in kube/serving.py.
    loader_profile = "network-fs"
    example_args = MappingProxyType[str, Any](
        {"cluster_name": "ml-aks", "cluster_resource_group_name": "ml-rg"}
    )
    data_bearing_types = ("azure-native:storage:StorageAccount", "azure-native:storage:FileShare")

    storage_account_name: pulumi.Output[str]
    """The storage account's name."""
    share_name: pulumi.Output[str]
    """The NFS share's name."""
    nfs_source: pulumi.Output[str]
    """What a client mounts: ``<account>.file.core.windows.net:/<account>/<share>``."""

    # ---- 1. parse ------------------------------------------------------------------------------

    dynamic_claims_refused = None  # offered: a share per claim in the store's account

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """None of its own: see :data:`FILES_NO_BACKUP`."""
        return FILES_NO_BACKUP

    @classmethod
    def rules(cls, p: Parser) -> None:
        account_rules(p, net.NETWORK_FIELDS)
        p.field_rule(v.one_of, "sku_name", SKUS)
        net.network_rules(p, net.FILE)
        if p["share_name"] is None and p.ok("claim_name"):
            p.set("share_name", default_share_name(p["claim_name"]))
        p.field_rule(az_v.share_name, "share_name")
        p.rule(quota_in_range, "share_quota_gib", "sku_name")
        for name, bounds in (
            ("provisioned_iops", IOPS_V2),
            ("provisioned_bandwidth_mibps", BANDWIDTH_V2),
        ):
            if p[name] is not None:
                p.rule(
                    lambda store, value, sku, n=name, b=bounds: v2_setting(store, n, value, sku, b),
                    name,
                    "sku_name",
                )
        p.field_rule(v.one_of, "root_squash", ROOT_SQUASH)
        p.field_rule(mount_options_allowed, "extra_mount_options")

    # ---- 2. preflight: lookups only, once per cluster ------------------------------------------

    def preflight(
        self, spec: Spec[AzureFilesNfsModelStoreArgs], cluster: AksCluster, opts: Opts
    ) -> Placement:
        """The placement; with ``dynamic_claims``, the control plane identity the driver's
        controller acts as (:meth:`_controller_grant`)."""
        if spec.args["dynamic_claims"]:
            cluster.facts(spec.common.name, require_control_plane_identity_for_dynamic_claims)
        return self.place(spec, cluster, opts, net.FILE)

    # ---- 3. provision ---------------------------------------------------------------------------

    def provision_storage(
        self, spec: Spec[AzureFilesNfsModelStoreArgs], cluster: AksCluster, facts: Placement
    ) -> Binding:
        a = spec.args
        self.account: Any = None
        if a["create_storage_account"]:
            self.account = self._new_account(spec, facts)
            account_name: pulumi.Input[str] = self.account.name
        else:
            account_name = facts.account_name
        self.share = self._share(spec, facts, account_name)
        # No mount before the share exists (order: storage-before-volume).
        ready: list[pulumi.Resource] = [self.share]
        ready += self.private_endpoint(spec, cluster, facts, net.FILE, self.account)
        self.storage_account_name = pulumi.Output.from_input(account_name)
        self.share_name = self.share.name
        self.nfs_source = pulumi.Output.concat(
            account_name, ".file.core.windows.net:/", account_name, "/", self.share.name
        )
        handle = f"{facts.resource_group}#{facts.account_name}#{a['share_name']}##"
        return Binding(
            capacity=f"{a['share_quota_gib']}Gi",
            source=lambda namespace, read_only: nfs_share_source(
                facts, a["share_name"], f"{handle}{self.volume_name(namespace)}", read_only
            ),
            reader_access_mode="ReadOnlyMany",
            writer_access_mode="ReadWriteMany",
            mount_options=mount_options(a.get("extra_mount_options") or ()),
            ready=ready,
            dynamic_class=self._dynamic_class(spec, facts) if a["dynamic_claims"] else None,
        )

    def _controller_grant(
        self, spec: Spec[AzureFilesNfsModelStoreArgs], facts: Placement
    ) -> "azure_native.authorization.RoleAssignment":
        """Storage Account Contributor on the store's account for the cluster's control plane
        identity: the AKS-managed Azure Files CSI driver's controller creates, resizes and
        deletes each dynamic claim's share in the account as that identity, and needs the
        role there (kubernetes-sigs/azurefile-csi-driver docs/driver-parameters.md: "required
        permissions for CSI driver controller", Storage Account Contributor; "For AKS-managed
        CSI driver, use the AKS control plane identity"). Scoped to the account alone, after
        it exists."""
        f = facts.facts
        scope = (
            f"/subscriptions/{f.subscription_id}/resourceGroups/{facts.resource_group}/"
            f"providers/Microsoft.Storage/storageAccounts/{facts.account_name}"
        )
        return ident.role_assignment(
            f"{spec.common.name}-dynamic-controller",
            principal_id=f.control_plane_principal_id,
            role=ident.STORAGE_ACCOUNT_CONTRIBUTOR,
            scope=scope,
            subscription_id=f.subscription_id,
            name_parts=(spec.common.name, "dynamic-controller"),
            parent=self,
            # The scope exists first (order: scope-first).
            depends_on=[self.account] if self.account is not None else [],
        )

    def _dynamic_class(
        self, spec: Spec[AzureFilesNfsModelStoreArgs], facts: Placement
    ) -> DynamicClass:
        """An NFS share per claim in the store's account (the driver names each
        ``pvc-<uid>``, never the model's share), with the store's SKU, root squash and mount
        options (kubernetes-sigs/azurefile-csi-driver docs/driver-parameters.md: ``protocol``,
        ``storageAccount``, ``resourceGroup``, ``skuName``, ``rootSquashType``). The driver
        applies the pod's fsGroup (its default ``fsGroupChangePolicy``), so non-root pods can
        write their scratch share. Its controller creates the shares as the cluster's control
        plane identity, granted Storage Account Contributor on the account
        (:meth:`_controller_grant`), which the class waits for."""
        a = spec.args
        self.dynamic_controller_grant = self._controller_grant(spec, facts)
        return DynamicClass(
            provisioner=DRIVER,
            parameters={
                "protocol": "nfs",
                "storageAccount": facts.account_name,
                "resourceGroup": facts.resource_group,
                "skuName": a["sku_name"],
                "rootSquashType": a["root_squash"],
            },
            # Scratch shares go with their claims (each is billed for its provisioned size).
            reclaim_policy="Delete",
            # Azure Files is reached from every zone of the region: nothing to wait for.
            volume_binding_mode="Immediate",
            mount_options=mount_options(a.get("extra_mount_options") or ()),
            allow_volume_expansion=True,
            # A claim made before the grant would fail its first CreateVolume
            # (order: grant-before-volume).
            ready=[self.dynamic_controller_grant],
        )

    def _share(
        self,
        spec: Spec[AzureFilesNfsModelStoreArgs],
        facts: Placement,
        account_name: pulumi.Input[str],
    ) -> "azure_native.storage.FileShare":
        """The NFS share in ``account_name``, protected unless ``protect`` is False; the v2
        SKUs' provisioned IOPS and bandwidth only where given (else the service's defaults)."""
        a = spec.args
        share_args: dict[str, Any] = {
            "account_name": account_name,
            "resource_group_name": facts.resource_group,
            "share_name": a["share_name"],
            "enabled_protocols": "NFS",
            "share_quota": a["share_quota_gib"],
            "root_squash": a["root_squash"],
        }
        if self.opt_out_marks():
            share_args["metadata"] = metadata_marks(self.opt_out_marks())
        if a.get("provisioned_iops") is not None:
            share_args["provisioned_iops"] = a["provisioned_iops"]
        if a.get("provisioned_bandwidth_mibps") is not None:
            share_args["provisioned_bandwidth_mibps"] = a["provisioned_bandwidth_mibps"]
        return azure_native.storage.FileShare(
            f"{spec.common.name}-share", **share_args, opts=self.data_protection()
        )

    def _new_account(
        self, spec: Spec[AzureFilesNfsModelStoreArgs], facts: Placement
    ) -> "azure_native.storage.StorageAccount":
        """A premium FileStorage account in the store's region: the hardened baseline, secure
        transfer off (NFS), public traffic denied but for the admitted subnets or a private
        endpoint."""
        a = spec.args
        settings: dict[str, Any] = {
            **account_baseline(infrastructure_encryption=False, services=("file",)),
            "account_name": facts.account_name,
            "resource_group_name": facts.resource_group,
            "location": facts.region,
            "kind": "FileStorage",
            "sku": {"name": a["sku_name"]},
            # "Secure transfer required" off: NFS 4.1 does not use TLS and the account refuses
            # NFS mounts with it on. Storage API 2024-01-01 (azure-native 3.x) has no NFS
            # encryption-in-transit setting, so the network rules are the protection.
            "enable_https_traffic_only": False,
            # NFS uses no key: azurefile-csi-driver docs/driver-parameters.md recommends
            # allowSharedKeyAccess = false for NFS-only shares (PR #3365: "NFS: safe to
            # disable"), and azure-native manages the share through ARM (fileServices/shares),
            # not the key-authorised data plane that azurerm's storage_share trips on.
            "allow_shared_key_access": False,
            **facts.network.account_settings(),
            "tags": {**self.tags(spec), **self.opt_out_marks()},
        }
        return azure_native.storage.StorageAccount(
            f"{spec.common.name}-account",
            **settings,
            opts=self.data_protection(),
        )


def nfs_share_source(
    facts: Placement, share_name: str, volume_handle: str, read_only: bool
) -> dict[str, Any]:
    """A PV's CSI source on the share: ``protocol: nfs``, the driver's ``fsGroupChangePolicy``
    (see :data:`FS_GROUP_CHANGE_POLICY`) and, for readers, ``mountPermissions: "0"`` (the
    driver's post-mount chmod, default 0777, fails on a read-only mount). ``volume_handle`` is
    ``rg#account#share##<pv name>``: field 4 is free (GetFileShareInfo never reads it), and
    unique per PV, as the driver stages once per handle on a node."""
    attributes = {
        "resourceGroup": facts.resource_group,
        "storageAccount": facts.account_name,
        "shareName": share_name,
        "protocol": "nfs",
        "fsGroupChangePolicy": FS_GROUP_CHANGE_POLICY,
    }
    if read_only:
        attributes["mountPermissions"] = "0"
    return {
        "csi": {
            "driver": DRIVER,
            "volumeHandle": volume_handle,
            "readOnly": read_only,
            "volumeAttributes": attributes,
        }
    }


def mount_options(extra: Sequence[str]) -> list[str]:
    """The store's options, each replaced by a given option of the same name, then the rest."""
    keys = {o.split("=", 1)[0].strip(): o for o in extra}
    ours = [keys.pop(o.split("=", 1)[0], o) for o in DEFAULT_MOUNT_OPTIONS]
    return [*ours, *(o for o in extra if o.split("=", 1)[0].strip() in keys)]
