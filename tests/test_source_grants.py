"""The seed Job's read grant on its model's source: a store seeded by the Job from an object
store of its own cloud (``s3://``, ``gs://``, ``az://``) gives the loader namespace's identity,
and no reader's, read on that bucket or container only, and the seed Job waits for it
(``access.SourceGrant``, ``ModelStore.source_access``)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from moto import mock_aws

from pulumi_modelstore.aws.policies import source_read_policy
from pulumi_modelstore.azure.validation import RESOURCE_GROUP_RULE
from pulumi_modelstore.plan.engine import Plan
from pulumi_modelstore.plan.placeholders import INVOKES
from pulumi_modelstore.plan.timeline import ORDERING_KINDS
from pulumi_modelstore.policy import check_plan
from pulumi_modelstore.program import BACKENDS
from tests.aws_replay import Replay
from tests.conftest import assert_refused, plan
from tests.test_backend_contract import NAMES, build
from tests.tools import moto_server
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

JOB = "kubernetes:batch/v1:Job"
SA = "kubernetes:core/v1:ServiceAccount"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
SEED = "llama-seed-v1"
LOADER = "llama-loader"
S3_SOURCE = "s3://acme-models/llama/3.1-8b"


def seeded(backend: str, source: str, model: dict[str, str] | None = None, **extra: Any) -> Plan:
    """The plan of ``backend`` seeded from ``source`` (with ``model`` fields and store args
    ``extra``), planned once for every test that asks for it."""
    return _seeded(backend, source, json.dumps(model or {}), json.dumps(extra, sort_keys=True))


@cache
def _seeded(backend: str, source: str, model: str, extra: str) -> Plan:
    section = {"source": source, "revision": "v1", **json.loads(model)}
    return plan(lambda: build(backend, model=section, **json.loads(extra)), fill=True)


def name_of(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def seed_job(p: Plan) -> dict[str, Any]:
    return p.by_name(SEED)


def seed_waits_for(p: Plan) -> set[str]:
    return {name_of(u) for u in seed_job(p)["dependencies"]}


def seed_pod(p: Plan) -> dict[str, Any]:
    return seed_job(p)["inputs"]["spec"]["template"]["spec"]


def documents(p: Plan) -> dict[str, dict[str, Any]]:
    """Every inline role policy of the plan, by resource name."""
    return {name_of(s["urn"]): json.loads(s["inputs"]["policy"]) for s in p.by_type(ROLE_POLICY)}


def mentions(p: Plan, text: str) -> set[str]:
    """The resources whose inputs name ``text``."""
    return {name_of(s["urn"]) for s in p.states() if text in json.dumps(s.get("inputs", {}))}


SOURCE_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Sid": "SeedListSource",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": "arn:aws:s3:::acme-models",
            "Condition": {"StringLike": {"s3:prefix": ["llama/3.1-8b/*"]}},
        },
        {
            "Sid": "SeedReadSource",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": "arn:aws:s3:::acme-models/llama/3.1-8b/*",
        },
    ],
}


# ---- AWS ----------------------------------------------------------------------------------


@pytest.fixture
def aws_plans() -> dict[str, Plan]:
    """Mountpoint (pod-level credentials: the loader has a role of its own; a seeded model
    makes even a reader-only store pod-level, see test_s3), and EFS (no consumer role) over
    IRSA and, with IAM authorization, over Pod Identity."""
    return {
        "s3-pod": seeded("mountpoint-s3", S3_SOURCE),
        "efs-pod-identity": seeded(
            "efs", S3_SOURCE, iam_authorization=True, identity="pod-identity"
        ),
        "efs": seeded("efs", S3_SOURCE),
    }


def test_s3_pod_credentials_add_the_source_policy_to_the_loaders_role_only(aws_plans):
    p = aws_plans["s3-pod"]
    grant = p.by_name("llama-seed-source")
    assert grant["inputs"]["role"] == p.by_name("llama-pod-llama-loader-role")["id"]
    assert json.loads(grant["inputs"]["policy"]) == SOURCE_POLICY
    # The readers' (and the declared writer's) roles never name the source bucket.
    assert mentions(p, "acme-models") == {"llama-seed-source", SEED}
    # The seed Job runs as the loader's consumer account and waits for the source grant.
    assert seed_pod(p)["serviceAccountName"] == "llama-s3"
    assert "llama-seed-source" in seed_waits_for(p)


@pytest.mark.parametrize("case", ["efs-pod-identity", "efs"])
def test_a_store_without_consumer_roles_gives_the_seed_job_a_role_of_its_own(aws_plans, case):
    p = aws_plans[case]
    role = p.by_name(f"llama-seed-{LOADER}-role")
    account = p.by_name(f"llama-seed-{LOADER}")
    assert account["inputs"]["metadata"]["name"] == "llama-seed"
    assert account["inputs"]["metadata"]["namespace"] == LOADER
    assert documents(p)[f"llama-seed-{LOADER}-policy"] == SOURCE_POLICY
    trust = json.loads(role["inputs"]["assumeRolePolicy"])
    if case == "efs":  # IRSA: only the loader's seed account may assume it, and it names it
        (statement,) = trust["Statement"]
        conditions = statement["Condition"]["StringEquals"]
        assert [v for k, v in conditions.items() if k.endswith(":sub")] == [
            f"system:serviceaccount:{LOADER}:llama-seed"
        ]
        assert account["inputs"]["metadata"]["annotations"] == {
            "eks.amazonaws.com/role-arn": role["outputs"]["arn"]
        }
        last_step = f"llama-seed-{LOADER}-policy"
    else:  # Pod Identity: one association, for that account
        association = p.by_name(f"llama-seed-{LOADER}-pod-identity")["inputs"]
        assert (association["namespace"], association["serviceAccount"]) == (LOADER, "llama-seed")
        assert association["roleArn"] == role["outputs"]["arn"]
        last_step = f"llama-seed-{LOADER}-pod-identity"
    assert seed_pod(p)["serviceAccountName"] == "llama-seed"
    assert {last_step, f"llama-seed-{LOADER}"} <= seed_waits_for(p)
    assert mentions(p, "acme-models") == {f"llama-seed-{LOADER}-policy", SEED, role_name(role)}
    # Only the seed Job runs as it: the verification Jobs keep the readers' own accounts.
    accounts = {j["inputs"]["spec"]["template"]["spec"].get("serviceAccountName") for j in jobs(p)}
    assert accounts == {"llama-seed", None}


def role_name(role: dict[str, Any]) -> str:
    """The role's own name: its description names the source."""
    return name_of(role["urn"])


def jobs(p: Plan) -> list[dict[str, Any]]:
    return p.by_type(JOB)


SOURCE_GRANTS = {
    "s3-pod": ["llama-seed-source"],
    "efs-pod-identity": [f"llama-seed-{LOADER}-role", f"llama-seed-{LOADER}-policy"],
    "efs": [f"llama-seed-{LOADER}-role", f"llama-seed-{LOADER}-policy"],
}


@pytest.mark.parametrize("case", list(SOURCE_GRANTS))
def test_the_source_grants_replay_against_moto_and_pass_the_policy_pack(aws_env, aws_plans, case):
    """moto's IAM validates each document as it is put (``put_role_policy``); the policy pack
    finds no wildcard action or resource and no unpinned trust."""
    p = aws_plans[case]
    with mock_aws():
        done = Replay(p).run()
    assert all(p.by_name(name)["id"] in done.ids for name in SOURCE_GRANTS[case])
    assert [v.line() for v in check_plan(p)] == []


def test_a_bucket_wide_source_lists_the_whole_bucket_and_reads_every_object():
    assert source_read_policy("aws-cn", "models", "")["Statement"] == [
        {
            "Sid": "SeedListSource",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": "arn:aws-cn:s3:::models",
        },
        {
            "Sid": "SeedReadSource",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": "arn:aws-cn:s3:::models/*",
        },
    ]


@pytest.fixture
def enforcing_moto() -> Iterator[tuple[str, Any]]:
    """moto's server with IAM enforced (its ``/moto-api/reset-auth``: every request after the
    count is checked against the caller's policies, Resource elements included), and a boto3
    client factory; auth is switched off again afterwards."""
    with moto_server() as endpoint:
        import boto3

        def client(service: str, key: str = "testing", secret: str = "testing") -> Any:
            return boto3.client(
                service,
                endpoint_url=endpoint,
                aws_access_key_id=key,
                aws_secret_access_key=secret,
                region_name="us-east-1",
            )

        def reset_auth(count: str) -> None:
            request = urllib.request.Request(
                f"{endpoint}/moto-api/reset-auth",
                data=count.encode(),
                method="POST",
                # Not a form: moto reads the raw body, which Flask keeps only for other types.
                headers={"Content-Type": "text/plain"},
            )
            urllib.request.urlopen(request).close()

        try:
            yield endpoint, client, reset_auth
        finally:
            reset_auth("inf")


def test_the_seed_program_reads_its_prefix_and_nothing_else_with_the_source_policy(
    enforcing_moto, tmp_path
):
    """The real seed source (``model/sources.py``) with credentials holding exactly the source
    policy: the files under the prefix list and read; an object beside it is denied."""
    from pulumi_modelstore.model.sources import S3Source, SourceError

    endpoint, client, reset_auth = enforcing_moto
    s3, iam = client("s3"), client("iam")
    s3.create_bucket(Bucket="acme-models")
    s3.put_object(Bucket="acme-models", Key="llama/3.1-8b/config.json", Body=b"{}")
    s3.put_object(Bucket="acme-models", Key="llama/other/config.json", Body=b"{}")
    iam.create_user(UserName="seed")
    iam.put_user_policy(
        UserName="seed",
        PolicyName="source",
        PolicyDocument=json.dumps(source_read_policy("aws", "acme-models", "llama/3.1-8b")),
    )
    key = iam.create_access_key(UserName="seed")["AccessKey"]
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
        "AWS_REGION": "us-east-1",
    }
    reset_auth("0")
    granted = S3Source(S3_SOURCE, "v1", "acme-models", "llama/3.1-8b", env=env)
    (found,) = granted.files()
    with granted.open(found) as body:
        assert body.read() == b"{}"
    beside = S3Source("s3://acme-models/llama/other", "v1", "acme-models", "llama/other", env=env)
    with pytest.raises(SourceError, match="403"):
        beside.files()


# ---- Google Cloud -------------------------------------------------------------------------

BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
GS_SOURCE = "gs://acme-models/llama/3.1-8b"


@pytest.mark.parametrize("identity", ["direct", "google-service-account"])
def test_gs_the_loaders_member_alone_gets_object_viewer_on_the_source_bucket(identity):
    p = seeded("gcs-fuse", GS_SOURCE, identity=identity)
    members = {name_of(s["urn"]): s["inputs"] for s in p.by_type(BUCKET_MEMBER)}
    grant = members.pop("llama-seed-source")
    # A bucket member on the source bucket (never a project-level role), read-only, for the
    # very member the loader namespace's consumer grant names: its principal or its account.
    assert (grant["bucket"], grant["role"]) == ("acme-models", "roles/storage.objectViewer")
    assert grant["member"] == members[f"llama-access-{LOADER}"]["member"]
    assert f"/ns/{LOADER}/" in grant["member"] or f"llama-{LOADER}-" in grant["member"]
    # No other member is on the source bucket; the readers keep their store bucket role.
    assert all(m["bucket"] != "acme-models" for m in members.values())
    assert mentions(p, "acme-models") == {"llama-seed-source", SEED}
    assert "llama-seed-source" in seed_waits_for(p)
    assert seed_pod(p)["serviceAccountName"] == "llama-gcs"
    assert [v.line() for v in check_plan(p)] == []


# ---- Azure --------------------------------------------------------------------------------

ASSIGNMENT = "azure-native:authorization:RoleAssignment"
AZ_SOURCE = "az://acmemodels/models/llama/3.1-8b"
BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"


def container_id(p: Plan, group: str) -> str:
    """The source container's ARM id in ``group`` of the plan's subscription."""
    subscription = p.by_type(ASSIGNMENT)[0]["inputs"]["roleDefinitionId"].split("/")[2]
    return (
        f"/subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.Storage/"
        "storageAccounts/acmemodels/blobServices/default/containers/models"
    )


@pytest.mark.parametrize(
    ("extra", "group"),
    [({}, "ml-rg"), ({"source_resource_group": "models-rg"}, "models-rg")],
    ids=["store-group", "source-group"],
)
def test_az_blob_the_loaders_identity_reads_the_source_container(extra, group):
    p = seeded("azure-blob", AZ_SOURCE, extra)
    assignments = {name_of(s["urn"]): s["inputs"] for s in p.by_type(ASSIGNMENT)}
    grant = assignments.pop("llama-seed-source")
    assert grant["scope"] == container_id(p, group)
    assert grant["roleDefinitionId"].endswith(f"/roleDefinitions/{BLOB_DATA_READER}")
    # The identity the loader's service account is federated with (the writers' identity:
    # the loader is a writer consumer); the readers' identity gets nothing on the source.
    writers = p.by_name("llama-identity-writers")
    assert grant["principalId"] == writers["outputs"]["principalId"]
    assert grant["principalId"] != p.by_name("llama-identity-readers")["outputs"]["principalId"]
    assert mentions(p, "acmemodels") == {"llama-seed-source", SEED}
    assert "llama-seed-source" in seed_waits_for(p)
    assert seed_pod(p)["serviceAccountName"] == "llama-blob"
    assert [v.line() for v in check_plan(p)] == []


@pytest.fixture
def az_files_plan() -> Plan:
    return seeded("azure-files-nfs", AZ_SOURCE)


def test_az_files_nfs_gives_the_seed_job_an_identity_of_its_own(az_files_plan):
    p = az_files_plan
    (grant,) = [s["inputs"] for s in p.by_type(ASSIGNMENT)]
    identity = p.by_name("llama-identity-seed")
    assert grant["scope"] == container_id(p, "ml-rg")
    assert grant["roleDefinitionId"].endswith(f"/roleDefinitions/{BLOB_DATA_READER}")
    assert grant["principalId"] == identity["outputs"]["principalId"]
    (credential,) = [
        s["inputs"] for s in p.by_type("azure-native:managedidentity:FederatedIdentityCredential")
    ]
    assert credential["subject"] == f"system:serviceaccount:{LOADER}:llama-seed"
    account = p.by_name(f"llama-seed-{LOADER}")["inputs"]["metadata"]
    assert (account["namespace"], account["name"]) == (LOADER, "llama-seed")
    assert account["annotations"] == {
        "azure.workload.identity/client-id": identity["outputs"]["clientId"]
    }
    job = seed_job(p)["inputs"]["spec"]["template"]
    assert job["spec"]["serviceAccountName"] == "llama-seed"
    assert job["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    assert {
        "llama-role-seed",
        f"llama-federated-seed-{LOADER}",
        f"llama-seed-{LOADER}",
    } <= seed_waits_for(p)
    # The readers mount over NFS with no identity, and their Jobs run as before.
    verify = [j for j in jobs(p) if name_of(j["urn"]) != SEED]
    assert all("serviceAccountName" not in j["inputs"]["spec"]["template"]["spec"] for j in verify)
    assert [v.line() for v in check_plan(p)] == []


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
def test_the_seed_jobs_own_account_and_pod_pass_the_api_schema(aws_plans, az_files_plan, minor):
    """The seed Job running as an account of its own (and its labels), as the API takes it."""
    check = validator(minor)
    for p in (aws_plans["efs"], az_files_plan):
        check.validate({"apiVersion": "batch/v1", "kind": "Job", **seed_job(p)["inputs"]})
        check.validate(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                **p.by_name(f"llama-seed-{LOADER}")["inputs"],
            }
        )


def az_files(**model: Any) -> Any:
    return lambda: build("azure-files-nfs", model={"source": AZ_SOURCE, "revision": "v1", **model})


NO_ISSUER = {
    "azure-native:containerservice:getManagedCluster": lambda args, config: {
        k: v
        for k, v in INVOKES["azure-native:containerservice:getManagedCluster"](args, config).items()
        if k != "oidcIssuerProfile"
    }
}


@pytest.mark.parametrize(
    ("program", "message", "invokes"),
    [
        (
            lambda: build(
                "local",
                model={
                    "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
                    "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
                    "source_resource_group": "models-rg",
                },
            ),
            "llama: model.source_resource_group must be unset unless model.source is az:// (it "
            "names the resource group of the source storage account), got 'models-rg'",
            None,
        ),
        (
            az_files(source_resource_group="models rg."),
            f"llama: model.source_resource_group must be {RESOURCE_GROUP_RULE}, got 'models rg.'",
            None,
        ),
        (
            az_files(),
            "llama: cluster_name must be a cluster with the OIDC issuer on "
            "(oidcIssuerProfile.enabled; see azure.cluster_settings), got 'ml-aks'",
            NO_ISSUER,
        ),
    ],
    ids=["not-az", "bad-group", "no-issuer"],
)
def test_az_source_grant_refusals_come_before_anything_registers(program, message, invokes):
    assert_refused(program, message, invokes=invokes)


# ---- every cloud ------------------------------------------------------------------------


def test_the_seed_after_source_grant_ordering_is_documented():
    ordering = ORDERING_KINDS["seed-after-source-grant"]
    assert ordering.covers(JOB, ROLE_POLICY)
    assert ordering.covers(JOB, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert ordering.covers(JOB, BUCKET_MEMBER)
    assert ordering.covers(JOB, ASSIGNMENT)


OBJECT_SOURCES = {"s3": S3_SOURCE, "gs": GS_SOURCE, "az": AZ_SOURCE}
JOB_SEEDED_OBJECT = [
    (name, scheme)
    for name in NAMES
    for scheme, fill in BACKENDS[name].model_fill.items()
    if scheme in OBJECT_SOURCES and fill.how == "job"
]


@pytest.mark.parametrize(("backend", "scheme"), JOB_SEEDED_OBJECT)
def test_every_store_seeding_an_object_source_by_job_grants_read_on_it(backend, scheme):
    p = seeded(backend, OBJECT_SOURCES[scheme])
    waits = seed_waits_for(p)
    granted = {name_of(s["urn"]) for s in p.states() if name_of(s["urn"]) in waits}
    assert granted & mentions(p, OBJECT_SOURCES[scheme].split("/")[2]), waits


ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"


@pytest.mark.parametrize("case", ["efs", "s3-pod"])
def test_the_digest_record_is_allowed_to_the_account_the_seed_runs_as(aws_plans, case):
    """The seed records the manifest's digest as the account it runs as: its own where the
    source grant gave it one (EFS), the loader's consumer account otherwise."""
    p = aws_plans[case]
    (binding,) = p.by_type(ROLE_BINDING)
    (subject,) = binding["inputs"]["subjects"]
    assert (subject["namespace"], subject["name"]) == (LOADER, seed_pod(p)["serviceAccountName"])
