"""Azure Blob model store on AKS (blobfuse2): a hardened storage account (or an existing one)
that denies every network but the cluster's node subnets (or is reached through a private
endpoint; every network only on the explicit ``allow_all_networks``), a private container,
user-assigned identities split by access level with a federated credential per consumer
service account, container-scoped data roles, and a static PV/PVC per consumer namespace on the
blob CSI driver (``blob.csi.azure.com``, ``protocol: fuse2``).

Mount mode, from the driver's code (kubernetes-sigs/blob-csi-driver, tags v1.27.0, v1.27.7 and
master 0744a60b; paths below are that repository's):

- ``mountWithWorkloadIdentityToken: "true"`` with ``clientID`` and ``tenantID`` (the store's
  default, ``mount_mode: workload-identity-token``): ``pkg/blob/blob.go`` ``GetAuthEnv`` writes
  the pod's projected service account token to a file and hands blobfuse2
  ``AZURE_OAUTH_TOKEN_FILE`` (workload identity credential); the driver makes no ARM call and
  reads no key. Data roles scoped to the container are enough (blobfuse2 lists blobs at mount,
  then reads them), and the account can refuse shared keys. The token is refreshed only from
  driver v1.27.0 (CSIDriver ``requiresRepublish: true`` and ``tokenRequests`` with audience
  ``api://AzureADTokenExchange``, ``deploy/csi-blob-driver.yaml`` at v1.27.0); v1.25.6+ and
  v1.26.3+ accept the attribute but pass a token that expires. Managed AKS runs driver v1.27
  from Kubernetes 1.34 (1.33 ships v1.26): checked before deploy. Upstream still calls the
  attribute preview.
- ``clientID`` alone (``mount_mode: account-key``, the fallback): ``GetAuthEnv`` exchanges the
  token (``GetStorageAccesskeyFromServiceAccountToken``) and calls ARM ListKeys, then mounts
  with the account key. That needs ``listkeys/action`` at ACCOUNT scope (Storage Account Key
  Operator Service Role) and shared keys on, and the key reads and writes the whole account:
  readers then hold a key that can write.
- On this path ``pkg/blob/nodeserver.go`` ``NodePublishVolume`` calls ``NodeStageVolume``
  directly per pod and adds ``-o ro`` only from a read-only ACCESS MODE
  (``isReadOnlyFromCapability``); the pod's or claim's ``readOnly`` is applied on the bind
  path only, which workload identity never reaches. The kubelet sends the PV's first access
  mode: readers' PVs list ``ReadOnlyMany`` alone.
- ``GetContainerInfo`` (``pkg/blob/blob.go``) reads handle fields 0-2 (resource group,
  account, container), 4 (secret namespace) and 5 (subscription, when not empty); field 3 is
  never read (the controller puts a volume uuid there): the per-PV suffix goes there.
- Attribute keys are case-insensitive and the driver refuses two spellings of one key: each is
  given once.

blobfuse2 (Azure/azure-storage-fuse ``cmd/mount.go``, ``component/block_cache``): block cache,
file cache, preload and streaming are mutually exclusive; an unset block cache pool takes 60%
(2.5.4+) or 80% of free (earlier) node memory per mount, outside pod limits; prefetch is 0 or at
least 11 and ``prefetch x block size <= pool`` (not reduced for you once the pool is set).
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.
# Signatures naming a provider SDK class quote it (keeps the SDK's modules lazily loaded).

import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import pulumi

from .. import validation as v
from ..access import PER_ACCESS, PER_NAMESPACE, Consumer, ConsumerAccess, Grant
from ..backup import Backup, BackupSupport, existing_left_alone
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..store import STORE_NAME, Binding, Spec
from . import identity as ident
from . import network as net
from . import validation as az_v
from .cluster import (
    AksCluster,
    AksClusterFacts,
    require_blob_csi_driver,
    require_oidc_issuer,
    require_workload_identity,
)
from .storage import account_baseline, account_rules, metadata_marks
from .store import AzureModelStore, AzureModelStoreArgs, Placement

DRIVER = "blob.csi.azure.com"
# Blob storage has no size: Kubernetes requires a capacity on PV and claim, the driver ignores
# it. Small, so the claims do not eat into a `requests.storage` quota.
NOMINAL_CAPACITY = "1Gi"
TOKEN_MODE, KEY_MODE = "workload-identity-token", "account-key"
MOUNT_MODES = (TOKEN_MODE, KEY_MODE)
IDENTITY_PER = ("access", "namespace")
# StorageV2 with block blobs: the standard redundancies (Premium_* StorageV2 serves page blobs
# only; premium block blobs need a BlockBlobStorage account).
SKUS = (
    "Standard_LRS",
    "Standard_ZRS",
    "Standard_GRS",
    "Standard_RAGRS",
    "Standard_GZRS",
    "Standard_RAGZRS",
)
TOKEN_MODE_MIN_K8S = (1, 34)
"""Managed AKS runs blob CSI driver v1.27 (refreshed tokens) from Kubernetes 1.34."""
TOKEN_MODE_MIN_DRIVER = "v1.27.0"
SOFT_DELETE_MAX_DAYS = 365
MIN_PREFETCH = 11

# blobfuse2 options the driver sets itself, or that break its mount (pkg/blob/blob.go
# appendDefaultMountOptions and allowedEphemeralMountOptions; authentication comes from the
# volume attributes).
DRIVER_OPTIONS = (
    "--container-name",
    "--tmp-path",
    "--config-file",
    "--secure-config",
    "--passphrase",
    "--log-file-path",
    "--use-https",
    "--account-name",
    "--account-key",
    "--auth-type",
    "--sas",
    "--client-id",
    "--client-secret",
    "--tenant-id",
    "--identity-client-id",
    "--identity-object-id",
    "--identity-resource-id",
    "--msi-endpoint",
    "--aad-endpoint",
)
# Pipelines exclusive with the readers' block cache.
CONFLICTING_PREFIXES = ("--file-cache", "--preload", "--streaming", "--stream")
# What the store sets from its fields (block cache, attribute caching, read-only from the
# access mode, allow_other always).
STORE_OPTIONS = (
    "--block-cache",
    "--use-attr-cache",
    "--attr-cache-timeout",
    "--attr-timeout",
    "--entry-timeout",
    "--negative-timeout",
    "--read-only",
    "--allow-other",
    "-o ro",
    "-o rw",
    "-o allow_other",
    "-o attr_timeout",
    "-o entry_timeout",
    "-o negative_timeout",
)


class AzureBlobModelStoreArgs(AzureModelStoreArgs, total=False):
    """Arguments of :class:`AzureBlobModelStore`. ``cluster_name`` and
    ``cluster_resource_group_name`` (or ``cluster``) are required; everything else has a
    default."""

    storage_account_name: str
    """The storage account's name (3-24 lowercase letters and digits, unique in Azure), known
    before deploy (it is in the volume handle). Default: a name made of "ms", the store name's
    letters and 8 hex digits of a hash of the subscription, resource group and store name
    (``default_account_name``)."""
    create_storage_account: bool
    """Create the account. ``false`` takes an existing one by ``storage_account_name`` (required
    then) and leaves its settings alone: no lookup, no account resources, and its network
    rules as they are (the network fields are refused): they must admit the cluster's nodes,
    or the account refuses every mount; with the workload-identity-token mode the account must
    allow Entra ID auth, with ``account-key`` it must allow shared keys. Default: ``true``:
    StorageV2, HTTPS only, TLS 1.2, no anonymous blob access, shared keys off (on only with
    ``account-key``), other networks denied (see ``allowed_subnet_ids``), in the store's
    region, protected unless ``protect`` is ``false``."""
    sku_name: str
    """The new account's redundancy: one of Standard_LRS, Standard_ZRS, Standard_GRS,
    Standard_RAGRS, Standard_GZRS, Standard_RAGZRS. Default: ``Standard_LRS``."""
    infrastructure_encryption: bool
    """Encrypt the new account twice (infrastructure encryption), chosen at creation only
    (changing it replaces the account). Default: ``false``."""
    allowed_subnet_ids: Sequence[pulumi.Input[str]]
    """The subnets (ARM ids) the new account admits by virtual network rule, denying every
    other network; each must have the ``Microsoft.Storage`` or ``Microsoft.Storage.Global``
    service endpoint (checked before deploy). Default: the cluster's node subnets (a cluster
    on the AKS-managed VNet has none the store can name: give these,
    ``private_endpoint_subnet_id`` or ``allow_all_networks``)."""
    private_endpoint_subnet_id: pulumi.Input[str]
    """Reach the new account through a private endpoint in this subnet (ARM id) instead of
    virtual network rules: the store creates the endpoint (group ``blob``) and its zone group,
    and turns the account's public network access off. The private DNS zone
    ``privatelink.blob.core.windows.net`` is ``private_dns_zone_id``, or one the cluster's
    Blob stores share per resource group, linked once to each endpoint subnet's virtual
    network. The subnet must be in the cluster's subscription, and the endpoint is made in the
    cluster's region (Azure creates an endpoint in its virtual network's subscription and
    region only). Not with ``allowed_subnet_ids``. Default: none (virtual network rules)."""
    private_dns_zone_id: pulumi.Input[str]
    """With ``private_endpoint_subnet_id``: an existing private DNS zone named
    ``privatelink.blob.core.windows.net`` (ARM id ``/subscriptions/<sub>/resourceGroups/<rg>/
    providers/Microsoft.Network/privateDnsZones/privatelink.blob.core.windows.net``, e.g. a
    hub's central zone) for the endpoint's zone group. The store then creates no zone and no
    virtual network link: the zone's owner must link the endpoint subnet's virtual network to
    it, or mounts resolve the account's public address, which refuses them. Default: none
    (the store creates the zone in ``resource_group_name``, shared by the cluster's Blob
    stores, and links it to the endpoint subnet's virtual network)."""
    allow_all_networks: bool
    """An explicit opt-in to admit every network to the new account's public endpoint
    (default action Allow): access then rests on authentication alone (Entra ID in the default
    mount mode, the account keys too with ``account-key``). Not with ``allowed_subnet_ids`` or
    ``private_endpoint_subnet_id``. Default: ``false`` (only the node subnets, or the private
    endpoint)."""
    blob_soft_delete_days: int
    """Days deleted or overwritten blobs stay recoverable (0 turns soft delete off; at most
    365), billed as stored meanwhile. Default: ``7``."""
    container_soft_delete_days: int
    """Days a deleted container stays recoverable (0 off; at most 365). Default: ``7``."""
    versioning: bool
    """Keep every overwritten blob as a version (each billed until deleted). Default:
    ``false`` (soft delete already recovers deletes and overwrites for its days)."""
    container_name: str
    """The private container holding the models. Default: the store's name, lowercase, with
    anything but letters and digits made '-'."""
    create_container: bool
    """Create the container (private, protected unless ``protect`` is ``false``). ``false`` takes an
    existing one by ``container_name``. Default: ``true``."""
    mount_mode: str
    """How blobfuse2 authenticates (the blob CSI driver's ``pkg/blob/blob.go`` ``GetAuthEnv``,
    v1.27.x). ``workload-identity-token``: the pod's own token
    (``mountWithWorkloadIdentityToken``), data roles on the container alone (Storage Blob Data
    Reader for readers, Contributor for writers) and shared keys off; needs blob CSI driver
    v1.27 or later (refreshed tokens), i.e. AKS Kubernetes 1.34 or later (checked before
    deploy).
    ``account-key``: the fallback for older clusters: the driver lists the account's keys
    (Storage Account Key Operator Service Role at ACCOUNT scope, shared keys on) and mounts with
    a key, which can write the whole account: readers then hold write access. Default:
    ``workload-identity-token``."""
    identity_per: str
    """``access``: one user-assigned identity for the store's readers and one for its writers
    (none for a store without writers); each holds at most 20 federated credentials, so at most
    20 namespaces of each. ``namespace``: one identity per consumer namespace. Default:
    ``access``."""
    service_account_name: str
    """The Kubernetes service account consumer pods run as, in every consumer namespace,
    annotated ``azure.workload.identity/client-id``. Default: named ``<claim_name>-blob``."""
    create_service_account: bool
    """Create that service account in every consumer namespace. ``false`` takes existing ones by
    name (the federated credentials name them all the same; annotate them yourself for Azure
    SDKs). Default: ``true``."""
    block_cache_block_size_mib: int
    """The readers' blobfuse2 block cache block size in MiB (``--block-cache-block-size``).
    Default: ``16``. (Formerly ``block_cache_block_size_mb``, still accepted with a deprecation
    warning.)"""
    block_cache_pool_size_mib: int
    """The readers' block cache memory pool in MiB (``--block-cache-pool-size``), per mount
    (per pod): blobfuse2 runs on the node outside pod limits and would otherwise take 60-80% of
    the node's memory. Default: ``4096``. (Formerly ``block_cache_pool_size_mb``, still
    accepted with a deprecation warning.)"""
    block_cache_prefetch: int
    """Blocks the readers' block cache reads ahead: 0 (off) or at least 11, and prefetch x
    block size must fit the pool. Default: ``32``."""
    attribute_cache_seconds: int
    """How long the readers cache file attributes and names (blobfuse2 attribute cache and the
    kernel's attribute and entry caches); model files are immutable, so long. Default:
    ``3600``."""
    negative_cache_seconds: int
    """How long a reader remembers that a file does not exist (a model published meanwhile
    stays invisible that long). Default: ``60``."""
    extra_mount_options: Sequence[pulumi.Input[str]]
    """More blobfuse2 options for every PV, one per item (``--log-level=LOG_WARNING``,
    ``-o umask=0022``). Default: none. Refused: what the driver sets itself or what breaks its
    mount (--container-name, --tmp-path, --config-file, authentication), the file cache,
    preload and streaming (exclusive with the readers' block cache), and what the store sets
    (block cache and attribute caching fields, ``-o ro``/``rw`` from the access mode,
    ``allow_other``)."""


# ---- rules --------------------------------------------------------------------------------


def default_container_name(store: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "-", store.lower()).strip("-")
    return name[:63].rstrip("-")


def store_name_fits_container(store: str, container_name: Any) -> None:
    if container_name is not None:
        return
    try:
        az_v.container_name(store, "container_name", default_container_name(store))
    except ModelStoreInputError:
        raise ModelStoreInputError(
            store,
            STORE_NAME,
            store,
            f"a name that makes {az_v.CONTAINER_NAME_RULE} (or give container_name)",
        ) from None


def soft_delete_days(store: str, field: str, value: int) -> None:
    if not 0 <= value <= SOFT_DELETE_MAX_DAYS:
        raise ModelStoreInputError(store, field, value, f"0 (off) to {SOFT_DELETE_MAX_DAYS} days")


def all_networks_alone(store: str, all_networks: bool, allowed: Any, endpoint: Any) -> None:
    """Every network, or the named subnets, or a private endpoint: one path, never two."""
    if all_networks and (allowed is not None or endpoint is not None):
        other = "allowed_subnet_ids" if allowed is not None else "private_endpoint_subnet_id"
        raise ModelStoreInputError(
            store,
            "allow_all_networks",
            all_networks,
            f"false when {other} is given (the account then denies every other network)",
        )


def non_negative(store: str, field: str, value: int) -> None:
    if value < 0:
        raise ModelStoreInputError(store, field, value, "a whole number of seconds, 0 or more")


def valid_prefetch(store: str, field: str, value: int) -> None:
    if value != 0 and value < MIN_PREFETCH:
        raise ModelStoreInputError(
            store, field, value, f"0 (off) or at least {MIN_PREFETCH} (blobfuse2's minimum)"
        )


def prefetch_fits_pool(store: str, pool: int, block: int, prefetch: int) -> None:
    """blobfuse2 refuses ``prefetch x block size > pool`` ("memory limit too low for configured
    prefetch") and, once the pool is set, does not lower prefetch for you."""
    if prefetch * block > pool:
        raise ModelStoreInputError(
            store,
            "block_cache_pool_size_mib",
            pool,
            f"at least block_cache_prefetch x block_cache_block_size_mib = {prefetch} x {block} "
            f"= {prefetch * block} MiB (blobfuse2 refuses a smaller pool)",
        )


def identities_hold_their_credentials(
    store: str, identity_per: str, readers: Any, writers: Any
) -> None:
    """One identity per access level holds a federated credential per namespace of that
    level: at most 20 (Entra's limit per identity)."""
    if identity_per != "access":
        return
    for field, namespaces in (("readers", readers or ()), ("writers", writers or ())):
        if len(namespaces) > ident.MAX_FEDERATED_CREDENTIALS:
            raise ModelStoreInputError(
                store,
                field,
                f"{len(namespaces)} namespaces",
                f"at most {ident.MAX_FEDERATED_CREDENTIALS} namespaces with identity_per "
                f"access (Azure allows {ident.MAX_FEDERATED_CREDENTIALS} federated credentials "
                "on one identity), or set identity_per to namespace",
            )


def _option_keys(option: str) -> list[str]:
    """The names in one blobfuse2 option: ``--x=1`` -> ``--x``; ``-o a=1,b`` -> ``-o a``,
    ``-o b``."""
    s = option.strip()
    if s.startswith("-o"):
        return [f"-o {item.split('=', 1)[0].strip()}" for item in s[2:].strip().split(",")]
    return [s.split("=", 1)[0]]


def mount_options_kept(store: str, field: str, options: Sequence[Any]) -> None:
    for option in options:
        if v.is_output(option):
            continue
        body = option.strip()
        body = body[2:].strip() if body.startswith("-o") else body
        if not body or any(c.isspace() for c in body):
            raise ModelStoreInputError(
                store, field, option, "one blobfuse2 option per item, without spaces ('-o x' aside)"
            )
        for key in _option_keys(option):
            if key in DRIVER_OPTIONS:
                raise ModelStoreInputError(
                    store,
                    field,
                    option,
                    "a blobfuse2 option the blob CSI driver leaves to the user (it sets "
                    "--container-name, --tmp-path and the authentication itself; --config-file, "
                    "--secure-config, --passphrase, --log-file-path and --use-https break its "
                    "mount)",
                )
            if key.startswith(CONFLICTING_PREFIXES):
                raise ModelStoreInputError(
                    store,
                    field,
                    option,
                    "a blobfuse2 option that keeps the readers' block cache (file cache, "
                    "preload and streaming are exclusive with it)",
                )
            if key.startswith("--block-cache") or key in STORE_OPTIONS:
                raise ModelStoreInputError(
                    store,
                    field,
                    option,
                    "a blobfuse2 option the store does not set itself (block cache and "
                    "attribute caching follow their fields, -o ro/rw the access mode, "
                    "allow_other is always on)",
                )


# ---- preflight (needs the cluster's facts) --------------------------------------------------


def token_mode_supported(store: str, mode: str, facts: AksClusterFacts) -> None:
    if mode == TOKEN_MODE and not facts.version_at_least(*TOKEN_MODE_MIN_K8S):
        minimum = ".".join(map(str, TOKEN_MODE_MIN_K8S))
        raise ModelStoreInputError(
            store,
            "mount_mode",
            mode,
            f"{KEY_MODE} on cluster {facts.name!r}, whose control plane runs Kubernetes "
            f"{facts.kubernetes_version or 'of an unknown version'} (the token mount needs "
            f"blob CSI driver {TOKEN_MODE_MIN_DRIVER}, which AKS runs from {minimum}; "
            f"{KEY_MODE} is the fallback, with readers holding an account key)",
        )


def mount_options(a: Any, read_only: bool) -> list[str]:
    """A PV's blobfuse2 options. Readers: block cache sized explicitly (the pool and prefetch
    both set: blobfuse2 keeps its CPU-sized prefetch default once the pool is set), long
    attribute caches. Writers: blobfuse2's default file cache, no block cache: block cache
    uploads whole blocks on flush, and several nodes writing one file through it corrupt it."""
    # Who may use the mount: blobfuse2 runs as root on the node, and with allow_other shows
    # every file and folder 0777 (Azure/azure-storage-fuse component/libfuse/libfuse.go lines
    # 238-240, common/types.go line 66) and drops default_permissions (common/types.go line
    # 81), so no mode is checked: the seed Job (uid 65532, no chown on blobfuse) writes and
    # readers of any uid read (tests/test_azure_blob.py holds it).
    options = ["-o allow_other"]
    if read_only:
        seconds = a["attribute_cache_seconds"]
        options += [
            "--block-cache",
            f"--block-cache-block-size={a['block_cache_block_size_mib']}",
            f"--block-cache-pool-size={a['block_cache_pool_size_mib']}",
            f"--block-cache-prefetch={a['block_cache_prefetch']}",
            "--use-attr-cache=true",
            f"--attr-cache-timeout={seconds}",
            f"-o attr_timeout={seconds}",
            f"-o entry_timeout={seconds}",
            f"-o negative_timeout={a['negative_cache_seconds']}",
        ]
    return [*options, *(a.get("extra_mount_options") or ())]


BLOB_BACKUPS = BackupSupport(
    retention=(1, 365),
    retention_source="Azure Blob soft delete",
    schedule="none",
    sets=("blob_soft_delete_days", "container_soft_delete_days", "versioning"),
    fixed=(
        "unset: blob versions and soft delete keep every overwritten or deleted blob as it "
        "happens (no schedule); retention_days is how long deleted ones stay"
    ),
)
"""Blob soft delete (1 to 365 days: learn.microsoft.com/azure/storage/blobs/
soft-delete-blob-overview), container soft delete and blob versioning, set on the account's
blob service (``BlobServiceProperties``: Microsoft.Storage REST API, Blob Services - Set
Service Properties)."""


class AzureBlobModelStore(AzureModelStore[AzureBlobModelStoreArgs], backend="azure-blob"):
    """A shared model store in an Azure Blob container, mounted with blobfuse2 by the AKS blob
    CSI driver through workload identity.

    Readers and writers get separate user-assigned identities (``identity_per``), each with a
    federated credential per consumer service account and a data role on the container alone
    (Storage Blob Data Reader / Contributor): a reader holds no write role. Each consumer
    namespace gets a service account and a static PV (``ReadOnlyMany`` alone for readers, the
    only read-only switch blobfuse2 obeys on this path; ``ReadWriteMany`` for writers) bound
    to its claim. ``mount_for`` gives the service account and the
    ``azure.workload.identity/use`` pod label; the mount itself needs neither (the driver
    requests the token), applications using Azure SDKs do.

    A new account denies every network but the cluster's node subnets (virtual network rules,
    each subnet checked for the storage service endpoint before deploy) or is reached through a
    private endpoint; ``allow_all_networks`` is the explicit opt-in to every network.
    """

    args_type = AzureBlobModelStoreArgs
    cluster_needs = (require_oidc_issuer, require_workload_identity, require_blob_csi_driver)
    # Blob storage through blobfuse2: vLLM loader settings in kube/serving.py.
    loader_profile = "object-store"
    # Published with the manifest written last: the mount cannot rename a directory in one
    # step (seed.py's PUBLISH cites Mountpoint's and Cloud Storage FUSE's semantics; blobfuse2
    # renames a directory blob by blob).
    model_publish = "manifest-last"
    renamed_fields = MappingProxyType(
        {
            **AzureModelStore.renamed_fields,
            "block_cache_block_size_mb": "block_cache_block_size_mib",
            "block_cache_pool_size_mb": "block_cache_pool_size_mib",
        }
    )
    example_args = MappingProxyType[str, Any](
        {"cluster_name": "ml-aks", "cluster_resource_group_name": "ml-rg"}
    )
    data_bearing_types = (
        "azure-native:storage:StorageAccount",
        "azure-native:storage:BlobContainer",
    )

    storage_account_name: pulumi.Output[str]
    """The storage account's name."""
    container_name: pulumi.Output[str]
    """The container's name."""
    service_account_name: pulumi.Output[str]
    """The Kubernetes service account consumer pods run as, in every consumer namespace."""
    client_ids: pulumi.Output[dict[str, str]]
    """Consumer namespace -> client id of the user-assigned identity its pods use."""

    # ---- 1. parse ------------------------------------------------------------------------------

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """The new account's blob service settings. An existing account's are the account
        owner's: its blob service is one per account, shared by every container in it."""
        if p["create_storage_account"] is False:
            return existing_left_alone("storage account", "create_storage_account is false")
        return BLOB_BACKUPS

    @classmethod
    def rules(cls, p: Parser) -> None:
        account_rules(
            p,
            (
                "sku_name",
                "infrastructure_encryption",
                *net.NETWORK_FIELDS,
                "allow_all_networks",
                "blob_soft_delete_days",
                "container_soft_delete_days",
                "versioning",
            ),
        )
        p.field_rule(v.one_of, "sku_name", SKUS)
        net.network_rules(p, net.BLOB)
        p.rule(
            all_networks_alone,
            "allow_all_networks",
            "allowed_subnet_ids",
            "private_endpoint_subnet_id",
        )
        p.field_rule(soft_delete_days, "blob_soft_delete_days")
        p.field_rule(soft_delete_days, "container_soft_delete_days")
        if p["container_name"] is None and p.ok(STORE_NAME):
            p.check(lambda: store_name_fits_container(p.store, None))
            p.set("container_name", default_container_name(p.store))
        else:
            p.field_rule(az_v.container_name, "container_name")
        p.field_rule(v.one_of, "mount_mode", MOUNT_MODES)
        p.field_rule(v.one_of, "identity_per", IDENTITY_PER)
        p.rule(identities_hold_their_credentials, "identity_per", "readers", "writers")
        if p["service_account_name"] is None and p.ok("claim_name"):
            p.set("service_account_name", f"{p['claim_name']}-blob")
        p.field_rule(v.dns_subdomain, "service_account_name")
        p.field_rule(v.positive_int, "block_cache_block_size_mib")
        p.field_rule(v.positive_int, "block_cache_pool_size_mib")
        p.field_rule(valid_prefetch, "block_cache_prefetch")
        p.rule(
            prefetch_fits_pool,
            "block_cache_pool_size_mib",
            "block_cache_block_size_mib",
            "block_cache_prefetch",
        )
        p.field_rule(non_negative, "attribute_cache_seconds")
        p.field_rule(non_negative, "negative_cache_seconds")
        p.field_rule(mount_options_kept, "extra_mount_options")

    # ---- 2. preflight: lookups only, once per cluster ------------------------------------------

    def preflight(
        self, spec: Spec[AzureBlobModelStoreArgs], cluster: AksCluster, opts: Opts
    ) -> Placement:
        facts = cluster.facts(spec.common.name)
        token_mode_supported(spec.common.name, spec.args["mount_mode"], facts)
        return self.place(
            spec, cluster, opts, net.BLOB, allow_all_networks=bool(spec.args["allow_all_networks"])
        )

    # ---- 3. provision ---------------------------------------------------------------------------

    def provision_storage(
        self, spec: Spec[AzureBlobModelStoreArgs], cluster: AksCluster, facts: Placement
    ) -> Binding:
        a = spec.args
        self.storage_account: Any = None
        self.blob_service: Any = None
        account_name: Any = facts.account_name
        if a["create_storage_account"]:
            self.storage_account, self.blob_service = self._new_account(spec, facts)
            account_name = self.storage_account.name
        self.container: Any = None
        if a["create_container"]:
            self.container = self._new_container(spec, facts, account_name)
        ready: list[pulumi.Resource] = []  # what the PVs wait for
        ready += self.private_endpoint(spec, cluster, facts, net.BLOB, self.storage_account)
        # Each consumer's identity and role (access.py, consumer_access).
        client_ids = self.access(spec, cluster, facts).values()
        self.storage_account_name = pulumi.Output.from_input(account_name)
        self.container_name = pulumi.Output.from_input(a["container_name"])
        self.service_account_name = pulumi.Output.from_input(a["service_account_name"])
        self.client_ids = pulumi.Output.from_input(client_ids)
        return Binding(
            capacity=NOMINAL_CAPACITY,
            source=lambda ns, read_only: _source(
                spec, facts, client_ids[ns], self.volume_name(ns), read_only
            ),
            # The driver's only read-only switch here; the PV lists it alone (the kubelet sends
            # the PV's first access mode).
            reader_access_mode="ReadOnlyMany",
            writer_access_mode="ReadWriteMany",
            ready=ready,
        )

    def consumer_access(
        self, spec: Spec[AzureBlobModelStoreArgs], cluster: AksCluster, facts: Placement
    ) -> ConsumerAccess:
        """A user-assigned identity per access level (or per namespace, ``identity_per``)
        with a federated credential per consumer service account and one role: in the token
        mode a data role on the container alone (Reader for readers, Contributor for
        writers); in the key mode the key operator role on the account, since the driver
        lists the account's keys, which only an account-scope role allows."""
        a, f = spec.args, facts.facts
        token = a["mount_mode"] == TOKEN_MODE
        account_id = _account_id(facts)
        container_id = ident.container_scope(
            f.subscription_id, facts.resource_group, facts.account_name, a["container_name"]
        )
        readers_role = (
            ident.STORAGE_BLOB_DATA_READER if token else ident.STORAGE_ACCOUNT_KEY_OPERATOR
        )
        writers_role = (
            ident.STORAGE_BLOB_DATA_CONTRIBUTOR if token else ident.STORAGE_ACCOUNT_KEY_OPERATOR
        )

        def grant(key: str, read_only: bool, consumers: Sequence[Consumer]) -> Grant:
            return self.identity_grant(
                spec,
                facts,
                key,
                consumers,
                readers_role if read_only else writers_role,
                container_id if token else account_id,
                # The scope must exist before a role is assigned on it (its id is built from
                # names, not an output) (order: scope-first).
                scope_ready=[r for r in (self.storage_account, self.container) if r is not None],
            )

        return ConsumerAccess(
            service_account=a["service_account_name"],
            grant=grant,
            per=PER_NAMESPACE if a["identity_per"] == "namespace" else PER_ACCESS,
            create_service_accounts=a["create_service_account"],
            pod_labels={ident.USE_LABEL: "true"},
        )

    def _new_container(
        self, spec: Spec[AzureBlobModelStoreArgs], facts: Placement, account_name: Any
    ) -> Any:
        """The private container holding the models (protected unless opted out)."""
        import pulumi_azure_native as azure_native

        private: Any = {
            "account_name": account_name,
            "resource_group_name": facts.resource_group,
            "container_name": spec.args["container_name"],
            "public_access": "None",
        }
        if self.opt_out_marks():
            private["metadata"] = metadata_marks(self.opt_out_marks())
        return azure_native.storage.BlobContainer(
            f"{spec.common.name}-container", **private, opts=self.data_protection()
        )

    def _new_account(self, spec: Spec[AzureBlobModelStoreArgs], facts: Placement) -> Any:
        """StorageV2 on the account baseline: HTTPS only, shared keys only for the key mode,
        other networks denied but for the admitted subnets or a private endpoint (every
        network only with ``allow_all_networks``); and its blob service's soft delete and
        versioning. Returns (account, blob service)."""
        import pulumi_azure_native as azure_native

        a = spec.args
        token = a["mount_mode"] == TOKEN_MODE
        settings: Any = {
            "account_name": facts.account_name,
            "resource_group_name": facts.resource_group,
            "location": facts.region,
            "kind": "StorageV2",
            "sku": {"name": a["sku_name"]},
            **account_baseline(
                infrastructure_encryption=a["infrastructure_encryption"], services=("blob",)
            ),
            "enable_https_traffic_only": True,
            # Entra ID only, unless the driver must list the keys (account-key mode).
            "allow_shared_key_access": not token,
            **facts.network.account_settings(),
            "tags": {**self.tags(spec), **self.opt_out_marks(), **facts.network.marks()},
        }
        account = azure_native.storage.StorageAccount(
            f"{spec.common.name}-account", **settings, opts=self.data_protection()
        )
        service: Any = {
            "account_name": account.name,
            "resource_group_name": facts.resource_group,
            "blob_services_name": "default",
            **_protection(a, spec.derived["backup"]),
        }
        # A singleton of the account: deleting it from the stack deletes nothing in Azure.
        blob_service = azure_native.storage.BlobServiceProperties(
            f"{spec.common.name}-blob-service", **service, opts=pulumi.ResourceOptions(parent=self)
        )
        return account, blob_service


def _account_id(facts: Placement) -> str:
    return (
        f"/subscriptions/{facts.facts.subscription_id}/resourceGroups/{facts.resource_group}/"
        f"providers/Microsoft.Storage/storageAccounts/{facts.account_name}"
    )


def _source(
    spec: Spec[AzureBlobModelStoreArgs],
    facts: Placement,
    client_id: Any,
    volume_name: str,
    read_only: bool,
) -> dict[str, Any]:
    """A PV's volume source: the container, the consumer identity's client id and (token
    mode) tenant, and the blobfuse2 options of its access level."""
    a, f, group = spec.args, facts.facts, facts.resource_group
    container = a["container_name"]
    attributes: dict[str, Any] = {
        "resourceGroup": group,
        "storageAccount": facts.account_name,
        "containerName": container,
        "protocol": "fuse2",
        "clientID": client_id,
    }
    if a["mount_mode"] == TOKEN_MODE:
        attributes["mountWithWorkloadIdentityToken"] = "true"
        attributes["tenantID"] = f.tenant_id
    else:  # ListKeys runs in this subscription
        attributes["subscriptionID"] = f.subscription_id
    return {
        "csi": {
            "driver": DRIVER,
            # Fields 0-2 are read; field 3 never is (unique per PV); 4 and 5 empty.
            "volumeHandle": f"{group}#{facts.account_name}#{container}#{volume_name}##",
            # Not what makes the mount read-only on this path (the access mode does).
            "readOnly": read_only,
            "volumeAttributes": attributes,
        },
        "mountOptions": mount_options(a, read_only),
    }


def _retention(days: int) -> dict[str, Any]:
    return {"enabled": True, "days": days} if days else {"enabled": False}


def _protection(a: AzureBlobModelStoreArgs, backup: Backup) -> dict[str, Any]:
    """The blob service's soft delete and versioning: the backup's when it is enabled (every
    overwritten blob a version, deleted blobs and containers kept ``retention_days``), else
    the store's own fields."""
    if backup.enabled:
        days = backup.retention_days
        return {
            "delete_retention_policy": _retention(days),
            "container_delete_retention_policy": _retention(days),
            "is_versioning_enabled": True,
        }
    return {
        "delete_retention_policy": _retention(a["blob_soft_delete_days"]),
        "container_delete_retention_policy": _retention(a["container_soft_delete_days"]),
        "is_versioning_enabled": a["versioning"],
    }
