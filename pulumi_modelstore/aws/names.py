"""Names AWS resources get from a store's (or a cluster's) name, kept within each API's limits.

Pulumi auto-names what the library does not name: the AWS provider (pulumi-terraform-bridge
``tfbridge.AutoName``, ``Randlen: 7`` with separator ``-``) appends ``-`` and 7 random hex
digits to the resource name, lowercased for S3 buckets (``AutoNameTransform("bucket", 63,
strings.ToLower)``), and ``resource.NewUniqueName`` fails the deploy when that is longer than
the API allows ("name '...' plus 7 random chars is longer than maximum length"). So where the
auto-name would not fit, :func:`physical_name` gives the resource an explicit name instead: the
resource name cut to fit, ``-`` and 8 hex digits of a hash of the project, stack and full
resource name, the same on every run (and different per stack, as IAM role names are unique per
account and bucket names globally). Where the auto-name fits, nothing changes.

Characters cannot be shortened away: a store name the derived names cannot carry is refused
before anything registers (the ``store_name_*`` rules), naming the store name.
"""

from __future__ import annotations

import hashlib
import re

import pulumi

from ..errors import ModelStoreInputError
from ..store import STORE_NAME
from .validation import RESERVED_BUCKET_PREFIXES

AUTONAME_SUFFIX = 8
"""``-`` and 7 random hex digits (pulumi-terraform-bridge ``AutoName``: ``Randlen: 7``)."""

# IAM CreateRole RoleName: roleNameType, 1-64 characters of [\w+=,.@-] (botocore
# iam/2010-05-08 service-2.json). PutRolePolicy PolicyName: policyNameType, 1-128, same pattern.
ROLE_NAME_MAX = 64
POLICY_NAME_MAX = 128
# EC2 CreateSecurityGroup GroupName: up to 255 characters of a-z, A-Z, 0-9, spaces and
# ._-:/()#,@[]+=&;{}!$*, not starting with sg- (botocore ec2/2016-11-15 CreateSecurityGroupRequest;
# the same characters for its Description).
SECURITY_GROUP_NAME_MAX = 255
SECURITY_GROUP_TEXT_MAX = 255
# S3 CreateBucket general purpose bucket names: 3-63 lowercase letters, digits, '.' and '-',
# starting and ending with a letter or digit, no '..', not starting with xn--, sthree- or
# amzn-s3-demo- ("Bucket naming rules", docs.aws.amazon.com/AmazonS3/latest/userguide/
# bucketnamingrules.html).
BUCKET_NAME_MAX = 63
_BUCKET_HEAD = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
# IAM CreateRole Description: roleDescriptionType, at most 1000 characters.
ROLE_DESCRIPTION_MAX = 1000


def autoname_fits(resource_name: str, limit: int) -> bool:
    """Whether Pulumi's auto-name for ``resource_name`` is at most ``limit`` characters."""
    return len(resource_name) + AUTONAME_SUFFIX <= limit


def physical_name(resource_name: str, limit: int, *, lower: bool = False) -> str | None:
    """None where the provider's auto-name fits ``limit`` (it names the resource, as before);
    else an explicit name of at most ``limit`` characters, the same on every run of the stack
    (see the module docstring). ``lower``: the API takes lowercase only (S3 buckets)."""
    base = resource_name.lower() if lower else resource_name
    if autoname_fits(base, limit):
        return None
    seed = f"{pulumi.get_project()}/{pulumi.get_stack()}/{resource_name}"
    digest = hashlib.sha256(seed.encode()).hexdigest()[:8]
    head = base[: limit - 1 - len(digest)].rstrip("-.")
    return f"{head}-{digest}"


def shortened(text: str, limit: int) -> str:
    """A description cut to the API's ``limit`` (a description names nothing: cutting it is
    harmless, where a name would have to stay unique)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- store names the derived names must be able to carry -------------------------------------

# The characters of a store name need no AWS check of their own: the store name is a Kubernetes
# label value first (store.py, refused there once), whose characters IAM names, EC2 security group
# names and AWS tag values all accept, and whose 63 characters fit every derived name (length is
# physical_name's). Only a bucket (lowercase, no '_') and the sg- prefix ask more.


def store_name_fits_security_group(store: str) -> None:
    """The security group's name and description carry the store name."""
    if store.casefold().startswith("sg-"):
        raise ModelStoreInputError(
            store,
            STORE_NAME,
            store,
            "a name not starting with sg- (EC2 refuses security group names starting with sg-, "
            "and the store's group is named after it; or give security_group_id)",
        )


def store_name_fits_bucket(store: str) -> None:
    """A new bucket is auto-named after the store, lowercased: the store name must be a valid
    start of a bucket name (its length is handled by :func:`physical_name`)."""
    head = store.lower()
    reserved = head.startswith(RESERVED_BUCKET_PREFIXES)
    if not _BUCKET_HEAD.fullmatch(head) or ".." in head or reserved:
        raise ModelStoreInputError(
            store,
            STORE_NAME,
            store,
            "letters, digits, '.' and '-' only, starting with a letter or digit, without '..' "
            "and not starting with xn--, sthree- or amzn-s3-demo- (the store's new bucket is "
            "named after it; or give bucket_name)",
        )
