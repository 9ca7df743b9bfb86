"""A platform stack that makes its AKS cluster and the model stores on it in one program.

The cluster does not exist before the first ``pulumi up``, so nothing about it is looked up:
``AksCluster.from_cluster`` takes the cluster as the program declares it. The preflight checks
(the OIDC issuer, workload identity, the blob CSI driver) run on those declarations; the OIDC
issuer the federated credentials trust is the created cluster's, the Kubernetes provider is
made from its user credentials once it exists, and every namespace and claim waits for it.
"""

import pulumi
import pulumi_azure_native as azure_native

from pulumi_modelstore.azure import AksCluster, AzureBlobModelStore, cluster_settings
from pulumi_modelstore.modelsection import ModelSection

config = pulumi.Config()
location = pulumi.Config("azure-native").require("location")
subnet = config.require("nodeSubnetId")

group = azure_native.resources.ResourceGroup(
    "ml-rg", resource_group_name="ml-rg", location=location
)
# Both storage CSI drivers, the OIDC issuer and workload identity (azure.cluster_settings).
cluster = azure_native.containerservice.ManagedCluster(
    "ml-aks",
    resource_name_="ml-aks",
    resource_group_name=group.name,
    location=location,
    dns_prefix="ml-aks",
    kubernetes_version="1.34.2",
    identity={"type": "SystemAssigned"},
    agent_pool_profiles=[
        {
            "name": "system",
            "mode": "System",
            "count": 2,
            "vm_size": "Standard_D4s_v5",
            "vnet_subnet_id": subnet,
        },
        {
            "name": "gpu",
            "mode": "User",
            "count": 1,
            "vm_size": "Standard_NC24ads_A100_v4",
            "vnet_subnet_id": subnet,
        },
    ],
    **cluster_settings(),
)

# The cluster's scope, from the cluster itself: no lookup of a cluster that does not exist yet.
aks = AksCluster.from_cluster(
    "ml-aks",
    cluster,
    resource_group_name="ml-rg",
    location=location,
    node_subnet_ids=[subnet],
    kubernetes_version="1.34.2",
)

stores = {
    name: AzureBlobModelStore(
        name,
        {
            "cluster": aks,
            "readers": readers,
            "container_name": container,
            "model": model,
            "block_cache_pool_size_mib": 8192,
        },
    )
    for name, readers, container, model in (
        (
            "llama",
            ["inference"],
            "llama-3-8b-instruct",
            ModelSection(
                source="hf://meta-llama/Llama-3.1-8B-Instruct",
                revision="0e9e39f249a16976918f6564b8830bc894c89659",
                include=["*.safetensors", "*.json", "tokenizer*"],
                token_secret={"name": "hf-token", "key": "token"},
            ),
        ),
        (
            "embeddings",
            ["inference", "search"],
            "bge-large-en-v1-5",
            ModelSection(
                source="hf://BAAI/bge-large-en-v1.5",
                revision="d4aa6901d3a41ba39fb536a557fa166f842b0e09",
                include=["*.safetensors", "*.json", "vocab.txt"],
            ),
        ),
    )
}

pulumi.export("clusterName", cluster.name)
pulumi.export("claimNames", {name: store.claim_names for name, store in stores.items()})
