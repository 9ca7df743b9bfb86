"""Hyperdisk ML's ``model`` section: a ``gs://`` source populated natively, one revision per
disk (the claim and its data source named after the revision), previous revisions kept by
``previous_revisions``, the deprecated ``source_uri``/``model_revision``, and the refusals."""

from __future__ import annotations

import warnings
from typing import Any

import pulumi
import pytest

from pulumi_modelstore.gcp import HyperdiskMlModelStore
from pulumi_modelstore.kube import model_jobs
from pulumi_modelstore.model import bundle
from tests.conftest import assert_refused, plan
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

PVC = "kubernetes:core/v1:PersistentVolumeClaim"
DATA_SOURCE = "kubernetes:datalayer.gke.io/v1:GCPDataSource"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
JOB = "kubernetes:batch/v1:Job"
BASE = {
    "cluster_name": "prod-gke",
    "location": "us-central1",
    "size_gib": 100,
    "readers": ["inference"],
}
V1 = {"source": "gs://acme/llama/v1", "revision": "v1"}
V2 = {"source": "gs://acme/llama/v2", "revision": "v2"}


def _plan(**args: Any) -> tuple[Any, dict[str, Any]]:
    found: dict[str, Any] = {}

    def program() -> None:
        store = HyperdiskMlModelStore("llama", {**BASE, **args})
        found["mount"] = store.mount_for("inference")
        pulumi.export("store", store.summary)

    return plan(program, fill=True), found


def _named(p: Any, type_: str) -> dict[str, Any]:
    """Resource name -> inputs, of ``type_``."""
    return {
        s["urn"].rsplit("::", 1)[1]: s["newState"]["inputs"]
        for s in p.steps
        if s["newState"]["type"] == type_
    }


@pytest.fixture(scope="module")
def v1() -> tuple[Any, dict[str, Any]]:
    return _plan(model=V1)


@pytest.fixture(scope="module")
def v2() -> tuple[Any, dict[str, Any]]:
    return _plan(model=V2, previous_revisions={"v1": "gs://acme/llama/v1"})


def test_a_gs_model_is_populated_into_a_claim_named_after_its_revision(v1: Any) -> None:
    p, _ = v1
    (claim,) = _named(p, PVC).items()
    assert claim[0] == "llama-pvc-inference-v1"
    assert claim[1]["metadata"]["name"] == "llama-v1"
    ref = claim[1]["spec"]["dataSourceRef"]
    assert ref == {"apiGroup": "datalayer.gke.io", "kind": "GCPDataSource", "name": "llama-v1"}
    assert claim[1]["spec"]["storageClassName"] == "llama-hdml-v1"
    ((name, source),) = _named(p, DATA_SOURCE).items()
    assert name == "llama-source-inference-v1"
    assert source["metadata"]["name"] == "llama-v1"
    # The populator copies the folder's contents: the section's prefix as a folder URI.
    assert source["spec"]["cloudStorage"]["uri"] == "gs://acme/llama/v1/"
    assert list(_named(p, STORAGE_CLASS)) == ["llama-storage-class-v1"]
    # No seed Job (no Job can write the disk): the manifest Job and a verification Job.
    assert sorted(_named(p, JOB)) == ["llama-manifest-v1", "llama-verify-inference-v1"]


def test_readers_mount_the_revisions_claim_at_its_root_behind_the_gate(v1: Any) -> None:
    _, found = v1
    mount = found["mount"]
    (volume,) = [v for v in mount.volumes if "persistentVolumeClaim" in v]
    assert volume["persistentVolumeClaim"] == {"claimName": "llama-v1", "readOnly": True}
    (volume_mount,) = [m for m in mount.volume_mounts if m["name"] == "llama-v1"]
    # One revision per disk, at its root.
    assert "subPath" not in volume_mount
    (gate,) = mount.init_containers
    assert gate["name"] == model_jobs.GATE_CONTAINER
    assert gate["volumeMounts"] == [
        {
            "name": "llama-v1",
            "mountPath": model_jobs.MANIFEST_MOUNT,
            "readOnly": True,
            "subPath": ".modelstore/v1",
        }
    ]


def test_the_manifest_job_writes_into_the_source_before_any_claim_is_populated(v1: Any):
    """The manifest Job runs in the model's namespace as the one account with a writer grant
    on the source bucket, after that grant; every claim (whose appearance starts the
    populator's copy) waits for it."""
    p, _ = v1
    jobs = _named(p, JOB)
    job = jobs["llama-manifest-v1"]
    assert job["metadata"]["namespace"] == "llama-loader"
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"] == ["--source", "gs://acme/llama/v1", "--revision", "v1"]
    assert container["command"] == bundle.command("source_manifest", model_jobs.PROGRAMS_PATH)
    assert pod["serviceAccountName"] == "llama-hdml-loader"
    assert not [v for v in pod["volumes"] if "persistentVolumeClaim" in v]
    states = {s["urn"].rsplit("::", 1)[1]: s["newState"] for s in p.steps}
    deps = {d.rsplit("::", 1)[1] for d in states["llama-manifest-v1"]["dependencies"]}
    assert deps == {
        "llama-manifest-write-llama-loader",
        "llama-manifest-llama-loader",
        "llama-programs-llama-loader",
    }
    grants = {
        name: (inputs["role"], inputs["member"].rsplit("/ns/", 1)[1])
        for name, inputs in _named(p, "gcp:storage/bucketIAMMember:BucketIAMMember").items()
    }
    # The manifest Job's account writes; the populator's accounts only read.
    assert grants == {
        "llama-manifest-write-llama-loader": (
            "roles/storage.objectUser",
            "llama-loader/sa/llama-hdml-loader",
        ),
        "llama-loader-read-inference": (
            "roles/storage.objectViewer",
            "inference/sa/llama-hdml-loader",
        ),
    }
    (claim,) = [s for name, s in states.items() if name.startswith("llama-pvc-")]
    assert states["llama-manifest-v1"]["urn"] in claim["dependencies"]
    assert "prod-gke-ns-llama-loader" in {
        d.rsplit("::", 1)[1] for d in states["llama-manifest-llama-loader"]["dependencies"]
    }


def test_a_verification_job_per_reader_mounts_as_mount_for_does(v1: Any) -> None:
    p, found = v1
    mount = found["mount"]
    job = _named(p, JOB)["llama-verify-inference-v1"]
    assert job["metadata"]["namespace"] == "inference"
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert mount.volume_mount in container["volumeMounts"]
    assert pod["initContainers"] == mount.init_containers
    assert pod.get("serviceAccountName") == mount.service_account_name
    args = container["args"]
    assert args[args.index("--files") + 1] == "/mnt/models"
    assert args[args.index("--label") + 1] == "llama/inference"
    # Its pod waits for the populator's whole transfer before it verifies.
    minutes = model_jobs.SEED_TIMEOUT_MINUTES + model_jobs.VERIFY_TIMEOUT_MINUTES
    assert job["spec"]["activeDeadlineSeconds"] == minutes * 60
    states = {s["urn"].rsplit("::", 1)[1]: s["newState"] for s in p.steps}
    deps = {d.rsplit("::", 1)[1] for d in states["llama-verify-inference-v1"]["dependencies"]}
    assert {"llama-manifest-v1", "llama-pvc-inference-v1"} <= deps
    assert p.outputs["store"]["modelSeedJobName"] == "llama-v1-manifest-v1"
    assert p.outputs["store"]["modelVerifyJobNames"] == {"inference": "llama-v1-verify-v1"}
    assert p.outputs["store"]["modelManifestPath"] == ".modelstore/v1/manifest.json"


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
def test_the_jobs_pass_the_api_schema(v1: Any, minor: str) -> None:
    p, _ = v1
    check = validator(minor)
    for job in p.by_type(JOB):
        check.validate({"apiVersion": "batch/v1", "kind": "Job", **job["inputs"]})


def test_a_previous_revision_is_kept_exactly_as_it_was_planned(v1: Any, v2: Any) -> None:
    old, new = v1[0], v2[0]
    for type_ in (PVC, DATA_SOURCE, STORAGE_CLASS):
        before, after = _named(old, type_), _named(new, type_)
        assert set(after) == {*before, *(n.replace("v1", "v2") for n in before)}, type_
        for name, inputs in before.items():
            assert after[name] == inputs, name
    (volume,) = [v for v in v2[1]["mount"].volumes if "persistentVolumeClaim" in v]
    assert volume["persistentVolumeClaim"]["claimName"] == "llama-v2"


def test_source_uri_and_model_revision_warn_pointing_to_the_model_section() -> None:
    legacy = {**BASE, "source_uri": "gs://acme/llama/", "model_revision": "v1"}
    with pytest.warns(DeprecationWarning) as warned:
        spec = HyperdiskMlModelStore.parse("llama", legacy)
    assert {str(w.message) for w in warned} >= {
        "llama: source_uri is deprecated, use model.source",
        "llama: model_revision is deprecated, use model.revision",
    }
    # Still the store it was: the claim keeps its name.
    assert spec.common.claim_name == "llama"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert HyperdiskMlModelStore.parse("llama", {**BASE, "model": V1}).common.claim_name == (
            "llama-v1"
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"model": V1, "source_uri": "gs://acme/llama/", "model_revision": "v1"},
            "llama: source_uri must be unset beside a model section (model.source is its new "
            "spelling), got 'gs://acme/llama/'\n"
            "llama: model_revision must be unset beside a model section (model.revision is its "
            "new spelling), got 'v1'",
        ),
        (
            {"model": {**V1, "include": ["*.safetensors"]}},
            "llama: model.include must be unset for Hyperdisk ML (the volume populator copies "
            "the whole gs:// folder to every disk: publish only the files to serve there), got "
            "['*.safetensors']",
        ),
        (
            {"model": {**V1, "namespace": "inference"}},
            "llama: model.namespace must be a namespace that is not also a reader of the store "
            "(the manifest Job, the one writer of the source bucket, runs there with its own "
            "account), got 'inference'",
        ),
        (
            {"model": {"source": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": "0" * 40}},
            "llama: model.source must be a source this store takes (gs://): hf:// is refused "
            "because a Hyperdisk ML volume is filled once by the volume populator and read-only "
            "after, so no seed Job can write it: stage the model in a gs:// bucket, got "
            "'hf://meta-llama/Llama-3.1-8B-Instruct'",
        ),
        (
            {"model": {"source": "gs://acme/llama", "revision": "V_1"}},
            "llama: model.revision must be a DNS-1123 label (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters), got 'V_1'",
        ),
        (
            {
                "source_uri": "gs://acme/llama/",
                "model_revision": "v1",
                "previous_revisions": {"v0": "gs://acme/llama/v0"},
            },
            "llama: previous_revisions must be unset without a gs:// model section (source_uri "
            "and model_revision hold one revision), got {'v0': 'gs://acme/llama/v0'}",
        ),
        (
            {"model": V2, "previous_revisions": {"v2": "gs://acme/llama/v2"}},
            "llama: previous_revisions revision must be a revision other than model.revision, "
            "got 'v2'",
        ),
        (
            {"model": V2, "previous_revisions": {"v1": "s3://acme/llama/v1"}},
            "llama: previous_revisions.v1 must be the gs://<bucket>/<path> it was populated "
            "from, got 's3://acme/llama/v1'",
        ),
        (
            {"model": V2, "previous_revisions": {"v0": "gs://acme/l/v0", "v1": "gs://acme/l/v1"}},
            "llama: previous_revisions must be at most 1 revision(s) (model.keep_revisions 2 "
            "counts the current one): drop the oldest, its disks go, got ['v0', 'v1']",
        ),
    ],
    ids=[
        "legacy-beside-model",
        "include",
        "namespace-is-a-reader",
        "hf",
        "revision-not-a-label",
        "previous-without-model",
        "previous-is-current",
        "previous-not-gs",
        "previous-beyond-keep",
    ],
)
def test_refusals(args: dict[str, Any], message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert_refused(lambda: HyperdiskMlModelStore("llama", {**BASE, **args}), message)
