"""The AKS cluster scope: facts looked up once (absent sub-objects mean AKS's defaults), the
named preflight checks, the settings a platform stack merges into its managed cluster, and the
Azure name and tag rules every Azure store uses."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from pulumi_modelstore.azure import AksCluster, cluster_settings
from pulumi_modelstore.azure import cluster as aks
from pulumi_modelstore.azure import validation as az_v
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.plan.placeholders import INVOKES
from tests.conftest import scope_facts

GET_CLUSTER = "azure-native:containerservice:getManagedCluster"
CLIENT_CONFIG = "azure-native:authorization:getClientConfig"


def facts_of(invokes: dict[str, Any] | None = None):
    args = {"cluster_name": "ml", "cluster_resource_group_name": "ml-rg"}
    return scope_facts(lambda: AksCluster("ml", args), invokes)


def cluster_answer(**changes: Any):
    def answer(args, config):
        base = INVOKES[GET_CLUSTER](args, config)
        return {k: v for k, v in {**base, **changes}.items() if v is not None}

    return {GET_CLUSTER: answer}


def test_facts_are_looked_up_once():
    facts, again, p = facts_of()
    assert facts is again
    tokens = [c["token"] for c in p.invokes]
    assert tokens.count(GET_CLUSTER) == 1 and tokens.count(CLIENT_CONFIG) == 1
    assert (facts.name, facts.resource_group_name, facts.location) == ("ml", "ml-rg", "eastus")
    assert facts.oidc_issuer_url and facts.oidc_issuer_url.startswith("https://eastus.oic.")
    assert facts.workload_identity and facts.blob_csi and facts.file_csi
    assert facts.node_subnet_ids == (
        f"/subscriptions/{facts.subscription_id}/resourceGroups/ml-rg/providers/"
        "Microsoft.Network/virtualNetworks/ml-vnet/subnets/ml-nodes",
    )
    assert facts.node_resource_group == "MC_ml-rg_ml_eastus"
    assert facts.kubernetes_version == "1.34.2"
    assert facts.version_at_least(1, 34) and not facts.version_at_least(1, 35)


def test_the_control_plane_identity_is_the_system_assigned_one_or_the_one_user_assigned():
    """What AKS's managed CSI controllers act as (``ManagedCluster.identity``): the
    system-assigned identity's principal, else the one user-assigned identity's; none for a
    service principal cluster."""
    facts, _, _ = facts_of()
    assert az_v.is_guid(facts.control_plane_principal_id)
    user = {"principalId": "00000000-0000-0000-0000-00000000c0de", "clientId": "c"}
    answer = {"type": "UserAssigned", "userAssignedIdentities": {"/subscriptions/x/id": user}}
    facts, _, _ = facts_of(cluster_answer(identity=answer))
    assert facts.control_plane_principal_id == user["principalId"]
    facts, _, _ = facts_of(cluster_answer(identity=None))
    assert facts.control_plane_principal_id == ""


def test_absent_sub_objects_mean_the_aks_defaults():
    # A cluster made before these profiles existed reports none of them: blob off (AKS's
    # default), file driver and snapshot controller on, no issuer, no workload identity.
    facts, _, _ = facts_of(
        cluster_answer(storageProfile=None, oidcIssuerProfile=None, securityProfile=None)
    )
    assert (facts.blob_csi, facts.file_csi, facts.snapshot_controller) == (False, True, True)
    assert facts.oidc_issuer_url is None and not facts.workload_identity


def test_an_issuer_url_of_a_disabled_issuer_is_not_used():
    facts, _, _ = facts_of(
        cluster_answer(oidcIssuerProfile={"enabled": False, "issuerURL": "https://old/"})
    )
    assert facts.oidc_issuer_url is None


@pytest.mark.parametrize(
    ("changes", "check", "message"),
    [
        (
            {"oidcIssuerProfile": {"enabled": False}},
            aks.require_oidc_issuer,
            "llama: cluster_name must be a cluster with the OIDC issuer on "
            "(oidcIssuerProfile.enabled; see azure.cluster_settings), got 'ml'",
        ),
        (
            {"securityProfile": {"workloadIdentity": {"enabled": False}}},
            aks.require_workload_identity,
            "llama: cluster_name must be a cluster with workload identity on "
            "(securityProfile.workloadIdentity.enabled; see azure.cluster_settings), got 'ml'",
        ),
        (
            {"storageProfile": {"fileCSIDriver": {"enabled": True}}},
            aks.require_blob_csi_driver,
            "llama: cluster_name must be a cluster with the blob CSI driver on "
            "(storageProfile.blobCSIDriver.enabled, off by default on AKS; see "
            "azure.cluster_settings), got 'ml'",
        ),
        (
            {"storageProfile": {"fileCSIDriver": {"enabled": False}}},
            aks.require_file_csi_driver,
            "llama: cluster_name must be a cluster with the Azure Files CSI driver on "
            "(storageProfile.fileCSIDriver.enabled; see azure.cluster_settings), got 'ml'",
        ),
    ],
    ids=["no-oidc-issuer", "no-workload-identity", "no-blob-driver", "file-driver-off"],
)
def test_each_preflight_check_refuses_what_the_cluster_lacks(changes, check, message):
    facts, _, _ = facts_of(cluster_answer(**changes))
    with pytest.raises(ModelStoreInputError) as err:
        check("llama", facts)
    assert str(err.value) == message


def test_a_cluster_that_is_not_found_fails_naming_it():
    def missing(args, config):
        raise Exception("ResourceNotFound: The Resource 'managedClusters/ml' was not found")

    with pytest.raises(PlanError) as err:
        facts_of({GET_CLUSTER: missing})
    assert str(err.value).startswith(
        "llama: cluster_name must be an AKS cluster in resource group ml-rg (invoke of "
        "azure-native:containerservice:getManagedCluster failed: ResourceNotFound"
    )


def test_settings_a_platform_stack_merges():
    assert cluster_settings() == {
        "storage_profile": {
            "blob_csi_driver": {"enabled": True},
            "file_csi_driver": {"enabled": True},
            "snapshot_controller": {"enabled": True},
        },
        "oidc_issuer_profile": {"enabled": True},
        "security_profile": {"workload_identity": {"enabled": True}},
    }


def test_the_settings_are_managed_cluster_args():
    # Every key is an argument of the SDK's own input types, so a platform stack's merge is
    # not silently ignored.
    from pulumi_azure_native import containerservice as cs

    def params(cls: type) -> set[str]:
        return set(inspect.signature(cls.__init__).parameters) - {"__self__"}

    settings = cluster_settings()
    assert set(settings) <= params(cs.ManagedClusterArgs)
    assert set(settings["storage_profile"]) <= params(cs.ManagedClusterStorageProfileArgs)
    assert set(settings["security_profile"]) <= params(cs.ManagedClusterSecurityProfileArgs)
    assert set(settings["oidc_issuer_profile"]) <= params(cs.ManagedClusterOIDCIssuerProfileArgs)


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"team/ml": "x"}, "s: tags must be names that are Azure tag names"),
        ({"a" * 129: "x"}, "s: tags must be names that are Azure tag names"),
        ({"team": "x" * 257}, "s: tags must be values that are Azure tag values"),
        ({f"k{i}": "v" for i in range(49)}, "s: tags must be at most 48 tags"),
        (
            {"Team": "a", "team": "b"},
            "s: tags must be tag names distinct without regard to case (Azure treats it as "
            "'Team'), got 'team'",
        ),
    ],
)
def test_azure_tags_follow_the_resource_manager_rules(tags, message):
    with pytest.raises(ModelStoreInputError) as err:
        az_v.tags("s", "tags", tags, 2)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    ("rule", "name", "ok"),
    [
        (az_v.storage_account_name, "acmemodels01", True),
        (az_v.storage_account_name, "ab", False),
        (az_v.storage_account_name, "a" * 25, False),
        (az_v.storage_account_name, "acme-models", False),
        (az_v.storage_account_name, "AcmeModels", False),
        (az_v.container_name, "models", True),
        (az_v.container_name, "llama-3-8b", True),
        (az_v.container_name, "a" * 63, True),
        (az_v.container_name, "a" * 64, False),
        (az_v.container_name, "ab", False),
        (az_v.container_name, "-models", False),
        (az_v.container_name, "models-", False),
        (az_v.container_name, "llama--3", False),
        (az_v.container_name, "Models", False),
        (az_v.share_name, "models", True),
        (az_v.share_name, "mo--dels", False),
        (az_v.resource_group_name, "ml-rg_(prod).1", True),
        (az_v.resource_group_name, "ml-rg.", False),
        (az_v.resource_group_name, "a" * 91, False),
        (az_v.location, "eastus", True),
        (az_v.location, "East US", False),
    ],
)
def test_azure_name_rules(rule, name, ok):
    if ok:
        rule("s", "f", name)
    else:
        with pytest.raises(ModelStoreInputError):
            rule("s", "f", name)


def test_default_account_names_are_valid_and_differ_by_what_identifies_the_store():
    a = az_v.default_account_name("sub", "ml-rg", "Llama-3.1-70B-instruct-long")
    b = az_v.default_account_name("sub", "other-rg", "Llama-3.1-70B-instruct-long")
    az_v.storage_account_name("s", "f", a)
    assert a != b and a.startswith("msllama3170binst") and len(a) <= 24
