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

# Checked against kubernetes-sigs/aws-efs-csi-driver charts/aws-efs-csi-driver/Chart.yaml and the
# gh-pages Helm index (newest entry: chart 4.4.1, app 3.4.1; tags helm-chart-...-4.4.1, v3.4.1).
EFS_CSI = CsiDriverChart(
    driver="efs.csi.aws.com",
    chart="aws-efs-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-efs-csi-driver/",
    version="4.4.1",
    app_version="3.4.1",
    eks_addon="aws-efs-csi-driver",
)

# Checked against awslabs/mountpoint-s3-csi-driver: chart 2.7.0 is the newest in the Helm repo
# index (gh-pages index.yaml); its Chart.yaml has no appVersion, the driver image is v2.7.0.
MOUNTPOINT_S3_CSI = CsiDriverChart(
    driver="s3.csi.aws.com",
    chart="aws-mountpoint-s3-csi-driver",
    repo="https://awslabs.github.io/mountpoint-s3-csi-driver",
    version="2.7.0",
    app_version="2.7.0",
    eks_addon="aws-mountpoint-s3-csi-driver",
)

# Checked against kubernetes-sigs/aws-ebs-csi-driver charts/aws-ebs-csi-driver/Chart.yaml and the
# gh-pages Helm index (newest entry: chart 2.64.0, app 1.64.0; tags helm-chart-...-2.64.0, v1.64.0).
EBS_CSI = CsiDriverChart(
    driver="ebs.csi.aws.com",
    chart="aws-ebs-csi-driver",
    repo="https://kubernetes-sigs.github.io/aws-ebs-csi-driver",
    version="2.64.0",
    app_version="1.64.0",
    eks_addon="aws-ebs-csi-driver",
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
    eks_addon="snapshot-controller",
)

DRIVER_INSTALLS = ("helm", "eks-addon", "none")
