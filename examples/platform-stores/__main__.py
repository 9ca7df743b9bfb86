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
    # The chat model vLLM serves.
    "llama": GcsFuseModelStore(
        "llama",
        {
            "cluster": cluster,
            "readers": ["inference"],
            "writers": ["model-publisher"],
            "prefix": "llama-3-8b-instruct",
            "tuning": "serving",
            # Seeded once by the store's Job (llama-loader), verified in inference, mounted at
            # revisions/<revision>. Gated: the token is a Secret in the loader namespace.
            "model": {
                "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
                "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
                "include": ["*.safetensors", "*.json", "tokenizer*"],
                "token_secret": {"name": "hf-token", "key": "token"},
            },
            # Backed up although the model is pinned to a source: the writers may publish
            # models here that exist nowhere else (the default turns backups off with a model).
            "backup": {"enabled": True},
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
            # Public (no token). The commit is the one public projects pin (their Hugging Face
            # cache paths models--BAAI--bge-large-en-v1.5/snapshots/<commit> name it).
            "model": {
                "source": "hf://BAAI/bge-large-en-v1.5",
                "revision": "d4aa6901d3a41ba39fb536a557fa166f842b0e09",
                "include": ["*.safetensors", "*.json", "vocab.txt"],
            },
            # Backed up although the model is pinned to a source: the writers may publish
            # models here that exist nowhere else (the default turns backups off with a model).
            "backup": {"enabled": True},
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
