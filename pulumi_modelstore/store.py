"""The contract every model store keeps, whatever the backend, and the one skeleton every
backend follows.

A store has consumer namespaces: readers get a read-only mount, writers (where the backend
allows) a read-write one. Each consumer namespace gets one PersistentVolumeClaim, pre-bound to
its own static PersistentVolume, so workloads couple to a claim name, never to a cloud.

Every backend reads the same way, in the same order (:meth:`ModelStore.__init__`):

1. parse: the args TypedDict's fields (types, defaults, unknown names; see ``fields.py``), the
   common contract (:func:`parse_common`), the cloud's rules (:meth:`cloud_rules`), then the
   backend's named rules (:meth:`rules`); every problem is reported at once, before anything
   registers;
2. join the cluster scope (:meth:`join`) and preflight (:meth:`preflight`): lookups only, each
   once per cluster;
3. provision the storage (:meth:`provision_storage`): the cloud resources, returning a
   :class:`Binding` (the PV side, and what the driver needs of pods);
4. consumer access (:meth:`access`, ``access.py``): the consumers' service accounts and cloud
   grants, as the backend declares them (:meth:`consumer_access`);
5. the base turns the binding into a PV and claim per consumer namespace (or offers each
   pod a volume of its own from a claim template, ``Binding.claim_template``),
   :meth:`mount_for` and the outputs (every ``pulumi.Output`` the class annotates).
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations as
# objects to infer the component schema.

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Generic, TypedDict, TypeVar, cast

import pulumi
import pulumi_kubernetes as k8s

from . import validation as v
from .access import (
    Access,
    Consumer,
    ConsumerAccess,
    Grant,
    PodSide,
    SourceGrant,
    consumer_service_account,
    grant_consumers,
)
from .backup import REFUSED_NOT_OWNED, BackupArgs, BackupSupport, settle_backup
from .cluster import ClusterScope, KubernetesCluster
from .errors import ModelStoreInputError
from .fields import (
    Parser,
    args_typed_init,
    check_renames,
    outputs_of,
    refusal_name,
    renamed,
    spelled_as,
)
from .kube import model_digest, model_jobs
from .kube.snapshots import name_after
from .kube.volumes import DYNAMIC_SUFFIX, DynamicClass, dynamic_storage_class, static_volume
from .kube.workload import (
    HF_HOME_PATH,
    HF_HOME_VOLUME,
    WorkloadMount,
    ephemeral_volume,
    hf_home_volume,
    reader_env,
)
from .labels import STORE_LABEL
from .modelsection import (
    OBJECT_SCHEMES,
    SAMPLE_FILES,
    Model,
    ModelSection,
    job_fills,
    literal_tokens,
    parse_model,
)
from .registry import Registry

DEFAULT_MOUNT_PATH = "/mnt/models"
MANAGED_BY = "pulumi-modelstore"
ACCESS_LABEL = "modelstore.pulumi.com/access"
UNPROTECTED_MARK = "modelstore-unprotected"
"""Tag, label (value ``"true"``) or, where keys must be identifiers, metadata key (dashes as
underscores) a store sets on its data-bearing resources when the user chose ``protect: false``:
how the policy pack (``pulumi_modelstore.policy``) tells a documented opt-out from a resource
left unprotected by accident. Valid as an AWS tag, a GCP or Kubernetes label and an Azure tag."""
ALL_NETWORKS_MARK = "modelstore-all-networks"
"""The same mark (value ``"true"``) on a storage account opened to every network by the
explicit opt-in (the Blob store's ``allow_all_networks``)."""
STORE_NAME = refusal_name("store name")
"""The field an error about the store's own name names."""
CLAIM_NAME_DEFAULT = refusal_name("claim_name (default: the store name)")
"""The field an error about the claim named after the store names."""


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
    """Create the consumer namespaces (once per cluster, whichever store asks first, kept while
    any store asks). Default: ``false`` (they are the workloads' namespaces and usually exist
    already). Turn on for a fresh laptop cluster."""
    labels: Mapping[str, str]
    """Labels merged onto every Kubernetes object. Default: none besides the store's own
    ``app.kubernetes.io/managed-by`` and ``modelstore.pulumi.com/store``."""
    protect: bool
    """Protect the data-bearing resource (file system, bucket, disk) with ``protect`` and
    ``retain_on_delete``. Default: ``true``. Set ``false`` to let ``pulumi destroy`` delete the
    data."""
    model: ModelSection
    """The model the store holds (``modelsection.ModelSection``): its source, pinned revision
    and how it is verified. Default: none; the store is filled by its writers. With it, the
    store seeds the revision (a Job in the loader namespace, a writer consumer of its own, or
    natively where the backend's ``model_fill`` says so), verifies it in every reader
    namespace and mounts readers at ``revisions/<revision>``."""
    backup: BackupArgs
    """Backups of the store's data (``enabled``, ``retention_days``, ``schedule``: see
    ``backup.BackupArgs``), mapped onto what the backend's storage offers. Default: on for a
    store with writers and no pinned ``model`` source, off where the data is reproducible from
    its source; refused where the storage's API refuses backups."""
    dynamic_claims: bool
    """Make a StorageClass ``<store>-dynamic`` for claims made on demand on the store's own
    storage (scratch space, caches, per-run outputs), each claim in a directory or share of its
    own outside the model's, which the store's readers never see. Use it for data a job makes
    and throws away next to the model; keep models in the store itself. Offered where the
    storage allows it (EFS: an access point per claim; Azure Files NFS: a share per claim in
    the store's account; NFS: a subdirectory per claim), refused elsewhere with the reason.
    Deleting a claim deletes its share or subdirectory, but EFS keeps a deleted claim's files
    (its access point goes; the driver removes the directory only with its controller's
    ``deleteAccessPointRootDir``, off by default). Default: ``false``."""
    cluster: Any
    """The cluster scope this store joins: an ``EksCluster`` for the AWS stores, a
    ``KubernetesCluster`` for the local and NFS stores. Default: the scope of the store's
    cluster, made by the first store that names it and shared by every store on it."""


# A store's args type (a TypedDict of ModelStoreArgs' fields and its own): what its hooks read,
# so mypy checks every key they read against the declared fields.
A = TypeVar("A", bound=Mapping[str, Any])
# The scope class a store joins (its ``cluster_type``, or ClusterScope for any cluster): what its
# hooks get as ``cluster``, so mypy knows the scope's own facts and methods.
C = TypeVar("C", bound=ClusterScope)
_ANY_CLUSTER: type[ClusterScope] | None = None
_NO_NEEDS: tuple[Callable[[str, Any], None], ...] = ()
_ANY_NUMBER: int | None = None
_NO_DYNAMIC_CLAIMS: str | None = (
    "this backend offers no claims made on demand on its storage (efs, azure-files-nfs and nfs do)"
)
# A Spec is read-only: a Spec of a backend's args is a Spec of its cloud base's args.
A_co = TypeVar("A_co", bound=Mapping[str, Any], covariant=True)
# Backend name (the config program's `backend`) -> store class; filled as backends are defined.
_BACKENDS: Registry[type["ModelStore"]] = Registry("backend_name")


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
    model: Model | None = None
    loader: str | None = None
    """The seed Job's namespace, an internal writer consumer (the model's ``namespace``), when
    the model is seeded by a Job; else None."""
    reads_source: bool = False
    """Whether the seed Job reads the model from an object store (``s3://``, ``gs://``,
    ``az://``): it then needs a read grant on the source besides its write grant on the store
    (``ModelStore.source_access``). Not where the storage fills itself and a Job only publishes
    what it imported (FSx from ``s3://``): that Job reads the store alone."""

    @property
    def consumers(self) -> tuple[tuple[str, bool], ...]:
        """(namespace, read_only) for every consumer, readers first, the loader last."""
        loader = ((self.loader, False),) if self.loader else ()
        return (
            tuple((ns, True) for ns in self.readers)
            + tuple((ns, False) for ns in self.writers)
            + loader
        )

    def creates_namespace(self, namespace: str) -> bool:
        """Whether the store creates ``namespace``: every consumer's with
        ``create_namespaces``, and the model's default loader namespace always."""
        m = self.model
        default_loader = m is not None and m.namespace_is_default and namespace == m.namespace
        return self.create_namespaces or default_loader

    def volume_name(self, namespace: str) -> str:
        return f"{self.claim_name}-{namespace}"

    @property
    def volumes(self) -> list[tuple[str, str, str]]:
        """``(pv_name, namespace, claim_name)`` of every PV and claim the store declares."""
        return [(self.volume_name(ns), ns, self.claim_name) for ns, _ in self.consumers]


@dataclass(frozen=True)
class Spec(Generic[A_co]):
    """A store's parsed input: the common contract and the backend's own values."""

    common: StoreCommon
    args: A_co
    derived: Mapping[str, Any] = field(default_factory=dict)
    """What the rules derived (``Parser.derived``)."""


@dataclass
class Binding:
    """What a backend hands the base after provisioning its storage: how its PVs look (the PV
    side), and what its driver needs of pods (:attr:`pod`).

    The base makes one PV and claim per consumer namespace from it (capacity, access mode,
    volume source, mount options), and :meth:`ModelStore.mount_for` gives the pod side, with
    the consumers' identity added by the access layer."""

    capacity: str
    """The PV's and claim's capacity (a Kubernetes quantity)."""
    source: Callable[[str, bool], Mapping[str, Any]]
    """``source(namespace, read_only)``: the PV's volume source (e.g. ``{"csi": ...}``), with
    ``mountOptions`` where they differ per PV."""
    reader_access_mode: str = "ReadWriteMany"
    """The readers' access mode: what the driver accepts (FSx and EFS refuse ReadOnlyMany)."""
    writer_access_mode: str = "ReadWriteMany"
    mount_options: Sequence[Any] = ()
    node_affinity: Mapping[str, Any] | None = None
    ready: Sequence[pulumi.Resource] = ()
    """What the PVs wait for: each edge carries data or has a reason at the place it is made."""
    claim: Callable[[str, bool], Mapping[str, Any]] | None = None
    """For a backend whose volumes are provisioned, not static (a StorageClass and a data
    source): ``claim(namespace, read_only)`` gives the claim's spec fields besides its size
    (``storageClassName``, ``accessModes``, ``dataSourceRef``...). The base then makes the
    claim alone, with no PersistentVolume, and ``source``/``mount_options`` go unused."""
    claim_annotations: Mapping[str, str] = field(default_factory=dict)
    """Annotations on each provisioned claim (e.g. ``pulumi.com/skipAwait`` where it binds
    only later)."""
    storage_class_name: str = ""
    """The static PV's and its claim's ``storageClassName`` (the same on both, so they bind).
    Default ``""``: no class. A driver that reads the class (GCS FUSE's profiles) gets a name
    that no provisioner serves."""
    claim_options: Callable[[str], pulumi.ResourceOptions] | None = None
    """``claim_options(namespace)``: options merged into that provisioned claim's own (an edge
    to the object its ``dataSourceRef`` names, ``replace_on_changes``...)."""
    claim_resource_suffix: str = ""
    """Appended to each provisioned claim's resource name (``<store>-pvc-<namespace>``): a
    backend whose claim is named after the model revision makes a new claim beside the old
    one, not a replacement. Default ``""``."""
    pod: PodSide = field(default_factory=PodSide)
    """What the driver needs of consumer pods (none by default); the consumers' identity is
    the access layer's to add."""
    dynamic_class: DynamicClass | None = None
    """The StorageClass for claims made on demand (``dynamic_claims``), which the base makes as
    ``<store>-dynamic``. Default: None (not asked for)."""
    claim_template: Callable[[str], Mapping[str, Any]] | None = None
    """For a backend whose every replica needs a volume of its own (a ReadWriteOnce disk
    restored from a snapshot): ``claim_template(namespace)`` gives the claim (``metadata``
    with the volume's name, ``spec``) from which each pod's generic ephemeral volume is made.
    The base then makes no claim and no PV in that namespace (one claim could serve one
    replica only), and :meth:`ModelStore.mount_for` offers the volume and the template
    (``WorkloadMount.claim_template``). Default: None, a claim per consumer namespace."""


DYNAMIC_OUTPUT = "dynamic_storage_class_name"


class DynamicClaims:
    """The output of the stores that offer ``dynamic_claims`` (a base of their classes)."""

    dynamic_storage_class_name: pulumi.Output[str]
    """The StorageClass ``<store>-dynamic`` for claims made on demand; registered only with
    ``dynamic_claims: true``."""


def _dynamic_claims_refused(store: str, reason: str) -> None:
    raise ModelStoreInputError(store, "dynamic_claims", True, f"false here: {reason}")


def parse_common(p: Parser) -> StoreCommon | None:
    """The common contract's rules on a parser; None when one of them refused a value."""
    name = p.store
    readers = tuple(p["readers"] or ())
    writers = tuple(p["writers"] or ())
    p.check(lambda: v.name_is_label_value(name, STORE_NAME, STORE_LABEL))
    p.field_rule(_namespaces_are_labels, "readers")
    p.field_rule(_namespaces_are_labels, "writers")
    p.rule(_a_consumer_at_least, "readers", "writers")
    p.rule(_no_namespace_both_reader_and_writer, "readers", "writers")
    if "claim_name" in p:
        p.field_rule(v.dns_label, "claim_name")
    else:
        p.set("claim_name", name)
        if p.ok(STORE_NAME):
            p.check(lambda: _store_name_is_a_claim_name(name))
        if not p.ok(STORE_NAME, CLAIM_NAME_DEFAULT):  # refused once, as the store's name
            p.failed.add("claim_name")
    p.rule(_claim_is_not_the_hf_home_volume, "claim_name", "readers")
    p.rule(_volume_names_are_subdomains, "claim_name", "readers", "writers")
    if "mount_path" not in p:
        p.set("mount_path", DEFAULT_MOUNT_PATH)
    p.field_rule(v.container_path, "mount_path")
    p.rule(_mount_path_is_not_hf_home, "mount_path", "readers")
    p.field_rule(v.label_map, "labels")
    if not p.ok(
        STORE_NAME, "readers", "writers", "claim_name", "mount_path", "labels", "create_namespaces"
    ):
        return None
    return StoreCommon(
        name=name,
        readers=readers,
        writers=writers,
        claim_name=p["claim_name"],
        mount_path=p["mount_path"],
        create_namespaces=p["create_namespaces"],
        labels={
            **(p["labels"] or {}),
            "app.kubernetes.io/managed-by": MANAGED_BY,
            STORE_LABEL: name,
        },
        protect=p["protect"],
    )


def _no_literal_token(store: str, args: Any) -> None:
    found = literal_tokens(store, args)
    if found:
        raise ModelStoreInputError.combine(found)


def _loader_is_no_consumer(store: str, c: StoreCommon) -> None:
    """The loader namespace is the seed Job's alone: a declared consumer there would get two
    claims of one name. Nothing to check where no Job runs (a native fill without one)."""
    if c.loader is None:
        return
    if c.loader in (*c.readers, *c.writers):
        raise ModelStoreInputError(
            store,
            "model.namespace",
            c.loader,
            "a namespace that is not also a reader or writer of the store (the seed Job's "
            "writer claim is made there)",
        )
    v.dns_subdomain(
        store, "PersistentVolume name (<claim_name>-<namespace>)", f"{c.claim_name}-{c.loader}"
    )


def _store_name_is_a_claim_name(store: str) -> None:
    """The claim is named after the store unless ``claim_name`` is given."""
    v.dns_label(store, CLAIM_NAME_DEFAULT, store)


def _claim_is_not_the_hf_home_volume(store: str, claim_name: str, readers: Any) -> None:
    """The claim names the pod volume (``mount_for``), and a reader's pod also gets the
    ``hf-home`` emptyDir: two volumes of one name are refused (ValidateVolumes, k8s.io/kubernetes
    pkg/apis/core/validation: field.Duplicate)."""
    if readers and claim_name == HF_HOME_VOLUME:
        raise ModelStoreInputError(
            store,
            "claim_name",
            claim_name,
            f"a name other than {HF_HOME_VOLUME} when the store has readers (their pods get an "
            f"emptyDir volume of that name for HF_HOME)",
        )


def _volume_names_are_subdomains(
    store: str, claim_name: str, readers: Sequence[str] | None, writers: Sequence[str] | None
) -> None:
    """Each PV is named ``<claim_name>-<namespace>``: ValidatePersistentVolumeName is
    NameIsDNSSubdomain (k8s.io/kubernetes pkg/apis/core/validation). Two DNS labels and a '-'
    always are one; checked all the same, as the name the API receives."""
    for ns in (*(readers or ()), *(writers or ())):
        v.dns_subdomain(
            store, "PersistentVolume name (<claim_name>-<namespace>)", f"{claim_name}-{ns}"
        )


def _mount_path_is_not_hf_home(store: str, mount_path: str, readers: Any) -> None:
    if readers:
        mount_path_is_not_hf_home(store, "mount_path", mount_path)


def mount_path_is_not_hf_home(store: str, field: str, mount_path: Any) -> None:
    """A reader's container mounts the ``hf-home`` emptyDir at ``HF_HOME_PATH``: two mounts at
    one path are refused (ValidateVolumeMounts, k8s.io/kubernetes pkg/apis/core/validation:
    mountPath "must be unique")."""
    if isinstance(mount_path, str) and v.same_path(mount_path, HF_HOME_PATH):
        raise ModelStoreInputError(
            store,
            field,
            mount_path,
            f"a path other than {HF_HOME_PATH} for readers (their containers mount a writable "
            f"emptyDir there for HF_HOME)",
        )


def _namespaces_are_labels(store: str, field: str, namespaces: Sequence[str]) -> None:
    seen: set[str] = set()
    for ns in namespaces:
        v.dns_label(store, field, ns)
        if ns in seen:
            raise ModelStoreInputError(store, field, list(namespaces), "a list without repeats")
        seen.add(ns)


def _a_consumer_at_least(store: str, readers: Any, writers: Any) -> None:
    if not readers and not writers:
        raise ModelStoreInputError(
            store, "readers and writers", [], "at least one consumer namespace between them"
        )


def _no_namespace_both_reader_and_writer(store: str, readers: Any, writers: Any) -> None:
    both = sorted(set(readers or ()) & set(writers or ()))
    if both:
        raise ModelStoreInputError(
            store, "writers", both[0], "a namespace that is not also a reader"
        )


class ModelStore(pulumi.ComponentResource, Generic[A, C]):
    """Base of every store: the skeleton (see the module docstring), claims per consumer
    namespace and the workload mount. Subclasses name their args type twice, for the run time
    (``args_type``) and for mypy (``ModelStore[TheirArgs, TheirScope]``, so their hooks take
    ``Spec[TheirArgs]`` and the ``cluster_type`` scope), override :meth:`rules`, :meth:`preflight`,
    :meth:`provision_storage` and, where the consumers need a cloud identity,
    :meth:`consumer_access`. They inherit ``__init__``, annotated with their ``args_type`` for
    the component schema (``fields.args_typed_init``)."""

    # Class attributes without annotations: the component analyzer treats annotations on a
    # component as its outputs.
    args_type = ModelStoreArgs
    backend_name = ""
    # The scope class the store joins (its kind is the config program's cluster kind); None:
    # any cluster (the NFS and local stores).
    cluster_type = _ANY_CLUSTER
    # What the store needs the cluster to have (``require_...`` checks on the scope's facts),
    # checked as the store joins, before its preflight. Default: nothing.
    cluster_needs = _NO_NEEDS
    # Old spelling -> new, accepted with a deprecation warning for one release.
    renamed_fields = MappingProxyType[str, str]({})
    # The least args a plan of this backend needs besides its consumers (``readers``,
    # ``writers``): the contract suite and the bad-input tables build every backend from it.
    example_args = MappingProxyType[str, Any]({})
    # The Pulumi types of the resources that hold the store's data: protected and retained on
    # delete by default (``protect``). Default: none (the data lives elsewhere).
    data_bearing_types = tuple[str, ...]()
    # Whether the store accepts ``writers``. Default: it does; a store filled once and
    # read-only for many (Hyperdisk ML) refuses them in its rules.
    takes_writers = True
    # The most reader namespaces the store takes. Default: None, any number; a store whose
    # data sits in one namespace (the EBS cache's VolumeSnapshot) refuses more in its rules.
    max_readers = _ANY_NUMBER
    # Why ``dynamic_claims: true`` is refused whatever the configuration, or None where it is
    # offered (``provision_storage`` hands a ``Binding.dynamic_class``); a backend whose answer
    # depends on the configuration overrides :meth:`dynamic_claims_refusal`. Default: refused,
    # naming the backends that offer it.
    dynamic_claims_refused = _NO_DYNAMIC_CLAIMS
    # What the readers' files sit on, which decides the serving engine's weight-loader settings
    # ``mount_for(ns).serving_args(engine)`` offers: one of kube/serving.py's
    # ``LOADER_PROFILES`` (each backend sets it). Default "": not known, the engine's defaults.
    loader_profile = ""
    # How a ``model`` section's source gets in, per scheme (``modelsection.Fill``): seeded by
    # the Job, filled natively, or refused with a reason. Default: ``hf://`` by the Job, object
    # stores refused (no cloud identity); each cloud's stores set theirs.
    model_fill = job_fills(cloud=None)
    # How the seed publishes a revision (the seed program's ``--publish``): ``rename`` on file
    # systems; ``manifest-last`` where the mount cannot rename a directory in one step.
    model_publish = "rename"
    # How long a verification Job may take, start to end, and ``pulumi up`` waits for it.
    # Default: model_jobs.VERIFY_TIMEOUT_MINUTES (the revision is published before it starts).
    model_verify_minutes = model_jobs.VERIFY_TIMEOUT_MINUTES
    # The read layout the seed sets on the files it writes (the seed program's ``--layout``):
    # ``none``, or ``lustre`` where striping decides read speed (model/lustre.py).
    model_layout = "none"
    # Whether the seed's pod first gives the store's root to the seed (model_jobs'
    # prepare_container: root, with CHOWN, DAC_OVERRIDE and FOWNER only), where the storage
    # makes a root-owned root and the kubelet applies no fsGroup to it. Default: False, the
    # driver or the kubelet lets the seed write (fsGroup, an access point's POSIX user,
    # mountPermissions, a FUSE mount's owner).
    model_prepare_root = False

    claim_names: pulumi.Output[dict[str, str]]
    """Consumer namespace -> PersistentVolumeClaim name."""
    volume_names: pulumi.Output[dict[str, str]]
    """Consumer namespace -> PersistentVolume name."""
    mounts: pulumi.Output[dict[str, Any]]
    """Consumer namespace -> what a pod there needs (``WorkloadMount.to_output()``): the
    claim, volume and volumeMount, service account, pod annotations, labels and security
    context, env. An application stack reads it by ``StackReference`` and rebuilds the mount
    with ``WorkloadMount.from_output`` (the default ``mount_path``)."""
    model_revision: pulumi.Output[str | None]
    """The revision readers mount (``model.revision``). ``null`` without a ``model`` section."""
    model_manifest_path: pulumi.Output[str | None]
    """The revision's manifest under the store's root (``.modelstore/<revision>/
    manifest.json``): its presence publishes the revision. ``null`` without a ``model``
    section."""
    model_manifest_sha256: pulumi.Output[str | None]
    """The published manifest's digest (``sha256:<hex>``): ``model.manifest_sha256`` when
    pinned, else what the seed Job recorded (``kube/model_digest.py``), unknown in a preview
    until that Job has run. ``null`` where no seed Job runs in the loader namespace and none is
    pinned."""
    model_seed_job_name: pulumi.Output[str | None]
    """The seed Job's name (in the loader namespace; Hyperdisk ML: the Job that writes the
    manifest into the source). ``null`` when no Job seeds the model."""
    model_verify_job_names: pulumi.Output[dict[str, str]]
    """Reader namespace -> its verification Job's name: a consumer stack depends on them to
    start serving only once its namespace's mount is proven. Empty without a Job-seeded
    model."""

    def __init_subclass__(cls, backend: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A rename to a field that does not exist fails here, when the class is defined.
        check_renames(cls.__name__, cls.args_type, cls.renamed_fields)
        _BACKENDS.add(cls, backend)
        if "__init__" not in vars(cls):
            cls.__init__ = args_typed_init(cls)  # type: ignore[method-assign]

    @staticmethod
    def backends() -> dict[str, type["ModelStore"]]:
        """Backend name (the config program's ``backend``) -> store class."""
        return _BACKENDS.classes()

    # ---- 1. parse ------------------------------------------------------------------------------

    @classmethod
    def parse(cls, resource_name: str, args: Any, *, warn: bool = True) -> Spec[A]:
        """Every check that needs no lookup; raises one :class:`ModelStoreInputError` listing
        every problem, one line each. ``warn``: warn of deprecated spellings (the config
        program checks every store first without, so each store warns once, when built)."""
        p = Parser(
            resource_name,
            cls.args_type,
            cls._renamed(resource_name, args, warn),
            written=spelled_as(args, cls.renamed_fields),
            component=cls.__name__,
        )
        common = parse_common(p)
        p.check(lambda: _no_literal_token(resource_name, args))
        if common is not None and p.ok("model"):
            claim = common.claim_name
            model = p.check(lambda: parse_model(resource_name, p["model"], cls.model_fill, claim))
            if model is not None:
                fill = cls.model_fill[model.scheme]
                loader = model.namespace if fill.job else None
                reads = fill.how == "job" and model.scheme in OBJECT_SCHEMES
                common = replace(common, model=model, loader=loader, reads_source=reads)
                # The backend's rules may ask whether a Job writes the model (its namespace).
                p.derived["loader"] = loader
                p.check(lambda: _loader_is_no_consumer(resource_name, common))
        cls.cloud_rules(p)
        cls.rules(p)
        settle_backup(p, cls.backup_support(p))
        if p.ok("dynamic_claims") and p["dynamic_claims"]:
            reason = cls.dynamic_claims_refusal(p)
            if reason is not None:
                p.check(lambda: _dynamic_claims_refused(resource_name, reason))
        values = p.finish()
        assert common is not None
        # The values are the args type's fields (FieldValues refuses any other name).
        return Spec(common, cast(A, values), dict(p.derived))

    @classmethod
    def _renamed(cls, store: str, args: Any, warn: bool = True) -> Any:
        return renamed(store, args, cls.renamed_fields, warn=warn, stacklevel=4)

    @classmethod
    def cloud_rules(cls, p: Parser) -> None:
        """What every store of one cloud checks, whatever its backend (the cluster named, the
        cloud's tags or labels): run after the common contract, before :meth:`rules`. The
        cloud's base class overrides it; none by default."""

    @classmethod
    def rules(cls, p: Parser) -> None:
        """The backend's named rules, run on the parser (after the common contract and
        :meth:`cloud_rules`)."""

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """What the backend's storage offers for the ``backup`` section, in the configuration
        ``p`` holds (read after :meth:`rules`). Default: refused, the store does not own its
        storage."""
        return REFUSED_NOT_OWNED

    @classmethod
    def dynamic_claims_refusal(cls, p: Parser) -> str | None:
        """Why ``dynamic_claims: true`` is refused for the configuration ``p`` holds (read
        after :meth:`rules`); None where the backend's :meth:`provision_storage` hands a
        ``Binding.dynamic_class``. Default: :attr:`dynamic_claims_refused`, whatever ``p``
        holds."""
        return cls.dynamic_claims_refused

    @classmethod
    def scope_key(cls, args: Mapping[str, Any]) -> tuple[str, str]:
        """Which cluster scope a store with ``args`` joins (for checks across stores before
        any is built): the ``cluster_type`` scope's kind (a Kubernetes-only cluster without
        one) and ``cluster_name`` (the kind when unset)."""
        kind = (cls.cluster_type or KubernetesCluster).kind
        return (kind, str(args.get("cluster_name") or kind))

    @classmethod
    def validate(cls, resource_name: str, args: Any) -> None:
        """Check every input that needs no lookup; raises :class:`ModelStoreInputError`. Lets a
        program check all its stores before any registers."""
        cls.parse(resource_name, args)

    # ---- 2. join and preflight -----------------------------------------------------------------

    def join(self, spec: Spec[A], opts: pulumi.ResourceOptions | None) -> C:
        """The cluster scope this store joins (lookups of cluster facts happen there, once):
        the ``cluster_type`` scope its args name. Without a ``cluster_type``, the ``cluster``
        given (of any kind), else the :class:`KubernetesCluster` its ``cluster_name`` names."""
        scope = type(self).cluster_type
        if scope is None:
            given = spec.args.get("cluster")
            if given is not None:
                return cast(C, given)
            scope = KubernetesCluster
        return cast(C, scope.join(spec.common.name, spec.args, opts))

    def preflight(self, spec: Spec[A], cluster: C, opts: pulumi.ResourceOptions | None) -> Any:
        """Lookups only, before anything registers; what it returns reaches
        :meth:`provision_storage`."""
        return None

    def check_cluster(self, spec: Spec[A], cluster: C) -> None:
        """What the store asks of the cluster scope (a driver install, ...) that another store
        may have set differently: refused here, before the store registers anything."""

    @classmethod
    def check_across(cls, spec: Spec[A], book: dict[Hashable, Any]) -> None:
        """Checks between the stores of one cluster that need no lookup: ``book`` holds what
        the cluster's earlier stores left in it (each backend keys its own entries). Run as
        each store joins its scope, and by the config program for every store before any is
        built, so a refusal there leaves nothing registered. Default: none."""

    # ---- 3. provision --------------------------------------------------------------------------

    def provision_storage(self, spec: Spec[A], cluster: C, facts: Any) -> Binding:
        """The storage (cloud resources, children of the store); returns how the PVs bind to
        it."""
        raise NotImplementedError

    def consumer_access(self, spec: Spec[A], cluster: C, facts: Any) -> ConsumerAccess | None:
        """What the consumers get (``access.ConsumerAccess``: their service account, and a
        grant per access level through the cloud's ``identity.grant``), read once the storage
        exists. Default: None, no consumer identity (the node or driver mounts)."""
        return None

    def source_preflight(self, spec: Spec[A], cluster: C, facts: Any) -> Any:
        """The lookups the seed Job's read grant on the model's source needs
        (:meth:`source_access`), asked before anything registers, only when the seed Job
        reads an object store (``StoreCommon.reads_source``). Default: none."""
        return None

    def source_access(
        self, spec: Spec[A], cluster: C, facts: Any, source_facts: Any, access: Access
    ) -> SourceGrant:
        """The seed Job's read grant on ``model.source`` (``access.SourceGrant``), asked when
        the seed Job reads an object store (``StoreCommon.reads_source``): the loader
        namespace's consumer (``access.by_namespace``) becomes a reader of the source, no other
        consumer does. Every store whose ``model_fill`` takes an object store by the Job gives
        one; a store that takes none never gets here."""
        scheme = spec.common.model.scheme if spec.common.model else None
        raise NotImplementedError(
            f"{type(self).__name__} seeds {scheme}:// sources by Job but grants no read on them"
        )

    # ---- the skeleton ----------------------------------------------------------------------------

    def __init__(
        self,
        resource_name: str,
        args: A,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        spec = type(self).parse(resource_name, args)
        self._common = spec.common
        cluster = self.join(spec, opts)
        opts = cluster.store_options(opts)
        if self.cluster_needs:  # a scope without facts (Kubernetes only) is asked nothing
            cluster.facts(resource_name, *self.cluster_needs)
        facts = self.preflight(spec, cluster, opts)
        reads_source = spec.common.reads_source
        source_facts = self.source_preflight(spec, cluster, facts) if reads_source else None
        self.check_cluster(spec, cluster)
        type(self).check_across(spec, cluster.shared(("check_across",), dict))
        cluster.reserve_names(resource_name, spec.common.volumes)

        cluster.ensure_registered()
        super().__init__(f"modelstore:index:{type(self).__name__}", resource_name, None, opts)
        self.cluster = cluster
        self.persistent_volumes: dict[str, Any] = {}
        self.claims: dict[str, Any] = {}
        self.namespaces: dict[str, Any] = {}
        # The Job that seeds the model or publishes its manifest, where the backend makes it
        # itself (a native fill: the EBS cache's seed volume, Hyperdisk ML's source); else the
        # template makes it in the loader namespace. The verification Jobs wait for it.
        self.seed_job: Any = None
        self.seed_job_name: str | None = None
        self._access: Access | None = None
        binding = self.provision_storage(spec, cluster, facts)
        access = self.access(spec, cluster, facts)
        self._binding = binding
        self._pod = binding.pod.merged(access.pod)
        self._bind(spec.common, cluster, binding, access.ready)
        self._dynamic_claims(spec.common, binding)
        source = (
            self.source_access(spec, cluster, facts, source_facts, access) if reads_source else None
        )
        self._model(spec.common, access, source)
        self.summary: dict[str, Any] = {
            name: getattr(self, attribute)
            for name, attribute in self._outputs().items()
            # Only a store that made the class has the output (other stacks' outputs unchanged).
            if attribute != DYNAMIC_OUTPUT or self.dynamic_storage_class is not None
        }
        self.register_outputs(self.summary)

    def _dynamic_claims(self, c: StoreCommon, binding: Binding) -> None:
        """The StorageClass ``<store>-dynamic`` the backend describes, if asked for."""
        self.dynamic_storage_class: k8s.storage.v1.StorageClass | None = None
        if binding.dynamic_class is None:
            return
        # order: storage-before-volume
        self.dynamic_storage_class = dynamic_storage_class(
            c.name, binding.dynamic_class, labels=c.labels, parent=self, depends_on=binding.ready
        )
        self.dynamic_storage_class_name = name_after(
            self.dynamic_storage_class, f"{c.name}{DYNAMIC_SUFFIX}"
        )

    def access(self, spec: Spec[A], cluster: C, facts: Any) -> Access:
        """The consumers' access (``access.grant_consumers``), made once: the template asks
        after :meth:`provision_storage`; a backend whose storage names a consumer's account (a
        data source's transfer) asks first."""
        if self._access is None:
            declared = self.consumer_access(spec, cluster, facts)
            self._access = grant_consumers(self, spec.common, cluster, declared)
        return self._access

    @property
    def common(self) -> StoreCommon:
        return self._common

    def data_protection(self) -> pulumi.ResourceOptions:
        """Options for the data-bearing resource: protected and retained unless opted out."""
        protect = self._common.protect
        return pulumi.ResourceOptions(parent=self, protect=protect, retain_on_delete=protect)

    def opt_out_marks(self) -> dict[str, str]:
        """Tags (or labels) the data-bearing resource adds to its own: the
        :data:`UNPROTECTED_MARK` when the user opted out of protection, none by default."""
        return {} if self._common.protect else {UNPROTECTED_MARK: "true"}

    def volume_name(self, namespace: str) -> str:
        return self._common.volume_name(namespace)

    @classmethod
    def _outputs(cls) -> dict[str, str]:
        """camelCase output name -> attribute (``fields.outputs_of``)."""
        return outputs_of(cls)

    def _bind(
        self,
        c: StoreCommon,
        cluster: C,
        binding: Binding,
        granted: Sequence[pulumi.Resource],
    ) -> None:
        """One static PV and its claim per consumer namespace, after the storage is ready and
        the consumers are granted (``granted``)."""
        for ns, read_only in c.consumers:
            # The backend's storage and driver, and the consumers' grants (order:
            # storage-before-volume, driver-before-volume, grant-before-volume); the claim
            # waits for its PV, so the PV carries the namespace for both (order:
            # namespace-first).
            deps = [*binding.ready, *granted, *cluster.node_groups]
            if c.creates_namespace(ns):
                namespace = cluster.namespace(ns, self, c.name)
                self.namespaces[ns] = namespace
                deps.append(namespace)
            if binding.claim_template is not None:
                continue  # each replica's claim is the StatefulSet controller's to make
            if binding.claim is not None:
                self.claims[ns] = self._provisioned_claim(c, ns, read_only, binding, deps)
                continue
            pv, pvc = static_volume(
                c.name,
                pv_name=self.volume_name(ns),
                claim_name=c.claim_name,
                namespace=ns,
                capacity=binding.capacity,
                access_mode=binding.reader_access_mode if read_only else binding.writer_access_mode,
                source=binding.source(ns, read_only),
                mount_options=binding.mount_options,
                labels={**c.labels, ACCESS_LABEL: _access(read_only)},
                node_affinity=binding.node_affinity,
                storage_class_name=binding.storage_class_name,
                parent=self,
                depends_on=deps,
            )
            self.persistent_volumes[ns] = pv
            self.claims[ns] = pvc
        # The claims the store made (none from a claim template).
        self.claim_names = pulumi.Output.from_input({ns: c.claim_name for ns in self.claims})
        # A provisioned claim's volume is named by its provisioner: no static PV name to give.
        self.volume_names = pulumi.Output.from_input(
            {ns: self.volume_name(ns) for ns in self.persistent_volumes}
        )
        self.mounts = pulumi.Output.from_input(
            {ns: self.mount_for(ns).to_output() for ns, _ in c.consumers}
        )

    def _model(self, c: StoreCommon, access: Access, source: SourceGrant | None) -> None:
        """With a Job-seeded model: the programs' ConfigMap where a Job runs, the seed Job in
        the loader namespace (its writer claim, service account and grant are the access
        layer's, as any writer's; with an object store source, after its read grant there,
        ``source``), then one verification Job per reader namespace, mounting as
        :meth:`mount_for` does. Where the backend made the Job itself (``seed_job``: a native
        fill), only the verification Jobs, after it."""
        m = c.model
        # Hyperdisk ML already outputs the revision its own fields populate: kept without a
        # model section.
        if m is not None or "model_revision" not in vars(self):
            self.model_revision = pulumi.Output.from_input(m.revision if m else None)
        manifest = m is not None and type(self).model_fill[m.scheme].manifest
        self.model_manifest_path = pulumi.Output.from_input(
            f"{m.manifest_dir}/manifest.json" if m and manifest else None
        )
        self.model_manifest_sha256 = pulumi.Output.from_input(m.manifest_sha256 if m else None)
        self.seed_service_account: Any = None
        # The backend's own verification (the EBS cache verifies its seed volume), by namespace.
        self.verify_jobs: dict[str, Any] = dict(self.backend_verify_jobs())
        if m is None or (c.loader is None and self.seed_job is None):
            self.model_seed_job_name = pulumi.Output.from_input(None)
            self.model_verify_job_names = pulumi.Output.from_input({})
            return
        loader = c.loader
        # A verification Job mounts the readers' claim: none where each replica restores a
        # volume of its own from a claim template (the EBS cache).
        verified = manifest and self._binding.claim_template is None
        config_maps = {}
        for ns in (*((loader,) if loader else ()), *(c.readers if verified else ())):
            # order: namespace-first
            deps = [self.namespaces[ns]] if ns in self.namespaces else []
            config_maps[ns] = model_jobs.programs_config_map(
                f"{c.name}-programs-{ns}",
                claim_name=c.claim_name,
                namespace=ns,
                labels=c.labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=deps),
            )

        # order: job-after-its-mount
        def ready(ns: str) -> list[pulumi.Resource]:
            account = access.service_accounts.get(ns)
            return [self.claims[ns], config_maps[ns], *([account] if account else [])]

        job = model_jobs.ModelJob(c.claim_name, c.labels, m.image, m.revision, m.manifest_sha256)
        if loader is not None:
            job = self._seed_in_loader(c, m, job, loader, ready(loader), source)
        for ns in c.readers if verified else ():
            self.verify_jobs[ns] = model_jobs.verify_job(
                f"{c.name}-verify-{ns}-{model_jobs.slug(m.revision)}",
                job,
                store=c.name,
                namespace=ns,
                files_path=c.mount_path,
                verify=m.verify,
                sample_files=SAMPLE_FILES,
                minutes=type(self).model_verify_minutes,
                patch=self._patcher(ns, None),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.seed_job, *ready(ns)]),
            )
        self.model_seed_job_name = pulumi.Output.from_input(self.seed_job_name)
        self.model_verify_job_names = pulumi.Output.from_input(
            {ns: model_jobs.job_name(c.claim_name, "verify", m.revision) for ns in self.verify_jobs}
        )

    def _seed_in_loader(
        self,
        c: StoreCommon,
        m: Model,
        job: model_jobs.ModelJob,
        loader: str,
        ready: list[pulumi.Resource],
        source: SourceGrant | None,
    ) -> model_jobs.ModelJob:
        """The seed Job in the loader namespace, after ``ready`` (its claim, programs and
        account), what fills the model natively, the source's read grant and the digest
        record's Role; and, unpinned, the digest it records read back as the store's output.
        Returns ``job`` as the verification Jobs check it (the recorded digest, when unpinned)."""
        seed_deps = [*ready, *self.model_filled()]
        patch = self._patcher(loader, model_jobs.STORE_ROOT)
        # Unpinned, the seed records the manifest's digest for the output (kube/model_digest.py).
        record = None if m.manifest_sha256 else model_digest.record_name(c.claim_name, m.revision)
        # The seed's own account: where the source grant gave it one, or where the loader's
        # consumer has none and the seed records its digest (never as the namespace's default:
        # other pods of a loader namespace the user names may run as that, and would gain the
        # record's Role).
        own: Consumer | None = None
        grant, pod_labels = Grant(ready=()), {}
        if source is not None:
            # The seed reads the source as it starts: before its read grant exists the first
            # request is denied (order: seed-after-source-grant).
            seed_deps += source.ready
            if source.account is not None:
                own, grant = source.account, source.grant or grant
                pod_labels = dict(source.pod_labels)
        seed_account = self.mount_for(loader).service_account_name
        if own is None and record is not None and seed_account is None:
            own = Consumer(loader, False, model_jobs.seed_service_account(c.claim_name))
        if own is not None:
            self.seed_service_account = consumer_service_account(
                self, c, self.cluster, "seed", own, grant
            )
            seed_deps.append(self.seed_service_account)  # order: job-after-its-mount
            seed_account = own.service_account
            patch = _run_as(patch, seed_account, pod_labels)
        if record is not None:
            assert seed_account is not None
            # order: record-grant-first
            seed_deps += model_digest.record_access(
                f"{c.name}-manifest-record",
                name=f"{c.claim_name}-manifest-record",
                namespace=loader,
                config_map=record,
                service_account=seed_account,
                labels=c.labels,
                # order: namespace-first
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=[self.namespaces[loader]] if loader in self.namespaces else [],
                ),
            )
        token_secret = m.token_secret
        if m.token is not None:
            secret, token_secret = model_jobs.model_token_secret(
                f"{c.name}-model-token",
                claim_name=c.claim_name,
                namespace=loader,
                labels=c.labels,
                token=m.token,
                # order: namespace-first
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=[self.namespaces[loader]] if loader in self.namespaces else [],
                ),
            )
            seed_deps.append(secret)  # order: job-after-its-mount
        publish = type(self).model_fill[m.scheme].publish or type(self).model_publish
        self.seed_job = model_jobs.seed_job(
            f"{c.name}-seed-{model_jobs.slug(m.revision)}",
            job,
            namespace=loader,
            source=m.source,
            include=m.include,
            keep_revisions=m.keep_revisions,
            publish=publish,
            # Imported files were laid out by the storage that made them.
            layout="none" if publish == "imported" else type(self).model_layout,
            token_secret=token_secret,
            patch=patch,
            record=f"{loader}/{record}" if record else None,
            prepare=type(self).model_prepare_root,
            opts=pulumi.ResourceOptions(parent=self, depends_on=seed_deps),
        )
        self.seed_job_name = model_jobs.job_name(c.claim_name, "seed", m.revision)
        if record is None:
            return job
        self.model_manifest_sha256 = model_digest.read_digest(
            f"{c.name}-manifest-{model_jobs.slug(m.revision)}",
            namespace=loader,
            config_map=record,
            seed_job=self.seed_job,
            opts=pulumi.ResourceOptions(parent=self),
        )
        # Each verification Job checks the manifest the seed published, not just any.
        return replace(job, manifest_sha256=self.model_manifest_sha256)

    def backend_verify_jobs(self) -> Mapping[str, pulumi.Resource]:
        """Verification Jobs the backend made itself while provisioning, by reader namespace
        (where readers' volumes come from a claim template, no Job can mount as they do; the
        EBS cache verifies the volume they are copies of). Default: none."""
        return {}

    def model_filled(self) -> list[pulumi.Resource]:
        """What fills the model natively, which the seed Job waits for before it publishes
        (``Fill.publish``). Default: nothing."""
        return []

    def _patcher(self, namespace: str, mount_path: str | None) -> Callable[..., Any]:
        """``patch(pod_spec, labels)``: the pod spec and template metadata of a Job that mounts
        as ``mount_for(namespace)`` does (at ``mount_path`` when given)."""
        mount = self.mount_for(namespace, mount_path=mount_path)

        def patch(pod: dict[str, Any], labels: Mapping[str, str]) -> tuple[Any, Any]:
            metadata: dict[str, Any] = {"labels": {**labels, **mount.pod_labels}}
            if mount.pod_annotations:
                metadata["annotations"] = dict(mount.pod_annotations)
            return mount.patch_pod_spec(pod), metadata

        return patch

    def _provisioned_claim(
        self,
        c: StoreCommon,
        namespace: str,
        read_only: bool,
        binding: Binding,
        depends_on: Sequence[pulumi.Resource],
    ) -> Any:
        """A claim provisioned from a StorageClass (``Binding.claim``), no static PV."""
        assert binding.claim is not None
        spec: Any = {
            "volumeMode": "Filesystem",
            "resources": {"requests": {"storage": binding.capacity}},
            **binding.claim(namespace, read_only),
        }
        metadata: Any = {
            "name": c.claim_name,
            "namespace": namespace,
            "labels": {**c.labels, ACCESS_LABEL: _access(read_only)},
        }
        if binding.claim_annotations:
            metadata["annotations"] = dict(binding.claim_annotations)
        opts = pulumi.ResourceOptions(parent=self, depends_on=list(depends_on))
        if binding.claim_options is not None:
            opts = pulumi.ResourceOptions.merge(opts, binding.claim_options(namespace))
        return k8s.core.v1.PersistentVolumeClaim(
            f"{c.name}-pvc-{namespace}{binding.claim_resource_suffix}",
            metadata=metadata,
            spec=spec,
            opts=opts,
        )

    def mount_for(
        self, namespace: str, *, mount_path: str | None = None, sub_path: str | None = None
    ) -> WorkloadMount:
        """What a pod in ``namespace`` needs to use this store: the volume, the mount
        (read-only for readers), the service account, pod annotations and labels, env."""
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
        v.container_path(c.name, "mount_path", path)
        if modes[namespace]:
            mount_path_is_not_hf_home(c.name, "mount_path", path)
        if sub_path:  # relative: a leading '/' is dropped (workload_mount)
            v.sub_path(
                c.name, "sub_path", sub_path.strip("/") if isinstance(sub_path, str) else sub_path
            )
        m = c.model
        gate: list[dict[str, Any]] = []
        template = self._binding.claim_template(namespace) if self._binding.claim_template else None
        # The gate mounts the model's volume: named after the claim template where there is one.
        volume = template["metadata"]["name"] if template is not None else c.claim_name
        fill = type(self).model_fill[m.scheme] if m is not None else None
        if m is not None and fill is not None and modes[namespace] and fill.manifest:
            # Readers mount the pinned revision by the volumeMount's subPath (PVs and claims do
            # not change with the revision), or the root of a volume that holds one revision
            # (Fill.root), and wait for it to be published.
            inner = sub_path.strip("/") if sub_path else ""
            if not fill.root:
                sub_path = f"{m.revision_path}/{inner}" if inner else m.revision_path
            gate = [
                model_jobs.gate_container(
                    store=c.name, claim_name=volume, image=m.image, revision=m.revision
                )
            ]
        return workload_mount(
            namespace=namespace,
            claim_name=c.claim_name,
            read_only=modes[namespace],
            mount_path=path,
            sub_path=sub_path,
            pod=self._pod,
            loader_profile=self.loader_profile or None,
            init_containers=gate,
            claim_template=template,
        )


def workload_mount(
    *,
    namespace: str,
    claim_name: str,
    read_only: bool,
    mount_path: str,
    sub_path: str | None = None,
    pod: PodSide | None = None,
    loader_profile: str | None = None,
    init_containers: Sequence[Mapping[str, Any]] = (),
    claim_template: Mapping[str, Any] | None = None,
) -> WorkloadMount:
    """The one way a claim becomes what a pod needs (every store's :meth:`mount_for`): the
    volume, the mount (read-only for readers), and for readers ``HF_HUB_OFFLINE=1`` with
    ``HF_HOME`` on a writable emptyDir. With a ``claim_template``, the volume is named after
    it and is each pod's own generic ephemeral volume made from it
    (:func:`~pulumi_modelstore.kube.workload.ephemeral_volume`)."""
    volume: dict[str, Any] = {
        "name": claim_name,
        "persistentVolumeClaim": {"claimName": claim_name, "readOnly": read_only},
    }
    if claim_template is not None:
        claim_name = claim_template["metadata"]["name"]
        volume = ephemeral_volume(claim_name, claim_template)
    volume_mount: dict[str, Any] = {
        "name": claim_name,
        "mountPath": mount_path,
        "readOnly": read_only,
    }
    if sub_path:
        volume_mount["subPath"] = sub_path.strip("/")
    env: list[dict[str, Any]] = []
    extra_volumes: list[dict[str, Any]] = []
    extra_mounts: list[dict[str, Any]] = []
    b = pod or PodSide()
    security_context = dict(b.security_context)
    if read_only:
        hf_volume, hf_mount = hf_home_volume()
        env, extra_volumes, extra_mounts = reader_env(), [hf_volume], [hf_mount]
        extra_volumes += [dict(vol) for vol in b.reader_volumes]
        security_context.update(b.reader_security_context)
    return WorkloadMount(
        namespace=namespace,
        claim_name=claim_name,
        read_only=read_only,
        mount_path=mount_path,
        volume=volume,
        volume_mount=volume_mount,
        service_account_name=b.service_account_name,
        pod_annotations=dict(b.annotations),
        pod_labels=dict(b.labels),
        pod_security_context=security_context,
        env=env,
        extra_volumes=extra_volumes,
        extra_volume_mounts=extra_mounts,
        loader_profile=loader_profile,
        init_containers=[dict(c) for c in init_containers],
        claim_template=dict(claim_template) if claim_template is not None else None,
    )


def _run_as(
    patch: Callable[..., Any], account: str, pod_labels: Mapping[str, str]
) -> Callable[..., Any]:
    """``patch`` with the pod running as ``account`` and carrying ``pod_labels``: the seed
    Job's own identity, where the store's consumers have none (``SourceGrant.account``)."""

    def run_as(pod: dict[str, Any], labels: Mapping[str, str]) -> tuple[Any, Any]:
        spec, metadata = patch(pod, labels)
        metadata = {**metadata, "labels": {**metadata["labels"], **pod_labels}}
        return {**spec, "serviceAccountName": account}, metadata

    return run_as


def _access(read_only: bool) -> str:
    return "read-only" if read_only else "read-write"


def validate_all(stores: Sequence[tuple[type[ModelStore[Any, Any]], str, Any]]) -> None:
    """Check every store of a program before any registers: each ``(store class, name, args)``
    as :meth:`ModelStore.validate` does, raising one :class:`ModelStoreInputError` with every
    problem of every store, one line each. A store's constructor raises at its first problem
    and a Python program stops there (registering the store to report later would register
    it with bad input), so a program with several stores calls this first to see them all."""
    errors: list[ModelStoreInputError] = []
    for store_class, name, args in stores:
        try:
            store_class.validate(name, args)
        except ModelStoreInputError as error:
            errors.extend(error.errors)
    if errors:
        raise ModelStoreInputError.combine(errors)
