"""The AWS IAM catalogue: one document per CSI driver and store, each the ONE place its
statements are defined, scoped by inputs, with the upstream source it follows next to it.

- EFS (``efs.csi.aws.com``): :func:`client_access_policy` for the driver's node identity under
  ``iam`` mounts, :func:`file_system_policy` on the file system. Source: the EFS user guide's
  IAM condition keys (``elasticfilesystem:AccessPointArn`` is an ARN-typed key, so it is matched
  with the ARN operators) and kubernetes-sigs/aws-efs-csi-driver docs/iam-policy-example.json.
- Mountpoint for S3 (``s3.csi.aws.com``): :func:`bucket_access_policy`, after
  awslabs/mountpoint-s3 doc/CONFIGURATION.md "IAM permissions"; :func:`tls_only_bucket_policy`.
- EBS (``ebs.csi.aws.com``): :func:`ebs_csi_driver_policy`, AWS's AmazonEBSCSIDriverPolicyV2
  statement set, scoped by the driver's tags, with KMS grants only on the given keys.
- FSx for Lustre (``fsx.csi.aws.com``): static PVs need no driver permissions, so there is none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

# The EBS driver's constants its policy reads (tags it sets, actions it needs).
DRIVER_TAG = "ebs.csi.aws.com/cluster"
"""The driver tags every volume and snapshot it creates ``ebs.csi.aws.com/cluster=true``."""
MIGRATED_VOLUME_TAG = "kubernetes.io/created-for/pvc/name"
DRIVER_PROTECTED_TAG_KEYS = (
    DRIVER_TAG,
    "ebs.csi.aws.com/cluster-name",
    "kubernetes.io/created-for/pvc/name",
)
DESCRIBE_ACTIONS = (
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInstances",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeSnapshots",
    "ec2:DescribeVolumes",
    "ec2:DescribeVolumesModifications",
    "ec2:DescribeVolumeStatus",
)
KMS_GRANT_ACTIONS = ("kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant")
KMS_USE_ACTIONS = (
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncrypt*",
    "kms:GenerateDataKey*",
    "kms:DescribeKey",
)


# ---- EFS -------------------------------------------------------------------------------------


def client_access_policy(
    file_system_arn: str,
    reader_access_point_arns: Sequence[str],
    writer_access_point_arns: Sequence[str],
) -> dict[str, Any]:
    """The node identity's EFS client permissions: the ONE definition, for every identity path.

    Mounting (``ClientMount``, read) only through this store's access points, writing
    (``ClientWrite``) only through the writing consumers' access points (the writers' and the
    seed Job's), both only via a mount target.
    Readers never get a write action: a reader's mount is read-only at EFS as well as in
    Kubernetes. No ``ClientRootAccess``: the access points run every request as the POSIX user.
    """

    def statement(sid: str, action: str, access_points: Sequence[str]) -> dict[str, Any]:
        return {
            "Sid": sid,
            "Effect": "Allow",
            "Action": action,
            "Resource": file_system_arn,
            "Condition": {
                "Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"},
                # elasticfilesystem:AccessPointArn is of type ARN in AWS's table of EFS
                # condition keys, so it takes the ARN operators (IAM User Guide, "Amazon
                # Resource Name (ARN) condition operators"); with a list, any one matches.
                # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonelasticfilesystem.html#amazonelasticfilesystem-policy-keys
                "ArnEquals": {"elasticfilesystem:AccessPointArn": sorted(access_points)},
            },
        }

    statements = [
        statement(
            "MountThroughStoreAccessPoints",
            "elasticfilesystem:ClientMount",
            [*reader_access_point_arns, *writer_access_point_arns],
        )
    ]
    if writer_access_point_arns:
        statements.append(
            statement(
                "WriteThroughWriterAccessPoints",
                "elasticfilesystem:ClientWrite",
                writer_access_point_arns,
            )
        )
    return {"Version": "2012-10-17", "Statement": statements}


def file_system_policy(
    file_system_arn: str, *, anonymous_access: bool, anonymous_write: bool
) -> dict[str, Any]:
    """The file system policy: deny every request not over TLS.

    A policy that only denies would also deny every client that does not sign its mount with
    IAM: once a file system has a policy, anonymous clients get only what it allows. So, as in
    the EFS console's "Enforce in-transit encryption for all clients" policy, anonymous clients
    reaching a mount target are allowed too, unless IAM authorization is on (then the node
    role's own policy is the only way in). Unlike the console's default, no ClientRootAccess,
    and ClientWrite only when something writes (``anonymous_write``: the store's writers, its
    seed Job, its dynamic claims): an anonymous client without it mounts read-only."""
    statements: list[dict[str, Any]] = []
    if anonymous_access:
        actions = ["elasticfilesystem:ClientMount"]
        if anonymous_write:
            actions.append("elasticfilesystem:ClientWrite")
        statements.append(
            {
                "Sid": "ClientsThroughMountTargets",
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": actions,
                "Resource": file_system_arn,
                "Condition": {"Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"}},
            }
        )
    statements.append(
        {
            "Sid": "DenyWithoutTls",
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Action": "*",
            "Resource": file_system_arn,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    )
    return {"Version": "2012-10-17", "Statement": statements}


# ---- Mountpoint for S3 ------------------------------------------------------------------------


def bucket_access_policy(
    bucket_arn: pulumi.Input[str],
    prefix: str,
    *,
    write: bool,
    delete: bool,
    kms_key_arn: pulumi.Input[str] | None,
) -> pulumi.Output[dict[str, Any]]:
    """The one IAM policy for Mountpoint on this store, for a reader (``write=False``) or a
    writer. Mountpoint needs ``s3:ListBucket`` on the bucket (scoped to the prefix with the
    ``s3:prefix`` condition key, the only way to scope a list), ``s3:GetObject`` to read;
    writing adds ``s3:PutObject`` and ``s3:AbortMultipartUpload``, deleting ``s3:DeleteObject``;
    SSE-KMS adds ``kms:Decrypt`` (and ``kms:GenerateDataKey`` to write). Readers never get a
    write action."""

    def document(values: list[Any]) -> dict[str, Any]:
        arn, key = values
        list_bucket: dict[str, Any] = {
            "Sid": "MountpointListBucket",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": arn,
        }
        if prefix:
            list_bucket["Condition"] = {"StringLike": {"s3:prefix": [f"{prefix}*"]}}
        objects = f"{arn}/{prefix}*"
        statements: list[dict[str, Any]] = [
            list_bucket,
            {
                "Sid": "MountpointReadObjects",
                "Effect": "Allow",
                "Action": ["s3:GetObject"],
                "Resource": objects,
            },
        ]
        if write:
            actions = ["s3:PutObject", "s3:AbortMultipartUpload"]
            if delete:
                actions.append("s3:DeleteObject")
            statements.append(
                {
                    "Sid": "MountpointWriteObjects",
                    "Effect": "Allow",
                    "Action": actions,
                    "Resource": objects,
                }
            )
        if key:
            statements.append(
                {
                    "Sid": "MountpointKms",
                    "Effect": "Allow",
                    "Action": ["kms:Decrypt", *(["kms:GenerateDataKey"] if write else [])],
                    "Resource": key,
                }
            )
        return {"Version": "2012-10-17", "Statement": statements}

    return pulumi.Output.all(bucket_arn, kms_key_arn).apply(document)


def source_read_policy(partition: str, bucket: str, prefix: str) -> dict[str, Any]:
    """The seed Job's read access to its ``s3://<bucket>/<prefix>`` source: the ONE place it
    is defined. The seed program (``model/aws.py``, ``model/sources.py``) calls
    ``ListObjectsV2`` with ``prefix=<prefix>/`` (``s3:ListBucket`` on the bucket, limited by the
    ``s3:prefix`` condition key to that prefix), then ``HeadObject`` and ``GetObject`` on the
    objects under it (both need ``s3:GetObject``: "Actions, resources, and condition keys for
    Amazon S3", docs.aws.amazon.com/service-authorization/latest/reference/
    list_amazons3.html). Nothing else: no write, no other prefix. An SSE-KMS source also needs
    ``kms:Decrypt`` on its key, which is not granted here: the key's policy (or a grant its
    owner makes) gives it, as for any reader from another team's bucket."""
    # The seed lists `<prefix>/` and reads the keys under it (model/sources.py _ObjectSource).
    under = f"{prefix}/*" if prefix else "*"
    objects = f"arn:{partition}:s3:::{bucket}/{under}"
    list_bucket: dict[str, Any] = {
        "Sid": "SeedListSource",
        "Effect": "Allow",
        "Action": "s3:ListBucket",
        "Resource": f"arn:{partition}:s3:::{bucket}",
    }
    if prefix:
        list_bucket["Condition"] = {"StringLike": {"s3:prefix": [under]}}
    return {
        "Version": "2012-10-17",
        "Statement": [
            list_bucket,
            {
                "Sid": "SeedReadSource",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": objects,
            },
        ],
    }


def tls_only_bucket_policy(bucket_arn: pulumi.Input[str]) -> pulumi.Output[str]:
    """Deny every request to the bucket and its objects that does not use TLS."""
    return pulumi.Output.from_input(bucket_arn).apply(
        lambda arn: json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Sid": "DenyInsecureTransport",
                        "Effect": "Deny",
                        "Principal": "*",
                        "Action": "s3:*",
                        "Resource": [arn, f"{arn}/*"],
                        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                    }
                ],
            }
        )
    )


# ---- EBS -------------------------------------------------------------------------------------


def ebs_csi_driver_policy(
    partition: str = "aws", kms_key_arns: Sequence[pulumi.Input[str]] = ()
) -> dict[str, Any]:
    """The EBS CSI controller's IAM policy: the ONE place its statements are defined.

    The statement set of AWS's ``AmazonEBSCSIDriverPolicyV2`` (the driver repository's
    ``docs/AmazonEBSCSIDriverPolicyV2.json``, its recommended baseline since April 2026): every
    create, delete, attach, detach, modify, snapshot and copy is limited to volumes and snapshots
    tagged ``ebs.csi.aws.com/cluster=true`` (the driver adds that tag to everything it
    provisions, and may only add tags as part of a create), plus in-tree volumes migrated to CSI
    (tagged ``kubernetes.io/created-for/pvc/name``). Describe calls are unscoped, as EC2 requires.

    With ``kms_key_arns`` (volumes encrypted with customer managed keys) two statements are
    added, on those keys only: grants for AWS resources (what EBS needs to attach an encrypted
    volume) and the key's data operations.
    """
    ec2 = f"arn:{partition}:ec2:*:*"
    volumes, snapshots, instances = f"{ec2}:volume/*", f"{ec2}:snapshot/*", f"{ec2}:instance/*"
    source_volumes = f"{ec2}:volume/vol-*"
    driver_owned = {"StringEquals": {f"ec2:ResourceTag/{DRIVER_TAG}": "true"}}
    tagged_for_driver = {"StringEquals": {f"aws:RequestTag/{DRIVER_TAG}": "true"}}
    migrated = {"StringLike": {f"ec2:ResourceTag/{MIGRATED_VOLUME_TAG}": "*"}}
    volume_actions = [
        "ec2:ModifyVolume",
        "ec2:AttachVolume",
        "ec2:DetachVolume",
        "ec2:DeleteVolume",
    ]
    statements: list[dict[str, Any]] = [
        _allow("DescribeVolumesSnapshotsInstances", DESCRIBE_ACTIONS, "*"),
        _allow(
            "CreateVolumesTaggedForDriver",
            ["ec2:CreateVolume", "ec2:CopyVolumes"],
            volumes,
            tagged_for_driver,
        ),
        _allow("CopyDriverVolumes", ["ec2:CopyVolumes"], source_volumes, driver_owned),
        _allow("CopyMigratedVolumes", ["ec2:CopyVolumes"], source_volumes, migrated),
        _allow(
            "CreateSnapshotsTaggedForDriver", ["ec2:CreateSnapshot"], snapshots, tagged_for_driver
        ),
        _allow("SnapshotDriverVolumes", ["ec2:CreateSnapshot"], volumes, driver_owned),
        _allow("ManageDriverVolumes", volume_actions, volumes, driver_owned),
        _allow("ManageMigratedVolumes", volume_actions, volumes, migrated),
        _allow(
            "RestoreDriverSnapshots",
            ["ec2:CreateVolume", "ec2:EnableFastSnapshotRestores"],
            snapshots,
            driver_owned,
        ),
        _allow("AttachToInstances", ["ec2:AttachVolume", "ec2:DetachVolume"], instances),
        _allow(
            "DeleteDriverSnapshots",
            ["ec2:DeleteSnapshot", "ec2:LockSnapshot"],
            snapshots,
            driver_owned,
        ),
        _allow(
            "TagOnlyWhileCreating",
            ["ec2:CreateTags"],
            [volumes, snapshots],
            {
                "StringEquals": {
                    "ec2:CreateAction": ["CreateVolume", "CreateSnapshot", "CopyVolumes"]
                }
            },
        ),
        _allow(
            "RetagDriverVolumesExceptDriverTags",
            ["ec2:CreateTags", "ec2:DeleteTags"],
            volumes,
            {
                **driver_owned,
                "Null": {"aws:TagKeys": "false"},
                "ForAllValues:StringNotEquals": {"aws:TagKeys": list(DRIVER_PROTECTED_TAG_KEYS)},
            },
        ),
    ]
    keys = list(kms_key_arns)
    if keys:
        statements += [
            _allow(
                "GrantVolumeKeysToEbs",
                KMS_GRANT_ACTIONS,
                keys,
                {"Bool": {"kms:GrantIsForAWSResource": "true"}},
            ),
            _allow("UseVolumeKeys", KMS_USE_ACTIONS, keys),
        ]
    return {"Version": "2012-10-17", "Statement": statements}


def _allow(
    sid: str,
    actions: Sequence[str],
    resources: Any,
    condition: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    statement: dict[str, Any] = {
        "Sid": sid,
        "Effect": "Allow",
        "Action": list(actions),
        "Resource": resources,
    }
    if condition:
        statement["Condition"] = dict(condition)
    return statement


# -- storage classes --------------------------------------------------------------------------
