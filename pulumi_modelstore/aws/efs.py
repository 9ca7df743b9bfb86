"""Amazon EFS model store on EKS: an encrypted file system, a mount target per availability zone
the nodes use, NFS security group rules, an access point per consumer namespace, a file system
policy that refuses clients without TLS, optional IAM authorization through the driver's node
role (one per cluster, each store adding its own permission), the CSI driver (once per cluster)
and a static PV/PVC per consumer namespace, in one graph."""

# No `from __future__ import annotations`: the component analyzer reads the annotations.

import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_aws as aws

from .. import validation as v
from ..backup import BackupSupport
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..kube.volumes import DynamicClass
from ..nfs.options import options_fit_the_client
from ..store import Binding, DynamicClaims, Spec
from . import validation as aws_v
from .cluster import EksCluster, EksClusterFacts
from .drivers import (
    ADDON_NAMESPACE,
    DRIVER_INSTALL_FIELDS,
    EFS_CSI,
    DriverInstall,
    parse_driver_install,
    require_addon_cluster,
)
from .identity import (
    IDENTITIES,
    IdentityFacts,
    ServiceAccountRole,
    attach_policy,
    service_account_role,
)
from .network import peers, ports_text, security_group, tcp_rule
from .policies import client_access_policy, file_system_policy
from .store import (
    FILE_SYSTEM_RENAMES,
    AwsModelStore,
    AwsModelStoreArgs,
    file_system_network_rules,
)
from .tags import cluster_tags

NFS_PORT = 2049
THROUGHPUT_MODES = ("elastic", "provisioned", "bursting")
PERFORMANCE_MODES = ("generalPurpose", "maxIO")
LIFECYCLE_AFTER_DAYS = (
    "AFTER_1_DAY",
    "AFTER_7_DAYS",
    "AFTER_14_DAYS",
    "AFTER_30_DAYS",
    "AFTER_60_DAYS",
    "AFTER_90_DAYS",
    "AFTER_180_DAYS",
    "AFTER_270_DAYS",
    "AFTER_365_DAYS",
)
PRIMARY_STORAGE_CLASS_TRANSITIONS = ("AFTER_1_ACCESS",)
# EFS access point PosixUser Uid/Gid are 0..4294967295. 0 (root) is refused: the file system
# policy grants no ClientRootAccess, so root would be squashed and every write would fail.
MAX_POSIX_ID = 4294967295
# EFS limits an access point's root directory path to 100 characters.
MAX_ROOT_DIRECTORY_LENGTH = 100
# CreateAccessPoint RootDirectory Path (botocore efs/2015-02-01 shape Path: 1-100 characters,
# ^(\/|(\/(?!\.)+[^$#<>;`|&?{}^*/\n]+){1,4})$): at most four directories below '/', none
# starting with '.', none empty (no '//', no trailing '/'), without $ # < > ; ` | & ? { } ^ *.
MAX_ROOT_DIRECTORY_LEVELS = 4
_ROOT_DIRECTORY_SEGMENT = re.compile(r"^[^.$#<>;`|&?{}^*/\n][^$#<>;`|&?{}^*/\n]*$")
# CreateFileSystem ProvisionedThroughputInMibps: "Valid values are 1-3414 MiBps, with the upper
# limit depending on Region" (botocore efs/2015-02-01; shape ProvisionedThroughputInMibps min 1).
PROVISIONED_MIBPS = (1, 3414)
_PERMISSIONS = re.compile(r"^0?[0-7]{3}$")

# The chart's node service account (charts/aws-efs-csi-driver/values.yaml) and the one the EKS
# add-on creates in kube-system. With the `iam` mount option, efs-utils in the node pods signs
# the mount with this service account's role.
NODE_SERVICE_ACCOUNT = "efs-csi-node-sa"
CONTROLLER_SERVICE_ACCOUNT = "efs-csi-controller-sa"
# EKS Pod Identity support landed in driver v2.0.5 (CHANGELOG-2.x.md, "Add Pod Identity
# Support", kubernetes-sigs/aws-efs-csi-driver#1254).
POD_IDENTITY_MIN_DRIVER = (2, 0, 5)
# EFS is elastic: Kubernetes needs a capacity on the PV and claim, the driver ignores it. Kept
# small so the claims do not eat into a namespace's `requests.storage` quota.
NOMINAL_CAPACITY = "1Gi"
# Options the driver itself refuses or that the store sets through the volumeHandle.
_DRIVER_OWNED_OPTIONS = ("accesspoint", "crossaccount")
# What a store with iam_authorization needs before deploy; the rest of the install is checked
# by parse_driver_install.
_INSTALL_FIELDS = (*DRIVER_INSTALL_FIELDS, "cluster_name", "node_service_account")
# dynamic_claims: the driver's access point per claim (kubernetes-sigs/aws-efs-csi-driver
# docs/parameters.md, "Storage Class Parameters for Dynamic Provisioning"). Each claim's
# directory goes under DYNAMIC_BASE_PATH, beside root_directory (the model's), never in it.
DYNAMIC_BASE_PATH = "/dynamic"
# Only the claim's own identity reaches its directory: the driver enforces the access point's
# uid/gid on every request (docs/parameters.md, "user identity enforcement is always applied").
DYNAMIC_DIRECTORY_PERMS = "700"
# The driver's own default range, pinned: each claim's access point gets a gid (used as its
# uid too) from it, so claims do not share an owner. A file system holds at most 10,000 access
# points unless raised (docs.aws.amazon.com/efs/latest/ug/create-access-point.html), the
# store's own included.
DYNAMIC_GID_RANGE = (50000, 7000000)


class EfsModelStoreArgs(AwsModelStoreArgs, total=False):
    """Arguments of :class:`EfsModelStore`. Every field is optional but ``cluster_name`` (unless
    ``vpc_id``, ``cluster_subnet_ids`` and ``node_security_group_ids`` are all given, or
    ``cluster``).

    The driver install (``driver_install``, once per cluster): ``driver_namespace`` is also the
    node service account's, and must stay kube-system for ``eks-addon``; with ``none`` and no
    other store installing the driver, annotate the existing driver's node service account with
    ``node_role_arn`` yourself for ``identity: irsa``."""

    subnet_ids: Sequence[str]
    """Subnets (in the cluster's VPC) where the nodes run. The store makes one mount target per
    availability zone among them (AWS allows one per zone per file system), in the first subnet
    of each zone by id. Default: the cluster's subnets plus those of its EKS managed node groups
    (looked up once per cluster with ``cluster_name``), a zone the cluster's subnets already
    cover keeping its subnet. Nodes that Karpenter or self-managed groups launch are not found
    this way: if they run in zones outside those subnets, list their subnets here."""
    security_group_id: pulumi.Input[str]
    """An existing security group for the mount targets. Default: a new group allowing TCP 2049
    from each node security group. With an existing group no rules are made: it must already
    allow NFS from the nodes."""
    throughput_mode: str
    """``elastic`` (scales with each model load), ``provisioned`` (needs
    ``provisioned_throughput_in_mibps``) or ``bursting`` (earns credits by size: a small store
    starves model loads). Default: ``elastic``."""
    provisioned_throughput_in_mibps: float
    """Throughput in MiB/s for ``throughput_mode: provisioned``, 1 to 3414 (EFS's limit, lower
    in some Regions); required there, refused otherwise. Default: unset."""
    performance_mode: str
    """``generalPurpose`` (the only mode elastic throughput supports) or ``maxIO``. Default:
    ``generalPurpose``."""
    kms_key_arn: pulumi.Input[str]
    """The ARN of the KMS key for encryption at rest (``arn:aws:kms:<region>:<account>:key/<id>``;
    the provider refuses a key id or an alias); the file system is always encrypted. Default:
    the AWS-managed EFS key. (Formerly ``kms_key_id``, still accepted with a deprecation
    warning.)"""
    transition_to_ia: str
    """Move files not read for this long to Infrequent Access (``AFTER_1_DAY`` ...
    ``AFTER_365_DAYS``). Default: never; IA reads cost per GiB and are slower, which hurts model
    loads."""
    transition_to_archive: str
    """Move files to Archive after this long (same values), later than ``transition_to_ia``
    (EFS moves files to IA first). Needs ``transition_to_ia`` and elastic throughput. Default:
    never."""
    transition_to_primary_storage_class: str
    """``AFTER_1_ACCESS`` moves a file back to Standard on its first read from IA. Default:
    files stay in IA once moved."""
    posix_uid: int
    """The user id every request through the store's access points runs as, and the owner of
    the root directory EFS creates: the serving pods' ``runAsUser``. From 1 to 4294967295.
    Default: ``1000``."""
    posix_gid: int
    """The group id of those requests and of the root directory: the pods' ``fsGroup``. From 1
    to 4294967295. Default: ``1000``."""
    root_directory: str
    """The directory (on the file system) each access point exposes as the volume's root; EFS
    creates it on first use, owned by ``posix_uid``/``posix_gid``. At most four levels below
    ``/`` and 100 characters, without a trailing ``/``. Default: ``/models``."""
    root_directory_permissions: str
    """Octal mode EFS gives the root directory when it creates it (the owner writes, everyone
    reads). Default: ``0755``."""
    iam_authorization: bool
    """Mount with the ``iam`` option: the driver's node service account signs each mount with
    the cluster's EFS node role (``<cluster>-efs-csi-node-role``, one per cluster, shared by
    its stores), on which this store adds its own policy (``<store>-efs-node-policy``): mount
    only through its access points (``ClientMount``), write only through its writers' and
    the seed Job's ones (``ClientWrite``), both only via a mount target and matched with
    ``ArnEquals`` on the access point's ARN. The file system policy then grants anonymous
    clients nothing. Without it, any client that reaches a mount target over TLS may mount,
    and write when anything writes (writers, the seed Job, ``dynamic_claims``); readers are
    read-only by their mounts. Default: ``false``."""
    identity: str
    """How the node service account gets its role with ``iam_authorization``: ``irsa`` (needs
    the cluster's IAM OIDC provider) or ``pod-identity`` (needs the EKS Pod Identity Agent
    add-on). Stores on one cluster must agree. Refused without ``iam_authorization``. Default:
    irsa with ``iam_authorization``."""
    node_service_account: str
    """The driver's node service account (for ``driver_install: helm`` or ``none``). Stores on
    one cluster with ``iam_authorization`` must agree. Default: ``efs-csi-node-sa``, the
    chart's and the add-on's."""
    extra_mount_options: Sequence[pulumi.Input[str]]
    """PV mount options for the EFS mount helper, added to the store's own (``iam`` with
    ``iam_authorization``). TLS needs no option: the PVs set ``encryptInTransit`` and the driver
    always uses TLS with an access point. Default: none. (Formerly ``mount_options``, still
    accepted with a deprecation warning.)"""


# ---- rules ---------------------------------------------------------------------------------------


def provisioned_throughput_fits_mode(store: str, mode: str, mibps: Any) -> None:
    """Provisioned throughput needs a positive MiB/s; the other modes refuse one."""
    field = "provisioned_throughput_in_mibps"
    if mode == "provisioned":
        if mibps is None:
            raise ModelStoreInputError(
                store, field, None, "a throughput in MiB/s when throughput_mode is provisioned"
            )
        low, high = PROVISIONED_MIBPS
        if not v.is_output(mibps) and not low <= mibps <= high:
            raise ModelStoreInputError(
                store,
                field,
                mibps,
                f"from {low} to {high} MiB/s (EFS's limit; more needs AWS Support to raise it)",
            )
    elif mibps is not None:
        raise ModelStoreInputError(
            store, field, mibps, f"unset unless throughput_mode is provisioned (it is {mode})"
        )


def elastic_throughput_needs_general_purpose(store: str, performance: str, mode: str) -> None:
    if performance == "maxIO" and mode == "elastic":
        raise ModelStoreInputError(
            store,
            "throughput_mode",
            mode,
            "provisioned or bursting when performance_mode is maxIO (elastic throughput needs "
            "generalPurpose)",
        )


def archive_after_ia(store: str, archive: Any, to_ia: Any) -> None:
    """EFS moves files to IA before Archive: PutLifecycleConfiguration needs TransitionToArchive
    unset or later than TransitionToIA (EFS API reference, LifecyclePolicies)."""
    if archive is None or to_ia is None:
        return
    if LIFECYCLE_AFTER_DAYS.index(archive) <= LIFECYCLE_AFTER_DAYS.index(to_ia):
        raise ModelStoreInputError(
            store,
            "transition_to_archive",
            archive,
            f"later than transition_to_ia ({to_ia}): EFS moves files to IA before Archive",
        )


def archive_needs_ia_and_elastic(store: str, archive: Any, to_ia: Any, mode: str) -> None:
    if archive is not None and (to_ia is None or mode != "elastic"):
        raise ModelStoreInputError(
            store,
            "transition_to_archive",
            archive,
            "unset unless transition_to_ia is set and throughput_mode is elastic",
        )


def posix_id(store: str, field: str, value: Any) -> None:
    """An access point's uid or gid: known before deploy, never root."""
    if v.is_output(value):
        raise ModelStoreInputError(
            store, field, "<Output>", "a plain whole number known before deploy"
        )
    if not 1 <= value <= MAX_POSIX_ID:
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"a whole number from 1 to {MAX_POSIX_ID} (0, root, would be squashed: the store "
            "grants no ClientRootAccess)",
        )


def root_directory_below_root(store: str, field: str, value: Any) -> None:
    if v.is_output(value) or value.rstrip("/") == "" or len(value) > MAX_ROOT_DIRECTORY_LENGTH:
        raise ModelStoreInputError(
            store,
            field,
            "<Output>" if v.is_output(value) else value,
            f"a plain directory below '/' of at most {MAX_ROOT_DIRECTORY_LENGTH} characters "
            "('/' itself is root's, and pods could not write to it)",
        )


def root_directory_fits_efs(store: str, field: str, value: Any) -> None:
    """The path as CreateAccessPoint takes it (see ``_ROOT_DIRECTORY_SEGMENT``)."""
    segments = value.split("/")[1:]
    if len(segments) > MAX_ROOT_DIRECTORY_LEVELS or not all(
        _ROOT_DIRECTORY_SEGMENT.fullmatch(s) for s in segments
    ):
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"at most {MAX_ROOT_DIRECTORY_LEVELS} directories below '/' (e.g. /models/llama), "
            "without a trailing '/' or '//', none starting with '.', and none of $ # < > ; ` | "
            "& ? { } ^ * (EFS access point paths)",
        )


def octal_permissions(store: str, field: str, value: Any) -> None:
    if v.is_output(value) or not _PERMISSIONS.fullmatch(value):
        raise ModelStoreInputError(store, field, value, "an octal mode such as '0755'")


def identity_needs_iam_authorization(store: str, identity: Any, iam_authorization: bool) -> None:
    if identity is not None and not iam_authorization:
        raise ModelStoreInputError(
            store,
            "identity",
            identity,
            "unset unless iam_authorization is true (without it the driver mounts with no AWS "
            "identity)",
        )


def extra_mount_options_are_known(store: str, field: str, value: Any) -> None:
    """Plain strings known before deploy, none of them an option the store or driver owns."""
    if v.is_output(value):
        raise ModelStoreInputError(
            store, field, "<Output>", "a plain list of strings known before deploy"
        )
    for option in value:
        if v.is_output(option):
            continue  # known at deploy time only; the driver checks it then
        if option.lower().split("=", 1)[0] in _DRIVER_OWNED_OPTIONS:
            raise ModelStoreInputError(
                store,
                field,
                option,
                "options other than accesspoint (the store puts each access point in the "
                "volumeHandle) and crossaccount (the driver refuses it)",
            )


def mount_options(extra: Sequence[Any] | None, iam_authorization: bool) -> tuple[Any, ...]:
    """The PVs' mount options: ``iam`` first under IAM authorization, then the extra ones."""
    options = tuple(extra or ())
    return ("iam", *options) if iam_authorization and "iam" not in options else options


def subnets_known_before_deploy(store: str, field: str, value: Any) -> None:
    if v.is_output(value) or any(v.is_output(s) for s in value):
        raise ModelStoreInputError(
            store,
            field,
            "<Output>",
            "plain subnet ids, so their availability zones can be looked up before deploy",
        )
    if not list(value):
        raise ModelStoreInputError(
            store, field, [], "a non-empty list of the subnets where the cluster's nodes run"
        )


def efs_driver_install(store: str, values: Mapping[str, Any]) -> DriverInstall:
    """The driver install, with the EFS node service account's constraints: the EKS add-on
    names it and installs it in kube-system, and needs the cluster's name."""
    node_sa = values["node_service_account"]

    def fits_node_service_account(driver: str, driver_namespace: str) -> None:
        if driver != "eks-addon":
            return
        require_addon_cluster(store, values, driver)
        if driver_namespace != ADDON_NAMESPACE:
            raise ModelStoreInputError(
                store,
                "driver_namespace",
                driver_namespace,
                f"{ADDON_NAMESPACE} when driver_install is eks-addon (the add-on installs there)",
            )
        if node_sa != NODE_SERVICE_ACCOUNT:
            raise ModelStoreInputError(
                store,
                "node_service_account",
                node_sa,
                f"{NODE_SERVICE_ACCOUNT} when driver_install is eks-addon (the add-on names it)",
            )

    return parse_driver_install(
        store, values, check=fits_node_service_account, check_cluster_name=False
    )


def _version(text: str) -> tuple[int, ...] | None:
    """``v2.0.4-eksbuild.1`` or ``3.4.1`` -> (2, 0, 4); None when it has no x.y.z."""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(p) for p in match.groups()) if match else None


def driver_supports_pod_identity(store: str, identity: Any, install: DriverInstall) -> None:
    """EKS Pod Identity needs driver v2.0.5 or newer: the pinned chart, or the add-on version
    asked for. With ``driver_install: none`` the installed version is unknown here."""
    if identity != "pod-identity":
        return
    if install.driver == "helm":
        version, source = _version(EFS_CSI.app_version), f"the pinned chart's {EFS_CSI.app_version}"
    elif install.driver == "eks-addon" and install.eks_addon_version:
        version = _version(install.eks_addon_version)
        source = f"add-on {install.eks_addon_version}"
    else:
        return
    if version is not None and version < POD_IDENTITY_MIN_DRIVER:
        minimum = ".".join(map(str, POD_IDENTITY_MIN_DRIVER))
        raise ModelStoreInputError(
            store,
            "identity",
            "pod-identity",
            f"irsa with EFS CSI driver {source} (EKS Pod Identity needs driver {minimum} or newer)",
        )


# ---- what EFS stores share on a cluster ----------------------------------------------------------


@dataclass
class _EfsOnCluster:
    """What the EFS stores of one cluster share besides the driver install: the driver's node
    role, who made it and for what, and whether the install was made without it."""

    node_role: ServiceAccountRole | None = None
    role_store: str = ""
    role_kind: str = ""
    role_accounts: tuple[tuple[str, str], ...] = ()
    installed_without_role: str | None = None
    """The store that installed the driver before any store asked for a node role."""


@dataclass(frozen=True)
class _Facts:
    """What preflight found: the cluster's facts, one subnet per zone, the node identity."""

    cluster: EksClusterFacts
    zones: list[tuple[str, Any]]
    identity: IdentityFacts | None


def _on_cluster(cluster: EksCluster) -> _EfsOnCluster:
    return cluster.shared(("efs",), _EfsOnCluster)


def _node_account(spec: Spec[EfsModelStoreArgs]) -> tuple[str, str]:
    install: DriverInstall = spec.derived["install"]
    return (install.namespace, spec.args["node_service_account"])


def _trusted_accounts(spec: Spec[EfsModelStoreArgs], kind: str) -> tuple[tuple[str, str], ...]:
    """Who may assume the node role. The EKS add-on puts its ``serviceAccountRoleArn`` on BOTH
    its service accounts (its schema has no node-only role: aws/containers-roadmap#2820; AWS's
    add-on page widens the trust to ``efs-csi-*``), so with IRSA the role trusts exactly those
    two, one statement each; a node-only trust would hand the controller a role it cannot
    assume."""
    if spec.derived["install"].driver == "eks-addon" and kind == "irsa":
        return (
            (ADDON_NAMESPACE, NODE_SERVICE_ACCOUNT),
            (ADDON_NAMESPACE, CONTROLLER_SERVICE_ACCOUNT),
        )
    return (_node_account(spec),)


def _shown(account: tuple[str, str]) -> str:
    return "/".join(account)


def mount_target_subnets(
    store: str, cluster: EksCluster, facts: EksClusterFacts, subnet_ids: Sequence[str] | None
) -> list[tuple[str, Any]]:
    """Preflight: (availability zone, subnet) for one subnet per zone, sorted by zone.

    Every subnet must be in the cluster's VPC; the scope looks each up once per cluster, and
    the node groups' subnets once per cluster. AWS allows one mount target per zone per file
    system, so of several subnets in one zone the first by id gets it: a stable choice that
    does not move when subnets are listed in another order. Without ``subnet_ids``, the node
    groups' subnets only add zones the cluster's subnets do not cover, so a new node group
    never moves (replaces) an existing mount target."""
    if cluster.created is not None and subnet_ids is None:
        # A cluster this program makes: its subnets by zone as from_cluster was given them.
        if not cluster.created.zones:
            raise ModelStoreInputError(
                store,
                "subnet_ids",
                None,
                "the subnets of a cluster made in this program, one per zone "
                "(EksCluster.from_cluster(..., subnets_by_zone={zone: subnet id})): EFS makes "
                "a mount target in each",
            )
        cluster.warn_skipped_subnets()
        return sorted(cluster.created.zones.items())
    given: list[Any] = list(subnet_ids if subnet_ids is not None else facts.subnet_ids)
    # Where the subnets come from, for an error to name what the user gave (None: a lookup).
    field = "subnet_ids" if subnet_ids is not None else cluster.subnets_field()
    extra = cluster.node_group_subnets() if subnet_ids is None else []
    if not given and not extra:
        raise ModelStoreInputError(
            store,
            "subnet_ids",
            [],
            "a non-empty list of the subnets where the cluster's nodes run (the cluster "
            "reported none)",
        )
    if any(v.is_output(s) for s in given):
        raise ModelStoreInputError(
            store,
            field or "cluster_subnet_ids",
            "<Output>",
            "plain subnet ids, so their availability zones can be looked up before deploy",
        )
    by_zone: dict[str, str] = {}
    ordered = sorted(set(given))
    for subnet_id in [*ordered, *sorted(set(extra) - set(ordered))]:
        where = field if subnet_id in ordered else None  # a node group's: looked up
        cluster.check_subnet_in_vpc(store, where, subnet_id)
        zone = cluster.subnet(subnet_id).availability_zone
        if not zone:
            raise ModelStoreInputError(
                store,
                where or "subnet_ids",
                subnet_id,
                "a subnet whose availability zone AWS reports",
            )
        by_zone.setdefault(zone, subnet_id)
    return sorted(by_zone.items())


def _made_by(scope: str, shared: _EfsOnCluster) -> str:
    return (
        f"(made by store {shared.role_store!r}; the EFS stores on cluster {scope!r} share one "
        "node role)"
    )


def same_node_identity(store: str, scope: str, shared: _EfsOnCluster, kind: str) -> None:
    if kind != shared.role_kind:
        raise ModelStoreInputError(
            store,
            "identity",
            kind,
            f"{shared.role_kind}, the identity of the cluster's EFS CSI node role "
            f"{_made_by(scope, shared)}",
        )


def same_node_service_account(
    store: str, scope: str, shared: _EfsOnCluster, account: tuple[str, str]
) -> None:
    if account != shared.role_accounts[0]:
        raise ModelStoreInputError(
            store,
            "node_service_account",
            _shown(account),
            f"{_shown(shared.role_accounts[0])}, the service account the cluster's EFS CSI node "
            f"role trusts {_made_by(scope, shared)}",
        )


def install_fits_node_role(
    store: str, scope: str, shared: _EfsOnCluster, spec: Spec[EfsModelStoreArgs]
) -> None:
    """An EKS add-on install with IRSA hands the node role to its controller too: a role made
    for the node service account alone cannot serve it."""
    if set(_trusted_accounts(spec, shared.role_kind)) - set(shared.role_accounts):
        raise ModelStoreInputError(
            store,
            "driver_install",
            spec.derived["install"].driver,
            f"helm or none, as the cluster's EFS CSI node role trusts only "
            f"{', '.join(map(_shown, shared.role_accounts))} {_made_by(scope, shared)}",
        )


# ---- the store -----------------------------------------------------------------------------------


EFS_BACKUP = BackupSupport(
    retention=None,
    schedule="none",
    fixed=(
        "unset: the backup policy turns on AWS Backup's default EFS plan, daily backups kept "
        "35 days (EFS user guide, Backing up EFS file systems); another plan is an AWS Backup "
        "plan of your own"
    ),
)
"""EFS's backup policy: on or off, the plan is AWS Backup's default EFS plan."""


class EfsModelStore(AwsModelStore[EfsModelStoreArgs], DynamicClaims, backend="efs"):
    """A shared Amazon EFS model store for an EKS cluster.

    Every consumer namespace gets its own access point (same root directory and POSIX user), a
    static PV (driver ``efs.csi.aws.com``, volumeHandle ``<fs-id>::<access-point-id>``, access
    mode ReadWriteMany because the driver rejects ReadOnlyMany, reclaim policy Retain) and a
    claim bound to it; readers mount it read-only. The file system is protected by default.
    The driver install and (with ``iam_authorization``) the driver's node role belong to the
    cluster: one per cluster, whichever EFS store comes first, each store adding only its own
    permission to the role.
    """

    args_type = EfsModelStoreArgs
    # EFS: NFS v4.1: vLLM loader settings in kube/serving.py.
    loader_profile = "network-fs"
    example_args = MappingProxyType[str, Any]({"cluster_name": "prod-eks"})
    data_bearing_types = ("aws:efs/fileSystem:FileSystem",)
    _csi_chart = EFS_CSI
    renamed_fields = FILE_SYSTEM_RENAMES

    file_system_id: pulumi.Output[str]
    """The EFS file system id (``fs-...``)."""
    file_system_arn: pulumi.Output[str]
    """The file system's ARN."""
    dns_name: pulumi.Output[str]
    """The file system's DNS name."""
    access_point_ids: pulumi.Output[dict[str, str]]
    """Consumer namespace -> its access point id (``fsap-...``)."""
    mount_target_ids: pulumi.Output[dict[str, str]]
    """Availability zone -> mount target id (``fsmt-...``)."""
    security_group_id: pulumi.Output[str]
    """The mount targets' security group."""
    node_role_arn: pulumi.Output[str | None]
    """The cluster's EFS node role, which the driver's node service account mounts with
    (``iam_authorization``; shared by the cluster's EFS stores)."""

    # ---- 1. parse ------------------------------------------------------------------------------

    @classmethod
    def _renamed(cls, store: str, args: Any, warn: bool = True) -> Any:
        """``backup: true|false`` (before the common ``backup`` section) is still accepted for
        one release, as ``backup: {enabled: ...}``."""
        args = super()._renamed(store, args, warn)
        old = args.get("backup") if isinstance(args, Mapping) else None
        if isinstance(old, bool):
            if warn:
                message = (
                    f"{store}: backup: {str(old).lower()} is deprecated, use backup: "
                    f"{{enabled: {str(old).lower()}}}"
                )
                warnings.warn(message, DeprecationWarning, stacklevel=4)
                pulumi.log.warn(message)
            args = {**args, "backup": {"enabled": old}}
        return args

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """A backup policy turns on AWS Backup's default EFS plan, which fixes the schedule
        and the retention (docs.aws.amazon.com/efs/latest/ug/awsbackup.html: daily backups
        kept 35 days)."""
        return EFS_BACKUP

    @classmethod
    def dynamic_claims_refusal(cls, p: Parser) -> str | None:
        """An access point per claim under ``/dynamic``, except with ``iam_authorization`` (the
        node role mounts through the store's own access points only) or a ``root_directory``
        that would hold the claims' directories."""
        if p.ok("iam_authorization") and p["iam_authorization"]:
            return (
                "the node role of iam_authorization mounts through the store's own access "
                "points only, not the driver's per-claim ones"
            )
        root = p["root_directory"] if p.ok("root_directory") else None
        if isinstance(root, str) and (root + "/").startswith(DYNAMIC_BASE_PATH + "/"):
            return f"root_directory {root!r} would hold the claims' base path {DYNAMIC_BASE_PATH}"
        return None

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.field_rule(v.one_of, "throughput_mode", THROUGHPUT_MODES)
        p.rule(
            provisioned_throughput_fits_mode, "throughput_mode", "provisioned_throughput_in_mibps"
        )
        p.field_rule(v.one_of, "performance_mode", PERFORMANCE_MODES)
        p.rule(elastic_throughput_needs_general_purpose, "performance_mode", "throughput_mode")
        for transition in ("transition_to_ia", "transition_to_archive"):
            p.field_rule(v.one_of, transition, LIFECYCLE_AFTER_DAYS)
        p.rule(
            archive_needs_ia_and_elastic,
            "transition_to_archive",
            "transition_to_ia",
            "throughput_mode",
        )
        p.rule(archive_after_ia, "transition_to_archive", "transition_to_ia")
        p.field_rule(
            v.one_of, "transition_to_primary_storage_class", PRIMARY_STORAGE_CLASS_TRANSITIONS
        )
        p.field_rule(posix_id, "posix_uid")
        p.field_rule(posix_id, "posix_gid")
        p.field_rule(v.absolute_path, "root_directory")
        p.field_rule(root_directory_below_root, "root_directory")
        p.field_rule(root_directory_fits_efs, "root_directory")
        p.field_rule(octal_permissions, "root_directory_permissions")
        p.rule(identity_needs_iam_authorization, "identity", "iam_authorization")
        if p.ok("identity", "iam_authorization") and p["iam_authorization"] and not p["identity"]:
            p.set("identity", "irsa")
        p.field_rule(v.one_of, "identity", IDENTITIES)
        p.field_rule(extra_mount_options_are_known, "extra_mount_options")
        # The EFS mount helper hands NFS options to the Linux NFS client (amazon-efs-utils).
        p.field_rule(options_fit_the_client, "extra_mount_options")
        if p.ok("extra_mount_options", "iam_authorization"):
            p.derived["mount_options"] = mount_options(
                p["extra_mount_options"], p["iam_authorization"]
            )
        p.field_rule(v.dns_subdomain, "node_service_account")
        if p.ok(*_INSTALL_FIELDS):
            install = p.check(lambda: efs_driver_install(p.store, p.values))
            if install is not None:
                p.derived["install"] = install
                if p.ok("identity"):
                    p.check(lambda: driver_supports_pod_identity(p.store, p["identity"], install))
        p.field_rule(subnets_known_before_deploy, "subnet_ids")
        p.field_rule(aws_v.kms_key_arn, "kms_key_arn", "the provider refuses a key id or an alias")
        file_system_network_rules(p)

    # ---- 2. preflight --------------------------------------------------------------------------

    def preflight(self, spec: Spec[EfsModelStoreArgs], cluster: EksCluster, opts: Opts) -> _Facts:
        """The cluster, the zones of the mount targets' subnets (with the managed node groups'
        unless ``subnet_ids`` are given) and the node identity, each looked up once per
        cluster; then whether this store fits what the cluster's EFS stores already share."""
        eks, name = cluster, spec.common.name
        facts = eks.facts(name)
        zones = mount_target_subnets(name, eks, facts, spec.args.get("subnet_ids"))
        kind = spec.args.get("identity")
        identity = eks.identity(name, kind) if kind is not None else None
        self._check_shares(spec, eks)
        return _Facts(facts, zones, identity)

    def _check_shares(self, spec: Spec[EfsModelStoreArgs], cluster: EksCluster) -> None:
        """Stores on one cluster share the driver's node role: they agree on its identity kind
        and on the node service account it serves, and the driver install carries it."""
        shared, name, scope = _on_cluster(cluster), spec.common.name, cluster.scope_name
        kind = spec.args.get("identity")
        makes_install = (
            spec.derived["install"].driver != "none"
            and cluster.install_once(EFS_CSI.driver, name, None, lambda: None) is None
        )
        if shared.node_role is not None and kind is not None:
            same_node_identity(name, scope, shared, kind)
        if shared.node_role is not None and (kind is not None or makes_install):
            same_node_service_account(name, scope, shared, _node_account(spec))
        if shared.node_role is not None and makes_install:
            install_fits_node_role(name, scope, shared, spec)
        if kind is not None and shared.installed_without_role is not None:
            raise ModelStoreInputError(
                name,
                "iam_authorization",
                True,
                f"false on cluster {scope!r}, where store {shared.installed_without_role!r} "
                "installed the EFS CSI driver without a node role (declare a store with "
                "iam_authorization before it, so the install carries the role)",
            )

    # ---- 3. provision --------------------------------------------------------------------------

    def provision_storage(
        self, spec: Spec[EfsModelStoreArgs], cluster: EksCluster, facts: _Facts
    ) -> Binding:
        eks, name = cluster, spec.common.name
        tags = self.tags(spec)
        fs = self._file_system(spec, tags)
        sg_id, rules = self._network(name, spec.args, facts.cluster, tags)
        # Mount targets wait for the NFS rules: PVs wait for the mount targets, so no pod
        # mounts before its node may reach NFS (order: nfs-rules-first).
        self.mount_targets: dict[str, aws.efs.MountTarget] = {
            zone: aws.efs.MountTarget(
                f"{name}-mount-target-{zone}",
                file_system_id=fs.id,
                subnet_id=subnet_id,
                security_groups=[sg_id],
                opts=pulumi.ResourceOptions(parent=self, depends_on=rules),
            )
            for zone, subnet_id in facts.zones
        }
        self.access_points = self._access_points(spec, tags)
        # With iam_authorization the driver's node role (the cluster's) signs the mounts: this
        # store adds its own permission to it. No consumer identity (the node mounts).
        self.node_role: ServiceAccountRole | None = None
        self.node_policy: aws.iam.RolePolicy | None = None
        if facts.identity is not None:
            self.node_role = self._node_role(spec, eks, facts.identity)
            self.node_policy = attach_policy(
                f"{name}-efs-node-policy", self.node_role, self._client_policy(), parent=self
            )
        self.driver_install = self._install_driver(spec, eks)
        ready: list[pulumi.Resource] = [
            # The driver (this store's install or the cluster's): a destroy removes the
            # volumes before the driver that unmounts them (order: driver-before-volume).
            *([self.driver_install] if self.driver_install is not None else []),
            # A mount needs a mount target in the node's zone (order: storage-before-volume).
            *self.mount_targets.values(),
            # The file system policy refuses clients without TLS (and, under IAM
            # authorization, anonymous ones): no volume is offered before it applies
            # (order: storage-before-volume).
            self.file_system_policy,
        ]
        if self.node_role is not None and self.node_policy is not None:
            # `iam` mounts are signed with the node role: denied until this store's own policy
            # is on it, and (Pod Identity) until the association hands the role out
            # (order: grant-before-volume).
            ready += [self.node_policy, *self.node_role.associations]
        self._outputs_of(sg_id)
        return Binding(
            capacity=NOMINAL_CAPACITY,
            source=self._source,
            # The EFS driver accepts SINGLE_NODE_WRITER and MULTI_NODE_MULTI_WRITER only:
            # readers get RWX with read-only mounts.
            reader_access_mode="ReadWriteMany",
            writer_access_mode="ReadWriteMany",
            mount_options=spec.derived["mount_options"],
            ready=ready,
            dynamic_class=self._dynamic_class(spec) if spec.args["dynamic_claims"] else None,
        )

    def _dynamic_class(self, spec: Spec[EfsModelStoreArgs]) -> DynamicClass:
        """An access point per claim (``provisioningMode: efs-ap``) under ``/dynamic`` on this
        file system. The driver's controller calls CreateAccessPoint and DeleteAccessPoint:
        its service account needs the driver's IAM policy (aws-efs-csi-driver
        docs/iam-policy-example.json; the EKS add-on's AmazonEFSCSIDriverPolicy), which the
        store does not make.

        A deleted claim keeps its files: the driver deletes its access point, and its
        directory ``/dynamic/<namespace>/<claim>-<uuid>`` only when the controller runs with
        ``--delete-access-point-root-dir`` (kubernetes-sigs/aws-efs-csi-driver
        ``pkg/driver/controller.go`` DeleteVolume; the chart's
        ``controller.deleteAccessPointRootDir``, false by default). The store leaves it off:
        it is the cluster's driver install's, shared by every EFS class, and the controller
        removes the directory by mounting the file system with its own role (``tls``,
        ``iam``), which then needs ``ClientRootAccess`` to remove directories of mode 700
        owned by each claim's uid; without it the removal fails and DeleteVolume returns
        before it deletes the access point, so access points would pile up instead."""
        gid_start, gid_end = DYNAMIC_GID_RANGE
        return DynamicClass(
            provisioner=EFS_CSI.driver,
            parameters={
                "provisioningMode": "efs-ap",
                "fileSystemId": self.file_system.id,
                "directoryPerms": DYNAMIC_DIRECTORY_PERMS,
                "basePath": DYNAMIC_BASE_PATH,
                "subPathPattern": "${.PVC.namespace}/${.PVC.name}",
                "gidRangeStart": str(gid_start),
                "gidRangeEnd": str(gid_end),
                # The driver's default, pinned: the claim's directory is
                # <namespace>/<claim>-<uuid>, so a new claim of a deleted one's name never gets
                # the files that one left (pkg/driver/controller.go CreateVolume).
                "ensureUniqueDirectory": "true",
            },
            # The claims are scratch: their access points go with them, or they would pile up
            # towards the file system's access point quota. Their files stay (see above).
            reclaim_policy="Delete",
            # EFS is regional (a mount target per zone): no topology to wait for.
            volume_binding_mode="Immediate",
            mount_options=spec.derived["mount_options"],
        )

    def _file_system(
        self, spec: Spec[EfsModelStoreArgs], tags: Mapping[str, str]
    ) -> aws.efs.FileSystem:
        """The encrypted file system (protected unless opted out), its backup policy and a
        file system policy that refuses clients without TLS."""
        a, name = spec.args, spec.common.name
        lifecycle = [
            aws.efs.FileSystemLifecyclePolicyArgs(**{key: a[key]})
            for key in ("transition_to_ia", "transition_to_archive")
            if a.get(key) is not None
        ]
        if a.get("transition_to_primary_storage_class") is not None:
            lifecycle.append(
                aws.efs.FileSystemLifecyclePolicyArgs(
                    transition_to_primary_storage_class=a["transition_to_primary_storage_class"]
                )
            )
        self.file_system = fs = aws.efs.FileSystem(
            f"{name}-fs",
            encrypted=True,
            kms_key_id=a.get("kms_key_arn"),
            performance_mode=a["performance_mode"],
            throughput_mode=a["throughput_mode"],
            provisioned_throughput_in_mibps=a.get("provisioned_throughput_in_mibps"),
            lifecycle_policies=lifecycle or None,
            tags={**tags, **self.opt_out_marks()},
            opts=self.data_protection(),
        )
        self.backup_policy = aws.efs.BackupPolicy(
            f"{name}-backup",
            file_system_id=fs.id,
            backup_policy={"status": "ENABLED" if spec.derived["backup"].enabled else "DISABLED"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        # Anonymous clients (no `iam` mount) get only what the policy allows: every consumer
        # that writes (the writers, the seed Job's loader namespace) and every dynamic claim
        # mounts that way without iam_authorization, and would be read-only without ClientWrite.
        iam_authorization = a["iam_authorization"]
        writers = any(not read_only for _, read_only in spec.common.consumers)
        writers = writers or bool(a["dynamic_claims"])
        self.file_system_policy = aws.efs.FileSystemPolicy(
            f"{name}-fs-policy",
            file_system_id=fs.id,
            policy=fs.arn.apply(
                lambda arn: json.dumps(
                    file_system_policy(
                        arn, anonymous_access=not iam_authorization, anonymous_write=writers
                    )
                )
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return fs

    def _access_points(
        self, spec: Spec[EfsModelStoreArgs], tags: Mapping[str, str]
    ) -> dict[str, aws.efs.AccessPoint]:
        """One access point per consumer namespace, all on the same root directory as the same
        POSIX user. Kubelet keys a persistent CSI volume by driver^volumeHandle, so PVs
        sharing a handle collide on a node. The EFS driver parses the handle strictly
        (pkg/driver/node.go parseVolumeId: `fs-<hex>[:<path>[:fsap-<hex>]]`, at most three
        fields, the access point must be `fsap-<hex>`), so no free-form suffix (as the FSx
        store uses) is possible; distinct access points give distinct, valid handles and let
        IAM tell readers' mounts from writers'."""
        a, name = spec.args, spec.common.name
        return {
            ns: aws.efs.AccessPoint(
                f"{name}-ap-{ns}",
                file_system_id=self.file_system.id,
                posix_user={"uid": a["posix_uid"], "gid": a["posix_gid"]},
                root_directory={
                    "path": a["root_directory"],
                    "creation_info": {
                        "owner_uid": a["posix_uid"],
                        "owner_gid": a["posix_gid"],
                        "permissions": a["root_directory_permissions"],
                    },
                },
                tags={**tags, "Name": f"{name}-{ns}"},
                opts=pulumi.ResourceOptions(parent=self),
            )
            for ns, _ in spec.common.consumers
        }

    def _source(self, namespace: str, read_only: bool) -> dict[str, Any]:
        """A PV's volume source: the file system through the namespace's access point."""
        access_point = self.access_points[namespace]
        return {
            "csi": {
                "driver": EFS_CSI.driver,
                "volumeHandle": pulumi.Output.all(self.file_system.id, access_point.id).apply(
                    lambda ids: f"{ids[0]}::{ids[1]}"
                ),
                "readOnly": read_only,
                # The driver's default, pinned: efs-utils mounts over TLS. (It always does
                # with an access point; `tls` in mountOptions is deprecated upstream.)
                "volumeAttributes": {"encryptInTransit": "true"},
            }
        }

    def _outputs_of(self, sg_id: pulumi.Input[str]) -> None:
        fs = self.file_system
        self.file_system_id = fs.id
        self.file_system_arn = fs.arn
        self.dns_name = fs.dns_name
        self.access_point_ids = pulumi.Output.all(
            **{ns: ap.id for ns, ap in self.access_points.items()}
        )
        self.mount_target_ids = pulumi.Output.all(
            **{zone: mt.id for zone, mt in self.mount_targets.items()}
        )
        self.security_group_id = pulumi.Output.from_input(sg_id)
        self.node_role_arn = (
            self.node_role.arn if self.node_role is not None else pulumi.Output.from_input(None)
        )

    def _network(
        self, name: str, a: Mapping[str, Any], cluster: EksClusterFacts, tags: Mapping[str, str]
    ) -> tuple[pulumi.Input[str], list[pulumi.Resource]]:
        """The mount targets' security group and its NFS rules, each a separate resource."""
        if a.get("security_group_id") is not None:
            return a["security_group_id"], []
        sg = security_group(
            f"{name}-efs-sg",
            vpc_id=cluster.vpc_id,
            description=f"EFS model store {name}: NFS from the nodes",
            tags=tags,
            parent=self,
        )
        ports = (NFS_PORT, NFS_PORT)
        rules = [
            tcp_rule(
                f"{name}-nfs-in-{label}",
                direction="ingress",
                security_group_id=sg.id,
                peer_security_group_id=group,
                ports=ports,
                description=f"NFS {ports_text(ports)} from {label}",
                tags=tags,
                parent=self,
            )
            for label, group in peers(cluster.node_security_group_ids)
        ]
        return sg.id, rules

    def _client_policy(self) -> pulumi.Output[Any]:
        """This store's own permission on the node role: its file system, the access points of
        every consumer (the seed Job's loader namespace a writer among them)."""
        consumers = self.common.consumers
        return pulumi.Output.all(
            self.file_system.arn,
            [self.access_points[ns].arn for ns, read_only in consumers if read_only],
            [self.access_points[ns].arn for ns, read_only in consumers if not read_only],
        ).apply(lambda a: client_access_policy(a[0], a[1], a[2]))

    def _node_role(
        self, spec: Spec[EfsModelStoreArgs], cluster: EksCluster, identity: IdentityFacts
    ) -> ServiceAccountRole:
        """The cluster's EFS node role: made by the first store that asks (with aliases to the
        names it had under that store), without a policy of its own."""
        shared, name = _on_cluster(cluster), spec.common.name

        def make() -> ServiceAccountRole:
            accounts = _trusted_accounts(spec, identity.kind)
            role = service_account_role(
                f"{cluster.scope_name}-efs-csi-node",
                facts=identity,
                service_accounts=accounts,
                policy=None,
                description=(
                    f"EFS CSI node role of cluster {cluster.scope_name}: each model store adds "
                    "its own access points"
                ),
                tags=cluster_tags(spec.args.get("tags") or {}),
                parent=cluster,
                aliases_from=self,
                old_name=f"{name}-efs-node",
            )
            shared.node_role, shared.role_store = role, name
            shared.role_kind, shared.role_accounts = identity.kind, accounts
            return role

        return cluster.shared(("efs-node-role",), make)

    def _install_driver(
        self, spec: Spec[EfsModelStoreArgs], cluster: EksCluster
    ) -> pulumi.Resource | None:
        """The driver, once per cluster (``driver_install: none`` gets the one another store
        made, if any). It carries the cluster's node role when there is one by then."""
        shared, install = _on_cluster(cluster), spec.derived["install"]
        role = self.node_role if self.node_role is not None else shared.node_role
        node_sa: dict[str, Any] = {"name": spec.args["node_service_account"]}
        annotations = role.service_account_annotations() if role is not None else {}
        if annotations:
            # IRSA: the node pods run efs-utils, which signs `iam` mounts with this role.
            node_sa["annotations"] = annotations
        # GPU nodes are tainted; a node plugin that does not run there cannot mount.
        node: dict[str, Any] = {"tolerations": [{"operator": "Exists"}], "serviceAccount": node_sa}
        ready: list[pulumi.Resource] = []
        if role is not None:
            # The install waits for the role, and for Pod Identity for the association: EKS
            # hands Pod Identity credentials only to pods created after it exists, so a node
            # pod started before it has none and every `iam` mount fails
            # (order: driver-install-order).
            ready = [role.role, *role.associations]
            if role.association is not None:
                # Labelling the node pods (chart 4.4.1 values.yaml node.podLabels, on the
                # DaemonSet's pod template) with the association rolls them when it is
                # replaced, so they pick up the new association's credentials.
                node["podLabels"] = {
                    "modelstore.pulumi.com/pod-identity-association": (
                        role.association.association_id
                    )
                }
        made_before = cluster.install_once(EFS_CSI.driver, spec.common.name, None, lambda: None)
        resource = self.install_driver(
            spec,
            cluster,
            install,
            chart=EFS_CSI,
            helm_values={"node": node},
            old_name=f"{spec.common.name}-efs-csi-driver",
            role=role,
            depends_on=ready,
        )
        if made_before is None and resource is not None and role is None:
            shared.installed_without_role = spec.common.name
        return resource
