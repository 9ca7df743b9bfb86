"""AWS value rules shared by the AWS stores and components: S3 URIs, KMS key ARNs, tags, region
codes, resource ids, EKS cluster names, add-on versions and OIDC issuers. Like
``validation.py``'s, each skips values that are still Outputs (the cloud checks those at
deploy).

Each rule cites the API rule it enforces: the AWS API reference, or the request shape in
botocore's service model (``botocore/data/<service>/<date>/service-2.json``, whose ``min``,
``max`` and ``pattern`` are what the service validates).
"""

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ModelStoreInputError
from ..model import names
from ..validation import is_output, valid_name

# S3 general purpose bucket names: the one rule in ``model/names.py`` (AWS's "General purpose
# bucket naming rules" page), which the model section's s3:// sources and Velero's bucket share.
RESERVED_BUCKET_PREFIXES = names.S3_RESERVED_PREFIXES
RESERVED_BUCKET_SUFFIXES = names.S3_RESERVED_SUFFIXES
BUCKET_NAME_RULE = names.S3_BUCKET_RULE
is_bucket_name = names.is_s3_bucket_name


def bucket_name(store: str, field: str, value: Any) -> None:
    valid_name(store, field, value, is_bucket_name, BUCKET_NAME_RULE)


# FSx CreateDataRepositoryAssociation DataRepositoryPath: shape ArchivePath, 3-4357 characters
# (botocore fsx/2018-03-01 service-2.json).
S3_PATH_MAX = 4357


def s3_uri(store: str, field: str, value: Any) -> tuple[str, str] | None:
    """Check ``s3://bucket[/prefix]`` and return (bucket, prefix), or None for an Output."""
    if is_output(value):
        return None
    allowed = "an S3 URI of the form s3://bucket[/prefix] with a valid bucket name"
    if not isinstance(value, str) or not value.startswith("s3://"):
        raise ModelStoreInputError(store, field, value, allowed)
    bucket, _, prefix = value[len("s3://") :].partition("/")
    if not is_bucket_name(bucket) or "//" in prefix:
        raise ModelStoreInputError(store, field, value, allowed)
    if len(value) > S3_PATH_MAX:
        raise ModelStoreInputError(
            store, field, value, f"an S3 URI of at most {S3_PATH_MAX} characters"
        )
    return bucket, prefix


# A KMS key ARN as the EFS CreateFileSystem KmsKeyId shape spells it (botocore efs/2015-02-01
# service-2.json: key/<uuid> or key/mrk-<32 hex> for a multi-Region key), the strictest of the
# APIs these ARNs reach (FSx takes 1-2048 characters, S3 and the EBS driver any string).
# Its region is a region code (_REGION below): the APIs' patterns take any [a-z0-9-]+ there and
# the deploy then fails on a key that cannot exist.
_KMS_KEY_ARN = re.compile(
    r"^arn:aws[a-z-]*:kms:(?P<region>[a-z0-9-]+):\d{12}:"
    r"key/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})$"
)


def kms_key_arn(
    store: str, field: str, value: Any, alias_note: str = "an alias does not work here"
) -> None:
    """A KMS key ARN: key ids and aliases are refused where an ARN is needed; ``alias_note``
    says why for the field at hand."""
    if is_output(value):
        return
    match = _KMS_KEY_ARN.fullmatch(value) if isinstance(value, str) else None
    if match is None or not _REGION.fullmatch(match["region"]):
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key-id>; {alias_note})",
        )


# ---- tags ------------------------------------------------------------------------------------

# Tag keys 1-128 and values 0-256 characters, at most 50 tags per resource, no `aws:` prefix on
# keys (any case): the TagKey/TagValue shapes of EFS, FSx, IAM and EKS in botocore's models
# (efs/2015-02-01, fsx/2018-03-01, iam/2010-05-08 tagKeyType/tagValueType, eks/2017-11-01
# TagMap max 50) and "Tagging AWS resources" (docs.aws.amazon.com/tag-editor/latest/userguide/
# tagging.html, "Tag naming limits and requirements"), which EC2 and S3 follow too.
TAG_KEY_MAX = 128
TAG_VALUE_MAX = 256
TAGS_PER_RESOURCE = 50
# The characters EFS, FSx and IAM accept in keys and values (their TagKey/TagValue pattern
# [\p{L}\p{Z}\p{N}_.:/=+\-@]): letters, separators (spaces), numbers and _ . : / = + - @.
TAG_SYMBOLS = "_.:/=+-@"
TAG_CHARS = "letters, digits, spaces and _ . : / = + - @"
RESERVED_TAG_PREFIX = "aws:"


def tag_text_ok(text: str) -> bool:
    """Whether every character of ``text`` is one AWS tagging accepts."""
    return all(c in TAG_SYMBOLS or unicodedata.category(c)[0] in "LZN" for c in text)


def tag_key(store: str, field: str, key: Any) -> None:
    """One tag key: 1-128 characters of the tag alphabet, not starting with ``aws:``."""
    if not isinstance(key, str) or not 1 <= len(key) <= TAG_KEY_MAX:
        raise ModelStoreInputError(store, field, key, f"keys of 1 to {TAG_KEY_MAX} characters")
    if key.casefold().startswith(RESERVED_TAG_PREFIX):
        raise ModelStoreInputError(
            store,
            field,
            key,
            f"keys that do not start with {RESERVED_TAG_PREFIX} (AWS reserves the prefix, in "
            "any case)",
        )
    if not tag_text_ok(key):
        raise ModelStoreInputError(store, field, key, f"keys of {TAG_CHARS}")


def tag_value(store: str, field: str, value: Any, *, literal: str | None = None) -> None:
    """One tag value: at most 256 characters of the tag alphabet. ``literal``: the part of the
    value checked, where the rest is filled in later (an EBS driver template)."""
    if is_output(value):
        return
    text = value if literal is None else literal
    if len(text) > TAG_VALUE_MAX:
        raise ModelStoreInputError(
            store, field, value, f"values of at most {TAG_VALUE_MAX} characters"
        )
    if not tag_text_ok(text):
        raise ModelStoreInputError(store, field, value, f"values of {TAG_CHARS}")


def tag_count(
    store: str, field: str, tags: Mapping[str, Any], added: Sequence[str], added_by: str
) -> None:
    """At most 50 tags on each resource, counting the ``added`` keys the library (or a driver)
    puts there itself, ``added_by`` saying who."""
    extra = [k for k in added if k not in tags]
    allowed = TAGS_PER_RESOURCE - len(extra)
    if len(tags) > allowed:
        raise ModelStoreInputError(
            store,
            field,
            len(tags),
            f"at most {allowed} tags (AWS allows {TAGS_PER_RESOURCE} per resource and "
            f"{added_by} adds {', '.join(extra)})",
        )


def tags(
    store: str,
    field: str,
    value: Any,
    added: Sequence[str] = (),
    added_by: str = "the store",
) -> None:
    """A tag mapping: every key and value, then the count with the ``added`` keys."""
    if is_output(value) or value is None:
        return
    for key, text in value.items():
        tag_key(store, field, key)
        tag_value(store, field, text)
    tag_count(store, field, value, added, added_by)


# ---- regions, ids, names ---------------------------------------------------------------------

# AWS region codes: the partitions' regionRegex in botocore's data/partitions.json (aws:
# ^(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+$, aws-cn: ^cn-..., aws-us-gov: ^us-gov-..., aws-iso*:
# ^us-iso-, ^us-isob-, ^us-isof-, ^eu-isoe-), lowercase as every region code is.
_REGION = re.compile(
    r"^(?:us|eu|ap|sa|ca|me|af|il|mx|cn|us-gov|us-iso|us-isob|us-isof|eu-isoe)-[a-z]+-\d+$"
)
REGION_RULE = "an AWS region code such as us-west-2"


def region(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not isinstance(value, str) or not _REGION.fullmatch(value):
        raise ModelStoreInputError(store, field, value, REGION_RULE)


# EC2 resource ids: the prefix and 8 or 17 lowercase hex digits ("Resource IDs", docs.aws.amazon
# .com/AWSEC2/latest/UserGuide/resource-ids.html: 8 characters before 2016-2018, 17 since). The
# FSx model checks the same shapes (botocore fsx/2018-03-01 SecurityGroupId ^(sg-[0-9a-f]{8,})$
# of 11-20 characters, SubnetId ^(subnet-[0-9a-f]{8,})$ of 15-24, VpcId ^(vpc-[0-9a-f]{8,})$ of
# 12-21); EC2 itself only answers "does not exist" at deploy.
_ID_KINDS = {"sg": "security group", "subnet": "subnet", "vpc": "VPC"}


def _id_ok(value: Any, prefix: str) -> bool:
    return isinstance(value, str) and bool(
        re.fullmatch(rf"{prefix}-([0-9a-f]{{8}}|[0-9a-f]{{17}})", value)
    )


def resource_id(store: str, field: str, value: Any, prefix: str) -> None:
    """One id (``prefix`` sg, subnet or vpc)."""
    if is_output(value) or _id_ok(value, prefix):
        return
    raise ModelStoreInputError(
        store,
        field,
        value,
        f"a {_ID_KINDS[prefix]} id ({prefix}- and 8 or 17 lowercase hex digits)",
    )


def resource_ids(store: str, field: str, values: Any, prefix: str) -> None:
    """A list of ids: each item."""
    if is_output(values):
        return
    for value in values:
        if not is_output(value) and not _id_ok(value, prefix):
            raise ModelStoreInputError(
                store,
                field,
                value,
                f"{_ID_KINDS[prefix]} ids ({prefix}- and 8 or 17 lowercase hex digits)",
            )


# EKS cluster names: botocore eks/2017-11-01 ClusterName, 1-100 characters matching
# ^[0-9A-Za-z][A-Za-z0-9\-_]* (CreateCluster, and every API that names a cluster).
_EKS_CLUSTER_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$")


def eks_cluster_name(store: str, field: str, value: Any) -> None:
    if is_output(value) or value is None:
        return
    if not isinstance(value, str) or not _EKS_CLUSTER_NAME.fullmatch(value):
        raise ModelStoreInputError(
            store,
            field,
            value,
            "an EKS cluster name (1 to 100 letters, digits, '-' and '_', starting with a letter "
            "or digit)",
        )


# EKS add-on versions as DescribeAddonVersions lists them (docs.aws.amazon.com/eks/latest/
# APIReference/API_AddonVersionInfo.html, e.g. v1.10.1-eksbuild.1); CreateAddon refuses others.
ADDON_VERSION = re.compile(r"^v(\d+\.\d+\.\d+)-eksbuild\.\d+$")


def eks_addon_version(store: str, field: str, value: Any) -> None:
    if is_output(value) or value is None:
        return
    if not isinstance(value, str) or not ADDON_VERSION.fullmatch(value):
        raise ModelStoreInputError(
            store, field, value, "an add-on version such as v1.2.3-eksbuild.1"
        )


# An IAM OIDC provider's URL "must begin with https://" and takes no query parameters (IAM API
# reference, CreateOpenIDConnectProvider, Url); EKS issuers are https://oidc.eks.<region>.
# amazonaws.com/id/<id>. The IRSA trust's condition keys are the issuer without its https://
# (identity.py), so an http:// issuer would also name keys no token carries.
_OIDC_ISSUER = re.compile(r"^https://[A-Za-z0-9.-]+(:\d+)?(/[^?#\s]*)?$")
OIDC_ISSUER_RULE = (
    "an https:// URL without a query (IAM OIDC providers take only https issuers), e.g. "
    "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE"
)


def oidc_issuer(store: str | None, field: str, value: Any) -> None:
    if is_output(value):
        # The IRSA trust policy's condition keys are made from it before deploy.
        raise ModelStoreInputError(
            store,
            field,
            "<Output>",
            OIDC_ISSUER_RULE + ", known before deploy (IRSA trust "
            "policies name it in their condition keys)",
        )
    if value is None:
        return
    if not isinstance(value, str) or not _OIDC_ISSUER.fullmatch(value):
        raise ModelStoreInputError(store, field, value, OIDC_ISSUER_RULE)
