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

import re
from collections.abc import Mapping
from typing import Any

import pulumi

from . import aws, local, nfs  # noqa: F401  (importing a backend registers it: `backend=`)
from .aws.s3 import MountpointS3ModelStore
from .cluster import NameBook
from .errors import ModelStoreInputError
from .kube.drivers import CsiDriverChart
from .store import ModelStore

StoreClass = Any

LEGACY_BACKENDS: dict[str, Any] = {
    "mountpoint-s3": MountpointS3ModelStore,
}
# Backends on the skeleton register themselves (`backend=`) when their module is imported.
BACKENDS: dict[str, Any] = dict(sorted({**LEGACY_BACKENDS, **ModelStore.backends()}.items()))


def snake_case(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def store_args(name: str, backend: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A store's config fields as its argument names: camelCase spellings map to the field
    they spell; one field given in both spellings is refused."""
    args: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in fields.items():
        if key == "backend":
            continue
        field = snake_case(key) if isinstance(key, str) else key
        if field in args:
            raise ModelStoreInputError(
                name,
                key,
                value,
                f"unset when {spelled[field]} is given (the same field, spelled differently)",
            )
        args[field], spelled[field] = value, key
    return args


def build_stores(stores: Mapping[str, Any]) -> dict[str, ModelStore]:
    """Build every store in ``stores`` (the value of ``modelstore:stores``) and export its
    outputs. Every store's input is checked before the first one registers anything (its
    fields, and the PV and claim names across the stores of each cluster), and every problem
    of every store is reported at once; checks that need a lookup (the cluster, a subnet, the
    OIDC provider) run as each store is built."""
    if not isinstance(stores, Mapping) or not stores:
        raise ModelStoreInputError(
            None, "modelstore:stores", stores, "a mapping of store name to its fields"
        )
    errors: list[ModelStoreInputError] = []
    plans: list[tuple[str, Any, dict[str, Any]]] = []
    for name, fields in stores.items():
        try:
            if not isinstance(fields, Mapping):
                raise ModelStoreInputError(name, "store", fields, "a mapping of fields")
            backend = fields.get("backend")
            if backend not in BACKENDS:
                raise ModelStoreInputError(
                    name, "backend", backend, f"one of {', '.join(sorted(BACKENDS))}"
                )
            args = store_args(name, BACKENDS[backend], fields)
            check = getattr(BACKENDS[backend], "parse", None)
            if check is not None:
                check(name, args, warn=False)  # the constructor warns of old spellings once
            else:
                BACKENDS[backend].validate(name, args)
            plans.append((name, BACKENDS[backend], args))
        except ModelStoreInputError as error:
            errors.append(error)
    if errors:
        raise ModelStoreInputError.combine(errors)
    _names_unique_per_cluster(plans)
    _one_driver_install_per_cluster(plans)
    built: dict[str, ModelStore] = {}
    for name, constructor, args in plans:
        store = constructor(name, args)
        built[name] = store
        pulumi.export(name, store.summary)
    return built


def _names_unique_per_cluster(plans: list[tuple[str, Any, dict[str, Any]]]) -> None:
    """PV names and claims no two stores of one cluster share, checked before any store is
    built (the cluster scope checks them again as each store joins, in library programs)."""
    books: dict[Any, NameBook] = {}
    for name, constructor, args in plans:
        if not hasattr(constructor, "scope_key"):
            continue
        key = constructor.scope_key(args)
        book = books.setdefault(key, NameBook(key[1]))
        book.reserve(name, constructor.volumes(name, args))


def _one_driver_install_per_cluster(
    plans: list[tuple[str, Any, dict[str, Any]]],
) -> None:
    """Stores not yet on the cluster scope: two installs of one CSI driver on one cluster
    collide (the first store installs it, the others must say ``driver: none``)."""
    installed_by: dict[tuple[str, Any], str] = {}
    for name, constructor, args in plans:
        chart = getattr(constructor, "driver_chart", None)
        if not isinstance(chart, CsiDriverChart) or args.get("driver", "helm") == "none":
            continue
        key = (chart.chart, args.get("cluster_name"))
        if key in installed_by:
            raise ModelStoreInputError(
                name,
                "driver",
                args.get("driver", "helm"),
                f"none (store {installed_by[key]!r} already installs {chart.chart} on cluster "
                f"{key[1]!r})",
            )
        installed_by[key] = name


def main() -> dict[str, ModelStore]:
    config = pulumi.Config("modelstore")
    return build_stores(config.require_object("stores"))
