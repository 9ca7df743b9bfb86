"""AWS stores: FSx for Lustre, EFS and Mountpoint for S3 on EKS; EBS volumes and model caches."""

from ..extras import require

require("aws")  # one line naming the extra, not an ImportError from deep inside

from .cluster import EksCluster, EksClusterArgs
from .drivers import EBS_CSI, EFS_CSI, FSX_CSI, MOUNTPOINT_S3_CSI, SNAPSHOT_CONTROLLER
from .ebs import (
    EbsCsiDriver,
    EbsCsiDriverArgs,
    EbsModelCache,
    EbsModelCacheArgs,
    ebs_csi_driver_policy,
    ebs_storage_class,
    gp3_storage_class,
    io2_multi_attach_storage_class,
    multi_attach_claim,
)
from .efs import EfsModelStore, EfsModelStoreArgs
from .fsx import FsxLustreModelStore, FsxLustreModelStoreArgs
from .s3 import MountpointS3ModelStore, MountpointS3ModelStoreArgs

__all__ = [
    "EBS_CSI",
    "EFS_CSI",
    "FSX_CSI",
    "MOUNTPOINT_S3_CSI",
    "SNAPSHOT_CONTROLLER",
    "EbsCsiDriver",
    "EbsCsiDriverArgs",
    "EbsModelCache",
    "EbsModelCacheArgs",
    "EfsModelStore",
    "EfsModelStoreArgs",
    "EksCluster",
    "EksClusterArgs",
    "FsxLustreModelStore",
    "FsxLustreModelStoreArgs",
    "MountpointS3ModelStore",
    "MountpointS3ModelStoreArgs",
    "ebs_csi_driver_policy",
    "ebs_storage_class",
    "gp3_storage_class",
    "io2_multi_attach_storage_class",
    "multi_attach_claim",
]
