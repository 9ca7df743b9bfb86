"""Cloud Storage FUSE model store on GKE: a hardened bucket (or an existing one), a Kubernetes
service account per consumer namespace with bucket-level IAM for its workload identity, and a
static PV/PVC per consumer namespace on the GKE Cloud Storage FUSE CSI driver, in one graph.

Upstream facts this module encodes (GoogleCloudPlatform/gcs-fuse-csi-driver, main, 2026):
- the driver strips everything after the first ``:`` of a volume handle (pkg/util/util.go
  ``ParseVolumeID``, ``volumeIDRegEx = :.*$``), so ``<bucket>:<pv name>`` is the bucket to the
  driver and unique per PV to kubelet;
- a read-only publish adds the ``ro`` mount option itself (pkg/csi_driver/utils.go
  ``parseRequestArguments``): ``csi.readOnly`` on a reader's PV is enough;
- flags the sidecar drops (pkg/sidecar_mounter/sidecar_mounter_config.go ``DisallowedFlags``):
  log-file, log-format, o, cache-dir, temp-dir, config-file, foreground, key-file, token-url,
  reuse-token-from-url, prometheus-port, kernel-params-file and
  file-system:kernel-params-file; ``app-name`` is rewritten by the driver;
- volume attributes ``skipCSIBucketAccessCheck`` (pkg/csi_driver/utils.go) and
  ``gcsfuseMetadataPrefetchOnMount`` (pkg/webhook/sidecar_spec.go);
- pod template annotations ``gke-gcsfuse/volumes`` and ``gke-gcsfuse/{cpu,memory,
  ephemeral-storage}-{limit,request}`` (pkg/webhook/mutatingwebhook.go);
- the sidecar's volumes (pkg/webhook/sidecar_spec.go): it runs as uid/gid 65534 (``NobodyUID``,
  ``GetSecurityContext``) and mounts the pod volumes ``gke-gcsfuse-tmp`` (always added by the
  webhook), ``gke-gcsfuse-buffer`` and ``gke-gcsfuse-cache`` (``GetSidecarContainerVolumeSpec``
  adds emptyDirs only where the pod has no volume of that name); a custom cache volume needs a
  pod ``fsGroup``, any id (docs/troubleshooting.md, "Volume mount failure with custom caching
  volumes"; test/e2e/testsuites/file_cache.go mounts a PVC and a Memory emptyDir there);
- the gcsfuse options the store writes or checks, their values and the GKE version that
  first ships each: one table, ``gcsfuse_options.OPTIONS`` (gcsfuse refuses an option it does
  not know: one too new for the cluster fails every mount).
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.
# Signatures naming a provider SDK class quote it (keeps the SDK's modules lazily loaded).

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_gcp as gcp

from .. import validation as v
from ..access import Consumer, ConsumerAccess, Grant, PodSide
from ..backup import Backup, BackupSupport, existing_left_alone
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..kube.model_jobs import RUN_AS
from ..store import STORE_NAME, Binding, Spec
from . import gcsfuse_options as opts_table
from . import identity as gcp_identity
from . import validation as gcp_v
from .cluster import (
    GkeCluster,
    GkeClusterFacts,
    require_gcs_fuse_addon,
    require_gke_metadata,
    require_workload_pool,
)
from .identity import READER_ROLE, WRITER_ROLE
from .store import GcpModelStore, GcpModelStoreArgs

DRIVER = "gcsfuse.csi.storage.gke.io"
# Cloud Storage has no size: Kubernetes requires a capacity on PV and claim and the driver
# ignores it. Kept small so the claims do not eat into a `requests.storage` quota.
NOMINAL_CAPACITY = "1Gi"
STORAGE_CLASS_NAME = "modelstore-gcsfuse"
MANAGED_CLASS_PREFIX = "gcsfusecsi-"
# GKE's managed profile classes are gcsfusecsi-<profile>, from GKE 1.35.1 (FACTS).
MANAGED_PROFILES = ("serving", "training", "checkpointing")
PROFILE_MIN_GKE = (1, 35, 1)
IDENTITIES = ("direct", "google-service-account")
TUNINGS = ("serving", "file-cache", "none")
KMS_ROLE = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
VOLUMES_ANNOTATION = "gke-gcsfuse/volumes"
SIDECAR_ANNOTATION = "gke-gcsfuse/"
# Soft delete: 0 (off) or 7 to 90 days (cloud.google.com/storage/docs/soft-delete).
DAY_SECONDS = 86400
SOFT_DELETE_MIN, SOFT_DELETE_MAX = 7 * DAY_SECONDS, 90 * DAY_SECONDS

# gcsfuse flags (as `key=value` or config-file style `section:key:value`) for each tuning of
# the readers' PVs, and the volume attributes that go with them.
_METADATA_CACHES = (
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
)
TUNING_MOUNT_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "serving": ("read:enable-buffered-read:true", "read_ahead_kb=131072", *_METADATA_CACHES),
    "file-cache": (
        "file-cache:max-size-mb:-1",
        "file-cache:cache-file-for-range-read:true",
        "file-cache:enable-parallel-downloads:true",
        *_METADATA_CACHES,
    ),
    "none": (),
}
TUNING_ATTRIBUTES: Mapping[str, Mapping[str, str]] = {
    "serving": {"gcsfuseMetadataPrefetchOnMount": "true", "skipCSIBucketAccessCheck": "true"},
    "file-cache": {"skipCSIBucketAccessCheck": "true"},
    "none": {},
}
# What the sidecar drops with only a warning (DisallowedFlags), and what the driver rewrites.
DROPPED_FLAGS = (
    "log-file",
    "log-format",
    "cache-dir",
    "temp-dir",
    "config-file",
    "foreground",
    "key-file",
    "token-url",
    "reuse-token-from-url",
    "prometheus-port",
    "kernel-params-file",
    "file-system:kernel-params-file",
    "o",
    "app-name",
)
# Mount options the store sets itself.
MANAGED_FLAGS = ("only-dir", "ro", "rw")
# Who owns what a mount shows, and its modes: given in extra_mount_options they are the
# consumers', and the seed's own PV sets its owner instead (_source).
OWNER_FLAGS = ("uid", "gid", "file-mode", "dir-mode")
# The sidecar's resource annotations a store may set (gke-gcsfuse/<key>).
SIDECAR_KEYS = (
    *(f"{r}-{k}" for r in ("cpu", "memory", "ephemeral-storage") for k in ("limit", "request")),
    "metadata-prefetch-memory-limit",
    "metadata-prefetch-memory-request",
)
# Standard: "0" removes a limit, so gcsfuse takes what the GPU node has (an OOM-killed gcsfuse
# leaves "Transport endpoint is not connected" until the pod restarts).
STANDARD_SIDECAR = {"cpu-limit": "0", "memory-limit": "0", "ephemeral-storage-limit": "0"}
# Autopilot refuses "0" and sets requests to the limits: explicit values sized for serving
# (buffered reads hold up to 40 blocks of 16 MiB in memory; the file cache counts against
# ephemeral storage, so raise ephemeral-storage-limit to the model's size with it).
AUTOPILOT_SIDECAR = {"cpu-limit": "2", "memory-limit": "4Gi", "ephemeral-storage-limit": "10Gi"}
# The sidecar's pod volumes (pkg/webhook/sidecar_spec.go, pkg/util/util.go): a pod volume of the
# cache's or buffer's name replaces the sidecar's emptyDir; the tmp volume is always added.
CACHE_VOLUME = "gke-gcsfuse-cache"
SIDECAR_VOLUMES = (CACHE_VOLUME, "gke-gcsfuse-buffer", "gke-gcsfuse-tmp")
# The sidecar's gid (NobodyGID, pkg/webhook/sidecar_spec.go); any fsGroup works.
SIDECAR_GID = 65534
# IsValidGroupID (k8s.io/apimachinery pkg/util/validation/validation.go): 0 to MaxInt32.
MAX_GROUP_ID = 2**31 - 1
# gcsfuse's file cache size (its row in the options table).
FILE_CACHE_SIZE = "file-cache:max-size-mb"
MIB = 1024**2

# Cloud KMS key names (cloud.google.com/kms/docs/resource-hierarchy): key ring and key ids of
# 1-63 letters, digits, '_' and '-', in a project and a location.
_KMS_KEY = re.compile(
    r"projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/locations/([a-z0-9-]+)/"
    r"keyRings/[A-Za-z0-9_-]{1,63}/cryptoKeys/[A-Za-z0-9_-]{1,63}"
)
# A Cloud Storage location is a region, a dual-region (NAM4, or configurable) or a
# multi-region (US, EU, ASIA) (cloud.google.com/storage/docs/locations): the store takes a
# region only, so the bucket sits with the cluster's nodes.
_REGION = re.compile(r"[a-z]+-[a-z]+\d+")
REGION_RULE = (
    "a Cloud Storage region such as us-central1 (the store keeps the bucket in one region, "
    "near the cluster: not a zone, a dual-region such as NAM4 or a multi-region such as US)"
)
# Pulumi's auto-name adds '-' and 7 characters to the resource name.
AUTONAME_SUFFIX = 8


class GcsFuseModelStoreArgs(GcpModelStoreArgs, total=False):
    """Arguments of :class:`GcsFuseModelStore`. ``cluster_name`` and ``location`` (or
    ``cluster``) are required; everything else has a default."""

    bucket_name: pulumi.Input[str]
    """An existing bucket to serve from, by name: the store then creates no bucket resources
    and leaves its settings alone (it still grants each consumer bucket-level IAM on it).
    Default: a new bucket, auto-named after the store (``<store>-bucket-<random>``), in the
    cluster's region, with uniform bucket-level access, public access prevention enforced,
    object versioning while ``backup`` is on (never with ``hierarchical_namespace``) and soft
    delete on, protected unless
    ``protect`` is ``false`` (only then ``force_destroy``, so a destroy deletes its objects)."""
    bucket_region: str
    """The new bucket's region. Default: the cluster's region (a zonal cluster's zone's
    region). Another region costs inter-region egress and latency at every read: it is refused
    unless ``allow_other_region`` is ``true``."""
    allow_other_region: bool
    """Allow ``bucket_region`` to differ from the cluster's region. Default: ``false``."""
    kms_key_name: pulumi.Input[str]
    """A Cloud KMS key (``projects/P/locations/L/keyRings/R/cryptoKeys/K``, in the bucket's
    region) as the new bucket's default encryption key (CMEK). The store grants the project's
    Cloud Storage service agent ``roles/cloudkms.cryptoKeyEncrypterDecrypter`` on it before
    the bucket exists. Default: Google-managed encryption."""
    soft_delete_retention_seconds: int
    """How long Cloud Storage keeps deleted and overwritten objects recoverable: 0 (off) or
    604800 to 7776000 (7 to 90 days). A cost: soft-deleted bytes are billed at the bucket's
    storage rate for the whole retention, so replacing a 100 GB model keeps paying for the old
    100 GB for this long (on top of the noncurrent versions that versioning keeps).
    Default: ``604800``."""
    hierarchical_namespace: bool
    """Create the new bucket with a hierarchical namespace (real folders: faster listings and
    atomic directory renames; needs uniform bucket-level access, which the store always turns
    on, and can only be chosen at creation). Such a bucket has no object versioning (Cloud
    Storage does not offer it with a hierarchical namespace), so the store leaves versioning
    off: soft delete alone keeps overwritten and deleted objects recoverable.
    Default: ``false``."""
    prefix: str
    """Serve only this folder of the bucket (gcsfuse ``only-dir``), a relative path without a
    leading '/'. Default: the whole bucket."""
    identity: str
    """How pods get access: ``direct`` - bucket-level IAM for the Kubernetes service
    account's own workload identity principal (``principal://iam.googleapis.com/projects/
    <NUMBER>/locations/global/workloadIdentityPools/<PROJECT>.svc.id.goog/subject/ns/<NS>/sa/
    <KSA>``), no Google service account; or ``google-service-account`` - the legacy path, a
    Google service account per namespace that the KSA impersonates
    (``roles/iam.workloadIdentityUser``, annotation ``iam.gke.io/gcp-service-account``),
    marked deprecated by the driver. Default: ``direct``."""
    service_account_name: str
    """The Kubernetes service account consumer pods run as, in every consumer namespace.
    Default: named ``<claim_name>-gcs``."""
    create_service_account: bool
    """Create that service account in every consumer namespace. ``false`` takes existing ones by
    name (the IAM grants name them all the same). Default: ``true``."""
    storage_class_name: str
    """The ``storageClassName`` on every PV and its claim (the same on both, so they bind; no
    StorageClass of that name needs to exist). Not one of GKE's managed ``gcsfusecsi-*``
    classes. Default: ``modelstore-gcsfuse``."""
    tuning: str
    """The readers' gcsfuse tuning. ``serving`` (Google's current guidance for immutable model
    files): buffered reads (``read:enable-buffered-read:true``, GKE 1.34.0-gke.2011000),
    kernel read-ahead 128 MiB (``read_ahead_kb=131072``, GKE 1.32.2-gke.1297001), unlimited
    metadata caches with metadata prefetch on mount (GKE 1.32.1-gke.1357001), no file cache,
    and ``skipCSIBucketAccessCheck`` (halves the token exchanges per mount; a project may make
    6,000 a minute). ``file-cache``:
    the older recipe for local SSD nodes or GKE before 1.34 (1.29.6-gke.1254000 /
    1.30.2-gke.1394000 or later, for parallel downloads): an unlimited file cache with range
    reads and parallel downloads, unlimited metadata caches and ``skipCSIBucketAccessCheck``;
    the cache lives in the sidecar's ephemeral storage, so each file must fit there. ``none``:
    the driver's defaults. Writers get no tuning. gcsfuse refuses options it does not know
    (every mount fails), so each option is checked against the cluster's GKE version before
    deploy: a tuning given here must be supported whole (else it is refused, naming the
    option, the cluster's version and the first version that has it). Default: ``serving``,
    less what the cluster's version lacks (a warning in the preview names what was left out
    and why; with the version unknown, e.g. cluster attributes without ``master_version``,
    every version-gated option is left out)."""
    managed_profile: str
    """Use one of GKE's managed Cloud Storage FUSE profiles instead of ``tuning``:
    ``serving``, ``training`` or ``checkpointing``. The PVs and claims then name GKE's class
    ``gcsfusecsi-<profile>`` and GKE tunes the mounts from it. Needs GKE 1.35.1 or later on
    the control plane (checked before deploy). Not with ``tuning`` or ``storage_class_name``.
    Default: none (the store's own ``tuning``)."""
    extra_mount_options: Sequence[pulumi.Input[str]]
    """More gcsfuse flags for every PV (``key=value`` or config-file style
    ``section:key:value``). Default: none. Flags the driver drops with only a warning
    (log-file, cache-dir, o, ...) and ``only-dir``/``ro``/``rw`` (the store's) are refused;
    options the store knows (``gcsfuse_options.OPTIONS``: the file and metadata caches,
    parallel downloads, buffered reads, ``read_ahead_kb``) must have a value gcsfuse takes and
    be shipped by the cluster's GKE version (a known version: with it unknown they are
    refused). ``uid``, ``gid``, ``file-mode`` and ``dir-mode`` are the consumers': the seed
    Job's PV leaves them off and is owned by the uid and gid the seed runs as, 65532."""
    sidecar_resources: Mapping[str, str]
    """The gcsfuse sidecar's resources, as ``gke-gcsfuse/<key>`` pod annotations (keys
    ``cpu-limit``, ``memory-limit``, ``ephemeral-storage-limit``, the matching ``-request``
    keys, and ``metadata-prefetch-memory-limit``/``-request``), merged over the store's
    defaults. Default: on Standard clusters limits removed (``"0"``), so gcsfuse is not
    OOM-killed on a large model; on Autopilot (which refuses ``"0"``) cpu 2, memory 4Gi,
    ephemeral storage 10Gi."""
    cache_volume: Mapping[str, Any]
    """Where the readers' gcsfuse keeps its file cache: one Kubernetes volume source without a
    name (any type GKE supports), e.g. ``{"emptyDir": {...}}`` (``"medium": "Memory"`` for
    RAM, a ``sizeLimit``), ``{"ephemeral": {"volumeClaimTemplate": ...}}`` (a disk per pod,
    e.g. a Hyperdisk or PD class) or ``{"persistentVolumeClaim": {"claimName": ...}}``.
    :meth:`mount_for` adds it to readers' pods as the volume ``gke-gcsfuse-cache``, which the
    driver's sidecar mounts in place of its own emptyDir, and sets the pod
    ``securityContext.fsGroup`` (``cache_fs_group``): the sidecar runs as the non-root uid
    65534 and cannot write to the volume otherwise. Needs the file cache on: tuning
    ``file-cache``, a ``file-cache:max-size-mb`` in ``extra_mount_options`` (at most the
    volume's size where it is known), or a ``managed_profile``. Default: none (an emptyDir of
    the sidecar's, counted against its ephemeral-storage limit)."""
    cache_fs_group: int
    """The pod ``fsGroup`` :meth:`mount_for` sets with ``cache_volume``, over the pod's own
    (the driver takes any group: give the pod's own fsGroup here if it sets one).
    Default: ``65534``."""


# ---- rules --------------------------------------------------------------------------------


def valid_bucket_name(store: str, field: str, value: Any) -> None:
    gcp_v.bucket_name(store, field, value)


def store_name_fits_bucket(store: str, bucket_name: Any) -> None:
    """A new bucket is auto-named ``<store>-bucket-<7 characters>``: a valid bucket name."""
    if bucket_name is not None:
        return
    sample = f"{store}-bucket-abcdefg"
    try:
        valid_bucket_name(store, "bucket_name", sample)
    except ModelStoreInputError:
        raise ModelStoreInputError(
            store,
            STORE_NAME,
            store,
            f"a name whose new bucket '{store}-bucket-<7 characters>' is {gcp_v.BUCKET_NAME_RULE} "
            "(or give bucket_name)",
        ) from None


def valid_region(store: str, field: str, value: Any) -> None:
    if not v.is_output(value) and not (isinstance(value, str) and _REGION.fullmatch(value)):
        raise ModelStoreInputError(store, field, value, REGION_RULE)


def valid_kms_key(store: str, field: str, value: Any) -> None:
    if not v.is_output(value) and not (isinstance(value, str) and _KMS_KEY.fullmatch(value)):
        raise ModelStoreInputError(
            store,
            field,
            value,
            "a Cloud KMS key name (projects/P/locations/L/keyRings/R/cryptoKeys/K, with P a "
            "project id and R and K 1-63 letters, digits, '_' and '-')",
        )


def valid_soft_delete(store: str, field: str, value: int) -> None:
    if value != 0 and not SOFT_DELETE_MIN <= value <= SOFT_DELETE_MAX:
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"0 (off) or {SOFT_DELETE_MIN} to {SOFT_DELETE_MAX} seconds (7 to 90 days)",
        )


def new_bucket_only(store: str, field: str, value: Any, bucket_name: Any) -> None:
    """Settings of a new bucket: an existing one is left alone."""
    if bucket_name is not None:
        raise ModelStoreInputError(
            store, field, value, "unset when bucket_name is given (the store leaves it alone)"
        )


def valid_prefix(store: str, field: str, value: Any) -> None:
    if v.is_output(value):
        return
    ok = (
        isinstance(value, str)
        and value.strip("/") != ""
        and not value.startswith("/")
        and "//" not in value
        and ".." not in value.split("/")
        and "," not in value
        and not any(c.isspace() for c in value)
    )
    if not ok:
        raise ModelStoreInputError(
            store,
            field,
            value,
            "a folder of the bucket as a relative path without a leading '/' (e.g. "
            "'llama-3-8b'), without '//', '..', ',' or spaces",
        )


def not_with_profile(store: str, field: str, value: Any, profile: Any) -> None:
    """A managed profile decides the class and the tuning: neither is given beside it."""
    if profile is not None:
        raise ModelStoreInputError(
            store, field, value, f"unset when managed_profile is set (it is {profile!r})"
        )


def profile_supported(store: str, profile: str, facts: Any) -> None:
    """GKE's managed profile classes arrived with GKE 1.35.1 (FACTS, GCS FUSE serving)."""
    if not facts.version_at_least(*PROFILE_MIN_GKE):
        minimum = ".".join(map(str, PROFILE_MIN_GKE))
        raise ModelStoreInputError(
            store,
            "managed_profile",
            profile,
            f"unset on cluster {facts.name!r}, whose control plane runs GKE "
            f"{facts.master_version or 'of an unknown version'} (managed profiles need "
            f"{minimum} or later; use tuning instead)",
        )


def valid_storage_class_name(store: str, field: str, value: Any) -> None:
    v.dns_subdomain(store, field, value)
    if isinstance(value, str) and value.startswith(MANAGED_CLASS_PREFIX):
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"a name not starting with {MANAGED_CLASS_PREFIX} (GKE manages those classes)",
        )


def mount_options_kept(store: str, field: str, options: Sequence[Any]) -> None:
    """Extra flags the driver would drop (or rewrite) are refused, and the store's own."""
    for option in options:
        if v.is_output(option):
            continue
        key = opts_table.parse(option)[0]
        if key in DROPPED_FLAGS:
            raise ModelStoreInputError(
                store,
                field,
                option,
                "a gcsfuse flag the CSI driver passes on (it drops "
                f"{', '.join(f for f in DROPPED_FLAGS if f != 'app-name')} with only a warning, "
                "and rewrites app-name)",
            )
        if key in MANAGED_FLAGS:
            raise ModelStoreInputError(
                store,
                field,
                option,
                "a gcsfuse flag the store does not set itself (only-dir follows prefix, ro "
                "follows readers)",
            )
        found = opts_table.known(option)
        if found is not None and opts_table.value_error(*found):
            row = found[0]
            raise ModelStoreInputError(
                store,
                field,
                option,
                f"{row.key} set to {row.allowed()}",
            )


def not_a_sidecar_volume(store: str, field: str, value: Any) -> None:
    """The claim names the pod volume: a sidecar volume's name would be a duplicate
    (gke-gcsfuse-tmp) or taken over by the sidecar as its cache or buffer."""
    if value in SIDECAR_VOLUMES:
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"a name other than the GCS FUSE sidecar's volumes {', '.join(SIDECAR_VOLUMES)} "
            "(the claim names the pod volume, and the driver's webhook adds or takes over a pod "
            "volume of those names)",
        )


def cache_volume_size(store: str, field: str, value: Mapping[str, Any]) -> int | None:
    """A cache volume's size in bytes where it says one (an emptyDir's ``sizeLimit``, an
    ephemeral claim template's storage request), else None; refuses other volume types."""
    kinds = list(value)
    # Any volume type GKE supports will do (docs/troubleshooting.md, "File cache does not
    # improve the performance"): one source, no name.
    if len(kinds) != 1 or kinds[0] == "name" or not isinstance(value[kinds[0]], Mapping):
        raise ModelStoreInputError(
            store,
            field,
            value,
            "one volume source such as {'emptyDir': {...}}, {'ephemeral': {...}} or "
            f"{{'persistentVolumeClaim': {{...}}}}, without a name (it becomes the pod volume "
            f"{CACHE_VOLUME})",
        )
    source = value[kinds[0]]
    if kinds[0] == "emptyDir":
        size = source.get("sizeLimit")
    elif kinds[0] == "ephemeral":
        template = source.get("volumeClaimTemplate") or {}
        size = (((template.get("spec") or {}).get("resources") or {}).get("requests") or {}).get(
            "storage"
        )
    else:
        size = None
    return None if size is None else v.storage_bytes(store, field, size)


def valid_group_id(store: str, field: str, value: int) -> None:
    if not 0 <= value <= MAX_GROUP_ID:
        raise ModelStoreInputError(store, field, value, f"a group id from 0 to {MAX_GROUP_ID}")


def _file_cache_sizes(options: Sequence[Any]) -> list[tuple[str, int]]:
    """The flags that set the file cache's size, with that size in MiB (-1 unlimited, 0 off).
    A value that is no integer is refused by ``mount_options_kept``."""
    sizes = []
    for option in options:
        found = None if v.is_output(option) else opts_table.known(option)
        if found is None or found[0].key != FILE_CACHE_SIZE:
            continue
        try:
            sizes.append((option, int(str(found[1]))))
        except ValueError:
            continue
    return sizes


def cache_volume_used(
    store: str,
    cache_volume: Mapping[str, Any] | None,
    tuning: str,
    extra: Sequence[Any] | None,
    profile: str | None,
) -> None:
    """A cache volume the file cache never uses costs a volume per pod for nothing."""
    if cache_volume is None or profile is not None or tuning == "file-cache":
        return
    if any(size != 0 for _, size in _file_cache_sizes(extra or ())):
        return
    raise ModelStoreInputError(
        store,
        "cache_volume",
        cache_volume,
        f"unset while the file cache is off (tuning is {tuning!r}: use tuning 'file-cache', a "
        "file-cache:max-size-mb in extra_mount_options, or a managed_profile)",
    )


def cache_fits_volume(store: str, size: int | None, extra: Sequence[Any] | None) -> None:
    """A file cache larger than its volume fails writes once the volume is full."""
    if size is None:
        return
    volume_mib = size // MIB
    for option, mib in _file_cache_sizes(extra or ()):
        if mib > volume_mib:
            raise ModelStoreInputError(
                store,
                "extra_mount_options",
                option,
                f"a file cache no larger than cache_volume ({volume_mib} MiB), or -1 to fill it",
            )


def _needs_cache_volume(store: str, value: int, cache_volume: Any) -> None:
    if cache_volume is None:
        raise ModelStoreInputError(
            store, "cache_fs_group", value, "unset unless cache_volume is given"
        )


def valid_sidecar_resources(store: str, field: str, value: Mapping[str, str]) -> None:
    for key, quantity in value.items():
        if key not in SIDECAR_KEYS:
            raise ModelStoreInputError(store, field, key, f"keys among {', '.join(SIDECAR_KEYS)}")
        amount = None if v.is_output(quantity) else v.quantity(quantity)
        if not v.is_output(quantity) and (amount is None or amount < 0):
            raise ModelStoreInputError(
                store, field, quantity, "Kubernetes quantities (e.g. '2', '500m', '4Gi', '0')"
            )


# ---- preflight (needs the cluster's facts) --------------------------------------------------


def bucket_in_cluster_region(
    store: str, bucket_region: str | None, allowed: bool, facts: GkeClusterFacts
) -> None:
    if bucket_region is not None and bucket_region != facts.region and not allowed:
        raise ModelStoreInputError(
            store,
            "bucket_region",
            bucket_region,
            f"the cluster's region {facts.region} (cluster {facts.name} is in "
            f"{facts.location}; every read would cross regions), or set allow_other_region",
        )


def kms_key_in_bucket_region(store: str, key: pulumi.Input[str] | None, region: str) -> None:
    """A regional bucket's CMEK key must be in the bucket's location."""
    match = _KMS_KEY.fullmatch(key) if isinstance(key, str) else None
    if match and match.group(1) != region:
        raise ModelStoreInputError(
            store,
            "kms_key_name",
            key,
            f"a Cloud KMS key in the bucket's region {region} (the key is in {match.group(1)})",
        )


def sidecar_requests_within_limits(store: str, resources: Mapping[str, str]) -> None:
    """The sidecar's requests, over the store's default limits: Kubernetes refuses a container
    whose request exceeds its limit (the pod is never created). The webhook takes the
    annotations as given and drops only a zero limit (gcs-fuse-csi-driver
    pkg/webhook/config.go, prepareResourceList and populateResource)."""
    for key, request in resources.items():
        if not key.endswith("-request"):
            continue
        limit_key = key.removesuffix("-request") + "-limit"
        limit = resources.get(limit_key)
        wanted, most = v.quantity(request), v.quantity(limit)
        if wanted is not None and most is not None and most != 0 and wanted > most:
            raise ModelStoreInputError(
                store,
                "sidecar_resources",
                {key: request, limit_key: limit},
                f"a {key} no larger than {limit_key} (Kubernetes refuses a container whose "
                "request exceeds its limit; the limit shown includes the store's default: "
                f"raise {limit_key} with it)",
            )


def autopilot_sidecar_limits(store: str, resources: Mapping[str, str], autopilot: bool) -> None:
    if not autopilot:
        return
    for key, quantity in resources.items():
        if key.endswith("-limit") and quantity == "0":
            raise ModelStoreInputError(
                store,
                "sidecar_resources",
                {key: quantity},
                "explicit quantities on an Autopilot cluster (it refuses '0', which removes a "
                "limit on Standard clusters only)",
            )


# gcsfuse refuses a config key or flag it does not know (cmd/root.go ErrorUnused): the mount
# fails, not just the option.
_REFUSES = "gcsfuse refuses options it does not know, so every mount would fail"


def _runs(facts: GkeClusterFacts) -> str:
    if facts.version is None:
        return (
            f"cluster {facts.name!r} runs GKE of an unknown version (give the cluster's "
            "master_version)"
        )
    return f"cluster {facts.name!r} runs GKE {facts.master_version}"


def _lacking(option: str, facts: GkeClusterFacts) -> opts_table.GcsfuseOption | None:
    """The table's row for a mount option (or volume attribute) the cluster's GKE does not
    ship; None when it ships it or the table does not know it."""
    found = opts_table.known(option)
    row = found[0] if found is not None else opts_table.attribute(option)
    return row if row is not None and opts_table.missing(facts.version, [row]) else None


def reader_tuning(
    store: str, tuning: str, given: bool, facts: GkeClusterFacts
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The readers' options and volume attributes of ``tuning`` that the cluster's GKE ships.
    A tuning given explicitly must be shipped whole (refused otherwise); the default one
    leaves out what is missing and says so in a warning. An unknown version ships nothing
    that is version-gated."""
    options = TUNING_MOUNT_OPTIONS[tuning]
    attributes = TUNING_ATTRIBUTES[tuning]
    lacking = {
        name: row for name in (*options, *attributes) if (row := _lacking(name, facts)) is not None
    }
    if not lacking:
        return tuple(options), dict(attributes)
    if given:
        name, row = next(iter(lacking.items()))
        raise ModelStoreInputError(
            store,
            "tuning",
            tuning,
            f"a tuning whose every option the cluster's GKE ships: {name} needs {row.needs()} "
            f"and {_runs(facts)} ({_REFUSES}); leave tuning unset to get the options the "
            "cluster has",
        )
    left_out = "; ".join(f"{name} (needs {row.needs()})" for name, row in lacking.items())
    pulumi.log.warn(
        f"{store}: tuning {tuning!r} (the default) leaves out {left_out}: {_runs(facts)}, and "
        f"{_REFUSES}"
    )
    return (
        tuple(o for o in options if o not in lacking),
        {k: val for k, val in attributes.items() if k not in lacking},
    )


def options_on_cluster(store: str, options: Sequence[Any], facts: GkeClusterFacts) -> None:
    """Each extra option the table knows is shipped by the cluster's GKE (a known version)."""
    for option in options:
        row = None if v.is_output(option) else _lacking(option, facts)
        if row is not None:
            raise ModelStoreInputError(
                store,
                "extra_mount_options",
                option,
                f"an option the cluster's GKE ships: {row.key} needs {row.needs()} and "
                f"{_runs(facts)} ({_REFUSES})",
            )


def google_account_id(claim_name: str, namespace: str) -> str:
    """A Google service account id (6-30 characters, ``[a-z][a-z0-9-]*[a-z0-9]``), unique
    per claim and namespace."""
    digest = hashlib.sha256(f"{claim_name}/{namespace}".encode()).hexdigest()[:6]
    head = re.sub(r"[^a-z0-9-]", "-", f"{claim_name}-{namespace}")[:21].strip("-")
    if not head or not head[0].isalpha():
        head = f"m{head}"[:21].strip("-")
    return f"{head}-{digest}"


@dataclass(frozen=True)
class _Preflight:
    facts: GkeClusterFacts
    bucket_region: str
    storage_agent: str | None
    """The Cloud Storage service agent's IAM member (CMEK), else None."""
    sidecar: Mapping[str, str]
    reader_options: tuple[str, ...]
    """The readers' tuning options the cluster's GKE ships."""
    reader_attributes: Mapping[str, str]
    """The readers' tuning volume attributes the cluster's GKE ships."""


GCS_BACKUPS = BackupSupport(
    retention=(SOFT_DELETE_MIN // DAY_SECONDS, SOFT_DELETE_MAX // DAY_SECONDS),
    retention_source="Cloud Storage soft delete",
    schedule="none",
    sets=("soft_delete_retention_seconds",),
    fixed=(
        "unset: soft delete and object versions keep every overwritten or deleted object as "
        "it happens (no schedule); retention_days is how long they stay"
    ),
)
"""Cloud Storage soft delete (cloud.google.com/storage/docs/soft-delete: a retention of 7 to 90
days) and object versioning, whose noncurrent versions a lifecycle rule deletes after the
retention (cloud.google.com/storage/docs/lifecycle: ``daysSinceNoncurrentTime``)."""


class GcsFuseModelStore(GcpModelStore[GcsFuseModelStoreArgs], backend="gcs-fuse"):
    """A shared model store in Cloud Storage, mounted with the GKE Cloud Storage FUSE CSI
    driver.

    Every consumer namespace gets a Kubernetes service account (``service_account_name``), a
    bucket-level IAM grant for its workload identity (``roles/storage.objectViewer`` for
    readers, ``roles/storage.objectUser`` for writers; never project-level), and a static PV
    (driver ``gcsfuse.csi.storage.gke.io``, handle ``<bucket>:<pv name>``, ReadOnlyMany and
    ``csi.readOnly`` for readers, ReadWriteMany for writers, reclaim policy Retain) bound to
    its claim. Pods wire it with :meth:`mount_for`: the ``gke-gcsfuse/volumes`` annotation, the
    sidecar's sizing and the service account, and for readers with ``cache_volume`` the volume
    ``gke-gcsfuse-cache`` and the pod ``fsGroup`` the sidecar needs to write to it.

    Identity sameness: workload identity names a namespace and a service account, not a
    cluster. The same namespace and service account name in ANY cluster of the project (the
    workload pool is the project's) gets the same access to the bucket.
    """

    args_type = GcsFuseModelStoreArgs
    cluster_needs = (require_workload_pool, require_gcs_fuse_addon, require_gke_metadata)
    # Cloud Storage through FUSE: vLLM loader settings in kube/serving.py.
    loader_profile = "object-store"
    # Published with the manifest written last: the mount cannot rename a directory in one
    # step (seed.py's PUBLISH cites Mountpoint's and Cloud Storage FUSE's semantics; blobfuse2
    # renames a directory blob by blob).
    model_publish = "manifest-last"
    example_args = MappingProxyType[str, Any]({"cluster_name": "ml-gke", "location": "us-central1"})
    data_bearing_types = ("gcp:storage/bucket:Bucket",)

    bucket_name: pulumi.Output[str]
    """The bucket's name (the PVs' volume handles start with it)."""
    service_account_name: pulumi.Output[str]
    """The Kubernetes service account consumer pods run as, in every consumer namespace."""
    iam_members: pulumi.Output[dict[str, str]]
    """Consumer namespace -> the IAM member granted on the bucket (a workload identity
    principal, or the Google service account with ``identity: google-service-account``)."""
    google_service_accounts: pulumi.Output[dict[str, str]]
    """Consumer namespace -> Google service account email (``identity:
    google-service-account``), else empty."""
    storage_class_name: pulumi.Output[str]
    """The ``storageClassName`` on the PVs and claims."""

    # ---- 1. parse ------------------------------------------------------------------------------

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """A new bucket's soft delete (retention 7 to 90 days) and object versioning with
        noncurrent versions deleted after the retention (versioning only without a
        hierarchical namespace): continuous, so no schedule. An existing bucket is left
        alone."""
        if p["bucket_name"] is not None:
            return existing_left_alone("bucket", "bucket_name is given")
        return GCS_BACKUPS

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.field_rule(valid_bucket_name, "bucket_name")
        for name in (
            "bucket_region",
            "kms_key_name",
            "hierarchical_namespace",
            "soft_delete_retention_seconds",
            "allow_other_region",
        ):
            if name in p:
                p.rule(
                    lambda store, value, bucket, n=name: new_bucket_only(store, n, value, bucket),
                    name,
                    "bucket_name",
                )
        p.field_rule(valid_region, "bucket_region")
        p.field_rule(valid_kms_key, "kms_key_name")
        p.field_rule(valid_soft_delete, "soft_delete_retention_seconds")
        p.field_rule(valid_prefix, "prefix")
        p.field_rule(v.one_of, "identity", IDENTITIES)
        if p["service_account_name"] is None and p.ok("claim_name"):
            p.set("service_account_name", f"{p['claim_name']}-gcs")
        p.field_rule(v.dns_subdomain, "service_account_name")
        p.field_rule(valid_storage_class_name, "storage_class_name")
        p.field_rule(v.one_of, "tuning", TUNINGS)
        # The default tuning takes what the cluster has; one given must be had whole.
        p.derived["tuning_given"] = "tuning" in p
        p.field_rule(v.one_of, "managed_profile", MANAGED_PROFILES)
        for name in ("tuning", "storage_class_name"):
            if name in p:  # given, not defaulted: the profile decides both
                p.rule(
                    lambda store, value, profile, n=name: not_with_profile(
                        store, n, value, profile
                    ),
                    name,
                    "managed_profile",
                )
        p.field_rule(mount_options_kept, "extra_mount_options")
        p.field_rule(valid_sidecar_resources, "sidecar_resources")
        p.field_rule(not_a_sidecar_volume, "claim_name")
        cache_size = p.field_rule(cache_volume_size, "cache_volume")
        p.field_rule(valid_group_id, "cache_fs_group")
        if "cache_fs_group" in p:
            p.rule(
                lambda store, value, volume: _needs_cache_volume(store, value, volume),
                "cache_fs_group",
                "cache_volume",
            )
        p.rule(
            cache_volume_used, "cache_volume", "tuning", "extra_mount_options", "managed_profile"
        )
        p.rule(
            lambda store, _volume, extra: cache_fits_volume(store, cache_size, extra),
            "cache_volume",
            "extra_mount_options",
        )
        if p.ok(STORE_NAME):
            p.rule(store_name_fits_bucket, "bucket_name")

    # ---- 2. preflight: lookups only, once per cluster ------------------------------------------

    def preflight(
        self, spec: Spec[GcsFuseModelStoreArgs], cluster: GkeCluster, opts: Opts
    ) -> _Preflight:
        a, name = spec.args, spec.common.name
        facts = cluster.facts(name)
        bucket_in_cluster_region(name, a.get("bucket_region"), a["allow_other_region"], facts)
        region = a.get("bucket_region") or facts.region
        agent = None
        if a.get("bucket_name") is None and a.get("kms_key_name") is not None:
            kms_key_in_bucket_region(name, a["kms_key_name"], region)
            agent = cluster.lookup(
                ("storage-service-agent", facts.project),
                lambda: gcp.storage.get_project_service_account(project=facts.project).member,
            )
        sidecar = {
            **(AUTOPILOT_SIDECAR if facts.autopilot else STANDARD_SIDECAR),
            **(a.get("sidecar_resources") or {}),
        }
        autopilot_sidecar_limits(name, sidecar, facts.autopilot)
        sidecar_requests_within_limits(name, sidecar)
        if a.get("managed_profile") is not None:
            profile_supported(name, a["managed_profile"], facts)
        # With a managed profile GKE tunes the mounts: the store adds no tuning of its own.
        tuning = "none" if a.get("managed_profile") else a["tuning"]
        options, attributes = reader_tuning(name, tuning, spec.derived["tuning_given"], facts)
        options_on_cluster(name, a.get("extra_mount_options") or (), facts)
        return _Preflight(facts, region, agent, sidecar, options, attributes)

    # ---- 3. provision ---------------------------------------------------------------------------

    def provision_storage(
        self, spec: Spec[GcsFuseModelStoreArgs], cluster: GkeCluster, facts: _Preflight
    ) -> Binding:
        a = spec.args
        self.bucket: Any = None
        if a.get("bucket_name") is None:
            self.bucket = self._new_bucket(spec, facts)
            self.bucket_name: pulumi.Output[str] = self.bucket.name
        else:
            self.bucket_name = pulumi.Output.from_input(a["bucket_name"])
        # Each consumer's grant on the bucket (access.py, consumer_access).
        access = self.access(spec, cluster, facts)
        self.service_account_name = pulumi.Output.from_input(a["service_account_name"])
        self.iam_members = pulumi.Output.from_input(access.values())
        self.google_service_accounts = pulumi.Output.from_input(
            {
                ns: g.resources["google_account"].email
                for ns, g in access.by_namespace.items()
                if "google_account" in g.resources
            }
        )
        profile = a.get("managed_profile")
        # With a managed profile, GKE tunes the mounts from its class: the store adds none.
        class_name = f"{MANAGED_CLASS_PREFIX}{profile}" if profile else a["storage_class_name"]
        self.storage_class_name = pulumi.Output.from_input(class_name)
        return Binding(
            capacity=NOMINAL_CAPACITY,
            source=lambda ns, read_only: _source(
                spec,
                facts,
                self.bucket_name,
                self.volume_name(ns),
                read_only,
                seed=ns == spec.common.loader,
            ),
            reader_access_mode="ReadOnlyMany",
            writer_access_mode="ReadWriteMany",
            storage_class_name=class_name,
            pod=PodSide(
                annotations={
                    VOLUMES_ANNOTATION: "true",
                    **{SIDECAR_ANNOTATION + k: q for k, q in sorted(facts.sidecar.items())},
                },
                **_cache_wiring(a.get("cache_volume"), a["cache_fs_group"]),
            ),
        )

    def consumer_access(
        self, spec: Spec[GcsFuseModelStoreArgs], cluster: GkeCluster, facts: _Preflight
    ) -> ConsumerAccess:
        """Every consumer namespace's service account gets a bucket-level role, read-only
        for readers: through its workload identity principal, or (``identity:
        google-service-account``) a Google service account it impersonates."""
        a, c = spec.args, spec.common

        def grant(ns: str, read_only: bool, consumers: Sequence[Consumer]) -> Grant:
            google = None
            if a["identity"] != "direct":
                google = gcp_identity.GoogleServiceAccount(
                    resource_name=f"{c.name}-gsa-{ns}",
                    user_resource_name=f"{c.name}-gsa-user-{ns}",
                    account_id=google_account_id(c.claim_name, ns),
                    display_name=f"Model store {c.name} ({ns}, {_access(read_only)})",
                )
            return gcp_identity.grant(
                f"{c.name}-access-{ns}",
                facts=facts.facts,
                bucket=self.bucket_name,
                role=READER_ROLE if read_only else WRITER_ROLE,
                consumer=consumers[0],
                parent=self,
                google_account=google,
            )

        return ConsumerAccess(
            service_account=a["service_account_name"],
            grant=grant,
            create_service_accounts=a["create_service_account"],
        )

    def _new_bucket(
        self, spec: Spec[GcsFuseModelStoreArgs], facts: _Preflight
    ) -> "gcp.storage.Bucket":
        """A bucket in the cluster's region: uniform bucket-level access, public access
        prevention enforced, versioning (with the backup, without a hierarchical namespace) and
        soft delete on,
        optional CMEK (the Cloud Storage service agent granted on the key first) and
        hierarchical namespace."""
        a, name = spec.args, spec.common.name
        depends: list[pulumi.Resource] = []
        encryption: Any = None
        if a.get("kms_key_name") is not None:
            assert facts.storage_agent is not None
            # Cloud Storage checks the key when the bucket is created: the grant first
            # (order: key-grant-first).
            depends.append(
                gcp.kms.CryptoKeyIAMMember(
                    f"{name}-bucket-kms",
                    crypto_key_id=a["kms_key_name"],
                    role=KMS_ROLE,
                    member=facts.storage_agent,
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
            encryption = {"default_kms_key_name": a["kms_key_name"]}
        protection = self.data_protection()
        hns, backup = a["hierarchical_namespace"], spec.derived["backup"]
        settings: Any = {
            # Object versioning is one of the features a hierarchical namespace bucket lacks
            # (cloud.google.com/storage/docs/hns-overview, "Limitations"): never both.
            # Versions are the backup: with it off they would pile up unexpired (a model's old
            # revisions, removed under keep_revisions, kept and billed for ever).
            "versioning": None if hns else {"enabled": backup.enabled},
            "soft_delete_policy": {
                "retention_duration_seconds": (
                    backup.retention_days * DAY_SECONDS
                    if backup.enabled
                    else a["soft_delete_retention_seconds"]
                )
            },
            "lifecycle_rules": _noncurrent_expiry(backup) if backup.enabled and not hns else None,
            "hierarchical_namespace": {"enabled": True} if hns else None,
            "encryption": encryption,
        }
        return gcp.storage.Bucket(
            f"{name}-bucket",
            project=facts.facts.project,
            location=facts.bucket_region,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            **settings,
            labels={**self.labels(spec), **self.opt_out_marks()},
            # With protection off the user asked `pulumi destroy` to delete the data.
            force_destroy=not spec.common.protect,
            opts=pulumi.ResourceOptions.merge(
                protection, pulumi.ResourceOptions(depends_on=depends)
            ),
        )


def _source(
    spec: Spec[GcsFuseModelStoreArgs],
    facts: _Preflight,
    bucket_name: pulumi.Output[str],
    volume_name: str,
    read_only: bool,
    seed: bool = False,
) -> dict[str, Any]:
    """A PV's volume source: the bucket under a handle unique per PV, the readers' tuning as
    far as the cluster's GKE ships it (preflight), the prefix and the extra options.

    ``seed``: the loader namespace's PV, the seed Job's alone, owned by the uid and gid the
    seed runs as (``model_jobs.RUN_AS``): gcsfuse shows everything as root's, directories
    0755, unless ``uid``/``gid`` say otherwise (the driver mounts with ``uid=0``, ``gid=0``:
    gcs-fuse-csi-driver pkg/sidecar_mounter/sidecar_mounter_config.go lines 232-233;
    docs/troubleshooting.md, "Permission denied"), and a pod's fsGroup gives it only the
    group, with modes the PV's own options override (pkg/csi_driver/utils.go lines 372-379).
    The extra options' ``uid``, ``gid``, ``file-mode`` and ``dir-mode`` are the consumers':
    left off this PV. Readers see gcsfuse's 0755/0644 (0775/0664 with an fsGroup): every uid
    reads them."""
    a = spec.args
    # With a managed profile GKE tunes the mounts: the store adds no tuning of its own.
    own_tuning = "none" if a.get("managed_profile") else a["tuning"]
    attributes = dict(facts.reader_attributes) if read_only else {}
    if not read_only and own_tuning != "none":
        attributes["skipCSIBucketAccessCheck"] = "true"
    options: list[pulumi.Input[str]] = []  # a given option may be an Output
    if a.get("prefix"):
        options.append(f"only-dir={a['prefix'].strip('/')}")
    extra = list(a.get("extra_mount_options") or ())
    if seed:
        extra = [
            o for o in extra if not isinstance(o, str) or opts_table.parse(o)[0] not in OWNER_FLAGS
        ]
        options += [f"uid={RUN_AS}", f"gid={RUN_AS}"]
    options += [*(facts.reader_options if read_only else ()), *extra]
    csi: dict[str, Any] = {
        "driver": DRIVER,
        # The driver keeps what precedes the first ':' (the bucket); kubelet needs a handle
        # unique per PV, or two PVs of one bucket collide on a node.
        "volumeHandle": pulumi.Output.concat(bucket_name, ":", volume_name),
        # The driver adds gcsfuse's `ro` for a read-only publish.
        "readOnly": read_only,
    }
    if attributes:
        csi["volumeAttributes"] = attributes
    out: dict[str, Any] = {"csi": csi}
    if options:
        out["mountOptions"] = options
    return out


def _cache_wiring(cache_volume: Mapping[str, Any] | None, fs_group: int) -> dict[str, Any]:
    """The readers' pod side of a custom cache volume: the volume under the name the sidecar
    mounts, and an fsGroup so the sidecar (uid/gid 65534) can write to it."""
    if cache_volume is None:
        return {}
    return {
        "reader_volumes": [{"name": CACHE_VOLUME, **cache_volume}],
        "reader_security_context": {"fsGroup": fs_group},
    }


def _access(read_only: bool) -> str:
    return "reader" if read_only else "writer"


def _noncurrent_expiry(backup: Backup) -> list[dict[str, Any]]:
    """Delete a noncurrent object version once it is ``retention_days`` old."""
    return [
        {
            "action": {"type": "Delete"},
            "condition": {
                "days_since_noncurrent_time": backup.retention_days,
                "with_state": "ARCHIVED",
            },
        }
    ]
