"""What every AWS store shares on the skeleton: the EKS cluster scope it joins, the driver
install through that scope, and AWS tags."""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pulumi

from ..kube.drivers import CsiDriverChart
from ..store import ModelStore, ModelStoreArgs, Spec
from .cluster import EksCluster, EksClusterArgs
from .drivers import DriverInstall, DriverInstallArgs, install_driver
from .identity import ServiceAccountRole
from .tags import cluster_tags, store_tags


class AwsModelStoreArgs(ModelStoreArgs, EksClusterArgs, DriverInstallArgs, total=False):
    """Fields every AWS store takes: the contract's, the cluster's, the driver install's."""

    tags: Mapping[str, str]
    """Tags merged onto every AWS resource of the store. Default: none besides ``Name`` and
    the store's own keys (``modelstore.pulumi.com/store``, ``app.kubernetes.io/managed-by``)."""


class AwsModelStore(ModelStore):
    """Base of the AWS stores: joins the :class:`EksCluster` its ``cluster_name`` (or
    ``cluster``) names, and installs its CSI driver once per cluster through it."""

    args_type = AwsModelStoreArgs
    renamed_fields = MappingProxyType({"driver": "driver_install"})

    @classmethod
    def scope_key(cls, args: Mapping[str, Any]) -> tuple[str, str]:
        return ("eks", EksCluster.name_for(args))

    def join(self, spec: Spec[Any], opts: pulumi.ResourceOptions | None) -> EksCluster:
        return EksCluster.join(spec.common.name, spec.args, opts)

    @staticmethod
    def tags(spec: Spec[Any]) -> dict[str, str]:
        return store_tags(spec.common.name, spec.args.get("tags") or {})

    def install_driver(
        self,
        spec: Spec[Any],
        cluster: EksCluster,
        install: DriverInstall,
        *,
        helm_values: Mapping[str, Any],
        old_name: str,
        chart: CsiDriverChart,
        role: ServiceAccountRole | None = None,
        addon_defaults: Mapping[str, Any] | None = None,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> pulumi.Resource | None:
        """The store's CSI driver, installed once per cluster (see ``drivers.install_driver``);
        ``old_name`` is the install's resource name when it lived under this store."""
        return install_driver(
            store=self,
            store_name=spec.common.name,
            cluster=cluster,
            cluster_name=cluster.name,
            chart=chart,
            install=install,
            helm_values=helm_values,
            old_name=old_name,
            role=role,
            addon_defaults=addon_defaults,
            tags=cluster_tags(spec.args.get("tags") or {}),
            depends_on=depends_on,
        )
