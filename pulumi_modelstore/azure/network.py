"""Virtual network rules on a storage account, shared by the Azure stores: a rule admits a
subnet's traffic only through the subnet's storage service endpoint, which the store does not
add (the subnet is the cluster's): each rule's subnet is looked up once per cluster and checked
before deploy."""

import re
from typing import Any

from ..errors import ModelStoreInputError
from ..validation import is_output
from .cluster import AksCluster, _get

# A subnet carries one of the two, never both (learn.microsoft.com virtual-network-service-
# endpoints-overview: Microsoft.Storage.Global reaches storage accounts in any region).
STORAGE_ENDPOINTS = ("Microsoft.Storage", "Microsoft.Storage.Global")
_SUBNET_PARTS = re.compile(
    r"/subscriptions/[^/]+/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.Network/"
    r"virtualNetworks/(?P<vnet>[^/]+)/subnets/(?P<subnet>[^/]+)",
    re.IGNORECASE,
)


def subnet_parts(subnet_id: str) -> tuple[str, str, str]:
    """(resource group, virtual network, subnet) of a subnet's ARM id."""
    found = _SUBNET_PARTS.fullmatch(subnet_id)
    assert found is not None, subnet_id  # ids are checked by the rules or come from AKS
    return found["rg"], found["vnet"], found["subnet"]


def has_storage_endpoint(subnet: Any) -> bool:
    endpoints = _get(subnet, "service_endpoints", "serviceEndpoints") or []
    return any(_get(e, "service") in STORAGE_ENDPOINTS for e in endpoints)


def require_storage_endpoint(store: str, field: str, subnet_id: str, subnet: Any) -> None:
    """A virtual network rule admits a subnet's traffic only through the storage service
    endpoint; the store does not change the subnet (it is the cluster's)."""
    if not has_storage_endpoint(subnet):
        rg, vnet, name = subnet_parts(subnet_id)
        raise ModelStoreInputError(
            store,
            field,
            subnet_id,
            f"subnets with the Microsoft.Storage or Microsoft.Storage.Global service endpoint "
            f"(subnet {name} of virtual network {vnet} has neither: az network vnet subnet "
            f"update -g {rg} --vnet-name {vnet} -n {name} --service-endpoints "
            f"Microsoft.Storage.Global)",
        )


def subnet(cluster: AksCluster, subnet_id: str) -> Any:
    """A subnet, looked up once per cluster (ARM ids are case-insensitive)."""
    import pulumi_azure_native as azure_native

    rg, vnet, name = subnet_parts(subnet_id)
    return cluster.lookup(
        ("azure-subnet", subnet_id.lower()),
        lambda: azure_native.network.get_subnet(
            resource_group_name=rg,
            virtual_network_name=vnet,
            subnet_name=name,
            opts=cluster._invoke_opts,
        ),
    )


def check_rule_subnets(store: str, field: str, cluster: AksCluster, subnet_ids: Any) -> None:
    """Every subnet a virtual network rule names carries the storage service endpoint (ids
    given as Outputs are known only at deploy: not checked)."""
    for subnet_id in subnet_ids:
        if not is_output(subnet_id):
            require_storage_endpoint(store, field, subnet_id, subnet(cluster, subnet_id))
