"""vLLM replicas each serving from their own EBS volume, restored from one snapshot.

The platform stack installs the EBS CSI driver once for the cluster (controller role by IRSA,
snapshot CRDs and controller, a Retain VolumeSnapshotClass). The model cache seeds the pinned
revision once into a seed volume, snapshots it when the seed Job has completed, and every
StatefulSet replica gets its own gp3 volume restored from that snapshot in its own Availability
Zone: no download at pod start, and scaling out needs no Pulumi change.
"""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_modelstore.aws import EbsCsiDriver, EbsModelCache

config = pulumi.Config()

driver = EbsCsiDriver(
    "ebs",
    {
        "cluster_name": config.require("clusterName"),
        "identity": "irsa",
        "tags": {"team": "ml-platform"},
    },
)

cache = EbsModelCache(
    "llama",
    {
        # The namespace of the seed, the snapshot and the StatefulSet (one: a claim restores
        # only from a VolumeSnapshot in its own namespace).
        "readers": ["inference"],
        "volume_size": "64Gi",
        # The pinned revision, seeded once into the seed volume by the package's seed program
        # (every file's sha256 checked against the Hub's, a manifest written, the revision
        # published at revisions/<revision>), then snapshotted; each replica restores it and
        # mounts that revision behind the gate. A new revision is seeded and snapshotted beside
        # this one; this revision's VolumeSnapshot is retained (protect, default True), so
        # delete it by hand once no replica restores from it. The gated model needs a Hugging
        # Face token: a Secret in the cache's namespace, never a value in config.
        "model": {
            "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
            "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
            "include": ["*.safetensors", "*.json", "tokenizer*"],
            "token_secret": {"name": "hf-token", "key": "token"},
        },
        # Loading weights is sequential reading: throughput, not IOPS, shortens it.
        "iops": 4000,
        "throughput_mibps": 1000,
        # Restored volumes pull blocks from the snapshot; without a rate they load lazily.
        "volume_initialization_rate_mibps": 300,
        "snapshot_class_name": driver.snapshot_class_name,
    },
    # A destroy deletes the cache's claims before the driver (order: cache-after-driver).
    opts=pulumi.ResourceOptions(depends_on=[driver]),
)

labels = {"app": "vllm-llama"}
stateful_set_spec = cache.patch_stateful_set_spec(
    {
        "serviceName": "vllm-llama",
        "replicas": 3,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "vllm",
                        "image": "vllm/vllm-openai:v0.11.0",
                        "args": ["--model", "/mnt/models", "--served-model-name", "llama-3.1-8b"],
                        "ports": [{"containerPort": 8000, "name": "http"}],
                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                    }
                ],
                "tolerations": [
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                ],
            },
        },
    }
)

k8s.apps.v1.StatefulSet(
    "vllm-llama",
    metadata={"name": "vllm-llama", "namespace": "inference", "labels": labels},
    spec=stateful_set_spec,
    # Pods start once the cache's snapshot exists (order: workload-after-store).
    opts=pulumi.ResourceOptions(depends_on=[cache]),
)

pulumi.export("storageClassName", cache.storage_class_name)
pulumi.export("snapshotName", cache.snapshot_name)
pulumi.export("snapshotClassName", cache.snapshot_class_name)
pulumi.export("seedClaimName", cache.seed_claim_name)
pulumi.export("firstReplicaClaim", cache.replica_claim_name("vllm-llama", 0))
pulumi.export("driverRoleArn", driver.controller_role_arn)
