"""Volume snapshots and dynamically provisioned claims, for any CSI driver.

The pieces every snapshot-based pattern needs, Kubernetes-generic (the EBS specifics live in
``aws/ebs/``):

- :func:`volume_snapshot_class`: a ``snapshot.storage.k8s.io/v1`` VolumeSnapshotClass,
  ``deletionPolicy: Retain`` by default, so deleting a VolumeSnapshot never deletes the data.
- :func:`volume_snapshot`: a VolumeSnapshot of a claim.
- :func:`volume_claim`: a dynamically provisioned claim. Where the class binds on first consumer
  (``WaitForFirstConsumer``) the claim carries ``pulumi.com/skipAwait: "true"``: no pod exists at
  ``pulumi up`` time, so waiting for the bind would only time out.
- :func:`restored_claim`: a claim restored from a VolumeSnapshot (``dataSource`` kind
  VolumeSnapshot, apiGroup ``snapshot.storage.k8s.io``).
- :func:`cloned_claim`: a claim cloned from another claim, in the SAME namespace only.
- Growing a claim in place: change ``size`` of :func:`volume_claim` (or of either helper above).
  Nothing else changes, and the size lands only in ``spec.resources.requests.storage``, which
  pulumi-kubernetes updates in place (its replace list for a PVC is metadata name/namespace,
  ``spec.accessModes``, ``spec.selector``, ``spec.storageClassName`` and ``spec.volumeName``).
  The class must allow expansion; Kubernetes refuses to shrink a claim.

Every helper validates before it registers anything and raises
:class:`~pulumi_modelstore.errors.ModelStoreInputError` naming the field, the value and what is
allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import metadata as _metadata
from typing import Any, Required, TypedDict, Unpack

import pulumi
import pulumi_kubernetes as k8s

from .. import validation as v
from ..errors import ModelStoreInputError

# The one quantity rule lives in validation.py; its names stay importable from here.
from ..validation import GIB as GIB
from ..validation import SIZE_RULE as SIZE_RULE
from ..validation import size_gib as size_gib
from ..validation import storage_bytes
from .volumes import SKIP_AWAIT

SNAPSHOT_GROUP = "snapshot.storage.k8s.io"
SNAPSHOT_API_VERSION = f"{SNAPSHOT_GROUP}/v1"
DELETION_POLICIES = ("Retain", "Delete")
ACCESS_MODES = ("ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany", "ReadOnlyMany")
VOLUME_MODES = ("Filesystem", "Block")
DEFAULT_SNAPSHOT_CLASS_ANNOTATION = "snapshot.storage.kubernetes.io/is-default-class"


def snapshot_source(snapshot_name: pulumi.Input[str]) -> dict[str, Any]:
    """A claim's ``dataSource`` restoring a VolumeSnapshot in the claim's namespace."""
    return {"apiGroup": SNAPSHOT_GROUP, "kind": "VolumeSnapshot", "name": snapshot_name}


def claim_source(claim_name: pulumi.Input[str]) -> dict[str, Any]:
    """A claim's ``dataSource`` cloning another claim in the claim's namespace (the core API
    group, so no ``apiGroup``)."""
    return {"kind": "PersistentVolumeClaim", "name": claim_name}


class KubernetesObject(pulumi.CustomResource):
    """Any Kubernetes object, every top-level field as given.

    The Python SDK's ``apiextensions.CustomResource`` takes only ``spec``, but a
    VolumeSnapshotClass keeps ``driver``, ``deletionPolicy`` and ``parameters`` at the top level
    (pulumi/pulumi-kubernetes#3549). The provider treats any ``kubernetes:<group>/<version>:<Kind>``
    type as that object, so registering the whole body under that type is all it takes.
    """

    def __init__(
        self,
        resource_name: str,
        body: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        api_version, kind = body["apiVersion"], body["kind"]
        opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(version=_kubernetes_sdk_version())
        )
        super().__init__(f"kubernetes:{api_version}:{kind}", resource_name, dict(body), opts)


def _kubernetes_sdk_version() -> str:
    """The pulumi-kubernetes plugin version to use: the SDK's own, as its resources do."""
    try:
        return _metadata.version("pulumi_kubernetes")
    except _metadata.PackageNotFoundError:  # pragma: no cover - the SDK is a dependency
        return ""


def name_after(resource: pulumi.Resource, name: str) -> pulumi.Output[str]:
    """``name``, as an Output that depends on ``resource``: anything that uses it waits for the
    resource, and a destroy deletes the user first. The name stays known in a preview."""
    return resource.urn.apply(lambda _: name)


def volume_snapshot_class(
    resource_name: str,
    *,
    name: str,
    driver: str,
    deletion_policy: str = "Retain",
    parameters: Mapping[str, pulumi.Input[str]] | None = None,
    is_default: bool = False,
    labels: Mapping[str, str] | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> KubernetesObject:
    """A VolumeSnapshotClass for ``driver``.

    ``deletion_policy`` Retain (the default) keeps the VolumeSnapshotContent and the storage
    system's snapshot when a VolumeSnapshot is deleted: deleting the Kubernetes object must not
    delete the data. ``Delete`` removes both. ``is_default`` marks the class as the cluster's
    default for snapshots that name no class. The class needs the snapshot CRDs: pass the
    snapshot controller install in ``opts.depends_on``.
    """
    v.dns_subdomain(resource_name, "name", name)
    v.dns_subdomain(resource_name, "driver", driver)
    v.one_of(resource_name, "deletion_policy", deletion_policy, DELETION_POLICIES)
    params = v.string_map(resource_name, "parameters", parameters)
    default = v.flag(resource_name, "is_default", is_default)
    body: dict[str, Any] = {
        "apiVersion": SNAPSHOT_API_VERSION,
        "kind": "VolumeSnapshotClass",
        "metadata": {
            "name": name,
            "labels": v.label_map(resource_name, "labels", labels),
            "annotations": {DEFAULT_SNAPSHOT_CLASS_ANNOTATION: "true" if default else "false"},
        },
        "driver": driver,
        "deletionPolicy": deletion_policy,
    }
    if params:
        body["parameters"] = params
    return KubernetesObject(resource_name, body, opts)


def volume_snapshot(
    resource_name: str,
    *,
    name: str,
    namespace: str,
    claim_name: pulumi.Input[str],
    snapshot_class_name: pulumi.Input[str],
    labels: Mapping[str, str] | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.apiextensions.CustomResource:
    """A VolumeSnapshot of the claim ``claim_name`` in ``namespace`` (a snapshot lives in its
    claim's namespace). Take it when no pod is writing: pass the writer (e.g. a loader Job that
    Pulumi waits to complete) in ``opts.depends_on``."""
    v.dns_subdomain(resource_name, "name", name)
    v.dns_label(resource_name, "namespace", namespace)
    v.dns_subdomain(resource_name, "claim_name", claim_name)
    v.dns_subdomain(resource_name, "snapshot_class_name", snapshot_class_name)
    snapshot_labels = v.label_map(resource_name, "labels", labels)
    return k8s.apiextensions.CustomResource(
        resource_name,
        api_version=SNAPSHOT_API_VERSION,
        kind="VolumeSnapshot",
        metadata={"name": name, "namespace": namespace, "labels": snapshot_labels},
        spec={
            "volumeSnapshotClassName": snapshot_class_name,
            "source": {"persistentVolumeClaimName": claim_name},
        },
        opts=opts,
    )


def claim_spec(
    store: str,
    *,
    size: pulumi.Input[str],
    storage_class_name: pulumi.Input[str],
    access_modes: Sequence[str] = ("ReadWriteOnce",),
    volume_mode: str = "Filesystem",
    data_source: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A validated PersistentVolumeClaim spec (also the spec of a StatefulSet
    volumeClaimTemplate)."""
    storage_bytes(store, "size", size)
    v.dns_subdomain(store, "storage_class_name", storage_class_name)
    v.string_list(store, "access_modes", access_modes)
    if not list(access_modes):
        raise ModelStoreInputError(
            store, "access_modes", list(access_modes), f"one or more of {', '.join(ACCESS_MODES)}"
        )
    for mode in access_modes:
        v.one_of(store, "access_modes", mode, ACCESS_MODES)
    v.one_of(store, "volume_mode", volume_mode, VOLUME_MODES)
    spec: dict[str, Any] = {
        "accessModes": list(access_modes),
        "storageClassName": storage_class_name,
        "volumeMode": volume_mode,
        "resources": {"requests": {"storage": size}},
    }
    if data_source is not None:
        spec["dataSource"] = dict(data_source)
    return spec


def volume_claim(
    resource_name: str,
    *,
    name: str,
    namespace: str,
    size: pulumi.Input[str],
    storage_class_name: pulumi.Input[str],
    access_modes: Sequence[str] = ("ReadWriteOnce",),
    volume_mode: str = "Filesystem",
    data_source: Mapping[str, Any] | None = None,
    binding_waits_for_consumer: bool = True,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.core.v1.PersistentVolumeClaim:
    """A dynamically provisioned claim of ``size`` (a quantity with a unit, e.g. ``100Gi``).

    ``binding_waits_for_consumer`` (default True: every class this library makes binds on first
    consumer) annotates the claim ``pulumi.com/skipAwait: "true"``, so ``pulumi up`` does not
    wait for a bind that only a pod triggers. To grow the claim in place, change ``size`` and run
    ``pulumi up``: only ``spec.resources.requests.storage`` changes, an in-place update.
    """
    v.dns_subdomain(resource_name, "name", name)
    v.dns_label(resource_name, "namespace", namespace)
    claim_spec_input: Any = claim_spec(
        resource_name,
        size=size,
        storage_class_name=storage_class_name,
        access_modes=access_modes,
        volume_mode=volume_mode,
        data_source=data_source,
    )
    claim_labels = v.label_map(resource_name, "labels", labels)
    all_annotations = v.annotation_map(resource_name, "annotations", annotations)
    if v.flag(resource_name, "binding_waits_for_consumer", binding_waits_for_consumer):
        all_annotations[SKIP_AWAIT] = "true"
    claim_metadata: Any = {
        "name": name,
        "namespace": namespace,
        "labels": claim_labels,
    }
    if all_annotations:
        claim_metadata["annotations"] = all_annotations
    return k8s.core.v1.PersistentVolumeClaim(
        resource_name,
        metadata=claim_metadata,
        spec=claim_spec_input,
        opts=opts,
    )


class ClaimArgs(TypedDict, total=False):
    """A claim's own fields for :func:`restored_claim` and :func:`cloned_claim`: those of
    :func:`volume_claim` but its data source, with its defaults (ReadWriteOnce, Filesystem,
    waiting for a consumer, no labels or annotations)."""

    name: Required[str]
    namespace: Required[str]
    size: Required[pulumi.Input[str]]
    storage_class_name: Required[pulumi.Input[str]]
    access_modes: Sequence[str]
    volume_mode: str
    binding_waits_for_consumer: bool
    labels: Mapping[str, str] | None
    annotations: Mapping[str, str] | None
    opts: pulumi.ResourceOptions | None


def restored_claim(
    resource_name: str, *, snapshot_name: pulumi.Input[str], **claim: Unpack[ClaimArgs]
) -> k8s.core.v1.PersistentVolumeClaim:
    """A claim (:func:`volume_claim`) restored from the VolumeSnapshot ``snapshot_name`` in the
    same ``namespace``. ``size`` must be at least the snapshot's restore size."""
    v.dns_subdomain(resource_name, "snapshot_name", snapshot_name)
    return volume_claim(resource_name, data_source=snapshot_source(snapshot_name), **claim)


def cloned_claim(
    resource_name: str,
    *,
    source_claim_name: pulumi.Input[str],
    source_namespace: str,
    **claim: Unpack[ClaimArgs],
) -> k8s.core.v1.PersistentVolumeClaim:
    """A claim (:func:`volume_claim`) cloned from ``source_claim_name``.

    Kubernetes clones only within a namespace: a ``namespace`` other than ``source_namespace`` is
    refused here rather than left to fail at provisioning. The clone must use the source's
    storage class and volume mode, and ``size`` must be at least the source's.
    """
    namespace = claim["namespace"]
    v.dns_label(resource_name, "source_namespace", source_namespace)
    v.dns_label(resource_name, "namespace", namespace)
    if namespace != source_namespace:
        raise ModelStoreInputError(
            resource_name,
            "namespace",
            namespace,
            f"the source claim's namespace {source_namespace!r} (a PVC can be cloned only "
            "from a claim in its own namespace)",
        )
    v.dns_subdomain(resource_name, "source_claim_name", source_claim_name)
    return volume_claim(resource_name, data_source=claim_source(source_claim_name), **claim)
