"""A vLLM Deployment serving a model from a shared FSx for Lustre store.

The model is published once to S3, one prefix per version; the store's model section imports
that version into Lustre through a data repository association of its own
(``revisions/<revision>``), a Job in the loader namespace hashes and publishes it, a Job in
``inference`` verifies it as readers see it, and every replica mounts that revision read-only,
gated on its manifest. No copy at pod start.
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
        # The model, imported natively from S3 (no seed download): a new version goes to a
        # new prefix and a new revision label, imported beside this one while readers stay on
        # it until it is published and verified.
        "model": {
            "source": "s3://acme-models/llama-3.1-8b-instruct/v1/",
            "revision": "v1",
        },
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
