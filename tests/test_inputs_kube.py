"""Every value that reaches the Kubernetes API is checked at plan time against Kubernetes' own
rules (label keys and values, object names, annotation keys, hostPath and mount paths,
quantities), for every backend and for the names the library derives: a table of bad inputs,
each refused with one exact line before anything registers; and every Kubernetes object of
every stack and example within those rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pytest

from pulumi_modelstore import validation as v
from pulumi_modelstore.aws.ebs import EbsCsiDriver, EbsModelCache
from pulumi_modelstore.aws.ebs.cache import LOADER_JOB_NAME
from pulumi_modelstore.aws.ebs.classes import multi_attach_claim
from pulumi_modelstore.aws.ebs.driver import COMPONENT_LABEL
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.kube.snapshots import volume_claim, volume_snapshot
from pulumi_modelstore.kube.workload import HF_HOME_PATH
from pulumi_modelstore.program import BACKENDS, build_stores
from pulumi_modelstore.store import ACCESS_LABEL, MANAGED_BY, STORE_LABEL
from tests.conftest import CLUSTER, assert_refused, plan
from tests.rules import (
    COMPONENT_NAME,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    HF_HOME_MOUNT,
    LABEL_VALUE,
    MAX_GIB,
    NO_BACKSTEPS,
    QUALIFIED,
    SIZE,
    STORE_NAME,
)
from tests.test_backend_contract import COMMON_BAD_INPUTS

LOADER = {"image": "python:3.12-slim", "command": ["python", "-c", "print('load')"]}


def store(backend: str, name: str = "llama", **args: Any) -> Callable[[], Any]:
    fields = {**BACKENDS[backend].example_args, "readers": ["inference"], **args}
    return lambda: BACKENDS[backend](name, fields)


def driver(name: str = "ebs", **args: Any) -> Callable[[], Any]:
    return lambda: EbsCsiDriver(name, {"cluster_name": CLUSTER, **args})  # type: ignore[typeddict-item]


def cache(name: str = "llama", **args: Any) -> Callable[[], Any]:
    fields = {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER, **args}
    return lambda: EbsModelCache(name, fields)  # type: ignore[arg-type]


Row = tuple[str, Callable[[], Any], str]

BAD_INPUTS: list[Row] = [
    # -- hyperdisk-ml (its own rules: tests/test_hyperdisk.py) -----------------------------------
    (
        "hyperdisk-ml",
        store("hyperdisk-ml", service_account_name="Loader_SA"),
        f"llama: service_account_name must be {DNS_SUBDOMAIN}, got 'Loader_SA'",
    ),
    # -- local --------------------------------------------------------------------------------
    (
        "local",
        store("local", name="Llama_3"),
        f"Llama_3: claim_name (default: the store name) must be {DNS_LABEL}, got 'Llama_3'",
    ),
    (
        "local",
        store("local", host_path="/var/lib/../../etc"),
        f"llama: host_path must be {NO_BACKSTEPS}, got '/var/lib/../../etc'",
    ),
    (
        "local",
        store("local", host_path="models/llama"),
        "llama: host_path must be an absolute path starting with '/', got 'models/llama'",
    ),
    (
        "local",
        store("local", node_name="gpu-" + "a" * 60),
        "llama: node_name must be a node name of at most 63 characters (it is the PV's node "
        f"affinity value for kubernetes.io/hostname, a label value), got 'gpu-{'a' * 60}'",
    ),
    (
        "local",
        store("local", node_name="GPU-1"),
        f"llama: node_name must be {DNS_SUBDOMAIN}, got 'GPU-1'",
    ),
    (
        "local",
        store("local", capacity_gib=2**33),
        f"llama: capacity_gib must be {MAX_GIB}, got 8589934592",
    ),
    # -- nfs ----------------------------------------------------------------------------------
    (
        "nfs",
        store("nfs", name="models.v2"),
        f"models.v2: claim_name (default: the store name) must be {DNS_LABEL}, got 'models.v2'",
    ),
    (
        "nfs",
        store("nfs", capacity_gib=10**12),
        f"llama: capacity_gib must be {MAX_GIB}, got 1000000000000",
    ),
    # -- azure-files-nfs (its own rules: tests/test_azure_files.py) ----------------------------
    # -- gcs-fuse -----------------------------------------------------------------------------
    (
        "gcs-fuse",
        store("gcs-fuse", service_account_name="Model_Reader"),
        f"llama: service_account_name must be {DNS_SUBDOMAIN}, got 'Model_Reader'",
    ),
    (
        "gcs-fuse",
        store("gcs-fuse", storage_class_name="Models"),
        f"llama: storage_class_name must be {DNS_SUBDOMAIN}, got 'Models'",
    ),
    # -- azure-blob ---------------------------------------------------------------------------
    (
        "azure-blob",
        store("azure-blob", service_account_name="Model_Reader"),
        f"llama: service_account_name must be {DNS_SUBDOMAIN}, got 'Model_Reader'",
    ),
    # -- fsx-lustre ---------------------------------------------------------------------------
    (
        "fsx-lustre",
        store("fsx-lustre", name="Llama"),
        f"Llama: claim_name (default: the store name) must be {DNS_LABEL}, got 'Llama'",
    ),
    # -- efs ----------------------------------------------------------------------------------
    (
        "efs",
        store("efs", name="llama_3"),
        f"llama_3: claim_name (default: the store name) must be {DNS_LABEL}, got 'llama_3'",
    ),
    (
        "efs",
        store("efs", node_service_account="EFS_node"),
        f"llama: node_service_account must be {DNS_SUBDOMAIN}, got 'EFS_node'",
    ),
    # -- mountpoint-s3 ------------------------------------------------------------------------
    (
        "mountpoint-s3",
        store("mountpoint-s3", writers=["loader"], service_account_name="Model_Reader"),
        f"llama: service_account_name must be {DNS_SUBDOMAIN}, got 'Model_Reader'",
    ),
    # -- EbsCsiDriver -------------------------------------------------------------------------
    ("EbsCsiDriver", driver(name="ebs driver"), f"{COMPONENT_NAME}, got 'ebs driver'"),
    (
        "EbsCsiDriver",
        driver(labels={"team.": "ml"}),
        f"ebs: labels key must be {QUALIFIED}, got 'team.'",
    ),
    (
        "EbsCsiDriver",
        driver(labels={"team": "ml team"}),
        f"ebs: labels['team'] must be {LABEL_VALUE}, got 'ml team'",
    ),
    (
        "EbsCsiDriver",
        driver(storage_class_name="GP3"),
        f"ebs: storage_class_name must be {DNS_SUBDOMAIN}, got 'GP3'",
    ),
    (
        "EbsCsiDriver",
        driver(snapshot_class_name="ebs_snapshots"),
        f"ebs: snapshot_class_name must be {DNS_SUBDOMAIN}, got 'ebs_snapshots'",
    ),
    (
        "EbsCsiDriver",
        driver(multi_attach_iops=3000, multi_attach_storage_class_name="io2 multi"),
        f"ebs: multi_attach_storage_class_name must be {DNS_SUBDOMAIN}, got 'io2 multi'",
    ),
    (
        "EbsCsiDriver",
        driver(controller_service_account="EBS-controller"),
        f"ebs: controller_service_account must be {DNS_SUBDOMAIN}, got 'EBS-controller'",
    ),
    (
        "EbsCsiDriver",
        driver(snapshot_controller_namespace="kube.system"),
        f"ebs: snapshot_controller_namespace must be {DNS_LABEL}, got 'kube.system'",
    ),
    # -- EbsModelCache ------------------------------------------------------------------------
    ("EbsModelCache", cache(name="llama 3"), f"{STORE_NAME}, got 'llama 3'"),
    # The store's name is its claim name's default (store.py), refused once as that.
    (
        "EbsModelCache",
        cache(name="Llama"),
        f"Llama: claim_name (default: the store name) must be {DNS_LABEL}, got 'Llama'",
    ),
    (
        "EbsModelCache",
        cache(name="l" * 55, model_revision="r2"),
        f"{'l' * 55}: {LOADER_JOB_NAME} must be {DNS_LABEL}, got '{'l' * 55}-r2-loader'",
    ),
    (
        "EbsModelCache",
        cache(labels={"app.kubernetes.io/": "vllm"}),
        f"llama: labels key must be {QUALIFIED}, got 'app.kubernetes.io/'",
    ),
    (
        "EbsModelCache",
        cache(labels={"app": "vLLM server"}),
        f"llama: labels['app'] must be {LABEL_VALUE}, got 'vLLM server'",
    ),
    (
        "EbsModelCache",
        cache(mount_path="/models/../etc"),
        f"llama: mount_path must be {NO_BACKSTEPS}, got '/models/../etc'",
    ),
    (
        "EbsModelCache",
        cache(mount_path="/tmp/hf-home"),
        f"llama: mount_path must be {HF_HOME_MOUNT}, got '/tmp/hf-home'",
    ),
    (
        "EbsModelCache",
        cache(claim_template_name="hf-home"),
        "llama: claim_template_name must be a name other than hf-home (the replicas get an "
        "emptyDir volume of that name for HF_HOME), got 'hf-home'",
    ),
    (
        "EbsModelCache",
        cache(claim_template_name="model.v2"),
        f"llama: claim_template_name must be {DNS_LABEL}, got 'model.v2'",
    ),
    (
        "EbsModelCache",
        cache(loader={**LOADER, "name": "Loader"}),
        f"llama: loader.name must be {DNS_LABEL}, got 'Loader'",
    ),
    (
        "EbsModelCache",
        cache(loader={**LOADER, "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}),
        "llama: loader.volumeMounts[0].name must be model (the loader pod's only volume, the "
        "seed claim), got 'cache'",
    ),
    (
        "EbsModelCache",
        cache(loader={**LOADER, "volumeMounts": [{"name": "model", "mountPath": "/mnt/models/"}]}),
        "llama: loader.volumeMounts[0].mountPath must be a path no other mount of the loader "
        "uses (the model is at mount_path), got '/mnt/models/'",
    ),
    (
        "EbsModelCache",
        cache(volume_size="9Ei"),
        f"llama: volume_size must be less than 8Ei: {SIZE}, got '9Ei'",
    ),
    (
        "EbsModelCache",
        cache(volume_size="100Gi\n"),
        f"llama: volume_size must be {SIZE}, got '100Gi\\n'",
    ),
    (
        "EbsModelCache",
        cache(loader_service_account_name="Model_Loader"),
        f"llama: loader_service_account_name must be {DNS_SUBDOMAIN}, got 'Model_Loader'",
    ),
    (
        "EbsModelCache",
        cache(snapshot_class_name="EBS"),
        f"llama: snapshot_class_name must be {DNS_SUBDOMAIN}, got 'EBS'",
    ),
    # -- the kube helpers (library programs call them directly) --------------------------------
    (
        "kube helpers",
        lambda: volume_claim(
            "claim",
            name="models",
            namespace="inference",
            size="10Gi",
            storage_class_name="gp3",
            annotations={"example.com/a/b": "x"},
        ),
        f"claim: annotations key must be {QUALIFIED}, got 'example.com/a/b'",
    ),
    (
        "kube helpers",
        lambda: volume_claim(
            "claim",
            name="models",
            namespace="inference",
            size="10Gi",
            storage_class_name="gp3",
            annotations={"notes": "x" * (256 * 1024)},
        ),
        "claim: annotations must be at most 262144 bytes in all (keys and values, 256 KiB), "
        "got 262149",
    ),
    (
        "kube helpers",
        lambda: volume_snapshot(
            "snap",
            name="models",
            namespace="inference",
            claim_name="models",
            snapshot_class_name="ebs-snapshots",
            labels={"model": "llama 3"},
        ),
        f"snap: labels['model'] must be {LABEL_VALUE}, got 'llama 3'",
    ),
    (
        "kube helpers",
        lambda: multi_attach_claim(
            "shared",
            name="shared",
            namespace="inference",
            size="100Gi",
            storage_class_name="io2",
            labels={"app/": "x"},
        ),
        f"shared: labels key must be {QUALIFIED}, got 'app/'",
    ),
]


@pytest.mark.parametrize(
    ("backend", "program", "message"),
    BAD_INPUTS,
    ids=[f"{i}-{row[0]}" for i, row in enumerate(BAD_INPUTS)],
)
def test_a_bad_kubernetes_value_is_refused_before_anything_registers(backend, program, message):
    assert_refused(program, message)


def test_the_tables_cover_every_backend():
    # The common fields' values (labels, claim_name, mount_path, the store name) are refused by
    # every backend in the contract suite; this table holds each backend's own fields.
    rows = {backend for backend, _, _ in BAD_INPUTS}
    assert rows >= {"EbsCsiDriver", "EbsModelCache"}
    assert len(BAD_INPUTS) + len(COMMON_BAD_INPUTS) >= 45


def test_the_config_program_refuses_a_store_name_that_is_not_a_label_value():
    stores = {
        "llama 3": {"backend": "local", "readers": ["inference"]},
        "mistral": {"backend": "local", "readers": ["inference"], "labels": {"tier": "a b"}},
    }
    assert_refused(
        lambda: build_stores(stores),
        "\n".join(
            [
                f"{STORE_NAME}, got 'llama 3'",
                f"mistral: labels['tier'] must be {LABEL_VALUE}, got 'a b'",
            ]
        ),
    )


def test_one_bad_store_name_is_one_line_not_a_cascade():
    # Too long for a label value: the claim (and the local store's directory) named after it
    # are not refused again.
    with pytest.raises(ModelStoreInputError) as err:
        BACKENDS["local"].validate("L" * 70, {"readers": ["inference"]})
    assert str(err.value) == f"{STORE_NAME}, got '{'L' * 70}'"


def test_values_still_unknown_are_left_to_the_api_server():
    checked: list[str] = []

    def program() -> None:
        unknown = pulumi.Output.from_input("any value: ../ /x")
        v.label_map("llama", "labels", {"team": unknown})
        v.annotation_map("llama", "annotations", {"note": unknown})
        v.host_path("llama", "host_path", unknown)
        v.sub_path("llama", "sub_path", unknown)
        assert v.storage_bytes("llama", "size", unknown) is None
        checked.append("all")

    plan(program)
    assert checked == ["all"]


# -- mount_for: the pod side ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_store():
    made: dict[str, Any] = {}

    def program() -> None:
        made["store"] = BACKENDS["local"]("llama", {"readers": ["inference"], "writers": ["etl"]})

    plan(program)
    return made["store"]


@pytest.mark.parametrize(
    ("namespace", "kwargs", "message"),
    [
        (
            "inference",
            {"sub_path": "../other-model"},
            "llama: sub_path must be a path inside the volume, without '..' segments (e.g. "
            "llama-3-8b), got '../other-model'",
        ),
        (
            "inference",
            {"sub_path": "/llama/../../x/"},
            "llama: sub_path must be a path inside the volume, without '..' segments (e.g. "
            "llama-3-8b), got 'llama/../../x'",
        ),
        (
            "inference",
            {"mount_path": "/mnt/../models"},
            f"llama: mount_path must be {NO_BACKSTEPS}, got '/mnt/../models'",
        ),
        (
            "inference",
            {"mount_path": HF_HOME_PATH},
            f"llama: mount_path must be {HF_HOME_MOUNT}, got '/tmp/hf-home'",
        ),
    ],
)
def test_mount_for_refuses_paths_kubernetes_refuses(local_store, namespace, kwargs, message):
    with pytest.raises(ModelStoreInputError) as err:
        local_store.mount_for(namespace, **kwargs)
    assert str(err.value) == message


def test_mount_for_keeps_what_kubernetes_takes(local_store):
    # A writer's pod gets no HF_HOME emptyDir, so its mount may go there; a leading '/' on
    # sub_path is dropped (subPath is relative), as before.
    assert local_store.mount_for("etl", mount_path=HF_HOME_PATH).mount_path == HF_HOME_PATH
    mount = local_store.mount_for("inference", sub_path="/llama-3-8b/")
    assert mount.volume_mount["subPath"] == "llama-3-8b"


# -- the rules themselves ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("team", True),
        ("example.com/team", True),
        ("app.kubernetes.io/managed-by", True),
        ("a" * 63, True),
        (f"{'a' * 253}/team", True),
        ("A_b.c-D", True),
        ("", False),
        ("a" * 64, False),
        ("/team", False),
        ("example.com/", False),
        ("Example.com/team", False),
        ("a/b/c", False),
        ("team\n", False),
        (f"{'a' * 254}/team", False),
    ],
)
def test_qualified_names(key, ok):
    assert v.is_qualified_name(key) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("", True),
        ("ml", True),
        ("Llama_3.1-8B", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("ml team", False),
        ("_ml", False),
        ("ml/ai", False),
        ("ml\n", False),
    ],
)
def test_label_values(value, ok):
    assert v.is_label_value(value) is ok


def test_dns_names_refuse_a_trailing_newline():
    # Python's '$' matches before a final newline: the names are matched whole.
    assert not v.is_dns_label("llama\n")
    assert not v.is_dns_subdomain("llama.example\n")


def test_annotation_keys_are_checked_lowercased():
    # ValidateAnnotations lowercases a key before IsQualifiedName: an uppercase prefix passes.
    assert v.annotation_map("x", "annotations", {"Example.com/Note": "y"}) == {
        "Example.com/Note": "y"
    }


@pytest.mark.parametrize(
    ("size", "expected"),
    [("1Gi", 1024**3), ("8Ei", None), ("9223372036854775807e0", 2**63 - 1), ("1e400", None)],
)
def test_the_largest_quantity(size, expected):
    if expected is None:
        with pytest.raises(ModelStoreInputError, match="less than 8Ei"):
            v.storage_bytes("x", "size", size)
    else:
        assert v.storage_bytes("x", "size", size) == expected


def test_the_library_s_own_labels_are_valid():
    own = {
        "app.kubernetes.io/managed-by": [MANAGED_BY],
        STORE_LABEL: ["llama"],
        ACCESS_LABEL: ["read-only", "read-write"],
        "modelstore.pulumi.com/role": ["seed", "loader", "replica"],
        COMPONENT_LABEL: ["ebs"],
    }
    for key, values in own.items():
        assert v.is_qualified_name(key), key
        assert all(v.is_label_value(value) for value in values), key


# -- every stack and example -----------------------------------------------------------------


def _problems(obj: Mapping[str, Any]) -> list[str]:
    """What the API server would refuse in ``obj``, by the rules above."""
    kind, meta = obj["kind"], obj.get("metadata") or {}
    name = meta.get("name")
    where = f"{kind} {name}"
    found: list[str] = []
    if isinstance(name, str):
        is_name = v.is_dns_label if kind == "Namespace" else v.is_dns_subdomain
        if not is_name(name):
            found.append(f"{where}: name")
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and not v.is_dns_label(namespace):
        found.append(f"{where}: namespace {namespace!r}")
    found += _metadata_problems(where, meta)
    spec = obj.get("spec") or {}
    for source in ("hostPath", "local"):
        path = (spec.get(source) or {}).get("path")
        if path is not None and (not path.startswith("/") or ".." in path.split("/")):
            found.append(f"{where}: {source} path {path!r}")
    for requirement in _node_affinity_requirements(spec):
        if not all(v.is_label_value(value) for value in requirement.get("values", [])):
            found.append(f"{where}: node affinity values {requirement.get('values')}")
    template = spec.get("template")
    if isinstance(template, Mapping):
        found += _metadata_problems(f"{where} template", template.get("metadata") or {})
        found += _pod_problems(where, template.get("spec") or {}, spec)
    return found


def _metadata_problems(where: str, meta: Mapping[str, Any]) -> list[str]:
    found = []
    for key, value in (meta.get("labels") or {}).items():
        if not v.is_qualified_name(key) or (isinstance(value, str) and not v.is_label_value(value)):
            found.append(f"{where}: label {key}={value!r}")
    annotations = meta.get("annotations") or {}
    for key in annotations:
        if not v.is_qualified_name(key.lower()):
            found.append(f"{where}: annotation {key}")
    size = sum(len(k) + len(val) for k, val in annotations.items() if isinstance(val, str))
    if size > v.TOTAL_ANNOTATION_SIZE:
        found.append(f"{where}: annotations of {size} bytes")
    return found


def _node_affinity_requirements(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    terms = ((spec.get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms", [])
    return [r for term in terms for r in term.get("matchExpressions", [])]


def _pod_problems(where: str, pod: Mapping[str, Any], owner: Mapping[str, Any]) -> list[str]:
    found = []
    volumes = [vol.get("name") for vol in pod.get("volumes", [])]
    volumes += [t["metadata"]["name"] for t in owner.get("volumeClaimTemplates", [])]
    if len(set(volumes)) != len(volumes) or not all(v.is_dns_label(n) for n in volumes):
        found.append(f"{where}: pod volumes {volumes}")
    for container in pod.get("containers", []):
        if not v.is_dns_label(container.get("name")):
            found.append(f"{where}: container {container.get('name')!r}")
        paths = [m["mountPath"] for m in container.get("volumeMounts", [])]
        if len(set(paths)) != len(paths) or not all(p.startswith("/") for p in paths):
            found.append(f"{where}: mount paths {paths}")
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                found.append(f"{where}: mount of a missing volume {mount['name']!r}")
            sub = mount.get("subPath")
            if sub and (sub.startswith("/") or ".." in sub.split("/")):
                found.append(f"{where}: subPath {sub!r}")
    return found


def test_every_kubernetes_object_of_every_stack_and_example_is_within_the_rules(filled_plans):
    problems = [
        f"{pid}: {problem}"
        for pid, p in filled_plans.items()
        for obj in p.kubernetes_objects()
        for problem in _problems(obj)
    ]
    assert problems == []
    kinds = {obj["kind"] for p in filled_plans.values() for obj in p.kubernetes_objects()}
    assert {"PersistentVolume", "PersistentVolumeClaim", "Job", "StorageClass"} <= kinds


def test_the_object_check_finds_what_the_api_server_refuses():
    bad = {
        "kind": "Job",
        "metadata": {"name": "Loader", "namespace": "ml_team", "labels": {"a b": "c"}},
        "spec": {
            "template": {
                "metadata": {"annotations": {"x/y/z": "1"}},
                "spec": {
                    "volumes": [{"name": "model"}, {"name": "model"}],
                    "containers": [
                        {
                            "name": "Loader",
                            "volumeMounts": [
                                {"name": "model", "mountPath": "/m"},
                                {"name": "cache", "mountPath": "/m", "subPath": "../x"},
                            ],
                        }
                    ],
                },
            }
        },
    }
    assert len(_problems(bad)) == 9


@pytest.mark.parametrize(
    ("backend", "args", "field"),
    [
        ("mountpoint-s3", {"cache_size": "10Gi\n"}, "cache_size"),
        ("mountpoint-s3", {"region": "us-west-2\n"}, "region"),
        (
            "fsx-lustre",
            {
                "kms_key_arn": "arn:aws:kms:us-west-2:123456789012:key/"
                "0123abcd-0123-4abc-8def-0123456789ab\n"
            },
            "kms_key_arn",
        ),
        ("nfs", {"server": "nas01\n"}, "server"),
        ("gcs-fuse", {"bucket_name": "acme-models\n"}, "bucket_name"),
        ("gcs-fuse", {"bucket_region": "us-central1\n"}, "bucket_region"),
        ("gcs-fuse", {"sidecar_resources": {"cpu-limit": "2\n"}}, "sidecar_resources"),
    ],
)
def test_a_trailing_newline_is_not_a_valid_value(backend, args, field):
    # Python's `$` also matches before a final newline: every pattern is matched whole.
    base = {"readers": ["inference"], **BACKENDS[backend].example_args}
    with pytest.raises(ModelStoreInputError) as err:
        BACKENDS[backend].validate("llama", {**base, **args})
    assert f"llama: {field} must be" in str(err.value)
