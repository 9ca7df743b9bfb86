"""pulumi-modelstore: one shared, read-mostly model store per model on Kubernetes.

Backends live in their own rooms: :mod:`pulumi_modelstore.aws`, :mod:`pulumi_modelstore.nfs`,
:mod:`pulumi_modelstore.local`.
The contract they share is :class:`ModelStore` and :class:`WorkloadMount`.
"""

from .cluster import ClusterScope, KubernetesCluster, KubernetesClusterArgs
from .errors import ModelStoreInputError
from .kube.workload import WorkloadMount
from .store import ModelStore, ModelStoreArgs, validate_all

__all__ = [
    "ClusterScope",
    "KubernetesCluster",
    "KubernetesClusterArgs",
    "ModelStore",
    "ModelStoreArgs",
    "ModelStoreInputError",
    "WorkloadMount",
    "validate_all",
]
