"""EBS storage classes: gp3 for model caches and checkpoints, io2 for Multi-Attach block volumes.

Limits checked before anything registers (AWS EC2 API reference for CreateVolume, as shipped in
botocore's EC2 model; ratios from the EBS volume types guide; the driver's
``pkg/cloud/cloud.go``): gp3 3,000-80,000 IOPS, 125-2,000 MiB/s, at most 500 IOPS per GiB and
0.25 MiB/s per provisioned IOPS, 1-65,536 GiB; io2 100-256,000 IOPS, at most 1,000 IOPS per GiB,
4-65,536 GiB; volume initialization rate 100-300 MiB/s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ... import validation as v
from ...errors import ModelStoreInputError
from ...kube.snapshots import size_gib, volume_claim
from ..drivers import EBS_CSI

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

DEFAULT_GP3_CLASS = "ebs-gp3"
DEFAULT_IO2_CLASS = "ebs-io2-multi-attach"
DEFAULT_SNAPSHOT_CLASS = "ebs-snapshots"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

KMS_ALIAS_NOTE = "the driver and its IAM policy need the key's ARN, not an alias"
"""Why a KMS key id or alias is refused (:func:`pulumi_modelstore.validation.kms_key_arn`)."""


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
