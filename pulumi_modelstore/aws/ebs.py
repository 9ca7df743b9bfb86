"""EBS block volumes for model caches and checkpoints on EKS.

Two components and the helpers under them:

- :class:`EbsCsiDriver`, once per cluster: the EBS CSI driver (Helm chart pinned in
  ``aws/drivers.py``, the EKS add-on, or none), its controller's IAM identity (IRSA or EKS Pod
  Identity) with the least-privilege policy of :func:`ebs_csi_driver_policy`, the snapshot CRDs
  and ONE snapshot controller, a VolumeSnapshotClass (deletionPolicy Retain), a gp3 StorageClass
  and optionally an io2 Multi-Attach class.
- :class:`EbsModelCache`, per model: weights written once to a seed volume by a loader Job,
  snapshotted when the Job has completed, and every serving replica's own ReadWriteOnce volume
  restored from that snapshot through a StatefulSet ``volumeClaimTemplate``.

Limits checked before anything registers (AWS EC2 API reference for CreateVolume, as shipped in
botocore's EC2 model; ratios from the EBS volume types guide; the driver's
``pkg/cloud/cloud.go``): gp3 3,000-80,000 IOPS, 125-2,000 MiB/s, at most 500 IOPS per GiB and
0.25 MiB/s per provisioned IOPS, 1-65,536 GiB; io2 100-256,000 IOPS, at most 1,000 IOPS per GiB,
4-65,536 GiB; volume initialization rate 100-300 MiB/s.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pulumi.runtime.settings import get_root_resource

from .. import validation as v
from .._legacy_store import DEFAULT_MOUNT_PATH, MANAGED_BY, check_known_fields
from ..errors import ModelStoreInputError
from ..kube.drivers import helm_release
from ..kube.snapshots import (
    DELETION_POLICIES,
    claim_spec,
    name_after,
    size_gib,
    snapshot_source,
    volume_claim,
    volume_snapshot,
    volume_snapshot_class,
)
from ..kube.workload import HF_HOME_VOLUME, hf_home_volume, reader_env
from .cluster import EksClusterFacts, invoke_options, resolve_cluster
from .drivers import (
    DRIVER_INSTALLS,
    EBS_CSI,
    SNAPSHOT_CONTROLLER,
    DriverInstall,
    DriverInstallArgs,
    eks_addon,
    parse_driver_install,
)
from .identity import IdentityFacts, ServiceAccountRole, resolve_identity, service_account_role
from .policies import (
    ebs_csi_driver_policy,
)

DRIVER_TYPE_TOKEN = "modelstore:index:EbsCsiDriver"
CACHE_TYPE_TOKEN = "modelstore:index:EbsModelCache"

# gp3 (CreateVolume in the EC2 API model: 3,000-80,000 IOPS, 125-2,000 MiB/s, 1-65,536 GiB).
GP3_IOPS = (3000, 80000)
GP3_THROUGHPUT_MIBPS = (125, 2000)
GP3_MAX_IOPS_PER_GIB = 500
GP3_MAX_MIBPS_PER_IOPS = 0.25
GP3_SIZE_GIB = (1, 65536)
# io2 (same source). Checked against kubernetes-sigs/aws-ebs-csi-driver pkg/cloud/cloud.go at
# 429e202e (io2MinTotalIOPS 100, io2FallbackMaxIOPS 256000, io2MaxIOPSPerGB 1000): its capIOPS
# silently lowers a volume's IOPS to 1000 per GiB of its size, so a claim too small for its class's
# IOPS gets less than asked for, without an error.
IO2_IOPS = (100, 256000)
IO2_MAX_IOPS_PER_GIB = 1000
IO2_SIZE_GIB = (4, 65536)
VOLUME_INITIALIZATION_RATE_MIBPS = (100, 300)
FS_TYPES = ("ext4", "xfs")
RECLAIM_POLICIES = ("Delete", "Retain")
IDENTITY_CHOICES = ("irsa", "pod-identity", "none")

CONTROLLER_SERVICE_ACCOUNT = "ebs-csi-controller-sa"
"""The controller's service account in the chart's values and in the EKS add-on."""
ADDON_FIXED = (
    "unset when driver is eks-addon (the add-on runs ebs-csi-controller-sa in kube-system)"
)
"""Why the add-on refuses a driver namespace or controller service account."""
DEFAULT_GP3_CLASS = "ebs-gp3"
DEFAULT_IO2_CLASS = "ebs-io2-multi-attach"
DEFAULT_SNAPSHOT_CLASS = "ebs-snapshots"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

KMS_ALIAS_NOTE = "the driver and its IAM policy need the key's ARN, not an alias"
"""Why a KMS key id or alias is refused (:func:`pulumi_modelstore.validation.kms_key_arn`)."""

# -- the driver's IAM policy ------------------------------------------------------------------


@dataclass(frozen=True)
class Gp3Class:
    """A validated gp3 StorageClass."""

    iops: int
    throughput_mibps: int
    encrypted: bool
    kms_key_arn: Any
    fs_type: str
    reclaim_policy: str
    volume_initialization_rate_mibps: int | None
    tags: dict[str, str] = field(default_factory=dict)

    def parameters(self) -> dict[str, pulumi.Input[str]]:
        """The driver's StorageClass parameters (its ``docs/parameters.md``); values are
        strings, as a StorageClass requires."""
        params: dict[str, pulumi.Input[str]] = {
            "type": "gp3",
            "iops": str(self.iops),
            "throughput": str(self.throughput_mibps),
            "encrypted": "true" if self.encrypted else "false",
            "csi.storage.k8s.io/fstype": self.fs_type,
        }
        if self.kms_key_arn is not None:
            params["kmsKeyId"] = self.kms_key_arn
        if self.volume_initialization_rate_mibps is not None:
            params["volumeInitializationRate"] = str(self.volume_initialization_rate_mibps)
        params.update(_tag_parameters(self.tags))
        return params


@dataclass(frozen=True)
class Io2MultiAttachClass:
    """A validated io2 StorageClass for Multi-Attach block volumes."""

    iops: int
    encrypted: bool
    kms_key_arn: Any
    reclaim_policy: str
    tags: dict[str, str] = field(default_factory=dict)

    def parameters(self) -> dict[str, pulumi.Input[str]]:
        params: dict[str, pulumi.Input[str]] = {
            "type": "io2",
            "iops": str(self.iops),
            "encrypted": "true" if self.encrypted else "false",
        }
        if self.kms_key_arn is not None:
            params["kmsKeyId"] = self.kms_key_arn
        params.update(_tag_parameters(self.tags))
        return params


def _tag_parameters(tags: Mapping[str, pulumi.Input[str]]) -> dict[str, pulumi.Input[str]]:
    """Volume tags as the driver's ``tagSpecification_<n>: key=value`` parameters (a value that
    is still an Output is joined when it resolves)."""
    return {
        f"tagSpecification_{i}": (
            pulumi.Output.concat(key, "=", value) if v.is_output(value) else f"{key}={value}"
        )
        for i, (key, value) in enumerate(sorted(tags.items()), start=1)
    }


def _whole_in_range(store: str, name: str, value: Any, low: int, high: int, unit: str) -> None:
    """A plain whole number in range (not an Output: limits and ratios are checked at preview)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ModelStoreInputError(store, name, value, f"a whole number from {low} to {high}{unit}")


def _kms(store: str, name: str, args: Mapping[str, Any], encrypted: bool) -> Any:
    key = args.get(name)
    if key is None:
        return None
    if not encrypted:
        raise ModelStoreInputError(store, name, key, "unset when encrypted is False")
    v.kms_key_arn(store, name, key, alias_note=KMS_ALIAS_NOTE)
    return key


def parse_gp3_class(store: str, args: Mapping[str, Any]) -> Gp3Class:
    """Validate gp3 class fields: ``iops`` (default 3000), ``throughput_mibps`` (default 125),
    ``encrypted`` (default True), ``kms_key_arn``, ``fs_type`` (default ext4),
    ``reclaim_policy`` (default Delete), ``volume_initialization_rate_mibps``,
    ``volume_tags``."""
    iops = args.get("iops", GP3_IOPS[0])
    _whole_in_range(store, "iops", iops, *GP3_IOPS, " IOPS for gp3")
    throughput = args.get("throughput_mibps", GP3_THROUGHPUT_MIBPS[0])
    _whole_in_range(store, "throughput_mibps", throughput, *GP3_THROUGHPUT_MIBPS, " MiB/s for gp3")
    if throughput > iops * GP3_MAX_MIBPS_PER_IOPS:
        raise ModelStoreInputError(
            store,
            "throughput_mibps",
            throughput,
            f"at most {math.floor(iops * GP3_MAX_MIBPS_PER_IOPS)} MiB/s at {iops} IOPS (gp3 "
            f"allows {GP3_MAX_MIBPS_PER_IOPS} MiB/s per provisioned IOPS; raise iops to at least "
            f"{math.ceil(throughput / GP3_MAX_MIBPS_PER_IOPS)})",
        )
    encrypted = v.flag(store, "encrypted", args.get("encrypted", True))
    kms_key_arn = _kms(store, "kms_key_arn", args, encrypted)
    fs_type = args.get("fs_type", "ext4")
    v.one_of(store, "fs_type", fs_type, FS_TYPES)
    reclaim = args.get("reclaim_policy", "Delete")
    v.one_of(store, "reclaim_policy", reclaim, RECLAIM_POLICIES)
    rate = args.get("volume_initialization_rate_mibps")
    if rate is not None:
        _whole_in_range(
            store,
            "volume_initialization_rate_mibps",
            rate,
            *VOLUME_INITIALIZATION_RATE_MIBPS,
            " MiB/s",
        )
    return Gp3Class(
        iops=iops,
        throughput_mibps=throughput,
        encrypted=encrypted,
        kms_key_arn=kms_key_arn,
        fs_type=fs_type,
        reclaim_policy=reclaim,
        volume_initialization_rate_mibps=rate,
        tags=v.string_map(store, "volume_tags", args.get("volume_tags")),
    )


def check_gp3_size(store: str, gp3: Gp3Class, field_name: str, size: Any) -> None:
    """A gp3 volume of ``size``: 1-65,536 GiB, and provisioned IOPS above the 3,000 baseline at
    most 500 per GiB. (The driver would silently cap IOPS to 500 per GiB instead.)"""
    gib = size_gib(store, field_name, size)
    if gib is None:
        return
    low, high = GP3_SIZE_GIB
    if not low <= gib <= high:
        raise ModelStoreInputError(store, field_name, size, f"{low}Gi to {high}Gi for gp3")
    if gp3.iops > GP3_IOPS[0] and gp3.iops > gib * GP3_MAX_IOPS_PER_GIB:
        raise ModelStoreInputError(
            store,
            field_name,
            size,
            f"at least {math.ceil(gp3.iops / GP3_MAX_IOPS_PER_GIB)}Gi for {gp3.iops} gp3 IOPS "
            f"(at most {GP3_MAX_IOPS_PER_GIB} IOPS per GiB)",
        )


def parse_io2_multi_attach_class(store: str, args: Mapping[str, Any]) -> Io2MultiAttachClass:
    """Validate io2 Multi-Attach class fields: ``multi_attach_iops`` (required),
    ``encrypted``, ``kms_key_arn``, ``reclaim_policy``, ``volume_tags``."""
    iops: Any = args.get("multi_attach_iops")
    _whole_in_range(store, "multi_attach_iops", iops, *IO2_IOPS, " IOPS for io2")
    encrypted = v.flag(store, "encrypted", args.get("encrypted", True))
    reclaim = args.get("reclaim_policy", "Delete")
    v.one_of(store, "reclaim_policy", reclaim, RECLAIM_POLICIES)
    return Io2MultiAttachClass(
        iops=iops,
        encrypted=encrypted,
        kms_key_arn=_kms(store, "kms_key_arn", args, encrypted),
        reclaim_policy=reclaim,
        tags=v.string_map(store, "volume_tags", args.get("volume_tags")),
    )


def check_io2_size(store: str, iops: int | None, field_name: str, size: Any) -> None:
    """An io2 volume of ``size``: 4-65,536 GiB, and with ``iops`` at most 1,000 IOPS per GiB
    (the driver would silently cap IOPS to 1,000 per GiB instead). Not checked while ``size`` is
    an Output."""
    gib = size_gib(store, field_name, size)
    if gib is None:
        return
    low, high = IO2_SIZE_GIB
    if not low <= gib <= high:
        raise ModelStoreInputError(store, field_name, size, f"{low}Gi to {high}Gi for io2")
    if iops is not None and iops > gib * IO2_MAX_IOPS_PER_GIB:
        raise ModelStoreInputError(
            store,
            field_name,
            size,
            f"at least {math.ceil(iops / IO2_MAX_IOPS_PER_GIB)}Gi for {iops} io2 IOPS (at most "
            f"{IO2_MAX_IOPS_PER_GIB} IOPS per GiB; the EBS CSI driver would silently cap the "
            f"volume at {gib * IO2_MAX_IOPS_PER_GIB} IOPS)",
        )


def gp3_storage_class(
    resource_name: str,
    *,
    name: str,
    spec: Gp3Class,
    is_default: bool = False,
    labels: Mapping[str, str] | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.storage.v1.StorageClass:
    """A gp3 StorageClass: ``volumeBindingMode: WaitForFirstConsumer`` (each volume is created in
    the AZ of the first pod that uses it) and ``allowVolumeExpansion: true`` (claims grow in
    place). Changing ``parameters`` later replaces the class; existing volumes keep theirs."""
    v.dns_subdomain(resource_name, "name", name)
    default = v.flag(resource_name, "is_default", is_default)
    metadata: Any = {
        "name": name,
        "labels": v.string_map(resource_name, "labels", labels),
        "annotations": {DEFAULT_CLASS_ANNOTATION: "true" if default else "false"},
    }
    return k8s.storage.v1.StorageClass(
        resource_name,
        metadata=metadata,
        provisioner=EBS_CSI.driver,
        parameters=spec.parameters(),
        volume_binding_mode="WaitForFirstConsumer",
        allow_volume_expansion=True,
        reclaim_policy=spec.reclaim_policy,
        opts=opts,
    )


def io2_multi_attach_storage_class(
    resource_name: str,
    *,
    name: str,
    spec: Io2MultiAttachClass,
    labels: Mapping[str, str] | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.storage.v1.StorageClass:
    """An io2 StorageClass for EBS Multi-Attach.

    The driver enables Multi-Attach only for a claim with access mode ReadWriteMany AND
    ``volumeMode: Block`` (use :func:`multi_attach_claim`); the volume is then attached to up to
    16 Nitro instances in one Availability Zone, each with full read-write access to the raw
    device. Nothing in EBS or Kubernetes serializes those writers: THE APPLICATION MUST FENCE ITS
    WRITES (a cluster-aware file system, NVMe reservations, or a single writer by design), or
    concurrent writes silently corrupt data. Expansion is off: size Multi-Attach volumes up
    front.

    The class's IOPS are not checked against a size here (a class has none): each volume gets at
    most 1,000 IOPS per GiB, the driver silently capping the rest, so a claim on it needs at
    least ``ceil(iops / 1000)`` GiB. :meth:`EbsCsiDriver.multi_attach_claim` (or
    :func:`multi_attach_claim` given ``iops``) refuses a smaller claim.
    """
    v.dns_subdomain(resource_name, "name", name)
    metadata: Any = {"name": name, "labels": v.string_map(resource_name, "labels", labels)}
    return k8s.storage.v1.StorageClass(
        resource_name,
        metadata=metadata,
        provisioner=EBS_CSI.driver,
        parameters=spec.parameters(),
        volume_binding_mode="WaitForFirstConsumer",
        allow_volume_expansion=False,
        reclaim_policy=spec.reclaim_policy,
        opts=opts,
    )


def multi_attach_claim(
    resource_name: str,
    *,
    name: str,
    namespace: str,
    size: pulumi.Input[str],
    storage_class_name: pulumi.Input[str],
    volume_mode: str = "Block",
    iops: int | None = None,
    labels: Mapping[str, str] | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.core.v1.PersistentVolumeClaim:
    """A ReadWriteMany claim on an io2 Multi-Attach class, as a raw block device (pods use
    ``volumeDevices``, not ``volumeMounts``). The application must fence writes: see
    :func:`io2_multi_attach_storage_class`.

    ``iops``: the class's IOPS (``multi_attach_iops`` of the :class:`EbsCsiDriver` that made it;
    its :meth:`~EbsCsiDriver.multi_attach_claim` passes them). With them, a ``size`` below
    1 GiB per 1,000 IOPS is refused: the driver would silently cap the volume's IOPS. Without
    them (or while ``size`` is an Output) only io2's 4-65,536 GiB range is checked."""
    if volume_mode != "Block":
        raise ModelStoreInputError(
            resource_name,
            "volume_mode",
            volume_mode,
            "Block for io2 Multi-Attach (the EBS CSI driver attaches a volume to several nodes "
            "only as a raw block device with ReadWriteMany)",
        )
    if iops is not None:
        _whole_in_range(resource_name, "iops", iops, *IO2_IOPS, " IOPS for io2")
    check_io2_size(resource_name, iops, "size", size)
    return volume_claim(
        resource_name,
        name=name,
        namespace=namespace,
        size=size,
        storage_class_name=storage_class_name,
        access_modes=("ReadWriteMany",),
        volume_mode="Block",
        labels=labels,
        opts=opts,
    )


# -- one install per cluster ------------------------------------------------------------------

# Per program run (keyed by its root stack resource): (what, cluster key) -> the component that
# installs it. Two Helm releases or add-ons of one driver on one cluster collide at deploy time.
_INSTALLS: weakref.WeakKeyDictionary[Any, dict[tuple[str, Any], str]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _ClusterIdentity:
    """What says which cluster a driver installs on: every key it is known by, and how an error
    names it."""

    keys: tuple[Any, ...]
    where: str


def _cluster_identity(
    cluster: EksClusterFacts, opts: pulumi.ResourceOptions | None
) -> _ClusterIdentity:
    """The cluster's name when given, and its OIDC issuer when known (given, or looked up from
    the name): each names one cluster, and a driver is registered under both, so one named by
    ``cluster_name`` and one by ``oidc_issuer`` still match. With neither (no name, the issuer
    absent or still an Output), the Kubernetes provider the Helm releases go through (None: the
    program's default one): two drivers on different providers install on different clusters,
    two on the same one on the same cluster."""
    keys: list[Any] = []
    where = "the cluster"
    issuer = cluster.oidc_issuer if isinstance(cluster.oidc_issuer, str) else None
    if cluster.name:
        keys.append(("cluster name", cluster.name))
        where = f"cluster {cluster.name!r}"
    if issuer:
        keys.append(("OIDC issuer", issuer.rstrip("/")))
        if not cluster.name:
            where = f"the cluster with OIDC issuer {issuer!r}"
    if not keys:
        keys.append(("kubernetes provider", _kubernetes_provider(opts)))
    return _ClusterIdentity(keys=tuple(keys), where=where)


def _kubernetes_provider(opts: pulumi.ResourceOptions | None) -> Any:
    """The Kubernetes provider a component's children use, from its options or its parent's;
    None for the default provider."""
    if opts is None:
        return None
    candidates: list[Any] = [opts.provider]
    if isinstance(opts.providers, Mapping):
        candidates.append(opts.providers.get("kubernetes"))
    elif isinstance(opts.providers, Sequence):
        candidates.extend(opts.providers)
    for provider in candidates:
        if provider is not None and getattr(provider, "package", None) == "kubernetes":
            return provider
    inherited = getattr(opts.parent, "_providers", None)
    if isinstance(inherited, Mapping):
        return inherited.get("kubernetes")
    return None


def _claim_install(
    store: str, field_name: str, choice: str, what: str, cluster: _ClusterIdentity
) -> None:
    root = get_root_resource()
    if root is None or choice == "none":
        return
    installs = _INSTALLS.setdefault(root, {})
    for key in cluster.keys:
        owner = installs.get((what, key))
        if owner is not None and owner != store:
            raise ModelStoreInputError(
                store,
                field_name,
                choice,
                f"none (EbsCsiDriver {owner!r} already installs the {what} on {cluster.where})",
            )
    for key in cluster.keys:
        installs[(what, key)] = store


# -- the driver -------------------------------------------------------------------------------


class EbsCsiDriverArgs(DriverInstallArgs, total=False):
    """Arguments of :class:`EbsCsiDriver`. Every field is optional but ``cluster_name`` where
    noted.

    The driver install (:class:`DriverInstallArgs`): ``driver_namespace`` is also the
    controller's service account's, and not for ``driver: eks-addon`` (the add-on always runs
    in kube-system). The add-on's node pods tolerate all taints too: ``eks_addon_configuration``
    is merged over this component's own (``node.tolerateAllTaints: true``)."""

    cluster_name: str
    """The EKS cluster. Required for ``driver: eks-addon``, ``snapshot_controller: eks-addon``
    and ``identity: pod-identity``; for IRSA its OIDC issuer is looked up from it. Default: none
    (then give ``oidc_issuer`` for IRSA)."""
    oidc_issuer: str
    """The cluster's OIDC issuer URL, for IRSA. Default: looked up from the cluster. Either way
    the preview fails when IAM has no OIDC provider for it."""
    region: str
    """AWS region, passed to the controller for pods where IMDS is blocked. Default: the AWS
    provider's region."""
    identity: str
    """The controller's AWS identity: ``irsa`` (default; the role ARN goes on the controller's
    service account, and the preview fails without the cluster's IAM OIDC provider),
    ``pod-identity`` (an EKS Pod Identity association; the cluster needs the Pod Identity agent),
    or ``none`` (default when ``driver`` is none: the existing install's identity is left
    alone)."""
    controller_service_account: str
    """The controller's service account, which the role's trust policy names exactly. Default:
    ``ebs-csi-controller-sa`` (the chart's and the add-on's). Not for ``eks-addon``."""
    kms_key_arns: Sequence[str]
    """Customer managed KMS keys the driver may use for volumes, besides ``kms_key_arn``.
    Default: none (volumes encrypted with the AWS managed ``aws/ebs`` key need no grant)."""
    snapshot_controller: str
    """How the VolumeSnapshot CRDs and the ONE snapshot controller per cluster get there:
    ``helm`` (chart ``snapshot-controller`` pinned in ``aws/drivers.py``; it installs the CRDs),
    ``eks-addon`` (the ``snapshot-controller`` add-on) or ``none`` (the cluster has them).
    Default: ``helm`` with a Helm driver, ``eks-addon`` with the add-on, ``none`` with
    ``driver: none``."""
    snapshot_controller_namespace: str
    """Namespace of the snapshot controller's Helm release. Default: kube-system."""
    create_snapshot_class: bool
    """Create the VolumeSnapshotClass. Default: True."""
    snapshot_class_name: str
    """Name of the VolumeSnapshotClass for ``ebs.csi.aws.com``. Default: ``ebs-snapshots``."""
    snapshot_deletion_policy: str
    """``Retain`` (default: deleting a VolumeSnapshot keeps the EBS snapshot and its
    VolumeSnapshotContent) or ``Delete`` (deleting the VolumeSnapshot deletes the data)."""
    default_snapshot_class: bool
    """Mark the snapshot class as the cluster's default. Default: False."""
    snapshot_class_parameters: Mapping[str, str]
    """Driver parameters for snapshots (e.g. ``tagSpecification_1``). Default: none."""
    create_storage_class: bool
    """Create the gp3 StorageClass. Default: True."""
    storage_class_name: str
    """Name of the gp3 StorageClass. Default: ``ebs-gp3``."""
    default_storage_class: bool
    """Mark the gp3 class as the cluster's default. Default: False."""
    iops: int
    """gp3 IOPS, 3000 to 80000, at most 500 per GiB of each volume. Default: 3000 (the
    baseline every gp3 volume gets free)."""
    throughput_mibps: int
    """gp3 throughput in MiB/s, 125 to 2000, at most 0.25 per provisioned IOPS. Default: 125
    (the free baseline)."""
    encrypted: bool
    """Encrypt volumes. Default: True (with the AWS managed ``aws/ebs`` key unless
    ``kms_key_arn``)."""
    kms_key_arn: str
    """A customer managed KMS key ARN for volumes of both classes; the driver's policy gets
    grants on it. Default: the AWS managed ``aws/ebs`` key."""
    fs_type: str
    """File system for gp3 volumes: ``ext4`` (default) or ``xfs``."""
    reclaim_policy: str
    """``Delete`` (default: a deleted claim deletes its volume; caches restore from snapshots)
    or ``Retain`` (volumes outlive their claims and must be deleted by hand)."""
    volume_tags: Mapping[str, str]
    """Tags on every volume the classes provision (``tagSpecification_<n>`` parameters).
    Default: none beyond the driver's own."""
    multi_attach_iops: int
    """Create an io2 Multi-Attach class with this many IOPS (100 to 256000). Each volume gets at
    most 1000 IOPS per GiB (the driver silently caps the rest), so claims on the class need at
    least ``ceil(multi_attach_iops / 1000)`` GiB: :meth:`EbsCsiDriver.multi_attach_claim`
    refuses a smaller one; the class itself has no size to check. Default: no such class."""
    multi_attach_storage_class_name: str
    """Name of the io2 Multi-Attach class. Default: ``ebs-io2-multi-attach``."""
    labels: Mapping[str, str]
    """Labels merged onto every Kubernetes object. Default: the library's own only."""
    tags: Mapping[str, str]
    """Tags on every AWS resource (role, add-ons, pod identity association) and, with Helm,
    on every volume and snapshot the driver creates (``controller.extraVolumeTags``).
    Default: the library's own only."""


DRIVER_FIELDS = frozenset(EbsCsiDriverArgs.__annotations__) | {"driver"}


@dataclass(frozen=True)
class _DriverSpec:
    install: DriverInstall
    identity: str
    controller_service_account: str
    kms_key_arns: tuple[Any, ...]
    snapshot_controller: str
    snapshot_controller_namespace: str
    create_snapshot_class: bool
    snapshot_class_name: str
    snapshot_deletion_policy: str
    default_snapshot_class: bool
    snapshot_class_parameters: dict[str, str]
    create_storage_class: bool
    storage_class_name: str
    default_storage_class: bool
    gp3: Gp3Class
    io2: Io2MultiAttachClass | None
    multi_attach_storage_class_name: str
    labels: dict[str, str]
    tags: dict[str, str]
    user_tags: dict[str, str]


def parse_driver_args(name: str, args: Mapping[str, Any]) -> _DriverSpec:
    """Validate every field of :class:`EbsCsiDriverArgs`."""
    check_known_fields(name, args, DRIVER_FIELDS)
    service_account = args.get("controller_service_account", CONTROLLER_SERVICE_ACCOUNT)

    def check_service_account(driver: str, _namespace: str) -> None:
        if driver == "eks-addon" and "controller_service_account" in args:
            raise ModelStoreInputError(
                name, "controller_service_account", service_account, ADDON_FIXED
            )
        v.dns_subdomain(name, "controller_service_account", service_account)

    install = parse_driver_install(
        name,
        args,
        namespace_unset_for={"eks-addon": ADDON_FIXED},
        check=check_service_account,
        # Checked below with every other choice that needs the cluster.
        check_cluster_name=False,
    )
    driver = install.driver
    cluster_name = args.get("cluster_name")
    identity = args.get("identity", "none" if driver == "none" else "irsa")
    v.one_of(name, "identity", identity, IDENTITY_CHOICES)
    # By default the snapshot controller comes the same way as the driver.
    snapshot_controller = args.get("snapshot_controller", driver)
    v.one_of(name, "snapshot_controller", snapshot_controller, DRIVER_INSTALLS)
    needs_cluster = [
        (key, choice)
        for key, choice in (
            ("driver", driver),
            ("snapshot_controller", snapshot_controller),
            ("identity", identity),
        )
        if choice in ("eks-addon", "pod-identity")
    ]
    if needs_cluster and not cluster_name:
        key, choice = needs_cluster[0]
        raise ModelStoreInputError(
            name, "cluster_name", cluster_name, f"the EKS cluster's name when {key} is {choice}"
        )
    snapshot_ns = args.get("snapshot_controller_namespace", "kube-system")
    v.dns_label(name, "snapshot_controller_namespace", snapshot_ns)
    snapshot_class_name = args.get("snapshot_class_name", DEFAULT_SNAPSHOT_CLASS)
    v.dns_subdomain(name, "snapshot_class_name", snapshot_class_name)
    deletion_policy = args.get("snapshot_deletion_policy", "Retain")
    v.one_of(name, "snapshot_deletion_policy", deletion_policy, DELETION_POLICIES)
    snapshot_params = v.string_map(
        name, "snapshot_class_parameters", args.get("snapshot_class_parameters")
    )
    storage_class_name = args.get("storage_class_name", DEFAULT_GP3_CLASS)
    v.dns_subdomain(name, "storage_class_name", storage_class_name)
    gp3 = parse_gp3_class(name, args)
    io2 = None
    if args.get("multi_attach_iops") is not None:
        io2 = parse_io2_multi_attach_class(name, args)
    io2_name = args.get("multi_attach_storage_class_name", DEFAULT_IO2_CLASS)
    v.dns_subdomain(name, "multi_attach_storage_class_name", io2_name)
    kms_key_arns = args.get("kms_key_arns", ()) or ()
    v.string_list(name, "kms_key_arns", kms_key_arns)
    keys: list[Any] = []
    for key in kms_key_arns:
        v.kms_key_arn(name, "kms_key_arns", key, alias_note=KMS_ALIAS_NOTE)
        keys.append(key)
    if gp3.kms_key_arn is not None and gp3.kms_key_arn not in keys:
        keys.append(gp3.kms_key_arn)
    if keys and identity == "none":
        raise ModelStoreInputError(
            name,
            "identity",
            identity,
            "irsa or pod-identity when KMS keys are given (grants go on the controller's role)",
        )
    labels = {
        **v.string_map(name, "labels", args.get("labels")),
        "app.kubernetes.io/managed-by": MANAGED_BY,
        "modelstore.pulumi.com/component": name,
    }
    user_tags = v.string_map(name, "tags", args.get("tags"))
    flags = {
        key: v.flag(name, key, args.get(key, default))
        for key, default in (
            ("create_snapshot_class", True),
            ("default_snapshot_class", False),
            ("create_storage_class", True),
            ("default_storage_class", False),
        )
    }
    return _DriverSpec(
        install=install,
        identity=identity,
        controller_service_account=service_account,
        kms_key_arns=tuple(keys),
        snapshot_controller=snapshot_controller,
        snapshot_controller_namespace=snapshot_ns,
        create_snapshot_class=flags["create_snapshot_class"],
        snapshot_class_name=snapshot_class_name,
        snapshot_deletion_policy=deletion_policy,
        default_snapshot_class=flags["default_snapshot_class"],
        snapshot_class_parameters=snapshot_params,
        create_storage_class=flags["create_storage_class"],
        storage_class_name=storage_class_name,
        default_storage_class=flags["default_storage_class"],
        gp3=gp3,
        io2=io2,
        multi_attach_storage_class_name=io2_name,
        labels=labels,
        tags={**user_tags, "app.kubernetes.io/managed-by": MANAGED_BY},
        user_tags=user_tags,
    )


def _driver_cluster(
    name: str, args: Mapping[str, Any], opts: pulumi.ResourceOptions | None
) -> EksClusterFacts:
    """The facts the driver needs: the cluster's name, region and OIDC issuer."""
    if args.get("cluster_name"):
        return resolve_cluster(
            name,
            {k: args[k] for k in ("cluster_name", "region", "oidc_issuer") if k in args},
            opts,
        )
    region = args.get("region") or aws.get_region(opts=invoke_options(opts)).region
    return EksClusterFacts(
        name=None,
        vpc_id="",
        subnet_ids=(),
        node_security_group_ids=(),
        region=region,
        oidc_issuer=args.get("oidc_issuer"),
    )


class EbsCsiDriver(pulumi.ComponentResource):
    """The EBS CSI driver for one EKS cluster, with everything snapshots need. Make ONE per
    cluster: a second one planning a Helm release or add-on of the driver or the snapshot
    controller on the same cluster is refused before anything registers. The same cluster is
    the same ``cluster_name`` or the same OIDC issuer (given, or looked up from the name); with
    neither, the same Kubernetes provider.

    Creates, in dependency order: the controller's IAM role (trust limited to exactly the
    controller's service account) with :func:`ebs_csi_driver_policy` inline, and for Pod
    Identity its association; the snapshot CRDs and snapshot controller; the driver, after both
    (its snapshotter sidecar is only rendered when the CRDs exist, so it is also forced on); the
    VolumeSnapshotClass and the storage classes, after the driver.
    """

    storage_class_name: pulumi.Output[str | None]
    """The gp3 StorageClass (None when ``create_storage_class`` is False)."""
    multi_attach_storage_class_name: pulumi.Output[str | None]
    """The io2 Multi-Attach StorageClass (None without ``multi_attach_iops``)."""
    snapshot_class_name: pulumi.Output[str | None]
    """The VolumeSnapshotClass; depends on the snapshot controller, so a VolumeSnapshot that
    uses it is created after the CRDs (None when ``create_snapshot_class`` is False)."""
    controller_role_arn: pulumi.Output[str | None]
    """The controller's IAM role (None with ``identity: none``)."""
    controller_service_account: pulumi.Output[str]
    """``<namespace>/<name>`` of the controller's service account, the role's only trustee."""

    def __init__(
        self,
        resource_name: str,
        args: EbsCsiDriverArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        raw: Mapping[str, Any] = dict(args or {})
        spec = parse_driver_args(resource_name, raw)
        cluster = _driver_cluster(resource_name, raw, opts)
        facts: IdentityFacts | None = None
        if spec.identity != "none":
            facts = resolve_identity(resource_name, spec.identity, cluster, opts)
        partition = aws.get_partition(opts=invoke_options(opts)).partition
        identity = _cluster_identity(cluster, opts)
        _claim_install(resource_name, "driver", spec.install.driver, "EBS CSI driver", identity)
        _claim_install(
            resource_name,
            "snapshot_controller",
            spec.snapshot_controller,
            "snapshot controller",
            identity,
        )

        super().__init__(DRIVER_TYPE_TOKEN, resource_name, None, opts)
        self._resource_name = resource_name
        self._spec = spec
        self.cluster = cluster

        self.controller_role: ServiceAccountRole | None = None
        if facts is not None:
            self.controller_role = service_account_role(
                f"{resource_name}-controller",
                facts=facts,
                namespace=spec.install.namespace,
                service_account=spec.controller_service_account,
                policy=ebs_csi_driver_policy(partition, spec.kms_key_arns),
                description=f"EBS CSI controller {spec.install.namespace}/"
                f"{spec.controller_service_account} (pulumi-modelstore {resource_name})",
                tags=spec.tags,
                parent=self,
            )
        self.snapshot_controller = self._install_snapshot_controller(resource_name, spec, cluster)
        self.driver_install = self._install_driver(resource_name, spec, cluster)
        after_driver = [r for r in (self.driver_install, self.snapshot_controller) if r]

        self.snapshot_class = None
        if spec.create_snapshot_class:
            self.snapshot_class = volume_snapshot_class(
                f"{resource_name}-snapshot-class",
                name=spec.snapshot_class_name,
                driver=EBS_CSI.driver,
                deletion_policy=spec.snapshot_deletion_policy,
                parameters=spec.snapshot_class_parameters,
                is_default=spec.default_snapshot_class,
                labels=spec.labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )
        self.storage_class = None
        if spec.create_storage_class:
            self.storage_class = gp3_storage_class(
                f"{resource_name}-gp3",
                name=spec.storage_class_name,
                spec=spec.gp3,
                is_default=spec.default_storage_class,
                labels=spec.labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )
        self.multi_attach_storage_class = None
        if spec.io2 is not None:
            self.multi_attach_storage_class = io2_multi_attach_storage_class(
                f"{resource_name}-io2-multi-attach",
                name=spec.multi_attach_storage_class_name,
                spec=spec.io2,
                labels=spec.labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )

        none: pulumi.Output[Any] = pulumi.Output.from_input(None)
        self.storage_class_name = (
            name_after(self.storage_class, spec.storage_class_name) if self.storage_class else none
        )
        self.multi_attach_storage_class_name = (
            name_after(self.multi_attach_storage_class, spec.multi_attach_storage_class_name)
            if self.multi_attach_storage_class
            else none
        )
        self.snapshot_class_name = (
            name_after(self.snapshot_class, spec.snapshot_class_name)
            if self.snapshot_class
            else none
        )
        self.controller_role_arn = self.controller_role.arn if self.controller_role else none
        self.controller_service_account = pulumi.Output.from_input(
            f"{spec.install.namespace}/{spec.controller_service_account}"
        )
        self.register_outputs(
            {
                "storageClassName": self.storage_class_name,
                "multiAttachStorageClassName": self.multi_attach_storage_class_name,
                "snapshotClassName": self.snapshot_class_name,
                "controllerRoleArn": self.controller_role_arn,
                "controllerServiceAccount": self.controller_service_account,
            }
        )

    def multi_attach_claim(
        self,
        resource_name: str,
        *,
        name: str,
        namespace: str,
        size: pulumi.Input[str],
        labels: Mapping[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> k8s.core.v1.PersistentVolumeClaim:
        """A :func:`multi_attach_claim` on this driver's io2 Multi-Attach class, created after
        the class, its ``size`` checked against the class's IOPS (at most 1,000 per GiB: the
        driver would silently cap the rest). Needs ``multi_attach_iops``."""
        spec = self._spec
        io2_class = self.multi_attach_storage_class
        if spec.io2 is None or io2_class is None:
            raise ModelStoreInputError(
                self._resource_name,
                "multi_attach_iops",
                None,
                "set for a Multi-Attach claim on this driver's io2 class",
            )
        return multi_attach_claim(
            resource_name,
            name=name,
            namespace=namespace,
            size=size,
            storage_class_name=name_after(io2_class, spec.multi_attach_storage_class_name),
            iops=spec.io2.iops,
            labels=labels,
            opts=opts,
        )

    def _identity_resources(self) -> list[pulumi.Resource]:
        role = self.controller_role
        if role is None:
            return []
        return [r for r in (role.policy, role.association) if r is not None]

    def _install_snapshot_controller(
        self, name: str, spec: _DriverSpec, cluster: EksClusterFacts
    ) -> pulumi.Resource | None:
        if spec.snapshot_controller == "none":
            return None
        if spec.snapshot_controller == "eks-addon":
            return eks_addon(
                f"{name}-snapshot-controller",
                SNAPSHOT_CONTROLLER,
                cluster_name=cluster.name,
                tags=spec.tags,
                parent=self,
            )
        # The chart renders the VolumeSnapshot CRDs itself (templates/crds.yaml, on by default).
        return helm_release(
            f"{name}-snapshot-controller",
            SNAPSHOT_CONTROLLER,
            namespace=spec.snapshot_controller_namespace,
            values={"installCRDs": True},
            parent=self,
        )

    def _install_driver(
        self, name: str, spec: _DriverSpec, cluster: EksClusterFacts
    ) -> pulumi.Resource | None:
        if spec.install.driver == "none":
            return None
        # The controller must start with its permissions, and after the snapshot CRDs: the
        # driver's install guide wants the CRDs first.
        depends_on = self._identity_resources() + (
            [self.snapshot_controller] if self.snapshot_controller else []
        )
        role = self.controller_role
        if spec.install.driver == "eks-addon":
            return eks_addon(
                f"{name}-ebs-csi-driver",
                EBS_CSI,
                cluster_name=cluster.name,
                install=spec.install,
                # GPU nodes are tainted; a node plugin that does not run there cannot mount.
                defaults={"node": {"tolerateAllTaints": True}},
                role=role,
                tags=spec.tags,
                parent=self,
                depends_on=depends_on,
            )
        controller: dict[str, Any] = {
            "region": cluster.region,
            "serviceAccount": {
                "create": True,
                "name": spec.controller_service_account,
                "annotations": role.service_account_annotations() if role is not None else {},
            },
        }
        if cluster.name:
            # Adds ebs.csi.aws.com/cluster-name (and kubernetes.io/cluster/<name>) tags, the key
            # AWS's cluster-scoped policy uses.
            controller["k8sTagClusterId"] = cluster.name
        if spec.user_tags:
            controller["extraVolumeTags"] = spec.user_tags
        values: dict[str, Any] = {
            "controller": controller,
            # GPU nodes are tainted; a node plugin that does not run there cannot mount.
            "node": {"tolerateAllTaints": True},
        }
        if spec.snapshot_controller != "none" or spec.create_snapshot_class:
            # The chart adds the csi-snapshotter sidecar only if the CRDs already exist when it
            # renders; force it so one `pulumi up` that installs both still gets snapshots.
            values["sidecars"] = {"snapshotter": {"forceEnable": True}}
        return helm_release(
            f"{name}-ebs-csi-driver",
            EBS_CSI,
            namespace=spec.install.namespace,
            values=values,
            parent=self,
            depends_on=depends_on,
        )


# -- the model cache --------------------------------------------------------------------------


class EbsModelCacheArgs(TypedDict, total=False):
    """Arguments of :class:`EbsModelCache`. Required: ``namespace``, ``volume_size`` and exactly
    one of ``loader``, ``source_claim_name`` and ``source_snapshot_name``."""

    namespace: str
    """The namespace of the seed claim, the VolumeSnapshot and the serving StatefulSet. No
    default: a claim can only be restored from a VolumeSnapshot in its own namespace."""
    volume_size: str
    """Size of the seed volume and of every replica's volume, a Kubernetes quantity with a
    unit (``200Gi``); at least the model's size. No default. gp3 takes 1Gi to 65536Gi. Raising
    it grows the seed claim in place; a StatefulSet's claim template cannot change in place, so
    Pulumi replaces the StatefulSet that uses it."""
    loader: Mapping[str, Any]
    """A container (``image``, ``command``/``args``, ``env``, ...) that writes the model into
    ``mount_path``. It runs once as a Job on a fresh seed volume; Pulumi waits for it to
    complete, then snapshots the volume. Default: none (give a source instead)."""
    loader_service_account_name: str
    """Service account of the loader Job (e.g. one with S3 read access). Default: the
    namespace's default."""
    loader_timeout_minutes: int
    """How long ``pulumi up`` waits for the loader Job to complete. Default: 60."""
    source_claim_name: str
    """Snapshot this existing, already-written claim in ``namespace`` instead of running a
    loader (stop its writers first). Default: none."""
    source_snapshot_name: str
    """Restore from this existing VolumeSnapshot in ``namespace``; nothing is seeded or
    snapshotted. Default: none."""
    model_revision: str
    """A DNS-label suffix for the seed claim, loader Job, snapshot and claim template of one
    revision (``r2``). Changing it writes and snapshots the model anew and gives replicas new
    claims; the previous revision's objects are replaced. What happens to the previous
    VolumeSnapshot is ``protect``'s to say. Default: none."""
    protect: bool
    """Keep the model's data, the VolumeSnapshot, when Pulumi deletes it. Default: True: the
    VolumeSnapshot is registered with ``retain_on_delete`` (not ``protect``, which would block
    the replacement a ``model_revision`` change needs). Then ``pulumi destroy`` and a
    ``model_revision`` change only drop the VolumeSnapshot from the stack: the object, its
    VolumeSnapshotContent and the EBS snapshot stay (whatever the snapshot class's deletion
    policy), a claim naming it in its ``dataSource`` can still be restored, and after a revision
    change the old revision's snapshot keeps costing EBS snapshot storage until you delete it
    (``kubectl delete volumesnapshot <name> -n <namespace>``, and with a Retain class its
    VolumeSnapshotContent and EBS snapshot too). Set False to opt out: Pulumi then deletes the
    old VolumeSnapshot on destroy and on a revision change, and with a Delete snapshot class
    that deletes the EBS snapshot. The seed claim is never retained: until the snapshot is ready
    the snapshot controller's ``pvc-as-source-protection`` finalizer keeps it from deletion,
    after that the snapshot holds the same data, and keeping each revision's seed volume would
    only pay for a second copy."""
    mount_path: str
    """Where the loader and the serving containers see the model. Default: ``/mnt/models``."""
    claim_template_name: str
    """Name of the StatefulSet volumeClaimTemplate (and of the pod volume). Replica claims are
    ``<claim_template_name>-<statefulset>-<ordinal>``. Default: the cache's name (with the
    revision, if any)."""
    storage_class_name: str
    """An existing StorageClass for the seed and replica volumes. Default: a gp3 class made for
    this cache, ``<name>-gp3``, from the fields below."""
    snapshot_class_name: str
    """The VolumeSnapshotClass for the snapshot (pass ``EbsCsiDriver.snapshot_class_name`` so
    the snapshot waits for it). Default: ``ebs-snapshots``, the driver component's default."""
    iops: int
    """gp3 IOPS of the cache's class, 3000 to 80000 and at most 500 per GiB of
    ``volume_size``. Default: 3000."""
    throughput_mibps: int
    """gp3 throughput of the cache's class in MiB/s, 125 to 2000 and at most 0.25 per IOPS.
    Default: 125. Loading weights is sequential: more throughput is what shortens it."""
    volume_initialization_rate_mibps: int
    """Rate, 100 to 300 MiB/s, at which EBS pulls each restored replica volume's blocks from
    the snapshot. Default: the EBS default (blocks load lazily on first read, so the first model
    load from a fresh replica is slow)."""
    encrypted: bool
    """Encrypt the cache's volumes. Default: True."""
    kms_key_arn: str
    """Customer managed KMS key ARN for the cache's volumes; list it in the driver's
    ``kms_key_arns`` so the controller may use it. Default: the AWS managed ``aws/ebs`` key."""
    fs_type: str
    """``ext4`` (default) or ``xfs``."""
    volume_tags: Mapping[str, str]
    """Tags on the cache's volumes. Default: none beyond the driver's own."""
    labels: Mapping[str, str]
    """Labels merged onto every Kubernetes object. Default: the library's own only."""


CACHE_FIELDS = frozenset(EbsModelCacheArgs.__annotations__)
_GP3_FIELDS = (
    "iops",
    "throughput_mibps",
    "volume_initialization_rate_mibps",
    "encrypted",
    "kms_key_arn",
    "fs_type",
    "volume_tags",
)
MODEL_VOLUME = "model"


@dataclass(frozen=True)
class _CacheSpec:
    name: str
    namespace: str
    volume_size: str
    loader: dict[str, Any] | None
    loader_service_account_name: str | None
    loader_timeout_minutes: int
    source_claim_name: str | None
    source_snapshot_name: str | None
    base: str
    mount_path: str
    claim_template_name: str
    storage_class_name: Any
    snapshot_class_name: Any
    gp3: Gp3Class | None
    labels: dict[str, str]
    protect: bool


# A loader container's list fields: those this library merges into (volumeMounts) and those it
# passes on, each a list of Kubernetes objects of the kind named, or of strings.
_CONTAINER_OBJECT_LISTS = {
    "env": "EnvVar",
    "envFrom": "EnvFromSource",
    "ports": "ContainerPort",
    "volumeMounts": "VolumeMount",
    "volumeDevices": "VolumeDevice",
}
_CONTAINER_STRING_LISTS = ("command", "args")


def _object_list(store: str, field_name: str, value: Any, kind: str) -> list[Any]:
    """A list of mappings (Kubernetes ``kind`` objects; an item may be an Output); None is
    empty. A string or a mapping is refused, not spread into characters or keys."""
    if value is None:
        return []
    if (
        isinstance(value, str | bytes | Mapping)
        or not isinstance(value, Sequence)
        or not all(isinstance(item, Mapping) or v.is_output(item) for item in value)
    ):
        raise ModelStoreInputError(
            store, field_name, value, f"a list of mappings (Kubernetes {kind} objects)"
        )
    return list(value)


def _check_container(
    store: str, prefix: str, container: Mapping[str, Any], merged: Sequence[str]
) -> None:
    """The list fields of a container are lists. Those in ``merged`` are extended here, so they
    must be lists now; any other one may still be an Output (left to the API server)."""
    for key, kind in _CONTAINER_OBJECT_LISTS.items():
        if key in container and (key in merged or not v.is_output(container[key])):
            _object_list(store, f"{prefix}.{key}", container[key], kind)
    for key in _CONTAINER_STRING_LISTS:
        if key in container and container[key] is not None:
            v.string_list(store, f"{prefix}.{key}", container[key])


def parse_cache_args(name: str, args: Mapping[str, Any]) -> _CacheSpec:
    """Validate every field of :class:`EbsModelCacheArgs`."""
    check_known_fields(name, args, CACHE_FIELDS)
    namespace = args.get("namespace")
    if namespace is None:
        raise ModelStoreInputError(
            name,
            "namespace",
            None,
            "set (no default: a claim restores only from a VolumeSnapshot in its own namespace)",
        )
    v.dns_label(name, "namespace", namespace)
    size: Any = args.get("volume_size")
    size_gib(name, "volume_size", size)
    sources = [k for k in ("loader", "source_claim_name", "source_snapshot_name") if args.get(k)]
    if len(sources) != 1:
        raise ModelStoreInputError(
            name,
            "loader, source_claim_name or source_snapshot_name",
            sources,
            "exactly one of them",
        )
    loader = args.get("loader")
    if loader is not None:
        if not isinstance(loader, Mapping) or not isinstance(loader.get("image"), str):
            raise ModelStoreInputError(
                name, "loader", loader, "a container mapping with at least an 'image'"
            )
        # The model volume's mount is added to the loader's own.
        _check_container(name, "loader", loader, merged=("volumeMounts",))
        loader = dict(loader)
    loader_sa = args.get("loader_service_account_name")
    if loader_sa is not None:
        v.dns_subdomain(name, "loader_service_account_name", loader_sa)
    timeout = args.get("loader_timeout_minutes", 60)
    v.positive_int(name, "loader_timeout_minutes", timeout)
    for key in ("source_claim_name", "source_snapshot_name"):
        if args.get(key) is not None:
            v.dns_subdomain(name, key, args[key])
    revision = args.get("model_revision")
    if revision is not None:
        v.dns_label(name, "model_revision", revision)
    base = f"{name}-{revision}" if revision else name
    # The loader Job's name becomes a pod label value: a DNS label of at most 63 characters.
    v.dns_label(name, "loader Job name (<name>[-<model_revision>]-loader)", f"{base}-loader")
    mount_path = args.get("mount_path", DEFAULT_MOUNT_PATH)
    v.absolute_path(name, "mount_path", mount_path)
    template = args.get("claim_template_name", base)
    v.dns_label(name, "claim_template_name", template)

    storage_class_name = args.get("storage_class_name")
    gp3: Gp3Class | None = None
    if storage_class_name is not None:
        v.dns_subdomain(name, "storage_class_name", storage_class_name)
        given = [k for k in _GP3_FIELDS if k in args]
        if given:
            raise ModelStoreInputError(
                name,
                given[0],
                args[given[0]],
                "unset when storage_class_name is given (the class is the existing one's)",
            )
    else:
        gp3 = parse_gp3_class(name, args)
        storage_class_name = f"{name}-gp3"
        check_gp3_size(name, gp3, "volume_size", size)
    snapshot_class_name = args.get("snapshot_class_name", DEFAULT_SNAPSHOT_CLASS)
    v.dns_subdomain(name, "snapshot_class_name", snapshot_class_name)
    labels = {
        **v.string_map(name, "labels", args.get("labels")),
        "app.kubernetes.io/managed-by": MANAGED_BY,
        "modelstore.pulumi.com/store": name,
    }
    protect = v.flag(name, "protect", args.get("protect", True))
    return _CacheSpec(
        name=name,
        namespace=namespace,
        volume_size=size,
        loader=loader,
        loader_service_account_name=loader_sa,
        loader_timeout_minutes=timeout,
        source_claim_name=args.get("source_claim_name"),
        source_snapshot_name=args.get("source_snapshot_name"),
        base=base,
        mount_path=mount_path,
        claim_template_name=template,
        storage_class_name=storage_class_name,
        snapshot_class_name=snapshot_class_name,
        gp3=gp3,
        labels=labels,
        protect=protect,
    )


def _depends_on(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """The resources in ``opts.depends_on``: a component's children do not inherit them."""
    deps = opts.depends_on if opts is not None else None
    if isinstance(deps, pulumi.Resource):
        return [deps]
    if isinstance(deps, Sequence):
        return [d for d in deps if isinstance(d, pulumi.Resource)]
    return []


class EbsModelCache(pulumi.ComponentResource):
    """A model cache on EBS: written once, snapshotted, restored per replica.

    1. A gp3 StorageClass for the cache (``WaitForFirstConsumer``, expansion allowed), unless
       ``storage_class_name`` names one.
    2. With ``loader``: a seed claim (ReadWriteOnce, ``pulumi.com/skipAwait`` because it binds
       only when the loader pod starts) and a Job that mounts it read-write at ``mount_path``
       and writes the model. Pulumi waits for the Job to complete.
    3. A VolumeSnapshot of the seed (or of ``source_claim_name``), created only after the Job:
       a snapshot taken while the loader writes would capture half a model.
    4. For the replicas, a StatefulSet ``volumeClaimTemplate`` restoring that snapshot
       (:meth:`claim_template`, :meth:`patch_stateful_set_spec`). Each replica pod gets its own
       ReadWriteOnce volume in its own Availability Zone (an EBS volume lives in one AZ; a
       snapshot is regional), scale-up restores new volumes with no Pulumi change, and the
       StatefulSet controller creates the claims when it schedules the pods, so nothing waits
       on them. Why not N claims made here: a Deployment's replicas share one claim, which an
       RWO EBS volume cannot serve across nodes, and a fixed set of claims stops matching the
       replica count at the first scale. For such fixed claims,
       :func:`~pulumi_modelstore.kube.snapshots.restored_claim` makes one.

    Pass the driver in ``opts.depends_on`` (``depends_on=[driver]``): the cache's children then
    depend on it, so a destroy deletes claims before the driver that deletes their volumes.
    """

    namespace: pulumi.Output[str]
    """The cache's namespace."""
    seed_claim_name: pulumi.Output[str | None]
    """The seed claim the loader writes (None without ``loader``)."""
    loader_job_name: pulumi.Output[str | None]
    """The loader Job (None without ``loader``)."""
    snapshot_name: pulumi.Output[str]
    """The VolumeSnapshot replicas restore from."""
    storage_class_name: pulumi.Output[str]
    """The StorageClass of the seed and replica volumes."""
    snapshot_class_name: pulumi.Output[str | None]
    """The VolumeSnapshotClass of the snapshot (None with ``source_snapshot_name``)."""
    claim_template_name: pulumi.Output[str]
    """The volumeClaimTemplate name; replica claims are ``<it>-<statefulset>-<ordinal>``."""
    volume_size: pulumi.Output[str]
    """Size of every replica volume."""

    def __init__(
        self,
        resource_name: str,
        args: EbsModelCacheArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        raw: Mapping[str, Any] = dict(args or {})
        spec = parse_cache_args(resource_name, raw)
        super().__init__(CACHE_TYPE_TOKEN, resource_name, None, opts)
        self._spec = spec
        after = _depends_on(opts)

        def child(*depends_on: pulumi.Resource | None) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(
                parent=self, depends_on=after + [d for d in depends_on if d is not None]
            )

        storage_class_name: pulumi.Input[str] = spec.storage_class_name
        self.storage_class = None
        if spec.gp3 is not None:
            self.storage_class = gp3_storage_class(
                f"{resource_name}-gp3",
                name=spec.storage_class_name,
                spec=spec.gp3,
                labels=spec.labels,
                opts=child(),
            )
            storage_class_name = name_after(self.storage_class, spec.storage_class_name)

        self.seed_claim = None
        self.loader_job = None
        if spec.loader is not None:
            self.seed_claim = volume_claim(
                f"{resource_name}-seed",
                name=f"{spec.base}-seed",
                namespace=spec.namespace,
                size=spec.volume_size,
                storage_class_name=storage_class_name,
                labels={**spec.labels, "modelstore.pulumi.com/role": "seed"},
                opts=child(),
            )
            self.loader_job = self._loader_job(resource_name, spec, child(self.seed_claim))

        self.snapshot = None
        snapshot_name: pulumi.Input[str]
        if spec.source_snapshot_name is not None:
            snapshot_name = spec.source_snapshot_name
        else:
            source = spec.source_claim_name or f"{spec.base}-seed"
            # The model's data: retained (see ``protect``), not protected, so a new
            # model_revision can still replace it.
            self.snapshot = volume_snapshot(
                f"{resource_name}-snapshot",
                name=spec.base,
                namespace=spec.namespace,
                claim_name=source,
                snapshot_class_name=spec.snapshot_class_name,
                labels=spec.labels,
                opts=pulumi.ResourceOptions.merge(
                    child(self.loader_job),
                    pulumi.ResourceOptions(retain_on_delete=spec.protect),
                ),
            )
            snapshot_name = name_after(self.snapshot, spec.base)
        self._snapshot_name = snapshot_name
        self._storage_class_name = storage_class_name

        none: pulumi.Output[Any] = pulumi.Output.from_input(None)
        self.namespace = pulumi.Output.from_input(spec.namespace)
        self.seed_claim_name = (
            name_after(self.seed_claim, f"{spec.base}-seed") if self.seed_claim else none
        )
        self.loader_job_name = (
            name_after(self.loader_job, f"{spec.base}-loader") if self.loader_job else none
        )
        self.snapshot_name = pulumi.Output.from_input(snapshot_name)
        self.storage_class_name = pulumi.Output.from_input(storage_class_name)
        self.snapshot_class_name = (
            pulumi.Output.from_input(spec.snapshot_class_name) if self.snapshot else none
        )
        self.claim_template_name = pulumi.Output.from_input(spec.claim_template_name)
        self.volume_size = pulumi.Output.from_input(spec.volume_size)
        self.summary: dict[str, Any] = {
            "namespace": self.namespace,
            "seedClaimName": self.seed_claim_name,
            "loaderJobName": self.loader_job_name,
            "snapshotName": self.snapshot_name,
            "storageClassName": self.storage_class_name,
            "snapshotClassName": self.snapshot_class_name,
            "claimTemplateName": self.claim_template_name,
            "volumeSize": self.volume_size,
        }
        self.register_outputs(self.summary)

    def _loader_job(
        self, name: str, spec: _CacheSpec, opts: pulumi.ResourceOptions
    ) -> k8s.batch.v1.Job:
        loader = dict(spec.loader or {})
        container = {
            **loader,
            "name": loader.get("name", "loader"),
            "volumeMounts": [
                # A list of mappings: parse_cache_args checked it.
                *(loader.get("volumeMounts") or []),
                {"name": MODEL_VOLUME, "mountPath": spec.mount_path},
            ],
        }
        pod_spec: dict[str, Any] = {
            "restartPolicy": "Never",
            "containers": [container],
            "volumes": [
                {"name": MODEL_VOLUME, "persistentVolumeClaim": {"claimName": f"{spec.base}-seed"}}
            ],
        }
        if spec.loader_service_account_name:
            pod_spec["serviceAccountName"] = spec.loader_service_account_name
        labels = {**spec.labels, "modelstore.pulumi.com/role": "loader"}
        job_metadata: Any = {
            "name": f"{spec.base}-loader",
            "namespace": spec.namespace,
            "labels": labels,
        }
        job_spec: Any = {
            "backoffLimit": 3,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        }
        minutes = f"{spec.loader_timeout_minutes}m"
        return k8s.batch.v1.Job(
            f"{name}-loader",
            metadata=job_metadata,
            spec=job_spec,
            opts=pulumi.ResourceOptions.merge(
                opts,
                pulumi.ResourceOptions(
                    custom_timeouts=pulumi.CustomTimeouts(create=minutes, update=minutes)
                ),
            ),
        )

    def claim_template(self) -> dict[str, Any]:
        """The StatefulSet ``volumeClaimTemplate``: ReadWriteOnce, the cache's class and size,
        ``dataSource`` the snapshot. Its values depend on the snapshot, so a StatefulSet using it
        is created after the snapshot."""
        spec = self._spec
        return {
            "metadata": {
                "name": spec.claim_template_name,
                "labels": {**spec.labels, "modelstore.pulumi.com/role": "replica"},
            },
            "spec": claim_spec(
                spec.name,
                size=spec.volume_size,
                storage_class_name=self._storage_class_name,
                data_source=snapshot_source(self._snapshot_name),
            ),
        }

    def replica_claim_name(self, stateful_set_name: str, ordinal: int) -> str:
        """The claim the StatefulSet controller makes for one replica."""
        return f"{self._spec.claim_template_name}-{stateful_set_name}-{ordinal}"

    def patch_stateful_set_spec(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a StatefulSet ``spec`` serving from the cache (the StatefulSet must live in
        the cache's namespace, where the snapshot is): the claim template added;
        every container gets the model volume read-only at ``mount_path``, ``HF_HUB_OFFLINE=1``
        and ``HF_HOME`` on a writable emptyDir. Unless set, claims are deleted with their
        replicas (``persistentVolumeClaimRetentionPolicy`` Delete/Delete): a replica volume is a
        cache, the snapshot keeps the data, and a stale claim would otherwise be reused at the
        next scale-up instead of a fresh restore.

        The lists it extends (``containers``, each container's ``volumeMounts`` and ``env``,
        ``volumes``, ``volumeClaimTemplates``) must be lists of mappings: anything else raises
        :class:`ModelStoreInputError`."""
        store = self._spec.name
        out = dict(spec)
        template = dict(out.get("template") or {})
        pod = dict(template.get("spec") or {})
        path = "spec.template.spec"
        containers = _object_list(store, f"{path}.containers", pod.get("containers"), "Container")
        for i, c in enumerate(containers):
            _check_container(store, f"{path}.containers[{i}]", c, merged=("volumeMounts", "env"))
        volumes = _object_list(store, f"{path}.volumes", pod.get("volumes"), "Volume")
        claim_templates = _object_list(
            store,
            "spec.volumeClaimTemplates",
            out.get("volumeClaimTemplates"),
            "PersistentVolumeClaim",
        )
        hf_volume, hf_mount = hf_home_volume()
        model_mount = {
            "name": self._spec.claim_template_name,
            "mountPath": self._spec.mount_path,
            "readOnly": True,
        }
        pod["containers"] = [
            {
                **c,
                "volumeMounts": [*(c.get("volumeMounts") or []), model_mount, hf_mount],
                "env": [*(c.get("env") or []), *reader_env()],
            }
            for c in containers
        ]
        if not any(
            isinstance(vol, Mapping) and vol.get("name") == HF_HOME_VOLUME for vol in volumes
        ):
            volumes.append(hf_volume)
        pod["volumes"] = volumes
        template["spec"] = pod
        out["template"] = template
        out["volumeClaimTemplates"] = [*claim_templates, self.claim_template()]
        out.setdefault(
            "persistentVolumeClaimRetentionPolicy",
            {"whenDeleted": "Delete", "whenScaled": "Delete"},
        )
        return out
