"""Mountpoint for Amazon S3 model store on EKS: a hardened bucket (or an existing one), the
Mountpoint CSI driver (v2) with a least-privilege IAM identity, and a static PV/PVC per consumer
namespace, in one graph.

Upstream facts this module encodes (awslabs/mountpoint-s3-csi-driver v2.7.0):
- volume attributes ``bucketName``, ``authenticationSource`` (driver|pod), ``cache``,
  ``cacheEmptyDirSizeLimit`` (pkg/driver/node/volumecontext/volume_context.go);
- access modes ReadWriteMany and ReadOnlyMany only, static provisioning only
  (pkg/driver/node/node.go, docs/CONFIGURATION.md);
- mount options are Mountpoint flags without ``--``, as ``key value`` or ``key=value``
  (pkg/mountpoint/args.go); ``--prefix`` must end with ``/`` (awslabs/mountpoint-s3
  doc/CONFIGURATION.md);
- the Helm chart's node service account is ``node.serviceAccount.name`` = ``s3-csi-driver-sa``
  in the release namespace (charts/aws-mountpoint-s3-csi-driver/values.yaml); EKS Pod Identity
  arrived with v2.0.0 (docs/CONFIGURATION.md of v1.15.0 has no Pod Identity, v2.0.0 does);
- with ``authenticationSource: driver`` every mount on a node uses the driver's node service
  account's credentials, so a store with writers uses pod-level credentials (a role per
  consumer namespace) and readers never hold a write action.
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.
# Signatures naming a provider SDK class quote it: evaluated at import, it would load the SDK's
# lazily loaded modules (about half a second of every plan's start-up).

import dataclasses
import functools
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_aws as aws

from .. import validation as v
from ..access import Consumer, ConsumerAccess, Grant
from ..backup import BackupSupport, existing_left_alone
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser, describe, fields_of
from ..kube.drivers import CsiDriverChart
from ..kube.model_jobs import GATE_POLL_SECONDS, RUN_AS
from ..store import STORE_NAME, Binding, Spec
from . import identity as aws_identity
from . import names
from . import validation as aws_v
from .bucket import bucket_baseline, tls_only_policy
from .cluster import EksCluster, cluster_named
from .drivers import MOUNTPOINT_S3_CSI, DriverInstall, parse_driver_install
from .identity import (
    IDENTITIES,
    IdentityFacts,
    ServiceAccountRole,
    attach_policy,
    service_account_role,
)
from .policies import bucket_access_policy
from .store import AwsModelStore, AwsModelStoreArgs
from .tags import cluster_tags

AUTHENTICATION_SOURCES = ("driver", "pod")
CACHE_TYPES = ("emptyDir", "none")
METADATA_TTL_PRESETS = ("indefinite", "minimal")
# The driver's node service account, where driver-level credentials go (chart value
# node.serviceAccount.name; the EKS add-on uses the same name in kube-system).
NODE_SERVICE_ACCOUNT = "s3-csi-driver-sa"
# EKS Pod Identity and the emptyDir local cache need driver v2 (Mountpoint runs in pods).
POD_IDENTITY_MIN_MAJOR = 2
# S3 has no size: Kubernetes requires a capacity on PV and claim and the driver ignores it. Kept
# small (as the EFS store's) so the claims do not eat into a namespace's `requests.storage`
# quota.
NOMINAL_CAPACITY = "1Gi"
# Mount options the store sets itself: passing them through extra_mount_options would bypass
# the reader/writer split (e.g. allow-delete on a reader) or contradict a field. Matched on the
# case-folded key: the driver's keys are case-sensitive, so ALLOW-DELETE would pass a
# case-sensitive check here and then fail the mount.
MANAGED_MOUNT_OPTIONS = (
    "region",
    "prefix",
    "read-only",
    "allow-delete",
    "allow-overwrite",
    "allow-other",
    "allow-root",
    "uid",
    "gid",
    "dir-mode",
    "file-mode",
    "metadata-ttl",
    "negative-metadata-ttl",
    "cache",
)
# How long a mount keeps a lookup's "not found" (Mountpoint --negative-metadata-ttl): as long
# as the revision gate waits between two looks for a manifest, so a pod that mounted before its
# revision was published sees it on the gate's next look. With metadata-ttl indefinite (or a
# long TTL) Mountpoint otherwise caches "not found" for the TTL, for ever under indefinite
# (awslabs/mountpoint-s3 mountpoint-s3-fs/src/fs/config.rs at mountpoint-s3-1.22.3,
# CacheConfig::new, lines 173-193; with_negative_metadata_ttl, lines 195-213).
NEGATIVE_METADATA_TTL_SECONDS = GATE_POLL_SECONDS
# --negative-metadata-ttl first exists in Mountpoint 1.15.0 (its CHANGELOG.md, v1.15.0), which
# the CSI driver ships from 1.13.0 (awslabs/mountpoint-s3-csi-driver CHANGELOG.md, v1.13.0);
# an older Mountpoint refuses the unknown flag and fails every mount.
NEGATIVE_TTL_MIN_DRIVER = (1, 13, 0)
# Readers' modes, Mountpoint's defaults written out (see _mount_options).
READER_DIR_MODE = "0755"
READER_FILE_MODE = "0644"
# The driver derives Mountpoint's max-cache-size from the emptyDir's limit (cache_size), and
# it must not exceed that limit (docs/CACHING.md): refused in extra_mount_options.
CACHE_SIZE_OPTION = "max-cache-size"
KMS_ALIAS_NOTE = "an alias does not work in an IAM policy's Resource"
# The cluster scope's key for the driver's shared node role (one per cluster and driver).
DRIVER_ROLE_KEY = ("s3-driver-role",)

_QUANTITY = re.compile(r"^[1-9][0-9]*(Mi|Gi|Ti|M|G|T)$")
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
# Mountpoint's --uid/--gid are u32 from 1 up (awslabs/mountpoint-s3 mountpoint-s3/src/cli.rs:
# `uid: Option<u32>`, `gid: Option<u32>`, `range(1..)`): a 32-bit Linux id, not root's.
MAX_LINUX_ID = 4294967295


class MountpointS3ModelStoreArgs(AwsModelStoreArgs, total=False):
    """Arguments of :class:`MountpointS3ModelStore`. Every field is optional but
    ``cluster_name``, needed for IAM roles and the EKS add-on (only ``driver_install: none``
    with driver-level credentials goes without it).

    ``region`` is the cluster's region, as for every AWS store; the bucket's is
    ``bucket_region`` (default: ``region``, so a store that sets only ``region`` keeps one
    region for both, as before; stores on one cluster share ``region``, so one whose bucket is
    elsewhere says so with ``bucket_region``). The driver install: ``driver_namespace`` is also
    its node service account's, and only for ``driver_install: helm`` (the add-on always
    installs in kube-system); ``eks_addon_version`` (e.g. ``v2.7.0-eksbuild.1``) also gives
    ``driver_version`` its default."""

    bucket_name: pulumi.Input[str]
    """An existing general purpose bucket to serve from, by name: the store then creates no
    bucket resources and leaves its settings alone. Default: a new bucket, named by Pulumi after
    the store, with public access blocked, ACLs disabled (bucket owner enforced), default
    encryption (SSE-S3, or SSE-KMS with ``kms_key_arn``), versioning on while ``backup`` is
    (suspended without it) and a bucket policy that denies requests without TLS; protected
    unless ``protect`` is ``false``."""
    bucket_region: pulumi.Input[str]
    """The bucket's AWS region: where a new bucket is created, and Mountpoint's ``region``
    mount option (with pod-level credentials the driver also takes its STS region from it).
    Default: the cluster's ``region`` (itself the AWS provider's region unless given). Set it
    for a bucket in another region than the cluster: Mountpoint does not correct a region it
    was given."""
    kms_key_arn: pulumi.Input[str]
    """A KMS key ARN. For a new bucket: its default encryption (SSE-KMS with an S3 bucket key).
    For an existing bucket: the key its objects are encrypted with. Either way the roles get
    ``kms:Decrypt`` (and ``kms:GenerateDataKey`` for writers) on it. Default: SSE-S3 and no KMS
    permissions."""
    prefix: str
    """Serve only this key prefix of the bucket (Mountpoint ``--prefix``), ending in ``/``;
    policies are scoped to it too. Default: the whole bucket."""
    authentication_source: str
    """Whose AWS identity Mountpoint uses (the PV's ``authenticationSource``): ``pod`` - one
    role per consumer namespace on a service account the store creates there (see
    :meth:`mount_for`), so readers are read-only in IAM too; or ``driver`` - the driver's node
    service account, which serves every mount of the driver on the cluster: one role per
    cluster (``<cluster>-s3-csi-driver-role``) to which each driver-level store adds only its
    own read-only bucket policy. Default: pod-level (``pod``) when the store has writers or a
    ``model`` its seed Job writes, driver-level (``driver``) when it has only readers.
    ``driver`` with writers (the seed Job is one) is refused: the node's credentials are shared
    by every mount on it, so readers would carry the writers' write actions."""
    identity: str
    """How roles reach service accounts: ``irsa`` (the cluster's IAM OIDC provider is checked
    before deploy) or ``pod-identity`` (EKS Pod Identity associations; the cluster needs the
    eks-pod-identity-agent add-on, and the driver v2). The driver's shared node role has the
    identity of the store that makes it; a driver-level store that names another one is
    refused. Default: ``irsa``."""
    service_account_name: str
    """With ``authentication_source: pod``: the service account the store creates in every
    consumer namespace for the workloads to run as. Default: named ``<claim_name>-s3``."""
    allow_delete: bool
    """Writers may delete objects (Mountpoint ``allow-delete``; their role gets
    ``s3:DeleteObject``). Needs writers. The seed Job's mount and role always delete (a retry
    clears a failed run's files, ``keep_revisions`` removes old revisions). Default:
    ``false``."""
    allow_overwrite: bool
    """Writers may replace existing objects (Mountpoint ``allow-overwrite``). Needs writers.
    Default: ``false``."""
    metadata_ttl: str
    """How long Mountpoint trusts cached metadata: ``indefinite`` (model files are immutable;
    publish a new version under a new prefix or path), ``minimal``, or whole seconds written
    as a string (``"300"``). A "not found" is kept at most 10 seconds whatever this says
    (``negative-metadata-ttl 10``, so a pod that mounted before a revision was published sees
    it; it needs driver 1.13.0 or newer, and an older driver takes only ``minimal`` or up to
    10 seconds). A number (``300``) is still accepted for one release, with a deprecation
    warning. Default: ``indefinite``."""
    allow_other: bool
    """Let non-root containers use the mount (Mountpoint ``allow-other``) with files owned by
    ``uid``/``gid``; readers see directories ``0755`` and files ``0644``, so any uid reads
    them. ``false`` leaves the mount to root containers only (the driver then adds
    ``allow-root``), refused with a ``model`` (its verification Jobs run as uid 65532). The
    seed Job's own mount always has it. Default: ``true``."""
    uid: int
    """Owner user id of files and directories as the consumers' pods see them (Mountpoint
    ``uid``), 1 to 4294967295 (Mountpoint refuses 0). Needs ``allow_other``. The seed Job's
    mount is owned by the uid it runs as, 65532, whatever this says. Default: ``1000``."""
    gid: int
    """Owner group id (Mountpoint ``gid``), 1 to 4294967295; set it to the writers' fsGroup
    if they use one. Needs ``allow_other``. The seed Job's mount has 65532. Default:
    ``1000``."""
    cache: str
    """Mountpoint's local data cache (the PV's ``cache`` attribute): ``emptyDir`` (on the
    node's disk, one per Mountpoint pod, so replicas restarting on a node read the weights from
    disk instead of S3) or ``none``. Needs driver v2. Default: ``emptyDir``."""
    cache_size: str
    """Size limit of the emptyDir cache, a Kubernetes quantity with its unit (Mi, Gi, Ti, M, G
    or T), e.g. ``"20Gi"``: the PV's ``cacheEmptyDirSizeLimit``; drivers from 2.5.0 cap
    Mountpoint's cache at 95% of it. Size it to the model and the nodes' ephemeral storage.
    Default: ``10Gi``."""
    extra_mount_options: Sequence[pulumi.Input[str]]
    """More Mountpoint flags for every PV, added to the ones the store sets, without ``--``
    (e.g. ``maximum-throughput-gbps 100``), with lowercase names (the driver's are
    case-sensitive). Default: none. Options the store manages (region, prefix, read-only,
    allow-*, uid, gid, dir-mode, file-mode, metadata-ttl, cache, and max-cache-size, which
    follows ``cache_size``) are refused in any case: use the fields."""
    driver_version: str
    """The driver version, e.g. ``2.7.0``: the Helm chart version for ``driver_install: helm``,
    and what decides whether Pod Identity and the local cache are available (v2 and later).
    Stores on one cluster that state different versions are refused. Default: the version in
    ``eks_addon_version`` for the add-on, else the pinned chart version."""


# Own fields whose default is a constant: an explicit null is refused, not read as the default.
_NOT_NULL = (
    "identity",
    "allow_delete",
    "allow_overwrite",
    "metadata_ttl",
    "allow_other",
    "uid",
    "gid",
    "cache",
    "cache_size",
)


# ---- rules (one each; see MountpointS3ModelStore.rules for the order) -----------------------


def not_null(store: str, field: str, value: Any) -> None:
    if value is None:
        annotation = fields_of(MountpointS3ModelStoreArgs)[field].annotation
        raise ModelStoreInputError(store, field, value, describe(annotation))


def valid_prefix(store: str, value: Any) -> None:
    ok = (
        isinstance(value, str)
        and value.endswith("/")
        and not value.startswith("/")
        and "//" not in value
        and len(value.encode()) <= 1024
    )
    if not ok:
        raise ModelStoreInputError(
            store,
            "prefix",
            value,
            "an S3 key prefix ending in '/' (e.g. 'llama-3-8b/'), without a leading '/' or '//'",
        )


def valid_region(store: str, field: str, value: Any) -> None:
    """The bucket's (or the cluster's) region: a region code (``aws/validation.py``)."""
    aws_v.region(store, field, value)


def valid_authentication_source(store: str, value: Any) -> None:
    v.one_of(store, "authentication_source", value, AUTHENTICATION_SOURCES)


def driver_credentials_only_without_writers(
    store: str, source: str, writers: Any, *, seeded: bool = False
) -> None:
    """Driver-level credentials serve every mount on a node, readers' and writers' alike: a
    store with writers, or whose model its seed Job writes (``seeded``), gets a role per
    namespace, so readers never hold a write action and the seed Job holds one."""
    if source == "driver" and (writers or seeded):
        raise ModelStoreInputError(
            store,
            "authentication_source",
            source,
            "pod or unset when the store has writers or a model its seed Job writes "
            "(driver-level credentials are shared by "
            "every mount on the node, so reader mounts would carry write permissions; pod gives "
            "each consumer namespace its own role, read-only for readers)",
        )


def service_account_only_for_pod(store: str, name: Any, source: str) -> None:
    if name is not None and source != "pod":
        raise ModelStoreInputError(
            store, "service_account_name", name, "unset unless authentication_source is pod"
        )


def delete_needs_writers(store: str, wanted: bool, writers: Any) -> None:
    _writes_need_writers(store, "allow_delete", wanted, writers)


def overwrite_needs_writers(store: str, wanted: bool, writers: Any) -> None:
    _writes_need_writers(store, "allow_overwrite", wanted, writers)


def _writes_need_writers(store: str, field: str, wanted: bool, writers: Any) -> None:
    if wanted and not writers:
        raise ModelStoreInputError(
            store, field, True, "false unless the store has writers (readers never write)"
        )


def valid_metadata_ttl(store: str, field: str, value: Any) -> str:
    """``indefinite``, ``minimal`` or positive whole seconds; returns the option's value."""
    if isinstance(value, str) and value in METADATA_TTL_PRESETS:
        return value
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return str(int(value))
    raise ModelStoreInputError(
        store, field, value, "indefinite, minimal or a positive whole number of seconds"
    )


def caches_not_found_long(metadata_ttl: str) -> bool:
    """Whether ``metadata_ttl`` (``valid_metadata_ttl``'s value) would keep a "not found"
    longer than :data:`NEGATIVE_METADATA_TTL_SECONDS` (``minimal`` caches none)."""
    if metadata_ttl == "minimal":
        return False
    return metadata_ttl == "indefinite" or int(metadata_ttl) > NEGATIVE_METADATA_TTL_SECONDS


def driver_has_negative_ttl(store: str, version: str, metadata_ttl: str) -> None:
    """The store adds ``negative-metadata-ttl`` to a mount whose ``metadata_ttl`` would
    cache "not found" longer; a driver whose Mountpoint lacks the flag cannot take it."""
    found = tuple(int(part) for part in version.split("."))
    if found >= NEGATIVE_TTL_MIN_DRIVER or not caches_not_found_long(metadata_ttl):
        return
    minimum = ".".join(map(str, NEGATIVE_TTL_MIN_DRIVER))
    raise ModelStoreInputError(
        store,
        "metadata_ttl",
        metadata_ttl,
        f"minimal or at most {NEGATIVE_METADATA_TTL_SECONDS} seconds with Mountpoint CSI "
        f"driver {version} (a longer TTL keeps a missing file missing until the pod "
        f"restarts unless negative-metadata-ttl caps it, which needs driver {minimum} or "
        "newer)",
    )


def uid_needs_allow_other(store: str, uid: Any, allow_other: bool) -> None:
    _id_needs_allow_other(store, "uid", uid, allow_other)


def gid_needs_allow_other(store: str, gid: Any, allow_other: bool) -> None:
    _id_needs_allow_other(store, "gid", gid, allow_other)


def _id_needs_allow_other(store: str, field: str, value: Any, allow_other: bool) -> None:
    if not allow_other:
        raise ModelStoreInputError(store, field, value, "unset when allow_other is false")


def linux_id(store: str, field: str, value: int) -> None:
    """Mountpoint takes ``--uid``/``--gid`` from 1 up (awslabs/mountpoint-s3
    mountpoint-s3/src/cli.rs at mountpoint-s3-1.22.3, lines 230 and 238: ``value_parser!(u32)
    .range(1..)``): 0 fails the mount, not the plan."""
    if not 1 <= value <= MAX_LINUX_ID:
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"a whole number from 1 to {MAX_LINUX_ID} (a 32-bit Linux id; Mountpoint refuses 0)",
        )


def allow_other_with_a_model(store: str, allow_other: bool, seeded: bool) -> None:
    """A model's verification Jobs and revision gates read the readers' mounts as uid
    ``RUN_AS``: a mount without ``allow-other`` admits only root (the driver adds
    ``allow-root``: awslabs/mountpoint-s3-csi-driver v2.7.0 pkg/driver/node/node.go lines
    148-151)."""
    if seeded and not allow_other:
        raise ModelStoreInputError(
            store,
            "allow_other",
            allow_other,
            f"true or unset when the store has a model (its verification Jobs and revision "
            f"gates read the readers' mounts as uid {RUN_AS}, and a mount without allow-other "
            "admits root alone)",
        )


def cache_size_needs_cache(store: str, size: Any, cache: str) -> None:
    if cache == "none":
        raise ModelStoreInputError(store, "cache_size", size, "unset when cache is none")


def valid_cache_size(store: str, field: str, value: str) -> None:
    if not _QUANTITY.fullmatch(value):
        raise ModelStoreInputError(
            store,
            field,
            value,
            "a Kubernetes quantity with a unit (Mi, Gi, Ti, M, G or T), e.g. '10Gi'",
        )


def _option_key(option: str) -> str:
    """``--uid=1000`` / ``uid 1000`` / ``read-only`` -> the flag's name, as the driver parses
    it (the first of space or ``=`` separates key and value)."""
    return re.split(r"[ =]", option.strip(), maxsplit=1)[0].removeprefix("--")


def mount_options_not_managed(store: str, field: str, options: Sequence[Any]) -> None:
    """Extra Mountpoint flags must not be ones the store sets itself, nor max-cache-size, and
    must have lowercase names."""
    for option in options:
        if v.is_output(option):
            continue
        key = _option_key(option)
        if key.casefold() in MANAGED_MOUNT_OPTIONS:
            raise ModelStoreInputError(
                store,
                field,
                option,
                "a Mountpoint flag the store does not manage (not one of "
                f"{', '.join(MANAGED_MOUNT_OPTIONS)}: use the store's fields)",
            )
        if key.casefold() == CACHE_SIZE_OPTION:
            raise ModelStoreInputError(
                store,
                field,
                option,
                f"a Mountpoint flag other than {CACHE_SIZE_OPTION} (the driver derives it from "
                "cache_size, the cache emptyDir's size limit, which it must not exceed: set "
                "cache_size)",
            )
        if key != key.lower():
            raise ModelStoreInputError(
                store,
                field,
                option,
                "a Mountpoint flag with a lowercase name (the driver matches flag names "
                "case-sensitively)",
            )


def driver_version_of(store: str, values: Mapping[str, Any], driver: str) -> str:
    """The driver version: given, else the add-on's (for the add-on), else the pinned chart's."""
    addon_version = values.get("eks_addon_version")
    if addon_version is not None and driver == "eks-addon":
        match = aws_v.ADDON_VERSION.match(str(addon_version))
        if not match:
            raise ModelStoreInputError(
                store,
                "eks_addon_version",
                addon_version,
                "an add-on version such as v2.7.0-eksbuild.1",
            )
        default = match.group(1)
    else:
        default = MOUNTPOINT_S3_CSI.version
    version = values.get("driver_version", default)
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise ModelStoreInputError(
            store, "driver_version", version, "a driver version such as 2.7.0"
        )
    return version


def driver_supports_features(
    store: str, version: str, identity: str, makes_roles: bool, cache: str
) -> None:
    """Pod Identity and the emptyDir cache exist from driver v2 on (v1 ran Mountpoint under
    systemd on the host; its last release is 1.15.0)."""
    if int(version.split(".", 1)[0]) >= POD_IDENTITY_MIN_MAJOR:
        return
    if identity == "pod-identity" and makes_roles:
        raise ModelStoreInputError(
            store,
            "identity",
            identity,
            f"irsa with Mountpoint CSI driver {version} (EKS Pod Identity needs driver 2.0.0 or "
            "newer)",
        )
    if cache != "none":
        raise ModelStoreInputError(
            store,
            "cache",
            cache,
            f"none with Mountpoint CSI driver {version} (the cache volume attribute needs driver "
            "2.0.0 or newer)",
        )


def needs_cluster(authentication_source: str, driver_install: str) -> bool:
    """The store makes IAM roles (pod-level ones, or the driver's with the install it makes) or
    the EKS add-on: both need the cluster."""
    driver_role = authentication_source == "driver" and driver_install != "none"
    return authentication_source == "pod" or driver_role or driver_install == "eks-addon"


def cluster_name_when_needed(
    store: str, cluster_name: Any, authentication_source: str, driver_install: str
) -> None:
    """Checked on the args, and again on a ``cluster`` scope given instead (its name)."""
    if needs_cluster(authentication_source, driver_install):
        cluster_named(store, None, cluster_name, needed_for="its IAM roles and driver add-on")


def store_name_fits_bucket(store: str, bucket_name: Any) -> None:
    """A new bucket is named after the store (its length is ``names.physical_name``'s)."""
    if bucket_name is None:
        names.store_name_fits_bucket(store)


# ---- the driver's node identity, shared per cluster ------------------------------------------


@dataclass
class _PendingPolicy:
    """A driver-level store that joined before any store installed the driver: its policy goes
    on the shared role once a later store installs the driver (and makes the role)."""

    store: pulumi.Resource
    name: str
    policy: pulumi.Output[Any]


@dataclass
class _DriverState:
    """What the cluster's Mountpoint stores agree on (kept in the cluster scope)."""

    installed_by: str | None = None
    """The store whose driver install the cluster got."""
    role: ServiceAccountRole | None = None
    pending: list[_PendingPolicy] = field(default_factory=list)


def _driver_state(cluster: EksCluster) -> _DriverState:
    return cluster.shared(("s3-driver-state",), _DriverState)


@dataclass(frozen=True)
class _Preflight:
    bucket_region: Any
    partition: str | None
    identity: IdentityFacts | None
    role_plan: str | None
    """``make`` (this store makes the shared driver role), ``join`` (adds its policy to it),
    ``pend`` (driver-level before any install: joins once a later store installs), or None."""


def _role_plan(
    name: str, spec: Spec[MountpointS3ModelStoreArgs], cluster: EksCluster, state: _DriverState
) -> str | None:
    """How this store relates to the driver's shared node role; refuses a driver-level store
    the cluster's install cannot serve. Checked before anything of the store registers."""
    driver_level = spec.args["authentication_source"] == "driver"
    installs = spec.derived["install"].driver != "none"
    if not driver_level:
        return "make" if installs and state.pending and state.role is None else None
    if state.role is not None:
        return "join"
    if state.installed_by is not None:
        raise ModelStoreInputError(
            name,
            "authentication_source",
            "driver",
            f"pod on cluster {cluster.scope_name!r}: store {state.installed_by!r} installed the "
            "Mountpoint S3 CSI driver there without a driver-level role (declare this store "
            "before it, so the install carries the shared role, or use pod-level credentials)",
        )
    return "make" if installs else "pend"


def _agree_on_version(
    name: str, spec: Spec[MountpointS3ModelStoreArgs], cluster: EksCluster, state: _DriverState
) -> None:
    """One driver per cluster: every store that installs it or states its version must agree."""
    if spec.derived["install"].driver == "none" and "driver_version" not in spec.derived["given"]:
        return
    cluster.agree(
        ("s3-csi", "driver_version"),
        name,
        "driver_version",
        spec.derived["driver_version"],
        "one driver per cluster: the Mountpoint S3 CSI driver version",
    )


def _agree_on_identity(
    name: str,
    spec: Spec[MountpointS3ModelStoreArgs],
    cluster: EksCluster,
    state: _DriverState,
    plan: str | None,
) -> None:
    """The shared role reaches the driver one way: the maker's identity, or the first one a
    driver-level store named; a store naming another is refused."""
    driver_level = spec.args["authentication_source"] == "driver"
    if plan != "make" and not (driver_level and "identity" in spec.derived["given"]):
        return
    cluster.agree(
        ("s3-csi", "role-identity"),
        name,
        "identity",
        spec.args["identity"],
        "how the shared Mountpoint driver role reaches the driver, as",
    )


def _node_values(role: ServiceAccountRole | None) -> dict[str, Any]:
    """The Helm chart's ``node`` values: the node plugin on every node, with the shared role."""
    node: dict[str, Any] = {
        # GPU nodes are tainted; a node plugin that does not run there cannot mount.
        "tolerateAllTaints": True,
        "serviceAccount": {"create": True, "name": NODE_SERVICE_ACCOUNT},
    }
    if role is not None:
        annotations = role.service_account_annotations()
        if annotations:  # IRSA: the role ARN on the node service account
            node["serviceAccount"]["annotations"] = annotations
        if role.association is not None:
            # EKS injects Pod Identity credentials only into pods created after the association
            # exists: the release waits for it, and labelling the node pods with it rolls them
            # when the association is replaced.
            node["podLabels"] = {
                "modelstore.pulumi.com/pod-identity-association": role.association.association_id
            }
    return node


# ---- the store ------------------------------------------------------------------------------


S3_BACKUPS = BackupSupport(
    retention=(1, 2147483647),
    retention_source="S3 NoncurrentDays",
    schedule="none",
    fixed=(
        "unset: versioning keeps every overwritten or deleted object as it happens (no "
        "schedule); retention_days is how long a noncurrent version stays"
    ),
)
"""S3 lifecycle NoncurrentVersionExpiration.NoncurrentDays: a positive whole number of days
(S3 API reference, NoncurrentVersionExpiration)."""


class MountpointS3ModelStore(AwsModelStore[MountpointS3ModelStoreArgs], backend="mountpoint-s3"):
    """A shared model store in Amazon S3, mounted with Mountpoint for Amazon S3 on EKS.

    Every consumer namespace gets a static PV (driver ``s3.csi.aws.com``, ReadOnlyMany and the
    ``read-only`` mount option for readers, ReadWriteMany for writers, reclaim policy Retain) and
    a claim bound to it. A new bucket is hardened and protected by default. Readers never hold a
    write action: a store with writers uses pod-level credentials, a role per consumer namespace
    (see ``authentication_source``).

    Driver-level credentials are shared per cluster: the driver's node service account gets one
    role, ``<cluster>-s3-csi-driver-role``, owned by the cluster's :class:`EksCluster`, carrying
    only read-only policies, one per driver-level store (``<store>-driver-policy``, removed with
    its store). The store that installs the driver makes the role with the install; a store with
    ``driver_install: none`` joins it, whichever order they come in. Where no store of the
    program installs the driver (the cluster has it already), no role is made: the existing
    driver's identity must reach the bucket. IAM caps a role's inline policies at 10,240
    characters in all, about twenty driver-level stores per cluster; beyond that use
    ``authentication_source: pod``. A driver-level store declared after a pod-level store that
    installed the driver is refused (that install carries no role): declare it first.

    Every role gets ``s3:ListBucket`` on the bucket (with an ``s3:prefix`` condition under
    ``prefix``) and ``s3:GetObject`` under the prefix; writers add ``s3:PutObject`` and
    ``s3:AbortMultipartUpload``, and ``s3:DeleteObject`` with ``allow_delete`` (the seed Job's
    role always: it deletes as its mount does).
    """

    args_type = MountpointS3ModelStoreArgs
    # Mountpoint: S3 through FUSE: vLLM loader settings in kube/serving.py.
    loader_profile = "object-store"
    # Published with the manifest written last: the mount cannot rename a directory in one
    # step (seed.py's PUBLISH cites Mountpoint's and Cloud Storage FUSE's semantics; blobfuse2
    # renames a directory blob by blob).
    model_publish = "manifest-last"
    # No VPC, subnets or node groups: the cluster's name is needed only for what the store makes
    # on it (`cluster_name_when_needed`).
    reads_cluster_network = False
    example_args = MappingProxyType[str, Any]({"cluster_name": "prod-eks"})
    data_bearing_types = ("aws:s3/bucket:Bucket",)

    dynamic_claims_refused = (
        "the Mountpoint for S3 CSI driver offers static provisioning only "
        "(awslabs/mountpoint-s3-csi-driver README)"
    )

    bucket_name: pulumi.Output[str]
    """The bucket's name, the PVs' ``bucketName`` attribute."""
    bucket_arn: pulumi.Output[str]
    """The bucket's ARN."""
    region: pulumi.Output[str]
    """The bucket's region (``bucket_region``), Mountpoint's ``region`` mount option."""
    driver_role_arn: pulumi.Output[str | None]
    """The cluster's shared role on the driver's node service account, where this store's
    read-only policy is (driver-level credentials); ``null`` otherwise, and for a driver-level store
    declared before the store that installs the driver (its policy joins the role then)."""
    pod_role_arns: pulumi.Output[dict[str, str]]
    """Consumer namespace -> role ARN (``authentication_source: pod``), else empty."""
    service_account_name: pulumi.Output[str | None]
    """The service account workloads run as (``authentication_source: pod``), else ``null``."""

    # ---- 1. parse ------------------------------------------------------------------------------

    @classmethod
    def _renamed(cls, store: str, args: Any, warn: bool = True) -> Any:
        """``metadata_ttl`` as a number is still accepted for one release (it is a string now:
        the component schema has no union of string and number)."""
        args = super()._renamed(store, args, warn)
        ttl = args.get("metadata_ttl") if isinstance(args, Mapping) else None
        if isinstance(ttl, int) and not isinstance(ttl, bool):
            if warn:
                message = (
                    f"{store}: metadata_ttl as a number is deprecated, write it as a string "
                    f"({str(ttl)!r})"
                )
                warnings.warn(message, DeprecationWarning, stacklevel=4)
                pulumi.log.warn(message)
            args = {**args, "metadata_ttl": str(ttl)}
        return args

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """A new bucket's versioning (on only with the backup: suspended without it, so no
        version piles up unexpired) with noncurrent versions expired after the retention:
        continuous, so no schedule. An existing bucket is left alone."""
        if p["bucket_name"] is not None:
            return existing_left_alone("bucket", "bucket_name is given")
        return S3_BACKUPS

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.derived["given"] = frozenset(p.given)
        for name in _NOT_NULL:
            if name in p and p.ok(name) and p[name] is None:
                p.check(functools.partial(not_null, p.store, name, None))
        p.field_rule(aws_v.bucket_name, "bucket_name")
        p.field_rule(aws_v.kms_key_arn, "kms_key_arn", KMS_ALIAS_NOTE)
        if "prefix" in p:
            p.rule(valid_prefix, "prefix")
        else:
            p.set("prefix", "")
        p.field_rule(valid_region, "region")
        p.field_rule(valid_region, "bucket_region")

        # The seed Job of a model is a writer too: the driver's node role is read-only.
        seeded = p.derived.get("loader") is not None
        if "authentication_source" not in p:
            p.set("authentication_source", "pod" if p["writers"] or seeded else "driver")
        p.rule(valid_authentication_source, "authentication_source")
        p.rule(
            functools.partial(driver_credentials_only_without_writers, seeded=seeded),
            "authentication_source",
            "writers",
        )
        p.field_rule(v.one_of, "identity", IDENTITIES)
        p.rule(service_account_only_for_pod, "service_account_name", "authentication_source")
        p.field_rule(v.dns_subdomain, "service_account_name")
        if p["service_account_name"] is None and p["authentication_source"] == "pod":
            p.set("service_account_name", f"{p['claim_name']}-s3")

        p.rule(delete_needs_writers, "allow_delete", "writers")
        p.rule(overwrite_needs_writers, "allow_overwrite", "writers")
        ttl = p.field_rule(valid_metadata_ttl, "metadata_ttl")
        if ttl is not None:
            p.set("metadata_ttl", ttl)
        for name, needs_allow_other in (
            ("uid", uid_needs_allow_other),
            ("gid", gid_needs_allow_other),
        ):
            if name in p:
                p.rule(needs_allow_other, name, "allow_other")
            p.field_rule(linux_id, name)
        if seeded and "allow_other" in p:
            p.rule(functools.partial(allow_other_with_a_model, seeded=seeded), "allow_other")
        p.field_rule(v.one_of, "cache", CACHE_TYPES)
        if "cache_size" in p:
            p.rule(cache_size_needs_cache, "cache_size", "cache")
        p.field_rule(valid_cache_size, "cache_size")
        p.field_rule(mount_options_not_managed, "extra_mount_options")

        cls._install_rules(p)
        if p["cluster"] is None:  # else the scope's name, in preflight
            p.rule(
                cluster_name_when_needed, "cluster_name", "authentication_source", "driver_install"
            )
        if p.ok(STORE_NAME):  # else refused once already, as a Kubernetes label value
            p.rule(store_name_fits_bucket, "bucket_name")

    @staticmethod
    def _install_rules(p: Parser) -> None:
        """The driver install (``parse_driver_install``, with ``driver_version`` checked in its
        old place, between the driver namespace and the add-on configuration) and what the
        driver's version allows."""
        fields = ("driver_install", "driver_namespace", "eks_addon_version")
        if not p.ok(*fields, "eks_addon_configuration", "driver_version"):
            return
        helm_only = "unset unless driver_install is helm"

        def check_driver_version(driver: str, _namespace: str) -> None:
            p.derived["driver_version"] = driver_version_of(p.store, p.values, driver)

        install = p.check(
            lambda: parse_driver_install(
                p.store,
                p.values,
                namespace_unset_for={"eks-addon": helm_only, "none": helm_only},
                check=check_driver_version,
                # Checked after, with every other reason the store needs the cluster.
                check_cluster_name=False,
            )
        )
        if install is None or not p.ok("authentication_source", "identity", "cache"):
            return
        p.derived["install"] = install
        auth = p["authentication_source"]
        makes_roles = auth == "pod" or (auth == "driver" and install.driver != "none")
        p.check(
            lambda: driver_supports_features(
                p.store, p.derived["driver_version"], p["identity"], makes_roles, p["cache"]
            )
        )
        if p.ok("metadata_ttl"):
            p.check(
                lambda: driver_has_negative_ttl(
                    p.store, p.derived["driver_version"], p["metadata_ttl"]
                )
            )

    # ---- 2. preflight: lookups only (and the cluster's stores agreeing), once per cluster ----

    def preflight(
        self, spec: Spec[MountpointS3ModelStoreArgs], cluster: EksCluster, opts: Opts
    ) -> _Preflight:
        a, name = spec.args, spec.common.name
        state = _driver_state(cluster)
        # Stores on one cluster share one driver and its node role: refused here, before
        # anything of this store registers.
        _agree_on_version(name, spec, cluster, state)
        plan = _role_plan(name, spec, cluster, state)
        _agree_on_identity(name, spec, cluster, state, plan)
        cluster_name_when_needed(
            name, cluster.name, a["authentication_source"], a["driver_install"]
        )
        if needs_cluster(a["authentication_source"], a["driver_install"]):
            cluster.facts(name)  # the cluster exists, before deploy
        identity = None
        if a["authentication_source"] == "pod" or plan == "make":
            identity = cluster.identity(name, a["identity"])
        bucket_region = a.get("bucket_region") or cluster.region(name)
        partition = cluster.partition() if a.get("bucket_name") is not None else None
        return _Preflight(bucket_region, partition, identity, plan)

    def driver_chart(self, spec: Spec[MountpointS3ModelStoreArgs]) -> CsiDriverChart:
        """The pinned chart at the driver version the store asks for."""
        version = spec.derived["driver_version"]
        return dataclasses.replace(MOUNTPOINT_S3_CSI, version=version, app_version=version)

    # ---- 3. provision ---------------------------------------------------------------------------

    def provision_storage(
        self, spec: Spec[MountpointS3ModelStoreArgs], cluster: EksCluster, facts: _Preflight
    ) -> Binding:
        a, name = spec.args, spec.common.name
        hardening: list[pulumi.Resource] = []
        self.bucket: aws.s3.Bucket | None = None
        if a.get("bucket_name") is None:
            self.bucket, hardening = self._new_bucket(name, spec, facts.bucket_region)
            bucket_name: pulumi.Output[str] = self.bucket.bucket
            bucket_arn: pulumi.Output[str] = self.bucket.arn
        else:
            bucket_name = pulumi.Output.from_input(a["bucket_name"])
            bucket_arn = pulumi.Output.concat(
                "arn:", facts.partition or "aws", ":s3:::", bucket_name
            )
        self.bucket_name, self.bucket_arn = bucket_name, bucket_arn
        self.region = pulumi.Output.from_input(facts.bucket_region)

        # What the PVs wait for: each edge says why.
        # Mounts need the bucket configured (order: storage-before-volume).
        ready: list[pulumi.Resource] = [*hardening]
        state = _driver_state(cluster)
        self.driver_role = self._driver_role(
            spec, cluster, facts, state, self._policy(spec, read_only=True), ready
        )
        self.driver_install = self._install_driver(spec, cluster, state)
        if self.driver_install is not None:
            # No mount before the driver runs (order: driver-before-volume).
            ready.append(self.driver_install)
        self.driver_role_arn = (
            self.driver_role.arn if self.driver_role is not None else pulumi.Output.from_input(None)
        )
        # Pod-level credentials: a role per consumer namespace (access.py, consumer_access).
        pod_roles = self.access(spec, cluster, facts).values()
        namespaces = list(pod_roles)
        self.pod_role_arns = pulumi.Output.all(*pod_roles.values()).apply(
            lambda arns: dict(zip(namespaces, arns, strict=True))
        )
        self.service_account_name = pulumi.Output.from_input(a.get("service_account_name"))
        return Binding(
            capacity=NOMINAL_CAPACITY,
            source=lambda ns, read_only: _source(
                spec,
                facts.bucket_region,
                bucket_name,
                self.volume_name(ns),
                read_only,
                seed=ns == spec.common.loader,
            ),
            reader_access_mode="ReadOnlyMany",
            writer_access_mode="ReadWriteMany",
            ready=ready,
        )

    def consumer_access(
        self, spec: Spec[MountpointS3ModelStoreArgs], cluster: EksCluster, facts: _Preflight
    ) -> ConsumerAccess | None:
        """Pod-level credentials (``authentication_source: pod``): each consumer namespace's
        service account gets a role of its own, read-only for readers. Driver-level
        credentials need no consumer identity."""
        a, name = spec.args, spec.common.name
        if a["authentication_source"] != "pod":
            return None
        identity = facts.identity
        assert identity is not None

        def grant(ns: str, read_only: bool, consumers: Sequence[Consumer]) -> Grant:
            return aws_identity.grant(
                f"{name}-pod-{ns}",
                facts=identity,
                consumers=consumers,
                policy=self._policy(spec, read_only=read_only, seed=ns == spec.common.loader),
                description=(
                    f"Mountpoint S3 {'reader' if read_only else 'writer'} in {ns} for model "
                    f"store {name}"
                ),
                tags=self.tags(spec),
                parent=self,
            )

        return ConsumerAccess(service_account=a["service_account_name"], grant=grant)

    def _policy(
        self, spec: Spec[MountpointS3ModelStoreArgs], *, read_only: bool, seed: bool = False
    ) -> pulumi.Output[Any]:
        """What readers (or writers) of this store may do in its bucket; ``seed``: the loader
        namespace's role, which deletes as its mount does (``allow-delete``)."""
        a = spec.args
        return bucket_access_policy(
            self.bucket_arn,
            a["prefix"],
            write=not read_only,
            delete=not read_only and (a["allow_delete"] or seed),
            kms_key_arn=a.get("kms_key_arn"),
        )

    def _install_driver(
        self, spec: Spec[MountpointS3ModelStoreArgs], cluster: EksCluster, state: _DriverState
    ) -> pulumi.Resource | None:
        """The driver, once per cluster, with the shared node role where there is one."""
        install: DriverInstall = spec.derived["install"]
        role = state.role
        made = self.install_driver(
            spec,
            cluster,
            install,
            chart=self.driver_chart(spec),
            helm_values={"node": _node_values(role)},
            old_name=f"{spec.common.name}-s3-csi-driver",
            role=role,
            # The driver's pods must not start before their identity exists: with IRSA the
            # role, with Pod Identity the association (EKS hands its credentials only to pods
            # created after it). Each store's policy is its own PVs' concern
            # (order: driver-install-order).
            depends_on=role.ready if role is not None else (),
        )
        if install.driver != "none" and state.installed_by is None:
            state.installed_by = spec.common.name
        return made

    def _driver_role(
        self,
        spec: Spec[MountpointS3ModelStoreArgs],
        cluster: EksCluster,
        facts: _Preflight,
        state: _DriverState,
        read_only_policy: pulumi.Output[Any],
        ready: list[pulumi.Resource],
    ) -> ServiceAccountRole | None:
        """The cluster's shared driver role, made by the store that installs the driver (named
        after the cluster, aliased to that store's old ``<store>-driver-*`` names), with this
        store's own read-only policy on it. Returns the role when this store uses it."""
        name = spec.common.name
        driver_level = spec.args["authentication_source"] == "driver"
        if facts.role_plan == "make":
            identity = facts.identity
            assert identity is not None
            namespace = spec.derived["install"].namespace
            # Before, a driver-level store that installed the driver had this role as
            # <store>-driver-role (and -pod-identity): aliases move it, no replacement.
            state.role = cluster.shared(
                DRIVER_ROLE_KEY,
                lambda: service_account_role(
                    f"{cluster.scope_name}-s3-csi-driver",
                    facts=identity,
                    namespace=namespace,
                    service_account=NODE_SERVICE_ACCOUNT,
                    # None: each driver-level store attaches its own (attach_policy), so the
                    # role only ever carries read-only policies.
                    policy=None,
                    description=(
                        f"Mountpoint S3 CSI driver (node) on cluster {cluster.scope_name}: "
                        "read-only access for its driver-level model stores"
                    ),
                    tags=cluster_tags(spec.args.get("tags") or {}),
                    parent=cluster,
                    aliases_from=self if driver_level else None,
                    old_name=f"{name}-driver",
                ),
            )
            for pending in state.pending:
                attach_policy(
                    f"{pending.name}-driver-policy", state.role, pending.policy, pending.store
                )
            state.pending.clear()
        if not driver_level:
            return None
        if state.role is None:  # no install yet: joins when a later store installs the driver
            state.pending.append(_PendingPolicy(self, name, read_only_policy))
            return None
        # The driver's node service account mounts every PV of this driver on a node with this
        # one role, so it only ever carries read-only policies: driver-level credentials are
        # refused for a store with writers (rules), and this policy never writes.
        own = attach_policy(f"{name}-driver-policy", state.role, read_only_policy, self)
        # No mount before the role can read this store's bucket (order: grant-before-volume).
        ready.append(own)
        return state.role

    def _new_bucket(
        self, name: str, spec: Spec[MountpointS3ModelStoreArgs], region: Any
    ) -> "tuple[aws.s3.Bucket, list[pulumi.Resource]]":
        """A bucket with public access blocked, ACLs off, default encryption, versioning and a
        TLS-only policy. Only the bucket holds data, so only it is protected."""
        kms_key_arn, tags = spec.args.get("kms_key_arn"), self.tags(spec)
        bucket = aws.s3.Bucket(
            f"{name}-bucket",
            # Auto-named (lowercased, -<7 hex>) unless that passes S3's 63 characters.
            bucket=names.physical_name(f"{name}-bucket", names.BUCKET_NAME_MAX, lower=True),
            region=region,
            # With protection off the user asked `pulumi destroy` to delete the data: a bucket
            # with objects (and versions) cannot be deleted otherwise.
            force_destroy=not spec.common.protect,
            tags={**tags, **self.opt_out_marks()},
            opts=self.data_protection(),
        )
        kms = kms_key_arn is not None
        encryption = aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
            apply_server_side_encryption_by_default=(
                aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                    sse_algorithm="aws:kms" if kms else "AES256",
                    kms_master_key_id=kms_key_arn,
                )
            ),
            # An S3 bucket key cuts KMS requests (and cost) for SSE-KMS.
            bucket_key_enabled=kms,
        )
        baseline = bucket_baseline(name, bucket, region, self, [encryption])
        backup = spec.derived["backup"]
        # Versions are the backup: with it off they would pile up unexpired (a model's old
        # revisions, removed under keep_revisions, kept and billed for ever). "Suspended" is
        # what S3 takes for "no new versions" (PutBucketVersioning Status: Enabled|Suspended).
        versioning = aws.s3.BucketVersioning(
            f"{name}-bucket-versioning",
            versioning_configuration={"status": "Enabled" if backup.enabled else "Suspended"},
            bucket=bucket.id,
            region=region,
            opts=pulumi.ResourceOptions(parent=self),
        )
        configuration: list[pulumi.Resource] = [*baseline, versioning]
        if backup.enabled:
            # Versioning keeps every overwritten or deleted object; the backup's retention is
            # how long a noncurrent version stays (S3 API, LifecycleRule
            # NoncurrentVersionExpiration.NoncurrentDays). After versioning: S3 takes one
            # configuration change of a bucket at a time.
            configuration.append(
                aws.s3.BucketLifecycleConfiguration(
                    f"{name}-bucket-lifecycle",
                    rules=[
                        {
                            "id": "backup-retention",
                            "status": "Enabled",
                            "filter": {"prefix": ""},
                            "noncurrent_version_expiration": {
                                "noncurrent_days": backup.retention_days
                            },
                        }
                    ],
                    bucket=bucket.id,
                    region=region,
                    # order: versioning-before-lifecycle
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[versioning]),
                )
            )
        policy = tls_only_policy(name, bucket, region, self, configuration)
        return bucket, [*configuration, policy]


def _source(
    spec: Spec[MountpointS3ModelStoreArgs],
    region: Any,
    bucket_name: pulumi.Output[str],
    volume_name: str,
    read_only: bool,
    seed: bool = False,
) -> dict[str, Any]:
    """A PV's volume source: the bucket, whose credentials, the cache, and the Mountpoint
    flags of its access level (``seed``: the loader namespace's PV)."""
    a = spec.args
    attributes: dict[str, Any] = {
        "bucketName": bucket_name,
        "authenticationSource": a["authentication_source"],
    }
    if a["cache"] == "emptyDir":
        attributes["cache"] = "emptyDir"
        attributes["cacheEmptyDirSizeLimit"] = a["cache_size"]
    return {
        "csi": {
            "driver": MOUNTPOINT_S3_CSI.driver,
            # kubelet handles a volume once per driver^volumeHandle: PVs sharing a handle
            # would collide on a node. The PV name is unique in the cluster.
            "volumeHandle": pulumi.Output.concat(bucket_name, "-", volume_name),
            "readOnly": read_only,
            "volumeAttributes": attributes,
        },
        # Readers and writers differ in their Mountpoint flags, so each PV carries its own
        # (merged into the PV spec with the source).
        "mountOptions": _mount_options(spec, region, read_only, seed=seed),
    }


def _mount_options(
    spec: Spec[MountpointS3ModelStoreArgs], region: Any, read_only: bool, seed: bool = False
) -> list[Any]:
    """A PV's Mountpoint flags. ``seed``: the loader namespace's PV, the seed Job's alone.

    Who may do what (Mountpoint presents every file and directory with one owner and mode,
    and the kernel checks them: ``MountOption::DefaultPermissions``, awslabs/mountpoint-s3
    mountpoint-s3-fs/src/fuse/config.rs line 39 at mountpoint-s3-1.22.3):
    - the seed's PV is owned by the uid and gid the seed runs as (``model_jobs.RUN_AS``, no
      fsGroup of the store's), whatever ``uid``/``gid``/``allow_other`` say: they are the
      consumers' (with the defaults, 1000 and mode 0755, the seed could not create a file);
    - readers get ``dir-mode 0755`` and ``file-mode 0644`` (Mountpoint's own defaults,
      doc/SEMANTICS.md) written out: a reader pod with an fsGroup would otherwise get the
      driver's ``0770``/``0660`` (awslabs/mountpoint-s3-csi-driver v2.7.0
      pkg/driver/node/node.go lines 136-145), which locks out every reader not in ``gid``,
      the verification Jobs (uid 65532) among them."""
    a = spec.args
    # Always explicit: IMDS may be out of reach from Mountpoint pods, and with pod-level
    # credentials the driver takes the STS region from this option too.
    options: list[Any] = [pulumi.Output.concat("region ", region)]
    if a["prefix"]:
        options.append(f"prefix {a['prefix']}")
    options.append(f"metadata-ttl {a['metadata_ttl']}")
    if caches_not_found_long(a["metadata_ttl"]):
        options.append(f"negative-metadata-ttl {NEGATIVE_METADATA_TTL_SECONDS}")
    if seed:
        options += ["allow-other", f"uid={RUN_AS}", f"gid={RUN_AS}"]
    elif a["allow_other"]:
        options += ["allow-other", f"uid={a['uid']}", f"gid={a['gid']}"]
        if read_only:
            options += [f"dir-mode {READER_DIR_MODE}", f"file-mode {READER_FILE_MODE}"]
    if read_only:
        options.append("read-only")
    else:
        # The seed deletes: a failed run's files before its retry, and the revisions beyond
        # keep_revisions (Mountpoint refuses unlink without it: doc/SEMANTICS.md, "Deletes").
        if a["allow_delete"] or seed:
            options.append("allow-delete")
        if a["allow_overwrite"]:
            options.append("allow-overwrite")
    return options + list(a.get("extra_mount_options") or ())
