"""Azure stores on AKS: the cluster scope, Blob (blobfuse2) and Azure Files NFS stores."""

from ..extras import require

require("azure")  # one line naming the extra, not an ImportError from deep inside

from .blob import AzureBlobModelStore, AzureBlobModelStoreArgs
from .cluster import AksCluster, AksClusterArgs, cluster_settings
from .files import AzureFilesNfsModelStore, AzureFilesNfsModelStoreArgs
from .velero import velero_storage as _velero_storage  # noqa: F401  (registers AKS in kube.velero)

__all__ = [
    "AksCluster",
    "AksClusterArgs",
    "AzureBlobModelStore",
    "AzureBlobModelStoreArgs",
    "AzureFilesNfsModelStore",
    "AzureFilesNfsModelStoreArgs",
    "cluster_settings",
]
