"""A platform stack that makes its EKS cluster and the model stores on it in one program.

The cluster does not exist before the first ``pulumi up``, so nothing is looked up:
``EksCluster.from_cluster`` takes what the program declares (the cluster's name, VPC and
cluster security group, its OIDC provider for IRSA, the node groups, the subnets by zone) as
Outputs. IRSA trust policies are built from the OIDC provider's Outputs, the Kubernetes provider
from the cluster's endpoint and certificate, and every driver install and claim waits for the
node group.
"""

import json

import pulumi
import pulumi_aws as aws

from pulumi_modelstore.aws import EfsModelStore, EksCluster, MountpointS3ModelStore

config = pulumi.Config()
subnets: dict[str, str] = config.require_object("privateSubnets")


def service_role(name: str, service: str, policies: list[str]) -> aws.iam.Role:
    role = aws.iam.Role(
        name,
        assume_role_policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": service},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )
    for policy in policies:
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy.lower()}",
            role=role.name,
            policy_arn=f"arn:aws:iam::aws:policy/{policy}",
        )
    return role


cluster_role = service_role("ml-eks-cluster", "eks.amazonaws.com", ["AmazonEKSClusterPolicy"])
cluster = aws.eks.Cluster(
    "ml-eks",
    role_arn=cluster_role.arn,
    version="1.33",
    vpc_config={"subnet_ids": list(subnets.values()), "endpoint_private_access": True},
    access_config={"authentication_mode": "API"},
)
# IRSA: the cluster's issuer as an IAM OIDC provider (what `eksctl utils
# associate-iam-oidc-provider` makes for a cluster made elsewhere).
oidc = aws.iam.OpenIdConnectProvider(
    "ml-eks-oidc",
    url=cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer),
    client_id_lists=["sts.amazonaws.com"],
)
node_role = service_role(
    "ml-eks-nodes",
    "ec2.amazonaws.com",
    [
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonEC2ContainerRegistryReadOnly",
    ],
)
gpu_nodes = aws.eks.NodeGroup(
    "ml-eks-gpu",
    cluster_name=cluster.name,
    node_role_arn=node_role.arn,
    subnet_ids=list(subnets.values()),
    instance_types=["g5.2xlarge"],
    ami_type="AL2023_x86_64_NVIDIA",
    scaling_config={"min_size": 1, "desired_size": 2, "max_size": 4},
)

# The cluster's scope, from the cluster itself: no lookup of a cluster that does not exist yet.
eks = EksCluster.from_cluster(
    "ml-eks",
    cluster,
    oidc_provider=oidc,
    node_groups=[gpu_nodes],
    subnets_by_zone=subnets,
)

llama = EfsModelStore(
    "llama",
    {
        "cluster": eks,
        "readers": ["inference"],
        "model": {
            "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
            "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
            "include": ["*.safetensors", "*.json", "tokenizer*"],
            "token_secret": {"name": "hf-token", "key": "token"},
        },
        "posix_uid": 1000,
        "posix_gid": 1000,
    },
)
embeddings = MountpointS3ModelStore(
    "embeddings",
    {
        "cluster": eks,
        "readers": ["inference", "search"],
        "prefix": "bge-large-en-v1.5/",
        "model": {
            "source": "hf://BAAI/bge-large-en-v1.5",
            "revision": "d4aa6901d3a41ba39fb536a557fa166f842b0e09",
            "include": ["*.safetensors", "*.json", "vocab.txt"],
        },
    },
)

pulumi.export("clusterName", cluster.name)
pulumi.export("kubeconfig", pulumi.Output.secret(eks.kubeconfig))
pulumi.export("claimNames", {"llama": llama.claim_names, "embeddings": embeddings.claim_names})
pulumi.export("fileSystemId", llama.file_system_id)
pulumi.export("bucketName", embeddings.bucket_name)
