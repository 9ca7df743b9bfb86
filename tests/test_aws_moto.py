"""Replay every AWS payload the plans would send against moto, so a malformed request or a
reference to something that does not exist fails here as it would on AWS.

Plans run with --fill-outputs; their placeholder ids are mapped to the ids moto hands out as
each resource is created in dependency order. The cluster the plan looked up is created in moto
first. Any id-shaped value that maps to nothing is a dangling reference and fails the test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar

import boto3
import pytest
from botocore.exceptions import ParamValidationError
from botocore.validate import ParamValidator
from moto import mock_aws

from pulumi_modelstore.plan.engine import Plan
from pulumi_modelstore.plan.placeholders import INVOKES
from tests.conftest import all_programs

AWS_ID = re.compile(r"^(sg|sgr|subnet|vpc|fs|dra|fsap|fsmt)-[0-9a-f]{8,}$")
REGION = "us-west-2"


class Replay:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.ids: dict[str, str] = {}
        region = plan.config.get("aws:region", REGION)
        self.ec2 = boto3.client("ec2", region_name=region)
        self.fsx = boto3.client("fsx", region_name=region)
        self.iam = boto3.client("iam", region_name=region)
        self.eks = boto3.client("eks", region_name=region)
        self.region = region
        self.replayed: list[str] = []

    # -- references -------------------------------------------------------------------------
    def ref(self, value: Any, where: str) -> Any:
        if isinstance(value, list):
            return [self.ref(v, where) for v in value]
        if isinstance(value, str) and AWS_ID.match(value):
            if value not in self.ids:
                raise AssertionError(f"{where}: dangling reference {value}")
            return self.ids[value]
        return value

    def tags(self, inputs: dict[str, Any]) -> list[dict[str, str]]:
        return [{"Key": k, "Value": v} for k, v in sorted((inputs.get("tags") or {}).items())]

    def check_shape(self, service: Any, operation: str, params: dict[str, Any]) -> None:
        shape = service.meta.service_model.operation_model(operation).input_shape
        report = ParamValidator().validate(params, shape)
        if report.has_errors():
            raise ParamValidationError(report=report.generate_report())

    # -- the world the plan looked up -------------------------------------------------------
    def seed(self) -> None:
        for call in self.plan.invokes:
            if call["token"] != "aws:eks/getCluster:getCluster":
                continue
            cluster = INVOKES[call["token"]](call["args"], self.plan.config)
            vpc = cluster["vpcConfig"]
            if vpc["vpcId"] not in self.ids:
                self.ids[vpc["vpcId"]] = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"][
                    "VpcId"
                ]
            vpc_id = self.ids[vpc["vpcId"]]
            for i, subnet in enumerate(vpc["subnetIds"]):
                self.ids[subnet] = self.ec2.create_subnet(
                    VpcId=vpc_id,
                    CidrBlock=f"10.0.{i * 32}.0/19",
                    AvailabilityZone=f"{self.region}{'abc'[i % 3]}",
                )["Subnet"]["SubnetId"]
            self.ids[vpc["clusterSecurityGroupId"]] = self.ec2.create_security_group(
                GroupName=f"eks-cluster-sg-{call['args']['name']}",
                Description="EKS cluster security group",
                VpcId=vpc_id,
            )["GroupId"]

    # -- one function per resource type -----------------------------------------------------
    def security_group(self, s: dict[str, Any]) -> str:
        i = s["inputs"]
        return self.ec2.create_security_group(
            GroupName=s["outputs"]["name"],
            Description=i["description"],
            VpcId=self.ref(i["vpcId"], s["urn"]),
            TagSpecifications=[{"ResourceType": "security-group", "Tags": self.tags(i)}],
        )["GroupId"]

    def _rule(self, s: dict[str, Any], call: Callable[..., Any]) -> str:
        i = s["inputs"]
        result = call(
            GroupId=self.ref(i["securityGroupId"], s["urn"]),
            IpPermissions=[
                {
                    "IpProtocol": i["ipProtocol"],
                    "FromPort": i["fromPort"],
                    "ToPort": i["toPort"],
                    "UserIdGroupPairs": [
                        {
                            "GroupId": self.ref(i["referencedSecurityGroupId"], s["urn"]),
                            "Description": i.get("description", ""),
                        }
                    ],
                }
            ],
        )
        return result["SecurityGroupRules"][0]["SecurityGroupRuleId"]

    def ingress(self, s: dict[str, Any]) -> str:
        return self._rule(s, self.ec2.authorize_security_group_ingress)

    def egress(self, s: dict[str, Any]) -> str:
        return self._rule(s, self.ec2.authorize_security_group_egress)

    def lustre(self, s: dict[str, Any]) -> str:
        i = s["inputs"]
        lustre: dict[str, Any] = {
            "DeploymentType": i["deploymentType"],
            "DataCompressionType": i["dataCompressionType"],
        }
        for key, name in (
            ("perUnitStorageThroughput", "PerUnitStorageThroughput"),
            ("driveCacheType", "DriveCacheType"),
        ):
            if key in i:
                lustre[name] = i[key]
        if "metadataConfiguration" in i:
            meta = i["metadataConfiguration"]
            lustre["MetadataConfiguration"] = {
                "Mode": meta["mode"],
                **({"Iops": meta["iops"]} if "iops" in meta else {}),
            }
        params: dict[str, Any] = {
            "FileSystemType": "LUSTRE",
            "StorageCapacity": i["storageCapacity"],
            "StorageType": i["storageType"],
            "SubnetIds": [self.ref(i["subnetIds"], s["urn"])],
            "SecurityGroupIds": self.ref(i["securityGroupIds"], s["urn"]),
            "FileSystemTypeVersion": i["fileSystemTypeVersion"],
            "LustreConfiguration": lustre,
            "Tags": self.tags(i),
        }
        if "kmsKeyId" in i:
            params["KmsKeyId"] = i["kmsKeyId"]
        fs = self.fsx.create_file_system(**params)["FileSystem"]
        groups = self.ec2.describe_security_groups(GroupIds=params["SecurityGroupIds"])
        assert len(groups["SecurityGroups"]) == len(params["SecurityGroupIds"])
        return fs["FileSystemId"]

    def data_repository_association(self, s: dict[str, Any]) -> str:
        # moto has no DRA API: check the request against the FSx API model and the reference
        # against the file system created above.
        i = s["inputs"]
        params = {
            "FileSystemId": self.ref(i["fileSystemId"], s["urn"]),
            "FileSystemPath": i["fileSystemPath"],
            "DataRepositoryPath": i["dataRepositoryPath"],
            "BatchImportMetaDataOnCreate": i["batchImportMetaDataOnCreate"],
            "S3": {"AutoImportPolicy": {"Events": i["s3"]["autoImportPolicy"]["events"]}},
            "Tags": self.tags(i),
        }
        self.check_shape(self.fsx, "CreateDataRepositoryAssociation", params)
        described = self.fsx.describe_file_systems(FileSystemIds=[params["FileSystemId"]])
        assert described["FileSystems"]
        return s["id"]

    def eks_addon(self, s: dict[str, Any]) -> str:
        i = s["inputs"]
        params = {"clusterName": i["clusterName"], "addonName": i["addonName"]}
        for key in ("addonVersion", "configurationValues", "resolveConflicts"):
            if key in i:
                params[key] = i[key]
        if "configurationValues" in params:
            json.loads(params["configurationValues"])
        self.check_shape(self.eks, "CreateAddon", params)
        return s["id"]

    def role(self, s: dict[str, Any]) -> str:
        i = s["inputs"]
        self.iam.create_role(
            RoleName=s["outputs"]["name"], AssumeRolePolicyDocument=i["assumeRolePolicy"]
        )
        return s["outputs"]["name"]

    def policy(self, s: dict[str, Any]) -> str:
        return self.iam.create_policy(
            PolicyName=s["outputs"]["name"], PolicyDocument=s["inputs"]["policy"]
        )["Policy"]["Arn"]

    HANDLERS: ClassVar[dict[str, str]] = {
        "aws:ec2/securityGroup:SecurityGroup": "security_group",
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "ingress",
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "egress",
        "aws:fsx/lustreFileSystem:LustreFileSystem": "lustre",
        "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": (
            "data_repository_association"
        ),
        "aws:eks/addon:Addon": "eks_addon",
        "aws:iam/role:Role": "role",
        "aws:iam/policy:Policy": "policy",
    }

    def run(self) -> None:
        self.seed()
        for state in self.plan.states():
            if not state["custom"] or not state["type"].startswith("aws:"):
                continue
            handler = self.HANDLERS.get(state["type"])
            assert handler, f"no moto replay for {state['type']}: add one"
            self.ids[state["id"]] = getattr(self, handler)(state)
            self.replayed.append(state["type"])


AWS_PROGRAMS = [p[0] for p in all_programs() if "fsx" in p[0] or "aws" in p[0]]


@pytest.fixture
def aws_env(monkeypatch):
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(key, value)


@pytest.mark.parametrize("pid", AWS_PROGRAMS)
def test_aws_payloads_replay_against_moto(aws_env, filled_plans, pid):
    with mock_aws():
        replay = Replay(filled_plans[pid])
        replay.run()
    assert "aws:fsx/lustreFileSystem:LustreFileSystem" in replay.replayed


def test_a_dangling_reference_fails_the_replay(aws_env, filled_plans):
    plan = filled_plans["stacks/aws-prod"]
    broken = Plan(
        **{
            **plan.__dict__,
            "steps": [
                {
                    **step,
                    "newState": {
                        **step["newState"],
                        "inputs": {
                            **step["newState"]["inputs"],
                            "securityGroupIds": ["sg-0123456789abcdef0"],
                        },
                    },
                }
                if step["newState"]["type"] == "aws:fsx/lustreFileSystem:LustreFileSystem"
                else step
                for step in plan.steps
            ],
        }
    )
    with mock_aws(), pytest.raises(AssertionError, match="dangling reference sg-0123456789abcdef0"):
        Replay(broken).run()


def test_a_malformed_payload_fails_the_replay(aws_env, filled_plans):
    plan = filled_plans["stacks/aws-prod"]
    broken = Plan(
        **{
            **plan.__dict__,
            "steps": [
                {
                    **step,
                    "newState": {
                        **step["newState"],
                        "inputs": {**step["newState"]["inputs"], "storageCapacity": "2400"},
                    },
                }
                if step["newState"]["type"] == "aws:fsx/lustreFileSystem:LustreFileSystem"
                else step
                for step in plan.steps
            ],
        }
    )
    with mock_aws(), pytest.raises(ParamValidationError, match="StorageCapacity"):
        Replay(broken).run()
