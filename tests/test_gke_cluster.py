"""The GKE cluster scope: facts looked up once, the named preflight checks, and the settings a
platform stack merges into its own cluster and node pools."""

from __future__ import annotations

from typing import Any

import pytest

from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.gcp import GkeCluster, cluster_settings, node_pool_settings
from pulumi_modelstore.gcp import cluster as gke
from pulumi_modelstore.gcp import validation as gcp_v
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.plan.placeholders import INVOKES
from tests.conftest import plan

GET_CLUSTER = "gcp:container/getCluster:getCluster"


def facts_of(location: str = "us-central1-a", invokes: dict[str, Any] | None = None):
    found: dict[str, Any] = {}

    def program():
        scope = GkeCluster("ml", {"cluster_name": "ml", "location": location, "project": "acme"})
        found["facts"] = scope.facts("llama")
        found["again"] = scope.facts("t5")

    p = plan(program, invokes=invokes)
    return found["facts"], found["again"], p


def cluster_answer(**changes: Any):
    def answer(args, config):
        base = INVOKES[GET_CLUSTER](args, config)
        return {**base, **changes}

    return {GET_CLUSTER: answer}


def test_facts_are_looked_up_once_and_a_zone_gives_its_region():
    facts, again, p = facts_of()
    assert facts is again
    assert [c["token"] for c in p.invokes].count(GET_CLUSTER) == 1
    assert (facts.project, facts.location, facts.region) == ("acme", "us-central1-a", "us-central1")
    assert facts.workload_pool == "acme.svc.id.goog"
    assert facts.gcs_fuse_csi and facts.pd_csi and not facts.autopilot
    assert facts.project_number.isdigit() and len(facts.project_number) == 12


def test_a_regional_cluster_is_its_own_region():
    facts, _, _ = facts_of("europe-west4")
    assert facts.region == "europe-west4"


@pytest.mark.parametrize(
    ("changes", "check", "message"),
    [
        (
            {"workloadIdentityConfigs": []},
            gke.require_workload_pool,
            "llama: cluster_name must be a cluster with workload identity (workload pool "
            "acme.svc.id.goog; see gcp.cluster_settings), got 'ml'",
        ),
        (
            {"addonsConfigs": [{"gcsFuseCsiDriverConfigs": [{"enabled": False}]}]},
            gke.require_gcs_fuse_addon,
            "llama: cluster_name must be a cluster with the GCS FUSE CSI driver add-on enabled "
            "(addons_config.gcs_fuse_csi_driver_config.enabled; see gcp.cluster_settings), "
            "got 'ml'",
        ),
        (
            {"addonsConfigs": []},
            gke.require_pd_csi_addon,
            "llama: cluster_name must be a cluster with the Compute Engine persistent disk CSI "
            "driver add-on enabled (addons_config.gce_persistent_disk_csi_driver_config.enabled), "
            "got 'ml'",
        ),
        (
            {
                "nodePools": [
                    {
                        "name": "gpu",
                        "nodeConfigs": [{"workloadMetadataConfigs": [{"mode": "GCE_METADATA"}]}],
                    },
                    {
                        "name": "cpu",
                        "nodeConfigs": [{"workloadMetadataConfigs": [{"mode": "GKE_METADATA"}]}],
                    },
                ]
            },
            gke.require_gke_metadata,
            "llama: cluster_name must be a cluster whose node pools run the GKE metadata server "
            "(workload_metadata_config.mode GKE_METADATA; not on: gpu), got 'ml'",
        ),
    ],
    ids=["no-workload-pool", "no-gcs-fuse", "no-pd-csi", "gce-metadata-pool"],
)
def test_each_preflight_check_refuses_what_the_cluster_lacks(changes, check, message):
    facts, _, _ = facts_of(invokes=cluster_answer(**changes))
    with pytest.raises(ModelStoreInputError) as err:
        check("llama", facts)
    assert str(err.value) == message


def test_autopilot_manages_node_pools_itself():
    facts, _, _ = facts_of(invokes=cluster_answer(enableAutopilot=True))
    assert facts.autopilot and facts.node_pool_metadata_modes == {}
    gke.require_gke_metadata("llama", facts)


def test_a_cluster_that_is_not_found_fails_naming_it():
    def missing(args, config):
        raise Exception("googleapi: Error 404: Not found: projects/acme/locations/x/clusters/ml")

    with pytest.raises(PlanError) as err:
        facts_of(invokes={GET_CLUSTER: missing})
    assert str(err.value).startswith(
        "llama: cluster_name must be a GKE cluster in us-central1-a (invoke of "
        "gcp:container/getCluster:getCluster failed: googleapi: Error 404"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"location": "us-central1"}, "s: cluster_name must be the GKE cluster's name"),
        ({"cluster_name": "ml"}, "s: location must be the GKE cluster's region or zone"),
        ({"cluster_name": "ml", "location": "us-central1", "zone": "a"}, "s: field name must be"),
    ],
)
def test_a_scope_needs_its_cluster_named_with_its_location(args, message):
    with pytest.raises(PlanError) as err:
        plan(lambda: GkeCluster("s", args))
    assert str(err.value).startswith(message)
    assert len(err.value.registered) == 1


def test_settings_a_platform_stack_merges():
    assert cluster_settings("acme") == {
        "workload_identity_config": {"workload_pool": "acme.svc.id.goog"},
        "addons_config": {
            "gcs_fuse_csi_driver_config": {"enabled": True},
            "gce_persistent_disk_csi_driver_config": {"enabled": True},
        },
    }
    assert node_pool_settings() == {
        "node_config": {"workload_metadata_config": {"mode": "GKE_METADATA"}}
    }


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"Team": "ml"}, "s: resource_labels must be keys that are GCP label keys"),
        ({"team": "ML"}, "s: resource_labels must be values that are GCP label values"),
        ({"1team": "ml"}, "s: resource_labels must be keys that are GCP label keys"),
        ({f"k{i}": "v" for i in range(63)}, "s: resource_labels must be at most 62 labels"),
    ],
)
def test_gcp_labels_follow_the_resource_manager_rules(labels, message):
    with pytest.raises(ModelStoreInputError) as err:
        gcp_v.resource_labels("s", "resource_labels", labels, 2)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("acme-models", True),
        ("a" * 63, True),
        ("a" * 64, False),  # 63 at most without dots
        (".".join(["a" * 63] * 3) + ".ab", True),  # up to 222 with dots, 63 between them
        ("a" * 64 + ".b", False),
        ("goog-models", False),
        ("my-google-models", False),
        ("192.168.5.4", False),
        ("Acme_Models", False),
        ("acme..models", False),
    ],
)
def test_one_cloud_storage_bucket_name_rule_for_both_gcp_stores(name, ok):
    assert gcp_v.is_bucket_name(name) is ok
