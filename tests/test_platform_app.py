"""The platform and application examples work together as a platform team's stacks would: the
application stack (examples/app-vllm) reads the platform stack's outputs (examples/platform-stores)
by StackReference, and its vLLM pods come out wired exactly as the platform's
``store.mount_for(namespace)`` would wire them."""

from __future__ import annotations

import importlib.util
import json
import runpy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from pulumi_modelstore.plan.engine import PlanError, plan_directory, plan_program
from pulumi_modelstore.plan.project import load_project
from tests.platform_outputs import APP, PLATFORM, REFERENCE, SAVED, platform_outputs_text

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def _vllm_server() -> Any:
    spec = importlib.util.spec_from_file_location("app_vllm_server", APP / "vllm_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _platform_mounts(store: str, namespace: str) -> Any:
    """``store.mount_for(namespace)`` in a test program running the platform example itself,
    with the platform stack's own config."""
    config, secrets = load_project(PLATFORM).stack_config("dev")
    found: dict[str, Any] = {}

    def program() -> None:
        program_globals = runpy.run_path(str(PLATFORM / "__main__.py"), run_name="__main__")
        made = program_globals["stores"][store]
        found["mount"] = made.mount_for(namespace)
        found["backend"] = made.backend_name

    plan_program(program, project="model-platform", stack="dev", config=config)
    assert not secrets
    return found["mount"], found["backend"]


def _app(tmp_path: Path, **config: str) -> Path:
    """A copy of the application example with some of its dev config changed."""
    app = tmp_path / "app-vllm"
    shutil.copytree(APP, app, ignore=shutil.ignore_patterns("__pycache__"))
    path = app / "Pulumi.dev.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"].update({f"app-vllm:{k}": v for k, v in config.items()})
    path.write_text(yaml.safe_dump(document))
    return app


def test_the_saved_platform_outputs_are_what_the_platform_example_exports():
    assert SAVED.read_text(encoding="utf-8") == platform_outputs_text(), (
        f"{SAVED} is stale: refresh it with `python -m tests.platform_outputs`"
    )


LLAMA_REVISION = "0e9e39f249a16976918f6564b8830bc894c89659"
BGE_REVISION = "d4aa6901d3a41ba39fb536a557fa166f842b0e09"


def test_the_platform_exports_per_store_what_a_consumer_needs():
    outputs = json.loads(SAVED.read_text(encoding="utf-8"))
    assert set(outputs["stores"]) == {"llama", "embeddings"}
    llama = outputs["stores"]["llama"]
    # The model's seed Job writes from the store's loader namespace, a consumer too.
    consumers = {"inference", "model-publisher", "llama-loader"}
    assert llama["claimNames"] == dict.fromkeys(consumers, "llama")
    assert llama["serviceAccountName"] == "llama-gcs"
    assert set(llama["mounts"]) == consumers
    assert llama["mounts"]["inference"]["readOnly"] is True
    assert llama["mounts"]["model-publisher"]["readOnly"] is False


@pytest.mark.parametrize(("store", "namespace"), [("llama", "inference"), ("embeddings", "search")])
def test_the_vllm_pod_is_wired_as_mount_for_would_wire_it(tmp_path, store, namespace):
    app = APP if (store, namespace) == ("llama", "inference") else None
    app = app or _app(tmp_path, store=store, namespace=namespace, servedModelName=store)
    dev = yaml.safe_load((app / "Pulumi.dev.yaml").read_text())["config"]
    plan = plan_directory(app, "dev")
    (deployment,) = [s for s in plan.states() if s["type"] == DEPLOYMENT]
    template = deployment["inputs"]["spec"]["template"]
    assert deployment["inputs"]["metadata"]["namespace"] == namespace

    mount, backend = _platform_mounts(store, namespace)
    server = _vllm_server().server_pod_spec(
        serving_args=mount.serving_args("vllm", served_model_name=dev["app-vllm:servedModelName"]),
        accelerator=dev["app-vllm:accelerator"],
    )
    assert template["spec"] == mount.patch_pod_spec(server)
    assert template["metadata"]["annotations"] == mount.pod_annotations
    assert template["metadata"]["labels"] == {**mount.pod_labels, "app": f"vllm-{store}"}
    # What that wiring means for the server: the model read-only where vLLM serves it from,
    # Hugging Face offline with a writable home, GCS FUSE read sequentially, the store's identity.
    (container,) = template["spec"]["containers"]
    assert container["command"] == ["vllm", "serve"]
    assert container["args"][0] == "/mnt/models"
    # The pinned revision, as the platform's model section names it.
    revision = {"llama": LLAMA_REVISION, "embeddings": BGE_REVISION}[store]
    model_mount = {"name": store, "mountPath": "/mnt/models", "readOnly": True}
    assert {**model_mount, "subPath": f"revisions/{revision}"} in container["volumeMounts"]
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in container["env"]
    assert backend == "gcs-fuse"
    assert container["args"][-6:-2] == [  # the streamer, as serving_args gives it for FUSE
        "--load-format",
        "runai_streamer",
        "--model-loader-extra-config",
        '{"concurrency":16}',
    ]
    assert template["spec"]["serviceAccountName"] == f"{store}-gcs"
    assert template["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"


def test_the_application_reads_the_platform_stack_once_and_creates_the_rest():
    plan = plan_directory(APP, "dev")
    reads = [s for s in plan.steps if s["op"] == "read"]
    assert [s["newState"]["type"] for s in reads] == ["pulumi:pulumi:StackReference"]
    assert reads[0]["urn"].endswith(f"::{REFERENCE}")
    assert plan.outputs["serviceAccountName"] == "llama-gcs"


def test_a_missing_saved_output_file_fails_in_one_line_naming_the_reference_and_file(tmp_path):
    app = _app(tmp_path)
    missing = app / "stack-outputs" / SAVED.name
    missing.unlink()
    with pytest.raises(PlanError) as failed:
        plan_directory(app, "dev")
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith(f"stack reference {REFERENCE}: no saved outputs at {missing} ")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"store": "mistral"},
            "app-vllm:store: the platform stack acme/model-platform/dev exports no store "
            "'mistral' (stores: embeddings, llama)",
        ),
        (
            {"namespace": "search"},
            "app-vllm:namespace: store 'llama' of acme/model-platform/dev has no consumer "
            "namespace 'search' (namespaces: inference, llama-loader, model-publisher)",
        ),
        (
            {"namespace": "model-publisher"},
            "app-vllm:namespace: 'model-publisher' writes to store 'llama' of "
            "acme/model-platform/dev: serve from a reader namespace (inference)",
        ),
    ],
)
def test_a_store_or_namespace_the_platform_does_not_export_is_one_line(tmp_path, config, message):
    with pytest.raises(PlanError) as failed:
        plan_directory(_app(tmp_path, **config), "dev")
    # Raised inside an apply: the SDK may prefix the resource whose input it was.
    assert "\n" not in str(failed.value)
    assert str(failed.value).endswith(message)
