"""Every value that reaches an AWS API is checked at plan time (issue 7, the AWS part).

- A table of bad inputs across the AWS backends (fsx-lustre, efs, mountpoint-s3) and the EBS
  components (EbsCsiDriver, EbsModelCache): each refused with one exact line per problem
  before anything registers, and by ``validate()`` without a lookup.
- Explicit cluster facts plan offline: the placeholder answers agree with what the program gave,
  and an error names the field the user gave.
- Names the library derives from long store and cluster names stay within the APIs' limits.
- Every derived AWS name and tag of every stack and example is within its API's limits, checked
  against botocore's service models (the request shapes' min, max and pattern) and, where a
  model states none, the API reference's rule.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import botocore
import pytest

from pulumi_modelstore import ModelStoreInputError
from pulumi_modelstore.aws import (
    EbsCsiDriver,
    EbsModelCache,
)
from pulumi_modelstore.aws.names import physical_name
from pulumi_modelstore.extras import CLOUD_ROOMS
from pulumi_modelstore.plan.engine import UNKNOWN, Plan, PlanError, plan_program
from pulumi_modelstore.plan.placeholders import digest
from pulumi_modelstore.program import BACKENDS
from tests.conftest import AWS_CONFIG, CLUSTER, all_programs, assert_refused, plan

# The AWS stores on an EKS cluster; the EBS cache's rows are EbsModelCache's (no cluster_name).
STORES: dict[str, Any] = {
    name: BACKENDS[name]
    for name in CLOUD_ROOMS["aws"].backends
    if BACKENDS[name] is not EbsModelCache
}
LOADER = {"image": "python:3.12-slim"}
SG = "aws:ec2/securityGroup:SecurityGroup"
FS = "aws:fsx/lustreFileSystem:LustreFileSystem"
MOUNT_TARGET = "aws:efs/mountTarget:MountTarget"
BUCKET = "aws:s3/bucket:Bucket"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
GET_SUBNET = "aws:ec2/getSubnet:getSubnet"
GET_CLUSTER = "aws:eks/getCluster:getCluster"
VPC = "vpc-0a1b2c3d4e5f60718"
SUBNETS = ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"]
NODE_SG = "sg-0a1b2c3d4e5f60003"
FACTS = {"vpc_id": VPC, "cluster_subnet_ids": SUBNETS, "node_security_group_ids": [NODE_SG]}


def build(backend: str, name: str, args: dict[str, Any]) -> Callable[[], Any]:
    """A program making one store or EBS component of ``backend`` named ``name``."""
    if backend in STORES:
        fields = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
        return lambda: STORES[backend](name, fields)
    if backend == "EbsCsiDriver":
        return lambda: EbsCsiDriver(name, {"cluster_name": CLUSTER, **args})
    fields = {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER, **args}
    return lambda: EbsModelCache(name, fields)


def validate(backend: str, name: str, args: dict[str, Any]) -> None:
    if backend in STORES:
        STORES[backend].validate(name, {"cluster_name": CLUSTER, "readers": ["inference"], **args})
    elif backend == "EbsCsiDriver":
        EbsCsiDriver.validate(name, {"cluster_name": CLUSTER, **args})
    else:
        fields = {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER, **args}
        EbsModelCache.validate(name, fields)


def many(n: int) -> dict[str, str]:
    return {f"k{i}": "v" for i in range(n)}


def registered(err: pytest.ExceptionInfo[PlanError]) -> list[str]:
    return [u.rsplit("::", 1)[-1] for u in err.value.registered]


# Refused on input: nothing registers but the stack.
NOTHING = ["modelstore-test"]

AWS_PREFIX = "keys that do not start with aws: (AWS reserves the prefix, in any case)"
TAG_CHARS = "letters, digits, spaces and _ . : / = + - @"
STORE_TAGS = "Name, modelstore.pulumi.com/store, app.kubernetes.io/managed-by"
REGION = "an AWS region code such as us-west-2"
CLUSTER_NAME = (
    "an EKS cluster name (1 to 100 letters, digits, '-' and '_', starting with a letter or digit)"
)
ADDON = "an add-on version such as v1.2.3-eksbuild.1"
KMS = "a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key-id>;"
ROOT_DIRECTORY = (
    "at most 4 directories below '/' (e.g. /models/llama), without a trailing '/' or '//', "
    "none starting with '.', and none of $ # < > ; ` | & ? { } ^ * (EFS access point paths)"
)
SG_PREFIX = (
    "a name not starting with sg- (EC2 refuses security group names starting with sg-, and the "
    "store's group is named after it; or give security_group_id)"
)
BUCKET_START = (
    "letters, digits, '.' and '-' only, starting with a letter or digit, without '..' and not "
    "starting with xn--, sthree- or amzn-s3-demo- (the store's new bucket is named after it; or "
    "give bucket_name)"
)
DRIVER_KEYS = (
    "keys other than CSIVolumeName, CSIVolumeSnapshotName, ebs.csi.aws.com/cluster and those "
    "starting with kubernetes.io or aws: (the EBS CSI driver keeps them)"
)
DRIVER_TAGS = (
    "AWS allows 50 per resource and the EBS CSI driver adds CSIVolumeName, "
    "ebs.csi.aws.com/cluster, kubernetes.io/created-for/pvc/name, "
    "kubernetes.io/created-for/pvc/namespace, kubernetes.io/created-for/pv/name, "
    "kubernetes.io/cluster/<cluster>, Name, KubernetesCluster"
)
IDS = "8 or 17 lowercase hex digits"
OIDC_ISSUER = (
    "an https:// URL without a query (IAM OIDC providers take only https issuers), e.g. "
    "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"
)

# (backend, store or component name, args, the exact message)
BAD_INPUTS: list[tuple[str, str, dict[str, Any], str]] = [
    # -- fsx-lustre -------------------------------------------------------------------------
    (
        "fsx-lustre",
        "llama",
        {"tags": {"aws:team": "x"}},
        f"llama: tags must be {AWS_PREFIX}, got 'aws:team'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"tags": {"AWS:Team": "x"}},
        f"llama: tags must be {AWS_PREFIX}, got 'AWS:Team'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"tags": {"k" * 129: "x"}},
        f"llama: tags must be keys of 1 to 128 characters, got '{'k' * 129}'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"tags": {"team": "v" * 257}},
        f"llama: tags must be values of at most 256 characters, got '{'v' * 257}'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"tags": {"team": "a,b"}},
        f"llama: tags must be values of {TAG_CHARS}, got 'a,b'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"tags": {"team!": "x"}},
        f"llama: tags must be keys of {TAG_CHARS}, got 'team!'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"tags": many(48)},
        f"llama: tags must be at most 47 tags (AWS allows 50 per resource and the store adds "
        f"{STORE_TAGS}), got 48",
    ),
    (
        "fsx-lustre",
        "llama",
        {"region": "us-west"},
        f"llama: region must be {REGION}, got 'us-west'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"region": "US-WEST-2"},
        f"llama: region must be {REGION}, got 'US-WEST-2'",
    ),
    (
        "fsx-lustre",
        "llama",
        {**FACTS, "cluster_name": None, "vpc_id": "vpc-0a"},
        f"llama: vpc_id must be a VPC id (vpc- and {IDS}), got 'vpc-0a'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"node_security_group_ids": ["sg-0c"]},
        f"llama: node_security_group_ids must be security group ids (sg- and {IDS}), got 'sg-0c'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"cluster_subnet_ids": ["subnet-XYZ"]},
        f"llama: cluster_subnet_ids must be subnet ids (subnet- and {IDS}), got 'subnet-XYZ'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"security_group_id": "sg-123"},
        f"llama: security_group_id must be a security group id (sg- and {IDS}), got 'sg-123'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"subnet_ids": ["subnet-0a"]},
        f"llama: subnet_ids must be subnet ids (subnet- and {IDS}), got 'subnet-0a'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"data_repository_path": "s3://acme/llama/", "imported_file_chunk_size_mib": 600000},
        "llama: imported_file_chunk_size_mib must be a whole number of MiB from 1 to 512000 "
        "(FSx's limit), got 600000",
    ),
    (
        "fsx-lustre",
        "llama",
        {"imported_file_chunk_size_mib": 1024},
        "llama: imported_file_chunk_size_mib must be unset unless data_repository_path or an "
        "s3:// model source is set (it is the data repository association's chunk size for "
        "imported files), got 1024",
    ),
    (
        "fsx-lustre",
        "llama",
        {"cluster_name": "prod_eks!"},
        f"llama: cluster_name must be {CLUSTER_NAME}, got 'prod_eks!'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"cluster_name": "-prod"},
        f"llama: cluster_name must be {CLUSTER_NAME}, got '-prod'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"cluster_name": "c" * 101},
        f"llama: cluster_name must be {CLUSTER_NAME}, got '{'c' * 101}'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"driver_install": "eks-addon", "eks_addon_version": "1.9.0"},
        f"llama: eks_addon_version must be {ADDON}, got '1.9.0'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"data_repository_path": "s3://acme/" + "a" * 4400},
        "llama: data_repository_path must be an S3 URI of at most 4357 characters, got "
        f"'s3://acme/{'a' * 4400}'",
    ),
    ("fsx-lustre", "sg-llama", {}, f"sg-llama: store name must be {SG_PREFIX}, got 'sg-llama'"),
    (
        "fsx-lustre",
        "llama",
        {"kms_key_arn": "arn:aws:kms:us-west-2:123456789012:key/not-a-uuid"},
        f"llama: kms_key_arn must be {KMS} the provider takes the key's ARN), got "
        "'arn:aws:kms:us-west-2:123456789012:key/not-a-uuid'",
    ),
    (
        "fsx-lustre",
        "llama",
        {**FACTS, "cluster_name": None, "driver": "eks-addon"},
        "llama: cluster_name is missing; it must be set when driver is eks-addon",
    ),
    # -- efs ----------------------------------------------------------------------------------
    (
        "efs",
        "llama",
        {"throughput_mode": "provisioned", "provisioned_throughput_in_mibps": 3415},
        "llama: provisioned_throughput_in_mibps must be from 1 to 3414 MiB/s (EFS's limit; more "
        "needs AWS Support to raise it), got 3415",
    ),
    (
        "efs",
        "llama",
        {"throughput_mode": "provisioned", "provisioned_throughput_in_mibps": 0.5},
        "llama: provisioned_throughput_in_mibps must be from 1 to 3414 MiB/s (EFS's limit; more "
        "needs AWS Support to raise it), got 0.5",
    ),
    (
        "efs",
        "llama",
        {"root_directory": "/models/"},
        f"llama: root_directory must be {ROOT_DIRECTORY}, got '/models/'",
    ),
    (
        "efs",
        "llama",
        {"root_directory": "/a/b/c/d/e"},
        f"llama: root_directory must be {ROOT_DIRECTORY}, got '/a/b/c/d/e'",
    ),
    (
        "efs",
        "llama",
        {"root_directory": "/models/.cache"},
        f"llama: root_directory must be {ROOT_DIRECTORY}, got '/models/.cache'",
    ),
    (
        "efs",
        "llama",
        {"root_directory": "/models//llama"},
        f"llama: root_directory must be {ROOT_DIRECTORY}, got '/models//llama'",
    ),
    (
        "efs",
        "llama",
        {"root_directory": "/models/$HOME"},
        f"llama: root_directory must be {ROOT_DIRECTORY}, got '/models/$HOME'",
    ),
    (
        "efs",
        "llama",
        {"tags": {"aws:cloudformation:stack": "x"}},
        f"llama: tags must be {AWS_PREFIX}, got 'aws:cloudformation:stack'",
    ),
    (
        "efs",
        "llama",
        {"tags": many(48)},
        f"llama: tags must be at most 47 tags (AWS allows 50 per resource and the store adds "
        f"{STORE_TAGS}), got 48",
    ),
    (
        "efs",
        "llama",
        {"subnet_ids": ["subnet-0a"]},
        f"llama: subnet_ids must be subnet ids (subnet- and {IDS}), got 'subnet-0a'",
    ),
    (
        "efs",
        "llama",
        {"security_group_id": "sg-xyz"},
        f"llama: security_group_id must be a security group id (sg- and {IDS}), got 'sg-xyz'",
    ),
    ("efs", "llama", {"region": "mars-1"}, f"llama: region must be {REGION}, got 'mars-1'"),
    (
        "efs",
        "llama",
        {"driver_install": "eks-addon", "eks_addon_version": "v3.4.1"},
        f"llama: eks_addon_version must be {ADDON}, got 'v3.4.1'",
    ),
    ("efs", "sg-llama", {}, f"sg-llama: store name must be {SG_PREFIX}, got 'sg-llama'"),
    (
        "efs",
        "llama",
        {"cluster_name": "a" * 101},
        f"llama: cluster_name must be {CLUSTER_NAME}, got '{'a' * 101}'",
    ),
    (
        "efs",
        "llama",
        {"posix_uid": 4294967296},
        "llama: posix_uid must be a whole number from 1 to 4294967295 (0, root, would be "
        "squashed: the store grants no ClientRootAccess), got 4294967296",
    ),
    (
        "efs",
        "llama",
        {"kms_key_arn": "alias/models"},
        f"llama: kms_key_arn must be {KMS} the provider refuses a key id or an alias), got "
        "'alias/models'",
    ),
    (
        "efs",
        "llama",
        {"node_security_group_ids": ["sg-0123456789abcdef"]},
        "llama: node_security_group_ids must be security group ids (sg- and 8 or 17 lowercase "
        "hex digits), got 'sg-0123456789abcdef'",
    ),
    # -- values that planned and failed at deploy or mount (issue 14) -------------------------
    *[
        (
            "fsx-lustre",
            "llama",
            {"data_repository_path": path},
            "llama: data_repository_path must be an S3 URI of the form s3://bucket[/prefix] with "
            f"a valid bucket name, got '{path}'",
        )
        for path in (
            "s3://xn--acme/llama/",
            "s3://acme-s3alias/llama/",
            "s3://10.0.0.1/llama/",
            "s3://amzn-s3-demo-acme/llama/",
            "s3://acme--x-s3/llama/",
        )
    ],
    (
        "fsx-lustre",
        "llama",
        {"kms_key_arn": "arn:aws:kms:uswest:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
        f"llama: kms_key_arn must be {KMS} the provider takes the key's ARN), got "
        "'arn:aws:kms:uswest:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'",
    ),
    (
        "efs",
        "llama",
        {"extra_mount_options": ["tls", "nconnect=32"]},
        "llama: extra_mount_options must be nconnect=<a whole number from 1 to 16> (the Linux "
        "NFS client's range), got 'nconnect=32'",
    ),
    (
        "efs",
        "llama",
        {"extra_mount_options": ["timeo=0"]},
        "llama: extra_mount_options must be timeo=<a whole number from 1 to 2147483647> (the "
        "Linux NFS client's range), got 'timeo=0'",
    ),
    (
        "efs",
        "llama",
        {"transition_to_ia": "AFTER_30_DAYS", "transition_to_archive": "AFTER_14_DAYS"},
        "llama: transition_to_archive must be later than transition_to_ia (AFTER_30_DAYS): EFS "
        "moves files to IA before Archive, got 'AFTER_14_DAYS'",
    ),
    (
        "efs",
        "llama",
        {"transition_to_ia": "AFTER_30_DAYS", "transition_to_archive": "AFTER_30_DAYS"},
        "llama: transition_to_archive must be later than transition_to_ia (AFTER_30_DAYS): EFS "
        "moves files to IA before Archive, got 'AFTER_30_DAYS'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"kms_key_arn": "arn:aws:kms:eu:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
        f"llama: kms_key_arn must be {KMS} an alias does not work in an IAM policy's Resource), "
        "got 'arn:aws:kms:eu:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"oidc_issuer": "http://oidc.eks.us-west-2.amazonaws.com/id/A"},
        f"ebs: oidc_issuer must be {OIDC_ISSUER}, got "
        "'http://oidc.eks.us-west-2.amazonaws.com/id/A'",
    ),
    (  # aws-ebs-csi-driver CreateSnapshot: "Invalid parameter key %s for CreateSnapshot"
        "EbsCsiDriver",
        "ebs",
        {"snapshot_class_parameters": {"fastSnapshotRestore": "us-west-2a"}},
        "ebs: snapshot_class_parameters key must be tagSpecification_<n> or one of the keys the "
        "EBS CSI driver's snapshots read (any case): csi.storage.k8s.io/volumesnapshot/name, "
        "csi.storage.k8s.io/volumesnapshot/namespace, "
        "csi.storage.k8s.io/volumesnapshotcontent/name, fastsnapshotrestoreavailabilityzones, "
        "outpostarn, lockmode, lockduration, lockexpirationdate, lockcooloffperiod, got "
        "'fastSnapshotRestore'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"snapshot_class_parameters": {"lockDuration": "7d"}},
        "ebs: snapshot_class_parameters.lockDuration must be a whole number (a 32-bit "
        "integer), got '7d'",
    ),
    (  # the API server refuses a container without an image, a pod with spaces around it
        "EbsModelCache",
        "llama",
        {"loader": {"image": ""}},
        "llama: loader.image must be a container image reference, not empty and without "
        "leading or trailing whitespace, got ''",
    ),
    (
        "EbsModelCache",
        "llama",
        {"loader": {"image": "python:3.12-slim "}},
        "llama: loader.image must be a container image reference, not empty and without "
        "leading or trailing whitespace, got 'python:3.12-slim '",
    ),
    (  # IAM OIDC providers take only https:// issuers (CreateOpenIDConnectProvider Url)
        "efs",
        "llama",
        {"oidc_issuer": "http://oidc.eks.us-west-2.amazonaws.com/id/A"},
        f"llama: oidc_issuer must be {OIDC_ISSUER}, got "
        "'http://oidc.eks.us-west-2.amazonaws.com/id/A'",
    ),
    (
        "fsx-lustre",
        "llama",
        {"oidc_issuer": "https://oidc.example.com/id/A?x=1"},
        f"llama: oidc_issuer must be {OIDC_ISSUER}, got 'https://oidc.example.com/id/A?x=1'",
    ),
    (  # the install's rules name the field as the stack wrote it (issue 14)
        "efs",
        "llama",
        {"driver_install": "eks-addon", "node_service_account": "efs-node"},
        "llama: node_service_account must be efs-csi-node-sa when driver_install is eks-addon "
        "(the add-on names it), got 'efs-node'",
    ),
    (
        "efs",
        "llama",
        {"driver": "eks-addon", "driver_namespace": "efs-system"},
        "llama: driver_namespace must be kube-system when driver is eks-addon (the add-on "
        "installs there), got 'efs-system'",
    ),
    # -- mountpoint-s3 --------------------------------------------------------------------------
    (
        "mountpoint-s3",
        "llama",
        {"uid": 4294967296},
        "llama: uid must be a whole number from 1 to 4294967295 (a 32-bit Linux id; Mountpoint "
        "refuses 0), got 4294967296",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"gid": -1},
        "llama: gid must be a whole number from 1 to 4294967295 (a 32-bit Linux id; Mountpoint "
        "refuses 0), got -1",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"bucket_region": "moon-1"},
        f"llama: bucket_region must be {REGION}, got 'moon-1'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"region": "us-west-2a"},
        f"llama: region must be {REGION}, got 'us-west-2a'",
    ),
    (
        "mountpoint-s3",
        "Llama_3",
        {"claim_name": "llama"},
        f"Llama_3: store name must be {BUCKET_START}, got 'Llama_3'",
    ),
    (
        "mountpoint-s3",
        "xn--llama",
        {},
        f"xn--llama: store name must be {BUCKET_START}, got 'xn--llama'",
    ),
    (
        "mountpoint-s3",
        "llama..3",
        {"claim_name": "llama"},
        f"llama..3: store name must be {BUCKET_START}, got 'llama..3'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"tags": many(48)},
        f"llama: tags must be at most 47 tags (AWS allows 50 per resource and the store adds "
        f"{STORE_TAGS}), got 48",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"tags": {"team": "a\nb"}},
        f"llama: tags must be values of {TAG_CHARS}, got 'a\\nb'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"eks_addon_version": "v2.7.0"},
        f"llama: eks_addon_version must be {ADDON}, got 'v2.7.0'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"cluster_name": "prod eks"},
        f"llama: cluster_name must be {CLUSTER_NAME}, got 'prod eks'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"vpc_id": "vpc-XYZ"},
        f"llama: vpc_id must be a VPC id (vpc- and {IDS}), got 'vpc-XYZ'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"kms_key_arn": "1234abcd-12ab-34cd-56ef-1234567890ab"},
        f"llama: kms_key_arn must be {KMS} an alias does not work in an IAM policy's Resource), "
        "got '1234abcd-12ab-34cd-56ef-1234567890ab'",
    ),
    (
        "mountpoint-s3",
        "llama",
        {"tags": {"": "x"}},
        "llama: tags must be keys of 1 to 128 characters, got ''",
    ),
    # -- EbsCsiDriver ---------------------------------------------------------------------------
    (
        "EbsCsiDriver",
        "ebs",
        {"tags": {"aws:team": "x"}},
        f"ebs: tags must be {AWS_PREFIX}, got 'aws:team'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"tags": {"kubernetes.io/team": "x"}},
        f"ebs: tags must be {DRIVER_KEYS}, got 'kubernetes.io/team'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"tags": {"CSIVolumeName": "x"}},
        f"ebs: tags must be {DRIVER_KEYS}, got 'CSIVolumeName'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"tags": {"a=b": "x"}},
        "ebs: tags must be keys without '=' (the EBS CSI driver reads each tag as key=value), "
        "got 'a=b'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"driver_install": "eks-addon", "tags": many(50)},
        "ebs: tags must be at most 49 tags (AWS allows 50 per resource and the component adds "
        "app.kubernetes.io/managed-by), got 50",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"tags": many(45)},
        "ebs: tags must be at most 42 tags (with Helm they go on every volume the driver "
        "creates, with the driver's own 8: AWS allows 50 per volume), got 45",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"tags": many(20), "volume_tags": {f"v{i}": "x" for i in range(25)}},
        "ebs: tags must be at most 17 tags (with Helm they go on every volume the driver "
        "creates, with the driver's own 8 and the 25 of volume_tags: AWS allows 50 per volume), "
        "got 20",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"volume_tags": {"aws:x": "y"}},
        f"ebs: volume_tags must be {AWS_PREFIX}, got 'aws:x'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"volume_tags": {"kubernetes.io/x": "y"}},
        f"ebs: volume_tags must be {DRIVER_KEYS}, got 'kubernetes.io/x'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"volume_tags": {"team": "{{ .PVCName }}!"}},
        f"ebs: volume_tags must be values of {TAG_CHARS}, got '{{{{ .PVCName }}}}!'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"volume_tags": many(43)},
        f"ebs: volume_tags must be at most 42 tags ({DRIVER_TAGS}), got 43",
    ),
    ("EbsCsiDriver", "ebs", {"region": "us-west"}, f"ebs: region must be {REGION}, got 'us-west'"),
    (
        "EbsCsiDriver",
        "ebs",
        {"cluster_name": "prod.eks"},
        f"ebs: cluster_name must be {CLUSTER_NAME}, got 'prod.eks'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"driver_install": "eks-addon", "eks_addon_version": "latest"},
        f"ebs: eks_addon_version must be {ADDON}, got 'latest'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"snapshot_class_parameters": {"tagSpecification_1": "team"}},
        "ebs: snapshot_class_parameters.tagSpecification_1 must be a tag as key=value (e.g. "
        "team=ml), got 'team'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"snapshot_class_parameters": {"tagSpecification_1": "aws:x=y"}},
        f"ebs: snapshot_class_parameters.tagSpecification_1 must be {AWS_PREFIX}, got 'aws:x'",
    ),
    (
        "EbsCsiDriver",
        "ebs",
        {"kms_key_arns": ["alias/models"]},
        f"ebs: kms_key_arns must be {KMS} the driver and its IAM policy need the key's ARN, not "
        "an alias), got 'alias/models'",
    ),
    # -- EbsModelCache --------------------------------------------------------------------------
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"aws:owner": "x"}},
        f"llama: volume_tags must be {AWS_PREFIX}, got 'aws:owner'",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"CSIVolumeSnapshotName": "x"}},
        f"llama: volume_tags must be {DRIVER_KEYS}, got 'CSIVolumeSnapshotName'",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"ebs.csi.aws.com/cluster": "true"}},
        f"llama: volume_tags must be {DRIVER_KEYS}, got 'ebs.csi.aws.com/cluster'",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"team": "v" * 257}},
        f"llama: volume_tags must be values of at most 256 characters, got '{'v' * 257}'",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"te,am": "x"}},
        f"llama: volume_tags must be keys of {TAG_CHARS}, got 'te,am'",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": many(43)},
        f"llama: volume_tags must be at most 42 tags ({DRIVER_TAGS}), got 43",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"a=b": "c"}},
        "llama: volume_tags must be keys without '=' (the EBS CSI driver reads each tag as "
        "key=value), got 'a=b'",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"": "x"}},
        "llama: volume_tags must be keys of 1 to 128 characters, got ''",
    ),
    (
        "EbsModelCache",
        "llama",
        {"kms_key_arn": "arn:aws:kms:us-west-2:123456789012:alias/models"},
        f"llama: kms_key_arn must be {KMS} the driver and its IAM policy need the key's ARN, not "
        "an alias), got 'arn:aws:kms:us-west-2:123456789012:alias/models'",
    ),
    (
        "EbsModelCache",
        "llama",
        {"volume_tags": {"team": "{{ .PVCName"}},
        f"llama: volume_tags must be values of {TAG_CHARS}, got '{{{{ .PVCName'",
    ),
]

ROW_IDS = [f"{i}-{backend}-{m.split()[1]}" for i, (backend, _, _, m) in enumerate(BAD_INPUTS)]


@pytest.mark.parametrize(("backend", "name", "args", "message"), BAD_INPUTS, ids=ROW_IDS)
def test_bad_input_is_refused_with_an_exact_message_before_anything_registers(
    backend, name, args, message
):
    assert_refused(build(backend, name, args), message)


@pytest.mark.parametrize(("backend", "name", "args", "message"), BAD_INPUTS, ids=ROW_IDS)
def test_validate_refuses_the_same_without_a_lookup(backend, name, args, message):
    with pytest.raises(ModelStoreInputError) as err:
        validate(backend, name, args)
    assert str(err.value) == message


def test_the_table_covers_every_aws_backend():
    rows = Counter(backend for backend, *_ in BAD_INPUTS)
    assert set(rows) == {*STORES, "EbsCsiDriver", "EbsModelCache"}
    assert sum(rows.values()) >= 60
    assert min(rows.values()) >= 10


def test_good_values_at_the_limits_plan():
    """The edges the rules allow: 47 tags of 128/256 characters beside the store's own, 17-digit
    and 8-digit ids, a 100-character cluster name, a four-level root directory, the largest
    chunk size and throughput, 32-bit ids, template actions in EBS tag values, unicode tags."""
    tags = {("k" * 124) + f"{i:04d}": "v" * 256 for i in range(47)}
    plan(build("fsx-lustre", "llama", {"tags": tags}))
    plan(build("fsx-lustre", "llama", {"tags": {"équipe": "modèles ml"}}))
    plan(
        build(
            "fsx-lustre",
            "llama",
            {"data_repository_path": "s3://acme/llama/", "imported_file_chunk_size_mib": 512000},
        )
    )
    plan(build("fsx-lustre", "llama", {"security_group_id": "sg-01234567"}))
    plan(build("efs", "llama", {"cluster_name": "c" * 100, "root_directory": "/a/b/c/d"}))
    plan(
        build(
            "efs",
            "llama",
            {"throughput_mode": "provisioned", "provisioned_throughput_in_mibps": 3414},
        )
    )
    plan(build("mountpoint-s3", "llama", {"uid": 4294967295, "gid": 1, "region": "us-gov-west-1"}))
    plan(build("EbsCsiDriver", "ebs", {"volume_tags": {"pvc": "{{ .PVCName }}"}, "tags": many(41)}))
    plan(
        build(
            "efs",
            "llama",
            {
                "transition_to_ia": "AFTER_1_DAY",
                "transition_to_archive": "AFTER_7_DAYS",
                "extra_mount_options": ["nconnect=16"],
            },
        )
    )
    plan(build("fsx-lustre", "llama", {"data_repository_path": "s3://acme.models-1/llama/"}))
    parameters = {
        "tagSpecification_1": "team=ml",
        "FastSnapshotRestoreAvailabilityZones": "us-west-2a",
        "lockMode": "governance",
        "lockDuration": "7",
    }
    plan(build("EbsCsiDriver", "ebs", {"snapshot_class_parameters": parameters}))


# -- explicit cluster facts plan offline --------------------------------------------------------


def facts_store(backend: str, **args: Any) -> Callable[[], Any]:
    fields = {"readers": ["inference"], **FACTS, **args}
    return lambda: STORES[backend]("llama", fields)


@pytest.mark.parametrize("backend", ["fsx-lustre", "efs"])
def test_explicit_cluster_facts_plan_offline_without_any_override(backend):
    p = plan(facts_store(backend, region="eu-west-1"))
    assert GET_CLUSTER not in {i["token"] for i in p.invokes}
    (sg,) = p.by_type(SG)
    assert sg["inputs"]["vpcId"] == VPC
    if backend == "fsx-lustre":
        assert p.by_type(FS)[0]["inputs"]["subnetIds"] == SUBNETS[0]
    else:
        targets = sorted(t["inputs"]["subnetId"] for t in p.by_type(MOUNT_TARGET))
        assert set(targets) <= set(SUBNETS) and targets
        # The subnets are in the region the store gave: so are their zones.
        assert all(
            t["urn"].split("mount-target-")[-1].startswith("eu-west-1")
            for t in p.by_type(MOUNT_TARGET)
        )


@pytest.mark.parametrize("backend", ["fsx-lustre", "efs"])
def test_a_given_vpc_beside_a_cluster_name_plans_offline(backend):
    """The lookup fills in the rest, in the VPC the store gave."""
    p = plan(
        lambda: STORES[backend](
            "llama", {"readers": ["inference"], "cluster_name": CLUSTER, "vpc_id": VPC}
        )
    )
    assert p.by_type(SG)[0]["inputs"]["vpcId"] == VPC


def test_a_store_subnet_beside_explicit_facts_plans_offline():
    subnet = "subnet-0a1b2c3d4e5f60009"
    p = plan(facts_store("fsx-lustre", subnet_ids=[subnet]))
    assert p.by_type(FS)[0]["inputs"]["subnetIds"] == subnet


def elsewhere(args: dict[str, Any], config: dict[str, str]) -> dict[str, Any]:
    return {"id": args["id"], "vpcId": "vpc-0ffffffffffffffff", "availabilityZone": "us-west-2a"}


@pytest.mark.parametrize("backend", ["fsx-lustre", "efs"])
def test_a_subnet_error_names_cluster_subnet_ids_when_the_subnet_came_from_there(backend):
    assert_refused(
        facts_store(backend),
        f"llama: cluster_subnet_ids must be a subnet in the cluster's VPC {VPC} (it is in "
        f"vpc-0ffffffffffffffff), got '{SUBNETS[0]}'",
        invokes={GET_SUBNET: elsewhere},
    )


@pytest.mark.parametrize("backend", ["fsx-lustre", "efs"])
def test_a_subnet_error_names_subnet_ids_when_the_store_listed_it(backend):
    subnet = "subnet-0a1b2c3d4e5f60009"
    assert_refused(
        facts_store(backend, subnet_ids=[subnet]),
        f"llama: subnet_ids must be a subnet in the cluster's VPC {VPC} (it is in "
        f"vpc-0ffffffffffffffff), got '{subnet}'",
        invokes={GET_SUBNET: elsewhere},
    )


@pytest.mark.parametrize("backend", ["fsx-lustre", "efs"])
def test_a_looked_up_subnet_outside_a_given_vpc_names_vpc_id(backend):
    first = sorted(f"subnet-{digest('subnet', CLUSTER, str(i))}" for i in range(3))[0]
    assert_refused(
        lambda: STORES[backend](
            "llama", {"readers": ["inference"], "cluster_name": CLUSTER, "vpc_id": VPC}
        ),
        f"llama: vpc_id must be the VPC of the cluster's subnets (the cluster's subnet {first} "
        f"is in vpc-0ffffffffffffffff), got '{VPC}'",
        invokes={GET_SUBNET: elsewhere},
    )


# -- names derived from long store and cluster names -----------------------------------------


def test_a_long_store_name_gets_a_shortened_bucket_name_the_same_on_every_run():
    name = "a-very-long-model-store-name-for-llama-3-70b-instruct"  # 52 characters
    p = plan(build("mountpoint-s3", name, {"claim_name": "llama"}))
    bucket = p.by_type(BUCKET)[0]["inputs"]["bucket"]
    assert len(bucket) <= 63 and bucket.startswith(name[:40])
    assert (
        bucket
        == plan(build("mountpoint-s3", name, {"claim_name": "llama"})).by_type(BUCKET)[0]["inputs"][
            "bucket"
        ]
    )
    # Another stack, another name: bucket names are global.
    other = plan_program(
        build("mountpoint-s3", name, {"claim_name": "llama"}), stack="other", config=AWS_CONFIG
    )
    assert other.by_type(BUCKET)[0]["inputs"]["bucket"] != bucket


def test_a_short_store_name_keeps_pulumi_auto_naming():
    p = plan(build("mountpoint-s3", "llama", {"writers": ["loader"]}))
    assert "bucket" not in p.by_type(BUCKET)[0]["inputs"]
    assert all("name" not in r["inputs"] for r in p.by_type(ROLE) + p.by_type(ROLE_POLICY))


def test_long_derived_iam_names_are_shortened_within_iam_limits():
    store = "llama-3-70b-instruct"
    namespace = "inference-serving-production-team"
    p = plan(
        build("mountpoint-s3", store, {"readers": [namespace], "authentication_source": "pod"})
    )
    (role,) = p.by_type(ROLE)
    assert len(f"{store}-pod-{namespace}-role") + 8 > 64  # the auto-name would not fit
    assert len(role["inputs"]["name"]) <= 64
    assert role["inputs"]["name"].startswith(f"{store}-pod-")


def test_a_long_cluster_name_shortens_the_shared_node_role_name():
    cluster = "c" * 100
    p = plan(build("efs", "llama", {"cluster_name": cluster, "iam_authorization": True}))
    (role,) = p.by_type(ROLE)
    assert len(role["inputs"]["name"]) <= 64


def test_physical_name_is_none_where_the_auto_name_fits():
    assert physical_name("x" * 56, 64) is None


# -- every derived AWS name and tag of every stack and example is within its API's limits -------

BOTOCORE_DATA = Path(botocore.__file__).parent / "data"


@cache
def shape(service: str, name: str) -> dict[str, Any]:
    """A request shape of ``service``'s newest model in botocore."""
    directory = sorted((BOTOCORE_DATA / service).iterdir())[-1]
    path = directory / "service-2.json"
    model = (
        json.loads(path.read_text())
        if path.exists()
        else json.loads(gzip.decompress((directory / "service-2.json.gz").read_bytes()))
    )
    return model["shapes"][name]


def _java_pattern(pattern: str, value: str) -> tuple[str, str]:
    """A model's (Java) pattern and a value, rewritten for Python's ``re``: ``\\p{L}\\p{Z}\\p{N}``
    (letters, separators, numbers) becomes ASCII letters, digits and space, and every other
    character of those categories in the value becomes ``a``."""
    if r"\p{" not in pattern:
        return pattern, value
    pattern = pattern.replace(r"\p{L}\p{Z}\p{N}", "a-zA-Z0-9 ")
    value = "".join(
        c if c.isascii() or unicodedata.category(c)[0] not in "LZN" else "a" for c in value
    )
    return pattern, value


def within(service: str, name: str, value: Any, where: str) -> None:
    """``value`` satisfies the shape's min, max and pattern."""
    s = shape(service, name)
    if isinstance(value, str):
        assert s.get("min", 0) <= len(value) <= s.get("max", 1 << 30), f"{where}: {value!r}"
        if "pattern" in s:
            pattern, text = _java_pattern(s["pattern"], value)
            assert re.fullmatch(pattern, text, re.ASCII), f"{where}: {value!r} !~ {s['pattern']}"
    else:
        assert s.get("min", value) <= value <= s.get("max", value), f"{where}: {value!r}"


def autoname(state: dict[str, Any], given: str | None, *, lower: bool = False) -> str:
    """The name the provider gives: the one given, else the resource name, ``-`` and 7 hex
    digits (pulumi-terraform-bridge AutoName), lowercased for S3 buckets."""
    if given:
        return given
    name = state["urn"].rsplit("::", 1)[-1]
    return f"{name.lower() if lower else name}-0123abc"


def known(value: Any) -> bool:
    return value is not None and value != UNKNOWN


def get(inputs: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        if not isinstance(inputs, dict):
            return None
        inputs = inputs.get(part)
    return inputs


# Inputs whose shape the service model states: (resource type, input path) -> (service, shape).
MODEL_SHAPES: dict[tuple[str, str], tuple[str, str]] = {
    (FS, "subnetIds"): ("fsx", "SubnetId"),
    (FS, "securityGroupIds"): ("fsx", "SecurityGroupId"),
    (FS, "kmsKeyId"): ("fsx", "KmsKeyId"),
    ("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", "importedFileChunkSize"): (
        "fsx",
        "Megabytes",
    ),
    ("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", "dataRepositoryPath"): (
        "fsx",
        "ArchivePath",
    ),
    ("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", "fileSystemPath"): (
        "fsx",
        "Namespace",
    ),
    ("aws:efs/fileSystem:FileSystem", "kmsKeyId"): ("efs", "KmsKeyId"),
    ("aws:efs/fileSystem:FileSystem", "provisionedThroughputInMibps"): (
        "efs",
        "ProvisionedThroughputInMibps",
    ),
    ("aws:efs/accessPoint:AccessPoint", "rootDirectory.path"): ("efs", "Path"),
    ("aws:efs/accessPoint:AccessPoint", "posixUser.uid"): ("efs", "Uid"),
    ("aws:efs/accessPoint:AccessPoint", "posixUser.gid"): ("efs", "Gid"),
    ("aws:efs/accessPoint:AccessPoint", "rootDirectory.creationInfo.ownerUid"): ("efs", "OwnerUid"),
    ("aws:efs/accessPoint:AccessPoint", "rootDirectory.creationInfo.ownerGid"): ("efs", "OwnerGid"),
    ("aws:efs/accessPoint:AccessPoint", "rootDirectory.creationInfo.permissions"): (
        "efs",
        "Permissions",
    ),
    (MOUNT_TARGET, "subnetId"): ("efs", "SubnetId"),
    (MOUNT_TARGET, "securityGroups"): ("efs", "SecurityGroup"),
    (SG, "vpcId"): ("fsx", "VpcId"),
    ("aws:eks/addon:Addon", "clusterName"): ("eks", "ClusterName"),
    ("aws:eks/podIdentityAssociation:PodIdentityAssociation", "clusterName"): (
        "eks",
        "ClusterName",
    ),
    (ROLE, "description"): ("iam", "roleDescriptionType"),
}
# Each service's tag shapes (key, value); EC2, S3 and the VPC rule resources state no pattern in
# their models, so they are held to the EFS shapes, the tagging guide's rule.
TAG_SHAPES = {
    "iam": ("iam", "tagKeyType", "tagValueType"),
    "fsx": ("fsx", "TagKey", "TagValue"),
    "eks": ("eks", "TagKey", "TagValue"),
}
# EC2 CreateSecurityGroup GroupName and Description, and rule descriptions: up to 255 of these
# characters (the API reference; the model states no pattern).
SG_TEXT = re.compile(r"[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]{0,255}")
# S3 general purpose bucket names (Amazon S3 User Guide, "Bucket naming rules").
BUCKET_NAME = re.compile(r"(?!xn--|sthree-|amzn-s3-demo-)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
ADDON_VERSION = re.compile(r"v\d+\.\d+\.\d+-eksbuild\.\d+")


def aws_states(p: Plan) -> Iterator[dict[str, Any]]:
    return (s for s in p.states() if s["type"].startswith("aws:") and s["custom"])


def check_state(state: dict[str, Any]) -> None:
    type_, inputs = state["type"], state["inputs"]
    where = state["urn"]
    for (kind, path), (service, name) in MODEL_SHAPES.items():
        value = get(inputs, path) if kind == type_ else None
        for item in value if isinstance(value, list) else [value]:
            if known(item):
                within(service, name, item, f"{where} {path}")
    if type_ == ROLE:
        within("iam", "roleNameType", autoname(state, inputs.get("name")), f"{where} name")
    if type_ == ROLE_POLICY:
        within("iam", "policyNameType", autoname(state, inputs.get("name")), f"{where} name")
    if type_ == SG:
        group = autoname(state, inputs.get("name"))
        assert SG_TEXT.fullmatch(group) and not group.startswith("sg-"), where
        assert SG_TEXT.fullmatch(inputs["description"]), where
    if type_.startswith("aws:vpc/securityGroup"):
        assert SG_TEXT.fullmatch(inputs["description"]), where
    if type_ == BUCKET:
        bucket = autoname(state, inputs.get("bucket"), lower=True)
        assert BUCKET_NAME.fullmatch(bucket) and ".." not in bucket, f"{where}: {bucket}"
    if type_ == "aws:eks/addon:Addon" and known(inputs.get("addonVersion")):
        assert ADDON_VERSION.fullmatch(inputs["addonVersion"]), where
    tags = inputs.get("tags")
    if isinstance(tags, dict):
        service = type_.split(":")[1].split("/")[0]
        _, key_shape, value_shape = TAG_SHAPES.get(service, ("efs", "TagKey", "TagValue"))
        tag_service = service if service in TAG_SHAPES else "efs"
        assert len(tags) <= 50, f"{where}: {len(tags)} tags"
        for key, value in tags.items():
            within(tag_service, key_shape, key, f"{where} tag key")
            assert not key.lower().startswith("aws:"), where
            if known(value):
                within(tag_service, value_shape, value, f"{where} tag {key}")


PROGRAMS = [pid for pid, _, _ in all_programs()]


@pytest.mark.parametrize("pid", PROGRAMS)
def test_every_derived_aws_name_and_tag_is_within_its_api_limits(filled_plans, pid):
    states = list(aws_states(filled_plans[pid]))
    for state in states:
        check_state(state)
    # Only the laptop-cluster, on-prem, GKE and AKS programs (with the GKE platform stack and
    # the Kubernetes-only application stack on it) have no AWS resources.
    assert states or any(
        w in pid for w in ("local", "onprem", "gke", "aks", "platform-stores", "app-vllm")
    ), pid


def test_the_name_check_refuses_what_the_apis_refuse():
    """The checker itself: an auto-name that IAM, S3 or EC2 would refuse fails it."""

    def state(type_: str, name: str, **inputs: Any) -> dict[str, Any]:
        return {
            "type": type_,
            "urn": f"urn:pulumi:test::modelstore::{type_}::{name}",
            "inputs": {"description": "x", **inputs},
        }

    for bad in (
        state(ROLE, "r" * 57),
        state(ROLE_POLICY, "p:1"),
        state(BUCKET, "b" * 56),
        state(BUCKET, "b_1"),
        state(SG, "sg-llama-fs-sg"),
        state(FS, "fs", subnetIds="subnet-0a"),
        state(FS, "fs", tags={"aws:x": "y"}),
        state(FS, "fs", tags={"k": "a,b"}),
        state(FS, "fs", tags=many(51)),
        state("aws:efs/accessPoint:AccessPoint", "ap", rootDirectory={"path": "/a/"}),
    ):
        with pytest.raises(AssertionError):
            check_state(bad)
    check_state(state(ROLE, "r" * 56))
    check_state(state(FS, "fs", tags={"équipe": "modèles"}))


@pytest.mark.parametrize("backend", ["efs", "fsx-lustre"])
def test_a_store_that_looks_up_its_network_needs_its_cluster_named(backend):
    # Refused by the constructor and by validate alike.
    message = (
        "llama: cluster_name is missing; "
        "it must be the EKS cluster's name (or give vpc_id, cluster_subnet_ids "
        "and node_security_group_ids explicitly)"
    )
    assert_refused(build(backend, "llama", {"cluster_name": None}), message)
    with pytest.raises(ModelStoreInputError) as err:
        validate(backend, "llama", {"cluster_name": None})
    assert str(err.value) == message
