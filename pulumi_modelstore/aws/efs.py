"""Amazon EFS model store on EKS: an encrypted file system, a mount target per availability zone
the nodes use, NFS security group rules, an access point per consumer namespace, a file system
policy that refuses clients without TLS, optional IAM authorization for the driver's node
identity, the CSI driver install and a static PV/PVC per consumer namespace, in one graph."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from .. import validation as v
from .._legacy_store import (
    COMMON_FIELDS,
    ModelStore,
    ModelStoreArgs,
    StoreCommon,
    check_known_fields,
    parse_common,
    store_tags,
)
from ..errors import ModelStoreInputError
from ..kube.drivers import helm_release
from .cluster import EksClusterFacts, invoke_options, resolve_cluster
from .drivers import (
    ADDON_NAMESPACE,
    EFS_CSI,
    DriverInstall,
    DriverInstallArgs,
    eks_addon,
    parse_driver_install,
    require_addon_cluster,
)
from .identity import (
    IDENTITIES,
    IdentityFacts,
    ServiceAccountRole,
    resolve_identity,
    service_account_role,
    trust_policy,
)
from .policies import client_access_policy, file_system_policy

TYPE_TOKEN = "modelstore:index:EfsModelStore"

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
DEFAULT_POSIX_ID = 1000
DEFAULT_ROOT_DIRECTORY = "/models"
DEFAULT_ROOT_DIRECTORY_PERMISSIONS = "0755"
# EFS limits an access point's root directory path to 100 characters.
MAX_ROOT_DIRECTORY_LENGTH = 100
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


class EfsModelStoreArgs(ModelStoreArgs, DriverInstallArgs, total=False):
    """Arguments of :class:`EfsModelStore`. Every field is optional but ``cluster_name`` (unless
    ``vpc_id``, ``cluster_subnet_ids`` and ``node_security_group_ids`` are all given).

    The driver install (:class:`DriverInstallArgs`): ``driver_namespace`` is also the node
    service account's, and must stay kube-system for ``driver: eks-addon``; with ``driver:
    none``, annotate the existing driver's node service account with ``node_role_arn`` yourself
    for ``identity: irsa``."""

    cluster_name: str
    """The EKS cluster whose nodes mount the store. Its VPC, subnets, cluster security group and
    OIDC issuer are looked up before deploy unless given below."""
    vpc_id: str
    """The cluster's VPC. Default: looked up from the cluster."""
    cluster_subnet_ids: Sequence[str]
    """The cluster's subnets, from which the mount target subnets default. Default: looked up."""
    node_security_group_ids: Sequence[str]
    """Security groups of the nodes that mount the store; each may reach NFS (TCP 2049).
    Default: the cluster security group EKS attaches to managed node groups."""
    oidc_issuer: str
    """The cluster's OIDC issuer URL, for ``identity: irsa``. Default: looked up from the
    cluster."""
    subnet_ids: Sequence[str]
    """Subnets (in the cluster's VPC) where the nodes run. The store makes one mount target per
    availability zone among them (AWS allows one per zone per file system), in the first subnet
    of each zone by id. Default: the cluster's subnets plus those of its EKS managed node groups
    (looked up with ``cluster_name``), a zone the cluster's subnets already cover keeping its
    subnet. Nodes that Karpenter or self-managed groups launch are not found this way: if they
    run in zones outside those subnets, list their subnets here."""
    security_group_id: str
    """An existing security group for the mount targets. Default: a new group allowing TCP 2049
    from each node security group. With an existing group no rules are made: it must already
    allow NFS from the nodes."""
    throughput_mode: str
    """``elastic`` (default: scales with each model load), ``provisioned`` (needs
    ``provisioned_throughput_in_mibps``) or ``bursting`` (earns credits by size: a small store
    starves model loads)."""
    provisioned_throughput_in_mibps: float
    """Throughput in MiB/s for ``throughput_mode: provisioned``; required there, refused
    otherwise. Default: unset."""
    performance_mode: str
    """``generalPurpose`` (default; the only mode elastic throughput supports) or ``maxIO``."""
    kms_key_id: str
    """The ARN of the KMS key for encryption at rest (``arn:aws:kms:<region>:<account>:key/<id>``;
    the provider refuses a key id or an alias); the file system is always encrypted. Default:
    the AWS-managed EFS key."""
    transition_to_ia: str
    """Move files not read for this long to Infrequent Access (``AFTER_1_DAY`` ...
    ``AFTER_365_DAYS``). Default: never; IA reads cost per GiB and are slower, which hurts model
    loads."""
    transition_to_archive: str
    """Move files to Archive after this long (same values). Needs ``transition_to_ia`` and
    elastic throughput. Default: never."""
    transition_to_primary_storage_class: str
    """``AFTER_1_ACCESS`` moves a file back to Standard on its first read from IA. Default:
    files stay in IA once moved."""
    backup: bool
    """Daily AWS Backup of the file system (an explicit backup policy). Default: True."""
    posix_uid: int
    """The user id every request through the store's access points runs as, and the owner of
    the root directory EFS creates: the serving pods' ``runAsUser``. Default: 1000. From 1 to
    4294967295."""
    posix_gid: int
    """The group id of those requests and of the root directory: the pods' ``fsGroup``.
    Default: 1000. From 1 to 4294967295."""
    root_directory: str
    """The directory (on the file system) each access point exposes as the volume's root; EFS
    creates it on first use, owned by ``posix_uid``/``posix_gid``. Default: ``/models``."""
    root_directory_permissions: str
    """Octal mode EFS gives the root directory when it creates it. Default: ``0755`` (the owner
    writes, everyone reads)."""
    iam_authorization: bool
    """Mount with the ``iam`` option: the driver's node service account signs each mount with
    its role, which may only mount through this store's access points (``ClientMount``) and
    write through the writers' ones (``ClientWrite``); the file system policy then grants
    anonymous clients nothing. Default: False (any client that reaches a mount target over TLS
    may mount; readers are read-only by their mounts)."""
    identity: str
    """How the node service account gets its role with ``iam_authorization``: ``irsa``
    (default; needs the cluster's IAM OIDC provider) or ``pod-identity`` (needs the EKS Pod
    Identity Agent add-on). Refused without ``iam_authorization``."""
    node_service_account: str
    """The driver's node service account (for ``driver: helm`` or ``none``). Default:
    ``efs-csi-node-sa``, the chart's and the add-on's."""
    mount_options: Sequence[str]
    """Extra PV mount options for the EFS mount helper. Default: none besides ``iam`` with
    ``iam_authorization``. TLS needs no option: the PVs set ``encryptInTransit`` and the driver
    always uses TLS with an access point."""
    tags: Mapping[str, str]
    """Tags merged onto every AWS resource. Default: ``Name`` and the store's own tags."""


FIELDS = COMMON_FIELDS | frozenset(EfsModelStoreArgs.__annotations__)


@dataclass(frozen=True)
class _EfsSpec:
    common: StoreCommon
    throughput_mode: str
    provisioned_throughput_in_mibps: float | None
    performance_mode: str
    kms_key_id: Any
    lifecycle_policies: tuple[dict[str, str], ...]
    backup: bool
    posix_uid: int
    posix_gid: int
    root_directory: str
    root_directory_permissions: str
    iam_authorization: bool
    identity: str | None
    node_service_account: str
    mount_options: tuple[str, ...]
    install: DriverInstall
    subnet_ids: tuple[Any, ...] | None
    security_group_id: Any
    tags: dict[str, str]


def _mount_options(name: str, value: Any, iam_authorization: bool) -> tuple[Any, ...]:
    """The extra PV mount options, checked as given (a string is not a list of options), with
    ``iam`` first under IAM authorization."""
    if v.is_output(value):
        raise ModelStoreInputError(
            name, "mount_options", "<Output>", "a plain list of strings known before deploy"
        )
    v.string_list(name, "mount_options", value if value is not None else [])
    mount_options = tuple(value or ())
    for option in mount_options:
        if v.is_output(option):
            continue  # known at deploy time only; the driver checks it then
        if option.lower().split("=", 1)[0] in _DRIVER_OWNED_OPTIONS:
            raise ModelStoreInputError(
                name,
                "mount_options",
                option,
                "options other than accesspoint (the store puts each access point in the "
                "volumeHandle) and crossaccount (the driver refuses it)",
            )
    if iam_authorization and "iam" not in mount_options:
        mount_options = ("iam", *mount_options)
    return mount_options


def _posix_id(name: str, field: str, value: Any) -> int:
    if v.is_output(value):
        raise ModelStoreInputError(
            name, field, "<Output>", "a plain whole number known before deploy"
        )
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_POSIX_ID:
        raise ModelStoreInputError(
            name,
            field,
            value,
            f"a whole number from 1 to {MAX_POSIX_ID} (0, root, would be squashed: the store "
            "grants no ClientRootAccess)",
        )
    return value


def _version(text: str) -> tuple[int, ...] | None:
    """``v2.0.4-eksbuild.1`` or ``3.4.1`` -> (2, 0, 4); None when it has no x.y.z."""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(p) for p in match.groups()) if match else None


def _check_pod_identity_support(name: str, driver: str, addon_version: str | None) -> None:
    """EKS Pod Identity needs driver v2.0.5 or newer: the pinned chart, or the add-on version
    asked for. With ``driver: none`` the installed version is unknown here."""
    if driver == "helm":
        version, source = _version(EFS_CSI.app_version), f"the pinned chart's {EFS_CSI.app_version}"
    elif driver == "eks-addon" and addon_version:
        version, source = _version(addon_version), f"add-on {addon_version}"
    else:
        return
    if version is not None and version < POD_IDENTITY_MIN_DRIVER:
        minimum = ".".join(map(str, POD_IDENTITY_MIN_DRIVER))
        raise ModelStoreInputError(
            name,
            "identity",
            "pod-identity",
            f"irsa with EFS CSI driver {source} (EKS Pod Identity needs driver {minimum} or newer)",
        )


def parse_efs_args(name: str, args: Mapping[str, Any]) -> _EfsSpec:
    """Validate every field; raises :class:`ModelStoreInputError` naming field, value and what
    is allowed."""
    check_known_fields(name, args, FIELDS)
    common = parse_common(name, args)

    throughput_mode = args.get("throughput_mode", "elastic")
    v.one_of(name, "throughput_mode", throughput_mode, THROUGHPUT_MODES)
    provisioned = args.get("provisioned_throughput_in_mibps")
    if throughput_mode == "provisioned":
        if provisioned is None:
            raise ModelStoreInputError(
                name,
                "provisioned_throughput_in_mibps",
                None,
                "a throughput in MiB/s when throughput_mode is provisioned",
            )
        if not v.is_output(provisioned) and (
            isinstance(provisioned, bool)
            or not isinstance(provisioned, int | float)
            or provisioned <= 0
        ):
            raise ModelStoreInputError(
                name, "provisioned_throughput_in_mibps", provisioned, "a positive number of MiB/s"
            )
    elif provisioned is not None:
        raise ModelStoreInputError(
            name,
            "provisioned_throughput_in_mibps",
            provisioned,
            f"unset unless throughput_mode is provisioned (it is {throughput_mode})",
        )
    performance_mode = args.get("performance_mode", "generalPurpose")
    v.one_of(name, "performance_mode", performance_mode, PERFORMANCE_MODES)
    if performance_mode == "maxIO" and throughput_mode == "elastic":
        raise ModelStoreInputError(
            name,
            "throughput_mode",
            throughput_mode,
            "provisioned or bursting when performance_mode is maxIO (elastic throughput needs "
            "generalPurpose)",
        )

    lifecycle: list[dict[str, str]] = []
    to_ia = args.get("transition_to_ia")
    to_archive = args.get("transition_to_archive")
    to_primary = args.get("transition_to_primary_storage_class")
    if to_ia is not None:
        v.one_of(name, "transition_to_ia", to_ia, LIFECYCLE_AFTER_DAYS)
        lifecycle.append({"transition_to_ia": to_ia})
    if to_archive is not None:
        v.one_of(name, "transition_to_archive", to_archive, LIFECYCLE_AFTER_DAYS)
        if to_ia is None or throughput_mode != "elastic":
            raise ModelStoreInputError(
                name,
                "transition_to_archive",
                to_archive,
                "unset unless transition_to_ia is set and throughput_mode is elastic",
            )
        lifecycle.append({"transition_to_archive": to_archive})
    if to_primary is not None:
        v.one_of(
            name,
            "transition_to_primary_storage_class",
            to_primary,
            PRIMARY_STORAGE_CLASS_TRANSITIONS,
        )
        lifecycle.append({"transition_to_primary_storage_class": to_primary})

    posix_uid = _posix_id(name, "posix_uid", args.get("posix_uid", DEFAULT_POSIX_ID))
    posix_gid = _posix_id(name, "posix_gid", args.get("posix_gid", DEFAULT_POSIX_ID))
    root_directory = args.get("root_directory", DEFAULT_ROOT_DIRECTORY)
    v.absolute_path(name, "root_directory", root_directory)
    if (
        v.is_output(root_directory)
        or root_directory.rstrip("/") == ""
        or len(root_directory) > MAX_ROOT_DIRECTORY_LENGTH
    ):
        raise ModelStoreInputError(
            name,
            "root_directory",
            "<Output>" if v.is_output(root_directory) else root_directory,
            f"a plain directory below '/' of at most {MAX_ROOT_DIRECTORY_LENGTH} characters "
            "('/' itself is root's, and pods could not write to it)",
        )
    permissions = args.get("root_directory_permissions", DEFAULT_ROOT_DIRECTORY_PERMISSIONS)
    if not isinstance(permissions, str) or not _PERMISSIONS.match(permissions):
        raise ModelStoreInputError(
            name, "root_directory_permissions", permissions, "an octal mode such as '0755'"
        )

    iam_authorization = v.flag(name, "iam_authorization", args.get("iam_authorization", False))
    identity = args.get("identity")
    if identity is not None and not iam_authorization:
        raise ModelStoreInputError(
            name,
            "identity",
            identity,
            "unset unless iam_authorization is True (without it the driver mounts with no AWS "
            "identity)",
        )
    if iam_authorization:
        identity = identity or "irsa"
        v.one_of(name, "identity", identity, IDENTITIES)

    mount_options = _mount_options(name, args.get("mount_options"), iam_authorization)

    node_sa = args.get("node_service_account", NODE_SERVICE_ACCOUNT)

    def check_node_service_account(driver: str, driver_namespace: str) -> None:
        # The add-on names the node service account and installs it in kube-system; it needs
        # the cluster first (checked here, so the shared check is off below).
        v.dns_subdomain(name, "node_service_account", node_sa)
        if driver != "eks-addon":
            return
        require_addon_cluster(name, args, driver)
        if driver_namespace != ADDON_NAMESPACE:
            raise ModelStoreInputError(
                name,
                "driver_namespace",
                driver_namespace,
                f"{ADDON_NAMESPACE} when driver is eks-addon (the add-on installs there)",
            )
        if node_sa != NODE_SERVICE_ACCOUNT:
            raise ModelStoreInputError(
                name,
                "node_service_account",
                node_sa,
                f"{NODE_SERVICE_ACCOUNT} when driver is eks-addon (the add-on names it)",
            )

    install = parse_driver_install(
        name, args, check=check_node_service_account, check_cluster_name=False
    )
    if identity == "pod-identity":
        _check_pod_identity_support(name, install.driver, install.eks_addon_version)

    subnet_ids = args.get("subnet_ids")
    if subnet_ids is not None:
        v.string_list(name, "subnet_ids", subnet_ids)
        if v.is_output(subnet_ids) or any(v.is_output(s) for s in subnet_ids):
            raise ModelStoreInputError(
                name,
                "subnet_ids",
                "<Output>",
                "plain subnet ids, so their availability zones can be looked up before deploy",
            )
        if not list(subnet_ids):
            raise ModelStoreInputError(
                name,
                "subnet_ids",
                [],
                "a non-empty list of the subnets where the cluster's nodes run",
            )
    backup = v.flag(name, "backup", args.get("backup", True))
    kms_key_id = args.get("kms_key_id")
    if kms_key_id is not None:
        v.kms_key_arn(name, "kms_key_id", kms_key_id, "the provider refuses a key id or an alias")
    tags = v.string_map(name, "tags", args.get("tags"))
    return _EfsSpec(
        common=common,
        throughput_mode=throughput_mode,
        provisioned_throughput_in_mibps=provisioned,
        performance_mode=performance_mode,
        kms_key_id=kms_key_id,
        lifecycle_policies=tuple(lifecycle),
        backup=backup,
        posix_uid=posix_uid,
        posix_gid=posix_gid,
        root_directory=root_directory,
        root_directory_permissions=permissions,
        iam_authorization=iam_authorization,
        identity=identity,
        node_service_account=node_sa,
        mount_options=mount_options,
        install=install,
        subnet_ids=tuple(subnet_ids) if subnet_ids is not None else None,
        security_group_id=args.get("security_group_id"),
        tags=store_tags(name, tags),
    )


def node_group_subnets(cluster_name: str, opts: pulumi.ResourceOptions | None) -> list[str]:
    """Preflight: the subnets of the cluster's EKS managed node groups, sorted and deduped.

    Node groups may run in zones the cluster's own subnets do not cover. Nodes launched by
    Karpenter or self-managed groups are not listed by EKS; their subnets must be given."""
    invoke_opts = invoke_options(opts)
    names = aws.eks.get_node_groups(cluster_name=cluster_name, opts=invoke_opts).names or []
    return sorted(
        {
            subnet_id
            for group in sorted(names)
            for subnet_id in aws.eks.get_node_group(
                cluster_name=cluster_name, node_group_name=group, opts=invoke_opts
            ).subnet_ids
            or []
        }
    )


def mount_target_subnets(
    store: str,
    subnet_ids: Sequence[Any],
    vpc_id: Any,
    opts: pulumi.ResourceOptions | None,
    extra_subnet_ids: Sequence[str] = (),
) -> list[tuple[str, str]]:
    """Preflight: (availability zone, subnet) for one subnet per zone, sorted by zone.

    Every subnet must be in the cluster's VPC; each is looked up once. AWS allows one mount
    target per zone per file system, so of several subnets in one zone the first by id gets
    it: a stable choice that does not move when subnets are listed in another order.
    ``extra_subnet_ids`` (the node groups') only add zones ``subnet_ids`` do not cover, so a
    new node group never moves (replaces) an existing mount target."""
    if not subnet_ids and not extra_subnet_ids:
        raise ModelStoreInputError(
            store,
            "subnet_ids",
            [],
            "a non-empty list of the subnets where the cluster's nodes run (the cluster "
            "reported none)",
        )
    if any(v.is_output(s) for s in subnet_ids):
        raise ModelStoreInputError(
            store,
            "cluster_subnet_ids",
            "<Output>",
            "plain subnet ids, so their availability zones can be looked up before deploy",
        )
    by_zone: dict[str, str] = {}
    given = sorted(set(subnet_ids))
    for subnet_id in [*given, *sorted(set(extra_subnet_ids) - set(given))]:
        subnet = aws.ec2.get_subnet(id=subnet_id, opts=invoke_options(opts))
        if not v.is_output(vpc_id) and subnet.vpc_id != vpc_id:
            raise ModelStoreInputError(
                store,
                "subnet_ids",
                subnet_id,
                f"a subnet in the cluster's VPC {vpc_id} (it is in {subnet.vpc_id})",
            )
        zone = subnet.availability_zone
        if not zone:
            raise ModelStoreInputError(
                store, "subnet_ids", subnet_id, "a subnet whose availability zone AWS reports"
            )
        by_zone.setdefault(zone, subnet_id)
    return sorted(by_zone.items())


class EfsModelStore(ModelStore):
    """A shared Amazon EFS model store for an EKS cluster.

    Every consumer namespace gets its own access point (same root directory and POSIX user), a
    static PV (driver ``efs.csi.aws.com``, volumeHandle ``<fs-id>::<access-point-id>``, access
    mode ReadWriteMany because the driver rejects ReadOnlyMany, reclaim policy Retain) and a
    claim bound to it; readers mount it read-only. The file system is protected by default.
    """

    driver_chart = EFS_CSI

    @staticmethod
    def validate(resource_name: str, args: Mapping[str, Any]) -> None:
        """Check every input that needs no lookup (what the constructor checks first); raises
        :class:`ModelStoreInputError`. Lets a program check all its stores before any
        registers."""
        parse_efs_args(resource_name, args)

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
    """The role the driver's node service account mounts with (``iam_authorization``)."""

    def __init__(
        self,
        resource_name: str,
        args: EfsModelStoreArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        raw: Mapping[str, Any] = dict(args or {})
        spec = parse_efs_args(resource_name, raw)
        # Preflight, before anything registers: the cluster, the zones of the mount targets'
        # subnets (with the managed node groups' unless subnet_ids are given), the identity.
        cluster = resolve_cluster(resource_name, raw, opts)
        extra_subnet_ids: list[str] = []
        if spec.subnet_ids is not None:
            subnet_ids: Sequence[Any] = spec.subnet_ids
        else:
            subnet_ids = cluster.subnet_ids
            if cluster.name and not v.is_output(cluster.name):
                extra_subnet_ids = node_group_subnets(cluster.name, opts)
        zones = mount_target_subnets(
            resource_name, subnet_ids, cluster.vpc_id, opts, extra_subnet_ids
        )
        identity = (
            resolve_identity(resource_name, spec.identity, cluster, opts)
            if spec.identity is not None
            else None
        )

        super().__init__(TYPE_TOKEN, resource_name, spec.common, opts)
        self._spec = spec
        self.cluster = cluster
        name = resource_name

        self.file_system = aws.efs.FileSystem(
            f"{name}-fs",
            encrypted=True,
            kms_key_id=spec.kms_key_id,
            performance_mode=spec.performance_mode,
            throughput_mode=spec.throughput_mode,
            provisioned_throughput_in_mibps=spec.provisioned_throughput_in_mibps,
            lifecycle_policies=[
                aws.efs.FileSystemLifecyclePolicyArgs(**p) for p in spec.lifecycle_policies
            ]
            or None,
            tags=spec.tags,
            opts=self.data_protection(),
        )
        fs = self.file_system
        self.backup_policy = aws.efs.BackupPolicy(
            f"{name}-backup",
            file_system_id=fs.id,
            backup_policy={"status": "ENABLED" if spec.backup else "DISABLED"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.file_system_policy = aws.efs.FileSystemPolicy(
            f"{name}-fs-policy",
            file_system_id=fs.id,
            policy=fs.arn.apply(
                lambda arn: json.dumps(
                    file_system_policy(
                        arn,
                        anonymous_access=not spec.iam_authorization,
                        anonymous_write=bool(spec.common.writers),
                    )
                )
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )

        sg_id, rules = self._network(name, spec, cluster)
        self.mount_targets: dict[str, aws.efs.MountTarget] = {
            zone: aws.efs.MountTarget(
                f"{name}-mount-target-{zone}",
                file_system_id=fs.id,
                subnet_id=subnet_id,
                security_groups=[sg_id],
                opts=pulumi.ResourceOptions(parent=self, depends_on=rules),
            )
            for zone, subnet_id in zones
        }

        # One access point per consumer namespace, all on the same root directory as the same
        # POSIX user. Kubelet keys a persistent CSI volume by driver^volumeHandle, so PVs
        # sharing a handle collide on a node. The EFS driver parses the handle strictly
        # (pkg/driver/node.go parseVolumeId: `fs-<hex>[:<path>[:fsap-<hex>]]`, at most three
        # fields, the access point must be `fsap-<hex>`), so no free-form suffix (as the FSx
        # store uses) is possible; distinct access points give distinct, valid handles and let
        # IAM tell readers' mounts from writers'.
        self.access_points: dict[str, aws.efs.AccessPoint] = {
            ns: aws.efs.AccessPoint(
                f"{name}-ap-{ns}",
                file_system_id=fs.id,
                posix_user={"uid": spec.posix_uid, "gid": spec.posix_gid},
                root_directory={
                    "path": spec.root_directory,
                    "creation_info": {
                        "owner_uid": spec.posix_uid,
                        "owner_gid": spec.posix_gid,
                        "permissions": spec.root_directory_permissions,
                    },
                },
                tags={**spec.tags, "Name": f"{name}-{ns}"},
                opts=pulumi.ResourceOptions(parent=self),
            )
            for ns, _ in spec.common.consumers
        }

        self.node_role: ServiceAccountRole | None = None
        identity_resources: list[pulumi.Resource] = []
        if identity is not None:
            self.node_role = self._node_role(name, spec, identity)
            identity_resources = [
                r
                for r in (
                    self.node_role.role,
                    self.node_role.policy,
                    self.node_role.association,
                )
                if r is not None
            ]

        self.driver_install = self._install_driver(name, spec, cluster)

        def source(namespace: str, read_only: bool) -> dict[str, Any]:
            access_point = self.access_points[namespace]
            return {
                "csi": {
                    "driver": EFS_CSI.driver,
                    "volumeHandle": pulumi.Output.all(fs.id, access_point.id).apply(
                        lambda ids: f"{ids[0]}::{ids[1]}"
                    ),
                    "readOnly": read_only,
                    # The driver's default, pinned: efs-utils mounts over TLS. (It always does
                    # with an access point; `tls` in mountOptions is deprecated upstream.)
                    "volumeAttributes": {"encryptInTransit": "true"},
                }
            }

        self._bind_consumers(
            capacity=NOMINAL_CAPACITY,
            # The EFS driver accepts SINGLE_NODE_WRITER and MULTI_NODE_MULTI_WRITER only:
            # readers get RWX with read-only mounts.
            access_mode=lambda read_only: "ReadWriteMany",
            source=source,
            mount_options=spec.mount_options,
            depends_on=[
                *([self.driver_install] if self.driver_install is not None else []),
                *self.mount_targets.values(),
                self.file_system_policy,
                *identity_resources,
            ],
        )

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
        self._finish(
            {
                "fileSystemId": self.file_system_id,
                "fileSystemArn": self.file_system_arn,
                "dnsName": self.dns_name,
                "accessPointIds": self.access_point_ids,
                "mountTargetIds": self.mount_target_ids,
                "securityGroupId": self.security_group_id,
                "nodeRoleArn": self.node_role_arn,
            }
        )

    def _network(
        self, name: str, spec: _EfsSpec, cluster: EksClusterFacts
    ) -> tuple[pulumi.Input[str], list[pulumi.Resource]]:
        """The mount targets' security group and its NFS rules, each a separate resource."""
        if spec.security_group_id is not None:
            return spec.security_group_id, []
        sg = aws.ec2.SecurityGroup(
            f"{name}-efs-sg",
            vpc_id=cluster.vpc_id,
            description=f"EFS model store {name}: NFS from the nodes",
            tags=spec.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # Rules are named by position, not by group id: the ids may be Outputs (unknown in a
        # preview), and a name must be known when the rule registers. So keep the order of
        # node_security_group_ids stable: reordering it rewrites which rule admits which group.
        rules: list[pulumi.Resource] = [
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-nfs-in-nodes{i}",
                security_group_id=sg.id,
                referenced_security_group_id=node_sg,
                ip_protocol="tcp",
                from_port=NFS_PORT,
                to_port=NFS_PORT,
                description=f"NFS {NFS_PORT} from nodes{i}",
                tags=spec.tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for i, node_sg in enumerate(cluster.node_security_group_ids)
        ]
        return sg.id, rules

    def _client_policy(self) -> pulumi.Output[Any]:
        c = self._common
        return pulumi.Output.all(
            self.file_system.arn,
            [self.access_points[ns].arn for ns in c.readers],
            [self.access_points[ns].arn for ns in c.writers],
        ).apply(lambda a: client_access_policy(a[0], a[1], a[2]))

    def _node_role(self, name: str, spec: _EfsSpec, identity: IdentityFacts) -> ServiceAccountRole:
        """The role the driver's node service account signs mounts with."""
        description = f"EFS CSI node role for model store {name}: mount via its access points"
        if spec.install.driver == "eks-addon" and identity.kind == "irsa":
            return self._addon_irsa_role(name, spec, identity, description)
        return service_account_role(
            f"{name}-efs-node",
            facts=identity,
            namespace=spec.install.namespace,
            service_account=spec.node_service_account,
            policy=self._client_policy(),
            description=description,
            tags=spec.tags,
            parent=self,
        )

    def _addon_irsa_role(
        self, name: str, spec: _EfsSpec, identity: IdentityFacts, description: str
    ) -> ServiceAccountRole:
        """The EKS add-on puts its ``serviceAccountRoleArn`` on BOTH its service accounts (its
        schema has no node-only role: aws/containers-roadmap#2820; AWS's add-on page widens
        the trust to ``efs-csi-*``). So the role trusts exactly those two, one statement each,
        built by :func:`trust_policy`; a node-only trust would hand the controller a role it
        cannot assume."""
        statements = [
            statement
            for sa in (NODE_SERVICE_ACCOUNT, CONTROLLER_SERVICE_ACCOUNT)
            for statement in trust_policy(identity, ADDON_NAMESPACE, sa)["Statement"]
        ]
        role = aws.iam.Role(
            f"{name}-efs-node-role",
            assume_role_policy=json.dumps({"Version": "2012-10-17", "Statement": statements}),
            description=description,
            tags=spec.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        policy = aws.iam.RolePolicy(
            f"{name}-efs-node-policy",
            role=role.id,
            policy=pulumi.Output.json_dumps(self._client_policy()),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return ServiceAccountRole(role, policy, None, ADDON_NAMESPACE, NODE_SERVICE_ACCOUNT)

    def _install_driver(
        self, name: str, spec: _EfsSpec, cluster: EksClusterFacts
    ) -> pulumi.Resource | None:
        if spec.install.driver == "none":
            return None
        role = self.node_role
        # Both installs wait for the node role to be usable: its policy (IRSA) and, for Pod
        # Identity, the association (which itself waits for the policy). EKS hands Pod Identity
        # credentials only to pods created after the association exists: a node pod started
        # before it has no credentials and every `iam` mount fails.
        ready: list[pulumi.Resource] = []
        if role is not None:
            ready = [r for r in (role.policy, role.association) if r is not None]
        if spec.install.driver == "eks-addon":
            return eks_addon(
                f"{name}-efs-csi-driver",
                EFS_CSI,
                cluster_name=cluster.name,
                install=spec.install,
                role=role,
                tags=spec.tags,
                parent=self,
                depends_on=ready,
            )
        node_sa: dict[str, Any] = {"name": spec.node_service_account}
        annotations = role.service_account_annotations() if role is not None else {}
        if annotations:
            # IRSA: the node pods run efs-utils, which signs `iam` mounts with this role.
            node_sa["annotations"] = annotations
        # GPU nodes are tainted; a node plugin that does not run there cannot mount.
        node: dict[str, Any] = {"tolerations": [{"operator": "Exists"}], "serviceAccount": node_sa}
        if role is not None and role.association is not None:
            # Labelling the node pods (chart 4.4.1 values.yaml node.podLabels, on the DaemonSet's
            # pod template) with the association rolls them when it is replaced, so they pick
            # up the new association's credentials.
            node["podLabels"] = {
                "modelstore.pulumi.com/pod-identity-association": role.association.association_id
            }
        return helm_release(
            f"{name}-efs-csi-driver",
            EFS_CSI,
            namespace=spec.install.namespace,
            values={"node": node},
            parent=self,
            depends_on=ready,
        )
