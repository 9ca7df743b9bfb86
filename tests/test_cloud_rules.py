"""The template runs each cloud's rules (``ModelStore.cloud_rules``: the cluster named, the
cloud's tags or labels) after the common contract and before the backend's rules, and each cloud
has one "cluster is named" rule."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest

from pulumi_modelstore.aws import EfsModelStore, FsxLustreModelStore, MountpointS3ModelStore
from pulumi_modelstore.azure import AzureBlobModelStore, AzureFilesNfsModelStore
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.gcp import GcsFuseModelStore, HyperdiskMlModelStore
from pulumi_modelstore.store import ModelStore

COMMON = "llama: readers must be a DNS-1123 label"
EKS_FACTS = (
    "llama: cluster_name is missing; "
    "it must be the EKS cluster's name (or give vpc_id, cluster_subnet_ids and "
    "node_security_group_ids explicitly)"
)
GKE = "llama: cluster_name is missing; it must be the GKE cluster's name"
AKS = "llama: cluster_name is missing; it must be the AKS cluster's name"
HYPERDISK = {"source_uri": "gs://models/llama/", "model_revision": "Bad_Revision", "size_gib": 64}

# (store class, its fields, the cloud rule's line, the backend rule's line)
CASES: list[tuple[type[ModelStore], dict[str, Any], str, str]] = [
    (FsxLustreModelStore, {"deployment_type": "X"}, EKS_FACTS, "llama: deployment_type"),
    (EfsModelStore, {"throughput_mode": "burst"}, EKS_FACTS, "llama: throughput_mode"),
    # S3 needs the cluster's name only for what it makes there (its own rule): the tags here.
    (
        MountpointS3ModelStore,
        {"cache": "disk", "cluster_name": "prod", "tags": {"aws:team": "ml"}},
        "llama: tags",
        "llama: cache",
    ),
    (GcsFuseModelStore, {"tuning": "fast"}, GKE, "llama: tuning"),
    (HyperdiskMlModelStore, HYPERDISK, GKE, "llama: model_revision"),
    (AzureBlobModelStore, {"mount_mode": "fuse"}, AKS, "llama: mount_mode"),
    (AzureFilesNfsModelStore, {"sku_name": "Standard_LRS"}, AKS, "llama: sku_name"),
]


@pytest.mark.parametrize(
    ("store", "backend", "cloud", "own"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_the_cloud_rules_run_between_the_common_contract_and_the_backends(
    store: type[ModelStore], backend: dict[str, Any], cloud: str, own: str
) -> None:
    with pytest.raises(ModelStoreInputError) as err:
        store.validate("llama", {"readers": ["Bad_NS"], **backend})
    lines = str(err.value).splitlines()
    assert len(lines) == 3, lines
    assert lines[0].startswith(COMMON)
    assert lines[1].startswith(cloud)
    assert lines[2].startswith(own)


def test_each_cloud_has_one_cluster_rule_the_template_calls() -> None:
    """The hand calls are gone: no backend overrides ``cloud_rules``; each cloud's base does."""
    owners = {
        store.__name__: next(k for k in store.__mro__ if "cloud_rules" in vars(k)).__name__
        for store, *_ in CASES
    }
    assert owners == {
        "FsxLustreModelStore": "AwsModelStore",
        "EfsModelStore": "AwsModelStore",
        "MountpointS3ModelStore": "AwsModelStore",
        "GcsFuseModelStore": "GcpModelStore",
        "HyperdiskMlModelStore": "GcpModelStore",
        "AzureBlobModelStore": "AzureModelStore",
        "AzureFilesNfsModelStore": "AzureModelStore",
    }


@pytest.mark.parametrize("store", [FsxLustreModelStore, EfsModelStore])
def test_a_cluster_name_to_look_up_is_a_plain_string_before_anything_registers(
    store: type[ModelStore],
) -> None:
    """FSx read the cluster at preflight only; the one AWS rule refuses it in ``validate``."""
    loop = asyncio.new_event_loop()  # an Output needs one; no program runs here
    asyncio.set_event_loop(loop)
    try:
        name = pulumi.Output.from_input("prod")
        with pytest.raises(ModelStoreInputError) as err:
            store.validate("llama", {"readers": ["inference"], "cluster_name": name})
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    assert str(err.value) == (
        "llama: cluster_name must be the name of an existing EKS cluster, a plain string (it is "
        "looked up before deploy); for a cluster this program makes, give "
        "cluster=EksCluster.from_cluster('<name>', <the cluster>, ...), got '<Output>'"
    )


def test_the_s3_store_needs_no_cluster_when_it_makes_nothing_on_it() -> None:
    MountpointS3ModelStore.validate("llama", {"readers": ["inference"], "driver_install": "none"})
