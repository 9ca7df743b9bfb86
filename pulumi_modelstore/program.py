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
from collections.abc import Callable, Mapping
from typing import Any

import pulumi

from .aws.fsx import FsxLustreModelStore
from .errors import ModelStoreInputError
from .local.hostpath import LocalModelStore
from .store import ModelStore

BACKENDS: dict[str, Callable[..., ModelStore]] = {
    "fsx-lustre": FsxLustreModelStore,
    "local": LocalModelStore,
}


def snake_case(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def build_stores(stores: Mapping[str, Any]) -> dict[str, ModelStore]:
    """Build every store in ``stores`` (the value of ``modelstore:stores``) and export its
    outputs. All stores are validated before the first one registers anything."""
    if not isinstance(stores, Mapping) or not stores:
        raise ModelStoreInputError(
            None, "modelstore:stores", stores, "a mapping of store name to its fields"
        )
    plans: list[tuple[str, Callable[..., ModelStore], dict[str, Any]]] = []
    for name, fields in stores.items():
        if not isinstance(fields, Mapping):
            raise ModelStoreInputError(name, "store", fields, "a mapping of fields")
        backend = fields.get("backend")
        if backend not in BACKENDS:
            raise ModelStoreInputError(name, "backend", backend, f"one of {', '.join(BACKENDS)}")
        args = {snake_case(k): v for k, v in fields.items() if k != "backend"}
        plans.append((name, BACKENDS[backend], args))
    _one_helm_driver_per_cluster(plans)
    built: dict[str, ModelStore] = {}
    for name, constructor, args in plans:
        store = constructor(name, args)
        built[name] = store
        pulumi.export(name, store.summary)
    return built


def _one_helm_driver_per_cluster(
    plans: list[tuple[str, Callable[..., ModelStore], dict[str, Any]]],
) -> None:
    """Two Helm releases of one driver on one cluster collide: the first store installs it, the
    others must say ``driver: none``."""
    installed_by: dict[Any, str] = {}
    for name, constructor, args in plans:
        if constructor is not FsxLustreModelStore or args.get("driver", "helm") != "helm":
            continue
        cluster = args.get("cluster_name")
        if cluster in installed_by:
            raise ModelStoreInputError(
                name,
                "driver",
                "helm",
                f"none (store {installed_by[cluster]!r} already installs the FSx CSI driver "
                f"on cluster {cluster!r})",
            )
        installed_by[cluster] = name


def main() -> dict[str, ModelStore]:
    return build_stores(pulumi.Config("modelstore").require_object("stores"))
