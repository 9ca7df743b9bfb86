# TEMPORARY: the pre-skeleton base, kept only while backends move onto store.py.
"""The contract every model store keeps, whatever the backend.

A store has consumer namespaces: readers get a read-only mount, writers (where the backend
allows) a read-write one. Each consumer namespace gets one PersistentVolumeClaim, pre-bound to
its own static PersistentVolume, so workloads couple to a claim name, never to a cloud.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from . import validation as v
from .errors import ModelStoreInputError
from .kube.drivers import CsiDriverChart
from .kube.volumes import static_volume
from .kube.workload import WorkloadMount, hf_home_volume, reader_env

DEFAULT_MOUNT_PATH = "/mnt/models"
MANAGED_BY = "pulumi-modelstore"


class ModelStoreArgs(TypedDict, total=False):
    """Fields every store takes. Backends extend this with their own."""

    readers: Sequence[str]
    """Namespaces whose pods mount the store read-only. Default: none. A store needs at least
    one reader or writer."""
    writers: Sequence[str]
    """Namespaces whose pods mount the store read-write (to publish models). Default: none. A
    namespace cannot be both reader and writer."""
    claim_name: str
    """The PersistentVolumeClaim name in every consumer namespace, a DNS-1123 label. Default:
    the store's resource name. Each PV is named ``<claim_name>-<namespace>``."""
    mount_path: str
    """Where containers see the models. Default: ``/mnt/models`` (where KServe mounts them)."""
    create_namespaces: bool
    """Create the consumer namespaces. Default: False (they are the workloads' namespaces and
    usually exist already). Turn on for a fresh laptop cluster."""
    labels: Mapping[str, str]
    """Labels merged onto every Kubernetes object. Default: none besides the store's own
    ``app.kubernetes.io/managed-by`` and ``modelstore.pulumi.com/store``."""
    protect: bool
    """Protect the data-bearing resource (file system, bucket, disk) with ``protect`` and
    ``retain_on_delete``. Default: True. Set False to let ``pulumi destroy`` delete the data."""


COMMON_FIELDS = frozenset(ModelStoreArgs.__annotations__) | {"driver"}


@dataclass(frozen=True)
class StoreCommon:
    """The validated common fields."""

    name: str
    readers: tuple[str, ...]
    writers: tuple[str, ...]
    claim_name: str
    mount_path: str
    create_namespaces: bool
    labels: dict[str, str]
    protect: bool

    @property
    def consumers(self) -> tuple[tuple[str, bool], ...]:
        """(namespace, read_only) for every consumer, readers first."""
        return tuple((ns, True) for ns in self.readers) + tuple((ns, False) for ns in self.writers)


def store_tags(name: str, tags: Mapping[str, str]) -> dict[str, str]:
    """Cloud tags for a store's resources: the user's, then the store's own (which win)."""
    return {
        **tags,
        "Name": name,
        "modelstore.pulumi.com/store": name,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def check_known_fields(name: str, args: Mapping[str, Any], allowed: frozenset[str]) -> None:
    for key in args:
        if key not in allowed:
            raise ModelStoreInputError(
                name, "field name", key, f"one of {', '.join(sorted(allowed))}"
            )


def parse_common(name: str, args: Mapping[str, Any]) -> StoreCommon:
    """Validate the common fields; raises :class:`ModelStoreInputError` before any resource
    is registered."""
    readers = args.get("readers", ()) or ()
    writers = args.get("writers", ()) or ()
    v.string_list(name, "readers", readers)
    v.string_list(name, "writers", writers)
    readers, writers = tuple(readers), tuple(writers)
    for field, namespaces in (("readers", readers), ("writers", writers)):
        seen: set[str] = set()
        for ns in namespaces:
            v.dns_label(name, field, ns)
            if ns in seen:
                raise ModelStoreInputError(name, field, list(namespaces), "a list without repeats")
            seen.add(ns)
    if not readers and not writers:
        raise ModelStoreInputError(
            name, "readers and writers", [], "at least one consumer namespace between them"
        )
    both = sorted(set(readers) & set(writers))
    if both:
        raise ModelStoreInputError(
            name, "writers", both[0], "a namespace that is not also a reader"
        )
    claim_name = args.get("claim_name", name)
    v.dns_label(name, "claim_name", claim_name)
    mount_path = args.get("mount_path", DEFAULT_MOUNT_PATH)
    v.absolute_path(name, "mount_path", mount_path)
    labels = v.string_map(name, "labels", args.get("labels"))
    return StoreCommon(
        name=name,
        readers=readers,
        writers=writers,
        claim_name=claim_name,
        mount_path=mount_path,
        create_namespaces=v.flag(name, "create_namespaces", args.get("create_namespaces", False)),
        labels={
            **labels,
            "app.kubernetes.io/managed-by": MANAGED_BY,
            "modelstore.pulumi.com/store": name,
        },
        protect=v.flag(name, "protect", args.get("protect", True)),
    )


class ModelStore(pulumi.ComponentResource):
    """Base of every store: claims per consumer namespace and the workload mount.

    Subclasses validate all their input (and call :func:`parse_common`) *before* calling this
    constructor, so bad input never leaves a half-registered graph.
    """

    driver_chart: ClassVar[CsiDriverChart | None] = None
    """The CSI driver the backend installs (one install per cluster), or None."""
    claim_names: pulumi.Output[dict[str, str]]
    """Consumer namespace -> PersistentVolumeClaim name."""
    volume_names: pulumi.Output[dict[str, str]]
    """Consumer namespace -> PersistentVolume name."""

    def __init__(
        self,
        type_token: str,
        name: str,
        common: StoreCommon,
        opts: pulumi.ResourceOptions | None,
    ) -> None:
        super().__init__(type_token, name, None, opts)
        self._common = common
        self._service_account_name: str | None = None
        self._pod_annotations: dict[str, str] = {}
        self.persistent_volumes: dict[str, k8s.core.v1.PersistentVolume] = {}
        self.claims: dict[str, k8s.core.v1.PersistentVolumeClaim] = {}
        self.namespaces: dict[str, k8s.core.v1.Namespace] = {}

    @property
    def common(self) -> StoreCommon:
        return self._common

    def data_protection(self) -> pulumi.ResourceOptions:
        """Options for the data-bearing resource: protected and retained unless opted out."""
        protect = self._common.protect
        return pulumi.ResourceOptions(parent=self, protect=protect, retain_on_delete=protect)

    def _bind_consumers(
        self,
        *,
        capacity: str,
        access_mode: Callable[[bool], str],
        source: Callable[[str, bool], Mapping[str, Any]],
        mount_options: Sequence[str] = (),
        node_affinity: Mapping[str, Any] | None = None,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> None:
        """Create one static PV and its claim per consumer namespace.

        ``source(namespace, read_only)`` gives the PV's volume source (e.g. ``{"csi": ...}``);
        ``access_mode(read_only)`` the access mode the driver accepts.
        """
        c = self._common
        for ns, read_only in c.consumers:
            deps = list(depends_on)
            if c.create_namespaces:
                namespace = k8s.core.v1.Namespace(
                    f"{c.name}-ns-{ns}",
                    metadata={"name": ns, "labels": c.labels},
                    opts=pulumi.ResourceOptions(parent=self),
                )
                self.namespaces[ns] = namespace
                deps.append(namespace)
            pv, pvc = static_volume(
                c.name,
                pv_name=self.volume_name(ns),
                claim_name=c.claim_name,
                namespace=ns,
                capacity=capacity,
                access_mode=access_mode(read_only),
                source=source(ns, read_only),
                mount_options=mount_options,
                labels={**c.labels, "modelstore.pulumi.com/access": _access(read_only)},
                node_affinity=node_affinity,
                parent=self,
                depends_on=deps,
            )
            self.persistent_volumes[ns] = pv
            self.claims[ns] = pvc
        self.claim_names = pulumi.Output.from_input({ns: c.claim_name for ns, _ in c.consumers})
        self.volume_names = pulumi.Output.from_input(
            {ns: self.volume_name(ns) for ns, _ in c.consumers}
        )

    def _finish(self, outputs: Mapping[str, Any]) -> None:
        """Register the component's outputs (claims and volumes included) and keep them for
        programs that export a summary of the store."""
        self.summary: dict[str, Any] = {
            **outputs,
            "claimNames": self.claim_names,
            "volumeNames": self.volume_names,
        }
        self.register_outputs(self.summary)

    def volume_name(self, namespace: str) -> str:
        return f"{self._common.claim_name}-{namespace}"

    def mount_for(
        self, namespace: str, *, mount_path: str | None = None, sub_path: str | None = None
    ) -> WorkloadMount:
        """What a pod in ``namespace`` needs to use this store: the volume, the mount
        (read-only for readers), the service account, pod annotations and env."""
        c = self._common
        modes = dict(c.consumers)
        if namespace not in modes:
            raise ModelStoreInputError(
                c.name,
                "namespace",
                namespace,
                f"one of the store's consumer namespaces ({', '.join(modes)})",
            )
        path = mount_path or c.mount_path
        v.absolute_path(c.name, "mount_path", path)
        read_only = modes[namespace]
        volume = {
            "name": c.claim_name,
            "persistentVolumeClaim": {"claimName": c.claim_name, "readOnly": read_only},
        }
        volume_mount: dict[str, Any] = {
            "name": c.claim_name,
            "mountPath": path,
            "readOnly": read_only,
        }
        if sub_path:
            volume_mount["subPath"] = sub_path.strip("/")
        env: list[dict[str, Any]] = []
        extra_volumes: list[dict[str, Any]] = []
        extra_mounts: list[dict[str, Any]] = []
        if read_only:
            hf_volume, hf_mount = hf_home_volume()
            env, extra_volumes, extra_mounts = reader_env(), [hf_volume], [hf_mount]
        return WorkloadMount(
            namespace=namespace,
            claim_name=c.claim_name,
            read_only=read_only,
            mount_path=path,
            volume=volume,
            volume_mount=volume_mount,
            service_account_name=self._service_account_name,
            pod_annotations=dict(self._pod_annotations),
            env=env,
            extra_volumes=extra_volumes,
            extra_volume_mounts=extra_mounts,
        )


def _access(read_only: bool) -> str:
    return "read-only" if read_only else "read-write"
