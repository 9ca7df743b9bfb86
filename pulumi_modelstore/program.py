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

from .aws.efs import EfsModelStore
from .aws.fsx import FsxLustreModelStore
from .aws.s3 import MountpointS3ModelStore  # noqa: F401  (registers backend mountpoint-s3)
from .errors import ModelStoreInputError
from .local import LocalModelStore  # noqa: F401  (registers backend local)
from .store import ModelStore

StoreClass = Any

LEGACY_BACKENDS: dict[str, Any] = {
    "fsx-lustre": FsxLustreModelStore,
    "efs": EfsModelStore,
}
BACKENDS: dict[str, Any] = {**LEGACY_BACKENDS, **ModelStore.backends()}


def snake_case(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def build_stores(stores: Mapping[str, Any]) -> dict[str, ModelStore]:
    """Build every store in ``stores`` (the value of ``modelstore:stores``) and export its
    outputs. Every store's input is validated before the first one registers anything; checks
    that need a lookup (the cluster, a subnet, the OIDC provider) run as each store is built."""
    if not isinstance(stores, Mapping) or not stores:
        raise ModelStoreInputError(
            None, "modelstore:stores", stores, "a mapping of store name to its fields"
        )
    plans: list[tuple[str, StoreClass, dict[str, Any]]] = []
    for name, fields in stores.items():
        if not isinstance(fields, Mapping):
            raise ModelStoreInputError(name, "store", fields, "a mapping of fields")
        backend = fields.get("backend")
        if backend not in BACKENDS:
            raise ModelStoreInputError(name, "backend", backend, f"one of {', '.join(BACKENDS)}")
        args = {snake_case(k): v for k, v in fields.items() if k != "backend"}
        plans.append((name, BACKENDS[backend], args))
    for name, constructor, args in plans:
        constructor.validate(name, args)
    _one_driver_install_per_cluster(plans)
    built: dict[str, ModelStore] = {}
    for name, constructor, args in plans:
        store = constructor(name, args)
        built[name] = store
        pulumi.export(name, store.summary)
    return built


def _one_driver_install_per_cluster(
    plans: list[tuple[str, StoreClass, dict[str, Any]]],
) -> None:
    """Two installs of one CSI driver on one cluster collide (Helm release names, EKS add-ons,
    the node service account's single role): the first store installs it, the others on that
    cluster must say ``driver: none``."""
    installed_by: dict[tuple[str, Any], str] = {}
    for name, constructor, args in plans:
        chart = getattr(constructor, "driver_chart", None)
        if chart is None or args.get("driver", "helm") == "none":
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
    return build_stores(pulumi.Config("modelstore").require_object("stores"))
