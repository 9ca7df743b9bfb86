"""The config-driven program behind ``pulumi up -s <env>`` on this repository.

It reads ``modelstore:stores``, a mapping of store name to its backend and fields::

    modelstore:stores:
      llama:
        backend: fsx-lustre
        cluster_name: prod-eks
        readers: [inference]

Field names are the backend's argument names (``storage_capacity_gib``); camelCase spellings
(``storageCapacityGib``) are accepted too. Each store's outputs are exported under its name.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from importlib import import_module
from typing import Any

import pulumi

from . import local, nfs  # noqa: F401  (importing a backend registers it: `backend=`)
from .cluster import NameBook
from .errors import ModelStoreInputError
from .extras import CLOUD_ROOMS, MissingExtraError, install_hint, room_of_backend
from .fields import fields_of
from .store import ModelStore

# The cloud rooms whose extra is installed (pulumi-modelstore[aws], ...); a config naming a
# backend of another is refused in one line naming its extra.
for _room in CLOUD_ROOMS:
    with contextlib.suppress(MissingExtraError):
        import_module(f".{_room}", __package__)

# Backend name -> store class: every backend registers itself (`backend=`) when its module is
# imported (the imports above).
BACKENDS: dict[str, type[ModelStore]] = dict(sorted(ModelStore.backends().items()))


def snake_case(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def spellings(store_class: type[ModelStore]) -> dict[str, str]:
    """Every spelling the config program takes for ``store_class``'s fields -> the field: the
    declared name, its camelCase, and the same for a deprecated name (the store warns of it and
    moves it to its new one). Nothing else is translated: ``CLAIM_NAME`` reaches the parser as
    written and is refused there, listing the names."""
    names = [*fields_of(store_class.args_type), *store_class.renamed_fields]
    return {**{_camel(n): n for n in names}, **{n: n for n in names}}


def _camel(name: str) -> str:
    """As ``fields.Field.camel``, for deprecated names too (they have no Field)."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def store_args(
    name: str, store_class: type[ModelStore], fields: Mapping[Any, Any]
) -> dict[Any, Any]:
    """A store's config fields as its argument names: camelCase spellings map to the field
    they spell; one field given in both spellings is refused. ``backend`` is the config
    program's own key."""
    names = spellings(store_class)
    args: dict[Any, Any] = {}
    spelled: dict[Any, Any] = {}
    for key, value in fields.items():
        if key == "backend":
            continue
        field = names.get(key, key) if isinstance(key, str) else key
        if field in args:
            raise ModelStoreInputError(
                name,
                key,
                value,
                f"unset when {spelled[field]} is given (the same field, spelled differently)",
            )
        args[field], spelled[field] = value, key
    return args


STORES_ALLOWED = "a mapping of store names to their fields, with at least one store"
FIELDS_ALLOWED = "a mapping of field names to values"  # the words the Parser uses for `args`


def build_stores(stores: Mapping[str, Any]) -> dict[str, ModelStore]:
    """Build every store in ``stores`` (the value of ``modelstore:stores``) and export its
    outputs. Every store's input is checked before the first one registers anything (its
    name, backend and fields, and the PV and claim names across the stores of each cluster),
    and every problem of every store is reported at once; checks that need a lookup (the
    cluster, a subnet, the OIDC provider) run as each store is built."""
    if not isinstance(stores, Mapping) or not stores:
        raise ModelStoreInputError(None, "modelstore:stores", stores, STORES_ALLOWED)
    errors: list[ModelStoreInputError] = []
    plans: list[tuple[str, type[ModelStore], dict[str, Any], list[tuple[str, str, str]]]] = []
    for name, fields in stores.items():
        try:
            _a_store_name(name)
            if not isinstance(fields, Mapping):
                raise ModelStoreInputError(name, "fields", fields, FIELDS_ALLOWED)
            backend = fields.get("backend")
            room = room_of_backend(backend) if isinstance(backend, str) else None
            if room is not None and backend not in BACKENDS:
                raise ModelStoreInputError(
                    name,
                    "backend",
                    backend,
                    f"a backend whose cloud SDK is installed ({install_hint(room)})",
                )
            if not isinstance(backend, str) or backend not in BACKENDS:
                raise ModelStoreInputError(
                    name, "backend", backend, f"one of {', '.join(sorted(BACKENDS))}"
                )
            args = store_args(name, BACKENDS[backend], fields)
            # The constructor warns of old spellings: the check here does not, so each warns once.
            common = BACKENDS[backend].parse(name, args, warn=False).common
            plans.append((name, BACKENDS[backend], args, common.volumes))
        except ModelStoreInputError as error:
            errors.append(error)
    if errors:
        raise ModelStoreInputError.combine(errors)
    _names_unique_per_cluster(plans)
    built: dict[str, ModelStore] = {}
    for name, constructor, args, _ in plans:
        store = constructor(name, args)  # type: ignore[arg-type]
        built[name] = store
        pulumi.export(name, store.summary)
    return built


def _a_store_name(name: Any) -> None:
    """A store's name is its resource name and its outputs' key (``pulumi.export``): a
    non-empty string. What Kubernetes asks of it as the default claim name, the contract
    checks."""
    if not isinstance(name, str) or not name:
        raise ModelStoreInputError("modelstore:stores", "store name", name, "a non-empty string")


def _names_unique_per_cluster(
    plans: list[tuple[str, type[ModelStore], dict[str, Any], list[tuple[str, str, str]]]],
) -> None:
    """PV names and claims no two stores of one cluster share, checked before any store is
    built (the cluster scope checks them again as each store joins, in library programs)."""
    books: dict[Any, NameBook] = {}
    for name, constructor, args, volumes in plans:
        key = constructor.scope_key(args)
        books.setdefault(key, NameBook(key[1])).reserve(name, volumes)


def main() -> dict[str, ModelStore]:
    """The program: ``modelstore:stores`` of the stack's config, built."""
    raw = pulumi.Config("modelstore").get("stores")
    if raw is None:
        raise ModelStoreInputError(
            None, "modelstore:stores", None, f"set in the stack's config: {STORES_ALLOWED}"
        )
    try:
        stores = json.loads(raw)  # structured config reaches a program as JSON
    except ValueError:
        stores = raw  # a plain string: refused, as written
    return build_stores(stores)
