"""The manifest digest as an output: the seed Job records the digest of the manifest it
published in a ConfigMap (``model/record.py``, from inside its pod), and the store reads that
ConfigMap back once the Job is done.

Why a read that waits for the Job gives a real value and no failed preview:

- pulumi-kubernetes drops ``status`` from what a create returns in a preview
  (pulumi/pulumi-kubernetes at commit 94977969, ``provider/pkg/provider/provider.go`` lines
  1849-1854), and a create it cannot dry-run returns the inputs alone (lines 1728-1736); the
  Python SDK resolves an output the engine leaves out as unknown in a preview
  (pulumi/pulumi at commit 1b594989, ``sdk/python/lib/pulumi/runtime/rpc.py`` lines
  1597-1603). So ``job.status`` is unknown in the preview of a new (or replaced) seed Job, and
  known once ``pulumi up`` has waited for it to complete (``kube/model_jobs.py``).
- The read's id is made from that status, so it is unknown in such a preview: the SDK sends
  the unknown value as the id (``rpc.py`` lines 688-689, ``runtime/resource.py`` line 826) and
  the engine skips a read whose id is unknown, leaving its outputs unknown
  (``pkg/resource/deploy/step.go`` lines 1314-1320). In ``pulumi up`` the read runs after the
  Job completes and gives the digest it recorded; a later preview with the Job unchanged reads
  it at once.

The seed's ServiceAccount (the loader's consumer account, or one of the seed's own where the
store gives its consumers none) gets a Role for this alone: ``create`` on ConfigMaps in the loader
namespace (RBAC cannot name the object of a ``create``: kubernetes.io/docs/reference/
access-authn-authz/rbac/#referring-to-resources) and ``get``/``update`` on the one ConfigMap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..model.record import DIGEST_KEY
from .model_jobs import job_name


def record_name(claim_name: str, revision: str) -> str:
    """The ConfigMap the seed of ``revision`` records its manifest digest in:
    ``<claim>-manifest-<revision slug>``, named as the Jobs are (a DNS label)."""
    return job_name(claim_name, "manifest", revision)


def record_access(
    resource_name: str,
    *,
    name: str,
    namespace: str,
    config_map: str,
    service_account: str,
    labels: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> list[pulumi.Resource]:
    """The Role and RoleBinding ``name`` that let the seed's ``service_account`` (its own,
    never the namespace's ``default``: other pods of a namespace a user names may run as that)
    write ``config_map`` (module docstring); the seed Job waits for both."""
    # Plain dicts for the provider's TypedDict inputs, as kube/volumes.py passes them.
    metadata: Any = {"name": name, "namespace": namespace, "labels": dict(labels)}
    rules: Any = [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": [config_map],
            "verbs": ["get", "update"],
        },
    ]
    role_ref: Any = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
    subjects: Any = [
        {
            "kind": "ServiceAccount",
            "name": service_account,
            "namespace": namespace,
        }
    ]
    role = k8s.rbac.v1.Role(resource_name, metadata=metadata, rules=rules, opts=opts)
    # A binding may name a Role made after it (it grants nothing until then): the Job waits for
    # both.
    binding = k8s.rbac.v1.RoleBinding(
        resource_name, metadata=metadata, role_ref=role_ref, subjects=subjects, opts=opts
    )
    return [role, binding]


def read_digest(
    resource_name: str,
    *,
    namespace: str,
    config_map: str,
    seed_job: k8s.batch.v1.Job,
    opts: pulumi.ResourceOptions,
) -> pulumi.Output[str]:
    """The digest the seed Job recorded in ``config_map``: read once the Job is done (its
    status is known, module docstring), unknown before; empty if the ConfigMap lost it (a
    verification Job then refuses the manifest)."""
    read_id = seed_job.status.apply(lambda _: f"{namespace}/{config_map}")
    found = k8s.core.v1.ConfigMap.get(
        resource_name,
        read_id,
        # order: digest-after-seed
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[seed_job])),
    )
    return found.data.apply(lambda data: str((data or {}).get(DIGEST_KEY, "")))
