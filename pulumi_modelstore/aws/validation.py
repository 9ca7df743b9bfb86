"""AWS value rules shared by the AWS stores: S3 URIs, KMS key ARNs. Like ``validation.py``'s,
each skips values that are still Outputs."""

import re
from typing import Any

from ..errors import ModelStoreInputError
from ..validation import is_output

# S3 bucket naming rules for general purpose buckets: 3-63 chars, lowercase letters, digits,
# dots and hyphens, starting and ending with a letter or digit.
_S3_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def s3_uri(store: str, field: str, value: Any) -> tuple[str, str] | None:
    """Check ``s3://bucket[/prefix]`` and return (bucket, prefix), or None for an Output."""
    if is_output(value):
        return None
    allowed = "an S3 URI of the form s3://bucket[/prefix] with a valid bucket name"
    if not isinstance(value, str) or not value.startswith("s3://"):
        raise ModelStoreInputError(store, field, value, allowed)
    bucket, _, prefix = value[len("s3://") :].partition("/")
    if not _S3_BUCKET.match(bucket) or ".." in bucket or "//" in prefix:
        raise ModelStoreInputError(store, field, value, allowed)
    return bucket, prefix


_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")


def kms_key_arn(
    store: str, field: str, value: Any, alias_note: str = "an alias does not work here"
) -> None:
    """A KMS key ARN: key ids and aliases are refused where an ARN is needed; ``alias_note``
    says why for the field at hand."""
    if is_output(value):
        return
    if not isinstance(value, str) or not _KMS_KEY_ARN.match(value):
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key-id>; {alias_note})",
        )
