"""GCP value rules shared by the GCP stores. Like ``validation.py``'s, each skips Outputs."""

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ModelStoreInputError
from ..model import names
from ..validation import is_output, valid_name

# Resource Manager labels (cloud.google.com/resource-manager/docs/labels-overview, also the
# Cloud Storage bucket label rules): at most 64 labels; keys 1-63 characters of lowercase
# letters, digits, '_' and '-', starting with a lowercase letter; values 0-63 of the same
# characters. (International characters are allowed too; this library keeps to ASCII.)
MAX_LABELS = 64
_LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
_LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
LABEL_KEY_RULE = (
    "GCP label keys (1-63 lowercase letters, digits, '_' and '-', starting with a letter)"
)
LABEL_VALUE_RULE = "GCP label values (at most 63 lowercase letters, digits, '_' and '-')"


def label_value(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not isinstance(value, str) or not _LABEL_VALUE.fullmatch(value):
        raise ModelStoreInputError(store, field, value, LABEL_VALUE_RULE)


def resource_labels(store: str, field: str, labels: Mapping[str, Any], own: int) -> None:
    """The user's labels: valid keys and values, not the store's own keys, and at most 64 on
    a resource counting the ``own`` labels the store adds."""
    for key, value in labels.items():
        if not _LABEL_KEY.fullmatch(key):
            raise ModelStoreInputError(store, field, key, f"keys that are {LABEL_KEY_RULE}")
        if not is_output(value) and not _LABEL_VALUE.fullmatch(value):
            raise ModelStoreInputError(store, field, value, f"values that are {LABEL_VALUE_RULE}")
    if len(labels) + own > MAX_LABELS:
        raise ModelStoreInputError(
            store,
            field,
            f"{len(labels)} labels",
            f"at most {MAX_LABELS - own} labels (GCP allows {MAX_LABELS} a resource, and the "
            f"store adds {own} of its own)",
        )


# Cloud Storage bucket names: the one rule in ``model/names.py`` (cloud.google.com/storage/docs/
# buckets#naming), which gcs-fuse's bucket, Hyperdisk ML's source_uri, the model section's gs://
# sources and Velero's bucket share.
BUCKET_NAME_RULE = names.GCS_BUCKET_RULE
is_bucket_name = names.is_gcs_bucket_name


def bucket_name(store: str, field: str, value: Any) -> None:
    valid_name(store, field, value, is_bucket_name, BUCKET_NAME_RULE)


# Project ids (cloud.google.com/resource-manager/docs/creating-managing-projects; the Resource
# Manager API's projectId): 6-30 lowercase letters, digits and hyphens, starting with a letter,
# no trailing hyphen. Projects made before that rule may carry a domain prefix
# (example.com:my-project), which the APIs still take.
_PROJECT_ID = re.compile(r"(?:[a-z0-9-]+(?:\.[a-z0-9-]+)+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]")
PROJECT_ID_RULE = (
    "a GCP project id (6-30 lowercase letters, digits and hyphens, starting with a letter, not "
    "ending with a hyphen; or a legacy domain-scoped id such as example.com:my-project)"
)
# GKE cluster names (cloud.google.com/kubernetes-engine/docs/reference/rest/v1/
# projects.locations.clusters, Cluster.name): up to 40 lowercase letters, digits and hyphens,
# starting with a letter and ending with a letter or digit.
_CLUSTER_NAME = re.compile(r"[a-z](?:[a-z0-9-]{0,38}[a-z0-9])?")
CLUSTER_NAME_RULE = (
    "a GKE cluster name (1-40 lowercase letters, digits and hyphens, starting with a letter and "
    "ending with a letter or digit)"
)
# Compute Engine locations (cloud.google.com/compute/docs/regions-zones): a region
# (us-central1) or a zone, its region and a letter (us-central1-a).
_LOCATION = re.compile(r"[a-z]+-[a-z]+\d+(?:-[a-z])?")
LOCATION_RULE = "a GKE location: a region such as us-central1 or a zone such as us-central1-a"


def project_id(store: str | None, field: str, value: Any) -> None:
    if not is_output(value) and not (isinstance(value, str) and _PROJECT_ID.fullmatch(value)):
        raise ModelStoreInputError(store, field, value, PROJECT_ID_RULE)


def cluster_name(store: str | None, field: str, value: Any) -> None:
    if not is_output(value) and not (isinstance(value, str) and _CLUSTER_NAME.fullmatch(value)):
        raise ModelStoreInputError(store, field, value, CLUSTER_NAME_RULE)


def location(store: str | None, field: str, value: Any) -> None:
    if not is_output(value) and not (isinstance(value, str) and _LOCATION.fullmatch(value)):
        raise ModelStoreInputError(store, field, value, LOCATION_RULE)
