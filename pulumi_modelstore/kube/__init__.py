"""The Kubernetes pieces every store shares: static PV/PVC binding, driver installs, workload
mounts."""

from .drivers import CsiDriverChart, helm_release
from .volumes import static_volume
from .workload import WorkloadMount

__all__ = ["CsiDriverChart", "WorkloadMount", "helm_release", "static_volume"]
