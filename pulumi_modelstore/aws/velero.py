"""Velero's storage on EKS: an S3 bucket (public access blocked, ACLs off, default encryption,
TLS only) and an IRSA role the Velero server's ServiceAccount assumes, with the plugin's object
storage permissions on that bucket alone."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from ..kube.velero import NAMESPACE, SERVICE_ACCOUNT, VeleroSettings, VeleroStorage
from . import names
from .bucket import bucket_baseline, tls_only_policy
from .identity import IdentityFacts, service_account_role


def velero_policy(bucket_arn: str) -> dict[str, Any]:
    """The Velero server's policy: the S3 statements of velero-plugin-for-aws ``README.md``
    "Set permissions for Velero" (objects: Get, Delete, Put, PutObjectTagging,
    AbortMultipartUpload, ListMultipartUploadParts; the bucket: ListBucket) on this bucket
    only. The README's EC2 statement (EBS snapshots, ``Resource: *``) is left out: Velero
    takes no volume snapshots here (``snapshotsEnabled: false``)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "s3:GetObject",
                    "s3:DeleteObject",
                    "s3:PutObject",
                    "s3:PutObjectTagging",
                    "s3:AbortMultipartUpload",
                    "s3:ListMultipartUploadParts",
                ],
                "Resource": [f"{bucket_arn}/*"],
            },
            {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [bucket_arn]},
        ],
    }


def velero_storage(
    scope: pulumi.Resource,
    cluster: str,
    facts: IdentityFacts,
    region: Any,
    settings: VeleroSettings,
) -> VeleroStorage:
    """The bucket and IRSA role (trusting ``facts``' OIDC provider) of the Velero of EKS
    cluster ``cluster`` in ``region``, under its ``scope``. The bucket holds the backups:
    protected and kept on delete."""
    name = f"{cluster}-velero"
    bucket = aws.s3.Bucket(
        f"{name}-bucket",
        bucket=settings.bucket
        or names.physical_name(f"{name}-bucket", names.BUCKET_NAME_MAX, lower=True),
        region=region,
        opts=pulumi.ResourceOptions(parent=scope, protect=True, retain_on_delete=True),
    )
    aes256 = {"apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}}
    configuration = bucket_baseline(name, bucket, region, scope, [aes256])
    policy = tls_only_policy(name, bucket, region, scope, configuration)
    role = service_account_role(
        name,
        facts=facts,
        namespace=NAMESPACE,
        service_account=SERVICE_ACCOUNT,
        policy=bucket.arn.apply(velero_policy),
        description=f"Velero on cluster {cluster}: its backup bucket",
        tags={},
        parent=scope,
    )
    return VeleroStorage(
        provider="aws",
        plugin="velero/velero-plugin-for-aws",
        bucket=bucket.id,
        config={"region": region},
        service_account_annotations=role.service_account_annotations(),
        ready=[*configuration, policy, *role.ready],
    )
