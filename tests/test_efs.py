"""EfsModelStore: graph wiring, inputs, defaults, protection, IAM and exact input errors."""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections import Counter
from typing import Any, cast

import pulumi
import pytest
from moto import mock_aws

from pulumi_modelstore.aws import EFS_CSI, EfsModelStore
from pulumi_modelstore.aws import efs as efs_module
from pulumi_modelstore.aws.efs import EfsModelStoreArgs
from pulumi_modelstore.aws.policies import client_access_policy
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.plan.engine import UNKNOWN, PlanError
from pulumi_modelstore.plan.placeholders import INVOKES
from pulumi_modelstore.plan.placeholders.aws import plan_vpc_id
from pulumi_modelstore.program import build_stores
from tests.aws_replay import Replay
from tests.conftest import (
    CLUSTER,
    CLUSTER_SG,
    CLUSTER_SUBNETS,
    PV,
    PVC,
    RELEASE,
    assert_refused,
    bad_inputs,
    plan,
)

FS = "aws:efs/fileSystem:FileSystem"
MOUNT_TARGET = "aws:efs/mountTarget:MountTarget"
ACCESS_POINT = "aws:efs/accessPoint:AccessPoint"
FS_POLICY = "aws:efs/fileSystemPolicy:FileSystemPolicy"
BACKUP = "aws:efs/backupPolicy:BackupPolicy"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
POD_IDENTITY = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
ADDON = "aws:eks/addon:Addon"
GET_SUBNET = "aws:ec2/getSubnet:getSubnet"
GET_NODE_GROUPS = "aws:eks/getNodeGroups:getNodeGroups"
GET_NODE_GROUP = "aws:eks/getNodeGroup:getNodeGroup"
REGION = "us-west-2"
KMS_KEY_ARN = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def efs(**args: Any):
    fields: dict[str, Any] = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
    return lambda: EfsModelStore("llama", cast(EfsModelStoreArgs, fields))


def registered(err: pytest.ExceptionInfo[PlanError]) -> list[str]:
    return [u.rsplit("::", 1)[-1] for u in err.value.registered]


# Refused on input: nothing registers but the stack.
NOTHING = ["modelstore-test"]


def plan_subnet_zone(subnet_id: str) -> str:
    return INVOKES[GET_SUBNET]({"id": subnet_id}, {"aws:region": REGION})["availabilityZone"]


def subnets_in(zones: dict[str, str]):
    """A getSubnet answer placing each subnet in the given zone letter, in the plan's VPC."""

    def answer(args, config):
        return {
            "id": args["id"],
            "vpcId": plan_vpc_id(config),
            "availabilityZone": f"{REGION}{zones[args['id']]}",
        }

    return {GET_SUBNET: answer}


def by_namespace(states: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["inputs"]["spec"]["claimRef"]["namespace"]: s for s in states}


def policy_of(state: dict[str, Any], key: str = "policy") -> dict[str, Any]:
    return json.loads(state["inputs"][key])


# -- network ----------------------------------------------------------------------------------


def test_one_mount_target_per_zone_each_after_every_nfs_rule():
    p = plan(efs(), fill=True)
    (sg,) = p.by_type(SG)
    (rule,) = p.by_type(INGRESS)
    assert not p.by_type(EGRESS)
    assert rule["inputs"]["securityGroupId"] == sg["id"]
    assert rule["inputs"]["referencedSecurityGroupId"] == CLUSTER_SG
    assert (rule["inputs"]["ipProtocol"], rule["inputs"]["fromPort"], rule["inputs"]["toPort"]) == (
        "tcp",
        2049,
        2049,
    )
    targets = p.by_type(MOUNT_TARGET)
    # prod-eks's three placeholder subnets sit in three zones.
    assert sorted(t["inputs"]["subnetId"] for t in targets) == CLUSTER_SUBNETS
    fs = p.by_type(FS)[0]
    for target in targets:
        assert rule["urn"] in target["dependencies"]
        assert target["inputs"]["securityGroups"] == [sg["id"]]
        assert target["inputs"]["fileSystemId"] == fs["id"]


def test_subnets_sharing_a_zone_get_one_mount_target_in_the_first_by_id():
    zones = {
        "subnet-0000000c": "a",
        "subnet-0000000a": "a",
        "subnet-0000000b": "b",
        "subnet-0000000d": "b",
    }
    for order in (
        ["subnet-0000000c", "subnet-0000000a", "subnet-0000000d", "subnet-0000000b"],
        sorted(zones),
    ):
        p = plan(efs(subnet_ids=order), invokes=subnets_in(zones))
        targets = {
            t["urn"].rsplit("::", 1)[-1]: t["inputs"]["subnetId"] for t in p.by_type(MOUNT_TARGET)
        }
        assert targets == {
            f"llama-mount-target-{REGION}a": "subnet-0000000a",
            f"llama-mount-target-{REGION}b": "subnet-0000000b",
        }


def test_zones_are_looked_up_before_anything_registers():
    p = plan(efs())
    looked_up = {i["args"]["id"] for i in p.invokes if i["token"] == GET_SUBNET}
    assert looked_up == set(CLUSTER_SUBNETS)


def test_each_subnet_is_looked_up_once():
    p = plan(efs())
    looked_up = [i["args"]["id"] for i in p.invokes if i["token"] == GET_SUBNET]
    assert sorted(looked_up) == CLUSTER_SUBNETS


def node_groups(groups: dict[str, list[str]]):
    """getNodeGroups/getNodeGroup answers for managed node groups in the given subnets."""
    return {
        GET_NODE_GROUPS: lambda args, config: {"names": sorted(groups)},
        GET_NODE_GROUP: lambda args, config: {"subnetIds": groups[args["nodeGroupName"]]},
    }


def zones_with(extra: dict[str, str]):
    """The placeholder getSubnet answer, with the given subnets placed in the given zones."""

    def answer(args, config):
        subnet = INVOKES[GET_SUBNET](args, config)
        if args["id"] in extra:
            subnet["availabilityZone"] = f"{REGION}{extra[args['id']]}"
        return subnet

    return {GET_SUBNET: answer}


def test_a_node_group_in_a_zone_outside_the_cluster_subnets_gets_a_mount_target():
    cluster_zones = {plan_subnet_zone(s) for s in CLUSTER_SUBNETS}
    assert cluster_zones == {f"{REGION}{z}" for z in "abc"}
    invokes = {
        # One group in the cluster's subnets (deduped), one in a fourth zone.
        **node_groups({"cpu": CLUSTER_SUBNETS[:2], "gpu": ["subnet-0000000d"]}),
        **zones_with({"subnet-0000000d": "d"}),
    }
    p = plan(efs(), invokes=invokes)
    targets = {
        t["urn"].rsplit("::llama-mount-target-", 1)[-1]: t["inputs"]["subnetId"]
        for t in p.by_type(MOUNT_TARGET)
    }
    assert targets == {
        **{plan_subnet_zone(s): s for s in CLUSTER_SUBNETS},
        f"{REGION}d": "subnet-0000000d",
    }
    asked = [i["args"] for i in p.invokes if i["token"] == GET_NODE_GROUP]
    assert sorted(a["nodeGroupName"] for a in asked) == ["cpu", "gpu"]
    assert {a["clusterName"] for a in asked} == {CLUSTER}
    looked_up = [i["args"]["id"] for i in p.invokes if i["token"] == GET_SUBNET]
    assert sorted(looked_up) == sorted([*CLUSTER_SUBNETS, "subnet-0000000d"])


def test_a_node_group_subnet_never_moves_a_cluster_subnets_mount_target():
    # subnet-00000000 sorts before every placeholder subnet and sits in a zone the cluster covers.
    zone = plan_subnet_zone(CLUSTER_SUBNETS[0])[-1]
    invokes = {**node_groups({"gpu": ["subnet-00000000"]}), **zones_with({"subnet-00000000": zone})}
    p = plan(efs(), invokes=invokes)
    assert sorted(t["inputs"]["subnetId"] for t in p.by_type(MOUNT_TARGET)) == CLUSTER_SUBNETS


def test_given_subnets_skip_the_node_group_lookup():
    zones = {"subnet-0000000a": "a"}
    p = plan(efs(subnet_ids=["subnet-0000000a"]), invokes=subnets_in(zones))
    assert not [i for i in p.invokes if i["token"] in (GET_NODE_GROUPS, GET_NODE_GROUP)]
    assert [t["inputs"]["subnetId"] for t in p.by_type(MOUNT_TARGET)] == ["subnet-0000000a"]


def test_node_groups_are_looked_up_before_anything_registers():
    def denied(args, config):
        raise RuntimeError("AccessDeniedException: eks:ListNodegroups")

    with pytest.raises(PlanError) as err:
        plan(efs(), invokes={GET_NODE_GROUPS: denied})
    assert "eks:ListNodegroups" in str(err.value)
    assert registered(err) == NOTHING


def test_existing_security_group_is_used_as_is():
    p = plan(efs(security_group_id="sg-0123456789abcdef0"))
    assert not p.by_type(SG) and not p.by_type(INGRESS)
    assert len(p.by_type(MOUNT_TARGET)) == 3
    for target in p.by_type(MOUNT_TARGET):
        assert target["inputs"]["securityGroups"] == ["sg-0123456789abcdef0"]


def test_explicit_cluster_facts_skip_the_cluster_lookup():
    zones = {"subnet-0000000b": "a", "subnet-0000000c": "b"}

    def answer(args, config):
        return {
            "id": args["id"],
            "vpcId": "vpc-0000000a",
            "availabilityZone": f"eu-west-1{zones[args['id']]}",
        }

    p = plan(
        lambda: EfsModelStore(
            "llama",
            {
                "readers": ["inference"],
                "vpc_id": "vpc-0000000a",
                "cluster_subnet_ids": ["subnet-0000000c", "subnet-0000000b"],
                "node_security_group_ids": ["sg-0000000c", "sg-0000000d"],
            },
        ),
        invokes={GET_SUBNET: answer},
    )
    assert "aws:eks/getCluster:getCluster" not in {i["token"] for i in p.invokes}
    assert sorted(t["inputs"]["subnetId"] for t in p.by_type(MOUNT_TARGET)) == sorted(zones)
    assert sorted(r["inputs"]["referencedSecurityGroupId"] for r in p.by_type(INGRESS)) == [
        "sg-0000000c",
        "sg-0000000d",
    ]
    assert p.by_type(SG)[0]["inputs"]["vpcId"] == "vpc-0000000a"


# -- the file system ----------------------------------------------------------------------------


def test_file_system_defaults():
    p = plan(efs(tags={"team": "ml"}))
    fs = p.by_type(FS)[0]["inputs"]
    assert fs["encrypted"] is True
    assert fs["throughputMode"] == "elastic"
    assert fs["performanceMode"] == "generalPurpose"
    assert "provisionedThroughputInMibps" not in fs and "kmsKeyId" not in fs
    assert "lifecyclePolicies" not in fs  # no transition to IA: it slows model loads
    assert fs["tags"]["team"] == "ml" and fs["tags"]["Name"] == "llama"
    # Readers only: nobody writes models there that exist nowhere else (backup's default).
    (backup,) = p.by_type(BACKUP)
    assert backup["inputs"]["backupPolicy"] == {"status": "DISABLED"}
    tagged = [s for s in p.states() if s["type"].startswith("aws:") and "tags" in s["inputs"]]
    assert {s["type"] for s in tagged} == {FS, SG, INGRESS, ACCESS_POINT}
    for state in tagged:
        assert state["inputs"]["tags"]["team"] == "ml", state["urn"]


def test_file_system_options_reach_the_file_system():
    p = plan(
        efs(
            throughput_mode="provisioned",
            provisioned_throughput_in_mibps=256,
            performance_mode="maxIO",
            kms_key_arn=KMS_KEY_ARN,
            transition_to_ia="AFTER_30_DAYS",
            transition_to_primary_storage_class="AFTER_1_ACCESS",
            backup={"enabled": True},
        )
    )
    fs = p.by_type(FS)[0]["inputs"]
    assert (fs["throughputMode"], fs["provisionedThroughputInMibps"]) == ("provisioned", 256)
    assert (fs["performanceMode"], fs["kmsKeyId"], fs["encrypted"]) == (
        "maxIO",
        KMS_KEY_ARN,
        True,
    )
    # One transition per lifecycle policy, as the EFS API takes them.
    assert fs["lifecyclePolicies"] == [
        {"transitionToIa": "AFTER_30_DAYS"},
        {"transitionToPrimaryStorageClass": "AFTER_1_ACCESS"},
    ]
    assert p.by_type(BACKUP)[0]["inputs"]["backupPolicy"] == {"status": "ENABLED"}


# -- file system policy -------------------------------------------------------------------------


def test_policy_denies_clients_without_tls_and_still_lets_anonymous_clients_mount():
    p = plan(efs(readers=["inference"], writers=["loader"]), fill=True)
    fs = p.by_type(FS)[0]
    (state,) = p.by_type(FS_POLICY)
    assert state["inputs"]["fileSystemId"] == fs["id"]
    statements = policy_of(state)["Statement"]
    deny = [s for s in statements if s["Effect"] == "Deny"]
    assert deny == [
        {
            "Sid": "DenyWithoutTls",
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Action": "*",
            "Resource": fs["outputs"]["arn"],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    ]
    # A deny-only policy would refuse every client that does not sign with IAM: like the EFS
    # console's "enforce in-transit encryption" policy, clients via a mount target are allowed.
    (allow,) = [s for s in statements if s["Effect"] == "Allow"]
    assert allow["Principal"] == {"AWS": "*"}
    assert allow["Condition"] == {"Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"}}
    assert allow["Action"] == ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]


def test_a_store_without_writers_lets_no_anonymous_client_write():
    p = plan(efs(readers=["inference"]), fill=True)
    (allow,) = [
        s for s in policy_of(p.by_type(FS_POLICY)[0])["Statement"] if s["Effect"] == "Allow"
    ]
    assert allow["Action"] == ["elasticfilesystem:ClientMount"]


QWEN = {
    "source": "hf://Qwen/Qwen2.5-0.5B-Instruct",
    "revision": "7ae557604adf67be50417f59c2c2f167def9a775",
}


@pytest.mark.parametrize(
    "args",
    [{"model": QWEN}, {"dynamic_claims": True}],
    ids=["seed-job", "dynamic-claims"],
)
def test_without_iam_a_seed_job_or_dynamic_claims_let_mount_target_clients_write(aws_env, args):
    """Once a file system has a policy, an anonymous client gets only what it allows (EFS user
    guide, "Using IAM to control file system data access"): without ``ClientWrite`` the seed
    Job's mount (a writer of the loader namespace) and every dynamic claim's are read-only, so
    the seed fails on its first write. The policy, as EFS stores it (moto), grants the write."""
    p = plan(efs(readers=["inference"], **args), fill=True)
    (state,) = p.by_type(FS_POLICY)
    with mock_aws():
        client = Replay(p).run().client("efs")
        fs_id = client.describe_file_systems()["FileSystems"][0]["FileSystemId"]
        stored = json.loads(client.describe_file_system_policy(FileSystemId=fs_id)["Policy"])
    assert stored == policy_of(state)
    (allow,) = [s for s in stored["Statement"] if s["Effect"] == "Allow"]
    assert allow["Action"] == ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]


# -- access points and volumes --------------------------------------------------------------------


def test_an_access_point_per_consumer_runs_as_the_serving_pods_user():
    p = plan(efs(readers=["inference", "batch"], writers=["loader"]), fill=True)
    fs_id = p.by_type(FS)[0]["id"]
    points = {s["urn"].rsplit("-", 1)[-1]: s["inputs"] for s in p.by_type(ACCESS_POINT)}
    assert set(points) == {"inference", "batch", "loader"}
    for ap in points.values():
        assert ap["fileSystemId"] == fs_id
        assert ap["posixUser"] == {"uid": 1000, "gid": 1000}
        assert ap["rootDirectory"] == {
            "path": "/models",
            "creationInfo": {"ownerUid": 1000, "ownerGid": 1000, "permissions": "0755"},
        }
    custom = plan(efs(posix_uid=2000, posix_gid=3000, root_directory="/llama-3"))
    ap = custom.by_type(ACCESS_POINT)[0]["inputs"]
    assert ap["posixUser"] == {"uid": 2000, "gid": 3000}
    assert ap["rootDirectory"]["path"] == "/llama-3"
    assert ap["rootDirectory"]["creationInfo"]["ownerUid"] == 2000
    assert ap["rootDirectory"]["creationInfo"]["ownerGid"] == 3000


def test_pvs_have_unique_handles_through_their_own_access_point():
    p = plan(efs(readers=["inference", "batch"], writers=["loader"]), fill=True)
    fs_id = p.by_type(FS)[0]["id"]
    points = {s["urn"].rsplit("-", 1)[-1]: s for s in p.by_type(ACCESS_POINT)}
    pvs = by_namespace(p.by_type(PV))
    assert set(pvs) == {"inference", "batch", "loader"}
    handles = set()
    for ns, pv in pvs.items():
        csi = pv["inputs"]["spec"]["csi"]
        assert csi["driver"] == "efs.csi.aws.com"
        assert csi["volumeHandle"] == f"{fs_id}::{points[ns]['id']}"
        assert csi["volumeAttributes"] == {"encryptInTransit": "true"}
        assert points[ns]["urn"] in pv["dependencies"]
        handles.add(csi["volumeHandle"])
    assert len(handles) == 3


def test_readers_read_only_writers_read_write_all_rwx_retained():
    p = plan(efs(readers=["inference"], writers=["loader"]))
    pvs = by_namespace(p.by_type(PV))
    for ns, read_only in (("inference", True), ("loader", False)):
        spec = pvs[ns]["inputs"]["spec"]
        assert spec["accessModes"] == ["ReadWriteMany"]  # the driver rejects ReadOnlyMany
        assert spec["csi"]["readOnly"] is read_only
        assert spec["persistentVolumeReclaimPolicy"] == "Retain"
        assert spec["storageClassName"] == ""
        assert spec["claimRef"] == {"namespace": ns, "name": "llama"}
        assert "mountOptions" not in spec  # TLS comes from encryptInTransit, not `tls`
    claims = {c["inputs"]["metadata"]["namespace"]: c for c in p.by_type(PVC)}
    for ns in ("inference", "loader"):
        spec = claims[ns]["inputs"]["spec"]
        assert spec["storageClassName"] == "" and spec["volumeName"] == f"llama-{ns}"
        assert pvs[ns]["urn"] in claims[ns]["dependencies"]


def test_pvs_depend_on_driver_mount_targets_and_policy():
    p = plan(efs())
    needed = {p.by_type(RELEASE)[0]["urn"], p.by_type(FS_POLICY)[0]["urn"]}
    needed |= {t["urn"] for t in p.by_type(MOUNT_TARGET)}
    assert len(needed) == 5
    assert len(p.by_type(PV)) == 1
    for pv in p.by_type(PV):
        assert needed <= set(pv["dependencies"])


def test_outputs_name_what_they_are():
    def program():
        store = EfsModelStore("llama", {"cluster_name": CLUSTER, "readers": ["inference"]})
        pulumi.export("summary", store.summary)

    p = plan(program, fill=True)
    summary = p.outputs["summary"]
    ap_id = p.by_type(ACCESS_POINT)[0]["id"]
    assert summary["fileSystemId"] == p.by_type(FS)[0]["id"]
    assert summary["accessPointIds"] == {"inference": ap_id}
    assert summary["securityGroupId"] == p.by_type(SG)[0]["id"]
    assert set(summary["mountTargetIds"]) == {f"{REGION}{z}" for z in "abc"}
    assert summary["claimNames"] == {"inference": "llama"}
    assert summary["nodeRoleArn"] is None


# -- driver ---------------------------------------------------------------------------------------


def test_efs_chart_pin_matches_upstream():
    # kubernetes-sigs/aws-efs-csi-driver charts/aws-efs-csi-driver/Chart.yaml
    assert (EFS_CSI.chart, EFS_CSI.version, EFS_CSI.app_version) == (
        "aws-efs-csi-driver",
        "4.4.1",
        "3.4.1",
    )


def test_helm_driver_is_pinned_and_tolerates_every_taint():
    (release,) = plan(efs()).by_type(RELEASE)
    inputs = release["inputs"]
    assert inputs["chart"] == EFS_CSI.chart and inputs["version"] == EFS_CSI.version
    assert inputs["repositoryOpts"]["repo"] == EFS_CSI.repo
    assert inputs["namespace"] == "kube-system"
    assert inputs["values"]["node"]["tolerations"] == [{"operator": "Exists"}]
    assert inputs["values"]["node"]["serviceAccount"] == {"name": "efs-csi-node-sa"}


def test_eks_addon_driver():
    p = plan(efs(driver_install="eks-addon", eks_addon_version="v3.4.1-eksbuild.1"))
    assert not p.by_type(RELEASE)
    (addon,) = p.by_type(ADDON)
    assert addon["inputs"]["addonName"] == "aws-efs-csi-driver"
    assert addon["inputs"]["clusterName"] == CLUSTER
    assert addon["inputs"]["addonVersion"] == "v3.4.1-eksbuild.1"
    assert "serviceAccountRoleArn" not in addon["inputs"]
    assert len(p.by_type(PV)) == 1
    for pv in p.by_type(PV):
        assert addon["urn"] in pv["dependencies"]


def test_no_driver_install_when_the_cluster_has_one():
    p = plan(efs(driver_install="none"))
    assert not p.by_type(RELEASE) and not p.by_type(ADDON)


def test_no_iam_without_iam_authorization():
    p = plan(efs(writers=["loader"]))
    assert not [s for s in p.states() if s["type"].startswith("aws:iam/")]


# -- IAM authorization ---------------------------------------------------------------------------


def test_irsa_role_trusts_exactly_the_service_account_the_chart_annotates():
    p = plan(
        efs(iam_authorization=True, driver_namespace="efs-system", node_service_account="efs-n"),
        fill=True,
    )
    (role,) = p.by_type(ROLE)
    (release,) = p.by_type(RELEASE)
    assert release["inputs"]["namespace"] == "efs-system"
    node_sa = release["inputs"]["values"]["node"]["serviceAccount"]
    assert node_sa["annotations"] == {"eks.amazonaws.com/role-arn": role["outputs"]["arn"]}
    (statement,) = policy_of(role, "assumeRolePolicy")["Statement"]
    issuer = INVOKES["aws:eks/getCluster:getCluster"]({"name": CLUSTER}, {"aws:region": REGION})[
        "identities"
    ][0]["oidcs"][0]["issuer"].removeprefix("https://")
    assert statement["Principal"] == {
        "Federated": f"arn:aws:iam::123456789012:oidc-provider/{issuer}"
    }
    assert statement["Condition"]["StringEquals"] == {
        f"{issuer}:sub": f"system:serviceaccount:efs-system:{node_sa['name']}",
        f"{issuer}:aud": "sts.amazonaws.com",
    }
    assert len(p.by_type(PV)) == 1
    for pv in p.by_type(PV):
        assert pv["inputs"]["spec"]["mountOptions"] == ["iam"]
        assert p.by_type(ROLE_POLICY)[0]["urn"] in pv["dependencies"]


def test_node_role_mounts_via_store_access_points_and_writes_only_via_writers():
    p = plan(
        efs(readers=["inference", "batch"], writers=["loader"], iam_authorization=True), fill=True
    )
    fs_arn = p.by_type(FS)[0]["outputs"]["arn"]
    arns = {s["urn"].rsplit("-", 1)[-1]: s["outputs"]["arn"] for s in p.by_type(ACCESS_POINT)}
    (state,) = p.by_type(ROLE_POLICY)
    document = policy_of(state)
    assert document == client_access_policy(
        fs_arn, [arns["inference"], arns["batch"]], [arns["loader"]]
    )
    statements = {s["Action"]: s for s in document["Statement"]}
    assert set(statements) == {"elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"}
    for s in statements.values():
        assert s["Resource"] == fs_arn and s["Effect"] == "Allow"
        assert s["Condition"]["Bool"] == {"elasticfilesystem:AccessedViaMountTarget": "true"}
    # elasticfilesystem:AccessPointArn is an ARN-typed condition key: the ARN operator.
    mount = statements["elasticfilesystem:ClientMount"]["Condition"]
    assert set(mount) == {"Bool", "ArnEquals"}
    assert mount["ArnEquals"] == {"elasticfilesystem:AccessPointArn": sorted(arns.values())}
    write = statements["elasticfilesystem:ClientWrite"]["Condition"]
    assert set(write) == {"Bool", "ArnEquals"}
    assert write["ArnEquals"] == {"elasticfilesystem:AccessPointArn": [arns["loader"]]}
    # With IAM on, the file system policy no longer lets anonymous clients in.
    fs_policy = policy_of(p.by_type(FS_POLICY)[0])
    assert [s["Effect"] for s in fs_policy["Statement"]] == ["Deny"]


def test_under_iam_authorization_the_seed_jobs_access_point_may_mount_and_write(aws_env):
    """The seed Job mounts through the loader namespace's access point as a writer: the node
    role that signs its ``iam`` mount must let it mount and write there, or the seed is denied
    (mount) or read-only (write). Read back from IAM (moto) as the node role holds it."""
    p = plan(efs(readers=["inference"], model=QWEN, iam_authorization=True), fill=True)
    arns = {s["urn"].rsplit("-ap-", 1)[-1]: s["outputs"]["arn"] for s in p.by_type(ACCESS_POINT)}
    assert sorted(arns) == ["inference", "llama-loader"]
    role_name = p.by_type(ROLE)[0]["outputs"]["name"]
    with mock_aws():
        iam = Replay(p).run().client("iam")
        (policy_name,) = iam.list_role_policies(RoleName=role_name)["PolicyNames"]
        stored = iam.get_role_policy(RoleName=role_name, PolicyName=policy_name)
    statements = {s["Action"]: s for s in stored["PolicyDocument"]["Statement"]}
    mount = statements["elasticfilesystem:ClientMount"]["Condition"]["ArnEquals"]
    assert mount == {"elasticfilesystem:AccessPointArn": sorted(arns.values())}
    write = statements["elasticfilesystem:ClientWrite"]["Condition"]["ArnEquals"]
    assert write == {"elasticfilesystem:AccessPointArn": [arns["llama-loader"]]}


def test_readers_never_get_a_write_action():
    p = plan(efs(readers=["inference", "batch"], iam_authorization=True), fill=True)
    text = p.by_type(ROLE_POLICY)[0]["inputs"]["policy"]
    assert "ClientWrite" not in text and "ClientRootAccess" not in text
    assert client_access_policy("arn:fs", ["arn:ap-r"], [])["Statement"][0]["Action"] == (
        "elasticfilesystem:ClientMount"
    )


def test_pod_identity_associates_the_chart_node_service_account():
    p = plan(efs(iam_authorization=True, identity="pod-identity"), fill=True)
    (role,) = p.by_type(ROLE)
    (statement,) = policy_of(role, "assumeRolePolicy")["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    (association,) = p.by_type(POD_IDENTITY)
    node_sa = p.by_type(RELEASE)[0]["inputs"]["values"]["node"]["serviceAccount"]
    assert "annotations" not in node_sa
    assert association["inputs"]["namespace"] == "kube-system"
    assert association["inputs"]["serviceAccount"] == node_sa["name"] == "efs-csi-node-sa"
    assert association["inputs"]["roleArn"] == role["outputs"]["arn"]
    assert association["inputs"]["clusterName"] == CLUSTER
    assert len(p.by_type(PV)) == 1
    for pv in p.by_type(PV):
        assert association["urn"] in pv["dependencies"]


def test_eks_addon_irsa_role_is_the_addons_and_trusts_both_its_service_accounts():
    p = plan(efs(iam_authorization=True, driver_install="eks-addon"), fill=True)
    (role,) = p.by_type(ROLE)
    (addon,) = p.by_type(ADDON)
    assert addon["inputs"]["serviceAccountRoleArn"] == role["outputs"]["arn"]
    subs = {
        value
        for s in policy_of(role, "assumeRolePolicy")["Statement"]
        for key, value in s["Condition"]["StringEquals"].items()
        if key.endswith(":sub")
    }
    assert subs == {
        "system:serviceaccount:kube-system:efs-csi-node-sa",
        "system:serviceaccount:kube-system:efs-csi-controller-sa",
    }
    assert "ClientWrite" not in p.by_type(ROLE_POLICY)[0]["inputs"]["policy"]


def test_eks_addon_pod_identity_uses_an_association_not_the_addon_role():
    p = plan(efs(iam_authorization=True, identity="pod-identity", driver_install="eks-addon"))
    (addon,) = p.by_type(ADDON)
    assert "serviceAccountRoleArn" not in addon["inputs"]
    (association,) = p.by_type(POD_IDENTITY)
    assert association["inputs"]["serviceAccount"] == "efs-csi-node-sa"
    # EKS gives Pod Identity credentials only to pods created after the association exists.
    assert association["urn"] in addon["dependencies"]
    assert p.by_type(ROLE)[0]["urn"] in addon["dependencies"]


def test_pod_identity_helm_release_waits_for_the_association_and_rolls_with_it():
    p = plan(efs(iam_authorization=True, identity="pod-identity"), fill=True)
    (release,) = p.by_type(RELEASE)
    (association,) = p.by_type(POD_IDENTITY)
    (role,) = p.by_type(ROLE)
    assert {association["urn"], role["urn"]} <= set(release["dependencies"])
    # chart 4.4.1 values.yaml node.podLabels: a new association rolls the node pods.
    assert release["inputs"]["values"]["node"]["podLabels"] == {
        "modelstore.pulumi.com/pod-identity-association": association["outputs"]["associationId"]
    }


def test_irsa_driver_installs_wait_for_the_shared_role_and_pvs_for_their_own_policy():
    for driver, kind in (("helm", RELEASE), ("eks-addon", ADDON)):
        p = plan(efs(iam_authorization=True, driver_install=driver))
        (install,) = p.by_type(kind)
        (role,) = p.by_type(ROLE)
        (policy,) = p.by_type(ROLE_POLICY)
        assert install["dependencies"] == [role["urn"]], driver
        for pv in p.by_type(PV):
            assert policy["urn"] in pv["dependencies"], driver
        assert not p.by_type(POD_IDENTITY)
    (release,) = plan(efs(iam_authorization=True)).by_type(RELEASE)
    assert "podLabels" not in release["inputs"]["values"]["node"]


def test_driver_installs_wait_for_nothing_without_iam_authorization():
    for driver, kind in (("helm", RELEASE), ("eks-addon", ADDON)):
        (install,) = plan(efs(driver_install=driver)).by_type(kind)
        assert install["dependencies"] == [], driver


def test_driver_none_still_makes_the_node_role_to_annotate():
    def program():
        store = EfsModelStore(
            "llama",
            {
                "cluster_name": CLUSTER,
                "readers": ["inference"],
                "iam_authorization": True,
                "driver_install": "none",
            },
        )
        pulumi.export("role", store.node_role_arn)

    p = plan(program)
    assert len(p.by_type(ROLE)) == 1 and not p.by_type(RELEASE)
    assert p.outputs["role"] == UNKNOWN  # known after apply, as in a preview


def test_pod_identity_is_refused_on_a_pinned_chart_that_predates_it(monkeypatch):
    old = dataclasses.replace(EFS_CSI, version="2.5.6", app_version="2.0.4")
    monkeypatch.setattr(efs_module, "EFS_CSI", old)
    assert_refused(
        efs(iam_authorization=True, identity="pod-identity"),
        "llama: identity must be irsa with EFS CSI driver the pinned chart's 2.0.4 (EKS Pod "
        "Identity needs driver 2.0.5 or newer), got 'pod-identity'",
    )


def test_irsa_without_an_oidc_provider_fails_before_anything_registers():
    def missing(args, config):
        raise RuntimeError("NoSuchEntity: OpenIDConnect provider not found")

    with pytest.raises(PlanError) as err:
        plan(
            efs(iam_authorization=True),
            invokes={"aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": missing},
        )
    assert str(err.value).startswith("llama: identity must be pod-identity, or irsa on a cluster")
    assert registered(err) == NOTHING


# -- bad input ------------------------------------------------------------------------------------


def test_subnet_outside_the_cluster_vpc_fails_the_preview_before_anything_registers():
    def elsewhere(args, config):
        return {"id": args["id"], "vpcId": "vpc-0other", "availabilityZone": f"{REGION}a"}

    with pytest.raises(PlanError) as err:
        plan(efs(subnet_ids=["subnet-00000abc"]), invokes={GET_SUBNET: elsewhere})
    vpc = plan_vpc_id({"aws:region": REGION})
    assert str(err.value) == (
        f"llama: subnet_ids must be a subnet in the cluster's VPC {vpc} (it is in vpc-0other), "
        "got 'subnet-00000abc'"
    )
    assert registered(err) == NOTHING


def test_a_cluster_without_subnets_fails_before_anything_registers():
    def no_subnets(args, config):
        cluster = INVOKES["aws:eks/getCluster:getCluster"](args, config)
        cluster["vpcConfig"]["subnetIds"] = []
        return cluster

    assert_refused(
        efs(),
        "llama: subnet_ids must be a non-empty list of the subnets where the cluster's nodes run "
        "(the cluster reported none), got []",
        invokes={
            "aws:eks/getCluster:getCluster": no_subnets,
            GET_NODE_GROUPS: lambda args, config: {"names": []},
        },
    )


UID_RULE = (
    "a whole number from 1 to 4294967295 (0, root, would be squashed: the store grants no "
    "ClientRootAccess)"
)
ROOT_RULE = (
    "a plain directory below '/' of at most 100 characters ('/' itself is root's, and pods "
    "could not write to it)"
)
KMS_RULE = (
    "a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key-id>; the provider refuses a key id "
    "or an alias)"
)
BAD_INPUTS = [
    (
        {"throughput_mode": "burst"},
        "llama: throughput_mode must be one of elastic, provisioned, bursting, got 'burst'",
    ),
    (
        {"throughput_mode": "provisioned"},
        "llama: provisioned_throughput_in_mibps is missing; it must be a throughput in MiB/s when "
        "throughput_mode is provisioned",
    ),
    (
        {"throughput_mode": "provisioned", "provisioned_throughput_in_mibps": 0},
        "llama: provisioned_throughput_in_mibps must be from 1 to 3414 MiB/s (EFS's limit; more "
        "needs AWS Support to raise it), got 0",
    ),
    (
        {"provisioned_throughput_in_mibps": 128},
        "llama: provisioned_throughput_in_mibps must be unset unless throughput_mode is "
        "provisioned (it is elastic), got 128",
    ),
    (
        {"performance_mode": "maxIO"},
        "llama: throughput_mode must be provisioned or bursting when performance_mode is maxIO "
        "(elastic throughput needs generalPurpose), got 'elastic'",
    ),
    (
        {"performance_mode": "max_io", "throughput_mode": "bursting"},
        "llama: performance_mode must be one of generalPurpose, maxIO, got 'max_io'",
    ),
    ({"posix_uid": 0}, f"llama: posix_uid must be {UID_RULE}, got 0"),
    ({"posix_gid": -1}, f"llama: posix_gid must be {UID_RULE}, got -1"),
    ({"posix_uid": 4294967296}, f"llama: posix_uid must be {UID_RULE}, got 4294967296"),
    ({"posix_uid": "1000"}, "llama: posix_uid must be a whole number, got '1000'"),
    ({"posix_gid": None}, "llama: posix_gid is missing; it must be a whole number"),
    ({"root_directory": "/"}, f"llama: root_directory must be {ROOT_RULE}, got '/'"),
    (
        {"root_directory": "models"},
        "llama: root_directory must be an absolute path starting with '/', got 'models'",
    ),
    (
        {"root_directory": "/" + "m" * 100},
        f"llama: root_directory must be {ROOT_RULE}, got '/{'m' * 100}'",
    ),
    (
        {"root_directory_permissions": "rwxr-xr-x"},
        "llama: root_directory_permissions must be an octal mode such as '0755', got 'rwxr-xr-x'",
    ),
    (
        {"transition_to_ia": "AFTER_2_DAYS"},
        "llama: transition_to_ia must be one of AFTER_1_DAY, AFTER_7_DAYS, AFTER_14_DAYS, "
        "AFTER_30_DAYS, AFTER_60_DAYS, AFTER_90_DAYS, AFTER_180_DAYS, AFTER_270_DAYS, "
        "AFTER_365_DAYS, got 'AFTER_2_DAYS'",
    ),
    (
        {"transition_to_archive": "AFTER_90_DAYS"},
        "llama: transition_to_archive must be unset unless transition_to_ia is set and "
        "throughput_mode is elastic, got 'AFTER_90_DAYS'",
    ),
    (
        {"transition_to_primary_storage_class": "AFTER_2_ACCESSES"},
        "llama: transition_to_primary_storage_class must be one of AFTER_1_ACCESS, "
        "got 'AFTER_2_ACCESSES'",
    ),
    (
        {"identity": "irsa"},
        "llama: identity must be unset unless iam_authorization is true (without it the driver "
        "mounts with no AWS identity), got 'irsa'",
    ),
    (
        {"iam_authorization": True, "identity": "kiam"},
        "llama: identity must be one of irsa, pod-identity, got 'kiam'",
    ),
    (
        {
            "iam_authorization": True,
            "identity": "pod-identity",
            "driver_install": "eks-addon",
            "eks_addon_version": "v2.0.4-eksbuild.1",
        },
        "llama: identity must be irsa with EFS CSI driver add-on v2.0.4-eksbuild.1 (EKS Pod "
        "Identity needs driver 2.0.5 or newer), got 'pod-identity'",
    ),
    (
        {"extra_mount_options": ["accesspoint=fsap-0123456789abcdef0"]},
        "llama: extra_mount_options must be options other than accesspoint (the store puts each "
        "access point in the volumeHandle) and crossaccount (the driver refuses it), "
        "got 'accesspoint=fsap-0123456789abcdef0'",
    ),
    (
        {"extra_mount_options": "noresvport"},
        "llama: extra_mount_options must be a list of strings, got 'noresvport'",
    ),
    (
        # As a string it would have been split into characters, past the accesspoint check.
        {"extra_mount_options": "accesspoint=fsap-0123456789abcdef0"},
        "llama: extra_mount_options must be a list of strings, "
        "got 'accesspoint=fsap-0123456789abcdef0'",
    ),
    ({"extra_mount_options": 3}, "llama: extra_mount_options must be a list of strings, got 3"),
    (
        {"extra_mount_options": ["noresvport", 3]},
        "llama: extra_mount_options must be a list of strings, got ['noresvport', 3]",
    ),
    (
        {"iam_authorization": "false"},
        "llama: iam_authorization must be true or false, got 'false'",
    ),
    ({"iam_authorization": 1}, "llama: iam_authorization must be true or false, got 1"),
    (
        {"backup": "false"},
        "llama: backup must be a mapping with enabled, retention_days and schedule, got 'false'",
    ),
    (
        {"backup": None},
        "llama: backup is missing; it must be a mapping with enabled, retention_days and schedule",
    ),
    (
        {"tags": ["team=ml"]},
        "llama: tags must be a mapping of strings to strings, got ['team=ml']",
    ),
    (
        {"tags": {"team": 1}},
        "llama: tags must be a mapping of strings to strings, got {'team': 1}",
    ),
    (
        {"kms_key_arn": "alias/models"},
        f"llama: kms_key_arn must be {KMS_RULE}, got 'alias/models'",
    ),
    (
        {"kms_key_arn": "1234abcd-12ab-34cd-56ef-1234567890ab"},
        f"llama: kms_key_arn must be {KMS_RULE}, got '1234abcd-12ab-34cd-56ef-1234567890ab'",
    ),
    (
        {"subnet_ids": []},
        "llama: subnet_ids must be a non-empty list of the subnets where the cluster's nodes "
        "run, got []",
    ),
    (
        {"subnet_ids": "subnet-0000000a"},
        "llama: subnet_ids must be a list of strings, got 'subnet-0000000a'",
    ),
    (
        {"driver_install": "kubectl"},
        "llama: driver_install must be one of helm, eks-addon, none, got 'kubectl'",
    ),
    (
        {"driver_install": "eks-addon", "driver_namespace": "efs-system"},
        "llama: driver_namespace must be kube-system when driver_install is eks-addon (the add-on "
        "installs there), got 'efs-system'",
    ),
    (
        {"driver_install": "eks-addon", "cluster_name": None},
        "llama: cluster_name is missing; it must be set when driver_install is eks-addon",
    ),
]


@bad_inputs(BAD_INPUTS)
def test_bad_input_is_refused_with_an_exact_message_before_anything_registers(args, message):
    assert_refused(efs(**args), message)


@bad_inputs(BAD_INPUTS)
def test_validate_refuses_what_the_constructor_refuses_without_a_lookup(args, message):
    fields = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
    with pytest.raises(ModelStoreInputError) as err:
        EfsModelStore.validate("llama", fields)
    assert str(err.value) == message


def test_validate_accepts_good_input_without_any_lookup():
    # Outside a Pulumi program: any invoke here would raise.
    EfsModelStore.validate(
        "llama",
        {
            "cluster_name": CLUSTER,
            "readers": ["inference"],
            "writers": ["loader"],
            "iam_authorization": True,
            "identity": "pod-identity",
            "backup": {"enabled": False},
            "kms_key_arn": KMS_KEY_ARN,
            "extra_mount_options": ["noresvport"],
            "tags": {"team": "ml"},
        },
    )


def test_mount_options_known_only_at_deploy_are_refused():
    def program():
        options = pulumi.Output.from_input(["noresvport"])
        EfsModelStore(
            "llama", {"cluster_name": CLUSTER, "readers": ["x"], "extra_mount_options": options}
        )

    assert_refused(
        program,
        "llama: extra_mount_options must be a plain list of strings known before deploy, "
        "got '<Output>'",
    )


def test_mount_options_reach_every_pv_after_iam():
    p = plan(efs(writers=["loader"], iam_authorization=True, extra_mount_options=["noresvport"]))
    pvs = p.by_type(PV)
    assert len(pvs) == 2
    for pv in pvs:
        assert pv["inputs"]["spec"]["mountOptions"] == ["iam", "noresvport"]


def test_unknown_field_names_the_allowed_ones():
    with pytest.raises(PlanError) as err:
        plan(efs(throughput="elastic"))
    assert str(err.value) == (
        "llama: field name must be one of the 39 fields listed by "
        "`modelstore fields EfsModelStore` (nearest: throughput_mode), got 'throughput'; "
        "did you mean `throughput_mode`?"
    )


def test_two_bad_fields_give_two_lines_one_per_field():
    bad = {"throughput_mode": "burst", "posix_uid": 0}
    lines = [
        "llama: throughput_mode must be one of elastic, provisioned, bursting, got 'burst'",
        f"llama: posix_uid must be {UID_RULE}, got 0",
    ]
    with pytest.raises(PlanError) as err:
        plan(efs(**bad))
    assert str(err.value.__cause__).splitlines() == lines
    assert registered(err) == NOTHING
    with pytest.raises(ModelStoreInputError) as refused:
        EfsModelStore.validate("llama", {"cluster_name": CLUSTER, "readers": ["x"], **bad})
    assert [str(e) for e in refused.value.errors] == lines


# -- one name per idea: deprecated spellings ------------------------------------------------------

OLD_SPELLINGS = {
    "kms_key_id": ("kms_key_arn", KMS_KEY_ARN),
    "mount_options": ("extra_mount_options", ["noresvport"]),
    "driver": ("driver_install", "eks-addon"),
}


def test_deprecated_spellings_plan_as_their_new_names_with_a_warning():
    old = {key: value for key, (_, value) in OLD_SPELLINGS.items()}
    new = {name: value for name, value in OLD_SPELLINGS.values()}
    with pytest.warns(DeprecationWarning) as warned:
        old_plan = plan(efs(**old))
    assert {str(w.message) for w in warned} >= {
        f"llama: {key} is deprecated, use {name}" for key, (name, _) in OLD_SPELLINGS.items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new_plan = plan(efs(**new))
    assert [(s["urn"], s["inputs"]) for s in old_plan.states()] == [
        (s["urn"], s["inputs"]) for s in new_plan.states()
    ]
    fs = old_plan.by_type(FS)[0]["inputs"]
    assert fs["kmsKeyId"] == KMS_KEY_ARN
    assert old_plan.by_type(PV)[0]["inputs"]["spec"]["mountOptions"] == ["noresvport"]
    assert old_plan.by_type(ADDON)


def test_validate_warns_on_a_deprecated_spelling_and_refuses_both_spellings():
    fields = {"cluster_name": CLUSTER, "readers": ["x"], "kms_key_id": KMS_KEY_ARN}
    with pytest.warns(DeprecationWarning, match="kms_key_id is deprecated, use kms_key_arn"):
        EfsModelStore.validate("llama", fields)
    with pytest.raises(ModelStoreInputError) as err:
        EfsModelStore.validate("llama", {**fields, "kms_key_arn": KMS_KEY_ARN})
    assert str(err.value) == (
        f"llama: kms_key_id must be unset when kms_key_arn is given (it is its new name), "
        f"got '{KMS_KEY_ARN}'"
    )


# -- stores sharing a cluster ---------------------------------------------------------------------

GET_CLUSTER = "aws:eks/getCluster:getCluster"
GET_OIDC = "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider"
EKS_CLUSTER = "modelstore:index:EksCluster"


def stores(*specs: tuple[str, dict[str, Any]]):
    """A program with EFS stores on the one cluster, exporting each store's node role ARN."""

    def program():
        made = [
            EfsModelStore(name, cast(EfsModelStoreArgs, {"cluster_name": CLUSTER, **args}))
            for name, args in specs
        ]
        pulumi.export("roles", {s.common.name: s.node_role_arn for s in made})

    return program


def owner(state: dict[str, Any]) -> str:
    return state["parent"].rsplit("::", 1)[-1]


def name_of(state: dict[str, Any]) -> str:
    return state["urn"].rsplit("::", 1)[-1]


WRITING = ("llama", {"readers": ["inference"], "writers": ["loader"], "iam_authorization": True})
JOINING = ("mistral", {"readers": ["batch"], "iam_authorization": True, "driver_install": "none"})


def test_stores_on_one_cluster_share_one_node_role_each_adding_only_its_own_access_points():
    p = plan(stores(WRITING, JOINING), fill=True)
    (scope,) = p.by_type(EKS_CLUSTER)
    (role,) = p.by_type(ROLE)
    assert name_of(role) == f"{CLUSTER}-efs-csi-node-role"
    assert role["parent"] == scope["urn"]
    (statement,) = policy_of(role, "assumeRolePolicy")["Statement"]
    assert [v for k, v in statement["Condition"]["StringEquals"].items() if k.endswith(":sub")] == [
        "system:serviceaccount:kube-system:efs-csi-node-sa"
    ]
    # The one driver install carries that role on the node service account.
    (release,) = p.by_type(RELEASE)
    node_sa = release["inputs"]["values"]["node"]["serviceAccount"]
    assert node_sa["annotations"] == {"eks.amazonaws.com/role-arn": role["outputs"]["arn"]}
    assert p.outputs["roles"] == {
        "llama": role["outputs"]["arn"],
        "mistral": role["outputs"]["arn"],
    }

    policies = {owner(s): s for s in p.by_type(ROLE_POLICY)}
    assert set(policies) == {"llama", "mistral"}
    file_systems = {owner(s): s["outputs"]["arn"] for s in p.by_type(FS)}
    points = {(owner(s), name_of(s)): s["outputs"]["arn"] for s in p.by_type(ACCESS_POINT)}
    for store, policy in policies.items():
        assert name_of(policy) == f"{store}-efs-node-policy"
        assert policy["inputs"]["role"] == role["id"]
        document = policy_of(policy)
        own = {arn for (s, _), arn in points.items() if s == store}
        named = {
            arn
            for statement in document["Statement"]
            for arn in statement["Condition"]["ArnEquals"]["elasticfilesystem:AccessPointArn"]
        }
        assert named == own, store
        assert {s["Resource"] for s in document["Statement"]} == {file_systems[store]}
    assert policy_of(policies["llama"]) == client_access_policy(
        file_systems["llama"],
        [points[("llama", "llama-ap-inference")]],
        [points[("llama", "llama-ap-loader")]],
    )
    # A reader-only store's policy writes nothing, though another store on the role has writers.
    assert "ClientWrite" in policies["llama"]["inputs"]["policy"]
    assert "ClientWrite" not in policies["mistral"]["inputs"]["policy"]

    # Each store's PVs wait for its own policy and for the cluster's driver install.
    for pv in p.by_type(PV):
        store = owner(pv)
        other = "mistral" if store == "llama" else "llama"
        assert policies[store]["urn"] in pv["dependencies"]
        assert policies[other]["urn"] not in pv["dependencies"]
        assert release["urn"] in pv["dependencies"]


def test_the_shared_role_and_install_keep_their_old_names_under_the_first_store_as_aliases():
    for identity, install_type in (("irsa", RELEASE), ("pod-identity", RELEASE), ("irsa", ADDON)):
        install = "eks-addon" if install_type == ADDON else "helm"
        p = plan(
            stores(
                (
                    "t5",
                    {
                        "readers": ["a"],
                        "iam_authorization": True,
                        "identity": identity,
                        "driver_install": install,
                    },
                ),
                (
                    "t6",
                    {
                        "readers": ["b"],
                        "iam_authorization": True,
                        "identity": identity,
                        "driver_install": "none",
                    },
                ),
            )
        )
        (store,) = [s for s in p.by_type("modelstore:index:EfsModelStore") if name_of(s) == "t5"]
        (scope,) = p.by_type(EKS_CLUSTER)
        moved = {name_of(s): s for s in p.states() if s.get("parent") == scope["urn"]}
        expected = {
            f"{CLUSTER}-efs-csi-node-role": "t5-efs-node-role",
            f"{CLUSTER}-{EFS_CSI.chart}": "t5-efs-csi-driver",
        }
        if identity == "pod-identity":
            expected[f"{CLUSTER}-efs-csi-node-pod-identity"] = "t5-efs-node-pod-identity"
        assert set(moved) == set(expected), (identity, install)
        for name, old in expected.items():
            state = moved[name]
            # Same type, the old name and the old parent (the first store): pulumi up moves it.
            assert state["aliases"] == [{"name": old, "parentUrn": store["urn"]}], name
        # Each store's own policy keeps its name under its store: no alias needed.
        for policy in p.by_type(ROLE_POLICY):
            assert name_of(policy) == f"{owner(policy)}-efs-node-policy"
            assert policy["aliases"] == []


def test_pod_identity_stores_share_one_association_and_their_pvs_wait_for_it():
    p = plan(
        stores(
            ("llama", {"readers": ["a"], "iam_authorization": True, "identity": "pod-identity"}),
            (
                "mistral",
                {
                    "readers": ["b"],
                    "iam_authorization": True,
                    "identity": "pod-identity",
                    "driver_install": "none",
                },
            ),
        )
    )
    (role,) = p.by_type(ROLE)
    (association,) = p.by_type(POD_IDENTITY)
    assert name_of(association) == f"{CLUSTER}-efs-csi-node-pod-identity"
    (release,) = p.by_type(RELEASE)
    assert set(release["dependencies"]) == {role["urn"], association["urn"]}
    assert len(p.by_type(ROLE_POLICY)) == 2
    for pv in p.by_type(PV):
        assert association["urn"] in pv["dependencies"]


def test_eks_addon_irsa_role_shared_with_a_joining_store_still_trusts_exactly_both_accounts():
    p = plan(
        stores(
            ("llama", {"readers": ["a"], "iam_authorization": True, "driver_install": "eks-addon"}),
            JOINING,
        ),
        fill=True,
    )
    (role,) = p.by_type(ROLE)
    (addon,) = p.by_type(ADDON)
    assert addon["inputs"]["serviceAccountRoleArn"] == role["outputs"]["arn"]
    subs = sorted(
        value
        for s in policy_of(role, "assumeRolePolicy")["Statement"]
        for key, value in s["Condition"]["StringEquals"].items()
        if key.endswith(":sub")
    )
    assert subs == [
        "system:serviceaccount:kube-system:efs-csi-controller-sa",
        "system:serviceaccount:kube-system:efs-csi-node-sa",
    ]
    assert len(p.by_type(ROLE_POLICY)) == 2


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            {"identity": "pod-identity"},
            "mistral: identity must be irsa, the identity of the cluster's EFS CSI node role "
            "(made by store 'llama'; the EFS stores on cluster 'prod-eks' share one node role), "
            "got 'pod-identity'",
        ),
        (
            {"node_service_account": "efs-node"},
            "mistral: node_service_account must be kube-system/efs-csi-node-sa, the service "
            "account the cluster's EFS CSI node role trusts (made by store 'llama'; the EFS "
            "stores on cluster 'prod-eks' share one node role), got 'kube-system/efs-node'",
        ),
        (
            {"driver_namespace": "efs-system"},
            "mistral: node_service_account must be kube-system/efs-csi-node-sa, the service "
            "account the cluster's EFS CSI node role trusts (made by store 'llama'; the EFS "
            "stores on cluster 'prod-eks' share one node role), got 'efs-system/efs-csi-node-sa'",
        ),
    ],
)
def test_stores_on_one_cluster_that_disagree_on_the_node_identity_are_refused(second, message):
    mistral = ("mistral", {**JOINING[1], **second})
    with pytest.raises(PlanError) as err:
        plan(stores(WRITING, mistral))
    assert str(err.value) == message
    assert not [u for u in err.value.registered if "mistral" in u]


def test_an_addon_install_cannot_take_a_node_role_made_for_the_node_service_account_alone():
    first = ("llama", {"readers": ["a"], "iam_authorization": True, "driver_install": "none"})
    second = (
        "mistral",
        {"readers": ["b"], "iam_authorization": True, "driver_install": "eks-addon"},
    )
    with pytest.raises(PlanError) as err:
        plan(stores(first, second))
    assert str(err.value) == (
        "mistral: driver_install must be helm or none, as the cluster's EFS CSI node role "
        "trusts only kube-system/efs-csi-node-sa (made by store 'llama'; the EFS stores on "
        "cluster 'prod-eks' share one node role), got 'eks-addon'"
    )


def test_an_install_made_after_the_node_role_carries_it_even_for_a_store_without_iam():
    first = ("llama", {"readers": ["a"], "iam_authorization": True, "driver_install": "none"})
    p = plan(stores(first, ("mistral", {"readers": ["b"]})), fill=True)
    (role,) = p.by_type(ROLE)
    (release,) = p.by_type(RELEASE)
    assert release["inputs"]["values"]["node"]["serviceAccount"]["annotations"] == {
        "eks.amazonaws.com/role-arn": role["outputs"]["arn"]
    }
    assert release["dependencies"] == [role["urn"]]
    assert p.outputs["roles"]["mistral"] is None  # it mounts without IAM


def test_iam_authorization_after_an_install_made_without_a_node_role_is_refused():
    with pytest.raises(PlanError) as err:
        plan(stores(("llama", {"readers": ["a"]}), JOINING))
    assert str(err.value) == (
        "mistral: iam_authorization must be false on cluster 'prod-eks', where store 'llama' "
        "installed the EFS CSI driver without a node role (declare a store with "
        "iam_authorization before it, so the install carries the role), got true"
    )


def test_two_stores_on_one_cluster_look_the_cluster_up_once():
    p = plan(stores(WRITING, JOINING))
    calls = Counter(i["token"] for i in p.invokes)
    assert calls[GET_CLUSTER] == 1
    assert calls[GET_NODE_GROUPS] == 1
    assert calls[GET_NODE_GROUP] == 1  # the placeholder cluster has one managed node group
    assert calls[GET_OIDC] == 1
    subnets = [i["args"]["id"] for i in p.invokes if i["token"] == GET_SUBNET]
    assert sorted(subnets) == CLUSTER_SUBNETS  # one getSubnet per subnet, for both stores
    targets = Counter(owner(t) for t in p.by_type(MOUNT_TARGET))
    assert targets == {"llama": 3, "mistral": 3}


def test_two_stores_with_explicit_subnets_look_each_subnet_up_once():
    zones = {"subnet-0000000a": "a", "subnet-0000000b": "b", "subnet-0000000c": "c"}
    p = plan(
        stores(
            ("llama", {"readers": ["a"], "subnet_ids": ["subnet-0000000a", "subnet-0000000b"]}),
            ("mistral", {"readers": ["b"], "subnet_ids": ["subnet-0000000b", "subnet-0000000c"]}),
        ),
        invokes=subnets_in(zones),
    )
    subnets = sorted(i["args"]["id"] for i in p.invokes if i["token"] == GET_SUBNET)
    assert subnets == sorted(zones)
    assert not [i for i in p.invokes if i["token"] == GET_NODE_GROUPS]


def test_the_config_program_lets_a_second_store_simply_join_the_cluster():
    def program():
        build_stores(
            {
                name: {
                    "backend": "efs",
                    "clusterName": CLUSTER,
                    "readers": [reader],
                    "iamAuthorization": True,
                }
                for name, reader in (("llama", "inference"), ("mistral", "batch"))
            }
        )

    p = plan(program)
    assert len(p.by_type(RELEASE)) == 1
    assert len(p.by_type(ROLE)) == 1
    assert sorted(name_of(s) for s in p.by_type(ROLE_POLICY)) == [
        "llama-efs-node-policy",
        "mistral-efs-node-policy",
    ]
    assert set(p.outputs) == {"llama", "mistral"}
