"""Workload identity for AWS stores, in one place: IRSA and EKS Pod Identity roles for a
Kubernetes service account, with a least-privilege inline policy.

Preflight (:func:`resolve_identity`) runs before any resource registers: IRSA needs the
cluster's IAM OIDC provider, and a missing one fails the preview with a message instead of
failing every pod's AWS calls after deploy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from ..errors import ModelStoreInputError
from .cluster import EksClusterFacts, invoke_options

IDENTITIES = ("irsa", "pod-identity")
IRSA_AUDIENCE = "sts.amazonaws.com"
POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"


@dataclass(frozen=True)
class IdentityFacts:
    """What a role's trust policy needs, checked before deploy."""

    kind: str
    cluster_name: Any
    oidc_provider_arn: str | None = None
    issuer_host_path: str | None = None
    """The issuer without ``https://``: the prefix of the ``sub`` and ``aud`` condition keys."""


def resolve_identity(
    store: str,
    kind: str,
    cluster: EksClusterFacts,
    opts: pulumi.ResourceOptions | None,
    field: str = "identity",
) -> IdentityFacts:
    """Check the cluster can serve ``kind`` and return the facts its trust policy needs."""
    if kind not in IDENTITIES:
        raise ModelStoreInputError(store, field, kind, f"one of {', '.join(IDENTITIES)}")
    if kind == "pod-identity":
        if not cluster.name:
            raise ModelStoreInputError(
                store, "cluster_name", cluster.name, "set when identity is pod-identity"
            )
        return IdentityFacts(kind=kind, cluster_name=cluster.name)
    issuer = cluster.oidc_issuer
    if not issuer:
        raise ModelStoreInputError(
            store,
            "oidc_issuer",
            issuer,
            "the cluster's OIDC issuer URL (give cluster_name to look it up) when identity is irsa",
        )
    try:
        provider = aws.iam.get_open_id_connect_provider(url=issuer, opts=invoke_options(opts))
    except Exception as exc:  # the invoke's own error says why (usually "not found")
        raise ModelStoreInputError(
            store,
            field,
            kind,
            f"pod-identity, or irsa on a cluster with an IAM OIDC provider for {issuer} "
            f"(none found: {' '.join(str(exc).split())[:200]}); create one with "
            "`eksctl utils associate-iam-oidc-provider`",
        ) from exc
    if IRSA_AUDIENCE not in (provider.client_id_lists or []):
        raise ModelStoreInputError(
            store,
            field,
            kind,
            f"irsa on an OIDC provider whose audiences include {IRSA_AUDIENCE} "
            f"(it has {list(provider.client_id_lists or [])})",
        )
    return IdentityFacts(
        kind=kind,
        cluster_name=cluster.name,
        oidc_provider_arn=provider.arn,
        issuer_host_path=issuer.removeprefix("https://"),
    )


def trust_policy(facts: IdentityFacts, namespace: str, service_account: str) -> dict[str, Any]:
    """The role's trust policy: exactly one service account may assume it."""
    if facts.kind == "pod-identity":
        statement: dict[str, Any] = {
            "Effect": "Allow",
            "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }
    else:
        host = facts.issuer_host_path
        statement = {
            "Effect": "Allow",
            "Principal": {"Federated": facts.oidc_provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                    f"{host}:aud": IRSA_AUDIENCE,
                }
            },
        }
    return {"Version": "2012-10-17", "Statement": [statement]}


@dataclass
class ServiceAccountRole:
    role: aws.iam.Role
    policy: aws.iam.RolePolicy
    association: aws.eks.PodIdentityAssociation | None
    namespace: str
    service_account: str

    @property
    def arn(self) -> pulumi.Output[str]:
        return self.role.arn

    def service_account_annotations(self) -> dict[str, pulumi.Output[str]]:
        """What the service account needs: the IRSA role annotation (Pod Identity needs none:
        the association does the work)."""
        if self.association is not None:
            return {}
        return {"eks.amazonaws.com/role-arn": self.role.arn}


def service_account_role(
    resource_name: str,
    *,
    facts: IdentityFacts,
    namespace: str,
    service_account: str,
    policy: Mapping[str, Any] | pulumi.Output[Any],
    description: str,
    tags: Mapping[str, str],
    parent: pulumi.Resource,
) -> ServiceAccountRole:
    """A role only ``namespace/service_account`` can assume, with ``policy`` inline, and for
    Pod Identity the association that hands it to the service account."""
    role = aws.iam.Role(
        f"{resource_name}-role",
        assume_role_policy=json.dumps(trust_policy(facts, namespace, service_account)),
        description=description,
        tags=dict(tags),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    role_policy = aws.iam.RolePolicy(
        f"{resource_name}-policy",
        role=role.id,
        policy=pulumi.Output.json_dumps(policy),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    association = None
    if facts.kind == "pod-identity":
        association = aws.eks.PodIdentityAssociation(
            f"{resource_name}-pod-identity",
            cluster_name=facts.cluster_name,
            namespace=namespace,
            service_account=service_account,
            role_arn=role.arn,
            tags=dict(tags),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[role_policy]),
        )
    return ServiceAccountRole(role, role_policy, association, namespace, service_account)
