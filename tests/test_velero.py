"""Velero on a cluster (``modelstore:clusters.<key>.velero``): the pinned chart installed once
per cluster with its bucket and workload identity, rendered by the real ``helm``; a
``Schedule`` per store whose ``backup`` is enabled, valid against Velero's CRD; the refusals,
one line each, before anything registers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from moto import mock_aws

from pulumi_modelstore.aws.velero import velero_policy
from pulumi_modelstore.azure import identity as ident
from pulumi_modelstore.azure import velero as az_velero
from pulumi_modelstore.kube import velero as kv
from pulumi_modelstore.plan.engine import Plan, plan_directory
from pulumi_modelstore.plan.placeholders import INVOKES
from tests.conftest import ROOT, assert_refused
from tests.test_aks_cluster import GET_CLUSTER, cluster_answer
from tests.test_config_clusters import _project
from tests.test_helm import manifests, release_of, render
from tests.test_model_section import GCS_RULE, S3_RULE
from tests.validators.kube_schema import validator

RELEASE = "kubernetes:helm.sh/v3:Release"
SCHEDULE = "kubernetes:velero.io/v1:Schedule"
ROLE = "aws:iam/role:Role"
EKS_ATTRIBUTES = """\
    attributes:
      region: us-west-2
      vpc_id: vpc-0a1b2c3d4e5f60718
      cluster_subnet_ids: [subnet-0a1b2c3d4e5f60001]
      node_security_group_ids: [sg-0a1b2c3d4e5f60aaa]
      oidc_issuer: https://oidc.eks.us-west-2.amazonaws.com/id/5C0FFEE5C0FFEE5C0FFEE5C0FFEE5C0F
"""


def _velero_plan(filled_plans: dict[str, Plan]) -> Plan:
    return filled_plans["stacks/aws-efs"]


def _release(p: Plan) -> dict[str, Any]:
    (release,) = [r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == "velero"]
    return release


# ---- EKS: the install, its bucket and IRSA role ------------------------------------------------


def test_the_chart_version_is_the_vendored_one():
    chart = yaml.safe_load(
        (ROOT / f"tests/charts/velero-{kv.VELERO_CHART.version}/Chart.yaml").read_text()
    )
    assert (chart["version"], chart["appVersion"]) == (
        kv.VELERO_CHART.version,
        kv.VELERO_CHART.app_version,
    )
    crd = (
        ROOT / f"tests/schemas/crds/velero-v{kv.VELERO_CHART.app_version}/velero.io_schedules.yaml"
    )
    assert crd.exists()


def test_eks_velero_gets_its_bucket_and_an_irsa_role_for_its_server_only(filled_plans):
    p = _velero_plan(filled_plans)
    release = _release(p)
    inputs = release["inputs"]
    assert (inputs["version"], inputs["namespace"]) == (kv.VELERO_CHART.version, "velero")
    values = inputs["values"]
    (location,) = values["configuration"]["backupStorageLocation"]
    bucket = p.by_name("staging-eks-velero-bucket")
    assert (bucket["protect"], bucket["retainOnDelete"]) == (True, True)
    assert location == {
        "name": "default",
        "provider": "aws",
        "bucket": bucket["outputs"]["bucket"],
        "default": True,
        "config": {"region": "eu-west-1"},
    }
    assert values["initContainers"][0]["image"] == "velero/velero-plugin-for-aws:v1.14.0"
    assert (values["credentials"], values["snapshotsEnabled"]) == ({"useSecret": False}, False)
    arn = values["serviceAccount"]["server"]["annotations"]["eks.amazonaws.com/role-arn"]
    (role,) = [r for r in p.by_type(ROLE) if r["outputs"]["arn"] == arn]
    (statement,) = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    issuer = "oidc.eks.eu-west-1.amazonaws.com/id/5C0FFEE5C0FFEE5C0FFEE5C0FFEE5C0F"
    assert statement["Condition"]["StringEquals"] == {
        f"{issuer}:sub": "system:serviceaccount:velero:velero-server",
        f"{issuer}:aud": "sts.amazonaws.com",
    }
    policy = p.by_name("staging-eks-velero-policy")
    assert json.loads(policy["inputs"]["policy"]) == velero_policy(bucket["outputs"]["arn"])
    # The release waits for its namespace, the bucket's configuration and the role's policy.
    assert {
        "staging-eks-ns-velero",
        "staging-eks-velero-policy",
        "staging-eks-velero-bucket-policy",
    } <= {urn.rsplit("::", 1)[1] for urn in release["dependencies"]}


def test_the_velero_policy_is_s3_on_its_bucket_only_and_valid_to_iam(aws_env):
    document = velero_policy("arn:aws:s3:::velero-backups")
    resources = {r for s in document["Statement"] for r in s["Resource"]}
    assert resources == {"arn:aws:s3:::velero-backups", "arn:aws:s3:::velero-backups/*"}
    assert {a.split(":")[0] for s in document["Statement"] for a in s["Action"]} == {"s3"}
    with mock_aws():
        iam = boto3.client("iam")
        iam.create_policy(PolicyName="velero", PolicyDocument=json.dumps(document))
        # The check can fail: IAM refuses a statement without an Effect.
        broken = {"Version": "2012-10-17", "Statement": [{"Action": ["s3:GetObject"]}]}
        with pytest.raises(iam.exceptions.MalformedPolicyDocumentException):
            iam.create_policy(PolicyName="broken", PolicyDocument=json.dumps(broken))


def test_the_chart_renders_with_the_plugin_the_location_and_no_node_agent(filled_plans):
    objects = manifests(render(release_of(_release(_velero_plan(filled_plans)))))
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("Deployment", "velero") in kinds
    assert not any(o["kind"] in ("DaemonSet", "VolumeSnapshotLocation") for o in objects)
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == kv.SERVICE_ACCOUNT
    assert [c["image"] for c in pod["initContainers"]] == ["velero/velero-plugin-for-aws:v1.14.0"]
    (location,) = [o for o in objects if o["kind"] == "BackupStorageLocation"]
    assert (location["spec"]["provider"], location["spec"]["default"]) == ("aws", True)
    assert not any(o["kind"] == "Secret" for o in objects)


# ---- GKE: the install, its bucket and workload identity ----------------------------------------

GKE = """
modelstore:clusters:
  ml:
    kind: gke
    name: ml-gke
    location: us-central1
    project: acme-ml
    velero: {bucket: acme-ml-velero}
modelstore:stores:
  llama: {backend: gcs-fuse, cluster: ml, readers: [inference], writers: [publisher]}
"""


def test_gke_velero_gets_its_bucket_and_a_google_account_its_server_acts_as(tmp_path):
    p = plan_directory(_project(tmp_path, GKE), fill_outputs=True)
    release = _release(p)
    values = release["inputs"]["values"]
    bucket = p.by_name("ml-gke-velero-bucket")
    assert (bucket["protect"], bucket["retainOnDelete"]) == (True, True)
    assert bucket["inputs"]["name"] == "acme-ml-velero"
    assert bucket["inputs"]["publicAccessPrevention"] == "enforced"
    assert bucket["inputs"]["uniformBucketLevelAccess"] is True
    account = p.by_name("ml-gke-velero-gsa")
    email = account["outputs"]["email"]
    (location,) = values["configuration"]["backupStorageLocation"]
    assert (location["provider"], location["bucket"], location["config"]) == (
        "gcp",
        "acme-ml-velero",
        {"serviceAccount": email},
    )
    assert values["serviceAccount"]["server"]["annotations"] == {
        "iam.gke.io/gcp-service-account": email
    }
    user = p.by_name("ml-gke-velero-gsa-user")["inputs"]
    assert (user["role"], user["member"]) == (
        "roles/iam.workloadIdentityUser",
        "serviceAccount:acme-ml.svc.id.goog[velero/velero-server]",
    )
    member = p.by_name("ml-gke-velero-bucket-member")["inputs"]
    assert (member["bucket"], member["role"]) == ("acme-ml-velero", "roles/storage.objectAdmin")
    signer = p.by_name("ml-gke-velero-gsa-signer")["inputs"]
    assert signer["role"] == "roles/iam.serviceAccountTokenCreator"
    # Rendered by the real helm: the plugin, the location, the annotated server account.
    objects = manifests(render(release_of(release)))
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert [c["image"] for c in pod["initContainers"]] == ["velero/velero-plugin-for-gcp:v1.14.0"]
    (sa,) = [
        o
        for o in objects
        if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == pod["serviceAccountName"]
    ]
    assert sa["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == email
    (schedule,) = p.by_type(SCHEDULE)
    assert schedule["inputs"]["spec"]["template"]["includedNamespaces"] == [
        "inference",
        "publisher",
    ]


# ---- AKS: the install, its storage account and workload identity -------------------------------

AKS = """
modelstore:clusters:
  ml:
    kind: aks
    name: ml-aks
    resource_group: ml-rg
    velero: {bucket: ml-backups, retention_days: 14}
modelstore:stores:
  llama: {backend: azure-blob, cluster: ml, readers: [inference], writers: [publisher]}
"""
ACCOUNT = "azure-native:storage:StorageAccount"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"


def test_aks_velero_gets_a_locked_down_account_and_an_identity_federated_with_its_server(tmp_path):
    p = plan_directory(_project(tmp_path, AKS), fill_outputs=True)
    account = p.by_name("ml-aks-velero-account")
    container = p.by_name("ml-aks-velero-container")
    for kept in (account, container):
        assert (kept["protect"], kept["retainOnDelete"]) == (True, True)
    settings = account["inputs"]
    subnet = settings["networkRuleSet"]["virtualNetworkRules"][0]["virtualNetworkResourceId"]
    assert {k: settings[k] for k in settings if k not in ("encryption", "tags")} == {
        "accountName": settings["accountName"],
        "resourceGroupName": "ml-rg",
        "location": "eastus",
        "kind": "StorageV2",
        "sku": {"name": "Standard_GRS"},
        "accessTier": "Hot",
        "minimumTlsVersion": "TLS1_2",
        "enableHttpsTrafficOnly": True,
        "allowBlobPublicAccess": False,
        "allowSharedKeyAccess": False,
        "allowCrossTenantReplication": False,
        "defaultToOAuthAuthentication": True,
        "publicNetworkAccess": "Enabled",
        "networkRuleSet": {
            "defaultAction": "Deny",
            "bypass": "AzureServices",
            "virtualNetworkRules": [{"virtualNetworkResourceId": subnet, "action": "Allow"}],
        },
    }
    assert subnet.endswith("/virtualNetworks/ml-aks-vnet/subnets/ml-aks-nodes")
    assert (container["inputs"]["containerName"], container["inputs"]["publicAccess"]) == (
        "ml-backups",
        "None",
    )
    # The server's ServiceAccount, and nothing else, is federated with the identity.
    identity = p.by_name("ml-aks-velero-identity")
    credential = p.by_name("ml-aks-velero-federated-velero")["inputs"]
    issuer = INVOKES[GET_CLUSTER]({"resourceName": "ml-aks"}, {})["oidcIssuerProfile"]["issuerURL"]
    assert (credential["subject"], credential["audiences"], credential["issuer"]) == (
        "system:serviceaccount:velero:velero-server",
        ["api://AzureADTokenExchange"],
        issuer,
    )
    assert credential["resourceName"] == identity["outputs"]["name"]
    # Data on the container alone; the account only for user delegation keys (download links).
    roles = {
        r["inputs"]["roleDefinitionId"].rsplit("/", 1)[1]: r["inputs"]["scope"]
        for r in p.by_type(ROLE_ASSIGNMENT)
        if r["inputs"]["principalId"] == identity["outputs"]["principalId"]
    }
    scope = account["id"]
    assert roles == {
        ident.STORAGE_BLOB_DATA_CONTRIBUTOR: f"{scope}/blobServices/default/containers/ml-backups",
        az_velero.STORAGE_BLOB_DELEGATOR: scope,
    }
    release = _release(p)
    values = release["inputs"]["values"]
    (location,) = values["configuration"]["backupStorageLocation"]
    name = account["outputs"]["name"]
    assert location == {
        "name": "default",
        "provider": "azure",
        "bucket": "ml-backups",
        "default": True,
        "config": {
            "resourceGroup": "ml-rg",
            "storageAccount": name,
            "subscriptionId": scope.split("/")[2],
            "storageAccountURI": f"https://{name}.blob.core.windows.net/",
            "useAAD": "true",
        },
    }
    client_id = identity["outputs"]["clientId"]
    assert values["serviceAccount"]["server"]["annotations"] == {
        "azure.workload.identity/client-id": client_id
    }
    assert values["podLabels"] == {"azure.workload.identity/use": "true"}
    # The release waits for its grants: both roles and the federated credential.
    assert {
        "ml-aks-velero-role-data",
        "ml-aks-velero-role-delegator",
        "ml-aks-velero-federated-velero",
        "ml-aks-ns-velero",
    } <= {urn.rsplit("::", 1)[1] for urn in release["dependencies"]}
    # Rendered by the real helm (test_helm reads every value of the aks stack's release): the
    # labelled pod on the annotated account, no credentials file.
    objects = manifests(render(release_of(release)))
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    pod = template["spec"]
    assert [c["image"] for c in pod["initContainers"]] == [
        "velero/velero-plugin-for-microsoft-azure:v1.14.0"
    ]
    assert not any(
        e["name"] == "AZURE_CREDENTIALS_FILE" for c in pod["containers"] for e in c.get("env", [])
    )
    (sa,) = [
        o
        for o in objects
        if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == pod["serviceAccountName"]
    ]
    assert sa["metadata"]["annotations"]["azure.workload.identity/client-id"] == client_id
    (bsl,) = [o for o in objects if o["kind"] == "BackupStorageLocation"]
    assert bsl["spec"]["config"] == location["config"]
    assert not any(o["kind"] in ("DaemonSet", "VolumeSnapshotLocation", "Secret") for o in objects)
    # The store's Schedule, as on the other clouds.
    (schedule,) = p.by_type(SCHEDULE)
    spec = schedule["inputs"]["spec"]
    assert spec["template"]["includedNamespaces"] == ["inference", "publisher"]
    assert spec["template"]["ttl"] == "336h0m0s"


# ---- the Schedule ------------------------------------------------------------------------------


def test_the_store_schedule_covers_its_namespaces_by_label_and_fits_the_crd(filled_plans):
    (schedule,) = _velero_plan(filled_plans).by_type(SCHEDULE)
    obj = {k: schedule["inputs"][k] for k in ("apiVersion", "kind", "metadata", "spec")}
    assert obj["metadata"]["name"] == "modelstore-t5"
    assert obj["spec"] == {
        "schedule": "0 2 * * *",
        "template": {
            "includedNamespaces": ["batch-inference", "inference", "model-loader", "t5-loader"],
            "includeClusterResources": True,
            "labelSelector": {"matchLabels": {"modelstore.pulumi.com/store": "t5"}},
            "snapshotVolumes": False,
            "defaultVolumesToFsBackup": False,
            "storageLocation": "default",
            "ttl": "336h0m0s",
        },
    }
    for minor in ("1.31", "1.35"):
        assert validator(minor).errors(obj) == []
    # The CRD check can fail: a ttl that is not a string is refused.
    bad = {**obj, "spec": {**obj["spec"], "template": {**obj["spec"]["template"], "ttl": 14}}}
    assert validator("1.35").errors(bad) != []


STORE = """
modelstore:clusters:
  prod:
    kind: eks
    name: prod-eks
{attributes}{velero}
modelstore:stores:
  llama: {{backend: efs, cluster: prod, readers: [inference], writers: [loader]{backup}}}
"""


def _eks(tmp_path: Path, velero: str, backup: str = "") -> Path:
    config = STORE.format(attributes=EKS_ATTRIBUTES, velero=velero, backup=backup)
    return _project(tmp_path, config)


def test_a_store_whose_backup_is_off_gets_no_schedule_but_the_cluster_keeps_velero(tmp_path):
    p = plan_directory(_eks(tmp_path, "    velero: {}", ", backup: {enabled: false}"))
    assert len([r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == "velero"]) == 1
    assert p.by_type(SCHEDULE) == []


def test_velero_disabled_makes_nothing(tmp_path):
    p = plan_directory(_eks(tmp_path, "    velero: {enabled: false}"))
    assert not [r for r in p.by_type(RELEASE) if r["inputs"]["chart"] == "velero"]
    assert p.by_type(SCHEDULE) == []
    assert not any("velero" in s["urn"] for s in p.states())


# ---- refusals ----------------------------------------------------------------------------------

V = "modelstore:clusters.prod.velero"
CRON_ALLOWED = (
    "a cron expression of five numeric fields (minute 0-59, hour 0-23, day-of-month 1-31, "
    "month 1-12, day-of-week 0-6 with Sunday 0; UTC), e.g. '0 3 * * *'"
)
REFUSALS: list[tuple[str, str, str, list[str]]] = [
    (
        "on a plain kubernetes cluster",
        """
        modelstore:clusters:
          prod: {kind: kubernetes, velero: {enabled: true}}
        modelstore:stores:
          llama: {backend: local, cluster: prod, readers: [a], node_name: n1}
        """,
        "",
        [f"{V}.enabled must be {kv.kind_refusal('kubernetes')}, got true"],
    ),
    (
        "a schedule that is not cron",
        "",
        '    velero: {schedule: "daily"}',
        [f"{V}.schedule must be {CRON_ALLOWED}, got 'daily'"],
    ),
    (
        # Velero parses a Schedule with robfig/cron's ParseStandard, whose day-of-week is 0-6.
        "a day-of-week of 7",
        "",
        '    velero: {schedule: "0 3 * * 7"}',
        [f"{V}.schedule must be {CRON_ALLOWED}, got '0 3 * * 7'"],
    ),
    (
        "an S3 bucket name with S3's reserved prefix",
        "",
        "    velero: {bucket: sthree-backups}",
        [f"{V}.bucket must be {S3_RULE}, got 'sthree-backups'"],
    ),
    (
        "an S3 bucket name with the access point alias suffix",
        "",
        "    velero: {bucket: ml-backups-s3alias}",
        [f"{V}.bucket must be {S3_RULE}, got 'ml-backups-s3alias'"],
    ),
    (
        "a Cloud Storage bucket name starting with goog",
        GKE.replace("acme-ml-velero", "goog-ml-velero"),
        "",
        [f"{V.replace('prod', 'ml')}.bucket must be {GCS_RULE}, got 'goog-ml-velero'"],
    ),
    (
        "a Cloud Storage bucket name containing google",
        GKE.replace("acme-ml-velero", "acme-google-velero"),
        "",
        [f"{V.replace('prod', 'ml')}.bucket must be {GCS_RULE}, got 'acme-google-velero'"],
    ),
    (
        "retention of zero days",
        "",
        "    velero: {retention_days: 0}",
        [
            f"{V}.retention_days must be 1 to 106751 days (a Velero ttl is a Go duration; 0 "
            "would mean Velero's 30-day default), got 0"
        ],
    ),
    (
        "retention past a Go duration",
        "",
        "    velero: {retention_days: 106752}",
        [
            f"{V}.retention_days must be 1 to 106751 days (a Velero ttl is a Go duration; 0 "
            "would mean Velero's 30-day default), got 106752"
        ],
    ),
    (
        "a bucket name no cloud takes, and an unknown field",
        "",
        "    velero: {bucket: Velero_Backups, ttl: 3}",
        [
            f"{V}.ttl must be a field of velero: one of enabled, bucket, schedule, "
            "retention_days, got 'ttl'",
            f"{V}.bucket must be {kv.BUCKET_ALLOWED}, got 'Velero_Backups'",
        ],
    ),
    (
        "enabled as a string",
        "",
        '    velero: {enabled: "yes"}',
        [f"{V}.enabled must be true or false, got 'yes'"],
    ),
    (
        "not a mapping",
        "",
        "    velero: true",
        [f"{V} must be a mapping with enabled, bucket, schedule, retention_days, got true"],
    ),
]


@pytest.mark.parametrize(
    ("config", "velero", "lines"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_bad_velero_is_refused_before_anything_registers(tmp_path, config, velero, lines):
    directory = _project(tmp_path, config) if config else _eks(tmp_path, velero)
    assert_refused(directory, "\n".join(lines))


# An Azure Files NFS store needs none of what Velero needs of the cluster: the refusal is
# Velero's own, and it comes before the store registers anything.
AKS_STORE = """
modelstore:clusters:
  prod: {kind: aks, name: prod-aks, resource_group: ml-rg, velero: {}}
modelstore:stores:
  llama: {backend: azure-files-nfs, cluster: prod, readers: [a]}
"""
NO_ENDPOINT = {
    "azure-native:network:getSubnet": lambda args, config: {
        **INVOKES["azure-native:network:getSubnet"](args, config),
        "serviceEndpoints": [],
    }
}
AKS_REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    (
        "the OIDC issuer off",
        cluster_answer(oidcIssuerProfile={"enabled": False}),
        "false while cluster prod-aks has the OIDC issuer off (Velero's identity trusts the "
        "issuer through a federated credential: oidcIssuerProfile.enabled; see "
        "azure.cluster_settings)",
    ),
    (
        "workload identity off",
        cluster_answer(securityProfile={"workloadIdentity": {"enabled": False}}),
        "false while cluster prod-aks has workload identity off (its webhook gives the Velero "
        "server pod its token: securityProfile.workloadIdentity.enabled; see "
        "azure.cluster_settings)",
    ),
    (
        "the AKS-managed virtual network",
        cluster_answer(agentPoolProfiles=[{"name": "system", "mode": "System"}]),
        "false while cluster prod-aks is on the AKS-managed virtual network (Velero's storage "
        "account denies every network but the node subnets, and there is no node subnet to "
        "admit)",
    ),
    (
        "a node subnet without a storage service endpoint",
        NO_ENDPOINT,
        "false while node subnet prod-aks-nodes of virtual network prod-aks-vnet has no "
        "Microsoft.Storage or Microsoft.Storage.Global service endpoint (Velero's storage "
        "account admits the node subnets by virtual network rule: az network vnet subnet "
        "update -g ml-rg --vnet-name prod-aks-vnet -n prod-aks-nodes --service-endpoints "
        "Microsoft.Storage.Global)",
    ),
]


@pytest.mark.parametrize(
    ("overrides", "allowed"), [r[1:] for r in AKS_REFUSALS], ids=[r[0] for r in AKS_REFUSALS]
)
def test_velero_on_an_aks_cluster_without_what_it_needs_is_refused_first(
    tmp_path, overrides, allowed
):
    directory = _project(tmp_path, AKS_STORE)
    assert_refused(
        directory, f"{V}.enabled must be {allowed}, got true", invoke_overrides=overrides
    )


# An EFS store without IAM authorization needs no OIDC provider, but Velero's IRSA role does:
# that refusal is Velero's, and it too comes before the store registers anything.
OIDC = "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider"


def test_velero_on_an_eks_cluster_without_an_oidc_provider_is_refused_first(tmp_path):
    def missing(args: dict[str, Any], config: Any) -> Any:
        raise Exception(f"no OpenID Connect provider found for {args['url']}")

    issuer = "https://oidc.eks.us-west-2.amazonaws.com/id/5C0FFEE5C0FFEE5C0FFEE5C0FFEE5C0F"
    assert_refused(
        _eks(tmp_path, "    velero: {}"),
        "modelstore:clusters.prod.velero.enabled must be false unless the cluster serves IRSA, "
        "which Velero's server role uses (irsa on a cluster with an IAM OIDC provider for "
        f"{issuer} (none found: invoke of {OIDC} failed: no OpenID Connect provider found for "
        f"{issuer} ()); create one with `eksctl utils associate-iam-oidc-provider`), got true",
        invoke_overrides={OIDC: missing},
    )


def test_a_velero_entry_takes_either_spelling_of_its_keys_as_every_section_does():
    """``retentionDays`` as ``backup`` takes it (one camelCase rule for stack config); the same
    field in both spellings is refused, naming both."""
    from pulumi_modelstore.kube.velero import parse_velero

    path = "modelstore:clusters.prod.velero"
    camel, errors = parse_velero(path, "eks", {"retentionDays": 14, "schedule": "0 4 * * *"})
    snake, _ = parse_velero(path, "eks", {"retention_days": 14, "schedule": "0 4 * * *"})
    assert errors == [] and camel == snake and camel is not None and camel.retention_days == 14
    _, errors = parse_velero(path, "eks", {"retentionDays": 14, "retention_days": 3})
    assert [str(e) for e in errors] == [
        "modelstore:clusters.prod.velero.retention_days must be unset when "
        "modelstore:clusters.prod.velero.retentionDays is given (the same field, spelled "
        "differently), got 3"
    ]


# ---- what a restore brings back ----------------------------------------------------------------

JOB = "kubernetes:batch/v1:Job"
MODEL_STORE = """
modelstore:clusters:
  prod:
    kind: eks
    name: prod-eks
{attributes}    velero: {{}}
modelstore:tokens:
  llama: {{secure: AAABAHRva2VuLWNpcGhlcnRleHQ=}}
modelstore:stores:
  llama:
    backend: efs
    cluster: prod
    readers: [inference]
    writers: [loader]
    backup: {{enabled: true}}
    model: {{source: "hf://google-t5/t5-small", revision: df1b051c49625cf57a3d0d8d3863ed4d13564fe4}}
"""


def _record_labels(args: list[str]) -> dict[str, str]:
    return dict(args[i + 1].split("=", 1) for i, arg in enumerate(args) if arg == "--record-label")


def _restore_holds_what_the_model_jobs_need(p: Plan) -> list[str]:
    """What each model Job's pod needs that its store's Schedule would not back up: an object
    it mounts or runs as, made by the plan, without the Schedule's labels or outside its
    namespaces; the seed's digest record, by the labels the seed gives it."""
    missing: list[str] = []
    created = {
        (
            s["type"].rsplit(":", 1)[1],
            s["inputs"]["metadata"].get("namespace"),
            s["inputs"]["metadata"]["name"],
        ): s["inputs"]["metadata"].get("labels") or {}
        for s in p.states()
        if s["type"].startswith("kubernetes:core/v1:") and "metadata" in s["inputs"]
    }
    for schedule in p.by_type(SCHEDULE):
        template = schedule["inputs"]["spec"]["template"]
        selector = template["labelSelector"]["matchLabels"]
        namespaces = template["includedNamespaces"]

        def selected(labels: dict[str, str], selector: dict[str, str] = selector) -> bool:
            return all(labels.get(k) == v for k, v in selector.items())

        jobs = [j for j in p.by_type(JOB) if selected(j["inputs"]["metadata"]["labels"])]
        assert jobs, "a store with a model and a Schedule has Jobs"
        for job in jobs:
            ns = job["inputs"]["metadata"]["namespace"]
            name = job["inputs"]["metadata"]["name"]
            if ns not in namespaces:
                missing.append(f"{name}: namespace {ns}")
            pod = job["inputs"]["spec"]["template"]["spec"]
            needs = [("ServiceAccount", pod.get("serviceAccountName"))]
            for volume in pod["volumes"]:
                needs += [
                    ("ConfigMap", (volume.get("configMap") or {}).get("name")),
                    ("Secret", (volume.get("secret") or {}).get("secretName")),
                    (
                        "PersistentVolumeClaim",
                        (volume.get("persistentVolumeClaim") or {}).get("claimName"),
                    ),
                ]
            for kind, needed in needs:
                labels = created.get((kind, ns, needed))
                if labels is not None and not selected(labels):
                    missing.append(f"{name}: {kind} {needed}")
            args = pod["containers"][0]["args"]
            if "--record-configmap" in args and not selected(_record_labels(args)):
                missing.append(f"{name}: the record {args[args.index('--record-configmap') + 1]}")
    return missing


def test_a_restore_holds_what_the_model_jobs_need(filled_plans, tmp_path):
    assert _restore_holds_what_the_model_jobs_need(_velero_plan(filled_plans)) == []
    # With a token from config: its Secret is backed up with the store.
    p = plan_directory(_project(tmp_path, MODEL_STORE.format(attributes=EKS_ATTRIBUTES)))
    assert [s["inputs"]["metadata"]["name"] for s in p.by_type("kubernetes:core/v1:Secret")] == [
        "llama-model-token"
    ]
    assert _restore_holds_what_the_model_jobs_need(p) == []
