"""What belongs to one AKS cluster, shared by the model stores on it: its facts from
``azure_native.containerservice.get_managed_cluster`` (and the subscription from
``authorization.get_client_config``), looked up once, and the preflight checks that fail a
preview instead of a pod mount.

FACTS (Azure): the blob CSI driver is OFF by default on AKS, the file CSI driver and the
snapshot controller on; workload identity needs the OIDC issuer and
``securityProfile.workloadIdentity``; in ``get_managed_cluster`` any of these sub-objects may be
absent (then AKS's default applies).
"""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Required, TypedDict

import pulumi
import pulumi_kubernetes as k8s
from pulumi.output import Unknown

from ..cluster import (
    CLUSTER_NAME_ALLOWED,
    ClusterScope,
    EntryRules,
    EntryValues,
    Opts,
    as_facts,
    lookup_failed,
    named_plainly,
    provider_of,
    require_feature,
)
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..validation import is_output
from . import validation as az_v


class AksClusterArgs(TypedDict, total=False):
    """The AKS cluster a program makes itself and gives its stores as ``cluster``: its name and
    resource group are required (a managed cluster's name is unique only within its resource
    group). An Azure store not given ``cluster`` names its cluster with the same fields
    (``AzureModelStoreArgs``); stores naming one cluster share one :class:`AksCluster`."""

    cluster_name: Required[str]
    """The AKS managed cluster whose nodes mount the stores; its facts (location, OIDC issuer,
    workload identity, CSI drivers, node subnets) are looked up once before deploy. Required."""
    cluster_resource_group_name: Required[str]
    """The resource group of the managed cluster (not its node resource group ``MC_...``).
    Required."""


@dataclass(frozen=True)
class AksClusterFacts:
    """What the Azure stores need to know of their cluster, checked before deploy."""

    name: str
    resource_group_name: str
    subscription_id: str
    tenant_id: str
    location: str
    oidc_issuer_url: str | None
    """The cluster's OIDC issuer URL; ``None`` when the issuer is off."""
    workload_identity: bool
    blob_csi: bool
    file_csi: bool
    snapshot_controller: bool
    node_subnet_ids: tuple[str, ...]
    """The distinct ``vnetSubnetID`` of the agent pools (empty with the managed VNet)."""
    node_resource_group: str = ""
    """The cluster's node resource group (``nodeResourceGroup``); empty when unknown, then
    AKS's default name applies (:meth:`node_resource_group_name`)."""
    kubernetes_version: str = ""
    """The control plane's Kubernetes version (``1.34.2``), which fixes the managed CSI driver
    versions AKS runs; empty when unknown."""
    control_plane_principal_id: str = ""
    """The principal (object) id of the cluster's control plane identity (``identity``:
    system-assigned ``principalId``, or the one user-assigned identity's), as which AKS's
    managed CSI drivers' controllers act on Azure; empty when the cluster has none (a service
    principal cluster) or it is unknown."""

    def node_resource_group_name(self) -> str:
        """The node resource group: ``nodeResourceGroup``, else AKS's default
        ``MC_<resource group>_<cluster>_<region>``. AKS creates and manages it and deletes it
        with the cluster (learn.microsoft.com/azure/aks/faq, "Why are two resource groups
        created with AKS?")."""
        default = f"MC_{self.resource_group_name}_{self.name}_{self.location}"
        return self.node_resource_group or default

    def version_at_least(self, *minimum: int) -> bool:
        """Whether the control plane runs Kubernetes ``minimum`` (e.g. 1, 34) or later; an
        unknown version is not assumed to be recent."""
        found = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", self.kubernetes_version)
        if found is None:
            return False
        have = tuple(int(g or 0) for g in found.groups())
        return have[: len(minimum)] >= minimum


def _get(obj: Any, name: str, camel: str | None = None) -> Any:
    """A field of an invoke result, which arrives as a typed object or a plain mapping."""
    if obj is None:
        return None
    value = getattr(obj, name, None)
    if value is None and isinstance(obj, Mapping):
        value = obj.get(name, obj.get(camel) if camel else None)
    return value


def _switch(profile: Any, name: str, camel: str, default: bool) -> bool:
    """A ``{enabled: bool}`` sub-object: absent, or ``enabled`` unset, means AKS's default."""
    enabled = _get(_get(profile, name, camel), "enabled")
    return default if enabled is None else bool(enabled)


class AksCluster(ClusterScope[AksClusterFacts, AksClusterArgs], kind="aks"):
    """What belongs to one AKS cluster, shared by the model stores on it: its facts (looked up
    once), namespaces, the PV and claim names in use. Stores make it on first use from
    ``cluster_name`` and ``cluster_resource_group_name``; a program may make it itself and pass
    it as ``cluster``."""

    args_type = AksClusterArgs
    cloud_provider_package = "azure-native"
    entry = EntryRules(
        naming=("resource_group",),
        needed={
            "resource_group": "the AKS cluster's resource group (a cluster name is unique only "
            "within its resource group)"
        },
        store_fields={"cluster_name": "name", "cluster_resource_group_name": "resource_group"},
        facts_type=AksClusterFacts,
        from_entry=frozenset({"name", "resource_group_name"}),
    )

    @property
    def azure_provider(self) -> pulumi.ProviderResource | None:
        """The scope's azure-native provider (None: the default one); the scope's own Azure
        resources use it."""
        return self.cloud_provider

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.check(lambda: cluster_named(p.store, p["cluster_name"], p["cluster_resource_group_name"]))

    @classmethod
    def check_named(cls, store: str, args: Mapping[str, Any]) -> None:
        cluster_named(store, args.get("cluster_name"), args.get("cluster_resource_group_name"))

    @classmethod
    def fact_problem(cls, name: str, value: Any) -> tuple[Any, str] | None:
        return fact_problem(name, value)

    @classmethod
    def from_entry_values(
        cls, name: str, fields: EntryValues, attributes: EntryValues, opts: Opts, store: str
    ) -> "AksCluster":
        group = fields["resource_group"]
        facts = None
        if attributes:
            facts = AksClusterFacts(name=name, resource_group_name=group, **as_facts(attributes))
        args: AksClusterArgs = {"cluster_name": name, "cluster_resource_group_name": group}
        return cls(name, args, opts, store=store, facts=facts)

    @classmethod
    def from_cluster(
        cls,
        resource_name: str,
        cluster: Any,
        *,
        resource_group_name: str,
        location: str,
        node_subnet_ids: Sequence[pulumi.Input[str]] = (),
        node_pools: Sequence[pulumi.Resource] = (),
        kubernetes_version: str = "",
        kubeconfig: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> "AksCluster":
        """The scope of an AKS cluster this program makes (an azure-native
        ``containerservice.ManagedCluster``): nothing about the cluster is looked up (it does
        not exist before the first ``pulumi up``). Its OIDC issuer, node resource group and
        control plane identity are the created cluster's Outputs; its Kubernetes provider is
        made from the cluster's user credentials (``listManagedClusterUserCredentials``, once
        the cluster exists) unless ``kubeconfig`` is given, and every namespace and claim
        waits for ``node_pools`` (agent pools made apart from the cluster).

        ``resource_group_name`` and ``location``: as the cluster is given them, plain strings
        (stores make their accounts there and compare regions before deploy).
        ``node_subnet_ids``: the agent pools' subnets (``vnetSubnetID``), which storage
        accounts allow; default none (the AKS-managed network: give a private endpoint).
        ``kubernetes_version``: the version the control plane runs (``1.34.2``); default
        unknown, so what needs a newer one is refused. The preflight checks (OIDC issuer,
        workload identity, the blob and file CSI drivers) run on what the program declares:
        a declaration that fails fails the preview with the check's message; one not known
        before deploy is said in a warning."""
        import pulumi_azure_native as azure_native

        if not isinstance(cluster, azure_native.containerservice.ManagedCluster):
            raise ModelStoreInputError(
                resource_name,
                "cluster",
                cluster,
                "an azure-native containerservice.ManagedCluster made in this program (a "
                f"cluster made elsewhere: AksCluster({resource_name!r}, {{'cluster_name': ..., "
                "'cluster_resource_group_name': ...}))",
            )
        for field, value in (("resource_group_name", resource_group_name), ("location", location)):
            if not isinstance(value, str):
                raise ModelStoreInputError(
                    resource_name,
                    field,
                    "<Output>" if is_output(value) else value,
                    "a plain string, the one the cluster is given (known before deploy)",
                )
        invoke = pulumi.InvokeOptions(provider=provider_of(opts, "azure-native")) if opts else None
        client = azure_native.authorization.get_client_config(opts=invoke)
        if kubeconfig is None:
            kubeconfig = aks_kubeconfig(cluster, resource_group_name, invoke)
        kubernetes = provider_of(opts, "kubernetes")
        if kubernetes is None:
            kubernetes = k8s.Provider(
                f"{resource_name}-kubernetes",
                kubeconfig=kubeconfig,
                opts=pulumi.ResourceOptions(
                    parent=opts.parent if opts is not None else None,
                    depends_on=[cluster, *node_pools],
                ),
            )
        facts = AksClusterFacts(
            name=resource_name,
            resource_group_name=resource_group_name,
            subscription_id=str(client.subscription_id),
            tenant_id=str(client.tenant_id),
            location=location,
            oidc_issuer_url=cluster.oidc_issuer_profile.apply(  # type: ignore[arg-type]
                lambda p: p.issuer_url if p is not None else None
            ),
            workload_identity=True,
            blob_csi=True,
            file_csi=True,
            snapshot_controller=True,
            node_subnet_ids=tuple(node_subnet_ids),  # type: ignore[arg-type]
            node_resource_group=cluster.node_resource_group,  # type: ignore[arg-type]
            kubernetes_version=kubernetes_version,
            control_plane_principal_id=cluster.identity.apply(  # type: ignore[arg-type]
                _created_principal
            ),
        )
        scope_opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(providers=[kubernetes])
        )
        args: AksClusterArgs = {
            "cluster_name": resource_name,
            "cluster_resource_group_name": resource_group_name,
        }
        scope = cls(resource_name, args, scope_opts, facts=facts)
        scope.created = cluster
        scope.node_groups = (cluster, *node_pools)
        return scope

    def facts(self, store: str, *needs: Callable[[str, AksClusterFacts], None]) -> AksClusterFacts:
        """As every scope's; on a cluster this program makes, each need is checked on what the
        program declares for the cluster (:func:`check_declared`), once per cluster."""
        facts = super().facts(store)
        for need in needs:
            if self.created is None:
                need(store, facts)
            elif need not in self._checked:
                self._checked.add(need)
                check_declared(self, store, need)
        return facts

    @property
    def name(self) -> Any:
        """The AKS cluster's name (an Output for a cluster this program makes)."""
        if self.created is not None:
            return self.created.name
        return str(self._given["cluster_name"])

    @property
    def resource_group_name(self) -> str:
        return str(self._given["cluster_resource_group_name"])

    def _look_up(self, store: str) -> AksClusterFacts:
        import pulumi_azure_native as azure_native

        o = self._invoke_opts
        try:
            cluster = azure_native.containerservice.get_managed_cluster(
                resource_group_name=self.resource_group_name, resource_name=self.name, opts=o
            )
        except Exception as exc:  # the data source's own words say why (not found, denied)
            where = f"an AKS cluster in resource group {self.resource_group_name}"
            raise lookup_failed(store, self.name, where, exc) from exc
        client = self.lookup(
            ("azure-client-config",),
            lambda: azure_native.authorization.get_client_config(opts=o),
        )
        oidc = _get(cluster, "oidc_issuer_profile", "oidcIssuerProfile")
        issuer = _get(oidc, "issuer_url", "issuerURL") if _get(oidc, "enabled") else None
        security = _get(cluster, "security_profile", "securityProfile")
        storage = _get(cluster, "storage_profile", "storageProfile")
        subnets: list[str] = []
        for pool in _get(cluster, "agent_pool_profiles", "agentPoolProfiles") or []:
            subnet = _get(pool, "vnet_subnet_id", "vnetSubnetID")
            if subnet and subnet not in subnets:
                subnets.append(str(subnet))
        return AksClusterFacts(
            name=self.name,
            resource_group_name=self.resource_group_name,
            subscription_id=str(client.subscription_id),
            tenant_id=str(client.tenant_id),
            location=str(_get(cluster, "location")),
            oidc_issuer_url=str(issuer) if issuer else None,
            workload_identity=_switch(security, "workload_identity", "workloadIdentity", False),
            # AKS's defaults when the sub-object is absent: blob off, file and snapshots on.
            blob_csi=_switch(storage, "blob_csi_driver", "blobCSIDriver", False),
            file_csi=_switch(storage, "file_csi_driver", "fileCSIDriver", True),
            snapshot_controller=_switch(storage, "snapshot_controller", "snapshotController", True),
            node_subnet_ids=tuple(subnets),
            node_resource_group=str(
                _get(cluster, "node_resource_group", "nodeResourceGroup") or ""
            ),
            kubernetes_version=str(
                _get(cluster, "current_kubernetes_version", "currentKubernetesVersion")
                or _get(cluster, "kubernetes_version", "kubernetesVersion")
                or ""
            ),
            control_plane_principal_id=_control_plane_principal(_get(cluster, "identity")),
        )


def _created_principal(identity: Any) -> str:
    """:func:`_control_plane_principal` of a created cluster's ``identity`` Output (a typed
    object, read by its attributes)."""
    if identity is None:
        return ""
    principal = getattr(identity, "principal_id", None)
    users = getattr(identity, "user_assigned_identities", None) or {}
    found = [getattr(user, "principal_id", None) for user in users.values()]
    return str(principal or (found[0] if len(found) == 1 else "") or "")


def _control_plane_principal(identity: Any) -> str:
    """The control plane identity's principal id: the system-assigned one's, else the one
    user-assigned identity's (AKS takes one: ``ManagedClusterIdentity.userAssignedIdentities``);
    empty without a managed identity."""
    principal = _get(identity, "principal_id", "principalId")
    if not principal:
        users = _get(identity, "user_assigned_identities", "userAssignedIdentities")
        found = [
            _get(user, "principal_id", "principalId")
            for user in (users.values() if isinstance(users, Mapping) else ())
        ]
        principal = found[0] if len(found) == 1 else None
    return str(principal or "")


# ---- facts given as values (config attributes, a platform stack's outputs) ------------------

_KUBERNETES_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")
_FACT_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "subscription_id": (az_v.is_guid, f"the cluster's subscription id, {az_v.GUID_RULE}"),
    "tenant_id": (az_v.is_guid, f"the cluster's tenant id, {az_v.GUID_RULE}"),
    "location": (az_v.is_location, f"the cluster's region, {az_v.LOCATION_RULE}"),
    "oidc_issuer_url": (
        lambda v: v is None or (isinstance(v, str) and v.startswith("https://")),
        "the cluster's OIDC issuer URL (https://...), or null when the issuer is off",
    ),
    "node_subnet_ids": (az_v.is_subnet_id, az_v.SUBNET_ID_RULE),
    "node_resource_group": (
        lambda v: v == "" or az_v.is_resource_group_name(v),
        az_v.RESOURCE_GROUP_RULE,
    ),
    "kubernetes_version": (
        lambda v: v == "" or (isinstance(v, str) and _KUBERNETES_VERSION.fullmatch(v) is not None),
        "a Kubernetes version as AKS reports it (1.34 or 1.34.2)",
    ),
    "control_plane_principal_id": (
        lambda v: v == "" or az_v.is_guid(v),
        f"the principal id of the cluster's control plane identity, {az_v.GUID_RULE}",
    ),
}


def fact_problem(name: str, value: Any) -> tuple[Any, str] | None:
    """What is wrong with the AKS fact ``name`` given as ``value`` (already of the right type):
    the offending value (one item of a list) and what is allowed, or None. A lookup would have
    found what AKS reports; a value given by hand is held to the same shape, or a store would
    plan on it and Azure refuse the ids built from it (or a subnet lookup fail)."""
    rule = _FACT_RULES.get(name)
    if rule is None:
        return None
    check, allowed = rule
    for item in value if name == "node_subnet_ids" else (value,):
        if not check(item):
            return item, allowed
    return None


_GROUP_ALLOWED = (
    "the AKS cluster's resource group, a plain string (a cluster name is unique only within its "
    "resource group)"
)


CREATED_CLUSTER_NAME = (
    "the name of an existing AKS cluster, a plain string (it is looked up before deploy); for "
    "a cluster this program makes, give cluster=AksCluster.from_cluster('<name>', <the "
    "cluster>, resource_group_name=..., location=...)"
)
"""What ``cluster_name`` takes, said where an Output (a cluster this program makes) is given."""


def cluster_named(store: str, cluster_name: Any, resource_group: Any) -> None:
    """An Azure store names its cluster and the cluster's resource group (a managed cluster's
    name is unique only within its resource group), or joins a scope given as ``cluster``. A
    name still an Output is a cluster this program makes: refused, naming
    :meth:`AksCluster.from_cluster`."""
    if is_output(cluster_name):
        raise ModelStoreInputError(store, "cluster_name", "<Output>", CREATED_CLUSTER_NAME)
    named_plainly(store, "cluster_name", cluster_name, CLUSTER_NAME_ALLOWED.format("AKS"))
    named_plainly(store, "cluster_resource_group_name", resource_group, _GROUP_ALLOWED)


# ---- preflight: one named check per fact a store depends on ----------------------------------


def require_oidc_issuer(store: str, facts: AksClusterFacts) -> None:
    """Federated credentials trust the cluster's OIDC issuer: without it no pod token is
    exchanged for an Entra ID token."""
    require_feature(
        store,
        facts.name,
        facts.oidc_issuer_url,
        "a cluster with the OIDC issuer on (oidcIssuerProfile.enabled; see azure.cluster_settings)",
    )


def require_workload_identity(store: str, facts: AksClusterFacts) -> None:
    """The workload identity webhook projects the service account token the mount exchanges."""
    require_feature(
        store,
        facts.name,
        facts.workload_identity,
        "a cluster with workload identity on (securityProfile.workloadIdentity.enabled; see "
        "azure.cluster_settings)",
    )


def require_blob_csi_driver(store: str, facts: AksClusterFacts) -> None:
    """The blob CSI driver is an AKS add-on, off by default."""
    require_feature(
        store,
        facts.name,
        facts.blob_csi,
        "a cluster with the blob CSI driver on (storageProfile.blobCSIDriver.enabled, off "
        "by default on AKS; see azure.cluster_settings)",
    )


def require_file_csi_driver(store: str, facts: AksClusterFacts) -> None:
    """The Azure Files CSI driver is on by default on AKS, but a cluster may turn it off."""
    require_feature(
        store,
        facts.name,
        facts.file_csi,
        "a cluster with the Azure Files CSI driver on (storageProfile.fileCSIDriver.enabled; "
        "see azure.cluster_settings)",
    )


def require_control_plane_identity_for_dynamic_claims(store: str, facts: AksClusterFacts) -> None:
    """AKS's managed Azure Files CSI driver creates a dynamic claim's share as the cluster's
    control plane identity, which the store grants on its account: a cluster without one
    (a service principal cluster), or whose facts do not name it, cannot be granted."""
    if not facts.control_plane_principal_id:
        raise ModelStoreInputError(
            store,
            "dynamic_claims",
            True,
            f"false on cluster {facts.name}, whose control plane has no managed identity the "
            "store can grant Storage Account Contributor on its storage account (the AKS "
            "Azure Files CSI driver's controller creates each claim's share as that "
            "identity): use a cluster with a system- or user-assigned identity, or give the "
            "cluster's control_plane_principal_id",
        )


def cluster_settings() -> dict[str, Any]:
    """What a platform stack merges into its own
    ``azure_native.containerservice.ManagedCluster`` args for model stores: both storage CSI
    drivers and the snapshot controller, the OIDC issuer and workload identity."""
    return {
        "storage_profile": {
            "blob_csi_driver": {"enabled": True},
            "file_csi_driver": {"enabled": True},
            "snapshot_controller": {"enabled": True},
        },
        "oidc_issuer_profile": {"enabled": True},
        "security_profile": {"workload_identity": {"enabled": True}},
    }


# ---- a cluster this program makes (AksCluster.from_cluster) ---------------------------------

# need -> (the ManagedCluster output it reads, the path to its switch, AKS's default when the
# switch is left out). A preview gives a created resource's declared inputs as its outputs.
_DECLARED: dict[Any, tuple[str, tuple[str, ...], bool]] = {
    require_oidc_issuer: ("oidc_issuer_profile", ("enabled",), False),
    require_workload_identity: ("security_profile", ("workload_identity", "enabled"), False),
    require_blob_csi_driver: ("storage_profile", ("blob_csi_driver", "enabled"), False),
    require_file_csi_driver: ("storage_profile", ("file_csi_driver", "enabled"), True),
}


def check_declared(scope: AksCluster, store: str, need: Any) -> None:
    """Check ``need`` on what the program declares for its cluster (``scope.created``): read
    back in the preview, a declaration that fails fails the preview with the need's own
    message; one not known before deploy is said in a warning (once per cluster)."""
    declared = _DECLARED.get(need)
    if declared is None:
        return
    output, path, default = declared
    what = ".".join((output, *path))

    def check(value: Any) -> None:
        for key in path:
            if value is None or isinstance(value, Unknown):
                break
            value = _get(value, key)
        if isinstance(value, Unknown):
            scope.warn_once(
                ("unknown", what),
                f"cluster {scope.scope_name!r} is made in this program and its {what} is not "
                "known before deploy: not checked",
            )
            return
        on = default if value is None else bool(value)
        facts = scope.facts(store)
        need(store, _switched(facts, need, on))

    getattr(scope.created, output).apply(check, run_with_unknowns=True)


def _switched(facts: AksClusterFacts, need: Any, on: bool) -> AksClusterFacts:
    """``facts`` with the switch ``need`` reads set to ``on`` (the declared value)."""
    import dataclasses

    field = {
        require_oidc_issuer: "oidc_issuer_url",
        require_workload_identity: "workload_identity",
        require_blob_csi_driver: "blob_csi",
        require_file_csi_driver: "file_csi",
    }[need]
    value: Any = on if field != "oidc_issuer_url" else ("https://declared" if on else None)
    return dataclasses.replace(facts, **{field: value})


def aks_kubeconfig(
    cluster: Any, resource_group_name: str, invoke: pulumi.InvokeOptions | None
) -> pulumi.Output[str]:
    """The cluster's user kubeconfig (``listManagedClusterUserCredentials``), asked once the
    cluster exists (the invoke takes its name as an Output, so it waits for it)."""
    import pulumi_azure_native as azure_native

    credentials = azure_native.containerservice.list_managed_cluster_user_credentials_output(
        resource_group_name=resource_group_name, resource_name=cluster.name, opts=invoke
    )
    return credentials.kubeconfigs.apply(lambda found: base64.b64decode(found[0].value).decode())
