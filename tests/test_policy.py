"""The policy pack: each policy on a passing and a failing resource (exact messages), the
documented opt-outs (advisory, marked by the stores), the verdict on every stack and example,
``modelstore plan --policy``, and the CrossGuard pack registering the same policies."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from typing import Any

import pytest

from pulumi_modelstore import cli
from pulumi_modelstore.policy import POLICIES, Resource, check_plan, evaluate
from pulumi_modelstore.program import BACKENDS
from pulumi_modelstore.store import ALL_NETWORKS_MARK, UNPROTECTED_MARK
from tests.conftest import ROOT, all_programs, plan

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
JOB = "kubernetes:batch/v1:Job"
BY_NAME = {p.name: p for p in POLICIES}


def res(type_: str, props: dict[str, Any], name: str = "r", **opts: Any) -> Resource:
    return Resource(
        urn=f"urn:pulumi:dev::p::{type_}::{name}",
        type=type_,
        name=name,
        props=props,
        protect=opts.get("protect", True),
        retain_on_delete=opts.get("retain", True),
    )


def messages(policy: str, *resources: Resource) -> list[str]:
    """What ``policy`` reports over ``resources``, a line each (``type::name: message``)."""
    return [f"{v.resource}: {v.message}" for v in evaluate(resources, [BY_NAME[policy]])]


def test_every_policy_is_mandatory_and_each_opt_out_twin_advisory():
    levels = {p.name: p.mandatory for p in POLICIES}
    assert levels == {
        "modelstore-readers-read-only": True,
        "modelstore-storage-private": True,
        "modelstore-storage-private-opt-out": False,
        "modelstore-tls-in-transit": True,
        "modelstore-data-encrypted": True,
        "modelstore-data-protected": True,
        "modelstore-data-protected-opt-out": False,
        "modelstore-irsa-trust-pinned": True,
        "modelstore-no-open-ingress": True,
        "modelstore-iam-least-privilege": True,
        "modelstore-jobs-non-root": True,
    }


# ---- readers read-only at every layer ------------------------------------------------------

READ_ONLY = {"modelstore.pulumi.com/access": "read-only"}


def reader_objects(
    *, driver: str = "s3.csi.aws.com", modes: list[str] | None = None, **change: Any
) -> list[Resource]:
    """A reader's PV, claim and Deployment as the S3 store makes them, with ``change``s."""
    pv_spec: dict[str, Any] = {
        "accessModes": modes or ["ReadOnlyMany"],
        "csi": {"driver": driver, "readOnly": change.get("csi_read_only", True)},
        "mountOptions": change.get("options", ["read-only"]),
        "persistentVolumeReclaimPolicy": "Retain",
    }
    pv = res(PV, {"metadata": {"name": "llama-inference", "labels": READ_ONLY}, "spec": pv_spec})
    claim = res(
        PVC,
        {
            "metadata": {"name": "llama", "namespace": "inference", "labels": READ_ONLY},
            "spec": {"accessModes": modes or ["ReadOnlyMany"], "volumeName": "llama-inference"},
        },
    )
    mount = {"name": "model", "mountPath": "/mnt/models", "readOnly": change.get("mount_ro", True)}
    volume = {"claimName": "llama", "readOnly": change.get("volume_ro", True)}
    pod = {
        "containers": [{"name": "vllm", "volumeMounts": [mount]}],
        "volumes": [{"name": "model", "persistentVolumeClaim": volume}],
    }
    deployment = res(
        DEPLOYMENT,
        {"metadata": {"namespace": "inference"}, "spec": {"template": {"spec": pod}}},
        name="server",
    )
    return [pv, claim, deployment]


def test_readers_read_only_passes_a_reader_read_only_at_every_layer():
    assert messages("modelstore-readers-read-only", *reader_objects()) == []
    # FSx and EFS refuse ReadOnlyMany: ReadWriteMany with readOnly is their readers' mode.
    fsx = reader_objects(driver="fsx.csi.aws.com", modes=["ReadWriteMany"], options=["flock"])
    assert messages("modelstore-readers-read-only", *fsx) == []


def test_readers_read_only_fails_each_layer_left_writable():
    objects = reader_objects(
        modes=["ReadWriteMany"], csi_read_only=False, options=[], volume_ro=False, mount_ro=None
    )
    assert messages("modelstore-readers-read-only", *objects) == [
        "kubernetes:apps/v1:Deployment::server: container vllm mounts read-only claim "
        "inference/llama at /mnt/models with readOnly unset: true",
        "kubernetes:apps/v1:Deployment::server: volume model mounts read-only claim "
        "inference/llama with persistentVolumeClaim.readOnly false: true",
        "kubernetes:core/v1:PersistentVolume::r: PersistentVolume accessModes ['ReadWriteMany'] "
        "on a read-only consumer's volume: ['ReadOnlyMany'] (what driver s3.csi.aws.com allows "
        "readers)",
        "kubernetes:core/v1:PersistentVolume::r: csi.readOnly is false on a read-only "
        "consumer's volume: true",
        "kubernetes:core/v1:PersistentVolume::r: mountOptions [] lack 'read-only': driver "
        "s3.csi.aws.com mounts a read-only consumer's volume writable without it",
        "kubernetes:core/v1:PersistentVolumeClaim::r: PersistentVolumeClaim accessModes "
        "['ReadWriteMany'] on a read-only consumer's volume: ['ReadOnlyMany'] (what driver "
        "s3.csi.aws.com allows readers)",
    ]


# ---- one passing and one failing resource per resource policy ------------------------------

BUCKET = "aws:s3/bucket:Bucket"
PUBLIC_ACCESS = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
GCS_BUCKET = "gcp:storage/bucket:Bucket"
GCS_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
ACCOUNT = "azure-native:storage:StorageAccount"
CONTAINER = "azure-native:storage:BlobContainer"
EFS = "aws:efs/fileSystem:FileSystem"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
ISSUER = "oidc.eks.us-west-2.amazonaws.com/id/ABC"
TLS_DENY = {
    "Sid": "DenyInsecureTransport",
    "Effect": "Deny",
    "Principal": "*",
    "Action": "s3:*",
    "Resource": ["arn:aws:s3:::b", "arn:aws:s3:::b/*"],
    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
}
PUBLIC_ACCESS_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls")


def doc(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def trust(condition: dict[str, Any]) -> str:
    return doc(
        {
            "Effect": "Allow",
            "Principal": {"Federated": f"arn:aws:iam::1:oidc-provider/{ISSUER}"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": condition,
        }
    )


def efs_pv(encrypt: str) -> Resource:
    attributes = {"encryptInTransit": encrypt}
    return res(PV, {"spec": {"csi": {"driver": "efs.csi.aws.com", "volumeAttributes": attributes}}})


def s3_pv(*options: str) -> Resource:
    return res(PV, {"spec": {"csi": {"driver": "s3.csi.aws.com"}, "mountOptions": list(options)}})


def job(pod: dict[str, Any]) -> Resource:
    return res(JOB, {"spec": {"template": {"spec": pod}}})


AZURE_ACCOUNT = {
    "kind": "StorageV2",
    "allowBlobPublicAccess": False,
    "enableHttpsTrafficOnly": True,
    "minimumTlsVersion": "TLS1_2",
    "networkRuleSet": {"defaultAction": "Deny"},
    "publicNetworkAccess": "Enabled",
    "encryption": {"services": {"blob": {"enabled": True}}},
}
PINNED = {
    f"{ISSUER}:sub": "system:serviceaccount:inference:llama",
    f"{ISSUER}:aud": "sts.amazonaws.com",
}
OPEN_READ = {
    "Sid": "Open",
    "Effect": "Allow",
    "Principal": {"AWS": "*"},
    "Action": "s3:GetObject",
    "Resource": "arn:aws:s3:::b/*",
}
NFS_PORT = {"ipProtocol": "tcp", "fromPort": 2049, "toPort": 2049}

# (policy, passing resource, failing resource, the failing one's exact messages)
CASES: list[tuple[str, Resource, Resource, list[str]]] = [
    (
        "modelstore-storage-private",
        res(PUBLIC_ACCESS, {f: True for f in (*PUBLIC_ACCESS_FLAGS, "restrictPublicBuckets")}),
        res(PUBLIC_ACCESS, {**{f: True for f in PUBLIC_ACCESS_FLAGS}, "blockPublicPolicy": False}),
        ["blockPublicPolicy is false: true", "restrictPublicBuckets is unset: true"],
    ),
    (
        "modelstore-storage-private",
        res(BUCKET_POLICY, {"policy": doc(TLS_DENY)}),
        res(BUCKET_POLICY, {"policy": doc(TLS_DENY, OPEN_READ)}),
        ["statement Open allows Principal {'AWS': '*'}: name the principals"],
    ),
    (
        "modelstore-storage-private",
        res(GCS_BUCKET, {"publicAccessPrevention": "enforced", "uniformBucketLevelAccess": True}),
        res(GCS_BUCKET, {"publicAccessPrevention": "inherited", "uniformBucketLevelAccess": False}),
        [
            "publicAccessPrevention is 'inherited': 'enforced'",
            "uniformBucketLevelAccess is false: true (no object ACLs)",
        ],
    ),
    (
        "modelstore-storage-private",
        res(GCS_MEMBER, {"member": "principal://iam.googleapis.com/x"}),
        res(GCS_MEMBER, {"member": "allUsers"}),
        ["member 'allUsers' makes the bucket public: name the principals"],
    ),
    (
        "modelstore-storage-private",
        res(ACCOUNT, AZURE_ACCOUNT),
        res(
            ACCOUNT,
            {
                **AZURE_ACCOUNT,
                "allowBlobPublicAccess": True,
                "networkRuleSet": {"defaultAction": "Allow"},
            },
        ),
        [
            "allowBlobPublicAccess is true: false",
            "networkRuleSet.defaultAction is 'Allow' with public network access on: 'Deny', "
            "admitting the node subnets or a private endpoint",
        ],
    ),
    (
        "modelstore-storage-private",
        res(CONTAINER, {"publicAccess": "None"}),
        res(CONTAINER, {"publicAccess": "Blob"}),
        ["publicAccess is 'Blob': 'None'"],
    ),
    (
        "modelstore-tls-in-transit",
        efs_pv("true"),
        efs_pv("false"),
        ["csi.volumeAttributes.encryptInTransit is 'false': 'true' (TLS)"],
    ),
    (
        "modelstore-tls-in-transit",
        res(BUCKET_POLICY, {"policy": doc(TLS_DENY)}),
        res(BUCKET_POLICY, {"policy": doc(OPEN_READ)}),
        [
            "the policy has no Deny on aws:SecureTransport false: add one so requests without "
            "TLS are refused"
        ],
    ),
    (
        "modelstore-tls-in-transit",
        s3_pv("read-only"),
        s3_pv("endpoint-url http://minio:9000"),
        [
            "mount option 'endpoint-url http://minio:9000' reaches S3 without TLS: an https:// "
            "endpoint"
        ],
    ),
    (
        "modelstore-tls-in-transit",
        # NFS on Azure Files has no TLS: its FileStorage account has secure transfer off.
        res(ACCOUNT, {**AZURE_ACCOUNT, "kind": "FileStorage", "enableHttpsTrafficOnly": False}),
        res(
            ACCOUNT,
            {**AZURE_ACCOUNT, "enableHttpsTrafficOnly": False, "minimumTlsVersion": "TLS1_0"},
        ),
        [
            "enableHttpsTrafficOnly is false: true (HTTPS only)",
            "minimumTlsVersion is 'TLS1_0': 'TLS1_2' or later",
        ],
    ),
    (
        "modelstore-data-encrypted",
        res(EFS, {"encrypted": True}),
        res(EFS, {"encrypted": False}),
        ["encrypted is false: true"],
    ),
    (
        "modelstore-data-encrypted",
        res(STORAGE_CLASS, {"provisioner": "ebs.csi.aws.com", "parameters": {"encrypted": "true"}}),
        res(STORAGE_CLASS, {"provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"}}),
        ["parameters.encrypted is unset: 'true'"],
    ),
    (
        "modelstore-data-encrypted",
        res(SSE, {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]}),
        res(SSE, {"rules": [{"bucketKeyEnabled": True}]}),
        ["no rule sets applyServerSideEncryptionByDefault.sseAlgorithm: AES256 or aws:kms"],
    ),
    (
        "modelstore-data-protected",
        res(BUCKET, {"tags": {}}),
        res(BUCKET, {"tags": {}}, protect=False, retain=False),
        [
            "protect and retainOnDelete not set on a data-bearing resource: set protect and "
            "retainOnDelete (the store's protect: true, its default)"
        ],
    ),
    (
        "modelstore-data-protected",
        res(PV, {"spec": {"persistentVolumeReclaimPolicy": "Retain"}}, protect=False, retain=False),
        res(PV, {"spec": {"persistentVolumeReclaimPolicy": "Delete"}}),
        ["spec.persistentVolumeReclaimPolicy is 'Delete': 'Retain'"],
    ),
    (
        "modelstore-irsa-trust-pinned",
        res(ROLE, {"assumeRolePolicy": trust({"StringEquals": PINNED})}),
        res(ROLE, {"assumeRolePolicy": trust({"StringLike": PINNED})}),
        [
            "statement #0 trusts web identities with <issuer>:aud unset: StringEquals "
            "'sts.amazonaws.com'",
            "statement #0 trusts web identities without StringEquals on <issuer>:sub (the "
            "service account)",
        ],
    ),
    (
        "modelstore-no-open-ingress",
        res(INGRESS, {**NFS_PORT, "referencedSecurityGroupId": "sg-1"}),
        res(INGRESS, {**NFS_PORT, "cidrIpv6": "::/0"}),
        ["ingress tcp 2049-2049 from ::/0: admit the nodes' security group or subnets"],
    ),
    (
        "modelstore-iam-least-privilege",
        res(
            ROLE_POLICY,
            {
                "policy": doc(
                    {"Effect": "Allow", "Action": ["ec2:DescribeVolumes"], "Resource": "*"},
                    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"},
                )
            },
        ),
        res(
            ROLE_POLICY,
            {
                "policy": doc(
                    {
                        "Sid": "All",
                        "Effect": "Allow",
                        "Action": ["s3:*", "ec2:DescribeVolumes"],
                        "Resource": "*",
                    }
                )
            },
        ),
        [
            "statement All allows 's3:*': name the actions",
            "statement All allows ['s3:*'] on Resource '*': scope it to the store's ARNs or a "
            "condition",
        ],
    ),
    (
        "modelstore-jobs-non-root",
        job(
            {
                "securityContext": {"runAsNonRoot": True, "runAsUser": 1000},
                "containers": [{"name": "seed"}],
            }
        ),
        job(
            {
                "initContainers": [{"name": "prepare", "securityContext": {"runAsUser": 0}}],
                "containers": [{"name": "seed"}],
            }
        ),
        [
            "container prepare runs as root (runAsUser 0): a runAsUser other than 0, or as "
            "root only to hand files over: capabilities drop ALL, add only CHOWN, "
            "DAC_OVERRIDE, FOWNER, allowPrivilegeEscalation false",
            "container seed may run as root (runAsNonRoot unset, runAsUser unset): runAsNonRoot "
            "true or a runAsUser other than 0, on the pod or the container",
        ],
    ),
]


@pytest.mark.parametrize(
    ("policy", "passing", "failing", "expected"),
    CASES,
    ids=[f"{i}-{c[0].removeprefix('modelstore-')}" for i, c in enumerate(CASES)],
)
def test_each_policy_passes_one_resource_and_fails_another(policy, passing, failing, expected):
    assert messages(policy, passing) == []
    assert messages(policy, failing) == [f"{failing.label}: {m}" for m in expected]


@pytest.mark.parametrize(
    ("add", "escalation", "refused"),
    [
        (["CHOWN", "DAC_OVERRIDE", "FOWNER"], False, False),
        (["CHOWN"], False, False),
        (["CHOWN", "SYS_ADMIN"], False, True),
        (["CHOWN"], None, True),
    ],
)
def test_a_root_container_passes_only_when_it_can_just_hand_files_over(add, escalation, refused):
    security = {"runAsUser": 0, "capabilities": {"drop": ["ALL"], "add": add}}
    if escalation is not None:
        security["allowPrivilegeEscalation"] = escalation
    prepare = {"name": "modelstore-prepare", "securityContext": security}
    seed = {"name": "seed", "securityContext": {"runAsUser": 65532}}
    found = messages(
        "modelstore-jobs-non-root", job({"initContainers": [prepare], "containers": [seed]})
    )
    assert bool(found) is refused, found


def test_a_job_non_root_by_its_containers_own_settings_passes():
    verify = {"name": "verify", "securityContext": {"runAsUser": 65532}}
    assert messages("modelstore-jobs-non-root", job({"containers": [verify]})) == []


def test_retention_unknown_online_is_not_judged():
    # CrossGuard is not told retainOnDelete: only protect is judged there.
    assert messages("modelstore-data-protected", res(BUCKET, {}, retain=None)) == []


# ---- documented opt-outs: advisory, told apart by the stores' marks ---------------------------


def test_an_unmarked_unprotected_resource_is_mandatory_a_marked_one_advisory():
    accident = res(BUCKET, {"tags": {}}, name="accident", protect=False, retain=False)
    chosen = res(
        BUCKET, {"tags": {UNPROTECTED_MARK: "true"}}, name="chosen", protect=False, retain=False
    )
    found = evaluate([accident, chosen], POLICIES)
    assert [(v.policy, v.mandatory, v.urn) for v in found] == [
        ("modelstore-data-protected", True, accident.urn),
        ("modelstore-data-protected-opt-out", False, chosen.urn),
    ]


@pytest.mark.parametrize("backend", sorted(n for n in BACKENDS if BACKENDS[n].data_bearing_types))
def test_a_store_opted_out_of_protection_is_reported_advisory_only(backend):
    cls = BACKENDS[backend]
    args = {**cls.example_args, "readers": ["inference"], "protect": False}
    p = plan(lambda: cls("llama", args), fill=True)
    found = check_plan(p)
    assert {(v.policy, v.mandatory) for v in found} == {
        ("modelstore-data-protected-opt-out", False)
    }
    assert sorted(v.resource.split("::")[0] for v in found) == sorted(cls.data_bearing_types)


def test_all_networks_chosen_explicitly_is_reported_advisory_only():
    from tests.test_azure_blob import run

    _, p = run(allow_all_networks=True)
    (account,) = p.by_type(ACCOUNT)
    assert account["inputs"]["tags"][ALL_NETWORKS_MARK] == "true"
    assert [(v.policy, v.mandatory, v.resource) for v in check_plan(p)] == [
        ("modelstore-storage-private-opt-out", False, f"{ACCOUNT}::llama-account")
    ]


# ---- the verdict on every stack and example ---------------------------------------------------

# A program's own Job running as root, as the local examples' hand-written loader Jobs did
# before the store's model section seeded them (non-root).
ROOT_JOB = (
    "may run as root (runAsNonRoot unset, runAsUser unset): runAsNonRoot true or a runAsUser "
    "other than 0, on the pod or the container"
)
ROOT_JOB_PROGRAM = """\
import pulumi_kubernetes as k8s

k8s.batch.v1.Job(
    "load-model",
    spec={"template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "load", "image": "busybox:1.37", "command": ["true"]}
    ]}}},
)
"""


@pytest.mark.parametrize("pid", [p[0] for p in all_programs()])
def test_every_stack_and_example_passes_the_policy_pack(filled_plans, pid):
    assert [v.line() for v in check_plan(filled_plans[pid])] == []


def test_plan_policy_prints_a_line_per_violation_and_fails_on_a_mandatory_one(capsys, tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: trial\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(ROOT_JOB_PROGRAM)
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    code = cli.main(["plan", "--cwd", str(tmp_path), "--stack", "dev", "--policy"])
    assert code == cli.EXIT_POLICY
    assert capsys.readouterr().out.splitlines() == [
        f"mandatory: modelstore-jobs-non-root: {JOB}::load-model: container load {ROOT_JOB}",
        "policy pack modelstore: 11 policies, 1 mandatory and 0 advisory violations",
    ]


def test_plan_policy_passes_a_compliant_stack_and_prints_json(capsys):
    args = ["plan", "--cwd", str(ROOT), "--stack", "local", "--policy", "--format", "json"]
    assert cli.main(args) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_plan_policy_refuses_a_format_it_does_not_print(capsys):
    args = ["plan", "--cwd", str(ROOT), "--stack", "local", "--policy", "--format", "yaml"]
    assert cli.main(args) == 1
    assert capsys.readouterr().err == "error: --policy prints tree (text) or json, not yaml\n"


# ---- the CrossGuard pack -----------------------------------------------------------------------

PACK = ROOT / "policy"


def test_the_crossguard_pack_registers_the_same_policies(monkeypatch):
    """``PolicyPack(...)`` serves the engine over gRPC and never returns, so the pack's module
    runs here with it replaced by a recorder."""
    pulumi_policy = pytest.importorskip("pulumi_policy")
    made: list[dict[str, Any]] = []
    monkeypatch.setattr(pulumi_policy, "PolicyPack", lambda **kw: made.append(kw))
    runpy.run_path(str(PACK / "__main__.py"), run_name="__main__")
    (pack,) = made
    level = pulumi_policy.EnforcementLevel
    assert pack["name"] == "modelstore"
    assert {p.name: p.enforcement_level for p in pack["policies"]} == {
        p.name: level.MANDATORY if p.mandatory else level.ADVISORY for p in POLICIES
    }
    stack_policies = {
        p.name for p in pack["policies"] if isinstance(p, pulumi_policy.StackValidationPolicy)
    }
    assert stack_policies == {"modelstore-readers-read-only"}
    assert (PACK / "PulumiPolicy.yaml").is_file()


def test_an_ebs_cache_opted_out_of_retention_is_reported_advisory_only():
    from tests.test_ebs import cache

    found = check_plan(plan(cache(protect=False)))
    assert [(v.policy, v.mandatory, v.resource) for v in found] == [
        (
            "modelstore-data-protected-opt-out",
            False,
            "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot::llama-snapshot",
        )
    ]


def test_the_library_imports_the_policies_without_pulumi_policy():
    code = "import sys, pulumi_modelstore.policy; print('pulumi_policy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"


def test_crossguard_reports_what_the_offline_check_reports_through_the_analyzer():
    """The wrapped policies driven through CrossGuard's own analyzer service (what the engine
    calls during a preview), without the gRPC server: a root Job and an unprotected bucket
    are reported at their levels; an unknown property is left alone."""
    pytest.importorskip("pulumi_policy")
    from google.protobuf import struct_pb2
    from pulumi.runtime.proto import analyzer_pb2
    from pulumi_policy.policy import EnforcementLevel, _PolicyAnalyzerServicer

    from pulumi_modelstore.policy.core import UNKNOWNS
    from pulumi_modelstore.policy.crossguard import crossguard_policies

    service = _PolicyAnalyzerServicer(
        "modelstore", "0.1.0", crossguard_policies(), EnforcementLevel.MANDATORY
    )

    def analyze(type_: str, props: dict[str, Any], protect: bool) -> list[tuple[str, int, str]]:
        properties = struct_pb2.Struct()
        properties.update(props)
        request = analyzer_pb2.AnalyzeRequest(
            type=type_,
            properties=properties,
            urn=f"urn:pulumi:dev::p::{type_}::r",
            name="r",
            options=analyzer_pb2.AnalyzerResourceOptions(protect=protect),
        )
        return [
            (d.policyName, d.enforcementLevel, d.message.splitlines()[-1])
            for d in service.Analyze(request, None).diagnostics
        ]

    root_job = {"spec": {"template": {"spec": {"containers": [{"name": "seed"}]}}}}
    assert analyze(JOB, root_job, protect=False) == [
        ("modelstore-jobs-non-root", analyzer_pb2.MANDATORY, f"container seed {ROOT_JOB}")
    ]
    bucket = {"tags": {UNPROTECTED_MARK: "true"}, "bucket": sorted(UNKNOWNS)[0]}
    assert analyze(BUCKET, bucket, protect=False) == [
        (
            "modelstore-data-protected-opt-out",
            analyzer_pb2.ADVISORY,
            "protect not set on a data-bearing resource: set protect (the store's protect: "
            "true, its default)",
        )
    ]
    assert analyze(EFS, {"encrypted": sorted(UNKNOWNS)[0]}, protect=True) == []
