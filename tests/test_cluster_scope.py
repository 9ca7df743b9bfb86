"""Stores share clusters: what belongs to a cluster lives in its scope, once, whichever order
stores come in; what two stores of one cluster would fight over is refused at plan time."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from pulumi_modelstore.azure import AksCluster
from pulumi_modelstore.gcp import GkeCluster
from pulumi_modelstore.local import LocalModelStore
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.program import backend_class, build_stores
from tests.conftest import assert_refused, plan

NAMESPACE = "kubernetes:core/v1:Namespace"
PV = "kubernetes:core/v1:PersistentVolume"
SCOPE = "modelstore:index:KubernetesCluster"


def test_two_stores_creating_one_namespace_make_it_once_owned_by_the_scope():
    def program():
        LocalModelStore("a", {"readers": ["inference"], "create_namespaces": True})
        LocalModelStore("b", {"readers": ["inference", "batch"], "create_namespaces": True})

    p = plan(program)
    namespaces = p.by_type(NAMESPACE)
    assert sorted(n["inputs"]["metadata"]["name"] for n in namespaces) == ["batch", "inference"]
    (scope,) = p.by_type(SCOPE)
    assert all(n["parent"] == scope["urn"] for n in namespaces)
    # Every PV in the namespace waits for it, whichever store declared it.
    inference = next(n for n in namespaces if n["inputs"]["metadata"]["name"] == "inference")
    pvs = [
        pv for pv in p.by_type(PV) if pv["inputs"]["spec"]["claimRef"]["namespace"] == "inference"
    ]
    assert len(pvs) == 2 and all(inference["urn"] in pv["dependencies"] for pv in pvs)


def test_a_moved_namespace_keeps_its_identity_through_an_alias():
    p = plan(lambda: LocalModelStore("a", {"readers": ["inference"], "create_namespaces": True}))
    (namespace,) = p.by_type(NAMESPACE)
    store = p.by_type("modelstore:index:LocalModelStore")[0]
    assert namespace["aliases"] == [{"name": "a-ns-inference", "parentUrn": store["urn"]}]


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            ("b", {"readers": ["inference"], "claim_name": "models"}),
            "b: claim_name must be a PersistentVolumeClaim name no other store on cluster "
            "'kubernetes' uses (store 'a' already declares PersistentVolumeClaim "
            "inference/models), got 'inference/models'",
        ),
        (
            ("llama-prod", {"readers": ["inference"], "claim_name": "llama-prod"}),
            "llama-prod: claim_name must be a PersistentVolume name no other store on cluster "
            "'kubernetes' uses (store 'a' already declares PersistentVolume "
            "llama-prod-inference), got 'llama-prod-inference'",
        ),
    ],
    ids=["same-claim", "same-pv-name"],
)
def test_names_two_stores_would_share_are_refused_naming_both(second, message):
    first = {
        "models": {"readers": ["inference"], "claim_name": "models"},
        "llama-prod": {"readers": ["prod-inference"], "claim_name": "llama"},
    }["models" if second[0] == "b" else "llama-prod"]

    def program():
        LocalModelStore("a", first)
        LocalModelStore(*second)

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == message
    # The second store registered nothing: the check runs before it registers.
    assert not [u for u in err.value.registered if u.endswith(f"::{second[0]}")]


def test_the_config_program_refuses_a_collision_before_any_store_registers():
    stores = {
        "a": {"backend": "local", "readers": ["inference"], "claim_name": "models"},
        "b": {"backend": "local", "readers": ["inference"], "claim_name": "models"},
    }
    with pytest.raises(PlanError) as err:
        plan(lambda: build_stores(stores))
    assert "store 'a' already declares PersistentVolumeClaim inference/models" in str(err.value)
    assert len(err.value.registered) == 1  # the stack itself


def test_two_clusters_on_one_kubernetes_provider_are_refused():
    def program():
        LocalModelStore("a", {"readers": ["x"], "cluster_name": "laptop"})
        LocalModelStore("b", {"readers": ["y"], "cluster_name": "lab"})

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "b: opts.providers['kubernetes'] must be a Kubernetes provider of its own for cluster "
        "'lab' (cluster 'laptop' already uses the default provider), got 'the default provider'"
    )


def test_two_clusters_with_a_provider_each_get_a_scope_each():
    def program():
        laptop = k8s.Provider("laptop", context="kind-laptop")
        lab = k8s.Provider("lab", context="lab")
        LocalModelStore(
            "a",
            {"readers": ["x"], "cluster_name": "laptop", "create_namespaces": True},
            pulumi.ResourceOptions(provider=laptop),
        )
        LocalModelStore(
            "b",
            {"readers": ["x"], "cluster_name": "lab", "create_namespaces": True},
            pulumi.ResourceOptions(provider=lab),
        )

    p = plan(program)
    scopes = {s["urn"].rsplit("::", 1)[-1]: s for s in p.by_type(SCOPE)}
    assert set(scopes) == {"laptop", "lab"}
    namespaces = p.by_type(NAMESPACE)
    assert len(namespaces) == 2  # one "x" per cluster, each through its cluster's provider
    assert {n["provider"].split("::")[-2] for n in namespaces} == {"laptop", "lab"}


def test_a_store_joining_a_scope_with_another_provider_is_refused():
    def program():
        other = k8s.Provider("other", context="other")
        LocalModelStore("a", {"readers": ["x"]})
        LocalModelStore("b", {"readers": ["y"]}, pulumi.ResourceOptions(provider=other))

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "b: opts.providers['kubernetes'] must be the Kubernetes provider of cluster 'kubernetes' "
        "(each cluster has one), got 'other'"
    )


def test_an_explicit_scope_is_joined_as_given():
    from pulumi_modelstore.cluster import KubernetesCluster

    def program():
        scope = KubernetesCluster("laptop", {})
        LocalModelStore("a", {"readers": ["x"], "cluster": scope, "create_namespaces": True})
        LocalModelStore("b", {"readers": ["y"], "cluster": scope})

    p = plan(program)
    (scope,) = p.by_type(SCOPE)
    assert scope["urn"].endswith("::laptop")
    assert p.by_type(NAMESPACE)[0]["parent"] == scope["urn"]


def test_a_kubernetes_cluster_takes_no_fields():
    from pulumi_modelstore.cluster import KubernetesCluster

    assert_refused(
        lambda: KubernetesCluster("laptop", {"context": "kind"}),
        "laptop: field name must be none: this component takes no fields, got 'context'",
    )


@pytest.mark.parametrize(
    ("scope", "args", "message"),
    [
        (
            AksCluster,
            {"cluster_resource_group_name": "rg"},
            "s: cluster_name is missing; "
            "it must be the AKS cluster's name, a plain string so it can be looked "
            "up before deploy (or give cluster)",
        ),
        (
            AksCluster,
            {"cluster_name": "ml"},
            "s: cluster_resource_group_name is missing; "
            "it must be the AKS cluster's resource group, a plain "
            "string (a cluster name is unique only within its resource group)",
        ),
        (
            AksCluster,
            {"cluster_name": "ml", "cluster_resource_group_name": "rg", "region": "eastus"},
            "s: field name must be one of cluster_name, cluster_resource_group_name, got 'region'",
        ),
        (
            GkeCluster,
            {"location": "us-central1"},
            "s: cluster_name is missing; "
            "it must be the GKE cluster's name, a plain string so it can be looked "
            "up before deploy (or give cluster)",
        ),
        (
            GkeCluster,
            {"cluster_name": "ml"},
            "s: location is missing; "
            "it must be the GKE cluster's region or zone, a plain string (a cluster "
            "name is unique only within its location)",
        ),
        (
            GkeCluster,
            {"cluster_name": "ml", "location": "us-central1", "zone": "a"},
            "s: field name must be one of cluster_name, location, project, got 'zone'",
        ),
    ],
)
def test_a_cloud_scope_needs_its_cluster_named_where_its_name_is_unique(scope, args, message):
    """An AKS cluster's name is unique in its resource group, a GKE cluster's in its location."""
    assert_refused(lambda: scope("s", args), message)


@pytest.mark.parametrize(
    ("backend", "first", "second", "field", "value", "have"),
    [
        ("gcs-fuse", {}, {"location": "europe-west4"}, "location", "europe-west4", "us-central1"),
        (
            "gcs-fuse",
            {"project": "ml-project-a"},
            {"project": "ml-project-b"},
            "project",
            "ml-project-b",
            "ml-project-a",
        ),
        (
            "azure-blob",
            {},
            {"cluster_resource_group_name": "other-rg"},
            "cluster_resource_group_name",
            "other-rg",
            "ml-rg",
        ),
        (
            "efs",
            {"region": "us-west-2"},
            {"region": "eu-west-1"},
            "region",
            "eu-west-1",
            "us-west-2",
        ),
    ],
)
def test_a_store_naming_its_cluster_with_another_fact_is_refused(
    backend, first, second, field, value, have
):
    """Stores of one cluster name share its scope, so its facts: a second store giving another
    location, project, resource group or region names another cluster (a GKE cluster's name
    is unique only in its location, an AKS cluster's in its resource group)."""
    store = backend_class(backend)
    assert store is not None
    example = dict(store.example_args)

    def program():
        store("first", {**example, "readers": ["x"], **first})
        store("second", {**example, "readers": ["y"], **second})

    with pytest.raises(PlanError) as err:
        plan(program)
    cluster = example["cluster_name"]
    assert str(err.value) == (
        f"second: {field} must be {have!r}, what cluster {cluster!r} already has (stores on one "
        f"cluster share its facts), got {value!r}"
    )
