"""Security groups and their rules."""

from __future__ import annotations

from typing import Any

from . import Replay, handles


@handles("aws:ec2/securityGroup:SecurityGroup")
def security_group(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    return r.client("ec2").create_security_group(
        GroupName=s["outputs"]["name"],
        Description=i["description"],
        VpcId=r.ref(i["vpcId"], s["urn"]),
        TagSpecifications=[{"ResourceType": "security-group", "Tags": r.tags(i)}],
    )["GroupId"]


def _permission(r: Replay, s: dict[str, Any]) -> dict[str, Any]:
    i = s["inputs"]
    permission: dict[str, Any] = {
        "IpProtocol": i["ipProtocol"],
        "FromPort": i["fromPort"],
        "ToPort": i["toPort"],
    }
    if "referencedSecurityGroupId" in i:
        permission["UserIdGroupPairs"] = [
            {
                "GroupId": r.ref(i["referencedSecurityGroupId"], s["urn"]),
                "Description": i.get("description", ""),
            }
        ]
    else:
        permission["IpRanges"] = [{"CidrIp": i["cidrIpv4"]}]
    return permission


@handles("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
def ingress(r: Replay, s: dict[str, Any]) -> str:
    result = r.client("ec2").authorize_security_group_ingress(
        GroupId=r.ref(s["inputs"]["securityGroupId"], s["urn"]),
        IpPermissions=[_permission(r, s)],
    )
    return result["SecurityGroupRules"][0]["SecurityGroupRuleId"]


@handles("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")
def egress(r: Replay, s: dict[str, Any]) -> str:
    result = r.client("ec2").authorize_security_group_egress(
        GroupId=r.ref(s["inputs"]["securityGroupId"], s["urn"]),
        IpPermissions=[_permission(r, s)],
    )
    return result["SecurityGroupRules"][0]["SecurityGroupRuleId"]
