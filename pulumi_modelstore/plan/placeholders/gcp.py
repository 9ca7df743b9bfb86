"""GCP placeholders: data source answers (a GKE cluster with workload identity, both CSI
add-ons and GKE_METADATA node pools; a project and its number; the Cloud Storage service
agent) and the outputs of created GCP resources. Tests answer otherwise through overrides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .registry import INVOKES, Created, digest, outputs_of

DEFAULT_GCP_PROJECT = "acme-ml"


def gcp_project(config: Mapping[str, str], args: Mapping[str, Any] | None = None) -> str:
    for key in ("project", "projectId"):
        if args and args.get(key):
            return str(args[key])
    return config.get("gcp:project") or DEFAULT_GCP_PROJECT


def project_number(project: str) -> str:
    return str(int(digest("project-number", project, length=10), 16) % 10**12).rjust(12, "1")


def _gke_cluster(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    name = str(args.get("name", "cluster"))
    project = gcp_project(config, args)
    location = str(args.get("location") or config.get("gcp:region") or "us-central1")
    return {
        "id": f"projects/{project}/locations/{location}/clusters/{name}",
        "name": name,
        "project": project,
        "location": location,
        "enableAutopilot": False,
        "masterVersion": "1.34.1-gke.1829001",
        "workloadIdentityConfigs": [{"workloadPool": f"{project}.svc.id.goog"}],
        "addonsConfigs": [
            {
                "gcsFuseCsiDriverConfigs": [{"enabled": True}],
                "gcePersistentDiskCsiDriverConfigs": [{"enabled": True}],
            }
        ],
        "nodePools": [
            {
                "name": f"{name}-gpu",
                "nodeConfigs": [{"workloadMetadataConfigs": [{"mode": "GKE_METADATA"}]}],
            }
        ],
    }


def _project(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    project = gcp_project(config, args)
    return {"id": f"projects/{project}", "projectId": project, "number": project_number(project)}


def _storage_service_account(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    number = project_number(gcp_project(config, args))
    email = f"service-{number}@gs-project-accounts.iam.gserviceaccount.com"
    return {"id": email, "emailAddress": email, "member": f"serviceAccount:{email}"}


INVOKES.update(
    {
        "gcp:container/getCluster:getCluster": _gke_cluster,
        "gcp:organizations/getProject:getProject": _project,
        "gcp:storage/getProjectServiceAccount:getProjectServiceAccount": _storage_service_account,
    }
)


@outputs_of("gcp:storage/bucket:Bucket")
def _bucket(r: Created) -> dict[str, Any]:
    name = r.autoname(r.inputs.get("name")).lower()
    return {
        "name": name,
        "url": f"gs://{name}",
        "selfLink": f"https://www.googleapis.com/storage/v1/b/{name}",
    }


@outputs_of("gcp:serviceaccount/account:Account")
def _service_account(r: Created) -> dict[str, Any]:
    """A Google service account: its ``name`` is the provider's
    ``projects/<project>/serviceAccounts/<email>`` (what IAM members on it name)."""
    account = r.inputs.get("accountId") or r.name
    project = gcp_project(r.config, r.inputs)
    email = f"{account}@{project}.iam.gserviceaccount.com"
    return {
        "name": f"projects/{project}/serviceAccounts/{email}",
        "email": email,
        "member": f"serviceAccount:{email}",
        "uniqueId": r.hexid("sa", 21),
    }


@outputs_of(
    "gcp:storage/bucketIAMMember:BucketIAMMember",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember",
    "gcp:serviceaccount/iAMMember:IAMMember",
)
def _iam_member(r: Created) -> dict[str, Any]:
    """IAM member resources: the policy's etag after the change."""
    return {"etag": f"BwY{r.hexid('etag', 9)}="}


@outputs_of("gcp:container/cluster:Cluster")
def _created_gke_cluster(r: Created) -> dict[str, Any]:
    """What GKE reports of a cluster it made (GkeCluster.from_cluster): the endpoint and CA,
    the control plane's version (the least the program asked for, else the one a lookup
    answers)."""
    project = gcp_project(r.config, r.inputs)
    octet = int(r.hexid("endpoint", 2), 16)
    return {
        "name": r.autoname(r.inputs.get("name")),
        "project": project,
        "endpoint": f"34.118.{octet % 250}.{10 + octet % 200}",
        "masterAuth": {"clusterCaCertificate": "cGxhbi1wbGFjZWhvbGRlcg=="},
        "masterVersion": r.inputs.get("minMasterVersion") or "1.34.1-gke.1829001",
        "selfLink": f"https://container.googleapis.com/v1/projects/{project}/locations/"
        f"{r.inputs.get('location')}/clusters/{r.autoname(r.inputs.get('name'))}",
    }


@outputs_of("gcp:container/nodePool:NodePool")
def _created_node_pool(r: Created) -> dict[str, Any]:
    return {"name": r.autoname(r.inputs.get("name")), "project": gcp_project(r.config, r.inputs)}
