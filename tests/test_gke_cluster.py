"""The GKE cluster scope: facts looked up once, the named preflight checks, and the settings a
platform stack merges into its own cluster and node pools."""

from __future__ import annotations

from typing import Any

import pytest

from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.gcp import GkeCluster, cluster_settings, node_pool_settings
from pulumi_modelstore.gcp import cluster as gke
from pulumi_modelstore.gcp import validation as gcp_v
from pulumi_modelstore.plan.engine import PlanError, plan_directory
from pulumi_modelstore.plan.placeholders import INVOKES
from tests.conftest import assert_refused, scope_facts
from tests.test_config_clusters import _project

GET_CLUSTER = "gcp:container/getCluster:getCluster"


def facts_of(location: str = "us-central1-a", invokes: dict[str, Any] | None = None):
    args = {"cluster_name": "ml", "location": location, "project": "acme-ml"}
    return scope_facts(lambda: GkeCluster("ml", args), invokes)


def cluster_answer(**changes: Any):
    def answer(args, config):
        base = INVOKES[GET_CLUSTER](args, config)
        return {**base, **changes}

    return {GET_CLUSTER: answer}


def test_facts_are_looked_up_once_and_a_zone_gives_its_region():
    facts, again, p = facts_of()
    assert facts is again
    assert [c["token"] for c in p.invokes].count(GET_CLUSTER) == 1
    assert (facts.project, facts.location, facts.region) == (
        "acme-ml",
        "us-central1-a",
        "us-central1",
    )
    assert facts.workload_pool == "acme-ml.svc.id.goog"
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
            "acme-ml.svc.id.goog; see gcp.cluster_settings), got 'ml'",
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


# ---- names GCP refuses ---------------------------------------------------------------------------

NAME_RULE = gcp_v.CLUSTER_NAME_RULE
LOCATION_RULE = gcp_v.LOCATION_RULE
PROJECT_RULE = gcp_v.PROJECT_ID_RULE
SCOPE = {"cluster_name": "ml-gke", "location": "us-central1"}
BAD_SCOPE = [
    ({"cluster_name": "ML-gke"}, f"cluster_name must be {NAME_RULE}, got 'ML-gke'"),
    ({"cluster_name": "1ml"}, f"cluster_name must be {NAME_RULE}, got '1ml'"),
    ({"cluster_name": "ml-"}, f"cluster_name must be {NAME_RULE}, got 'ml-'"),
    ({"cluster_name": "m" * 41}, f"cluster_name must be {NAME_RULE}, got '{'m' * 41}'"),
    ({"cluster_name": "ml_gke"}, f"cluster_name must be {NAME_RULE}, got 'ml_gke'"),
    ({"location": "us-central"}, f"location must be {LOCATION_RULE}, got 'us-central'"),
    ({"location": "US-CENTRAL1"}, f"location must be {LOCATION_RULE}, got 'US-CENTRAL1'"),
    ({"location": "us-central1-a1"}, f"location must be {LOCATION_RULE}, got 'us-central1-a1'"),
    ({"project": "acme"}, f"project must be {PROJECT_RULE}, got 'acme'"),
    ({"project": "Acme-ML"}, f"project must be {PROJECT_RULE}, got 'Acme-ML'"),
    ({"project": "acme-ml-"}, f"project must be {PROJECT_RULE}, got 'acme-ml-'"),
    ({"project": "1acme-ml"}, f"project must be {PROJECT_RULE}, got '1acme-ml'"),
    ({"project": "a" * 31}, f"project must be {PROJECT_RULE}, got '{'a' * 31}'"),
]


@pytest.mark.parametrize(("change", "message"), BAD_SCOPE, ids=[m for _, m in BAD_SCOPE])
def test_names_gcp_refuses_are_refused_before_anything_registers(change, message):
    assert_refused(lambda: GkeCluster("s", {**SCOPE, **change}), f"s: {message}")


@pytest.mark.parametrize("name", ["m", "m" * 40, "ml-gke-2"])
def test_cluster_names_gcp_takes(name):
    gcp_v.cluster_name("s", "cluster_name", name)


@pytest.mark.parametrize("project", ["acme-ml", "a" * 30, "example.com:acme-ml"])
def test_project_ids_gcp_takes(project):
    gcp_v.project_id("s", "project", project)


# ---- a cluster by its attributes (modelstore:clusters) ------------------------------------------

CONFIG_ENTRY = """
modelstore:clusters:
  prod:
    kind: gke
    location: {location}
    project: {project}
    attributes:
      project_number: "{number}"
      workload_pool: {pool}
      gcs_fuse_csi: true
      pd_csi: true
      autopilot: false
      master_version: "{version}"
      node_pool_metadata_modes: {{gpu: {mode}}}
modelstore:stores:
  llama: {{backend: gcs-fuse, cluster: prod, readers: [a]}}
"""
GOOD_ENTRY = {
    "location": "us-central1",
    "project": "acme-ml",
    "number": "421337000042",
    "pool": "acme-ml.svc.id.goog",
    "version": "1.33.4-gke.1172000",
    "mode": "GKE_METADATA",
}
KEY = "modelstore:clusters.prod"
BAD_ENTRIES = [
    ({"location": "us-central"}, [f"{KEY}.location must be {LOCATION_RULE}, got 'us-central'"]),
    ({"project": "acme"}, [f"{KEY}.project must be {PROJECT_RULE}, got 'acme'"]),
    (
        {"number": "42a"},
        [f"{KEY}.attributes.project_number must be a GCP project number, got '42a'"],
    ),
    (
        {"pool": "other.svc.id.goog"},
        [
            f"{KEY}.attributes.workload_pool must be the project's workload pool "
            "acme-ml.svc.id.goog (GKE's pool is always <project>.svc.id.goog), or null when "
            "workload identity is off, got 'other.svc.id.goog'"
        ],
    ),
    (
        {"version": "latest"},
        [
            f"{KEY}.attributes.master_version must be a GKE version such as "
            "1.33.4-gke.1172000 (leave it out when unknown), got 'latest'"
        ],
    ),
    (
        {"mode": "GKE"},
        [
            f"{KEY}.attributes.node_pool_metadata_modes.gpu must be one of GKE_METADATA, "
            "GCE_METADATA, MODE_UNSPECIFIED, got 'GKE'"
        ],
    ),
]


@pytest.mark.parametrize(
    ("change", "lines"), BAD_ENTRIES, ids=[next(iter(c)) for c, _ in BAD_ENTRIES]
)
def test_a_gke_entry_gcp_would_refuse_is_one_line_and_registers_nothing(tmp_path, change, lines):
    directory = _project(tmp_path, CONFIG_ENTRY.format(**{**GOOD_ENTRY, **change}))
    assert_refused(directory, "\n".join(lines))


def test_a_gke_entry_named_by_a_key_gcp_refuses(tmp_path):
    config = (
        CONFIG_ENTRY.format(**GOOD_ENTRY)
        .replace("  prod:", "  Prod:")
        .replace("cluster: prod", "cluster: Prod")
    )
    assert_refused(
        _project(tmp_path, config),
        "\n".join([f"modelstore:clusters.Prod must be {NAME_RULE}, got 'Prod'"]),
    )


def test_a_good_gke_entry_plans(tmp_path):
    plan_directory(_project(tmp_path, CONFIG_ENTRY.format(**GOOD_ENTRY)))


REFERENCED = """
modelstore:clusters:
  Prod:
    kind: gke
    location: us-central1
    project: acme-ml
    stack_reference: acme/platform/prod
    outputs:
      name: clusterName
      project_number: number
      workload_pool: pool
      gcs_fuse_csi: fuse
      pd_csi: pd
      autopilot: autopilot
      master_version: version
      node_pool_metadata_modes: modes
modelstore:stores:
  llama: {backend: gcs-fuse, cluster: Prod, readers: [a]}
"""
PLATFORM = {
    "clusterName": "ml-gke",
    "number": "421337000042",
    "pool": "acme-ml.svc.id.goog",
    "fuse": True,
    "pd": True,
    "autopilot": False,
    "version": "1.33.4-gke.1172000",
    "modes": {"gpu": "GKE_METADATA"},
}


def test_a_gke_entry_read_from_a_stack_is_checked_the_same_way(tmp_path):
    """The key 'Prod' is no cluster name, but the stack's output names the cluster: fine."""
    (tmp_path / "good").mkdir()
    (tmp_path / "bad").mkdir()
    plan_directory(_project(tmp_path / "good", REFERENCED, {"acme.platform.prod": PLATFORM}))
    bad = {**PLATFORM, "clusterName": "ML_GKE", "version": "latest"}
    with pytest.raises(PlanError) as err:
        plan_directory(_project(tmp_path / "bad", REFERENCED, {"acme.platform.prod": bad}))
    assert str(err.value).splitlines() == [
        f"modelstore:clusters.Prod.outputs.name must be {NAME_RULE}, got 'ML_GKE'",
        "modelstore:clusters.Prod.outputs.master_version must be a GKE version such as "
        "1.33.4-gke.1172000 (leave it out when unknown), got 'latest'",
    ]
    # The stack and the reference it read; no resource.
    assert [urn.split("::")[2] for urn in err.value.registered] == [
        "pulumi:pulumi:Stack",
        "pulumi:pulumi:Stack$pulumi:pulumi:StackReference",
    ]
