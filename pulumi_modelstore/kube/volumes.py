"""Static PersistentVolume + PersistentVolumeClaim pairs: the binding every store hides."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

# The annotation pulumi-kubernetes reads to skip waiting for a PVC to bind.
SKIP_AWAIT = "pulumi.com/skipAwait"


def static_volume(
    resource_name: str,
    *,
    pv_name: str,
    claim_name: str,
    namespace: str,
    capacity: str,
    access_mode: str,
    source: Mapping[str, Any],
    mount_options: Sequence[str],
    labels: Mapping[str, str],
    node_affinity: Mapping[str, Any] | None,
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource],
    storage_class_name: str = "",
) -> tuple[k8s.core.v1.PersistentVolume, k8s.core.v1.PersistentVolumeClaim]:
    """One PV pre-bound to one PVC.

    The PV carries ``claimRef`` so no other claim can take it, reclaim policy Retain so deleting
    the claim never deletes data, and ``storageClassName: ""`` (or ``storage_class_name``) on
    both sides so no provisioner steps in. The PVC names the PV in ``volumeName`` and is
    replaced whenever the PV is (``replace_with``; needs Pulumi 3.207 or later).
    """
    pv_spec: Any = {
        "capacity": {"storage": capacity},
        "accessModes": [access_mode],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": storage_class_name,
        "volumeMode": "Filesystem",
        "claimRef": {"namespace": namespace, "name": claim_name},
        **source,
    }
    if mount_options:
        pv_spec["mountOptions"] = list(mount_options)
    if node_affinity:
        pv_spec["nodeAffinity"] = dict(node_affinity)
    pv_metadata: Any = {"name": pv_name, "labels": dict(labels)}
    pv = k8s.core.v1.PersistentVolume(
        f"{resource_name}-pv-{namespace}",
        metadata=pv_metadata,
        spec=pv_spec,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
    )
    pvc_metadata: Any = {"name": claim_name, "namespace": namespace, "labels": dict(labels)}
    pvc_spec: Any = {
        "accessModes": [access_mode],
        "storageClassName": storage_class_name,
        "volumeName": pv_name,
        "volumeMode": "Filesystem",
        "resources": {"requests": {"storage": capacity}},
    }
    pvc = k8s.core.v1.PersistentVolumeClaim(
        f"{resource_name}-pvc-{namespace}",
        metadata=pvc_metadata,
        spec=pvc_spec,
        # A PV's source is immutable (a new file system, server or bucket replaces it), and the
        # PV keeps its name, so pulumi-kubernetes deletes it before re-creating it
        # (provider/pkg/provider/provider.go Diff, 94977969: DeleteBeforeReplace when name and
        # namespace stay). Kubernetes keeps a bound PV while its claim exists
        # (kubernetes.io/pv-protection): that delete would wait forever. With replace_with the
        # engine deletes the claim first (pulumi/pulumi pkg/resource/deploy/step_generator.go,
        # 1b594989, findDependentCascadeReplacements) and re-creates it on the new PV. It reads
        # replace_with from the old state: a stack deployed without it takes one `pulumi up`
        # before a change that replaces its PVs. Names stay (rather than a new PV name per
        # source, created side by side): a new name would replace every deployed PV and claim.
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[pv], replace_with=[pv]),
    )
    return pv, pvc
