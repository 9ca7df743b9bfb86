"""``dynamic_claims``: the StorageClass ``<store>-dynamic`` on EFS, Azure Files NFS and NFS,
a claim planned against each, validated against the Kubernetes API's schemas, and the
refusals elsewhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import pulumi_kubernetes as k8s
import pytest

from pulumi_modelstore.aws import EfsModelStore, MountpointS3ModelStore
from pulumi_modelstore.aws.efs import EfsModelStoreArgs
from pulumi_modelstore.azure import AzureFilesNfsModelStore
from pulumi_modelstore.fields import fields_of
from pulumi_modelstore.local import LocalModelStore
from pulumi_modelstore.nfs import NfsModelStore
from pulumi_modelstore.nfs.store import HELM_VALUES, NFS_CSI
from tests.conftest import CLUSTER, RELEASE, ROOT, assert_refused, plan
from tests.test_helm import Release, manifests, release_of, render
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

SC = "kubernetes:storage.k8s.io/v1:StorageClass"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
NFS = {"server": "nas01.corp.example", "share": "/exports/models", "sub_dir": "llama-3"}
AKS = {"cluster_name": "ml-aks", "cluster_resource_group_name": "ml-rg"}
READERS = {"readers": ["inference"], "writers": ["model-loader"]}

# backend -> (store class, its args, the class's parameters besides ones only known at deploy)
BACKENDS: dict[str, tuple[Any, dict[str, Any], dict[str, Any]]] = {
    "efs": (
        EfsModelStore,
        {"cluster_name": CLUSTER},
        {
            "provisioningMode": "efs-ap",
            "directoryPerms": "700",
            "basePath": "/dynamic",
            "subPathPattern": "${.PVC.namespace}/${.PVC.name}",
            "gidRangeStart": "50000",
            "gidRangeEnd": "7000000",
            # A new claim of a deleted one's name gets a directory of its own, never the
            # files the deleted one left (below).
            "ensureUniqueDirectory": "true",
        },
    ),
    "azure-files-nfs": (
        AzureFilesNfsModelStore,
        AKS,
        {"protocol": "nfs", "skuName": "Premium_LRS", "rootSquashType": "NoRootSquash"},
    ),
    "nfs": (
        NfsModelStore,
        NFS,
        {
            "server": NFS["server"],
            "share": NFS["share"],
            "subDir": "llama-dynamic/${pvc.metadata.namespace}/${pvc.metadata.name}",
            "onDelete": "delete",
        },
    ),
}


def with_claim(store_type: Any, args: dict[str, Any]) -> Callable[[], None]:
    """The store with ``dynamic_claims`` and a scratch claim on its class in ``batch``."""

    def program() -> None:
        store = store_type("llama", cast(Any, {**args, **READERS, "dynamic_claims": True}))
        k8s.core.v1.PersistentVolumeClaim(
            "scratch",
            metadata={"name": "scratch", "namespace": "batch"},
            spec={
                "accessModes": ["ReadWriteMany"],
                "storageClassName": store.dynamic_storage_class_name,
                "resources": {"requests": {"storage": "100Gi"}},
            },
        )

    return program


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def planned(request):
    store_type, args, expected = BACKENDS[request.param]
    return request.param, plan(with_claim(store_type, args)), expected


def test_the_class_and_a_claim_on_it(planned):
    backend, p, expected = planned
    (sc,) = p.by_type(SC)
    inputs = sc["inputs"]
    assert inputs["metadata"]["name"] == "llama-dynamic"
    assert inputs["reclaimPolicy"] == "Delete"
    assert inputs["volumeBindingMode"] == "Immediate"
    params = inputs["parameters"]
    assert {k: params[k] for k in expected} == expected
    # The class sits on the store's own storage, never its model directory or share.
    if backend == "efs":  # unknown in a preview: the store's file system's id
        assert any(u.endswith("::llama-fs") for u in sc["propertyDependencies"]["parameters"])
    if backend == "azure-files-nfs":
        assert params["storageAccount"] and params["resourceGroup"]
    claims = {c["inputs"]["metadata"]["name"]: c["inputs"] for c in p.by_type(PVC)}
    assert claims["scratch"]["spec"]["storageClassName"] == "llama-dynamic"
    # The store's own claims stay static, on no class.
    assert {c["spec"]["storageClassName"] for n, c in claims.items() if n != "scratch"} == {""}
    for minor in KUBERNETES_MINORS:
        for obj in (inputs, claims["scratch"]):
            assert validator(minor).errors(obj) == [], (minor, obj["kind"])


def test_no_class_without_dynamic_claims():
    store_type, args, _ = BACKENDS["nfs"]
    p = plan(lambda: store_type("llama", cast(Any, {**args, **READERS})))
    assert p.by_type(SC) == []


REFUSED = [
    (
        LocalModelStore,
        {},
        "llama: dynamic_claims must be false here: local volumes are statically created "
        "PersistentVolumes only (kubernetes.io/docs/concepts/storage/volumes/#local), got true",
    ),
    (
        MountpointS3ModelStore,
        {"cluster_name": CLUSTER},
        "llama: dynamic_claims must be false here: the Mountpoint for S3 CSI driver offers "
        "static provisioning only (awslabs/mountpoint-s3-csi-driver README), got true",
    ),
    (
        EfsModelStore,
        {"cluster_name": CLUSTER, "iam_authorization": True},
        "llama: dynamic_claims must be false here: the node role of iam_authorization mounts "
        "through the store's own access points only, not the driver's per-claim ones, got true",
    ),
    (
        EfsModelStore,
        {"cluster_name": CLUSTER, "root_directory": "/dynamic/models"},
        "llama: dynamic_claims must be false here: root_directory '/dynamic/models' would hold "
        "the claims' base path /dynamic, got true",
    ),
    (
        NfsModelStore,
        {k: v for k, v in NFS.items() if k != "sub_dir"},
        "llama: dynamic_claims must be false here: without sub_dir the readers mount the whole "
        "share, claims' directories too, got true",
    ),
    (
        NfsModelStore,
        {**NFS, "sub_dir": "llama-dynamic/x"},
        "llama: dynamic_claims must be false here: sub_dir 'llama-dynamic/x' is where the "
        "claims' directories go, got true",
    ),
]


@pytest.mark.parametrize(("store_type", "args", "message"), REFUSED)
def test_refused(store_type, args, message):
    assert_refused(
        lambda: store_type("llama", cast(Any, {**args, **READERS, "dynamic_claims": True})),
        message,
    )


def test_the_nfs_chart_installs_the_controller_that_serves_the_class():
    """The class's claims are made by the driver's controller (its csi-provisioner), which the
    chart the store installs renders with the store's values."""
    release = Release(
        NFS_CSI.chart, NFS_CSI.chart, NFS_CSI.version, "kube-system", json.dumps(HELM_VALUES)
    )
    objects = manifests(render(release))
    provisioners = [
        c
        for o in objects
        if o.get("kind") == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
        if "csi-provisioner" in c["image"]
    ]
    assert provisioners, "no csi-provisioner in the rendered chart"


def test_a_deleted_efs_claim_keeps_its_files_and_the_docs_say_so():
    """The EFS driver's DeleteVolume deletes a claim's access point, and its directory only
    when the controller runs with ``--delete-access-point-root-dir`` (kubernetes-sigs/
    aws-efs-csi-driver ``pkg/driver/controller.go`` DeleteVolume, ``docs/parameters.md``): off
    in the pinned chart (``controller.deleteAccessPointRootDir: false``) and left off by the
    store's install. So a deleted claim's files stay on the file system, billed, and the docs
    must say so where they offer ``dynamic_claims``, not that claims go with their data."""
    p = plan(with_claim(EfsModelStore, {"cluster_name": CLUSTER}))
    (state,) = p.by_type(RELEASE)
    rendered = render(release_of(state))
    assert rendered.ok, rendered.output
    args = [
        arg
        for o in manifests(rendered)
        if o.get("kind") == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
        for arg in c.get("args", [])
    ]
    assert "--delete-access-point-root-dir=false" in args
    said = "On efs a deleted claim keeps its files"
    for page in ("docs/configuration.md", "docs/backends/aws/efs.md"):
        assert said in " ".join((ROOT / page).read_text().split()), page
    doc = " ".join(fields_of(EfsModelStoreArgs)["dynamic_claims"].doc.split())
    assert "EFS keeps a deleted claim's files" in doc
