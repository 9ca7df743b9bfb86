"""A cluster the program makes (EksCluster.from_cluster): the EKS cluster and node group (moto's
EKS), its IAM OIDC provider and the roles' managed policy attachments (moto's IAM). The
cluster's subnets are the program's (an existing VPC's): made in moto as the cluster names
them, one per zone in the order given."""

from __future__ import annotations

from typing import Any

from . import Replay, handles
from .iam import _role_arn_exists


@handles("aws:eks/cluster:Cluster")
def cluster(r: Replay, s: dict[str, Any]) -> str:
    i, out = s["inputs"], s["outputs"]
    ec2 = r.client("ec2")
    vpc = out["vpcConfig"]["vpcId"]
    if vpc not in r.ids:
        r.ids[vpc] = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = i["vpcConfig"]["subnetIds"]
    for n, subnet in enumerate(subnets):
        if subnet not in r.ids:
            r.ids[subnet] = ec2.create_subnet(
                VpcId=r.ids[vpc],
                CidrBlock=f"10.0.{n * 16}.0/20",
                AvailabilityZone=f"{r.region}{'abc'[n % 3]}",
            )["Subnet"]["SubnetId"]
    group = out["vpcConfig"]["clusterSecurityGroupId"]
    r.ids[group] = ec2.create_security_group(
        GroupName=f"eks-cluster-sg-{out['name']}",
        Description="EKS cluster security group",
        VpcId=r.ids[vpc],
    )["GroupId"]
    _role_arn_exists(r, i["roleArn"], s["urn"])
    params: dict[str, Any] = {
        "name": out["name"],
        "roleArn": i["roleArn"],
        "resourcesVpcConfig": {"subnetIds": r.ref(subnets, s["urn"])},
    }
    if "version" in i:
        params["version"] = i["version"]
    r.check_shape("eks", "CreateCluster", params)
    r.client("eks").create_cluster(**params)
    return out["name"]


@handles("aws:eks/nodeGroup:NodeGroup")
def node_group(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    assert i["clusterName"] in r.ids.values(), f"{s['urn']}: dangling cluster {i['clusterName']}"
    _role_arn_exists(r, i["nodeRoleArn"], s["urn"])
    scaling = i["scalingConfig"]
    params: dict[str, Any] = {
        "clusterName": i["clusterName"],
        "nodegroupName": s["outputs"]["nodeGroupName"],
        "nodeRole": i["nodeRoleArn"],
        "subnets": r.ref(i["subnetIds"], s["urn"]),
        "scalingConfig": {
            "minSize": scaling["minSize"],
            "maxSize": scaling["maxSize"],
            "desiredSize": scaling["desiredSize"],
        },
    }
    for key, api in (("instanceTypes", "instanceTypes"), ("amiType", "amiType")):
        if key in i:
            params[api] = i[key]
    r.check_shape("eks", "CreateNodegroup", params)
    r.client("eks").create_nodegroup(**params)
    return s["id"]


@handles("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
def oidc_provider(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    assert i["url"].startswith("https://"), f"{s['urn']}: IAM takes an https:// issuer"
    return r.client("iam").create_open_id_connect_provider(
        Url=i["url"],
        ClientIDList=i.get("clientIdLists") or [],
        ThumbprintList=i.get("thumbprintLists") or ["a" * 40],
    )["OpenIDConnectProviderArn"]


@handles("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
def policy_attachment(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    role_name = r.ids.get(i["role"], i["role"])
    params = {"RoleName": role_name, "PolicyArn": i["policyArn"]}
    if i["policyArn"].startswith("arn:aws:iam::aws:policy/"):
        # An AWS managed policy, which moto does not load by default: the request's shape and
        # its role are checked.
        r.check_shape("iam", "AttachRolePolicy", params)
        roles = {x["RoleName"] for x in r.client("iam").list_roles()["Roles"]}
        assert role_name in roles, f"{s['urn']}: dangling role {role_name}"
    else:
        r.client("iam").attach_role_policy(**params)
    return f"{role_name}/{i['policyArn']}"
