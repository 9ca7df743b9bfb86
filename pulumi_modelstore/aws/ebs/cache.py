"""A model cache on EBS (:class:`EbsModelCache`), per model: weights written once to a seed
volume by a loader Job, snapshotted when the Job has completed, and every serving replica's own
ReadWriteOnce volume restored from that snapshot through a StatefulSet ``volumeClaimTemplate``."""

# No `from __future__ import annotations`: the component analyzer and the field machinery read
# the args TypedDict and the output annotations as objects.
# Signatures naming a provider SDK class quote it: evaluated at import, it would load the SDK's
# lazily loaded modules (about half a second of every plan's start-up).

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Required

import pulumi
import pulumi_kubernetes as k8s

from ... import validation as v
from ...errors import ModelStoreInputError
from ...fields import Parser, fields_of, refusal_name
from ...kube.snapshots import (
    claim_spec,
    name_after,
    snapshot_source,
    volume_claim,
    volume_snapshot,
)
from ...kube.workload import HF_HOME_VOLUME
from ...store import MANAGED_BY, STORE_LABEL, STORE_NAME, mount_path_is_not_hf_home, workload_mount
from .classes import (
    GP3_FIELDS,
    Gp3VolumeArgs,
    checked,
    ebs_storage_class,
    gp3_rules,
    gp3_size_fits,
)
from .component import EbsComponent

CACHE_TYPE_TOKEN = "modelstore:index:EbsModelCache"


class EbsModelCacheArgs(Gp3VolumeArgs, total=False):
    """Arguments of :class:`EbsModelCache`. Required: ``namespace``, ``volume_size`` and exactly
    one of ``loader``, ``source_claim_name`` and ``source_snapshot_name``. The gp3 fields
    (``iops``, ``throughput_mibps``, ``encrypted``, ``kms_key_arn``, ``fs_type``,
    ``volume_tags``) are the cache's own class's: loading weights is sequential, so throughput
    is what shortens it; a customer managed ``kms_key_arn`` must also be in the driver's
    ``kms_key_arns``, so its controller may use the key."""

    namespace: Required[str]
    """The namespace of the seed claim, the VolumeSnapshot and the serving StatefulSet. No
    default: a claim can only be restored from a VolumeSnapshot in its own namespace."""
    volume_size: Required[str]
    """Size of the seed volume and of every replica's volume, a Kubernetes quantity with a
    unit (``200Gi``); at least the model's size. No default. gp3 takes 1Gi to 65536Gi. Raising
    it grows the seed claim in place; a StatefulSet's claim template cannot change in place, so
    Pulumi replaces the StatefulSet that uses it."""
    loader: Mapping[str, Any]
    """A container (``image``, ``command``/``args``, ``env``, ...) that writes the model into
    ``mount_path``. It runs once as a Job on a fresh seed volume; Pulumi waits for it to
    complete, then snapshots the volume. It runs as ``loader_pod_security_context`` says (by
    default user 1000, not root: give it a writable ``HOME`` such as ``/tmp`` if its tools
    write there), with the container ``securityContext`` the Pod Security ``restricted``
    profile asks for (``allowPrivilegeEscalation: false``, capabilities ``drop: [ALL]``) unless
    it sets its own ``securityContext``. Default: none (give a source instead)."""
    loader_pod_security_context: Mapping[str, Any]
    """The loader Job's pod ``securityContext`` (a Kubernetes PodSecurityContext). The default
    passes the Pod Security ``restricted`` profile (namespaces enforcing it reject a pod
    without one) and lets a non-root loader write the fresh volume: the kubelet gives the
    volume to group ``fsGroup``. Keys given are merged over the default's: ``{"fsGroup":
    2000}`` changes only the volume's group; a key set to None removes it. Default:
    ``{"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000,
    "seccompProfile": {"type": "RuntimeDefault"}}``."""
    loader_service_account_name: str
    """Service account of the loader Job (e.g. one with S3 read access). Default: the
    namespace's default."""
    loader_timeout_minutes: int
    """How long ``pulumi up`` waits for the loader Job to complete. Default: ``60``."""
    source_claim_name: str
    """Snapshot this existing, already-written claim in ``namespace`` instead of running a
    loader (stop its writers first). Default: none."""
    source_snapshot_name: str
    """Restore from this existing VolumeSnapshot in ``namespace``; nothing is seeded or
    snapshotted. Default: none."""
    model_revision: str
    """A DNS-label suffix for the seed claim, loader Job, snapshot and claim template of one
    revision (``r2``). Changing it writes and snapshots the model anew and gives replicas new
    claims; the previous revision's objects are replaced. What happens to the previous
    VolumeSnapshot is ``protect``'s to say. Default: none."""
    protect: bool
    """Keep the model's data, the VolumeSnapshot, when Pulumi deletes it. Default: ``True``: the
    VolumeSnapshot is registered with ``retain_on_delete`` (not ``protect``, which would block
    the replacement a ``model_revision`` change needs). Then ``pulumi destroy`` and a
    ``model_revision`` change only drop the VolumeSnapshot from the stack: the object, its
    VolumeSnapshotContent and the EBS snapshot stay (whatever the snapshot class's deletion
    policy), a claim naming it in its ``dataSource`` can still be restored, and after a revision
    change the old revision's snapshot keeps costing EBS snapshot storage until you delete it
    (``kubectl delete volumesnapshot <name> -n <namespace>``, and with a Retain class its
    VolumeSnapshotContent and EBS snapshot too). Set False to opt out: Pulumi then deletes the
    old VolumeSnapshot on destroy and on a revision change, and with a Delete snapshot class
    that deletes the EBS snapshot. The seed claim is never retained: until the snapshot is ready
    the snapshot controller's ``pvc-as-source-protection`` finalizer keeps it from deletion,
    after that the snapshot holds the same data, and keeping each revision's seed volume would
    only pay for a second copy."""
    mount_path: str
    """Where the loader and the serving containers see the model. Default: ``/mnt/models``."""
    claim_template_name: str
    """Name of the StatefulSet volumeClaimTemplate (and of the pod volume). Replica claims are
    ``<claim_template_name>-<statefulset>-<ordinal>``. Default: the cache's name (with the
    revision, if any)."""
    storage_class_name: str
    """An existing StorageClass for the seed and replica volumes. Default: a gp3 class made for
    this cache, ``<name>-gp3``, from the fields below."""
    snapshot_class_name: str
    """The VolumeSnapshotClass for the snapshot (pass ``EbsCsiDriver.snapshot_class_name`` so
    the snapshot waits for it). Default: ``ebs-snapshots``, the driver component's default."""
    volume_initialization_rate_mibps: int
    """Rate, 100 to 300 MiB/s, at which EBS pulls each restored replica volume's blocks from
    the snapshot. Default: the EBS default (blocks load lazily on first read, so the first model
    load from a fresh replica is slow)."""
    labels: Mapping[str, str]
    """Labels merged onto every Kubernetes object. Default: the library's own only."""


# -- the cache's rules ------------------------------------------------------------------------

MODEL_VOLUME = "model"


def namespace_is_set(store: str, namespace: Any) -> None:
    if namespace is None:
        raise ModelStoreInputError(
            store,
            "namespace",
            None,
            "set (no default: a claim restores only from a VolumeSnapshot in its own namespace)",
        )


def volume_size_is_a_size(store: str, volume_size: Any) -> None:
    v.size_gib(store, "volume_size", volume_size)


def exactly_one_source(
    store: str, loader: Any, source_claim_name: Any, source_snapshot_name: Any
) -> None:
    """The model comes from one place: a loader, an existing claim or an existing snapshot."""
    sources = [
        name
        for name, value in (
            ("loader", loader),
            ("source_claim_name", source_claim_name),
            ("source_snapshot_name", source_snapshot_name),
        )
        if value
    ]
    if len(sources) != 1:
        raise ModelStoreInputError(
            store,
            "loader, source_claim_name or source_snapshot_name",
            sources,
            "exactly one of them",
        )


def loader_is_a_container(store: str, field_name: str, loader: Mapping[str, Any]) -> None:
    image = loader.get("image")
    if not isinstance(image, str) and not v.is_output(image):
        raise ModelStoreInputError(
            store, field_name, loader, "a container mapping with at least an 'image'"
        )
    # The API server refuses a container without an image ("image: Required value") and a
    # pod whose image has leading or trailing whitespace (validateContainersOnlyForPod, k8s.io/
    # kubernetes pkg/apis/core/validation/validation.go): the Job would take the second and
    # never start its pod.
    if isinstance(image, str) and (not image or image != image.strip()):
        raise ModelStoreInputError(
            store,
            f"{field_name}.image",
            image,
            "a container image reference, not empty and without leading or trailing whitespace",
        )
    # The model volume's mount is added to the loader's own.
    _check_container(store, field_name, loader, merged=("volumeMounts",))
    context = loader.get("securityContext")
    if context is not None and not isinstance(context, Mapping) and not v.is_output(context):
        raise ModelStoreInputError(
            store,
            f"{field_name}.securityContext",
            context,
            "a mapping (a Kubernetes SecurityContext object)",
        )


LOADER_CONTAINER_SECURITY_CONTEXT = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}
"""The loader container's ``securityContext`` unless it sets its own: what the Pod Security
``restricted`` profile asks of every container (the pod-level default covers the rest)."""


def merged_over_default(
    default: Mapping[str, Any], given: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``given``'s keys over ``default``'s; a key given as None is removed."""
    merged = {**default, **(given or {})}
    return copy.deepcopy({key: value for key, value in merged.items() if value is not None})


LOADER_JOB_NAME = refusal_name("loader Job name (<name>[-<model_revision>]-loader)")
"""The field an error about the derived object names names: the Job's is the longest that must
be a DNS label (the Job controller labels its pods ``job-name: <job name>``); the seed claim
``<base>-seed``, the snapshot ``<base>``, the class ``<name>-gp3`` and the default claim
template ``<base>`` are then DNS-1123 names too."""


def loader_job_name_is_a_label(store: str, model_revision: Any) -> None:
    """The loader Job's name becomes a pod label value: a DNS label of at most 63 characters."""
    v.dns_label(store, LOADER_JOB_NAME, f"{_base(store, model_revision)}-loader")


def loader_fits_its_pod(store: str, field_name: str, loader: Mapping[str, Any], path: Any) -> None:
    """What the loader's pod spec takes from ``loader`` (k8s.io/kubernetes
    pkg/apis/core/validation/validation.go): the container's name is a DNS label
    (validateContainers); each of its volumeMounts names a volume of the pod, whose only volume
    is the seed claim's ``model`` (ValidateVolumeMounts: NotFound), at a path no other mount
    of the container uses, ``mount_path`` included ("must be unique")."""
    v.dns_label(store, f"{field_name}.name", loader.get("name", "loader"))
    seen = [path] if isinstance(path, str) else []
    mounts = loader.get("volumeMounts")
    for i, mount in enumerate(mounts if isinstance(mounts, list | tuple) else ()):
        if not isinstance(mount, Mapping):
            continue  # an Output (a list that is not of mappings is refused on its own)
        volume = mount.get("name")
        if not v.is_output(volume) and volume != MODEL_VOLUME:
            raise ModelStoreInputError(
                store,
                f"{field_name}.volumeMounts[{i}].name",
                volume,
                f"{MODEL_VOLUME} (the loader pod's only volume, the seed claim)",
            )
        mount_path = mount.get("mountPath")
        if isinstance(mount_path, str):
            if any(v.same_path(mount_path, other) for other in seen):
                raise ModelStoreInputError(
                    store,
                    f"{field_name}.volumeMounts[{i}].mountPath",
                    mount_path,
                    "a path no other mount of the loader uses (the model is at mount_path)",
                )
            seen.append(mount_path)


def claim_template_is_not_hf_home(store: str, field_name: str, name: Any) -> None:
    """The claim template names the replicas' model volume, and the replicas also get the
    ``hf-home`` emptyDir: the StatefulSet controller would put the claim in its place."""
    if name == HF_HOME_VOLUME:
        raise ModelStoreInputError(
            store,
            field_name,
            name,
            f"a name other than {HF_HOME_VOLUME} (the replicas get an emptyDir volume of that "
            "name for HF_HOME)",
        )


def no_class_fields_with_an_existing_class(store: str, field_name: str, value: Any) -> None:
    raise ModelStoreInputError(
        store,
        field_name,
        value,
        "unset when storage_class_name is given (the class is the existing one's)",
    )


def volume_size_fits_gp3(store: str, iops: Any, volume_size: Any) -> None:
    gp3_size_fits(store, iops, "volume_size", volume_size)


def _base(store: str, model_revision: Any) -> str:
    """The name of one revision's objects: ``<name>[-<model_revision>]``."""
    return f"{store}-{model_revision}" if model_revision else store


def cache_rules(p: Parser) -> None:
    """Every rule of :class:`EbsModelCacheArgs`; derives ``base`` (the revision's object name)
    and, for the cache's own class, ``gp3``."""
    # The cache's name is the value of its STORE_LABEL on every object it makes.
    p.check(lambda: v.name_is_label_value(p.store, STORE_NAME, STORE_LABEL))
    p.rule(namespace_is_set, "namespace")
    p.field_rule(v.dns_label, "namespace")
    p.rule(volume_size_is_a_size, "volume_size")
    p.rule(exactly_one_source, "loader", "source_claim_name", "source_snapshot_name")
    p.field_rule(loader_is_a_container, "loader")
    p.field_rule(v.dns_subdomain, "loader_service_account_name")
    checked(p, v.positive_int, "loader_timeout_minutes")
    p.field_rule(v.dns_subdomain, "source_claim_name")
    p.field_rule(v.dns_subdomain, "source_snapshot_name")
    p.field_rule(v.dns_label, "model_revision")
    if p.ok("model_revision"):
        p.derived["base"] = _base(p.store, p["model_revision"])
        if p.ok(STORE_NAME):  # else the names made from it are refused with it, once
            p.rule(loader_job_name_is_a_label, "model_revision")
        if "claim_template_name" not in p:
            p.set("claim_template_name", p.derived["base"])
            if not p.ok(STORE_NAME, LOADER_JOB_NAME):  # refused above, as a derived name
                p.failed.add("claim_template_name")
    checked(p, v.container_path, "mount_path")
    # The replicas mount the model as a store's readers do: not where HF_HOME's emptyDir is.
    checked(p, mount_path_is_not_hf_home, "mount_path")
    checked(p, v.dns_label, "claim_template_name")
    checked(p, claim_template_is_not_hf_home, "claim_template_name")
    if p.ok("loader", "mount_path") and isinstance(p["loader"], Mapping):
        p.check(lambda: loader_fits_its_pod(p.store, "loader", p["loader"], p["mount_path"]))
    p.field_rule(v.label_map, "labels")
    if p["storage_class_name"] is not None:
        p.field_rule(v.dns_subdomain, "storage_class_name")
        for name in p.declared(*GP3_FIELDS):
            if name in p:  # given, even as None
                checked(p, no_class_fields_with_an_existing_class, name)
    else:
        gp3_rules(p)
        p.set("storage_class_name", f"{p.store}-gp3")
        p.rule(volume_size_fits_gp3, "iops", "volume_size")
    checked(p, v.dns_subdomain, "snapshot_class_name")
    checked(p, v.flag, "protect")
    if p.ok("loader_pod_security_context"):
        default = fields_of(EbsModelCacheArgs)["loader_pod_security_context"].default
        p.set(
            "loader_pod_security_context",
            merged_over_default(default, p["loader_pod_security_context"]),
        )


# A loader container's list fields: those this library merges into (volumeMounts) and those it
# passes on, each a list of Kubernetes objects of the kind named, or of strings.
_CONTAINER_OBJECT_LISTS = {
    "env": "EnvVar",
    "envFrom": "EnvFromSource",
    "ports": "ContainerPort",
    "volumeMounts": "VolumeMount",
    "volumeDevices": "VolumeDevice",
}
_CONTAINER_STRING_LISTS = ("command", "args")


def _object_list(store: str, field_name: str, value: Any, kind: str) -> list[Any]:
    """A list of mappings (Kubernetes ``kind`` objects; an item may be an Output); None is
    empty. A string or a mapping is refused, not spread into characters or keys."""
    if value is None:
        return []
    if (
        isinstance(value, str | bytes | Mapping)
        or not isinstance(value, Sequence)
        or not all(isinstance(item, Mapping) or v.is_output(item) for item in value)
    ):
        raise ModelStoreInputError(
            store, field_name, value, f"a list of mappings (Kubernetes {kind} objects)"
        )
    return list(value)


def _check_container(
    store: str, prefix: str, container: Mapping[str, Any], merged: Sequence[str]
) -> None:
    """The list fields of a container are lists. Those in ``merged`` are extended here, so they
    must be lists now; any other one may still be an Output (left to the API server)."""
    for key, kind in _CONTAINER_OBJECT_LISTS.items():
        if key in container and (key in merged or not v.is_output(container[key])):
            _object_list(store, f"{prefix}.{key}", container[key], kind)
    for key in _CONTAINER_STRING_LISTS:
        if key in container and container[key] is not None:
            v.string_list(store, f"{prefix}.{key}", container[key])


def _none_as_empty(container: Mapping[str, Any]) -> dict[str, Any]:
    """A container whose ``volumeMounts`` and ``env``, when set to None, are empty lists (the
    workload mount extends them)."""
    return {
        **container,
        **{
            key: []
            for key in ("volumeMounts", "env")
            if key in container and container[key] is None
        },
    }


def _depends_on(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """The resources in ``opts.depends_on``: a component's children do not inherit them."""
    deps = opts.depends_on if opts is not None else None
    if isinstance(deps, pulumi.Resource):
        return [deps]
    if isinstance(deps, Sequence):
        return [d for d in deps if isinstance(d, pulumi.Resource)]
    return []


class EbsModelCache(EbsComponent):
    """A model cache on EBS: written once, snapshotted, restored per replica.

    1. A gp3 StorageClass for the cache (``WaitForFirstConsumer``, expansion allowed), unless
       ``storage_class_name`` names one.
    2. With ``loader``: a seed claim (ReadWriteOnce, ``pulumi.com/skipAwait`` because it binds
       only when the loader pod starts) and a Job that mounts it read-write at ``mount_path``
       and writes the model. Pulumi waits for the Job to complete.
    3. A VolumeSnapshot of the seed (or of ``source_claim_name``), created only after the Job:
       a snapshot taken while the loader writes would capture half a model.
    4. For the replicas, a StatefulSet ``volumeClaimTemplate`` restoring that snapshot
       (:meth:`claim_template`, :meth:`patch_stateful_set_spec`). Each replica pod gets its own
       ReadWriteOnce volume in its own Availability Zone (an EBS volume lives in one AZ; a
       snapshot is regional), scale-up restores new volumes with no Pulumi change, and the
       StatefulSet controller creates the claims when it schedules the pods, so nothing waits
       on them. Why not N claims made here: a Deployment's replicas share one claim, which an
       RWO EBS volume cannot serve across nodes, and a fixed set of claims stops matching the
       replica count at the first scale. For such fixed claims,
       :func:`~pulumi_modelstore.kube.snapshots.restored_claim` makes one.

    Pass the driver in ``opts.depends_on`` (``depends_on=[driver]``): the cache's children then
    depend on it, so a destroy deletes claims before the driver that deletes their volumes.
    """

    namespace: pulumi.Output[str]
    """The cache's namespace."""
    seed_claim_name: pulumi.Output[str | None]
    """The seed claim the loader writes (None without ``loader``)."""
    loader_job_name: pulumi.Output[str | None]
    """The loader Job (None without ``loader``)."""
    snapshot_name: pulumi.Output[str]
    """The VolumeSnapshot replicas restore from."""
    storage_class_name: pulumi.Output[str]
    """The StorageClass of the seed and replica volumes."""
    snapshot_class_name: pulumi.Output[str | None]
    """The VolumeSnapshotClass of the snapshot (None with ``source_snapshot_name``)."""
    claim_template_name: pulumi.Output[str]
    """The volumeClaimTemplate name; replica claims are ``<it>-<statefulset>-<ordinal>``."""
    volume_size: pulumi.Output[str]
    """Size of every replica volume."""

    _args_type = EbsModelCacheArgs

    @classmethod
    def rules(cls, p: Parser) -> None:
        cache_rules(p)

    def __init__(
        self,
        resource_name: str,
        args: EbsModelCacheArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        values, derived = type(self).parse(resource_name, args)
        super().__init__(CACHE_TYPE_TOKEN, resource_name, None, opts)
        self._name = resource_name
        self._values = values
        self._base: str = derived["base"]
        self._labels = {
            **(values["labels"] or {}),
            "app.kubernetes.io/managed-by": MANAGED_BY,
            STORE_LABEL: resource_name,
        }
        self._after = _depends_on(opts)
        self._storage_class_name = self._class(derived)
        self._seed()
        self._snapshot_name = self._snapshot()
        self._set_outputs()
        self.register_annotated()

    def _child(self, *depends_on: "pulumi.Resource | None") -> pulumi.ResourceOptions:
        """A child's options: after ``opts.depends_on`` (the driver: a destroy deletes the
        claims and the snapshot before it, order: cache-after-driver) and ``depends_on``."""
        return pulumi.ResourceOptions(
            parent=self, depends_on=self._after + [d for d in depends_on if d is not None]
        )

    def _class(self, derived: Mapping[str, Any]) -> pulumi.Input[str]:
        """The cache's own gp3 class, unless ``storage_class_name`` names one: the name the
        seed and the replicas' claims use (after the class, when the cache makes it)."""
        name: str = self._values["storage_class_name"]
        self.storage_class = None
        if "gp3" not in derived:
            return name
        self.storage_class = ebs_storage_class(
            f"{self._name}-gp3",
            name=name,
            spec=derived["gp3"],
            labels=self._labels,
            opts=self._child(),
        )
        return name_after(self.storage_class, name)

    def _seed(self) -> None:
        """With ``loader``: the seed claim and the Job that writes the model into it."""
        self.seed_claim = None
        self.loader_job = None
        if self._values["loader"] is None:
            return
        self.seed_claim = volume_claim(
            f"{self._name}-seed",
            name=f"{self._base}-seed",
            namespace=self._values["namespace"],
            size=self._values["volume_size"],
            storage_class_name=self._storage_class_name,
            labels={**self._labels, "modelstore.pulumi.com/role": "seed"},
            opts=self._child(),
        )
        self.loader_job = self._loader_job(self._name, self._child(self.seed_claim))

    def _snapshot(self) -> pulumi.Input[str]:
        """The VolumeSnapshot of the seed (or ``source_claim_name``), after the loader; none
        with ``source_snapshot_name``. Returns the name replicas restore from."""
        values, base = self._values, self._base
        self.snapshot = None
        if values["source_snapshot_name"] is not None:
            return values["source_snapshot_name"]
        # The model's data: retained (see ``protect``), not protected, so a new
        # model_revision can still replace it. Taken after the loader Job completes: it names
        # the seed claim by name, and earlier it would hold a partial model
        # (order: seed-before-snapshot).
        self.snapshot = volume_snapshot(
            f"{self._name}-snapshot",
            name=base,
            namespace=values["namespace"],
            claim_name=values["source_claim_name"] or f"{base}-seed",
            snapshot_class_name=values["snapshot_class_name"],
            labels=self._labels,
            opts=pulumi.ResourceOptions.merge(
                self._child(self.loader_job),
                pulumi.ResourceOptions(retain_on_delete=values["protect"]),
            ),
        )
        return name_after(self.snapshot, base)

    def _set_outputs(self) -> None:
        """The outputs the class annotates, from what the steps made."""
        values, base = self._values, self._base
        none: pulumi.Output[Any] = pulumi.Output.from_input(None)
        self.namespace = pulumi.Output.from_input(values["namespace"])
        self.seed_claim_name = (
            name_after(self.seed_claim, f"{base}-seed") if self.seed_claim else none
        )
        self.loader_job_name = (
            name_after(self.loader_job, f"{base}-loader") if self.loader_job else none
        )
        self.snapshot_name = pulumi.Output.from_input(self._snapshot_name)
        self.storage_class_name = pulumi.Output.from_input(self._storage_class_name)
        self.snapshot_class_name = (
            pulumi.Output.from_input(values["snapshot_class_name"]) if self.snapshot else none
        )
        self.claim_template_name = pulumi.Output.from_input(values["claim_template_name"])
        self.volume_size = pulumi.Output.from_input(values["volume_size"])

    def _loader_job(self, name: str, opts: pulumi.ResourceOptions) -> "k8s.batch.v1.Job":
        values, base = self._values, self._base
        loader = dict(values["loader"] or {})
        container = {
            **loader,
            "name": loader.get("name", "loader"),
            "volumeMounts": [
                # A list of mappings: loader_is_a_container checked it.
                *(loader.get("volumeMounts") or []),
                {"name": MODEL_VOLUME, "mountPath": values["mount_path"]},
            ],
        }
        if loader.get("securityContext") is None:
            container["securityContext"] = copy.deepcopy(LOADER_CONTAINER_SECURITY_CONTEXT)
        pod_context = values["loader_pod_security_context"]
        pod_spec: dict[str, Any] = {
            "restartPolicy": "Never",
            **({"securityContext": pod_context} if pod_context else {}),
            "containers": [container],
            "volumes": [
                {"name": MODEL_VOLUME, "persistentVolumeClaim": {"claimName": f"{base}-seed"}}
            ],
        }
        if values["loader_service_account_name"]:
            pod_spec["serviceAccountName"] = values["loader_service_account_name"]
        labels = {**self._labels, "modelstore.pulumi.com/role": "loader"}
        job_metadata: Any = {
            "name": f"{base}-loader",
            "namespace": values["namespace"],
            "labels": labels,
        }
        job_spec: Any = {
            "backoffLimit": 3,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        }
        minutes = f"{values['loader_timeout_minutes']}m"
        return k8s.batch.v1.Job(
            f"{name}-loader",
            metadata=job_metadata,
            spec=job_spec,
            opts=pulumi.ResourceOptions.merge(
                opts,
                pulumi.ResourceOptions(
                    custom_timeouts=pulumi.CustomTimeouts(create=minutes, update=minutes)
                ),
            ),
        )

    def claim_template(self) -> dict[str, Any]:
        """The StatefulSet ``volumeClaimTemplate``: ReadWriteOnce, the cache's class and size,
        ``dataSource`` the snapshot. Its values depend on the snapshot, so a StatefulSet using it
        is created after the snapshot."""
        return {
            "metadata": {
                "name": self._values["claim_template_name"],
                "labels": {**self._labels, "modelstore.pulumi.com/role": "replica"},
            },
            "spec": claim_spec(
                self._name,
                size=self._values["volume_size"],
                storage_class_name=self._storage_class_name,
                data_source=snapshot_source(self._snapshot_name),
            ),
        }

    def replica_claim_name(self, stateful_set_name: str, ordinal: int) -> str:
        """The claim the StatefulSet controller makes for one replica."""
        return f"{self._values['claim_template_name']}-{stateful_set_name}-{ordinal}"

    def patch_stateful_set_spec(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a StatefulSet ``spec`` serving from the cache (the StatefulSet must live in
        the cache's namespace, where the snapshot is): the claim template added; every
        container mounts the model volume as a store's readers do (``store.workload_mount``,
        the code behind every ``mount_for``): read-only at ``mount_path``, ``HF_HUB_OFFLINE=1``
        and ``HF_HOME`` on a writable emptyDir (added once). Unless set, claims are deleted with
        their replicas (``persistentVolumeClaimRetentionPolicy`` Delete/Delete): a replica
        volume is a cache, the snapshot keeps the data, and a stale claim would otherwise be
        reused at the next scale-up instead of a fresh restore.

        The lists it extends (``containers``, each container's ``volumeMounts`` and ``env``,
        ``volumes``, ``volumeClaimTemplates``) must be lists of mappings: anything else raises
        :class:`ModelStoreInputError`."""
        store = self._name
        out = dict(spec)
        template = dict(out.get("template") or {})
        pod = dict(template.get("spec") or {})
        path = "spec.template.spec"
        containers = _object_list(store, f"{path}.containers", pod.get("containers"), "Container")
        for i, c in enumerate(containers):
            _check_container(store, f"{path}.containers[{i}]", c, merged=("volumeMounts", "env"))
        volumes = _object_list(store, f"{path}.volumes", pod.get("volumes"), "Volume")
        claim_templates = _object_list(
            store,
            "spec.volumeClaimTemplates",
            out.get("volumeClaimTemplates"),
            "PersistentVolumeClaim",
        )
        # The replicas read what the loader wrote, as a store's readers do: the same mount
        # (read-only, HF_HUB_OFFLINE, HF_HOME on an emptyDir), its volume the claim template's.
        mount = workload_mount(
            namespace=self._values["namespace"],
            claim_name=self._values["claim_template_name"],
            read_only=True,
            mount_path=self._values["mount_path"],
        )
        pod["containers"] = [mount.patch_container(_none_as_empty(c)) for c in containers]
        names = {vol.get("name") for vol in volumes if isinstance(vol, Mapping)}
        volumes.extend(vol for vol in mount.extra_volumes if vol["name"] not in names)
        pod["volumes"] = volumes
        template["spec"] = pod
        out["template"] = template
        out["volumeClaimTemplates"] = [*claim_templates, self.claim_template()]
        out.setdefault(
            "persistentVolumeClaimRetentionPolicy",
            {"whenDeleted": "Delete", "whenScaled": "Delete"},
        )
        return out
