"""The facts of an EKS cluster a store serves, and the invoke options its lookups use: what the
cluster scope (``cluster.py``) finds and the identity preflight (``identity.py``) reads, kept in
a module of their own so neither imports the other for them."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class EksClusterFacts:
    name: pulumi.Input[str] | None
    """The cluster's name (an Output for a cluster the program makes); None when only its
    network facts were given."""
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
