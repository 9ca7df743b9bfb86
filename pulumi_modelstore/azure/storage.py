"""The storage account baseline every Azure store starts from, in one place: TLS 1.2 at least,
no anonymous blob access, no cross-tenant object replication, OAuth by default in the portal,
infrastructure (double) encryption on request. Each store adds its kind, SKU, transport and
network rules."""

from typing import Any

MINIMUM_TLS_VERSION = "TLS1_2"


def account_baseline(
    *, infrastructure_encryption: bool, services: tuple[str, ...]
) -> dict[str, Any]:
    """``azure_native.storage.StorageAccount`` args shared by every store's account.
    ``services``: the data services the account serves (``blob``, ``file``), encrypted with
    Microsoft-managed keys; infrastructure encryption can only be chosen at creation (ARM
    replaces the account to change it)."""
    return {
        "minimum_tls_version": MINIMUM_TLS_VERSION,
        "allow_blob_public_access": False,
        "allow_cross_tenant_replication": False,
        "default_to_o_auth_authentication": True,
        "encryption": {
            "key_source": "Microsoft.Storage",
            "require_infrastructure_encryption": infrastructure_encryption,
            "services": {s: {"enabled": True, "key_type": "Account"} for s in services},
        },
    }
