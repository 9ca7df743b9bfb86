"""What every Azure store shares on the skeleton: the AKS cluster scope it joins, where its
resources go (resource group, region), Azure tags, and the hardened storage account."""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import pulumi

from ..access import Access, Consumer, Grant, SourceGrant
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..kube.model_jobs import seed_service_account
from ..model.sources import parse_source
from ..modelsection import job_fills
from ..store import MANAGED_BY, STORE_NAME, ModelStore, ModelStoreArgs, Spec
from . import identity as ident
from . import network as net
from . import validation as az_v
from .cluster import (
    AksCluster,
    AksClusterFacts,
    cluster_named,
    require_oidc_issuer,
    require_workload_identity,
)

# The tags the store puts on its Azure resources.
STORE_TAG = "modelstore-store"
MANAGED_BY_TAG = "managed-by"
OWN_TAGS = 2


class AzureModelStoreArgs(ModelStoreArgs, total=False):
    """Fields every Azure store takes: the contract's, its cluster's (``AksClusterArgs``'s,
    needed only when no ``cluster`` is given), and where the store's Azure resources go."""

    cluster_name: str
    """The AKS managed cluster whose nodes mount the store: the ``cluster_name`` of the
    ``AksCluster`` the store joins, made by the first store that names it. Required unless
    ``cluster`` is given."""
    cluster_resource_group_name: str
    """The resource group of the managed cluster (not its node resource group ``MC_...``): its
    ``AksCluster``'s ``cluster_resource_group_name``. Required unless ``cluster`` is
    given."""
    resource_group_name: str
    """The resource group of the store's Azure resources (storage account, identities), a name
    known before deploy. It must exist. Default: the cluster's resource group
    (``cluster_resource_group_name``). The cluster's node resource group
    (``nodeResourceGroup``, by default ``MC_<resource group>_<cluster>_<region>``), which AKS
    deletes with the cluster, is refused before deploy."""
    region: str
    """The Azure region of the store's storage account, as ARM spells it (``eastus``; ARM's
    ``location``). Default: the cluster's region. Another region costs egress and latency at
    every read: it is refused unless ``allow_other_region`` is ``true``. (Formerly ``location``,
    still accepted with a deprecation warning: ``location`` names a cluster's location only.)"""
    allow_other_region: bool
    """Allow ``region`` to differ from the cluster's region. Default: ``false``."""
    tags: Mapping[str, str]
    """Azure tags merged onto every Azure resource of the store. Default: none besides the
    store's own ``modelstore-store`` and ``managed-by``."""


# An Azure store's args type: its hooks here read the fields every Azure store has.
AzureArgs = TypeVar("AzureArgs", bound=AzureModelStoreArgs)


@dataclass(frozen=True)
class Placement:
    """Where an Azure store's storage account goes and how it is reached, decided in preflight
    (:meth:`AzureModelStore.place`)."""

    facts: AksClusterFacts
    region: str
    resource_group: str
    account_name: str
    network: net.Network


class AzureModelStore(ModelStore[AzureArgs, AksCluster]):
    """Base of the Azure stores: joins the :class:`AksCluster` its ``cluster_name`` and
    ``cluster_resource_group_name`` (or ``cluster``) name."""

    args_type = AzureModelStoreArgs
    renamed_fields = MappingProxyType({"location": "region"})
    cluster_type = AksCluster
    # A model from hf:// or az:// is seeded by the Job, which runs as the store's Azure identity.
    model_fill = job_fills(cloud="az")

    @classmethod
    def cloud_rules(cls, p: Parser) -> None:
        """The cluster named (or given), the resource group and region spelled as ARM takes
        them, and the tags."""
        if p["cluster"] is None:
            p.check(
                lambda: cluster_named(p.store, p["cluster_name"], p["cluster_resource_group_name"])
            )
        p.field_rule(az_v.resource_group_name, "resource_group_name")
        p.field_rule(az_v.resource_group_name, "cluster_resource_group_name")
        p.field_rule(az_v.location, "region")
        p.field_rule(az_v.tags, "tags", OWN_TAGS)
        if p.ok(STORE_NAME):  # the store's own tag value
            p.check(lambda: az_v.tags(p.store, STORE_NAME, {STORE_TAG: p.store}, 0))
        model = p["model"] if p.ok("model") else None
        source_group = model.get("source_resource_group") if isinstance(model, Mapping) else None
        if source_group is not None:
            p.check(
                lambda: az_v.resource_group_name(
                    p.store, "model.source_resource_group", source_group
                )
            )

    def source_preflight(self, spec: Spec[AzureArgs], cluster: AksCluster, facts: Any) -> None:
        """The seed Job reads an ``az://`` source with an AKS workload identity: the cluster
        needs its OIDC issuer and the workload identity webhook, checked before anything
        registers (the blob store needs them anyway; the Files store only for this)."""
        cluster.facts(spec.common.name, require_oidc_issuer, require_workload_identity)

    def source_access(
        self,
        spec: Spec[AzureArgs],
        cluster: AksCluster,
        facts: Placement,
        source_facts: Any,
        access: Access,
    ) -> SourceGrant:
        """Storage Blob Data Reader on the ``az://`` source's container (in
        ``model.source_resource_group``, default the store's group, of the cluster's
        subscription) for the seed Job alone: a role assignment for the loader namespace's
        consumer identity where the store gives its consumers identities (Blob), else a
        user-assigned identity of the seed Job's own (Files NFS), federated with the loader's
        ``<claim>-seed`` service account only, which the store makes and the seed Job runs
        as."""
        c, f = spec.common, facts.facts
        m = c.model
        assert m is not None and c.loader is not None and f.oidc_issuer_url is not None
        source = parse_source(m.source)
        scope = ident.container_scope(
            f.subscription_id,
            m.source_resource_group or facts.resource_group,
            source.location,
            source.container,
        )
        granted = access.by_namespace.get(c.loader)
        identity = granted.resources.get("identity") if granted is not None else None
        if identity is not None:
            assignment = ident.role_assignment(
                f"{c.name}-seed-source",
                principal_id=identity.principal_id,
                role=ident.STORAGE_BLOB_DATA_READER,
                scope=scope,
                subscription_id=f.subscription_id,
                name_parts=(c.name, "seed-source"),
                parent=self,
            )
            return SourceGrant(ready=[assignment])
        account = Consumer(c.loader, False, seed_service_account(c.claim_name))
        grant = self.identity_grant(
            spec, facts, "seed", [account], ident.STORAGE_BLOB_DATA_READER, scope
        )
        return SourceGrant(
            ready=grant.ready, account=account, grant=grant, pod_labels={ident.USE_LABEL: "true"}
        )

    def identity_grant(
        self,
        spec: Spec[AzureArgs],
        facts: Placement,
        key: str,
        consumers: Sequence[Consumer],
        role: str,
        scope: str,
        scope_ready: Sequence[pulumi.Resource] = (),
    ) -> Grant:
        """:func:`identity.grant` of ``role`` on ``scope`` to ``consumers`` under ``key``, in
        the store's placement: its subscription, resource group and region, the cluster's OIDC
        issuer (``require_oidc_issuer`` checked it) and the store's tags. ``scope_ready``
        (default: none): what must exist before the role is assigned on ``scope``."""
        f = facts.facts
        assert f.oidc_issuer_url is not None  # require_oidc_issuer
        return ident.grant(
            key,
            store=spec.common.name,
            consumers=consumers,
            role=role,
            scope=scope,
            subscription_id=f.subscription_id,
            resource_group_name=facts.resource_group,
            location=facts.region,
            issuer=f.oidc_issuer_url,
            tags=self.tags(spec),
            parent=self,
            scope_ready=scope_ready,
        )

    @staticmethod
    def tags(spec: Spec[AzureModelStoreArgs]) -> dict[str, str]:
        """Azure tags for the store's resources: the user's, then the store's own."""
        return {
            **(spec.args.get("tags") or {}),
            STORE_TAG: spec.common.name,
            MANAGED_BY_TAG: MANAGED_BY,
        }

    @staticmethod
    def shared_tags(spec: Spec[AzureModelStoreArgs]) -> dict[str, str]:
        """Tags of what the cluster's stores share (a private DNS zone and its links): the
        user's and ``managed-by``, no one store's."""
        return {**(spec.args.get("tags") or {}), MANAGED_BY_TAG: MANAGED_BY}

    def place(
        self,
        spec: Spec[AzureArgs],
        cluster: AksCluster,
        opts: Opts,
        service: net.StorageService,
        *,
        allow_all_networks: bool = False,
    ) -> Placement:
        """The store's cluster facts, :meth:`region`, :meth:`resource_group`, storage account
        (``storage_account_name``, else a name derived from the subscription, the group and the
        store) and the account's network for ``service`` (``network.plan_network``; every
        network only with ``allow_all_networks``)."""
        args: Mapping[str, Any] = spec.args
        name = spec.common.name
        facts = cluster.facts(name)
        region = self.region(spec, facts)
        group = self.resource_group(spec, facts)
        network = net.plan_network(
            name,
            args,
            cluster,
            facts,
            group,
            region,
            service,
            opts,
            allow_all_networks=allow_all_networks,
        )
        account = args.get("storage_account_name") or az_v.default_account_name(
            facts.subscription_id, group, name
        )
        return Placement(facts, region, group, account, network)

    def private_endpoint(
        self,
        spec: Spec[AzureArgs],
        cluster: AksCluster,
        facts: Placement,
        service: net.StorageService,
        account: Any,
    ) -> list[pulumi.Resource]:
        """The private endpoint of ``account`` (the store's storage account resource) for
        ``service`` and its DNS record, where the network plan has one (none otherwise): what a
        mount must wait for, since a mount before the private DNS record resolves reaches the
        public endpoint, which refuses it."""
        if not facts.network.private_endpoint:
            return []
        args: Mapping[str, Any] = spec.args
        return net.private_endpoint(
            self,
            spec.common.name,
            cluster,
            facts.network,
            service,
            account_id=account.id,
            subnet=args["private_endpoint_subnet_id"],
            zone_id=args.get("private_dns_zone_id"),
            resource_group=facts.resource_group,
            tags=self.tags(spec),
            shared_tags=self.shared_tags(spec),
        )

    @staticmethod
    def resource_group(spec: Spec[AzureModelStoreArgs], facts: AksClusterFacts) -> str:
        """The store's resource group: ``resource_group_name``, never the cluster's node
        resource group (AKS deletes it, and the store's account and model in it, with the
        cluster), else the cluster's resource group."""
        given = spec.args.get("resource_group_name")
        node_group = facts.node_resource_group_name()
        # ARM compares resource group names without regard to case.
        if isinstance(given, str) and given.lower() == node_group.lower():
            raise ModelStoreInputError(
                spec.common.name,
                "resource_group_name",
                given,
                f"a resource group other than cluster {facts.name}'s node resource group "
                f"{node_group} (AKS manages that group and deletes it with the cluster, and the "
                "store's storage account and model with it)",
            )
        return str(given or facts.resource_group_name)

    @staticmethod
    def region(spec: Spec[AzureModelStoreArgs], facts: AksClusterFacts) -> str:
        """The store's region: ``region``, which must be the cluster's unless allowed."""
        given = spec.args.get("region")
        if given is not None and given != facts.location and not spec.args["allow_other_region"]:
            raise ModelStoreInputError(
                spec.common.name,
                "region",
                given,
                f"the cluster's region {facts.location} (every read would cross regions), or "
                "set allow_other_region",
            )
        return str(given or facts.location)
