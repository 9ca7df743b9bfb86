"""CSI driver installs by Helm. The pins live with each cloud (e.g. ``aws/drivers.py``); this
module only knows how to install a pinned chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class CsiDriverChart:
    """One CSI driver's pinned Helm chart and its Kubernetes driver name."""

    driver: str
    """The CSIDriver name PVs refer to, e.g. ``fsx.csi.aws.com``."""
    chart: str
    repo: str
    version: str
    app_version: str


def helm_release(
    resource_name: str,
    chart: CsiDriverChart,
    *,
    namespace: str,
    values: Mapping[str, Any],
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.helm.v3.Release:
    """A Helm release of ``chart`` at its pinned version. ``atomic`` rolls a failed upgrade
    back rather than leaving a half-updated driver on every node. ``opts`` adds options (an
    alias where the release moved)."""
    return k8s.helm.v3.Release(
        resource_name,
        name=chart.chart,
        chart=chart.chart,
        version=chart.version,
        namespace=namespace,
        repository_opts={"repo": chart.repo},
        values=dict(values),
        atomic=True,
        cleanup_on_fail=True,
        opts=pulumi.ResourceOptions.merge(
            pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)), opts
        ),
    )
