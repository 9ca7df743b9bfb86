"""Velero's storage on GKE: a GCS bucket (uniform bucket-level access, public access prevented)
and a Google service account the Velero server's ServiceAccount acts as through workload
identity, with object access on that bucket alone."""

from __future__ import annotations

import hashlib
from typing import Any

import pulumi

from ..access import Consumer
from ..kube.velero import NAMESPACE, SERVICE_ACCOUNT, STORAGE, VeleroSettings, VeleroStorage
from .cluster import GkeCluster, GkeClusterFacts, require_workload_pool
from .identity import GoogleServiceAccount, grant

OBJECT_ROLE = "roles/storage.objectAdmin"
"""The bucket role velero-plugin-for-gcp ``README.md`` "Set permissions for Velero" grants
(``gsutil iam ch serviceAccount:...:objectAdmin gs://${BUCKET}``): objects only, on this
bucket. The README's project role adds Compute Engine snapshot permissions, left out: Velero
takes no volume snapshots here."""
SIGN_ROLE = "roles/iam.serviceAccountTokenCreator"
"""Holds ``iam.serviceAccounts.signBlob``, which the same README lists so the server signs
download URLs for ``velero backup logs`` and ``describe``; granted on the account itself only."""


def account_id(cluster: str) -> str:
    """A Google service account id (6-30 characters, lowercase letters, digits, hyphens,
    starting with a letter) for the cluster's Velero."""
    digest = hashlib.sha256(cluster.encode()).hexdigest()[:6]
    stem = "".join(c if c.isalnum() else "-" for c in cluster.lower()).strip("-")[:15]
    return f"velero-{stem}-{digest}".replace("--", "-")


def velero_storage(
    scope: pulumi.Resource, cluster: str, facts: GkeClusterFacts, settings: VeleroSettings
) -> VeleroStorage:
    """The bucket (in the cluster's region, protected and kept on delete) and Google service
    account of the Velero of GKE cluster ``cluster``, under its ``scope``."""
    import pulumi_gcp as gcp

    name = f"{cluster}-velero"
    bucket = gcp.storage.Bucket(
        f"{name}-bucket",
        name=settings.bucket,
        location=facts.region,
        project=facts.project,
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        opts=pulumi.ResourceOptions(parent=scope, protect=True, retain_on_delete=True),
    )
    granted = grant(
        f"{name}-bucket-member",
        facts=facts,
        bucket=bucket.name,
        role=OBJECT_ROLE,
        consumer=Consumer(NAMESPACE, False, SERVICE_ACCOUNT),
        parent=scope,
        google_account=GoogleServiceAccount(
            resource_name=f"{name}-gsa",
            user_resource_name=f"{name}-gsa-user",
            account_id=account_id(cluster),
            display_name=f"Velero on cluster {cluster}",
        ),
    )
    account: Any = granted.resources["google_account"]
    signer = gcp.serviceaccount.IAMMember(
        f"{name}-gsa-signer",
        service_account_id=account.name,
        role=SIGN_ROLE,
        member=account.member,
        opts=pulumi.ResourceOptions(parent=scope),
    )
    return VeleroStorage(
        provider="gcp",
        plugin="velero/velero-plugin-for-gcp",
        bucket=bucket.name,
        # backupstoragelocation.md of the plugin: the account that signs download URLs.
        config={"serviceAccount": account.email},
        service_account_annotations=dict(granted.service_account_annotations or {}),
        ready=[*granted.ready, signer],
    )


def gke_velero(scope: GkeCluster, settings: VeleroSettings, store: str) -> VeleroStorage:
    """Velero's storage on the GKE cluster of ``scope`` (``store`` is named if the cluster
    has no workload pool)."""
    facts = scope.facts(store, require_workload_pool)
    return velero_storage(scope, scope.scope_name, facts, settings)


STORAGE[GkeCluster.kind] = gke_velero
