"""A KServe InferenceService on GKE serving a model straight from Cloud Storage through the Cloud
Storage FUSE CSI driver: ``storageUri: pvc://<claim>/revisions/<revision>``, no copy.

The store makes a hardened bucket in the cluster's region, a Kubernetes service account per
consumer namespace granted on that bucket alone through workload identity, and a static PV and
claim per namespace (read-only for readers). Its model section seeds the pinned Hugging Face
revision once (a Job in the loader namespace, ``models-loader``, writing as the store's writer
there), verifies it in ``kserve-inference`` as the predictor will see it, and points the
predictor at ``revisions/<revision>``, gated on the revision's manifest. KServe mounts the
claim read-only at /mnt/models in the predictor's ``kserve-container``; the GKE webhook
injects the gcsfuse sidecar into the predictor pod when that pod carries
``gke-gcsfuse/volumes: "true"``, and the sidecar reaches the bucket as the pod's service
account. So the predictor pod needs what ``mount_for`` gives besides the volume (KServe adds
that one): the service account, the pod annotations and labels, the helper volumes (HF_HOME's
emptyDir, a custom gcsfuse cache), the revision gate, the pod security context and the
container env.

How an InferenceService passes those to its predictor pod (kserve/kserve, master, 2026):
- ``spec.predictor`` inlines KServe's ``PodSpec`` (pkg/apis/serving/v1beta1/predictor.go
  ``PredictorSpec``: ``PodSpec `json:",inline"```; pkg/apis/serving/v1beta1/podspec.go has
  ``serviceAccountName``, ``volumes``, ``securityContext``, ``nodeSelector``,
  ``tolerations``), copied into the pod spec
  (pkg/controller/v1beta1/inferenceservice/components/predictor.go ``buildPodSpec``);
- ``spec.predictor.annotations`` and ``.labels`` are "added to the component pod"
  (pkg/apis/serving/v1beta1/component.go ``ComponentExtensionSpec``): ``buildObjectMeta``
  (components/predictor.go) unions them over the InferenceService's own, and both the
  Standard (raw Deployment: reconcilers/deployment/deployment_reconciler.go, pod template
  ObjectMeta) and Knative (reconcilers/knative/ksvc_reconciler.go, revision template
  annotations) reconcilers put them on the POD TEMPLATE. The predictor's, not
  ``metadata.annotations``: they reach this component's pods only;
- ``spec.predictor.model`` inlines a ``corev1.Container`` (PredictorExtensionSpec), so
  ``env`` and ``volumeMounts`` go to ``kserve-container``;
- a ``pvc://`` URI is mounted into ``kserve-container`` at /mnt/models with the path as
  ``subPath``, read-only unless ``storage.kserve.io/readonly: "false"``
  (pkg/webhook/admission/pod/storage_initializer_injector.go, ``CommonStorageInitialization``).
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.gcp import GcsFuseModelStore

config = pulumi.Config()

READER = "kserve-inference"

store = GcsFuseModelStore(
    "models",
    {
        "cluster_name": config.require("clusterName"),
        # A zonal cluster: the bucket goes to the zone's region.
        "location": config.require("location"),
        "readers": [READER],
        # The model, seeded once by the store's Job and verified before the predictor starts.
        # The gated model needs a Hugging Face token: a Secret named hf-token in the loader
        # namespace (models-loader), never a value here.
        "model": {
            "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
            "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
            "include": ["*.safetensors", "*.json", "tokenizer*"],
            "token_secret": {"name": "hf-token", "key": "token"},
        },
        "tuning": "serving",
    },
)

mount = store.mount_for(READER)

# One call (WorkloadMount.patch_inference_service) puts what the predictor pod needs where
# KServe reads it (see above): the service account the gcsfuse sidecar uses, the pod
# annotations the GKE webhook reads, the labels, the helper volumes, the pod security context
# (a custom gcsfuse cache needs an fsGroup), the container env and volumeMounts, the gate
# that waits for the revision's manifest (it mounts the claim itself), and the storageUri of
# the pinned revision. KServe adds its own mount of the claim from the storageUri.
inference_service = mount.patch_inference_service(
    {
        "metadata": {
            "name": "llama",
            # A plain Deployment (KServe >= 0.16 calls it Standard; "RawDeployment" before):
            # Knative refuses pod specs with persistentVolumeClaim volumes unless its
            # kubernetes.podspec-persistent-volume-claim feature flag is on.
            "annotations": {"serving.kserve.io/deploymentMode": "Standard"},
        },
        "spec": {
            "predictor": {
                "model": {
                    "modelFormat": {"name": "huggingface"},
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                },
                "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                "tolerations": [
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                ],
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
    # Pods start once the store's volumes and grants exist (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("storageUri", inference_service["spec"]["predictor"]["model"]["storageUri"])
pulumi.export("claimNames", store.claim_names)
pulumi.export("bucketName", store.bucket_name)
pulumi.export("serviceAccountName", store.service_account_name)
