"""The platform stack: the model stores of one GKE cluster, made next to it, and the stack
outputs application stacks read to run pods on them.

The cluster scope is made once (here the cluster is taken by name: its facts are looked up and
checked before anything deploys) and both stores join it. Each store exports, per consumer
namespace, everything a pod there needs (``mounts``: ``WorkloadMount.to_output()``), its claim
names and the service account its pods run as. An application stack (examples/app-vllm) reads
them with ``pulumi.StackReference("acme/model-platform/dev")`` and rebuilds the mount with
``WorkloadMount.from_output``: its pods are wired exactly as ``store.mount_for(namespace)``
would wire them here, without importing any cloud SDK or knowing the bucket.
"""

import pulumi

from pulumi_modelstore.gcp import GcsFuseModelStore, GkeCluster

config = pulumi.Config()

cluster = GkeCluster(
    "ml-gke",
    {"cluster_name": config.require("clusterName"), "location": config.require("location")},
)

labels = {"team": "ml-platform", "env": "dev"}
stores = {
    # The chat model vLLM serves; published once from the model-publisher namespace.
    "llama": GcsFuseModelStore(
        "llama",
        {
            "cluster": cluster,
            "readers": ["inference"],
            "writers": ["model-publisher"],
            "prefix": "llama-3-8b-instruct",
            "tuning": "serving",
            "resource_labels": labels,
        },
    ),
    # An embedding model read by the serving and the search namespaces.
    "embeddings": GcsFuseModelStore(
        "embeddings",
        {
            "cluster": cluster,
            "readers": ["inference", "search"],
            "writers": ["model-publisher"],
            "prefix": "bge-large-en-v1.5",
            "tuning": "serving",
            "resource_labels": labels,
        },
    ),
}

pulumi.export("clusterName", cluster.name)
# What application stacks read, per store: the backend (a network file system or a disk decides
# how a server loads weights), the claim and the pod wiring per consumer namespace.
pulumi.export(
    "stores",
    {
        name: {
            "backend": store.backend_name,
            "claimNames": store.claim_names,
            "serviceAccountName": store.service_account_name,
            "mounts": store.mounts,
            "bucketName": store.bucket_name,
        }
        for name, store in stores.items()
    },
)
