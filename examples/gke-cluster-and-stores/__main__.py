"""A platform stack that makes its GKE cluster and the model stores on it in one program.

The cluster does not exist before the first ``pulumi up``, so nothing about it is looked up:
``GkeCluster.from_cluster`` takes the cluster and its node pool as the program declares them.
The preflight checks (workload identity, the GCS FUSE and persistent disk CSI add-ons, the GKE
metadata server on the node pool) run on those declarations; the Kubernetes provider is made
from the cluster's endpoint and certificate, and every namespace and claim waits for the node
pool.
"""

import pulumi
import pulumi_gcp as gcp

from pulumi_modelstore.gcp import (
    GcsFuseModelStore,
    GkeCluster,
    HyperdiskMlModelStore,
    cluster_settings,
    node_pool_settings,
)

config = pulumi.Config()
project = pulumi.Config("gcp").require("project")
location = config.require("location")
# The least GKE version the control plane runs: the stores' GCS FUSE options need it known.
version = "1.34.1-gke.1829001"

# Workload identity and both CSI add-ons (gcp.cluster_settings): what the stores need.
cluster = gcp.container.Cluster(
    "ml-gke",
    location=location,
    min_master_version=version,
    remove_default_node_pool=True,
    initial_node_count=1,
    deletion_protection=True,
    **cluster_settings(project),
)
gpu_pool = gcp.container.NodePool(
    "ml-gke-gpu",
    cluster=cluster.name,
    location=location,
    autoscaling={"min_node_count": 1, "max_node_count": 4},
    node_config={
        "machine_type": "g2-standard-8",
        "guest_accelerators": [{"type": "nvidia-l4", "count": 1}],
        # The GKE metadata server (gcp.node_pool_settings): pods get their own identity.
        **node_pool_settings()["node_config"],
    },
)

# The cluster's scope, from the cluster itself: no lookup of a cluster that does not exist yet.
gke = GkeCluster.from_cluster(
    "ml-gke", cluster, location=location, node_pools=[gpu_pool], master_version=version
)

llama = GcsFuseModelStore(
    "llama",
    {
        "cluster": gke,
        "readers": ["inference"],
        "prefix": "llama-3-8b-instruct",
        "model": {
            "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
            "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
            "include": ["*.safetensors", "*.json", "tokenizer*"],
            "token_secret": {"name": "hf-token", "key": "token"},
        },
    },
)
embeddings = GcsFuseModelStore(
    "embeddings",
    {
        "cluster": gke,
        "readers": ["inference", "search"],
        "prefix": "bge-large-en-v1.5",
        "model": {
            "source": "hf://BAAI/bge-large-en-v1.5",
            "revision": "d4aa6901d3a41ba39fb536a557fa166f842b0e09",
            "include": ["*.safetensors", "*.json", "vocab.txt"],
        },
    },
)

pulumi.export("clusterName", cluster.name)
pulumi.export("claimNames", {"llama": llama.claim_names, "embeddings": embeddings.claim_names})
pulumi.export("bucketNames", {"llama": llama.bucket_name, "embeddings": embeddings.bucket_name})
_ = HyperdiskMlModelStore  # the other GKE store joins the same way ({"cluster": gke, ...})
