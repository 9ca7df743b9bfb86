"""A laptop cluster (kind, minikube): the store's seed Job writes the model once, a Deployment
reads it.

The store's ``model`` section names a small public Hugging Face model pinned to a commit; the
store seeds it by a Job in its loader namespace (``tiny-model-loader``, non-root, verified by a
manifest), verifies it in ``inference`` and mounts readers at ``revisions/<revision>``.
Run `pulumi up` against a kind cluster; no cloud account needed.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.local import LocalModelStore

store = LocalModelStore(
    "tiny-model",
    {
        "readers": ["inference"],
        "create_namespaces": True,
        "capacity_gib": 5,
        # Public (no token): Qwen2.5-0.5B-Instruct, about 1 GB. The commit is the one public
        # projects pin (their Hugging Face cache path models--Qwen--Qwen2.5-0.5B-Instruct/
        # snapshots/<commit> names it).
        "model": {
            "source": "hf://Qwen/Qwen2.5-0.5B-Instruct",
            "revision": "7ae557604adf67be50417f59c2c2f167def9a775",
            "include": ["*.safetensors", "*.json", "merges.txt"],
        },
    },
)

reader = store.mount_for("inference")
labels = {"app": "tiny-model-server"}
k8s.apps.v1.Deployment(
    "server",
    metadata={"name": "tiny-model-server", "namespace": "inference", "labels": labels},
    spec={
        "replicas": 2,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels, "annotations": reader.pod_annotations},
            # With the store's gate init container: no replica starts before the pinned
            # revision is published.
            "spec": reader.patch_pod_spec(
                {
                    "containers": [
                        {
                            "name": "server",
                            "image": "busybox:1.37",
                            "command": [
                                "sh",
                                "-c",
                                f"ls -l {reader.model_path()}; sleep infinity",
                            ],
                        }
                    ]
                }
            ),
        },
    },
    # Pods start once the store's volumes, grants and model Jobs exist
    # (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("claimNames", store.claim_names)
