"""A laptop cluster (kind, minikube): a loader Job writes the model once, a Deployment reads it.

Run `pulumi up` against a kind cluster; no cloud account needed.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.local import LocalModelStore

store = LocalModelStore(
    "tiny-model",
    {
        "readers": ["inference"],
        "writers": ["model-loader"],
        "create_namespaces": True,
        "capacity_gib": 5,
    },
)

writer = store.mount_for("model-loader")
k8s.batch.v1.Job(
    "load-model",
    metadata={"name": "load-tiny-model", "namespace": "model-loader"},
    spec={
        "backoffLimit": 2,
        "template": {
            "spec": writer.patch_pod_spec(
                {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "load",
                            "image": "busybox:1.37",
                            "command": [
                                "sh",
                                "-c",
                                f"echo '{{}}' > {writer.mount_path}/config.json",
                            ],
                        }
                    ],
                }
            )
        },
    },
    # Pods start once the store's volumes and grants exist (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
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
            "metadata": {"labels": labels},
            "spec": reader.patch_pod_spec(
                {
                    "containers": [
                        {
                            "name": "server",
                            "image": "busybox:1.37",
                            "command": ["sh", "-c", f"ls -l {reader.mount_path}; sleep infinity"],
                        }
                    ]
                }
            ),
        },
    },
    # Pods start once the store's volumes and grants exist (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("claimNames", store.claim_names)
