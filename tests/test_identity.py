"""IRSA and EKS Pod Identity roles: trust conditions, preflight, and moto replay."""

from __future__ import annotations

import json

import pulumi
import pytest
from moto import mock_aws

from pulumi_modelstore.aws.cluster import resolve_cluster
from pulumi_modelstore.aws.identity import resolve_identity, service_account_role
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.plan.placeholders import INVOKES
from tests.aws_replay import Replay
from tests.conftest import CLUSTER, plan

ROLE = "aws:iam/role:Role"
POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::models"}
    ],
}


def program(kind: str, namespace: str = "kube-system", account: str = "s3-csi-driver-sa"):
    def run():
        cluster = resolve_cluster("store", {"cluster_name": CLUSTER}, None)
        facts = resolve_identity("store", kind, cluster, None)
        holder = pulumi.ComponentResource("test:index:Holder", "holder")
        role = service_account_role(
            "store-node",
            facts=facts,
            namespace=namespace,
            service_account=account,
            policy=POLICY,
            description="test",
            tags={"team": "ml"},
            parent=holder,
        )
        pulumi.export("annotations", role.service_account_annotations())

    return run


def issuer() -> str:
    cluster = INVOKES["aws:eks/getCluster:getCluster"](
        {"name": CLUSTER}, {"aws:region": "us-west-2"}
    )
    return cluster["identities"][0]["oidcs"][0]["issuer"]


def test_irsa_trust_binds_exactly_one_service_account():
    p = plan(program("irsa", "inference", "llama-reader"), fill=True)
    (role,) = p.by_type(ROLE)
    trust = json.loads(role["inputs"]["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    host = issuer().removeprefix("https://")
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Principal"] == {
        "Federated": f"arn:aws:iam::123456789012:oidc-provider/{host}"
    }
    assert statement["Condition"] == {
        "StringEquals": {
            f"{host}:sub": "system:serviceaccount:inference:llama-reader",
            f"{host}:aud": "sts.amazonaws.com",
        }
    }
    # The annotation names the same role the trust policy belongs to.
    assert p.outputs["annotations"] == {"eks.amazonaws.com/role-arn": role["outputs"]["arn"]}
    (policy,) = p.by_type("aws:iam/rolePolicy:RolePolicy")
    assert json.loads(policy["inputs"]["policy"]) == POLICY
    assert policy["inputs"]["role"] == role["id"]


def test_pod_identity_trusts_the_eks_service_and_associates_the_account():
    p = plan(program("pod-identity"), fill=True)
    (role,) = p.by_type(ROLE)
    (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    assert statement == {
        "Effect": "Allow",
        "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
    }
    (assoc,) = p.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert assoc["inputs"]["clusterName"] == CLUSTER
    assert assoc["inputs"]["namespace"] == "kube-system"
    assert assoc["inputs"]["serviceAccount"] == "s3-csi-driver-sa"
    assert assoc["inputs"]["roleArn"] == role["outputs"]["arn"]
    assert p.outputs["annotations"] == {}


def test_irsa_without_an_oidc_provider_fails_before_anything_registers():
    def missing(args, config):
        raise Exception(f"no OpenID Connect provider found for {args['url']}")

    with pytest.raises(PlanError) as err:
        plan(
            program("irsa"),
            invokes={"aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": missing},
        )
    message = str(err.value)
    assert message.startswith(
        f"store: identity must be pod-identity, or irsa on a cluster with an IAM OIDC provider "
        f"for {issuer()} (none found: "
    )
    assert message.endswith(
        "create one with `eksctl utils associate-iam-oidc-provider`, got 'irsa'"
    )
    assert [u.rsplit("::", 1)[-1] for u in err.value.registered] == ["modelstore-test"]


def test_unknown_identity_kind_is_refused():
    with pytest.raises(PlanError) as err:
        plan(program("node-role"))
    assert str(err.value) == "store: identity must be one of irsa, pod-identity, got 'node-role'"


def test_roles_replay_against_moto(aws_env):
    for kind in ("irsa", "pod-identity"):
        with mock_aws():
            done = Replay(plan(program(kind), fill=True)).run()
        assert ROLE in done.replayed and "aws:iam/rolePolicy:RolePolicy" in done.replayed
