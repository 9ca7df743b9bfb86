"""The vLLM server container, apart from the store: what the application owns. The store's
wiring (volumes, mounts, env, service account, pod annotations and labels) is added to it by
``WorkloadMount.patch_pod_spec``."""

from typing import Any

PORT = 8000


def server_pod_spec(*, serving_args: list[str], accelerator: str) -> dict[str, Any]:
    """The pod spec of one vLLM server run as ``vllm serve <serving_args> --port 8000``:
    ``serving_args`` is what the store's mount offers (``WorkloadMount.serving_args("vllm")``:
    the model path, the served name and the loader settings that suit the backend)."""
    args = [*serving_args, "--port", str(PORT)]
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
