"""AzureFilesNfsModelStore: the FileStorage account and its network, the NFS share and its
sizes, the PVs the Azure Files CSI driver reads, mount_for, preflight against the cluster's
facts and subnets, and exact input errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from pulumi_modelstore import WorkloadMount
from pulumi_modelstore.azure import AzureFilesNfsModelStore, AzureFilesNfsModelStoreArgs
from pulumi_modelstore.azure import files as f
from pulumi_modelstore.azure import validation as az_v
from pulumi_modelstore.plan.engine import Plan, PlanError
from pulumi_modelstore.plan.placeholders import INVOKES
from pulumi_modelstore.plan.placeholders import azure as placeholders
from tests.conftest import assert_refused, consumer_mounts, plan
from tests.rules import RG_RULE, SUBNET_ID_RULE

ACCOUNT = "azure-native:storage:StorageAccount"
SHARE = "azure-native:storage:FileShare"
PE = "azure-native:network:PrivateEndpoint"
ZONE = "azure-native:privatedns:PrivateZone"
LINK = "azure-native:privatedns:VirtualNetworkLink"
ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
GET_CLUSTER = "azure-native:containerservice:getManagedCluster"
GET_SUBNET = "azure-native:network:getSubnet"

CLUSTER, GROUP = "ml", "ml-rg"
SUB = placeholders.subscription_id({})
NODE_SUBNET = (
    f"/subscriptions/{SUB}/resourceGroups/{GROUP}/providers/Microsoft.Network/"
    f"virtualNetworks/{CLUSTER}-vnet/subnets/{CLUSTER}-nodes"
)
OTHER_SUBNET = NODE_SUBNET.replace(f"{CLUSTER}-nodes", "gpu")
PE_SUBNET = NODE_SUBNET.replace(f"{CLUSTER}-nodes", "endpoints")
ACCOUNT_NAME = az_v.default_account_name(SUB, GROUP, "llama")


def nfs(**args: Any) -> Callable[[], AzureFilesNfsModelStore]:
    fields: dict[str, Any] = {
        "cluster_name": CLUSTER,
        "cluster_resource_group_name": GROUP,
        "readers": ["inference"],
        **args,
    }
    return lambda: AzureFilesNfsModelStore("llama", cast(AzureFilesNfsModelStoreArgs, fields))


def run(invokes: Any = None, **args: Any) -> tuple[dict[str, WorkloadMount], Plan]:
    return consumer_mounts(nfs(**args), invokes=invokes)


def pvs(p: Plan) -> dict[str, dict[str, Any]]:
    return {s["inputs"]["spec"]["claimRef"]["namespace"]: s["inputs"] for s in p.by_type(PV)}


def cluster_answer(**changes: Any) -> dict[str, Any]:
    def answer(args, config):
        base = INVOKES[GET_CLUSTER](args, config)
        return {k: v for k, v in {**base, **changes}.items() if v is not None}

    return {GET_CLUSTER: answer}


def subnet_answer(*, endpoints: list[str], locations: list[str] | None = None) -> dict[str, Any]:
    def answer(args, config):
        base = INVOKES[GET_SUBNET](args, config)
        found = [
            {"service": s, **({"locations": locations} if locations else {})} for s in endpoints
        ]
        return {**base, "serviceEndpoints": found}

    return {GET_SUBNET: answer}


# -- the account ----------------------------------------------------------------------------


def test_new_account_defaults():
    _, p = run(writers=["loader"])
    (account,) = p.by_type(ACCOUNT)
    i = account["inputs"]
    assert i["accountName"] == ACCOUNT_NAME
    assert (i["kind"], i["sku"], i["location"]) == (
        "FileStorage",
        {"name": "Premium_LRS"},
        "eastus",
    )
    assert i["resourceGroupName"] == GROUP
    # NFS cannot use secure transfer; the network is the protection.
    assert i["enableHttpsTrafficOnly"] is False
    assert i["allowSharedKeyAccess"] is False
    assert i["minimumTlsVersion"] == "TLS1_2"
    assert i["publicNetworkAccess"] == "Enabled"
    assert i["networkRuleSet"] == {
        "defaultAction": "Deny",
        "bypass": "AzureServices",
        "virtualNetworkRules": [{"virtualNetworkResourceId": NODE_SUBNET, "action": "Allow"}],
    }
    assert not i["networkRuleSet"].get("ipRules")  # IP rules do not admit NFS
    assert i["tags"] == {"modelstore-store": "llama", "managed-by": "pulumi-modelstore"}
    assert (account["protect"], account["retainOnDelete"]) == (True, True)
    assert not p.by_type(PE)


def test_allowed_subnets_replace_the_node_subnets_and_each_is_checked_once():
    _, p = run(allowed_subnet_ids=[OTHER_SUBNET, PE_SUBNET])
    rules = p.by_type(ACCOUNT)[0]["inputs"]["networkRuleSet"]["virtualNetworkRules"]
    assert [r["virtualNetworkResourceId"] for r in rules] == [OTHER_SUBNET, PE_SUBNET]
    looked_up = [c["args"]["subnetName"] for c in p.invokes if c["token"] == GET_SUBNET]
    assert sorted(looked_up) == ["endpoints", "gpu"]


def test_two_stores_look_a_subnet_up_once():
    def program() -> None:
        nfs()()
        AzureFilesNfsModelStore(
            "t5",
            {"cluster_name": CLUSTER, "cluster_resource_group_name": GROUP, "readers": ["t5"]},
        )

    p = plan(program)
    assert [c["token"] for c in p.invokes].count(GET_SUBNET) == 1


def test_private_endpoint_instead_of_network_rules():
    _, p = run(private_endpoint_subnet_id=PE_SUBNET)
    i = p.by_type(ACCOUNT)[0]["inputs"]
    assert i["publicNetworkAccess"] == "Disabled"
    assert i["networkRuleSet"] == {"defaultAction": "Deny", "bypass": "AzureServices"}
    (endpoint,) = p.by_type(PE)
    connection = endpoint["inputs"]["privateLinkServiceConnections"][0]
    assert connection["groupIds"] == ["file"]
    assert connection["privateLinkServiceId"].endswith(f"storageAccounts/{ACCOUNT_NAME}")
    assert endpoint["inputs"]["subnet"] == {"id": PE_SUBNET}
    (zone,) = p.by_type(ZONE)
    assert zone["inputs"]["privateZoneName"] == "privatelink.file.core.windows.net"
    (link,) = p.by_type(LINK)
    assert link["inputs"]["virtualNetwork"] == {"id": PE_SUBNET.rsplit("/subnets/", 1)[0]}
    assert link["inputs"]["registrationEnabled"] is False
    (group,) = p.by_type(ZONE_GROUP)
    assert group["inputs"]["privateDnsZoneConfigs"][0]["privateDnsZoneId"].endswith(
        "privateDnsZones/privatelink.file.core.windows.net"
    )
    # No subnet lookup: a private endpoint needs no service endpoint.
    assert GET_SUBNET not in [c["token"] for c in p.invokes]


HUB_ZONE = (
    "/subscriptions/00000000-0000-0000-0000-0000000000aa/resourceGroups/hub-dns/providers/"
    "Microsoft.Network/privateDnsZones/privatelink.file.core.windows.net"
)


def test_a_private_endpoint_s_zone_and_link_belong_to_the_cluster_scope():
    # Shared by the cluster's stores; aliased from the names they had under the store.
    _, p = run(private_endpoint_subnet_id=PE_SUBNET)
    store, scope = p.by_name("llama"), p.by_type("modelstore:index:AksCluster")[0]
    (zone,) = p.by_type(ZONE)
    (link,) = p.by_type(LINK)
    for state, old in ((zone, "llama-dns"), (link, "llama-dns-link")):
        assert state["parent"] == scope["urn"]
        assert {"name": old, "parentUrn": store["urn"]} in state["aliases"]  # + the SDK's
    assert zone["inputs"]["resourceGroupName"] == GROUP
    assert link["inputs"]["virtualNetworkLinkName"] == "llama-link"  # unchanged in Azure
    assert link["deleteBeforeReplace"] is True  # Azure refuses a 2nd link to one network
    assert zone["inputs"]["tags"] == {"managed-by": "pulumi-modelstore"}  # no one store's
    # No mount before the account's record exists and resolves from the network.
    (group,) = p.by_type(ZONE_GROUP)
    for pv in p.by_type(PV):
        assert {group["urn"], link["urn"]} <= set(pv["dependencies"])


def test_an_existing_zone_gets_only_the_zone_group():
    _, p = run(private_endpoint_subnet_id=PE_SUBNET, private_dns_zone_id=HUB_ZONE)
    assert not p.by_type(ZONE) and not p.by_type(LINK)
    (group,) = p.by_type(ZONE_GROUP)
    assert group["inputs"]["privateDnsZoneConfigs"] == [
        {"name": "file", "privateDnsZoneId": HUB_ZONE}
    ]
    assert p.by_type(PE)[0]["inputs"]["subnet"] == {"id": PE_SUBNET}
    assert p.by_type(ACCOUNT)[0]["inputs"]["publicNetworkAccess"] == "Disabled"
    for pv in p.by_type(PV):
        assert group["urn"] in pv["dependencies"]


def two_private_stores(second: dict[str, Any]) -> Plan:
    def program() -> None:
        nfs(private_endpoint_subnet_id=PE_SUBNET)()
        AzureFilesNfsModelStore(
            "mistral",
            cast(
                AzureFilesNfsModelStoreArgs,
                {
                    "cluster_name": CLUSTER,
                    "cluster_resource_group_name": GROUP,
                    "readers": ["inference"],
                    **second,
                },
            ),
        )

    return plan(program, fill=True)


def test_two_stores_in_one_resource_group_share_the_zone_and_one_link_per_network():
    other_vnet = PE_SUBNET.replace(f"{CLUSTER}-vnet", "edge-vnet")
    p = two_private_stores({"private_endpoint_subnet_id": OTHER_SUBNET})
    (zone,) = p.by_type(ZONE)
    assert len(p.by_type(LINK)) == 1  # both endpoints are on ml-vnet
    groups = p.by_type(ZONE_GROUP)
    assert len(groups) == len(p.by_type(PE)) == 2
    for group in groups:
        assert zone["urn"] in group["dependencies"]
    p = two_private_stores({"private_endpoint_subnet_id": other_vnet})
    assert len(p.by_type(ZONE)) == 1
    networks = sorted(link["inputs"]["virtualNetwork"]["id"] for link in p.by_type(LINK))
    assert networks == sorted(s.rsplit("/subnets/", 1)[0] for s in (PE_SUBNET, other_vnet))
    names = sorted(link["inputs"]["virtualNetworkLinkName"] for link in p.by_type(LINK))
    assert names == ["llama-link", "mistral-link"]


def test_stores_in_other_resource_groups_or_with_their_own_zone_make_none_there():
    p = two_private_stores(
        {"private_endpoint_subnet_id": OTHER_SUBNET, "resource_group_name": "models-rg"}
    )
    groups = sorted(z["inputs"]["resourceGroupName"] for z in p.by_type(ZONE))
    assert groups == [GROUP, "models-rg"]
    p = two_private_stores(
        {"private_endpoint_subnet_id": OTHER_SUBNET, "private_dns_zone_id": HUB_ZONE}
    )
    assert len(p.by_type(ZONE)) == len(p.by_type(LINK)) == 1


def test_a_store_on_another_azure_provider_names_its_own_zone():
    import pulumi
    import pulumi_azure_native as azure_native

    def program() -> None:
        nfs(private_endpoint_subnet_id=PE_SUBNET)()
        other = azure_native.Provider("spoke", subscription_id=SUB)
        AzureFilesNfsModelStore(
            "mistral",
            {
                "cluster_name": CLUSTER,
                "cluster_resource_group_name": GROUP,
                "readers": ["inference"],
                "private_endpoint_subnet_id": OTHER_SUBNET,
            },
            pulumi.ResourceOptions(providers={"azure-native": other}),
        )

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "mistral: private_dns_zone_id is missing; "
        "it must be given when the store's azure-native provider is "
        "not cluster 'ml''s (the zone a store creates is shared by the cluster's stores and "
        "made with the cluster's provider)"
    )


def test_existing_account_creates_no_account_resources():
    _, p = run(create_storage_account=False, storage_account_name="acmemodels")
    assert not p.by_type(ACCOUNT) and not p.by_type(PE)
    assert p.by_type(SHARE)[0]["inputs"]["accountName"] == "acmemodels"
    assert GET_SUBNET not in [c["token"] for c in p.invokes]
    handle = pvs(p)["inference"]["spec"]["csi"]["volumeHandle"]
    assert handle == f"{GROUP}#acmemodels#llama##llama-inference"


def test_no_identity_or_role_assignment():
    # NFS authorises by network alone: nothing of Entra ID in the plan.
    _, p = run(writers=["loader"])
    types = {s["type"] for s in p.states()}
    assert not {t for t in types if "managedidentity" in t or "authorization" in t}
    assert not [s for s in p.by_type("kubernetes:core/v1:ServiceAccount")]


ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
STORAGE_ACCOUNT_CONTRIBUTOR = "17d1049b-9a84-46fb-8f53-869881c3d3ab"


def control_plane_principal() -> str:
    """The control plane identity's principal the plan's cluster lookup answers."""
    answer = INVOKES[GET_CLUSTER]({"resourceName": CLUSTER, "resourceGroupName": GROUP}, {})
    return str(answer["identity"]["principalId"])


@pytest.mark.parametrize(
    ("args", "account"),
    [
        ({}, ACCOUNT_NAME),
        ({"create_storage_account": False, "storage_account_name": "acmemodels"}, "acmemodels"),
    ],
    ids=["new-account", "existing-account"],
)
def test_dynamic_claims_grant_the_drivers_controller_rights_on_the_account(args, account):
    """The Azure Files CSI driver's controller creates each dynamic claim's share in the
    store's account, which needs Storage Account Contributor there (azurefile-csi-driver
    ``docs/driver-parameters.md``, "required permissions for CSI driver controller"); on AKS
    the managed driver's controller acts as the cluster's control plane identity (same page,
    "For AKS-managed CSI driver, use the AKS control plane identity"). Without the grant every
    claim on the class stays Pending."""
    _, p = run(dynamic_claims=True, **args)
    (assignment,) = p.by_type(ROLE_ASSIGNMENT)
    inputs = assignment["inputs"]
    scope = (
        f"/subscriptions/{SUB}/resourceGroups/{GROUP}/providers/Microsoft.Storage/"
        f"storageAccounts/{account}"
    )
    assert inputs["scope"] == scope
    assert inputs["roleDefinitionId"] == (
        f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/"
        f"{STORAGE_ACCOUNT_CONTRIBUTOR}"
    )
    assert inputs["principalId"] == control_plane_principal()
    assert inputs["principalType"] == "ServicePrincipal"
    # The class waits for the grant (a claim made at once would fail first), the grant for a
    # new account.
    (sc,) = p.by_type(SC)
    assert assignment["urn"] in sc["dependencies"]
    accounts = p.by_type(ACCOUNT)
    assert [a["urn"] for a in accounts] == [
        u for u in assignment["dependencies"] if u.endswith("-account")
    ]
    # Only for dynamic claims: the store's own NFS mounts need no Entra ID role.
    _, without = run(**args)
    assert not without.by_type(ROLE_ASSIGNMENT)


def test_a_user_assigned_control_plane_identity_is_granted():
    principal = "00000000-0000-0000-0000-00000000c0de"
    identity = {
        "type": "UserAssigned",
        "userAssignedIdentities": {
            f"/subscriptions/{SUB}/resourceGroups/{GROUP}/providers/"
            "Microsoft.ManagedIdentity/userAssignedIdentities/ml-control-plane": {
                "principalId": principal,
                "clientId": "00000000-0000-0000-0000-00000000c1d0",
            }
        },
    }
    _, p = run(cluster_answer(identity=identity), dynamic_claims=True)
    (assignment,) = p.by_type(ROLE_ASSIGNMENT)
    assert assignment["inputs"]["principalId"] == principal


def test_dynamic_claims_on_a_cluster_without_a_managed_identity_are_refused():
    assert_refused(
        nfs(dynamic_claims=True),
        "llama: dynamic_claims must be false on cluster ml, whose control plane has no "
        "managed identity the store can grant Storage Account Contributor on its storage "
        "account (the AKS Azure Files CSI driver's controller creates each claim's share as "
        "that identity): use a cluster with a system- or user-assigned identity, or give the "
        "cluster's control_plane_principal_id, got true",
        invokes=cluster_answer(identity=None),
    )


# -- the share ------------------------------------------------------------------------------


def test_share_defaults():
    _, p = run()
    (share,) = p.by_type(SHARE)
    i = share["inputs"]
    assert i["enabledProtocols"] == "NFS"
    assert (i["shareName"], i["shareQuota"], i["rootSquash"]) == ("llama", 1024, "NoRootSquash")
    assert i["accountName"] == ACCOUNT_NAME
    assert "provisionedIops" not in i and "provisionedBandwidthMibps" not in i
    assert (share["protect"], share["retainOnDelete"]) == (True, True)


def test_provisioned_v2_share():
    _, p = run(
        sku_name="PremiumV2_ZRS",
        share_quota_gib=32,
        provisioned_iops=6000,
        provisioned_bandwidth_mibps=300,
        root_squash="RootSquash",
        share_name="weights",
    )
    assert p.by_type(ACCOUNT)[0]["inputs"]["sku"] == {"name": "PremiumV2_ZRS"}
    i = p.by_type(SHARE)[0]["inputs"]
    assert (i["shareQuota"], i["provisionedIops"], i["provisionedBandwidthMibps"]) == (
        32,
        6000,
        300,
    )
    assert (i["shareName"], i["rootSquash"]) == ("weights", "RootSquash")
    assert pvs(p)["inference"]["spec"]["capacity"] == {"storage": "32Gi"}


def test_protection_can_be_turned_off():
    _, p = run(protect=False)
    for type_ in (ACCOUNT, SHARE):
        (state,) = p.by_type(type_)
        assert (state["protect"], state["retainOnDelete"]) == (False, False)


@pytest.mark.parametrize(
    ("gib", "iops", "mibps"), [(100, 3100, 110), (1024, 4024, 203), (102400, 102400, 10340)]
)
def test_v1_baseline_matches_azure_s_table(gib, iops, mibps):
    assert f.baseline_v1(gib) == (iops, mibps)


def test_the_size_docstring_states_the_default_s_throughput():
    from pulumi_modelstore.fields import fields_of

    field = fields_of(AzureFilesNfsModelStoreArgs)["share_quota_gib"]
    iops, mibps = f.baseline_v1(field.default)
    assert f"{field.default} GiB: {iops} IOPS, {mibps} MiB/s" in " ".join(field.doc.split())


# -- the PVs ----------------------------------------------------------------------------------


def test_pvs_for_readers_and_writers():
    mounts, p = run(readers=["inference", "batch"], writers=["loader"])
    found = pvs(p)
    for ns, spec in ((ns, found[ns]["spec"]) for ns in ("inference", "batch", "loader")):
        reader = ns != "loader"
        csi = spec["csi"]
        assert csi["driver"] == "file.csi.azure.com"
        assert csi["volumeHandle"] == f"{GROUP}#{ACCOUNT_NAME}#llama##llama-{ns}"
        attributes = {
            "resourceGroup": GROUP,
            "storageAccount": ACCOUNT_NAME,
            "shareName": "llama",
            "protocol": "nfs",
            "fsGroupChangePolicy": "None",
        }
        if reader:
            attributes["mountPermissions"] = "0"
        assert csi["volumeAttributes"] == attributes
        assert csi["readOnly"] is reader
        assert spec["accessModes"] == ["ReadOnlyMany" if reader else "ReadWriteMany"]
        assert spec["mountOptions"] == ["nconnect=4", "noresvport", "actimeo=30"]
        assert spec["capacity"] == {"storage": "1024Gi"}
    claims = {c["inputs"]["metadata"]["namespace"]: c["inputs"]["spec"] for c in p.by_type(PVC)}
    assert claims["batch"]["accessModes"] == ["ReadOnlyMany"]
    assert claims["batch"]["volumeName"] == "llama-batch"
    # The policy is the driver's PV attribute only: a pod's securityContext takes only Always
    # or OnRootMismatch (test_kube_schema.py validates the patched pods).
    assert mounts["inference"].pod_security_context == {}
    assert mounts["loader"].pod_security_context == {}


def test_the_handle_keeps_the_fields_the_driver_parses():
    # GetFileShareInfo: rg, account, share in fields 0-2, a VHD name in 3, field 4 unread.
    _, p = run()
    fields = pvs(p)["inference"]["spec"]["csi"]["volumeHandle"].split("#")
    assert fields[:4] == [GROUP, ACCOUNT_NAME, "llama", ""]
    assert fields[4] == "llama-inference" and len(fields) == 5


def test_extra_mount_options_replace_the_store_s_of_the_same_name():
    _, p = run(extra_mount_options=["nconnect=8", "rsize=1048576"])
    options = pvs(p)["inference"]["spec"]["mountOptions"]
    assert options == ["nconnect=8", "noresvport", "actimeo=30", "rsize=1048576"]


def test_pod_patch_keeps_the_pod_s_own_context_and_adds_no_fs_group_change_policy():
    mounts, _ = run()
    pod = mounts["inference"].patch_pod_spec(
        {"securityContext": {"fsGroup": 1000}, "containers": [{"name": "vllm"}]}
    )
    assert pod["securityContext"] == {"fsGroup": 1000}


# -- preflight --------------------------------------------------------------------------------


def test_preflight_refuses_a_cluster_without_the_file_driver():
    assert_refused(
        nfs(),
        "llama: cluster_name must be a cluster with the Azure Files CSI driver on "
        "(storageProfile.fileCSIDriver.enabled; see azure.cluster_settings), got 'ml'",
        invokes=cluster_answer(storageProfile={"fileCSIDriver": {"enabled": False}}),
    )


MANAGED_VNET = cluster_answer(
    agentPoolProfiles=[{"name": "system", "mode": "System"}, {"name": "gpu", "mode": "User"}]
)


def test_managed_vnet_is_fine_with_a_named_subnet_or_a_private_endpoint():
    _, p = run(MANAGED_VNET, allowed_subnet_ids=[OTHER_SUBNET])
    assert p.by_type(SHARE)
    _, p = run(MANAGED_VNET, private_endpoint_subnet_id=PE_SUBNET)
    assert p.by_type(PE)


PREFLIGHT = [
    (
        {},
        MANAGED_VNET,
        "llama: allowed_subnet_ids is missing; "
        "it must be given, or private_endpoint_subnet_id (cluster ml is "
        "on the AKS-managed virtual network, with no node subnet to admit: NFS without a "
        "network rule would refuse every mount)",
    ),
    (
        {},
        subnet_answer(endpoints=["Microsoft.KeyVault"]),
        "llama: allowed_subnet_ids must be subnets with the Microsoft.Storage or "
        "Microsoft.Storage.Global service endpoint (subnet ml-nodes of virtual network "
        "ml-vnet has neither: az network vnet subnet update -g ml-rg --vnet-name ml-vnet -n "
        f"ml-nodes --service-endpoints Microsoft.Storage.Global), got '{NODE_SUBNET}'",
    ),
    (
        {"allowed_subnet_ids": [OTHER_SUBNET]},
        subnet_answer(endpoints=[]),
        "llama: allowed_subnet_ids must be subnets with the Microsoft.Storage or "
        "Microsoft.Storage.Global service endpoint (subnet gpu of virtual network ml-vnet has "
        "neither: az network vnet subnet update -g ml-rg --vnet-name ml-vnet -n gpu "
        f"--service-endpoints Microsoft.Storage.Global), got '{OTHER_SUBNET}'",
    ),
    (
        {"region": "westeurope"},
        None,
        "llama: region must be the cluster's region eastus (every read would cross regions), "
        "or set allow_other_region, got 'westeurope'",
    ),
    (
        {"region": "westeurope", "allow_other_region": True},
        subnet_answer(endpoints=["Microsoft.Storage"], locations=["eastus", "westus"]),
        "llama: allowed_subnet_ids must be subnets whose storage service endpoint reaches the "
        "account's region westeurope (subnet ml-nodes of virtual network ml-vnet reaches "
        "eastus, westus only: az network vnet subnet update -g ml-rg --vnet-name ml-vnet -n "
        f"ml-nodes --service-endpoints Microsoft.Storage.Global), got '{NODE_SUBNET}'",
    ),
    (
        {"resource_group_name": "MC_ml-rg_ml_eastus"},
        None,
        "llama: resource_group_name must be a resource group other than cluster ml's node "
        "resource group MC_ml-rg_ml_eastus (AKS manages that group and deletes it with the "
        "cluster, and the store's storage account and model with it), got 'MC_ml-rg_ml_eastus'",
    ),
    (
        {"resource_group_name": "ml-nodes"},
        cluster_answer(nodeResourceGroup="ML-Nodes"),
        "llama: resource_group_name must be a resource group other than cluster ml's node "
        "resource group ML-Nodes (AKS manages that group and deletes it with the cluster, and "
        "the store's storage account and model with it), got 'ml-nodes'",
    ),
]


@pytest.mark.parametrize(
    ("args", "invokes", "message"),
    PREFLIGHT,
    ids=[
        "managed-vnet",
        "node-subnet-endpoint",
        "allowed-subnet-endpoint",
        "region",
        "endpoint-region",
        "default-node-resource-group",
        "node-resource-group",
    ],
)
def test_preflight_failures(args, invokes, message):
    assert_refused(nfs(**args), message, invokes=invokes)


OTHER_SUB = "00000000-0000-0000-0000-0000000000cc"


def test_a_subnet_of_another_subscription_is_not_looked_up():
    # get_subnet reads the provider's subscription: it would miss the subnet or a namesake.
    elsewhere = NODE_SUBNET.replace(SUB, OTHER_SUB)
    _, p = run(subnet_answer(endpoints=[]), allowed_subnet_ids=[elsewhere])
    rules = p.by_type(ACCOUNT)[0]["inputs"]["networkRuleSet"]["virtualNetworkRules"]
    assert [r["virtualNetworkResourceId"] for r in rules] == [elsewhere]
    assert GET_SUBNET not in [c["token"] for c in p.invokes]


def test_a_private_endpoint_is_in_the_cluster_s_region_and_subscription():
    # Azure creates an endpoint only in its virtual network's region and subscription; the
    # account may be elsewhere.
    _, p = run(private_endpoint_subnet_id=PE_SUBNET, region="westeurope", allow_other_region=True)
    assert p.by_type(ACCOUNT)[0]["inputs"]["location"] == "westeurope"
    assert p.by_type(PE)[0]["inputs"]["location"] == "eastus"
    elsewhere = PE_SUBNET.replace(SUB, OTHER_SUB)
    assert_refused(
        nfs(private_endpoint_subnet_id=elsewhere),
        f"llama: private_endpoint_subnet_id must be a subnet in subscription {SUB}, the one the "
        "store deploys to (Azure creates a private endpoint only in its virtual network's "
        f"subscription), got '{elsewhere}'",
    )


def test_either_storage_endpoint_will_do():
    _, p = run(subnet_answer(endpoints=["Microsoft.Storage"]))
    assert p.by_type(ACCOUNT)
    # A regional endpoint reaches its own region (ARM may spell it as displayed).
    _, p = run(subnet_answer(endpoints=["Microsoft.Storage"], locations=["East US", "westus"]))
    assert p.by_type(ACCOUNT)
    # The global endpoint reaches every region.
    regions = subnet_answer(endpoints=["Microsoft.Storage.Global"], locations=["*"])
    _, p = run(regions, region="westeurope", allow_other_region=True)
    assert p.by_type(ACCOUNT)


def test_another_region_when_allowed():
    _, p = run(region="westeurope", allow_other_region=True)
    assert p.by_type(ACCOUNT)[0]["inputs"]["location"] == "westeurope"


# -- bad input --------------------------------------------------------------------------------

V2_ONLY = (
    "unset unless sku_name is PremiumV2_LRS or PremiumV2_ZRS (provisioned v1 derives it from "
    "share_quota_gib; sku_name is Premium_LRS)"
)
DRIVER_OPTIONS = (
    "NFS mount options other than vers, nfsvers, minorversion and sec (the driver sets "
    "vers=4,minorversion=1,sec=sys itself)"
)
BLOB_ZONE = HUB_ZONE.replace(".file.", ".blob.")
PUBLIC_ZONE = HUB_ZONE.replace("privateDnsZones", "dnszones")
ZONE_LINK = f"{HUB_ZONE}/virtualNetworkLinks/hub"
SHORT_GUID_ZONE = HUB_ZONE.replace("0000000000aa", "aa")  # not a subscription GUID
ZONE_ID_RULE = (
    "a private DNS zone resource id (/subscriptions/<id>/resourceGroups/<rg>/providers/"
    "Microsoft.Network/privateDnsZones/privatelink.file.core.windows.net)"
)
BAD = [
    (
        {"storage_account_name": "Models-Store"},
        "storage_account_name must be a storage account name (3-24 lowercase letters and "
        "digits, unique in Azure), got 'Models-Store'",
    ),
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
            "allowed_subnet_ids": [NODE_SUBNET],
        },
        "allowed_subnet_ids must be unset when create_storage_account is false (the store "
        f"leaves the existing account's settings alone), got ['{NODE_SUBNET}']",
    ),
    (
        {"share_name": "Llama--3"},
        f"share_name must be {az_v.SHARE_NAME_RULE}, got 'Llama--3'",
    ),
    (
        {"share_name": "ab"},
        f"share_name must be {az_v.SHARE_NAME_RULE}, got 'ab'",
    ),
    (
        {"share_quota_gib": 50},
        "share_quota_gib must be 100 to 102400 GiB for Premium_LRS (provisioned v1; the "
        "minimum is 100 GiB), got 50",
    ),
    (
        {"sku_name": "PremiumV2_LRS", "share_quota_gib": 16},
        "share_quota_gib must be 32 to 262144 GiB for PremiumV2_LRS (provisioned v2; the "
        "minimum is 32 GiB), got 16",
    ),
    (
        {"share_quota_gib": 200000},
        "share_quota_gib must be 100 to 102400 GiB for Premium_LRS (provisioned v1; the "
        "minimum is 100 GiB), got 200000",
    ),
    ({"provisioned_iops": 5000}, f"provisioned_iops must be {V2_ONLY}, got 5000"),
    (
        {"provisioned_bandwidth_mibps": 200},
        f"provisioned_bandwidth_mibps must be {V2_ONLY}, got 200",
    ),
    (
        {"sku_name": "PremiumV2_LRS", "provisioned_iops": 2000},
        "provisioned_iops must be 3000 to 102400 for PremiumV2_LRS, got 2000",
    ),
    (
        {"sku_name": "PremiumV2_LRS", "provisioned_bandwidth_mibps": 20000},
        "provisioned_bandwidth_mibps must be 100 to 10340 for PremiumV2_LRS, got 20000",
    ),
    (
        {"sku_name": "Standard_LRS"},
        "sku_name must be one of Premium_LRS, Premium_ZRS, PremiumV2_LRS, PremiumV2_ZRS, got "
        "'Standard_LRS'",
    ),
    (
        {"root_squash": "root"},
        "root_squash must be one of NoRootSquash, RootSquash, AllSquash, got 'root'",
    ),
    *[
        (
            {"extra_mount_options": [option]},
            f"extra_mount_options must be {DRIVER_OPTIONS}, got '{option}'",
        )
        for option in ("vers=3", "minorversion=2", "sec=krb5")
    ],
    (
        {"allowed_subnet_ids": ["subnet-1"]},
        f"allowed_subnet_ids must be {SUBNET_ID_RULE}, got 'subnet-1'",
    ),
    (
        {"allowed_subnet_ids": [NODE_SUBNET], "private_endpoint_subnet_id": PE_SUBNET},
        "allowed_subnet_ids must be unset when private_endpoint_subnet_id is given (the "
        f"account's public network access is then off), got ['{NODE_SUBNET}']",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": BLOB_ZONE},
        f"private_dns_zone_id must be the id of a private DNS zone named {f.PRIVATE_DNS_ZONE} "
        f"(the zone the file endpoint's records need; this one is "
        f"privatelink.blob.core.windows.net), got '{BLOB_ZONE}'",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": f.PRIVATE_DNS_ZONE},
        f"private_dns_zone_id must be {ZONE_ID_RULE}, got 'privatelink.file.core.windows.net'",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": PUBLIC_ZONE},
        f"private_dns_zone_id must be {ZONE_ID_RULE}, got '{PUBLIC_ZONE}'",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": ZONE_LINK},
        f"private_dns_zone_id must be {ZONE_ID_RULE}, got '{ZONE_LINK}'",
    ),
    (
        {"private_dns_zone_id": HUB_ZONE},
        "private_dns_zone_id must be unset unless private_endpoint_subnet_id is given (the zone "
        f"serves the private endpoint; virtual network rules need none), got '{HUB_ZONE}'",
    ),
    (
        {"allowed_subnet_ids": [NODE_SUBNET], "private_dns_zone_id": HUB_ZONE},
        "private_dns_zone_id must be unset unless private_endpoint_subnet_id is given (the zone "
        f"serves the private endpoint; virtual network rules need none), got '{HUB_ZONE}'",
    ),
    (
        {
            "create_storage_account": False,
            "storage_account_name": "acme",
            "private_dns_zone_id": HUB_ZONE,
        },
        "private_dns_zone_id must be unset when create_storage_account is false (the store "
        f"leaves the existing account's settings alone), got '{HUB_ZONE}'",
    ),
    (
        {"allowed_subnet_ids": [NODE_SUBNET.replace("/ml-nodes", "/ml-nodes.")]},
        f"allowed_subnet_ids must be {SUBNET_ID_RULE}, got "
        f"'{NODE_SUBNET.replace('/ml-nodes', '/ml-nodes.')}'",
    ),
    (
        {
            "private_endpoint_subnet_id": PE_SUBNET.replace(
                "/resourceGroups/ml-rg/", "/resourceGroups/rg./"
            )
        },
        f"private_endpoint_subnet_id must be {SUBNET_ID_RULE}, got "
        f"'{PE_SUBNET.replace('/resourceGroups/ml-rg/', '/resourceGroups/rg./')}'",
    ),
    (
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": SHORT_GUID_ZONE},
        f"private_dns_zone_id must be {ZONE_ID_RULE}, got '{SHORT_GUID_ZONE}'",
    ),
    ({"resource_group_name": "models."}, f"resource_group_name must be {RG_RULE}, got 'models.'"),
    (
        {"resource_group_name": "models/rg"},
        f"resource_group_name must be {RG_RULE}, got 'models/rg'",
    ),
    (
        {"share_name": "llama-"},
        f"share_name must be {az_v.SHARE_NAME_RULE}, got 'llama-'",
    ),
    (
        {"region": "West Europe"},
        "region must be an Azure region name as ARM spells it (e.g. eastus, westeurope), got "
        "'West Europe'",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[m.split(" ")[0] for _, m in BAD])
def test_bad_input(args, message):
    assert_refused(nfs(**args), f"llama: {message}")


def test_every_bad_field_is_reported_at_once():
    with pytest.raises(PlanError) as err:
        plan(nfs(share_quota_gib=10, root_squash="x", storage_account_name="A"))
    assert len(str(err.value).splitlines()) == 3


def test_a_short_claim_name_gets_a_valid_default_share_name():
    _, p = run(claim_name="m")
    assert p.by_type(SHARE)[0]["inputs"]["shareName"] == "m-share"
