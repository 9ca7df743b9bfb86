"""A laptop cluster (kind, minikube) store, seeded once by the store's Job, then served
read-only.

- The store: one directory on the node's disk, a claim per namespace (read-write for the
  store's loader namespace ``models-loader``, read-only for the ``inference`` reader namespace).
- The ``model`` section: a small public Hugging Face model pinned to a commit. The store's seed
  Job (non-root, in ``models-loader``) downloads it into a partial directory, checks every
  file's sha256 against the Hub's, writes a manifest and publishes ``revisions/<revision>`` in
  one rename; a rerun finds the manifest and does nothing. A verification Job in ``inference``
  mounts as readers do and checks the manifest.
- The reader Deployment (wired by ``mount_for("inference")``) serves the pinned revision
  read-only.

The Deployment must not serve before the model is there. Two guards, each for its own case:
1. Pulumi ordering: the Deployment ``depends_on`` the store, whose seed and verification Jobs
   Pulumi's Kubernetes provider awaits until ``Complete`` (failing on ``Failed``). So on
   ``pulumi up`` the Deployment is created only after the model is written and verified.
2. The gate init container ``mount_for`` adds: a pod started later (the node's directory wiped
   by a recreated kind cluster) waits until the pinned revision's manifest is published
   instead of serving a half-written model.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.local import LocalModelStore

READER = "inference"

store = LocalModelStore(
    "models",
    {
        "readers": [READER],
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

reader = store.mount_for(READER)
served = reader.model_path()
labels = {"app": "tiny-model-server"}
pod_spec = reader.patch_pod_spec(
    {
        "containers": [
            {
                "name": "server",
                "image": "python:3.12-slim",
                "command": ["python", "-m", "http.server", "8000", "--directory", served],
                "ports": [{"containerPort": 8000, "name": "http"}],
                "readinessProbe": {"httpGet": {"path": "/config.json", "port": "http"}},
            }
        ],
    }
)

server = k8s.apps.v1.Deployment(
    "server",
    metadata={"name": "tiny-model-server", "namespace": READER, "labels": labels},
    spec={
        "replicas": 2,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels, "annotations": reader.pod_annotations},
            "spec": pod_spec,
        },
    },
    # Created once the store's seed and verification Jobs have completed (Pulumi awaits them)
    # (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[store]),
)

pulumi.export("claimNames", store.claim_names)
pulumi.export("hostPath", store.host_path)
pulumi.export("modelPath", served)
