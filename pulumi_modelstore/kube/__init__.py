"""The Kubernetes pieces every store shares: static PV/PVC binding, driver installs, workload
mounts."""

from .drivers import CsiDriverChart, helm_release
from .snapshots import (
    cloned_claim,
    restored_claim,
    volume_claim,
    volume_snapshot,
    volume_snapshot_class,
)
from .volumes import static_volume
from .workload import WorkloadMount

__all__ = [
    "CsiDriverChart",
    "WorkloadMount",
    "cloned_claim",
    "helm_release",
    "restored_claim",
    "static_volume",
    "volume_claim",
    "volume_snapshot",
    "volume_snapshot_class",
]
