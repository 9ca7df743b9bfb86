"""The ``model`` section on every backend: how each takes a source (``model_fill``), the seed
Job as a writer consumer in the loader namespace, a verification Job per reader namespace, the
revision mounted by ``subPath`` behind the gate, and the refusals (before anything registers)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from pulumi_modelstore.kube import model_jobs
from pulumi_modelstore.model import bundle
from pulumi_modelstore.program import BACKENDS
from tests.conftest import assert_refused, plan
from tests.test_backend_contract import NAMES, READERS, build, writers
from tests.test_model_digest import ApiStub, stub_api
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

JOB = "kubernetes:batch/v1:Job"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SA = "kubernetes:core/v1:ServiceAccount"
SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
MODEL = {"source": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": SHA}
SEEDED = [n for n in NAMES if BACKENDS[n].model_fill["hf"].how == "job"]


def test_every_backend_says_how_each_source_gets_in() -> None:
    for name in NAMES:
        cls = BACKENDS[name]
        assert sorted(cls.model_fill) == ["az", "gs", "hf", "s3"], name
        for scheme, fill in cls.model_fill.items():
            assert fill.how in ("job", "native", "refused"), (name, scheme)
            # A native fill the section does not drive yet is refused, never silently skipped.
            taken = fill.how == "job" or (fill.how == "native" and fill.wired)
            assert (fill.refusal is None) == taken, (name, scheme)
        assert (cls.model_fill["hf"].how == "job") is cls.takes_writers, name
    # Filled once and read-only after (no writers): the volume populator, the EBS loader.
    assert [n for n in NAMES if n not in ("ebs-snapshot", "hyperdisk-ml")] == SEEDED


@pytest.fixture(scope="module", params=SEEDED)
def planned(request: Any) -> Any:
    backend = request.param
    stores: dict[str, Any] = {}

    def program() -> None:
        stores["llama"] = build(backend, model=MODEL)

    return backend, plan(program, fill=True), stores["llama"]


def test_the_seed_job_writes_as_a_writer_consumer_of_the_loader_namespace(planned: Any) -> None:
    _, p, store = planned
    (seed,) = [
        j["inputs"]
        for j in p.by_type(JOB)
        if j["inputs"]["metadata"]["namespace"] == "llama-loader"
    ]
    assert seed["metadata"]["name"] == f"llama-seed-{SHA[:12]}"
    pod = seed["spec"]["template"]["spec"]
    (claim,) = [v for v in pod["volumes"] if "persistentVolumeClaim" in v]
    assert claim["persistentVolumeClaim"] == {"claimName": "llama", "readOnly": False}
    loader = store.mount_for("llama-loader")
    assert loader.read_only is False and not loader.init_containers
    # The loader's consumer account; where the store gives its consumers none, the seed's own
    # (it records the manifest's digest through the API: never as the namespace's default).
    assert pod.get("serviceAccountName") == (loader.service_account_name or "llama-seed")
    args = pod["containers"][0]["args"]
    assert args[args.index("--publish") + 1] == type(store).model_publish
    assert args[args.index("--in-use") + 1] == SHA
    accounts = {a["inputs"]["metadata"]["namespace"] for a in p.by_type(SA)}
    if loader.service_account_name:  # an identity backend: the loader has its own account
        assert "llama-loader" in accounts


def test_a_verification_job_per_reader_mounts_as_mount_for_does(planned: Any) -> None:
    backend, p, store = planned
    jobs = {j["inputs"]["metadata"]["namespace"]: j["inputs"] for j in p.by_type(JOB)}
    assert sorted(jobs) == sorted([*READERS, "llama-loader"])
    for ns in READERS:
        mount = store.mount_for(ns)
        assert mount.volume_mount["subPath"] == f"revisions/{SHA}"
        assert [c["name"] for c in mount.init_containers] == [model_jobs.GATE_CONTAINER]
        pod = jobs[ns]["spec"]["template"]["spec"]
        assert pod.get("serviceAccountName") == mount.service_account_name
        assert mount.volume_mount in pod["containers"][0]["volumeMounts"]
        assert pod["initContainers"] == mount.init_containers
        args = pod["containers"][0]["args"]
        assert args[args.index("--label") + 1] == f"llama/{ns}"
    for ns in writers(backend):
        assert "subPath" not in store.mount_for(ns).volume_mount
    assert store.mount_for(READERS[0], sub_path="/sub/").volume_mount["subPath"] == (
        f"revisions/{SHA}/sub"
    )


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
def test_jobs_config_maps_and_patched_pods_pass_the_api_schema(planned: Any, minor: str) -> None:
    _, p, store = planned
    check = validator(minor)
    for kind, type_ in (("Job", JOB), ("ConfigMap", CONFIG_MAP)):
        for inputs in created(p, type_):
            check.validate(
                {"apiVersion": "batch/v1" if kind == "Job" else "v1", "kind": kind, **inputs}
            )
    spec = store.mount_for(READERS[0]).patch_pod_spec(
        {"containers": [{"name": "vllm", "image": "vllm"}]}
    )
    check.validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


def created(p: Any, type_: str) -> list[dict[str, Any]]:
    """The inputs of the objects of ``type_`` the plan creates (not those it reads, such as
    the manifest digest's ConfigMap: kube/model_digest.py)."""
    return [
        s["newState"]["inputs"]
        for s in p.steps
        if s["newState"]["type"] == type_ and s["op"] != "read"
    ]


def local(**model: Any) -> Any:
    return lambda: build("local", model={**MODEL, **model})


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (
            local(revision="main"),
            (
                "llama: model.revision must be a commit SHA (40 lowercase hexadecimal characters) "
                "for a Hugging Face source: a branch or tag moves; pin the commit it points to "
                "(the repository's commit history shows it), got 'main'"
            ),
        ),
        (
            local(keep_revisions=1),
            (
                "llama: model.keep_revisions must be a whole number of at least 2 (the pinned "
                "revision and the one readers may still mount during a rollout), got 1"
            ),
        ),
        (
            local(source="s3://bucket/llama", revision="v1"),
            (
                "llama: model.source must be a source this store takes (hf://): s3:// is refused "
                "because the seed Job of a store with no cloud identity reads no AWS bucket: "
                "stage the model on Hugging Face or copy it in as a writer, got "
                "'s3://bucket/llama'"
            ),
        ),
        (
            local(namespace="Bad_NS"),
            (
                "llama: model.namespace must be a DNS-1123 label (lowercase letters, digits and "
                "'-', starting and ending with a letter or digit, at most 63 characters), got "
                "'Bad_NS'"
            ),
        ),
        (
            lambda: build("local", model={**MODEL, "hf_token": "x"}),
            (
                "llama: model.hf_token must be model.token (a Pulumi secret) or a reference to a "
                "Secret (model.token_secret: {name, key}), never a literal token, got "
                "'<redacted>'\nllama: model field name must be one of source, revision, include, "
                "token, token_secret, keep_revisions, namespace, verify, image, manifest_sha256, "
                "source_resource_group, got 'hf_token'"
            ),
        ),
        (
            lambda: build("local", labels={"t": "hf_" + "a" * 34}, model=MODEL),
            (
                "llama: labels.t must be model.token (a Pulumi secret) or a reference to a "
                "Secret (model.token_secret: {name, key}), never a literal token, got "
                "'<redacted>'"
            ),
        ),
        (
            lambda: build("hyperdisk-ml", model=MODEL),
            (
                "llama: model.source must be a source this store takes (gs://): hf:// is "
                "refused because a Hyperdisk ML volume is filled once by the volume populator and "
                "read-only after, so no seed Job can write it: stage the model in a gs:// bucket, "
                "got 'hf://meta-llama/Llama-3.1-8B-Instruct'\n"
                # The example's deprecated fields beside the section: refused too.
                "llama: source_uri must be unset beside a model section (model.source is its new "
                "spelling), got 'gs://acme-models/llama/'\n"
                "llama: model_revision must be unset beside a model section (model.revision is its "
                "new spelling), got 'v1'"
            ),
        ),
        (
            lambda: build("fsx-lustre", model={"source": "gs://b/llama", "revision": "v1"}),
            (
                "llama: model.source must be a source this store takes (hf://, s3://): gs:// is "
                "refused because the seed Job runs as the store's AWS identity, which cannot read "
                "Google Cloud storage: copy the model to a s3:// bucket first, got 'gs://b/llama'"
            ),
        ),
        (
            # Issue 24, point 13: the seed would read a string one character at a time.
            local(include="*.safetensors"),
            (
                "llama: model.include must be a list of fnmatch patterns, such as "
                "['*.safetensors'] (a string would be read one character at a time), got "
                "'*.safetensors'"
            ),
        ),
        (
            # Issue 24, point 15: readers see every file the association imports, so a
            # manifest of fewer would fail verification.
            lambda: build(
                "fsx-lustre",
                model={"source": "s3://acme-models/llama", "revision": "v1", "include": ["*.json"]},
            ),
            (
                "llama: model.include must be unset for a s3:// source this store imports "
                "itself (the storage imports every file under the source and readers see them "
                "all: publish only the files to serve there), got ['*.json']"
            ),
        ),
    ],
)
def test_bad_model_sections_are_refused_before_anything_registers(program: Any, message: str):
    assert_refused(program, message)


def test_the_seed_job_runs_the_bundle_as_its_tests_do_from_the_planned_config_map(tmp_path):
    """The Job's command is ``bundle.command`` (``python -I -S -u``: no ``PYTHON*`` variable is
    read, so none is set), and run for real over the planned ConfigMap laid out as its volume
    items say, it seeds a local source."""
    p = plan(local(), fill=True)
    (job,) = [j["inputs"] for j in p.by_type(JOB) if "-seed-" in j["inputs"]["metadata"]["name"]]
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == bundle.command("seed", model_jobs.PROGRAMS_PATH)
    assert not [e["name"] for e in container["env"] if e["name"].startswith("PYTHON")]
    (volume,) = [v for v in pod["volumes"] if "configMap" in v]
    (config_map,) = [
        c
        for c in created(p, CONFIG_MAP)
        if c["metadata"]["name"] == volume["configMap"]["name"]
        and c["metadata"]["namespace"] == job["metadata"]["namespace"]
    ]
    programs = tmp_path / "programs"
    for item in volume["configMap"]["items"]:
        (programs / item["path"]).parent.mkdir(parents=True, exist_ok=True)
        (programs / item["path"]).write_text(config_map["data"][item["key"]])
    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text("{}")
    store = tmp_path / "store"
    store.mkdir()
    args = list(container["args"])
    for flag, value in (("--source", f"file://{src}"), ("--dest", str(store))):
        args[args.index(flag) + 1] = value
    launcher = container["command"][-1].replace(model_jobs.PROGRAMS_PATH, str(programs))
    # The digest goes to the planned ConfigMap, through a stub of the API server.
    with stub_api(tmp_path) as (url, account):
        stub_args = ["--kube-api", url, "--kube-token-dir", str(account), "--termination-log", ""]
        run = subprocess.run(
            [sys.executable, *container["command"][1:-1], launcher, *args, *stub_args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr
    assert (store / "revisions" / SHA / "config.json").read_text() == "{}"
    manifest = json.loads((store / ".modelstore" / SHA / "manifest.json").read_text())
    namespace, name = args[args.index("--record-configmap") + 1].split("/")
    assert (namespace, name) == (job["metadata"]["namespace"], f"llama-manifest-{SHA[:12]}")
    assert ApiStub.objects[name]["data"]["manifest-sha256"] == manifest["digest"]


def test_every_waited_job_is_replaced_by_the_next_up_once_it_failed(filled_plans: Any) -> None:
    """A failed seed, verify, manifest or loader Job is run again by the next ``pulumi up``:
    each carries ``pulumi.com/replaceUnready: "true"``, which makes pulumi-kubernetes replace a
    Job that is not complete instead of awaiting the same failed one (kube/model_jobs.py)."""
    from tests.test_ebs import cache
    from tests.test_hyperdisk_model import V1, _plan

    plans = {**filled_plans, "ebs loader": plan(cache()), "hyperdisk manifest": _plan(model=V1)[0]}
    jobs = [(pid, j) for pid, p in plans.items() for j in created(p, JOB)]
    roles = {j["metadata"]["labels"].get(model_jobs.ROLE_LABEL) for _, j in jobs}
    assert roles == {"seed", "verify", "manifest", "loader"}, roles
    for pid, job in jobs:
        annotations = job["metadata"].get("annotations") or {}
        assert annotations.get("pulumi.com/replaceUnready") == "true", (pid, job["metadata"])


# Names the source's own service refuses (issue 26), each with the rule's words from
# model/names.py, which cites the service's rule: the plan refuses what the seed would fail on.
S3_RULE = (
    "a valid S3 bucket name (3-63 lowercase letters, digits, '.' and '-', starting and ending "
    "with a letter or digit, no '..', not an IP address, not starting with xn--, sthree- or "
    "amzn-s3-demo-, not ending with -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3)"
)
GCS_RULE = (
    "a valid Cloud Storage bucket name (3-63 lowercase letters, digits, '-', '_' and '.', "
    "starting and ending with a letter or digit; up to 222 with dots, 63 between dots; not "
    "starting with 'goog', without 'google' or a close misspelling such as 'g00gle', not an IP "
    "address)"
)
HF_RULE = (
    "hf://<org>/<repo> with a Hugging Face repository id (letters, digits, '-', '_' and '.', "
    "each part starting and ending with a letter, digit or '_', the repository at most 96 "
    "characters, no '--' or '..', not ending with .git)"
)
IMAGE_RULE = (
    "a container image reference ([registry/]path[:tag][@digest], the path lowercase letters, "
    "digits and single '.', '_' or '-' between them, at most 255 characters before the tag), "
    "e.g. python:3.12-slim"
)
INCLUDE_RULE = (
    "fnmatch patterns of paths inside the revision: relative, without '.', '..' or empty "
    "segments (a file's path never has them, so such a pattern matches nothing; one "
    "trailing '/' takes a folder)"
)


def on(backend: str, **model: Any) -> Any:
    return lambda: build(backend, model={**MODEL, **model})


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (local(source="hf://meta--llama/Llama-3"), f"llama: model.source must be {HF_RULE}, "
         "got 'hf://meta--llama/Llama-3'"),
        (local(source="hf://meta-llama/Llama 3"), f"llama: model.source must be {HF_RULE}, "
         "got 'hf://meta-llama/Llama 3'"),
        (local(source="hf://meta-llama/" + "l" * 97), f"llama: model.source must be {HF_RULE}, "
         f"got 'hf://meta-llama/{'l' * 97}'"),
        (local(source="hf://meta-llama/llama..3"), f"llama: model.source must be {HF_RULE}, "
         "got 'hf://meta-llama/llama..3'"),
        (on("mountpoint-s3", source="s3://ab/llama", revision="v1"),
         f"llama: model.source must be s3:// then {S3_RULE}, got 's3://ab/llama'"),
        (on("efs", source="s3://sthree-models/llama", revision="v1"),
         f"llama: model.source must be s3:// then {S3_RULE}, got 's3://sthree-models/llama'"),
        (on("gcs-fuse", source="gs://my-google-models/llama", revision="v1"),
         f"llama: model.source must be gs:// then {GCS_RULE}, got "
         "'gs://my-google-models/llama'"),
        (on("gcs-fuse", source="gs://Models/llama", revision="v1"),
         f"llama: model.source must be gs:// then {GCS_RULE}, got 'gs://Models/llama'"),
        (on("gcs-fuse", source="gs://goog-models/llama", revision="v1"),
         f"llama: model.source must be gs:// then {GCS_RULE}, got 'gs://goog-models/llama'"),
        (on("azure-blob", source="az://MyModels/models/llama", revision="v1"),
         "llama: model.source must be az:// then a storage account name (3-24 lowercase "
         "letters and digits, unique in Azure), got 'az://MyModels/models/llama'"),
        (on("azure-blob", source="az://mymodels/my--models/llama", revision="v1"),
         "llama: model.source must be az://<account>/ then a blob container name (3-63 "
         "lowercase letters, digits and '-', starting and ending with a letter or digit, no "
         "'--'), got 'az://mymodels/my--models/llama'"),
        (local(include=["*.json", "../shared/*.safetensors"]),
         f"llama: model.include must be {INCLUDE_RULE}, got '../shared/*.safetensors'"),
        (local(include=["/weights/*.safetensors"]),
         f"llama: model.include must be {INCLUDE_RULE}, got '/weights/*.safetensors'"),
        (local(include=["onnx/./model.onnx"]),
         f"llama: model.include must be {INCLUDE_RULE}, got 'onnx/./model.onnx'"),
        # The rest of the section swept the same way: an image the runtime cannot parse
        # (distribution/reference) and a resource group Azure refuses.
        (local(image="Python:3.12-slim"),
         f"llama: model.image must be {IMAGE_RULE}, got 'Python:3.12-slim'"),
        (local(image="python:3.12:slim"),
         f"llama: model.image must be {IMAGE_RULE}, got 'python:3.12:slim'"),
        (on("azure-blob", source="az://mymodels/models/llama", revision="v1",
            source_resource_group="models."),
         "llama: model.source_resource_group must be a resource group name (1-90 letters, "
         "digits, '_', '-', '.', '(' and ')', not ending with '.'), got 'models.'"),
        (local(token_secret={"name": "hf", "key": "..token"}),
         "llama: model.token_secret.key must be a Secret key (letters, digits, '-', '_' and '.', "
         "at most 253 characters, not '.' and not starting with '..'), got '..token'"),
    ],
)  # fmt: skip
def test_names_the_source_refuses_and_patterns_that_never_match_are_refused(
    program: Any, message: str
) -> None:
    assert_refused(program, message)


def test_hyperdisk_ml_and_gcs_fuse_refuse_a_bucket_by_one_rule() -> None:
    """The misspelling Google's naming page gives ('g00gle'): refused by Hyperdisk ML's
    source_uri and by a gcs-fuse model source in the same words."""
    from pulumi_modelstore.gcp import validation as gcp_v
    from pulumi_modelstore.model import names

    assert gcp_v.is_bucket_name is names.is_gcs_bucket_name
    assert gcp_v.BUCKET_NAME_RULE == GCS_RULE
    assert_refused(
        on("gcs-fuse", source="gs://my-g00gle-models/llama", revision="v1"),
        f"llama: model.source must be gs:// then {GCS_RULE}, got 'gs://my-g00gle-models/llama'",
    )
