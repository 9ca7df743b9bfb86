"""IAM roles and policies (moto validates the documents), EKS add-ons and Pod Identity
associations (checked against the EKS API model and the role they name)."""

from __future__ import annotations

import json
from typing import Any

from . import Replay, handles


@handles("aws:iam/role:Role")
def role(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    trust = json.loads(i["assumeRolePolicy"])
    for statement in trust["Statement"]:
        federated = statement.get("Principal", {}).get("Federated")
        if federated:  # the OIDC provider must exist, as IAM checks on create
            arns = [
                p["Arn"]
                for p in r.client("iam").list_open_id_connect_providers()[
                    "OpenIDConnectProviderList"
                ]
            ]
            assert federated in arns, f"{s['urn']}: dangling OIDC provider {federated}"
    r.client("iam").create_role(
        RoleName=s["outputs"]["name"],
        AssumeRolePolicyDocument=i["assumeRolePolicy"],
        Description=i.get("description", ""),
        Tags=r.tags(i),
    )
    return s["outputs"]["name"]


@handles("aws:iam/rolePolicy:RolePolicy")
def role_policy(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    role_name = r.ids.get(i["role"])
    assert role_name, f"{s['urn']}: dangling role {i['role']}"
    r.client("iam").put_role_policy(
        RoleName=role_name, PolicyName=s["outputs"]["name"], PolicyDocument=i["policy"]
    )
    return f"{role_name}:{s['outputs']['name']}"


@handles("aws:iam/policy:Policy")
def policy(r: Replay, s: dict[str, Any]) -> str:
    return r.client("iam").create_policy(
        PolicyName=s["outputs"]["name"], PolicyDocument=s["inputs"]["policy"]
    )["Policy"]["Arn"]


def _role_arn_exists(r: Replay, arn: str, where: str) -> None:
    name = arn.rsplit("/", 1)[-1]
    roles = {x["RoleName"] for x in r.client("iam").list_roles()["Roles"]}
    assert name in roles, f"{where}: dangling role {arn}"


@handles("aws:eks/addon:Addon")
def eks_addon(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    params = {"clusterName": i["clusterName"], "addonName": i["addonName"]}
    for key in ("addonVersion", "configurationValues", "serviceAccountRoleArn"):
        if key in i:
            params[key] = i[key]
    if "configurationValues" in params:
        json.loads(params["configurationValues"])
    if "serviceAccountRoleArn" in params:
        _role_arn_exists(r, params["serviceAccountRoleArn"], s["urn"])
    r.check_shape("eks", "CreateAddon", params)
    return s["id"]


@handles("aws:eks/podIdentityAssociation:PodIdentityAssociation")
def pod_identity_association(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    params = {
        "clusterName": i["clusterName"],
        "namespace": i["namespace"],
        "serviceAccount": i["serviceAccount"],
        "roleArn": i["roleArn"],
    }
    r.check_shape("eks", "CreatePodIdentityAssociation", params)
    _role_arn_exists(r, params["roleArn"], s["urn"])
    return s["id"]
