"""The Hyperdisk ML store: wiring and defaults, the bad-input table (exact messages), the
preflight failures, the custom resources against their upstream fields, deletion order and
model revisions that replace the claims."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.gcp import HyperdiskMlModelStore
from pulumi_modelstore.gcp import validation as gcp_v
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.plan.placeholders import gcp as gcp_placeholders
from tests.conftest import assert_refused, plan
from tests.validators.gke_crds import (
    COMPUTE_CLASS_FIELDS,
    GCP_DATA_SOURCE_FIELDS,
    PRIORITY_RULE_FIELDS,
    WHEN_UNSATISFIABLE,
)

PVC = "kubernetes:core/v1:PersistentVolumeClaim"
PV = "kubernetes:core/v1:PersistentVolume"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
KSA = "kubernetes:core/v1:ServiceAccount"
DS = "kubernetes:datalayer.gke.io/v1:GCPDataSource"
CC = "kubernetes:cloud.google.com/v1:ComputeClass"
IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
GET_CLUSTER = "gcp:container/getCluster:getCluster"
GKE = "prod-gke"
PROJECT = gcp_placeholders.DEFAULT_GCP_PROJECT
NUMBER = gcp_placeholders.project_number(PROJECT)
READERS = ["inference", "batch"]
BASE: dict[str, Any] = {
    "cluster_name": GKE,
    "location": "us-central1",
    "readers": READERS,
    "source_uri": "gs://acme-models/llama-3-8b/",
    "model_revision": "v1",
    "size_gib": 100,
}


def store(**extra: Any):
    args = {**BASE, **extra}
    return lambda: HyperdiskMlModelStore("llama", args)


def cluster_answer(**changes: Any):
    """The placeholder getCluster answer with ``changes`` applied."""

    def answer(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
        return {**gcp_placeholders._gke_cluster(args, config), **changes}

    return {GET_CLUSTER: answer}


@pytest.fixture(scope="module")
def planned():
    return plan(store(create_compute_class=True), fill=True)


# ---- wiring and defaults ---------------------------------------------------------------------


def test_storage_class_is_zonal_hyperdisk_ml_with_provisioned_throughput(planned):
    (sc,) = planned.by_type(SC)
    i = sc["inputs"]
    assert i["metadata"]["name"] == "llama-hdml-v1"
    assert i["provisioner"] == "pd.csi.storage.gke.io"
    assert i["parameters"] == {
        "type": "hyperdisk-ml",
        "provisioned-throughput-on-create": "2400Mi",
        "labels": "modelstore-store=llama,managed-by=pulumi-modelstore",
    }
    assert i["allowVolumeExpansion"] is False
    assert i["volumeBindingMode"] == "WaitForFirstConsumer"
    assert i["reclaimPolicy"] == "Delete"
    assert "allowedTopologies" not in i


def test_multi_zone_class_binds_immediately_in_the_given_zones():
    zones = ["us-central1-a", "us-central1-c"]
    (sc,) = plan(store(zones=zones, throughput_mibps=4000)).by_type(SC)
    i = sc["inputs"]
    assert i["parameters"]["enable-multi-zone-provisioning"] == "true"
    assert i["parameters"]["provisioned-throughput-on-create"] == "4000Mi"
    assert i["volumeBindingMode"] == "Immediate"
    assert i["allowedTopologies"] == [
        {"matchLabelExpressions": [{"key": "topology.gke.io/zone", "values": zones}]}
    ]


def test_each_reader_gets_a_read_only_many_claim_filled_from_its_data_source(planned):
    claims = {c["inputs"]["metadata"]["namespace"]: c for c in planned.by_type(PVC)}
    assert sorted(claims) == sorted(READERS)
    assert not planned.by_type(PV)  # provisioned: no static PV
    for claim in claims.values():
        i = claim["inputs"]
        assert i["metadata"]["name"] == "llama"
        assert i["metadata"]["annotations"] == {
            "pulumi.com/skipAwait": "true",
            "modelstore.pulumi.com/model-revision": "v1",
        }
        assert i["spec"] == {
            "accessModes": ["ReadOnlyMany"],
            "volumeMode": "Filesystem",
            "resources": {"requests": {"storage": "100Gi"}},
            "storageClassName": "llama-hdml-v1",
            "dataSourceRef": {
                "apiGroup": "datalayer.gke.io",
                "kind": "GCPDataSource",
                "name": "llama-v1",
            },
        }


def test_data_source_is_in_the_claims_namespace_and_names_the_loader_account(planned):
    sources = {s["inputs"]["metadata"]["namespace"]: s["inputs"] for s in planned.by_type(DS)}
    accounts = {a["inputs"]["metadata"]["namespace"]: a["inputs"] for a in planned.by_type(KSA)}
    assert sorted(sources) == sorted(accounts) == sorted(READERS)
    for ns, source in sources.items():
        assert source["apiVersion"] == "datalayer.gke.io/v1"
        assert source["kind"] == "GCPDataSource"
        assert source["metadata"]["name"] == "llama-v1"
        assert source["spec"] == {
            "cloudStorage": {
                "uri": "gs://acme-models/llama-3-8b/",
                "serviceAccountName": accounts[ns]["metadata"]["name"],
            }
        }
        assert accounts[ns]["metadata"]["name"] == "llama-hdml-loader"


def test_data_source_matches_the_upstream_crd_fields(planned):
    for source in planned.by_type(DS):
        spec = source["inputs"]["spec"]
        assert set(spec) <= set(GCP_DATA_SOURCE_FIELDS)
        for key, fields in GCP_DATA_SOURCE_FIELDS.items():
            assert set(spec[key]) <= fields
        assert spec["cloudStorage"]["uri"].startswith("gs://")
        assert spec["cloudStorage"]["uri"].endswith("/")


def test_compute_class_is_named_exactly_and_matches_the_upstream_fields(planned):
    (cc,) = planned.by_type(CC)
    i = cc["inputs"]
    assert (i["apiVersion"], i["kind"]) == ("cloud.google.com/v1", "ComputeClass")
    assert i["metadata"]["name"] == "gcs-to-hdml-compute-class"
    assert set(i["spec"]) <= COMPUTE_CLASS_FIELDS
    assert i["spec"]["priorities"]  # required
    for rule in i["spec"]["priorities"]:
        assert set(rule) <= PRIORITY_RULE_FIELDS
    assert i["spec"]["whenUnsatisfiable"] in WHEN_UNSATISFIABLE
    # GKE's Volume Populator guide: c3 then c3d, and no scale-up to other families.
    assert i["spec"]["priorities"] == [{"machineFamily": "c3"}, {"machineFamily": "c3d"}]
    assert i["spec"]["whenUnsatisfiable"] == "DoNotScaleUp"


def test_no_compute_class_unless_asked():
    assert not plan(store()).by_type(CC)


def test_compute_class_is_made_once_per_cluster():
    def program():
        HyperdiskMlModelStore("llama", {**BASE, "create_compute_class": True})
        HyperdiskMlModelStore("qwen", {**BASE, "readers": ["qwen"], "create_compute_class": True})

    assert len(plan(program).by_type(CC)) == 1


def test_loader_reads_the_bucket_through_its_workload_identity_principal(planned):
    grants = {g["inputs"]["member"]: g["inputs"] for g in planned.by_type(IAM)}
    accounts = planned.by_type(KSA)
    assert len(grants) == len(accounts) == len(READERS)
    for account in accounts:
        ns = account["inputs"]["metadata"]["namespace"]
        sa = account["inputs"]["metadata"]["name"]
        member = (
            f"principal://iam.googleapis.com/projects/{NUMBER}/locations/global/"
            f"workloadIdentityPools/{PROJECT}.svc.id.goog/subject/ns/{ns}/sa/{sa}"
        )
        assert grants[member] == {
            "bucket": "acme-models",
            "role": "roles/storage.objectViewer",
            "member": member,
        }


def test_mount_for_is_read_only_and_needs_no_service_account():
    built = {}

    def program():
        built["s"] = HyperdiskMlModelStore("llama", BASE)

    plan(program)
    mount = built["s"].mount_for("inference")
    assert mount.read_only is True
    assert mount.volume == {
        "name": "llama",
        "persistentVolumeClaim": {"claimName": "llama", "readOnly": True},
    }
    assert mount.service_account_name is None


# ---- deletion order and revisions ------------------------------------------------------------


def test_claim_depends_on_its_data_source_so_destroy_deletes_the_claim_first(planned):
    sources = {s["inputs"]["metadata"]["namespace"]: s["urn"] for s in planned.by_type(DS)}
    for claim in planned.by_type(PVC):
        ns = claim["inputs"]["metadata"]["namespace"]
        assert sources[ns] in claim["dependencies"]
        assert claim["urn"] not in planned.by_urn(sources[ns])["dependencies"]


def test_data_source_waits_for_the_bucket_grant_the_account_and_the_compute_class(planned):
    (cc,) = planned.by_type(CC)
    grants = {
        g["inputs"]["member"].rsplit("/ns/", 1)[1].split("/")[0]: g for g in planned.by_type(IAM)
    }
    accounts = {a["inputs"]["metadata"]["namespace"]: a for a in planned.by_type(KSA)}
    for source in planned.by_type(DS):
        ns = source["inputs"]["metadata"]["namespace"]
        deps = source["dependencies"]
        assert {grants[ns]["urn"], accounts[ns]["urn"], cc["urn"]} <= set(deps)


def test_a_claim_is_replaced_never_edited(planned):
    for claim in planned.by_type(PVC):
        assert claim["replaceOnChanges"] == ["spec"]
        assert claim["deleteBeforeReplace"] is True


def test_a_new_revision_changes_the_claims_spec_and_keeps_its_name():
    old = {c["inputs"]["metadata"]["namespace"]: c for c in plan(store()).by_type(PVC)}
    new = {
        c["inputs"]["metadata"]["namespace"]: c
        for c in plan(store(model_revision="v2")).by_type(PVC)
    }
    for ns in READERS:
        assert old[ns]["urn"] == new[ns]["urn"]
        assert new[ns]["inputs"]["metadata"]["name"] == "llama"
        assert old[ns]["inputs"]["spec"] != new[ns]["inputs"]["spec"]
        assert new[ns]["inputs"]["spec"]["dataSourceRef"]["name"] == "llama-v2"
        assert new[ns]["inputs"]["spec"]["storageClassName"] == "llama-hdml-v2"


# ---- bad input -------------------------------------------------------------------------------

BAD: list[tuple[dict[str, Any], str]] = [
    (
        {"writers": ["loader"]},
        "writers must be empty: a Hyperdisk ML store is filled once from source_uri and "
        "read-only for many (ReadOnlyMany); publish a model to the bucket and raise "
        "model_revision, got ['loader']",
    ),
    (
        {"source_uri": "gs://acme-models/llama-3-8b"},
        "source_uri must be a folder URI ending in '/' (gs://<bucket>/<path>/: the populator "
        "copies the folder's contents), got 'gs://acme-models/llama-3-8b'",
    ),
    (
        {"source_uri": "s3://acme-models/llama/"},
        "source_uri must be a Cloud Storage folder URI, gs://<bucket>/<path>/, "
        "got 's3://acme-models/llama/'",
    ),
    (
        {"source_uri": "gs://Acme_Models/llama/"},
        "source_uri must be gs:// then a valid Cloud Storage bucket name (3-63 lowercase "
        "letters, digits, '-', '_' and '.', starting and ending with a letter or digit; up to "
        "222 with dots, 63 between dots; not starting with 'goog', without 'google' or a close "
        "misspelling such as 'g00gle', not an IP address), got 'gs://Acme_Models/llama/'",
    ),
    (
        {"source_uri": "gs://acme-models//llama/"},
        "source_uri must be a folder URI without empty path segments ('//'), "
        "got 'gs://acme-models//llama/'",
    ),
    (
        {"source_uri": None},
        "source_uri is missing; it must be set (it has no default)",
    ),
    (
        {"throughput_mibps": 300},
        "throughput_mibps must be between 400 and 1,200,000 MiB/s (Hyperdisk ML's range), got 300",
    ),
    (
        {"throughput_mibps": 1_200_001},
        "throughput_mibps must be between 400 and 1,200,000 MiB/s (Hyperdisk ML's range), "
        "got 1200001",
    ),
    (
        {"size_gib": 2},
        "size_gib must be between 4 and 65536 GiB (Hyperdisk ML), got 2",
    ),
    (
        {"model_revision": "V1.0"},
        "model_revision must be a DNS-1123 label (lowercase letters, digits and '-', starting "
        "and ending with a letter or digit, at most 63 characters), got 'V1.0'",
    ),
    (
        {"zones": ["us-central1-a"]},
        "zones must be at least two zones for multi-zone volumes (leave zones out for a zonal "
        "volume), got ['us-central1-a']",
    ),
    (
        {"zones": ["us-central1-a", "us-east1-b"]},
        "zones must be zones of one region (got us-central1, us-east1), "
        "got ['us-central1-a', 'us-east1-b']",
    ),
    (
        {"zones": ["us-central1-a", "us-central1"]},
        "zones must be zones such as us-central1-a, got 'us-central1'",
    ),
    (
        {"zones": ["us-central1-a", "us-central1-a"]},
        "zones must be a list without repeats, got ['us-central1-a', 'us-central1-a']",
    ),
    (
        {"cluster_name": "prod_gke"},
        f"cluster_name must be {gcp_v.CLUSTER_NAME_RULE}, got 'prod_gke'",
    ),
    ({"project": "Acme-ML"}, f"project must be {gcp_v.PROJECT_ID_RULE}, got 'Acme-ML'"),
    (
        {"readers": []},
        "readers and writers must be at least one consumer namespace between them, got []",
    ),
]


@pytest.mark.parametrize(("change", "message"), BAD, ids=[m.split(" ")[0] for _, m in BAD])
def test_bad_input_is_refused_with_one_line_and_registers_nothing(change, message):
    with pytest.raises(PlanError) as err:
        plan(store(**change))
    assert str(err.value).startswith(f"llama: {message}")
    assert "\n" not in str(err.value)
    assert len(err.value.registered) == 1  # the stack itself


def test_required_fields_are_named():
    args = {k: v for k, v in BASE.items() if k not in ("model_revision", "size_gib")}
    with pytest.raises(ModelStoreInputError) as err:
        HyperdiskMlModelStore.validate("llama", args)
    assert str(err.value).splitlines() == [
        "llama: model_revision is missing; it must be set (it has no default)",
        "llama: size_gib is missing; it must be set (it has no default)",
    ]


# ---- preflight -------------------------------------------------------------------------------


def test_preflight_refuses_a_cluster_without_the_pd_csi_addon():
    answer = cluster_answer(
        addonsConfigs=[
            {
                "gcsFuseCsiDriverConfigs": [{"enabled": True}],
                "gcePersistentDiskCsiDriverConfigs": [{"enabled": False}],
            }
        ]
    )
    assert_refused(
        store(),
        f"llama: cluster_name must be a cluster with the Compute Engine persistent disk CSI "
        f"driver add-on enabled (addons_config.gce_persistent_disk_csi_driver_config.enabled), "
        f"got '{GKE}'",
        invokes=answer,
    )


def test_preflight_refuses_a_cluster_without_a_workload_pool():
    assert_refused(
        store(),
        f"llama: cluster_name must be a cluster with workload identity (workload pool "
        f"{PROJECT}.svc.id.goog; see gcp.cluster_settings), got '{GKE}'",
        invokes=cluster_answer(workloadIdentityConfigs=[]),
    )


def test_preflight_refuses_zones_outside_the_clusters_region():
    with pytest.raises(PlanError) as err:
        plan(store(zones=["us-east1-b", "us-east1-c"]))
    assert str(err.value) == (
        "llama: zones must be zones of the cluster's region us-central1 (not in it: "
        "us-east1-b, us-east1-c), got ['us-east1-b', 'us-east1-c']"
    )
