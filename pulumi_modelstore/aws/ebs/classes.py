"""EBS storage classes: gp3 for model caches and checkpoints, io2 for Multi-Attach block volumes.

Limits checked before anything registers (AWS EC2 API reference for CreateVolume, as shipped in
botocore's EC2 model; ratios from the EBS volume types guide; the driver's
``pkg/cloud/cloud.go``): gp3 3,000-80,000 IOPS, 125-2,000 MiB/s, at most 500 IOPS per GiB and
0.25 MiB/s per provisioned IOPS, 1-65,536 GiB; io2 100-256,000 IOPS, at most 1,000 IOPS per GiB,
4-65,536 GiB; volume initialization rate 100-300 MiB/s.
"""

# No `from __future__ import annotations`: the field machinery and the component analyzer read
# these annotations as objects.
# Signatures naming a provider SDK class quote it: evaluated at import, it would load the SDK's
# lazily loaded modules (about half a second of every plan's start-up).

import math
import re
import typing
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ... import validation as v
from ...errors import ModelStoreInputError
from ...fields import NO_DEFAULT, Parser, fields_of
from ...kube.snapshots import volume_claim
from .. import validation as aws_v
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

DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

# The tags the EBS CSI driver puts on every volume it creates, besides a class's and its extra
# tags (kubernetes-sigs/aws-ebs-csi-driver pkg/driver/controller.go CreateVolume: CSIVolumeName
# and ebs.csi.aws.com/cluster always; with the external-provisioner's --extra-create-metadata,
# on in the chart and the add-on, the kubernetes.io/created-for/ pvc name and namespace and pv
# name; with --k8s-tag-cluster-id, kubernetes.io/cluster/<id>, Name and KubernetesCluster).
# They count towards EC2's 50 tags per volume.
DRIVER_VOLUME_TAGS = (
    "CSIVolumeName",
    "ebs.csi.aws.com/cluster",
    "kubernetes.io/created-for/pvc/name",
    "kubernetes.io/created-for/pvc/namespace",
    "kubernetes.io/created-for/pv/name",
    "kubernetes.io/cluster/<cluster>",
    "Name",
    "KubernetesCluster",
)
# Keys the driver refuses in a class's tagSpecification_<n> and in its extra tags (pkg/driver/
# validation.go validateExtraTags: CSIVolumeName, ebs.csi.aws.com/cluster and
# CSIVolumeSnapshotName are its own, and the kubernetes.io and aws: prefixes are reserved).
RESERVED_VOLUME_TAG_KEYS = ("CSIVolumeName", "CSIVolumeSnapshotName", "ebs.csi.aws.com/cluster")
RESERVED_VOLUME_TAG_PREFIXES = ("kubernetes.io", "aws:")
# The driver renders a tag value as a Go text/template ({{ .PVCName }}, docs/tagging.md) before
# it checks it: only the text around the actions is checked here.
_TEMPLATE_ACTION = re.compile(r"\{\{.*?\}\}", re.S)

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


def whole_in_range(store: str, name: str, value: Any, low: int, high: int, unit: str) -> None:
    """A plain whole number in range (not an Output: limits and ratios are checked at preview)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ModelStoreInputError(store, name, value, f"a whole number from {low} to {high}{unit}")


def checked(p: Parser, check: Callable[..., Any], name: str, *extra: Any) -> None:
    """Run ``check(store, name, value, *extra)`` on a field given or defaulted, None included:
    a field given as None is refused by its check (None is not a size, a class name or a
    flag), where :meth:`Parser.field_rule` would skip it. Skipped when the field was refused,
    or is neither given nor defaulted."""
    if p.ok(name) and name in p.values:  # ok() first: it refuses a name that is no field
        p.check(lambda: check(p.store, name, p[name], *extra))


# -- the class fields and their rules ---------------------------------------------------------


class Gp3VolumeArgs(TypedDict, total=False):
    """The gp3 volume fields every EBS component takes, declared once here:
    :class:`StorageClassArgs`, :class:`~.driver.EbsCsiDriverArgs` and
    :class:`~.cache.EbsModelCacheArgs` inherit them and run the same rules (:func:`gp3_rules`,
    :func:`io2_rules`)."""

    iops: int
    """gp3 IOPS, 3000 to 80000, at most 500 per GiB of each volume. Default: ``3000`` (the
    baseline every gp3 volume gets free)."""
    throughput_mibps: int
    """gp3 throughput in MiB/s, 125 to 2000, at most 0.25 per provisioned IOPS. Default:
    ``125`` (the free baseline)."""
    encrypted: bool
    """Encrypt volumes. Default: ``true`` (with the AWS managed ``aws/ebs`` key unless
    ``kms_key_arn``)."""
    kms_key_arn: pulumi.Input[str]
    """A customer managed KMS key ARN for the volumes. Default: the AWS managed ``aws/ebs``
    key."""
    fs_type: str
    """File system of gp3 volumes, ``ext4`` or ``xfs``. Default: ``ext4``."""
    volume_tags: Mapping[str, pulumi.Input[str]]
    """Tags on every volume of the class: AWS tags (see ``tags``), at most 42 beside the
    driver's own 8, no key the driver keeps (``CSIVolumeName``, ``CSIVolumeSnapshotName``,
    ``ebs.csi.aws.com/cluster``, ``kubernetes.io...``) and no ``=`` in a key; a value may hold
    the driver's template actions (``{{ .PVCName }}``). Default: none beyond the driver's
    own."""


class StorageClassArgs(Gp3VolumeArgs, total=False):
    """The fields of the EBS storage classes, as :func:`parse_gp3_class` and
    :func:`parse_io2_multi_attach_class` read them: the shared volume fields and the classes'
    own. (:class:`~.driver.EbsCsiDriverArgs` and :class:`~.cache.EbsModelCacheArgs` declare the
    one of these each takes with what it means there; a test holds their defaults equal.)"""

    reclaim_policy: str
    """``Delete`` or ``Retain``. Default: ``Delete``."""
    volume_initialization_rate_mibps: int
    """Rate, 100 to 300 MiB/s, at which EBS pulls a volume restored from a snapshot. A class
    with it can make no empty volume: the driver passes the rate to every volume it creates
    and EC2 refuses it for one not created from a snapshot (kubernetes-sigs/aws-ebs-csi-driver
    ``pkg/cloud/cloud.go``, issue #2691), so give claims without a snapshot ``dataSource``
    another class. Default: the EBS default (blocks load lazily on first read)."""
    multi_attach_iops: int
    """io2 IOPS, 100 to 256000, at most 1000 per GiB of each volume. Default: none (no io2
    class)."""


GP3_FIELDS = (
    "iops",
    "throughput_mibps",
    "encrypted",
    "kms_key_arn",
    "fs_type",
    "reclaim_policy",
    "volume_initialization_rate_mibps",
    "volume_tags",
)
"""The gp3 class's fields (those of :class:`StorageClassArgs` but ``multi_attach_iops``)."""


def throughput_fits_iops(store: str, iops: Any, throughput_mibps: Any) -> None:
    """gp3 allows at most 0.25 MiB/s per provisioned IOPS."""
    if throughput_mibps > iops * GP3_MAX_MIBPS_PER_IOPS:
        raise ModelStoreInputError(
            store,
            "throughput_mibps",
            throughput_mibps,
            f"at most {math.floor(iops * GP3_MAX_MIBPS_PER_IOPS)} MiB/s at {iops} IOPS (gp3 "
            f"allows {GP3_MAX_MIBPS_PER_IOPS} MiB/s per provisioned IOPS; raise iops to at least "
            f"{math.ceil(throughput_mibps / GP3_MAX_MIBPS_PER_IOPS)})",
        )


def kms_key_only_when_encrypted(store: str, encrypted: Any, kms_key_arn: Any) -> None:
    """A KMS key encrypts: it makes no sense on unencrypted volumes."""
    if kms_key_arn is not None and not encrypted:
        raise ModelStoreInputError(
            store, "kms_key_arn", kms_key_arn, "unset when encrypted is false"
        )


def kms_key_is_an_arn(store: str, field_name: str, key: Any) -> None:
    """The driver and its IAM policy need a key's ARN, not a key id or an alias."""
    aws_v.kms_key_arn(store, field_name, key, alias_note=KMS_ALIAS_NOTE)


def driver_tag(store: str, field_name: str, key: str, value: Any) -> None:
    """One tag the EBS CSI driver puts on volumes (a class's ``tagSpecification_<n>``, its extra
    tags): an AWS tag (``aws/validation.py``), not a key the driver keeps for itself, and a key
    without ``=`` (the driver splits ``key=value`` at the first one; docs/tagging.md). A value
    may hold template actions (``{{ .PVCName }}``), filled in by the driver."""
    aws_v.tag_key(store, field_name, key)
    if key in RESERVED_VOLUME_TAG_KEYS or key.startswith(RESERVED_VOLUME_TAG_PREFIXES):
        raise ModelStoreInputError(
            store,
            field_name,
            key,
            f"keys other than {', '.join(RESERVED_VOLUME_TAG_KEYS)} and those starting with "
            f"{' or '.join(RESERVED_VOLUME_TAG_PREFIXES)} (the EBS CSI driver keeps them)",
        )
    if "=" in key:
        raise ModelStoreInputError(
            store,
            field_name,
            key,
            "keys without '=' (the EBS CSI driver reads each tag as key=value)",
        )
    literal = _TEMPLATE_ACTION.sub("", value) if isinstance(value, str) else None
    aws_v.tag_value(store, field_name, value, literal=literal)


def volume_tags_fit(store: str, field_name: str, tags: Mapping[str, Any]) -> None:
    """A class's volume tags: each a tag the driver takes (:func:`driver_tag`), and with the
    driver's own at most 50 on each volume."""
    for key, value in tags.items():
        driver_tag(store, field_name, key, value)
    aws_v.tag_count(store, field_name, tags, DRIVER_VOLUME_TAGS, "the EBS CSI driver")


def _volume_rules(p: Parser) -> None:
    """The rules both classes share: encryption, its key, the reclaim policy, the tags."""
    checked(p, v.flag, "encrypted")
    p.rule(kms_key_only_when_encrypted, "encrypted", "kms_key_arn")
    p.field_rule(kms_key_is_an_arn, "kms_key_arn")
    for name in p.declared("reclaim_policy"):
        checked(p, v.one_of, name, RECLAIM_POLICIES)
    for name in p.declared("volume_tags"):
        p.field_rule(volume_tags_fit, name)


def _value(p: Parser, name: str) -> Any:
    """A field's value; for a class field the args type does not take (the cache has no
    ``reclaim_policy``), :class:`StorageClassArgs`'s default."""
    if name in p.fields:
        return p[name]
    default = fields_of(StorageClassArgs)[name].default
    return None if default is NO_DEFAULT else default


def gp3_rules(p: Parser) -> None:
    """The gp3 class's rules on a parser whose args take its fields (a field they lack is
    skipped); the validated :class:`Gp3Class` goes to ``p.derived["gp3"]``."""
    checked(p, whole_in_range, "iops", *GP3_IOPS, " IOPS for gp3")
    checked(p, whole_in_range, "throughput_mibps", *GP3_THROUGHPUT_MIBPS, " MiB/s for gp3")
    p.rule(throughput_fits_iops, "iops", "throughput_mibps")
    _volume_rules(p)
    checked(p, v.one_of, "fs_type", FS_TYPES)
    for name in p.declared("volume_initialization_rate_mibps"):
        p.field_rule(whole_in_range, name, *VOLUME_INITIALIZATION_RATE_MIBPS, " MiB/s")
    if p.ok(*p.declared(*GP3_FIELDS)):
        p.derived["gp3"] = Gp3Class(
            iops=_value(p, "iops"),
            throughput_mibps=_value(p, "throughput_mibps"),
            encrypted=_value(p, "encrypted"),
            kms_key_arn=_value(p, "kms_key_arn"),
            fs_type=_value(p, "fs_type"),
            reclaim_policy=_value(p, "reclaim_policy"),
            volume_initialization_rate_mibps=_value(p, "volume_initialization_rate_mibps"),
            tags=dict(_value(p, "volume_tags") or {}),
        )


def io2_rules(p: Parser) -> None:
    """The io2 Multi-Attach class's rules, when ``multi_attach_iops`` is set; the validated
    :class:`Io2MultiAttachClass` goes to ``p.derived["io2"]``."""
    if p["multi_attach_iops"] is None:
        return
    p.field_rule(whole_in_range, "multi_attach_iops", *IO2_IOPS, " IOPS for io2")
    _volume_rules(p)
    io2_fields = ("multi_attach_iops", "encrypted", "kms_key_arn", "reclaim_policy", "volume_tags")
    if p.ok(*p.declared(*io2_fields)):
        p.derived["io2"] = Io2MultiAttachClass(
            iops=p["multi_attach_iops"],
            encrypted=p["encrypted"],
            kms_key_arn=p["kms_key_arn"],
            reclaim_policy=_value(p, "reclaim_policy"),
            tags=dict(p["volume_tags"] or {}),
        )


def _class_parser(store: str, args: Mapping[str, Any]) -> Parser:
    """A parser over ``args``' class fields (a component's other fields are not the class's)."""
    fields = fields_of(StorageClassArgs)
    return Parser(store, StorageClassArgs, {k: val for k, val in args.items() if k in fields})


def parse_gp3_class(store: str, args: Mapping[str, Any]) -> Gp3Class:
    """A validated gp3 class from ``args``' fields of :class:`StorageClassArgs` (others are
    ignored); raises :class:`ModelStoreInputError` naming every problem."""
    p = _class_parser(store, args)
    gp3_rules(p)
    p.finish()
    return typing.cast(Gp3Class, p.derived["gp3"])


def parse_io2_multi_attach_class(store: str, args: Mapping[str, Any]) -> Io2MultiAttachClass:
    """A validated io2 Multi-Attach class from ``args``' ``multi_attach_iops`` (required),
    ``encrypted``, ``kms_key_arn``, ``reclaim_policy`` and ``volume_tags``."""
    p = _class_parser(store, args)
    p.rule(io2_iops_in_range, "multi_attach_iops")
    io2_rules(p)
    p.finish()
    return typing.cast(Io2MultiAttachClass, p.derived["io2"])


def io2_iops_in_range(store: str, iops: Any) -> None:
    """io2 takes 100 to 256,000 IOPS."""
    whole_in_range(store, "multi_attach_iops", iops, *IO2_IOPS, " IOPS for io2")


def check_gp3_size(store: str, gp3: Gp3Class, field_name: str, size: Any) -> None:
    """A gp3 volume of ``size``: 1-65,536 GiB, and provisioned IOPS above the 3,000 baseline at
    most 500 per GiB. (The driver would silently cap IOPS to 500 per GiB instead.)"""
    gp3_size_fits(store, gp3.iops, field_name, size)


def gp3_size_fits(store: str, iops: int, field_name: str, size: Any) -> None:
    """:func:`check_gp3_size` for a class of ``iops``. Not checked while ``size`` is an
    Output."""
    _size_fits(store, field_name, size, "gp3", GP3_SIZE_GIB, GP3_MAX_IOPS_PER_GIB, iops)


def check_io2_size(store: str, iops: int | None, field_name: str, size: Any) -> None:
    """An io2 volume of ``size``: 4-65,536 GiB, and with ``iops`` at most 1,000 IOPS per GiB
    (the driver would silently cap IOPS to 1,000 per GiB instead). Not checked while ``size`` is
    an Output."""
    _size_fits(store, field_name, size, "io2", IO2_SIZE_GIB, IO2_MAX_IOPS_PER_GIB, iops)


def _size_fits(
    store: str,
    field_name: str,
    size: Any,
    volume_type: str,
    size_range: tuple[int, int],
    max_iops_per_gib: int,
    iops: int | None,
) -> None:
    """A ``volume_type`` volume of ``size``: in ``size_range`` GiB, and large enough for
    ``iops`` at ``max_iops_per_gib`` (gp3's free 3,000 IOPS baseline fits any size). The
    driver would silently cap the IOPS instead. Not checked while ``size`` is an Output."""
    gib = v.size_gib(store, field_name, size)
    if gib is None:
        return
    low, high = size_range
    if not low <= gib <= high:
        raise ModelStoreInputError(
            store, field_name, size, f"{low}Gi to {high}Gi for {volume_type}"
        )
    baseline = GP3_IOPS[0] if volume_type == "gp3" else 0
    if iops is None or iops <= baseline or iops <= gib * max_iops_per_gib:
        return
    # io2's message keeps naming the cap: its IOPS are a class's, set apart from the claim.
    cap = (
        f"; the EBS CSI driver would silently cap the volume at {gib * max_iops_per_gib} IOPS"
        if volume_type == "io2"
        else ""
    )
    raise ModelStoreInputError(
        store,
        field_name,
        size,
        f"at least {math.ceil(iops / max_iops_per_gib)}Gi for {iops} {volume_type} IOPS "
        f"(at most {max_iops_per_gib} IOPS per GiB{cap})",
    )


def ebs_storage_class(
    resource_name: str,
    *,
    name: str,
    spec: Gp3Class | Io2MultiAttachClass,
    is_default: bool = False,
    labels: Mapping[str, str] | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> "k8s.storage.v1.StorageClass":
    """An EBS StorageClass for ``spec``: ``volumeBindingMode: WaitForFirstConsumer`` (each volume
    is created in the AZ of the first pod that uses it); the driver's parameters from ``spec``.
    Changing them later replaces the class; existing volumes keep theirs.

    - A :class:`Gp3Class` allows expansion (claims grow in place) and is annotated as the
      cluster's default class or not (``is_default``, default False).
    - An :class:`Io2MultiAttachClass` (EBS Multi-Attach) allows no expansion (size Multi-Attach
      volumes up front) and is never the default (``is_default`` must stay False). The driver
      enables Multi-Attach only for a claim with access mode ReadWriteMany AND ``volumeMode:
      Block`` (use :func:`multi_attach_claim`); the volume is then attached to up to 16 Nitro
      instances in one Availability Zone, each with full read-write access to the raw device.
      Nothing in EBS or Kubernetes serializes those writers: THE APPLICATION MUST FENCE ITS
      WRITES (a cluster-aware file system, NVMe reservations, or a single writer by design), or
      concurrent writes silently corrupt data. The class's IOPS are not checked against a size
      here (a class has none): each volume gets at most 1,000 IOPS per GiB, the driver silently
      capping the rest, so a claim on it needs at least ``ceil(iops / 1000)`` GiB.
      :meth:`EbsCsiDriver.multi_attach_claim` (or :func:`multi_attach_claim` given ``iops``)
      refuses a smaller claim.
    """
    v.dns_subdomain(resource_name, "name", name)
    default = v.flag(resource_name, "is_default", is_default)
    metadata: Any = {"name": name, "labels": v.label_map(resource_name, "labels", labels)}
    if isinstance(spec, Gp3Class):
        metadata["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true" if default else "false"}
    elif default:
        raise ModelStoreInputError(
            resource_name,
            "is_default",
            is_default,
            "false for an io2 Multi-Attach class (its claims must ask for Block volumes)",
        )
    return k8s.storage.v1.StorageClass(
        resource_name,
        metadata=metadata,
        provisioner=EBS_CSI.driver,
        parameters=spec.parameters(),
        volume_binding_mode="WaitForFirstConsumer",
        allow_volume_expansion=isinstance(spec, Gp3Class),
        reclaim_policy=spec.reclaim_policy,
        opts=opts,
    )


def gp3_storage_class(resource_name: str, **kwargs: Any) -> "k8s.storage.v1.StorageClass":
    """Deprecated: :func:`ebs_storage_class` (a gp3 class); kept one release."""
    _deprecated("gp3_storage_class")
    return ebs_storage_class(resource_name, **kwargs)


def io2_multi_attach_storage_class(
    resource_name: str, **kwargs: Any
) -> "k8s.storage.v1.StorageClass":
    """Deprecated: :func:`ebs_storage_class` (an io2 Multi-Attach class; the application must
    fence its writes); kept one release."""
    _deprecated("io2_multi_attach_storage_class")
    return ebs_storage_class(resource_name, **kwargs)


def _deprecated(old: str) -> None:
    warnings.warn(
        f"{old} is deprecated: use ebs_storage_class (the class follows its spec)",
        DeprecationWarning,
        stacklevel=3,
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
) -> "k8s.core.v1.PersistentVolumeClaim":
    """A ReadWriteMany claim on an io2 Multi-Attach class, as a raw block device (pods use
    ``volumeDevices``, not ``volumeMounts``). The application must fence writes: see
    :func:`ebs_storage_class`.

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
        whole_in_range(resource_name, "iops", iops, *IO2_IOPS, " IOPS for io2")
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
