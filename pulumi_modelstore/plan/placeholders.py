"""Deterministic stand-ins for what the clouds would answer.

Invokes (data sources) get answers shaped like the real ones so a stack that names only its
cluster still plans. With ``--fill-outputs`` every created resource gets outputs shaped like the
real ones (ids, ARNs, DNS names). Every value is derived from a hash of the resource's URN or the
invoke's arguments, never from a counter, so two plans of one stack are byte-identical.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

ACCOUNT_ID = "123456789012"
DEFAULT_AWS_REGION = "us-east-1"

InvokeHandler = Callable[[Mapping[str, Any], Mapping[str, str]], dict[str, Any]]


def digest(*parts: str, length: int = 17) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:length]


def aws_region(config: Mapping[str, str], args: Mapping[str, Any] | None = None) -> str:
    if args and args.get("region"):
        return str(args["region"])
    return config.get("aws:region") or DEFAULT_AWS_REGION


def plan_vpc_id(config: Mapping[str, str]) -> str:
    """The one VPC every placeholder cluster and subnet lives in."""
    return f"vpc-{digest('vpc', aws_region(config))}"


def _eks_cluster(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    name = str(args.get("name", "cluster"))
    region = aws_region(config, args)
    oidc = digest("oidc", name, length=32).upper()
    return {
        "id": name,
        "name": name,
        "arn": f"arn:aws:eks:{region}:{ACCOUNT_ID}:cluster/{name}",
        "endpoint": f"https://{oidc}.gr7.{region}.eks.amazonaws.com",
        "version": "1.31",
        "status": "ACTIVE",
        "roleArn": f"arn:aws:iam::{ACCOUNT_ID}:role/{name}-cluster",
        "certificateAuthorities": [{"data": "cGxhbi1wbGFjZWhvbGRlcg=="}],
        "identities": [
            {"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{oidc}"}]}
        ],
        "vpcConfig": {
            "vpcId": plan_vpc_id(config),
            "subnetIds": [f"subnet-{digest('subnet', name, str(i))}" for i in range(3)],
            "securityGroupIds": [],
            "clusterSecurityGroupId": f"sg-{digest('cluster-sg', name)}",
            "endpointPrivateAccess": True,
            "endpointPublicAccess": False,
            "publicAccessCidrs": [],
        },
        "tags": {},
    }


def _subnet(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    subnet_id = str(args.get("id", "subnet-unknown"))
    region = aws_region(config, args)
    zone = "abc"[int(digest("az", subnet_id, length=2), 16) % 3]
    return {
        "id": subnet_id,
        "arn": f"arn:aws:ec2:{region}:{ACCOUNT_ID}:subnet/{subnet_id}",
        "vpcId": plan_vpc_id(config),
        "availabilityZone": f"{region}{zone}",
        "cidrBlock": "10.0.0.0/19",
        "state": "available",
        "ownerId": ACCOUNT_ID,
        "tags": {},
    }


def _region(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    region = aws_region(config, args)
    return {
        "id": region,
        "name": region,
        "region": region,
        "description": region,
        "endpoint": f"ec2.{region}.amazonaws.com",
    }


def _caller_identity(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": ACCOUNT_ID,
        "accountId": ACCOUNT_ID,
        "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/plan",
        "userId": "AIDAPLANPLACEHOLDER",
    }


def _partition(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": "aws",
        "partition": "aws",
        "dnsSuffix": "amazonaws.com",
        "reverseDnsPrefix": "com.amazonaws",
    }


INVOKES: dict[str, InvokeHandler] = {
    "aws:eks/getCluster:getCluster": _eks_cluster,
    "aws:ec2/getSubnet:getSubnet": _subnet,
    "aws:index/getRegion:getRegion": _region,
    "aws:index/getCallerIdentity:getCallerIdentity": _caller_identity,
    "aws:index/getPartition:getPartition": _partition,
}


def resource_id(type_: str, urn: str, inputs: Mapping[str, Any]) -> str:
    """A placeholder physical id shaped like the cloud's own."""
    h = digest("id", urn)
    prefixes = {
        "aws:ec2/securityGroup:SecurityGroup": "sg-",
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr-",
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr-",
        "aws:fsx/lustreFileSystem:LustreFileSystem": "fs-",
        "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": "dra-",
    }
    if type_ in prefixes:
        return prefixes[type_] + h
    if type_.startswith("kubernetes:"):
        meta = inputs.get("metadata") or {}
        name = meta.get("name") or urn.rsplit("::", 1)[-1]
        return f"{meta['namespace']}/{name}" if meta.get("namespace") else str(name)
    if type_ == "aws:eks/addon:Addon":
        return f"{inputs.get('clusterName')}:{inputs.get('addonName')}"
    return f"{urn.rsplit('::', 1)[-1]}-{h[:8]}"


def resource_outputs(
    type_: str, urn: str, id_: str, inputs: Mapping[str, Any], config: Mapping[str, str]
) -> dict[str, Any]:
    """Computed outputs a created resource would report, on top of its inputs."""
    region = aws_region(config)
    name = urn.rsplit("::", 1)[-1]
    out: dict[str, Any] = {}
    if type_ == "aws:ec2/securityGroup:SecurityGroup":
        out = {
            "name": inputs.get("name") or f"{name}-{digest('name', urn, length=7)}",
            "arn": f"arn:aws:ec2:{region}:{ACCOUNT_ID}:security-group/{id_}",
            "ownerId": ACCOUNT_ID,
        }
    elif type_ in (
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
    ):
        out = {
            "securityGroupRuleId": id_,
            "arn": f"arn:aws:ec2:{region}:{ACCOUNT_ID}:security-group-rule/{id_}",
        }
    elif type_ == "aws:fsx/lustreFileSystem:LustreFileSystem":
        out = {
            "arn": f"arn:aws:fsx:{region}:{ACCOUNT_ID}:file-system/{id_}",
            "dnsName": f"{id_}.fsx.{region}.amazonaws.com",
            "mountName": digest("mount", urn, length=8),
            "networkInterfaceIds": [f"eni-{digest('eni', urn)}"],
            "ownerId": ACCOUNT_ID,
            "vpcId": plan_vpc_id(config),
        }
    elif type_ == "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation":
        fs_id = inputs.get("fileSystemId")
        out = {
            "associationId": id_,
            "arn": f"arn:aws:fsx:{region}:{ACCOUNT_ID}:association/{fs_id}/{id_}",
        }
    elif type_ == "aws:eks/addon:Addon":
        out = {
            "arn": f"arn:aws:eks:{region}:{ACCOUNT_ID}:addon/{inputs.get('clusterName')}/"
            f"{inputs.get('addonName')}/{digest('addon', urn, length=8)}",
            "addonVersion": inputs.get("addonVersion") or "v0.0.0-eksbuild.1",
        }
    elif type_ == "aws:iam/role:Role":
        role = inputs.get("name") or f"{name}-{digest('name', urn, length=7)}"
        out = {
            "name": role,
            "arn": f"arn:aws:iam::{ACCOUNT_ID}:role{inputs.get('path') or '/'}{role}",
            "uniqueId": "AROA" + digest("role", urn, length=17).upper(),
        }
    elif type_ == "aws:iam/policy:Policy":
        policy = inputs.get("name") or f"{name}-{digest('name', urn, length=7)}"
        out = {
            "name": policy,
            "arn": f"arn:aws:iam::{ACCOUNT_ID}:policy{inputs.get('path') or '/'}{policy}",
            "policyId": "ANPA" + digest("policy", urn, length=17).upper(),
        }
    elif type_ == "kubernetes:helm.sh/v3:Release":
        out = {
            "status": {
                "name": inputs.get("name"),
                "namespace": inputs.get("namespace"),
                "status": "deployed",
                "version": inputs.get("version"),
                "chart": inputs.get("chart"),
            }
        }
    return out
