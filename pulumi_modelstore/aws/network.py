"""The one way AWS stores open the network to their nodes: a security group and TCP rules, each
rule a resource of its own (``aws.vpc`` rule resources, so one rule's change replaces only that
rule, never the group)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_aws as aws

from .names import SECURITY_GROUP_NAME_MAX, SECURITY_GROUP_TEXT_MAX, physical_name, shortened


def security_group(
    resource_name: str,
    *,
    vpc_id: pulumi.Input[str],
    description: str,
    tags: Mapping[str, str],
    parent: pulumi.Resource,
) -> aws.ec2.SecurityGroup:
    """A security group, auto-named after ``resource_name`` where that fits EC2's 255
    characters (``names.physical_name``), its description cut to EC2's 255."""
    return aws.ec2.SecurityGroup(
        resource_name,
        name=physical_name(resource_name, SECURITY_GROUP_NAME_MAX),
        vpc_id=vpc_id,
        description=shortened(description, SECURITY_GROUP_TEXT_MAX),
        tags=dict(tags),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def ports_text(ports: tuple[int, int]) -> str:
    """``(988, 988)`` -> ``988``; ``(1018, 1023)`` -> ``1018-1023``."""
    low, high = ports
    return f"{low}" if low == high else f"{low}-{high}"


def tcp_rule(
    resource_name: str,
    *,
    direction: str,
    security_group_id: pulumi.Input[str],
    peer_security_group_id: pulumi.Input[str],
    ports: tuple[int, int],
    description: str,
    tags: Mapping[str, str],
    parent: pulumi.Resource,
) -> pulumi.Resource:
    """One TCP rule between two security groups: ``direction`` ``ingress`` (from the peer) or
    ``egress`` (to it). Rules are named by their caller after the peer's position, not its id:
    ids may be unknown in a preview and a name must be known when the rule registers."""
    rule = (
        aws.vpc.SecurityGroupIngressRule
        if direction == "ingress"
        else aws.vpc.SecurityGroupEgressRule
    )
    return rule(
        resource_name,
        security_group_id=security_group_id,
        referenced_security_group_id=peer_security_group_id,
        ip_protocol="tcp",
        from_port=ports[0],
        to_port=ports[1],
        # EC2 security group rule descriptions: up to 255 characters (AuthorizeSecurityGroup
        # Ingress IpRange/UserIdGroupPair Description in botocore ec2/2016-11-15).
        description=shortened(description, SECURITY_GROUP_TEXT_MAX),
        tags=dict(tags),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def peers(
    node_security_group_ids: Sequence[pulumi.Input[str]],
) -> list[tuple[str, pulumi.Input[str]]]:
    """``(label, group id)`` for each node security group: ``nodes0``, ``nodes1``... Keep the
    order of ``node_security_group_ids`` stable: reordering it rewrites which rule admits which
    group."""
    return [(f"nodes{i}", group) for i, group in enumerate(node_security_group_ids)]
