"""Workload identity on GKE: the IAM member of a Kubernetes service account, and the one
``grant`` that gives a consumer a role on a bucket.

FACTS (GCP, identity, current): grant roles to the direct workload identity principal
``principal://iam.googleapis.com/projects/<PROJECT_NUMBER>/locations/global/workloadIdentityPools/
<PROJECT_ID>.svc.id.goog/subject/ns/<NS>/sa/<KSA>`` (no Google service account). The same
namespace and service account name in ANY cluster of the project is the same principal. The
legacy path (deprecated by the GCS FUSE driver): a Google service account holds the role, the
Kubernetes service account may impersonate it (``roles/iam.workloadIdentityUser`` for
``serviceAccount:<PROJECT_ID>.svc.id.goog[<NS>/<KSA>]``) and carries the annotation
``iam.gke.io/gcp-service-account``. Roles: ``roles/storage.objectViewer`` for readers,
``roles/storage.objectUser`` for writers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from ..access import Consumer, Grant
from .cluster import GkeClusterFacts

READER_ROLE = "roles/storage.objectViewer"
WRITER_ROLE = "roles/storage.objectUser"
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
GSA_ANNOTATION = "iam.gke.io/gcp-service-account"


def workload_identity_principal(
    project_number: str, workload_pool: str, namespace: str, service_account: str
) -> str:
    """The IAM member naming Kubernetes service account ``namespace/service_account`` of the
    project's workload pool (``<project>.svc.id.goog``)."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{workload_pool}/subject/ns/{namespace}/sa/{service_account}"
    )


def workload_pool(facts: GkeClusterFacts) -> str:
    """The cluster's workload pool: the project's ``<project>.svc.id.goog``."""
    return facts.workload_pool or f"{facts.project}.svc.id.goog"


def workload_principal(facts: GkeClusterFacts, namespace: str, service_account: str) -> str:
    """The direct workload identity principal of a Kubernetes service account."""
    return workload_identity_principal(
        facts.project_number, workload_pool(facts), namespace, service_account
    )


def legacy_member(facts: GkeClusterFacts, namespace: str, service_account: str) -> str:
    """The member a Google service account lets impersonate it (the legacy path)."""
    return f"serviceAccount:{workload_pool(facts)}[{namespace}/{service_account}]"


@dataclass(frozen=True)
class GoogleServiceAccount:
    """The legacy path's Google service account for one consumer: its resource names (the
    account's and its impersonation grant's), id and display name."""

    resource_name: str
    user_resource_name: str
    account_id: str
    display_name: str


def grant(
    resource_name: str,
    *,
    facts: GkeClusterFacts,
    bucket: Any,
    role: str,
    consumer: Consumer,
    parent: pulumi.Resource,
    google_account: GoogleServiceAccount | None = None,
) -> Grant:
    """``role`` on ``bucket`` (bucket-level IAM, never project-level) for one consumer: its
    direct workload identity principal, or with ``google_account`` a Google service account
    its Kubernetes service account impersonates (annotated with it). A mount waits for the
    bucket grant (and the impersonation grant)."""
    import pulumi_gcp as gcp

    ns, ksa = consumer.namespace, consumer.service_account
    ready: list[pulumi.Resource] = []
    annotations: dict[str, Any] | None = None
    resources: dict[str, Any] = {}
    if google_account is None:
        member: Any = workload_principal(facts, ns, ksa)
    else:
        account = gcp.serviceaccount.Account(
            google_account.resource_name,
            account_id=google_account.account_id,
            display_name=google_account.display_name,
            project=facts.project,
            opts=pulumi.ResourceOptions(parent=parent),
        )
        impersonation = gcp.serviceaccount.IAMMember(
            google_account.user_resource_name,
            service_account_id=account.name,
            role=WORKLOAD_IDENTITY_USER,
            member=legacy_member(facts, ns, ksa),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        ready.append(impersonation)  # the KSA must be able to act as the account
        member = account.member
        annotations = {GSA_ANNOTATION: account.email}
        resources["google_account"] = account
    bucket_member = gcp.storage.BucketIAMMember(
        resource_name,
        bucket=bucket,
        role=role,
        member=member,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    resources["bucket_member"] = bucket_member
    return Grant(
        ready=[*ready, bucket_member],
        value=member,
        service_account_annotations=annotations,
        resources=resources,
    )


def source_grant(
    resource_name: str, *, bucket: str, member: Any, parent: pulumi.Resource
) -> pulumi.Resource:
    """Read on a model's ``gs://`` source bucket (``roles/storage.objectViewer``: list and get
    its objects, what the seed program's JSON API listing and media downloads need) for the
    seed Job's ``member``: a bucket IAM member, never a project-level role. Cloud Storage IAM
    has no per-prefix condition on a plain bucket member, so the grant covers the bucket."""
    import pulumi_gcp as gcp

    return gcp.storage.BucketIAMMember(
        resource_name,
        bucket=bucket,
        role=READER_ROLE,
        member=member,
        opts=pulumi.ResourceOptions(parent=parent),
    )
