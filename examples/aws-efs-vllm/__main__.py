"""A vLLM Deployment serving a model from a shared Amazon EFS store.

The store's seed Job writes the pinned weights once (the `model-loader` namespace may write
more); every vLLM replica in `inference` mounts the pinned revision read-only through its own
access point, as uid/gid 1000, over TLS, and with
IAM authorization the driver's node role may write only through the loader's access point.
"""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.aws import EfsModelStore

config = pulumi.Config()
SERVING_UID = 1000

store = EfsModelStore(
    "llama",
    {
        # Mount targets go in the zones of the cluster's subnets and its managed node groups'.
        # GPU nodes from Karpenter or self-managed groups are not found that way: if they run
        # in other zones, list their subnets in "subnet_ids".
        "cluster_name": config.require("clusterName"),
        "readers": ["inference"],
        "writers": ["model-loader"],
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
        "posix_uid": SERVING_UID,
        "posix_gid": SERVING_UID,
        "iam_authorization": True,
    },
)

mount = store.mount_for("inference")
labels = {"app": "vllm-llama"}
pod_spec = mount.patch_pod_spec(
    {
        "securityContext": {
            "runAsUser": SERVING_UID,
            "runAsGroup": SERVING_UID,
            "fsGroup": SERVING_UID,
            "runAsNonRoot": True,
        },
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

metadata: Any = {"name": "vllm-llama", "namespace": "inference", "labels": labels}
deployment_spec: Any = {
    "replicas": 3,
    "selector": {"matchLabels": labels},
    "template": {
        "metadata": {"labels": labels, "annotations": mount.pod_annotations},
        "spec": pod_spec,
    },
}
k8s.apps.v1.Deployment(
    "vllm-llama",
    metadata=metadata,
    spec=deployment_spec,
    # Pods start once the store's volumes and grants exist (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("claimNames", store.claim_names)
pulumi.export("fileSystemId", store.file_system_id)
pulumi.export("accessPointIds", store.access_point_ids)
pulumi.export("nodeRoleArn", store.node_role_arn)
