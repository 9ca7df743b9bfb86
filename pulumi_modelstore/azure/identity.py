"""AKS workload identity for the Azure stores: user-assigned managed identities, a federated
credential per Kubernetes service account, and role assignments with deterministic names.

FACTS (Azure, identity), confirmed against Entra's docs
(MicrosoftDocs/entra-docs docs/workload-id/workload-identity-federation-considerations.md):
- a federated credential trusts the cluster's OIDC issuer for subject
  ``system:serviceaccount:<ns>:<sa>`` with exactly one audience ``api://AzureADTokenExchange``;
- "A maximum of 20 federated identity credentials can be added to an application or
  user-assigned managed identity";
- concurrent writes of federated credentials under one identity are refused (409 Conflict):
  they are created one after another (each depends on the previous one);
- a role assignment's ``role_definition_id`` is the full
  ``/subscriptions/<sub>/providers/Microsoft.Authorization/roleDefinitions/<guid>``, and a
  fresh identity's ``principal_type`` must be given (``ServicePrincipal``), or ARM may not find
  the principal yet.
"""

# No `from __future__ import annotations`: signatures naming a provider SDK class quote it
# (keeps the SDK lazily loaded).

import hashlib
import re
import uuid
from collections.abc import Sequence
from typing import Any

import pulumi

from ..access import Consumer, Grant

AUDIENCE = "api://AzureADTokenExchange"
MAX_FEDERATED_CREDENTIALS = 20
CLIENT_ID_ANNOTATION = "azure.workload.identity/client-id"
USE_LABEL = "azure.workload.identity/use"

# Built-in role definition GUIDs (learn.microsoft.com/azure/role-based-access-control/
# built-in-roles/storage), the one place they are written.
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
STORAGE_ACCOUNT_CONTRIBUTOR = "17d1049b-9a84-46fb-8f53-869881c3d3ab"
STORAGE_ACCOUNT_KEY_OPERATOR = "81a9662b-bebf-436f-a333-f67b29880f12"
"""Storage Account Key Operator Service Role: list and regenerate keys, the narrowest built-in
role with ``Microsoft.Storage/storageAccounts/listkeys/action``."""
ROLE_NAMES = {
    STORAGE_BLOB_DATA_READER: "Storage Blob Data Reader",
    STORAGE_BLOB_DATA_CONTRIBUTOR: "Storage Blob Data Contributor",
    STORAGE_ACCOUNT_CONTRIBUTOR: "Storage Account Contributor",
    STORAGE_ACCOUNT_KEY_OPERATOR: "Storage Account Key Operator Service Role",
}
# Roles that can change data (directly, or by handing out a key that can).
WRITE_ROLES = frozenset(
    {STORAGE_BLOB_DATA_CONTRIBUTOR, STORAGE_ACCOUNT_CONTRIBUTOR, STORAGE_ACCOUNT_KEY_OPERATOR}
)

# Names (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules):
# user-assigned identities 3-128 letters, digits, '-' and '_', starting with a letter or digit;
# federated credentials ^[a-zA-Z0-9][a-zA-Z0-9-_]{2,119}$ (Entra's considerations page).
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


def _name(text: str, limit: int) -> str:
    name = _NOT_NAME.sub("-", text).strip("-_")
    if len(name) > limit:
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        name = f"{name[: limit - 9].rstrip('-_')}-{digest}"
    return name


def identity_name(store: str, key: str) -> str:
    """A user-assigned identity's name for ``key`` (``readers``, ``writers`` or a
    namespace) of ``store``."""
    return _name(f"{store}-{key}", 128)


def credential_name(namespace: str, service_account: str) -> str:
    """A federated credential's name, unique per namespace and service account."""
    return _name(f"{namespace}-{service_account}", 120)


def subject(namespace: str, service_account: str) -> str:
    return f"system:serviceaccount:{namespace}:{service_account}"


def role_definition_id(subscription_id: str, role: str) -> str:
    return (
        f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{role}"
    )


def assignment_name(*parts: str) -> str:
    """A role assignment's name (a GUID) from plan-time strings: the same on every preview, so
    ``pulumi up`` never replaces an assignment for a new random name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "\x1f".join(("pulumi-modelstore", *parts))))


def user_assigned_identity(
    resource_name: str,
    *,
    name: str,
    resource_group_name: str,
    location: str,
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> "Any":
    import pulumi_azure_native as azure_native

    return azure_native.managedidentity.UserAssignedIdentity(
        resource_name,
        resource_name_=name,
        resource_group_name=resource_group_name,
        location=location,
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def federated_credentials(
    resource_prefix: str,
    identity: Any,
    *,
    resource_group_name: str,
    issuer: str,
    service_accounts: Sequence[tuple[str, str]],
    parent: pulumi.Resource,
) -> dict[str, Any]:
    """A federated credential on ``identity`` for each ``(namespace, service account)``,
    created one after another (concurrent writes under one identity get 409). Namespace ->
    credential."""
    import pulumi_azure_native as azure_native

    if len(service_accounts) > MAX_FEDERATED_CREDENTIALS:  # refused at parse time already
        raise ValueError(f"{len(service_accounts)} federated credentials on one identity")
    made: dict[str, Any] = {}
    previous: Any = None
    for namespace, service_account in service_accounts:
        previous = azure_native.managedidentity.FederatedIdentityCredential(
            f"{resource_prefix}-{namespace}",
            resource_name_=identity.name,
            federated_identity_credential_resource_name=credential_name(namespace, service_account),
            resource_group_name=resource_group_name,
            issuer=issuer,
            subject=subject(namespace, service_account),
            audiences=[AUDIENCE],
            # One after another: ARM refuses concurrent credential writes on one identity
            # (order: one-credential-at-a-time).
            opts=pulumi.ResourceOptions(
                parent=parent, depends_on=[previous] if previous is not None else []
            ),
        )
        made[namespace] = previous
    return made


def container_scope(subscription_id: str, resource_group: str, account: str, container: str) -> str:
    """The ARM id of a blob container: the scope of a data role on it alone."""
    return (
        f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}/providers/"
        f"Microsoft.Storage/storageAccounts/{account}/blobServices/default/containers/{container}"
    )


def role_assignment(
    resource_name: str,
    *,
    principal_id: Any,
    role: str,
    scope: str,
    subscription_id: str,
    name_parts: Sequence[str],
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
) -> "Any":
    """``role`` (a GUID above) for a fresh user-assigned identity's principal on ``scope``."""
    import pulumi_azure_native as azure_native

    return azure_native.authorization.RoleAssignment(
        resource_name,
        role_assignment_name=assignment_name(scope, role, *name_parts),
        principal_id=principal_id,
        principal_type="ServicePrincipal",
        role_definition_id=role_definition_id(subscription_id, role),
        scope=scope,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
    )


def grant(
    key: str,
    *,
    store: str,
    consumers: Sequence[Consumer],
    role: str,
    scope: str,
    subscription_id: str,
    resource_group_name: str,
    location: str,
    issuer: str,
    tags: dict[str, str],
    parent: pulumi.Resource,
    scope_ready: Sequence[pulumi.Resource] = (),
) -> Grant:
    """A group of consumers' grant (``access.py``): a user-assigned identity of ``store`` for
    ``key`` (an access level or a namespace), a federated credential per consumer service
    account on it (one after another, at most 20), and ``role`` on ``scope`` (after
    ``scope_ready``: the scope must exist first). A mount waits for the role assignment and
    the credentials; the service accounts carry the identity's client id (for Azure SDKs)."""
    identity = user_assigned_identity(
        f"{store}-identity-{key}",
        name=identity_name(store, key),
        resource_group_name=resource_group_name,
        location=location,
        tags=tags,
        parent=parent,
    )
    credentials = federated_credentials(
        f"{store}-federated-{key}",
        identity,
        resource_group_name=resource_group_name,
        issuer=issuer,
        service_accounts=[(c.namespace, c.service_account) for c in consumers],
        parent=parent,
    )
    assignment = role_assignment(
        f"{store}-role-{key}",
        principal_id=identity.principal_id,
        role=role,
        scope=scope,
        subscription_id=subscription_id,
        name_parts=(store, key),
        parent=parent,
        depends_on=scope_ready,  # the scope exists first (order: scope-first)
    )
    return Grant(
        ready=[assignment, *credentials.values()],
        value=identity.client_id,
        service_account_annotations={CLIENT_ID_ANNOTATION: identity.client_id},
        resources={"identity": identity, "role_assignment": assignment},
    )
