"""EBS: the CSI driver and its identity, snapshot classes and controller, gp3/io2 classes, the
snapshot/restore/clone/grow helpers and the model cache; exact input errors."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from moto import mock_aws

from pulumi_modelstore.aws import (
    EBS_CSI,
    SNAPSHOT_CONTROLLER,
    EbsCsiDriver,
    EbsModelCache,
    ebs_csi_driver_policy,
    ebs_storage_class,
    gp3_storage_class,
    io2_multi_attach_storage_class,
    multi_attach_claim,
)
from pulumi_modelstore.aws.ebs import (
    EbsCsiDriverArgs,
    EbsModelCacheArgs,
    parse_gp3_class,
    parse_io2_multi_attach_class,
)
from pulumi_modelstore.aws.ebs.classes import StorageClassArgs
from pulumi_modelstore.aws.policies import DRIVER_TAG
from pulumi_modelstore.fields import fields_of
from pulumi_modelstore.kube import (
    cloned_claim,
    restored_claim,
    volume_claim,
    volume_snapshot,
    volume_snapshot_class,
)
from pulumi_modelstore.kube.snapshots import storage_bytes
from pulumi_modelstore.kube.volumes import SKIP_AWAIT
from pulumi_modelstore.kube.workload import WorkloadMount
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.plan.placeholders import digest
from pulumi_modelstore.plan.placeholders.aws import ACCOUNT_ID
from pulumi_modelstore.store import workload_mount
from tests.aws_replay import Replay
from tests.conftest import CLUSTER, assert_refused, bad_inputs, plan
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

RELEASE = "kubernetes:helm.sh/v3:Release"
ADDON = "aws:eks/addon:Addon"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
POD_IDENTITY = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
SNAPSHOT_CLASS = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass"
SNAPSHOT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
JOB = "kubernetes:batch/v1:Job"
ISSUER_HOST = f"oidc.eks.us-west-2.amazonaws.com/id/{digest('oidc', CLUSTER, length=32).upper()}"
KEY = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
OTHER_KEY = "arn:aws:kms:us-west-2:123456789012:key/mrk-0123456789abcdef0123456789abcdef"
LOADER = {"image": "python:3.12-slim", "command": ["python", "-c", "print('load')"]}


def driver(**args: Any):
    return lambda: EbsCsiDriver("ebs", {"cluster_name": CLUSTER, **args})


def cache(**args: Any):
    fields: dict[str, Any] = {
        "readers": ["inference"],
        "volume_size": "100Gi",
        "loader": LOADER,
        **args,
    }
    if "namespace" in args and "readers" not in args:  # readers' deprecated spelling
        del fields["readers"]
    return lambda: EbsModelCache("llama", fields)


def names(states: list[dict[str, Any]]) -> list[str]:
    return [s["urn"].rsplit("::", 1)[-1] for s in states]


def policy_of(p) -> dict[str, Any]:
    (state,) = p.by_type(ROLE_POLICY)
    return json.loads(state["inputs"]["policy"])


def statements_with(policy: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in policy["Statement"] if action in s["Action"]]


# -- the driver and its identity ----------------------------------------------------------------


def test_helm_driver_is_pinned_tolerates_all_taints_and_carries_the_irsa_role():
    p = plan(driver(tags={"team": "ml"}), fill=True)
    release = next(r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart)
    inputs = release["inputs"]
    assert (inputs["chart"], inputs["version"]) == ("aws-ebs-csi-driver", "2.64.0")
    assert inputs["version"] == EBS_CSI.version
    assert (
        inputs["repositoryOpts"]["repo"] == "https://kubernetes-sigs.github.io/aws-ebs-csi-driver"
    )
    assert inputs["namespace"] == "kube-system"
    assert inputs["atomic"] is True
    values = inputs["values"]
    assert values["node"]["tolerateAllTaints"] is True
    (role,) = p.by_type(ROLE)
    assert values["controller"]["serviceAccount"] == {
        "create": True,
        "name": "ebs-csi-controller-sa",
        "annotations": {"eks.amazonaws.com/role-arn": role["outputs"]["arn"]},
    }
    assert values["controller"]["region"] == "us-west-2"
    assert values["controller"]["k8sTagClusterId"] == CLUSTER
    assert values["controller"]["extraVolumeTags"] == {"team": "ml"}
    assert values["sidecars"]["snapshotter"]["forceEnable"] is True


def test_irsa_trust_names_exactly_the_service_account_the_driver_runs_as():
    for extra, namespace, account in (
        ({}, "kube-system", "ebs-csi-controller-sa"),
        (
            {"driver_namespace": "storage", "controller_service_account": "ebs-ctl"},
            "storage",
            "ebs-ctl",
        ),
    ):
        p = plan(driver(**extra))
        (role,) = p.by_type(ROLE)
        (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
        assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert statement["Principal"] == {
            "Federated": f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{ISSUER_HOST}"
        }
        assert statement["Condition"] == {
            "StringEquals": {
                f"{ISSUER_HOST}:sub": f"system:serviceaccount:{namespace}:{account}",
                f"{ISSUER_HOST}:aud": "sts.amazonaws.com",
            }
        }
        (release,) = [r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart]
        assert release["inputs"]["namespace"] == namespace
        assert release["inputs"]["values"]["controller"]["serviceAccount"]["name"] == account


def test_pod_identity_associates_the_controller_service_account_and_annotates_nothing():
    p = plan(driver(identity="pod-identity"))
    (role,) = p.by_type(ROLE)
    (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    (association,) = p.by_type(POD_IDENTITY)
    assert association["inputs"]["namespace"] == "kube-system"
    assert association["inputs"]["serviceAccount"] == "ebs-csi-controller-sa"
    assert association["inputs"]["clusterName"] == CLUSTER
    release = next(r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart)
    assert release["inputs"]["values"]["controller"]["serviceAccount"]["annotations"] == {}
    # The controller starts only once its identity exists.
    assert association["urn"] in release["dependencies"]


def test_eks_addons_for_driver_and_snapshot_controller_with_irsa_role():
    p = plan(
        driver(
            driver_install="eks-addon",
            eks_addon_version="v1.64.0-eksbuild.1",
            eks_addon_configuration={"controller": {"replicaCount": 3}},
        ),
        fill=True,
    )
    assert not p.by_type(RELEASE)
    addons = {a["inputs"]["addonName"]: a for a in p.by_type(ADDON)}
    assert set(addons) == {"aws-ebs-csi-driver", "snapshot-controller"}
    ebs = addons["aws-ebs-csi-driver"]
    (role,) = p.by_type(ROLE)
    assert ebs["inputs"]["serviceAccountRoleArn"] == role["outputs"]["arn"]
    assert ebs["inputs"]["addonVersion"] == "v1.64.0-eksbuild.1"
    assert json.loads(ebs["inputs"]["configurationValues"]) == {
        "controller": {"replicaCount": 3},
        "node": {"tolerateAllTaints": True},
    }
    assert addons["snapshot-controller"]["urn"] in ebs["dependencies"]
    (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    assert statement["Condition"]["StringEquals"][f"{ISSUER_HOST}:sub"] == (
        "system:serviceaccount:kube-system:ebs-csi-controller-sa"
    )


@pytest.mark.parametrize(
    ("old", "spec"),
    [
        (gp3_storage_class, parse_gp3_class("old", {})),
        (
            io2_multi_attach_storage_class,
            parse_io2_multi_attach_class("old", {"multi_attach_iops": 1000}),
        ),
    ],
)
def test_the_old_class_builders_warn_and_make_the_same_class(old, spec):
    """One builder, ``ebs_storage_class``; the two old names stay one release, warning."""

    def program(build: Any) -> Any:
        return lambda: build("old", name="old", spec=spec, labels={"app": "vllm"})

    with pytest.warns(DeprecationWarning, match=f"{old.__name__} is deprecated"):
        before = plan(program(old)).by_type(STORAGE_CLASS)
    assert before == plan(program(ebs_storage_class)).by_type(STORAGE_CLASS)


def test_the_eks_addon_names_are_aws_facts_not_the_kube_charts():
    """kube/ knows Helm charts only: which EKS add-on ships a driver is aws/drivers.py's."""
    from dataclasses import fields

    from pulumi_modelstore.aws import EFS_CSI, FSX_CSI, MOUNTPOINT_S3_CSI
    from pulumi_modelstore.aws.drivers import EKS_ADDONS
    from pulumi_modelstore.kube import CsiDriverChart

    assert "eks_addon" not in {f.name for f in fields(CsiDriverChart)}
    charts = (FSX_CSI, EFS_CSI, MOUNTPOINT_S3_CSI, EBS_CSI, SNAPSHOT_CONTROLLER)
    assert set(EKS_ADDONS) == {c.driver for c in charts}


def test_addon_pod_identity_and_kms_payloads_replay_against_moto(aws_env):
    """IAM validates the policy (KMS statements included) and trust documents; the add-ons and
    the association are checked against the EKS API model and the role they name. (The
    example replays the Helm and IRSA path in tests/test_aws_moto.py.)"""
    p = plan(
        driver(driver_install="eks-addon", identity="pod-identity", kms_key_arn=KEY), fill=True
    )
    with mock_aws():
        done = Replay(p).run()
    assert set(done.replayed) == {ROLE, ROLE_POLICY, ADDON, POD_IDENTITY}
    assert done.replayed.count(ADDON) == 2


def test_driver_none_installs_nothing_and_makes_no_role():
    p = plan(driver(driver_install="none"))
    assert not p.by_type(RELEASE) and not p.by_type(ADDON) and not p.by_type(ROLE)
    # The classes are still made for the existing driver.
    assert p.by_type(SNAPSHOT_CLASS) and p.by_type(STORAGE_CLASS)


def test_policy_never_creates_or_deletes_volumes_or_snapshots_unscoped():
    policy = policy_of(plan(driver()))
    scoped = {
        f"aws:RequestTag/{DRIVER_TAG}",
        f"ec2:ResourceTag/{DRIVER_TAG}",
        "ec2:ResourceTag/kubernetes.io/created-for/pvc/name",
    }
    for action in (
        "ec2:CreateVolume",
        "ec2:DeleteVolume",
        "ec2:CreateSnapshot",
        "ec2:DeleteSnapshot",
        "ec2:ModifyVolume",
        "ec2:CopyVolumes",
    ):
        found = statements_with(policy, action)
        assert found, action
        for statement in found:
            keys = {k for cond in statement["Condition"].values() for k in cond}
            assert keys & scoped, (action, statement)
    tagging = statements_with(policy, "ec2:CreateTags")
    assert len(tagging) == 2
    for statement in tagging:
        assert "Condition" in statement
    create_tags = next(s for s in policy["Statement"] if s["Action"] == ["ec2:CreateTags"])
    assert create_tags["Condition"] == {
        "StringEquals": {"ec2:CreateAction": ["CreateVolume", "CreateSnapshot", "CopyVolumes"]}
    }
    attach = next(s for s in policy["Statement"] if s["Resource"] == "arn:aws:ec2:*:*:instance/*")
    assert attach["Action"] == ["ec2:AttachVolume", "ec2:DetachVolume"]
    unscoped = [s for s in policy["Statement"] if s["Resource"] == "*"]
    assert [a.split(":")[1][:8] for s in unscoped for a in s["Action"]] == ["Describe"] * 7
    assert not [s for s in policy["Statement"] if any(a.startswith("kms:") for a in s["Action"])]


def test_kms_statements_only_with_a_key_and_only_on_that_key():
    p = plan(driver(kms_key_arn=KEY))
    kms = [s for s in policy_of(p)["Statement"] if s["Action"][0].startswith("kms:")]
    assert kms == [
        {
            "Sid": "GrantVolumeKeysToEbs",
            "Effect": "Allow",
            "Action": ["kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"],
            "Resource": [KEY],
            "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
        },
        {
            "Sid": "UseVolumeKeys",
            "Effect": "Allow",
            "Action": [
                "kms:Encrypt",
                "kms:Decrypt",
                "kms:ReEncrypt*",
                "kms:GenerateDataKey*",
                "kms:DescribeKey",
            ],
            "Resource": [KEY],
        },
    ]
    gp3 = p.by_type(STORAGE_CLASS)[0]["inputs"]["parameters"]
    assert gp3["kmsKeyId"] == KEY and gp3["encrypted"] == "true"
    # Extra keys (e.g. a cache's own) join the same two statements, nothing wider.
    both = policy_of(plan(driver(kms_key_arn=KEY, kms_key_arns=[OTHER_KEY])))
    kms_both = [s for s in both["Statement"] if s["Action"][0].startswith("kms:")]
    assert len(kms_both) == 2
    for statement in kms_both:
        assert statement["Resource"] == [OTHER_KEY, KEY]


def test_policy_follows_the_partition():
    policy = ebs_csi_driver_policy("aws-us-gov")
    resources = json.dumps([s["Resource"] for s in policy["Statement"] if s["Resource"] != "*"])
    assert "arn:aws:" not in resources and "arn:aws-us-gov:ec2:*:*:volume/*" in resources


def test_snapshot_controller_installed_once_for_one_driver_and_two_caches():
    def program():
        ebs = EbsCsiDriver("ebs", {"cluster_name": CLUSTER})
        for name in ("llama", "mistral"):
            EbsModelCache(
                name,
                {
                    "readers": ["inference"],
                    "volume_size": "50Gi",
                    "loader": LOADER,
                    "snapshot_class_name": ebs.snapshot_class_name,
                },
                opts=pulumi.ResourceOptions(depends_on=[ebs]),
            )

    p = plan(program)
    controllers = [r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == "snapshot-controller"]
    assert len(controllers) == 1 and not p.by_type(ADDON)
    (controller,) = controllers
    assert controller["inputs"]["version"] == SNAPSHOT_CONTROLLER.version == "5.2.0"
    assert controller["inputs"]["repositoryOpts"]["repo"] == "https://piraeus.io/helm-charts/"
    assert controller["inputs"]["values"] == {"installCRDs": True}
    assert len(p.by_type(SNAPSHOT)) == 2 and len(p.by_type(SNAPSHOT_CLASS)) == 1
    # The driver and every snapshot wait for the CRDs.
    ebs_release = next(r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart)
    assert controller["urn"] in ebs_release["dependencies"]
    (snapshot_class,) = p.by_type(SNAPSHOT_CLASS)
    assert controller["urn"] in snapshot_class["dependencies"]
    for snapshot in p.by_type(SNAPSHOT):
        assert snapshot_class["urn"] in snapshot["dependencies"]


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            {},
            "ebs-again: driver_install must be none (EbsCsiDriver 'ebs' already installs the EBS "
            "CSI driver on cluster 'prod-eks'), got 'helm'",
        ),
        (
            {"driver_install": "none", "snapshot_controller": "eks-addon"},
            "ebs-again: snapshot_controller must be none (EbsCsiDriver 'ebs' already installs the "
            "snapshot controller on cluster 'prod-eks'), got 'eks-addon'",
        ),
    ],
)
def test_a_second_install_on_the_same_cluster_is_refused_before_it_registers(second, message):
    def program():
        EbsCsiDriver("ebs", {"cluster_name": CLUSTER})
        EbsCsiDriver("ebs-again", {"cluster_name": CLUSTER, **second})

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == message
    assert "ebs-gp3" in names_of(err.value.registered)  # the first driver registered whole
    assert not [u for u in err.value.registered if "ebs-again" in u]


ISSUER_A = "https://oidc.eks.us-west-2.amazonaws.com/id/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
ISSUER_B = "https://oidc.eks.us-west-2.amazonaws.com/id/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"


def test_drivers_without_cluster_name_on_different_clusters_both_install():
    """Explicit facts: each driver names its cluster by its OIDC issuer, and they differ."""
    p = plan(
        lambda: (
            EbsCsiDriver("ebs-a", {"oidc_issuer": ISSUER_A}),
            EbsCsiDriver("ebs-b", {"oidc_issuer": ISSUER_B}),
        )
    )
    releases = [r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart]
    assert len(releases) == 2
    controllers = [r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == "snapshot-controller"]
    assert len(controllers) == 2


def test_drivers_without_anything_naming_the_cluster_differ_by_kubernetes_provider():
    def program():
        for name in ("a", "b"):
            provider = k8s.Provider(f"cluster-{name}", kubeconfig="{}")
            EbsCsiDriver(
                f"ebs-{name}",
                {"identity": "none"},
                opts=pulumi.ResourceOptions(providers=[provider]),
            )

    releases = [r for r in plan(program).by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart]
    assert len(releases) == 2


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (
            {"oidc_issuer": ISSUER_A},
            {"oidc_issuer": ISSUER_A},
            "ebs-again: driver_install must be none (EbsCsiDriver 'ebs' already installs the EBS "
            f"CSI driver on the cluster with OIDC issuer '{ISSUER_A}'), got 'helm'",
        ),
        (
            # The first resolves its issuer from the cluster: the same cluster, named two ways.
            {"cluster_name": CLUSTER},
            {"oidc_issuer": f"https://{ISSUER_HOST}"},
            "ebs-again: driver_install must be none (EbsCsiDriver 'ebs' already installs the EBS "
            f"CSI driver on the cluster with OIDC issuer 'https://{ISSUER_HOST}'), got 'helm'",
        ),
        (
            {"identity": "none"},
            {"identity": "none"},
            "ebs-again: driver_install must be none (EbsCsiDriver 'ebs' already installs the EBS "
            "CSI driver on the cluster), got 'helm'",
        ),
    ],
)
def test_a_second_install_on_a_cluster_named_by_its_facts_is_refused(first, second, message):
    def program():
        EbsCsiDriver("ebs", first)
        EbsCsiDriver("ebs-again", second)

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == message
    assert not [u for u in err.value.registered if "ebs-again" in u]


def test_a_second_component_that_installs_nothing_is_fine():
    p = plan(
        lambda: (
            EbsCsiDriver("ebs", {"cluster_name": CLUSTER}),
            EbsCsiDriver(
                "ebs-classes",
                {
                    "cluster_name": CLUSTER,
                    "driver_install": "none",
                    "snapshot_controller": "none",
                    "create_snapshot_class": False,
                    "storage_class_name": "ebs-gp3-fast",
                    "iops": 16000,
                    "throughput_mibps": 1000,
                },
            ),
        )
    )
    assert sorted(c["inputs"]["metadata"]["name"] for c in p.by_type(STORAGE_CLASS)) == [
        "ebs-gp3",
        "ebs-gp3-fast",
    ]
    assert len([r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart]) == 1


def test_snapshot_class_retains_data_by_default():
    p = plan(driver())
    (snapshot_class,) = p.by_type(SNAPSHOT_CLASS)
    body = snapshot_class["inputs"]
    assert body["apiVersion"] == "snapshot.storage.k8s.io/v1"
    assert body["kind"] == "VolumeSnapshotClass"
    assert body["driver"] == "ebs.csi.aws.com"
    assert body["deletionPolicy"] == "Retain"
    assert body["metadata"]["name"] == "ebs-snapshots"
    assert body["metadata"]["annotations"] == {
        "snapshot.storage.kubernetes.io/is-default-class": "false"
    }
    deleting = plan(driver(snapshot_deletion_policy="Delete", default_snapshot_class=True))
    body = deleting.by_type(SNAPSHOT_CLASS)[0]["inputs"]
    assert body["deletionPolicy"] == "Delete"
    assert body["metadata"]["annotations"]["snapshot.storage.kubernetes.io/is-default-class"] == (
        "true"
    )


def test_the_snapshot_class_helper_retains_by_default():
    p = plan(
        lambda: volume_snapshot_class("snapshots", name="csi-snapshots", driver="example.csi.io")
    )
    (body,) = [
        s["inputs"] for s in p.by_type("kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass")
    ]
    assert (body["driver"], body["deletionPolicy"]) == ("example.csi.io", "Retain")
    assert "parameters" not in body


def test_gp3_class_parameters_binding_and_expansion():
    p = plan(
        driver(
            iops=6000,
            throughput_mibps=1000,
            fs_type="xfs",
            volume_tags={"team": "ml", "cost-center": "42"},
        )
    )
    (gp3,) = p.by_type(STORAGE_CLASS)
    inputs = gp3["inputs"]
    assert inputs["provisioner"] == "ebs.csi.aws.com"
    assert inputs["volumeBindingMode"] == "WaitForFirstConsumer"
    assert inputs["allowVolumeExpansion"] is True
    assert inputs["reclaimPolicy"] == "Delete"
    assert inputs["metadata"]["name"] == "ebs-gp3"
    assert inputs["parameters"] == {
        "type": "gp3",
        "iops": "6000",
        "throughput": "1000",
        "encrypted": "true",
        "csi.storage.k8s.io/fstype": "xfs",
        "tagSpecification_1": "cost-center=42",
        "tagSpecification_2": "team=ml",
    }


def test_gp3_limits_are_the_current_ec2_ones():
    top = parse_gp3_class("x", {"iops": 80000, "throughput_mibps": 2000})
    assert (top.iops, top.throughput_mibps) == (80000, 2000)
    # 0.25 MiB/s per IOPS exactly at the edge.
    assert parse_gp3_class("x", {"iops": 4000, "throughput_mibps": 1000}).iops == 4000


def test_io2_multi_attach_class_and_block_claim():
    p = plan(driver(multi_attach_iops=20000))
    io2 = next(c for c in p.by_type(STORAGE_CLASS) if c["inputs"]["parameters"]["type"] == "io2")[
        "inputs"
    ]
    assert io2["metadata"]["name"] == "ebs-io2-multi-attach"
    assert io2["parameters"] == {"type": "io2", "iops": "20000", "encrypted": "true"}
    assert io2["volumeBindingMode"] == "WaitForFirstConsumer"
    assert "fence" in (ebs_storage_class.__doc__ or "").lower()

    claim = plan(
        lambda: multi_attach_claim(
            "shared",
            name="shared",
            namespace="training",
            size="500Gi",
            storage_class_name="ebs-io2-multi-attach",
        )
    ).by_type(PVC)[0]["inputs"]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["spec"]["volumeMode"] == "Block"
    assert claim["metadata"]["annotations"] == {SKIP_AWAIT: "true"}


def test_a_claim_on_the_drivers_io2_class_is_checked_against_its_iops():
    found: dict[str, Any] = {}

    def program():
        ebs = EbsCsiDriver("ebs", {"cluster_name": CLUSTER, "multi_attach_iops": 20000})
        found["claim"] = ebs.multi_attach_claim(
            "shared", name="shared", namespace="training", size="20Gi"
        )

    p = plan(program)
    claims = p.by_type(PVC)
    assert len(claims) == 1
    (claim,) = claims
    assert claim["inputs"]["spec"]["storageClassName"] == "ebs-io2-multi-attach"
    assert claim["inputs"]["spec"]["resources"] == {"requests": {"storage": "20Gi"}}
    io2 = next(c for c in p.by_type(STORAGE_CLASS) if c["inputs"]["parameters"]["type"] == "io2")
    assert io2["urn"] in claim["dependencies"]

    def too_small():
        ebs = EbsCsiDriver("ebs", {"cluster_name": CLUSTER, "multi_attach_iops": 20000})
        ebs.multi_attach_claim("shared", name="shared", namespace="training", size="19Gi")

    with pytest.raises(PlanError) as err:
        plan(too_small)
    assert str(err.value) == (
        "shared: size must be at least 20Gi for 20000 io2 IOPS (at most 1000 IOPS per GiB; the "
        "EBS CSI driver would silently cap the volume at 19000 IOPS), got '19Gi'"
    )
    assert not [u for u in err.value.registered if u.endswith("::shared")]

    def no_class():
        EbsCsiDriver("ebs", {"cluster_name": CLUSTER}).multi_attach_claim(
            "shared", name="shared", namespace="training", size="100Gi"
        )

    with pytest.raises(PlanError) as err:
        plan(no_class)
    assert str(err.value) == (
        "ebs: multi_attach_iops is missing; it must be set for a Multi-Attach claim on this "
        "driver's io2 class"
    )


# -- the model cache ----------------------------------------------------------------------------


def test_seed_claim_skips_await_and_the_loader_writes_it_before_the_snapshot():
    p = plan(cache(iops=4000, throughput_mibps=1000, volume_initialization_rate_mibps=300))
    gp3, gp3_seed = p.by_type(STORAGE_CLASS)
    assert gp3["inputs"]["metadata"]["name"] == "llama-gp3"
    assert gp3["inputs"]["volumeBindingMode"] == "WaitForFirstConsumer"
    assert gp3["inputs"]["parameters"]["volumeInitializationRate"] == "300"
    assert gp3_seed["inputs"]["metadata"]["name"] == "llama-gp3-seed"
    (seed,) = p.by_type(PVC)
    assert seed["inputs"]["metadata"]["name"] == "llama-seed"
    assert seed["inputs"]["metadata"]["namespace"] == "inference"
    assert seed["inputs"]["metadata"]["annotations"] == {SKIP_AWAIT: "true"}
    assert seed["inputs"]["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "llama-gp3-seed",
        "volumeMode": "Filesystem",
        "resources": {"requests": {"storage": "100Gi"}},
    }
    (job,) = p.by_type(JOB)
    pod = job["inputs"]["spec"]["template"]["spec"]
    assert pod["volumes"] == [
        {"name": "model", "persistentVolumeClaim": {"claimName": "llama-seed"}}
    ]
    (container,) = pod["containers"]
    assert container["image"] == LOADER["image"]
    assert container["volumeMounts"] == [{"name": "model", "mountPath": "/mnt/models"}]
    assert pod["restartPolicy"] == "Never"
    assert seed["urn"] in job["dependencies"]
    (snapshot,) = p.by_type(SNAPSHOT)
    assert snapshot["inputs"]["metadata"] == {
        "name": "llama",
        "namespace": "inference",
        "labels": {
            "app.kubernetes.io/managed-by": "pulumi-modelstore",
            "modelstore.pulumi.com/store": "llama",
        },
    }
    assert snapshot["inputs"]["spec"] == {
        "volumeSnapshotClassName": "ebs-snapshots",
        "source": {"persistentVolumeClaimName": "llama-seed"},
    }
    # A snapshot taken while the loader writes would hold half a model.
    assert job["urn"] in snapshot["dependencies"]


@pytest.mark.parametrize(
    "source",
    [
        {"loader": LOADER},
        {
            "loader": None,
            "model": {
                "source": "hf://Qwen/Qwen2.5-0.5B-Instruct",
                "revision": "7ae557604adf67be50417f59c2c2f167def9a775",
            },
        },
    ],
    ids=["loader", "model"],
)
def test_the_seed_volume_is_made_without_the_initialization_rate_replicas_restore_with(source):
    """EC2 refuses ``VolumeInitializationRate`` on a volume not created from a snapshot, and
    the EBS CSI driver passes a class's ``volumeInitializationRate`` to every CreateVolume it
    makes (kubernetes-sigs/aws-ebs-csi-driver ``pkg/cloud/cloud.go`` L930-932 at 429e202e;
    issue #2691): the empty seed volume must come from a class without it, while the replicas,
    restored from the snapshot, keep it."""
    found: dict[str, Any] = {}

    def program():
        c = EbsModelCache(
            "llama",
            {
                "readers": ["inference"],
                "volume_size": "100Gi",
                "volume_initialization_rate_mibps": 300,
                **source,
            },
        )
        found["spec"] = c.patch_stateful_set_spec(
            {"template": {"spec": {"containers": [{"name": "vllm"}]}}}
        )
        pulumi.export("template", found["spec"]["template"]["spec"]["volumes"][0])

    p = plan(program)
    classes = {c["inputs"]["metadata"]["name"]: c["inputs"] for c in p.by_type(STORAGE_CLASS)}
    (seed,) = p.by_type(PVC)
    seed_class = classes[seed["inputs"]["spec"]["storageClassName"]]
    assert "volumeInitializationRate" not in seed_class["parameters"]
    claim = p.outputs["template"]["ephemeral"]["volumeClaimTemplate"]
    replica_class = classes[claim["spec"]["storageClassName"]]
    assert replica_class["parameters"]["volumeInitializationRate"] == "300"
    # Otherwise the same volume: type, IOPS, throughput, encryption and file system alike.
    rest = dict(replica_class["parameters"])
    del rest["volumeInitializationRate"]
    assert rest == seed_class["parameters"]
    assert seed_class["volumeBindingMode"] == "WaitForFirstConsumer"
    # The seed claim waits for its own class.
    seed_class_name = seed_class["metadata"]["name"]
    (seed_class_state,) = [
        c for c in p.by_type(STORAGE_CLASS) if c["inputs"]["metadata"]["name"] == seed_class_name
    ]
    assert seed_class_state["urn"] in seed["dependencies"]


def test_replicas_restore_the_snapshot_through_an_ephemeral_volume_of_their_own():
    found: dict[str, Any] = {}

    def program():
        c = EbsModelCache(
            "llama",
            {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER},
        )
        found["spec"] = c.patch_stateful_set_spec(
            {
                "replicas": 3,
                "template": {
                    "spec": {
                        "containers": [{"name": "vllm", "env": [{"name": "X", "value": "1"}]}],
                        "volumes": [{"name": "scratch", "emptyDir": {}}],
                    }
                },
            }
        )
        found["claim"] = c.replica_claim_name("vllm", 2)
        pulumi.export("spec", found["spec"])

    p = plan(program)
    spec = p.outputs["spec"]
    # Nothing in volumeClaimTemplates (immutable on a live StatefulSet); the pod template's
    # volume gives each replica pod a claim of its own, made and deleted with the pod.
    assert "volumeClaimTemplates" not in spec
    assert "persistentVolumeClaimRetentionPolicy" not in spec
    pod = spec["template"]["spec"]
    assert [vol["name"] for vol in pod["volumes"]] == ["scratch", "llama", "hf-home"]
    assert pod["volumes"][1] == {
        "name": "llama",
        "ephemeral": {
            "volumeClaimTemplate": {
                "metadata": {
                    "labels": {
                        "app.kubernetes.io/managed-by": "pulumi-modelstore",
                        "modelstore.pulumi.com/store": "llama",
                        "modelstore.pulumi.com/role": "replica",
                    }
                },
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "llama-gp3",
                    "volumeMode": "Filesystem",
                    "resources": {"requests": {"storage": "100Gi"}},
                    "dataSource": {
                        "apiGroup": "snapshot.storage.k8s.io",
                        "kind": "VolumeSnapshot",
                        "name": "llama",
                    },
                },
            }
        },
    }
    (container,) = pod["containers"]
    assert {"name": "llama", "mountPath": "/mnt/models", "readOnly": True} in container[
        "volumeMounts"
    ]
    assert container["env"][0] == {"name": "X", "value": "1"}
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in container["env"]
    # The ephemeral volume controller names a pod's claim <pod>-<volume>.
    assert found["claim"] == "vllm-2-llama"


def test_a_mount_output_from_before_the_ephemeral_volume_still_gives_each_pod_its_volume():
    """A platform stack's ``mounts`` output written when the claim template went into
    ``volumeClaimTemplates`` names the volume alone; an application rebuilding the mount from
    it gets the same ephemeral volume a mount made now has, not a volume without a source."""
    found: dict[str, Any] = {}

    def program():
        c = EbsModelCache(
            "llama", {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER}
        )
        pulumi.export("mount", c.mount_for("inference").to_output())

    found["now"] = plan(program).outputs["mount"]
    before = {**found["now"], "volume": {"name": found["now"]["volume"]["name"]}}
    rebuilt = WorkloadMount.from_output(before)
    assert rebuilt.volumes[0] == found["now"]["volume"]
    assert "ephemeral" in rebuilt.patch_pod_spec({"containers": []})["volumes"][0]


def test_replicas_mount_the_cache_as_a_stores_readers_do():
    """One workload-mount implementation: each replica container gets what a store's reader
    gets from mount_for (read-only model mount, HF_HUB_OFFLINE, HF_HOME on an emptyDir), the
    volume itself each pod's own ephemeral one; an hf-home volume already there is kept."""
    found: dict[str, Any] = {}

    def program():
        c = EbsModelCache(
            "llama",
            {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER},
        )
        found["spec"] = c.patch_stateful_set_spec(
            {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "vllm", "volumeMounts": None},
                            {"name": "sidecar", "env": [{"name": "X", "value": "1"}]},
                        ],
                        "volumes": [{"name": "hf-home", "emptyDir": {"medium": "Memory"}}],
                    }
                }
            }
        )

    plan(program)
    reader = workload_mount(
        namespace="inference", claim_name="llama", read_only=True, mount_path="/mnt/models"
    )
    pod = found["spec"]["template"]["spec"]
    vllm, sidecar = pod["containers"]
    assert vllm == reader.patch_container({"name": "vllm"})
    assert sidecar == reader.patch_container(
        {"name": "sidecar", "env": [{"name": "X", "value": "1"}]}
    )
    assert vllm["volumeMounts"][0] == {
        "name": "llama",
        "mountPath": "/mnt/models",
        "readOnly": True,
    }
    assert [vol["name"] for vol in pod["volumes"]] == ["hf-home", "llama"]
    assert pod["volumes"][0] == {"name": "hf-home", "emptyDir": {"medium": "Memory"}}
    assert "ephemeral" in pod["volumes"][1]


def test_outputs_name_claims_snapshot_and_classes():
    def program():
        c = EbsModelCache(
            "llama",
            {
                "readers": ["inference"],
                "volume_size": "100Gi",
                "loader": LOADER,
                "model_revision": "r2",
            },
        )
        pulumi.export("cache", c.summary)

    outputs = plan(program).outputs["cache"]
    # The template's: no claim or PV of the store's own, the mount offering the claim template.
    mount = outputs.pop("mounts")["inference"]
    assert mount["claimName"] == "llama-r2"
    assert mount["volume"]["name"] == "llama-r2"
    restored = mount["volume"]["ephemeral"]["volumeClaimTemplate"]["spec"]["dataSource"]
    assert restored["name"] == "llama-r2"
    assert mount["claimTemplate"]["metadata"]["name"] == "llama-r2"
    assert mount["claimTemplate"]["spec"]["dataSource"]["name"] == "llama-r2"
    assert outputs == {
        "claimNames": {},
        "volumeNames": {},
        "namespace": "inference",
        "seedClaimName": "llama-r2-seed",
        "loaderJobName": "llama-r2-loader",
        "snapshotName": "llama-r2",
        "storageClassName": "llama-gp3",
        "snapshotClassName": "ebs-snapshots",
        "claimTemplateName": "llama-r2",
        "volumeSize": "100Gi",
        # The model section's outputs: none without a section (the loader fills the cache).
        "modelRevision": None,
        "modelManifestPath": None,
        "modelManifestSha256": None,
        "modelSeedJobName": None,
        "modelVerifyJobNames": {},
    }


def test_restore_from_an_existing_snapshot_seeds_nothing():
    p = plan(cache(loader=None, source_snapshot_name="llama-published", storage_class_name="gp3"))
    assert not p.by_type(PVC) and not p.by_type(JOB) and not p.by_type(SNAPSHOT)
    assert not p.by_type(STORAGE_CLASS)


def test_snapshot_of_an_existing_claim_runs_no_loader():
    p = plan(cache(loader=None, source_claim_name="llama-weights"))
    assert not p.by_type(JOB) and not p.by_type(PVC)
    (snapshot,) = p.by_type(SNAPSHOT)
    assert snapshot["inputs"]["spec"]["source"] == {"persistentVolumeClaimName": "llama-weights"}


def test_the_snapshot_is_retained_not_protected_by_default_and_the_seed_is_not_retained():
    """The VolumeSnapshot is the model's data: retained on destroy and on replacement (a
    model_revision bump), not ``protect``ed, which would block that replacement. The seed claim is
    not retained: until the snapshot is ready the snapshot controller's
    pvc-as-source-protection finalizer keeps it, after that the snapshot holds the data."""
    for p in (plan(cache()), plan(cache(loader=None, source_claim_name="llama-weights"))):
        snapshots = p.by_type(SNAPSHOT)
        assert len(snapshots) == 1
        (snapshot,) = snapshots
        assert (snapshot["retainOnDelete"], snapshot["protect"]) == (True, False)
    (seed,) = plan(cache()).by_type(PVC)
    assert (seed["retainOnDelete"], seed["protect"]) == (False, False)


def test_a_revision_bump_replaces_the_retained_snapshot_under_the_same_urn():
    r1, r2 = plan(cache(model_revision="r1")), plan(cache(model_revision="r2"))
    (old,), (new,) = r1.by_type(SNAPSHOT), r2.by_type(SNAPSHOT)
    # Same resource, new object name: a replacement, which retain_on_delete does not block and
    # which leaves the r1 VolumeSnapshot (and so its EBS snapshot) in the cluster.
    assert old["urn"] == new["urn"]
    assert (old["inputs"]["metadata"]["name"], new["inputs"]["metadata"]["name"]) == (
        "llama-r1",
        "llama-r2",
    )
    assert old["retainOnDelete"] is new["retainOnDelete"] is True
    assert old["protect"] is new["protect"] is False


def test_protect_false_lets_destroy_and_revision_bumps_delete_the_snapshot():
    p = plan(cache(protect=False))
    snapshots = p.by_type(SNAPSHOT)
    assert len(snapshots) == 1
    assert (snapshots[0]["retainOnDelete"], snapshots[0]["protect"]) == (False, False)
    (seed,) = p.by_type(PVC)
    assert seed["retainOnDelete"] is False


def test_loader_mounts_and_env_are_kept_as_lists():
    p = plan(
        cache(
            loader={
                **LOADER,
                # A second mount of the seed volume (the pod's only volume: a mount of any
                # other is refused, test_inputs_kube).
                "volumeMounts": [{"name": "model", "mountPath": "/scratch"}],
                "env": [{"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "1"}],
            }
        )
    )
    jobs = p.by_type(JOB)
    assert len(jobs) == 1
    (container,) = jobs[0]["inputs"]["spec"]["template"]["spec"]["containers"]
    assert container["volumeMounts"] == [
        {"name": "model", "mountPath": "/scratch"},
        {"name": "model", "mountPath": "/mnt/models"},
    ]
    assert container["env"] == [{"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "1"}]


# -- the loader under Pod Security `restricted` -------------------------------------------------

# The Pod Security Standards' volume types allowed by `restricted` (kubernetes.io/docs/concepts/
# security/pod-security-standards, "Volume Types").
RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """What the Pod Security `restricted` profile (v1.31) refuses in a pod spec: its baseline
    controls that a loader could trip (host namespaces, privileged, host ports) and every
    restricted control (volume types, privilege escalation, non-root, seccomp, capabilities)."""
    problems = [f"{k} is set" for k in ("hostNetwork", "hostPID", "hostIPC") if pod.get(k)]
    pod_context = pod.get("securityContext") or {}
    for volume in pod.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            problems.append(f"volume {volume['name']} is {sorted(kinds)}")
    if pod_context.get("runAsUser") == 0:
        problems.append("the pod runs as user 0")
    for c in [*pod.get("initContainers", []), *pod["containers"]]:
        context = c.get("securityContext") or {}
        if context.get("privileged"):
            problems.append(f"{c['name']} is privileged")
        if any(port.get("hostPort") for port in c.get("ports", [])):
            problems.append(f"{c['name']} uses a host port")
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{c['name']} may escalate privileges")
        if context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is not True:
            problems.append(f"{c['name']} may run as root")
        if context.get("runAsUser") == 0:
            problems.append(f"{c['name']} runs as user 0")
        seccomp = context.get("seccompProfile", pod_context.get("seccompProfile")) or {}
        if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{c['name']} has no RuntimeDefault or Localhost seccomp profile")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in capabilities.get("drop", []):
            problems.append(f"{c['name']} does not drop ALL capabilities")
        if set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            problems.append(f"{c['name']} adds capabilities")
    return problems


def loader_job(**args: Any) -> dict[str, Any]:
    p = plan(cache(**args), fill=True)
    (job,) = [o for o in p.kubernetes_objects() if o["kind"] == "Job"]
    return job


def test_the_loader_job_passes_the_restricted_profile_and_the_kubernetes_schema():
    job = loader_job()
    for minor in KUBERNETES_MINORS:
        validator(minor).validate(job)
    pod = job["spec"]["template"]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "runAsGroup": 1000,
        # The kubelet gives the fresh volume to this group: a non-root loader can write it.
        "fsGroup": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    (container,) = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }
    assert restricted_violations(pod) == []


def test_the_checker_catches_what_restricted_refuses():
    """The loader as it was (no security context anywhere) fails the profile."""
    pod = {
        "containers": [{"name": "loader", "image": "x"}],
        "volumes": [{"name": "data", "hostPath": {"path": "/data"}}],
    }
    assert restricted_violations(pod) == [
        "volume data is ['hostPath']",
        "loader may escalate privileges",
        "loader may run as root",
        "loader has no RuntimeDefault or Localhost seccomp profile",
        "loader does not drop ALL capabilities",
    ]


def test_the_caller_overrides_fs_group_and_keeps_the_rest_of_the_default():
    job = loader_job(loader_pod_security_context={"fsGroup": 2000, "runAsGroup": 2000})
    for minor in KUBERNETES_MINORS:
        validator(minor).validate(job)
    pod = job["spec"]["template"]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "runAsGroup": 2000,
        "fsGroup": 2000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert restricted_violations(pod) == []


def test_a_key_set_to_none_leaves_the_default_out():
    """An image with its own non-root user: drop runAsUser/runAsGroup, keep the rest."""
    pod = loader_job(loader_pod_security_context={"runAsUser": None, "runAsGroup": None})["spec"][
        "template"
    ]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "fsGroup": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert restricted_violations(pod) == []


def test_the_loaders_own_container_security_context_is_kept_as_given():
    own = {"runAsUser": 2000, "readOnlyRootFilesystem": True}
    pod = loader_job(loader={**LOADER, "securityContext": own})["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["securityContext"] == own
    # Taken as given, so the caller answers for the profile: this one may escalate.
    assert restricted_violations(pod) == [
        "loader may escalate privileges",
        "loader does not drop ALL capabilities",
    ]


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        (
            {"containers": [{"name": "vllm", "env": "X=1"}]},
            "llama: spec.template.spec.containers[0].env must be a list of mappings (Kubernetes "
            "EnvVar objects), got 'X=1'",
        ),
        (
            {"containers": [{"name": "vllm", "volumeMounts": "/data"}]},
            "llama: spec.template.spec.containers[0].volumeMounts must be a list of mappings "
            "(Kubernetes VolumeMount objects), got '/data'",
        ),
        (
            {"containers": ["vllm"]},
            "llama: spec.template.spec.containers must be a list of mappings (Kubernetes "
            "Container objects), got ['vllm']",
        ),
        (
            {"containers": [{"name": "vllm"}], "volumes": "scratch"},
            "llama: spec.template.spec.volumes must be a list of mappings (Kubernetes Volume "
            "objects), got 'scratch'",
        ),
        (
            {"containers": [{"name": "vllm"}], "volumes": [{"name": "llama", "emptyDir": {}}]},
            "llama: spec.template.spec.volumes[0].name must be a name other than the model "
            "volume's (claim_template_name), which the cache adds to the pod template, got "
            "'llama'",
        ),
        (
            {"containers": [{"name": "vllm"}], "claims": [{"metadata": {"name": "llama"}}]},
            "llama: spec.volumeClaimTemplates[0].name must be a name other than the model "
            "volume's (claim_template_name), which the cache adds to the pod template, got "
            "'llama'",
        ),
    ],
)
def test_a_stateful_set_spec_the_cache_cannot_patch_is_refused(pod, message):
    def program():
        c = EbsModelCache(
            "llama", {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER}
        )
        pod_spec = {k: val for k, val in pod.items() if k != "claims"}
        claims = {"volumeClaimTemplates": pod["claims"]} if "claims" in pod else {}
        c.patch_stateful_set_spec({"template": {"spec": pod_spec}, **claims})

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == message


def test_cache_children_depend_on_the_driver_so_destroy_deletes_claims_first():
    def program():
        ebs = EbsCsiDriver("ebs", {"cluster_name": CLUSTER})
        EbsModelCache(
            "llama",
            {"readers": ["inference"], "volume_size": "100Gi", "loader": LOADER},
            opts=pulumi.ResourceOptions(depends_on=[ebs]),
        )

    p = plan(program)
    ebs_release = next(r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == EBS_CSI.chart)
    for type_ in (PVC, JOB, SNAPSHOT):
        states = p.by_type(type_)
        assert len(states) == 1, type_
        for state in states:
            assert ebs_release["urn"] in state["dependencies"], state["urn"]


def test_every_claim_that_binds_on_first_consumer_skips_await(preview_plans):
    p = preview_plans("examples/aws-ebs-model-cache/dev")
    deferred = {
        c["inputs"]["metadata"]["name"]
        for c in p.by_type(STORAGE_CLASS)
        if c["inputs"]["volumeBindingMode"] == "WaitForFirstConsumer"
    }
    claims = p.by_type(PVC)
    assert len(claims) == 1  # the seed; replica claims come from the StatefulSet controller
    for claim in claims:
        assert claim["inputs"]["spec"]["storageClassName"] in deferred
        assert claim["inputs"]["metadata"]["annotations"][SKIP_AWAIT] == "true"


def test_example_snapshot_objects_validate_against_the_external_snapshotter_crds(filled_plans):
    """Against the v8.6.0 CRDs (the pinned snapshot-controller's, tests/schemas/SOURCE.md). Their
    CEL rules are not evaluated, so the create-time ones are checked here: a VolumeSnapshot's
    source names exactly one of a claim and a content."""
    p = filled_plans["examples/aws-ebs-model-cache/dev"]
    objects = [o for o in p.kubernetes_objects() if o["apiVersion"].startswith("snapshot.")]
    kinds = sorted(o["kind"] for o in objects)
    assert kinds == ["VolumeSnapshot", "VolumeSnapshotClass"]
    for obj in objects:
        for minor in KUBERNETES_MINORS:
            validator(minor).validate(obj)
        if obj["kind"] == "VolumeSnapshotClass":
            assert "namespace" not in obj["metadata"]  # cluster-scoped
        else:
            assert obj["metadata"]["namespace"]
            assert len(obj["spec"]["source"]) == 1


# -- snapshot, restore, clone and grow helpers ------------------------------------------------


def test_restored_and_cloned_claims():
    def program():
        restored_claim(
            "restored",
            name="weights",
            namespace="inference",
            snapshot_name="llama",
            size="100Gi",
            storage_class_name="ebs-gp3",
        )
        cloned_claim(
            "clone",
            name="weights-copy",
            namespace="inference",
            source_claim_name="weights",
            source_namespace="inference",
            size="100Gi",
            storage_class_name="ebs-gp3",
            binding_waits_for_consumer=False,
        )

    p = plan(program)
    restored = p.by_name("restored")["inputs"]
    assert restored["spec"]["dataSource"] == {
        "apiGroup": "snapshot.storage.k8s.io",
        "kind": "VolumeSnapshot",
        "name": "llama",
    }
    assert restored["metadata"]["annotations"] == {SKIP_AWAIT: "true"}
    clone = p.by_name("clone")["inputs"]
    assert clone["spec"]["dataSource"] == {"kind": "PersistentVolumeClaim", "name": "weights"}
    assert clone["metadata"]["namespace"] == "inference"
    assert "annotations" not in clone["metadata"]


def test_growing_a_claim_is_an_in_place_update():
    """Only spec.resources.requests.storage changes. The mock runtime runs no provider diff;
    pulumi-kubernetes replaces a PVC only for a change to metadata name/namespace or
    spec.accessModes/selector/storageClassName/volumeName (provider/pkg/provider/diff.go), so
    this is an update."""

    def program(size: str):
        def build():
            volume_claim(
                "checkpoints",
                name="checkpoints",
                namespace="training",
                size=size,
                storage_class_name="ebs-gp3",
            )
            EbsModelCache(
                "llama", {"readers": ["inference"], "volume_size": size, "loader": LOADER}
            )

        return build

    small, large = plan(program("100Gi")), plan(program("200Gi"))
    assert [s["urn"] for s in small.states()] == [s["urn"] for s in large.states()]
    changed: dict[str, tuple[Any, Any]] = {}
    for before, after in zip(small.states(), large.states(), strict=True):
        assert before["inputs"].get("metadata") == after["inputs"].get("metadata")
        for key in ("deleteBeforeReplace", "replaceOnChanges", "dependencies", "protect"):
            assert before[key] == after[key], (before["urn"], key)
        assert after["deleteBeforeReplace"] is False and after["replaceOnChanges"] == []
        if before["inputs"] != after["inputs"]:
            changed[before["urn"].rsplit("::", 1)[-1]] = (before["inputs"], after["inputs"])
    assert sorted(changed) == ["checkpoints", "llama-seed"]
    for before, after in changed.values():
        assert before["spec"]["resources"] == {"requests": {"storage": "100Gi"}}
        assert after["spec"]["resources"] == {"requests": {"storage": "200Gi"}}
        grown = {**after["spec"], "resources": before["spec"]["resources"]}
        assert grown == before["spec"]


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ("100Gi", 100 * 1024**3),
        ("1.5Ti", 1536 * 1024**3),
        ("500G", 500 * 10**9),
        ("2e9", 2 * 10**9),
    ],
)
def test_storage_quantities(size, expected):
    assert storage_bytes("x", "size", size) == expected


# -- bad input --------------------------------------------------------------------------------

SIZE_RULE = (
    "a Kubernetes quantity with a unit, e.g. '100Gi' (binary Ki, Mi, Gi, Ti, Pi, Ei or decimal "
    "k, M, G, T, P, E)"
)
KMS_RULE = (
    "a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key-id>; the driver and its IAM policy "
    "need the key's ARN, not an alias)"
)

BAD_CACHE = [
    (
        {"iops": 2999},
        "llama: iops must be a whole number from 3000 to 80000 IOPS for gp3, got 2999",
    ),
    (
        {"iops": 80001},
        "llama: iops must be a whole number from 3000 to 80000 IOPS for gp3, got 80001",
    ),
    (
        {"throughput_mibps": 124},
        "llama: throughput_mibps must be a whole number from 125 to 2000 MiB/s for gp3, got 124",
    ),
    (
        {"iops": 16000, "throughput_mibps": 2001},
        "llama: throughput_mibps must be a whole number from 125 to 2000 MiB/s for gp3, got 2001",
    ),
    (
        {"throughput_mibps": 1000},
        "llama: throughput_mibps must be at most 750 MiB/s at 3000 IOPS (gp3 allows 0.25 MiB/s "
        "per provisioned IOPS; raise iops to at least 4000), got 1000",
    ),
    (
        {"iops": 16000, "volume_size": "20Gi"},
        "llama: volume_size must be at least 32Gi for 16000 gp3 IOPS (at most 500 IOPS per "
        "GiB), got '20Gi'",
    ),
    ({"volume_size": "100"}, f"llama: volume_size must be {SIZE_RULE}, got '100'"),
    ({"volume_size": "100m"}, f"llama: volume_size must be {SIZE_RULE}, got '100m'"),
    ({"volume_size": "100 Gi"}, f"llama: volume_size must be {SIZE_RULE}, got '100 Gi'"),
    ({"volume_size": "100GB"}, f"llama: volume_size must be {SIZE_RULE}, got '100GB'"),
    # A type error: the annotation (a string) says it now.
    ({"volume_size": 100}, "llama: volume_size must be a string, got 100"),
    ({"volume_size": "0Gi"}, f"llama: volume_size must be a positive size: {SIZE_RULE}, got '0Gi'"),
    (
        {"volume_size": "65537Gi"},
        "llama: volume_size must be 1Gi to 65536Gi for gp3, got '65537Gi'",
    ),
    (
        {"volume_initialization_rate_mibps": 50},
        "llama: volume_initialization_rate_mibps must be a whole number from 100 to 300 MiB/s, "
        "got 50",
    ),
    ({"kms_key_arn": "alias/models"}, f"llama: kms_key_arn must be {KMS_RULE}, got 'alias/models'"),
    (
        {"kms_key_arn": KEY, "encrypted": False},
        f"llama: kms_key_arn must be unset when encrypted is false, got '{KEY}'",
    ),
    ({"fs_type": "btrfs"}, "llama: fs_type must be one of ext4, xfs, got 'btrfs'"),
    (
        {"loader": None},
        "llama: model, loader, source_claim_name or source_snapshot_name must be exactly one of "
        "them, got []",
    ),
    (
        {"source_snapshot_name": "llama-published"},
        "llama: model, loader, source_claim_name or source_snapshot_name must be exactly one of "
        "them, got ['loader', 'source_snapshot_name']",
    ),
    (
        {"loader": {"command": ["true"]}},
        "llama: loader must be a container mapping with at least an 'image', "
        "got {'command': ['true']}",
    ),
    (
        {"storage_class_name": "gp3", "iops": 6000},
        "llama: iops must be unset when storage_class_name is given (the class is the existing "
        "one's), got 6000",
    ),
    (
        {"readers": ["Inference"]},
        "llama: readers must be a DNS-1123 label (lowercase letters, digits and '-', starting "
        "and ending with a letter or digit, at most 63 characters), got 'Inference'",
    ),
    (
        {"readers": None},
        "llama: readers and writers must be at least one consumer namespace between them, got []",
    ),
    (
        {"readers": ["inference", "batch"]},
        "llama: readers must be one namespace (a claim restores only from a VolumeSnapshot in "
        "its own namespace, and Kubernetes' cross-namespace data sources are alpha, KEP-3294): "
        "make one cache per namespace, got ['inference', 'batch']",
    ),
    (
        {"writers": ["etl"]},
        "llama: writers must be empty: the loader writes the model once to the seed volume and "
        "each replica restores its own copy of the snapshot; to change the model, raise "
        "model_revision, got ['etl']",
    ),
    (
        {"claim_name": "models"},
        "llama: claim_name must be unset: the cluster names each replica's claim "
        "<pod>-<claim_template_name> (give claim_template_name), got 'models'",
    ),
    # The deprecated spelling: errors name it as written.
    (
        {"namespace": "Inference"},
        "llama: namespace must be a DNS-1123 label (lowercase letters, digits and '-', starting "
        "and ending with a letter or digit, at most 63 characters), got 'Inference'",
    ),
    (
        {"model_revision": "R2"},
        "llama: model_revision must be a DNS-1123 label (lowercase letters, digits and '-', "
        "starting and ending with a letter or digit, at most 63 characters), got 'R2'",
    ),
    (
        {"mount_path": "models"},
        "llama: mount_path must be an absolute path starting with '/', got 'models'",
    ),
    (
        {"sizes": "100Gi"},
        "llama: field name must be one of the 29 fields listed by "
        "`modelstore fields EbsModelCache` (nearest: writers, volume_size), got 'sizes'",
    ),
    ({"protect": "false"}, "llama: protect must be true or false, got 'false'"),
    ({"protect": None}, "llama: protect is missing; it must be true or false"),
    ({"encrypted": "false"}, "llama: encrypted must be true or false, got 'false'"),
    (
        {"labels": "team=ml"},
        "llama: labels must be a mapping of strings to strings, got 'team=ml'",
    ),
    (
        {"labels": {"team": 7}},
        "llama: labels must be a mapping of strings to strings, got {'team': 7}",
    ),
    (
        {"volume_tags": ["team"]},
        "llama: volume_tags must be a mapping of strings to strings, got ['team']",
    ),
    (
        {"loader": {**LOADER, "volumeMounts": "/data"}},
        "llama: loader.volumeMounts must be a list of mappings (Kubernetes VolumeMount objects), "
        "got '/data'",
    ),
    (
        {"loader": {**LOADER, "env": "HF_TOKEN=x"}},
        "llama: loader.env must be a list of mappings (Kubernetes EnvVar objects), "
        "got 'HF_TOKEN=x'",
    ),
    (
        {"loader": {**LOADER, "env": ["HF_TOKEN=x"]}},
        "llama: loader.env must be a list of mappings (Kubernetes EnvVar objects), "
        "got ['HF_TOKEN=x']",
    ),
    (
        {"loader": {**LOADER, "envFrom": {"secretRef": {"name": "hf"}}}},
        "llama: loader.envFrom must be a list of mappings (Kubernetes EnvFromSource objects), "
        "got {'secretRef': {'name': 'hf'}}",
    ),
    (
        {"loader": {"image": "python:3.12-slim", "command": "python -c 1"}},
        "llama: loader.command must be a list of strings, got 'python -c 1'",
    ),
    (
        {"loader_pod_security_context": "fsGroup=1000"},
        "llama: loader_pod_security_context must be a mapping, got 'fsGroup=1000'",
    ),
    (
        {"loader": {**LOADER, "securityContext": "restricted"}},
        "llama: loader.securityContext must be a mapping (a Kubernetes SecurityContext object), "
        "got 'restricted'",
    ),
]


@bad_inputs(BAD_CACHE)
def test_bad_cache_input_is_refused_before_anything_registers(args, message):
    assert_refused(cache(**args), message)


BAD_DRIVER = [
    (
        {"driver_install": "kubectl"},
        "ebs: driver_install must be one of helm, eks-addon, none, got 'kubectl'",
    ),
    (
        {"identity": "instance-profile"},
        "ebs: identity must be one of irsa, pod-identity, none, got 'instance-profile'",
    ),
    (
        {"cluster_name": None, "identity": "pod-identity", "oidc_issuer": "https://x"},
        "ebs: cluster_name is missing; "
        "it must be the EKS cluster's name when identity is pod-identity",
    ),
    (
        {"cluster_name": None, "driver_install": "eks-addon"},
        "ebs: cluster_name is missing; it must be the EKS cluster's name when driver_install is "
        "eks-addon",
    ),
    (
        {"driver_install": "eks-addon", "driver_namespace": "storage"},
        "ebs: driver_namespace must be unset when driver_install is eks-addon (the add-on runs "
        "ebs-csi-controller-sa in kube-system), got 'storage'",
    ),
    (
        {"snapshot_deletion_policy": "Keep"},
        "ebs: snapshot_deletion_policy must be one of Retain, Delete, got 'Keep'",
    ),
    (
        {"multi_attach_iops": 99},
        "ebs: multi_attach_iops must be a whole number from 100 to 256000 IOPS for io2, got 99",
    ),
    ({"kms_key_arns": [KEY, "alias/x"]}, f"ebs: kms_key_arns must be {KMS_RULE}, got 'alias/x'"),
    (
        {"driver_install": "none", "kms_key_arn": KEY},
        "ebs: identity must be irsa or pod-identity when KMS keys are given (grants go on the "
        "controller's role), got 'none'",
    ),
    (
        {"reclaim_policy": "Recycle"},
        "ebs: reclaim_policy must be one of Delete, Retain, got 'Recycle'",
    ),
    (
        {"create_snapshot_class": "false"},
        "ebs: create_snapshot_class must be true or false, got 'false'",
    ),
    ({"default_snapshot_class": 1}, "ebs: default_snapshot_class must be true or false, got 1"),
    ({"create_storage_class": "no"}, "ebs: create_storage_class must be true or false, got 'no'"),
    (
        {"default_storage_class": "true"},
        "ebs: default_storage_class must be true or false, got 'true'",
    ),
    ({"encrypted": "yes"}, "ebs: encrypted must be true or false, got 'yes'"),
    ({"labels": "team=ml"}, "ebs: labels must be a mapping of strings to strings, got 'team=ml'"),
    (
        {"labels": [("team", "ml")]},
        "ebs: labels must be a mapping of strings to strings, got [('team', 'ml')]",
    ),
    ({"tags": ["team"]}, "ebs: tags must be a mapping of strings to strings, got ['team']"),
    (
        {"snapshot_class_parameters": "tagSpecification_1=team=ml"},
        "ebs: snapshot_class_parameters must be a mapping of strings to strings, "
        "got 'tagSpecification_1=team=ml'",
    ),
]


@bad_inputs(BAD_DRIVER)
def test_bad_driver_input_is_refused_before_anything_registers(args, message):
    assert_refused(driver(**args), message)


def test_every_bad_field_is_reported_at_once_one_line_each():
    with pytest.raises(PlanError) as err:
        plan(cache(iops=2999, fs_type="btrfs", readers=["Inference"], protect="no"))
    assert str(err.value.cause).splitlines() == [
        "llama: protect must be true or false, got 'no'",
        "llama: readers must be a DNS-1123 label (lowercase letters, digits and '-', starting "
        "and ending with a letter or digit, at most 63 characters), got 'Inference'",
        "llama: iops must be a whole number from 3000 to 80000 IOPS for gp3, got 2999",
        "llama: fs_type must be one of ext4, xfs, got 'btrfs'",
    ]
    with pytest.raises(PlanError) as err:
        plan(driver(identity="instance-profile", reclaim_policy="Recycle", labels="team=ml"))
    assert str(err.value.cause).splitlines() == [
        "ebs: labels must be a mapping of strings to strings, got 'team=ml'",
        "ebs: identity must be one of irsa, pod-identity, none, got 'instance-profile'",
        "ebs: reclaim_policy must be one of Delete, Retain, got 'Recycle'",
    ]
    assert names_of(err.value.registered) == ["modelstore-test"]


def test_a_bad_field_gives_one_line_not_a_cascade():
    """iops out of range: the rules that read it (throughput per IOPS, IOPS per GiB of the
    volume) are skipped, not reported again."""
    with pytest.raises(PlanError) as err:
        plan(cache(iops=100000, throughput_mibps=2000, volume_size="20Gi"))
    assert str(err.value) == (
        "llama: iops must be a whole number from 3000 to 80000 IOPS for gp3, got 100000"
    )


def test_driver_is_the_deprecated_spelling_of_driver_install():
    with pytest.warns(DeprecationWarning, match="ebs: driver is deprecated, use driver_install"):
        old = plan(driver(driver="eks-addon"))
    new = plan(driver(driver_install="eks-addon"))
    assert [s["urn"] for s in old.states()] == [s["urn"] for s in new.states()]
    assert [s["inputs"] for s in old.states()] == [s["inputs"] for s in new.states()]
    with pytest.raises(PlanError) as err:
        plan(driver(driver="none", driver_install="helm"))
    assert str(err.value) == (
        "ebs: driver must be unset when driver_install is given (it is its new name), got 'none'"
    )


def test_beside_an_eks_store_the_cache_joins_the_scope_it_is_given():
    """Without ``cluster`` the cache makes the Kubernetes cluster of its provider, which an EKS
    store's scope on the same provider refuses; given that store's scope, it joins it."""
    from pulumi_modelstore.program import BACKENDS

    s3 = BACKENDS["mountpoint-s3"]

    def program(share: bool):
        store = s3("weights", {**s3.example_args, "readers": ["inference"]})
        cache(**({"cluster": store.cluster} if share else {}))()

    p = plan(lambda: program(True))
    assert [s["urn"].rsplit("::", 1)[-1] for s in p.by_type("modelstore:index:EksCluster")] == [
        "prod-eks"
    ]
    assert not p.by_type("modelstore:index:KubernetesCluster")
    with pytest.raises(PlanError) as err:
        plan(lambda: program(False))
    assert str(err.value) == (
        "llama: opts.providers['kubernetes'] must be a Kubernetes provider of its own for "
        "cluster 'kubernetes' (cluster 'prod-eks' already uses the default provider), got "
        "'the default provider'"
    )


def test_namespace_is_the_deprecated_spelling_of_one_reader():
    with pytest.warns(DeprecationWarning, match="llama: namespace is deprecated, use readers"):
        old = plan(cache(namespace="inference"))
    new = plan(cache())
    assert [s["urn"] for s in old.states()] == [s["urn"] for s in new.states()]
    assert [s["inputs"] for s in old.states()] == [s["inputs"] for s in new.states()]
    assert_refused(
        cache(namespace="inference", readers=["inference"]),
        "llama: namespace must be unset when readers is given (it is its new name), "
        "got 'inference'",
    )


def test_the_class_fields_default_alike_in_the_driver_the_cache_and_the_class_parser():
    """The gp3 fields are taken by three args types; the documented defaults must agree (they
    fill the same Gp3Class)."""
    classes = fields_of(StorageClassArgs)
    for args_type in (EbsCsiDriverArgs, EbsModelCacheArgs):
        for name, field in fields_of(args_type).items():
            if name in classes:
                assert field.default == classes[name].default, (args_type.__name__, name)
                assert field.annotation == classes[name].annotation, (args_type.__name__, name)


def test_irsa_without_an_oidc_provider_fails_the_preview():
    def missing(args, config):
        raise Exception("NoSuchEntity: OpenIDConnect provider not found")

    with pytest.raises(PlanError) as err:
        plan(
            driver(), invokes={"aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": missing}
        )
    assert "identity must be pod-identity, or irsa on a cluster with an IAM OIDC provider" in str(
        err.value
    )
    assert names_of(err.value.registered) == ["modelstore-test"]


BAD_HELPERS = [
    (
        lambda: cloned_claim(
            "clone",
            name="weights-copy",
            namespace="inference",
            source_claim_name="weights",
            source_namespace="loader",
            size="100Gi",
            storage_class_name="ebs-gp3",
        ),
        "clone: namespace must be the source claim's namespace 'loader' (a PVC can be cloned only "
        "from a claim in its own namespace), got 'inference'",
    ),
    (
        lambda: multi_attach_claim(
            "shared",
            name="shared",
            namespace="training",
            size="500Gi",
            storage_class_name="ebs-io2-multi-attach",
            volume_mode="Filesystem",
        ),
        "shared: volume_mode must be Block for io2 Multi-Attach (the EBS CSI driver attaches a "
        "volume to several nodes only as a raw block device with ReadWriteMany), got 'Filesystem'",
    ),
    (
        lambda: multi_attach_claim(
            "shared",
            name="shared",
            namespace="training",
            size="2Gi",
            storage_class_name="ebs-io2-multi-attach",
        ),
        "shared: size must be 4Gi to 65536Gi for io2, got '2Gi'",
    ),
    (
        lambda: restored_claim(
            "restored",
            name="weights",
            namespace="inference",
            snapshot_name="llama",
            size="100",
            storage_class_name="ebs-gp3",
        ),
        f"restored: size must be {SIZE_RULE}, got '100'",
    ),
    (
        lambda: volume_claim(
            "claim",
            name="weights",
            namespace="inference",
            size="1Gi",
            storage_class_name="ebs-gp3",
            access_modes=["ReadWriteOnly"],
        ),
        "claim: access_modes must be one of ReadWriteOnce, ReadWriteOncePod, ReadWriteMany, "
        "ReadOnlyMany, got 'ReadWriteOnly'",
    ),
    (
        lambda: multi_attach_claim(
            "shared",
            name="shared",
            namespace="training",
            size="10Gi",
            storage_class_name="ebs-io2-multi-attach",
            iops=20000,
        ),
        "shared: size must be at least 20Gi for 20000 io2 IOPS (at most 1000 IOPS per GiB; the "
        "EBS CSI driver would silently cap the volume at 10000 IOPS), got '10Gi'",
    ),
    (
        lambda: multi_attach_claim(
            "shared",
            name="shared",
            namespace="training",
            size="500Gi",
            storage_class_name="ebs-io2-multi-attach",
            iops=300000,
        ),
        "shared: iops must be a whole number from 100 to 256000 IOPS for io2, got 300000",
    ),
    (
        lambda: multi_attach_claim(
            "shared",
            name="shared",
            namespace="training",
            size="500Gi",
            storage_class_name="ebs-io2-multi-attach",
            labels="team=ml",
        ),
        "shared: labels must be a mapping of strings to strings, got 'team=ml'",
    ),
    (
        lambda: volume_claim(
            "claim",
            name="weights",
            namespace="inference",
            size="1Gi",
            storage_class_name="ebs-gp3",
            binding_waits_for_consumer="false",
        ),
        "claim: binding_waits_for_consumer must be true or false, got 'false'",
    ),
    (
        lambda: volume_claim(
            "claim",
            name="weights",
            namespace="inference",
            size="1Gi",
            storage_class_name="ebs-gp3",
            labels="app=vllm",
        ),
        "claim: labels must be a mapping of strings to strings, got 'app=vllm'",
    ),
    (
        lambda: volume_claim(
            "claim",
            name="weights",
            namespace="inference",
            size="1Gi",
            storage_class_name="ebs-gp3",
            annotations=["note"],
        ),
        "claim: annotations must be a mapping of strings to strings, got ['note']",
    ),
    (
        lambda: restored_claim(
            "restored",
            name="weights",
            namespace="inference",
            snapshot_name="llama",
            size="100Gi",
            storage_class_name="ebs-gp3",
            binding_waits_for_consumer=0,
        ),
        "restored: binding_waits_for_consumer must be true or false, got 0",
    ),
    (
        lambda: volume_snapshot(
            "snap",
            name="llama",
            namespace="inference",
            claim_name="llama-seed",
            snapshot_class_name="ebs-snapshots",
            labels="app=vllm",
        ),
        "snap: labels must be a mapping of strings to strings, got 'app=vllm'",
    ),
    (
        lambda: volume_snapshot_class(
            "snapshots", name="csi-snapshots", driver="example.csi.io", is_default="true"
        ),
        "snapshots: is_default must be true or false, got 'true'",
    ),
    (
        lambda: volume_snapshot_class(
            "snapshots", name="csi-snapshots", driver="example.csi.io", parameters="a=b"
        ),
        "snapshots: parameters must be a mapping of strings to strings, got 'a=b'",
    ),
    (
        lambda: ebs_storage_class(
            "gp3", name="ebs-gp3", spec=parse_gp3_class("gp3", {}), is_default="false"
        ),
        "gp3: is_default must be true or false, got 'false'",
    ),
    (
        lambda: ebs_storage_class(
            "gp3", name="ebs-gp3", spec=parse_gp3_class("gp3", {}), labels="app=vllm"
        ),
        "gp3: labels must be a mapping of strings to strings, got 'app=vllm'",
    ),
    (
        lambda: ebs_storage_class(
            "io2",
            name="ebs-io2",
            spec=parse_io2_multi_attach_class("io2", {"multi_attach_iops": 1000}),
            is_default=True,
        ),
        "io2: is_default must be false for an io2 Multi-Attach class (its claims must ask for "
        "Block volumes), got true",
    ),
]


@pytest.mark.parametrize(
    ("build", "message"), BAD_HELPERS, ids=[m.split(":")[1] for _, m in BAD_HELPERS]
)
def test_bad_helper_input_is_refused_before_anything_registers(build, message):
    assert_refused(build, message)


def names_of(urns: list[str]) -> list[str]:
    return [u.rsplit("::", 1)[-1] for u in urns]
