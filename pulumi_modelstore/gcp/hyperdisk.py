"""A model store on Hyperdisk ML, filled once from a Cloud Storage folder by the GKE Volume
Populator and attached read-only to many nodes at high throughput: GKE's answer to a
read-only-many persistent disk.

The store makes a ``hyperdisk-ml`` StorageClass (provisioned throughput, zonal or multi-zone)
and, per reader namespace, a Kubernetes service account with bucket-level read access (its
direct workload identity principal), a ``GCPDataSource`` naming the folder and that account,
and a ReadOnlyMany claim whose ``dataSourceRef`` names the data source. The disk itself is
provisioned by the PD CSI driver when the populator's transfer runs: there is no disk resource
in the Pulumi graph and no static PV.

Facts checked upstream:

- StorageClass parameters (kubernetes-sigs/gcp-compute-persistent-disk-csi-driver,
  pkg/parameters/constants.go): ``type`` (``hyperdisk-ml``, DiskTypeHdML),
  ``provisioned-throughput-on-create``, ``enable-multi-zone-provisioning``, ``labels``; the
  zone topology key is ``topology.gke.io/zone`` (pkg/common/constants.go TopologyKeyZone).
- ``GCPDataSource`` (docs.cloud.google.com/kubernetes-engine/docs/reference/crds/gcpdatasource):
  ``datalayer.gke.io/v1``, spec ``cloudStorage.uri`` (``gs://my-bucket/my-data/``) and
  ``cloudStorage.serviceAccountName`` (an account with read access to the data source); the
  claim names it through ``dataSourceRef`` (docs .../concepts/about-volume-populator).
- ``ComputeClass`` (docs .../reference/crds/computeclass): ``cloud.google.com/v1``,
  ``spec.priorities`` required (each rule e.g. ``machineFamily``), ``nodePoolAutoCreation``,
  ``whenUnsatisfiable``. The populator's transfer Job asks for the class named exactly
  ``gcs-to-hdml-compute-class`` (FACTS).
- Hyperdisk ML limits (docs cloud.google.com/compute/docs/disks/hd-types/hyperdisk-ml): size
  4 GiB-64 TiB; throughput 400-1,200,000 MiB/s; read-only attach to up to 2,500 nodes. The
  page also bounds throughput per GiB of size; those figures could not be read here, so they
  are not checked (Compute Engine refuses such a disk when the driver creates it).

A Hyperdisk ML volume turns read-only for good on its first read-only attach (the PD driver
sets its access mode to READ_ONLY_MANY; FACTS): a model update is a NEW volume. So
``model_revision`` is part of the data source's and the StorageClass's names and of each
claim's identity, and a claim is replaced (deleted, then created: its name stays the same for
workloads) whenever its spec changes, never edited.
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Required

import pulumi
import pulumi_kubernetes as k8s

from .. import validation as v
from ..access import Access, Consumer, ConsumerAccess, Grant, consumer_service_account
from ..backup import BackupSupport
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser, camel_case, deprecated
from ..kube import model_jobs
from ..kube.snapshots import KubernetesObject, name_after
from ..kube.volumes import SKIP_AWAIT
from ..modelsection import MIN_KEEP_REVISIONS, Fill, job_fills
from ..store import Binding, Spec
from . import identity as gcp_identity
from . import validation as gcp_v
from .cluster import (
    GkeCluster,
    GkeClusterFacts,
    region_of,
    require_pd_csi_addon,
    require_workload_pool,
)
from .identity import READER_ROLE, WRITER_ROLE
from .store import GcpModelStore, GcpModelStoreArgs

PD_CSI_DRIVER = "pd.csi.storage.gke.io"
DISK_TYPE = "hyperdisk-ml"
ZONE_TOPOLOGY_KEY = "topology.gke.io/zone"
DATA_SOURCE_GROUP = "datalayer.gke.io"
DATA_SOURCE_API_VERSION = f"{DATA_SOURCE_GROUP}/v1"
DATA_SOURCE_KIND = "GCPDataSource"
COMPUTE_CLASS_API_VERSION = "cloud.google.com/v1"
COMPUTE_CLASS_NAME = "gcs-to-hdml-compute-class"
# The machine families the transfer Job's nodes come from when the store creates the class,
# and no scale-up outside them (a node of another family may not attach Hyperdisk ML): GKE's
# guide "Automate data transfer to Hyperdisk ML with GKE Volume Populator", section "Create
# your compute class" (priorities c3 then c3d, whenUnsatisfiable: DoNotScaleUp).
COMPUTE_CLASS_MACHINE_FAMILIES = ("c3", "c3d")
COMPUTE_CLASS_WHEN_UNSATISFIABLE = "DoNotScaleUp"
REVISION_ANNOTATION = "modelstore.pulumi.com/model-revision"

MIN_SIZE_GIB, MAX_SIZE_GIB = 4, 65536
MIN_THROUGHPUT, MAX_THROUGHPUT = 400, 1_200_000

# Deprecated fields -> their spelling in the model section.
MOVED_TO_MODEL = MappingProxyType(
    {"source_uri": "model.source", "model_revision": "model.revision"}
)

_ZONE = re.compile(r"[a-z]+-[a-z]+\d+-[a-z]")


class HyperdiskMlModelStoreArgs(GcpModelStoreArgs, total=False):
    """Arguments of :class:`HyperdiskMlModelStore`: the cluster, the source folder, the model
    revision, the size and at least one reader namespace are required."""

    source_uri: str
    """Deprecated (one release, with a warning): use ``model.source``. The Cloud Storage folder
    the volumes are filled from, ``gs://<bucket>/<path>/`` (the trailing ``/`` is required: the
    populator copies the folder's contents). Required without a ``model`` section, refused
    beside one."""
    model_revision: str
    """Deprecated (one release, with a warning): use ``model.revision``. The model revision the
    volumes hold, a DNS-1123 label (``v1``, ``2024-06-01``, ``llama-3-8b-r2``). A Hyperdisk ML
    volume turns read-only for good on its first read-only attach, so a new model is a new
    volume: changing the revision makes new data sources, a new StorageClass and REPLACES
    every claim (same claim name, new volume, filled again from ``source_uri``); a ``model``
    section instead makes the new claims beside the old ones. Required without a ``model``
    section, refused beside one."""
    previous_revisions: Mapping[str, str]
    """With a ``gs://`` ``model``: the revisions still kept beside ``model.revision``, each
    mapped to the ``gs://`` folder it was populated from. Each keeps its StorageClass, data
    sources and claims (``<claim_name>-<revision>``) as planned when it was current, so pods
    still on it keep their disk while readers' mounts move to the new claim; a revision left
    out is deleted with its disks. At most ``model.keep_revisions`` - 1 of them. The program
    is stateless, so this list is how it knows the revisions planned before. Default: none."""
    size_gib: Required[int]
    """Size of each volume in GiB, 4-65536 (Hyperdisk ML's range); at least the folder's size.
    Fixed: the class allows no expansion, a new size is a new revision. Required."""
    throughput_mibps: int
    """Provisioned throughput of each volume in MiB/s (``provisioned-throughput-on-create``):
    400 to 1,200,000 (Compute Engine also bounds it per GiB of size). The volume's read
    throughput is shared by every node that attaches it. Applies to volumes created after a
    change (a new revision). Default: ``2400``. (Formerly ``throughput_mib_per_s``, still
    accepted with a deprecation warning.)"""
    zones: Sequence[str]
    """Zones of the cluster's region to provision in, for multi-zone volumes
    (``enable-multi-zone-provisioning``: one disk per zone, filled once, volume binding
    Immediate). At least two. Default: none, a zonal volume in the zone of its first consumer
    (volume binding WaitForFirstConsumer)."""
    service_account_name: str
    """The Kubernetes service account the store creates in each reader namespace for the
    populator's transfer (``GCPDataSource.spec.cloudStorage.serviceAccountName``); the store
    grants its workload identity principal ``roles/storage.objectViewer`` on the bucket. With
    a ``model`` section the store also makes it in ``model.namespace`` for the manifest Job,
    whose principal alone gets ``roles/storage.objectUser`` (it writes the manifest into the
    folder). Default: the claim name followed by ``-hdml-loader``."""
    create_compute_class: bool
    """Create the ComputeClass ``gcs-to-hdml-compute-class`` the populator's transfer Job
    runs on (once per cluster; machine families c3, then c3d, node pools auto-created). Leave
    off where the platform manages it. Default: ``false``."""


# ---- rules ---------------------------------------------------------------------------------


def source_uri_is_a_gcs_folder(
    store: str, uri: Any, field: str = "source_uri"
) -> tuple[str, str] | None:
    """``gs://<bucket>/<path>/``: the bucket must be one, the trailing '/' is required.
    Returns (bucket, path). ``field``: the field named in a refusal."""
    if v.is_output(uri):
        raise ModelStoreInputError(
            store,
            field,
            "<Output>",
            "a plain string (its bucket gets the IAM grant, known before deploy)",
        )
    if not isinstance(uri, str) or not uri.startswith("gs://"):
        raise ModelStoreInputError(
            store, field, uri, "a Cloud Storage folder URI, gs://<bucket>/<path>/"
        )
    if not uri.endswith("/"):
        raise ModelStoreInputError(
            store,
            field,
            uri,
            "a folder URI ending in '/' (gs://<bucket>/<path>/: the populator copies the "
            "folder's contents)",
        )
    bucket, _, path = uri[len("gs://") :].partition("/")
    if not gcp_v.is_bucket_name(bucket):
        raise ModelStoreInputError(store, field, uri, f"gs:// then {gcp_v.BUCKET_NAME_RULE}")
    if "//" in f"/{path}":
        raise ModelStoreInputError(
            store, field, uri, "a folder URI without empty path segments ('//')"
        )
    return bucket, path


def size_in_range(store: str, field: str, size: Any) -> None:
    if not MIN_SIZE_GIB <= size <= MAX_SIZE_GIB:
        raise ModelStoreInputError(
            store, field, size, f"between {MIN_SIZE_GIB} and {MAX_SIZE_GIB} GiB (Hyperdisk ML)"
        )


def throughput_in_range(store: str, throughput: Any) -> None:
    """Hyperdisk ML takes 400-1,200,000 MiB/s (its per-GiB bounds are not checked here)."""
    if not MIN_THROUGHPUT <= throughput <= MAX_THROUGHPUT:
        raise ModelStoreInputError(
            store,
            "throughput_mibps",
            throughput,
            f"between {MIN_THROUGHPUT} and {MAX_THROUGHPUT:,} MiB/s (Hyperdisk ML's range)",
        )


def zones_are_one_region(store: str, field: str, zones: Sequence[str]) -> None:
    """Multi-zone volumes: two zones at least, each once, all in one region."""
    for zone in zones:
        if not _ZONE.fullmatch(zone):
            raise ModelStoreInputError(store, field, zone, "zones such as us-central1-a")
    if len(set(zones)) != len(zones):
        raise ModelStoreInputError(store, field, list(zones), "a list without repeats")
    if len(zones) < 2:
        raise ModelStoreInputError(
            store,
            field,
            list(zones),
            "at least two zones for multi-zone volumes (leave zones out for a zonal volume)",
        )
    regions = sorted({region_of(z) for z in zones})
    if len(regions) > 1:
        raise ModelStoreInputError(
            store, field, list(zones), f"zones of one region (got {', '.join(regions)})"
        )


def readers_only(store: str, writers: Any) -> None:
    if writers:
        raise ModelStoreInputError(
            store,
            "writers",
            list(writers),
            "empty: a Hyperdisk ML store is filled once from source_uri and read-only for "
            "many (ReadOnlyMany); publish a model to the bucket and raise model_revision",
        )


def names_are_subdomains(store: str, claim_name: str, revision: str) -> None:
    """The data source ``<claim_name>-<revision>`` and the StorageClass
    ``<store>-hdml-<revision>`` are object names (NameIsDNSSubdomain)."""
    v.dns_subdomain(
        store,
        "GCPDataSource name (<claim_name>-<model_revision>)",
        data_source_name(claim_name, revision),
    )
    v.dns_subdomain(
        store,
        "StorageClass name (<store>-hdml-<model_revision>)",
        storage_class_name(store, revision),
    )


def data_source_name(claim_name: str, revision: str) -> str:
    return f"{claim_name}-{revision}"


def storage_class_name(store: str, revision: str) -> str:
    """Named after the store and revision: never one of GKE's own classes (``standard-rwo``,
    ``premium-rwo``, ...)."""
    return f"{store}-hdml-{revision}"


def _default_service_account(store: str, claim_name: str) -> str:
    return f"{claim_name}-hdml-loader"


# ---- the store -----------------------------------------------------------------------------


HYPERDISK_NO_BACKUP = BackupSupport(
    refusal=(
        "the disk is made by the GKE volume populator from source_uri, which stays the models' "
        "copy, and the store has no disk resource to attach a snapshot schedule to (a Compute "
        "Engine snapshot schedule is a resource policy attached to a named disk)"
    )
)
"""Hyperdisk ML: filled from Cloud Storage by the populator (reproducible), its disk named by
the PD CSI driver, not the store."""


class HyperdiskMlModelStore(GcpModelStore[HyperdiskMlModelStoreArgs], backend="hyperdisk-ml"):
    """A model store on Hyperdisk ML volumes, one per reader namespace, each filled from
    ``source_uri`` by the GKE Volume Populator and mounted ReadOnlyMany. Readers only: the
    bucket is where models are published; a new ``model_revision`` makes new volumes.

    ``protect`` does not apply: the volumes are copies of the bucket (the StorageClass deletes
    a volume with its claim), and the bucket is not the store's."""

    args_type = HyperdiskMlModelStoreArgs  # type: ignore[assignment]  # Required keys: no structural subtype of the base's args
    cluster_needs = (require_pd_csi_addon, require_workload_pool)
    # Hyperdisk ML: a block device attached read-only: vLLM loader settings in kube/serving.py.
    loader_profile = "block"
    renamed_fields = MappingProxyType({"throughput_mib_per_s": "throughput_mibps"})
    # Deprecated for the model section (not renames: a section replaces them).
    moved_to_model = MOVED_TO_MODEL
    example_args = MappingProxyType[str, Any](
        {
            "cluster_name": "prod-gke",
            "location": "us-central1",
            "source_uri": "gs://acme-models/llama/",
            "model_revision": "v1",
            "size_gib": 100,
        }
    )
    # None: the PD CSI driver provisions the volumes from the claims (no disk in the graph),
    # copies of a bucket that is not the store's.
    data_bearing_types = tuple[str, ...]()
    takes_writers = False

    dynamic_claims_refused = (
        "each Hyperdisk ML claim is a new disk, not space on the store's (its "
        "StorageClass already provisions one per claim)"
    )

    # No writers, so no seed Job: gs:// natively, by the volume populator, one revision per
    # disk at its root (Fill.root). No Job can write the disk after (a ReadOnlyMany Hyperdisk
    # ML volume), so a manifest Job writes the manifest into the source folder first and the
    # populator copies it with the model: readers are gated on it and verified against it.
    model_fill = job_fills(
        cloud="gs",
        takes_writers=False,
        no_writers=(
            "a Hyperdisk ML volume is filled once by the volume populator and read-only after, "
            "so no seed Job can write it: stage the model in a gs:// bucket"
        ),
        native={"gs": Fill("native", root=True)},
    )
    # A verification pod waits for its claim to bind, which it does once the populator's
    # transfer (which starts when the claim appears) has copied the whole folder: as long as a
    # seed Job's download may take, then the verification itself.
    model_verify_minutes = model_jobs.SEED_TIMEOUT_MINUTES + model_jobs.VERIFY_TIMEOUT_MINUTES

    storage_class_name: pulumi.Output[str]
    """The ``hyperdisk-ml`` StorageClass the claims are provisioned from."""
    source_uri: pulumi.Output[str]
    """The Cloud Storage folder the volumes are filled from."""
    model_revision: pulumi.Output[str]
    """The model revision the volumes hold."""
    data_source_names: pulumi.Output[dict[str, str]]
    """Reader namespace -> its GCPDataSource's name."""
    loader_service_account_names: pulumi.Output[dict[str, str]]
    """Reader namespace -> the service account the populator's transfer runs as."""

    @classmethod
    def _renamed(cls, store: str, args: Any, warn: bool = True) -> Any:
        if warn and isinstance(args, Mapping):
            for old, new in cls.moved_to_model.items():
                if old in args or camel_case(old) in args:
                    deprecated(store, old, new, stacklevel=5)
        return super()._renamed(store, args, warn)

    @classmethod
    def parse(
        cls, resource_name: str, args: Any, *, warn: bool = True
    ) -> Spec[HyperdiskMlModelStoreArgs]:
        """As every store's, and with a ``model`` section the claim is named after its revision
        (``<claim_name>-<revision>``): a new revision is a new claim beside the old, and
        ``mount_for`` mounts it."""
        spec = super().parse(resource_name, args, warn=warn)
        m = spec.common.model
        if m is None:
            return spec
        claim = f"{spec.common.claim_name}-{m.revision}"
        return replace(spec, common=replace(spec.common, claim_name=claim))

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """None: see :data:`HYPERDISK_NO_BACKUP`."""
        return HYPERDISK_NO_BACKUP

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.rule(readers_only, "writers")
        model = p["model"] if p.ok("model") else None
        if model is not None:
            for legacy in ("source_uri", "model_revision"):
                if legacy in p:
                    p.rule(_beside_model(legacy), legacy)
            _model_rules(p, model)
        elif "previous_revisions" in p:
            p.check(lambda: _previous_without_model(p.store, p["previous_revisions"]))
        needed = (
            ("size_gib",) if model is not None else ("source_uri", "model_revision", "size_gib")
        )
        for required in needed:
            if p[required] is None and p.ok(required):
                p.rule(_required(required))
        if p["source_uri"] is not None:
            found = p.rule(source_uri_is_a_gcs_folder, "source_uri")
            if found is not None:
                p.derived["bucket"], p.derived["path"] = found
        p.field_rule(v.dns_label, "model_revision")
        p.field_rule(size_in_range, "size_gib")
        if p["size_gib"] is not None:
            p.rule(throughput_in_range, "throughput_mibps")
        p.field_rule(zones_are_one_region, "zones")
        if p["model_revision"] is not None and p.ok("claim_name"):
            p.rule(names_are_subdomains, "claim_name", "model_revision")
        if "service_account_name" not in p and p.ok("claim_name") and p["claim_name"]:
            p.set("service_account_name", _default_service_account(p.store, p["claim_name"]))
        p.field_rule(v.dns_subdomain, "service_account_name")

    def preflight(
        self, spec: Spec[HyperdiskMlModelStoreArgs], cluster: GkeCluster, opts: Opts
    ) -> GkeClusterFacts:
        store = spec.common.name
        facts = cluster.facts(store)
        zones = spec.args.get("zones") or ()
        outside = [z for z in zones if region_of(z) != facts.region]
        if outside:
            raise ModelStoreInputError(
                store,
                "zones",
                list(zones),
                f"zones of the cluster's region {facts.region} (not in it: {', '.join(outside)})",
            )
        return facts

    def provision_storage(
        self, spec: Spec[HyperdiskMlModelStoreArgs], cluster: GkeCluster, facts: GkeClusterFacts
    ) -> Binding:
        a, c, d = spec.args, spec.common, spec.derived
        model = c.model is not None
        revision = d["revision"] if model else a["model_revision"]
        uri = d["source_uri"] if model else a["source_uri"]
        # With a model section each revision has its own resources (named after it), so a new
        # revision is created beside the old; without, the names stay as they always were.
        suffix = f"-{revision}" if model else ""
        sc_name = storage_class_name(c.name, revision)
        self.storage_class = storage_class = self._storage_class(spec, sc_name, c.labels, suffix)
        self.compute_class = None
        if a["create_compute_class"]:
            self.compute_class = cluster.install_once(
                COMPUTE_CLASS_NAME,
                c.name,
                f"ComputeClass {COMPUTE_CLASS_NAME}",
                lambda: compute_class_resource(cluster, c.labels),
                field="create_compute_class",
            )
        # The loaders' service accounts and bucket grants (access.py, consumer_access).
        access = self.access(spec, cluster, facts)
        self.loader_accounts = access.service_accounts
        self.seed_job = self._manifest_job(spec, cluster, facts) if model else None
        # With a model section the claim is already named after the revision (parse).
        ds_name = c.claim_name if model else data_source_name(c.claim_name, revision)
        self.data_sources = sources = {
            ns: self._data_source(spec, ns, ds_name, access, revision, uri, suffix)
            for ns in c.readers
        }
        self.kept_claims = {
            (ns, old): claim
            for old, old_uri in d.get("previous", {}).items()
            for ns, claim in self._kept_revision(spec, old, old_uri, access).items()
        }
        self.storage_class_name = name_after(storage_class, sc_name)
        self.source_uri = pulumi.Output.from_input(uri)
        self.model_revision = pulumi.Output.from_input(revision)
        self.data_source_names = pulumi.Output.from_input({ns: ds_name for ns in c.readers})
        self.loader_service_account_names = pulumi.Output.from_input(
            {ns: a["service_account_name"] for ns in c.readers}
        )
        after = [self.seed_job] if self.seed_job is not None else []
        return self._revision_binding(
            spec, storage_class, sc_name, sources, ds_name, revision, suffix, after
        )

    def _manifest_job(
        self, spec: Spec[HyperdiskMlModelStoreArgs], cluster: GkeCluster, facts: GkeClusterFacts
    ) -> k8s.batch.v1.Job:
        """The model's manifest, written into its ``gs://`` folder before the populator
        copies the folder, so every disk holds it beside the model's files: a Job in the
        model's namespace (``model.namespace``, by default ``<store>-loader``, which the store
        creates) running as ``service_account_name`` there, the one account with
        ``roles/storage.objectUser`` on the source bucket (it writes, and rewrites a stale
        manifest); the populator's accounts and the readers only read."""
        c, a, d = spec.common, spec.args, spec.derived
        m = c.model
        assert m is not None
        ns, account_name = m.namespace, a["service_account_name"]
        consumer = Consumer(ns, False, account_name)
        # The default namespace is the store's own; one named is made with create_namespaces
        # (order: namespace-first).
        after = [cluster.namespace(ns, self, c.name)] if c.creates_namespace(ns) else []
        grant = gcp_identity.grant(
            f"{c.name}-manifest-write-{ns}",
            facts=facts,
            bucket=d["bucket"],
            role=WRITER_ROLE,
            consumer=consumer,
            parent=self,
        )
        account = consumer_service_account(self, c, cluster, "manifest", consumer, grant)
        config_map = model_jobs.programs_config_map(
            f"{c.name}-programs-{ns}",
            claim_name=c.claim_name,
            namespace=ns,
            labels=c.labels,
            opts=pulumi.ResourceOptions(parent=self, depends_on=after),
        )
        job = model_jobs.ModelJob(c.claim_name, c.labels, m.image, m.revision, m.manifest_sha256)
        self.seed_job_name = model_jobs.job_name(c.claim_name, "manifest", m.revision)
        return model_jobs.source_manifest_job(
            f"{c.name}-manifest-{model_jobs.slug(m.revision)}",
            job,
            namespace=ns,
            source=m.source,
            service_account_name=account_name,
            # order: job-after-its-mount (its account, the programs, the account's grant)
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[account, config_map, *grant.ready]
            ),
        )

    def _revision_binding(
        self,
        spec: Spec[HyperdiskMlModelStoreArgs],
        storage_class: k8s.storage.v1.StorageClass,
        sc_name: str,
        sources: Mapping[str, KubernetesObject],
        ds_name: str,
        revision: str,
        suffix: str,
        after: Sequence[pulumi.Resource] = (),
    ) -> Binding:
        """The claims of one revision: a ReadOnlyMany claim per reader naming its data
        source, each after ``after`` (the manifest Job: the populator copies the folder when
        the claim appears, so the manifest must be in it by then)."""
        a = spec.args
        return Binding(
            capacity=f"{a['size_gib']}Gi",
            claim_resource_suffix=suffix,
            source=lambda ns, ro: {},
            reader_access_mode="ReadOnlyMany",
            claim=lambda ns, ro: {
                "accessModes": ["ReadOnlyMany"],
                "storageClassName": name_after(storage_class, sc_name),
                "dataSourceRef": {
                    "apiGroup": DATA_SOURCE_GROUP,
                    "kind": DATA_SOURCE_KIND,
                    # A data edge (name_after): the data source outlives its claim, so a
                    # destroy (or a replacement) deletes the claim first; a claim whose data
                    # source is gone is stuck (FACTS).
                    "name": name_after(sources[ns], ds_name),
                },
            },
            # The claim binds only after the transfer, which may take long: Pulumi must not
            # wait for it. The revision annotation names what the volume holds.
            claim_annotations={SKIP_AWAIT: "true", REVISION_ANNOTATION: revision},
            claim_options=lambda ns: pulumi.ResourceOptions(
                # A claim's spec is immutable and its volume read-only for good once attached:
                # any change (revision, size, class) is a new volume under the same name.
                replace_on_changes=["spec"],
                delete_before_replace=True,
                # order: manifest-before-populate
                depends_on=list(after),
            ),
        )

    def consumer_access(
        self, spec: Spec[HyperdiskMlModelStoreArgs], cluster: GkeCluster, facts: GkeClusterFacts
    ) -> ConsumerAccess:
        """The populator's transfer in each reader namespace runs as the loader service
        account, whose workload identity principal may read the bucket. Readers' pods need
        no identity: they mount a disk."""
        c = spec.common

        def grant(ns: str, read_only: bool, consumers: Sequence[Consumer]) -> Grant:
            return gcp_identity.grant(
                f"{c.name}-loader-read-{ns}",
                facts=facts,
                bucket=spec.derived["bucket"],
                role=READER_ROLE,
                consumer=consumers[0],
                parent=self,
            )

        return ConsumerAccess(
            service_account=spec.args["service_account_name"],
            grant=grant,
            readers_only=True,
            pods_run_as=False,
            account_role="loader",
        )

    def _data_source(
        self,
        spec: Spec[HyperdiskMlModelStoreArgs],
        ns: str,
        name: str,
        access: Access,
        revision: str,
        uri: str,
        suffix: str = "",
    ) -> KubernetesObject:
        """The GCPDataSource naming the folder and the loader account. The transfer starts
        when the claim appears: by then its account must exist (the spec names it, through
        data) and may read the bucket (the grant), and the transfer Job's class must exist
        where the store makes it."""
        c, a = spec.common, spec.args
        account = name_after(access.service_accounts[ns], a["service_account_name"])
        in_ns = [self.cluster.namespace(ns, self, c.name)] if c.create_namespaces else []
        after = [*access.by_namespace[ns].ready, *in_ns]
        return KubernetesObject(
            f"{c.name}-source-{ns}{suffix}",
            {
                "apiVersion": DATA_SOURCE_API_VERSION,
                "kind": DATA_SOURCE_KIND,
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": c.labels,
                    "annotations": {REVISION_ANNOTATION: revision},
                },
                "spec": {"cloudStorage": {"uri": uri, "serviceAccountName": account}},
            },
            opts=pulumi.ResourceOptions(
                parent=self,
                # The account's grant and the namespace (order: grant-before-volume,
                # namespace-first), and the transfer Job's class (order: driver-before-volume).
                depends_on=[*after, *([self.compute_class] if self.compute_class else [])],
            ),
        )

    def _kept_revision(
        self, spec: Spec[HyperdiskMlModelStoreArgs], revision: str, uri: str, access: Access
    ) -> dict[str, Any]:
        """A previous revision (``previous_revisions``) kept as it was planned when current:
        its StorageClass, data sources and claims, under the same names, so nothing of it
        changes. Readers no longer mount it."""
        c = spec.common
        base = spec.derived["claim_base"]
        claim_name, suffix = f"{base}-{revision}", f"-{revision}"
        sc_name = storage_class_name(c.name, revision)
        sc = self._storage_class(spec, sc_name, c.labels, suffix)
        sources = {
            ns: self._data_source(spec, ns, claim_name, access, revision, uri, suffix)
            for ns in c.readers
        }
        binding = self._revision_binding(spec, sc, sc_name, sources, claim_name, revision, suffix)
        old = replace(c, claim_name=claim_name)
        return {
            ns: self._provisioned_claim(old, ns, True, binding, [*access.by_namespace[ns].ready])
            for ns in c.readers
        }

    def _storage_class(
        self,
        spec: Spec[HyperdiskMlModelStoreArgs],
        name: str,
        labels: Mapping[str, str],
        suffix: str = "",
    ) -> k8s.storage.v1.StorageClass:
        a = spec.args
        zones = list(a.get("zones") or ())
        parameters = {
            "type": DISK_TYPE,
            "provisioned-throughput-on-create": f"{a['throughput_mibps']}Mi",
            # GCP labels on every disk the class provisions (key=value, comma separated).
            "labels": ",".join(f"{k}={val}" for k, val in self.labels(spec).items()),
        }
        extra: dict[str, Any] = {"volume_binding_mode": "WaitForFirstConsumer"}
        if zones:
            parameters["enable-multi-zone-provisioning"] = "true"
            extra = {
                "volume_binding_mode": "Immediate",
                "allowed_topologies": [
                    {"matchLabelExpressions": [{"key": ZONE_TOPOLOGY_KEY, "values": zones}]}
                ],
            }
        return k8s.storage.v1.StorageClass(
            f"{spec.common.name}-storage-class{suffix}",
            metadata={"name": name, "labels": dict(labels)},
            provisioner=PD_CSI_DRIVER,
            parameters=parameters,
            allow_volume_expansion=False,
            # The volume is a copy of the bucket: it goes with its claim (a new revision
            # would otherwise leave the old disks behind, billed).
            reclaim_policy="Delete",
            opts=pulumi.ResourceOptions(parent=self),
            **extra,
        )


def compute_class_resource(cluster: Any, labels: Mapping[str, str]) -> KubernetesObject:
    """The ComputeClass the populator's transfer Job runs on, named exactly as GKE asks."""
    return KubernetesObject(
        f"{cluster.scope_name}-{COMPUTE_CLASS_NAME}",
        {
            "apiVersion": COMPUTE_CLASS_API_VERSION,
            "kind": "ComputeClass",
            "metadata": {
                "name": COMPUTE_CLASS_NAME,
                "labels": {"app.kubernetes.io/managed-by": labels["app.kubernetes.io/managed-by"]},
            },
            "spec": {
                "priorities": [{"machineFamily": f} for f in COMPUTE_CLASS_MACHINE_FAMILIES],
                "nodePoolAutoCreation": {"enabled": True},
                "whenUnsatisfiable": COMPUTE_CLASS_WHEN_UNSATISFIABLE,
            },
        },
        opts=pulumi.ResourceOptions(parent=cluster),
    )


def _required(field: str) -> Callable[[str], None]:
    """A rule refusing ``field`` unset (it has no default)."""

    def required(store: str) -> None:
        raise ModelStoreInputError(store, field, None, "set (it has no default)")

    return required


def _beside_model(field: str) -> Callable[[str, Any], None]:
    """A rule refusing a deprecated field beside the ``model`` section that replaces it."""

    def beside_model(store: str, value: Any) -> None:
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"unset beside a model section ({MOVED_TO_MODEL[field]} is its new spelling)",
        )

    return beside_model


def _previous_without_model(store: str, previous: Any) -> None:
    raise ModelStoreInputError(
        store,
        "previous_revisions",
        previous,
        "unset without a gs:// model section (source_uri and model_revision hold one revision)",
    )


def _model_folder(store: str, field: str, source: str) -> tuple[str, str, str]:
    """A ``gs://`` source as the populator's folder URI (with its trailing '/'): (uri,
    bucket, path)."""
    uri = source.rstrip("/") + "/"
    found = source_uri_is_a_gcs_folder(store, uri, field)
    assert found is not None
    return uri, *found


def _model_rules(p: Parser, model: Mapping[str, Any]) -> None:
    """A ``gs://`` model: its folder, its revision as a name part (the claim, the data source
    and the StorageClass are named after it) and the revisions kept beside it."""
    source, revision = model.get("source"), model.get("revision")
    if not (isinstance(source, str) and source.startswith("gs://") and isinstance(revision, str)):
        return  # the section's own rules refuse it
    found = p.check(lambda: _model_folder(p.store, "model.source", source))
    include, namespace = model.get("include"), model.get("namespace")
    if include:
        p.check(lambda: _no_include(p.store, include))
    if namespace is not None and namespace in (p["readers"] or ()):
        p.check(lambda: _manifest_namespace_is_no_reader(p.store, namespace))
    if found is not None:
        p.derived["source_uri"], p.derived["bucket"], p.derived["path"] = found
    p.derived["revision"] = revision
    base = p["claim_name"]
    p.derived["claim_base"] = base
    if not p.check(lambda: _revision_is_a_label(p.store, revision)):
        return
    if base and p.ok("claim_name"):
        p.check(
            lambda: v.dns_label(
                p.store, "claim name (<claim_name>-<model.revision>)", f"{base}-{revision}"
            )
        )
        p.check(
            lambda: v.dns_subdomain(
                p.store,
                "StorageClass name (<store>-hdml-<model.revision>)",
                storage_class_name(p.store, revision),
            )
        )
    previous = p["previous_revisions"] or {}
    if p.ok("previous_revisions") and previous:
        keep = model.get("keep_revisions", MIN_KEEP_REVISIONS)
        p.derived["previous"] = (
            p.check(lambda: _previous_revisions(p.store, previous, revision, keep)) or {}
        )


def _no_include(store: str, include: Any) -> None:
    raise ModelStoreInputError(
        store,
        "model.include",
        list(include),
        "unset for Hyperdisk ML (the volume populator copies the whole gs:// folder to every "
        "disk: publish only the files to serve there)",
    )


def _manifest_namespace_is_no_reader(store: str, namespace: str) -> None:
    raise ModelStoreInputError(
        store,
        "model.namespace",
        namespace,
        "a namespace that is not also a reader of the store (the manifest Job, the one "
        "writer of the source bucket, runs there with its own account)",
    )


def _revision_is_a_label(store: str, revision: str) -> bool:
    """``model.revision`` names the claim, the data source and the StorageClass."""
    v.dns_label(store, "model.revision", revision)
    return True


def _previous_revisions(
    store: str, previous: Mapping[str, str], revision: str, keep: Any
) -> dict[str, str]:
    """Each kept revision: a DNS label, not the current one, from a gs:// folder; no more
    than ``keep_revisions`` - 1 (the current one counts). Returns revision -> folder URI."""
    field = "previous_revisions"
    kept: dict[str, str] = {}
    for old, source in previous.items():
        v.dns_label(store, f"{field} revision", old)
        if old == revision:
            raise ModelStoreInputError(
                store, f"{field} revision", old, "a revision other than model.revision"
            )
        if not isinstance(source, str) or not source.startswith("gs://"):
            raise ModelStoreInputError(
                store, f"{field}.{old}", source, "the gs://<bucket>/<path> it was populated from"
            )
        kept[old] = _model_folder(store, f"{field}.{old}", source)[0]
    if isinstance(keep, int) and len(kept) > keep - 1:
        raise ModelStoreInputError(
            store,
            field,
            sorted(kept),
            f"at most {keep - 1} revision(s) (model.keep_revisions {keep} counts the current "
            f"one): drop the oldest, its disks go",
        )
    return kept
