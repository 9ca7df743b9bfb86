"""Azure stores on AKS: the cluster scope, Blob (blobfuse2) and Azure Files NFS stores."""

from ..extras import require

require("azure")  # one line naming the extra, not an ImportError from deep inside

from .cluster import AksCluster, AksClusterArgs, cluster_settings

__all__ = [
    "AksCluster",
    "AksClusterArgs",
    "cluster_settings",
]
