"""AWS placeholders: data source answers (an EKS cluster, its subnets, node groups and OIDC
provider, the region, account and partition) and the ids and outputs of created AWS resources."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...cluster import DeclaredCluster, declared_clusters
from .registry import (
    ID_FROM_INPUT,
    ID_MAKERS,
    ID_PREFIXES,
    INVOKES,
    Created,
    InvokeHandler,
    digest,
    outputs_of,
)

ACCOUNT_ID = "123456789012"
DEFAULT_AWS_REGION = "us-east-1"


def aws_region(config: Mapping[str, str], args: Mapping[str, Any] | None = None) -> str:
    if args and args.get("region"):
        return str(args["region"])
    return config.get("aws:region") or DEFAULT_AWS_REGION


def plan_vpc_id(config: Mapping[str, str]) -> str:
    """The one VPC every placeholder cluster and subnet lives in, unless the program gave its
    cluster's VPC (:func:`_declared`)."""
    return f"vpc-{digest('vpc', aws_region(config))}"


def _cluster_subnets(name: str) -> list[str]:
    """The placeholder subnets of the cluster ``name`` (and of its managed node group)."""
    return [f"subnet-{digest('subnet', name, str(i))}" for i in range(3)]


def _declared() -> list[DeclaredCluster]:
    """What the program declared about its EKS clusters (each scope's ``declared()``):
    explicit facts plan offline, so the answers agree with them. Empty outside a program."""
    try:
        return declared_clusters("eks")
    except Exception:  # no program running (a handler called directly): nothing declared
        return []


def _declared_for_cluster(name: str) -> Any:
    return next((d for d in _declared() if d.name == name), None)


def _declared_for_subnet(subnet_id: str) -> Any:
    """The declared cluster a subnet belongs to: one the program listed it for, or one whose
    lookup (by name) answers it; only those that gave their VPC matter."""
    for declared in _declared():
        if declared.facts.get("vpc_id") is None:
            continue
        if subnet_id in declared.subnets or (
            declared.name is not None and subnet_id in _cluster_subnets(declared.name)
        ):
            return declared
    return None


def _eks_cluster(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """A cluster in the placeholder VPC, or in the VPC (and region, with the subnets) the
    program gave for it: what a lookup fills in agrees with what was given."""
    name = str(args.get("name", "cluster"))
    declared = _declared_for_cluster(name)
    region = (declared and declared.facts.get("region")) or aws_region(config, args)
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
            "vpcId": (declared and declared.facts.get("vpc_id")) or plan_vpc_id(config),
            "subnetIds": _cluster_subnets(name),
            "securityGroupIds": [],
            "clusterSecurityGroupId": f"sg-{digest('cluster-sg', name)}",
            "endpointPrivateAccess": True,
            "endpointPublicAccess": False,
            "publicAccessCidrs": [],
        },
        "tags": {},
    }


def _subnet(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """A subnet in the placeholder VPC; one the program listed for a cluster whose VPC (and
    region) it gave is in that VPC (and region)."""
    subnet_id = str(args.get("id", "subnet-unknown"))
    declared = _declared_for_subnet(subnet_id)
    region = (declared and declared.facts.get("region")) or aws_region(config, args)
    zone = "abc"[int(digest("az", subnet_id, length=2), 16) % 3]
    return {
        "id": subnet_id,
        "arn": f"arn:aws:ec2:{region}:{ACCOUNT_ID}:subnet/{subnet_id}",
        "vpcId": (declared and declared.facts.get("vpc_id")) or plan_vpc_id(config),
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


_AWS_INVOKES: dict[str, InvokeHandler] = {
    "aws:eks/getCluster:getCluster": _eks_cluster,
    "aws:ec2/getSubnet:getSubnet": _subnet,
    "aws:index/getRegion:getRegion": _region,
    "aws:index/getCallerIdentity:getCallerIdentity": _caller_identity,
    "aws:index/getPartition:getPartition": _partition,
}
INVOKES.update(_AWS_INVOKES)


def _oidc_provider(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    url = str(args.get("url", "")).removeprefix("https://")
    arn = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{url}"
    return {
        "id": arn,
        "arn": arn,
        "url": url,
        "clientIdLists": ["sts.amazonaws.com"],
        "thumbprintLists": [digest("thumbprint", url, length=40)],
        "tags": {},
    }


INVOKES["aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider"] = _oidc_provider


ID_PREFIXES.update(
    {
        "aws:ec2/securityGroup:SecurityGroup": "sg-",
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr-",
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr-",
        "aws:fsx/lustreFileSystem:LustreFileSystem": "fs-",
        "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": "dra-",
        "aws:efs/fileSystem:FileSystem": "fs-",
        "aws:efs/mountTarget:MountTarget": "fsmt-",
        "aws:efs/accessPoint:AccessPoint": "fsap-",
    }
)
ID_FROM_INPUT.update(
    {
        "aws:efs/fileSystemPolicy:FileSystemPolicy": "fileSystemId",
        "aws:efs/backupPolicy:BackupPolicy": "fileSystemId",
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": "bucket",
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls": "bucket",
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
            "bucket"
        ),
        "aws:s3/bucketVersioning:BucketVersioning": "bucket",
        "aws:s3/bucketPolicy:BucketPolicy": "bucket",
    }
)


def _in(r: Created) -> str:
    """The region a created resource is in: the stack's AWS region."""
    return aws_region(r.config)


def _arn(r: Created, service: str) -> str:
    """The start of the ARN of ``r``, a resource of ``service`` in the stack's region and
    account; its resource part follows."""
    return f"arn:aws:{service}:{_in(r)}:{ACCOUNT_ID}:"


ID_MAKERS["aws:eks/addon:Addon"] = lambda r: (
    f"{r.inputs.get('clusterName')}:{r.inputs.get('addonName')}"
)
ID_MAKERS["aws:s3/bucket:Bucket"] = lambda r: r.autoname(r.inputs.get("bucket"))
ID_MAKERS["aws:iam/role:Role"] = lambda r: r.autoname(r.inputs.get("name"))


@outputs_of("aws:ec2/securityGroup:SecurityGroup")
def _security_group(r: Created) -> dict[str, Any]:
    return {
        "name": r.autoname(r.inputs.get("name")),
        "arn": _arn(r, "ec2") + f"security-group/{r.id}",
        "ownerId": ACCOUNT_ID,
    }


@outputs_of(
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
)
def _security_group_rule(r: Created) -> dict[str, Any]:
    return {
        "securityGroupRuleId": r.id,
        "arn": _arn(r, "ec2") + f"security-group-rule/{r.id}",
    }


def _file_system(r: Created, fs_id: Any, service: str, dns: str) -> dict[str, Any]:
    """What an FSx or EFS file system ``fs_id`` is known by: its ARN (of ``service``), the DNS
    name AWS gives it (``<id>.<dns>.<region>.amazonaws.com``) and its owner."""
    return {
        "arn": _arn(r, service) + f"file-system/{fs_id}",
        "dnsName": f"{fs_id}.{dns}.{_in(r)}.amazonaws.com",
        "ownerId": ACCOUNT_ID,
    }


@outputs_of("aws:fsx/lustreFileSystem:LustreFileSystem")
def _lustre(r: Created) -> dict[str, Any]:
    return {
        **_file_system(r, r.id, "fsx", "fsx"),
        "mountName": r.hexid("mount", 8),
        "networkInterfaceIds": [f"eni-{r.hexid('eni')}"],
        "vpcId": plan_vpc_id(r.config),
    }


@outputs_of("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
def _dra(r: Created) -> dict[str, Any]:
    fs_id = r.inputs.get("fileSystemId")
    return {
        "associationId": r.id,
        "arn": _arn(r, "fsx") + f"association/{fs_id}/{r.id}",
    }


@outputs_of("aws:efs/fileSystem:FileSystem")
def _efs(r: Created) -> dict[str, Any]:
    return {**_file_system(r, r.id, "elasticfilesystem", "efs"), "numberOfMountTargets": 0}


@outputs_of("aws:efs/mountTarget:MountTarget")
def _efs_mount_target(r: Created) -> dict[str, Any]:
    fs_id = r.inputs.get("fileSystemId")
    octet = int(r.hexid("ip", 2), 16)
    fs = _file_system(r, fs_id, "elasticfilesystem", "efs")
    return {
        "dnsName": fs["dnsName"],
        "fileSystemArn": fs["arn"],
        "ipAddress": f"10.0.{octet % 32}.{10 + octet % 200}",
        "networkInterfaceId": f"eni-{r.hexid('eni')}",
        "ownerId": ACCOUNT_ID,
        "availabilityZoneName": f"{_in(r)}a",
    }


@outputs_of("aws:efs/accessPoint:AccessPoint")
def _efs_access_point(r: Created) -> dict[str, Any]:
    fs_id = r.inputs.get("fileSystemId")
    return {
        "arn": _arn(r, "elasticfilesystem") + f"access-point/{r.id}",
        "fileSystemArn": _arn(r, "elasticfilesystem") + f"file-system/{fs_id}",
        "ownerId": ACCOUNT_ID,
    }


@outputs_of("aws:s3/bucket:Bucket")
def _bucket(r: Created) -> dict[str, Any]:
    return {
        "bucket": r.id,
        "arn": f"arn:aws:s3:::{r.id}",
        "bucketDomainName": f"{r.id}.s3.amazonaws.com",
        "bucketRegionalDomainName": f"{r.id}.s3.{_in(r)}.amazonaws.com",
        "region": _in(r),
    }


@outputs_of("aws:eks/addon:Addon")
def _addon(r: Created) -> dict[str, Any]:
    return {
        "arn": _arn(r, "eks") + f"addon/{r.inputs.get('clusterName')}/"
        f"{r.inputs.get('addonName')}/{r.hexid('addon', 8)}",
        "addonVersion": r.inputs.get("addonVersion") or "v0.0.0-eksbuild.1",
    }


@outputs_of("aws:eks/podIdentityAssociation:PodIdentityAssociation")
def _pod_identity(r: Created) -> dict[str, Any]:
    association = f"a-{r.hexid('association', 17)}"
    return {
        "associationId": association,
        "associationArn": _arn(r, "eks") + f"podidentityassociation/"
        f"{r.inputs.get('clusterName')}/{association}",
    }


@outputs_of("aws:iam/role:Role")
def _role(r: Created) -> dict[str, Any]:
    return {
        "name": r.id,
        "arn": f"arn:aws:iam::{ACCOUNT_ID}:role{r.inputs.get('path') or '/'}{r.id}",
        "uniqueId": "AROA" + r.hexid("role").upper(),
    }


@outputs_of("aws:iam/rolePolicy:RolePolicy")
def _role_policy(r: Created) -> dict[str, Any]:
    return {"name": r.autoname(r.inputs.get("name"))}


@outputs_of("aws:iam/policy:Policy")
def _policy(r: Created) -> dict[str, Any]:
    policy = r.autoname(r.inputs.get("name"))
    return {
        "name": policy,
        "arn": f"arn:aws:iam::{ACCOUNT_ID}:policy{r.inputs.get('path') or '/'}{policy}",
        "policyId": "ANPA" + r.hexid("policy").upper(),
    }


def _eks_node_groups(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """One managed node group per placeholder cluster."""
    cluster = str(args.get("clusterName", "cluster"))
    return {
        "id": cluster,
        "clusterName": cluster,
        "names": [f"{cluster}-nodes"],
        "region": aws_region(config, args),
    }


def _eks_node_group(args: Mapping[str, Any], config: Mapping[str, str]) -> dict[str, Any]:
    """A node group in its cluster's placeholder subnets (the ones ``_eks_cluster`` reports),
    so defaulting mount targets to cluster plus node group subnets changes no plan."""
    cluster = str(args.get("clusterName", "cluster"))
    group = str(args.get("nodeGroupName", f"{cluster}-nodes"))
    region = aws_region(config, args)
    return {
        "id": f"{cluster}:{group}",
        "clusterName": cluster,
        "nodeGroupName": group,
        "arn": f"arn:aws:eks:{region}:{ACCOUNT_ID}:nodegroup/{cluster}/{group}/"
        f"{digest('nodegroup', cluster, group, length=8)}",
        "nodeRoleArn": f"arn:aws:iam::{ACCOUNT_ID}:role/{cluster}-nodes",
        "subnetIds": _cluster_subnets(cluster),
        "status": "ACTIVE",
        "region": region,
        "tags": {},
    }


INVOKES["aws:eks/getNodeGroups:getNodeGroups"] = _eks_node_groups
INVOKES["aws:eks/getNodeGroup:getNodeGroup"] = _eks_node_group


# ---- a cluster the program makes (EksCluster.from_cluster) --------------------------------------

ID_MAKERS["aws:eks/cluster:Cluster"] = lambda r: r.autoname(r.inputs.get("name"))
ID_MAKERS["aws:eks/nodeGroup:NodeGroup"] = lambda r: (
    f"{r.inputs.get('clusterName')}:{r.autoname(r.inputs.get('nodeGroupName'))}"
)


@outputs_of("aws:eks/cluster:Cluster")
def _created_eks_cluster(r: Created) -> dict[str, Any]:
    """What EKS reports of a cluster it made: the endpoint, CA, OIDC issuer and the VPC of
    its subnets and the cluster security group (the answer a lookup of it gives,
    :func:`_eks_cluster`, for its name)."""
    name = r.id
    region = _in(r)
    oidc = digest("oidc", name, length=32).upper()
    vpc = dict(r.inputs.get("vpcConfig") or {})
    return {
        "name": name,
        "arn": _arn(r, "eks") + f"cluster/{name}",
        "endpoint": f"https://{oidc}.gr7.{region}.eks.amazonaws.com",
        "status": "ACTIVE",
        "platformVersion": "eks.1",
        "certificateAuthority": {"data": "cGxhbi1wbGFjZWhvbGRlcg=="},
        "identities": [
            {"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{oidc}"}]}
        ],
        "vpcConfig": {
            **vpc,
            "vpcId": plan_vpc_id(r.config),
            "clusterSecurityGroupId": f"sg-{digest('cluster-sg', name)}",
        },
    }


@outputs_of("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
def _created_oidc_provider(r: Created) -> dict[str, Any]:
    """IAM keeps a provider's URL without ``https://``; its ARN names that URL."""
    url = str(r.inputs.get("url") or "").removeprefix("https://")
    arn = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{url}"
    return {"arn": arn, "url": url}


ID_MAKERS["aws:iam/openIdConnectProvider:OpenIdConnectProvider"] = lambda r: (
    f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/"
    + str(r.inputs.get("url") or "").removeprefix("https://")
)


@outputs_of("aws:eks/nodeGroup:NodeGroup")
def _created_node_group(r: Created) -> dict[str, Any]:
    cluster = r.inputs.get("clusterName")
    group = r.id.split(":", 1)[-1]
    return {
        "nodeGroupName": group,
        "arn": _arn(r, "eks") + f"nodegroup/{cluster}/{group}/{r.hexid('nodegroup', 8)}",
        "status": "ACTIVE",
    }
