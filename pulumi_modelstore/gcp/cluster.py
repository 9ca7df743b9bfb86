"""What belongs to one GKE cluster, shared by the model stores on it: its facts from
``gcp.container.get_cluster`` (and the project number from ``gcp.organizations.get_project``),
looked up once, and the preflight checks that fail a preview instead of a pod mount.

FACTS (GCP, Cloud Storage FUSE and Hyperdisk ML): the GCS FUSE add-on is off by default on
Standard clusters (on for Autopilot); workload identity needs the pool ``<project>.svc.id.goog``
and node pools on ``GKE_METADATA``; ``get_cluster`` returns these as lists, and its
``location`` may be a zone while a bucket's location must be a region.
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Required, TypedDict

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
from pulumi.output import Unknown

from ..cluster import (
    CLUSTER_NAME_ALLOWED,
    ClusterScope,
    EntryRules,
    EntryValues,
    Opts,
    as_facts,
    lookup_failed,
    named_plainly,
    provider_of,
    require_feature,
)
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..validation import is_output
from . import validation as gcp_v

GKE_METADATA = "GKE_METADATA"
# A zone is its region plus "-<letter>" (us-central1-a); a region has no such suffix.
_ZONE = re.compile(r"([a-z]+-[a-z]+\d+)-[a-z]")
# A GKE version: 1.33.4-gke.1172000 (the build may be left out).
_GKE_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:-gke\.(\d+))?")


class GkeProjectArgs(TypedDict, total=False):
    """What a GKE cluster scope and the GCP stores joining it declare alike."""

    project: str
    """The cluster's project id. Default: the provider's project (``gcp:project``)."""


class GkeClusterArgs(GkeProjectArgs, total=False):
    """The GKE cluster a program makes itself and gives its stores as ``cluster``: its name and
    location are required (a cluster name is unique only within its location). A GCP store not
    given ``cluster`` names its cluster with the same fields (``GcpModelStoreArgs``); stores
    naming one cluster share one :class:`GkeCluster`."""

    cluster_name: Required[str]
    """The GKE cluster whose nodes mount the stores; its facts (project number, location,
    workload pool, add-ons, node pools, Autopilot) are looked up once before deploy. Required."""
    location: Required[str]
    """The cluster's location, a region (regional cluster) or a zone (zonal). Required."""


@dataclass(frozen=True)
class GkeClusterFacts:
    """What the GCP stores need to know of their cluster, checked before deploy."""

    name: str
    project: str
    project_number: str
    location: str
    region: str
    """The cluster's region: its location, or the region of its zone."""
    workload_pool: str | None
    gcs_fuse_csi: bool
    pd_csi: bool
    autopilot: bool
    node_pool_metadata_modes: dict[str, str]
    """Node pool name -> its workload metadata mode (empty on Autopilot: GKE manages it)."""
    master_version: str = ""
    """The control plane's GKE version (``1.35.1-gke.1234000``); empty when unknown."""

    def version_at_least(self, *minimum: int) -> bool:
        """Whether the control plane runs GKE ``minimum`` (e.g. 1, 35, 1) or later; an
        unknown version is not assumed to be recent."""
        version = self.version
        return version is not None and version >= minimum

    @property
    def version(self) -> tuple[int, int, int, int] | None:
        """The control plane's version as numbers (``1.33.4-gke.1172000`` -> (1, 33, 4,
        1172000)); None when unknown (not given, an Output, or not a GKE version)."""
        return gke_version(self.master_version)


def gke_version(text: object) -> tuple[int, int, int, int] | None:
    """``1.33.4-gke.1172000`` -> (1, 33, 4, 1172000); ``1.33.4`` -> (1, 33, 4, 0); anything
    else (an Output, empty, not a GKE version) -> None."""
    found = _GKE_VERSION.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        return None
    major, minor, patch, build = found.groups()
    return int(major), int(minor), int(patch), int(build or 0)


def ships(version: tuple[int, int, int, int], firsts: Sequence[str]) -> bool:
    """Whether GKE ``version`` has a feature that first shipped in ``firsts`` (one first
    version per GKE minor that got it at once; a later minor has it from its first patch)."""
    parsed = [v for v in (gke_version(f) for f in firsts) if v is not None]
    for first in parsed:
        if version[:2] == first[:2]:
            return version >= first
    return version[:2] > max(parsed)[:2]


def region_of(location: str) -> str:
    """``us-central1-a`` -> ``us-central1``; a region is its own region."""
    match = _ZONE.fullmatch(location)
    return match.group(1) if match else location


def _first(items: Any) -> Any:
    return items[0] if items else None


def _enabled(addons: Any, attribute: str) -> bool:
    config = _first(getattr(addons, attribute, None) or [])
    return bool(getattr(config, "enabled", False))


class GkeCluster(ClusterScope[GkeClusterFacts, GkeClusterArgs], kind="gke"):
    """What belongs to one GKE cluster, shared by the model stores on it: its facts (looked up
    once), namespaces, the PV and claim names in use. Stores make it on first use from
    ``cluster_name`` and ``location``; a program may make it itself and pass it as ``cluster``."""

    args_type = GkeClusterArgs
    cloud_provider_package = "gcp"
    entry = EntryRules(
        naming=("location", "project"),
        needed={
            "location": "the GKE cluster's region or zone (a cluster name is unique only "
            "within its location)"
        },
        store_fields={"cluster_name": "name", "location": "location", "project": "project"},
        facts_type=GkeClusterFacts,
        from_entry=frozenset({"name", "project", "location", "region"}),
        with_attributes=("project",),
    )

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.check(lambda: cluster_named(p.store, p["cluster_name"], p["location"]))
        p.field_rule(gcp_v.project_id, "project")

    @classmethod
    def check_named(cls, store: str, args: Mapping[str, Any]) -> None:
        cluster_named(store, args.get("cluster_name"), args.get("location"))

    @classmethod
    def entry_problems(
        cls,
        path: str,
        key: str,
        fields: Mapping[str, Any],
        attributes: Mapping[str, Any],
        sources: Mapping[str, str] | None = None,
        only: Collection[str] | None = None,
    ) -> list[ModelStoreInputError]:
        """What GCP would refuse in a ``gke`` entry of ``modelstore:clusters`` (``path``): its
        name (the key unless ``name`` is given), location and project, and the attributes that
        stand for a lookup: a project number, the project's workload pool, a GKE version, node
        metadata modes. ``sources`` names each value's key path (default: the entry's own
        fields and attributes); ``only`` checks just those names (values a stack output gave)."""
        problems: list[ModelStoreInputError] = []
        values = {**attributes, **fields}

        def where(name: str) -> str:
            if sources and name in sources:
                return sources[name]
            return f"{path}.{name}" if name in fields else f"{path}.attributes.{name}"

        def wanted(name: str) -> bool:
            return name in values and (only is None or name in only)

        def refuse(name: str, value: Any, allowed: str) -> None:
            problems.append(ModelStoreInputError(None, where(name), value, allowed))

        def check(rule: Any, name: str) -> bool:
            try:
                rule(None, where(name), values[name])
            except ModelStoreInputError as error:
                problems.extend(error.errors)
                return False
            return True

        if "name" in values:
            if only is None or "name" in only:
                check(gcp_v.cluster_name, "name")
        elif only is None and not (sources and "name" in sources):  # else a stack output names it
            try:
                gcp_v.cluster_name(None, path, key)  # the key names the cluster
            except ModelStoreInputError as error:
                problems.extend(error.errors)
        if wanted("location"):
            check(gcp_v.location, "location")
        project_ok = "project" in values and (
            not wanted("project") or check(gcp_v.project_id, "project")
        )
        if wanted("project_number") and not _PROJECT_NUMBER.fullmatch(values["project_number"]):
            refuse("project_number", values["project_number"], "a GCP project number")
        pool, project = values.get("workload_pool"), values.get("project")
        checks_pool = wanted("workload_pool") or (only is not None and wanted("project"))
        if checks_pool and pool is not None and project_ok and pool != f"{project}.svc.id.goog":
            refuse(
                "workload_pool",
                pool,
                f"the project's workload pool {project}.svc.id.goog (GKE's pool is always "
                "<project>.svc.id.goog), or null when workload identity is off",
            )
        if wanted("master_version") and gke_version(values["master_version"]) is None:
            refuse(
                "master_version",
                values["master_version"],
                "a GKE version such as 1.33.4-gke.1172000 (leave it out when unknown)",
            )
        if wanted("node_pool_metadata_modes"):
            for pool_name, mode in (values["node_pool_metadata_modes"] or {}).items():
                if mode not in METADATA_MODES:
                    problems.append(
                        ModelStoreInputError(
                            None,
                            f"{where('node_pool_metadata_modes')}.{pool_name}",
                            mode,
                            f"one of {', '.join(METADATA_MODES)}",
                        )
                    )
        return problems

    @classmethod
    def from_entry_values(
        cls, name: str, fields: EntryValues, attributes: EntryValues, opts: Opts, store: str
    ) -> "GkeCluster":
        args: GkeClusterArgs = {"cluster_name": name, "location": fields["location"]}
        if fields.get("project"):
            args["project"] = fields["project"]
        facts = None
        if attributes:
            facts = GkeClusterFacts(
                name=name,
                project=fields["project"],
                location=fields["location"],
                region=region_of(fields["location"]),
                **as_facts(attributes),
            )
        return cls(name, args, opts, store=store, facts=facts)

    @classmethod
    def from_cluster(
        cls,
        resource_name: str,
        cluster: gcp.container.Cluster,
        *,
        location: str,
        project: str | None = None,
        node_pools: Sequence[gcp.container.NodePool] = (),
        autopilot: bool = False,
        master_version: str = "",
        opts: pulumi.ResourceOptions | None = None,
    ) -> "GkeCluster":
        """The scope of a GKE cluster this program makes: nothing about the cluster is looked
        up (it does not exist before the first ``pulumi up``); its Kubernetes provider is made
        from the cluster's endpoint and CA certificate (``gke-gcloud-auth-plugin``), and every
        driver install, namespace and claim waits for ``node_pools``.

        ``location``: the region or zone the cluster is given (plain: a bucket's location is
        checked against its region before deploy). ``project``: default, the provider's (its
        number is looked up: the project exists). ``autopilot``: whether the cluster is an
        Autopilot one (the GCS FUSE sidecar's limits differ). ``master_version``: the GKE
        version the control plane runs (``1.33.4-gke.1172000``); default unknown, so options
        that need a newer GKE are refused. The preflight checks run on what the program
        declares for the cluster and its node pools (workload identity, the CSI add-ons, the
        GKE metadata server, Autopilot): a declaration that fails one fails the preview with
        the check's message; one not known before deploy is skipped with a warning."""
        if not isinstance(cluster, gcp.container.Cluster):
            raise ModelStoreInputError(
                resource_name,
                "cluster",
                cluster,
                "a gcp.container.Cluster made in this program (a cluster made elsewhere: "
                f"GkeCluster({resource_name!r}, {{'cluster_name': ..., 'location': ...}}))",
            )
        for field, value in (("location", location), ("project", project)):
            if value is not None and not isinstance(value, str):
                shown = "<Output>" if is_output(value) else value
                raise ModelStoreInputError(
                    resource_name,
                    field,
                    shown,
                    "a plain string, the one the cluster is given (known before deploy)",
                )
        gcp_v.location(resource_name, "location", location)
        invoke = pulumi.InvokeOptions(provider=provider_of(opts, "gcp")) if opts else None
        found = gcp.organizations.get_project(project_id=project, opts=invoke)
        project = project or str(found.project_id)
        kubernetes = provider_of(opts, "kubernetes")
        if kubernetes is None:
            kubernetes = k8s.Provider(
                f"{resource_name}-kubernetes",
                kubeconfig=gke_kubeconfig(cluster),
                opts=pulumi.ResourceOptions(
                    parent=opts.parent if opts is not None else None,
                    depends_on=list(node_pools),
                ),
            )
        facts = GkeClusterFacts(
            name=resource_name,
            project=project,
            project_number=str(found.number),
            location=location,
            region=region_of(location),
            workload_pool=f"{project}.svc.id.goog",
            gcs_fuse_csi=True,
            pd_csi=True,
            autopilot=autopilot,
            node_pool_metadata_modes={},
            master_version=master_version,
        )
        scope_opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(providers=[kubernetes])
        )
        args: GkeClusterArgs = {"cluster_name": resource_name, "location": location}
        scope = cls(resource_name, args, scope_opts, facts=facts)
        scope.created = CreatedGke(cluster, tuple(node_pools), autopilot)
        scope.node_groups = tuple(node_pools)
        return scope

    @property
    def name(self) -> Any:
        """The GKE cluster's name (an Output for a cluster this program makes)."""
        if self.created is not None:
            return self.created.cluster.name
        return str(self._given["cluster_name"])

    def facts(self, store: str, *needs: Callable[[str, GkeClusterFacts], None]) -> GkeClusterFacts:
        """As every scope's; on a cluster this program makes, each need is checked on what the
        program declares for the cluster (:class:`CreatedGke`), once per cluster."""
        facts = super().facts(store)
        created = self.created
        for need in needs:
            if created is None:
                need(store, facts)
            elif need not in self._checked:
                self._checked.add(need)
                created.check(self, store, need, facts)
        return facts

    def _look_up(self, store: str) -> GkeClusterFacts:
        o = self._invoke_opts
        try:
            cluster = gcp.container.get_cluster(
                name=self.name,
                location=self._given["location"],
                project=self._given.get("project"),
                opts=o,
            )
        except Exception as exc:  # the data source's own words say why (not found, denied)
            where = f"a GKE cluster in {self._given['location']}"
            raise lookup_failed(store, self.name, where, exc) from exc
        project = cluster.project or self._given.get("project") or ""
        number = self.lookup(
            ("project-number", project),
            lambda: gcp.organizations.get_project(project_id=project or None, opts=o).number,
        )
        addons = _first(cluster.addons_configs)
        identity = _first(cluster.workload_identity_configs)
        modes: dict[str, str] = {}
        for pool in cluster.node_pools or []:
            node_config = _first(getattr(pool, "node_configs", None) or [])
            metadata = _first(getattr(node_config, "workload_metadata_configs", None) or [])
            modes[str(pool.name)] = str(getattr(metadata, "mode", "") or "")
        location = cluster.location or self._given["location"]
        return GkeClusterFacts(
            name=self.name,
            project=project,
            project_number=str(number),
            location=location,
            region=region_of(location),
            workload_pool=getattr(identity, "workload_pool", None) or None,
            gcs_fuse_csi=_enabled(addons, "gcs_fuse_csi_driver_configs"),
            pd_csi=_enabled(addons, "gce_persistent_disk_csi_driver_configs"),
            autopilot=bool(cluster.enable_autopilot),
            node_pool_metadata_modes={} if cluster.enable_autopilot else modes,
            master_version=str(getattr(cluster, "master_version", "") or ""),
        )


_LOCATION_ALLOWED = (
    "the GKE cluster's region or zone, a plain string (a cluster name is unique only within its "
    "location)"
)


def cluster_named(store: str, cluster_name: Any, location: Any) -> None:
    """A GCP store names its cluster and the cluster's location (a cluster name is unique only
    within a location), or joins a scope given as ``cluster``. A name still an Output is a
    cluster this program makes: refused, naming :meth:`GkeCluster.from_cluster`."""
    if is_output(cluster_name):
        raise ModelStoreInputError(store, "cluster_name", "<Output>", CREATED_CLUSTER_NAME)
    named_plainly(store, "cluster_name", cluster_name, CLUSTER_NAME_ALLOWED.format("GKE"))
    named_plainly(store, "location", location, _LOCATION_ALLOWED)
    gcp_v.cluster_name(store, "cluster_name", cluster_name)
    gcp_v.location(store, "location", location)


CREATED_CLUSTER_NAME = (
    "the name of an existing GKE cluster, a plain string (it is looked up before deploy); for "
    "a cluster this program makes, give cluster=GkeCluster.from_cluster('<name>', <the "
    "cluster>, location=...)"
)
"""What ``cluster_name`` takes, said where an Output (a cluster this program makes) is given."""


# ---- preflight: one named check per fact a store depends on ----------------------------------


def require_workload_pool(store: str, facts: GkeClusterFacts) -> None:
    """Workload identity: without a pool no pod gets a Google identity, so no mount authorizes."""
    require_feature(
        store,
        facts.name,
        facts.workload_pool,
        f"a cluster with workload identity (workload pool {facts.project}.svc.id.goog; "
        "see gcp.cluster_settings)",
    )


def require_gcs_fuse_addon(store: str, facts: GkeClusterFacts) -> None:
    """The Cloud Storage FUSE CSI driver is a GKE add-on, off by default on Standard clusters."""
    require_feature(
        store,
        facts.name,
        facts.gcs_fuse_csi,
        "a cluster with the GCS FUSE CSI driver add-on enabled "
        "(addons_config.gcs_fuse_csi_driver_config.enabled; see gcp.cluster_settings)",
    )


def require_pd_csi_addon(store: str, facts: GkeClusterFacts) -> None:
    """Hyperdisk ML volumes come from the Compute Engine persistent disk CSI driver add-on."""
    require_feature(
        store,
        facts.name,
        facts.pd_csi,
        "a cluster with the Compute Engine persistent disk CSI driver add-on enabled "
        "(addons_config.gce_persistent_disk_csi_driver_config.enabled)",
    )


def require_gke_metadata(store: str, facts: GkeClusterFacts) -> None:
    """Pods on a node pool without the GKE metadata server get the node's identity, not
    their service account's: every workload-identity mount there is denied."""
    wrong = sorted(p for p, mode in facts.node_pool_metadata_modes.items() if mode != GKE_METADATA)
    if wrong:
        raise ModelStoreInputError(
            store,
            "cluster_name",
            facts.name,
            f"a cluster whose node pools run the GKE metadata server "
            f"(workload_metadata_config.mode {GKE_METADATA}; not on: {', '.join(wrong)})",
        )


def cluster_settings(project: str) -> dict[str, Any]:
    """What a platform stack merges into its own ``gcp.container.Cluster`` args for model
    stores: workload identity and the two CSI driver add-ons."""
    return {
        "workload_identity_config": {"workload_pool": f"{project}.svc.id.goog"},
        "addons_config": {
            "gcs_fuse_csi_driver_config": {"enabled": True},
            "gce_persistent_disk_csi_driver_config": {"enabled": True},
        },
    }


def node_pool_settings() -> dict[str, Any]:
    """What a platform stack merges into each ``gcp.container.NodePool``'s args: the GKE
    metadata server, so pods get their own service account's identity."""
    return {"node_config": {"workload_metadata_config": {"mode": GKE_METADATA}}}


# ---- a cluster given by its attributes (the config program's modelstore:clusters) -------------

# The node metadata modes the GKE API knows (container v1 WorkloadMetadataConfig.Mode, as
# pulumi-gcp's container WorkloadMetadataConfig.mode documents them).
METADATA_MODES = (GKE_METADATA, "GCE_METADATA", "MODE_UNSPECIFIED")
_PROJECT_NUMBER = re.compile(r"[1-9]\d*")


# ---- a cluster this program makes (GkeCluster.from_cluster) ---------------------------------


def _get(value: Any, key: str) -> Any:
    """``key`` of a declared block: a dict (as a preview gives inputs back) or an output type;
    None when absent, an Unknown when not known before deploy."""
    if value is None or isinstance(value, Unknown):
        return value
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


@dataclass(frozen=True)
class CreatedGke:
    """What :meth:`GkeCluster.from_cluster` knows of a cluster this program makes, and the
    preflight checks on what the program declares for it. A preview gives a created
    resource's declared inputs back as its outputs, so each check reads them there
    (``apply``): a declared value that fails fails the preview with the check's message; one
    not known before deploy is said in a warning."""

    cluster: gcp.container.Cluster
    node_pools: tuple[gcp.container.NodePool, ...]
    autopilot: bool

    def check(
        self, scope: "GkeCluster", store: str, need: Callable[..., None], facts: GkeClusterFacts
    ) -> None:
        c, name = self.cluster, scope.scope_name

        def warn(what: str) -> None:
            scope.warn_once(
                ("unknown", what),
                f"cluster {name!r} is made in this program and its {what} is not known before "
                "deploy: not checked",
            )

        def on(value: Any, what: str, check: Callable[[Any], None]) -> None:
            def run(known: Any) -> None:
                if not isinstance(known, Unknown):
                    check(known)
                elif what != "enable_autopilot" or self.autopilot:
                    # (A Standard cluster need not declare enable_autopilot: false.)
                    warn(what)

            pulumi.Output.from_input(value).apply(run, run_with_unknowns=True)

        def refuse(ok: bool, allowed: str) -> None:
            if not ok:
                raise ModelStoreInputError(store, "cluster", name, allowed)

        def addon(attribute: str, default_on: bool, allowed: str) -> Callable[[Any], None]:
            def check(addons: Any) -> None:
                enabled = _get(_get(addons, attribute), "enabled")
                if isinstance(enabled, Unknown):
                    return warn(f"addons_config.{attribute}")
                refuse(bool(enabled) if enabled is not None else default_on, allowed)

            return check

        on(
            c.enable_autopilot,
            "enable_autopilot",
            lambda declared: refuse(
                bool(declared) == self.autopilot,
                f"a cluster declared as from_cluster's autopilot={self.autopilot} says "
                f"(its enable_autopilot is {bool(declared)})",
            ),
        )
        pool = f"{facts.project}.svc.id.goog"
        if need is require_workload_pool:
            on(
                c.workload_identity_config,
                "workload_identity_config",
                lambda wi: refuse(
                    _get(wi, "workload_pool") == pool or self.autopilot,
                    f"a cluster with workload identity (workload_identity_config.workload_pool "
                    f"{pool}; see gcp.cluster_settings)",
                ),
            )
        elif need is require_gcs_fuse_addon:
            # Off by default on Standard clusters, on for Autopilot (FACTS, GCS FUSE).
            on(
                c.addons_config,
                "addons_config",
                addon(
                    "gcs_fuse_csi_driver_config",
                    self.autopilot,
                    "a cluster with the GCS FUSE CSI driver add-on enabled "
                    "(addons_config.gcs_fuse_csi_driver_config.enabled; see "
                    "gcp.cluster_settings)",
                ),
            )
        elif need is require_pd_csi_addon:
            # On by default on new clusters (GKE's Compute Engine persistent disk CSI driver).
            on(
                c.addons_config,
                "addons_config",
                addon(
                    "gce_persistent_disk_csi_driver_config",
                    True,
                    "a cluster with the Compute Engine persistent disk CSI driver add-on "
                    "enabled (addons_config.gce_persistent_disk_csi_driver_config.enabled)",
                ),
            )
        elif need is require_gke_metadata and not self.autopilot:
            for node_pool in self.node_pools:
                self._check_metadata(node_pool, on, refuse)

    @staticmethod
    def _check_metadata(
        node_pool: Any, on: Callable[..., None], refuse: Callable[..., None]
    ) -> None:
        # The node pool as the program names it (its GKE name may be made at deploy).
        pool_name = getattr(node_pool, "_name", "a node pool")

        def check(node_config: Any) -> None:
            mode = _get(_get(node_config, "workload_metadata_config"), "mode")
            refuse(
                mode in (None, GKE_METADATA),
                "a cluster whose node pools run the GKE metadata server "
                f"(workload_metadata_config.mode {GKE_METADATA}; not on: {pool_name})",
            )

        on(node_pool.node_config, f"node pool {pool_name}'s node_config", check)


def gke_kubeconfig(cluster: gcp.container.Cluster) -> pulumi.Output[str]:
    """A kubeconfig for ``cluster`` whose user gets a token from ``gke-gcloud-auth-plugin``,
    the credential plugin GKE documents for kubectl."""
    return pulumi.Output.all(
        cluster.name, cluster.endpoint, cluster.master_auth.cluster_ca_certificate
    ).apply(lambda v: _kubeconfig(v[0], v[1], v[2]))


def _kubeconfig(name: str, endpoint: str, certificate: str) -> str:
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gke-gcloud-auth-plugin",
            "provideClusterInfo": True,
        }
    }
    server = {"server": f"https://{endpoint}", "certificate-authority-data": certificate}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": server}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [{"name": name, "user": user}],
        }
    )
