"""An application stack: a vLLM Deployment on a model store the platform stack owns.

The platform stack (examples/platform-stores) made the store next to its cluster and exported,
per store and consumer namespace, what a pod needs (``WorkloadMount.to_output()``). This stack
reads that by ``StackReference``, rebuilds the mount with ``WorkloadMount.from_output`` and wires
the vLLM pod exactly as ``store.mount_for(namespace)`` would: the read-only claim at
/mnt/models, HF_HUB_OFFLINE and HF_HOME on a writable emptyDir, the service account with the
store's workload identity, and the pod-template annotations (GKE's gcsfuse sidecar) and labels.
It needs no cloud SDK and no knowledge of the bucket: only pulumi-kubernetes and this library.
"""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from vllm_server import PORT, server_pod_spec

from pulumi_modelstore.kube.workload import WorkloadMount

config = pulumi.Config()
platform_stack = config.require("platformStack")
store_name = config.require("store")
namespace = config.require("namespace")
served_model_name = config.require("servedModelName")
accelerator = config.require("accelerator")
replicas = config.get_int("replicas") or 1

platform = pulumi.StackReference(platform_stack)


def _store(stores: Any) -> dict[str, Any]:
    """The platform's outputs for ``store_name``, refused in one line when it has none."""
    if not isinstance(stores, dict) or store_name not in stores:
        names = ", ".join(sorted(stores)) if isinstance(stores, dict) else "none"
        raise ValueError(
            f"app-vllm:store: the platform stack {platform_stack} exports no store "
            f"'{store_name}' (stores: {names})"
        )
    mounts = stores[store_name]["mounts"]
    if namespace not in mounts:
        raise ValueError(
            f"app-vllm:namespace: store '{store_name}' of {platform_stack} has no consumer "
            f"namespace '{namespace}' (namespaces: {', '.join(sorted(mounts))})"
        )
    if not mounts[namespace].get("readOnly"):
        raise ValueError(
            f"app-vllm:namespace: '{namespace}' writes to store '{store_name}' of "
            f"{platform_stack}: serve from a reader namespace "
            f"({', '.join(sorted(n for n, m in mounts.items() if m.get('readOnly')))})"
        )
    return dict(stores[store_name])


store = platform.require_output("stores").apply(_store)
mount = store.apply(lambda s: WorkloadMount.from_output(s["mounts"][namespace]))

labels = {"app": f"vllm-{store_name}"}
pod_spec = mount.apply(
    lambda m: m.patch_pod_spec(
        server_pod_spec(
            serving_args=m.serving_args("vllm", served_model_name=served_model_name),
            accelerator=accelerator,
        )
    )
)

deployment = k8s.apps.v1.Deployment(
    f"vllm-{store_name}",
    metadata={"name": f"vllm-{store_name}", "namespace": namespace, "labels": labels},
    spec={
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            # The store's pod annotations (the gcsfuse sidecar on GKE) and labels go on the pod
            # TEMPLATE; the selector keeps only the app's own label.
            "metadata": mount.apply(
                lambda m: {"labels": {**m.pod_labels, **labels}, "annotations": m.pod_annotations}
            ),
            "spec": pod_spec,
        },
    },
)

service = k8s.core.v1.Service(
    f"vllm-{store_name}",
    metadata={"name": f"vllm-{store_name}", "namespace": namespace, "labels": labels},
    spec={"selector": labels, "ports": [{"name": "http", "port": PORT, "targetPort": "http"}]},
)

pulumi.export("deploymentName", f"vllm-{store_name}")
pulumi.export("endpoint", f"http://vllm-{store_name}.{namespace}.svc.cluster.local:{PORT}/v1")
pulumi.export("claimName", mount.apply(lambda m: m.claim_name))
pulumi.export("serviceAccountName", mount.apply(lambda m: m.service_account_name))
