"""A vLLM Deployment serving a model straight from S3 through Mountpoint for Amazon S3.

The store makes a hardened, versioned bucket; a publisher namespace writes models under one
prefix, and every vLLM replica mounts that prefix read-only. With pod-level credentials each
namespace runs as its own service account whose role the store scopes: readers cannot write,
even in IAM.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.aws import MountpointS3ModelStore

config = pulumi.Config()

store = MountpointS3ModelStore(
    "llama",
    {
        "cluster_name": config.require("clusterName"),
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
        "prefix": "llama-3-8b-instruct/",
        # The default with writers (and the only choice): each namespace gets its own role, so
        # the readers' roles carry no write action.
        "authentication_source": "pod",
        # Weights are read once per Mountpoint pod; keep them on the node for restarts.
        "cache_size": "20Gi",
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
pulumi.export("bucketName", store.bucket_name)
pulumi.export("serviceAccountName", store.service_account_name)
pulumi.export("podRoleArns", store.pod_role_arns)
