"""What every GCP store shares on the skeleton: the GKE cluster scope it joins and GCP labels."""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

from collections.abc import Mapping
from typing import Any, TypeVar

from ..access import Access, SourceGrant
from ..fields import Parser
from ..model.sources import parse_source
from ..modelsection import job_fills
from ..store import MANAGED_BY, STORE_NAME, ModelStore, ModelStoreArgs, Spec
from . import identity as gcp_identity
from . import validation as gcp_v
from .cluster import GkeCluster, GkeProjectArgs, cluster_named

# The labels the store puts on its GCP resources (GCP label keys take no '/' or '.').
STORE_LABEL_KEY = "modelstore-store"
MANAGED_BY_LABEL_KEY = "managed-by"
OWN_LABELS = 2


class GcpModelStoreArgs(ModelStoreArgs, GkeProjectArgs, total=False):
    """Fields every GCP store takes: the contract's and its cluster's (``GkeClusterArgs``'s, the
    name and location needed only when no ``cluster`` is given)."""

    cluster_name: str
    """The GKE cluster whose nodes mount the store: the ``cluster_name`` of the
    ``GkeCluster`` the store joins, made by the first store that names it. Required unless
    ``cluster`` is given."""
    location: str
    """The cluster's location, a region or a zone: its ``GkeCluster``'s ``location``.
    Required unless ``cluster`` is given."""
    resource_labels: Mapping[str, str]
    """GCP labels merged onto every GCP resource of the store (the bucket...). Default: none
    besides the store's own ``modelstore-store`` and ``managed-by``."""


# A GCP store's args type: its hooks here read the fields every GCP store has.
GcpArgs = TypeVar("GcpArgs", bound=GcpModelStoreArgs)


class GcpModelStore(ModelStore[GcpArgs, GkeCluster]):
    """Base of the GCP stores: joins the :class:`GkeCluster` its ``cluster_name`` and
    ``location`` (or ``cluster``) name."""

    args_type = GcpModelStoreArgs
    cluster_type = GkeCluster
    # A model from hf:// or gs:// is seeded by the Job, which runs as the store's Google identity.
    model_fill = job_fills(cloud="gs")

    @classmethod
    def cloud_rules(cls, p: Parser) -> None:
        """The cluster named (or given), and the GCP labels: the user's, and the store name
        the store's own label carries (a GCP label value: lowercase only)."""
        if p["cluster"] is None:
            p.check(lambda: cluster_named(p.store, p["cluster_name"], p["location"]))
        p.field_rule(gcp_v.project_id, "project")
        p.field_rule(gcp_v.resource_labels, "resource_labels", OWN_LABELS)
        if p.ok(STORE_NAME):  # else refused once already, as a Kubernetes label value
            p.check(lambda: gcp_v.label_value(p.store, STORE_NAME, p.store))

    def source_access(
        self,
        spec: Spec[GcpArgs],
        cluster: GkeCluster,
        facts: Any,
        source_facts: Any,
        access: Access,
    ) -> SourceGrant:
        """Read on the ``gs://`` source bucket (``identity.source_grant``) for the loader
        namespace's consumer: its IAM member (the workload identity principal, or the Google
        service account it impersonates), so readers' members never get it."""
        c = spec.common
        assert c.model is not None and c.loader is not None
        granted = access.by_namespace[c.loader]
        bucket = gcp_identity.source_grant(
            f"{c.name}-seed-source",
            bucket=parse_source(c.model.source).location,
            member=granted.value,
            parent=self,
        )
        return SourceGrant(ready=[bucket])

    @staticmethod
    def labels(spec: Spec[GcpModelStoreArgs]) -> dict[str, str]:
        """GCP labels for the store's resources: the user's, then the store's own."""
        return {
            **(spec.args.get("resource_labels") or {}),
            STORE_LABEL_KEY: spec.common.name,
            MANAGED_BY_LABEL_KEY: MANAGED_BY,
        }
