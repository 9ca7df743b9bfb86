"""What a user of the runnable examples relies on: the KServe InferenceService on GCS FUSE reads
the store's reader claim with the pod wiring the GKE sidecar needs, and the kind example's model
is written once by a Job through the writer claim and served read-only only after it, and the
vLLM examples run with the loader settings their store gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.kube.serving import VLLM_LOADER
from pulumi_modelstore.plan.engine import Plan
from pulumi_modelstore.program import installed_backends
from tests.conftest import ROOT, all_programs
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
JOB = "kubernetes:batch/v1:Job"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"

# InferenceService fields outside the Kubernetes PodSpec and Container, from KServe's API types
# (kserve/kserve v0.16.0, pkg/apis/serving/v1beta1): InferenceServiceSpec; PredictorSpec's own
# fields (the framework implementations, model, storageUris, workerSpec) and its inline
# ComponentExtensionSpec (component.go); ModelSpec (predictor_model.go) and its inline
# PredictorExtensionSpec (predictor.go). PredictorSpec also inlines KServe's copy of the
# corev1 PodSpec, and PredictorExtensionSpec a corev1.Container: those parts are validated
# strictly against the Kubernetes schema below.
ISVC_SPEC_FIELDS = {"predictor", "explainer", "transformer"}
PREDICTOR_IMPLEMENTATIONS = {
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
    "model",
}
PREDICTOR_KSERVE_FIELDS = PREDICTOR_IMPLEMENTATIONS | {
    "storageUris",
    "workerSpec",
    # ComponentExtensionSpec
    "minReplicas",
    "maxReplicas",
    "scaleTarget",
    "scaleMetric",
    "scaleMetricType",
    "autoScaling",
    "containerConcurrency",
    "timeout",
    "canaryTrafficPercent",
    "logger",
    "batcher",
    "labels",
    "annotations",
    "deploymentStrategy",
}
MODEL_KSERVE_FIELDS = {
    "modelFormat",
    "runtime",
    "storageUri",
    "runtimeVersion",
    "protocolVersion",
    "storage",
}
MODEL_FORMAT_FIELDS = {"name", "version"}
# KServe's default name for the model container (constants.InferenceServiceContainerName).
KSERVE_CONTAINER = "kserve-container"


def _programs_with_inference_services() -> list[tuple[str, Path, str]]:
    return [p for p in all_programs() if "InferenceService" in _sources(p[1])]


def _sources(directory: Path) -> str:
    return "".join(p.read_text() for p in directory.glob("*.py"))


@pytest.mark.parametrize(
    ("pid", "directory", "stack"),
    _programs_with_inference_services(),
    ids=[p[0] for p in _programs_with_inference_services()],
)
def test_every_inference_service_keeps_to_kserves_api(filled_plans, pid, directory, stack):
    """The whole InferenceService validates against KServe's CRD (tests/test_programs.py);
    here the KServe-only fields are also checked against KServe's API types, and the
    predictor's PodSpec and the model's Container fields are validated strictly as the
    Kubernetes PodSpec and Container they are, with the enums KServe's CRD does not carry."""
    planned = filled_plans[pid]  # plan_directory(directory, stack, fill_outputs=True), shared
    services = [o for o in planned.kubernetes_objects() if o["kind"] == "InferenceService"]
    assert services
    for isvc in services:
        assert isvc["apiVersion"] == "serving.kserve.io/v1beta1"
        assert set(isvc) == {"apiVersion", "kind", "metadata", "spec"}
        assert isvc["metadata"]["name"] and isvc["metadata"]["namespace"]
        assert set(isvc["spec"]) <= ISVC_SPEC_FIELDS
        predictor = isvc["spec"]["predictor"]
        assert len(PREDICTOR_IMPLEMENTATIONS & set(predictor)) == 1
        model = predictor["model"]
        assert set(model["modelFormat"]) <= MODEL_FORMAT_FIELDS and model["modelFormat"]["name"]
        container = {k: v for k, v in model.items() if k not in MODEL_KSERVE_FIELDS}
        pod_spec = {k: v for k, v in predictor.items() if k not in PREDICTOR_KSERVE_FIELDS}
        pod_spec["containers"] = [{"name": KSERVE_CONTAINER, **container}]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": isvc["metadata"]["name"],
                "labels": predictor.get("labels", {}),
                "annotations": predictor.get("annotations", {}),
            },
            "spec": pod_spec,
        }
        for minor in KUBERNETES_MINORS:
            validator(minor).validate(pod)
            validator(minor).validate(isvc)


# -- GKE + GCS FUSE + KServe -------------------------------------------------------------------

# The gated Llama's pinned commit, the example's model section.
LLAMA_REVISION = "0e9e39f249a16976918f6564b8830bc894c89659"


@pytest.fixture(scope="module")
def kserve(filled_plans: dict[str, Plan]) -> Plan:
    return filled_plans["examples/gke-gcsfuse-kserve/dev"]


def _claim(p: Plan, namespace: str, name: str) -> dict[str, Any]:
    (claim,) = [
        c["inputs"]
        for c in p.by_type("kubernetes:core/v1:PersistentVolumeClaim")
        if c["inputs"]["metadata"] == {**c["inputs"]["metadata"], "namespace": namespace}
        and c["inputs"]["metadata"]["name"] == name
    ]
    return claim


def test_inference_service_reads_the_stores_reader_claim(kserve):
    (isvc,) = kserve.by_type(ISVC)
    ns = isvc["inputs"]["metadata"]["namespace"]
    uri = isvc["inputs"]["spec"]["predictor"]["model"]["storageUri"]
    claim_name = kserve.outputs["claimNames"][ns]
    # The model section's pinned revision: the folder its seed Job publishes.
    assert uri == f"pvc://{claim_name}/revisions/{LLAMA_REVISION}"
    assert kserve.outputs["storageUri"] == uri
    # The namespace is one of the store's readers: its claim binds a read-only PV.
    claim = _claim(kserve, ns, claim_name)
    assert claim["spec"]["accessModes"] == ["ReadOnlyMany"]
    pvs = {
        pv["inputs"]["metadata"]["name"]: pv["inputs"]
        for pv in kserve.by_type("kubernetes:core/v1:PersistentVolume")
    }
    assert pvs[claim["spec"]["volumeName"]]["spec"]["csi"]["readOnly"] is True
    # Ordered after the store: the claim exists when KServe mounts it.
    (claim_state,) = [
        c
        for c in kserve.by_type("kubernetes:core/v1:PersistentVolumeClaim")
        if c["inputs"]["metadata"]["namespace"] == ns
    ]
    assert claim_state["urn"] in isvc["dependencies"]


def test_predictor_pod_gets_the_gcsfuse_annotations_and_the_stores_service_account(kserve):
    (isvc,) = kserve.by_type(ISVC)
    ns = isvc["inputs"]["metadata"]["namespace"]
    predictor = isvc["inputs"]["spec"]["predictor"]
    # On the predictor (ComponentExtensionSpec.annotations: the component's pod template),
    # where the GKE webhook looks for them.
    annotations = predictor["annotations"]
    assert annotations["gke-gcsfuse/volumes"] == "true"
    assert {k for k in annotations if k.startswith("gke-gcsfuse/")} > {"gke-gcsfuse/volumes"}
    # The service account the store made in this namespace, the one its IAM grant names.
    account = predictor["serviceAccountName"]
    assert account == kserve.outputs["serviceAccountName"]
    accounts = [
        a["inputs"]["metadata"]
        for a in kserve.by_type("kubernetes:core/v1:ServiceAccount")
        if a["inputs"]["metadata"]["namespace"] == ns
    ]
    assert [a["name"] for a in accounts] == [account]
    (grant,) = [
        g["inputs"]
        for g in kserve.by_type("gcp:storage/bucketIAMMember:BucketIAMMember")
        if f"/ns/{ns}/" in g["inputs"]["member"]
    ]
    assert grant["member"].endswith(f"/ns/{ns}/sa/{account}")
    assert grant["role"] == "roles/storage.objectViewer"


def test_predictor_mounts_the_claim_only_in_the_gate_and_only_its_own_volumes(kserve):
    (isvc,) = kserve.by_type(ISVC)
    predictor = isvc["inputs"]["spec"]["predictor"]
    volumes = {v["name"]: v for v in predictor.get("volumes", [])}
    # KServe mounts the claim from storageUri itself into the model container; the claim's
    # own volume is there for the revision gate alone, read-only on the manifest's folder.
    claims = [n for n, v in volumes.items() if "persistentVolumeClaim" in v]
    assert [volumes[n]["persistentVolumeClaim"]["readOnly"] for n in claims] == [True]
    (gate,) = predictor["initContainers"]
    assert [(m["name"], m["subPath"]) for m in gate["volumeMounts"]] == [
        (claims[0], f".modelstore/{LLAMA_REVISION}")
    ]
    for mount in predictor["model"].get("volumeMounts", []):
        assert mount["name"] in volumes and mount["name"] not in claims
    env = {e["name"]: e["value"] for e in predictor["model"]["env"]}
    # The model volume is read-only: Hugging Face libraries stay offline and write elsewhere.
    assert env["HF_HUB_OFFLINE"] == "1"
    assert any(m["mountPath"] == env["HF_HOME"] for m in predictor["model"]["volumeMounts"])


def test_inference_service_runs_as_plain_deployments(kserve):
    """Knative refuses persistentVolumeClaim volumes unless a feature flag is on."""
    (isvc,) = kserve.by_type(ISVC)
    annotations = isvc["inputs"]["metadata"]["annotations"]
    assert annotations["serving.kserve.io/deploymentMode"] == "Standard"


# -- kind: the store's seed Job, then a reader Deployment ----------------------------------------

REVISION = "7ae557604adf67be50417f59c2c2f167def9a775"


@pytest.fixture(scope="module")
def seeded(filled_plans: dict[str, Plan]) -> Plan:
    return filled_plans["examples/local-kind-seeded/dev"]


def _model_volume(pod_spec: dict[str, Any]) -> tuple[dict[str, Any], str]:
    (volume,) = [v for v in pod_spec["volumes"] if "persistentVolumeClaim" in v]
    return volume, volume["name"]


def test_seed_job_writes_through_the_loader_claim_and_the_deployment_reads_the_revision(seeded):
    job = seeded.by_name(f"models-seed-{REVISION[:12]}")["inputs"]
    server = seeded.by_name("server")["inputs"]
    claims = seeded.outputs["claimNames"]
    for obj, writes in ((job, True), (server, False)):
        ns = obj["metadata"]["namespace"]
        pod_spec = obj["spec"]["template"]["spec"]
        volume, name = _model_volume(pod_spec)
        assert volume["persistentVolumeClaim"]["claimName"] == claims[ns]
        assert volume["persistentVolumeClaim"]["readOnly"] is (not writes)
        assert _claim(seeded, ns, claims[ns])["metadata"]["namespace"] == ns
        for container in pod_spec["containers"] + pod_spec.get("initContainers", []):
            (mount,) = [m for m in container["volumeMounts"] if m["name"] == name]
            assert mount["readOnly"] is (not writes)
    assert job["metadata"]["namespace"] == "models-loader" != server["metadata"]["namespace"]
    # The store's Job, unlike the hand-written one it replaced, runs non-root.
    assert job["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    (container,) = server["spec"]["template"]["spec"]["containers"]
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/mnt/models"]
    assert mount["subPath"] == f"revisions/{REVISION}"
    assert container["command"][-1] == seeded.outputs["modelPath"] == "/mnt/models"


def test_deployment_waits_for_the_seed_and_verification_jobs_and_is_gated(seeded):
    server = seeded.by_name("server")
    for job in (f"models-seed-{REVISION[:12]}", f"models-verify-inference-{REVISION[:12]}"):
        state = seeded.by_name(job)
        assert state["urn"] in server["dependencies"]
        # Pulumi awaits the Job (until Complete) unless told to skip: it is not.
        assert state["inputs"]["metadata"].get("annotations", {}).get("pulumi.com/skipAwait") != (
            "true"
        )
    # A pod started later still waits for the whole model: the gate waits for the manifest
    # the seed publishes last.
    (gate,) = server["inputs"]["spec"]["template"]["spec"]["initContainers"]
    (mount,) = gate["volumeMounts"]
    assert mount["subPath"] == f".modelstore/{REVISION}"
    assert f"until [ -f {mount['mountPath']}/manifest.json ]" in gate["command"][-1]


@pytest.mark.parametrize("example", sorted((ROOT / "examples").iterdir()), ids=lambda p: p.name)
def test_every_example_is_a_whole_project_with_a_readme_that_plans_it(example):
    # Runnable Pulumi programs: their own project file, a stack config, a README whose offline
    # plan command is one the CLI accepts for this directory.
    if not example.is_dir() or example.name.startswith((".", "__")):
        return
    assert (example / "Pulumi.yaml").is_file()
    assert list(example.glob("Pulumi.*.yaml")), "a stack config (Pulumi.<stack>.yaml)"
    readme = (example / "README.md").read_text()
    command = f"modelstore plan --cwd examples/{example.name} --stack "
    assert command in readme
    stack = readme.split(command, 1)[1].split("`", 1)[0].split()[0]
    assert (example / f"Pulumi.{stack}.yaml").is_file()


# -- vLLM examples: the loader settings come from the store ------------------------------------

VLLM_IMAGE = "vllm/vllm-openai:"
# Every loader flag serving_args may give, so a hand-written one is noticed too.
LOADER_FLAGS = {a for args in VLLM_LOADER.values() for a in args if a.startswith("--")}
LOADER_FLAGS.add("--safetensors-load-strategy")


def _vllm_containers(plan: Plan) -> list[dict[str, Any]]:
    return [
        c
        for o in plan.kubernetes_objects()
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
        if c["image"].startswith(VLLM_IMAGE)
    ]


def _single_store_vllm_programs() -> list[tuple[str, Path, str]]:
    return [
        p
        for p in all_programs()
        if VLLM_IMAGE in _sources(p[1]) and _sources(p[1]).count("ModelStore(") == 1
    ]


@pytest.mark.parametrize(
    ("pid", "directory", "stack"),
    _single_store_vllm_programs(),
    ids=[p[0] for p in _single_store_vllm_programs()],
)
def test_vllm_examples_take_the_stores_loader_settings(filled_plans, pid, directory, stack):
    """A vLLM Deployment beside one store runs ``vllm serve`` with the model path first and
    exactly the loader flags the store's ``loader_profile`` gives (kube/serving.py), so no
    example keeps its own per-backend choice."""
    planned = filled_plans[pid]
    types = {s["type"].rsplit(":", 1)[-1] for s in planned.states()}
    [store] = [c for c in installed_backends().values() if c.__name__ in types]
    loader = VLLM_LOADER[store.loader_profile]
    containers = _vllm_containers(planned)
    assert containers
    for container in containers:
        args = container["args"]
        assert container.get("command") == ["vllm", "serve"]
        assert not args[0].startswith("-"), f"the model path comes first: {args}"
        assert [a for a in args if a in LOADER_FLAGS] == [a for a in loader if a in LOADER_FLAGS]
        assert args[len(args) - len(loader) :] == loader
