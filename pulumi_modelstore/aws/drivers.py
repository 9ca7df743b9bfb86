"""AWS CSI drivers: the one place their chart versions live, and how a component installs one
(a Helm release, the EKS add-on, or nothing): its fields, their validation and the add-on
resource. Helm releases go through ``kube/drivers.py``'s ``helm_release``; a store's install,
once per cluster, is ``AwsModelStore.install_driver``."""

# No `from __future__ import annotations`: the component analyzer reads DriverInstallArgs'
# annotations (every AWS store's args include them) as objects.
# Signatures naming a provider SDK class quote it: evaluated at import, it would load the SDK's
# lazily loaded modules (about half a second of every plan's start-up).

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import pulumi
import pulumi_aws as aws

from .. import validation as v
from ..errors import ModelStoreInputError
from ..kube.drivers import CsiDriverChart
from . import validation as aws_v
from .identity import ServiceAccountRole

# Checked against kubernetes-sigs/aws-fsx-csi-driver charts/aws-fsx-csi-driver/Chart.yaml.
FSX_CSI = CsiDriverChart(
    driver="fsx.csi.aws.com",
    chart="aws-fsx-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-fsx-csi-driver",
    version="1.17.0",
    app_version="1.9.0",
)

# Checked against kubernetes-sigs/aws-efs-csi-driver charts/aws-efs-csi-driver/Chart.yaml and the
# gh-pages Helm index (newest entry: chart 4.4.1, app 3.4.1; tags helm-chart-...-4.4.1, v3.4.1).
EFS_CSI = CsiDriverChart(
    driver="efs.csi.aws.com",
    chart="aws-efs-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-efs-csi-driver/",
    version="4.4.1",
    app_version="3.4.1",
)

# Checked against awslabs/mountpoint-s3-csi-driver: chart 2.7.0 is the newest in the Helm repo
# index (gh-pages index.yaml); its Chart.yaml has no appVersion, the driver image is v2.7.0.
MOUNTPOINT_S3_CSI = CsiDriverChart(
    driver="s3.csi.aws.com",
    chart="aws-mountpoint-s3-csi-driver",
    repo="https://awslabs.github.io/mountpoint-s3-csi-driver",
    version="2.7.0",
    app_version="2.7.0",
)

# Checked against kubernetes-sigs/aws-ebs-csi-driver charts/aws-ebs-csi-driver/Chart.yaml and the
# gh-pages Helm index (newest entry: chart 2.64.0, app 1.64.0; tags helm-chart-...-2.64.0, v1.64.0).
EBS_CSI = CsiDriverChart(
    driver="ebs.csi.aws.com",
    chart="aws-ebs-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-ebs-csi-driver",
    version="2.64.0",
    app_version="1.64.0",
)

# One per cluster: the VolumeSnapshot CRDs and the snapshot controller. Checked against
# piraeusdatastore/helm-charts charts/snapshot-controller/Chart.yaml and its gh-pages index (newest:
# 5.2.0, app v8.6.0); since chart 5.0 the CRDs are regular templates (values.installCRDs: true).
SNAPSHOT_CONTROLLER = CsiDriverChart(
    driver="snapshot.storage.k8s.io",
    chart="snapshot-controller",
    repo="https://piraeus.io/helm-charts/",
    version="5.2.0",
    app_version="v8.6.0",
)

# The EKS add-on that ships each driver (an AWS fact, so it lives here, not on the chart):
# `aws eks describe-addon-versions` lists them by these names.
EKS_ADDONS: Mapping[str, str] = {
    FSX_CSI.driver: "aws-fsx-csi-driver",
    EFS_CSI.driver: "aws-efs-csi-driver",
    MOUNTPOINT_S3_CSI.driver: "aws-mountpoint-s3-csi-driver",
    EBS_CSI.driver: "aws-ebs-csi-driver",
    SNAPSHOT_CONTROLLER.driver: "snapshot-controller",
}
"""CSI driver name (``CsiDriverChart.driver``) -> the EKS add-on that installs it."""

DRIVER_INSTALLS = ("helm", "eks-addon", "none")

ADDON_NAMESPACE = "kube-system"
"""Where every EKS add-on runs its driver and service accounts; also a Helm release's default."""


class DriverInstallArgs(TypedDict, total=False):
    """How a component gets its CSI driver on the cluster: the fields every AWS component that
    installs one takes. Each component's own notes on them are in its arguments' docstring."""

    driver_install: str
    """How the cluster gets the store's CSI driver, once per cluster whichever store asks
    first: ``helm`` (the chart pinned in ``aws/drivers.py``, its node pods tolerating all
    taints so GPU nodes get the driver), ``eks-addon`` (the driver's EKS add-on; needs
    ``cluster_name``), or ``none`` when the cluster already has the driver (installed outside
    this program). Stores on one cluster asking for different installs are refused. Default:
    ``helm``. (Formerly ``driver``, still accepted with a deprecation warning.)"""
    driver_namespace: str
    """Namespace of the Helm release (and of the driver's service accounts). Default:
    kube-system, the one namespace the EKS add-on installs in."""
    eks_addon_version: str
    """Add-on version for ``driver_install: eks-addon`` (``v<driver version>-eksbuild.<n>``).
    Default: the version EKS picks."""
    eks_addon_configuration: Mapping[str, Any]
    """Configuration values for ``driver_install: eks-addon``, as a mapping (the add-on gets it as
    JSON). Default: none (the add-on's own defaults; check ``aws eks
    describe-addon-configuration`` for its node tolerations)."""


DRIVER_INSTALL_FIELDS = tuple(DriverInstallArgs.__annotations__)
"""The fields :func:`parse_driver_install` reads, in their declared order."""


@dataclass(frozen=True)
class DriverInstall:
    """A validated :class:`DriverInstallArgs`, from :func:`parse_driver_install`."""

    driver: str
    """``helm``, ``eks-addon`` or ``none``."""
    namespace: str
    """Where the driver runs: the Helm release's namespace, kube-system for the add-on, the
    namespace given (default kube-system) for an existing driver."""
    eks_addon_version: str | None
    eks_addon_configuration: dict[str, Any] | None
    """None when not given or empty."""


def parse_driver_install(
    store: str,
    args: Mapping[str, Any],
    *,
    namespace_unset_for: Mapping[str, str] | None = None,
    check: Callable[[str, str], None] | None = None,
    check_cluster_name: bool = True,
) -> DriverInstall:
    """Validate the :class:`DriverInstallArgs` fields of ``args``; raises
    :class:`ModelStoreInputError` before any resource registers.

    The checks run in this order (the first failing one is the error a component reports):

    1. ``driver_install`` is ``helm``, ``eks-addon`` or ``none``;
    2. ``driver_namespace`` is not given when ``driver_install`` is a key of ``namespace_unset_for``
       (driver -> what the error says is allowed), for components whose driver namespace is
       fixed for that install;
    3. ``driver_namespace`` is a DNS-1123 label;
    4. ``check(driver, driver_namespace as given)``: the component's own fields that hinge on
       the install (its service accounts, its driver version), in their place in its order;
    5. ``eks_addon_version`` is an add-on version (``v1.2.3-eksbuild.1``);
    6. with ``check_cluster_name``, :func:`require_addon_cluster` (components whose cluster check
       covers more, or comes elsewhere in their order, pass False and make their own);
    7. ``eks_addon_configuration`` is a mapping.
    """
    # A deprecated spelling (``driver``) is renamed before this, and named back in the errors
    # by the parser (``Parser.written``).
    driver = args.get("driver_install") or "helm"
    v.one_of(store, "driver_install", driver, DRIVER_INSTALLS)
    unset = (namespace_unset_for or {}).get(driver)
    if unset is not None and "driver_namespace" in args:
        raise ModelStoreInputError(store, "driver_namespace", args["driver_namespace"], unset)
    namespace = args.get("driver_namespace", ADDON_NAMESPACE)
    v.dns_label(store, "driver_namespace", namespace)
    if check is not None:
        check(driver, namespace)
    aws_v.eks_addon_version(store, "eks_addon_version", args.get("eks_addon_version"))
    if check_cluster_name:
        require_addon_cluster(store, args, driver)
    configuration = args.get("eks_addon_configuration")
    if configuration is not None and not isinstance(configuration, Mapping):
        raise ModelStoreInputError(
            store, "eks_addon_configuration", configuration, "a mapping of add-on values"
        )
    return DriverInstall(
        driver=driver,
        namespace=ADDON_NAMESPACE if driver == "eks-addon" else namespace,
        eks_addon_version=args.get("eks_addon_version"),
        eks_addon_configuration=dict(configuration) if configuration else None,
    )


def describe_install(install: DriverInstall, chart: CsiDriverChart) -> str:
    """An install as a store asks for it, in words: two stores on one cluster must agree."""
    if install.driver == "eks-addon":
        version = install.eks_addon_version or "the version EKS picks"
        configuration = (
            f" with configuration {json.dumps(install.eks_addon_configuration, sort_keys=True)}"
            if install.eks_addon_configuration
            else ""
        )
        return f"eks-addon {EKS_ADDONS[chart.driver]} ({version}){configuration}"
    return f"helm chart {chart.chart} {chart.version} in {install.namespace}"


def require_addon_cluster(store: str, args: Mapping[str, Any], driver: str) -> None:
    """The EKS add-on is made on a cluster: ``driver_install: eks-addon`` needs ``cluster_name``."""
    if driver == "eks-addon" and not args.get("cluster_name"):
        raise ModelStoreInputError(
            store, "cluster_name", args.get("cluster_name"), "set when driver_install is eks-addon"
        )


def eks_addon(
    resource_name: str,
    chart: CsiDriverChart,
    *,
    cluster_name: pulumi.Input[str] | None,
    install: DriverInstall | None = None,
    defaults: Mapping[str, Any] | None = None,
    role: ServiceAccountRole | None = None,
    tags: Mapping[str, str],
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
    opts: pulumi.ResourceOptions | None = None,
) -> "aws.eks.Addon":
    """The EKS add-on of ``chart`` (:data:`EKS_ADDONS`) on ``cluster_name``, overwriting
    conflicting fields on create and update.

    ``install`` gives the add-on version and configuration asked for (None: EKS's defaults for
    both); the configuration is merged over ``defaults``, the component's own (nested mappings
    key by key), and sent as JSON with sorted keys. An IRSA ``role`` becomes the add-on's
    ``serviceAccountRoleArn``; a Pod Identity role reaches the service account through its
    association, so it is not passed. ``depends_on`` is whatever the add-on must wait for."""
    asked = install.eks_addon_configuration if install is not None else None
    configuration = _merge(defaults, asked or {}) if defaults else asked
    return aws.eks.Addon(
        resource_name,
        cluster_name=cluster_name,
        addon_name=EKS_ADDONS[chart.driver],
        addon_version=install.eks_addon_version if install is not None else None,
        configuration_values=json.dumps(configuration, sort_keys=True) if configuration else None,
        service_account_role_arn=(
            role.arn if role is not None and role.association is None else None
        ),
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="OVERWRITE",
        tags=tags,
        opts=pulumi.ResourceOptions.merge(
            pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)), opts
        ),
    )


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out
