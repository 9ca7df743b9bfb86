"""The EBS cache's ``model`` section: the seed program writes the revision into the seed
volume (manifest and all), the snapshot is cut from it after the Job, replicas restore it and
mount the revision behind the gate; a new revision is created beside the old (no volume or
claim replaced); the loader stays as the advanced form; the refusals."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from pulumi_modelstore.aws import EbsModelCache
from pulumi_modelstore.kube import model_jobs
from pulumi_modelstore.model import seed, verify
from pulumi_modelstore.plan.compare import compare
from pulumi_modelstore.plan.render import to_json
from tests.conftest import assert_refused, plan
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

JOB = "kubernetes:batch/v1:Job"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
SNAPSHOT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
NEW = "5206a32e0bd3067aef1ce90f5528ade7d866253f"
MODEL = {"source": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": SHA}
BASE = {"readers": ["inference"], "volume_size": "100Gi"}
STATEFUL_SET = {"template": {"spec": {"containers": [{"name": "vllm", "image": "vllm"}]}}}


def _planned(**args: Any) -> tuple[Any, dict[str, Any]]:
    found: dict[str, Any] = {}

    def program() -> None:
        cache = EbsModelCache("llama", {**BASE, **args})
        found["cache"] = cache
        found["spec"] = cache.patch_stateful_set_spec(STATEFUL_SET)
        pulumi.export("cache", cache.summary)
        # Resolved: the replicas' volume names the snapshot and the class by their outputs.
        pulumi.export("spec", found["spec"])

    return plan(program, fill=True), found


@pytest.fixture(scope="module")
def v1() -> tuple[Any, dict[str, Any]]:
    return _planned(model=MODEL)


def _named(p: Any, type_: str) -> dict[str, dict[str, Any]]:
    """Resource name -> state, of ``type_``."""
    return {s["urn"].rsplit("::", 1)[1]: s for s in p.states() if s["type"] == type_}


def _seed_job(p: Any) -> dict[str, Any]:
    (job,) = [j for j in p.by_type(JOB) if "-seed" in j["inputs"]["metadata"]["name"]]
    return job


def test_the_seed_program_writes_the_seed_volume_which_is_snapshotted_after_it(v1: Any) -> None:
    p, _ = v1
    ((claim_resource, claim),) = _named(p, PVC).items()
    assert claim_resource == f"llama-seed-volume-{SHA[:12]}"
    assert claim["inputs"]["metadata"]["name"] == f"llama-{SHA[:12]}-seed"
    jobs = _named(p, JOB)
    assert sorted(jobs) == [f"llama-seed-{SHA[:12]}", f"llama-verify-{SHA[:12]}"]
    job = jobs[f"llama-seed-{SHA[:12]}"]
    assert job["inputs"]["metadata"]["name"] == f"llama-seed-{SHA[:12]}"
    assert job["inputs"]["metadata"]["namespace"] == "inference"
    pod = job["inputs"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"][-1].endswith(
        "run_module('pulumi_modelstore.model.seed',run_name='__main__',alter_sys=True)"
    )
    args = container["args"]
    assert args[args.index("--dest") + 1] == model_jobs.STORE_ROOT
    assert args[args.index("--publish") + 1] == "rename"
    assert args[args.index("--source") + 1] == MODEL["source"]
    # The seed volume, read-write at the store's root; the non-root program may write it.
    assert {"name": "model", "persistentVolumeClaim": {"claimName": f"llama-{SHA[:12]}-seed"}} in (
        pod["volumes"]
    )
    assert {"name": "model", "mountPath": model_jobs.STORE_ROOT} in container["volumeMounts"]
    assert pod["securityContext"]["fsGroup"] == model_jobs.RUN_AS
    (config_map,) = p.by_type(CONFIG_MAP)
    assert config_map["urn"] in job["dependencies"] and claim["urn"] in job["dependencies"]
    ((snapshot_resource, snapshot),) = _named(p, SNAPSHOT).items()
    assert snapshot_resource == f"llama-snapshot-{SHA[:12]}"
    assert snapshot["inputs"]["spec"]["source"] == {
        "persistentVolumeClaimName": f"llama-{SHA[:12]}-seed"
    }
    # order: seed-before-snapshot (a snapshot cut while the seed writes holds half a model),
    # and after the seed volume's verification (a failed check cuts no snapshot).
    checked = jobs[f"llama-verify-{SHA[:12]}"]
    assert checked["urn"] in snapshot["dependencies"]
    assert job["urn"] in checked["dependencies"]
    assert snapshot["retainOnDelete"] is True


def test_the_seed_volume_is_verified_read_only_where_replicas_read_it(v1: Any) -> None:
    """Each replica restores a block copy of the seed volume: the verification Job reads that
    volume read-only, the revision at the replicas' mount path, the manifest beside it."""
    p, _ = v1
    (job,) = [j for j in p.by_type(JOB) if "-verify-" in j["inputs"]["metadata"]["name"]]
    assert job["inputs"]["metadata"]["namespace"] == "inference"
    pod = job["inputs"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert {
        "name": "llama",
        "persistentVolumeClaim": {"claimName": f"llama-{SHA[:12]}-seed", "readOnly": True},
    } in pod["volumes"]
    mounts = container["volumeMounts"]
    assert {
        "name": "llama",
        "mountPath": "/mnt/models",
        "subPath": f"revisions/{SHA}",
        "readOnly": True,
    } in mounts
    assert {
        "name": "llama",
        "mountPath": model_jobs.MANIFEST_MOUNT,
        "readOnly": True,
        "subPath": f".modelstore/{SHA}",
    } in mounts
    args = container["args"]
    assert args[args.index("--files") + 1] == "/mnt/models"
    assert args[args.index("--label") + 1] == "llama/inference"
    assert p.outputs["cache"]["modelVerifyJobNames"] == {"inference": f"llama-verify-{SHA[:12]}"}


def test_replicas_restore_the_snapshot_and_mount_the_revision_behind_the_gate(v1: Any) -> None:
    p, _ = v1
    spec = p.outputs["spec"]
    assert "volumeClaimTemplates" not in spec
    pod = spec["template"]["spec"]
    # Each replica's own volume, restored from the revision's snapshot, in the pod template.
    volume = pod["volumes"][0]
    assert volume["name"] == f"llama-{SHA[:12]}"
    claim = volume["ephemeral"]["volumeClaimTemplate"]
    assert claim["spec"]["dataSource"]["name"] == f"llama-{SHA[:12]}"
    (container,) = pod["containers"]
    assert container["volumeMounts"][0] == {
        "name": f"llama-{SHA[:12]}",
        "mountPath": "/mnt/models",
        "readOnly": True,
        "subPath": f"revisions/{SHA}",
    }
    (gate,) = pod["initContainers"]
    assert gate["name"] == model_jobs.GATE_CONTAINER
    # The gate mounts the replica's own volume, the claim template's.
    assert gate["volumeMounts"] == [
        {
            "name": f"llama-{SHA[:12]}",
            "mountPath": model_jobs.MANIFEST_MOUNT,
            "readOnly": True,
            "subPath": f".modelstore/{SHA}",
        }
    ]
    outputs = p.outputs["cache"]
    assert outputs["modelRevision"] == SHA
    assert outputs["modelManifestPath"] == f".modelstore/{SHA}/manifest.json"
    assert outputs["modelSeedJobName"] == outputs["loaderJobName"] == f"llama-seed-{SHA[:12]}"


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
def test_the_seed_job_and_a_replica_pod_pass_the_api_schema(v1: Any, minor: str) -> None:
    p, _ = v1
    check = validator(minor)
    for job in p.by_type(JOB):
        check.validate({"apiVersion": "batch/v1", "kind": "Job", **job["inputs"]})
    pod = p.outputs["spec"]["template"]["spec"]
    check.validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod})


def test_the_seed_jobs_args_seed_for_real_what_replicas_then_verify(v1: Any, tmp_path) -> None:
    """The planned Job's own arguments, run through the seed program with a local source in
    place of the Hub and a directory as the seed volume: the revision is published with its
    manifest, and verified at the paths a replica mounts (the revision's subPath, the
    manifest's directory)."""
    p, _ = v1
    job = _seed_job(p)
    args = list(job["inputs"]["spec"]["template"]["spec"]["containers"][0]["args"])
    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text('{"a": 1}')
    (src / "model.safetensors").write_bytes(b"\0" * 4096)
    volume = tmp_path / "seed-volume"
    volume.mkdir()
    for flag, value in (("--source", f"file://{src}"), ("--dest", str(volume))):
        args[args.index(flag) + 1] = value
    log = tmp_path / "termination-log"
    assert seed.main([*args, "--termination-log", str(log)]) == 0
    assert log.read_text().startswith(f"ok: seeded {SHA}: 2 files")
    # The snapshot holds this volume; each replica's restore is a copy of it.
    files = volume / "revisions" / SHA
    manifest = volume / ".modelstore" / SHA / "manifest.json"
    argv = ["--files", str(files), "--manifest", str(manifest), "--revision", SHA, "--all"]
    assert verify.main([*argv, "--termination-log", str(log)]) == 0
    (files / "model.safetensors").write_bytes(b"\1" + b"\0" * 4095)
    assert verify.main([*argv, "--label", "llama/inference", "--termination-log", str(log)]) == (
        verify.Failure.SHA256
    )
    assert log.read_text() == "FAILED: llama/inference: sha256 mismatch in model.safetensors\n"


def test_a_new_revision_is_created_beside_the_old_and_replaces_no_volume_or_claim(
    v1: Any,
) -> None:
    """Planned against the previous revision's plan (``--compare``): a new seed volume, seed
    Job and snapshot (named after the new revision) are created; the old snapshot is dropped
    from the stack but retained (the EBS snapshot stays), the old seed claim goes with its data
    kept in that snapshot; nothing is replaced, no DATA LOSS."""
    old, _ = v1
    new, _ = _planned(model={**MODEL, "revision": NEW})
    cmp = compare(json.loads(to_json(old)), json.loads(to_json(new)))
    assert not cmp.data_loss and not cmp.blocked
    ops = {(c.op, c.urn.rsplit("::", 1)[1]) for c in cmp.changes if c.op != "same"}
    assert not [name for op, name in ops if op == "replace"], ops
    for type_, name in (
        (PVC, "llama-seed-volume"),
        (JOB, "llama-seed"),
        (JOB, "llama-verify"),
        (SNAPSHOT, "llama-snapshot"),
    ):
        changes = {
            c.urn.rsplit("::", 1)[1]: c
            for c in cmp.changes
            if c.type == type_ and c.urn.rsplit("::", 1)[1].startswith(f"{name}-")
        }
        assert {n: c.op for n, c in changes.items()} == {
            f"{name}-{SHA[:12]}": "delete",
            f"{name}-{NEW[:12]}": "create",
        }, type_
    (gone,) = [c for c in cmp.changes if c.type == SNAPSHOT and c.op == "delete"]
    assert gone.retained == "retainOnDelete"
    (seed_claim,) = [c for c in cmp.changes if c.type == PVC and c.op == "delete"]
    assert seed_claim.retained == (
        f"its data as of VolumeSnapshot inference/llama-{SHA[:12]} (retainOnDelete), cut from it"
    )
    # The replicas' template restores the new snapshot (a new StatefulSet claim template).
    template = new.outputs["cache"]["mounts"]["inference"]["claimTemplate"]
    assert template["spec"]["dataSource"]["name"] == f"llama-{NEW[:12]}"


STS = "kubernetes:apps/v1:StatefulSet"


def _serving(revision: str) -> Any:
    """The cache at ``revision`` and a StatefulSet serving from it, as the example builds it."""

    def program() -> None:
        cache = EbsModelCache("llama", {**BASE, "model": {**MODEL, "revision": revision}})
        labels = {"app": "vllm"}
        spec = cache.patch_stateful_set_spec(
            {
                "serviceName": "vllm",
                "replicas": 3,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "vllm", "image": "vllm"}]},
                },
            }
        )
        k8s.apps.v1.StatefulSet(
            "vllm",
            metadata={"name": "vllm", "namespace": "inference"},
            spec=spec,
            opts=pulumi.ResourceOptions(depends_on=[cache]),
        )

    return plan(program, fill=True)


def test_a_new_revision_rolls_the_stateful_set_instead_of_replacing_it(v1: Any) -> None:
    """A StatefulSet's ``volumeClaimTemplates`` cannot change (the API server forbids updates
    to any spec field but replicas, ordinals, template, updateStrategy, revisionHistoryLimit,
    persistentVolumeClaimRetentionPolicy and minReadySeconds: kubernetes
    ``pkg/apis/apps/validation/validation.go`` ValidateStatefulSetUpdate), so pulumi-kubernetes
    replaces the StatefulSet when they do (``provider/pkg/provider/diff.go`` forceNew): every
    replica deleted before the new ones start. The revision must reach the replicas through the
    pod template alone, which the StatefulSet controller rolls one replica at a time."""
    old, new = _serving(SHA), _serving(NEW)
    cmp = compare(json.loads(to_json(old)), json.loads(to_json(new)))
    (change,) = [c for c in cmp.changes if c.type == STS]
    assert change.op == "update", (change.op, change.forcing)
    assert all(path.startswith("spec.template.") for path in change.paths), change.paths
    # Each replica restores the new revision's snapshot into a volume of its own.
    (sts,) = new.by_type(STS)
    volumes = {vol["name"]: vol for vol in sts["inputs"]["spec"]["template"]["spec"]["volumes"]}
    claim = volumes[f"llama-{NEW[:12]}"]["ephemeral"]["volumeClaimTemplate"]
    assert claim["spec"]["dataSource"] == {
        "apiGroup": "snapshot.storage.k8s.io",
        "kind": "VolumeSnapshot",
        "name": f"llama-{NEW[:12]}",
    }
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]


def test_the_loader_is_the_advanced_form_beside_the_model_section() -> None:
    """A loader container of one's own still seeds the cache as before: no seed program, no
    manifest, no gate."""
    loader = {"image": "python:3.12-slim", "command": ["python", "-c", "print('load')"]}
    p, found = _planned(loader=loader)
    (job,) = p.by_type(JOB)
    assert job["inputs"]["metadata"]["name"] == "llama-loader"
    assert "initContainers" not in found["spec"]["template"]["spec"]
    assert p.outputs["cache"]["modelManifestPath"] is None


def cache(**args: Any) -> Any:
    return lambda: EbsModelCache("llama", {**BASE, **args})


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (
            cache(model=MODEL, loader={"image": "python:3.12-slim"}),
            "llama: model, loader, source_claim_name or source_snapshot_name must be exactly "
            "one of them, got ['model', 'loader']",
        ),
        (
            cache(model=MODEL, model_revision="r2"),
            "llama: model_revision must be unset beside a model section (model.revision names "
            "the revision's objects), got 'r2'",
        ),
        (
            cache(model=MODEL, loader_timeout_minutes=30),
            "llama: loader_timeout_minutes must be unset beside a model section (the seed Job's "
            "own deadline is 240 minutes), got 30",
        ),
        (
            cache(model={**MODEL, "namespace": "loaders"}),
            "llama: model.namespace must be unset or 'inference', the cache's namespace (the "
            "seed volume is snapshotted there, and replicas restore only from a VolumeSnapshot "
            "in their own namespace), got 'loaders'",
        ),
        (
            cache(model={"source": "s3://acme-models/llama", "revision": "v1"}),
            "llama: loader_service_account_name is missing; it must be set for an s3:// model "
            "(s3://acme-models/llama): a service account that may read the bucket (IRSA or Pod "
            "Identity), which the seed Job runs as (the cache makes no identity)",
        ),
        (
            cache(model={"source": "gs://acme-models/llama", "revision": "v1"}),
            "llama: model.source must be a source this store takes (hf://, s3://): gs:// is "
            "refused because the cache's seed Job runs in an EKS cluster as "
            "loader_service_account_name, an AWS identity at most, which reads no Google Cloud "
            "or Azure storage: copy the model to an s3:// bucket or use Hugging Face, got "
            "'gs://acme-models/llama'",
        ),
        (
            cache(model={**MODEL, "revision": "main"}),
            "llama: model.revision must be a commit SHA (40 lowercase hexadecimal characters) "
            "for a Hugging Face source: a branch or tag moves; pin the commit it points to (the "
            "repository's commit history shows it), got 'main'",
        ),
        (
            lambda: EbsModelCache("l" * 52, {**BASE, "model": MODEL}),
            f"{'l' * 52}: model objects' name (<name>-<model.revision slug>) must be a DNS-1123 "
            "label (lowercase letters, digits and '-', starting and ending with a letter or "
            f"digit, at most 63 characters), got '{'l' * 52}-{SHA[:12]}'",
        ),
    ],
    ids=[
        "model-and-loader",
        "model-revision",
        "loader-timeout",
        "namespace",
        "s3-without-account",
        "gs",
        "unpinned",
        "long-name",
    ],
)
def test_bad_model_sections_are_refused_before_anything_registers(program: Any, message: str):
    assert_refused(program, message)


def test_the_seed_claim_and_the_programs_wait_for_a_namespace_the_cache_creates() -> None:
    p, _ = _planned(model=MODEL, create_namespaces=True)
    (namespace,) = p.by_type("kubernetes:core/v1:Namespace")
    for type_ in (PVC, CONFIG_MAP):
        (state,) = p.by_type(type_)
        assert namespace["urn"] in state["dependencies"], type_


def test_an_s3_model_runs_as_the_loader_service_account() -> None:
    p, _ = _planned(
        model={"source": "s3://acme-models/llama", "revision": "v1"},
        loader_service_account_name="llama-s3-reader",
    )
    job = _seed_job(p)
    assert job["inputs"]["spec"]["template"]["spec"]["serviceAccountName"] == "llama-s3-reader"
