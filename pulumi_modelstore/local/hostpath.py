"""A model store on one node's disk, for laptop clusters (kind, minikube): no cloud needed."""

# No `from __future__ import annotations`: the component analyzer reads the annotations.

from typing import Any

import pulumi

from .. import validation as v
from ..cluster import ClusterScope
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..store import Binding, ModelStore, ModelStoreArgs, Spec


class LocalModelStoreArgs(ModelStoreArgs, total=False):
    """Arguments of :class:`LocalModelStore`; all optional besides a consumer namespace."""

    host_path: str
    """Directory on the node that holds the models. Default: ``/var/lib/modelstore/<name>``,
    created on first mount when ``node_name`` is not set."""
    node_name: pulumi.Input[str]
    """Pin the store to this node with a ``local`` volume and node affinity (the directory must
    exist). Default: none, a ``hostPath`` volume, right for single-node kind or minikube. A new
    node replaces the PVs and their claims: the pods using them restart."""
    capacity_gib: int
    """Capacity the PVs advertise, in GiB; a claim requests it when created and keeps that
    request (a change updates the PVs only). Default: ``20``."""
    cluster_name: str
    """A name for the cluster's scope (its namespaces and PV names), for a program that serves
    two clusters, each with its own Kubernetes provider. Default: ``kubernetes``."""


def node_name_is_a_label_value(store: str, field: str, node_name: Any) -> None:
    """The node name is the value of the PV's node affinity on ``kubernetes.io/hostname``, and a
    new PV's required node affinity values must be label values (ValidateNodeSelectorRequirement
    with AllowInvalidLabelValueInRequiredNodeAffinity false, k8s.io/kubernetes
    pkg/apis/core/validation/validation.go): a node name longer than 63 characters, valid as a
    node's name, is refused there."""
    if v.is_output(node_name) or v.is_label_value(node_name):
        return
    raise ModelStoreInputError(
        store,
        field,
        node_name,
        "a node name of at most 63 characters (it is the PV's node affinity value for "
        "kubernetes.io/hostname, a label value)",
    )


class LocalModelStore(ModelStore[LocalModelStoreArgs, ClusterScope], backend="local"):
    """A store on a node's local disk. Access mode is ReadWriteOnce: every pod on that node can
    mount it, which is all a laptop cluster has. Readers mount it read-only."""

    args_type = LocalModelStoreArgs
    # the node's own disk: vLLM loader settings in kube/serving.py.
    loader_profile = "local"
    # DirectoryOrCreate makes a root-owned 0755 folder and hostPath takes no fsGroup (a
    # ``local`` volume's folder is the admin's): the seed's pod prepares it.
    model_prepare_root = True

    dynamic_claims_refused = (
        "local volumes are statically created PersistentVolumes only "
        "(kubernetes.io/docs/concepts/storage/volumes/#local)"
    )

    host_path: pulumi.Output[str]
    """The directory on the node."""

    @classmethod
    def rules(cls, p: Parser) -> None:
        if "host_path" in p:
            p.field_rule(v.host_path, "host_path")
        else:  # named after the store: checked with the store's name (parse_common)
            p.set("host_path", f"/var/lib/modelstore/{p.store}")
        p.field_rule(v.dns_subdomain, "node_name")
        p.field_rule(node_name_is_a_label_value, "node_name")
        p.field_rule(v.capacity_gib, "capacity_gib")
        p.field_rule(v.dns_label, "cluster_name")

    def provision_storage(
        self, spec: Spec[LocalModelStoreArgs], cluster: ClusterScope, facts: Any
    ) -> Binding:
        host_path, node_name = spec.args["host_path"], spec.args.get("node_name")
        self.host_path = pulumi.Output.from_input(host_path)
        if node_name is None:
            return Binding(
                capacity=f"{spec.args['capacity_gib']}Gi",
                source=lambda ns, ro: {
                    "hostPath": {"path": host_path, "type": "DirectoryOrCreate"}
                },
                reader_access_mode="ReadWriteOnce",
                writer_access_mode="ReadWriteOnce",
            )
        return Binding(
            capacity=f"{spec.args['capacity_gib']}Gi",
            source=lambda ns, ro: {"local": {"path": host_path}},
            reader_access_mode="ReadWriteOnce",
            writer_access_mode="ReadWriteOnce",
            node_affinity={
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
            },
        )
