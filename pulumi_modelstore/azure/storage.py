"""The storage account baseline every Azure store starts from, in one place: TLS 1.2 at least,
no anonymous blob access, no cross-tenant object replication, OAuth by default in the portal,
infrastructure (double) encryption on request. Each store adds its kind, SKU, transport and
network rules."""

from collections.abc import Sequence
from typing import Any

from ..errors import ModelStoreInputError
from ..fields import Parser
from . import validation as az_v

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


def metadata_marks(marks: dict[str, str]) -> dict[str, str]:
    """Opt-out marks (``ModelStore.opt_out_marks``) as a container's or share's metadata, whose
    names must be C# identifiers (learn.microsoft.com/rest/api/storageservices/naming-and-
    referencing-containers--blobs--and-metadata, "Metadata names"): dashes become underscores."""
    return {key.replace("-", "_"): value for key, value in marks.items()}


# ---- the rules every store with a new-or-existing account keeps ------------------------------


def existing_account_named(store: str, create: bool, name: Any) -> None:
    if not create and name is None:
        raise ModelStoreInputError(
            store,
            "storage_account_name",
            None,
            "the existing account's name when create_storage_account is false",
        )


def new_account_only(store: str, field: str, value: Any, create: bool) -> None:
    """Settings of a new account: an existing one is left alone."""
    if not create:
        raise ModelStoreInputError(
            store,
            field,
            value,
            "unset when create_storage_account is false (the store leaves the existing "
            "account's settings alone)",
        )


def account_rules(p: Parser, new_account_fields: Sequence[str]) -> None:
    """``storage_account_name`` a valid name, given when the account exists, and the
    ``new_account_fields`` (settings of a new account) unset for an existing one."""
    p.field_rule(az_v.storage_account_name, "storage_account_name")
    p.rule(existing_account_named, "create_storage_account", "storage_account_name")
    for name in new_account_fields:
        if name in p:
            p.rule(
                lambda store, value, create, n=name: new_account_only(store, n, value, create),
                name,
                "create_storage_account",
            )
