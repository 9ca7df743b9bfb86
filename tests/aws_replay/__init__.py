"""Replay a plan's AWS payloads against moto.

Plans run with --fill-outputs; their placeholder ids are mapped to the ids moto hands out as each
resource is created in dependency order. The cluster the plan looked up is created in moto
first. Any id-shaped value that maps to nothing is a dangling reference and fails the replay.

Each backend registers its resource types with :func:`handles` in a module of this package
(``network``, ``fsx``, ``iam``, ...); every module here is imported, so a new backend adds a
module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import boto3
from botocore.exceptions import ParamValidationError
from botocore.validate import ParamValidator

from pulumi_modelstore.plan.engine import Plan
from pulumi_modelstore.plan.placeholders import INVOKES

AWS_ID = re.compile(r"^(sg|sgr|subnet|vpc|fs|dra|fsap|fsmt|vol|snap)-[0-9a-f]{8,}$")
ARN = re.compile(r"^arn:aws:[a-z0-9-]+:[a-z0-9-]*:\d{12}:")
DEFAULT_REGION = "us-west-2"

Handler = Callable[["Replay", dict[str, Any]], str]
HANDLERS: dict[str, Handler] = {}


def handles(*types: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for type_ in types:
            HANDLERS[type_] = fn
        return fn

    return register


@cache
def _session() -> boto3.session.Session:
    """One boto3 session for every replay of the test session: its loader keeps each service
    model parsed once. (moto gives every ``mock_aws()`` a fresh default session, which parsed the
    models again, about a second of CPU per replay; moto's stub sits in botocore's built-in
    handlers, so a session made after moto's import is mocked as the default one is.)"""
    return boto3.session.Session()


@cache
def _client(service: str, region: str) -> Any:
    """One client per service and region for every replay: a client keeps no state of moto's
    (each ``mock_aws()`` starts its backends afresh), and making one was a tenth of a replay."""
    return _session().client(service, region_name=region)


class Replay:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.region = plan.config.get("aws:region", DEFAULT_REGION)
        self.ids: dict[str, str] = {}
        self.replayed: list[str] = []
        self.seeded_clusters: dict[str, dict[str, Any]] = {}

    def client(self, service: str) -> Any:
        return _client(service, self.region)

    # -- references -------------------------------------------------------------------------
    def ref(self, value: Any, where: str) -> Any:
        """Map a placeholder id (or a list, or an ARN containing one) to moto's; fail on an
        id-shaped value nothing created."""
        if isinstance(value, list):
            return [self.ref(v, where) for v in value]
        if isinstance(value, str) and AWS_ID.match(value):
            if value not in self.ids:
                raise AssertionError(f"{where}: dangling reference {value}")
            return self.ids[value]
        return value

    def state_by_id(self, placeholder_id: str) -> dict[str, Any]:
        for state in self.plan.states():
            if state["id"] == placeholder_id:
                return state
        raise AssertionError(f"dangling reference {placeholder_id}")

    @staticmethod
    def tags(inputs: dict[str, Any]) -> list[dict[str, str]]:
        return [{"Key": k, "Value": v} for k, v in sorted((inputs.get("tags") or {}).items())]

    def check_shape(self, service: str, operation: str, params: dict[str, Any]) -> None:
        """Validate a request against the AWS API model, for APIs moto does not have."""
        shape = self.client(service).meta.service_model.operation_model(operation).input_shape
        report = ParamValidator().validate(params, shape)
        if report.has_errors():
            raise ParamValidationError(report=report.generate_report())

    # -- the world the plan looked up -------------------------------------------------------
    def seed(self) -> None:
        ec2 = self.client("ec2")
        for call in self.plan.invokes:
            if call["token"] != "aws:eks/getCluster:getCluster":
                continue
            cluster = INVOKES[call["token"]](call["args"], self.plan.config)
            self.seeded_clusters[cluster["name"]] = cluster
            vpc = cluster["vpcConfig"]
            if vpc["vpcId"] not in self.ids:
                self.ids[vpc["vpcId"]] = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
            vpc_id = self.ids[vpc["vpcId"]]
            for i, subnet in enumerate(vpc["subnetIds"]):
                if subnet in self.ids:
                    continue
                self.ids[subnet] = ec2.create_subnet(
                    VpcId=vpc_id,
                    CidrBlock=f"10.0.{len(self.ids) * 16 % 256}.0/20",
                    AvailabilityZone=f"{self.region}{'abc'[i % 3]}",
                )["Subnet"]["SubnetId"]
            sg = vpc["clusterSecurityGroupId"]
            if sg not in self.ids:
                self.ids[sg] = ec2.create_security_group(
                    GroupName=f"eks-cluster-sg-{cluster['name']}",
                    Description="EKS cluster security group",
                    VpcId=vpc_id,
                )["GroupId"]
            issuer = cluster["identities"][0]["oidcs"][0]["issuer"]
            self.client("iam").create_open_id_connect_provider(
                Url=issuer, ClientIDList=["sts.amazonaws.com"], ThumbprintList=["a" * 40]
            )

    def seed_given(self) -> None:
        """A cluster given by explicit attributes or a platform stack's outputs is not looked
        up: seed its VPC, subnets and node security groups from what the stack gives (its
        ``modelstore:clusters`` attributes, or the outputs of the stack it references, as the
        plan read them), and its OIDC provider."""
        ec2 = self.client("ec2")
        for given in _given_clusters(self.plan):
            vpc = given.get("vpc_id")
            if not isinstance(vpc, str):
                continue
            if vpc not in self.ids:
                self.ids[vpc] = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
            for i, subnet in enumerate(given.get("cluster_subnet_ids") or []):
                if subnet not in self.ids:
                    self.ids[subnet] = ec2.create_subnet(
                        VpcId=self.ids[vpc],
                        CidrBlock=f"10.0.{len(self.ids) * 16 % 256}.0/20",
                        AvailabilityZone=f"{self.region}{'abc'[i % 3]}",
                    )["Subnet"]["SubnetId"]
            for group in given.get("node_security_group_ids") or []:
                if group not in self.ids:
                    self.ids[group] = ec2.create_security_group(
                        GroupName=f"nodes-{group}", Description="node group", VpcId=self.ids[vpc]
                    )["GroupId"]
            issuer = given.get("oidc_issuer")
            if isinstance(issuer, str) and issuer not in self.seeded_clusters:
                self.seeded_clusters[issuer] = given
                self.client("iam").create_open_id_connect_provider(
                    Url=issuer, ClientIDList=["sts.amazonaws.com"], ThumbprintList=["a" * 40]
                )

    def run(self) -> Replay:
        self.seed()
        self.seed_given()
        for state in self.plan.states():
            if not state["custom"] or not state["type"].startswith("aws:"):
                continue
            handler = HANDLERS.get(state["type"])
            assert handler, f"no moto replay for {state['type']}: add one in tests/aws_replay/"
            self.ids[state["id"]] = handler(self, state)
            self.replayed.append(state["type"])
        return self


def _given_clusters(plan: Plan) -> list[dict[str, Any]]:
    """The EKS facts each ``modelstore:clusters`` entry of the plan's stack gives: its
    attributes, and what its outputs read from the referenced stack."""
    import json

    try:
        clusters = json.loads(plan.config.get("modelstore:clusters") or "{}")
    except ValueError:
        return []
    read = {
        s["id"]: s["outputs"].get("outputs") or {}
        for s in plan.states()
        if s["type"] == "pulumi:pulumi:StackReference"
    }
    found: list[dict[str, Any]] = []
    for entry in clusters.values() if isinstance(clusters, dict) else []:
        if not isinstance(entry, dict) or entry.get("kind") != "eks":
            continue
        given = dict(entry.get("attributes") or {})
        outputs = read.get(entry.get("stack_reference"), {})
        for field, output in (entry.get("outputs") or {}).items():
            if output in outputs:
                given[field] = outputs[output]
        found.append(given)
    return found


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
