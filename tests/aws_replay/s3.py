"""S3 buckets and their hardening (public access block, ownership controls, default encryption,
versioning, bucket policy) and backups (a lifecycle expiring noncurrent versions).

Bucket names are not id-shaped, so :data:`AWS_ID` never catches them: each configuration
resource here maps its ``bucket`` to a bucket the replay created, and fails on any other."""

from __future__ import annotations

import json
from typing import Any

from . import Replay, handles


def _bucket(r: Replay, s: dict[str, Any]) -> str:
    """The created bucket a configuration resource refers to, or a dangling-reference
    failure."""
    placeholder = s["inputs"]["bucket"]
    created = r.ids.get(placeholder)
    assert created, f"{s['urn']}: dangling bucket {placeholder}"
    assert s["inputs"].get("region", r.region) == r.region, f"{s['urn']}: region mismatch"
    return created


def _configure(r: Replay, s: dict[str, Any], call: str, **params: Any) -> str:
    """Apply one configuration call of the S3 client to the bucket ``s`` refers to."""
    name = _bucket(r, s)
    getattr(r.client("s3"), call)(Bucket=name, **params)
    return name


@handles("aws:s3/bucket:Bucket")
def bucket(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    name = s["outputs"]["bucket"]
    region = i.get("region", r.region)
    assert region == r.region, f"{s['urn']}: bucket in {region}, replay in {r.region}"
    params: dict[str, Any] = {"Bucket": name}
    # Outside us-east-1, S3 requires the location constraint (moto enforces it too).
    if region != "us-east-1":
        params["CreateBucketConfiguration"] = {"LocationConstraint": region}
    s3 = r.client("s3")
    s3.create_bucket(**params)
    if i.get("tags"):
        s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": r.tags(i)})
    return name


@handles("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
def public_access_block(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    return _configure(
        r,
        s,
        "put_public_access_block",
        PublicAccessBlockConfiguration={
            "BlockPublicAcls": i["blockPublicAcls"],
            "BlockPublicPolicy": i["blockPublicPolicy"],
            "IgnorePublicAcls": i["ignorePublicAcls"],
            "RestrictPublicBuckets": i["restrictPublicBuckets"],
        },
    )


@handles("aws:s3/bucketOwnershipControls:BucketOwnershipControls")
def ownership_controls(r: Replay, s: dict[str, Any]) -> str:
    rule = {"ObjectOwnership": s["inputs"]["rule"]["objectOwnership"]}
    return _configure(r, s, "put_bucket_ownership_controls", OwnershipControls={"Rules": [rule]})


@handles("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
def encryption(r: Replay, s: dict[str, Any]) -> str:
    rules = []
    for rule in s["inputs"]["rules"]:
        default = rule["applyServerSideEncryptionByDefault"]
        by_default = {"SSEAlgorithm": default["sseAlgorithm"]}
        if "kmsMasterKeyId" in default:
            by_default["KMSMasterKeyID"] = default["kmsMasterKeyId"]
        rules.append(
            {
                "ApplyServerSideEncryptionByDefault": by_default,
                "BucketKeyEnabled": rule.get("bucketKeyEnabled", False),
            }
        )
    return _configure(
        r, s, "put_bucket_encryption", ServerSideEncryptionConfiguration={"Rules": rules}
    )


@handles("aws:s3/bucketVersioning:BucketVersioning")
def versioning(r: Replay, s: dict[str, Any]) -> str:
    status = s["inputs"]["versioningConfiguration"]["status"]
    return _configure(r, s, "put_bucket_versioning", VersioningConfiguration={"Status": status})


@handles("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
def lifecycle(r: Replay, s: dict[str, Any]) -> str:
    rules = [
        {
            "ID": rule["id"],
            "Status": rule["status"],
            "Filter": {"Prefix": rule["filter"].get("prefix", "")},
            "NoncurrentVersionExpiration": {
                "NoncurrentDays": rule["noncurrentVersionExpiration"]["noncurrentDays"]
            },
        }
        for rule in s["inputs"]["rules"]
    ]
    return _configure(
        r, s, "put_bucket_lifecycle_configuration", LifecycleConfiguration={"Rules": rules}
    )


@handles("aws:s3/bucketPolicy:BucketPolicy")
def bucket_policy(r: Replay, s: dict[str, Any]) -> str:
    name = _bucket(r, s)
    policy = s["inputs"]["policy"]
    # Every resource the policy names must be this bucket or its objects.
    for statement in json.loads(policy)["Statement"]:
        resources = statement["Resource"]
        for arn in [resources] if isinstance(resources, str) else resources:
            assert arn in (f"arn:aws:s3:::{name}", f"arn:aws:s3:::{name}/*"), (
                f"{s['urn']}: policy names {arn}, not bucket {name}"
            )
    r.client("s3").put_bucket_policy(Bucket=name, Policy=policy)
    return name
