"""A laptop cluster (kind, minikube) store, seeded once by a Job, then served read-only.

- The store: one directory on the node's disk, a claim per namespace (read-write for the
  ``model-seeder`` writer namespace, read-only for the ``inference`` reader namespace).
- The seeding Job (wired by ``mount_for("model-seeder")``) writes a tiny model (a
  ``config.json`` and a ``model.safetensors`` of one 4x4 float32 tensor, standard library
  only) and then a ``.seeded`` marker. It is idempotent: when the marker is there it exits at
  once, so re-running it (a replaced Job, a second ``pulumi up`` after ``--refresh``) never
  rewrites a model that readers may have open.
- The reader Deployment (wired by ``mount_for("inference")``) serves the files read-only.

The Deployment must not serve before the model is there. Two guards, each for its own case:
1. Pulumi ordering: the Deployment ``depends_on`` the Job, and Pulumi's Kubernetes provider
   waits for a Job until its ``Complete`` condition is true (the batch/v1 Job await; failed on
   ``Failed``). ``pulumi.com/skipAwait`` is set to ``"false"`` to state it, and
   ``customTimeouts`` give the image pull time. So on ``pulumi up`` the Deployment is created
   only after the model is written.
2. An init container waiting for the ``.seeded`` marker: Pulumi's ordering covers only the
   run that creates them; a pod rescheduled later (the node's directory wiped by a recreated
   kind cluster, the Job re-run after a ``pulumi refresh``) still waits for a whole model
   instead of serving a half-written one.
"""

import textwrap

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.local import LocalModelStore

WRITER = "model-seeder"
READER = "inference"
MODEL = "tiny-model"
MARKER = ".seeded"

store = LocalModelStore(
    "models",
    {
        "readers": [READER],
        "writers": [WRITER],
        "create_namespaces": True,
        "capacity_gib": 5,
    },
)

writer = store.mount_for(WRITER)
model_dir = f"{writer.mount_path}/{MODEL}"

# Writes the files, then the marker last: a model is whole exactly when its marker exists.
SEED = textwrap.dedent(
    """\
    import json, os, struct, sys
    root = os.environ["MODEL_DIR"]
    marker = os.path.join(root, os.environ["MARKER"])
    if os.path.exists(marker):
        print("already seeded:", root)
        sys.exit(0)
    os.makedirs(root, exist_ok=True)

    def put(name, data):
        tmp = os.path.join(root, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(root, name))

    config = {"model_type": "tiny", "hidden_size": 4, "torch_dtype": "float32"}
    put("config.json", json.dumps(config, indent=2).encode())
    # safetensors: u64 little-endian header size, JSON header, little-endian tensor bytes.
    header = json.dumps(
        {"weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}
    ).encode()
    weights = struct.pack("<16f", *[float(i == j) for i in range(4) for j in range(4)])
    put("model.safetensors", struct.pack("<Q", len(header)) + header + weights)
    put(os.environ["MARKER"], b"")
    print("seeded:", sorted(os.listdir(root)))
    """
)

seed = k8s.batch.v1.Job(
    "seed-model",
    metadata={
        "name": f"seed-{MODEL}",
        "namespace": WRITER,
        # Pulumi waits for the Job to complete (the default, stated): the Deployment below
        # depends on it.
        "annotations": {"pulumi.com/skipAwait": "false"},
    },
    spec={
        "backoffLimit": 3,
        # No ttlSecondsAfterFinished: a garbage-collected Job would be re-created by the next
        # `pulumi up --refresh` (harmless, it is idempotent, but noisy).
        "template": {
            "spec": writer.patch_pod_spec(
                {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "seed",
                            "image": "python:3.12-slim",
                            "command": ["python", "-c", SEED],
                            "env": [
                                {"name": "MODEL_DIR", "value": model_dir},
                                {"name": "MARKER", "value": MARKER},
                            ],
                        }
                    ],
                }
            )
        },
    },
    opts=pulumi.ResourceOptions(
        # Pods start once the store's volumes and grants exist (order: workload-after-store).
        depends_on=[store],
        custom_timeouts=pulumi.CustomTimeouts(create="15m", update="15m"),
    ),
)

reader = store.mount_for(READER)
served = f"{reader.mount_path}/{MODEL}"
labels = {"app": "tiny-model-server"}
wait_for_model = reader.patch_container(
    {
        "name": "wait-for-model",
        "image": "busybox:1.37",
        "command": [
            "sh",
            "-c",
            f"until [ -f {served}/{MARKER} ]; do echo waiting for {served}; sleep 5; done",
        ],
    }
)
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
pod_spec["initContainers"] = [wait_for_model]

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
    # Created only once the seeding Job has completed (Pulumi awaits the Job)
    # (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[seed]),
)

pulumi.export("claimNames", store.claim_names)
pulumi.export("hostPath", store.host_path)
pulumi.export("modelPath", served)
