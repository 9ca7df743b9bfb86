"""Velero on a cluster: the ``velero`` entry of a ``modelstore:clusters`` cluster, the pinned
Velero chart and the per-store ``Schedule`` (velero.io/v1).

What Velero backs up here is the Kubernetes side of each store: its claims, PVs, service
accounts, the programs' ConfigMaps, the digest record's Role and its ConfigMap (the seed
labels it, ``model/record.py``), the model token's Secret and Jobs in the store's consumer
namespaces, selected by the store's label. The data behind the PVs is the backend's to back up
(the store's ``backup`` section), so Velero takes no volume snapshots and runs no node agent: a
restore recreates the objects, which bind to the same storage again. That is also why each
cloud's grant is object storage only.

A restore skips completed Jobs and finished pods (vmware-tanzu/velero at d30d389b,
``pkg/restore/restore.go`` lines 1166-1174 and ``isCompleted``, lines 2151-2177: a Job with
``status.completionTime``, which Kubernetes sets only on success, ``batch/v1`` ``JobStatus``);
a Job that had not succeeded is restored without its controller-uid selector
(``pkg/restore/actions/job_action.go`` lines 55-59) and runs again, so what its pod mounts must
be in the backup too. ``pulumi refresh`` then ``pulumi up`` after a restore recreate the
skipped Jobs (docs/data-protection.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ..backup import CRON_ALLOWED, DEFAULT_SCHEDULE, cron_problem
from ..errors import ModelStoreInputError
from ..fields import python_keys
from ..model import names
from .drivers import CsiDriverChart, helm_release

VELERO_CHART = CsiDriverChart(
    driver="velero.io",
    chart="velero",
    repo="https://vmware-tanzu.github.io/helm-charts",
    version="12.1.0",
    app_version="1.18.1",
)
"""vmware-tanzu/helm-charts ``charts/velero/Chart.yaml`` at tag ``velero-12.1.0``
(appVersion 1.18.1); ``driver`` is the CRDs' API group (Velero is no CSI driver)."""
PLUGIN_VERSION = "v1.14.0"
"""The provider plugins' release for Velero 1.18.x: the compatibility table of each plugin's
README (vmware-tanzu/velero-plugin-for-aws branch release-1.14, ``README.md`` "Compatibility":
plugin v1.14.x with Velero v1.18.x; the same row in the gcp and microsoft-azure plugins)."""
NAMESPACE = "velero"
SERVICE_ACCOUNT = "velero-server"
"""The chart's server ServiceAccount for release ``velero`` (``velero.serverServiceAccount`` in
``templates/_helpers.tpl``: ``<fullname>-server``)."""
STORAGE_LOCATION = "default"
DEFAULT_RETENTION_DAYS = 30
"""Velero's own default backup TTL (720h: ``defaultBackupTTL`` in vmware-tanzu/velero
``pkg/cmd/server/config/config.go``)."""
MAX_RETENTION_DAYS = 106751
"""A Schedule's ``ttl`` is a Go ``time.Duration`` (int64 nanoseconds), at most
2562047h47m16s: 106751 whole days."""


class VeleroArgs(TypedDict, total=False):
    """A cluster entry's ``velero`` in stack config (``modelstore:clusters.<key>.velero``), each
    key in either spelling (``retention_days`` or ``retentionDays``):
    Velero installed once on the cluster, its bucket and identity made by the cluster's cloud,
    and a Schedule for each store whose ``backup`` is enabled."""

    enabled: bool
    """Install Velero on the cluster. Default: ``true`` once the entry is given (``velero: {}``);
    ``false`` keeps the entry and installs nothing. Refused on a plain kubernetes cluster."""
    bucket: str
    """The bucket (S3, Cloud Storage) or container (Azure Blob) Velero keeps backups in, made by
    the library: 3 to 63 lowercase letters, digits and single hyphens, and a name the cloud
    takes (S3 refuses the prefixes ``xn--``, ``sthree-``, ``amzn-s3-demo-`` and suffixes such as
    ``-s3alias``; Cloud Storage a name starting with ``goog`` or containing ``google``).
    Default: named by Pulumi from the cluster key (Azure: a container ``velero``)."""
    schedule: str
    """When each store's Schedule runs: a five-field numeric cron expression in UTC, as
    Velero's parser takes it (day-of-week 0-6, Sunday 0; 7 is refused). Default:
    ``0 3 * * *``."""
    retention_days: int
    """How long each backup is kept (the Schedule's ``ttl``), 1 to 106751 days. Default: ``30``
    (Velero's own default TTL)."""


FIELDS = tuple(VeleroArgs.__annotations__)
KINDS = ("eks", "gke", "aks")
"""The cluster kinds whose bucket and identity the library makes for Velero (a scope's
``velero_storage``): every cloud's; a plain kubernetes cluster has no cloud identity."""
_BUCKET = re.compile(r"^[a-z0-9](?:[a-z0-9]|-(?!-)){1,61}[a-z0-9]$")
BUCKET_ALLOWED = (
    "3 to 63 lowercase letters, digits and single hyphens, starting and ending with a letter "
    "or digit (a name S3, GCS and Azure Blob containers all take)"
)
BUCKET_RULES: Mapping[str, tuple[Callable[[Any], bool], str]] = {
    "eks": (names.is_s3_bucket_name, names.S3_BUCKET_RULE),
    "gke": (names.is_gcs_bucket_name, names.GCS_BUCKET_RULE),
    "aks": (names.is_azure_container_name, names.AZURE_CONTAINER_RULE),
}
"""Beyond :data:`BUCKET_ALLOWED`, the rule of the cloud whose bucket (or container) the library
makes for Velero on a cluster of each kind (``model/names.py``: S3's reserved prefixes and
suffixes, Cloud Storage's ``goog`` and ``google``)."""


def kind_refusal(kind: str) -> str:
    """Why ``velero.enabled`` is refused on a cluster of ``kind`` (one not in :data:`KINDS`:
    a plain kubernetes cluster)."""
    return (
        f"false on a {kind} cluster: the library makes Velero's bucket and grants it a "
        f"cloud workload identity, and a {kind} cluster has no cloud identity to grant "
        "(install Velero there with its own object store credentials)"
    )


@dataclass(frozen=True)
class VeleroSettings:
    """A checked ``velero`` entry of a cluster."""

    enabled: bool
    bucket: str | None
    """The bucket's (GCS, S3) or container's (Azure) name; None: named by Pulumi from the
    cluster key (a container: ``velero``)."""
    schedule: str
    retention_days: int

    @property
    def ttl(self) -> str:
        """The Schedule's ``ttl`` (a Go duration)."""
        return f"{self.retention_days * 24}h0m0s"


def parse_velero(
    path: str, kind: str, raw: Any
) -> tuple[VeleroSettings | None, list[ModelStoreInputError]]:
    """Check a cluster entry's ``velero`` (at ``path``, e.g. ``modelstore:clusters.prod.velero``)
    for a cluster of ``kind``. Defaults: enabled ``true`` once the entry is given, schedule
    ``0 3 * * *`` (daily at 03:00 UTC), ``retention_days`` 30 (Velero's own default TTL)."""
    if raw is None:
        return None, []

    def error(field: str, value: Any, allowed: str) -> ModelStoreInputError:
        return ModelStoreInputError(None, f"{path}.{field}" if field else path, value, allowed)

    if not isinstance(raw, Mapping):
        return None, [error("", raw, f"a mapping with {', '.join(FIELDS)}")]
    # Either spelling of a field, as every section of a stack's config takes them.
    raw, both = python_keys(VeleroArgs, raw, path)
    errors = [ModelStoreInputError(None, where, value, allowed) for where, value, allowed in both]
    for name in raw:
        if name not in FIELDS:
            errors.append(error(str(name), name, f"a field of velero: one of {', '.join(FIELDS)}"))
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        errors.append(error("enabled", enabled, "true or false"))
    bucket = raw.get("bucket")
    if bucket is not None and (not isinstance(bucket, str) or not _BUCKET.match(bucket)):
        errors.append(error("bucket", bucket, BUCKET_ALLOWED))
    elif bucket is not None and kind in BUCKET_RULES and not BUCKET_RULES[kind][0](bucket):
        errors.append(error("bucket", bucket, BUCKET_RULES[kind][1]))
    schedule = raw.get("schedule", DEFAULT_SCHEDULE)
    if not isinstance(schedule, str) or cron_problem(schedule) is not None:
        errors.append(error("schedule", schedule, CRON_ALLOWED))
    retention = raw.get("retention_days", DEFAULT_RETENTION_DAYS)
    if not isinstance(retention, int) or isinstance(retention, bool):
        errors.append(error("retention_days", retention, "a whole number of days"))
    elif not 1 <= retention <= MAX_RETENTION_DAYS:
        errors.append(
            error(
                "retention_days",
                retention,
                f"1 to {MAX_RETENTION_DAYS} days (a Velero ttl is a Go duration; 0 would mean "
                "Velero's 30-day default)",
            )
        )
    if enabled is True and kind not in KINDS:
        errors.append(error("enabled", enabled, kind_refusal(kind)))
    if errors:
        return None, errors
    return VeleroSettings(bool(enabled), bucket, schedule, retention), []


@dataclass(frozen=True)
class VeleroStorage:
    """Where a cluster's Velero keeps its backups and how it reaches them (each cloud's)."""

    provider: str
    """The BackupStorageLocation's provider (``aws``, ``gcp``, ``azure``)."""
    plugin: str
    """The provider plugin's image name, e.g. ``velero/velero-plugin-for-aws``."""
    bucket: Any
    config: Mapping[str, Any]
    """The BackupStorageLocation's ``config`` (the plugin's keys)."""
    service_account_annotations: Mapping[str, Any]
    ready: Sequence[pulumi.Resource]
    """What the server waits for: its grant."""
    pod_labels: Mapping[str, str] | None = None
    """Labels the server pod needs (Azure workload identity's ``azure.workload.identity/use``)."""


STORAGE: dict[str, Callable[[Any, VeleroSettings, str], VeleroStorage]] = {}
"""Cluster kind -> what makes Velero's storage for a scope of that kind (``scope``, settings,
the first store's name), filled by the cloud rooms that offer it (``gcp.velero``,
``azure.velero``)."""
PREFLIGHT: dict[str, Callable[[Any, str, str], None]] = {}
"""Cluster kind -> the checks Velero's storage needs of a scope of that kind (``scope``, the
first store's name, the entry's ``velero`` path), run before anything registers; filled by
the cloud rooms whose checks are not their stores' own (``azure.velero``)."""


def preflight(scope: Any, settings: VeleroSettings | None, store: str, path: str) -> None:
    """Refuse an enabled ``velero`` entry (at ``path``) on a cluster without what its storage
    needs, before ``store``, the cluster's first, registers anything."""
    check = PREFLIGHT.get(type(scope).kind)
    if settings is not None and settings.enabled and check is not None:
        check(scope, store, path)


def chart_values(storage: VeleroStorage) -> dict[str, Any]:
    """The chart's values: one default storage location, the provider plugin as an init
    container, the cloud identity on the server's ServiceAccount (no credentials Secret),
    no volume snapshots and no node agent (see the module docstring)."""
    plugin = storage.plugin.rsplit("/", 1)[-1]
    values: dict[str, Any] = {
        "configuration": {
            "backupStorageLocation": [
                {
                    "name": STORAGE_LOCATION,
                    "provider": storage.provider,
                    "bucket": storage.bucket,
                    "default": True,
                    "config": dict(storage.config),
                }
            ],
        },
        "initContainers": [
            {
                "name": plugin,
                "image": f"{storage.plugin}:{PLUGIN_VERSION}",
                "volumeMounts": [{"mountPath": "/target", "name": "plugins"}],
            }
        ],
        "credentials": {"useSecret": False},
        "snapshotsEnabled": False,
        "serviceAccount": {
            "server": {"annotations": dict(storage.service_account_annotations)},
        },
    }
    if storage.pod_labels:
        values["podLabels"] = dict(storage.pod_labels)
    return values


def install(
    resource_name: str,
    storage: VeleroStorage,
    *,
    parent: pulumi.Resource,
    namespace: pulumi.Resource,
) -> k8s.helm.v3.Release:
    """The Velero release of a cluster, after its namespace and its storage grant."""
    return helm_release(
        resource_name,
        VELERO_CHART,
        namespace=NAMESPACE,
        values=chart_values(storage),
        parent=parent,
        # order: velero-after-its-storage
        depends_on=[namespace, *storage.ready],
    )


def schedule_name(store: str) -> str:
    """The Schedule of ``store`` (what ``velero restore create --from-schedule`` names)."""
    return f"modelstore-{store}"


def schedule_spec(
    store: str, namespaces: Sequence[str], settings: VeleroSettings, label: str
) -> dict[str, Any]:
    """A Schedule's spec: the store's consumer namespaces, only objects carrying the store's
    label ``label`` (its claims, PVs, service accounts, Jobs), cluster-scoped ones too (its
    PVs), no volume data (the backend backs that up)."""
    return {
        "schedule": settings.schedule,
        "template": {
            "includedNamespaces": sorted(set(namespaces)),
            "includeClusterResources": True,
            "labelSelector": {"matchLabels": {label: store}},
            "snapshotVolumes": False,
            "defaultVolumesToFsBackup": False,
            "storageLocation": STORAGE_LOCATION,
            "ttl": settings.ttl,
        },
    }


def schedule(
    store: str,
    namespaces: Sequence[str],
    settings: VeleroSettings,
    label: str,
    *,
    parent: pulumi.Resource,
    release: pulumi.Resource | None,
) -> k8s.apiextensions.CustomResource:
    """The store's Velero ``Schedule`` in Velero's namespace, after the release (its CRD)."""
    return k8s.apiextensions.CustomResource(
        f"{store}-velero-schedule",
        api_version="velero.io/v1",
        kind="Schedule",
        metadata={
            "name": schedule_name(store),
            "namespace": NAMESPACE,
            "labels": {label: store, "app.kubernetes.io/managed-by": "pulumi-modelstore"},
        },
        spec=schedule_spec(store, namespaces, settings, label),
        # order: schedule-after-velero
        opts=pulumi.ResourceOptions(
            parent=parent, depends_on=[release] if release is not None else []
        ),
    )
