"""An args field typed ``pulumi.Input[...]`` (or a list or mapping of them) takes an Output:
the type a user's checker reads says what the library does at run time (issue 18).

Each component is planned once with every such field given as an Output of a value it accepts,
and each value reaches the plan's resources. The table lists exactly the fields so typed, so a
field newly typed ``Input`` needs a row here, and a row for a field typed plain fails.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pulumi
import pytest

from pulumi_modelstore.aws import (
    EbsCsiDriver,
    EbsModelCache,
    EfsModelStore,
    EksCluster,
    FsxLustreModelStore,
    MountpointS3ModelStore,
)
from pulumi_modelstore.azure import AzureBlobModelStore, AzureFilesNfsModelStore
from pulumi_modelstore.fields import fields_of
from pulumi_modelstore.gcp import GcsFuseModelStore
from pulumi_modelstore.local import LocalModelStore
from pulumi_modelstore.nfs import NfsModelStore
from pulumi_modelstore.plan.engine import plan_program
from pulumi_modelstore.schema import components
from tests.conftest import AWS_CONFIG, CLUSTER, assert_refused

KMS = "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
KMS_2 = KMS.replace("1234abcd", "5678abcd")
SG = "sg-0a1b2c3d4e5f6a0b1"
NODE_SG = "sg-0a1b2c3d4e5f6a0b2"
VPC = "vpc-0a1b2c3d4e5f6a0b3"
SUBNET = "subnet-0a1b2c3d4e5f6a0b4"
SUB = "00000000-0000-0000-0000-000000000000"
NET = f"/subscriptions/{SUB}/resourceGroups/ml-rg/providers/Microsoft.Network/virtualNetworks"
AZ_SUBNET = f"{NET}/ml-vnet/subnets/ml-nodes"
PE_SUBNET = f"{NET}/ml-vnet/subnets/endpoints"
DNS_ZONE = (
    f"/subscriptions/{SUB}/resourceGroups/dns/providers/Microsoft.Network/privateDnsZones/"
    "privatelink.blob.core.windows.net"
)
GCP_KMS = "projects/acme-kms/locations/us-central1/keyRings/models/cryptoKeys/weights"
EKS_FACTS = {"vpc_id": VPC, "node_security_group_ids": [NODE_SG], "region": "us-west-2"}
# The stores that take the cluster's facts (EksClusterArgs' fields): the EksCluster row tests
# those fields once, through a store on the scope.
ON_EKS = (EfsModelStore, FsxLustreModelStore, MountpointS3ModelStore)
EKS = {"cluster_name": CLUSTER, "readers": ["inference"]}
GKE = {"cluster_name": "ml-gke", "location": "us-central1", "readers": ["inference"]}
AKS = {"cluster_name": "ml", "cluster_resource_group_name": "ml-rg", "readers": ["inference"]}
CACHE = {"readers": ["inference"], "volume_size": "100Gi", "loader": {"image": "python:3.12"}}

# (component, the plain args, the fields given as Outputs (their values), config); a component
# whose Input fields exclude one another has a row per set.
ROWS: list[tuple[type, dict[str, Any], dict[str, Any], dict[str, str]]] = [
    (EksCluster, {"cluster_name": CLUSTER}, EKS_FACTS, AWS_CONFIG),
    (
        EfsModelStore,
        EKS,
        {
            "security_group_id": SG,
            "kms_key_arn": KMS,
            "extra_mount_options": ["noresvport"],
        },
        AWS_CONFIG,
    ),
    (
        FsxLustreModelStore,
        {**EKS, "deployment_type": "PERSISTENT_2", "file_system_type_version": "2.15"},
        {
            "security_group_id": SG,
            "kms_key_arn": KMS,
            "subnet_ids": [SUBNET],
            "data_repository_path": "s3://acme-weights/llama",
            "file_system_path": "/llama-weights",
            "per_unit_storage_throughput": 500,
            "data_compression_type": "LZ4",
            "metadata_iops": 12000,
        },
        AWS_CONFIG,
    ),
    (
        FsxLustreModelStore,
        {
            **EKS,
            "deployment_type": "PERSISTENT_1",
            "storage_type": "HDD",
            "storage_capacity_gib": 6000,
        },
        {"drive_cache_type": "READ"},
        AWS_CONFIG,
    ),
    (
        MountpointS3ModelStore,
        EKS,
        {
            "bucket_name": "acme-weights",
            "bucket_region": "us-east-2",
            "kms_key_arn": KMS,
            "extra_mount_options": ["max-threads 32"],
        },
        AWS_CONFIG,
    ),
    (
        EbsCsiDriver,
        {"cluster_name": CLUSTER},
        {
            "kms_key_arn": KMS,
            "kms_key_arns": [KMS_2],
            "region": "us-west-2",
            "volume_tags": {"team": "ml-serving"},
            "snapshot_class_parameters": {"tagSpecification_1": "owner=ml-serving"},
        },
        AWS_CONFIG,
    ),
    (EbsModelCache, CACHE, {"kms_key_arn": KMS, "volume_tags": {"team": "ml-serving"}}, AWS_CONFIG),
    (
        EbsModelCache,
        CACHE,
        {"storage_class_name": "gp3-shared", "snapshot_class_name": "ebs-snaps-shared"},
        AWS_CONFIG,
    ),
    (
        GcsFuseModelStore,
        GKE,
        {"bucket_name": "acme-weights", "extra_mount_options": ["file-cache:max-size-mb:4096"]},
        {"gcp:project": "acme-ml"},
    ),
    # A key for the bucket the store makes.
    (GcsFuseModelStore, GKE, {"kms_key_name": GCP_KMS}, {"gcp:project": "acme-ml"}),
    (
        AzureBlobModelStore,
        AKS,
        {
            "allowed_subnet_ids": [AZ_SUBNET],
            "extra_mount_options": ["--block-cache-timeout=120"],
        },
        {},
    ),
    (
        AzureBlobModelStore,
        AKS,
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": DNS_ZONE},
        {},
    ),
    (
        AzureFilesNfsModelStore,
        AKS,
        {
            "allowed_subnet_ids": [AZ_SUBNET],
        },
        {},
    ),
    (
        AzureFilesNfsModelStore,
        AKS,
        {"private_endpoint_subnet_id": PE_SUBNET, "private_dns_zone_id": DNS_ZONE},
        {},
    ),
    (LocalModelStore, {"readers": ["inference"]}, {"node_name": "gpu-node-7"}, {}),
    (
        NfsModelStore,
        {"readers": ["inference"]},
        {
            "server": "10.20.0.2",
            "share": "/exports/weights",
            "sub_dir": "llama",
            "extra_mount_options": ["nconnect=8"],
        },
        {},
    ),
]


def takes_output(annotation: Any) -> bool:
    """Whether ``annotation`` is ``pulumi.Input[...]``, or a list or mapping of them."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if any(typing.get_origin(a) is pulumi.Output for a in args):
        return True
    if origin in (Sequence, list) and args:
        return takes_output(args[0])
    if origin in (Mapping, dict) and len(args) == 2:
        return takes_output(args[1])
    return False


def args_type(component: type) -> Any:
    return typing.get_type_hints(component.__init__)["args"]


def as_outputs(value: Any) -> Any:
    """``value`` as a user gives one from another resource: a list (or mapping) of Outputs,
    else one Output."""
    if isinstance(value, list):
        return [pulumi.Output.from_input(v) for v in value]
    if isinstance(value, dict):
        return {k: pulumi.Output.from_input(v) for k, v in value.items()}
    return pulumi.Output.from_input(value)


def program(component: type, plain: dict[str, Any], given: dict[str, Any]) -> Callable[[], Any]:
    def run() -> None:
        args = {**plain, **{name: as_outputs(v) for name, v in given.items()}}
        if component is EksCluster:  # a scope makes nothing of its own: stores use its facts
            # The EFS store's security group goes in the VPC, the S3 store's role names the
            # region: both on the scope.
            scope = EksCluster(CLUSTER, args)
            EfsModelStore("llama", {"cluster": scope, "readers": ["inference"]})
            MountpointS3ModelStore("qwen", {"cluster": scope, "readers": ["inference"]})
        else:
            component("llama", args)

    return run


def test_the_table_lists_exactly_the_fields_typed_input():
    typed = {
        (c.__name__, name)
        for c in components()
        for name, field in fields_of(args_type(c)).items()
        if takes_output(field.annotation)
    }
    listed = {(c.__name__, name) for c, _, given, _ in ROWS for name in given}
    listed |= {(c.__name__, name) for c in ON_EKS for name in EKS_FACTS}
    assert listed == typed


@pytest.mark.parametrize(
    "component, plain, given, config",
    ROWS,
    ids=[f"{r[0].__name__}-{'-'.join(r[2])[:40]}" for r in ROWS],
)
def test_a_field_typed_input_takes_an_output_and_its_value_reaches_the_plan(
    component, plain, given, config
):
    plan = plan_program(program(component, plain, given), config=config)
    inputs = json.dumps([s["inputs"] for s in plan.states()])
    assert "Calling __str__ on an Output" not in inputs  # an Output formatted as a string
    for name, value in given.items():
        values = value.values() if isinstance(value, dict) else value
        for one in values if isinstance(value, dict | list) else [value]:
            assert json.dumps(one).strip('"') in inputs, (name, one)


def _output(value: Any) -> Any:
    return pulumi.Output.from_input(value)


# Fields typed plain because the store writes them before deploy: an Output is refused at plan
# time with the field named (before, it was written into volume handles and role scopes as
# Pulumi's "Calling __str__ on an Output" text, or crashed the IRSA trust).
KNOWN_BEFORE_DEPLOY = [
    (
        "azure resource_group_name",
        lambda: AzureBlobModelStore("llama", {**AKS, "resource_group_name": _output("ml-rg")}),
        "llama: resource_group_name must be a resource group name (1-90 letters, digits, '_', "
        "'-', '.', '(' and ')', not ending with '.'), known before deploy (it is written into "
        "volume handles and role scopes), got '<Output>'",
    ),
    (
        "azure storage_account_name",
        lambda: AzureBlobModelStore(
            "llama", {**AKS, "storage_account_name": _output("acmellamamodels")}
        ),
        "llama: storage_account_name must be a storage account name (3-24 lowercase letters and "
        "digits, unique in Azure), known before deploy (it is written into volume handles and "
        "role scopes), got '<Output>'",
    ),
    (
        "eks oidc_issuer",
        lambda: EfsModelStore(
            "llama",
            {
                **EKS,
                **EKS_FACTS,
                "oidc_issuer": _output("https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"),
            },
        ),
        "llama: oidc_issuer must be an https:// URL without a query (IAM OIDC providers take "
        "only https issuers), e.g. https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE, known "
        "before deploy (IRSA trust policies name it in their condition keys), got '<Output>'",
    ),
]


@pytest.mark.parametrize(
    ("program", "message"),
    [row[1:] for row in KNOWN_BEFORE_DEPLOY],
    ids=[row[0] for row in KNOWN_BEFORE_DEPLOY],
)
def test_a_name_written_before_deploy_refuses_an_output(program: Any, message: str) -> None:
    assert_refused(program, message, config=AWS_CONFIG)
