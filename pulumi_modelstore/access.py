"""Consumer access, one layer of the template: who may mount a store, as which Kubernetes
service account, with which cloud grant.

The idea is the same on every cloud, so it is written once, here. A backend declares what its
consumers get (:class:`ConsumerAccess`: the service account they run as, and the grant of a
group of consumers through its cloud's ``identity.grant``: an IAM role with the store's
policy, a bucket IAM member for a workload identity principal, a user-assigned identity with
federated credentials and a role assignment); the template (``ModelStore.__init__``) runs this
layer once (:func:`grant_consumers`). It groups the consumers (a grant per namespace, or one
per access level), asks the cloud for each group's grant, makes the service accounts (one per
consumer namespace, or none where the platform brings its own) with the annotations the grant
asks for, and hands back the pod side and ONE ready dependency: what a mount waits for, the
way AWS CDK's EFS construct gives one ``grant(...)`` verb and one dependable.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s

from .cluster import ClusterScope

PER_NAMESPACE, PER_ACCESS = "namespace", "access"


class _Common(Protocol):
    """The store's common contract, as far as this layer reads it (``store.StoreCommon``)."""

    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> dict[str, str]: ...

    def creates_namespace(self, namespace: str) -> bool: ...

    @property
    def consumers(self) -> tuple[tuple[str, bool], ...]: ...


@dataclass(frozen=True)
class PodSide:
    """The pod side of a binding: what a consumer's pod needs besides its claim
    (:meth:`ModelStore.mount_for`). Empty by default: a pod keeps its own service account and
    metadata. A backend states what its driver needs of pods (GCS FUSE's sidecar annotations,
    a cache volume); the access layer (``access.py``) adds the consumers' identity."""

    service_account_name: str | None = None
    """The service account consumer pods run as, where the backend needs a workload identity."""
    annotations: Mapping[str, str] = field(default_factory=dict)
    """Annotations for the consumer pods' TEMPLATE metadata."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels for the consumer pods' template metadata."""
    security_context: Mapping[str, Any] = field(default_factory=dict)
    """Pod securityContext fields every consumer's pod needs (e.g. ``fsGroup``). Only pod
    fields: a driver's own setting (such as the Azure Files driver's ``fsGroupChangePolicy:
    None``) is a PV volume attribute."""
    reader_volumes: Sequence[Mapping[str, Any]] = ()
    """Pod volumes a reader's pod needs besides the claim, which no workload container
    mounts (a sidecar mounts them itself, e.g. GCS FUSE's ``gke-gcsfuse-cache``)."""
    reader_security_context: Mapping[str, Any] = field(default_factory=dict)
    """Pod securityContext fields a reader's pod needs besides :attr:`security_context`
    (e.g. the ``fsGroup`` that lets a sidecar write to :attr:`reader_volumes`)."""

    def merged(self, other: "PodSide") -> "PodSide":
        """This pod side with ``other``'s added (its service account, where it names one)."""
        return PodSide(
            service_account_name=other.service_account_name or self.service_account_name,
            annotations={**self.annotations, **other.annotations},
            labels={**self.labels, **other.labels},
            security_context={**self.security_context, **other.security_context},
            reader_volumes=(*self.reader_volumes, *other.reader_volumes),
            reader_security_context={
                **self.reader_security_context,
                **other.reader_security_context,
            },
        )


@dataclass(frozen=True)
class Consumer:
    """One consumer namespace and the service account its pods run as."""

    namespace: str
    read_only: bool
    service_account: str


@dataclass(frozen=True)
class Grant:
    """What a cloud's ``identity.grant`` gave one group of consumers."""

    ready: Sequence[pulumi.Resource]
    """What a mount waits for: the grant's last step (an inline policy, a Pod Identity
    association, a bucket IAM member, a role assignment and the federated credentials)."""
    value: Any = None
    """What identifies the grant to the store's outputs (a role ARN, an IAM member, a client
    id)."""
    service_account_annotations: Mapping[str, Any] | None = None
    """What the consumers' service accounts carry (IRSA's role ARN, the Google service
    account, the identity's client id). None: no ``annotations`` field at all."""
    resources: Mapping[str, Any] = field(default_factory=dict)
    """The grant's resources by role (``role``, ``identity``...), for the store to keep."""


@dataclass(frozen=True)
class ConsumerAccess:
    """What a backend declares its consumers get; the layer makes it (:func:`grant_consumers`)."""

    service_account: str
    """The service account name consumers run as, the same in every consumer namespace."""
    grant: Callable[[str, bool, Sequence[Consumer]], Grant]
    """``grant(key, read_only, consumers)``: the cloud's grant for one group of consumers of
    one access level (``key`` is the namespace, or ``readers``/``writers`` with :attr:`per`
    ``access``): the backend gives readers and writers each their role or policy."""
    per: str = PER_NAMESPACE
    """``namespace``: a grant per consumer namespace; ``access``: one for the readers and one
    for the writers. Default: per namespace."""
    create_service_accounts: bool = True
    """Make the service account in every consumer namespace. False: they exist already (the
    grants name them all the same). Default: True."""
    readers_only: bool = False
    """Only reader namespaces are consumers of the grant (the others need none)."""
    pods_run_as: bool = True
    """The consumer pods run as the service account (``mount_for`` names it) and their mounts
    wait for the grants. False: it is an account of the backend's own (a populator's
    transfer), not the pods': the backend's object that uses it waits for its grant."""
    account_role: str = "sa"
    """The service account resources are named ``<store>-<account_role>-<namespace>``."""
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the consumer pods need for their identity (Azure's
    ``azure.workload.identity/use``). Default: none."""


@dataclass(frozen=True)
class Access:
    """What the layer made: grants by group, service accounts by namespace, the pod side and
    one ready dependency."""

    grants: Mapping[str, Grant] = field(default_factory=dict)
    by_namespace: Mapping[str, Grant] = field(default_factory=dict)
    service_accounts: Mapping[str, Any] = field(default_factory=dict)
    pod: PodSide = field(default_factory=PodSide)
    ready: tuple[pulumi.Resource, ...] = ()
    """The one dependency a consumer's mount waits for: every group's grant."""

    def values(self) -> dict[str, Any]:
        """Consumer namespace -> its grant's :attr:`Grant.value`."""
        return {ns: grant.value for ns, grant in self.by_namespace.items()}


@dataclass(frozen=True)
class SourceGrant:
    """The seed Job's read access to the model's source (an object store of the store's own
    cloud, ``model.source``), beside its write access to the store: it makes the loader
    namespace's consumer a reader of the source, and no other consumer.

    Where the loader's consumer grant has an identity (a role, a workload identity principal, a
    user-assigned identity), the read grant is added to it (:attr:`ready` only). Where the store
    gives its consumers no identity (the node or driver mounts), the seed Job gets one of its
    own: :attr:`account` names its service account, made in the loader namespace with
    :attr:`grant`'s annotations, and the seed Job runs as it."""

    ready: Sequence[pulumi.Resource]
    """What the seed Job waits for: the read grant's last step (order: seed-after-source-grant)."""
    account: Consumer | None = None
    """The seed Job's own service account, where the store's consumers have no identity.
    Default: None (the seed Job runs as the loader's consumer account)."""
    grant: Grant | None = None
    """That account's grant (its service account annotations, its resources). Default: None."""
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the seed Job's pod needs for that identity (Azure's
    ``azure.workload.identity/use``). Default: none."""


def service_account_resource_name(store: str, role: str, namespace: str) -> str:
    """The one place a consumer service account's resource name is written."""
    return f"{store}-{role}-{namespace}"


def grant_consumers(
    store: pulumi.Resource,
    common: _Common,
    cluster: ClusterScope,
    declared: ConsumerAccess | None,
) -> Access:
    """Grant every consumer group (in consumer order, readers first), then make each consumer
    namespace's service account (after its namespace, where the store creates it)."""
    if declared is None:
        return Access()
    consumers = [
        Consumer(ns, read_only, declared.service_account)
        for ns, read_only in common.consumers
        if read_only or not declared.readers_only
    ]
    groups: dict[str, list[Consumer]] = {}
    for consumer in consumers:
        groups.setdefault(_group(declared.per, consumer), []).append(consumer)
    grants = {
        key: declared.grant(key, members[0].read_only, members) for key, members in groups.items()
    }
    by_namespace = {c.namespace: grants[_group(declared.per, c)] for c in consumers}
    accounts: dict[str, Any] = {}
    if declared.create_service_accounts:
        for c in consumers:
            accounts[c.namespace] = consumer_service_account(
                store, common, cluster, declared.account_role, c, by_namespace[c.namespace]
            )
    pod = PodSide(
        service_account_name=declared.service_account if declared.pods_run_as else None,
        labels=dict(declared.pod_labels),
    )
    granted = [r for grant in grants.values() for r in grant.ready]
    ready = tuple(granted) if declared.pods_run_as else ()
    return Access(grants, by_namespace, accounts, pod, ready)


def _group(per: str, consumer: Consumer) -> str:
    if per == PER_ACCESS:
        return "readers" if consumer.read_only else "writers"
    return consumer.namespace


def consumer_service_account(
    store: pulumi.Resource,
    common: _Common,
    cluster: ClusterScope,
    role: str,
    consumer: Consumer,
    grant: Grant,
) -> "k8s.core.v1.ServiceAccount":
    """A consumer's service account (resource ``<store>-<role>-<namespace>``), annotated as its
    grant says, after its namespace where the store creates it: every declared consumer's
    (:func:`grant_consumers`), and that of a Job a backend runs as a consumer of its own
    (Hyperdisk ML's manifest Job, the one writer of its source bucket)."""
    ns = consumer.namespace
    metadata: Any = {
        "name": consumer.service_account,
        "namespace": ns,
        "labels": common.labels,
    }
    if grant.service_account_annotations is not None:
        metadata["annotations"] = dict(grant.service_account_annotations)
    # The namespace must exist first, where the store creates it (order: namespace-first).
    depends = [cluster.namespace(ns, store, common.name)] if common.creates_namespace(ns) else []
    return k8s.core.v1.ServiceAccount(
        service_account_resource_name(common.name, role, ns),
        metadata=metadata,
        opts=pulumi.ResourceOptions(parent=store, depends_on=depends),
    )
