"""AzureBlobModelStore: the account and container, identities and federated credentials, role
scopes per mount mode, PVs and blobfuse2 options, preflight against the cluster's facts, and
exact input errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from pulumi_modelstore import WorkloadMount
from pulumi_modelstore.azure import AzureBlobModelStore, AzureBlobModelStoreArgs
from pulumi_modelstore.azure import blob as b
from pulumi_modelstore.azure import identity as ident
from pulumi_modelstore.azure import validation as az_v
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.plan.engine import Plan
from pulumi_modelstore.plan.placeholders import INVOKES
from pulumi_modelstore.plan.placeholders import azure as placeholders
from tests.conftest import assert_refused, by_namespace, consumer_mounts, plan
from tests.fuse_mounts import assert_seed_writes_and_readers_read, blobfuse_view
from tests.rules import RG_RULE, SUBNET_ID_RULE

ACCOUNT = "azure-native:storage:StorageAccount"
SERVICE = "azure-native:storage:BlobServiceProperties"
CONTAINER = "azure-native:storage:BlobContainer"
UAMI = "azure-native:managedidentity:UserAssignedIdentity"
FIC = "azure-native:managedidentity:FederatedIdentityCredential"
ROLE = "azure-native:authorization:RoleAssignment"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
SA = "kubernetes:core/v1:ServiceAccount"
GET_CLUSTER = "azure-native:containerservice:getManagedCluster"
GET_SUBNET = "azure-native:network:getSubnet"
PE = "azure-native:network:PrivateEndpoint"
ZONE = "azure-native:privatedns:PrivateZone"
LINK = "azure-native:privatedns:VirtualNetworkLink"
ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"
SUB = placeholders.subscription_id({})
TENANT = placeholders.tenant_id({})
SUBNET = (
    f"/subscriptions/{SUB}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vn/"
    "subnets/aks"
)
# The placeholder cluster's node subnet (both agent pools).
NODE_SUBNET = (
    f"/subscriptions/{SUB}/resourceGroups/ml-rg/providers/Microsoft.Network/virtualNetworks/"
    "ml-vnet/subnets/ml-nodes"
)
PE_SUBNET = NODE_SUBNET.replace("ml-nodes", "endpoints")
BASE = {"cluster_name": "ml", "cluster_resource_group_name": "ml-rg"}


def blob(**args: Any) -> Callable[[], AzureBlobModelStore]:
    fields = {**BASE, "readers": ["inference"], **args}
    return lambda: AzureBlobModelStore("llama", cast(AzureBlobModelStoreArgs, fields))


def run(invokes: Any = None, **args: Any) -> tuple[dict[str, WorkloadMount], Plan]:
    return consumer_mounts(blob(**args), invokes=invokes)


def cluster_answer(**changes: Any) -> dict[str, Any]:
    def answer(args: Any, config: Any) -> dict[str, Any]:
        base = INVOKES[GET_CLUSTER](args, config)
        return {k: v for k, v in {**base, **changes}.items() if v is not None}

    return {GET_CLUSTER: answer}


ACCOUNT_NAME = az_v.default_account_name(SUB, "ml-rg", "llama")
ACCOUNT_ID = (
    f"/subscriptions/{SUB}/resourceGroups/ml-rg/providers/Microsoft.Storage/storageAccounts/"
    f"{ACCOUNT_NAME}"
)
CONTAINER_ID = f"{ACCOUNT_ID}/blobServices/default/containers/llama"


# -- account and container ----------------------------------------------------------------------


def test_new_account_defaults():
    _, p = run(writers=["loader"])
    (account,) = p.by_type(ACCOUNT)
    inputs = account["inputs"]
    assert inputs["accountName"] == ACCOUNT_NAME
    assert (inputs["kind"], inputs["sku"]) == ("StorageV2", {"name": "Standard_LRS"})
    assert inputs["location"] == "eastus" and inputs["resourceGroupName"] == "ml-rg"
    assert inputs["enableHttpsTrafficOnly"] is True
    assert inputs["minimumTlsVersion"] == "TLS1_2"
    assert inputs["allowBlobPublicAccess"] is False
    assert inputs["allowSharedKeyAccess"] is False  # token mode: Entra ID only
    assert inputs["encryption"]["requireInfrastructureEncryption"] is False
    # Other networks denied: only the cluster's node subnets reach the account.
    assert inputs["networkRuleSet"] == {
        "defaultAction": "Deny",
        "bypass": "AzureServices",
        "virtualNetworkRules": [{"virtualNetworkResourceId": NODE_SUBNET, "action": "Allow"}],
    }
    assert inputs["publicNetworkAccess"] == "Enabled"
    assert [c["args"]["subnetName"] for c in p.invokes if c["token"] == GET_SUBNET] == ["ml-nodes"]
    assert not p.by_type(PE)
    assert inputs["tags"] == {"modelstore-store": "llama", "managed-by": "pulumi-modelstore"}
    assert (account["protect"], account["retainOnDelete"]) == (True, True)
    (service,) = p.by_type(SERVICE)
    assert service["inputs"]["blobServicesName"] == "default"
    assert service["inputs"]["deleteRetentionPolicy"] == {"enabled": True, "days": 7}
    assert service["inputs"]["containerDeleteRetentionPolicy"] == {"enabled": True, "days": 7}
    # A writer and no pinned model source: backed up by default, every overwrite a version.
    assert service["inputs"]["isVersioningEnabled"] is True
    (container,) = p.by_type(CONTAINER)
    assert container["inputs"]["containerName"] == "llama"
    assert container["inputs"]["publicAccess"] == "None"
    assert (container["protect"], container["retainOnDelete"]) == (True, True)


def test_account_options():
    _, p = run(
        storage_account_name="acmemodels01",
        sku_name="Standard_ZRS",
        infrastructure_encryption=True,
        allowed_subnet_ids=[SUBNET],
        blob_soft_delete_days=0,
        versioning=True,
        container_name="llama-3-8b",
        protect=False,
    )
    inputs = p.by_type(ACCOUNT)[0]["inputs"]
    assert inputs["accountName"] == "acmemodels01"
    assert inputs["sku"] == {"name": "Standard_ZRS"}
    assert inputs["encryption"]["requireInfrastructureEncryption"] is True
    assert inputs["networkRuleSet"] == {
        "defaultAction": "Deny",
        "bypass": "AzureServices",
        "virtualNetworkRules": [{"virtualNetworkResourceId": SUBNET, "action": "Allow"}],
    }
    service = p.by_type(SERVICE)[0]["inputs"]
    assert service["deleteRetentionPolicy"] == {"enabled": False}
    assert service["isVersioningEnabled"] is True
    assert p.by_type(CONTAINER)[0]["inputs"]["containerName"] == "llama-3-8b"
    assert p.by_type(CONTAINER)[0]["protect"] is False


def test_existing_account_and_container_make_no_storage_resources():
    _, p = run(
        create_storage_account=False,
        storage_account_name="acmemodels01",
        create_container=False,
        container_name="models",
    )
    assert not p.by_type(ACCOUNT) and not p.by_type(SERVICE) and not p.by_type(CONTAINER)
    assert not [i for i in p.invokes if "storage" in i["token"]]  # nothing looked up
    assert GET_SUBNET not in [i["token"] for i in p.invokes]  # its network rules are its own
    (pv,) = p.by_type(PV)
    attributes = pv["inputs"]["spec"]["csi"]["volumeAttributes"]
    assert (attributes["storageAccount"], attributes["containerName"]) == ("acmemodels01", "models")
    (role,) = p.by_type(ROLE)
    assert role["inputs"]["scope"].endswith(
        "/storageAccounts/acmemodels01/blobServices/default/containers/models"
    )


# -- network --------------------------------------------------------------------------------------


def test_a_private_endpoint_instead_of_network_rules():
    _, p = run(private_endpoint_subnet_id=PE_SUBNET)
    inputs = p.by_type(ACCOUNT)[0]["inputs"]
    assert inputs["publicNetworkAccess"] == "Disabled"
    assert inputs["networkRuleSet"] == {"defaultAction": "Deny", "bypass": "AzureServices"}
    (endpoint,) = p.by_type(PE)
    assert endpoint["inputs"]["subnet"] == {"id": PE_SUBNET}
    (connection,) = endpoint["inputs"]["privateLinkServiceConnections"]
    assert connection["groupIds"] == ["blob"]
    assert connection["privateLinkServiceId"] == ACCOUNT_ID
    (zone,) = p.by_type(ZONE)
    assert zone["inputs"]["privateZoneName"] == "privatelink.blob.core.windows.net"
    assert zone["inputs"]["resourceGroupName"] == "ml-rg"
    assert zone["parent"] == p.by_type("modelstore:index:AksCluster")[0]["urn"]
    assert not [a for a in zone["aliases"] if "llama" in str(a)]  # nothing to move from
    (link,) = p.by_type(LINK)
    assert link["inputs"]["virtualNetwork"] == {"id": PE_SUBNET.rsplit("/subnets/", 1)[0]}
    (group,) = p.by_type(ZONE_GROUP)
    assert group["inputs"]["privateDnsZoneConfigs"][0]["name"] == "blob"
    # No mount before the account's record exists and resolves from the network.
    for pv in p.by_type(PV):
        assert {group["urn"], link["urn"]} <= set(pv["dependencies"])
    assert GET_SUBNET not in [c["token"] for c in p.invokes]  # no service endpoint needed


def test_a_private_endpoint_in_another_subscription_is_refused():
    elsewhere = PE_SUBNET.replace(SUB, "00000000-0000-0000-0000-0000000000cc")
    assert_refused(
        blob(private_endpoint_subnet_id=elsewhere),
        f"llama: private_endpoint_subnet_id must be a subnet in subscription {SUB}, the one the "
        "store deploys to (Azure creates a private endpoint only in its virtual network's "
        f"subscription), got '{elsewhere}'",
    )


def test_a_private_endpoint_with_an_existing_zone():
    hub = (
        "/subscriptions/00000000-0000-0000-0000-0000000000aa/resourceGroups/hub-dns/providers/"
        "Microsoft.Network/privateDnsZones/privatelink.blob.core.windows.net"
    )
    _, p = run(private_endpoint_subnet_id=PE_SUBNET, private_dns_zone_id=hub)
    assert not p.by_type(ZONE) and not p.by_type(LINK)
    (group,) = p.by_type(ZONE_GROUP)
    assert group["inputs"]["privateDnsZoneConfigs"] == [{"name": "blob", "privateDnsZoneId": hub}]


def test_blob_and_files_stores_keep_their_own_privatelink_zones():
    from pulumi_modelstore.azure import AzureFilesNfsModelStore

    def program() -> None:
        blob(private_endpoint_subnet_id=PE_SUBNET)()
        AzureFilesNfsModelStore(
            "t5", {**BASE, "readers": ["t5"], "private_endpoint_subnet_id": PE_SUBNET}
        )

    p = plan(program)
    zones = sorted(z["inputs"]["privateZoneName"] for z in p.by_type(ZONE))
    assert zones == ["privatelink.blob.core.windows.net", "privatelink.file.core.windows.net"]
    assert len(p.by_type(LINK)) == 2  # each zone linked to the endpoints' network


def test_all_networks_is_an_explicit_opt_in():
    _, p = run(allow_all_networks=True)
    inputs = p.by_type(ACCOUNT)[0]["inputs"]
    assert inputs["networkRuleSet"] == {"defaultAction": "Allow", "bypass": "AzureServices"}
    assert inputs["publicNetworkAccess"] == "Enabled"
    assert GET_SUBNET not in [c["token"] for c in p.invokes]
    from pulumi_modelstore.fields import fields_of

    field = fields_of(AzureBlobModelStoreArgs)["allow_all_networks"]
    assert field.default is False
    assert "explicit opt-in" in " ".join(field.doc.split())


def test_a_managed_vnet_cluster_needs_a_network_path():
    managed = cluster_answer(agentPoolProfiles=[{"name": "system", "mode": "System"}])
    assert_refused(
        blob(),
        "llama: allowed_subnet_ids is missing; it must be given, or private_endpoint_subnet_id, "
        "or allow_all_networks (cluster ml is on the AKS-managed virtual network, with no node "
        "subnet to admit: an account that denies other networks would refuse every mount)",
        invokes=managed,
    )
    _, p = run(managed, allowed_subnet_ids=[SUBNET])
    assert p.by_type(ACCOUNT)


# -- identity -----------------------------------------------------------------------------------


def test_identity_per_access_makes_one_identity_per_level():
    _, p = run(readers=["inference", "batch"], writers=["loader"])
    identities = {s["inputs"]["resourceName"] for s in p.by_type(UAMI)}
    assert identities == {"llama-readers", "llama-writers"}
    _, p = run(readers=["inference", "batch"])
    assert {s["inputs"]["resourceName"] for s in p.by_type(UAMI)} == {"llama-readers"}


def test_identity_per_namespace():
    _, p = run(readers=["inference", "batch"], writers=["loader"], identity_per="namespace")
    assert {s["inputs"]["resourceName"] for s in p.by_type(UAMI)} == {
        "llama-inference",
        "llama-batch",
        "llama-loader",
    }
    assert len(p.by_type(ROLE)) == 3


def test_each_credential_names_exactly_the_service_account_the_store_creates():
    readers, writers = ["inference", "batch", "eval"], ["loader"]
    for per in b.IDENTITY_PER:
        _, p = run(readers=readers, writers=writers, identity_per=per, service_account_name="vllm")
        created = {(ns, s["inputs"]["metadata"]["name"]) for ns, s in by_namespace(p, SA).items()}
        assert created == {(ns, "vllm") for ns in readers + writers}
        issuer = INVOKES[GET_CLUSTER]({"resourceName": "ml"}, {})["oidcIssuerProfile"]["issuerURL"]
        named = set()
        for fic in p.by_type(FIC):
            inputs = fic["inputs"]
            assert inputs["issuer"] == issuer
            assert inputs["audiences"] == ["api://AzureADTokenExchange"]
            system, kind, ns, sa = inputs["subject"].split(":")
            assert (system, kind) == ("system", "serviceaccount")
            named.add((ns, sa))
        assert named == created, per


def test_credentials_on_one_identity_are_created_one_after_another():
    _, p = run(readers=["a", "b", "c"])
    fics = p.by_type(FIC)
    assert len(fics) == 3
    urns = [f["urn"] for f in fics]
    chained = sum(1 for f in fics if set(f["dependencies"]) & set(urns))
    assert chained == 2  # every credential but the first waits for another
    for fic in fics:
        assert len(set(fic["dependencies"]) & set(urns)) <= 1


def test_service_accounts_carry_their_identitys_client_id():
    mounts, p = run(writers=["loader"])
    identities = {s["inputs"]["resourceName"]: s["outputs"]["clientId"] for s in p.by_type(UAMI)}
    accounts = by_namespace(p, SA)
    annotation = "azure.workload.identity/client-id"
    assert (
        accounts["inference"]["inputs"]["metadata"]["annotations"][annotation]
        == (identities["llama-readers"])
    )
    assert (
        accounts["loader"]["inputs"]["metadata"]["annotations"][annotation]
        == (identities["llama-writers"])
    )
    for ns, mount in mounts.items():
        assert mount.service_account_name == "llama-blob"
        assert mount.pod_labels == {"azure.workload.identity/use": "true"}
        pv = by_namespace(p, PV)[ns]["inputs"]["spec"]["csi"]
        assert (
            pv["volumeAttributes"]["clientID"]
            == (identities["llama-readers" if ns == "inference" else "llama-writers"])
        )


def test_existing_service_accounts_are_taken_by_name():
    mounts, p = run(create_service_account=False, service_account_name="serving")
    assert not p.by_type(SA)
    assert p.by_type(FIC)[0]["inputs"]["subject"] == "system:serviceaccount:inference:serving"
    assert mounts["inference"].service_account_name == "serving"


def role_of(state: dict[str, Any]) -> str:
    return state["inputs"]["roleDefinitionId"].rsplit("/", 1)[-1]


def test_token_mode_roles_are_on_the_container_and_readers_never_write():
    _, p = run(readers=["inference", "batch"], writers=["loader"])
    identities = {s["outputs"]["principalId"]: s["inputs"]["resourceName"] for s in p.by_type(UAMI)}
    roles = {identities[s["inputs"]["principalId"]]: s for s in p.by_type(ROLE)}
    assert set(roles) == {"llama-readers", "llama-writers"}
    for state in roles.values():
        inputs = state["inputs"]
        assert inputs["scope"] == CONTAINER_ID
        assert inputs["principalType"] == "ServicePrincipal"
        assert inputs["roleDefinitionId"].startswith(
            f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/"
        )
    assert role_of(roles["llama-readers"]) == ident.STORAGE_BLOB_DATA_READER
    assert role_of(roles["llama-readers"]) not in ident.WRITE_ROLES
    assert role_of(roles["llama-writers"]) == ident.STORAGE_BLOB_DATA_CONTRIBUTOR
    # Deterministic names: the same on every preview.
    _, again = run(readers=["inference", "batch"], writers=["loader"])
    assert {s["inputs"]["roleAssignmentName"] for s in again.by_type(ROLE)} == {
        s["inputs"]["roleAssignmentName"] for s in roles.values()
    }


def test_key_mode_lists_keys_at_account_scope_with_shared_keys_on():
    _, p = run(writers=["loader"], mount_mode="account-key")
    assert p.by_type(ACCOUNT)[0]["inputs"]["allowSharedKeyAccess"] is True
    for state in p.by_type(ROLE):
        assert state["inputs"]["scope"] == ACCOUNT_ID
        assert role_of(state) == ident.STORAGE_ACCOUNT_KEY_OPERATOR
    for pv in p.by_type(PV):
        attributes = pv["inputs"]["spec"]["csi"]["volumeAttributes"]
        assert "mountWithWorkloadIdentityToken" not in attributes
        assert attributes["subscriptionID"] == SUB


# -- PVs and mount options ----------------------------------------------------------------------


def test_pvs_and_claims():
    _, p = run(writers=["loader"])
    pvs, claims = by_namespace(p, PV), by_namespace(p, PVC)
    for ns, reader in (("inference", True), ("loader", False)):
        spec = pvs[ns]["inputs"]["spec"]
        mode = ["ReadOnlyMany"] if reader else ["ReadWriteMany"]
        assert spec["accessModes"] == mode  # ROX alone: the kubelet sends the first mode
        assert claims[ns]["inputs"]["spec"]["accessModes"] == mode
        csi = spec["csi"]
        assert csi["driver"] == "blob.csi.azure.com"
        assert csi["volumeHandle"] == f"ml-rg#{ACCOUNT_NAME}#llama#llama-{ns}##"
        assert csi["volumeAttributes"] == {
            "resourceGroup": "ml-rg",
            "storageAccount": ACCOUNT_NAME,
            "containerName": "llama",
            "protocol": "fuse2",
            "clientID": csi["volumeAttributes"]["clientID"],
            "mountWithWorkloadIdentityToken": "true",
            "tenantID": TENANT,
        }
        assert not [k for k in csi["volumeAttributes"] if k.lower().startswith("secret")]
    assert pvs["inference"]["inputs"]["spec"]["mountOptions"] == [
        "-o allow_other",
        "--block-cache",
        "--block-cache-block-size=16",
        "--block-cache-pool-size=4096",
        "--block-cache-prefetch=32",
        "--use-attr-cache=true",
        "--attr-cache-timeout=3600",
        "-o attr_timeout=3600",
        "-o entry_timeout=3600",
        "-o negative_timeout=60",
    ]
    assert pvs["loader"]["inputs"]["spec"]["mountOptions"] == ["-o allow_other"]
    # No mount before the identity can reach the container.
    roles = {s["urn"] for s in p.by_type(ROLE)}
    assert roles & set(pvs["inference"]["dependencies"])


def test_block_cache_and_extra_options():
    _, p = run(
        block_cache_pool_size_mib=1024,
        block_cache_prefetch=0,
        block_cache_block_size_mib=8,
        attribute_cache_seconds=120,
        extra_mount_options=["--log-level=LOG_WARNING", "-o umask=0022"],
    )
    options = p.by_type(PV)[0]["inputs"]["spec"]["mountOptions"]
    assert "--block-cache-pool-size=1024" in options
    assert "--block-cache-prefetch=0" in options
    assert "--block-cache-block-size=8" in options
    assert "-o attr_timeout=120" in options
    assert options[-2:] == ["--log-level=LOG_WARNING", "-o umask=0022"]


# -- preflight ----------------------------------------------------------------------------------


PREFLIGHT = [
    (
        {"oidcIssuerProfile": {"enabled": False}},
        "llama: cluster_name must be a cluster with the OIDC issuer on "
        "(oidcIssuerProfile.enabled; see azure.cluster_settings), got 'ml'",
    ),
    (
        {"securityProfile": {"workloadIdentity": {"enabled": False}}},
        "llama: cluster_name must be a cluster with workload identity on "
        "(securityProfile.workloadIdentity.enabled; see azure.cluster_settings), got 'ml'",
    ),
    (
        {"storageProfile": {"fileCSIDriver": {"enabled": True}}},
        "llama: cluster_name must be a cluster with the blob CSI driver on "
        "(storageProfile.blobCSIDriver.enabled, off by default on AKS; see "
        "azure.cluster_settings), got 'ml'",
    ),
    (
        {"currentKubernetesVersion": "1.33.5", "kubernetesVersion": "1.33"},
        "llama: mount_mode must be account-key on cluster 'ml', whose control plane runs "
        "Kubernetes 1.33.5 (the token mount needs blob CSI driver v1.27.0, which AKS runs from "
        "1.34; account-key is the fallback, with readers holding an account key), got "
        "'workload-identity-token'",
    ),
]


@pytest.mark.parametrize(
    ("changes", "message"), PREFLIGHT, ids=["no-issuer", "no-wi", "no-blob-driver", "aks-1.33"]
)
def test_preflight_failures(changes, message):
    assert_refused(blob(), message, invokes=cluster_answer(**changes))


@pytest.mark.parametrize(
    ("changes", "group", "node_group"),
    [
        ({}, "MC_ml-rg_ml_eastus", "MC_ml-rg_ml_eastus"),
        ({}, "mc_ml-rg_ml_eastus", "MC_ml-rg_ml_eastus"),  # ARM ignores case
        ({"nodeResourceGroup": None}, "MC_ml-rg_ml_eastus", "MC_ml-rg_ml_eastus"),  # default
        ({"nodeResourceGroup": "ml-nodes"}, "ml-nodes", "ml-nodes"),
    ],
)
def test_the_node_resource_group_is_refused(changes, group, node_group):
    # AKS deletes the node resource group with the cluster: the account and model would go.
    assert_refused(
        blob(resource_group_name=group),
        f"llama: resource_group_name must be a resource group other than cluster ml's node "
        f"resource group {node_group} (AKS manages that group and deletes it with the cluster, "
        f"and the store's storage account and model with it), got '{group}'",
        invokes=cluster_answer(**changes),
    )
    # A custom node resource group frees the default name.
    _, p = run(
        cluster_answer(nodeResourceGroup="ml-nodes"), resource_group_name="MC_ml-rg_ml_eastus"
    )
    assert p.by_type(ACCOUNT)[0]["inputs"]["resourceGroupName"] == "MC_ml-rg_ml_eastus"


def test_key_mode_mounts_on_older_clusters():
    old = cluster_answer(currentKubernetesVersion="1.33.5", kubernetesVersion="1.33")
    _, p = run(invokes=old, mount_mode="account-key")
    assert p.by_type(PV)


def test_region_mismatch():
    assert_refused(
        blob(region="westeurope"),
        "llama: region must be the cluster's region eastus (every read would cross regions), "
        "or set allow_other_region, got 'westeurope'",
    )
    _, p = run(region="westeurope", allow_other_region=True)
    assert p.by_type(ACCOUNT)[0]["inputs"]["location"] == "westeurope"


def no_endpoint(args: Any, config: Any) -> dict[str, Any]:
    return {**INVOKES[GET_SUBNET](args, config), "serviceEndpoints": []}


def test_a_network_rule_subnet_without_the_storage_endpoint_is_refused_before_deploy():
    # The account would deny the nodes' traffic: every mount would fail at pod start.
    assert_refused(
        blob(allowed_subnet_ids=[SUBNET]),
        "llama: allowed_subnet_ids must be subnets with the Microsoft.Storage or "
        "Microsoft.Storage.Global service endpoint (subnet aks of virtual network vn has "
        "neither: az network vnet subnet update -g net --vnet-name vn -n aks --service-endpoints "
        f"Microsoft.Storage.Global), got '{SUBNET}'",
        invokes={GET_SUBNET: no_endpoint},
    )


def test_a_regional_endpoint_must_reach_the_account_s_region():
    def regional(args: Any, config: Any) -> dict[str, Any]:
        endpoint = {"service": "Microsoft.Storage", "locations": ["eastus", "westus"]}
        return {**INVOKES[GET_SUBNET](args, config), "serviceEndpoints": [endpoint]}

    assert_refused(
        blob(region="westeurope", allow_other_region=True),
        "llama: allowed_subnet_ids must be subnets whose storage service endpoint reaches the "
        "account's region westeurope (subnet ml-nodes of virtual network ml-vnet reaches "
        "eastus, westus only: az network vnet subnet update -g ml-rg --vnet-name ml-vnet -n "
        f"ml-nodes --service-endpoints Microsoft.Storage.Global), got '{NODE_SUBNET}'",
        invokes={GET_SUBNET: regional},
    )
    _, p = run({GET_SUBNET: regional})  # the cluster's region: reached
    assert p.by_type(ACCOUNT)


def test_a_node_subnet_without_the_storage_endpoint_is_refused_before_deploy():
    # The default: the cluster's node subnets, named as the field they default.
    assert_refused(
        blob(),
        "llama: allowed_subnet_ids must be subnets with the Microsoft.Storage or "
        "Microsoft.Storage.Global service endpoint (subnet ml-nodes of virtual network ml-vnet "
        "has neither: az network vnet subnet update -g ml-rg --vnet-name ml-vnet -n ml-nodes "
        f"--service-endpoints Microsoft.Storage.Global), got '{NODE_SUBNET}'",
        invokes={GET_SUBNET: no_endpoint},
    )
    # Neither the private endpoint nor the all-networks opt-in needs the service endpoint.
    for args in ({"private_endpoint_subnet_id": PE_SUBNET}, {"allow_all_networks": True}):
        _, p = run({GET_SUBNET: no_endpoint}, **args)
        assert p.by_type(ACCOUNT)


# -- bad input ----------------------------------------------------------------------------------

DRIVER_SETS = (
    "a blobfuse2 option the blob CSI driver leaves to the user (it sets --container-name, "
    "--tmp-path and the authentication itself; --config-file, --secure-config, --passphrase, "
    "--log-file-path and --use-https break its mount)"
)
CONFLICTS = (
    "a blobfuse2 option that keeps the readers' block cache (file cache, preload and "
    "streaming are exclusive with it)"
)
STORE_SETS = (
    "a blobfuse2 option the store does not set itself (block cache and attribute caching "
    "follow their fields, -o ro/rw the access mode, allow_other is always on)"
)
ACCOUNT_RULE = az_v.ACCOUNT_NAME_RULE
CONTAINER_RULE = az_v.CONTAINER_NAME_RULE
FILE_ZONE = (
    "/subscriptions/00000000-0000-0000-0000-0000000000aa/resourceGroups/hub-dns/providers/"
    "Microsoft.Network/privateDnsZones/privatelink.file.core.windows.net"
)
TOO_MANY = (
    "at most 20 namespaces with identity_per access (Azure allows 20 federated credentials on "
    "one identity), or set identity_per to namespace"
)
BAD = [
    (
        {"storage_account_name": "acme-models"},
        f"storage_account_name must be {ACCOUNT_RULE}, got 'acme-models'",
    ),
    ({"storage_account_name": "ab"}, f"storage_account_name must be {ACCOUNT_RULE}, got 'ab'"),
    (
        {"storage_account_name": "a" * 25},
        f"storage_account_name must be {ACCOUNT_RULE}, got '{'a' * 25}'",
    ),
    ({"container_name": "llama--3"}, f"container_name must be {CONTAINER_RULE}, got 'llama--3'"),
    ({"container_name": "Models"}, f"container_name must be {CONTAINER_RULE}, got 'Models'"),
    ({"container_name": "ab"}, f"container_name must be {CONTAINER_RULE}, got 'ab'"),
    (
        {"create_storage_account": False},
        "storage_account_name is missing; "
        "it must be the existing account's name when create_storage_account "
        "is false",
    ),
    (
        {
            "create_storage_account": False,
            "storage_account_name": "acme",
            "sku_name": "Standard_ZRS",
        },
        "sku_name must be unset when create_storage_account is false (the store leaves the "
        "existing account's settings alone), got 'Standard_ZRS'",
    ),
    (
        {"sku_name": "Premium_LRS"},
        "sku_name must be one of Standard_LRS, Standard_ZRS, Standard_GRS, Standard_RAGRS, "
        "Standard_GZRS, Standard_RAGZRS, got 'Premium_LRS'",
    ),
    (
        {"allowed_subnet_ids": ["aks-nodes"]},
        f"allowed_subnet_ids must be {SUBNET_ID_RULE}, got 'aks-nodes'",
    ),
    (
        {"allowed_subnet_ids": []},
        "allowed_subnet_ids must be at least one subnet id when given, got []",
    ),
    (
        {"allow_all_networks": True, "allowed_subnet_ids": [SUBNET]},
        "allow_all_networks must be false when allowed_subnet_ids is given (the account then "
        "denies every other network), got true",
    ),
    (
        {"allow_all_networks": True, "private_endpoint_subnet_id": PE_SUBNET},
        "allow_all_networks must be false when private_endpoint_subnet_id is given (the "
        "account then denies every other network), got true",
    ),
    (
        {"allowed_subnet_ids": [SUBNET], "private_endpoint_subnet_id": PE_SUBNET},
        "allowed_subnet_ids must be unset when private_endpoint_subnet_id is given (the "
        f"account's public network access is then off), got ['{SUBNET}']",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": FILE_ZONE},
        "private_dns_zone_id must be the id of a private DNS zone named "
        "privatelink.blob.core.windows.net (the zone the blob endpoint's records need; this "
        f"one is privatelink.file.core.windows.net), got '{FILE_ZONE}'",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": "privatelink.blob"},
        "private_dns_zone_id must be a private DNS zone resource id (/subscriptions/<id>/"
        "resourceGroups/<rg>/providers/Microsoft.Network/privateDnsZones/"
        "privatelink.blob.core.windows.net), got 'privatelink.blob'",
    ),
    (
        {"private_dns_zone_id": FILE_ZONE.replace(".file.", ".blob.")},
        "private_dns_zone_id must be unset unless private_endpoint_subnet_id is given (the zone "
        "serves the private endpoint; virtual network rules need none), got "
        f"'{FILE_ZONE.replace('.file.', '.blob.')}'",
    ),
    (
        {
            "create_storage_account": False,
            "storage_account_name": "acme",
            "allow_all_networks": True,
        },
        "allow_all_networks must be unset when create_storage_account is false (the store "
        "leaves the existing account's settings alone), got true",
    ),
    (
        {
            "create_storage_account": False,
            "storage_account_name": "acme",
            "private_endpoint_subnet_id": PE_SUBNET,
        },
        "private_endpoint_subnet_id must be unset when create_storage_account is false (the "
        f"store leaves the existing account's settings alone), got '{PE_SUBNET}'",
    ),
    ({"blob_soft_delete_days": 400}, "blob_soft_delete_days must be 0 (off) to 365 days, got 400"),
    (
        {"container_soft_delete_days": 366},
        "container_soft_delete_days must be 0 (off) to 365 days, got 366",
    ),
    (
        {"allowed_subnet_ids": [SUBNET.replace("/vn/", "/v/")]},
        f"allowed_subnet_ids must be {SUBNET_ID_RULE}, got '{SUBNET.replace('/vn/', '/v/')}'",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET.replace(SUB, "my-subscription")},
        f"private_endpoint_subnet_id must be {SUBNET_ID_RULE}, got "
        f"'{PE_SUBNET.replace(SUB, 'my-subscription')}'",
    ),
    ({"resource_group_name": "models."}, f"resource_group_name must be {RG_RULE}, got 'models.'"),
    (
        {"resource_group_name": "r" * 91},
        f"resource_group_name must be {RG_RULE}, got '{'r' * 91}'",
    ),
    (
        {"cluster_resource_group_name": "ml rg"},
        f"cluster_resource_group_name must be {RG_RULE}, got 'ml rg'",
    ),
    (
        {"mount_mode": "key"},
        "mount_mode must be one of workload-identity-token, account-key, got 'key'",
    ),
    ({"identity_per": "pod"}, "identity_per must be one of access, namespace, got 'pod'"),
    (
        {"readers": [f"ns{i}" for i in range(21)]},
        f"readers must be {TOO_MANY}, got '21 namespaces'",
    ),
    (
        {"readers": ["inference"], "writers": [f"w{i}" for i in range(21)]},
        f"writers must be {TOO_MANY}, got '21 namespaces'",
    ),
    (
        {"block_cache_prefetch": 5},
        "block_cache_prefetch must be 0 (off) or at least 11 (blobfuse2's minimum), got 5",
    ),
    (
        {"block_cache_pool_size_mib": 256},
        "block_cache_pool_size_mib must be at least block_cache_prefetch x "
        "block_cache_block_size_mib = 32 x 16 = 512 MiB (blobfuse2 refuses a smaller pool), "
        "got 256",
    ),
    (
        {"block_cache_block_size_mib": 0},
        "block_cache_block_size_mib must be a positive whole number, got 0",
    ),
    (
        {"negative_cache_seconds": -1},
        "negative_cache_seconds must be a whole number of seconds, 0 or more, got -1",
    ),
    *[
        (
            {"extra_mount_options": [option]},
            f"extra_mount_options must be {DRIVER_SETS}, got '{option}'",
        )
        for option in (
            "--container-name=other",
            "--tmp-path=/tmp/x",
            "--config-file=/etc/b.yaml",
            "--auth-type=key",
        )
    ],
    *[
        (
            {"extra_mount_options": [option]},
            f"extra_mount_options must be {CONFLICTS}, got '{option}'",
        )
        for option in ("--file-cache-timeout=120", "--preload=true", "--streaming=true")
    ],
    *[
        (
            {"extra_mount_options": [option]},
            f"extra_mount_options must be {STORE_SETS}, got '{option}'",
        )
        for option in ("-o ro", "-o umask=0022,rw", "--block-cache-pool-size=100")
    ],
    (
        {"extra_mount_options": ["--log-level=LOG_DEBUG --tmp-path=/x"]},
        "extra_mount_options must be one blobfuse2 option per item, without spaces ('-o x' "
        "aside), got '--log-level=LOG_DEBUG --tmp-path=/x'",
    ),
    (
        {"tags": {"team/ml": "x"}},
        "tags must be names that are Azure tag names (1-128 characters, the storage account "
        "limit, without < > % & \\ ? /), got 'team/ml'",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD)
def test_bad_input(args, message):
    with pytest.raises(ModelStoreInputError) as err:
        AzureBlobModelStore.validate("llama", {**BASE, "readers": ["inference"], **args})
    assert str(err.value) == f"llama: {message}"


def test_store_name_must_make_a_container_name():
    with pytest.raises(ModelStoreInputError) as err:
        AzureBlobModelStore.validate("ab", {**BASE, "readers": ["inference"]})
    assert str(err.value) == (
        f"ab: store name must be a name that makes {CONTAINER_RULE} (or give container_name), "
        "got 'ab'"
    )
    AzureBlobModelStore.validate("ab", {**BASE, "readers": ["inference"], "container_name": "abc"})
    assert b.default_container_name("Llama_3.1-70B") == "llama-3-1-70b"


def test_bad_input_registers_nothing():
    assert_refused(
        blob(mount_mode="key"),
        "llama: mount_mode must be one of workload-identity-token, account-key, got 'key'",
    )


def test_names_fit_azure_rules():
    long_ns, long_sa = "n" * 63, "s" * 253
    fic = ident.credential_name(long_ns, long_sa)
    assert 3 <= len(fic) <= 120 and fic[0].isalnum()
    assert ident.credential_name(long_ns, long_sa) != ident.credential_name(long_ns, "t" * 253)
    assert ident.credential_name("inference", "vllm.sa") == "inference-vllm-sa"
    assert 3 <= len(ident.identity_name("x" * 63, "n" * 63)) <= 128


# -- who may read and write, as blobfuse2 presents the PVs (tests/fuse_mounts.py) ------------

QWEN = {
    "source": "hf://Qwen/Qwen2.5-0.5B-Instruct",
    "revision": "7ae557604adf67be50417f59c2c2f167def9a775",
}
JOB = "kubernetes:batch/v1:Job"


@pytest.mark.parametrize("extra", [[], ["-o umask=0022"]], ids=["", "umask"])
def test_the_seed_writes_the_store_root_and_every_reader_reads_it(extra):
    # A guard, not a fix: blobfuse2 with -o allow_other shows everything 0777 and the kernel
    # checks no mode (default_permissions is dropped), so the seed (65532) writes and every
    # uid reads as long as each PV keeps -o allow_other. A umask changes only what is shown.
    _, p = run(model=QWEN, extra_mount_options=extra)
    assert_seed_writes_and_readers_read(p, blobfuse_view)
