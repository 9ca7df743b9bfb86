"""A KServe InferenceService reading its model straight from a shared FSx for Lustre store.

The model is published once to S3, one prefix per version; the store's model section imports
that version into Lustre through a data repository association of its own
(``revisions/<revision>``), a Job in the loader namespace hashes and publishes it, and a Job in
``kserve-inference`` verifies it as readers see it. KServe mounts ``pvc://<claim>/<revision
path>`` read-only at /mnt/models: no storage initializer copy.
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
        "deployment_type": "PERSISTENT_2",
        "per_unit_storage_throughput": 250,
        # The model, imported natively from S3 (no seed download): a new version goes to a
        # new prefix and a new revision label, imported beside this one while the predictor
        # stays on it until it is published and verified.
        "model": {
            "source": "s3://acme-models/llama-3.1-8b-instruct/v1/",
            "revision": "v1",
        },
    },
)

mount = store.mount_for("kserve-inference")

# One call wires the predictor: storageUri (the pinned revision's folder), the gate that waits
# for its manifest, the store's env and helper volumes (HF_HOME's emptyDir), and whatever else
# the store's readers need.
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
)

k8s.apiextensions.CustomResource(
    "llama",
    api_version="serving.kserve.io/v1beta1",
    kind="InferenceService",
    metadata=inference_service["metadata"],
    spec=inference_service["spec"],
    # Pods start once the store's volumes, grants and verified model exist
    # (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("storageUri", inference_service["spec"]["predictor"]["model"]["storageUri"])
pulumi.export("claimNames", store.claim_names)
