"""Workload identity for AWS stores, in one place: IRSA and EKS Pod Identity roles for a
Kubernetes service account, with a least-privilege inline policy.

Preflight (:func:`resolve_identity`) runs before any resource registers: IRSA needs the
cluster's IAM OIDC provider, and a missing one fails the preview with a message instead of
failing every pod's AWS calls after deploy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pulumi
import pulumi_aws as aws
from pulumi.output import Unknown

from ..access import Consumer, Grant
from ..errors import ModelStoreInputError
from ..validation import is_output
from .facts import EksClusterFacts, invoke_options
from .names import POLICY_NAME_MAX, ROLE_DESCRIPTION_MAX, ROLE_NAME_MAX, physical_name, shortened

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
    invoke_opts: pulumi.InvokeOptions | None = None,
) -> IdentityFacts:
    """Check the cluster can serve ``kind`` and return the facts its trust policy needs.
    Stores reach it through ``EksCluster.identity``, which asks once per cluster."""
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
        provider = aws.iam.get_open_id_connect_provider(
            url=issuer, opts=invoke_opts or invoke_options(opts)
        )
    except Exception as exc:  # the invoke's own error says why (usually "not found")
        raise ModelStoreInputError(
            store,
            field,
            kind,
            f"pod-identity, or irsa on a cluster with an IAM OIDC provider for {issuer} "
            f"(none found: {' '.join(str(exc).split())[:200]}); create one with "
            "`eksctl utils associate-iam-oidc-provider`",
        ) from exc
    require_sts_audience(store, field, kind, provider.client_id_lists or [])
    return IdentityFacts(
        kind=kind,
        cluster_name=cluster.name,
        oidc_provider_arn=provider.arn,
        issuer_host_path=issuer.removeprefix("https://"),
    )


def require_sts_audience(store: str, field: str, kind: str, audiences: Any) -> None:
    """IRSA's tokens carry the audience sts.amazonaws.com: the cluster's OIDC provider (looked
    up, or created in the program and read back in the preview) must list it. Audiences not
    known before deploy (an Unknown) are not checked."""
    if audiences is None or isinstance(audiences, Unknown):
        return
    if IRSA_AUDIENCE not in audiences:
        raise ModelStoreInputError(
            store,
            field,
            kind,
            f"irsa on an OIDC provider whose audiences include {IRSA_AUDIENCE} "
            f"(it has {list(audiences)})",
        )


def trust_policy(facts: IdentityFacts, namespace: str, service_account: str) -> dict[str, Any]:
    """The role's trust policy: exactly one service account may assume it."""
    return trust_policy_for(facts, [(namespace, service_account)])


def trust_policy_for(
    facts: IdentityFacts, service_accounts: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """The role's trust policy: exactly these ``(namespace, service account)`` pairs may
    assume it (IRSA: one statement each, so no condition matches a pattern; Pod Identity: the
    service principal, with an association per service account)."""
    if facts.kind == "pod-identity":
        return _trust_one(facts, *service_accounts[0])
    return {
        "Version": "2012-10-17",
        "Statement": [
            s for ns, sa in service_accounts for s in _trust_one(facts, ns, sa)["Statement"]
        ],
    }


def trust_document(
    facts: IdentityFacts, service_accounts: Sequence[tuple[str, str]]
) -> pulumi.Input[str]:
    """:func:`trust_policy_for` as the JSON a role takes. On a cluster the program makes, the
    OIDC provider's ARN and URL are Outputs: the document is built once they are known
    (``Output.all``), its condition keys named from the URL."""
    arn, host = facts.oidc_provider_arn, facts.issuer_host_path
    if not (is_output(arn) or is_output(host)):
        return json.dumps(trust_policy_for(facts, service_accounts))
    return pulumi.Output.all(arn, host).apply(
        lambda known: json.dumps(
            trust_policy_for(
                replace(facts, oidc_provider_arn=known[0], issuer_host_path=known[1]),
                service_accounts,
            )
        )
    )


def _trust_one(facts: IdentityFacts, namespace: str, service_account: str) -> dict[str, Any]:
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
    policy: aws.iam.RolePolicy | None
    """The role's inline policy, where the role carries one (a shared role gets one per
    store, each a RolePolicy of its own)."""
    association: aws.eks.PodIdentityAssociation | None
    """The Pod Identity association of the first service account (None for IRSA)."""
    namespace: str
    service_account: str
    associations: tuple[aws.eks.PodIdentityAssociation, ...] = ()

    @property
    def arn(self) -> pulumi.Output[str]:
        return self.role.arn

    @property
    def ready(self) -> list[pulumi.Resource]:
        """What a pod using the role waits for: the association (Pod Identity hands
        credentials only to pods created after it) or the inline policy."""
        if self.associations:
            return list(self.associations)
        return [self.policy] if self.policy is not None else [self.role]

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
    namespace: str | None = None,
    service_account: str | None = None,
    service_accounts: Sequence[tuple[str, str]] = (),
    policy: Mapping[str, Any] | pulumi.Output[Any] | None,
    description: str,
    tags: Mapping[str, str],
    parent: pulumi.Resource,
    aliases_from: pulumi.Resource | None = None,
    old_name: str | None = None,
) -> ServiceAccountRole:
    """A role only the given service accounts can assume (``namespace``/``service_account``,
    or several as ``service_accounts``), with ``policy`` inline (None: the users of a shared
    role attach their own), and for Pod Identity an association per service account.

    ``aliases_from``/``old_name``: where the role and its association lived before (a store,
    and the resource name it used there), so moving it to a cluster scope is no replacement."""
    accounts = list(service_accounts) or [(namespace or "", service_account or "")]

    def opts(suffix: str, **extra: Any) -> pulumi.ResourceOptions:
        aliases = (
            [pulumi.Alias(name=f"{old_name}-{suffix}", parent=aliases_from)]
            if aliases_from is not None and old_name is not None
            else None
        )
        return pulumi.ResourceOptions(parent=parent, aliases=aliases, **extra)

    # Auto-named unless that would pass IAM's limits (names.physical_name): role names 64
    # characters, inline policy names 128, role descriptions 1000.
    role = aws.iam.Role(
        f"{resource_name}-role",
        name=physical_name(f"{resource_name}-role", ROLE_NAME_MAX),
        assume_role_policy=trust_document(facts, accounts),
        description=shortened(description, ROLE_DESCRIPTION_MAX),
        tags=dict(tags),
        opts=opts("role"),
    )
    role_policy = None
    if policy is not None:
        role_policy = aws.iam.RolePolicy(
            f"{resource_name}-policy",
            name=physical_name(f"{resource_name}-policy", POLICY_NAME_MAX),
            role=role.id,
            policy=pulumi.Output.json_dumps(policy),
            opts=opts("policy"),
        )
    associations: list[aws.eks.PodIdentityAssociation] = []
    if facts.kind == "pod-identity":
        for i, (ns, sa) in enumerate(accounts):
            suffix = "pod-identity" if i == 0 else f"pod-identity-{ns}-{sa}"
            associations.append(
                aws.eks.PodIdentityAssociation(
                    f"{resource_name}-{suffix}",
                    cluster_name=facts.cluster_name,
                    namespace=ns,
                    service_account=sa,
                    role_arn=role.arn,
                    tags=dict(tags),
                    # Mounts wait for the association alone (ServiceAccountRole.ready): made
                    # after the policy, it is the role's last step, so a pod it gets
                    # credentials for has the permissions too (order: policy-before-association).
                    opts=opts(suffix, depends_on=[role_policy] if role_policy else []),
                )
            )
    return ServiceAccountRole(
        role,
        role_policy,
        associations[0] if associations else None,
        accounts[0][0],
        accounts[0][1],
        tuple(associations),
    )


def attach_policy(
    resource_name: str,
    role: ServiceAccountRole,
    policy: Mapping[str, Any] | pulumi.Output[Any],
    parent: pulumi.Resource,
) -> aws.iam.RolePolicy:
    """A store's own inline policy on a role it shares with other stores (a node-level driver
    role): each store adds only its own permission, and removing the store removes only it."""
    return aws.iam.RolePolicy(
        resource_name,
        name=physical_name(resource_name, POLICY_NAME_MAX),
        role=role.role.id,
        policy=pulumi.Output.json_dumps(policy),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def grant(
    resource_name: str,
    *,
    facts: IdentityFacts,
    consumers: Sequence[Consumer],
    policy: Mapping[str, Any] | pulumi.Output[Any],
    description: str,
    tags: Mapping[str, str],
    parent: pulumi.Resource,
) -> Grant:
    """A group of consumers' grant (``access.py``): a role only their service accounts may
    assume (IRSA, or EKS Pod Identity with an association each) with ``policy`` inline. A
    mount waits for the role's last step (:attr:`ServiceAccountRole.ready`); IRSA puts the
    role's ARN on the service accounts."""
    role = service_account_role(
        resource_name,
        facts=facts,
        service_accounts=[(c.namespace, c.service_account) for c in consumers],
        policy=policy,
        description=description,
        tags=tags,
        parent=parent,
    )
    return Grant(
        ready=role.ready,
        value=role.arn,
        service_account_annotations=role.service_account_annotations(),
        resources={"role": role},
    )
