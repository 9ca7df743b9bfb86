"""GcsFuseModelStore: the bucket, identity per consumer namespace, PVs and tuning, mount_for,
preflight against the cluster's facts, and exact input errors."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, cast

import pytest

from pulumi_modelstore import WorkloadMount
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.gcp import GcsFuseModelStore, GcsFuseModelStoreArgs
from pulumi_modelstore.gcp import gcsfuse as g
from pulumi_modelstore.gcp import gcsfuse_options as gopts
from pulumi_modelstore.gcp import validation as gcp_v
from pulumi_modelstore.gcp.cluster import gke_version, ships
from pulumi_modelstore.plan.engine import UNKNOWN, Plan, PlanError
from pulumi_modelstore.plan.placeholders import gcp as placeholders
from pulumi_modelstore.validation import SIZE_RULE
from tests.conftest import assert_refused, by_namespace, plan
from tests.fuse_mounts import assert_seed_writes_and_readers_read, gcsfuse_view

BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
KMS_IAM = "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"
GSA = "gcp:serviceaccount/account:Account"
GSA_IAM = "gcp:serviceaccount/iAMMember:IAMMember"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
SA = "kubernetes:core/v1:ServiceAccount"
GET_CLUSTER = "gcp:container/getCluster:getCluster"

PROJECT = "acme-ml"
NUMBER = placeholders.project_number(PROJECT)
CONFIG = {"gcp:project": PROJECT}
CLUSTER = "ml-gke"
KMS_KEY = "projects/acme-kms/locations/us-central1/keyRings/models/cryptoKeys/weights"


def gcs(**args: Any) -> Callable[[], GcsFuseModelStore]:
    fields: dict[str, Any] = {
        "cluster_name": CLUSTER,
        "location": "us-central1",
        "readers": ["inference"],
        **args,
    }
    return lambda: GcsFuseModelStore("llama", cast(GcsFuseModelStoreArgs, fields))


def run(
    invokes: Mapping[str, Any] | None = None, **args: Any
) -> tuple[dict[str, WorkloadMount], Plan]:
    found: dict[str, WorkloadMount] = {}

    def program() -> None:
        store = gcs(**args)()
        for ns, _ in store.common.consumers:
            found[ns] = store.mount_for(ns)

    return found, plan(program, fill=True, config=CONFIG, invokes=invokes)


def cluster_answer(**changes: Any) -> Callable[[Mapping[str, Any], Mapping[str, str]], Any]:
    """The placeholder getCluster, with ``changes`` over its answer."""

    def answer(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
        return {**placeholders._gke_cluster(args, config), **changes}

    return {GET_CLUSTER: answer}  # type: ignore[return-value]


def principal(ns: str, ksa: str) -> str:
    return (
        f"principal://iam.googleapis.com/projects/{NUMBER}/locations/global/"
        f"workloadIdentityPools/{PROJECT}.svc.id.goog/subject/ns/{ns}/sa/{ksa}"
    )


# -- the bucket -----------------------------------------------------------------------------


def test_new_bucket_defaults():
    _, p = run(writers=["loader"])
    (bucket,) = p.by_type(BUCKET)
    inputs = bucket["inputs"]
    assert inputs["location"] == "us-central1"
    assert inputs["project"] == PROJECT
    assert inputs["uniformBucketLevelAccess"] is True
    assert inputs["publicAccessPrevention"] == "enforced"
    assert inputs["versioning"] == {"enabled": True}
    assert inputs["softDeletePolicy"] == {"retentionDurationSeconds": 604800}
    assert "hierarchicalNamespace" not in inputs
    assert "encryption" not in inputs
    assert inputs["forceDestroy"] is False
    assert inputs["labels"] == {"modelstore-store": "llama", "managed-by": "pulumi-modelstore"}
    assert (bucket["protect"], bucket["retainOnDelete"]) == (True, True)
    assert not p.by_type(KMS_IAM)


def test_a_zonal_cluster_puts_the_bucket_in_its_region():
    _, p = run(location="europe-west4-b")
    assert p.by_type(BUCKET)[0]["inputs"]["location"] == "europe-west4"


def test_bucket_options():
    _, p = run(
        soft_delete_retention_seconds=0,
        hierarchical_namespace=True,
        resource_labels={"team": "ml"},
        protect=False,
    )
    inputs = p.by_type(BUCKET)[0]["inputs"]
    assert inputs["softDeletePolicy"] == {"retentionDurationSeconds": 0}
    assert inputs["hierarchicalNamespace"] == {"enabled": True}
    # Cloud Storage has no object versioning on a hierarchical namespace bucket.
    assert "versioning" not in inputs
    assert inputs["labels"]["team"] == "ml"
    assert inputs["forceDestroy"] is True


def test_cmek_grants_the_storage_agent_before_the_bucket():
    _, p = run(kms_key_name=KMS_KEY)
    (grant,) = p.by_type(KMS_IAM)
    (bucket,) = p.by_type(BUCKET)
    assert grant["inputs"] == {
        "cryptoKeyId": KMS_KEY,
        "role": "roles/cloudkms.cryptoKeyEncrypterDecrypter",
        "member": f"serviceAccount:service-{NUMBER}@gs-project-accounts.iam.gserviceaccount.com",
    }
    assert grant["urn"] in bucket["dependencies"]
    assert bucket["inputs"]["encryption"] == {"defaultKmsKeyName": KMS_KEY}


def test_existing_bucket_makes_no_bucket_resources():
    _, p = run(bucket_name="acme-models")
    assert not p.by_type(BUCKET)
    assert {s["inputs"]["bucket"] for s in p.by_type(BUCKET_IAM)} == {"acme-models"}
    pv = p.by_type(PV)[0]["inputs"]["spec"]
    assert pv["csi"]["volumeHandle"] == "acme-models:llama-inference"


def test_other_region_when_allowed():
    _, p = run(bucket_region="us-east4", allow_other_region=True)
    assert p.by_type(BUCKET)[0]["inputs"]["location"] == "us-east4"


# -- identity ---------------------------------------------------------------------------------


def test_direct_identity_is_bucket_level_per_namespace():
    mounts, p = run(writers=["loader"])
    grants = {s["inputs"]["member"]: s["inputs"] for s in p.by_type(BUCKET_IAM)}
    bucket = p.by_type(BUCKET)[0]["outputs"]["name"]
    assert grants == {
        principal("inference", "llama-gcs"): {
            "bucket": bucket,
            "role": "roles/storage.objectViewer",
            "member": principal("inference", "llama-gcs"),
        },
        principal("loader", "llama-gcs"): {
            "bucket": bucket,
            "role": "roles/storage.objectUser",
            "member": principal("loader", "llama-gcs"),
        },
    }
    assert not [s for s in p.states() if "projectIam" in s["type"]]
    accounts = by_namespace(p, SA)
    assert sorted(accounts) == ["inference", "loader"]
    for ns, account in accounts.items():
        assert account["inputs"]["metadata"]["name"] == "llama-gcs"
        assert "annotations" not in account["inputs"]["metadata"]
        assert mounts[ns].service_account_name == "llama-gcs"


def test_google_service_account_path():
    _, p = run(writers=["loader"], identity="google-service-account", service_account_name="vllm")
    accounts = {s["inputs"]["accountId"]: s for s in p.by_type(GSA)}
    assert len(accounts) == 2
    assert all(6 <= len(a) <= 30 for a in accounts)
    users = {s["inputs"]["member"]: s["inputs"] for s in p.by_type(GSA_IAM)}
    assert set(users) == {
        f"serviceAccount:{PROJECT}.svc.id.goog[inference/vllm]",
        f"serviceAccount:{PROJECT}.svc.id.goog[loader/vllm]",
    }
    assert {u["role"] for u in users.values()} == {"roles/iam.workloadIdentityUser"}
    emails = {s["outputs"]["email"] for s in p.by_type(GSA)}
    grants = {s["inputs"]["member"] for s in p.by_type(BUCKET_IAM)}
    assert grants == {f"serviceAccount:{e}" for e in emails}
    for ns, ksa in by_namespace(p, SA).items():
        email = ksa["inputs"]["metadata"]["annotations"]["iam.gke.io/gcp-service-account"]
        assert email in emails
        assert email.startswith(g.google_account_id("llama", ns))


def test_google_service_account_inputs_are_known_with_filled_outputs():
    """The IAM member on each Google service account names it by the account's ``name``
    output (``projects/<project>/serviceAccounts/<email>``): known with --fill-outputs."""
    _, p = run(identity="google-service-account", writers=["loader"])
    names = {s["outputs"]["name"] for s in p.by_type(GSA)}
    emails = {s["outputs"]["email"] for s in p.by_type(GSA)}
    assert names == {f"projects/{PROJECT}/serviceAccounts/{e}" for e in emails}
    users = p.by_type(GSA_IAM)
    assert {u["inputs"]["serviceAccountId"] for u in users} == names
    assert UNKNOWN not in repr([u["inputs"] for u in users])


DIRECT = re.compile(
    rf"principal://iam\.googleapis\.com/projects/{NUMBER}/locations/global/workloadIdentityPools/"
    rf"{PROJECT}\.svc\.id\.goog/subject/ns/(?P<ns>[^/]+)/sa/(?P<sa>[^/]+)"
)
LEGACY = re.compile(rf"serviceAccount:{PROJECT}\.svc\.id\.goog\[(?P<ns>[^/]+)/(?P<sa>[^\]]+)\]")


def test_every_iam_member_names_exactly_the_namespace_and_service_account_it_creates():
    for identity in g.IDENTITIES:
        _, p = run(writers=["loader"], identity=identity, service_account_name="model-reader")
        created = {(ns, s["inputs"]["metadata"]["name"]) for ns, s in by_namespace(p, SA).items()}
        assert created == {("inference", "model-reader"), ("loader", "model-reader")}
        members = [s["inputs"]["member"] for s in p.by_type(BUCKET_IAM) + p.by_type(GSA_IAM)]
        named = set()
        for member in members:
            found = DIRECT.fullmatch(member) or LEGACY.fullmatch(member)
            if found:
                named.add((found["ns"], found["sa"]))
            else:  # the Google service account itself (legacy path): names no KSA
                assert member.startswith("serviceAccount:") and "[" not in member, member
        assert named == created, identity


def test_existing_service_accounts_are_taken_by_name():
    mounts, p = run(create_service_account=False, service_account_name="serving")
    assert not p.by_type(SA)
    assert p.by_type(BUCKET_IAM)[0]["inputs"]["member"] == principal("inference", "serving")
    assert mounts["inference"].service_account_name == "serving"


# -- PVs and tuning ---------------------------------------------------------------------------


def test_pvs_and_claims():
    _, p = run(writers=["loader"], prefix="llama-3-8b/")
    pvs, claims = by_namespace(p, PV), by_namespace(p, PVC)
    bucket = p.by_type(BUCKET)[0]["outputs"]["name"]
    for ns, reader in (("inference", True), ("loader", False)):
        spec = pvs[ns]["inputs"]["spec"]
        assert spec["storageClassName"] == "modelstore-gcsfuse"
        assert claims[ns]["inputs"]["spec"]["storageClassName"] == "modelstore-gcsfuse"
        assert spec["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
        assert spec["csi"]["volumeHandle"] == f"{bucket}:llama-{ns}"
        assert spec["csi"]["readOnly"] is reader
        assert spec["accessModes"] == (["ReadOnlyMany"] if reader else ["ReadWriteMany"])
        assert spec["mountOptions"][0] == "only-dir=llama-3-8b"
        assert spec["csi"]["volumeAttributes"]["skipCSIBucketAccessCheck"] == "true"
    reader = pvs["inference"]["inputs"]["spec"]
    assert reader["mountOptions"][1:] == list(g.TUNING_MOUNT_OPTIONS["serving"])
    assert reader["csi"]["volumeAttributes"]["gcsfuseMetadataPrefetchOnMount"] == "true"
    assert pvs["loader"]["inputs"]["spec"]["mountOptions"] == ["only-dir=llama-3-8b"]
    # No mount before the consumers can reach the bucket.
    grants = {s["urn"] for s in p.by_type(BUCKET_IAM)}
    assert grants <= set(pvs["inference"]["dependencies"])


def test_serving_tuning_flags():
    assert g.TUNING_MOUNT_OPTIONS["serving"] == (
        "read:enable-buffered-read:true",
        "read_ahead_kb=131072",
        "metadata-cache:ttl-secs:-1",
        "metadata-cache:stat-cache-max-size-mb:-1",
        "metadata-cache:type-cache-max-size-mb:-1",
    )


def test_file_cache_and_no_tuning():
    _, p = run(tuning="file-cache", extra_mount_options=["file-cache:max-parallel-downloads:64"])
    spec = p.by_type(PV)[0]["inputs"]["spec"]
    assert spec["mountOptions"] == [
        "file-cache:max-size-mb:-1",
        "file-cache:cache-file-for-range-read:true",
        "file-cache:enable-parallel-downloads:true",
        *g.TUNING_MOUNT_OPTIONS["serving"][2:],
        "file-cache:max-parallel-downloads:64",
    ]
    assert spec["csi"]["volumeAttributes"] == {"skipCSIBucketAccessCheck": "true"}
    _, p = run(tuning="none")
    spec = p.by_type(PV)[0]["inputs"]["spec"]
    assert "mountOptions" not in spec and "volumeAttributes" not in spec["csi"]


# -- tuning by the cluster's GKE version -------------------------------------------------------

GKE_1_33 = "1.33.4-gke.1172000"
REFUSES = "gcsfuse refuses options it does not know, so every mount would fail"


def reader_pv(p: Plan) -> dict[str, Any]:
    return by_namespace(p, PV)["inference"]["inputs"]["spec"]


def test_every_tuning_option_is_in_the_version_table():
    """An option a tuning writes without a row would reach a cluster too old for it."""
    for tuning, options in g.TUNING_MOUNT_OPTIONS.items():
        for option in options:
            assert gopts.known(option) is not None, (tuning, option)
    for tuning, attributes in g.TUNING_ATTRIBUTES.items():
        for name in attributes:
            assert gopts.attribute(name) or name in gopts.UNGATED_ATTRIBUTES, (tuning, name)


@pytest.mark.parametrize(
    ("version", "firsts", "has"),
    [
        ("1.34.0-gke.2011000", ("1.34.0-gke.2011000",), True),
        ("1.34.0-gke.2010999", ("1.34.0-gke.2011000",), False),
        ("1.35.0-gke.1000", ("1.34.0-gke.2011000",), True),
        (GKE_1_33, ("1.34.0-gke.2011000",), False),
        ("1.29.6-gke.1254000", ("1.29.6-gke.1254000", "1.30.2-gke.1394000"), True),
        ("1.29.6-gke.1253999", ("1.29.6-gke.1254000", "1.30.2-gke.1394000"), False),
        ("1.30.1-gke.9999999", ("1.29.6-gke.1254000", "1.30.2-gke.1394000"), False),
        ("1.30.2-gke.1394000", ("1.29.6-gke.1254000", "1.30.2-gke.1394000"), True),
        ("1.31.0-gke.1", ("1.29.6-gke.1254000", "1.30.2-gke.1394000"), True),
        ("1.28.15-gke.1", ("1.29.6-gke.1254000", "1.30.2-gke.1394000"), False),
    ],
)
def test_a_gke_version_ships_what_first_shipped_on_its_minor(version, firsts, has):
    parsed = gke_version(version)
    assert parsed is not None and ships(parsed, firsts) is has


def test_default_tuning_leaves_out_what_the_clusters_gke_lacks_and_warns():
    _, p = run(invokes=cluster_answer(masterVersion=GKE_1_33))
    spec = reader_pv(p)
    assert spec["mountOptions"] == list(g.TUNING_MOUNT_OPTIONS["serving"][1:])
    assert spec["csi"]["volumeAttributes"] == g.TUNING_ATTRIBUTES["serving"]
    assert [d["message"] for d in p.diagnostics if d["severity"] == "warning"] == [
        "llama: tuning 'serving' (the default) leaves out read:enable-buffered-read:true "
        "(needs GKE 1.34.0-gke.2011000 or later): cluster 'ml-gke' runs GKE "
        f"{GKE_1_33}, and {REFUSES}"
    ]


def test_default_tuning_on_a_recent_gke_is_whole_and_quiet():
    _, p = run(invokes=cluster_answer(masterVersion="1.34.0-gke.2011000"))
    assert reader_pv(p)["mountOptions"] == list(g.TUNING_MOUNT_OPTIONS["serving"])
    assert not [d for d in p.diagnostics if d["severity"] == "warning"]


def test_default_tuning_on_an_unknown_version_leaves_out_every_gated_option():
    _, p = run(invokes=cluster_answer(masterVersion=""))
    spec = reader_pv(p)
    assert "mountOptions" not in spec
    assert spec["csi"]["volumeAttributes"] == {"skipCSIBucketAccessCheck": "true"}
    (warning,) = [d["message"] for d in p.diagnostics if d["severity"] == "warning"]
    assert warning.startswith(
        "llama: tuning 'serving' (the default) leaves out read:enable-buffered-read:true "
        "(needs GKE 1.34.0-gke.2011000 or later); read_ahead_kb=131072 (needs GKE "
        "1.32.2-gke.1297001 or later); metadata-cache:ttl-secs:-1 (needs GKE "
        "1.27.12-gke.1190000, 1.28.8-gke.1175000, 1.29.3-gke.1093000 or later); "
    )
    assert warning.endswith(
        "gcsfuseMetadataPrefetchOnMount (needs GKE 1.32.1-gke.1357001 or later): cluster "
        "'ml-gke' runs GKE of an unknown version (give the cluster's master_version), and "
        f"{REFUSES}"
    )


def test_a_version_still_an_output_is_unknown():
    """Facts a program gives with the version as an Output: the preview cannot read it, so
    the default tuning keeps no version-gated option (and says so)."""
    import pulumi

    from pulumi_modelstore.gcp import GkeCluster
    from pulumi_modelstore.gcp.cluster import GkeClusterFacts

    def program() -> None:
        facts = GkeClusterFacts(
            name=CLUSTER,
            project=PROJECT,
            project_number=NUMBER,
            location="us-central1",
            region="us-central1",
            workload_pool=f"{PROJECT}.svc.id.goog",
            gcs_fuse_csi=True,
            pd_csi=True,
            autopilot=False,
            node_pool_metadata_modes={"gpu": "GKE_METADATA"},
            master_version=pulumi.Output.from_input("1.35.0-gke.1000"),  # type: ignore[arg-type]
        )
        scope = GkeCluster(
            CLUSTER, {"cluster_name": CLUSTER, "location": "us-central1"}, facts=facts
        )
        GcsFuseModelStore("llama", {"cluster": scope, "readers": ["inference"]})

    p = plan(program, config=CONFIG)
    assert "mountOptions" not in reader_pv(p)
    (warning,) = [d["message"] for d in p.diagnostics if d["severity"] == "warning"]
    assert "cluster 'ml-gke' runs GKE of an unknown version" in warning


VERSION_REFUSALS = [
    (
        {"tuning": "serving"},
        GKE_1_33,
        "llama: tuning must be a tuning whose every option the cluster's GKE ships: "
        "read:enable-buffered-read:true needs GKE 1.34.0-gke.2011000 or later and cluster "
        f"'ml-gke' runs GKE {GKE_1_33} ({REFUSES}); leave tuning unset to get the options the "
        "cluster has, got 'serving'",
    ),
    (
        {"tuning": "file-cache"},
        "1.29.5-gke.1100000",
        "llama: tuning must be a tuning whose every option the cluster's GKE ships: "
        "file-cache:enable-parallel-downloads:true needs GKE 1.29.6-gke.1254000, "
        "1.30.2-gke.1394000 or later and cluster 'ml-gke' runs GKE 1.29.5-gke.1100000 "
        f"({REFUSES}); leave tuning unset to get the options the cluster has, got "
        "'file-cache'",
    ),
    (
        {"tuning": "none", "extra_mount_options": ["read:enable-buffered-read:true"]},
        GKE_1_33,
        "llama: extra_mount_options must be an option the cluster's GKE ships: "
        "read:enable-buffered-read needs GKE 1.34.0-gke.2011000 or later and cluster 'ml-gke' "
        f"runs GKE {GKE_1_33} ({REFUSES}), got 'read:enable-buffered-read:true'",
    ),
    (
        {"tuning": "none", "extra_mount_options": ["--enable-buffered-read"]},
        GKE_1_33,
        "llama: extra_mount_options must be an option the cluster's GKE ships: "
        "read:enable-buffered-read needs GKE 1.34.0-gke.2011000 or later and cluster 'ml-gke' "
        f"runs GKE {GKE_1_33} ({REFUSES}), got '--enable-buffered-read'",
    ),
    (
        {"tuning": "none", "extra_mount_options": ["file-cache:max-size-mb:1024"]},
        "",
        "llama: extra_mount_options must be an option the cluster's GKE ships: "
        "file-cache:max-size-mb needs GKE 1.27.12-gke.1190000, 1.28.8-gke.1175000, "
        "1.29.3-gke.1093000 or later and cluster 'ml-gke' runs GKE of an unknown version (give "
        f"the cluster's master_version) ({REFUSES}), got 'file-cache:max-size-mb:1024'",
    ),
]


@pytest.mark.parametrize(
    ("args", "version", "message"),
    VERSION_REFUSALS,
    ids=["serving-on-1.33", "file-cache-on-1.29.5", "extra-option", "extra-flag", "unknown"],
)
def test_an_option_the_clusters_gke_lacks_is_refused_when_chosen(args, version, message):
    assert_refused(
        gcs(**args), message, config=CONFIG, invokes=cluster_answer(masterVersion=version)
    )


# -- mount_for --------------------------------------------------------------------------------


def test_mount_for_on_standard():
    mounts, _ = run()
    assert mounts["inference"].pod_annotations == {
        "gke-gcsfuse/volumes": "true",
        "gke-gcsfuse/cpu-limit": "0",
        "gke-gcsfuse/ephemeral-storage-limit": "0",
        "gke-gcsfuse/memory-limit": "0",
    }
    assert mounts["inference"].pod_security_context == {}


def test_mount_for_on_autopilot_and_overrides():
    mounts, _ = run(
        invokes=cluster_answer(enableAutopilot=True),
        sidecar_resources={"memory-limit": "8Gi", "memory-request": "8Gi"},
    )
    assert mounts["inference"].pod_annotations == {
        "gke-gcsfuse/volumes": "true",
        "gke-gcsfuse/cpu-limit": "2",
        "gke-gcsfuse/ephemeral-storage-limit": "10Gi",
        "gke-gcsfuse/memory-limit": "8Gi",
        "gke-gcsfuse/memory-request": "8Gi",
    }


def test_custom_cache_volume_wires_readers_pods():
    cache = {
        "ephemeral": {
            "volumeClaimTemplate": {
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "hyperdisk-balanced",
                    "resources": {"requests": {"storage": "200Gi"}},
                }
            }
        }
    }
    mounts, _ = run(
        writers=["loader"],
        tuning="file-cache",
        cache_volume=cache,
        extra_mount_options=["file-cache:max-size-mb:204800"],
    )
    reader = mounts["inference"]
    assert reader.volumes[-1] == {"name": "gke-gcsfuse-cache", **cache}
    assert [m["name"] for m in reader.volume_mounts] == ["llama", "hf-home"]  # the sidecar's
    assert reader.pod_security_context == {"fsGroup": 65534}
    pod = reader.patch_pod_spec({"containers": [{"name": "vllm"}], "securityContext": {"a": 1}})
    assert pod["securityContext"] == {"a": 1, "fsGroup": 65534}
    assert "gke-gcsfuse-cache" in [vol["name"] for vol in pod["volumes"]]
    # Writers get no tuning, so no file cache: no cache volume either.
    assert mounts["loader"].volumes == [mounts["loader"].volume]
    assert mounts["loader"].pod_security_context == {}


def test_cache_volume_in_memory_with_a_group_of_the_pods_own():
    mounts, _ = run(
        tuning="file-cache",
        cache_volume={"emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
        cache_fs_group=3003,
    )
    assert mounts["inference"].volumes[-1] == {
        "name": "gke-gcsfuse-cache",
        "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"},
    }
    assert mounts["inference"].pod_security_context == {"fsGroup": 3003}


def test_cache_volume_with_a_managed_profile_or_file_cache_flags():
    cache = {"persistentVolumeClaim": {"claimName": "gcsfuse-cache"}}
    GcsFuseModelStore.validate(
        "llama",
        {
            "cluster_name": CLUSTER,
            "location": "us-central1",
            "readers": ["inference"],
            "managed_profile": "serving",
            "cache_volume": cache,
        },
    )
    GcsFuseModelStore.validate(
        "llama",
        {
            "cluster_name": CLUSTER,
            "location": "us-central1",
            "readers": ["inference"],
            "cache_volume": cache,
            "extra_mount_options": ["file-cache-max-size-mb=-1"],
        },
    )


# -- preflight --------------------------------------------------------------------------------


PREFLIGHT = [
    (
        {"addonsConfigs": [{"gcsFuseCsiDriverConfigs": [{"enabled": False}]}]},
        "llama: cluster_name must be a cluster with the GCS FUSE CSI driver add-on enabled "
        "(addons_config.gcs_fuse_csi_driver_config.enabled; see gcp.cluster_settings), got "
        "'ml-gke'",
    ),
    (
        {"workloadIdentityConfigs": []},
        "llama: cluster_name must be a cluster with workload identity (workload pool "
        "acme-ml.svc.id.goog; see gcp.cluster_settings), got 'ml-gke'",
    ),
    (
        {
            "nodePools": [
                {"name": "gpu", "nodeConfigs": [{"workloadMetadataConfigs": [{"mode": "GCE"}]}]}
            ]
        },
        "llama: cluster_name must be a cluster whose node pools run the GKE metadata server "
        "(workload_metadata_config.mode GKE_METADATA; not on: gpu), got 'ml-gke'",
    ),
]


@pytest.mark.parametrize(("changes", "message"), PREFLIGHT)
def test_preflight_failures(changes, message):
    assert_refused(gcs(), message, config=CONFIG, invokes=cluster_answer(**changes))


def test_autopilot_refuses_unlimited_sidecar():
    with pytest.raises(PlanError) as err:
        plan(
            gcs(sidecar_resources={"cpu-limit": "0"}),
            config=CONFIG,
            invokes=cluster_answer(enableAutopilot=True),
        )
    assert str(err.value) == (
        "llama: sidecar_resources must be explicit quantities on an Autopilot cluster (it "
        "refuses '0', which removes a limit on Standard clusters only), got {'cpu-limit': '0'}"
    )


@pytest.mark.parametrize(
    ("autopilot", "resources", "shown"),
    [
        (True, {"memory-request": "8Gi"}, {"memory-request": "8Gi", "memory-limit": "4Gi"}),
        (
            False,
            {"cpu-request": "2", "cpu-limit": "500m"},
            {"cpu-request": "2", "cpu-limit": "500m"},
        ),
    ],
    ids=["over-autopilot-default", "over-own-limit"],
)
def test_a_sidecar_request_over_its_limit_is_refused(autopilot, resources, shown):
    key = next(iter(shown))
    limit = key.replace("-request", "-limit")
    assert_refused(
        gcs(sidecar_resources=resources),
        f"llama: sidecar_resources must be a {key} no larger than {limit} (Kubernetes refuses "
        "a container whose request exceeds its limit; the limit shown includes the store's "
        f"default: raise {limit} with it), got {shown}",
        config=CONFIG,
        invokes=cluster_answer(enableAutopilot=autopilot),
    )


def test_a_sidecar_request_under_a_removed_limit_is_fine():
    mounts, _ = run(sidecar_resources={"memory-request": "64Gi"})  # Standard: limit "0"
    assert mounts["inference"].pod_annotations["gke-gcsfuse/memory-request"] == "64Gi"


def test_region_mismatch_names_both_regions():
    with pytest.raises(PlanError) as err:
        plan(gcs(location="us-central1-a", bucket_region="europe-west4"), config=CONFIG)
    assert str(err.value) == (
        "llama: bucket_region must be the cluster's region us-central1 (cluster ml-gke is in "
        "us-central1-a; every read would cross regions), or set allow_other_region, got "
        "'europe-west4'"
    )


def test_kms_key_in_another_region_is_refused():
    with pytest.raises(PlanError) as err:
        plan(gcs(kms_key_name=KMS_KEY.replace("us-central1", "us-east1")), config=CONFIG)
    assert "kms_key_name must be a Cloud KMS key in the bucket's region us-central1" in str(
        err.value
    )


# -- bad input --------------------------------------------------------------------------------

BUCKET_RULE = gcp_v.BUCKET_NAME_RULE
KMS_RULE = (
    "a Cloud KMS key name (projects/P/locations/L/keyRings/R/cryptoKeys/K, with P a project id "
    "and R and K 1-63 letters, digits, '_' and '-')"
)
DROPPED = (
    "a gcsfuse flag the CSI driver passes on (it drops log-file, log-format, cache-dir, "
    "temp-dir, config-file, foreground, key-file, token-url, reuse-token-from-url, "
    "prometheus-port, kernel-params-file, file-system:kernel-params-file, o with only a "
    "warning, and rewrites app-name)"
)
BAD = [
    ({"bucket_name": "ab"}, f"bucket_name must be {BUCKET_RULE}, got 'ab'"),
    ({"bucket_name": "Models"}, f"bucket_name must be {BUCKET_RULE}, got 'Models'"),
    ({"bucket_name": "goog-models"}, f"bucket_name must be {BUCKET_RULE}, got 'goog-models'"),
    ({"bucket_name": "my-google-x"}, f"bucket_name must be {BUCKET_RULE}, got 'my-google-x'"),
    ({"bucket_name": "192.168.5.4"}, f"bucket_name must be {BUCKET_RULE}, got '192.168.5.4'"),
    ({"bucket_name": "-models"}, f"bucket_name must be {BUCKET_RULE}, got '-models'"),
    ({"bucket_name": "a" * 64}, f"bucket_name must be {BUCKET_RULE}, got '{'a' * 64}'"),
    (
        {"prefix": "/llama"},
        "prefix must be a folder of the bucket as a relative path without a leading '/' (e.g. "
        "'llama-3-8b'), without '//', '..', ',' or spaces, got '/llama'",
    ),
    ({"tuning": "fast"}, "tuning must be one of serving, file-cache, none, got 'fast'"),
    (
        {"identity": "gsa"},
        "identity must be one of direct, google-service-account, got 'gsa'",
    ),
    *[
        (
            {"extra_mount_options": [option]},
            f"extra_mount_options must be {DROPPED}, got '{option}'",
        )
        for option in ("log-file=/tmp/x", "o=noexec", "file-system:kernel-params-file:/x")
    ],
    (
        {"extra_mount_options": ["only-dir=x"]},
        "extra_mount_options must be a gcsfuse flag the store does not set itself (only-dir "
        "follows prefix, ro follows readers), got 'only-dir=x'",
    ),
    (
        {"extra_mount_options": ["file-cache:max-size-mb:lots"]},
        "extra_mount_options must be file-cache:max-size-mb set to an integer of at least -1, "
        "got 'file-cache:max-size-mb:lots'",
    ),
    (
        {"extra_mount_options": ["--file-cache-max-size-mb=-2"]},
        "extra_mount_options must be file-cache:max-size-mb set to an integer of at least -1, "
        "got '--file-cache-max-size-mb=-2'",
    ),
    (
        {"extra_mount_options": ["read:enable-buffered-read:yes"]},
        "extra_mount_options must be read:enable-buffered-read set to true or false, got "
        "'read:enable-buffered-read:yes'",
    ),
    (
        {"extra_mount_options": ["read_ahead_kb=-1"]},
        "extra_mount_options must be read_ahead_kb set to an integer of at least 0, got "
        "'read_ahead_kb=-1'",
    ),
    (
        {"extra_mount_options": ["metadata-cache:ttl-secs:9223372037"]},
        "extra_mount_options must be metadata-cache:ttl-secs set to an integer from -1 to "
        "9223372036, got 'metadata-cache:ttl-secs:9223372037'",
    ),
    (
        {"extra_mount_options": ["stat-cache-max-size-mb=1.5"]},
        "extra_mount_options must be metadata-cache:stat-cache-max-size-mb set to an integer "
        "from -1 to 17592186044415, got 'stat-cache-max-size-mb=1.5'",
    ),
    (
        {"extra_mount_options": ["file-cache:max-parallel-downloads:-5"]},
        "extra_mount_options must be file-cache:max-parallel-downloads set to an integer of at "
        "least -1, got 'file-cache:max-parallel-downloads:-5'",
    ),
    ({"project": "acme"}, f"project must be {gcp_v.PROJECT_ID_RULE}, got 'acme'"),
    (
        {"cluster_name": "ML-gke"},
        f"cluster_name must be {gcp_v.CLUSTER_NAME_RULE}, got 'ML-gke'",
    ),
    ({"location": "us-central"}, f"location must be {gcp_v.LOCATION_RULE}, got 'us-central'"),
    (
        {"storage_class_name": "gcsfusecsi-serving"},
        "storage_class_name must be a name not starting with gcsfusecsi- (GKE manages those "
        "classes), got 'gcsfusecsi-serving'",
    ),
    (
        {"soft_delete_retention_seconds": 3600},
        "soft_delete_retention_seconds must be 0 (off) or 604800 to 7776000 seconds (7 to 90 "
        "days), got 3600",
    ),
    (
        {"kms_key_name": "weights"},
        f"kms_key_name must be {KMS_RULE}, got 'weights'",
    ),
    (
        {"kms_key_name": KMS_KEY.replace("models", "my models")},
        f"kms_key_name must be {KMS_RULE}, got '{KMS_KEY.replace('models', 'my models')}'",
    ),
    (
        {"kms_key_name": KMS_KEY.replace("acme-kms", "Acme")},
        f"kms_key_name must be {KMS_RULE}, got '{KMS_KEY.replace('acme-kms', 'Acme')}'",
    ),
    (
        {"bucket_name": "acme-models", "hierarchical_namespace": True},
        "hierarchical_namespace must be unset when bucket_name is given (the store leaves it "
        "alone), got true",
    ),
    *[
        ({"bucket_region": region}, f"bucket_region must be {g.REGION_RULE}, got '{region}'")
        for region in ("US", "nam4", "us-central1-a")
    ],
    (
        {"resource_labels": {"Team": "ml"}},
        "resource_labels must be keys that are GCP label keys (1-63 lowercase letters, digits, "
        "'_' and '-', starting with a letter), got 'Team'",
    ),
    (
        {"resource_labels": {"team": "ML"}},
        "resource_labels must be values that are GCP label values (at most 63 lowercase "
        "letters, digits, '_' and '-'), got 'ML'",
    ),
    (
        {"sidecar_resources": {"cpu": "1"}},
        f"sidecar_resources must be keys among {', '.join(g.SIDECAR_KEYS)}, got 'cpu'",
    ),
    *[
        (
            {"sidecar_resources": {key: value}},
            "sidecar_resources must be Kubernetes quantities (e.g. '2', '500m', '4Gi', '0'), got "
            f"'{value}'",
        )
        for key, value in (("memory-limit", "-1Gi"), ("cpu-limit", "lots"))
    ],
    (
        {"cache_volume": {"emptyDir": "yes"}, "tuning": "file-cache"},
        "cache_volume must be one volume source such as {'emptyDir': {...}}, {'ephemeral': "
        "{...}} or {'persistentVolumeClaim': {...}}, without a name (it becomes the pod volume "
        "gke-gcsfuse-cache), "
        "got {'emptyDir': 'yes'}",
    ),
    (
        {"cache_volume": {"emptyDir": {}, "name": "cache"}, "tuning": "file-cache"},
        "cache_volume must be one volume source such as {'emptyDir': {...}}, {'ephemeral': "
        "{...}} or {'persistentVolumeClaim': {...}}, without a name (it becomes the pod volume "
        "gke-gcsfuse-cache), "
        "got {'emptyDir': {}, 'name': 'cache'}",
    ),
    (
        {"cache_volume": {"emptyDir": {"sizeLimit": "lots"}}, "tuning": "file-cache"},
        f"cache_volume must be {SIZE_RULE}, got 'lots'",
    ),
    (
        {"cache_volume": {"emptyDir": {"medium": "Memory"}}},
        "cache_volume must be unset while the file cache is off (tuning is 'serving': use "
        "tuning 'file-cache', a file-cache:max-size-mb in extra_mount_options, or a "
        "managed_profile), got {'emptyDir': {'medium': 'Memory'}}",
    ),
    (
        {
            "cache_volume": {"emptyDir": {"medium": "Memory"}},
            "tuning": "none",
            "extra_mount_options": ["file-cache:max-size-mb:0"],
        },
        "cache_volume must be unset while the file cache is off (tuning is 'none': use "
        "tuning 'file-cache', a file-cache:max-size-mb in extra_mount_options, or a "
        "managed_profile), got {'emptyDir': {'medium': 'Memory'}}",
    ),
    (
        {
            "cache_volume": {"emptyDir": {"sizeLimit": "10Gi"}},
            "tuning": "file-cache",
            "extra_mount_options": ["file-cache:max-size-mb:20480"],
        },
        "extra_mount_options must be a file cache no larger than cache_volume (10240 MiB), or "
        "-1 to fill it, got 'file-cache:max-size-mb:20480'",
    ),
    (
        {
            "cache_volume": {
                "ephemeral": {
                    "volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}
                }
            },
            "extra_mount_options": ["--file-cache-max-size-mb=2048"],
        },
        "extra_mount_options must be a file cache no larger than cache_volume (1024 MiB), or "
        "-1 to fill it, got '--file-cache-max-size-mb=2048'",
    ),
    (
        {"cache_fs_group": 3003},
        "cache_fs_group must be unset unless cache_volume is given, got 3003",
    ),
    (
        {"cache_volume": {"emptyDir": {}}, "tuning": "file-cache", "cache_fs_group": -1},
        "cache_fs_group must be a group id from 0 to 2147483647, got -1",
    ),
    (
        {"claim_name": "gke-gcsfuse-tmp"},
        "claim_name must be a name other than the GCS FUSE sidecar's volumes gke-gcsfuse-cache, "
        "gke-gcsfuse-buffer, gke-gcsfuse-tmp (the claim names the pod volume, and the driver's "
        "webhook adds or takes over a pod volume of those names), got 'gke-gcsfuse-tmp'",
    ),
    (
        {"service_account_name": "Bad_Name"},
        "service_account_name must be a DNS-1123 subdomain (lowercase letters, digits, '-' "
        "and '.', starting and ending with a letter or digit, at most 253 characters), got "
        "'Bad_Name'",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD)
def test_bad_input(args, message):
    with pytest.raises(ModelStoreInputError) as err:
        GcsFuseModelStore.validate(
            "llama",
            {"cluster_name": CLUSTER, "location": "us-central1", "readers": ["inference"], **args},
        )
    assert str(err.value) == f"llama: {message}"
    assert_refused(gcs(**args), f"llama: {message}", config=CONFIG)


def test_store_name_must_fit_a_bucket_name():
    with pytest.raises(ModelStoreInputError) as err:
        GcsFuseModelStore.validate(
            "google-llama", {"cluster_name": CLUSTER, "location": "us-central1", "readers": ["a"]}
        )
    assert str(err.value) == (
        "google-llama: store name must be a name whose new bucket "
        f"'google-llama-bucket-<7 characters>' is {BUCKET_RULE} (or give bucket_name), got "
        "'google-llama'"
    )
    # An existing bucket frees the store's name from the bucket rules.
    GcsFuseModelStore.validate(
        "google-llama",
        {
            "cluster_name": CLUSTER,
            "location": "us-central1",
            "readers": ["a"],
            "bucket_name": "acme-models",
        },
    )


def test_bad_input_registers_nothing():
    assert_refused(
        gcs(tuning="fast"),
        "llama: tuning must be one of serving, file-cache, none, got 'fast'",
        config=CONFIG,
    )


def test_google_account_ids_are_valid():
    for claim, ns in (("llama", "inference"), ("7b", "a" * 63), ("x" * 63, "batch")):
        account = g.google_account_id(claim, ns)
        assert re.fullmatch(r"[a-z][a-z0-9-]{4,28}[a-z0-9]", account), account


def test_a_managed_profile_names_gkes_class_and_leaves_tuning_to_it():
    _, p = run(
        invokes=cluster_answer(masterVersion="1.35.2-gke.1000000"),
        managed_profile="serving",
        writers=["loader"],
    )
    for state in [*p.by_type(PV), *p.by_type(PVC)]:
        assert state["inputs"]["spec"]["storageClassName"] == "gcsfusecsi-serving"
    for pv in p.by_type(PV):
        csi = pv["inputs"]["spec"]["csi"]
        assert "volumeAttributes" not in csi  # no tuning of the store's own
        assert not [o for o in pv["inputs"]["spec"].get("mountOptions", []) if "cache" in o]


@pytest.mark.parametrize(
    ("args", "invokes", "message"),
    [
        (
            {"managed_profile": "serving"},
            None,
            "llama: managed_profile must be unset on cluster 'ml-gke', whose control plane runs "
            "GKE 1.34.1-gke.1829001 (managed profiles need 1.35.1 or later; use tuning "
            "instead), got 'serving'",
        ),
        (
            {"managed_profile": "serving", "tuning": "file-cache"},
            {"masterVersion": "1.35.2-gke.1000000"},
            "llama: tuning must be unset when managed_profile is set (it is 'serving'), got "
            "'file-cache'",
        ),
        (
            {"managed_profile": "inference"},
            None,
            "llama: managed_profile must be one of serving, training, checkpointing, got "
            "'inference'",
        ),
    ],
    ids=["gke-too-old", "with-tuning", "unknown"],
)
def test_managed_profile_refusals(args, invokes, message):
    assert_refused(gcs(**args), message, config=CONFIG, invokes=cluster_answer(**(invokes or {})))


# -- who may read and write, as Cloud Storage FUSE presents the PVs (tests/fuse_mounts.py) -----

QWEN = {
    "source": "hf://Qwen/Qwen2.5-0.5B-Instruct",
    "revision": "7ae557604adf67be50417f59c2c2f167def9a775",
}
JOB = "kubernetes:batch/v1:Job"


@pytest.mark.parametrize(
    "extra", [[], ["uid=1000", "gid=1000", "dir-mode=755", "file-mode=644"]], ids=["", "extra"]
)
def test_the_seed_writes_the_store_root_and_every_reader_reads_it(extra):
    # gcsfuse shows everything as root's 755/644 unless told; a pod's fsGroup gives it the
    # group and 775/664, unless the PV's own options (extra_mount_options: every PV's) say
    # otherwise. The seed runs as 65532; readers run as any uid.
    _, p = run(model=QWEN, extra_mount_options=extra)
    assert_seed_writes_and_readers_read(p, gcsfuse_view)
