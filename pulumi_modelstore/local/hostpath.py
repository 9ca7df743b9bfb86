"""A model store on one node's disk, for laptop clusters (kind, minikube): no cloud needed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from .. import validation as v
from ..store import (
    COMMON_FIELDS,
    ModelStore,
    ModelStoreArgs,
    StoreCommon,
    check_known_fields,
    parse_common,
)

TYPE_TOKEN = "modelstore:index:LocalModelStore"


class LocalModelStoreArgs(ModelStoreArgs, total=False):
    """Arguments of :class:`LocalModelStore`; all optional besides a consumer namespace."""

    host_path: str
    """Directory on the node that holds the models. Default: ``/var/lib/modelstore/<name>``,
    created on first mount when ``node_name`` is not set."""
    node_name: str
    """Pin the store to this node with a ``local`` volume and node affinity (the directory must
    exist). Default: none, a ``hostPath`` volume, right for single-node kind or minikube."""
    capacity_gib: int
    """Capacity the PV and claims advertise, in GiB. Default: 20."""


FIELDS = COMMON_FIELDS | frozenset(LocalModelStoreArgs.__annotations__)


def _parse(name: str, raw: Mapping[str, Any]) -> tuple[StoreCommon, str, str | None, int]:
    check_known_fields(name, raw, FIELDS)
    common = parse_common(name, raw)
    host_path = raw.get("host_path", f"/var/lib/modelstore/{name}")
    v.absolute_path(name, "host_path", host_path)
    node_name = raw.get("node_name")
    if node_name is not None:
        v.dns_subdomain(name, "node_name", node_name)
    capacity = raw.get("capacity_gib", 20)
    v.positive_int(name, "capacity_gib", capacity)
    return common, host_path, node_name, capacity


class LocalModelStore(ModelStore):
    """A store on a node's local disk. Access mode is ReadWriteOnce: every pod on that node can
    mount it, which is all a laptop cluster has. Readers mount it read-only."""

    host_path: pulumi.Output[str]
    """The directory on the node."""

    @staticmethod
    def validate(resource_name: str, args: Mapping[str, Any]) -> None:
        """Check every input; raises :class:`ModelStoreInputError`."""
        _parse(resource_name, args)

    def __init__(
        self,
        resource_name: str,
        args: LocalModelStoreArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        common, host_path, node_name, capacity = _parse(resource_name, dict(args or {}))

        super().__init__(TYPE_TOKEN, resource_name, common, opts)

        if node_name is None:
            source = {"hostPath": {"path": host_path, "type": "DirectoryOrCreate"}}
            affinity = None
        else:
            source = {"local": {"path": host_path}}
            affinity = {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": [node_name],
                                }
                            ]
                        }
                    ]
                }
            }
        self._bind_consumers(
            capacity=f"{capacity}Gi",
            access_mode=lambda read_only: "ReadWriteOnce",
            source=lambda namespace, read_only: source,
            node_affinity=affinity,
        )
        self.host_path = pulumi.Output.from_input(host_path)
        self._finish(
            {
                "hostPath": self.host_path,
            }
        )
