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

# FACTS.md values; each store's author checks them against the chart's Chart.yaml upstream.
EFS_CSI = CsiDriverChart(
    driver="efs.csi.aws.com",
    chart="aws-efs-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-efs-csi-driver/",
    version="4.4.1",
    app_version="3.4.1",
    eks_addon="aws-efs-csi-driver",
)

MOUNTPOINT_S3_CSI = CsiDriverChart(
    driver="s3.csi.aws.com",
    chart="aws-mountpoint-s3-csi-driver",
    repo="https://awslabs.github.io/mountpoint-s3-csi-driver",
    version="2.7.0",
    app_version="2.7.0",
    eks_addon="aws-mountpoint-s3-csi-driver",
)

EBS_CSI = CsiDriverChart(
    driver="ebs.csi.aws.com",
    chart="aws-ebs-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-ebs-csi-driver",
    version="2.64.0",
    app_version="1.64.0",
    eks_addon="aws-ebs-csi-driver",
)

# One per cluster: the VolumeSnapshot CRDs and the snapshot controller.
SNAPSHOT_CONTROLLER = CsiDriverChart(
    driver="snapshot.storage.k8s.io",
    chart="snapshot-controller",
    repo="https://piraeus.io/helm-charts/",
    version="5.2.0",
    app_version="v8.6.0",
    eks_addon="snapshot-controller",
)

DRIVER_INSTALLS = ("helm", "eks-addon", "none")
