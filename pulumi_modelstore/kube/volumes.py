"""Static PersistentVolume + PersistentVolumeClaim pairs: the binding every store hides."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

# The annotation pulumi-kubernetes reads to skip waiting for a PVC to bind.
SKIP_AWAIT = "pulumi.com/skipAwait"

# Paths of a static PV whose change replaces it (replace_on_changes; why in static_volume).
PV_REPLACED_ON = ("spec.volumeMode", "spec.nodeAffinity")
# The static claim's request, kept as created (ignore_changes; why in static_volume).
CLAIM_REQUEST_KEPT = ("spec.resources.requests.storage",)


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

    A change of ``capacity`` updates the PV in place; the claim keeps the request it was created
    with (``ignore_changes``). A change of the PV's ``volumeMode`` or ``nodeAffinity`` replaces
    the PV, and so its claim (``replace_on_changes``).
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
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=list(depends_on),  # the caller's, each with its reason there
            # Kubernetes refuses to change a PV's volumeMode, or its nodeAffinity once set
            # (k8s.io/kubernetes pkg/apis/core/validation/validation.go
            # ValidatePersistentVolumeUpdate; a mutable nodeAffinity is the alpha feature gate
            # MutablePVNodeAffinity, off by default, Kubernetes 1.35), but pulumi-kubernetes sends
            # both as in-place updates (provider/pkg/provider/diff.go, 94977969, lines 87-110:
            # only the volume sources force a new PV). A new node is a new PV, and through
            # replace_with a new claim. spec.capacity is mutable: an in-place update.
            replace_on_changes=list(PV_REPLACED_ON),
        ),
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
        #
        # The request is never updated: Kubernetes refuses a smaller one
        # (ValidatePersistentVolumeClaimUpdate: "field can not be less than previous value") and a
        # larger one unless the claim's StorageClass allows expansion
        # (plugin/pkg/admission/storage/persistentvolume/resize/admission.go, allowResize:
        # never for class ""), while pulumi-kubernetes sends both as updates (diff.go lines
        # 111-118 list no spec.resources). For a claim pre-bound to its PV the request is only
        # a binding match (request <= the PV's spec.capacity, pkg/controller/volume/
        # persistentvolume/pv_controller.go checkVolumeSatisfyClaim); the PV's capacity is what
        # the store reports, and it is updated in place. Replacing the claim instead would make
        # a capacity change restart every pod using it (and its delete waits for them,
        # kubernetes.io/pvc-protection), and the PV, still naming the old claim's uid, would not
        # bind the new one. A claim replaced with its PV keeps its old request too (the engine
        # takes ignored inputs from the old state: pulumi/pulumi
        # pkg/resource/deploy/step_generator.go, 1b594989, lines 1264-1269): `modelstore plan
        # --compare` blocks a replacement whose new PV is smaller than that request.
        opts=pulumi.ResourceOptions(
            parent=parent,
            # Pre-bound to the PV by name: made after it, it binds at once, and a destroy
            # deletes it before the PV (order: volume-before-claim).
            depends_on=[pv],
            replace_with=[pv],
            ignore_changes=list(CLAIM_REQUEST_KEPT),
        ),
    )
    return pv, pvc


DYNAMIC_SUFFIX = "-dynamic"
"""A store's StorageClass for claims made on demand is ``<store>-dynamic``."""


@dataclass(frozen=True)
class DynamicClass:
    """A StorageClass for claims made on demand on a store's storage (``dynamic_claims``):
    what the backend's driver provisions each claim as, apart from the model's directory."""

    provisioner: str
    parameters: Mapping[str, pulumi.Input[str]]
    reclaim_policy: str
    """``Delete`` or ``Retain``: the backend says why next to its choice."""
    volume_binding_mode: str = "Immediate"
    """``Immediate`` where the storage has no zone (a claim binds at once, so a program that
    makes one does not wait for a pod)."""
    mount_options: Sequence[str] = ()
    allow_volume_expansion: bool = False
    ready: Sequence[pulumi.Resource] = ()
    """What the driver's controller needs before it can provision a claim on the class (a
    grant on the storage), besides what the store's PVs wait for. Default: nothing more."""


def dynamic_storage_class(
    store: str,
    dynamic: DynamicClass,
    *,
    labels: Mapping[str, str],
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource],
) -> k8s.storage.v1.StorageClass:
    """The StorageClass ``<store>-dynamic``, after what the store's PVs wait for (the driver,
    the network) and the class's own ``ready``: a claim on it is provisioned at once."""
    name = f"{store}{DYNAMIC_SUFFIX}"
    return k8s.storage.v1.StorageClass(
        name,
        metadata={"name": name, "labels": dict(labels)},
        provisioner=dynamic.provisioner,
        parameters=dict(dynamic.parameters),
        reclaim_policy=dynamic.reclaim_policy,
        volume_binding_mode=dynamic.volume_binding_mode,
        allow_volume_expansion=dynamic.allow_volume_expansion,
        mount_options=list(dynamic.mount_options) or None,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[*depends_on, *dynamic.ready]),
    )
