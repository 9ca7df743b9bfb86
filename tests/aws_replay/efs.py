"""Amazon EFS: the file system and its lifecycle configuration, mount targets, access points,
the file system policy and the backup policy."""

from __future__ import annotations

import json
from typing import Any

from . import Replay, handles

# Pulumi's lifecycle policy keys -> the EFS API's; each API object holds one transition.
_LIFECYCLE_KEYS = {
    "transitionToIa": "TransitionToIA",
    "transitionToArchive": "TransitionToArchive",
    "transitionToPrimaryStorageClass": "TransitionToPrimaryStorageClass",
}


@handles("aws:efs/fileSystem:FileSystem")
def file_system(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    params: dict[str, Any] = {
        # Pulumi generates the token when none is given; the URN stands in for it here.
        "CreationToken": i.get("creationToken") or s["urn"][-64:],
        "Encrypted": i["encrypted"],
        "PerformanceMode": i["performanceMode"],
        "ThroughputMode": i["throughputMode"],
        "Tags": r.tags(i),
    }
    if "provisionedThroughputInMibps" in i:
        params["ProvisionedThroughputInMibps"] = i["provisionedThroughputInMibps"]
    if "kmsKeyId" in i:
        params["KmsKeyId"] = i["kmsKeyId"]
    client = r.client("efs")
    fs_id = client.create_file_system(**params)["FileSystemId"]
    policies = []
    for policy in i.get("lifecyclePolicies") or []:
        assert len(policy) == 1, f"{s['urn']}: one transition per lifecycle policy, got {policy}"
        ((key, value),) = policy.items()
        policies.append({_LIFECYCLE_KEYS[key]: value})
    if policies:
        client.put_lifecycle_configuration(FileSystemId=fs_id, LifecyclePolicies=policies)
    return fs_id


@handles("aws:efs/mountTarget:MountTarget")
def mount_target(r: Replay, s: dict[str, Any]) -> str:
    # moto refuses a second mount target in one availability zone, as AWS does.
    i = s["inputs"]
    return r.client("efs").create_mount_target(
        FileSystemId=r.ref(i["fileSystemId"], s["urn"]),
        SubnetId=r.ref(i["subnetId"], s["urn"]),
        SecurityGroups=r.ref(i["securityGroups"], s["urn"]),
    )["MountTargetId"]


@handles("aws:efs/accessPoint:AccessPoint")
def access_point(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    posix, root = i["posixUser"], i["rootDirectory"]
    creation = root["creationInfo"]
    params = {
        "ClientToken": s["urn"][-64:],
        "FileSystemId": r.ref(i["fileSystemId"], s["urn"]),
        "PosixUser": {"Uid": posix["uid"], "Gid": posix["gid"]},
        "RootDirectory": {
            "Path": root["path"],
            "CreationInfo": {
                "OwnerUid": creation["ownerUid"],
                "OwnerGid": creation["ownerGid"],
                "Permissions": creation["permissions"],
            },
        },
        "Tags": r.tags(i),
    }
    r.check_shape("efs", "CreateAccessPoint", params)
    return r.client("efs").create_access_point(**params)["AccessPointId"]


@handles("aws:efs/fileSystemPolicy:FileSystemPolicy")
def file_system_policy(r: Replay, s: dict[str, Any]) -> str:
    i = s["inputs"]
    fs_id = r.ref(i["fileSystemId"], s["urn"])
    document = json.loads(i["policy"])
    # The policy names the file system it guards, by the ARN the plan gave it.
    for statement in document["Statement"]:
        assert statement["Resource"].endswith(f"file-system/{i['fileSystemId']}"), statement
    r.client("efs").put_file_system_policy(FileSystemId=fs_id, Policy=i["policy"])
    return fs_id


@handles("aws:efs/backupPolicy:BackupPolicy")
def backup_policy(r: Replay, s: dict[str, Any]) -> str:
    # moto has no PutBackupPolicy: check the request against the EFS API model, and the
    # reference against the file system created above.
    i = s["inputs"]
    params = {
        "FileSystemId": r.ref(i["fileSystemId"], s["urn"]),
        "BackupPolicy": {"Status": i["backupPolicy"]["status"]},
    }
    r.check_shape("efs", "PutBackupPolicy", params)
    described = r.client("efs").describe_file_systems(FileSystemId=params["FileSystemId"])
    assert described["FileSystems"]
    return str(params["FileSystemId"])
