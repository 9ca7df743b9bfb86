"""Facts about the EKS cluster a store serves: from explicit args, or looked up by name.

Lookups are data-source calls (invokes) made before any resource registers, so a wrong fact
fails the preview with a message instead of failing a pod mount later."""

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from ..cluster import (
    ClusterScope,
    DeclaredCluster,
    EntryRules,
    EntryValues,
    Opts,
    provider_of,
)
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..kube.velero import PREFLIGHT
from ..validation import is_output, string_list
from . import validation as aws_v
from .facts import EksClusterFacts, invoke_options
from .identity import IDENTITIES, IdentityFacts, require_sts_audience, resolve_identity


def resolve_cluster(
    store: str,
    args: Mapping[str, Any],
    opts: pulumi.ResourceOptions | None,
    invoke_opts: pulumi.InvokeOptions | None = None,
) -> EksClusterFacts:
    """Cluster facts: explicit args win; anything missing comes from ``aws.eks.get_cluster``."""
    cluster_name = args.get("cluster_name")
    vpc_id = args.get("vpc_id")
    subnet_ids = args.get("cluster_subnet_ids")
    node_sgs = args.get("node_security_group_ids")
    region = args.get("region")
    oidc_issuer = args.get("oidc_issuer")
    _check_given_facts(store, vpc_id, subnet_ids, node_sgs, region, oidc_issuer)
    invoke_opts = invoke_opts or invoke_options(opts)
    cluster_named(store, None, cluster_name, vpc_id, subnet_ids, node_sgs)
    cluster = None
    if (
        cluster_name
        and not is_output(cluster_name)
        and (vpc_id is None or subnet_ids is None or node_sgs is None or oidc_issuer is None)
    ):
        cluster = aws.eks.get_cluster(name=cluster_name, opts=invoke_opts)
    if cluster is not None:
        vpc = cluster.vpc_config
        if vpc_id is None:
            vpc_id = vpc.vpc_id
        if subnet_ids is None:
            subnet_ids = sorted(vpc.subnet_ids)
        if node_sgs is None:
            # EKS attaches the cluster security group to managed node groups' nodes.
            node_sgs = [vpc.cluster_security_group_id]
        if oidc_issuer is None:
            issuers = [o.issuer for i in (cluster.identities or []) for o in (i.oidcs or [])]
            oidc_issuer = issuers[0] if issuers else None
    if region is None:
        region = aws.get_region(opts=invoke_opts).region
    assert vpc_id is not None and subnet_ids is not None and node_sgs is not None
    return EksClusterFacts(
        name=cluster_name,
        vpc_id=vpc_id,
        subnet_ids=tuple(subnet_ids),
        node_security_group_ids=tuple(node_sgs),
        region=region,
        oidc_issuer=oidc_issuer,
    )


def _check_given_facts(
    store: str, vpc_id: Any, subnet_ids: Any, node_sgs: Any, region: Any, oidc_issuer: Any
) -> None:
    """Explicit cluster facts: a string where one id is meant, a non-empty list of ids where
    several are (no node group means no rule admits the nodes: mounts would hang silently),
    each id, the region and the OIDC issuer in the form AWS gives them
    (``aws/validation.py``)."""
    for field, value in (("vpc_id", vpc_id), ("region", region), ("oidc_issuer", oidc_issuer)):
        if value is not None and not is_output(value) and not isinstance(value, str):
            raise ModelStoreInputError(store, field, value, "a string")
    if vpc_id is not None:
        aws_v.resource_id(store, "vpc_id", vpc_id, "vpc")
    if region is not None:
        aws_v.region(store, "region", region)
    if oidc_issuer is not None:
        aws_v.oidc_issuer(store, "oidc_issuer", oidc_issuer)
    for field, ids, prefix in (
        ("cluster_subnet_ids", subnet_ids, "subnet"),
        ("node_security_group_ids", node_sgs, "sg"),
    ):
        if ids is None or is_output(ids):
            continue
        string_list(store, field, ids)
        if not list(ids):
            raise ModelStoreInputError(store, field, list(ids), "a non-empty list of ids")
        aws_v.resource_ids(store, field, ids, prefix)


def cluster_named(
    store: str,
    cluster: Any,
    cluster_name: Any,
    vpc_id: Any = None,
    subnet_ids: Any = None,
    node_sgs: Any = None,
    driver_install: Any = None,
    *,
    needed_for: str | None = None,
) -> None:
    """The one rule of an AWS store's cluster being named: ``cluster`` (a scope, which checks
    itself) or ``cluster_name``. Without ``needed_for`` the store needs the cluster's network
    facts, so giving ``vpc_id``, ``cluster_subnet_ids`` and ``node_security_group_ids`` stands
    in for the name (except for ``driver_install: eks-addon``: an add-on is made on a named
    cluster), and a name that must be looked up is a plain string. ``needed_for``: what the
    store makes on the named cluster (IAM roles, an add-on), for which no fact stands in."""
    if cluster is not None:
        return
    if driver_install == "eks-addon" and needed_for is None and not cluster_name:
        raise ModelStoreInputError(
            store, "cluster_name", cluster_name, "set when driver_install is eks-addon"
        )
    if needed_for is not None:
        if not cluster_name:
            raise ModelStoreInputError(
                store,
                "cluster_name",
                cluster_name,
                f"the EKS cluster's name (needed for {needed_for})",
            )
        return
    if not (vpc_id is None or subnet_ids is None or node_sgs is None):
        return
    if not cluster_name:
        raise ModelStoreInputError(
            store,
            "cluster_name",
            cluster_name,
            "the EKS cluster's name (or give vpc_id, cluster_subnet_ids and "
            "node_security_group_ids explicitly)",
        )
    if is_output(cluster_name):
        raise ModelStoreInputError(store, "cluster_name", "<Output>", CREATED_CLUSTER_NAME)


CREATED_CLUSTER_NAME = (
    "the name of an existing EKS cluster, a plain string (it is looked up before deploy); for "
    "a cluster this program makes, give cluster=EksCluster.from_cluster('<name>', <the "
    "cluster>, ...)"
)
"""What ``cluster_name`` takes, said where an Output (a cluster this program makes) is given."""


# ---- the EKS cluster scope -----------------------------------------------------------------------

FACT_FIELDS = (
    "cluster_name",
    "vpc_id",
    "cluster_subnet_ids",
    "node_security_group_ids",
    "region",
    "oidc_issuer",
)


class EksClusterArgs(TypedDict, total=False):
    """The EKS cluster a store serves: its name (facts looked up once per cluster) or the facts
    themselves. The AWS stores take these fields too; stores naming one cluster share one
    :class:`EksCluster`."""

    cluster_name: str
    """The EKS cluster whose nodes mount the stores. Its VPC, subnets, cluster security group,
    region and OIDC issuer are looked up once before deploy, unless given below. Default: none
    (then ``vpc_id``, ``cluster_subnet_ids`` and ``node_security_group_ids`` are needed)."""
    vpc_id: pulumi.Input[str]
    """The cluster's VPC. Default: looked up from the cluster."""
    cluster_subnet_ids: Sequence[str]
    """The cluster's subnets, plain ids known before deploy (their zones are looked up).
    Default: looked up from the cluster."""
    node_security_group_ids: Sequence[pulumi.Input[str]]
    """Security groups of the nodes that mount the stores. Default: the cluster security group
    EKS attaches to managed node groups."""
    region: pulumi.Input[str]
    """The cluster's AWS region (given to drivers for nodes where IMDS is blocked). Default:
    the AWS provider's region."""
    oidc_issuer: str
    """The cluster's OIDC issuer URL, for IRSA: ``https://`` and the host and path, as EKS gives
    it (``https://oidc.eks.<region>.amazonaws.com/id/<id>``), known before deploy (the IRSA trust
    policy is built from it). Default: looked up from the cluster."""


# The facts a config entry of kind eks gives as `attributes` (the store fields of the same names).
EKS_ATTRIBUTES: dict[str, Any] = {
    "vpc_id": str,
    "cluster_subnet_ids": list[str],
    "node_security_group_ids": list[str],
    "region": str,
    "oidc_issuer": str,
}


class EksCluster(ClusterScope[EksClusterFacts, EksClusterArgs], kind="eks"):
    """What belongs to one EKS cluster, shared by the model stores on it: its facts (looked up
    once), each CSI driver install, the node-level roles drivers share, namespaces, and the
    PV and claim names in use. Stores make it on first use from ``cluster_name``; a program
    may make it itself and pass it to stores as ``cluster``."""

    args_type = EksClusterArgs
    cloud_provider_package = "aws"
    entry = EntryRules(store_fields={"cluster_name": "name", **{a: a for a in EKS_ATTRIBUTES}})

    def __init__(
        self,
        resource_name: str,
        args: EksClusterArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        store: str | None = None,
        facts: EksClusterFacts | None = None,
    ) -> None:
        super().__init__(resource_name, args, opts, store=store, facts=facts)
        self._listed: dict[str, str] = {}
        """Subnet id -> the field a store listed it in (``subnet_ids``), for the offline
        plan's answers (:meth:`declared`)."""
        self.created: CreatedEks | None = None
        """What :meth:`from_cluster` knows of a cluster this program makes (None: the cluster
        exists and is looked up)."""
        self.kubeconfig: pulumi.Output[str] | None = None
        """The kubeconfig of a cluster this program makes, the one its Kubernetes provider
        uses (None for a cluster that exists already)."""

    @classmethod
    def from_cluster(
        cls,
        resource_name: str,
        cluster: aws.eks.Cluster | None = None,
        *,
        cluster_name: pulumi.Input[str] | None = None,
        vpc_id: pulumi.Input[str] | None = None,
        subnets_by_zone: Mapping[str, pulumi.Input[str]] | None = None,
        node_security_group_ids: Sequence[pulumi.Input[str]] | None = None,
        node_groups: Sequence[pulumi.Resource] = (),
        oidc_provider: aws.iam.OpenIdConnectProvider | None = None,
        oidc_provider_arn: pulumi.Input[str] | None = None,
        oidc_provider_url: pulumi.Input[str] | None = None,
        kubeconfig: pulumi.Input[str] | None = None,
        region: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> "EksCluster":
        """The scope of an EKS cluster this program makes: its facts are the created
        cluster's Outputs (nothing is looked up: the cluster does not exist before the first
        ``pulumi up``), and its Kubernetes provider is made from the cluster's kubeconfig.

        ``cluster``: the ``aws.eks.Cluster`` (its name, VPC, cluster security group and
        endpoint are read from it); or, for a cluster made by a component such as pulumi-eks,
        its Outputs: ``cluster_name``, ``vpc_id``, ``node_security_group_ids`` and
        ``kubeconfig`` (each of them also overrides what ``cluster`` gives).
        ``subnets_by_zone``: the subnets the nodes run in, one per availability zone
        (``{"us-west-2a": subnet_id}``); EFS makes a mount target in each, FSx uses the first.
        ``node_security_group_ids``: default, the cluster security group EKS attaches to
        managed node groups' nodes. ``node_groups``: every driver install, namespace and claim
        waits for them. ``oidc_provider`` (or ``oidc_provider_arn`` and
        ``oidc_provider_url``): the cluster's IAM OIDC provider, which IRSA roles trust.
        ``region``: default, the AWS provider's. ``opts``: the scope's options; an ``aws``
        provider there is the stores' (a ``kubernetes`` one replaces the provider made from
        the kubeconfig)."""
        if cluster is not None and not isinstance(cluster, aws.eks.Cluster):
            raise ModelStoreInputError(
                resource_name,
                "cluster",
                cluster,
                "an aws.eks.Cluster made in this program (a cluster made elsewhere: "
                f"EksCluster({resource_name!r}, {{'cluster_name': ...}}))",
            )
        if oidc_provider is not None:
            oidc_provider_arn = oidc_provider_arn or oidc_provider.arn
            oidc_provider_url = oidc_provider_url or oidc_provider.url
        name: pulumi.Input[str] | None = cluster_name
        if name is None and cluster is not None:
            name = cluster.name
        for field, value in (("cluster_name", name), ("kubeconfig", kubeconfig or cluster)):
            if value is None:
                raise ModelStoreInputError(
                    resource_name, field, None, "given when no aws.eks.Cluster is (from_cluster)"
                )
        assert name is not None
        if (oidc_provider_arn is None) != (oidc_provider_url is None):
            raise ModelStoreInputError(
                resource_name,
                "oidc_provider_url" if oidc_provider_url is None else "oidc_provider_arn",
                None,
                "given with the other (IRSA trust names the provider's ARN and its URL)",
            )
        invoke = pulumi.InvokeOptions(provider=provider_of(opts, "aws")) if opts else None
        if region is None:
            region = aws.get_region_output(opts=invoke).region
        vpc = cluster.vpc_config if cluster is not None else None
        if vpc_id is None and vpc is not None:
            vpc_id = vpc.apply(lambda v: v.vpc_id or "")
        if node_security_group_ids is None and vpc is not None:
            # EKS attaches the cluster security group to managed node groups' nodes.
            node_security_group_ids = [vpc.apply(lambda v: v.cluster_security_group_id or "")]
        zones = dict(sorted((subnets_by_zone or {}).items()))
        facts = EksClusterFacts(
            name=name,
            vpc_id=vpc_id if vpc_id is not None else "",
            subnet_ids=tuple(zones.values()),
            node_security_group_ids=tuple(node_security_group_ids or ()),
            region=region,
        )
        if kubeconfig is None:
            assert cluster is not None
            kubeconfig = eks_kubeconfig(cluster, region)
        kubernetes = provider_of(opts, "kubernetes")
        parent = opts.parent if opts is not None else None
        if kubernetes is None:
            kubernetes = k8s.Provider(
                f"{resource_name}-kubernetes",
                kubeconfig=kubeconfig,
                opts=pulumi.ResourceOptions(parent=parent, depends_on=list(node_groups)),
            )
        scope_opts = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(providers=[kubernetes])
        )
        scope = cls(resource_name, {}, scope_opts, facts=facts)
        scope.created = CreatedEks(
            name=name,
            zones=zones,
            oidc_provider_arn=oidc_provider_arn,
            oidc_provider_url=oidc_provider_url,
            oidc_audiences=oidc_provider.client_id_lists if oidc_provider is not None else None,
        )
        scope.kubeconfig = pulumi.Output.from_input(kubeconfig)
        scope.node_groups = tuple(node_groups)
        return scope

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.field_rule(aws_v.eks_cluster_name, "cluster_name")
        p.check(
            lambda: _check_given_facts(
                p.store,
                p["vpc_id"],
                p["cluster_subnet_ids"],
                p["node_security_group_ids"],
                p["region"],
                p["oidc_issuer"],
            )
        )

    @classmethod
    def name_for(cls, args: Mapping[str, Any]) -> str:
        """A scope's name: the cluster's, else (explicit facts only) after its VPC."""
        name = args.get("cluster_name")
        if isinstance(name, str) and name:
            return name
        vpc = args.get("vpc_id")
        return f"eks-{vpc}" if isinstance(vpc, str) else "eks"

    @classmethod
    def attribute_types(cls) -> dict[str, Any]:
        return dict(EKS_ATTRIBUTES)

    @classmethod
    def name_problems(cls, name: Any, where: str, note: str = "") -> list[ModelStoreInputError]:
        """An entry's cluster name as every EKS API takes it (``aws.validation
        .eks_cluster_name``), checked before any provider registers (the scope would refuse it
        only once made, after the entry's provider)."""
        try:
            aws_v.eks_cluster_name("", where, name)
        except ModelStoreInputError as error:
            return [
                ModelStoreInputError(None, where, e.value, f"{e.allowed}{note}")
                for e in error.errors
            ]
        return []

    @classmethod
    def attribute_problems(
        cls, path: str, facts: Mapping[str, Any], sources: Mapping[str, str] | None = None
    ) -> list[ModelStoreInputError]:
        """The values of the cluster's facts as AWS writes them (the rules a store's own fact
        fields get, :func:`_check_given_facts`), each error naming ``path.<fact>`` (or its
        ``sources`` entry): checked before any provider or store registers."""
        errors: list[ModelStoreInputError] = []
        for name in EKS_ATTRIBUTES:
            if name not in facts:
                continue
            one = {fact: facts[name] if fact == name else None for fact in EKS_ATTRIBUTES}
            try:
                _check_given_facts("", *one.values())
            except ModelStoreInputError as error:
                where = (sources or {}).get(name) or f"{path}.{name}"
                errors.extend(
                    ModelStoreInputError(None, where, e.value, e.allowed) for e in error.errors
                )
        return errors

    @classmethod
    def from_entry_values(
        cls, name: str, fields: EntryValues, attributes: EntryValues, opts: Opts, store: str
    ) -> "EksCluster":
        return cls(name, {"cluster_name": name, **attributes}, opts, store=store)  # type: ignore[typeddict-item]

    def agree_facts(self, store: str, args: Mapping[str, Any]) -> None:
        """A fact a store gives must match what the scope has."""
        facts = {k: args[k] for k in FACT_FIELDS if args.get(k) is not None}
        for field, value in facts.items():
            if is_output(value) or field == "cluster_name":
                continue
            have = self._given.get(field)
            if have is None and self._facts is None:
                _check_given_facts(store, *(facts.get(f) for f in FACT_FIELDS[1:]))
                self._given[field] = value
            elif have is not None:
                self.check_same_fact(store, field, value, have)

    @property
    def name(self) -> Any:
        """The EKS cluster's name (an Output for a cluster this program makes), or None when
        only its facts were given."""
        if self.created is not None:
            return self.created.name
        return self._given.get("cluster_name")

    def _look_up(self, store: str) -> EksClusterFacts:
        return resolve_cluster(store, self._given, None, self._invoke_opts)

    def region(self, store: str) -> Any:
        """The cluster's region without looking up the cluster (the provider's, else given)."""
        given = self._given.get("region")
        if given is not None:
            return given
        if self._facts is not None:
            return self._facts.region
        return self.lookup("region", lambda: aws.get_region(opts=self._invoke_opts).region)

    def subnet(self, subnet_id: str) -> Any:
        return self.lookup(
            ("subnet", subnet_id), lambda: aws.ec2.get_subnet(id=subnet_id, opts=self._invoke_opts)
        )

    def given(self, field: str) -> bool:
        """Whether a store (or the program) gave the cluster fact ``field``, rather than the
        lookup finding it."""
        return self._given.get(field) is not None

    def subnets_field(self) -> str | None:
        """The field the cluster's subnets came from: ``cluster_subnet_ids`` when given, None
        when looked up."""
        return "cluster_subnet_ids" if self.given("cluster_subnet_ids") else None

    def check_subnet_in_vpc(self, store: str, field: str | None, subnet_id: Any) -> None:
        """Preflight: the subnet must be in the cluster's VPC, or the nodes cannot reach it.
        ``field``: where the user gave the subnet (``subnet_ids``, ``cluster_subnet_ids``);
        None when the cluster's lookup found it. The error names what the user gave: the
        subnet's field, else ``vpc_id`` when that was given, else the cluster."""
        vpc_id = self.facts(store).vpc_id
        if self.created is not None:
            self.warn_skipped_subnets()
            return
        if is_output(subnet_id) or is_output(vpc_id):
            return
        if field == "subnet_ids":
            self._listed.setdefault(subnet_id, field)
        subnet = self.subnet(subnet_id)
        if subnet.vpc_id == vpc_id:
            return
        where = f"(it is in {subnet.vpc_id})"
        if field is not None:
            raise ModelStoreInputError(
                store, field, subnet_id, f"a subnet in the cluster's VPC {vpc_id} {where}"
            )
        if self.given("vpc_id"):
            raise ModelStoreInputError(
                store,
                "vpc_id",
                vpc_id,
                f"the VPC of the cluster's subnets (the cluster's subnet {subnet_id} is in "
                f"{subnet.vpc_id})",
            )
        raise ModelStoreInputError(
            store,
            "cluster_name",
            self.name,
            f"a cluster whose subnet {subnet_id} is in its VPC {vpc_id} {where}",
        )

    def node_group_subnets(self) -> list[str]:
        """The subnets of the cluster's EKS managed node groups, sorted and deduped; looked up
        once. Nodes Karpenter or self-managed groups launch are not listed by EKS."""
        name = self.name
        if not name or is_output(name):
            return []

        def fetch() -> list[str]:
            o = self._invoke_opts
            names = aws.eks.get_node_groups(cluster_name=name, opts=o).names or []
            return sorted(
                {
                    subnet_id
                    for group in sorted(names)
                    for subnet_id in aws.eks.get_node_group(
                        cluster_name=name, node_group_name=group, opts=o
                    ).subnet_ids
                    or []
                }
            )

        return self.lookup("node-group-subnets", fetch)

    def declared(self) -> DeclaredCluster:
        """As every scope's, with the subnets the program listed: ``cluster_subnet_ids`` and
        the stores' ``subnet_ids``."""
        found = super().declared()
        given = self._given.get("cluster_subnet_ids") or ()
        listed = {s for s in given if isinstance(s, str)} | set(self._listed)
        return dataclasses.replace(found, subnets=frozenset(listed))

    def partition(self) -> str:
        return self.lookup("partition", lambda: aws.get_partition(opts=self._invoke_opts).partition)

    def velero_storage(self, settings: Any, store: str) -> Any:
        """An S3 bucket and an IRSA role for Velero (``aws.velero``); ``store`` is named if
        the cluster has no IAM OIDC provider."""
        from .velero import velero_storage

        facts = self.identity(store, "irsa", field="velero")
        return velero_storage(self, self.scope_name, facts, self.region(store), settings)

    def velero_preflight(self, store: str, path: str) -> None:
        """Velero's server role trusts the cluster's IAM OIDC provider (IRSA) whatever identity
        the stores use: looked up (once: ``identity`` caches it) before the cluster's first
        store, ``store``, registers anything. ``path`` is the entry's ``velero``."""
        try:
            self.identity(store, "irsa", field="velero")
        except ModelStoreInputError as exc:
            check = exc.allowed.removeprefix("pod-identity, or ")
            raise ModelStoreInputError(
                None,
                f"{path}.enabled",
                True,
                f"false unless the cluster serves IRSA, which Velero's server role uses ({check})",
            ) from exc

    def warn_skipped_subnets(self) -> None:
        """Say, once, what a cluster made in this program cannot have checked before deploy."""
        self.warn_once(
            "subnets",
            f"cluster {self.scope_name!r} is made in this program: its subnets are not looked "
            "up before deploy (that each is in the cluster's VPC, their zones); the stores use "
            "them as from_cluster gives them",
        )

    def identity(self, store: str, kind: str, field: str = "identity") -> Any:
        """The facts a role's trust needs for ``kind`` (irsa: the OIDC provider, looked up once
        per cluster), checked before deploy. See ``identity.resolve_identity``. On a cluster
        this program makes, the OIDC provider from_cluster was given (no lookup)."""
        if self.created is not None:
            created = self.created
            return self.lookup(
                ("identity", kind, field), lambda: created.identity(store, kind, field)
            )
        facts = self.facts(store) if kind == "irsa" else None
        cluster = facts if facts is not None else _name_only(self.name)
        return self.lookup(
            ("identity", kind, field),
            lambda: resolve_identity(store, kind, cluster, None, field, self._invoke_opts),
        )


@dataclass(frozen=True)
class CreatedEks:
    """What :meth:`EksCluster.from_cluster` knows of a cluster this program makes."""

    name: pulumi.Input[str]
    zones: Mapping[str, pulumi.Input[str]]
    """Availability zone -> the subnet the nodes there run in (``subnets_by_zone``)."""
    oidc_provider_arn: pulumi.Input[str] | None
    oidc_provider_url: pulumi.Input[str] | None
    oidc_audiences: pulumi.Output[Sequence[str]] | None = None
    """The declared audiences (``client_id_lists``) of the OIDC provider resource given."""

    def identity(self, store: str, kind: str, field: str) -> IdentityFacts:
        """What a role's trust needs, from the created cluster's Outputs: the OIDC provider's
        ARN and its URL without ``https://`` (the condition keys' prefix, as pulumi-eks users
        write it from ``OpenIdConnectProvider.url``)."""
        if kind not in IDENTITIES:
            raise ModelStoreInputError(store, field, kind, f"one of {', '.join(IDENTITIES)}")
        if kind == "pod-identity":
            return IdentityFacts(kind=kind, cluster_name=self.name)
        if self.oidc_provider_arn is None or self.oidc_provider_url is None:
            raise ModelStoreInputError(
                store,
                field,
                kind,
                "pod-identity, or irsa on a cluster made in this program with its IAM OIDC "
                "provider given (EksCluster.from_cluster(..., oidc_provider=...))",
            )
        if self.oidc_audiences is not None:
            self.oidc_audiences.apply(
                lambda audiences: require_sts_audience(store, field, kind, audiences),
                run_with_unknowns=True,
            )
        host = pulumi.Output.from_input(self.oidc_provider_url).apply(
            lambda url: url.removeprefix("https://")
        )
        return IdentityFacts(
            kind=kind,
            cluster_name=self.name,
            oidc_provider_arn=self.oidc_provider_arn,  # type: ignore[arg-type]
            issuer_host_path=host,  # type: ignore[arg-type]
        )


def eks_kubeconfig(cluster: aws.eks.Cluster, region: pulumi.Input[str]) -> pulumi.Output[str]:
    """A kubeconfig for ``cluster`` whose user gets a token from ``aws eks get-token`` (AWS
    CLI), the exec credential EKS documents for kubectl."""
    return pulumi.Output.all(
        cluster.name, cluster.endpoint, cluster.certificate_authority, region
    ).apply(lambda v: _kubeconfig(v[0], v[1], _certificate(v[2]), v[3]))


def _certificate(authority: Any) -> str:
    """The cluster's CA certificate (base64) from its ``certificate_authority`` Output."""
    return str(authority["data"] if isinstance(authority, Mapping) else authority.data)


def _kubeconfig(name: str, endpoint: str, certificate: str, region: str) -> str:
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", name, "--region", region],
        }
    }
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": name,
                    "cluster": {"server": endpoint, "certificate-authority-data": certificate},
                }
            ],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [{"name": name, "user": user}],
        }
    )


def _name_only(name: Any) -> EksClusterFacts:
    return EksClusterFacts(
        name=name, vpc_id="", subnet_ids=(), node_security_group_ids=(), region=""
    )


PREFLIGHT[EksCluster.kind] = EksCluster.velero_preflight
