"""The pods ``mount_for`` patches, for every backend and access level, validate against the
Kubernetes API's OpenAPI v3 documents of the oldest and newest supported minor (enums
included), and canaries keep the validator honest: each class of error is caught with its
message."""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any

import pulumi
import pytest

from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.kube.workload import WorkloadMount
from pulumi_modelstore.program import BACKENDS
from tests.conftest import plan
from tests.test_backend_contract import NAMES, build, consumers
from tests.validators.kube_schema import KUBERNETES_MINORS, SCHEMAS, SchemaNotFound, validator

SOURCE = SCHEMAS / "SOURCE.md"

CONTAINER = {"name": "vllm", "image": "vllm/vllm-openai:v0.10.0", "args": ["/mnt/models"]}
# A pod the way an application writes it before mount_for patches it: its own securityContext
# (the patch merges over it), a volume and a mount of its own.
APP_POD_SPEC: dict[str, Any] = {
    "securityContext": {"runAsNonRoot": True, "fsGroup": 1000},
    "containers": [
        {
            **CONTAINER,
            "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
        }
    ],
    "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
}


def _mounts() -> list[tuple[str, str, Any]]:
    """(backend, namespace, mount) for every backend and every access level it takes."""
    out = []
    stores: dict[str, Any] = {}
    for backend in sorted(BACKENDS):

        def program(backend: str = backend) -> None:
            stores[backend] = build(backend)
            pulumi.export("mounts", stores[backend].mounts)

        resolved = plan(program, fill=True).outputs["mounts"]
        for ns in consumers(backend):
            # The output's values, resolved (a claim template's are Outputs until then).
            out.append((backend, ns, WorkloadMount.from_output(resolved[ns])))
    return out


@pytest.fixture(scope="module")
def mounts() -> list[tuple[str, str, Any]]:
    return _mounts()


def pod(mount: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "vllm",
            "namespace": mount.namespace,
            "labels": {"app": "vllm", **mount.pod_labels},
            "annotations": dict(mount.pod_annotations),
        },
        "spec": mount.patch_pod_spec(copy.deepcopy(APP_POD_SPEC)),
    }


def deployment(mount: Any) -> dict[str, Any]:
    """A Deployment whose pod template carries what mount_for gives the template (with a
    claim template, each pod's own ephemeral volume)."""
    template = pod(mount)
    spec: dict[str, Any] = {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "vllm"}},
        "template": {"metadata": template["metadata"], "spec": template["spec"]},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "vllm", "namespace": mount.namespace},
        "spec": spec,
    }


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
def test_every_backends_patched_pod_validates(mounts, minor):
    """Readers and writers (where the backend takes writers) of every backend: the pod and a
    Deployment's template as mount_for patches them."""
    assert {b for b, _, _ in mounts} == set(NAMES)
    checked = 0
    for backend, ns, mount in mounts:
        for obj in (pod(mount), deployment(mount)):
            problems = validator(minor).errors(obj)
            assert not problems, f"{backend} {ns}: {obj['kind']}:\n" + "\n".join(problems)
            checked += 1
    # 9 backends, 2 readers each, 1 writer on all but Hyperdisk ML; a Pod and a Deployment.
    assert checked == 2 * sum(len(consumers(b)) for b in NAMES)


def test_the_azure_files_pod_carries_no_fs_group_change_policy(mounts):
    """The API server takes only Always/OnRootMismatch for a pod's fsGroupChangePolicy
    (pkg/apis/core/validation/validation.go validFSGroupChangePolicies); ``None`` is the
    azurefile driver's PV attribute, which the PV keeps (test_azure_files.py)."""
    for backend, ns, mount in mounts:
        context = pod(mount)["spec"]["securityContext"]
        assert "fsGroupChangePolicy" not in context, (backend, ns)
        assert context == {**APP_POD_SPEC["securityContext"], **context}


def two_stores_in_one_pod(second_mount_path: str) -> dict[str, Any]:
    """A vLLM pod serving a model with a draft model (speculative decoding) from two stores."""
    stores: dict[str, Any] = {}

    def program() -> None:
        stores["llama"] = BACKENDS["local"]("llama", {"readers": ["inference"]})
        stores["draft"] = BACKENDS["local"](
            "draft", {"readers": ["inference"], "mount_path": second_mount_path}
        )

    plan(program, fill=True)
    spec = copy.deepcopy(APP_POD_SPEC)
    for name in ("llama", "draft"):
        spec = stores[name].mount_for("inference").patch_pod_spec(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vllm"}, "spec": spec}


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
def test_a_pod_mounting_two_stores_validates(minor):
    """Both stores bring HF_HUB_OFFLINE, HF_HOME and its emptyDir: each goes in once, or
    server-side apply refuses the pod ("duplicate entries for key")."""
    obj = two_stores_in_one_pod("/mnt/draft")
    assert validator(minor).errors(obj) == []
    (container,) = obj["spec"]["containers"]
    assert [m["mountPath"] for m in container["volumeMounts"]] == [
        "/dev/shm",
        "/mnt/models",
        "/tmp/hf-home",
        "/mnt/draft",
    ]
    assert [v["name"] for v in obj["spec"]["volumes"]] == ["shm", "llama", "hf-home", "draft"]


def test_two_stores_at_one_mount_path_are_refused_with_both_named():
    with pytest.raises(ModelStoreInputError) as err:
        two_stores_in_one_pod("/mnt/models")
    assert str(err.value) == (
        "container 'vllm' volumeMounts must be free at mountPath '/mnt/models' for claim "
        "draft's {'name': 'draft', 'mountPath': '/mnt/models', 'readOnly': true} (give the "
        "stores different mount_path values), got {'name': 'llama', 'mountPath': "
        "'/mnt/models', 'readOnly': true}"
    )


# -- canaries ---------------------------------------------------------------------------------

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "vllm", "namespace": "inference"},
    "spec": {"containers": [dict(CONTAINER)]},
}
SNAPSHOT: dict[str, Any] = {
    "apiVersion": "snapshot.storage.k8s.io/v1",
    "kind": "VolumeSnapshot",
    "metadata": {"name": "llama", "namespace": "inference"},
    "spec": {"source": {"persistentVolumeClaimName": "llama"}},
}


def broken(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``base`` with ``value`` at the dotted ``path`` (``del`` removes the key)."""
    obj = copy.deepcopy(base)
    *parents, last = path.split(".")
    node = obj
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    if value == "del":
        del node[last]
    else:
        node[last] = value
    return obj


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            broken(POD, "spec.securityContext.fsGroupChangePolicy", "None"),
            'spec.securityContext.fsGroupChangePolicy: Unsupported value: "None": supported '
            'values: "Always", "OnRootMismatch"',
        ),
        (
            broken(
                POD,
                "spec.containers.0.volumeMounts",
                [{"name": "m", "mountPath": "/m", "readonly": True}],
            ),
            'spec.containers[0].volumeMounts[0].readonly: unknown field "readonly" (known '
            "fields: mountPath, mountPropagation, name, readOnly, recursiveReadOnly, subPath, "
            "subPathExpr)",
        ),
        (
            broken(POD, "spec.securityContext.fsGroup", "1000"),
            'spec.securityContext.fsGroup: Invalid value: "1000": must be of type integer (int64)',
        ),
        (
            broken(POD, "spec.containers.0.name", "del"),
            "spec.containers[0].name: Required value",
        ),
        (
            broken(POD, "spec.containers.0.ports", [{"containerPort": 2**31}]),
            "spec.containers[0].ports[0].containerPort: Invalid value: 2147483648: out of int32 "
            "range [-2147483648, 2147483647]",
        ),
        (
            broken(POD, "spec.containers.0.resources", {"limits": {"memory": "16GB"}}),
            'spec.containers[0].resources.limits.memory: Invalid value: "16GB": must be a '
            "quantity (e.g. 100Gi, 250m)",
        ),
        (
            broken(POD, "spec.containers.0.env", [{"name": "HF_HOME", "value": "/a"}] * 2),
            'spec.containers[0].env[1]: Duplicate value: {"name": "HF_HOME"}',
        ),
        (
            broken(
                POD,
                "spec.containers.0.ports",
                [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}],
            ),
            "spec.containers[0].ports[1]: Duplicate value: "
            '{"containerPort": 80, "protocol": "TCP"}',
        ),
        (
            broken(POD, "metadata.labels", {"replicas": 2}),
            "metadata.labels.replicas: Invalid value: 2: must be of type string",
        ),
        (
            broken(SNAPSHOT, "spec.source.pvcName", "llama"),
            'spec.source.pvcName: unknown field "pvcName" (known fields: '
            "persistentVolumeClaimName, volumeSnapshotContentName)",
        ),
        (
            broken(SNAPSHOT, "spec.source", "llama"),
            'spec.source: Invalid value: "llama": must be of type object',
        ),
        (
            broken(SNAPSHOT, "spec", {"volumeSnapshotClassName": "ebs"}),
            "spec.source: Required value",
        ),
        (
            broken(SNAPSHOT, "metadata.labels", {"a": None}),
            "metadata.labels.a: Invalid value: null: must not be null (the schema is not nullable)",
        ),
    ],
    ids=[
        "enum",
        "unknown-field",
        "wrong-type",
        "missing-required",
        "int32-range",
        "quantity",
        "duplicate-list-map-key",
        "duplicate-list-map-key-defaulted",
        "label-not-a-string",
        "crd-unknown-field",
        "crd-wrong-type",
        "crd-missing-required",
        "crd-metadata-null",
    ],
)
def test_the_validator_catches_a_broken_object(minor, obj, message):
    assert validator(minor).errors(obj) == [message]


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
def test_the_unbroken_canary_bases_validate(minor):
    assert validator(minor).errors(POD) == []
    assert validator(minor).errors(SNAPSHOT) == []


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "Pods"),
        ("snapshot.storage.k8s.io/v1beta1", "VolumeSnapshot"),  # no longer served
        ("datalayer.gke.io/v1", "GCPDataSource"),  # no public CRD: checked by field tables
    ],
)
def test_a_kind_without_a_schema_is_refused_not_skipped(api_version, kind):
    with pytest.raises(SchemaNotFound, match=f"no schema for apiVersion {api_version!r}"):
        validator("1.35").errors({"apiVersion": api_version, "kind": kind, "metadata": {}})


def test_the_vendored_schemas_are_the_files_source_md_names():
    """Every vendored document has the sha256 SOURCE.md records, and nothing unrecorded."""
    table = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|$", SOURCE.read_text(), re.M))
    files = sorted(p for p in SCHEMAS.glob("*/**/*") if p.suffix in (".json", ".yaml"))
    assert {str(p.relative_to(SCHEMAS)) for p in files} == set(table)
    for path in files:
        assert (
            hashlib.sha256(path.read_bytes()).hexdigest() == table[str(path.relative_to(SCHEMAS))]
        )
