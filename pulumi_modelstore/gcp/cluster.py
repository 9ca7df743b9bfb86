"""What belongs to one GKE cluster, shared by the model stores on it: its facts from
``gcp.container.get_cluster`` (and the project number from ``gcp.organizations.get_project``),
looked up once, and the preflight checks that fail a preview instead of a pod mount.

FACTS (GCP, Cloud Storage FUSE and Hyperdisk ML): the GCS FUSE add-on is off by default on
Standard clusters (on for Autopilot); workload identity needs the pool ``<project>.svc.id.goog``
and node pools on ``GKE_METADATA``; ``get_cluster`` returns these as lists, and its
``location`` may be a zone while a bucket's location must be a region.
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Required, TypedDict

import pulumi_gcp as gcp

from ..cluster import (
    CLUSTER_NAME_ALLOWED,
    ClusterScope,
    EntryRules,
    EntryValues,
    Opts,
    as_facts,
    lookup_failed,
    named_plainly,
    require_feature,
)
from ..errors import ModelStoreInputError
from ..fields import Parser
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

    @property
    def name(self) -> str:
        return str(self._given["cluster_name"])

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
    within a location), or joins a scope given as ``cluster``."""
    named_plainly(store, "cluster_name", cluster_name, CLUSTER_NAME_ALLOWED.format("GKE"))
    named_plainly(store, "location", location, _LOCATION_ALLOWED)
    gcp_v.cluster_name(store, "cluster_name", cluster_name)
    gcp_v.location(store, "location", location)


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
