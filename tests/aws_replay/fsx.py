"""FSx for Lustre: the file system, and its S3 data repository association."""

from __future__ import annotations

from typing import Any

from . import Replay, handles


@handles("aws:fsx/lustreFileSystem:LustreFileSystem")
def lustre(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    lustre: dict[str, Any] = {
        "DeploymentType": i["deploymentType"],
        "DataCompressionType": i["dataCompressionType"],
    }
    for key, name in (
        ("perUnitStorageThroughput", "PerUnitStorageThroughput"),
        ("driveCacheType", "DriveCacheType"),
        ("automaticBackupRetentionDays", "AutomaticBackupRetentionDays"),
        ("dailyAutomaticBackupStartTime", "DailyAutomaticBackupStartTime"),
        ("copyTagsToBackups", "CopyTagsToBackups"),
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
        "SubnetIds": [r.ref(i["subnetIds"], s["urn"])],
        "SecurityGroupIds": r.ref(i["securityGroupIds"], s["urn"]),
        "FileSystemTypeVersion": i["fileSystemTypeVersion"],
        "LustreConfiguration": lustre,
        "Tags": r.tags(i),
    }
    if "kmsKeyId" in i:
        params["KmsKeyId"] = i["kmsKeyId"]
    fs = r.client("fsx").create_file_system(**params)["FileSystem"]
    groups = r.client("ec2").describe_security_groups(GroupIds=params["SecurityGroupIds"])
    assert len(groups["SecurityGroups"]) == len(params["SecurityGroupIds"])
    return fs["FileSystemId"]


@handles("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
def data_repository_association(r: Replay, s: dict[str, Any]) -> str:
    # moto has no DRA API: check the request against the FSx API model, and the reference
    # against the file system created above.
    i = s["inputs"]
    params = {
        "FileSystemId": r.ref(i["fileSystemId"], s["urn"]),
        "FileSystemPath": i["fileSystemPath"],
        "DataRepositoryPath": i["dataRepositoryPath"],
        "BatchImportMetaDataOnCreate": i["batchImportMetaDataOnCreate"],
        "Tags": r.tags(i),
    }
    # Optional in the API: a pinned revision's association imports once and watches nothing.
    if "s3" in i:
        params["S3"] = {"AutoImportPolicy": {"Events": i["s3"]["autoImportPolicy"]["events"]}}
    r.check_shape("fsx", "CreateDataRepositoryAssociation", params)
    described = r.client("fsx").describe_file_systems(FileSystemIds=[params["FileSystemId"]])
    assert described["FileSystems"]
    return s["id"]
