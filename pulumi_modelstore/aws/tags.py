"""AWS tags for a store's resources (AWS facts stay in the AWS room: GCP labels and Azure tags
have rules of their own)."""

from __future__ import annotations

from collections.abc import Mapping

from ..store import MANAGED_BY, STORE_LABEL


def store_tags(name: str, tags: Mapping[str, str]) -> dict[str, str]:
    """Tags for a store's AWS resources: the user's, then the store's own (which win):
    ``Name`` (what the console shows) and the store and manager keys."""
    return {**tags, "Name": name, STORE_LABEL: name, "app.kubernetes.io/managed-by": MANAGED_BY}


def cluster_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """Tags for what a cluster scope owns (a driver add-on, a shared node role): the user's
    tags of the store that made it, and the manager key; no store key, since stores share it."""
    return {**tags, "app.kubernetes.io/managed-by": MANAGED_BY}
