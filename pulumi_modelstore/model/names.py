"""The naming rules of the places a model comes from and goes to, one rule per fact: a Hugging
Face repository id, an S3 bucket, a Cloud Storage bucket, an Azure storage account and blob
container. The seed program's source parser (``sources.parse_source``), the ``model`` section
and the cloud rooms' own checks (``aws/validation.py``, ``gcp/validation.py``,
``azure/validation.py``, Velero's bucket in ``kube/velero.py``) all read them from here, so a
name is refused with the same words wherever it is written. The standard library only: the
seed Job runs this module (``bundle.py``).

Each predicate takes any value and answers False for a non-string.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any


def is_ip_address(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address (S3 and Cloud Storage refuse one as a bucket
    name)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# ---- Hugging Face repository ids ------------------------------------------------------------

# huggingface_hub ``src/huggingface_hub/utils/_validators.py`` (REPO_ID_REGEX and
# validate_repo_id, commit 0a57df9): ``namespace/repo_name``, each of ASCII letters, digits,
# '-', '_' and '.', starting and ending with a letter, digit or '_' (the regex's word
# boundaries), the repository name at most 96 characters; no '--' or '..' anywhere; not ending
# with '.git'. The Hub refuses such an id before any file is listed.
_HF_PART = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?", re.ASCII)
HF_REPO_NAME_MAX = 96
HF_REPO_ID_RULE = (
    "hf://<org>/<repo> with a Hugging Face repository id (letters, digits, '-', '_' and '.', "
    "each part starting and ending with a letter, digit or '_', the repository at most 96 "
    "characters, no '--' or '..', not ending with .git)"
)


def is_hf_repo_id(value: Any) -> bool:
    """Whether ``value`` is ``<org>/<repo>`` as huggingface_hub's ``validate_repo_id`` takes
    it (the namespace required here: a model source names its owner)."""
    if not isinstance(value, str) or value.count("/") != 1:
        return False
    org, repo = value.split("/")
    if not all(_HF_PART.fullmatch(part) for part in (org, repo)):
        return False
    if len(repo) > HF_REPO_NAME_MAX or "--" in value or ".." in value:
        return False
    return not value.endswith(".git")


# ---- S3 buckets -----------------------------------------------------------------------------

# S3 general purpose bucket names ("General purpose bucket naming rules",
# docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html): 3-63 lowercase
# letters, digits, '.' and '-', starting and ending with a letter or digit, no two adjacent
# periods, not formatted as an IP address, not starting with xn--, sthree- or amzn-s3-demo-,
# not ending with -s3alias (access point aliases), --ol-s3 (Object Lambda), .mrap
# (Multi-Region Access Points), --x-s3 (directory buckets) or --table-s3 (table buckets).
# A model source is held to the same rule: the seed Job's grant names a bucket, not an alias.
S3_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
S3_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
S3_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
S3_BUCKET_RULE = (
    "a valid S3 bucket name (3-63 lowercase letters, digits, '.' and '-', starting and ending "
    "with a letter or digit, no '..', not an IP address, not starting with xn--, sthree- or "
    "amzn-s3-demo-, not ending with -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3)"
)


def is_s3_bucket_name(value: Any) -> bool:
    """Whether ``value`` is a general purpose bucket's name (the rules above)."""
    if not isinstance(value, str) or not S3_BUCKET.fullmatch(value) or ".." in value:
        return False
    if value.startswith(S3_RESERVED_PREFIXES) or value.endswith(S3_RESERVED_SUFFIXES):
        return False
    return not is_ip_address(value)


# ---- Cloud Storage buckets ------------------------------------------------------------------

# Cloud Storage bucket names ("Bucket naming", cloud.google.com/storage/docs/buckets#naming,
# formerly /storage/docs/naming-buckets): 3-63 lowercase letters, digits, '-', '_' and '.',
# starting and ending with a letter or digit; up to 222 with dots, each dot-separated part at
# most 63; not an IP address; not starting with "goog"; not containing "google" or close
# misspellings, such as "g00gle" (the page's own example: a zero for either 'o' is refused
# here; other misspellings Google may refuse at deploy).
_GCS_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")
_GOOGLE = re.compile(r"g[o0][o0]gle")
GCS_BUCKET_RULE = (
    "a valid Cloud Storage bucket name (3-63 lowercase letters, digits, '-', '_' and '.', "
    "starting and ending with a letter or digit; up to 222 with dots, 63 between dots; not "
    "starting with 'goog', without 'google' or a close misspelling such as 'g00gle', not an IP "
    "address)"
)


def is_gcs_bucket_name(value: Any) -> bool:
    """Whether ``value`` is a Cloud Storage bucket's name (the rules above)."""
    if not isinstance(value, str) or not _GCS_BUCKET.fullmatch(value):
        return False
    if value.startswith("goog") or _GOOGLE.search(value):
        return False
    parts = value.split(".")
    if not (len(value) <= 63 or len(parts) > 1) or not all(0 < len(p) <= 63 for p in parts):
        return False
    return not is_ip_address(value)


# ---- Azure storage accounts and blob containers ---------------------------------------------

# Storage account names (learn.microsoft.com/azure/storage/common/storage-account-overview,
# "Storage account name"): 3-24 lowercase letters and digits, unique across Azure.
_AZURE_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")
AZURE_ACCOUNT_RULE = "a storage account name (3-24 lowercase letters and digits, unique in Azure)"


def is_azure_account_name(value: Any) -> bool:
    return isinstance(value, str) and _AZURE_ACCOUNT.fullmatch(value) is not None


# Container names (learn.microsoft.com/rest/api/storageservices/naming-and-referencing-
# containers--blobs--and-metadata): 3-63 lowercase letters, digits and '-', starting and ending
# with a letter or digit, every '-' between letters or digits (no '--'). File share names
# (naming-and-referencing-shares--directories--files--and-metadata) have the same shape.
_AZURE_CONTAINER = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}")
AZURE_CONTAINER_RULE = (
    "a blob container name (3-63 lowercase letters, digits and '-', starting and ending with a "
    "letter or digit, no '--')"
)


def is_azure_container_name(value: Any) -> bool:
    """A container's (or a file share's) name: the rule above."""
    return (
        isinstance(value, str)
        and _AZURE_CONTAINER.fullmatch(value) is not None
        and not value.endswith("-")
    )


# Resource group names (learn.microsoft.com/azure/azure-resource-manager/management/resource-
# name-rules, Microsoft.Resources): 1-90 letters, digits, '_', '-', '.', '(' and ')', not
# ending with '.'.
AZURE_RESOURCE_GROUP_PATTERN = r"[\w().-]{0,89}[\w()-]"
_AZURE_RESOURCE_GROUP = re.compile(AZURE_RESOURCE_GROUP_PATTERN)
AZURE_RESOURCE_GROUP_RULE = (
    "a resource group name (1-90 letters, digits, '_', '-', '.', '(' and ')', not ending with '.')"
)


def is_azure_resource_group_name(value: Any) -> bool:
    return isinstance(value, str) and _AZURE_RESOURCE_GROUP.fullmatch(value) is not None
