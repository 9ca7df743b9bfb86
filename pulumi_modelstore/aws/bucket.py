"""The configuration every S3 bucket the package makes (the Mountpoint store's, Velero's) starts
and ends with: public access blocked, ACLs off, default encryption, and, last, a TLS-only
policy. Each bucket adds what is its own (versioning, lifecycle) in between."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from .policies import tls_only_bucket_policy


def bucket_baseline(
    name: str,
    bucket: aws.s3.Bucket,
    region: Any,
    parent: pulumi.Resource,
    encryption_rules: Sequence[Any],
) -> list[pulumi.Resource]:
    """Public access blocked, object ownership enforced (ACLs off) and default encryption
    ``encryption_rules`` on ``bucket`` in ``region``, each named ``<name>-bucket-<what>``
    under ``parent``, in that order."""
    # What each configuration of the bucket names: the bucket, its region, its parent.
    on_bucket: dict[str, Any] = {
        "bucket": bucket.id,
        "region": region,
        "opts": pulumi.ResourceOptions(parent=parent),
    }
    return [
        aws.s3.BucketPublicAccessBlock(
            f"{name}-bucket-public-access",
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            **on_bucket,
        ),
        aws.s3.BucketOwnershipControls(
            f"{name}-bucket-ownership",
            rule={"object_ownership": "BucketOwnerEnforced"},
            **on_bucket,
        ),
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-bucket-encryption",
            rules=list(encryption_rules),
            **on_bucket,
        ),
    ]


def tls_only_policy(
    name: str,
    bucket: aws.s3.Bucket,
    region: Any,
    parent: pulumi.Resource,
    configuration: Sequence[pulumi.Resource],
) -> aws.s3.BucketPolicy:
    """The bucket's TLS-only policy (``<name>-bucket-policy``), after every other
    ``configuration`` of the bucket: S3 rejects concurrent configuration changes on one bucket
    ("A conflicting conditional operation is currently in progress"), so the policy goes last
    (order: bucket-configuration-first)."""
    return aws.s3.BucketPolicy(
        f"{name}-bucket-policy",
        bucket=bucket.id,
        region=region,
        policy=tls_only_bucket_policy(bucket.arn),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(configuration)),
    )
