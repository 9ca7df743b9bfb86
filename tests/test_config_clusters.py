"""``modelstore:clusters`` in the config program: clusters by name, by explicit attributes and
from a platform stack's saved outputs (``StackReference``); stores naming them; and every bad
input one line naming its key path, all at once, nothing registered but the stack."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pulumi_modelstore.cli import main
from pulumi_modelstore.plan.engine import PlanError, plan_directory
from tests.conftest import assert_refused
from tests.test_inputs_program import BACKENDS, PROGRAM, PROJECT

KINDS = "one of aks, eks, gke, kubernetes"
OIDC_ISSUER = (
    "an https:// URL without a query (IAM OIDC providers take only https issuers), e.g. "
    "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"
)


def _project(tmp_path: Path, config: str, outputs: dict[str, dict] | None = None) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(PROJECT)
    (tmp_path / "__main__.py").write_text(PROGRAM)
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n  aws:region: us-west-2\n" + textwrap.indent(textwrap.dedent(config), "  ")
    )
    for name, values in (outputs or {}).items():
        (tmp_path / "stack-outputs").mkdir(exist_ok=True)
        (tmp_path / "stack-outputs" / f"{name}.json").write_text(json.dumps(values))
    return tmp_path


ROWS: list[tuple[str, str, list[str]]] = [
    (
        "a backend misspelt",
        """
        modelstore:stores:
          llama: {backend: fsxx, readers: [a]}
        """,
        [f"modelstore:stores.llama.backend must be {BACKENDS}, got 'fsxx'"],
    ),
    (
        "a wrong key",
        """
        modelstore:stores:
          llama: {backend: local, readerz: [a], readers: [a]}
        """,
        [
            "modelstore:stores.llama.readerz must be a field of backend local: one of the 15 "
            "fields listed by `modelstore fields LocalModelStore` (nearest: readers), got "
            "'readerz'; did you mean `readers`?"
        ],
    ),
    (
        "a wrong type, in a list",
        """
        modelstore:stores:
          llama: {backend: local, readers: [a, 3]}
        """,
        ["modelstore:stores.llama.readers must be a list of strings, got ['a', 3]"],
    ),
    (
        "a cluster's kind unknown",
        """
        modelstore:clusters:
          prod: {kind: eksx}
        modelstore:stores:
          llama: {backend: local, cluster: prod, readers: [a]}
        """,
        [f"modelstore:clusters.prod.kind must be {KINDS}, got 'eksx'; did you mean `eks`?"],
    ),
    (
        "a cluster's wrong key and wrong type",
        """
        modelstore:clusters:
          prod: {kind: gke, name: 3, locaton: us-central1, location: us-central1}
        modelstore:stores:
          llama: {backend: gcs-fuse, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.name must be a non-empty string, got 3",
            "modelstore:clusters.prod.locaton must be a field of a gke cluster: one of "
            "attributes, context, kind, kubeconfig, location, name, outputs, project, "
            "stack_reference, velero, got 'locaton'; did you mean `location`?",
        ],
    ),
    (
        "a gke cluster without its location",
        """
        modelstore:clusters:
          prod: {kind: gke, name: prod-gke}
        modelstore:stores:
          llama: {backend: gcs-fuse, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.location is missing; "
            "it must be the GKE cluster's region or zone (a "
            "cluster name is unique only within its location)"
        ],
    ),
    (
        "an attribute unknown, another of the wrong type",
        """
        modelstore:clusters:
          prod:
            kind: eks
            attributes: {vpc: vpc-1, cluster_subnet_ids: subnet-1}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.attributes.vpc must be a fact of a eks cluster: one of "
            "cluster_subnet_ids, node_security_group_ids, oidc_issuer, region, vpc_id, got 'vpc'; "
            "did you mean `vpc_id`?",
            "modelstore:clusters.prod.attributes.cluster_subnet_ids must be a list of strings, "
            "got 'subnet-1'",
        ],
    ),
    (
        "a store naming an unknown cluster",
        """
        modelstore:clusters:
          prod: {kind: kubernetes}
        modelstore:stores:
          llama: {backend: local, cluster: prd, readers: [a]}
        """,
        [
            "modelstore:stores.llama.cluster must be one of the keys of modelstore:clusters "
            "(prod), got 'prd'; did you mean `prod`?"
        ],
    ),
    (
        "an efs store on a gke cluster",
        """
        modelstore:clusters:
          ml: {kind: gke, location: us-central1}
        modelstore:stores:
          t5: {backend: efs, cluster: ml, readers: [a]}
        """,
        [
            "modelstore:stores.t5.cluster must be a cluster of kind eks for backend efs "
            "(modelstore:clusters.ml.kind is gke), got 'ml'"
        ],
    ),
    (
        "a store naming its cluster twice",
        """
        modelstore:clusters:
          prod: {kind: eks, name: prod-eks}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, clusterName: prod-eks, readers: [a]}
        """,
        [
            "modelstore:stores.llama.clusterName must be unset when cluster is given "
            "(modelstore:clusters.prod names the cluster), got 'prod-eks'"
        ],
    ),
    (
        "two clusters on the default Kubernetes provider",
        """
        modelstore:clusters:
          a: {kind: kubernetes}
          b: {kind: kubernetes}
        modelstore:stores:
          llama: {backend: local, cluster: a, readers: [x]}
        """,
        [
            "modelstore:clusters.b.context is missing; "
            "it must be a kubeconfig context (or kubeconfig) of its "
            "own: cluster 'a' already uses the default Kubernetes provider, and two clusters "
            "cannot share one"
        ],
    ),
    (
        "outputs without a stack reference",
        """
        modelstore:clusters:
          prod: {kind: eks, outputs: {name: clusterName}}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.outputs must be unset unless stack_reference names the "
            "stack to read, got {'name': 'clusterName'}"
        ],
    ),
    (
        "two entries on one kubeconfig context (issue 14)",
        """
        modelstore:clusters:
          a: {kind: kubernetes, context: kind-lab}
          b: {kind: kubernetes, context: kind-lab}
          c: {kind: kubernetes, kubeconfig: /etc/lab.yaml}
          d: {kind: kubernetes, kubeconfig: /etc/lab.yaml}
          e: {kind: kubernetes, kubeconfig: /etc/lab.yaml, context: kind-lab}
        modelstore:stores:
          llama: {backend: local, cluster: a, readers: [x]}
        """,
        [
            "modelstore:clusters.b.context must be a context no other cluster entry uses: "
            "modelstore:clusters.a already reaches that cluster through it (two entries on one "
            "cluster would install each CSI driver twice: give its stores cluster a), got "
            "'kind-lab'",
            "modelstore:clusters.d.kubeconfig must be a kubeconfig no other cluster entry uses: "
            "modelstore:clusters.c already reaches that cluster through it (two entries on one "
            "cluster would install each CSI driver twice: give its stores cluster c), got "
            "'/etc/lab.yaml'",
        ],
    ),
    (
        "a stack reference without outputs is refused, not looked up by its key (issue 14)",
        """
        modelstore:clusters:
          prod: {kind: eks, stack_reference: acme/platform/prod}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.outputs is missing; "
            "it must be set when stack_reference is given: which "
            "of the stack's outputs give this cluster's cluster_subnet_ids, kubeconfig, name, "
            "node_security_group_ids, oidc_issuer, region, vpc_id (e.g. {kubeconfig: "
            "kubeconfig, name: clusterName})"
        ],
    ),
    (
        "eks attributes are checked before the cluster's provider registers (issue 14)",
        """
        modelstore:clusters:
          prod:
            kind: eks
            name: prod-eks
            context: prod
            attributes:
              vpc_id: vpc-bad
              region: us-west
              oidc_issuer: http://oidc.eks.us-west-2.amazonaws.com/id/ABC
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.attributes.vpc_id must be a VPC id (vpc- and 8 or 17 "
            "lowercase hex digits), got 'vpc-bad'",
            "modelstore:clusters.prod.attributes.region must be an AWS region code such as "
            "us-west-2, got 'us-west'",
            f"modelstore:clusters.prod.attributes.oidc_issuer must be {OIDC_ISSUER}, got "
            "'http://oidc.eks.us-west-2.amazonaws.com/id/ABC'",
        ],
    ),
    (
        "a cluster's name is checked before its provider registers (issue 14)",
        """
        modelstore:clusters:
          prod: {kind: eks, name: "prod eks!", context: prod}
          dev eks: {kind: eks, context: dev}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.name must be an EKS cluster name (1 to 100 letters, "
            "digits, '-' and '_', starting with a letter or digit), got 'prod eks!'",
            "modelstore:clusters.dev eks must be an EKS cluster name (1 to 100 letters, digits, "
            "'-' and '_', starting with a letter or digit) (the entry's key names the cluster "
            "when name is unset), got 'dev eks'",
        ],
    ),
    (
        "a deprecated spelling is named as the stack wrote it (issue 14)",
        """
        modelstore:stores:
          llama: {backend: efs, clusterName: prod-eks, driver: kubectl, readers: [a]}
          t5:
            backend: efs
            clusterName: prod-eks
            driverInstall: eks-addon
            driverNamespace: efs-system
            readers: [b]
        """,
        [
            "modelstore:stores.llama.driver must be one of helm, eks-addon, none, got 'kubectl'",
            "modelstore:stores.t5.driverNamespace must be kube-system when driver_install is "
            "eks-addon (the add-on installs there), got 'efs-system'",
        ],
    ),
    (
        "a preflight failure names the cluster entry the name came from",
        """
        modelstore:clusters:
          prod:
            kind: gke
            name: prod-gke
            location: us-central1
            project: acme-ml
            attributes:
              project_number: "1"
              workload_pool: null
              gcs_fuse_csi: true
              pd_csi: true
              autopilot: false
              node_pool_metadata_modes: {default-pool: GKE_METADATA}
        modelstore:stores:
          llama: {backend: gcs-fuse, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.name must be a cluster with workload identity (workload "
            "pool acme-ml.svc.id.goog; see gcp.cluster_settings), got 'prod-gke'"
        ],
    ),
    (
        "AKS attributes hold what AKS would report",
        """
        modelstore:clusters:
          prod:
            kind: aks
            name: prod-aks
            resource_group: ml-rg
            attributes:
              subscription_id: my-subscription
              tenant_id: 00000000-0000-0000-0000-000000000001
              location: East US
              oidc_issuer_url: http://eastus.oic.prod-aks.azure.com/t/c/
              workload_identity: true
              blob_csi: true
              file_csi: true
              snapshot_controller: true
              node_subnet_ids: [aks-nodes]
              node_resource_group: MC_ml-rg_prod-aks_eastus.
              kubernetes_version: v1.34.2
              control_plane_principal_id: ml-aks-identity
        modelstore:stores:
          llama: {backend: azure-blob, cluster: prod, readers: [a]}
        """,
        [
            "modelstore:clusters.prod.attributes.subscription_id must be the cluster's "
            "subscription id, a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got "
            "'my-subscription'",
            "modelstore:clusters.prod.attributes.location must be the cluster's region, an Azure "
            "region name as ARM spells it (e.g. eastus, westeurope), got 'East US'",
            "modelstore:clusters.prod.attributes.oidc_issuer_url must be the cluster's OIDC "
            "issuer URL (https://...), or null when the issuer is off, got "
            "'http://eastus.oic.prod-aks.azure.com/t/c/'",
            "modelstore:clusters.prod.attributes.node_subnet_ids must be a subnet resource id "
            "(/subscriptions/<subscription guid>/resourceGroups/<rg>/providers/"
            "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>, with valid Azure names: "
            "a virtual network 2-64 and a subnet 1-80 letters, digits, '_', '.' and '-', "
            "starting with a letter or digit, ending with a letter, digit or '_'), got "
            "'aks-nodes'",
            "modelstore:clusters.prod.attributes.node_resource_group must be a resource group "
            "name (1-90 letters, digits, '_', '-', '.', '(' and ')', not ending with '.'), got "
            "'MC_ml-rg_prod-aks_eastus.'",
            "modelstore:clusters.prod.attributes.kubernetes_version must be a Kubernetes version "
            "as AKS reports it (1.34 or 1.34.2), got 'v1.34.2'",
            "modelstore:clusters.prod.attributes.control_plane_principal_id must be the "
            "principal id of the cluster's control plane identity, a GUID "
            "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got 'ml-aks-identity'",
        ],
    ),
    (
        "every problem of stores and clusters at once",
        """
        modelstore:clusters:
          prod: {kind: aks, name: prod-aks}
          dev: {kind: eks, context: dev, attributes: {vpc_id: 7}}
        modelstore:stores:
          llama: {backend: fsx-lustr, readers: [a]}
          t5: {backend: local, readers: [a], capacityGib: "5"}
        """,
        [
            "modelstore:clusters.prod.resource_group is missing; "
            "it must be the AKS cluster's resource group "
            "(a cluster name is unique only within its resource group)",
            "modelstore:clusters.dev.attributes.vpc_id must be a string, got 7",
            f"modelstore:stores.llama.backend must be {BACKENDS}, got 'fsx-lustr'; did you mean "
            "`fsx-lustre`?",
            "modelstore:stores.t5.capacityGib must be a whole number, got '5'",
        ],
    ),
]


@pytest.mark.parametrize(("config", "lines"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_config_is_one_line_per_problem_naming_its_key_path(tmp_path, capsys, config, lines):
    directory = _project(tmp_path, config)
    assert main(["plan", "--cwd", str(directory)]) == 1
    out, err = capsys.readouterr()
    assert (out, err.splitlines()) == ("", [f"error: {line}" for line in lines])
    assert_refused(directory, "\n".join(lines))


# ---- clusters that work -------------------------------------------------------------------------


def _types(plan) -> list[str]:
    return sorted(s["type"] for s in plan.states())


def test_stores_on_two_clusters_each_with_its_provider_and_scope(tmp_path):
    directory = _project(
        tmp_path,
        """
        modelstore:clusters:
          prod: {kind: eks, name: prod-eks, context: prod}
          lab: {kind: kubernetes, context: kind-lab}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [inference]}
          t5: {backend: nfs, cluster: lab, server: nas, share: /models, readers: [inference]}
        """,
    )
    plan = plan_directory(directory)
    providers = {
        s["urn"].rsplit("::", 1)[1]: s for s in plan.by_type("pulumi:providers:kubernetes")
    }
    assert {n: p["inputs"].get("context") for n, p in providers.items()} == {
        "prod-kubernetes": "prod",
        "lab-kubernetes": "kind-lab",
    }
    # Each store's Kubernetes objects go through its cluster's provider.
    for store, cluster in (("llama", "prod"), ("t5", "lab")):
        pvc = next(
            s
            for s in plan.states()
            if s["type"].endswith("PersistentVolumeClaim") and store in s["urn"]
        )
        assert pvc["provider"].startswith(providers[f"{cluster}-kubernetes"]["urn"])
    assert len(plan.by_type("modelstore:index:EksCluster")) == 1
    assert len(plan.by_type("modelstore:index:KubernetesCluster")) == 1


def test_explicit_gke_attributes_are_not_looked_up(tmp_path):
    directory = _project(
        tmp_path,
        """
        modelstore:clusters:
          prod:
            kind: gke
            location: us-central1-a
            project: acme-ml
            attributes:
              project_number: "42"
              workload_pool: acme-ml.svc.id.goog
              gcs_fuse_csi: true
              pd_csi: true
              autopilot: true
              node_pool_metadata_modes: {}
        modelstore:stores:
          llama: {backend: gcs-fuse, cluster: prod, readers: [inference]}
        """,
    )
    plan = plan_directory(directory)
    assert "gcp:container/getCluster:getCluster" not in {c["token"] for c in plan.invokes}
    bucket = plan.by_type("gcp:storage/bucket:Bucket")[0]
    assert bucket["inputs"]["location"].lower() == "us-central1"  # the zone's region


AKS_SUBNET = (
    "/subscriptions/00000000-0000-0000-0000-0000000000aa/resourceGroups/net-rg/providers/"
    "Microsoft.Network/virtualNetworks/hub/subnets/aks-nodes"
)
AKS_ATTRIBUTES = {
    "subscription_id": "00000000-0000-0000-0000-0000000000aa",
    "tenant_id": "00000000-0000-0000-0000-0000000000bb",
    "location": "eastus",
    "oidc_issuer_url": "https://eastus.oic.prod-aks.azure.com/t/c/",
    "workload_identity": True,
    "blob_csi": True,
    "file_csi": True,
    "snapshot_controller": True,
    "node_subnet_ids": [AKS_SUBNET],
    "kubernetes_version": "1.34.2",
}


def test_explicit_aks_attributes_are_not_looked_up(tmp_path):
    directory = _project(
        tmp_path,
        f"""
        modelstore:clusters:
          prod:
            kind: aks
            resource_group: ml-rg
            attributes: {json.dumps(AKS_ATTRIBUTES)}
        modelstore:stores:
          llama: {{backend: azure-blob, cluster: prod, readers: [inference]}}
        """,
    )
    plan = plan_directory(directory)
    assert "azure-native:containerservice:getManagedCluster" not in {
        c["token"] for c in plan.invokes
    }
    account = plan.by_type("azure-native:storage:StorageAccount")[0]["inputs"]
    assert account["networkRuleSet"]["virtualNetworkRules"] == [
        {"virtualNetworkResourceId": AKS_SUBNET, "action": "Allow"}
    ]


def test_aks_facts_from_a_stack_hold_what_aks_would_report(tmp_path):
    # A subnet id that is not one planned on and crashed the subnet lookup; now one line.
    outputs = {"facts": {**AKS_ATTRIBUTES}, "subnets": ["aks-nodes"]}
    config = "\n".join(
        f"              {name}: {name}" for name in AKS_ATTRIBUTES if name != "node_subnet_ids"
    )
    directory = _project(
        tmp_path,
        f"""
        modelstore:clusters:
          prod:
            kind: aks
            name: prod-aks
            resource_group: ml-rg
            stack_reference: acme/platform/prod
            outputs:
              node_subnet_ids: subnets
{config}
        modelstore:stores:
          llama: {{backend: azure-blob, cluster: prod, readers: [inference]}}
        """,
        {"acme.platform.prod": {**outputs["facts"], "subnets": outputs["subnets"]}},
    )
    with pytest.raises(PlanError) as error:
        plan_directory(directory)
    assert str(error.value) == (
        "modelstore:clusters.prod.outputs.node_subnet_ids must be a subnet resource id "
        "(/subscriptions/<subscription guid>/resourceGroups/<rg>/providers/"
        "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>, with valid Azure names: a "
        "virtual network 2-64 and a subnet 1-80 letters, digits, '_', '.' and '-', starting "
        "with a letter or digit, ending with a letter, digit or '_') (the value of output "
        "'subnets' of stack acme/platform/prod), got 'aks-nodes'"
    )
    # The stack and its reference (read to get the outputs), nothing of a store.
    assert not [u for u in error.value.registered if "azure-native" in u or "modelstore:index" in u]


def test_a_stack_reference_is_answered_from_its_saved_output_file(tmp_path):
    outputs = {
        "clusterName": "platform-eks",
        "vpcId": "vpc-0123456789abcdef0",
        "subnets": ["subnet-0123456789abcdef1", "subnet-0123456789abcdef2"],
        "nodeSg": ["sg-0123456789abcdef0"],
        "issuer": "https://oidc.eks.us-west-2.amazonaws.com/id/ABC",
        "kubeconfig": "apiVersion: v1\nkind: Config\n",
    }
    directory = _project(
        tmp_path,
        """
        modelstore:clusters:
          prod:
            kind: eks
            stack_reference: acme/platform/prod
            outputs:
              kubeconfig: kubeconfig
              name: clusterName
              vpc_id: vpcId
              cluster_subnet_ids: subnets
              node_security_group_ids: nodeSg
              oidc_issuer: issuer
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [inference]}
        """,
        {"acme.platform.prod": outputs},
    )
    plan = plan_directory(directory)
    # The scope is the platform's cluster; nothing about it is looked up.
    assert [s["urn"].rsplit("::", 1)[1] for s in plan.by_type("modelstore:index:EksCluster")] == [
        "platform-eks"
    ]
    assert "aws:eks/getCluster:getCluster" not in {c["token"] for c in plan.invokes}
    provider = plan.by_type("pulumi:providers:kubernetes")[0]
    assert provider["inputs"]["kubeconfig"] == outputs["kubeconfig"]
    group = plan.by_type("aws:ec2/securityGroup:SecurityGroup")[0]
    assert group["inputs"]["vpcId"] == outputs["vpcId"]


def test_a_missing_output_file_is_one_line_naming_the_reference_and_the_file(tmp_path, capsys):
    directory = _project(
        tmp_path,
        """
        modelstore:clusters:
          prod: {kind: eks, stack_reference: acme/platform/prod, outputs: {name: clusterName}}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [inference]}
        """,
    )
    assert main(["plan", "--cwd", str(directory)]) == 1
    _, err = capsys.readouterr()
    wanted = directory / "stack-outputs" / "acme.platform.prod.json"
    assert err.splitlines() == [
        f"error: stack reference acme/platform/prod: no saved outputs at {wanted} (save them "
        f"with `pulumi stack output --stack acme/platform/prod --json --show-secrets > "
        f"{wanted}`)"
    ]


def test_a_missing_output_names_the_key_path_and_what_the_stack_has(tmp_path):
    directory = _project(
        tmp_path,
        """
        modelstore:clusters:
          prod: {kind: eks, stack_reference: acme/platform/prod, outputs: {name: clustername}}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [inference]}
        """,
        {"acme.platform.prod": {"clusterName": "x", "vpcId": "vpc-1"}},
    )
    with pytest.raises(PlanError) as error:
        plan_directory(directory)
    assert str(error.value) == (
        "modelstore:clusters.prod.outputs.name must be an output of stack acme/platform/prod "
        "(it has: clusterName, vpcId), got 'clustername'"
    )


def test_a_fact_read_from_a_stack_is_checked_before_the_cluster_registers(tmp_path):
    """Only the StackReference that was read registers: no provider, no scope, no store."""
    directory = _project(
        tmp_path,
        """
        modelstore:clusters:
          prod:
            kind: eks
            stack_reference: acme/platform/prod
            outputs: {kubeconfig: kubeconfig, name: clusterName, oidc_issuer: issuer}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [inference]}
        """,
        {
            "acme.platform.prod": {
                "clusterName": "platform-eks",
                "issuer": "http://oidc.eks.us-west-2.amazonaws.com/id/ABC",
                "kubeconfig": "apiVersion: v1\nkind: Config\n",
            }
        },
    )
    with pytest.raises(PlanError) as error:
        plan_directory(directory)
    assert str(error.value) == (
        f"modelstore:clusters.prod.outputs.oidc_issuer must be {OIDC_ISSUER}, got "
        "'http://oidc.eks.us-west-2.amazonaws.com/id/ABC'"
    )
    assert [urn.split("::")[2] for urn in error.value.registered] == [
        "pulumi:pulumi:Stack",
        "pulumi:pulumi:Stack$pulumi:pulumi:StackReference",
    ]


def test_a_name_read_from_a_stack_is_checked_before_the_cluster_registers(tmp_path):
    directory = _project(
        tmp_path,
        """
        modelstore:clusters:
          prod:
            kind: eks
            stack_reference: acme/platform/prod
            outputs: {kubeconfig: kubeconfig, name: clusterName}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [inference]}
        """,
        {"acme.platform.prod": {"clusterName": "prod eks!", "kubeconfig": "apiVersion: v1\n"}},
    )
    with pytest.raises(PlanError) as error:
        plan_directory(directory)
    assert str(error.value) == (
        "modelstore:clusters.prod.outputs.name must be an EKS cluster name (1 to 100 letters, "
        "digits, '-' and '_', starting with a letter or digit), got 'prod eks!'"
    )
    assert [urn.split("::")[2] for urn in error.value.registered] == [
        "pulumi:pulumi:Stack",
        "pulumi:pulumi:Stack$pulumi:pulumi:StackReference",
    ]


def test_stores_giving_cluster_name_still_work(tmp_path):
    directory = _project(
        tmp_path,
        """
        modelstore:stores:
          llama: {backend: efs, cluster_name: prod-eks, readers: [inference]}
        """,
    )
    plan = plan_directory(directory)
    assert [s["urn"].rsplit("::", 1)[1] for s in plan.by_type("modelstore:index:EksCluster")] == [
        "prod-eks"
    ]


# ---- Pulumi.yaml declares what the program reads ------------------------------------------------


def _keys_the_program_reads() -> set[str]:
    """Every ``modelstore:<key>`` program.py reads: its ``_config("<key>")`` calls."""
    import ast

    import pulumi_modelstore.program as program

    tree = ast.parse(Path(program.__file__).read_text())
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "_config"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def test_pulumi_yaml_declares_every_key_the_program_reads_and_no_other():
    from pulumi_modelstore.plan.project import load_project
    from tests.conftest import ROOT

    declared = load_project(ROOT).declared
    reads = _keys_the_program_reads()
    assert reads == {"stores", "clusters", "tokens"}
    assert {k.removeprefix("modelstore:") for k in declared} == reads
    for key, declaration in declared.items():
        assert isinstance(declaration, dict) and declaration.get("description"), key
        # Pulumi's project config types: an object has none yet (pulumi/pulumi#11321).
        assert declaration.get("type") in (None, "string", "integer", "boolean", "array"), key


def test_the_stores_description_lists_every_backend():
    import re

    from pulumi_modelstore.plan.project import load_project
    from pulumi_modelstore.program import BACKENDS
    from tests.conftest import ROOT

    description = " ".join(load_project(ROOT).declared["stores"]["description"].split())
    listed = re.search(r"backend is one of (.*?) \(", description)
    assert listed is not None
    assert [b.strip() for b in listed.group(1).split(",")] == sorted(BACKENDS)
