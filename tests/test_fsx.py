"""FsxLustreModelStore: graph wiring, inputs, defaults, protection and exact input errors."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from pulumi_modelstore import ModelStoreInputError
from pulumi_modelstore.aws import FSX_CSI, FsxLustreModelStore
from pulumi_modelstore.aws.cluster import EksCluster
from pulumi_modelstore.aws.fsx import LUSTRE_PORT_RANGES
from pulumi_modelstore.plan.engine import UNKNOWN, PlanError
from pulumi_modelstore.plan.placeholders import digest
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

FS = "aws:fsx/lustreFileSystem:LustreFileSystem"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"


def fsx(**args: Any):
    fields: dict[str, Any] = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
    return lambda: FsxLustreModelStore("llama", fields)


def test_file_system_depends_on_every_lnet_rule():
    p = plan(fsx())
    rules = p.by_type(INGRESS) + p.by_type(EGRESS)
    # 2 port ranges x (self, nodes) x (in, out) + 2 client-side rules on the node group.
    assert len(rules) == 10
    fs = p.by_type(FS)[0]
    assert {r["urn"] for r in rules} <= set(fs["dependencies"])
    sg = p.by_type(SG)[0]
    assert sg["urn"] in fs["dependencies"]


def test_lnet_rules_cover_both_port_ranges_from_self_and_nodes():
    p = plan(fsx(), fill=True)
    sg_id = p.by_type(SG)[0]["id"]
    assert sg_id.startswith("sg-")

    def rules(type_: str, group: str) -> set[tuple[int, int, str]]:
        return {
            (
                r["inputs"]["fromPort"],
                r["inputs"]["toPort"],
                r["inputs"]["referencedSecurityGroupId"],
            )
            for r in p.by_type(type_)
            if r["inputs"]["securityGroupId"] == group and r["inputs"]["ipProtocol"] == "tcp"
        }

    lnet = ((988, 988), (1018, 1023))  # FACTS: TCP 988 and 1018-1023
    assert lnet == LUSTRE_PORT_RANGES
    expected = {(lo, hi, peer) for lo, hi in lnet for peer in (sg_id, CLUSTER_SG)}
    assert rules(INGRESS, sg_id) == expected
    assert rules(EGRESS, sg_id) == expected
    # Lustre servers connect back to clients: the nodes accept LNET from the file system.
    assert rules(INGRESS, CLUSTER_SG) == {(lo, hi, sg_id) for lo, hi in lnet}
    fs = p.by_type(FS)[0]["inputs"]
    assert fs["securityGroupIds"] == [sg_id]


def test_node_security_group_rules_can_be_left_to_the_cluster_owner():
    p = plan(fsx(node_security_group_rules=False), fill=True)
    assert not [r for r in p.by_type(INGRESS) if r["inputs"]["securityGroupId"] == CLUSTER_SG]


def test_file_system_defaults():
    p = plan(fsx(tags={"team": "ml"}))
    fs = p.by_type(FS)[0]["inputs"]
    assert fs["deploymentType"] == "PERSISTENT_2"
    assert fs["storageType"] == "SSD"
    assert fs["storageCapacity"] == 1200
    assert fs["perUnitStorageThroughput"] == 125
    assert fs["dataCompressionType"] == "LZ4"
    assert fs["fileSystemTypeVersion"] == "2.15"
    assert fs["metadataConfiguration"] == {"mode": "AUTOMATIC"}
    assert fs["subnetIds"] == CLUSTER_SUBNETS[0]
    assert "kmsKeyId" not in fs and "driveCacheType" not in fs
    assert fs["tags"]["team"] == "ml" and fs["tags"]["Name"] == "llama"
    # Tags land on every AWS resource the store makes.
    for state in p.states():
        if state["type"].startswith("aws:") and "tags" in state["inputs"]:
            assert state["inputs"]["tags"]["team"] == "ml", state["urn"]


def test_kms_key_arn_reaches_the_file_system():
    fs = plan(fsx(kms_key_arn=KMS_ARN)).by_type(FS)[0]["inputs"]
    assert fs["kmsKeyId"] == KMS_ARN


def test_pvs_carry_the_file_systems_attributes_and_unique_handles():
    p = plan(fsx(readers=["inference", "batch"], writers=["loader"]), fill=True)
    fs = p.by_type(FS)[0]
    fs_id, dns, mount = fs["id"], fs["outputs"]["dnsName"], fs["outputs"]["mountName"]
    pvs = {pv["inputs"]["spec"]["claimRef"]["namespace"]: pv for pv in p.by_type(PV)}
    assert set(pvs) == {"inference", "batch", "loader"}
    handles = set()
    for ns, pv in pvs.items():
        csi = pv["inputs"]["spec"]["csi"]
        assert csi["driver"] == "fsx.csi.aws.com"
        assert csi["volumeHandle"] == f"{fs_id}::{ns}"
        assert csi["volumeAttributes"] == {"dnsname": dns, "mountname": mount}
        handles.add(csi["volumeHandle"])
        assert fs["urn"] in pv["dependencies"]
    assert len(handles) == 3


def test_pvs_wait_for_the_driver_but_not_for_the_data_repository_association():
    # The file system mounts without the association (S3 imports lazily): claims must not wait
    # minutes for it. They do wait for the driver: no mount without it.
    p = plan(fsx(data_repository_path="s3://models/llama/", readers=["inference", "batch"]))
    release = p.by_type(RELEASE)[0]["urn"]
    (link,) = p.by_type(DRA)
    fs = p.by_type(FS)[0]["urn"]
    assert fs in link["dependencies"]
    for pv in p.by_type(PV):
        assert release in pv["dependencies"]
        assert link["urn"] not in pv["dependencies"]
        assert link["urn"] not in {d for ds in pv["propertyDependencies"].values() for d in ds}
    for pvc in p.by_type(PVC):
        pv_urns = {pv["urn"] for pv in p.by_type(PV)}
        assert set(pvc["dependencies"]) & pv_urns


def test_readers_read_only_writers_read_write_all_rwx_retained():
    p = plan(fsx(readers=["inference"], writers=["loader"]))
    by_ns = {pv["inputs"]["spec"]["claimRef"]["namespace"]: pv["inputs"] for pv in p.by_type(PV)}
    for ns, read_only in (("inference", True), ("loader", False)):
        pv = by_ns[ns]
        spec = pv["spec"]
        assert spec["accessModes"] == ["ReadWriteMany"]  # the driver rejects ReadOnlyMany
        assert spec["csi"]["readOnly"] is read_only
        assert spec["persistentVolumeReclaimPolicy"] == "Retain"
        assert spec["storageClassName"] == ""
        assert spec["mountOptions"] == ["flock"]
        assert spec["capacity"] == {"storage": "1200Gi"}
        assert spec["claimRef"] == {"namespace": ns, "name": "llama"}
        assert pv["metadata"]["name"] == f"llama-{ns}"
    claims = {c["inputs"]["metadata"]["namespace"]: c["inputs"] for c in p.by_type(PVC)}
    for ns in ("inference", "loader"):
        spec = claims[ns]["spec"]
        assert claims[ns]["metadata"]["name"] == "llama"
        assert spec["storageClassName"] == "" and spec["volumeName"] == f"llama-{ns}"
        assert spec["accessModes"] == ["ReadWriteMany"]


def test_helm_driver_is_pinned_and_tolerates_gpu_taints():
    p = plan(fsx())
    (release,) = p.by_type(RELEASE)
    inputs = release["inputs"]
    assert inputs["chart"] == FSX_CSI.chart == "aws-fsx-csi-driver"
    assert inputs["version"] == FSX_CSI.version
    assert inputs["repositoryOpts"]["repo"] == FSX_CSI.repo
    assert inputs["namespace"] == "kube-system"
    assert inputs["values"]["node"]["tolerateAllTaints"] is True
    assert inputs["values"]["controller"]["region"] == "us-west-2"


def test_eks_addon_driver():
    p = plan(fsx(driver_install="eks-addon", eks_addon_version="v1.9.0-eksbuild.1"))
    assert not p.by_type(RELEASE)
    (addon,) = p.by_type("aws:eks/addon:Addon")
    assert addon["inputs"]["addonName"] == "aws-fsx-csi-driver"
    assert addon["inputs"]["clusterName"] == CLUSTER
    assert addon["inputs"]["addonVersion"] == "v1.9.0-eksbuild.1"
    # The cluster's, not the store's: the add-on serves every store on the cluster.
    assert addon["parent"] == p.by_name(CLUSTER)["urn"]
    assert "modelstore.pulumi.com/store" not in addon["inputs"]["tags"]
    for pv in p.by_type(PV):
        assert addon["urn"] in pv["dependencies"]


def test_no_driver_install_when_the_cluster_has_one():
    p = plan(fsx(driver_install="none"))
    assert not p.by_type(RELEASE) and not p.by_type("aws:eks/addon:Addon")


def test_static_pvs_need_no_iam():
    p = plan(fsx(data_repository_path="s3://models/llama"))
    assert not [s for s in p.states() if s["type"].startswith("aws:iam/")]


def test_existing_security_group_is_used_as_is():
    p = plan(fsx(security_group_id="sg-0123456789abcdef0"))
    assert not p.by_type(SG) and not p.by_type(INGRESS) and not p.by_type(EGRESS)
    assert p.by_type(FS)[0]["inputs"]["securityGroupIds"] == ["sg-0123456789abcdef0"]


def test_explicit_cluster_facts_skip_the_cluster_lookup():
    p = plan(
        lambda: FsxLustreModelStore(
            "llama",
            {
                "readers": ["inference"],
                "vpc_id": "vpc-0000000a",
                "cluster_subnet_ids": ["subnet-0000000b"],
                "node_security_group_ids": ["sg-0000000c"],
                "region": "eu-west-1",
            },
        ),
        invokes={
            "aws:ec2/getSubnet:getSubnet": lambda a, c: {"id": a["id"], "vpcId": "vpc-0000000a"}
        },
    )
    assert "aws:eks/getCluster:getCluster" not in {i["token"] for i in p.invokes}
    assert p.by_type(FS)[0]["inputs"]["subnetIds"] == "subnet-0000000b"
    # region is the cluster's: the driver gets it for nodes where IMDS is blocked.
    assert p.by_type(RELEASE)[0]["inputs"]["values"]["controller"]["region"] == "eu-west-1"
    assert "aws:index/getRegion:getRegion" not in {i["token"] for i in p.invokes}


def test_data_repository_association_imports_new_changed_deleted():
    p = plan(fsx(data_repository_path="s3://acme-models/llama/"))
    (link,) = p.by_type(DRA)
    inputs = link["inputs"]
    assert inputs["dataRepositoryPath"] == "s3://acme-models/llama/"
    assert inputs["fileSystemPath"] == "/"
    assert inputs["s3"]["autoImportPolicy"]["events"] == ["NEW", "CHANGED", "DELETED"]
    assert "autoExportPolicy" not in inputs["s3"]
    assert inputs["deleteDataInFilesystem"] is False
    assert inputs["batchImportMetaDataOnCreate"] is True
    assert p.by_type(FS)[0]["urn"] in link["dependencies"]
    assert inputs["fileSystemId"] == UNKNOWN  # a preview: the id is known after apply


S3_MODEL = {"source": "s3://acme-models/llama-3.1-8b/v2", "revision": "v2"}
JOB = "kubernetes:batch/v1:Job"


def test_an_s3_model_is_imported_by_an_association_of_its_own_and_published_by_the_seed_job():
    """The association imports the source into revisions/<rev> (what readers mount), without
    automatic import (a published revision never changes) and keeping the files when it goes;
    the seed Job, the loader's writer, waits for it and only publishes (--publish imported);
    readers mount the revision behind the gate and get a verification Job as elsewhere."""
    built: list[Any] = []
    p = plan(
        lambda: built.append(
            FsxLustreModelStore(
                "llama",
                {
                    "cluster_name": CLUSTER,
                    "readers": ["inference"],
                    "model": S3_MODEL,
                    "imported_file_chunk_size_mib": 4096,
                },
            )
        )
    )
    (link,) = p.by_type(DRA)
    assert link["urn"].endswith("::llama-model-v2")
    inputs = link["inputs"]
    assert inputs["fileSystemPath"] == "/revisions/v2"
    assert inputs["dataRepositoryPath"] == "s3://acme-models/llama-3.1-8b/v2/"
    assert inputs["deleteDataInFilesystem"] is False
    assert inputs["batchImportMetaDataOnCreate"] is True
    assert inputs["importedFileChunkSize"] == 4096
    assert "s3" not in inputs  # no auto-import policy
    jobs = {j["inputs"]["metadata"]["name"]: j for j in p.by_type(JOB)}
    assert sorted(jobs) == ["llama-seed-v2", "llama-verify-v2"]
    seed = jobs["llama-seed-v2"]
    assert seed["inputs"]["metadata"]["namespace"] == "llama-loader"
    args = seed["inputs"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--publish") + 1] == "imported"
    assert args[args.index("--source") + 1] == S3_MODEL["source"]
    assert link["urn"] in seed["dependencies"]
    store = built[0]
    assert store.mount_for("inference").volume_mount["subPath"] == "revisions/v2"
    assert store.mount_for("llama-loader").read_only is False


def test_user_provisioned_metadata_and_hdd():
    p = plan(fsx(metadata_iops=24000))
    assert p.by_type(FS)[0]["inputs"]["metadataConfiguration"] == {
        "mode": "USER_PROVISIONED",
        "iops": 24000,
    }
    hdd = plan(
        fsx(
            deployment_type="PERSISTENT_1",
            storage_type="HDD",
            drive_cache_type="READ",
            per_unit_storage_throughput=40,
            storage_capacity_gib=3600,
        )
    ).by_type(FS)[0]["inputs"]
    assert (hdd["storageType"], hdd["driveCacheType"], hdd["perUnitStorageThroughput"]) == (
        "HDD",
        "READ",
        40,
    )
    assert "metadataConfiguration" not in hdd


def test_subnet_outside_the_cluster_vpc_fails_the_preview_before_anything_registers():
    def elsewhere(args, config):
        return {"id": args["id"], "vpcId": "vpc-0other"}

    vpc = f"vpc-{digest('vpc', 'us-west-2')}"
    # Nothing registered: the cluster's scope registers only with its first store.
    assert_refused(
        fsx(subnet_ids=["subnet-00000abc"]),
        f"llama: subnet_ids must be a subnet in the cluster's VPC {vpc} (it is in vpc-0other), "
        "got 'subnet-00000abc'",
        invokes={"aws:ec2/getSubnet:getSubnet": elsewhere},
    )


KMS_ARN = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

BAD_INPUTS = [
    (
        {"storage_capacity_gib": 3600},
        "llama: storage_capacity_gib must be 1200, 2400 or a multiple of 2400 for PERSISTENT_2, "
        "got 3600",
    ),
    (
        {"deployment_type": "SCRATCH_1", "storage_capacity_gib": 4800},
        "llama: storage_capacity_gib must be 1200, 2400 or a multiple of 3600 for SCRATCH_1, "
        "got 4800",
    ),
    (
        {"storage_capacity_gib": 0},
        "llama: storage_capacity_gib must be a positive whole number, got 0",
    ),
    (
        {"per_unit_storage_throughput": 200},
        "llama: per_unit_storage_throughput must be 125, 250, 500, 1000 MB/s/TiB for "
        "PERSISTENT_2 SSD, got 200",
    ),
    (
        {"deployment_type": "PERSISTENT_1", "per_unit_storage_throughput": 125},
        "llama: per_unit_storage_throughput must be 50, 100, 200 MB/s/TiB for PERSISTENT_1 SSD, "
        "got 125",
    ),
    (
        {"deployment_type": "SCRATCH_2", "per_unit_storage_throughput": 125},
        "llama: per_unit_storage_throughput must be unset for SCRATCH_2, got 125",
    ),
    (
        {"deployment_type": "PERSISTENT_1", "storage_type": "HDD", "storage_capacity_gib": 6000},
        "llama: drive_cache_type is missing; it must be NONE or READ when storage_type is HDD",
    ),
    (
        {"storage_type": "HDD", "drive_cache_type": "READ"},
        "llama: deployment_type must be PERSISTENT_1 when storage_type is HDD, got 'PERSISTENT_2'",
    ),
    (
        {"drive_cache_type": "READ"},
        "llama: drive_cache_type must be unset when storage_type is SSD, got 'READ'",
    ),
    (
        {
            "deployment_type": "PERSISTENT_1",
            "storage_type": "HDD",
            "drive_cache_type": "NONE",
            "storage_capacity_gib": 1800,
        },
        "llama: storage_capacity_gib must be a multiple of 6000 for PERSISTENT_1 HDD at "
        "12 MB/s/TiB, got 1800",
    ),
    (
        {"deployment_type": "PERSISTENT_3"},
        "llama: deployment_type must be one of PERSISTENT_2, PERSISTENT_1, SCRATCH_2, SCRATCH_1, "
        "got 'PERSISTENT_3'",
    ),
    (
        {"subnet_ids": ["subnet-0000000a", "subnet-0000000b"]},
        "llama: subnet_ids must be a list of exactly one subnet (a Lustre file system lives in "
        "one AZ), got ['subnet-0000000a', 'subnet-0000000b']",
    ),
    (
        {"subnet_ids": []},
        "llama: subnet_ids must be a list of exactly one subnet (a Lustre file system lives in "
        "one AZ), got []",
    ),
    (
        {"data_repository_path": "https://acme-models.s3.amazonaws.com/llama"},
        "llama: data_repository_path must be an S3 URI of the form s3://bucket[/prefix] with a "
        "valid bucket name, got 'https://acme-models.s3.amazonaws.com/llama'",
    ),
    (
        {"data_repository_path": "s3://Acme_Models/llama"},
        "llama: data_repository_path must be an S3 URI of the form s3://bucket[/prefix] with a "
        "valid bucket name, got 's3://Acme_Models/llama'",
    ),
    (
        {"data_repository_path": "s3://acme-models/llama", "file_system_path": "models"},
        "llama: file_system_path must be an absolute path starting with '/', got 'models'",
    ),
    (
        {
            "deployment_type": "SCRATCH_1",
            "data_repository_path": "s3://acme-models/llama",
        },
        "llama: data_repository_path must be unset for SCRATCH_1 or Lustre 2.10 (data repository "
        "associations need Lustre 2.12 or newer and a deployment type other than SCRATCH_1), "
        "got 's3://acme-models/llama'",
    ),
    (
        {"data_repository_path": "s3://acme-models/x", "auto_import_events": ["NEW", "MOVED"]},
        "llama: auto_import_events must be one of NEW, CHANGED, DELETED, got 'MOVED'",
    ),
    (
        {"deployment_type": "SCRATCH_2", "kms_key_arn": KMS_ARN},
        "llama: kms_key_arn must be unset for scratch deployment types (they always use an "
        f"AWS-owned key), got '{KMS_ARN}'",
    ),
    (
        {"file_system_type_version": "2.10"},
        "llama: file_system_type_version must be 2.12 or 2.15 for PERSISTENT_2, got '2.10'",
    ),
    (
        {"metadata_iops": 5000},
        "llama: metadata_iops must be 1500, 3000, 6000, or 12000 to 192000 in steps of 12000, "
        "got 5000",
    ),
    (
        {"deployment_type": "PERSISTENT_1", "metadata_iops": 1500},
        "llama: metadata_iops must be unset unless deployment_type is PERSISTENT_2 on Lustre "
        "2.15, got 1500",
    ),
    (
        {"driver_install": "kubectl"},
        "llama: driver_install must be one of helm, eks-addon, none, got 'kubectl'",
    ),
    (
        {"extra_mount_options": "flock"},
        "llama: extra_mount_options must be a list of strings, got 'flock'",
    ),
    (
        {"data_repository_path": "s3://acme-models/x", "auto_import_events": "NEW"},
        "llama: auto_import_events must be a list of strings, got 'NEW'",
    ),
    (
        {"kms_key_arn": "alias/models"},
        "llama: kms_key_arn must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key-id>; "
        "the provider takes the key's ARN), got 'alias/models'",
    ),
    (
        {"file_system_type_version": 2.15},
        "llama: file_system_type_version must be a string, got 2.15",
    ),
    (
        {"node_security_group_rules": "false"},
        "llama: node_security_group_rules must be true or false, got 'false'",
    ),
    (
        {"tags": ["team"]},
        "llama: tags must be a mapping of strings to strings, got ['team']",
    ),
    (
        {"node_security_group_ids": "sg-0123"},
        "llama: node_security_group_ids must be a list of strings, got 'sg-0123'",
    ),
    (
        {"node_security_group_ids": []},
        "llama: node_security_group_ids must be a non-empty list of ids, got []",
    ),
    (
        {"model": S3_MODEL, "data_repository_path": "s3://acme-models/shared/"},
        "llama: file_system_path must be a path outside /revisions and /.modelstore beside an "
        "s3:// model (its own data repository association is at /revisions/<revision>, and FSx "
        "refuses associations with overlapping file system paths), got '/'",
    ),
    (
        {
            "model": S3_MODEL,
            "data_repository_path": "s3://acme-models/shared/",
            "file_system_path": "/revisions/x",
        },
        "llama: file_system_path must be a path outside /revisions and /.modelstore beside an "
        "s3:// model (its own data repository association is at /revisions/<revision>, and FSx "
        "refuses associations with overlapping file system paths), got '/revisions/x'",
    ),
    (
        {"model": S3_MODEL, "deployment_type": "SCRATCH_1", "per_unit_storage_throughput": None},
        "llama: model.source must be an hf:// source on SCRATCH_1 or Lustre 2.10 (an s3:// "
        "model is imported by a data repository association, which needs Lustre 2.12 or newer "
        "and a deployment type other than SCRATCH_1), got 's3://acme-models/llama-3.1-8b/v2'",
    ),
    (
        {"cluster_subnet_ids": "subnet-00000abc"},
        "llama: cluster_subnet_ids must be a list of strings, got 'subnet-00000abc'",
    ),
]


@bad_inputs(BAD_INPUTS)
def test_bad_input_is_refused_with_an_exact_message_before_anything_registers(args, message):
    assert_refused(fsx(**args), message)


def test_unknown_field_names_the_allowed_ones():
    with pytest.raises(PlanError) as err:
        plan(fsx(storage_capacity=1200))
    assert str(err.value) == (
        "llama: field name must be one of the 39 fields listed by "
        "`modelstore fields FsxLustreModelStore` (nearest: storage_capacity_gib, storage_type, "
        "drive_cache_type), got 'storage_capacity'; did you mean `storage_capacity_gib`?"
    )


def test_two_bad_fields_are_reported_at_once_one_line_each():
    with pytest.raises(PlanError) as err:
        plan(fsx(storage_capacity_gib=3600, data_compression_type="ZSTD"))
    assert str(err.value) == (
        "llama: storage_capacity_gib must be 1200, 2400 or a multiple of 2400 for PERSISTENT_2, "
        "got 3600\n"
        "llama: data_compression_type must be one of LZ4, NONE, got 'ZSTD'"
    )
    assert [e.field for e in err.value.cause.errors] == [
        "storage_capacity_gib",
        "data_compression_type",
    ]
    assert [u.rsplit("::", 1)[-1] for u in err.value.registered] == ["modelstore-test"]


def test_validate_reports_every_bad_field_without_lookups():
    with pytest.raises(ModelStoreInputError) as err:
        FsxLustreModelStore.validate(
            "llama", {"readers": ["inference"], "deployment_type": "SCRATCH_2"}
        )
    assert str(err.value) == (
        "llama: cluster_name is missing; "
        "it must be the EKS cluster's name (or give vpc_id, cluster_subnet_ids "
        "and node_security_group_ids explicitly)"
    )


def test_extra_mount_options_are_added_to_flock_once():
    p = plan(fsx(extra_mount_options=["noatime", "flock", "noatime"]))
    for pv in p.by_type(PV):
        assert pv["inputs"]["spec"]["mountOptions"] == ["flock", "noatime"]


def test_deprecated_spellings_still_plan_and_warn():
    with pytest.warns(DeprecationWarning) as warned:
        p = plan(fsx(kms_key_id=KMS_ARN, mount_options=["noatime"], driver="helm"))
    messages = {str(w.message) for w in warned}
    assert {
        "llama: kms_key_id is deprecated, use kms_key_arn",
        "llama: mount_options is deprecated, use extra_mount_options",
        "llama: driver is deprecated, use driver_install",
    } <= messages
    assert p.by_type(FS)[0]["inputs"]["kmsKeyId"] == KMS_ARN
    # flock is now always kept: the old field's options are added to it.
    assert p.by_type(PV)[0]["inputs"]["spec"]["mountOptions"] == ["flock", "noatime"]
    assert len(p.by_type(RELEASE)) == 1
    assert "llama: kms_key_id is deprecated, use kms_key_arn" in {
        d["message"] for d in p.diagnostics
    }


def test_old_and_new_spelling_together_are_refused():
    with pytest.raises(PlanError) as err:
        plan(fsx(kms_key_id=KMS_ARN, kms_key_arn=KMS_ARN))
    assert str(err.value) == (
        f"llama: kms_key_id must be unset when kms_key_arn is given (it is its new name), "
        f"got '{KMS_ARN}'"
    )


def two_stores(**second: Any):
    def program():
        FsxLustreModelStore("llama", {"cluster_name": CLUSTER, "readers": ["inference"]})
        FsxLustreModelStore("mistral", {"cluster_name": CLUSTER, "readers": ["batch"], **second})

    return program


def test_two_stores_on_one_cluster_plan_one_driver_install_owned_by_the_cluster():
    p = plan(two_stores())
    (release,) = p.by_type(RELEASE)
    cluster = p.by_name(CLUSTER)
    assert cluster["type"] == "modelstore:index:EksCluster"
    assert release["urn"].rsplit("::", 1)[-1] == f"{CLUSTER}-aws-fsx-csi-driver"
    assert release["parent"] == cluster["urn"]
    assert release["inputs"]["name"] == "aws-fsx-csi-driver"
    # Both stores' volumes wait for the one install.
    pvs = p.by_type(PV)
    assert {pv["inputs"]["metadata"]["name"] for pv in pvs} == {"llama-inference", "mistral-batch"}
    for pv in pvs:
        assert release["urn"] in pv["dependencies"]
    # One lookup of the cluster for both stores.
    assert [i["token"] for i in p.invokes].count("aws:eks/getCluster:getCluster") == 1


def test_the_moved_driver_install_keeps_an_alias_to_its_old_name_under_the_first_store():
    p = plan(two_stores())
    first = p.by_name("llama")
    assert first["type"] == "modelstore:index:FsxLustreModelStore"
    aliases = p.by_name(f"{CLUSTER}-aws-fsx-csi-driver")["aliases"]
    assert aliases == [{"name": "llama-fsx-csi-driver", "parentUrn": first["urn"]}]


def test_a_second_store_without_an_install_of_its_own_waits_for_the_clusters():
    p = plan(two_stores(driver_install="none"))
    (release,) = p.by_type(RELEASE)
    for pv in p.by_type(PV):
        assert release["urn"] in pv["dependencies"]


def test_a_second_store_asking_for_another_install_is_refused_naming_both_stores():
    with pytest.raises(PlanError) as err:
        plan(two_stores(driver_install="eks-addon"))
    assert str(err.value) == (
        "mistral: driver_install must be helm chart aws-fsx-csi-driver 1.17.0 in kube-system, "
        "the install of fsx.csi.aws.com store 'llama' set on cluster 'prod-eks' (a driver is "
        "installed once per cluster), got 'eks-addon aws-fsx-csi-driver (the version EKS picks)'"
    )
    # Refused before the second store registers anything (the scope checks the install it
    # asks for right after its preflight).
    assert not [u for u in err.value.registered if "mistral" in u]


def test_a_store_joins_a_cluster_scope_the_program_made():
    def program():
        cluster = EksCluster("ml", {"cluster_name": CLUSTER})
        FsxLustreModelStore("llama", {"cluster": cluster, "readers": ["inference"]})

    p = plan(program)
    (release,) = p.by_type(RELEASE)
    assert release["urn"].rsplit("::", 1)[-1] == "ml-aws-fsx-csi-driver"
    assert release["parent"] == p.by_name("ml")["urn"]
    assert p.by_type(FS)[0]["inputs"]["subnetIds"] == CLUSTER_SUBNETS[0]


def test_the_component_registers_its_outputs():
    found: dict[str, Any] = {}

    def program():
        store = FsxLustreModelStore("llama", {"cluster_name": CLUSTER, "readers": ["inference"]})
        found.update(store.summary)

    plan(program)
    assert list(found) == [
        "fileSystemId",
        "dnsName",
        "mountName",
        "securityGroupId",
        "dataRepositoryAssociationId",
        "claimNames",
        "volumeNames",
        "mounts",
        "modelRevision",
        "modelManifestPath",
        "modelManifestSha256",
        "modelSeedJobName",
        "modelVerifyJobNames",
    ]
    assert all(isinstance(value, pulumi.Output) for value in found.values())
