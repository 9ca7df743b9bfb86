"""Azure value rules shared by the Azure stores. Like ``validation.py``'s, each skips Outputs
and matches whole strings."""

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from ..errors import ModelStoreInputError
from ..model import names
from ..validation import is_output

# Tags (learn.microsoft.com/azure/azure-resource-manager/management/tag-resources, "Limits"):
# at most 50 tag name/value pairs a resource; names at most 512 characters, 128 for storage
# accounts (every store's tags land on its storage account, so 128 here), values at most 256;
# names may not contain < > % & \ ? /.
MAX_TAGS = 50
MAX_TAG_NAME = 128
MAX_TAG_VALUE = 256
_TAG_NAME = re.compile(r"[^<>%&\\?/]{1,128}")
TAG_NAME_RULE = (
    f"Azure tag names (1-{MAX_TAG_NAME} characters, the storage account limit, without "
    "< > % & \\ ? /)"
)
TAG_VALUE_RULE = f"Azure tag values (at most {MAX_TAG_VALUE} characters)"


def tags(store: str, field: str, given: Mapping[str, Any], own: int) -> None:
    """The user's tags: valid names and values, and at most 50 on a resource counting the
    ``own`` tags the store adds."""
    for key, value in given.items():
        if not isinstance(key, str) or not _TAG_NAME.fullmatch(key):
            raise ModelStoreInputError(store, field, key, f"names that are {TAG_NAME_RULE}")
        if is_output(value):
            continue
        if not isinstance(value, str) or len(value) > MAX_TAG_VALUE:
            raise ModelStoreInputError(store, field, value, f"values that are {TAG_VALUE_RULE}")
    folded: dict[str, str] = {}
    for key in given:
        if str(key).lower() in folded:  # ARM compares tag names case-insensitively
            raise ModelStoreInputError(
                store,
                field,
                key,
                f"tag names distinct without regard to case (Azure treats it as "
                f"{folded[str(key).lower()]!r})",
            )
        folded[str(key).lower()] = str(key)
    if len(given) + own > MAX_TAGS:
        raise ModelStoreInputError(
            store,
            field,
            f"{len(given)} tags",
            f"at most {MAX_TAGS - own} tags (Azure allows {MAX_TAGS} a resource, and the store "
            f"adds {own} of its own)",
        )


# Storage account names: the one rule in ``model/names.py`` (learn.microsoft.com "Storage
# account name"), which the model section's az:// sources share.
ACCOUNT_NAME_RULE = names.AZURE_ACCOUNT_RULE


# Names the store writes into volume handles and role assignment scopes: an Output would be
# written there as Pulumi's "Calling __str__ on an Output" text, so they are known before deploy.
KNOWN = ", known before deploy (it is written into volume handles and role scopes)"


def storage_account_name(store: str, field: str, value: Any) -> None:
    if is_output(value):
        raise ModelStoreInputError(store, field, "<Output>", ACCOUNT_NAME_RULE + KNOWN)
    if not names.is_azure_account_name(value):
        raise ModelStoreInputError(store, field, value, ACCOUNT_NAME_RULE)


def default_account_name(*identity: str) -> str:
    """A deterministic storage account name for a new account: ``ms`` + the store name's
    letters and digits + 8 hex of a hash of what identifies the store (the name is global in
    Azure, so two stacks' stores of one name must not collide)."""
    letters = re.sub(r"[^a-z0-9]", "", identity[-1].lower())[:14]
    return "ms" + letters + hashlib.sha256("\x1f".join(identity).encode()).hexdigest()[:8]


# Container names: the one rule in ``model/names.py`` (learn.microsoft.com "Naming and
# referencing containers, blobs and metadata"), which az:// sources and Velero's container share.
CONTAINER_NAME_RULE = names.AZURE_CONTAINER_RULE

# File share names (learn.microsoft.com/rest/api/storageservices/naming-and-referencing-shares--
# directories--files--and-metadata): the same shape as container names.
SHARE_NAME_RULE = (
    "a file share name (3-63 lowercase letters, digits and '-', starting and ending with a "
    "letter or digit, no '--')"
)


def container_name(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not names.is_azure_container_name(value):
        raise ModelStoreInputError(store, field, value, CONTAINER_NAME_RULE)


def share_name(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not names.is_azure_container_name(value):
        raise ModelStoreInputError(store, field, value, SHARE_NAME_RULE)


# Resource group names: the one rule in ``model/names.py`` (Azure's resource name rules), which
# the model section's source_resource_group shares.
RESOURCE_GROUP_PATTERN = names.AZURE_RESOURCE_GROUP_PATTERN
RESOURCE_GROUP_RULE = names.AZURE_RESOURCE_GROUP_RULE
is_resource_group_name = names.is_azure_resource_group_name


def resource_group_name(store: str, field: str, value: Any) -> None:
    if is_output(value):
        raise ModelStoreInputError(store, field, "<Output>", RESOURCE_GROUP_RULE + KNOWN)
    if not is_resource_group_name(value):
        raise ModelStoreInputError(store, field, value, RESOURCE_GROUP_RULE)


# Azure region names as ARM spells them (eastus, westeurope, swedencentral): lowercase letters
# and digits; the display name ("East US") is not accepted by every API.
_LOCATION = re.compile(r"[a-z]+[a-z0-9]*")
LOCATION_RULE = "an Azure region name as ARM spells it (e.g. eastus, westeurope)"


def is_location(value: Any) -> bool:
    return isinstance(value, str) and _LOCATION.fullmatch(value) is not None


def location(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not is_location(value):
        raise ModelStoreInputError(store, field, value, LOCATION_RULE)


# Subscription and tenant ids are GUIDs.
GUID_PATTERN = r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
_GUID = re.compile(GUID_PATTERN)
GUID_RULE = "a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"


def is_guid(value: Any) -> bool:
    return isinstance(value, str) and _GUID.fullmatch(value) is not None


# A subnet's ARM id, the virtual network rule's and the private endpoint's target. Names
# (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules,
# Microsoft.Network): a virtual network 2-64 and a subnet 1-80 letters, digits, '_', '.' and
# '-', starting with a letter or digit and ending with a letter, digit or '_'; the resource
# group as above. ARM compares the fixed segments without regard to case.
_SUBNET_ID = re.compile(
    rf"/subscriptions/{GUID_PATTERN}/resourceGroups/{RESOURCE_GROUP_PATTERN}/providers/"
    r"Microsoft\.Network/virtualNetworks/[A-Za-z0-9][A-Za-z0-9_.-]{0,62}[A-Za-z0-9_]/"
    r"subnets/[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,78}[A-Za-z0-9_])?",
    re.IGNORECASE,
)
SUBNET_ID_RULE = (
    "a subnet resource id (/subscriptions/<subscription guid>/resourceGroups/<rg>/providers/"
    "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>, with valid Azure names: a "
    "virtual network 2-64 and a subnet 1-80 letters, digits, '_', '.' and '-', starting with a "
    "letter or digit, ending with a letter, digit or '_')"
)


def is_subnet_id(value: Any) -> bool:
    return isinstance(value, str) and _SUBNET_ID.fullmatch(value) is not None


def subnet_id(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not is_subnet_id(value):
        raise ModelStoreInputError(store, field, value, SUBNET_ID_RULE)
