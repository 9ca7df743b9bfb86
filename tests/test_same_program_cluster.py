"""A store in the same program as its cluster (issue 25): the platform stack makes its cluster
and adds stores to it. Nothing looks the cluster up (it does not exist before the first
``pulumi up``); trust policies and names are built from the created cluster's Outputs, the
Kubernetes provider from its kubeconfig, and driver installs and claims wait for its node
groups. The same cluster passed the old way (its Output name as ``cluster_name``) is refused,
naming the way to do it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from pulumi_modelstore.aws import EfsModelStore, EksCluster, MountpointS3ModelStore
from pulumi_modelstore.plan.engine import Plan, PlanError, plan_directory
from tests.conftest import plan

EXAMPLES = Path(__file__).parent.parent / "examples"
# The data sources that would look a cluster up: a cluster made in the program is never
# looked up.
EKS_LOOKUPS = {
    "aws:eks/getCluster:getCluster",
    "aws:eks/getNodeGroups:getNodeGroups",
    "aws:eks/getNodeGroup:getNodeGroup",
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider",
    "aws:ec2/getSubnet:getSubnet",
}
ROLE = "aws:iam/role:Role"
OIDC = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"


@pytest.fixture(scope="module")
def eks_plan() -> Plan:
    return plan_directory(EXAMPLES / "eks-cluster-and-stores", "dev", fill_outputs=True)


def _one(p: Plan, type_: str) -> dict[str, Any]:
    (found,) = p.by_type(type_)
    return found


def test_an_eks_cluster_made_in_the_program_is_never_looked_up(eks_plan):
    assert {c["token"] for c in eks_plan.invokes} & EKS_LOOKUPS == set()


def test_irsa_roles_trust_the_created_oidc_provider(eks_plan):
    provider = _one(eks_plan, OIDC)
    arn, host = provider["outputs"]["arn"], provider["outputs"]["url"].removeprefix("https://")
    roles = [
        json.loads(r["inputs"]["assumeRolePolicy"])
        for r in eks_plan.by_type(ROLE)
        if "Federated" in r["inputs"]["assumeRolePolicy"]
    ]
    assert len(roles) >= 2  # the EFS driver's node role, the S3 readers' roles
    for policy in roles:
        for statement in policy["Statement"]:
            assert statement["Principal"] == {"Federated": arn}
            keys = statement["Condition"]["StringEquals"]
            assert keys[f"{host}:aud"] == "sts.amazonaws.com"
            assert keys[f"{host}:sub"].startswith("system:serviceaccount:")
    # Each role waits for the provider it trusts.
    for r in eks_plan.by_type(ROLE):
        if "Federated" in r["inputs"]["assumeRolePolicy"]:
            assert provider["urn"] in r["dependencies"]


def test_kubernetes_objects_go_to_the_created_clusters_provider(eks_plan):
    (provider,) = eks_plan.by_type("pulumi:providers:kubernetes")
    kubeconfig = json.loads(provider["inputs"]["kubeconfig"])
    cluster = _one(eks_plan, "aws:eks/cluster:Cluster")
    assert kubeconfig["clusters"][0]["cluster"]["server"] == cluster["outputs"]["endpoint"]
    assert kubeconfig["users"][0]["user"]["exec"]["args"][-4:] == [
        "--cluster-name",
        cluster["outputs"]["name"],
        "--region",
        "us-west-2",
    ]
    kube = [s for s in eks_plan.states() if s["custom"] and s["type"].startswith("kubernetes:")]
    assert kube and all(s["provider"].startswith(provider["urn"] + "::") for s in kube)


def _waits_for(p: Plan, state: dict[str, Any]) -> set[str]:
    """Every URN ``state`` waits for, through its dependencies' dependencies."""
    seen: set[str] = set()
    todo = list(state["dependencies"])
    while todo:
        urn = todo.pop()
        if urn not in seen:
            seen.add(urn)
            todo += p.by_urn(urn)["dependencies"]
    return seen


def test_driver_installs_and_claims_wait_for_the_node_group(eks_plan):
    nodes = _one(eks_plan, "aws:eks/nodeGroup:NodeGroup")["urn"]
    installs = eks_plan.by_type("kubernetes:helm.sh/v3:Release")
    claims = eks_plan.by_type("kubernetes:core/v1:PersistentVolumeClaim")
    assert len(installs) == 2 and len(claims) == 5
    assert all(nodes in s["dependencies"] for s in installs)
    assert all(nodes in _waits_for(eks_plan, s) for s in claims)


def test_efs_mount_targets_go_in_the_zones_the_program_gives(eks_plan):
    targets = eks_plan.by_type("aws:efs/mountTarget:MountTarget")
    zones = [(t["urn"].rsplit("mount-target-", 1)[-1], t["inputs"]["subnetId"]) for t in targets]
    assert sorted(zones) == [
        ("us-west-2a", "subnet-0a1b2c3d4e5f60718"),
        ("us-west-2b", "subnet-0b1c2d3e4f5a60718"),
        ("us-west-2c", "subnet-0c1d2e3f4a5b60718"),
    ]


def test_what_cannot_be_checked_before_deploy_is_said(eks_plan):
    warnings = [d["message"] for d in eks_plan.diagnostics if d["severity"] == "warning"]
    assert any("ml-eks" in w and "subnets" in w for w in warnings), warnings


def _cluster() -> aws.eks.Cluster:
    return aws.eks.Cluster(
        "ml-eks", role_arn="arn:aws:iam::123456789012:role/eks", vpc_config={"subnet_ids": []}
    )


def test_irsa_on_a_created_cluster_without_its_oidc_provider_is_refused():
    def program() -> None:
        eks = EksCluster.from_cluster("ml-eks", _cluster())
        MountpointS3ModelStore("embeddings", {"cluster": eks, "readers": ["inference"]})

    with pytest.raises(Exception) as err:
        plan(program)
    assert str(err.value) == (
        "embeddings: identity must be pod-identity, or irsa on a cluster made in this program "
        "with its IAM OIDC provider given (EksCluster.from_cluster(..., oidc_provider=...)), "
        "got 'irsa'"
    )


def test_efs_on_a_created_cluster_without_subnets_by_zone_is_refused():
    def program() -> None:
        eks = EksCluster.from_cluster("ml-eks", _cluster())
        EfsModelStore("llama", {"cluster": eks, "readers": ["inference"]})

    with pytest.raises(Exception) as err:
        plan(program)
    assert str(err.value) == (
        "llama: subnet_ids is missing; it must be the subnets of a cluster made in this "
        "program, one per zone (EksCluster.from_cluster(..., subnets_by_zone={zone: subnet "
        "id})): EFS makes a mount target in each"
    )


def test_an_existing_clusters_stores_are_unchanged():
    # Nothing of a store on a cluster taken by name depends on what from_cluster adds.
    p = plan(lambda: MountpointS3ModelStore("t5", {"cluster_name": "prod-eks", "readers": ["a"]}))
    providers = [s["urn"] for s in p.by_type("pulumi:providers:kubernetes")]
    assert all("::default_" in urn for urn in providers), providers
    assert "aws:eks/getCluster:getCluster" in {c["token"] for c in p.invokes}


def test_from_cluster_refuses_what_is_not_a_cluster():
    with pytest.raises(Exception) as err:
        plan(lambda: EksCluster.from_cluster("ml-eks", "ml-eks"))  # type: ignore[arg-type]
    assert str(err.value) == (
        "ml-eks: cluster must be an aws.eks.Cluster made in this program (a cluster made "
        "elsewhere: EksCluster('ml-eks', {'cluster_name': ...})), got 'ml-eks'"
    )


_ = pulumi  # the module's Outputs are the SDK's


def test_a_cluster_made_by_a_component_is_given_by_its_outputs():
    # pulumi-eks and similar components hand out Outputs, not an aws.eks.Cluster.
    arn = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABC"

    def program() -> None:
        out = pulumi.Output.from_input
        eks = EksCluster.from_cluster(
            "ml-eks",
            cluster_name=out("ml-eks"),
            vpc_id=out("vpc-0123456789abcdef0"),
            node_security_group_ids=[out("sg-0123456789abcdef0")],
            subnets_by_zone={"us-west-2a": out("subnet-0123456789abcdef0")},
            oidc_provider_arn=out(arn),
            oidc_provider_url=out("https://oidc.eks.us-west-2.amazonaws.com/id/ABC"),
            kubeconfig=out('{"apiVersion": "v1"}'),
        )
        EfsModelStore("llama", {"cluster": eks, "readers": ["inference"]})
        MountpointS3ModelStore("embeddings", {"cluster": eks, "readers": ["inference"]})

    p = plan(program, fill=True)
    assert {c["token"] for c in p.invokes} & EKS_LOOKUPS == set()
    (target,) = p.by_type("aws:efs/mountTarget:MountTarget")
    assert target["inputs"]["subnetId"] == "subnet-0123456789abcdef0"
    (rule,) = p.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert rule["inputs"]["referencedSecurityGroupId"] == "sg-0123456789abcdef0"
    trusts = [json.loads(r["inputs"]["assumeRolePolicy"]) for r in p.by_type(ROLE)]
    statements = [s for t in trusts for s in t["Statement"]]
    assert statements and all(s["Principal"] == {"Federated": arn} for s in statements)
    assert all(
        "oidc.eks.us-west-2.amazonaws.com/id/ABC:aud" in s["Condition"]["StringEquals"]
        for s in statements
    )


# ---- GKE ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gke_plan() -> Plan:
    return plan_directory(EXAMPLES / "gke-cluster-and-stores", "dev", fill_outputs=True)


def test_a_gke_cluster_made_in_the_program_is_never_looked_up(gke_plan):
    assert "gcp:container/getCluster:getCluster" not in {c["token"] for c in gke_plan.invokes}
    assert not [d for d in gke_plan.diagnostics if d["severity"] == "warning"]


def test_gke_objects_go_to_the_provider_from_the_created_clusters_kubeconfig(gke_plan):
    (provider,) = gke_plan.by_type("pulumi:providers:kubernetes")
    kubeconfig = json.loads(provider["inputs"]["kubeconfig"])
    cluster = _one(gke_plan, "gcp:container/cluster:Cluster")["outputs"]
    assert kubeconfig["clusters"][0]["cluster"] == {
        "server": f"https://{cluster['endpoint']}",
        "certificate-authority-data": cluster["masterAuth"]["clusterCaCertificate"],
    }
    assert kubeconfig["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    kube = [s for s in gke_plan.states() if s["custom"] and s["type"].startswith("kubernetes:")]
    assert kube and all(s["provider"].startswith(provider["urn"] + "::") for s in kube)


def test_gke_claims_wait_for_the_node_pool(gke_plan):
    pool = _one(gke_plan, "gcp:container/nodePool:NodePool")["urn"]
    claims = gke_plan.by_type("kubernetes:core/v1:PersistentVolumeClaim")
    assert len(claims) == 5 and all(pool in _waits_for(gke_plan, s) for s in claims)


def _gke_program(cluster_args: dict[str, Any], node_config: dict[str, Any]) -> Any:
    from pulumi_modelstore.gcp import GcsFuseModelStore, GkeCluster

    def program() -> None:
        import pulumi_gcp as gcp

        cluster = gcp.container.Cluster("ml-gke", location="us-central1", **cluster_args)
        pool = gcp.container.NodePool(
            "gpu", cluster=cluster.name, location="us-central1", node_config=node_config
        )
        gke = GkeCluster.from_cluster(
            "ml-gke",
            cluster,
            location="us-central1",
            node_pools=[pool],
            master_version="1.34.1-gke.1829001",
        )
        GcsFuseModelStore("llama", {"cluster": gke, "readers": ["inference"]})

    return program


WORKLOAD_IDENTITY = {"workload_identity_config": {"workload_pool": "acme-ml.svc.id.goog"}}
GKE_METADATA = {"workload_metadata_config": {"mode": "GKE_METADATA"}}


@pytest.mark.parametrize(
    ("cluster_args", "node_config", "message"),
    [
        (
            {
                **WORKLOAD_IDENTITY,
                "addons_config": {"gcs_fuse_csi_driver_config": {"enabled": False}},
            },
            GKE_METADATA,
            "llama: cluster must be a cluster with the GCS FUSE CSI driver add-on enabled "
            "(addons_config.gcs_fuse_csi_driver_config.enabled; see gcp.cluster_settings), got "
            "'ml-gke'",
        ),
        (
            {
                "workload_identity_config": {"workload_pool": "acme-ml-staging.svc.id.goog"},
                "addons_config": {"gcs_fuse_csi_driver_config": {"enabled": True}},
            },
            GKE_METADATA,
            "llama: cluster must be a cluster with workload identity (workload_identity_config"
            ".workload_pool acme-ml.svc.id.goog; see gcp.cluster_settings), got 'ml-gke'",
        ),
        (
            {
                **WORKLOAD_IDENTITY,
                "addons_config": {"gcs_fuse_csi_driver_config": {"enabled": True}},
            },
            {"workload_metadata_config": {"mode": "GCE_METADATA"}},
            "llama: cluster must be a cluster whose node pools run the GKE metadata server "
            "(workload_metadata_config.mode GKE_METADATA; not on: gpu), got 'ml-gke'",
        ),
    ],
    ids=["gcs-fuse-add-on-off", "no-workload-identity", "node-pool-on-gce-metadata"],
)
def test_a_created_gke_cluster_declared_without_what_stores_need_fails_the_preview(
    cluster_args, node_config, message
):
    with pytest.raises(PlanError) as err:
        plan(_gke_program(cluster_args, node_config), config={"gcp:project": "acme-ml"})
    assert str(err.value) == message


def test_what_a_created_gke_cluster_does_not_declare_is_said_not_checked():
    p = plan(_gke_program(WORKLOAD_IDENTITY, GKE_METADATA), config={"gcp:project": "acme-ml"})
    warnings = [d["message"] for d in p.diagnostics if d["severity"] == "warning"]
    assert warnings == [
        "cluster 'ml-gke' is made in this program and its addons_config is not known before "
        "deploy: not checked"
    ]


# ---- AKS ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def aks_plan() -> Plan:
    return plan_directory(EXAMPLES / "aks-cluster-and-stores", "dev", fill_outputs=True)


def test_an_aks_cluster_made_in_the_program_is_never_looked_up(aks_plan):
    tokens = {c["token"] for c in aks_plan.invokes}
    assert "azure-native:containerservice:getManagedCluster" not in tokens
    assert not [d for d in aks_plan.diagnostics if d["severity"] == "warning"]


def test_federated_credentials_trust_the_created_clusters_issuer(aks_plan):
    cluster = _one(aks_plan, "azure-native:containerservice:ManagedCluster")
    issuer = cluster["outputs"]["oidcIssuerProfile"]["issuerURL"]
    credentials = aks_plan.by_type("azure-native:managedidentity:FederatedIdentityCredential")
    assert len(credentials) == 5
    for credential in credentials:
        assert credential["inputs"]["issuer"] == issuer
        assert cluster["urn"] in credential["dependencies"]


def test_aks_objects_go_to_the_created_clusters_provider_and_wait_for_it(aks_plan):
    (provider,) = aks_plan.by_type("pulumi:providers:kubernetes")
    kube = [s for s in aks_plan.states() if s["custom"] and s["type"].startswith("kubernetes:")]
    assert kube and all(s["provider"].startswith(provider["urn"] + "::") for s in kube)
    cluster = _one(aks_plan, "azure-native:containerservice:ManagedCluster")["urn"]
    claims = aks_plan.by_type("kubernetes:core/v1:PersistentVolumeClaim")
    assert len(claims) == 5 and all(cluster in _waits_for(aks_plan, s) for s in claims)


def _aks_program(storage_profile: dict[str, Any] | None) -> Any:
    from pulumi_modelstore.azure import AksCluster, AzureBlobModelStore, cluster_settings

    def program() -> None:
        import pulumi_azure_native as azure_native

        settings = cluster_settings()
        if storage_profile is None:
            del settings["storage_profile"]
        else:
            settings["storage_profile"] = storage_profile
        cluster = azure_native.containerservice.ManagedCluster(
            "ml-aks", resource_group_name="ml-rg", location="eastus", **settings
        )
        aks = AksCluster.from_cluster(
            "ml-aks",
            cluster,
            resource_group_name="ml-rg",
            location="eastus",
            kubernetes_version="1.34.2",
        )
        AzureBlobModelStore(
            "llama", {"cluster": aks, "readers": ["inference"], "allow_all_networks": True}
        )

    return program


def test_a_created_aks_cluster_declared_without_the_blob_driver_fails_the_preview():
    with pytest.raises(PlanError) as err:
        plan(_aks_program({"blob_csi_driver": {"enabled": False}}))
    assert str(err.value) == (
        "llama: cluster_name must be a cluster with the blob CSI driver on "
        "(storageProfile.blobCSIDriver.enabled, off by default on AKS; see "
        "azure.cluster_settings), got 'ml-aks'"
    )


def test_a_created_aks_cluster_leaving_the_blob_driver_out_fails_the_preview():
    # Declared storage settings without the blob driver: AKS's default, off.
    with pytest.raises(PlanError) as err:
        plan(_aks_program({"file_csi_driver": {"enabled": True}}))
    assert "blob CSI driver on" in str(err.value)


def test_what_a_created_aks_cluster_does_not_declare_is_said_not_checked():
    p = plan(_aks_program(None))
    warnings = [d["message"] for d in p.diagnostics if d["severity"] == "warning"]
    assert warnings == [
        "cluster 'ml-aks' is made in this program and its storage_profile.blob_csi_driver."
        "enabled is not known before deploy: not checked"
    ]


def test_irsa_on_a_created_oidc_provider_without_the_sts_audience_fails_the_preview():
    def program() -> None:
        cluster = _cluster()
        oidc = aws.iam.OpenIdConnectProvider(
            "ml-eks-oidc",
            url="https://oidc.eks.us-west-2.amazonaws.com/id/ABC",
            client_id_lists=["api://other"],
        )
        eks = EksCluster.from_cluster("ml-eks", cluster, oidc_provider=oidc)
        MountpointS3ModelStore("embeddings", {"cluster": eks, "readers": ["inference"]})

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "embeddings: identity must be irsa on an OIDC provider whose audiences include "
        "sts.amazonaws.com (it has ['api://other']), got 'irsa'"
    )
