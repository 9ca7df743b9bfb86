"""Azure placeholders: data source answers (an AKS cluster with the OIDC issuer, workload
identity and both storage CSI drivers on, a system-assigned control plane identity, its nodes
in one subnet; the client's subscription
and tenant) and the outputs of created Azure resources. Tests answer otherwise through
overrides."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from .registry import ID_MAKERS, INVOKES, Created, digest, outputs_of

DEFAULT_AZURE_LOCATION = "eastus"


def _guid(*parts: str) -> str:
    return str(uuid.UUID(digest(*parts, length=32)))


def subscription_id(config: Mapping[str, str]) -> str:
    return config.get("azure-native:subscriptionId") or _guid("subscription")


def tenant_id(config: Mapping[str, str]) -> str:
    return config.get("azure-native:tenantId") or _guid("tenant")


def _location(config: Mapping[str, str]) -> str:
    return config.get("azure-native:location") or DEFAULT_AZURE_LOCATION


def _managed_cluster(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    name = str(args.get("resourceName", "cluster"))
    group = str(args.get("resourceGroupName", "rg"))
    sub = subscription_id(config)
    location = _location(config)
    subnet = (
        f"/subscriptions/{sub}/resourceGroups/{group}/providers/Microsoft.Network/"
        f"virtualNetworks/{name}-vnet/subnets/{name}-nodes"
    )
    issuer = f"https://{location}.oic.prod-aks.azure.com/{tenant_id(config)}/{_guid('oidc', name)}/"
    return {
        "id": (
            f"/subscriptions/{sub}/resourceGroups/{group}/providers/"
            f"Microsoft.ContainerService/managedClusters/{name}"
        ),
        "name": name,
        "location": location,
        "kubernetesVersion": "1.34",
        "currentKubernetesVersion": "1.34.2",
        "nodeResourceGroup": f"MC_{group}_{name}_{location}",
        # The control plane's system-assigned identity (AKS's default).
        "identity": {
            "type": "SystemAssigned",
            "principalId": _guid("control-plane", group, name),
            "tenantId": tenant_id(config),
        },
        "oidcIssuerProfile": {"enabled": True, "issuerURL": issuer},
        "securityProfile": {"workloadIdentity": {"enabled": True}},
        "storageProfile": {
            "blobCSIDriver": {"enabled": True},
            "diskCSIDriver": {"enabled": True},
            "fileCSIDriver": {"enabled": True},
            "snapshotController": {"enabled": True},
        },
        "agentPoolProfiles": [
            {"name": "system", "mode": "System", "vnetSubnetID": subnet},
            {"name": "gpu", "mode": "User", "vnetSubnetID": subnet},
        ],
    }


def _client_config(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {
        "clientId": _guid("client"),
        "objectId": _guid("object"),
        "subscriptionId": subscription_id(config),
        "tenantId": tenant_id(config),
    }


INVOKES.update(
    {
        "azure-native:containerservice:getManagedCluster": _managed_cluster,
        "azure-native:authorization:getClientConfig": _client_config,
    }
)


def arm_id(r: Created, provider: str, name_input: str, parent: str = "") -> str:
    """An ARM id: ``/subscriptions/<sub>/resourceGroups/<rg>/providers/<provider>/<name>``."""
    name = r.autoname(r.inputs.get(name_input))
    group = r.inputs.get("resourceGroupName", "rg")
    return (
        f"/subscriptions/{subscription_id(r.config)}/resourceGroups/{group}/providers/"
        f"{provider}/{parent}{name}"
    )


ID_MAKERS.update(
    {
        "azure-native:storage:StorageAccount": lambda r: arm_id(
            r, "Microsoft.Storage/storageAccounts", "accountName"
        ),
        "azure-native:managedidentity:UserAssignedIdentity": lambda r: arm_id(
            r, "Microsoft.ManagedIdentity/userAssignedIdentities", "resourceName"
        ),
        "azure-native:storage:BlobContainer": lambda r: arm_id(
            r,
            "Microsoft.Storage/storageAccounts",
            "containerName",
            f"{r.inputs.get('accountName', 'account')}/blobServices/default/containers/",
        ),
        "azure-native:storage:BlobServiceProperties": lambda r: arm_id(
            r,
            "Microsoft.Storage/storageAccounts",
            "blobServicesName",
            f"{r.inputs.get('accountName', 'account')}/blobServices/",
        ),
        "azure-native:managedidentity:FederatedIdentityCredential": lambda r: arm_id(
            r,
            "Microsoft.ManagedIdentity/userAssignedIdentities",
            "federatedIdentityCredentialResourceName",
            f"{r.inputs.get('resourceName', 'identity')}/federatedIdentityCredentials/",
        ),
        "azure-native:authorization:RoleAssignment": lambda r: (
            f"{r.inputs.get('scope', '')}/providers/Microsoft.Authorization/roleAssignments/"
            f"{r.inputs.get('roleAssignmentName') or _guid('role-assignment', r.urn)}"
        ),
    }
)


@outputs_of("azure-native:storage:StorageAccount")
def _storage_account(r: Created) -> dict[str, Any]:
    name = r.autoname(r.inputs.get("accountName"))
    return {
        "name": name,
        "primaryEndpoints": {
            "blob": f"https://{name}.blob.core.windows.net/",
            "file": f"https://{name}.file.core.windows.net/",
        },
    }


@outputs_of("azure-native:managedidentity:UserAssignedIdentity")
def _identity(r: Created) -> dict[str, Any]:
    return {
        "name": r.autoname(r.inputs.get("resourceName")),
        "clientId": _guid("client-id", r.urn),
        "principalId": _guid("principal-id", r.urn),
        "tenantId": tenant_id(r.config),
    }


@outputs_of("azure-native:storage:BlobContainer")
def _blob_container(r: Created) -> dict[str, Any]:
    return {"name": r.autoname(r.inputs.get("containerName"))}


@outputs_of("azure-native:authorization:RoleAssignment")
def _role_assignment(r: Created) -> dict[str, Any]:
    return {"name": r.inputs.get("roleAssignmentName") or _guid("role-assignment", r.urn)}


# ---- Azure Files NFS: subnets with the storage service endpoint, shares, private endpoints -----


def _subnet(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """A subnet with the cross-region storage service endpoint (what a VNet rule needs)."""
    group = str(args.get("resourceGroupName", "rg"))
    vnet = str(args.get("virtualNetworkName", "vnet"))
    name = str(args.get("subnetName", "subnet"))
    return {
        "id": (
            f"/subscriptions/{subscription_id(config)}/resourceGroups/{group}/providers/"
            f"Microsoft.Network/virtualNetworks/{vnet}/subnets/{name}"
        ),
        "name": name,
        "addressPrefix": "10.224.0.0/16",
        "serviceEndpoints": [
            {
                "service": "Microsoft.Storage.Global",
                "locations": ["*"],
                "provisioningState": "Succeeded",
            }
        ],
    }


INVOKES["azure-native:network:getSubnet"] = _subnet


ID_MAKERS.update(
    {
        "azure-native:storage:FileShare": lambda r: arm_id(
            r,
            "Microsoft.Storage/storageAccounts",
            "shareName",
            f"{r.inputs.get('accountName', 'account')}/fileServices/default/shares/",
        ),
        "azure-native:network:PrivateEndpoint": lambda r: arm_id(
            r, "Microsoft.Network/privateEndpoints", "privateEndpointName"
        ),
        "azure-native:privatedns:PrivateZone": lambda r: arm_id(
            r, "Microsoft.Network/privateDnsZones", "privateZoneName"
        ),
    }
)


@outputs_of("azure-native:storage:FileShare")
def _file_share(r: Created) -> dict[str, Any]:
    return {"name": r.autoname(r.inputs.get("shareName"))}


@outputs_of("azure-native:network:PrivateEndpoint")
def _private_endpoint(r: Created) -> dict[str, Any]:
    return {"name": r.autoname(r.inputs.get("privateEndpointName"))}


@outputs_of("azure-native:privatedns:PrivateZone")
def _private_zone(r: Created) -> dict[str, Any]:
    return {"name": r.autoname(r.inputs.get("privateZoneName"))}


# ---- a cluster the program makes (AksCluster.from_cluster) --------------------------------------


@outputs_of("azure-native:containerservice:ManagedCluster")
def _created_managed_cluster(r: Created) -> dict[str, Any]:
    """What AKS reports of a cluster it made: its OIDC issuer (when the program turns it on),
    node resource group, control plane identity and API server name."""
    name = r.autoname(r.inputs.get("resourceName"))
    group = str(r.inputs.get("resourceGroupName", "rg"))
    location = str(r.inputs.get("location") or _location(r.config))
    issuer = (
        f"https://{location}.oic.prod-aks.azure.com/{tenant_id(r.config)}/{_guid('oidc', name)}/"
    )
    oidc = dict(r.inputs.get("oidcIssuerProfile") or {})
    return {
        "name": name,
        "fqdn": f"{name}-{digest('fqdn', r.urn, length=8)}.hcp.{location}.azmk8s.io",
        "nodeResourceGroup": r.inputs.get("nodeResourceGroup") or f"MC_{group}_{name}_{location}",
        "oidcIssuerProfile": {**oidc, "issuerURL": issuer} if oidc.get("enabled") else oidc,
        "identity": {
            **dict(r.inputs.get("identity") or {"type": "SystemAssigned"}),
            "principalId": _guid("control-plane", group, name),
            "tenantId": tenant_id(r.config),
        },
    }


def _user_credentials(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """The user kubeconfig of a cluster (base64, as AKS gives it)."""
    import base64
    import json

    name = str(args.get("resourceName", "cluster"))
    server = f"https://{name}.hcp.{_location(config)}.azmk8s.io:443"
    kubeconfig = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": server}}],
            "users": [{"name": f"clusterUser_{name}", "user": {"exec": {"command": "kubelogin"}}}],
        }
    )
    return {
        "kubeconfigs": [
            {"name": "clusterUser", "value": base64.b64encode(kubeconfig.encode()).decode()}
        ]
    }


INVOKES["azure-native:containerservice:listManagedClusterUserCredentials"] = _user_credentials


@outputs_of("azure-native:resources:ResourceGroup")
def _resource_group(r: Created) -> dict[str, Any]:
    """A resource group is known by the name it is given (or its auto-name)."""
    return {"name": r.autoname(r.inputs.get("resourceGroupName"))}
