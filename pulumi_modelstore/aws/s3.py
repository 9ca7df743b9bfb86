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

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

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
from ..kube.drivers import CsiDriverChart, helm_release
from .cluster import EksClusterFacts, invoke_options, resolve_cluster
from .drivers import (
    MOUNTPOINT_S3_CSI,
    DriverInstall,
    DriverInstallArgs,
    eks_addon,
    parse_driver_install,
)
from .identity import (
    IDENTITIES,
    IdentityFacts,
    ServiceAccountRole,
    resolve_identity,
    service_account_role,
)
from .policies import bucket_access_policy, tls_only_bucket_policy

TYPE_TOKEN = "modelstore:index:MountpointS3ModelStore"

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
DEFAULT_CACHE_SIZE = "10Gi"
DEFAULT_UID = 1000
DEFAULT_GID = 1000
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
    "metadata-ttl",
    "cache",
)
# The driver derives Mountpoint's max-cache-size from the emptyDir's limit (cache_size), and
# it must not exceed that limit (docs/CACHING.md): refused in extra_mount_options.
CACHE_SIZE_OPTION = "max-cache-size"

BUCKET_NAME_RULE = (
    "a valid S3 bucket name (3-63 lowercase letters, digits, '.' and '-', starting and ending "
    "with a letter or digit, no '..', not an IP address, not starting with xn--, sthree- or "
    "amzn-s3-demo-, not ending with -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3)"
)
_BUCKET_CHARS = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_RESERVED_BUCKET_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_BUCKET_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
_QUANTITY = re.compile(r"^[1-9][0-9]*(Mi|Gi|Ti|M|G|T)$")
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_ADDON_VERSION = re.compile(r"^v(\d+\.\d+\.\d+)-eksbuild\.\d+$")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")


class MountpointS3ModelStoreArgs(ModelStoreArgs, DriverInstallArgs, total=False):
    """Arguments of :class:`MountpointS3ModelStore`. Every field is optional but
    ``cluster_name`` (needed for IAM roles and the EKS add-on; only ``driver: none`` with
    driver-level credentials goes without it).

    The driver install (:class:`DriverInstallArgs`): ``driver_namespace`` is also its node
    service account's, and only for ``driver: helm`` (the add-on always installs in
    kube-system); ``eks_addon_version`` (e.g. ``v2.7.0-eksbuild.1``) also gives
    ``driver_version`` its default. With ``driver: none`` no driver-level role is made: the
    installed driver's identity must already reach the bucket."""

    cluster_name: str
    """The EKS cluster whose nodes mount the store. Its OIDC issuer (for IRSA) is looked up
    before deploy, and the Pod Identity associations and add-on are made on it."""
    region: str
    """The bucket's AWS region: where a new bucket is created and Mountpoint's ``region`` mount
    option. Default: the AWS provider's region. Set it for an existing bucket in another
    region (Mountpoint does not correct a region it was given)."""
    bucket_name: str
    """An existing general purpose bucket to serve from, by name: the store then creates no
    bucket resources and leaves its settings alone. Default: a new bucket, named by Pulumi after
    the store, with public access blocked, ACLs disabled (bucket owner enforced), default
    encryption (SSE-S3, or SSE-KMS with ``kms_key_arn``), versioning on and a bucket policy that
    denies requests without TLS; protected unless ``protect`` is False."""
    kms_key_arn: str
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
    :meth:`mount_for`), so readers are read-only in IAM too; or ``driver`` - one read-only role
    on the driver's node service account, serving every mount of the driver on the cluster (so
    it cannot serve a second driver-level store on the same cluster). Default: ``pod`` when the
    store has writers, ``driver`` when it has only readers. ``driver`` with writers is refused:
    the node's credentials are shared by every mount on it, so readers would carry the writers'
    write actions."""
    identity: str
    """How roles reach service accounts: ``irsa`` (default; the cluster's IAM OIDC provider is
    checked before deploy) or ``pod-identity`` (EKS Pod Identity associations; the cluster needs
    the eks-pod-identity-agent add-on, and the driver v2)."""
    service_account_name: str
    """With ``authentication_source: pod``: the service account the store creates in every
    consumer namespace for the workloads to run as. Default: ``<claim_name>-s3``."""
    allow_delete: bool
    """Writers may delete objects (Mountpoint ``allow-delete``; their role gets
    ``s3:DeleteObject``). Default: False. Needs writers."""
    allow_overwrite: bool
    """Writers may replace existing objects (Mountpoint ``allow-overwrite``). Default: False.
    Needs writers."""
    metadata_ttl: str | int
    """How long Mountpoint trusts cached metadata: ``indefinite`` (default: model files are
    immutable; publish a new version under a new prefix or path, and pods see objects added
    after their mount once they remount), ``minimal``, or whole seconds."""
    allow_other: bool
    """Let non-root containers use the mount (Mountpoint ``allow-other``) with files owned by
    ``uid``/``gid``. Default: True. False leaves the mount to root containers only (the driver
    then adds ``allow-root``)."""
    uid: int
    """Owner user id of files and directories as pods see them (Mountpoint ``uid``). Default:
    1000. Needs ``allow_other``."""
    gid: int
    """Owner group id (Mountpoint ``gid``); set it to the pods' fsGroup if they use one.
    Default: 1000. Needs ``allow_other``."""
    cache: str
    """Mountpoint's local data cache (the PV's ``cache`` attribute): ``emptyDir`` (default; on
    the node's disk, one per Mountpoint pod, so replicas restarting on a node read the weights
    from disk instead of S3) or ``none``. Needs driver v2."""
    cache_size: str
    """Size limit of the emptyDir cache, a Kubernetes quantity with its unit (Mi, Gi, Ti, M, G
    or T), e.g. ``"20Gi"``: the PV's ``cacheEmptyDirSizeLimit``; drivers from 2.5.0 cap
    Mountpoint's cache at 95% of it. Default: ``"10Gi"``. Size it to the model and the nodes'
    ephemeral storage."""
    extra_mount_options: Sequence[str]
    """More Mountpoint flags for every PV, without ``--`` (e.g. ``maximum-throughput-gbps
    100``), with lowercase names (the driver's are case-sensitive). Default: none. Options the
    store manages (region, prefix, read-only, allow-*, uid, gid, metadata-ttl, cache, and
    max-cache-size, which follows ``cache_size``) are refused in any case: use the fields."""
    driver_version: str
    """The driver version, e.g. ``2.7.0``: the Helm chart version for ``driver: helm``, and what
    decides whether Pod Identity and the local cache are available (v2 and later). Default: the
    version in ``eks_addon_version`` for the add-on, else the pinned chart version."""
    tags: Mapping[str, str]
    """Tags merged onto every AWS resource. Default: ``Name`` and the store's own tags."""


FIELDS = COMMON_FIELDS | frozenset(MountpointS3ModelStoreArgs.__annotations__)


@dataclass(frozen=True)
class _S3Spec:
    common: StoreCommon
    bucket_name: Any
    kms_key_arn: Any
    prefix: str
    authentication_source: str
    identity: str
    service_account_name: str | None
    allow_delete: bool
    allow_overwrite: bool
    metadata_ttl: str
    allow_other: bool
    uid: int
    gid: int
    cache: str
    cache_size: str
    extra_mount_options: tuple[str, ...]
    install: DriverInstall
    driver_version: str
    tags: dict[str, str]

    @property
    def driver_major(self) -> int:
        return int(self.driver_version.split(".", 1)[0])

    @property
    def driver_role_needed(self) -> bool:
        """A role for the driver's node service account: driver-level credentials (only for a
        store without writers, so the role is read-only) and a driver this store installs (an
        existing driver keeps whatever identity it has)."""
        return self.authentication_source == "driver" and self.install.driver != "none"

    @property
    def needs_cluster(self) -> bool:
        return (
            self.authentication_source == "pod"
            or self.driver_role_needed
            or self.install.driver == "eks-addon"
        )


def _bucket_name(store: str, field: str, value: Any) -> None:
    if v.is_output(value):
        return
    ok = (
        isinstance(value, str)
        and bool(_BUCKET_CHARS.match(value))
        and ".." not in value
        and not value.startswith(_RESERVED_BUCKET_PREFIXES)
        and not value.endswith(_RESERVED_BUCKET_SUFFIXES)
    )
    if ok:
        try:
            ipaddress.ip_address(value)
            ok = False
        except ValueError:
            pass
    if not ok:
        raise ModelStoreInputError(store, field, value, BUCKET_NAME_RULE)


def _prefix(store: str, value: Any) -> None:
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


def _region(store: str, value: Any) -> None:
    if v.is_output(value):
        return
    if not isinstance(value, str) or not _REGION.match(value):
        raise ModelStoreInputError(store, "region", value, "an AWS region code such as us-west-2")


def _id_number(store: str, field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelStoreInputError(store, field, value, "a whole number from 0 (a Linux id)")
    return value


def _metadata_ttl(store: str, value: Any) -> str:
    if isinstance(value, str) and value in METADATA_TTL_PRESETS:
        return value
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return str(int(value))
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return str(value)
    raise ModelStoreInputError(
        store, "metadata_ttl", value, "indefinite, minimal or a positive whole number of seconds"
    )


def _option_key(option: str) -> str:
    """``--uid=1000`` / ``uid 1000`` / ``read-only`` -> the flag's name, as the driver parses
    it (the first of space or ``=`` separates key and value)."""
    return re.split(r"[ =]", option.strip(), maxsplit=1)[0].removeprefix("--")


def _extra_mount_options(store: str, value: Any) -> tuple[Any, ...]:
    """A list of Mountpoint flags the store does not set itself, validated before it becomes a
    tuple: a string would be split into characters, a mapping into its keys."""
    field = "extra_mount_options"
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ModelStoreInputError(store, field, value, "a list of strings")
    v.string_list(store, field, value)
    for option in value:
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
    return tuple(value)


def _driver_version(store: str, args: Mapping[str, Any], driver: str) -> str:
    addon_version = args.get("eks_addon_version")
    if addon_version is not None and driver == "eks-addon":
        match = _ADDON_VERSION.match(str(addon_version))
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
    version = args.get("driver_version", default)
    if not isinstance(version, str) or not _VERSION.match(version):
        raise ModelStoreInputError(
            store, "driver_version", version, "a driver version such as 2.7.0"
        )
    return version


def parse_s3_args(name: str, args: Mapping[str, Any]) -> _S3Spec:
    """Validate every field; raises :class:`ModelStoreInputError` naming field, value and what
    is allowed."""
    check_known_fields(name, args, FIELDS)
    common = parse_common(name, args)

    bucket_name = args.get("bucket_name")
    if bucket_name is not None:
        _bucket_name(name, "bucket_name", bucket_name)
    kms_key_arn = args.get("kms_key_arn")
    if kms_key_arn is not None:
        v.kms_key_arn(
            name,
            "kms_key_arn",
            kms_key_arn,
            alias_note="an alias does not work in an IAM policy's Resource",
        )
    prefix = args.get("prefix", "")
    if "prefix" in args:
        _prefix(name, prefix)
    region = args.get("region")
    if region is not None:
        _region(name, region)

    # Driver-level credentials serve every mount on a node, readers' and writers' alike: a
    # store with writers gets a role per namespace, so readers never hold a write action.
    auth = args.get("authentication_source", "pod" if common.writers else "driver")
    v.one_of(name, "authentication_source", auth, AUTHENTICATION_SOURCES)
    if auth == "driver" and common.writers:
        raise ModelStoreInputError(
            name,
            "authentication_source",
            auth,
            "pod or unset when the store has writers (driver-level credentials are shared by "
            "every mount on the node, so reader mounts would carry write permissions; pod gives "
            "each consumer namespace its own role, read-only for readers)",
        )
    identity = args.get("identity", "irsa")
    v.one_of(name, "identity", identity, IDENTITIES)
    sa_name = args.get("service_account_name")
    if sa_name is not None:
        if auth != "pod":
            raise ModelStoreInputError(
                name, "service_account_name", sa_name, "unset unless authentication_source is pod"
            )
        v.dns_subdomain(name, "service_account_name", sa_name)
    elif auth == "pod":
        sa_name = f"{common.claim_name}-s3"

    allow_delete = v.flag(name, "allow_delete", args.get("allow_delete", False))
    allow_overwrite = v.flag(name, "allow_overwrite", args.get("allow_overwrite", False))
    for field, wanted in (("allow_delete", allow_delete), ("allow_overwrite", allow_overwrite)):
        if wanted and not common.writers:
            raise ModelStoreInputError(
                name, field, True, "False unless the store has writers (readers never write)"
            )
    metadata_ttl = _metadata_ttl(name, args.get("metadata_ttl", "indefinite"))
    allow_other = v.flag(name, "allow_other", args.get("allow_other", True))
    for field in ("uid", "gid"):
        if field in args and not allow_other:
            raise ModelStoreInputError(name, field, args[field], "unset when allow_other is False")
    uid = _id_number(name, "uid", args.get("uid", DEFAULT_UID))
    gid = _id_number(name, "gid", args.get("gid", DEFAULT_GID))

    cache = args.get("cache", "emptyDir")
    v.one_of(name, "cache", cache, CACHE_TYPES)
    cache_size = args.get("cache_size", DEFAULT_CACHE_SIZE)
    if cache == "none" and "cache_size" in args:
        raise ModelStoreInputError(name, "cache_size", cache_size, "unset when cache is none")
    if not isinstance(cache_size, str) or not _QUANTITY.match(cache_size):
        raise ModelStoreInputError(
            name,
            "cache_size",
            cache_size,
            "a Kubernetes quantity with a unit (Mi, Gi, Ti, M, G or T), e.g. '10Gi'",
        )

    extra_mount_options = _extra_mount_options(name, args.get("extra_mount_options"))

    # driver_version hinges on the install (the add-on's version gives its default): checked
    # where it always was, between the driver namespace and the add-on configuration.
    driver_version = ""

    def check_driver_version(driver: str, _namespace: str) -> None:
        nonlocal driver_version
        driver_version = _driver_version(name, args, driver)

    helm_only = "unset unless driver is helm"
    install = parse_driver_install(
        name,
        args,
        namespace_unset_for={"eks-addon": helm_only, "none": helm_only},
        check=check_driver_version,
        # Checked below with every other reason the store needs the cluster.
        check_cluster_name=False,
    )

    tags = v.string_map(name, "tags", args.get("tags"))
    spec = _S3Spec(
        common=common,
        bucket_name=bucket_name,
        kms_key_arn=kms_key_arn,
        prefix=prefix,
        authentication_source=auth,
        identity=identity,
        service_account_name=sa_name,
        allow_delete=allow_delete,
        allow_overwrite=allow_overwrite,
        metadata_ttl=metadata_ttl,
        allow_other=allow_other,
        uid=uid,
        gid=gid,
        cache=cache,
        cache_size=cache_size,
        extra_mount_options=extra_mount_options,
        install=install,
        driver_version=driver_version,
        tags=store_tags(name, tags),
    )
    _check_driver_features(name, spec)
    if spec.needs_cluster and not args.get("cluster_name"):
        raise ModelStoreInputError(
            name,
            "cluster_name",
            args.get("cluster_name"),
            "the EKS cluster's name (needed for its IAM roles and driver add-on)",
        )
    return spec


def _check_driver_features(name: str, spec: _S3Spec) -> None:
    """Pod Identity and the emptyDir cache exist from driver v2 on (v1 ran Mountpoint under
    systemd on the host; its last release is 1.15.0)."""
    if spec.driver_major >= POD_IDENTITY_MIN_MAJOR:
        return
    makes_roles = spec.authentication_source == "pod" or spec.driver_role_needed
    if spec.identity == "pod-identity" and makes_roles:
        raise ModelStoreInputError(
            name,
            "identity",
            spec.identity,
            f"irsa with Mountpoint CSI driver {spec.driver_version} (EKS Pod Identity needs "
            "driver 2.0.0 or newer)",
        )
    if spec.cache != "none":
        raise ModelStoreInputError(
            name,
            "cache",
            spec.cache,
            f"none with Mountpoint CSI driver {spec.driver_version} (the cache volume attribute "
            "needs driver 2.0.0 or newer)",
        )


class MountpointS3ModelStore(ModelStore):
    """A shared model store in Amazon S3, mounted with Mountpoint for Amazon S3 on EKS.

    Every consumer namespace gets a static PV (driver ``s3.csi.aws.com``, ReadOnlyMany and the
    ``read-only`` mount option for readers, ReadWriteMany for writers, reclaim policy Retain) and
    a claim bound to it. A new bucket is hardened and protected by default. Readers never hold a
    write action: a store with writers uses pod-level credentials, a role per consumer namespace
    (see ``authentication_source``).
    """

    driver_chart = MOUNTPOINT_S3_CSI

    @staticmethod
    def validate(resource_name: str, args: Mapping[str, Any]) -> None:
        """Check every input that needs no lookup (the constructor's own first step); raises
        :class:`ModelStoreInputError`."""
        parse_s3_args(resource_name, args)

    bucket_name: pulumi.Output[str]
    """The bucket's name, the PVs' ``bucketName`` attribute."""
    bucket_arn: pulumi.Output[str]
    """The bucket's ARN."""
    region: pulumi.Output[str]
    """The bucket's region, Mountpoint's ``region`` mount option."""
    driver_role_arn: pulumi.Output[str | None]
    """The role on the driver's node service account (driver-level credentials), else None."""
    pod_role_arns: pulumi.Output[dict[str, str]]
    """Consumer namespace -> role ARN (``authentication_source: pod``), else empty."""
    service_account_name: pulumi.Output[str | None]
    """The service account workloads run as (``authentication_source: pod``), else None."""

    def __init__(
        self,
        resource_name: str,
        args: MountpointS3ModelStoreArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        raw: Mapping[str, Any] = dict(args or {})
        spec = parse_s3_args(resource_name, raw)
        # Preflight, before anything registers: cluster facts, then the identity's (IRSA needs
        # the cluster's OIDC provider).
        cluster: EksClusterFacts | None = None
        identity: IdentityFacts | None = None
        if spec.needs_cluster:
            cluster = resolve_cluster(
                resource_name,
                {"cluster_name": raw.get("cluster_name"), "region": raw.get("region")},
                opts,
            )
            region: Any = cluster.region
            if spec.authentication_source == "pod" or spec.driver_role_needed:
                identity = resolve_identity(resource_name, spec.identity, cluster, opts)
        else:
            region = raw.get("region") or aws.get_region(opts=invoke_options(opts)).region
        partition = None
        if spec.bucket_name is not None:
            partition = aws.get_partition(opts=invoke_options(opts)).partition

        super().__init__(TYPE_TOKEN, resource_name, spec.common, opts)
        self._spec = spec
        self.cluster = cluster

        hardening: list[pulumi.Resource] = []
        self.bucket: aws.s3.Bucket | None = None
        if spec.bucket_name is None:
            self.bucket, hardening = self._new_bucket(resource_name, spec, region)
            bucket_name: pulumi.Output[str] = self.bucket.bucket
            bucket_arn: pulumi.Output[str] = self.bucket.arn
        else:
            bucket_name = pulumi.Output.from_input(spec.bucket_name)
            bucket_arn = pulumi.Output.concat("arn:", partition or "aws", ":s3:::", bucket_name)

        self.driver_role: ServiceAccountRole | None = None
        self.pod_roles: dict[str, ServiceAccountRole] = {}
        if spec.driver_role_needed:
            assert identity is not None
            # The driver's node service account mounts every PV of this driver on a node with
            # this one role, so it would hand a writer's actions to every reader mount: the
            # store uses it only without writers (parse_s3_args defaults a store with writers
            # to pod-level credentials and refuses driver-level ones), and it is read-only.
            self.driver_role = service_account_role(
                f"{resource_name}-driver",
                facts=identity,
                namespace=spec.install.namespace,
                service_account=NODE_SERVICE_ACCOUNT,
                policy=bucket_access_policy(
                    bucket_arn,
                    spec.prefix,
                    write=False,
                    delete=False,
                    kms_key_arn=spec.kms_key_arn,
                ),
                description=f"Mountpoint S3 CSI driver (node) for model store {resource_name}",
                tags=spec.tags,
                parent=self,
            )
        if spec.authentication_source == "pod":
            assert identity is not None and spec.service_account_name is not None
            for ns, read_only in spec.common.consumers:
                self.pod_roles[ns] = service_account_role(
                    f"{resource_name}-pod-{ns}",
                    facts=identity,
                    namespace=ns,
                    service_account=spec.service_account_name,
                    policy=bucket_access_policy(
                        bucket_arn,
                        spec.prefix,
                        write=not read_only,
                        delete=not read_only and spec.allow_delete,
                        kms_key_arn=spec.kms_key_arn,
                    ),
                    description=(
                        f"Mountpoint S3 {'reader' if read_only else 'writer'} in {ns} for "
                        f"model store {resource_name}"
                    ),
                    tags=spec.tags,
                    parent=self,
                )

        self.driver_install = self._install_driver(resource_name, spec, cluster)

        def source(namespace: str, read_only: bool) -> dict[str, Any]:
            attributes: dict[str, Any] = {
                "bucketName": bucket_name,
                "authenticationSource": spec.authentication_source,
            }
            if spec.cache == "emptyDir":
                attributes["cache"] = "emptyDir"
                attributes["cacheEmptyDirSizeLimit"] = spec.cache_size
            return {
                "csi": {
                    "driver": MOUNTPOINT_S3_CSI.driver,
                    # kubelet handles a volume once per driver^volumeHandle: PVs sharing a handle
                    # would collide on a node. The PV name is unique in the cluster.
                    "volumeHandle": pulumi.Output.concat(
                        bucket_name, "-", self.volume_name(namespace)
                    ),
                    "readOnly": read_only,
                    "volumeAttributes": attributes,
                },
                # Readers and writers differ in their Mountpoint flags, so each PV carries its
                # own (merged into the PV spec with the source).
                "mountOptions": self._mount_options(spec, region, read_only),
            }

        ready: list[pulumi.Resource] = [*hardening]
        if self.driver_install is not None:
            ready.append(self.driver_install)
        for role in [self.driver_role, *self.pod_roles.values()]:
            if role is not None:
                ready += role.ready
        self._bind_consumers(
            capacity=NOMINAL_CAPACITY,
            access_mode=lambda read_only: "ReadOnlyMany" if read_only else "ReadWriteMany",
            source=source,
            depends_on=ready,
        )

        self.service_accounts: dict[str, k8s.core.v1.ServiceAccount] = {}
        if spec.authentication_source == "pod":
            assert spec.service_account_name is not None
            self._service_account_name = spec.service_account_name
            for ns, role in self.pod_roles.items():
                namespace = self.namespaces.get(ns)
                self.service_accounts[ns] = k8s.core.v1.ServiceAccount(
                    f"{resource_name}-sa-{ns}",
                    metadata={
                        "name": spec.service_account_name,
                        "namespace": ns,
                        "labels": spec.common.labels,
                        "annotations": role.service_account_annotations(),
                    },
                    opts=pulumi.ResourceOptions(
                        parent=self, depends_on=[namespace] if namespace else []
                    ),
                )

        self.bucket_name = bucket_name
        self.bucket_arn = bucket_arn
        self.region = pulumi.Output.from_input(region)
        self.driver_role_arn = (
            self.driver_role.arn if self.driver_role is not None else pulumi.Output.from_input(None)
        )
        namespaces = list(self.pod_roles)
        self.pod_role_arns = pulumi.Output.all(*(r.arn for r in self.pod_roles.values())).apply(
            lambda arns: dict(zip(namespaces, arns, strict=True))
        )
        self.service_account_name = pulumi.Output.from_input(spec.service_account_name)
        self._finish(
            {
                "bucketName": self.bucket_name,
                "bucketArn": self.bucket_arn,
                "region": self.region,
                "driverRoleArn": self.driver_role_arn,
                "podRoleArns": self.pod_role_arns,
                "serviceAccountName": self.service_account_name,
            }
        )

    @staticmethod
    def _mount_options(spec: _S3Spec, region: Any, read_only: bool) -> list[Any]:
        # Always explicit: IMDS may be out of reach from Mountpoint pods, and with pod-level
        # credentials the driver takes the STS region from this option too.
        options: list[Any] = [pulumi.Output.concat("region ", region)]
        if spec.prefix:
            options.append(f"prefix {spec.prefix}")
        options.append(f"metadata-ttl {spec.metadata_ttl}")
        if spec.allow_other:
            options += ["allow-other", f"uid={spec.uid}", f"gid={spec.gid}"]
        if read_only:
            options.append("read-only")
        else:
            if spec.allow_delete:
                options.append("allow-delete")
            if spec.allow_overwrite:
                options.append("allow-overwrite")
        return options + list(spec.extra_mount_options)

    def _new_bucket(
        self, name: str, spec: _S3Spec, region: Any
    ) -> tuple[aws.s3.Bucket, list[pulumi.Resource]]:
        """A bucket with public access blocked, ACLs off, default encryption, versioning and a
        TLS-only policy. Only the bucket holds data, so only it is protected."""
        bucket = aws.s3.Bucket(
            f"{name}-bucket",
            region=region,
            # With protection off the user asked `pulumi destroy` to delete the data: a bucket
            # with objects (and versions) cannot be deleted otherwise.
            force_destroy=not spec.common.protect,
            tags=spec.tags,
            opts=self.data_protection(),
        )
        child = pulumi.ResourceOptions(parent=self)
        public_access = aws.s3.BucketPublicAccessBlock(
            f"{name}-bucket-public-access",
            bucket=bucket.id,
            region=region,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=child,
        )
        ownership = aws.s3.BucketOwnershipControls(
            f"{name}-bucket-ownership",
            bucket=bucket.id,
            region=region,
            rule={"object_ownership": "BucketOwnerEnforced"},
            opts=child,
        )
        kms = spec.kms_key_arn is not None
        encryption = aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-bucket-encryption",
            bucket=bucket.id,
            region=region,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=(
                        aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                            sse_algorithm="aws:kms" if kms else "AES256",
                            kms_master_key_id=spec.kms_key_arn,
                        )
                    ),
                    # An S3 bucket key cuts KMS requests (and cost) for SSE-KMS.
                    bucket_key_enabled=kms,
                )
            ],
            opts=child,
        )
        versioning = aws.s3.BucketVersioning(
            f"{name}-bucket-versioning",
            bucket=bucket.id,
            region=region,
            versioning_configuration={"status": "Enabled"},
            opts=child,
        )
        # S3 rejects concurrent configuration changes on one bucket ("A conflicting
        # conditional operation is currently in progress"): the policy goes last, after every
        # other configuration of the bucket.
        configuration: list[pulumi.Resource] = [public_access, ownership, encryption, versioning]
        policy = aws.s3.BucketPolicy(
            f"{name}-bucket-policy",
            bucket=bucket.id,
            region=region,
            policy=tls_only_bucket_policy(bucket.arn),
            opts=pulumi.ResourceOptions(parent=self, depends_on=configuration),
        )
        return bucket, [*configuration, policy]

    def _install_driver(
        self, name: str, spec: _S3Spec, cluster: EksClusterFacts | None
    ) -> pulumi.Resource | None:
        if spec.install.driver == "none":
            return None
        role = self.driver_role
        # The driver's pods must not start before their permissions exist: with IRSA they wait
        # for the role's policy; with Pod Identity for the association (made after the policy),
        # since EKS hands Pod Identity credentials to pods when they are created.
        depends: list[pulumi.Resource] = []
        if role is not None:
            depends += role.ready
        if spec.install.driver == "eks-addon":
            assert cluster is not None
            return eks_addon(
                f"{name}-s3-csi-driver",
                MOUNTPOINT_S3_CSI,
                cluster_name=cluster.name,
                install=spec.install,
                role=role,
                tags=spec.tags,
                parent=self,
                depends_on=depends,
            )
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
                # EKS injects Pod Identity credentials only into pods created after the
                # association exists: the release waits for it, and labelling the node pods
                # with it rolls them when the association is replaced.
                node["podLabels"] = {
                    "modelstore.pulumi.com/pod-identity-association": (
                        role.association.association_id
                    )
                }
        chart: CsiDriverChart = dataclasses.replace(
            MOUNTPOINT_S3_CSI, version=spec.driver_version, app_version=spec.driver_version
        )
        return helm_release(
            f"{name}-s3-csi-driver",
            chart,
            namespace=spec.install.namespace,
            values={"node": node},
            parent=self,
            depends_on=depends,
        )
