"""A vLLM Deployment serving a model from a shared FSx for Lustre store.

Models are published once to S3; the store's data repository association makes them appear in
Lustre, and every replica mounts the same file system read-only. No copy at pod start.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.aws import FsxLustreModelStore

config = pulumi.Config()

store = FsxLustreModelStore(
    "llama",
    {
        "cluster_name": config.require("clusterName"),
        "readers": ["inference"],
        "storage_capacity_gib": 1200,
        "data_repository_path": "s3://acme-models/llama-3-8b-instruct/",
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
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
)

k8s.apps.v1.Deployment(
    "vllm-llama",
    metadata={"name": "vllm-llama", "namespace": "inference", "labels": labels},
    spec={
        "replicas": 3,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels, "annotations": mount.pod_annotations},
            "spec": pod_spec,
        },
    },
    # Pods start once the store's volumes and grants exist (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("claimNames", store.claim_names)
pulumi.export("fileSystemId", store.file_system_id)
