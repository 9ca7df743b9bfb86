"""The gcsfuse options the GCS FUSE store knows: which gcsfuse first has each, which GKE first
ships it, and the values gcsfuse takes. One table, read by the store's rules (values) and by its
preflight (versions).

Why versions matter: gcsfuse refuses a config file with a key it does not know
(GoogleCloudPlatform/gcsfuse ``cmd/root.go`` line 123, ``decoderConfig.ErrorUnused = true``,
"error while unmarshalling config") and a flag it does not know, so ONE option newer than the
cluster's gcsfuse fails every mount of the volume, not just that option.

Sources, each cited per row:
- GKE versions: GoogleCloudPlatform/gcs-fuse-csi-driver ``docs/releases.md`` (commit 5fcdc04,
  table "Requirements": feature -> GKE version requirements -> GCS FUSE version), lines 27
  (file cache, volume attributes), 29 (parallel download), 31 (metadata prefetch), 33 (kernel
  read ahead) and 37 (buffered read). Where a feature arrived on several GKE minors at once
  the table lists each minor's first patch (``1.29.6-gke.1254000, 1.30.2-gke.1394000``): a
  later minor has it from its first patch.
- gcsfuse versions, keys, types and ranges: GoogleCloudPlatform/gcsfuse ``cfg/params.yaml``
  (commit 7b39292) and ``cfg/validate.go`` for the ranges; the first release with a config key
  is the first tag whose ``internal/config/mount_config.go`` (up to v2.4) or ``cfg/params.yaml``
  declares it.
- ``read_ahead_kb`` is the CSI driver's, not gcsfuse's: the driver applies it to the FUSE
  mount's sysfs and refuses a value that is not a non-negative integer
  (gcs-fuse-csi-driver ``pkg/util/util.go`` lines 502-509).

Buffered reads: the driver's table gives gcsfuse v3.3.0+ for the feature; the config key
``read.enable-buffered-read`` first exists in v3.2.0 (its ``cfg/params.yaml``, line 762), which
is what decides whether a config naming it is refused.

A row's flag form (``--file-cache-max-size-mb=...``) is checked against the same versions as
its config key: gcsfuse added flags for config keys later (``cfg.BindFlags``), so the row's
versions are a lower bound for the flag.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .cluster import ships

# gcsfuse's ttl limit and stat cache limit (cfg/validate.go, isValidMetadataCache).
MAX_TTL_SECS = 9_223_372_036
MAX_STAT_CACHE_MB = 17_592_186_044_415

# GKE minimums, from gcs-fuse-csi-driver docs/releases.md (see the module docstring).
_FILE_CACHE_GKE = ("1.27.12-gke.1190000", "1.28.8-gke.1175000", "1.29.3-gke.1093000")  # line 27
_PARALLEL_GKE = ("1.29.6-gke.1254000", "1.30.2-gke.1394000")  # line 29
_PREFETCH_GKE = ("1.32.1-gke.1357001",)  # line 31
_READ_AHEAD_GKE = ("1.32.2-gke.1297001",)  # line 33
_BUFFERED_READ_GKE = ("1.34.0-gke.2011000",)  # line 37


@dataclass(frozen=True)
class GcsfuseOption:
    """One option: how it is written, what it takes, and since when it exists."""

    key: str
    """Config-file style ``section:key`` (how the store writes it), a driver mount option
    (``read_ahead_kb``) or a volume attribute (``gcsfuseMetadataPrefetchOnMount``)."""
    flag: str | None
    """The gcsfuse flag for the same setting (``key=value``), if any."""
    kind: str
    """``bool`` (true or false) or ``int``."""
    minimum: int | None
    maximum: int | None
    gcsfuse: str
    """The first gcsfuse release that has it."""
    gke: tuple[str, ...]
    """The first GKE version (per minor) that ships it."""
    source: str
    """Where its type and range are stated."""
    attribute: bool = False
    """A volume attribute of the driver's, not a mount option."""

    def allowed(self) -> str:
        """What the option takes, in words."""
        if self.kind == "bool":
            return "true or false"
        if self.maximum is not None:
            return f"an integer from {self.minimum} to {self.maximum}"
        return f"an integer of at least {self.minimum}"

    def needs(self) -> str:
        return f"GKE {', '.join(self.gke)} or later"


OPTIONS: tuple[GcsfuseOption, ...] = (
    GcsfuseOption(
        "file-cache:max-size-mb",
        "file-cache-max-size-mb",
        "int",
        -1,
        None,
        "v2.0.0",
        _FILE_CACHE_GKE,
        "cfg/params.yaml line 343; cfg/validate.go line 77 (-1 unlimited, 0 off)",
    ),
    GcsfuseOption(
        "file-cache:cache-file-for-range-read",
        "file-cache-cache-file-for-range-read",
        "bool",
        None,
        None,
        "v2.0.0",
        _FILE_CACHE_GKE,
        "cfg/params.yaml line 254",
    ),
    GcsfuseOption(
        "file-cache:enable-parallel-downloads",
        "file-cache-enable-parallel-downloads",
        "bool",
        None,
        None,
        "v2.3.0",
        _PARALLEL_GKE,
        "cfg/params.yaml line 298",
    ),
    GcsfuseOption(
        "file-cache:max-parallel-downloads",
        "file-cache-max-parallel-downloads",
        "int",
        -1,
        None,
        "v2.3.0",
        _PARALLEL_GKE,
        "cfg/params.yaml line 337; cfg/validate.go line 80",
    ),
    GcsfuseOption(
        "metadata-cache:ttl-secs",
        "metadata-cache-ttl-secs",
        "int",
        -1,
        MAX_TTL_SECS,
        "v2.0.0",
        _FILE_CACHE_GKE,
        "cfg/params.yaml line 1092; cfg/validate.go lines 160-165",
    ),
    GcsfuseOption(
        "metadata-cache:stat-cache-max-size-mb",
        "stat-cache-max-size-mb",
        "int",
        -1,
        MAX_STAT_CACHE_MB,
        "v2.0.0",
        _FILE_CACHE_GKE,
        "cfg/params.yaml line 1073; cfg/validate.go lines 184-190",
    ),
    GcsfuseOption(
        "metadata-cache:type-cache-max-size-mb",
        "type-cache-max-size-mb",
        "int",
        -1,
        None,
        "v2.0.0",
        _FILE_CACHE_GKE,
        "cfg/params.yaml line 1112; cfg/validate.go line 179",
    ),
    GcsfuseOption(
        "read:enable-buffered-read",
        "enable-buffered-read",
        "bool",
        None,
        None,
        "v3.2.0",
        _BUFFERED_READ_GKE,
        "cfg/params.yaml line 1225",
    ),
    GcsfuseOption(
        "read_ahead_kb",
        None,
        "int",
        0,
        None,
        "v2.10.0",
        _READ_AHEAD_GKE,
        "gcs-fuse-csi-driver pkg/util/util.go lines 502-509",
    ),
    GcsfuseOption(
        "gcsfuseMetadataPrefetchOnMount",
        None,
        "bool",
        None,
        None,
        "v2.8.0",
        _PREFETCH_GKE,
        "gcs-fuse-csi-driver pkg/webhook/sidecar_spec.go line 45",
        attribute=True,
    ),
)
# Volume attributes the tunings set that need no row: a driver older than the attribute
# ignores it (pkg/csi_driver/utils.go parseVolumeAttributes reads only the keys it knows), so
# it costs nothing there.
UNGATED_ATTRIBUTES = ("skipCSIBucketAccessCheck",)
_BY_NAME = {
    **{o.key: o for o in OPTIONS},
    **{o.flag: o for o in OPTIONS if o.flag is not None},
}
_BOOLS = ("true", "false")


def parse(option: str) -> tuple[str, str | None]:
    """A mount option's name and value: ``key=value`` and ``--key=value`` (a flag or a
    driver option), config-file style ``section:key:value``, or a bare ``key`` (value None)."""
    text = option.strip().removeprefix("--")
    if "=" in text or ":" not in text:
        name, _, value = text.partition("=")
        return name, value if "=" in text else None
    name, _, value = text.rpartition(":")
    return name, value


def known(option: str) -> tuple[GcsfuseOption, str | None] | None:
    """The table's row for a mount option (and the value given), or None for an option the
    table does not know (left to gcsfuse)."""
    name, value = parse(option)
    row = _BY_NAME.get(name)
    if row is None or row.attribute:
        return None
    return row, value


def value_error(row: GcsfuseOption, value: str | None) -> bool:
    """Whether gcsfuse (or the driver) refuses ``value`` for ``row``. A bare boolean flag
    means true."""
    if row.kind == "bool":
        return value is not None and value not in _BOOLS
    if value is None or not re.fullmatch(r"-?\d+", value.strip()):
        return True
    number = int(value)
    too_low = row.minimum is not None and number < row.minimum
    return too_low or (row.maximum is not None and number > row.maximum)


def attribute(name: str) -> GcsfuseOption | None:
    row = _BY_NAME.get(name)
    return row if row is not None and row.attribute else None


def missing(
    version: tuple[int, int, int, int] | None, rows: Iterable[GcsfuseOption]
) -> list[GcsfuseOption]:
    """The rows a GKE ``version`` does not ship (all of them when the version is unknown)."""
    return [r for r in rows if version is None or not ships(version, r.gke)]
