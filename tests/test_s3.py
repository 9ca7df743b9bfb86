"""MountpointS3ModelStore: bucket hardening, IAM per role, driver identity, PVs and exact input
errors."""

from __future__ import annotations

import json
from typing import Any, cast

import pulumi
import pytest
from moto import mock_aws

from pulumi_modelstore import WorkloadMount
from pulumi_modelstore.aws import (
    MOUNTPOINT_S3_CSI,
    MountpointS3ModelStore,
    MountpointS3ModelStoreArgs,
)
from pulumi_modelstore.aws import validation as aws_v
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.kube import model_jobs
from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.layout import Layout, remove_tree
from pulumi_modelstore.model.sources import open_source
from pulumi_modelstore.plan.engine import UNKNOWN, Plan, PlanError
from pulumi_modelstore.plan.placeholders import digest
from tests.aws_replay import Replay
from tests.conftest import CLUSTER, assert_refused, bad_inputs, by_namespace, plan
from tests.fuse_mounts import (
    MountpointFs,
    assert_seed_writes_and_readers_read,
    mountpoint_negative_ttl,
    mountpoint_view,
)

BUCKET = "aws:s3/bucket:Bucket"
PUBLIC_ACCESS = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
OWNERSHIP = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
ENCRYPTION = (
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
)
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
ADDON = "aws:eks/addon:Addon"
RELEASE = "kubernetes:helm.sh/v3:Release"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
SA = "kubernetes:core/v1:ServiceAccount"
JOB = "kubernetes:batch/v1:Job"

# What the placeholder getCluster answers for CLUSTER in us-west-2.
ISSUER = f"oidc.eks.us-west-2.amazonaws.com/id/{digest('oidc', CLUSTER, length=32).upper()}"
OIDC_PROVIDER = f"arn:aws:iam::123456789012:oidc-provider/{ISSUER}"
WRITE_ACTIONS = {"s3:PutObject", "s3:AbortMultipartUpload", "s3:DeleteObject"}
QWEN = {
    "source": "hf://Qwen/Qwen2.5-0.5B-Instruct",
    "revision": "7ae557604adf67be50417f59c2c2f167def9a775",
}
KMS_KEY = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def s3(**args: Any):
    fields: dict[str, Any] = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
    return lambda: MountpointS3ModelStore("llama", cast(MountpointS3ModelStoreArgs, fields))


def mounts_and_plan(**args: Any) -> tuple[dict[str, WorkloadMount], Plan]:
    found: dict[str, WorkloadMount] = {}

    def program():
        store = s3(**args)()
        for ns, _ in store.common.consumers:
            found[ns] = store.mount_for(ns)
        pulumi.export("store", store.summary)

    return found, plan(program, fill=True)


def actions(statement: dict[str, Any]) -> set[str]:
    action = statement["Action"]
    return {action} if isinstance(action, str) else set(action)


def policy_of(p: Plan, role_state: dict[str, Any]) -> dict[str, Any]:
    (policy,) = [s for s in p.by_type(ROLE_POLICY) if s["inputs"]["role"] == role_state["id"]]
    return json.loads(policy["inputs"]["policy"])


def all_actions(document: dict[str, Any]) -> set[str]:
    return set().union(*(actions(s) for s in document["Statement"]))


# -- the bucket -----------------------------------------------------------------------------


def test_new_bucket_is_hardened():
    p = plan(s3(), fill=True)
    (bucket,) = p.by_type(BUCKET)
    name, arn = bucket["id"], bucket["outputs"]["arn"]
    assert bucket["inputs"]["region"] == "us-west-2"
    assert bucket["inputs"]["forceDestroy"] is False
    for type_ in (PUBLIC_ACCESS, OWNERSHIP, ENCRYPTION, VERSIONING, BUCKET_POLICY):
        (state,) = p.by_type(type_)
        assert state["inputs"]["bucket"] == name, type_
        assert bucket["urn"] in state["dependencies"], type_
    block = p.by_type(PUBLIC_ACCESS)[0]["inputs"]
    assert all(
        block[k] is True
        for k in (
            "blockPublicAcls",
            "blockPublicPolicy",
            "ignorePublicAcls",
            "restrictPublicBuckets",
        )
    )
    assert p.by_type(OWNERSHIP)[0]["inputs"]["rule"] == {"objectOwnership": "BucketOwnerEnforced"}
    (rule,) = p.by_type(ENCRYPTION)[0]["inputs"]["rules"]
    assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
    # A reader-only store keeps no backup by default: no versions to pile up unexpired.
    assert p.by_type(VERSIONING)[0]["inputs"]["versioningConfiguration"] == {"status": "Suspended"}
    (deny,) = json.loads(p.by_type(BUCKET_POLICY)[0]["inputs"]["policy"])["Statement"]
    assert deny == {
        "Sid": "DenyInsecureTransport",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": [arn, f"{arn}/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
    # S3 rejects concurrent configuration changes: the policy waits for every other one.
    policy_deps = set(p.by_type(BUCKET_POLICY)[0]["dependencies"])
    for type_ in (PUBLIC_ACCESS, OWNERSHIP, ENCRYPTION, VERSIONING):
        assert p.by_type(type_)[0]["urn"] in policy_deps, type_


def test_unprotected_bucket_can_be_destroyed_with_its_objects():
    # (Protection itself, on and off, is the contract suite's: tests/test_backend_contract.py.)
    assert plan(s3()).by_type(BUCKET)[0]["inputs"]["forceDestroy"] is False
    assert plan(s3(protect=False)).by_type(BUCKET)[0]["inputs"]["forceDestroy"] is True


def test_kms_key_encrypts_the_bucket_and_reaches_every_role():
    p = plan(s3(kms_key_arn=KMS_KEY, writers=["loader"], authentication_source="pod"), fill=True)
    (rule,) = p.by_type(ENCRYPTION)[0]["inputs"]["rules"]
    assert rule["applyServerSideEncryptionByDefault"] == {
        "sseAlgorithm": "aws:kms",
        "kmsMasterKeyId": KMS_KEY,
    }
    assert rule["bucketKeyEnabled"] is True
    roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
    for role, expected in (
        ("llama-pod-inference-role", {"kms:Decrypt"}),
        ("llama-pod-loader-role", {"kms:Decrypt", "kms:GenerateDataKey"}),
    ):
        (kms,) = [s for s in policy_of(p, roles[role])["Statement"] if s["Sid"] == "MountpointKms"]
        assert actions(kms) == expected and kms["Resource"] == KMS_KEY


def test_existing_bucket_creates_no_bucket_resources():
    mounts, p = mounts_and_plan(bucket_name="acme-models", prefix="llama/")
    assert not [s for s in p.states() if s["type"].startswith("aws:s3/")]
    assert len(p.by_type(PV)) == 1
    for pv in p.by_type(PV):
        assert pv["inputs"]["spec"]["csi"]["volumeAttributes"]["bucketName"] == "acme-models"
    (role,) = p.by_type(ROLE)
    list_bucket = policy_of(p, role)["Statement"][0]
    assert list_bucket["Resource"] == "arn:aws:s3:::acme-models"
    store = p.outputs["store"]
    assert store["bucketName"] == "acme-models"
    assert store["bucketArn"] == "arn:aws:s3:::acme-models"
    assert mounts["inference"].read_only is True


# -- IAM: one policy, scoped per role --------------------------------------------------------


def test_driver_role_of_a_read_only_store_cannot_write():
    p = plan(s3(readers=["inference", "batch"]), fill=True)
    (role,) = p.by_type(ROLE)
    document = policy_of(p, role)
    assert not all_actions(document) & WRITE_ACTIONS
    assert all_actions(document) == {"s3:ListBucket", "s3:GetObject"}
    bucket_arn = p.by_type(BUCKET)[0]["outputs"]["arn"]
    list_bucket, read = document["Statement"]
    assert list_bucket["Resource"] == bucket_arn and "Condition" not in list_bucket
    assert read["Resource"] == f"{bucket_arn}/*"


def test_reader_only_store_keeps_driver_level_credentials_by_default():
    mounts, p = mounts_and_plan(readers=["inference", "batch"])
    roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
    # The driver's node role belongs to the cluster; the store's own policy stays the store's.
    assert set(roles) == {"prod-eks-s3-csi-driver-role"}
    assert roles["prod-eks-s3-csi-driver-role"]["parent"].endswith("EksCluster::prod-eks")
    (policy,) = p.by_type(ROLE_POLICY)
    assert policy["urn"].endswith(
        "MountpointS3ModelStore$aws:iam/rolePolicy:RolePolicy::llama-driver-policy"
    )
    pvs = p.by_type(PV)
    assert len(pvs) == 2
    for pv in pvs:
        assert pv["inputs"]["spec"]["csi"]["volumeAttributes"]["authenticationSource"] == "driver"
    assert not p.by_type(SA) and mounts["batch"].service_account_name is None


def test_store_with_writers_defaults_to_pod_level_credentials_so_readers_cannot_write():
    # Driver-level credentials serve every mount on a node: a store with writers must not use
    # them, or its reader mounts would carry the writers' actions.
    mounts, p = mounts_and_plan(writers=["loader"], allow_delete=True)
    roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
    assert set(roles) == {"llama-pod-inference-role", "llama-pod-loader-role"}
    assert all_actions(policy_of(p, roles["llama-pod-inference-role"])) == {
        "s3:ListBucket",
        "s3:GetObject",
    }
    writer = all_actions(policy_of(p, roles["llama-pod-loader-role"]))
    assert writer & WRITE_ACTIONS == WRITE_ACTIONS
    pvs = p.by_type(PV)
    assert len(pvs) == 2
    for pv in pvs:
        assert pv["inputs"]["spec"]["csi"]["volumeAttributes"]["authenticationSource"] == "pod"
    node = p.by_type(RELEASE)[0]["inputs"]["values"]["node"]
    assert "annotations" not in node["serviceAccount"]
    assert p.outputs["store"]["driverRoleArn"] is None
    assert set(by_namespace(p, SA)) == {"inference", "loader"}
    assert mounts["inference"].service_account_name == "llama-s3"
    assert mounts["loader"].volume_mount["readOnly"] is False


def test_every_role_a_store_with_writers_makes_for_readers_is_read_only():
    # Whatever the install and identity, no role that serves a reader carries a write action.
    for extra in (
        {},
        {"identity": "pod-identity"},
        {"driver_install": "eks-addon"},
        {"driver_install": "none", "kms_key_arn": KMS_KEY},
    ):
        p = plan(s3(readers=["inference", "batch"], writers=["loader"], **extra), fill=True)
        roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
        assert len(roles) == 3, extra
        for ns in ("inference", "batch"):
            assert not all_actions(policy_of(p, roles[f"llama-pod-{ns}-role"])) & WRITE_ACTIONS


def test_prefix_scopes_list_and_objects():
    p = plan(s3(prefix="models/llama-3/"), fill=True)
    (role,) = p.by_type(ROLE)
    bucket_arn = p.by_type(BUCKET)[0]["outputs"]["arn"]
    list_bucket, read = policy_of(p, role)["Statement"]
    assert list_bucket["Action"] == "s3:ListBucket" and list_bucket["Resource"] == bucket_arn
    assert list_bucket["Condition"] == {"StringLike": {"s3:prefix": ["models/llama-3/*"]}}
    assert read["Resource"] == f"{bucket_arn}/models/llama-3/*"


def test_pod_level_roles_per_namespace_readers_never_write():
    mounts, p = mounts_and_plan(
        readers=["inference"], writers=["loader"], authentication_source="pod", allow_delete=True
    )
    roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
    assert set(roles) == {"llama-pod-inference-role", "llama-pod-loader-role"}
    reader = all_actions(policy_of(p, roles["llama-pod-inference-role"]))
    writer = all_actions(policy_of(p, roles["llama-pod-loader-role"]))
    assert reader == {"s3:ListBucket", "s3:GetObject"}
    assert writer == {"s3:ListBucket", "s3:GetObject"} | WRITE_ACTIONS
    # No driver-level role: the driver's own identity is not used.
    release = p.by_type(RELEASE)[0]["inputs"]["values"]["node"]
    assert "annotations" not in release["serviceAccount"]
    assert len(p.by_type(PV)) == 2
    for pv in p.by_type(PV):
        attributes = pv["inputs"]["spec"]["csi"]["volumeAttributes"]
        assert attributes["authenticationSource"] == "pod"
    for ns in ("inference", "loader"):
        assert mounts[ns].service_account_name == "llama-s3"
        assert mounts[ns].patch_pod_spec({"containers": []})["serviceAccountName"] == "llama-s3"


def test_pod_level_trust_matches_exactly_the_service_account_the_store_creates():
    _, p = mounts_and_plan(
        writers=["loader"], authentication_source="pod", service_account_name="vllm"
    )
    accounts = by_namespace(p, SA)
    assert set(accounts) == {"inference", "loader"}
    roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
    for ns, account in accounts.items():
        role = roles[f"llama-pod-{ns}-role"]
        metadata = account["inputs"]["metadata"]
        assert metadata["name"] == "vllm"
        assert metadata["annotations"] == {"eks.amazonaws.com/role-arn": role["outputs"]["arn"]}
        (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
        assert statement["Principal"] == {"Federated": OIDC_PROVIDER}
        assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert statement["Condition"] == {
            "StringEquals": {
                f"{ISSUER}:sub": f"system:serviceaccount:{ns}:vllm",
                f"{ISSUER}:aud": "sts.amazonaws.com",
            }
        }


def test_pod_level_pod_identity_associates_each_namespace_service_account():
    _, p = mounts_and_plan(authentication_source="pod", identity="pod-identity")
    (association,) = p.by_type(ASSOCIATION)
    (role,) = p.by_type(ROLE)
    inputs = association["inputs"]
    assert (inputs["clusterName"], inputs["namespace"], inputs["serviceAccount"]) == (
        CLUSTER,
        "inference",
        "llama-s3",
    )
    assert inputs["roleArn"] == role["outputs"]["arn"]
    (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    # Pod Identity needs no annotation on the service account.
    assert not by_namespace(p, SA)["inference"]["inputs"]["metadata"].get("annotations")


# -- the driver and its identity ----------------------------------------------------------


def test_helm_driver_is_pinned_and_carries_the_node_role_by_irsa():
    p = plan(s3(), fill=True)
    (release,) = p.by_type(RELEASE)
    inputs = release["inputs"]
    assert inputs["chart"] == MOUNTPOINT_S3_CSI.chart == "aws-mountpoint-s3-csi-driver"
    assert inputs["version"] == MOUNTPOINT_S3_CSI.version == "2.7.0"
    assert inputs["repositoryOpts"]["repo"] == "https://awslabs.github.io/mountpoint-s3-csi-driver"
    assert inputs["namespace"] == "kube-system"
    node = inputs["values"]["node"]
    assert node["tolerateAllTaints"] is True
    (role,) = p.by_type(ROLE)
    assert node["serviceAccount"] == {
        "create": True,
        "name": "s3-csi-driver-sa",
        "annotations": {"eks.amazonaws.com/role-arn": role["outputs"]["arn"]},
    }
    (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    assert statement["Condition"]["StringEquals"] == {
        f"{ISSUER}:sub": "system:serviceaccount:kube-system:s3-csi-driver-sa",
        f"{ISSUER}:aud": "sts.amazonaws.com",
    }
    # The node pods start once the role exists (its ARN is on their service account); the
    # store's own policy is what its PVs wait for.
    assert role["urn"] in release["dependencies"]
    (role_policy,) = p.by_type(ROLE_POLICY)
    assert role_policy["urn"] not in release["dependencies"]
    for pv in p.by_type(PV):
        assert role_policy["urn"] in pv["dependencies"]


def test_helm_driver_namespace_and_version_follow_the_args():
    p = plan(s3(driver_namespace="storage", driver_version="2.6.0"), fill=True)
    (release,) = p.by_type(RELEASE)
    assert (release["inputs"]["namespace"], release["inputs"]["version"]) == ("storage", "2.6.0")
    (statement,) = json.loads(p.by_type(ROLE)[0]["inputs"]["assumeRolePolicy"])["Statement"]
    sub = statement["Condition"]["StringEquals"][f"{ISSUER}:sub"]
    assert sub == "system:serviceaccount:storage:s3-csi-driver-sa"


def test_helm_driver_by_pod_identity_waits_for_the_association():
    p = plan(s3(identity="pod-identity"), fill=True)
    (association,) = p.by_type(ASSOCIATION)
    assert (association["inputs"]["namespace"], association["inputs"]["serviceAccount"]) == (
        "kube-system",
        "s3-csi-driver-sa",
    )
    (release,) = p.by_type(RELEASE)
    node = release["inputs"]["values"]["node"]
    assert "annotations" not in node["serviceAccount"]
    # EKS injects Pod Identity credentials at pod creation: node pods come after the association.
    assert association["urn"] in release["dependencies"]
    assert node["podLabels"] == {
        "modelstore.pulumi.com/pod-identity-association": association["outputs"]["associationId"]
    }


def test_eks_addon_gets_the_node_role():
    p = plan(s3(driver_install="eks-addon", eks_addon_version="v2.7.0-eksbuild.1"), fill=True)
    assert not p.by_type(RELEASE)
    (addon,) = p.by_type(ADDON)
    (role,) = p.by_type(ROLE)
    inputs = addon["inputs"]
    assert (inputs["addonName"], inputs["clusterName"], inputs["addonVersion"]) == (
        "aws-mountpoint-s3-csi-driver",
        CLUSTER,
        "v2.7.0-eksbuild.1",
    )
    assert inputs["serviceAccountRoleArn"] == role["outputs"]["arn"]
    (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    sub = statement["Condition"]["StringEquals"][f"{ISSUER}:sub"]
    assert sub == "system:serviceaccount:kube-system:s3-csi-driver-sa"
    # The add-on carries the role; mounts wait for the add-on and the store's own policy.
    assert role["urn"] in addon["dependencies"]
    (role_policy,) = p.by_type(ROLE_POLICY)
    assert len(p.by_type(PV)) == 1
    for pv in p.by_type(PV):
        assert {addon["urn"], role_policy["urn"]} <= set(pv["dependencies"])


def test_eks_addon_by_pod_identity_is_created_after_the_association():
    p = plan(s3(driver_install="eks-addon", identity="pod-identity"))
    (addon,) = p.by_type(ADDON)
    (association,) = p.by_type(ASSOCIATION)
    assert "serviceAccountRoleArn" not in addon["inputs"]
    assert association["urn"] in addon["dependencies"]


def test_existing_driver_gets_no_install_and_no_node_role():
    _, p = mounts_and_plan(driver_install="none")
    assert not p.by_type(RELEASE) and not p.by_type(ADDON) and not p.by_type(ROLE)
    assert p.outputs["store"]["driverRoleArn"] is None


def test_existing_driver_with_driver_credentials_needs_no_cluster():
    p = plan(
        lambda: MountpointS3ModelStore(
            "llama", {"readers": ["inference"], "driver_install": "none"}
        )
    )
    assert "aws:eks/getCluster:getCluster" not in {i["token"] for i in p.invokes}
    assert p.by_type(PV)


# -- stores sharing a cluster -------------------------------------------------------------------

OIDC_LOOKUP = "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider"
SCOPE = f"EksCluster::{CLUSTER}"


def stores(*specs: tuple[str, dict[str, Any]]):
    """Several stores on CLUSTER, built in the order given; returns them by name."""
    built: dict[str, MountpointS3ModelStore] = {}

    def program():
        for name, args in specs:
            fields = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
            built[name] = MountpointS3ModelStore(name, cast(MountpointS3ModelStoreArgs, fields))
            pulumi.export(name, built[name].summary)

    return program


def leaf(state: dict[str, Any]) -> str:
    return state["urn"].rsplit("::", 1)[-1]


def aliases(state: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["name"], a["parentUrn"].rsplit("::", 1)[-1]) for a in state["aliases"]]


def bucket_of(p: Plan, store: str) -> str:
    return p.by_name(f"{store}-bucket")["outputs"]["arn"]


def objects_granted(document: dict[str, Any]) -> set[str]:
    return {s["Resource"] for s in document["Statement"] if s["Sid"] == "MountpointReadObjects"}


def assert_one_shared_driver_role(
    p: Plan, names: tuple[str, ...], pending: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One driver install and one node role, both the cluster's; each store's own read-only
    policy on the role, naming only its own bucket, and its PVs waiting for it (but those of
    a store declared before the install, which registered before the policy)."""
    (release,) = p.by_type(RELEASE)
    assert release["parent"].endswith(SCOPE)
    (role,) = p.by_type(ROLE)
    assert leaf(role) == f"{CLUSTER}-s3-csi-driver-role" and role["parent"].endswith(SCOPE)
    policies = {leaf(s): s for s in p.by_type(ROLE_POLICY)}
    assert set(policies) == {f"{name}-driver-policy" for name in names}
    for name in names:
        policy = policies[f"{name}-driver-policy"]
        assert policy["parent"].endswith(f"MountpointS3ModelStore::{name}")
        assert policy["inputs"]["role"] == role["id"]
        document = json.loads(policy["inputs"]["policy"])
        assert objects_granted(document) == {f"{bucket_of(p, name)}/*"}
        assert not all_actions(document) & WRITE_ACTIONS
        arn = None if name in pending else role["outputs"]["arn"]
        assert p.outputs[name]["driverRoleArn"] == arn
        for pv in p.by_type(PV):
            if pv["parent"].endswith(f"MountpointS3ModelStore::{name}"):
                assert (policy["urn"] in pv["dependencies"]) is (name not in pending)
    return role


def test_a_second_driver_level_store_joins_the_clusters_driver_role():
    p = plan(
        stores(
            ("llama", {"readers": ["inference"]}),
            ("mistral", {"readers": ["chat"], "driver_install": "none"}),
        ),
        fill=True,
    )
    role = assert_one_shared_driver_role(p, ("llama", "mistral"))
    for name in ("llama", "mistral"):
        assert p.outputs[name]["driverRoleArn"] == role["outputs"]["arn"]
        for pv in p.by_type(PV):
            assert pv["inputs"]["spec"]["csi"]["volumeAttributes"]["authenticationSource"] == (
                "driver"
            )
    # The role and the install keep their identity: aliases to where the first store had them.
    assert aliases(role) == [("llama-driver-role", "llama")]
    (release,) = p.by_type(RELEASE)
    assert leaf(release) == f"{CLUSTER}-aws-mountpoint-s3-csi-driver"
    assert aliases(release) == [("llama-s3-csi-driver", "llama")]
    assert release["inputs"]["name"] == "aws-mountpoint-s3-csi-driver"  # the Helm release itself
    # Both stores' PVs wait for the one install.
    for pv in p.by_type(PV):
        assert release["urn"] in pv["dependencies"]


def test_the_shared_driver_role_by_pod_identity_keeps_its_association():
    p = plan(
        stores(
            ("llama", {"identity": "pod-identity"}),
            ("mistral", {"readers": ["chat"], "driver_install": "none"}),
        ),
        fill=True,
    )
    assert_one_shared_driver_role(p, ("llama", "mistral"))
    (association,) = p.by_type(ASSOCIATION)
    assert leaf(association) == f"{CLUSTER}-s3-csi-driver-pod-identity"
    assert aliases(association) == [("llama-driver-pod-identity", "llama")]
    assert (association["inputs"]["namespace"], association["inputs"]["serviceAccount"]) == (
        "kube-system",
        "s3-csi-driver-sa",
    )
    # Credentials reach pods created after the association: the driver waits for it.
    (release,) = p.by_type(RELEASE)
    assert association["urn"] in release["dependencies"]


def test_a_driver_level_store_declared_before_the_install_joins_the_role_too():
    # Order does not matter: the store with driver_install none comes first, and its policy
    # goes on the role the installing store makes.
    p = plan(
        stores(
            ("mistral", {"readers": ["chat"], "driver_install": "none"}),
            ("llama", {"readers": ["inference"]}),
        ),
        fill=True,
    )
    role = assert_one_shared_driver_role(p, ("llama", "mistral"), pending=("mistral",))
    assert aliases(role) == [("llama-driver-role", "llama")]


def test_a_pod_level_installer_makes_the_role_for_driver_level_stores_declared_before_it():
    p = plan(
        stores(
            ("mistral", {"readers": ["chat"], "driver_install": "none"}),
            ("llama", {"writers": ["loader"]}),  # pod-level credentials, installs the driver
        ),
        fill=True,
    )
    roles = {leaf(r): r for r in p.by_type(ROLE)}
    role = roles[f"{CLUSTER}-s3-csi-driver-role"]
    assert role["aliases"] == []  # it never lived under llama, which had no driver role
    (policy,) = [s for s in p.by_type(ROLE_POLICY) if leaf(s) == "mistral-driver-policy"]
    assert policy["parent"].endswith("MountpointS3ModelStore::mistral")
    assert objects_granted(json.loads(policy["inputs"]["policy"])) == {
        f"{bucket_of(p, 'mistral')}/*"
    }
    (release,) = p.by_type(RELEASE)
    annotations = release["inputs"]["values"]["node"]["serviceAccount"]["annotations"]
    assert annotations == {"eks.amazonaws.com/role-arn": role["outputs"]["arn"]}
    assert p.outputs["llama"]["driverRoleArn"] is None


def test_a_driver_level_store_after_a_pod_level_install_is_refused_naming_the_installer():
    with pytest.raises(PlanError) as err:
        plan(
            stores(
                ("llama", {"writers": ["loader"]}),
                ("mistral", {"readers": ["chat"], "driver_install": "none"}),
            )
        )
    assert str(err.value) == (
        "mistral: authentication_source must be pod on cluster 'prod-eks': store 'llama' "
        "installed the Mountpoint S3 CSI driver there without a driver-level role (declare this "
        "store before it, so the install carries the shared role, or use pod-level "
        "credentials), got 'driver'"
    )
    assert not [u for u in err.value.registered if u.endswith("::mistral")]


def test_two_helm_stores_on_one_cluster_share_one_install_and_role():
    # No `driver_install: none` needed any more: the second store joins the cluster's install.
    p = plan(stores(("llama", {}), ("mistral", {"readers": ["chat"]})), fill=True)
    assert_one_shared_driver_role(p, ("llama", "mistral"))


def test_stores_with_no_install_in_the_program_make_no_role():
    # The cluster has the driver already: its own identity must reach the buckets.
    p = plan(
        stores(
            ("llama", {"driver_install": "none"}),
            ("mistral", {"readers": ["chat"], "driver_install": "none"}),
        )
    )
    assert not p.by_type(ROLE) and not p.by_type(ROLE_POLICY) and not p.by_type(RELEASE)
    assert len(p.by_type(PV)) == 2


def test_driver_versions_that_differ_on_one_cluster_are_refused_naming_both():
    message = (
        "mistral: driver_version must be 2.7.0 (one driver per cluster: the Mountpoint S3 CSI "
        "driver version store 'llama' set on cluster 'prod-eks'), got '2.6.0'"
    )
    for second in (
        {"driver_version": "2.6.0"},
        {"driver_version": "2.6.0", "driver_install": "none"},
    ):
        with pytest.raises(PlanError) as err:
            plan(stores(("llama", {}), ("mistral", {"readers": ["chat"], **second})))
        assert str(err.value) == message, second
        assert not [u for u in err.value.registered if u.endswith("::mistral")]
    # A store that neither installs the driver nor states its version agrees with anything.
    plan(
        stores(
            ("llama", {"driver_version": "2.6.0"}),
            ("mistral", {"readers": ["chat"], "driver_install": "none"}),
        )
    )


def test_a_driver_level_store_naming_another_identity_for_the_shared_role_is_refused():
    with pytest.raises(PlanError) as err:
        plan(
            stores(
                ("llama", {}),
                ("mistral", {"readers": ["chat"], "identity": "pod-identity"}),
            )
        )
    assert str(err.value) == (
        "mistral: identity must be irsa (how the shared Mountpoint driver role reaches the "
        "driver, as store 'llama' set on cluster 'prod-eks'), got 'pod-identity'"
    )


def test_two_stores_on_one_cluster_look_the_cluster_up_once():
    p = plan(
        stores(
            ("llama", {"writers": ["loader"]}),
            (
                "mistral",
                {"readers": ["chat"], "authentication_source": "pod", "bucket_name": "acme-models"},
            ),
            ("qwen", {"readers": ["batch"], "writers": ["qwen-loader"]}),
        )
    )
    tokens = [i["token"] for i in p.invokes]
    assert tokens.count(OIDC_LOOKUP) == 1
    assert tokens.count("aws:eks/getCluster:getCluster") == 1
    assert tokens.count("aws:index/getRegion:getRegion") == 1
    assert tokens.count("aws:index/getPartition:getPartition") == 1


def test_config_program_builds_two_stores_on_one_cluster_with_one_driver_install():
    from pulumi_modelstore.program import build_stores

    p = plan(
        lambda: build_stores(
            {
                "llama": {"backend": "mountpoint-s3", "clusterName": CLUSTER, "readers": ["a"]},
                "mistral": {
                    "backend": "mountpoint-s3",
                    "clusterName": CLUSTER,
                    "readers": ["b"],
                    "driverInstall": "none",
                },
            }
        ),
        fill=True,
    )
    assert_one_shared_driver_role(p, ("llama", "mistral"))


def test_stores_join_a_cluster_scope_the_program_made():
    from pulumi_modelstore.aws.cluster import EksCluster

    def program():
        cluster = EksCluster("prod", {"cluster_name": CLUSTER})
        for name, readers in (("llama", ["a"]), ("mistral", ["b"])):
            MountpointS3ModelStore(name, {"cluster": cluster, "readers": readers})

    p = plan(program)
    (role,) = p.by_type(ROLE)
    (release,) = p.by_type(RELEASE)
    assert (leaf(role), leaf(release)) == (
        "prod-s3-csi-driver-role",
        "prod-aws-mountpoint-s3-csi-driver",
    )
    assert {leaf(s) for s in p.by_type(ROLE_POLICY)} == {
        "llama-driver-policy",
        "mistral-driver-policy",
    }


# -- regions ------------------------------------------------------------------------------------


def test_bucket_region_is_the_buckets_and_region_stays_the_clusters():
    p = plan(s3(bucket_region="eu-west-1", region="us-west-2"), fill=True)
    assert p.by_type(BUCKET)[0]["inputs"]["region"] == "eu-west-1"
    for type_ in (PUBLIC_ACCESS, OWNERSHIP, ENCRYPTION, VERSIONING, BUCKET_POLICY):
        assert p.by_type(type_)[0]["inputs"]["region"] == "eu-west-1", type_
    assert p.by_type(PV)[0]["inputs"]["spec"]["mountOptions"][0] == "region eu-west-1"
    store = plan(s3(bucket_region="eu-west-1", bucket_name="acme-models"), fill=True)
    assert store.by_type(PV)[0]["inputs"]["spec"]["mountOptions"][0] == "region eu-west-1"


def test_bucket_region_defaults_to_the_clusters_region():
    _, p = mounts_and_plan()
    assert p.by_type(BUCKET)[0]["inputs"]["region"] == "us-west-2"  # the provider's
    assert p.outputs["store"]["region"] == "us-west-2"
    _, p = mounts_and_plan(bucket_region="eu-west-1")
    assert p.outputs["store"]["region"] == "eu-west-1"


# -- input --------------------------------------------------------------------------------------


def test_metadata_ttl_as_a_number_is_still_read_for_one_release():
    with pytest.warns(DeprecationWarning, match="metadata_ttl as a number is deprecated"):
        p = plan(s3(metadata_ttl=300))
    assert "metadata-ttl 300" in p.by_type(PV)[0]["inputs"]["spec"]["mountOptions"]


def test_every_bad_field_is_reported_one_line_each():
    fields = {
        "cluster_name": CLUSTER,
        "readers": ["inference"],
        "bucket_name": "Acme_Models",
        "cache_size": "10GB",
    }
    with pytest.raises(ModelStoreInputError) as err:
        MountpointS3ModelStore.validate("llama", fields)
    assert str(err.value).splitlines() == [
        f"llama: bucket_name must be {BUCKET_RULE}, got 'Acme_Models'",
        f"llama: cache_size must be {QUANTITY_RULE}, got '10GB'",
    ]
    with pytest.raises(PlanError) as plan_err:
        plan(s3(bucket_name="Acme_Models", cache_size="10GB"))
    assert [u.rsplit("::", 1)[-1] for u in plan_err.value.registered] == ["modelstore-test"]


# -- PersistentVolumes and claims -----------------------------------------------------------


def test_pvs_per_reader_and_writer():
    p = plan(s3(readers=["inference"], writers=["loader"], prefix="llama/"), fill=True)
    bucket = p.by_type(BUCKET)[0]["id"]
    pvs = {ns: s["inputs"]["spec"] for ns, s in by_namespace(p, PV).items()}
    common = [
        "region us-west-2",
        "prefix llama/",
        "metadata-ttl indefinite",
        "negative-metadata-ttl 10",
        "allow-other",
        "uid=1000",
        "gid=1000",
    ]
    assert pvs["inference"]["accessModes"] == ["ReadOnlyMany"]
    assert pvs["inference"]["mountOptions"] == [
        *common,
        "dir-mode 0755",
        "file-mode 0644",
        "read-only",
    ]
    assert pvs["inference"]["csi"]["readOnly"] is True
    assert pvs["loader"]["accessModes"] == ["ReadWriteMany"]
    assert pvs["loader"]["mountOptions"] == common
    assert pvs["loader"]["csi"]["readOnly"] is False
    assert set(pvs) == {"inference", "loader"}
    for ns, spec in pvs.items():
        assert spec["csi"]["driver"] == "s3.csi.aws.com"
        assert spec["csi"]["volumeAttributes"] == {
            "bucketName": bucket,
            "authenticationSource": "pod",
            "cache": "emptyDir",
            "cacheEmptyDirSizeLimit": "10Gi",
        }
        assert spec["storageClassName"] == ""
        assert spec["persistentVolumeReclaimPolicy"] == "Retain"
        assert spec["claimRef"] == {"namespace": ns, "name": "llama"}
    claims = {ns: s["inputs"]["spec"] for ns, s in by_namespace(p, PVC).items()}
    assert set(claims) == {"inference", "loader"}
    assert claims["inference"]["accessModes"] == ["ReadOnlyMany"]
    assert claims["loader"]["accessModes"] == ["ReadWriteMany"]
    for ns, claim in claims.items():
        assert claim["storageClassName"] == "" and claim["volumeName"] == f"llama-{ns}"


def test_pv_and_claim_capacity_is_nominal_and_small():
    # S3 has no size; a large nominal capacity would count against requests.storage quotas.
    p = plan(s3(readers=["inference"], writers=["loader"]))
    pvs, claims = p.by_type(PV), p.by_type(PVC)
    assert len(pvs) == len(claims) == 2
    for pv in pvs:
        assert pv["inputs"]["spec"]["capacity"] == {"storage": "1Gi"}
    for claim in claims:
        assert claim["inputs"]["spec"]["resources"] == {"requests": {"storage": "1Gi"}}


def test_volume_handles_are_unique_per_pv():
    p = plan(s3(readers=["a", "b"], writers=["c"]), fill=True)
    handles = [pv["inputs"]["spec"]["csi"]["volumeHandle"] for pv in p.by_type(PV)]
    assert len(handles) == len(set(handles)) == 3
    assert UNKNOWN not in handles


def test_pvs_depend_on_the_driver_install_the_node_role_and_the_bucket_hardening():
    p = plan(s3(readers=["inference", "batch"]))
    release = p.by_type(RELEASE)[0]["urn"]
    (role_policy,) = p.by_type(ROLE_POLICY)
    hardening = {
        p.by_type(t)[0]["urn"]
        for t in (PUBLIC_ACCESS, OWNERSHIP, ENCRYPTION, VERSIONING, BUCKET_POLICY)
    }
    assert len(p.by_type(PV)) == 2
    for pv in p.by_type(PV):
        deps = set(pv["dependencies"])
        assert release in deps and role_policy["urn"] in deps and hardening <= deps


def test_pvs_of_a_store_with_writers_depend_on_every_pod_role_policy():
    p = plan(s3(readers=["inference"], writers=["loader"]))
    role_policies = {s["urn"] for s in p.by_type(ROLE_POLICY)}
    assert len(role_policies) == 2 and len(p.by_type(PV)) == 2
    for pv in p.by_type(PV):
        assert role_policies <= set(pv["dependencies"])


def test_writers_delete_and_overwrite_only_when_asked():
    pvs = by_namespace(plan(s3(writers=["loader"])), PV)
    assert not {"allow-delete", "allow-overwrite"} & set(
        pvs["loader"]["inputs"]["spec"]["mountOptions"]
    )
    pvs = by_namespace(plan(s3(writers=["loader"], allow_delete=True, allow_overwrite=True)), PV)
    assert pvs["loader"]["inputs"]["spec"]["mountOptions"][-2:] == [
        "allow-delete",
        "allow-overwrite",
    ]
    reader = pvs["inference"]["inputs"]["spec"]["mountOptions"]
    assert not {"allow-delete", "allow-overwrite"} & set(reader) and "read-only" in reader


def test_mount_option_fields():
    p = plan(
        s3(
            uid=1001,
            gid=2000,
            metadata_ttl="300",
            cache_size="50Gi",
            extra_mount_options=["maximum-throughput-gbps 100"],
            # An old config: `region` alone is still the bucket's region too.
            region="eu-west-1",
        )
    )
    spec = p.by_type(PV)[0]["inputs"]["spec"]
    assert spec["mountOptions"] == [
        "region eu-west-1",
        "metadata-ttl 300",
        "negative-metadata-ttl 10",
        "allow-other",
        "uid=1001",
        "gid=2000",
        "dir-mode 0755",
        "file-mode 0644",
        "read-only",
        "maximum-throughput-gbps 100",
    ]
    assert spec["csi"]["volumeAttributes"]["cacheEmptyDirSizeLimit"] == "50Gi"
    assert p.by_type(BUCKET)[0]["inputs"]["region"] == "eu-west-1"


def test_root_only_mount_and_no_cache():
    spec = plan(s3(allow_other=False, cache="none")).by_type(PV)[0]["inputs"]["spec"]
    assert not {"allow-other", "uid=1000", "gid=1000"} & set(spec["mountOptions"])
    assert set(spec["csi"]["volumeAttributes"]) == {"bucketName", "authenticationSource"}


def test_driver_level_mount_needs_no_service_account():
    mounts, p = mounts_and_plan(readers=["inference", "batch"])
    assert not p.by_type(SA)
    assert len(mounts) == 2
    for mount in mounts.values():
        assert mount.service_account_name is None
        assert mount.volume_mount["readOnly"] is True
    store = p.outputs["store"]
    (role,) = p.by_type(ROLE)
    assert store["driverRoleArn"] == role["outputs"]["arn"]
    assert store["podRoleArns"] == {} and store["serviceAccountName"] is None
    assert store["claimNames"] == {"inference": "llama", "batch": "llama"}


def test_service_accounts_wait_for_namespaces_the_store_creates():
    p = plan(s3(authentication_source="pod", create_namespaces=True))
    namespace = p.by_type("kubernetes:core/v1:Namespace")[0]["urn"]
    assert namespace in p.by_type(SA)[0]["dependencies"]


def test_missing_oidc_provider_fails_the_preview_before_anything_registers():
    def missing(args, config):
        raise Exception("OIDC provider not found")

    with pytest.raises(PlanError) as err:
        plan(s3(), invokes={"aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": missing})
    assert str(err.value).startswith("llama: identity must be pod-identity, or irsa on a cluster")
    # Nothing registered: the cluster scope registers with its first store, not before.
    assert [u.rsplit("::", 1)[-1] for u in err.value.registered] == ["modelstore-test"]


# -- bad input ----------------------------------------------------------------------------

BUCKET_RULE = (
    "a valid S3 bucket name (3-63 lowercase letters, digits, '.' and '-', starting and ending "
    "with a letter or digit, no '..', not an IP address, not starting with xn--, sthree- or "
    "amzn-s3-demo-, not ending with -s3alias, --ol-s3, .mrap, --x-s3 or --table-s3)"
)
PREFIX_RULE = "an S3 key prefix ending in '/' (e.g. 'llama-3-8b/'), without a leading '/' or '//'"
QUANTITY_RULE = "a Kubernetes quantity with a unit (Mi, Gi, Ti, M, G or T), e.g. '10Gi'"
MANAGED_RULE = (
    "a Mountpoint flag the store does not manage (not one of region, prefix, read-only, "
    "allow-delete, allow-overwrite, allow-other, allow-root, uid, gid, dir-mode, file-mode, "
    "metadata-ttl, negative-metadata-ttl, cache: use the store's fields)"
)
LOWERCASE_RULE = (
    "a Mountpoint flag with a lowercase name (the driver matches flag names case-sensitively)"
)
CACHE_SIZE_RULE = (
    "a Mountpoint flag other than max-cache-size (the driver derives it from cache_size, the "
    "cache emptyDir's size limit, which it must not exceed: set cache_size)"
)
DRIVER_CREDENTIALS_RULE = (
    "pod or unset when the store has writers or a model its seed Job writes (driver-level "
    "credentials are shared by every mount on the node, so reader mounts would carry write "
    "permissions; pod gives each "
    "consumer namespace its own role, read-only for readers)"
)

BAD_INPUTS = [
    (
        {"bucket_name": "Acme_Models"},
        f"llama: bucket_name must be {BUCKET_RULE}, got 'Acme_Models'",
    ),
    ({"bucket_name": "ab"}, f"llama: bucket_name must be {BUCKET_RULE}, got 'ab'"),
    (
        {"bucket_name": "acme..models"},
        f"llama: bucket_name must be {BUCKET_RULE}, got 'acme..models'",
    ),
    (
        {"bucket_name": "192.168.5.4"},
        f"llama: bucket_name must be {BUCKET_RULE}, got '192.168.5.4'",
    ),
    ({"bucket_name": "xn--models"}, f"llama: bucket_name must be {BUCKET_RULE}, got 'xn--models'"),
    (
        {"bucket_name": "models--x-s3"},
        f"llama: bucket_name must be {BUCKET_RULE}, got 'models--x-s3'",
    ),
    ({"prefix": "llama"}, f"llama: prefix must be {PREFIX_RULE}, got 'llama'"),
    ({"prefix": "/llama/"}, f"llama: prefix must be {PREFIX_RULE}, got '/llama/'"),
    ({"prefix": "models//llama/"}, f"llama: prefix must be {PREFIX_RULE}, got 'models//llama/'"),
    ({"cache_size": "10"}, f"llama: cache_size must be {QUANTITY_RULE}, got '10'"),
    ({"cache_size": "10GB"}, f"llama: cache_size must be {QUANTITY_RULE}, got '10GB'"),
    ({"cache_size": 10}, "llama: cache_size must be a string, got 10"),
    (
        {"cache": "none", "cache_size": "10Gi"},
        "llama: cache_size must be unset when cache is none, got '10Gi'",
    ),
    ({"cache": "ephemeral"}, "llama: cache must be one of emptyDir, none, got 'ephemeral'"),
    (
        {"identity": "pod-identity", "driver_version": "1.15.0", "cache": "none"},
        "llama: identity must be irsa with Mountpoint CSI driver 1.15.0 (EKS Pod Identity needs "
        "driver 2.0.0 or newer), got 'pod-identity'",
    ),
    (
        {
            "identity": "pod-identity",
            "driver_install": "eks-addon",
            "eks_addon_version": "v1.15.0-eksbuild.1",
            "cache": "none",
        },
        "llama: identity must be irsa with Mountpoint CSI driver 1.15.0 (EKS Pod Identity needs "
        "driver 2.0.0 or newer), got 'pod-identity'",
    ),
    (
        {"driver_version": "1.15.0"},
        "llama: cache must be none with Mountpoint CSI driver 1.15.0 (the cache volume attribute "
        "needs driver 2.0.0 or newer), got 'emptyDir'",
    ),
    (
        {"driver_version": "v2.7.0"},
        "llama: driver_version must be a driver version such as 2.7.0, got 'v2.7.0'",
    ),
    (
        {"driver_install": "eks-addon", "eks_addon_version": "2.7.0"},
        "llama: eks_addon_version must be an add-on version such as v2.7.0-eksbuild.1, got '2.7.0'",
    ),
    (
        {"writers": ["loader"], "authentication_source": "driver"},
        f"llama: authentication_source must be {DRIVER_CREDENTIALS_RULE}, got 'driver'",
    ),
    (
        {"writers": ["loader"], "authentication_source": "driver", "driver_install": "none"},
        f"llama: authentication_source must be {DRIVER_CREDENTIALS_RULE}, got 'driver'",
    ),
    (
        {"authentication_source": "node"},
        "llama: authentication_source must be one of driver, pod, got 'node'",
    ),
    ({"identity": "kiam"}, "llama: identity must be one of irsa, pod-identity, got 'kiam'"),
    (
        {"service_account_name": "vllm"},
        "llama: service_account_name must be unset unless authentication_source is pod, got 'vllm'",
    ),
    (
        {"authentication_source": "pod", "service_account_name": "Vllm_SA"},
        "llama: service_account_name must be a DNS-1123 subdomain (lowercase letters, digits, '-' "
        "and '.', starting and ending with a letter or digit, at most 253 characters), got "
        "'Vllm_SA'",
    ),
    (
        {"allow_delete": True},
        "llama: allow_delete must be false unless the store has writers (readers never write), "
        "got true",
    ),
    (
        {"allow_overwrite": True},
        "llama: allow_overwrite must be false unless the store has writers (readers never "
        "write), got true",
    ),
    ({"allow_other": "yes"}, "llama: allow_other must be true or false, got 'yes'"),
    (
        {"writers": ["loader"], "allow_delete": "false"},
        "llama: allow_delete must be true or false, got 'false'",
    ),
    (
        {"writers": ["loader"], "allow_overwrite": 1},
        "llama: allow_overwrite must be true or false, got 1",
    ),
    ({"protect": "false"}, "llama: protect must be true or false, got 'false'"),
    ({"create_namespaces": "yes"}, "llama: create_namespaces must be true or false, got 'yes'"),
    ({"tags": "team=ml"}, "llama: tags must be a mapping of strings to strings, got 'team=ml'"),
    (
        {"tags": {"team": 7}},
        "llama: tags must be a mapping of strings to strings, got {'team': 7}",
    ),
    (
        {"uid": -1},
        "llama: uid must be a whole number from 1 to 4294967295 (a 32-bit Linux id; Mountpoint "
        "refuses 0), got -1",
    ),
    # Mountpoint's --uid/--gid take 1 and up: 0 would fail the mount, not the plan.
    (
        {"uid": 0},
        "llama: uid must be a whole number from 1 to 4294967295 (a 32-bit Linux id; Mountpoint "
        "refuses 0), got 0",
    ),
    (
        {"gid": 0},
        "llama: gid must be a whole number from 1 to 4294967295 (a 32-bit Linux id; Mountpoint "
        "refuses 0), got 0",
    ),
    # negative-metadata-ttl needs Mountpoint 1.15.0, the driver's from 1.13.0.
    (
        {"driver_version": "1.12.0", "cache": "none"},
        "llama: metadata_ttl must be minimal or at most 10 seconds with Mountpoint CSI driver "
        "1.12.0 (a longer TTL keeps a missing file missing until the pod restarts unless "
        "negative-metadata-ttl caps it, which needs driver 1.13.0 or newer), got 'indefinite'",
    ),
    (
        {"allow_other": False, "model": QWEN},
        "llama: allow_other must be true or unset when the store has a model (its verification "
        "Jobs and revision gates read the readers' mounts as uid 65532, and a mount without "
        "allow-other admits root alone), got false",
    ),
    (
        {"allow_other": False, "gid": 1000},
        "llama: gid must be unset when allow_other is false, got 1000",
    ),
    (
        {"metadata_ttl": "forever"},
        "llama: metadata_ttl must be indefinite, minimal or a positive whole number of seconds, "
        "got 'forever'",
    ),
    (
        {"metadata_ttl": "0"},
        "llama: metadata_ttl must be indefinite, minimal or a positive whole number of seconds, "
        "got '0'",
    ),
    (
        {"metadata_ttl": 0},  # a number is still read (as its string) for one release
        "llama: metadata_ttl must be indefinite, minimal or a positive whole number of seconds, "
        "got '0'",
    ),
    (
        {"metadata_ttl": ["300"]},
        "llama: metadata_ttl must be a string, got ['300']",
    ),
    (
        {"allow_other": None},
        "llama: allow_other is missing; it must be true or false",
    ),
    (
        {"kms_key_arn": "alias/models"},
        "llama: kms_key_arn must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key-id>; "
        "an alias does not work in an IAM policy's Resource), got 'alias/models'",
    ),
    (
        {"region": "us-west"},
        "llama: region must be an AWS region code such as us-west-2, got 'us-west'",
    ),
    *[
        (
            {"extra_mount_options": [option]},
            f"llama: extra_mount_options must be {MANAGED_RULE}, got '{option}'",
        )
        for option in ("allow-delete", "--uid=0")
    ],
    (
        {"extra_mount_options": "allow-other"},
        "llama: extra_mount_options must be a list of strings, got 'allow-other'",
    ),
    ({"extra_mount_options": ""}, "llama: extra_mount_options must be a list of strings, got ''"),
    (
        {"extra_mount_options": {"maximum-throughput-gbps": "100"}},
        "llama: extra_mount_options must be a list of strings, got "
        "{'maximum-throughput-gbps': '100'}",
    ),
    (
        {"extra_mount_options": ["maximum-throughput-gbps", 100]},
        "llama: extra_mount_options must be a list of strings, got "
        "['maximum-throughput-gbps', 100]",
    ),
    ({"readers": "inference"}, "llama: readers must be a list of strings, got 'inference'"),
    *[
        (
            {"extra_mount_options": [option]},
            f"llama: extra_mount_options must be {MANAGED_RULE}, got '{option}'",
        )
        for option in ("ALLOW-DELETE", "--Uid=0")
    ],
    *[
        (
            {"extra_mount_options": [option]},
            f"llama: extra_mount_options must be {CACHE_SIZE_RULE}, got '{option}'",
        )
        for option in ("max-cache-size 50000", "--Max-Cache-Size=50000")
    ],
    (
        {"extra_mount_options": ["Maximum-Throughput-Gbps 100"]},
        f"llama: extra_mount_options must be {LOWERCASE_RULE}, got 'Maximum-Throughput-Gbps 100'",
    ),
    (
        {"driver_install": "eks-addon", "driver_namespace": "storage"},
        "llama: driver_namespace must be unset unless driver_install is helm, got 'storage'",
    ),
    (
        {"driver_install": "kubectl"},
        "llama: driver_install must be one of helm, eks-addon, none, got 'kubectl'",
    ),
    (  # the old spelling is still read, with a deprecation warning; the error names it
        {"driver": "kubectl"},
        "llama: driver must be one of helm, eks-addon, none, got 'kubectl'",
    ),
    (
        {"bucket_region": "eu"},
        "llama: bucket_region must be an AWS region code such as us-west-2, got 'eu'",
    ),
    (
        {"cluster_name": None},
        "llama: cluster_name is missing; "
        "it must be the EKS cluster's name (needed for its IAM roles and driver "
        "add-on)",
    ),
    (
        {"cluster_name": None, "driver_install": "none", "authentication_source": "pod"},
        "llama: cluster_name is missing; "
        "it must be the EKS cluster's name (needed for its IAM roles and driver "
        "add-on)",
    ),
    (
        {"readers": []},
        "llama: readers and writers must be at least one consumer namespace between them, got []",
    ),
    (
        {"writers": ["inference"]},
        "llama: writers must be a namespace that is not also a reader, got 'inference'",
    ),
    (
        {"claim_name": "Llama_3"},
        "llama: claim_name must be a DNS-1123 label (lowercase letters, digits and '-', starting "
        "and ending with a letter or digit, at most 63 characters), got 'Llama_3'",
    ),
]


@bad_inputs(BAD_INPUTS)
def test_bad_input_is_refused_with_an_exact_message_before_anything_registers(args, message):
    assert_refused(s3(**args), message)


@bad_inputs(BAD_INPUTS)
def test_validate_refuses_bad_input_with_the_constructors_exact_message(args, message):
    # No Pulumi runtime here: validate needs no lookup and registers nothing.
    fields = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
    with pytest.raises(ModelStoreInputError) as err:
        MountpointS3ModelStore.validate("llama", fields)
    assert str(err.value) == message


def test_validate_accepts_good_input_without_lookups_or_resources():
    def program():
        MountpointS3ModelStore.validate(
            "llama",
            {
                "cluster_name": CLUSTER,
                "readers": ["inference"],
                "writers": ["loader"],
                "identity": "pod-identity",
                "kms_key_arn": KMS_KEY,
                "extra_mount_options": ["maximum-throughput-gbps 100"],
                "tags": {"team": "ml"},
            },
        )

    p = plan(program)
    assert not p.invokes
    assert [s["type"] for s in p.states()] == ["pulumi:pulumi:Stack"]


def test_the_kms_key_goes_through_the_shared_validator(monkeypatch):
    # Booleans, numbers, lists and maps are checked by their annotation (fields.py).
    keys: list[tuple[str, Any, str]] = []
    kms_key_arn = aws_v.kms_key_arn

    def spy_kms(store: str, field: str, value: Any, alias_note: str = "") -> None:
        keys.append((field, value, alias_note))
        kms_key_arn(store, field, value, alias_note=alias_note)

    monkeypatch.setattr(aws_v, "kms_key_arn", spy_kms)
    MountpointS3ModelStore.validate(
        "llama", {"cluster_name": CLUSTER, "readers": ["inference"], "kms_key_arn": KMS_KEY}
    )
    assert keys == [("kms_key_arn", KMS_KEY, "an alias does not work in an IAM policy's Resource")]


def test_pod_identity_is_fine_on_v1_when_the_store_makes_no_role():
    # An existing v1 driver with driver-level credentials: no role, so no Pod Identity to refuse.
    p = plan(
        s3(identity="pod-identity", driver_install="none", driver_version="1.15.0", cache="none")
    )
    assert not p.by_type(ROLE) and p.by_type(PV)


def test_unknown_field_names_the_allowed_ones():
    with pytest.raises(PlanError) as err:
        plan(s3(bucket="acme-models"))
    assert str(err.value) == (
        "llama: field name must be one of the 39 fields listed by "
        "`modelstore fields MountpointS3ModelStore` (nearest: bucket_name, bucket_region, backup), "
        "got 'bucket'; did you mean `bucket_name`?"
    )


# -- the AWS payloads, replayed against moto -------------------------------------------------


def test_bucket_and_roles_replay_against_moto(aws_env):
    p = plan(s3(kms_key_arn=KMS_KEY, writers=["loader"], authentication_source="pod"), fill=True)
    name = p.by_type(BUCKET)[0]["id"]
    with mock_aws():
        replay = Replay(p).run()
        client = replay.client("s3")
        assert client.get_bucket_location(Bucket=name)["LocationConstraint"] == "us-west-2"
        assert client.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
        block = client.get_public_access_block(Bucket=name)["PublicAccessBlockConfiguration"]
        assert all(block.values()) and len(block) == 4
        (rule,) = client.get_bucket_encryption(Bucket=name)["ServerSideEncryptionConfiguration"][
            "Rules"
        ]
        assert rule["ApplyServerSideEncryptionByDefault"] == {
            "SSEAlgorithm": "aws:kms",
            "KMSMasterKeyID": KMS_KEY,
        }
        ownership = client.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]
        assert ownership["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]
        assert json.loads(client.get_bucket_policy(Bucket=name)["Policy"])["Statement"]
        roles = {r["RoleName"] for r in replay.client("iam").list_roles()["Roles"]}
        assert len(roles) == 2


def test_configuring_a_bucket_the_plan_did_not_create_fails_the_replay(aws_env):
    p = plan(s3(), fill=True)
    steps = []
    for step in p.steps:
        state = step["newState"]
        if state["type"] == VERSIONING:
            state = {**state, "inputs": {**state["inputs"], "bucket": "someone-elses-bucket"}}
        steps.append({**step, "newState": state})
    broken = Plan(**{**p.__dict__, "steps": steps})
    with mock_aws(), pytest.raises(AssertionError, match="dangling bucket someone-elses-bucket"):
        Replay(broken).run()


def test_the_shared_driver_role_and_each_stores_policy_replay_against_moto(aws_env):
    p = plan(
        stores(
            ("llama", {"kms_key_arn": KMS_KEY}),
            ("mistral", {"readers": ["chat"], "driver_install": "none", "prefix": "m/"}),
        ),
        fill=True,
    )
    role_name = p.by_type(ROLE)[0]["outputs"]["name"]
    with mock_aws():
        iam = Replay(p).run().client("iam")
        assert [r["RoleName"] for r in iam.list_roles()["Roles"]] == [role_name]
        policies = iam.list_role_policies(RoleName=role_name)["PolicyNames"]
        assert len(policies) == 2
        for name in policies:
            document = iam.get_role_policy(RoleName=role_name, PolicyName=name)["PolicyDocument"]
            assert not all_actions(document) & WRITE_ACTIONS


def test_a_model_seeded_by_its_job_makes_a_reader_only_store_pod_level():
    # The seed Job writes the model: on the driver's read-only node role it could not.
    mounts, p = mounts_and_plan(readers=["inference"], model=QWEN)
    for pv in p.by_type(PV):
        assert pv["inputs"]["spec"]["csi"]["volumeAttributes"]["authenticationSource"] == "pod"
    roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
    assert set(roles) == {"llama-pod-inference-role", "llama-pod-llama-loader-role"}
    assert all_actions(policy_of(p, roles["llama-pod-llama-loader-role"])) & WRITE_ACTIONS
    assert not all_actions(policy_of(p, roles["llama-pod-inference-role"])) & WRITE_ACTIONS
    assert mounts["inference"].service_account_name == "llama-s3"


def test_driver_level_credentials_with_a_seeded_model_are_refused():
    assert_refused(
        s3(readers=["inference"], model=QWEN, authentication_source="driver"),
        f"llama: authentication_source must be {DRIVER_CREDENTIALS_RULE}, got 'driver'",
    )


# -- who may read and write, as Mountpoint presents the PVs (tests/fuse_mounts.py) ----------


def _seed_pod(p: Plan) -> dict[str, Any]:
    (seed,) = [
        j["inputs"]["spec"]["template"]["spec"]
        for j in p.by_type(JOB)
        if j["inputs"]["metadata"]["labels"].get(model_jobs.ROLE_LABEL) == "seed"
    ]
    return seed


def test_the_seed_writes_the_store_root_and_every_reader_reads_it():
    # The seed runs as 65532 with no fsGroup of the store's; readers run as any uid, some with
    # an fsGroup of their own (the driver then turns unset modes into 0770/0660).
    p = plan(s3(readers=["inference"], model=QWEN), fill=True)
    assert_seed_writes_and_readers_read(p, mountpoint_view)


def test_a_reader_mounted_before_its_revision_is_published_sees_it_within_the_gates_poll():
    # The gate polls for the manifest every GATE_POLL_SECONDS; with metadata-ttl indefinite
    # Mountpoint cached its first "not found" for as long as the mount lived.
    for ttl in ("indefinite", "3600"):
        p = plan(s3(readers=["inference"], model=QWEN, metadata_ttl=ttl), fill=True)
        for ns, pv in by_namespace(p, PV).items():
            spec = pv["inputs"]["spec"]
            assert mountpoint_negative_ttl(spec) <= model_jobs.GATE_POLL_SECONDS, (ns, spec)
            assert f"metadata-ttl {ttl}" in spec["mountOptions"]  # positives stay cached


def test_a_short_or_minimal_ttl_needs_no_negative_ttl_and_plans_on_an_old_driver():
    for ttl in ("minimal", "10"):
        spec = plan(s3(metadata_ttl=ttl, driver_version="1.12.0", cache="none")).by_type(PV)[0]
        options = spec["inputs"]["spec"]["mountOptions"]
        assert not [o for o in options if o.startswith("negative-metadata-ttl")], options
        assert mountpoint_negative_ttl(spec["inputs"]["spec"]) <= model_jobs.GATE_POLL_SECONDS


@pytest.mark.parametrize("vanish", [True, False], ids=["looked-up-afresh", "cached-lookups"])
def test_the_seed_keeps_revisions_and_retries_on_mountpoint_as_its_pv_mounts_it(tmp_path, vanish):
    # Three revisions in a row: the third one's clean-up removes the first. Mountpoint cannot
    # delete a file without allow-delete, and never removes a directory S3 knows: it goes
    # with its last file (tests/fuse_mounts.py, MountpointFs), though a lookup served from the
    # metadata cache (the seed's PV has metadata-ttl indefinite) may still find it, empty.
    p = plan(s3(readers=["inference"], model=QWEN), fill=True)
    loader = by_namespace(p, PV)["llama-loader"]["inputs"]["spec"]
    args = _seed_pod(p)["containers"][0]["args"]
    publish = args[args.index("--publish") + 1]
    keep = int(args[args.index("--keep-revisions") + 1])
    src = tmp_path / "src"
    for name, data in {"config.json": b"{}", "onnx/model.onnx": b"o" * 100}.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)
    store = tmp_path / "store"
    store.mkdir()
    allow_delete = "allow-delete" in loader["mountOptions"]
    with MountpointFs(store, allow_delete=allow_delete, vanish=vanish) as fs:
        for revision in ("r1", "r2", "r3"):
            source = open_source(f"file://{src}", revision)
            result = seed_mod.seed(source, store, keep_revisions=keep, publish=publish)
        assert result.removed == ("r1",), fs.refused
        # A run of r4 that died while writing left a file behind: the retry starts afresh.
        (store / "revisions/r4/onnx").mkdir(parents=True)
        (store / "revisions/r4/onnx/model.onnx").write_bytes(b"cut")
        source = open_source(f"file://{src}", "r4")
        result = seed_mod.seed(source, store, keep_revisions=keep, publish=publish)
    assert result.removed == ("r2",)
    files = sorted(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file())
    assert files == [
        ".modelstore/r3/manifest.json",
        ".modelstore/r4/manifest.json",
        "revisions/r3/config.json",
        "revisions/r3/onnx/model.onnx",
        "revisions/r4/config.json",
        "revisions/r4/onnx/model.onnx",
    ]
    assert (store / "revisions/r4/onnx/model.onnx").read_bytes() == b"o" * 100
    if vanish:
        assert fs.refused == [] and Layout(store).published() == ["r3", "r4"]
    else:  # each emptied directory refused rmdir once or more, and counted as removed
        assert {r.split()[0] for r in fs.refused} == {"rmdir"}
    roles = {r["urn"].rsplit("::", 1)[-1]: r for r in p.by_type(ROLE)}
    assert "s3:DeleteObject" in all_actions(policy_of(p, roles["llama-pod-llama-loader-role"]))
    assert not all_actions(policy_of(p, roles["llama-pod-inference-role"])) & WRITE_ACTIONS


@pytest.mark.parametrize("vanish", [True, False], ids=["vanished", "cached"])
def test_remove_tree_takes_mountpoints_directories_as_removed_once_empty(tmp_path, vanish):
    store = tmp_path / "store"
    (store / "revisions/r1/onnx").mkdir(parents=True)
    (store / "revisions/r1/onnx/model.onnx").write_bytes(b"o")
    (store / "revisions/r1/config.json").write_bytes(b"{}")
    (store / "revisions/r2").mkdir()
    (store / "revisions/r2/config.json").write_bytes(b"{}")
    with MountpointFs(store, allow_delete=True, vanish=vanish) as fs:
        remove_tree(store / "revisions/r1")
        remove_tree(store / "revisions/r1")  # gone already: nothing to do
        (store / "local").mkdir()  # made here, no file below: rmdir works
        remove_tree(store / "local")
    assert not (store / "local").exists()
    assert (store / "revisions/r2/config.json").exists()
    left = [p for p in (store / "revisions").rglob("*") if p.is_file()]
    assert left == [store / "revisions/r2/config.json"]
    if vanish:
        assert not (store / "revisions/r1").exists() and fs.refused == []
    else:  # listed empty, refusing rmdir: removed as far as S3 is concerned
        assert fs.refused == ["rmdir revisions/r1/onnx", "rmdir revisions/r1"] * 2


def test_remove_tree_still_fails_where_mountpoint_cannot_delete(tmp_path):
    store = tmp_path / "store"
    (store / "revisions/r1").mkdir(parents=True)
    (store / "revisions/r1/config.json").write_bytes(b"{}")
    with MountpointFs(store, allow_delete=False), pytest.raises(PermissionError):
        remove_tree(store / "revisions/r1")
    assert (store / "revisions/r1/config.json").exists()
