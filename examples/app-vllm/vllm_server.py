"""The vLLM server container, apart from the store: what the application owns. The store's
wiring (volumes, mounts, env, service account, pod annotations and labels) is added to it by
``WorkloadMount.patch_pod_spec``."""

from typing import Any

# Backends whose volume is a disk on the node: vLLM's default (mmap) loading reads it well.
# Every other backend is a network or FUSE file system, where random mmap reads are slow and
# ``--safetensors-load-strategy eager`` reads each file sequentially instead (FACTS.md).
BLOCK_BACKENDS = frozenset({"hyperdisk-ml", "local"})
PORT = 8000


def server_pod_spec(
    *, model_path: str, served_model_name: str, backend: str, accelerator: str
) -> dict[str, Any]:
    """The pod spec of one vLLM server serving the model at ``model_path``."""
    args = [model_path, "--served-model-name", served_model_name, "--port", str(PORT)]
    if backend not in BLOCK_BACKENDS:
        args += ["--safetensors-load-strategy", "eager"]
    return {
        "containers": [
            {
                "name": "vllm",
                "image": "vllm/vllm-openai:v0.11.0",
                "command": ["vllm", "serve"],
                "args": args,
                "ports": [{"containerPort": PORT, "name": "http"}],
                "readinessProbe": {
                    "httpGet": {"path": "/health", "port": "http"},
                    "periodSeconds": 10,
                },
                "resources": {"limits": {"nvidia.com/gpu": 1}},
            }
        ],
        "nodeSelector": {"cloud.google.com/gke-accelerator": accelerator},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
