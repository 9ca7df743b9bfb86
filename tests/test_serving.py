"""The serving engine's settings ``mount_for(ns).serving_args(engine)`` offers per backend, the
refusal of an engine it does not know, the KServe helper's InferenceService (validated against
KServe's v0.16.0 CRD and the Kubernetes schema), and the loader profile's trip through the
``mounts`` stack output."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.kube import serving
from pulumi_modelstore.kube.serving import LOADER_PROFILES
from pulumi_modelstore.kube.workload import WorkloadMount
from pulumi_modelstore.program import BACKENDS
from tests.conftest import assert_refused, plan
from tests.test_backend_contract import build
from tests.validators.kube_schema import KUBERNETES_MINORS, validator


def planned_local_store() -> Any:
    """A local store with an ``inference`` reader, as its plan built it."""
    built: list[Any] = []
    plan(lambda: built.append(build("local")))
    return built[0]


STREAMER = ["--load-format", "runai_streamer", "--model-loader-extra-config", '{"concurrency":16}']
EAGER = ["--safetensors-load-strategy", "eager"]

# Backend -> what ``vllm serve`` gets after the model path and served name (kube/serving.py
# says why for each).
VLLM_LOADER = {
    "fsx-lustre": STREAMER,
    "efs": EAGER,
    "mountpoint-s3": STREAMER,
    "gcs-fuse": STREAMER,
    "hyperdisk-ml": [],
    "ebs-snapshot": [],
    "azure-blob": STREAMER,
    "azure-files-nfs": EAGER,
    "nfs": EAGER,
    "local": [],
}


def _mounts(backend: str) -> tuple[Any, dict[str, Any]]:
    """The store ``backend`` builds (the contract suite's) and its ``mounts`` output."""
    stores: dict[str, Any] = {}

    def program() -> None:
        stores["llama"] = build(backend)
        pulumi.export("mounts", stores["llama"].mounts)

    mounts = plan(program).outputs["mounts"]
    return stores["llama"], mounts


def test_the_table_covers_every_backend_and_each_declares_a_known_profile():
    assert sorted(VLLM_LOADER) == sorted(BACKENDS)
    assert sorted(serving.VLLM_LOADER) == sorted(LOADER_PROFILES)
    for cls in BACKENDS.values():
        assert cls.loader_profile in LOADER_PROFILES, cls.__name__


@pytest.mark.parametrize("backend", sorted(VLLM_LOADER))
def test_vllm_gets_the_model_path_the_served_name_and_the_backends_loader(backend):
    store, mounts = _mounts(backend)
    mount = store.mount_for("inference")
    assert mount.serving_args("vllm") == [mount.mount_path, *VLLM_LOADER[backend]]
    assert mount.serving_args("vllm", served_model_name="llama", path="/llama-3-8b/") == [
        f"{mount.mount_path}/llama-3-8b",
        "--served-model-name",
        "llama",
        *VLLM_LOADER[backend],
    ]
    # An application stack rebuilding the mount from the output gets the same settings.
    rebuilt = WorkloadMount.from_output(mounts["inference"])
    assert rebuilt.loader_profile == BACKENDS[backend].loader_profile
    assert rebuilt.serving_args("vllm", served_model_name="llama") == mount.serving_args(
        "vllm", served_model_name="llama"
    )


def test_the_model_path_is_the_mount_path_when_the_mount_has_a_subpath():
    store = planned_local_store()
    mount = store.mount_for("inference", mount_path="/mnt/models", sub_path="revisions/abc")
    assert mount.serving_args("vllm")[0] == "/mnt/models"


def test_a_mounts_output_from_before_the_loader_profile_gives_vllms_defaults():
    _, mounts = _mounts("efs")
    old = {k: v for k, v in mounts["inference"].items() if k != "loaderProfile"}
    mount = WorkloadMount.from_output(old)
    assert mount.loader_profile is None
    assert mount.serving_args("vllm") == [mount.mount_path]


def test_an_unknown_engine_is_refused_naming_the_known_ones():
    _, mounts = _mounts("efs")
    output = mounts["inference"]

    def program() -> None:
        WorkloadMount.from_output(output).serving_args("sglang")

    assert_refused(program, "engine must be one of vllm, got 'sglang'")


ISVC = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "llama"},
    "spec": {
        "predictor": {
            "model": {
                "modelFormat": {"name": "huggingface"},
                "args": ["--max-model-len", "8192"],
                "env": [{"name": "VLLM_LOGGING_LEVEL", "value": "INFO"}],
            },
            "annotations": {"team": "ml"},
        }
    },
}


@pytest.mark.parametrize("backend", sorted(VLLM_LOADER))
def test_the_kserve_helper_wires_the_predictor_as_mount_for_does(backend):
    store, _ = _mounts(backend)
    mount = store.mount_for("inference")
    if mount.claim_template is not None:
        # Each pod's own ephemeral claim: no claim for KServe's pvc:// to name.
        with pytest.raises(ModelStoreInputError) as err:
            mount.patch_inference_service(ISVC, path="llama-3-8b")
        assert str(err.value) == (
            f"storageUri must be a claim of the store; {mount.claim_name} is the claim "
            "template of each pod's own ephemeral volume, which KServe cannot mount, got "
            f"'pvc://{mount.claim_name}'"
        )
        return
    isvc = mount.patch_inference_service(ISVC, path="llama-3-8b")
    predictor = isvc["spec"]["predictor"]
    model = predictor["model"]
    assert isvc["metadata"] == {"name": "llama", "namespace": "inference"}
    assert model["storageUri"] == f"pvc://{mount.claim_name}/llama-3-8b"
    assert model["env"] == [{"name": "VLLM_LOGGING_LEVEL", "value": "INFO"}, *mount.env]
    assert model["volumeMounts"] == mount.extra_volume_mounts
    assert model["args"] == ["--max-model-len", "8192"]
    assert predictor["volumes"] == mount.extra_volumes  # KServe adds the claim's own volume
    assert predictor.get("serviceAccountName") == mount.service_account_name
    assert predictor["annotations"] == {"team": "ml", **mount.pod_annotations}
    assert predictor.get("labels", {}) == mount.pod_labels
    assert predictor.get("securityContext", {}) == mount.pod_security_context
    assert ISVC["metadata"] == {"name": "llama"}  # the input is not changed
    for minor in KUBERNETES_MINORS:
        validator(minor).validate(isvc)  # KServe v0.16.0's CRD


def test_the_kserve_helper_puts_the_model_under_the_mounts_revision():
    store = planned_local_store()
    mount = store.mount_for("inference", sub_path="revisions/abc")
    isvc = mount.patch_inference_service(ISVC, path="/llama/")
    assert isvc["spec"]["predictor"]["model"]["storageUri"] == (
        f"pvc://{mount.claim_name}/revisions/abc/llama"
    )


def test_the_kserve_helper_refuses_another_namespace():
    store, _ = _mounts("local")
    mount = store.mount_for("inference")
    other = {**ISVC, "metadata": {"name": "llama", "namespace": "batch"}}
    with pytest.raises(ValueError) as err:
        mount.patch_inference_service(other)
    assert str(err.value) == (
        "InferenceService metadata.namespace must be 'inference', the namespace of claim "
        f"{mount.claim_name}, got 'batch'"
    )


def test_the_kserve_helper_gates_the_predictor_on_the_pinned_revision():
    """With a ``model`` section the predictor waits in the gate init container (which mounts
    the claim itself, so its volume goes in beside the one KServe adds) and serves the pinned
    revision's directory; the result passes KServe v0.16.0's CRD."""
    sha = "0e9e39f249a16976918f6564b8830bc894c89659"
    built: list[Any] = []
    plan(lambda: built.append(build("local", model={"source": "hf://org/m", "revision": sha})))
    mount = built[0].mount_for("inference")
    isvc = mount.patch_inference_service(ISVC, path="llama")
    predictor = isvc["spec"]["predictor"]
    assert predictor["model"]["storageUri"] == f"pvc://{mount.claim_name}/revisions/{sha}/llama"
    assert [c["name"] for c in predictor["initContainers"]] == ["modelstore-revision-gate"]
    assert predictor["initContainers"] == mount.init_containers
    assert predictor["volumes"] == [mount.volume, *mount.extra_volumes]
    gate_mounts = {m["name"] for c in mount.init_containers for m in c["volumeMounts"]}
    assert gate_mounts <= {v["name"] for v in predictor["volumes"]}
    for minor in KUBERNETES_MINORS:
        validator(minor).validate(isvc)  # KServe v0.16.0's CRD
