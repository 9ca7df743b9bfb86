"""A model cache on EBS (:class:`EbsModelCache`), per model: weights written once to a seed
volume by a Job (the package's seed program for a ``model`` section, or a loader container of
your own), snapshotted when the Job has completed, and every serving replica's own
ReadWriteOnce volume restored from that snapshot: a generic ephemeral volume in the pod
template, so a new revision rolls the replicas instead of replacing their StatefulSet.

One revision per snapshot, as Hyperdisk ML holds one per disk: with a ``model`` section the
seed volume holds ``revisions/<revision>/`` and its manifest (``model/layout.py``), the
snapshot is cut from it, and replicas mount that revision by ``subPath`` behind the gate, as
other stores' readers do. A new revision is a new seed volume, seed Job and snapshot created
beside the old ones (named after the revision), never an edit of them."""

# No `from __future__ import annotations`: the component analyzer and the field machinery read
# the args TypedDict and the output annotations as objects.
# Signatures naming a provider SDK class quote it: evaluated at import, it would load the SDK's
# lazily loaded modules (about half a second of every plan's start-up).

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Required

import pulumi
import pulumi_kubernetes as k8s

from ... import validation as v
from ...cluster import ClusterScope, Opts
from ...errors import ModelStoreInputError
from ...fields import FieldValues, Parser, fields_of, refusal_name, renamed
from ...kube import model_jobs
from ...kube.snapshots import (
    claim_spec,
    name_after,
    snapshot_source,
    volume_claim,
    volume_snapshot,
)
from ...kube.workload import HF_HOME_VOLUME
from ...modelsection import SAMPLE_FILES, Fill, Model, job_fills
from ...store import (
    STORE_NAME,
    UNPROTECTED_MARK,
    Binding,
    ModelStore,
    ModelStoreArgs,
    Spec,
)
from .classes import (
    GP3_FIELDS,
    Gp3Class,
    Gp3VolumeArgs,
    checked,
    ebs_storage_class,
    gp3_rules,
    gp3_size_fits,
)

CACHE_TYPE_TOKEN = "modelstore:index:EbsModelCache"
"""The cache's type token (``ModelStore``'s ``modelstore:index:<class>``): its URN's."""


class EbsModelCacheArgs(ModelStoreArgs, Gp3VolumeArgs, total=False):
    """Arguments of :class:`EbsModelCache`. Required: one reader namespace, ``volume_size`` and
    exactly one of ``model``, ``loader``, ``source_claim_name`` and ``source_snapshot_name``.
    The gp3 fields (``iops``, ``throughput_mibps``, ``encrypted``, ``kms_key_arn``,
    ``fs_type``, ``volume_tags``) are the cache's own class's: loading weights is sequential,
    so throughput is what shortens it; a customer managed ``kms_key_arn`` must also be in the
    driver's ``kms_key_arns``, so its controller may use the key. ``readers`` is the ONE
    namespace of the seed claim, the VolumeSnapshot and the serving StatefulSet (a claim
    restores only from a VolumeSnapshot in its own namespace); no ``writers`` (the loader
    writes, replicas restore) and no ``claim_name`` (each replica's claim is named after
    ``claim_template_name``). (``namespace``, formerly, still accepted with a deprecation
    warning: ``readers: [namespace]``.)"""

    volume_size: Required[str]
    """Size of the seed volume and of every replica's volume, a Kubernetes quantity with a
    unit (``200Gi``); at least the model's size. No default. gp3 takes 1Gi to 65536Gi. Raising
    it grows the seed claim in place; each replica's volume is in the pod template
    (:meth:`EbsModelCache.patch_stateful_set_spec`), so its replicas roll onto the new size."""
    loader: Mapping[str, Any]
    """The advanced form of ``model`` (kept beside it, not deprecated): a container of your own
    (``image``, ``command``/``args``, ``env``, ...) that writes the model into ``mount_path``,
    for a source or a layout the seed program does not take. Nothing checks what it writes: no
    manifest, no revision path, no gate on replicas. With ``model`` instead, the seed Job runs
    the package's seed program (``model/seed.py``) into the seed volume as the other
    Job-seeded stores do: sha256 of every file checked, the manifest written, the revision
    published by a rename. It runs once as a Job on a fresh seed volume; Pulumi waits for it to
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
    2000}`` changes only the volume's group; a key set to ``null`` removes it. Default:
    ``{"runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000,
    "seccompProfile": {"type": "RuntimeDefault"}}``."""
    loader_service_account_name: str
    """Service account of the loader or seed Job (e.g. one with S3 read access by IRSA or Pod
    Identity; required for an ``s3://`` model, which the seed program reads as it). Default:
    the namespace's default."""
    loader_timeout_minutes: int
    """How long ``pulumi up`` waits for the loader Job to complete. Default: ``60``. The seed
    Job of a ``model`` section waits as every seed Job does (``kube/model_jobs.py``)."""
    source_claim_name: str
    """Snapshot this existing, already-written claim in the reader namespace instead of running a
    loader (stop its writers first). Default: none."""
    source_snapshot_name: str
    """Restore from this existing VolumeSnapshot in the reader namespace; nothing is seeded or
    snapshotted. Default: none."""
    model_revision: str
    """With ``loader``: a DNS-label suffix for the seed claim, loader Job, snapshot and claim
    template of one revision (``r2``); refused beside a ``model`` section, whose revision names
    them (``<name>-<revision slug>``) and whose new revision is created beside the old one.
    Changing it writes and snapshots the model anew and rolls the replicas onto new volumes
    restored from it; the previous revision's objects are replaced. What happens to the previous
    VolumeSnapshot is ``protect``'s to say. Default: none."""
    protect: bool
    """Keep the model's data, the VolumeSnapshot, when Pulumi deletes it. Default: ``true``: the
    VolumeSnapshot is registered with ``retain_on_delete`` (not ``protect``, which would block
    the replacement a ``model_revision`` change needs). Then ``pulumi destroy`` and a
    ``model_revision`` change only drop the VolumeSnapshot from the stack: the object, its
    VolumeSnapshotContent and the EBS snapshot stay (whatever the snapshot class's deletion
    policy), a claim naming it in its ``dataSource`` can still be restored, and after a revision
    change the old revision's snapshot keeps costing EBS snapshot storage until you delete it
    (``kubectl delete volumesnapshot <name> -n <namespace>``, and with a Retain class its
    VolumeSnapshotContent and EBS snapshot too). Set ``false`` to opt out: Pulumi then deletes the
    old VolumeSnapshot on destroy and on a revision change, and with a Delete snapshot class
    that deletes the EBS snapshot. The seed claim is never retained: until the snapshot is ready
    the snapshot controller's ``pvc-as-source-protection`` finalizer keeps it from deletion,
    after that the snapshot holds the same data, and keeping each revision's seed volume would
    only pay for a second copy."""
    claim_template_name: str
    """Name of each replica's model volume in the pod template, a generic ephemeral volume;
    the claim the cluster makes for a replica pod is ``<pod>-<claim_template_name>``
    (``<statefulset>-<ordinal>-<claim_template_name>``). Default: the cache's name (with the
    revision, if any)."""
    storage_class_name: pulumi.Input[str | None]
    """An existing StorageClass for the seed and replica volumes (the seed volume is empty, so
    the class must not set ``volumeInitializationRate``: EC2 refuses it for a volume not
    created from a snapshot). Default: a gp3 class made for this cache, ``<name>-gp3``, from
    the fields below (and, with ``volume_initialization_rate_mibps``, ``<name>-gp3-seed``
    without the rate for the seed volume)."""
    snapshot_class_name: pulumi.Input[str | None]
    """The VolumeSnapshotClass for the snapshot (pass ``EbsCsiDriver.snapshot_class_name`` so
    the snapshot waits for it). Default: ``ebs-snapshots``, the driver component's default."""
    volume_initialization_rate_mibps: int
    """Rate, 100 to 300 MiB/s, at which EBS pulls each restored replica volume's blocks from
    the snapshot. Only the replicas' class carries it: the seed volume, empty, comes from a
    class of its own without it, ``<name>-gp3-seed`` (EC2 refuses the rate for a volume not
    created from a snapshot). Default: the EBS default (blocks load lazily on first read, so
    the first model load from a fresh replica is slow)."""


# -- the cache's rules ------------------------------------------------------------------------

MODEL_VOLUME = "model"


# Kubernetes' Cross-namespace storage data sources (a claim restoring a VolumeSnapshot of
# another namespace through ``dataSourceRef.namespace`` and a ReferenceGrant) are alpha since
# 1.26, behind the CrossNamespaceVolumeDataSource feature gate of the API server, the
# controller manager and the CSI provisioner (KEP-3294; kubernetes-csi.github.io/docs,
# "Cross-namespace storage data sources"). One snapshot per namespace, each a
# VolumeSnapshotContent pre-provisioned from the first one's EBS snapshot id, would need that
# id before deploy: it is known only once the snapshot is cut.
ONE_READER = (
    "one namespace (a claim restores only from a VolumeSnapshot in its own namespace, and "
    "Kubernetes' cross-namespace data sources are alpha, KEP-3294): make one cache per namespace"
)


def one_reader_namespace(store: str, readers: Any) -> None:
    if readers and len(readers) > 1:
        raise ModelStoreInputError(store, "readers", list(readers), ONE_READER)


def no_writers(store: str, writers: Any) -> None:
    if writers:
        raise ModelStoreInputError(
            store,
            "writers",
            list(writers),
            "empty: the loader writes the model once to the seed volume and each replica "
            "restores its own copy of the snapshot; to change the model, raise model_revision",
        )


def no_claim_name(store: str, claim_name: Any) -> None:
    raise ModelStoreInputError(
        store,
        "claim_name",
        claim_name,
        "unset: the cluster names each replica's claim <pod>-<claim_template_name> "
        "(give claim_template_name)",
    )


def volume_size_is_a_size(store: str, volume_size: Any) -> None:
    v.size_gib(store, "volume_size", volume_size)


def exactly_one_source(
    store: str, model: Any, loader: Any, source_claim_name: Any, source_snapshot_name: Any
) -> None:
    """The model comes from one place: a model section, a loader, an existing claim or an
    existing snapshot."""
    sources = [
        name
        for name, value in (
            ("model", model),
            ("loader", loader),
            ("source_claim_name", source_claim_name),
            ("source_snapshot_name", source_snapshot_name),
        )
        if value
    ]
    if len(sources) != 1:
        raise ModelStoreInputError(
            store,
            "model, loader, source_claim_name or source_snapshot_name",
            sources,
            "exactly one of them",
        )


def loader_field_beside_model(field: str, why: str) -> Any:
    """A rule refusing a field of the loader's beside a ``model`` section, which has its own."""

    def beside_model(store: str, value: Any) -> None:
        raise ModelStoreInputError(store, field, value, f"unset beside a model section ({why})")

    return beside_model


# What each loader field is, beside a model section.
LOADER_ONLY = MappingProxyType(
    {
        "model_revision": "model.revision names the revision's objects",
        "loader_pod_security_context": (
            f"the seed Job runs as user {model_jobs.RUN_AS} with fsGroup {model_jobs.RUN_AS}, "
            "non-root, read-only root filesystem"
        ),
        "loader_timeout_minutes": (
            f"the seed Job's own deadline is {model_jobs.SEED_TIMEOUT_MINUTES} minutes"
        ),
    }
)


def model_in_the_caches_namespace(store: str, readers: Any, model: Mapping[str, Any]) -> None:
    """The seed volume is snapshotted in the cache's namespace (a VolumeSnapshot's source claim
    is in its own namespace, and a replica's claim restores only from a VolumeSnapshot in its
    own), so the seed Job runs there, not in a loader namespace of its own."""
    namespace = model.get("namespace")
    if namespace is not None and readers and namespace != readers[0]:
        raise ModelStoreInputError(
            store,
            "model.namespace",
            namespace,
            f"unset or {readers[0]!r}, the cache's namespace (the seed volume is snapshotted "
            "there, and replicas restore only from a VolumeSnapshot in their own namespace)",
        )


def s3_model_has_an_account(store: str, model: Mapping[str, Any], account: Any) -> None:
    """The seed program reads an ``s3://`` source as its pod's identity: the cache makes none."""
    source = model.get("source")
    if isinstance(source, str) and source.startswith("s3://") and not account:
        raise ModelStoreInputError(
            store,
            "loader_service_account_name",
            account,
            f"set for an s3:// model ({source}): a service account that may read the bucket "
            "(IRSA or Pod Identity), which the seed Job runs as (the cache makes no identity)",
        )


MODEL_BASE = refusal_name("model objects' name (<name>-<model.revision slug>)")
"""What an error about the name the model's revision gives the seed claim, snapshot and claim
template names."""


def model_base(store: str, revision: str) -> str:
    """With a model section, the name of one revision's objects: ``<name>-<revision slug>``
    (a commit SHA's first 12 characters), a DNS label (the default claim template's)."""
    base = f"{store}-{model_jobs.slug(revision)}"
    v.dns_label(store, MODEL_BASE, base)
    return base


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
    p.rule(one_reader_namespace, "readers")
    p.rule(no_writers, "writers")
    if "claim_name" in p:
        p.rule(no_claim_name, "claim_name")
    p.rule(volume_size_is_a_size, "volume_size")
    p.rule(exactly_one_source, "model", "loader", "source_claim_name", "source_snapshot_name")
    model = p["model"] if p.ok("model") and isinstance(p["model"], Mapping) else None
    if model is not None:
        for field, why in LOADER_ONLY.items():
            if field in p:
                p.rule(loader_field_beside_model(field, why), field)
        p.rule(
            lambda store, readers: model_in_the_caches_namespace(store, readers, model), "readers"
        )
        p.rule(
            lambda store, account: s3_model_has_an_account(store, model, account),
            "loader_service_account_name",
        )
    p.field_rule(loader_is_a_container, "loader")
    p.field_rule(v.dns_subdomain, "loader_service_account_name")
    checked(p, v.positive_int, "loader_timeout_minutes")
    p.field_rule(v.dns_subdomain, "source_claim_name")
    p.field_rule(v.dns_subdomain, "source_snapshot_name")
    p.field_rule(v.dns_label, "model_revision")
    revision = model.get("revision") if model is not None else None
    if isinstance(revision, str):
        # A new revision's objects are named after it: created beside the old ones.
        if p.ok(STORE_NAME, "claim_name"):
            base = p.check(lambda: model_base(p.store, revision))
            if base is not None:
                p.derived["base"] = base
            elif "claim_template_name" not in p:
                p.failed.add("claim_template_name")  # refused as the base name, once
        if "claim_template_name" not in p and "base" in p.derived:
            p.set("claim_template_name", p.derived["base"])
    elif p.ok("model_revision"):
        p.derived["base"] = _base(p.store, p["model_revision"])
        # Else the names made from the store's name are refused with it (or with the claim
        # name it is the default of), once.
        if p.ok(STORE_NAME, "claim_name"):
            p.rule(loader_job_name_is_a_label, "model_revision")
        if "claim_template_name" not in p:
            p.set("claim_template_name", p.derived["base"])
            if not p.ok(STORE_NAME, "claim_name", LOADER_JOB_NAME):  # refused above
                p.failed.add("claim_template_name")
    checked(p, v.dns_label, "claim_template_name")
    checked(p, claim_template_is_not_hf_home, "claim_template_name")
    if p.ok("loader", "mount_path") and isinstance(p["loader"], Mapping):
        p.check(lambda: loader_fits_its_pod(p.store, "loader", p["loader"], p["mount_path"]))
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


def _mounting(
    pod: dict[str, Any], volume: dict[str, Any], mount: dict[str, Any], **fields: Any
) -> dict[str, Any]:
    """A copy of the Job pod spec ``pod`` with ``volume`` first among its volumes, mounted first
    in every container at ``mount``, and ``fields`` set (the seed's and the verification's)."""
    return {
        **pod,
        "containers": [
            {**c, "volumeMounts": [mount, *c["volumeMounts"]]} for c in pod["containers"]
        ],
        "volumes": [volume, *pod["volumes"]],
        **fields,
    }


def _depends_on(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """The resources in ``opts.depends_on``: a component's children do not inherit them."""
    deps = opts.depends_on if opts is not None else None
    if isinstance(deps, pulumi.Resource):
        return [deps]
    if isinstance(deps, Sequence):
        return [d for d in deps if isinstance(d, pulumi.Resource)]
    return []


class EbsModelCache(ModelStore[EbsModelCacheArgs, ClusterScope], backend="ebs-snapshot"):
    """A model cache on EBS: written once, snapshotted, restored per replica.

    1. A gp3 StorageClass for the cache (``WaitForFirstConsumer``, expansion allowed), unless
       ``storage_class_name`` names one; with ``volume_initialization_rate_mibps``, a second
       one without the rate for the empty seed volume (EC2 refuses the rate there).
    2. With ``loader``: a seed claim (ReadWriteOnce, ``pulumi.com/skipAwait`` because it binds
       only when the loader pod starts) and a Job that mounts it read-write at ``mount_path``
       and writes the model. Pulumi waits for the Job to complete.
    3. A VolumeSnapshot of the seed (or of ``source_claim_name``), created only after the Job:
       a snapshot taken while the loader writes would capture half a model.
    4. For the replicas, a generic ephemeral volume restoring that snapshot in the pod
       template (``Binding.claim_template``: ``mount_for(ns).volume`` and ``.claim_template``,
       :meth:`claim_template`, :meth:`patch_stateful_set_spec`). Each replica pod gets its own
       ReadWriteOnce volume in its own Availability Zone (an EBS volume lives in one AZ; a
       snapshot is regional), made when the pod is created and deleted with it; scale-up
       restores new volumes with no Pulumi change, and nothing waits on the claims. The
       volume is in the pod template, not in ``volumeClaimTemplates``: those cannot change on
       a live StatefulSet (kubernetes ``pkg/apis/apps/validation/validation.go``
       ValidateStatefulSetUpdate), so a new revision there would replace the StatefulSet,
       every replica down at once; in the template it is a rolling update. Why no claim per
       namespace, as other stores make: a Deployment's replicas share one claim, which an RWO
       EBS volume cannot serve across nodes, and a fixed set of claims stops matching the
       replica count at the first scale. For such fixed claims,
       :func:`~pulumi_modelstore.kube.snapshots.restored_claim` makes one.

    It joins any cluster (the ``cluster`` given, else the Kubernetes cluster of its provider):
    it needs no fact of the EKS cluster, and the EBS CSI driver is :class:`EbsCsiDriver`'s. In
    a program that also builds stores on that EKS cluster with the same Kubernetes provider,
    pass one of them's ``cluster`` (``{"cluster": s3_store.cluster}``): two scopes on one
    provider are refused.
    Pass the driver in ``opts.depends_on`` (``depends_on=[driver]``): the cache's children then
    depend on it, so a destroy deletes claims before the driver that deletes their volumes.
    """

    args_type = EbsModelCacheArgs  # type: ignore[assignment]  # Required keys: no structural subtype of the base's args
    renamed_fields = MappingProxyType({"namespace": "readers"})
    # Each replica reads its own EBS volume: the block device loader settings (kube/serving.py).
    loader_profile = "block"
    example_args = MappingProxyType[str, Any](
        {"volume_size": "100Gi", "loader": {"image": "python:3.12-slim"}}
    )
    # None: the VolumeSnapshot is retained on delete (``protect``), never protected (that
    # would block the replacement a new model_revision needs).
    data_bearing_types = tuple[str, ...]()
    takes_writers = False
    max_readers = 1  # one_reader_namespace
    # Each replica restores its own volume from the snapshot of the seed volume, which the
    # cache's own seed Job writes (no shared claim, no writer consumer): native, as far as the
    # template is concerned. hf:// needs nothing; s3:// is read as loader_service_account_name.
    model_fill = job_fills(
        cloud="s3",
        takes_writers=False,
        no_writers=(
            "the cache's seed Job runs in an EKS cluster as loader_service_account_name, an "
            "AWS identity at most, which reads no Google Cloud or Azure storage: copy the model "
            "to an s3:// bucket or use Hugging Face"
        ),
        native={"hf": Fill("native"), "s3": Fill("native")},
    )

    namespace: pulumi.Output[str]
    """The cache's namespace (its reader namespace)."""
    seed_claim_name: pulumi.Output[str | None]
    """The seed claim the loader (or the model's seed Job) writes (``null`` without ``loader`` or
    ``model``)."""
    loader_job_name: pulumi.Output[str | None]
    """The Job that writes the seed claim: the loader, or the model's seed Job (``null`` without
    ``loader`` or ``model``)."""
    snapshot_name: pulumi.Output[str]
    """The VolumeSnapshot replicas restore from."""
    storage_class_name: pulumi.Output[str]
    """The StorageClass of the seed and replica volumes."""
    snapshot_class_name: pulumi.Output[str | None]
    """The VolumeSnapshotClass of the snapshot (``null`` with ``source_snapshot_name``)."""
    claim_template_name: pulumi.Output[str]
    """The replicas' model volume name; a replica pod's claim is ``<pod>-<it>``."""
    volume_size: pulumi.Output[str]
    """Size of every replica volume."""

    @classmethod
    def _renamed(cls, store: str, args: Any, warn: bool = True) -> Any:
        """The deprecated ``namespace`` was one namespace: it becomes ``readers: [namespace]``."""
        out = renamed(store, args, cls.renamed_fields, warn=warn, stacklevel=5)
        if out is not args and isinstance(out.get("readers"), str):
            out["readers"] = [out["readers"]]
        return out

    @classmethod
    def rules(cls, p: Parser) -> None:
        cache_rules(p)

    def preflight(
        self, spec: Spec[EbsModelCacheArgs], cluster: ClusterScope, opts: Opts
    ) -> list[pulumi.Resource]:
        """Nothing to look up; what the children wait for: ``opts.depends_on`` (the driver)."""
        return _depends_on(opts)

    def provision_storage(
        self, spec: Spec[EbsModelCacheArgs], cluster: ClusterScope, facts: Any
    ) -> Binding:
        """The class, the seed and its loader, the snapshot; the replicas' claim template."""
        known = fields_of(EbsModelCacheArgs)
        # Every field, None where neither given nor defaulted (typos still refused).
        self._values = FieldValues(
            "EbsModelCacheArgs", known, {**dict.fromkeys(known), **spec.args}
        )
        self._name = spec.common.name
        self._base: str = spec.derived["base"]
        self._common_claim_name = spec.common.claim_name
        self._mount_path = spec.common.mount_path
        self._namespace = spec.common.readers[0]
        self._labels = spec.common.labels
        self._after: list[pulumi.Resource] = facts
        self._model_section: Model | None = spec.common.model
        # With a model section each revision's objects are named after it (resource names
        # too), so a new revision is created beside the old one, not a replacement.
        self._suffix = (
            f"-{model_jobs.slug(self._model_section.revision)}" if self._model_section else ""
        )
        # The cache's namespace, where the store creates it: what the seed claim and the
        # programs' ConfigMap wait for (order: namespace-first).
        self._in_namespace = (
            [cluster.namespace(self._namespace, self, self._name)]
            if spec.common.creates_namespace(self._namespace)
            else []
        )
        # A seed volume to write: the loader's or the model section's.
        self._seeds = self._values["loader"] is not None or self._model_section is not None
        self._storage_class_name = self._class(spec.derived)
        self._seed()
        self._snapshot_name = self._snapshot()
        self._set_outputs()
        return Binding(
            capacity=spec.args["volume_size"],
            source=lambda ns, read_only: {},
            reader_access_mode="ReadWriteOnce",
            claim_template=lambda ns: self.claim_template(),
        )

    def _child(self, *depends_on: "pulumi.Resource | None") -> pulumi.ResourceOptions:
        """A child's options: after ``opts.depends_on`` (the driver: a destroy deletes the
        claims and the snapshot before it, order: cache-after-driver) and ``depends_on``."""
        return pulumi.ResourceOptions(
            parent=self, depends_on=self._after + [d for d in depends_on if d is not None]
        )

    def _class(self, derived: Mapping[str, Any]) -> pulumi.Input[str]:
        """The cache's own gp3 class, unless ``storage_class_name`` names one: the name the
        replicas' claims use (after the class, when the cache makes it), and the seed claim's
        unless the class carries a ``volumeInitializationRate``.

        EC2 refuses ``VolumeInitializationRate`` on a volume not created from a snapshot, and
        the EBS CSI driver passes a class's rate to every CreateVolume it makes
        (kubernetes-sigs/aws-ebs-csi-driver ``pkg/cloud/cloud.go`` createVolumeHelper, issue
        #2691): with a rate, the empty seed volume comes from a class of its own,
        ``<class>-seed``, the same gp3 volume without the rate."""
        name: str = self._values["storage_class_name"]
        self.storage_class = None
        self.seed_storage_class = None
        self._seed_storage_class_name: pulumi.Input[str] = name
        if "gp3" not in derived:
            return name
        gp3: Gp3Class = derived["gp3"]
        self.storage_class = ebs_storage_class(
            f"{self._name}-gp3",
            name=name,
            spec=gp3,
            labels=self._labels,
            opts=self._child(),
        )
        class_name = name_after(self.storage_class, name)
        self._seed_storage_class_name = class_name
        if gp3.volume_initialization_rate_mibps is not None and self._seeds:
            seed_name = f"{name}-seed"
            self.seed_storage_class = ebs_storage_class(
                f"{self._name}-gp3-seed",
                name=seed_name,
                spec=dataclasses.replace(gp3, volume_initialization_rate_mibps=None),
                labels=self._labels,
                opts=self._child(),
            )
            self._seed_storage_class_name = name_after(self.seed_storage_class, seed_name)
        return class_name

    def _seed(self) -> None:
        """With ``loader`` or ``model``: the seed claim and the Job that writes the model into
        it."""
        self.seed_claim = None
        self.loader_job = None
        self.seed_verify_job: k8s.batch.v1.Job | None = None
        if not self._seeds:
            return
        seed_resource = f"{self._name}-seed-volume{self._suffix}" if self._suffix else None
        self.seed_claim = volume_claim(
            seed_resource or f"{self._name}-seed",
            name=f"{self._base}-seed",
            namespace=self._namespace,
            size=self._values["volume_size"],
            storage_class_name=self._seed_storage_class_name,
            labels={**self._labels, model_jobs.ROLE_LABEL: "seed"},
            opts=self._child(*self._in_namespace),
        )
        if self._model_section is not None:
            self.loader_job = self.seed_job = self._model_seed_job(self._model_section)
            self.seed_job_name = self._seed_job_name
            self.seed_verify_job = self._model_verify_job(self._model_section)
            return
        self.loader_job = self._loader_job(self._name, self._child(self.seed_claim))

    def _model_seed_job(self, m: Model) -> "k8s.batch.v1.Job":
        """The package's seed program (``model/seed.py``, from the programs' ConfigMap) writing
        ``m``'s revision into the seed volume mounted read-write at the store's root, published
        by a rename with its manifest, as on the other Job-seeded stores: what the snapshot
        holds. It runs in the cache's namespace (where the snapshot is cut) as
        ``loader_service_account_name``, with ``fsGroup`` set so the non-root program may write
        the fresh volume: the kubelet gives an EBS volume to that group (the driver's CSIDriver
        declares ``fsGroupPolicy: File``, kubernetes-sigs/aws-ebs-csi-driver
        ``charts/aws-ebs-csi-driver/templates/csidriver.yaml``)."""
        ns = self._namespace
        claim_name = self._common_claim_name
        config_map = self._programs = model_jobs.programs_config_map(
            f"{self._name}-programs-{ns}",
            claim_name=claim_name,
            namespace=ns,
            labels=self._labels,
            opts=pulumi.ResourceOptions(parent=self, depends_on=self._in_namespace),
        )
        account = self._values["loader_service_account_name"]
        seed_claim_name = f"{self._base}-seed"

        def patch(pod: dict[str, Any], labels: Mapping[str, str]) -> tuple[Any, Any]:
            out = _mounting(
                pod,
                {"name": MODEL_VOLUME, "persistentVolumeClaim": {"claimName": seed_claim_name}},
                {"name": MODEL_VOLUME, "mountPath": model_jobs.STORE_ROOT},
                securityContext={**pod["securityContext"], "fsGroup": model_jobs.RUN_AS},
            )
            if account:
                out["serviceAccountName"] = account
            return out, {"labels": dict(labels)}

        job = model_jobs.ModelJob(claim_name, self._labels, m.image, m.revision, m.manifest_sha256)
        self._seed_job_name = model_jobs.job_name(claim_name, "seed", m.revision)
        token_secret = m.token_secret
        mounted: list[pulumi.Resource | None] = [self.seed_claim, config_map]
        if m.token is not None:
            secret, token_secret = model_jobs.model_token_secret(
                f"{self._name}-model-token",
                claim_name=claim_name,
                namespace=ns,
                labels=self._labels,
                token=m.token,
                # order: namespace-first
                opts=pulumi.ResourceOptions(parent=self, depends_on=self._in_namespace),
            )
            mounted.append(secret)
        return model_jobs.seed_job(
            f"{self._name}-seed{self._suffix}",
            job,
            namespace=ns,
            source=m.source,
            include=m.include,
            # One revision per seed volume: nothing older to keep or collect.
            keep_revisions=m.keep_revisions,
            publish="rename",
            token_secret=token_secret,
            patch=patch,
            # order: job-after-its-mount
            opts=self._child(*mounted),
        )

    def _model_verify_job(self, m: Model) -> "k8s.batch.v1.Job":
        """The verification of ``m``'s revision on the seed volume, read-only, where replicas
        read it: at the readers' mount path through the revision's subPath, the manifest
        beside it, as the replicas' security context runs. Each replica restores a block copy
        of this volume (the snapshot is cut from it, after this Job), so what passes here is
        what every replica reads; a Job on a restored volume of its own would keep that volume
        billed as long as the finished Job exists. A failed check stops the snapshot."""
        claim_name, seed_claim_name = self._common_claim_name, f"{self._base}-seed"
        files_path = self._mount_path

        def patch(pod: dict[str, Any], labels: Mapping[str, str]) -> tuple[Any, Any]:
            # The manifest's mount names this volume too (model_jobs.verify_job).
            out = _mounting(
                pod,
                {
                    "name": claim_name,
                    "persistentVolumeClaim": {"claimName": seed_claim_name, "readOnly": True},
                },
                {
                    "name": claim_name,
                    "mountPath": files_path,
                    "subPath": f"revisions/{m.revision}",
                    "readOnly": True,
                },
            )
            return out, {"labels": dict(labels)}

        job = model_jobs.ModelJob(claim_name, self._labels, m.image, m.revision, m.manifest_sha256)
        return model_jobs.verify_job(
            f"{self._name}-verify{self._suffix}",
            job,
            store=self._name,
            namespace=self._namespace,
            files_path=files_path,
            verify=m.verify,
            sample_files=SAMPLE_FILES,
            patch=patch,
            # order: job-after-its-mount
            opts=self._child(self.seed_job, self.seed_claim, self._programs),
        )

    def backend_verify_jobs(self) -> Mapping[str, pulumi.Resource]:
        """The seed volume's verification, in the cache's (reader) namespace."""
        job = self.seed_verify_job
        return {self._namespace: job} if job is not None else {}

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
            f"{self._name}-snapshot{self._suffix}",
            name=base,
            namespace=self._namespace,
            claim_name=values["source_claim_name"] or f"{base}-seed",
            snapshot_class_name=values["snapshot_class_name"],
            # Opted out of retention: marked so, for the policy pack (store.UNPROTECTED_MARK).
            labels={**self._labels, **({} if values["protect"] else {UNPROTECTED_MARK: "true"})},
            opts=pulumi.ResourceOptions.merge(
                self._child(self.seed_verify_job or self.loader_job),
                pulumi.ResourceOptions(retain_on_delete=values["protect"]),
            ),
        )
        return name_after(self.snapshot, base)

    def _set_outputs(self) -> None:
        """The cache's own outputs, from what the steps made (the template sets the rest)."""
        values, base = self._values, self._base
        none: pulumi.Output[Any] = pulumi.Output.from_input(None)
        self.namespace = pulumi.Output.from_input(self._namespace)
        self.seed_claim_name = (
            name_after(self.seed_claim, f"{base}-seed") if self.seed_claim else none
        )
        job_name = self._seed_job_name if self._model_section else f"{base}-loader"
        self.loader_job_name = name_after(self.loader_job, job_name) if self.loader_job else none
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
        labels = {**self._labels, model_jobs.ROLE_LABEL: "loader"}
        job_metadata: Any = {
            "name": f"{base}-loader",
            "namespace": self._namespace,
            "labels": labels,
        }
        job_spec: Any = {
            "backoffLimit": 3,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        }
        minutes = values["loader_timeout_minutes"]
        return model_jobs.waited_job(f"{name}-loader", job_metadata, job_spec, minutes, opts)

    def claim_template(self) -> dict[str, Any]:
        """The claim of each replica's ephemeral volume (``metadata.name`` the volume's):
        ReadWriteOnce, the cache's class and size, ``dataSource`` the snapshot. Its values
        depend on the snapshot, so a pod template using it is created after the snapshot."""
        return {
            "metadata": {
                "name": self._values["claim_template_name"],
                "labels": {**self._labels, model_jobs.ROLE_LABEL: "replica"},
            },
            "spec": claim_spec(
                self._name,
                size=self._values["volume_size"],
                storage_class_name=self._storage_class_name,
                data_source=snapshot_source(self._snapshot_name),
            ),
        }

    def replica_claim_name(self, stateful_set_name: str, ordinal: int) -> str:
        """The claim the cluster makes for one replica's ephemeral volume: ``<pod>-<volume>``
        (kubernetes ``staging/src/k8s.io/component-helpers/storage/ephemeral/ephemeral.go``
        VolumeClaimName), the pod being ``<statefulset>-<ordinal>``."""
        return f"{stateful_set_name}-{ordinal}-{self._values['claim_template_name']}"

    def patch_stateful_set_spec(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a StatefulSet ``spec`` serving from the cache (the StatefulSet must live in
        the cache's namespace, where the snapshot is): each replica's model volume added to the
        pod template, a generic ephemeral volume restoring the snapshot (made when the pod is
        created, deleted with it: a replica volume is a cache, the snapshot keeps the data);
        every container mounts it as a store's readers do (:meth:`mount_for`): read-only at
        ``mount_path``, ``HF_HUB_OFFLINE=1`` and ``HF_HOME`` on a writable emptyDir (added
        once). Nothing goes into ``volumeClaimTemplates``, which cannot change on a live
        StatefulSet: a new revision changes the pod template only, and the StatefulSet
        controller rolls the replicas onto it one at a time (``updateStrategy``, RollingUpdate
        unless set) instead of Pulumi replacing the StatefulSet.

        The lists it extends (``containers``, each container's ``volumeMounts`` and ``env``,
        ``volumes``, ``initContainers``) must be lists of mappings, and no volume or claim
        template of the spec's may take the model volume's name: anything else raises
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
        # (read-only, HF_HUB_OFFLINE, HF_HOME on an emptyDir), its volume each pod's own.
        mount = self.mount_for(self._namespace)
        assert mount.claim_template is not None  # the binding's (provision_storage)
        model_volume = mount.volume["name"]
        for field_name, taken in (
            (f"{path}.volumes", [vol.get("name") for vol in volumes if isinstance(vol, Mapping)]),
            (
                "spec.volumeClaimTemplates",
                [
                    (t.get("metadata") or {}).get("name")
                    for t in claim_templates
                    if isinstance(t, Mapping)
                ],
            ),
        ):
            if model_volume in taken:
                raise ModelStoreInputError(
                    store,
                    f"{field_name}[{taken.index(model_volume)}].name",
                    model_volume,
                    "a name other than the model volume's (claim_template_name), which "
                    "the cache adds to the pod template",
                )
        pod["containers"] = [mount.patch_container(_none_as_empty(c)) for c in containers]
        if mount.init_containers:  # a model section's gate: the revision's manifest is there
            init = _object_list(
                store, f"{path}.initContainers", pod.get("initContainers"), "Container"
            )
            pod["initContainers"] = [
                *init,
                *(
                    g
                    for g in mount.init_containers
                    if g["name"] not in {c.get("name") for c in init}
                ),
            ]
        names = {vol.get("name") for vol in volumes if isinstance(vol, Mapping)}
        volumes.extend(vol for vol in mount.volumes if vol["name"] not in names)
        pod["volumes"] = volumes
        template["spec"] = pod
        out["template"] = template
        return out
