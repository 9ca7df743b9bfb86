"""A vLLM Deployment on GKE serving a model straight from Cloud Storage through the Cloud
Storage FUSE CSI driver.

The store makes a hardened bucket in the cluster's region; a publisher namespace writes models
under one folder, and every vLLM replica mounts that folder read-only with Google's serving
tuning (buffered reads, large read-ahead, unlimited metadata caches prefetched at mount). Each
namespace runs as its own Kubernetes service account, granted on the bucket alone through
workload identity: readers cannot write, even in IAM. ``mount_for`` gives the pod everything:
the volume, the service account, and the ``gke-gcsfuse/*`` annotations on the pod TEMPLATE
that inject and size the gcsfuse sidecar.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.gcp import GcsFuseModelStore

config = pulumi.Config()

store = GcsFuseModelStore(
    "llama",
    {
        "cluster_name": config.require("clusterName"),
        # A zonal cluster: the bucket goes to the zone's region.
        "location": config.require("location"),
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
        "prefix": "llama-3-8b-instruct",
        "tuning": "serving",
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
        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
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
            # gke-gcsfuse/volumes and the sidecar sizing go on the pod template.
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
pulumi.export("iamMembers", store.iam_members)
