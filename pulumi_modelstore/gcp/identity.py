"""Workload identity on GKE: the IAM member string of a Kubernetes service account.

FACTS (GCP, identity, current): grant roles to the direct workload identity principal
``principal://iam.googleapis.com/projects/<PROJECT_NUMBER>/locations/global/workloadIdentityPools/
<PROJECT_ID>.svc.id.goog/subject/ns/<NS>/sa/<KSA>`` (no Google service account). The same
namespace and service account name in ANY cluster of the project is the same principal.
"""

from __future__ import annotations


def workload_identity_principal(
    project_number: str, workload_pool: str, namespace: str, service_account: str
) -> str:
    """The IAM member naming Kubernetes service account ``namespace/service_account`` of the
    project's workload pool (``<project>.svc.id.goog``)."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{workload_pool}/subject/ns/{namespace}/sa/{service_account}"
    )
