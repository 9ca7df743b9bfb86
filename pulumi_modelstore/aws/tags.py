"""AWS tags for a store's resources (AWS facts stay in the AWS room: GCP labels and Azure tags
have rules of their own)."""

from __future__ import annotations

from collections.abc import Mapping

from ..store import MANAGED_BY, STORE_LABEL

MANAGED_BY_TAG = "app.kubernetes.io/managed-by"
STORE_TAG_KEYS = ("Name", STORE_LABEL, MANAGED_BY_TAG)
"""The tags a store puts on each of its AWS resources itself, over the user's: they count
towards AWS's 50 per resource (``aws/validation.py`` ``tags``)."""
CLUSTER_TAG_KEYS = (MANAGED_BY_TAG,)
"""The tags a cluster scope puts on what it owns itself."""


def store_tags(name: str, tags: Mapping[str, str]) -> dict[str, str]:
    """Tags for a store's AWS resources: the user's, then the store's own (which win):
    ``Name`` (what the console shows) and the store and manager keys."""
    return {**tags, "Name": name, STORE_LABEL: name, MANAGED_BY_TAG: MANAGED_BY}


def cluster_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """Tags for what a cluster scope owns (a driver add-on, a shared node role): the user's
    tags of the store that made it, and the manager key; no store key, since stores share it."""
    return {**tags, MANAGED_BY_TAG: MANAGED_BY}
