"""AWS CSI driver pins: the one place their chart versions live."""

from __future__ import annotations

from ..kube.drivers import CsiDriverChart

# Checked against kubernetes-sigs/aws-fsx-csi-driver charts/aws-fsx-csi-driver/Chart.yaml.
FSX_CSI = CsiDriverChart(
    driver="fsx.csi.aws.com",
    chart="aws-fsx-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-fsx-csi-driver",
    version="1.17.0",
    app_version="1.9.0",
    eks_addon="aws-fsx-csi-driver",
)

DRIVER_INSTALLS = ("helm", "eks-addon", "none")
