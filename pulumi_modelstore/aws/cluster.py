"""Facts about the EKS cluster a store serves: from explicit args, or looked up by name.

Lookups are data-source calls (invokes) made before any resource registers, so a wrong fact
fails the preview with a message instead of failing a pod mount later."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from ..errors import ModelStoreInputError
from ..validation import is_output, string_list


@dataclass(frozen=True)
class EksClusterFacts:
    name: str | None
    vpc_id: pulumi.Input[str]
    subnet_ids: tuple[pulumi.Input[str], ...]
    node_security_group_ids: tuple[pulumi.Input[str], ...]
    region: pulumi.Input[str]
    oidc_issuer: str | None = None
    """The cluster's OIDC issuer URL (``https://oidc.eks...``), for IRSA; None when unknown."""


def invoke_options(opts: pulumi.ResourceOptions | None) -> pulumi.InvokeOptions | None:
    """Invokes go through the same AWS provider the store's resources will use."""
    if opts is None:
        return None
    provider = opts.provider
    providers = opts.providers
    if provider is None and isinstance(providers, Mapping):
        provider = providers.get("aws")
    elif provider is None and isinstance(providers, Sequence):
        provider = next((p for p in providers if getattr(p, "package", None) == "aws"), None)
    if provider is not None and getattr(provider, "package", "aws") != "aws":
        provider = None
    return pulumi.InvokeOptions(provider=provider) if provider is not None else None


def resolve_cluster(
    store: str,
    args: Mapping[str, Any],
    opts: pulumi.ResourceOptions | None,
) -> EksClusterFacts:
    """Cluster facts: explicit args win; anything missing comes from ``aws.eks.get_cluster``."""
    cluster_name = args.get("cluster_name")
    vpc_id = args.get("vpc_id")
    subnet_ids = args.get("cluster_subnet_ids")
    node_sgs = args.get("node_security_group_ids")
    region = args.get("region")
    oidc_issuer = args.get("oidc_issuer")
    _check_given_facts(store, vpc_id, subnet_ids, node_sgs, region, oidc_issuer)
    invoke_opts = invoke_options(opts)
    if vpc_id is None or subnet_ids is None or node_sgs is None:
        if not cluster_name:
            raise ModelStoreInputError(
                store,
                "cluster_name",
                cluster_name,
                "the EKS cluster's name (or give vpc_id, cluster_subnet_ids and "
                "node_security_group_ids explicitly)",
            )
        if is_output(cluster_name):
            raise ModelStoreInputError(
                store,
                "cluster_name",
                "<Output>",
                "a plain string so the cluster can be looked up before deploy",
            )
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
    several are (no node group means no rule admits the nodes: mounts would hang silently)."""
    for field, value in (("vpc_id", vpc_id), ("region", region), ("oidc_issuer", oidc_issuer)):
        if value is not None and not is_output(value) and not isinstance(value, str):
            raise ModelStoreInputError(store, field, value, "a string")
    for field, ids in (("cluster_subnet_ids", subnet_ids), ("node_security_group_ids", node_sgs)):
        if ids is None or is_output(ids):
            continue
        string_list(store, field, ids)
        if not list(ids):
            raise ModelStoreInputError(store, field, list(ids), "a non-empty list of ids")


def check_subnet_in_vpc(
    store: str, field: str, subnet_id: Any, vpc_id: Any, opts: pulumi.ResourceOptions | None
) -> None:
    """Preflight: the subnet must be in the cluster's VPC, or the nodes cannot reach it."""
    if is_output(subnet_id) or is_output(vpc_id):
        return
    subnet = aws.ec2.get_subnet(id=subnet_id, opts=invoke_options(opts))
    if subnet.vpc_id != vpc_id:
        raise ModelStoreInputError(
            store,
            field,
            subnet_id,
            f"a subnet in the cluster's VPC {vpc_id} (it is in {subnet.vpc_id})",
        )
