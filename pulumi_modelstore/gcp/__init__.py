"""GCP stores on GKE: the cluster scope, Cloud Storage FUSE and Hyperdisk ML stores."""

from ..extras import require

require("gcp")  # one line naming the extra, not an ImportError from deep inside

from .cluster import GkeCluster, GkeClusterArgs, cluster_settings, node_pool_settings
from .gcsfuse import GcsFuseModelStore, GcsFuseModelStoreArgs
from .hyperdisk import HyperdiskMlModelStore, HyperdiskMlModelStoreArgs
from .velero import gke_velero as _gke_velero  # noqa: F401  (registers GKE in kube.velero.STORAGE)

__all__ = [
    "GcsFuseModelStore",
    "GcsFuseModelStoreArgs",
    "GkeCluster",
    "GkeClusterArgs",
    "HyperdiskMlModelStore",
    "HyperdiskMlModelStoreArgs",
    "cluster_settings",
    "node_pool_settings",
]
