"""A vLLM Deployment on AKS serving a model straight from Azure Blob storage through the blob
CSI driver (blobfuse2).

The store makes a hardened storage account and a private container in the cluster's region; a
publisher namespace writes the model, and every vLLM replica mounts the container read-only
with an explicitly sized block cache. Readers and writers run as separate user-assigned
identities through workload identity: the readers' identity holds Storage Blob Data Reader on
the container alone, so readers cannot write, even in Azure RBAC. ``mount_for`` gives the pod
everything: the volume, the service account and the ``azure.workload.identity/use`` label.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.azure import AzureBlobModelStore

config = pulumi.Config()

store = AzureBlobModelStore(
    "llama",
    {
        "cluster_name": config.require("clusterName"),
        "cluster_resource_group_name": config.require("clusterResourceGroupName"),
        "readers": ["inference"],
        "writers": ["model-publisher"],
        # The model, seeded once by the store's Job in its loader namespace (llama-loader),
        # verified in every reader namespace and mounted by readers at revisions/<revision>:
        # serving_args below serves that pinned revision. The gated model needs a Hugging Face
        # token: a Secret in the loader namespace, never a value here.
        "model": {
            "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
            "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
            "include": ["*.safetensors", "*.json", "tokenizer*"],
            "token_secret": {"name": "hf-token", "key": "token"},
        },
        # Backed up although the model is pinned to a source: the writers may publish models
        # here that exist nowhere else (the default turns backups off with a model).
        "backup": {"enabled": True},
        "container_name": "llama-3-8b-instruct",
        # blobfuse2 runs on the node outside the pod's limits: one pool per replica's mount.
        "block_cache_pool_size_mib": 8192,
    },
)

mount = store.mount_for("inference")
labels = {"app": "vllm-llama"}
pod_spec = mount.patch_pod_spec(
    {
        "containers": [
            {
                "name": "vllm",
                "image": "vllm/vllm-openai:v0.11.0",
                # The image's entrypoint is `python3 -m vllm.entrypoints.openai.api_server` (takes
                # --model) in older vLLM, `vllm serve` (model path first) in newer
                # (vllm-project/vllm docker/Dockerfile, commits 0000977 and dead20b): name it.
                "command": ["vllm", "serve"],
                # The model path and the loader settings that suit this store.
                "args": mount.serving_args("vllm", served_model_name="llama-3-8b-instruct"),
                "ports": [{"containerPort": 8000, "name": "http"}],
                "resources": {"limits": {"nvidia.com/gpu": 1}},
            }
        ],
        "nodeSelector": {"kubernetes.azure.com/accelerator": "nvidia"},
        "tolerations": [
            {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
        ],
    }
)

k8s.apps.v1.Deployment(
    "vllm-llama",
    metadata={"name": "vllm-llama", "namespace": "inference", "labels": labels},
    spec={
        "replicas": 2,
        "selector": {"matchLabels": labels},
        "template": {
            # azure.workload.identity/use goes on the pod template (for Azure SDKs in the pod;
            # the mount itself does not need it).
            "metadata": {"labels": {**labels, **mount.pod_labels}},
            "spec": pod_spec,
        },
    },
    # Pods start once the store's volumes and grants exist (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("claimNames", store.claim_names)
pulumi.export("storageAccountName", store.storage_account_name)
pulumi.export("containerName", store.container_name)
pulumi.export("serviceAccountName", store.service_account_name)
pulumi.export("clientIds", store.client_ids)
