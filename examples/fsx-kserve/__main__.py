"""A KServe InferenceService reading its model straight from a shared FSx for Lustre store.

KServe mounts ``pvc://<claim>/<path>`` read-only at /mnt/models: no storage initializer copy.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.aws import FsxLustreModelStore

config = pulumi.Config()

store = FsxLustreModelStore(
    "models",
    {
        "cluster_name": config.require("clusterName"),
        "readers": ["kserve-inference"],
        "writers": ["model-publisher"],
        "deployment_type": "PERSISTENT_2",
        "per_unit_storage_throughput": 250,
    },
)

mount = store.mount_for("kserve-inference")

# One call wires the predictor: storageUri, the store's env and helper volumes (HF_HOME's
# emptyDir), and whatever else the store's readers need.
inference_service = mount.patch_inference_service(
    {
        "metadata": {"name": "llama"},
        "spec": {
            "predictor": {
                "model": {
                    "modelFormat": {"name": "huggingface"},
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                }
            }
        },
    },
    path="llama-3-8b-instruct",
)

k8s.apiextensions.CustomResource(
    "llama",
    api_version="serving.kserve.io/v1beta1",
    kind="InferenceService",
    metadata=inference_service["metadata"],
    spec=inference_service["spec"],
    # Pods start once the store's volumes and grants exist (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("storageUri", mount.kserve_storage_uri("llama-3-8b-instruct"))
pulumi.export("claimNames", store.claim_names)
