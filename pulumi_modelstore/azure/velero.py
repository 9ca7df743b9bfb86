"""Velero's storage on AKS: a storage account of its own (HTTPS only, TLS 1.2, no public blob
access, shared keys off, every network denied but the cluster's node subnets) with a private
container for the backups, and a user-assigned identity the Velero server's ServiceAccount
acts as through AKS workload identity, holding data access on that container alone.

From velero-plugin-for-microsoft-azure (branch release-1.14, ``README.md``) and the Velero
code it calls (vmware-tanzu/velero v1.18.1, ``pkg/util/azure/``):

- "Option 3: Use Azure AD Workload Identity" (README lines 353-446): a user-assigned identity,
  a federated credential for the server's ServiceAccount (issuer: the cluster's OIDC issuer),
  the SA annotation ``azure.workload.identity/client-id`` and the pod label
  ``azure.workload.identity/use=true`` (``velero install --pod-labels``, line 506).
- ``useAAD: "true"`` in the location's config (README line 510; ``backupstoragelocation.md``
  lines 56-60): the plugin authenticates to the blob service with the identity's token and
  never lists the account's keys (``storage.go`` ``GetStorageAccountCredentials``, lines
  142-152), so the account refuses shared keys. Without a credentials file
  (``credentials.useSecret: false``) ``LoadCredentials`` reads nothing (``util.go`` lines
  57-68) and ``NewCredential`` takes the workload identity token the webhook mounts
  (``credential.go`` lines 48-54).
- Download links (``velero backup logs``, ``describe``) are user delegation SAS when no
  shared key is in use (plugin ``object_store.go`` ``GetSASURI``, lines 165-192).
- The README's roles: Storage Blob Data Contributor for ``useAAD`` (line 384), plus Reader on
  the account only so the plugin can read the account's blob endpoint, unneeded when the
  location gives ``storageAccountURI`` (lines 516-532; ``storage.go`` lines 167-173): it is
  given, so no Reader. The data role is scoped to the container; the user delegation key is
  an account-level operation, so the account gets Storage Blob Delegator (Microsoft's
  learn.microsoft.com/rest/api/storageservices/create-user-delegation-sas, "Assign
  permissions with Azure RBAC": a container-scoped data role needs Storage Blob Delegator at
  the account or above).
- The README's disk and snapshot permissions (lines 196-206) serve the volume snapshotter:
  left out, Velero takes no volume snapshots here (``kube.velero``: the stores' data is
  Blob or Azure Files NFS, never a managed disk, and each backend backs up its own data).
"""

import pulumi

from ..errors import ModelStoreInputError
from ..kube.velero import (
    NAMESPACE,
    PREFLIGHT,
    SERVICE_ACCOUNT,
    STORAGE,
    VeleroSettings,
    VeleroStorage,
)
from ..store import MANAGED_BY
from . import identity as ident
from . import network as net
from . import validation as az_v
from .cluster import AksCluster, AksClusterFacts
from .storage import account_baseline
from .store import MANAGED_BY_TAG

DEFAULT_CONTAINER = "velero"
"""The container's name when the entry names no ``bucket`` (the plugin README's, line 124)."""
SKU = "Standard_GRS"
"""Geo-redundant, as the plugin README's account (line 113): a backup outlives its region."""
STORAGE_BLOB_DELEGATOR = "db58b8e5-c6ad-4a2a-8342-4190687cbf4a"
"""Storage Blob Delegator (learn.microsoft.com/azure/role-based-access-control/built-in-roles/
storage): ``generateUserDelegationKey`` and nothing else."""


def account_name(facts: AksClusterFacts) -> str:
    """The account's name, global in Azure: the cluster's name and a hash of the subscription,
    resource group and cluster (``velero`` in the hash keeps it apart from a store of the same
    name, whose hash has no such part)."""
    return az_v.default_account_name(
        facts.subscription_id, facts.resource_group_name, "velero", f"{facts.name}velero"
    )


def _refused(path: str, allowed: str) -> ModelStoreInputError:
    return ModelStoreInputError(None, f"{path}.enabled", True, allowed)


def preflight(scope: AksCluster, store: str, path: str) -> None:
    """What Velero's storage needs of the cluster, checked before anything registers (``path``
    is the entry's ``velero``): the OIDC issuer its federated credential trusts, workload
    identity (the webhook gives the server pod its token), and node subnets the account can
    admit, each with a storage service endpoint."""
    facts = scope.facts(store)
    cluster = facts.name
    if facts.oidc_issuer_url is None:
        raise _refused(
            path,
            f"false while cluster {cluster} has the OIDC issuer off (Velero's identity trusts "
            "the issuer through a federated credential: oidcIssuerProfile.enabled; see "
            "azure.cluster_settings)",
        )
    if not facts.workload_identity:
        raise _refused(
            path,
            f"false while cluster {cluster} has workload identity off (its webhook gives the "
            "Velero server pod its token: securityProfile.workloadIdentity.enabled; see "
            "azure.cluster_settings)",
        )
    if not facts.node_subnet_ids:
        raise _refused(
            path,
            f"false while cluster {cluster} is on the AKS-managed virtual network (Velero's "
            "storage account denies every network but the node subnets, and there is no node "
            "subnet to admit)",
        )
    subscription = facts.subscription_id.lower()
    for subnet_id in facts.node_subnet_ids:
        # get_subnet reads the provider's subscription only (as network.check_rule_subnets).
        if net.subnet_subscription(subnet_id) != subscription:
            continue
        if not net.has_storage_endpoint(net.subnet(scope, subnet_id)):
            rg, vnet, name = net.subnet_parts(subnet_id)
            raise _refused(
                path,
                f"false while node subnet {name} of virtual network {vnet} has no "
                "Microsoft.Storage or Microsoft.Storage.Global service endpoint (Velero's "
                "storage account admits the node subnets by virtual network rule: az network "
                f"vnet subnet update -g {rg} --vnet-name {vnet} -n {name} --service-endpoints "
                "Microsoft.Storage.Global)",
            )


def velero_storage(scope: AksCluster, settings: VeleroSettings, store: str) -> VeleroStorage:
    """The account, container, identity, federated credential and roles of the Velero of the
    AKS cluster of ``scope``, in the cluster's resource group and region. The account and
    container hold the backups: protected and kept on delete."""
    import pulumi_azure_native as azure_native

    facts = scope.facts(store)
    assert facts.oidc_issuer_url is not None  # preflight
    cluster = scope.scope_name
    name = f"{cluster}-velero"
    group, location = facts.resource_group_name, facts.location
    tags = {MANAGED_BY_TAG: MANAGED_BY}
    kept = pulumi.ResourceOptions(parent=scope, protect=True, retain_on_delete=True)
    account_id = (
        f"/subscriptions/{facts.subscription_id}/resourceGroups/{group}/providers/"
        f"Microsoft.Storage/storageAccounts/{account_name(facts)}"
    )
    account = azure_native.storage.StorageAccount(
        f"{name}-account",
        account_name=account_name(facts),
        resource_group_name=group,
        location=location,
        kind="StorageV2",
        sku={"name": SKU},
        access_tier=azure_native.storage.AccessTier.HOT,
        **account_baseline(infrastructure_encryption=False, services=("blob",)),
        enable_https_traffic_only=True,
        # useAAD: the plugin never uses a key (module docstring).
        allow_shared_key_access=False,
        **net.Network(rule_subnets=facts.node_subnet_ids).account_settings(),
        tags=tags,
        opts=kept,
    )
    container_name = settings.bucket or DEFAULT_CONTAINER
    container = azure_native.storage.BlobContainer(
        f"{name}-container",
        account_name=account.name,
        resource_group_name=group,
        container_name=container_name,
        public_access=azure_native.storage.PublicAccess.NONE,
        opts=kept,
    )
    identity = ident.user_assigned_identity(
        f"{name}-identity",
        name=ident.identity_name(cluster, "velero"),
        resource_group_name=group,
        location=location,
        tags=tags,
        parent=scope,
    )
    credentials = ident.federated_credentials(
        f"{name}-federated",
        identity,
        resource_group_name=group,
        issuer=facts.oidc_issuer_url,
        service_accounts=[(NAMESPACE, SERVICE_ACCOUNT)],
        parent=scope,
    )
    roles = [
        ident.role_assignment(
            f"{name}-role-{key}",
            principal_id=identity.principal_id,
            role=role,
            scope=on,
            subscription_id=facts.subscription_id,
            name_parts=(cluster, "velero", key),
            parent=scope,
            # The scope is an id built from names: it must exist first (order: scope-first).
            depends_on=[made],
        )
        for key, role, on, made in (
            (
                "data",
                ident.STORAGE_BLOB_DATA_CONTRIBUTOR,
                ident.container_scope(
                    facts.subscription_id, group, account_name(facts), container_name
                ),
                container,
            ),
            ("delegator", STORAGE_BLOB_DELEGATOR, account_id, account),
        )
    ]
    return VeleroStorage(
        provider="azure",
        plugin="velero/velero-plugin-for-microsoft-azure",
        bucket=container.name,
        # backupstoragelocation.md lines 28-60.
        config={
            "resourceGroup": group,
            "storageAccount": account.name,
            "subscriptionId": facts.subscription_id,
            "storageAccountURI": account.primary_endpoints.blob,
            "useAAD": "true",
        },
        service_account_annotations={ident.CLIENT_ID_ANNOTATION: identity.client_id},
        # The container is a data dependency already (its name); each role waits for it.
        ready=[*roles, *credentials.values()],
        pod_labels={ident.USE_LABEL: "true"},
    )


STORAGE[AksCluster.kind] = velero_storage
PREFLIGHT[AksCluster.kind] = preflight
