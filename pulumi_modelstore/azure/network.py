"""How a new storage account is reached, one implementation for every Azure store: virtual
network rules for the cluster's node subnets (the default, default action Deny), a private
endpoint, or (the Blob store's explicit opt-in) every network.

A virtual network rule admits a subnet's traffic only through the subnet's storage service
endpoint, which the store does not add (the subnet is the cluster's): each rule's subnet is
looked up once per cluster and checked before deploy. A private endpoint's records go in the
service's ``privatelink.<blob|file>.core.windows.net`` zone, given or shared by the cluster's
stores per resource group."""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from ..cluster import provider_of
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..store import ALL_NETWORKS_MARK
from ..validation import is_output
from . import validation as az_v
from .cluster import AksCluster, AksClusterFacts, _get

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


def storage_endpoints(subnet: Any) -> list[Any]:
    endpoints = _get(subnet, "service_endpoints", "serviceEndpoints") or []
    return [e for e in endpoints if _get(e, "service") in STORAGE_ENDPOINTS]


def subnet_subscription(subnet_id: str) -> str:
    """The subscription of a subnet's ARM id, lowercase."""
    return subnet_id.split("/")[2].lower()


def has_storage_endpoint(subnet: Any) -> bool:
    return bool(storage_endpoints(subnet))


def _region(name: Any) -> str:
    """A region as ARM spells it (``East US`` and ``eastus`` alike)."""
    return str(name).replace(" ", "").lower()


def endpoint_regions(subnet: Any) -> set[str] | None:
    """The regions the subnet's storage service endpoint reaches, as ARM reports them in the
    endpoint's ``locations`` (``*``: every region, as ``Microsoft.Storage.Global`` has; a
    regional ``Microsoft.Storage`` lists the virtual network's region and its pair); None
    when not reported."""
    found: set[str] = set()
    for endpoint in storage_endpoints(subnet):
        locations = _get(endpoint, "locations")
        if not locations:
            return None
        found |= {_region(location) for location in locations}
    return found


def require_storage_endpoint(
    store: str, field: str, subnet_id: str, subnet: Any, region: str | None = None
) -> None:
    """A virtual network rule admits a subnet's traffic only through the storage service
    endpoint, and only to an account in a region the endpoint reaches; the store does not
    change the subnet (it is the cluster's)."""
    rg, vnet, name = subnet_parts(subnet_id)
    fix = (
        f"az network vnet subnet update -g {rg} --vnet-name {vnet} -n {name} "
        "--service-endpoints Microsoft.Storage.Global"
    )
    if not has_storage_endpoint(subnet):
        raise ModelStoreInputError(
            store,
            field,
            subnet_id,
            f"subnets with the Microsoft.Storage or Microsoft.Storage.Global service endpoint "
            f"(subnet {name} of virtual network {vnet} has neither: {fix})",
        )
    reached = endpoint_regions(subnet) if region is not None else None
    if region is not None and reached is not None and not reached & {"*", _region(region)}:
        raise ModelStoreInputError(
            store,
            field,
            subnet_id,
            f"subnets whose storage service endpoint reaches the account's region {region} "
            f"(subnet {name} of virtual network {vnet} reaches {', '.join(sorted(reached))} "
            f"only: {fix})",
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


def check_rule_subnets(
    store: str, field: str, cluster: AksCluster, subnet_ids: Any, region: str | None = None
) -> None:
    """Every subnet a virtual network rule names carries the storage service endpoint,
    reaching ``region`` (the account's) when given. Not checked: ids given as Outputs (known
    only at deploy) and subnets of another subscription (``get_subnet`` reads the provider's
    subscription only: it would miss the subnet, or read a namesake)."""
    subscription = cluster.facts(store).subscription_id.lower()
    for subnet_id in subnet_ids:
        if not is_output(subnet_id) and subnet_subscription(subnet_id) == subscription:
            found = subnet(cluster, subnet_id)
            require_storage_endpoint(store, field, subnet_id, found, region)


# ---- how a new account is reached: one implementation for every Azure store ------------------


@dataclass(frozen=True)
class StorageService:
    """A storage data service a store serves (``blob``, ``file``): its private link group, the
    private DNS zone its endpoint's records go in, and what a store without a network path
    would break."""

    group: str
    """The private endpoint's group id (sub-resource) and the zone group's config name."""
    scope_prefix: str
    """The shared zone's resource names under the cluster scope: ``<scope>-<prefix>-dns-<rg>``."""
    no_rule: str
    """What an account denying other networks with no rule means (in the message)."""
    other_paths: tuple[str, ...]
    """The fields besides ``allowed_subnet_ids`` that give the account a network path."""
    old_names: bool = False
    """Whether the shared zone and links are aliased from ``<store>-dns``/``<store>-dns-link``
    under the store (the Files store made them there before they were shared)."""

    @property
    def zone(self) -> str:
        """The private DNS zone Azure's private endpoints of this service resolve in
        (learn.microsoft.com/azure/private-link/private-endpoint-dns, Storage)."""
        return f"privatelink.{self.group}.core.windows.net"

    @property
    def zone_id_rule(self) -> str:
        return (
            "a private DNS zone resource id (/subscriptions/<id>/resourceGroups/<rg>/providers/"
            f"Microsoft.Network/privateDnsZones/{self.zone})"
        )


FILE = StorageService(
    "file", "files", "NFS without a network rule", ("private_endpoint_subnet_id",), old_names=True
)
BLOB = StorageService(
    "blob",
    "blob",
    "an account that denies other networks",
    ("private_endpoint_subnet_id", "allow_all_networks"),
)


def subnet_ids(store: str, field: str, value: Sequence[str]) -> None:
    if not value:
        raise ModelStoreInputError(store, field, [], "at least one subnet id when given")
    for subnet_id in value:
        az_v.subnet_id(store, field, subnet_id)


def one_network_path(store: str, allowed: Any, endpoint: Any) -> None:
    if allowed is not None and endpoint is not None:
        raise ModelStoreInputError(
            store,
            "allowed_subnet_ids",
            list(allowed),
            "unset when private_endpoint_subnet_id is given (the account's public network "
            "access is then off)",
        )


# A private DNS zone's ARM id (ARM compares the fixed segments without regard to case; the
# Azure CLI prints some in lowercase).
_PRIVATE_DNS_ZONE_ID = re.compile(
    rf"/subscriptions/{az_v.GUID_PATTERN}/resourceGroups/{az_v.RESOURCE_GROUP_PATTERN}/"
    r"providers/Microsoft\.Network/privateDnsZones/(?P<zone>[^/]+)",
    re.IGNORECASE,
)


def private_dns_zone_id(store: str, field: str, value: Any, service: StorageService) -> None:
    """The ARM id of a private DNS zone named exactly as ``service``'s endpoint needs
    (another service's zone, a public DNS zone ``Microsoft.Network/dnszones``, a zone's
    virtual network link or the bare zone name are the usual slips)."""
    if is_output(value):
        return
    found = _PRIVATE_DNS_ZONE_ID.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        raise ModelStoreInputError(store, field, value, service.zone_id_rule)
    if found["zone"] != service.zone:
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"the id of a private DNS zone named {service.zone} (the zone the {service.group} "
            f"endpoint's records need; this one is {found['zone']})",
        )


def zone_needs_an_endpoint(store: str, zone: Any, endpoint: Any) -> None:
    if zone is not None and endpoint is None:
        raise ModelStoreInputError(
            store,
            "private_dns_zone_id",
            zone,
            "unset unless private_endpoint_subnet_id is given (the zone serves the private "
            "endpoint; virtual network rules need none)",
        )


NETWORK_FIELDS = ("allowed_subnet_ids", "private_endpoint_subnet_id", "private_dns_zone_id")
"""The fields choosing how a new account is reached (settings of a new account only)."""


def network_rules(p: Parser, service: StorageService) -> None:
    """The rules of :data:`NETWORK_FIELDS`: well-formed ids, one network path, a zone of the
    service's name and only with a private endpoint."""
    p.field_rule(subnet_ids, "allowed_subnet_ids")
    p.field_rule(az_v.subnet_id, "private_endpoint_subnet_id")
    p.rule(one_network_path, "allowed_subnet_ids", "private_endpoint_subnet_id")
    p.field_rule(private_dns_zone_id, "private_dns_zone_id", service)
    p.rule(zone_needs_an_endpoint, "private_dns_zone_id", "private_endpoint_subnet_id")


def require_a_network_rule(store: str, facts: AksClusterFacts, service: StorageService) -> None:
    """A cluster on the AKS-managed VNet has no subnet the store can name in a rule, and an
    account that denies other networks with no rule refuses every mount."""
    paths = ", or ".join(service.other_paths)
    raise ModelStoreInputError(
        store,
        "allowed_subnet_ids",
        None,
        f"given, or {paths} (cluster {facts.name} is on the AKS-managed virtual network, with "
        f"no node subnet to admit: {service.no_rule} would refuse every mount)",
    )


# The private DNS zone a store creates is shared, not refused. Azure allows one zone of a name
# in a resource group and one link of a zone to a virtual network, so two stores that each made
# their own collided at deploy time. The cluster scope already owns what its stores share
# (driver installs, namespaces, the EFS node role): one zone per resource group and service
# lives under it, made by the first store that needs it (the Files store's aliased from the
# names it had under that store, so an update moves it rather than replacing it) and kept while
# any store needs it, and one link per virtual network the same way. A refusal would have left
# the second store with only private_dns_zone_id pointing at the first store's zone: no
# dependency on it (its first deploy races the zone) and no link for another virtual network.


@dataclass
class SharedZone:
    """A service's private DNS zone in one resource group and its virtual network links,
    shared by the cluster's stores."""

    store: str
    """The store that first needed it (the old names it is aliased from are that store's)."""
    resource_group: str
    service: StorageService
    zone: Any = None
    links: dict[str, Any] | None = None


def shared_zone(
    store: str,
    cluster: AksCluster,
    resource_group: str,
    service: StorageService,
    opts: pulumi.ResourceOptions | None,
) -> SharedZone:
    """The shared zone of ``resource_group`` (ARM names are case-insensitive). It is made with
    the cluster scope's azure-native provider: a store on another one names its own zone."""
    theirs = provider_of(opts, "azure-native")
    if theirs is not cluster.azure_provider:
        raise ModelStoreInputError(
            store,
            "private_dns_zone_id",
            None,
            f"given when the store's azure-native provider is not cluster "
            f"{cluster.scope_name!r}'s (the zone a store creates is shared by the cluster's "
            f"stores and made with the cluster's provider)",
        )
    return cluster.shared(
        (f"azure-{service.scope_prefix}-private-dns-zone", resource_group.lower()),
        lambda: SharedZone(store, resource_group, service),
    )


@dataclass(frozen=True)
class Network:
    """How a new account is reached, decided before deploy."""

    rule_subnets: tuple[str, ...] = ()
    """The subnets the account admits by virtual network rule (none with a private endpoint,
    all networks or an existing account)."""
    private_endpoint: bool = False
    all_networks: bool = False
    zone: SharedZone | None = None
    """The private DNS zone the store shares with the cluster's other stores (a private
    endpoint without ``private_dns_zone_id``)."""

    def account_settings(self) -> dict[str, Any]:
        """The account's ``network_rule_set`` and ``public_network_access``: traffic denied
        but from the admitted subnets (or through the private endpoint, public access off),
        or every network on the explicit opt-in."""
        rules: dict[str, Any] = {
            "default_action": "Allow" if self.all_networks else "Deny",
            "bypass": "AzureServices",
        }
        if self.rule_subnets:
            rules["virtual_network_rules"] = [
                {"virtual_network_resource_id": s, "action": "Allow"} for s in self.rule_subnets
            ]
        return {
            "network_rule_set": rules,
            "public_network_access": "Disabled" if self.private_endpoint else "Enabled",
        }

    def marks(self) -> dict[str, str]:
        """The account's tag marking every network as the user's explicit choice (the policy
        pack reports it as an opt-out, not a violation); none otherwise."""
        return {ALL_NETWORKS_MARK: "true"} if self.all_networks else {}


def same_subscription(store: str, subnet_id: Any, facts: AksClusterFacts) -> None:
    """A private endpoint is created in its subnet's subscription and region only
    (learn.microsoft.com/azure/private-link/private-endpoint-overview), and the store creates
    it with its provider, in the cluster's subscription."""
    if is_output(subnet_id) or subnet_subscription(subnet_id) == facts.subscription_id.lower():
        return
    raise ModelStoreInputError(
        store,
        "private_endpoint_subnet_id",
        subnet_id,
        f"a subnet in subscription {facts.subscription_id}, the one the store deploys to (Azure "
        f"creates a private endpoint only in its virtual network's subscription)",
    )


def plan_network(
    store: str,
    args: Mapping[str, Any],
    cluster: AksCluster,
    facts: AksClusterFacts,
    resource_group: str,
    location: str,
    service: StorageService,
    opts: pulumi.ResourceOptions | None,
    *,
    allow_all_networks: bool = False,
) -> Network:
    """Preflight of a new account's network: the admitted subnets (``allowed_subnet_ids``,
    else the cluster's node subnets), each checked for a storage service endpoint reaching
    the account's ``location``; or the
    shared private DNS zone a private endpoint needs; or every network when
    ``allow_all_networks`` is True (the Blob store's opt-in; an NFS share, which has no
    authentication, has none). An existing account: nothing (its rules are its own)."""
    if not args["create_storage_account"]:
        return Network()
    if allow_all_networks:
        return Network(all_networks=True)
    endpoint_subnet = args.get("private_endpoint_subnet_id")
    if endpoint_subnet is not None:
        same_subscription(store, endpoint_subnet, facts)
        zone = None
        if args.get("private_dns_zone_id") is None:
            zone = shared_zone(store, cluster, resource_group, service, opts)
        return Network(private_endpoint=True, zone=zone)
    given = args.get("allowed_subnet_ids")
    subnets = tuple(given) if given is not None else facts.node_subnet_ids
    if not subnets:
        require_a_network_rule(store, facts, service)
    # The cluster's node subnets are allowed_subnet_ids' default: named as that field.
    check_rule_subnets(store, "allowed_subnet_ids", cluster, subnets, location)
    return Network(rule_subnets=subnets)


# ---- the private endpoint -------------------------------------------------------------------


def private_endpoint(
    owner: pulumi.Resource,
    name: str,
    cluster: AksCluster,
    network: Network,
    service: StorageService,
    *,
    account_id: pulumi.Input[str],
    subnet: Any,
    zone_id: Any,
    resource_group: str,
    tags: Mapping[str, str],
    shared_tags: Mapping[str, str],
) -> list[pulumi.Resource]:
    """The private endpoint (the service's group) and the zone group that writes the account's
    A record in ``zone_id`` (an existing zone) or, with ``network.zone``, in the zone the
    cluster's stores share in the store's resource group, linked to the subnet's virtual
    network. Returns what a mount needs first: the zone group (the record) and the link
    (resolution from the VNet).

    The endpoint is in the cluster's region, not the account's: Azure creates an endpoint only
    in its subnet's virtual network's region (learn.microsoft.com/azure/private-link/private-
    endpoint-overview), and the endpoint subnet is one the cluster's nodes reach; an account in
    another region (``allow_other_region``) is reached across regions through it."""
    import pulumi_azure_native as azure_native

    parent = pulumi.ResourceOptions(parent=owner)
    endpoint = azure_native.network.PrivateEndpoint(
        f"{name}-pe",
        resource_group_name=resource_group,
        location=cluster.facts(name).location,
        subnet={"id": subnet},
        private_link_service_connections=[
            {
                "name": service.group,
                "private_link_service_id": account_id,
                "group_ids": [service.group],
            }
        ],
        tags=dict(tags),
        opts=parent,
    )
    needed: list[pulumi.Resource] = []
    if network.zone is not None:  # else zone_id's owner links the virtual networks
        zone_id = _zone(owner, name, cluster, network.zone, shared_tags).id
        needed.append(_vnet_link(owner, name, cluster, network.zone, subnet, shared_tags))
    zone_group = azure_native.network.PrivateDnsZoneGroup(
        f"{name}-pe-dns",
        resource_group_name=resource_group,
        private_endpoint_name=endpoint.name,
        private_dns_zone_group_name="default",
        private_dns_zone_configs=[{"name": service.group, "private_dns_zone_id": zone_id}],
        opts=parent,
    )
    return [zone_group, *needed]


def _zone(
    owner: pulumi.Resource,
    name: str,
    cluster: AksCluster,
    shared: SharedZone,
    tags: Mapping[str, str],
) -> Any:
    """The resource group's zone, made under the cluster scope by the first store that needs
    it (the Files store's aliased from ``<store>-dns`` under that store, where it was)."""
    import pulumi_azure_native as azure_native

    if shared.zone is None:
        aliased = shared.service.old_names
        shared.zone = azure_native.privatedns.PrivateZone(
            f"{cluster.scope_name}-{shared.service.scope_prefix}-dns-"
            f"{shared.resource_group.lower()}",
            resource_group_name=shared.resource_group,
            private_zone_name=shared.service.zone,
            location="global",
            tags=dict(tags),
            opts=cluster.child_options(
                old_name=f"{name}-dns" if aliased else None, old_parent=owner if aliased else None
            ),
        )
    return shared.zone


def _vnet_link(
    owner: pulumi.Resource,
    name: str,
    cluster: AksCluster,
    shared: SharedZone,
    subnet: Any,
    tags: Mapping[str, str],
) -> pulumi.Resource:
    """The zone's link to the endpoint subnet's virtual network, once per virtual network
    (Azure refuses a second link of one zone to one network)."""
    import pulumi_azure_native as azure_native

    zone_name = shared.zone.name
    if is_output(subnet):
        # The network is unknown until deploy: this store links it itself, as before the
        # zone was shared (two such stores on one network collide at deploy time).
        return azure_native.privatedns.VirtualNetworkLink(
            f"{name}-dns-link",
            **_link_args(shared, zone_name, f"{name}-link", vnet_of(subnet), tags),
            opts=pulumi.ResourceOptions(parent=owner, delete_before_replace=True),
        )
    rg, vnet, _ = subnet_parts(subnet)
    vnet_id = vnet_of(subnet)
    links = shared.links if shared.links is not None else {}
    shared.links = links
    key = vnet_id.lower()
    if key not in links:
        aliased = shared.service.old_names
        links[key] = azure_native.privatedns.VirtualNetworkLink(
            f"{cluster.scope_name}-{shared.service.scope_prefix}-dns-"
            f"{shared.resource_group.lower()}-link-{rg.lower()}-{vnet.lower()}",
            # Named after the store that first linked the network (the name it had under
            # that store). Azure refuses a second link of the zone to the network, so a
            # renamed link (its first store gone) is deleted before its replacement.
            **_link_args(shared, zone_name, f"{name}-link", vnet_id, tags),
            opts=cluster.child_options(
                old_name=f"{name}-dns-link" if aliased else None,
                old_parent=owner if aliased else None,
                delete_before_replace=True,
            ),
        )
    return links[key]


def vnet_of(subnet: Any) -> Any:
    """The virtual network's ARM id of a subnet's."""
    if isinstance(subnet, str):
        return subnet.rsplit("/subnets/", 1)[0]
    return pulumi.Output.from_input(subnet).apply(lambda s: s.rsplit("/subnets/", 1)[0])


def _link_args(
    shared: SharedZone, zone_name: Any, link_name: str, vnet_id: Any, tags: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "resource_group_name": shared.resource_group,
        "private_zone_name": zone_name,
        "virtual_network_link_name": link_name,
        "location": "global",
        "virtual_network": {"id": vnet_id},
        "registration_enabled": False,
        "tags": dict(tags),
    }
