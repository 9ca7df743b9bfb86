"""Which input changes force a resource to be replaced rather than updated in place, and
whether the replacement deletes the old resource first.

The one table of force-new properties for every resource type this library creates, each entry
taken from the provider's own rules and cited beside it:

- pulumi-aws and pulumi-gcp are bridged from the Terraform providers: a property whose schema
  says ``ForceNew: true`` (or, in plugin-framework resources, ``RequiresReplace()``) replaces the
  resource when it changes. Sources: hashicorp/terraform-provider-aws ``internal/service/...`` and
  hashicorp/terraform-provider-google ``google/...``, at the commits named below.
- azure-native: the provider's ``forceNewMap`` (pulumi/pulumi-azure-native
  ``provider/pkg/gen/replacement.go``), and the ARM rule that a resource's id is built from its
  URL path parameters (resource group, account name, ...): another id is another resource.
- Kubernetes: pulumi-kubernetes' ``forceNew`` table and ``metadataForceNewProperties``
  (pulumi/pulumi-kubernetes ``provider/pkg/provider/diff.go``, 94977969), and its Helm release
  diff (``provider/pkg/provider/helm_release.go``: ``.name``, ``.namespace``).

Paths are the camelCase input paths of the plan (``deploymentType``,
``customPlacementConfig.dataLocations``, ``spec.csi``); a change at, under or above a listed path
forces replacement. Only properties read in a source are listed: a type missing here, or a
property missing from its entry, is updated in place. Every ``aws:s3/*``, ``aws:vpc/*`` and
``aws:eks/*`` type the library creates has been read. Not read: the per-resource ``region``
input of pulumi-aws 7 (the S3 resources set it, see the golden plans), so a change of
``region`` alone shows as an in-place update here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..validation import quantity

Inputs = Mapping[str, Any]


@dataclass(frozen=True)
class When:
    """A property that forces replacement only under a condition the provider checks in its
    diff (Terraform ``CustomizeDiff`` calling ``ForceNew``, or a plugin-framework ``ModifyPlan``
    setting ``RequiresReplace``)."""

    path: str
    applies: Callable[[Inputs, Inputs], bool]
    why: str


Rule = str | When

# hashicorp/terraform-provider-aws internal/service/fsx/lustre_file_system.go (06ee53d9):
# storage_capacity forces a new file system when it shrinks or the deployment is SCRATCH_1
# (resourceLustreFileSystemSchemaCustomizeDiff); growing it is an in-place update.
_LUSTRE_CAPACITY = When(
    "storageCapacity",
    lambda old, new: (
        _number(new.get("storageCapacity")) < _number(old.get("storageCapacity"))
        or new.get("deploymentType") == "SCRATCH_1"
    ),
    "storage capacity shrinks, or the deployment type is SCRATCH_1",
)


# hashicorp/terraform-provider-aws internal/service/ec2/vpc_security_group_ingress_rule.go
# (d2b7f56a), securityGroupRuleResource.ModifyPlan, shared by the egress rule: "When you modify a
# rule, you cannot change the rule's source type": when the source attribute set (the first of
# cidr_ipv4, cidr_ipv6, prefix_list_id, referenced_security_group_id that is not null, as in
# sourceAttributeName) differs between state and plan, the old and the new one require
# replacement. Another value of the same source is an in-place ModifySecurityGroupRules.
_RULE_SOURCES = ("cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId")


def _rule_source(inputs: Inputs) -> str:
    return next((name for name in _RULE_SOURCES if inputs.get(name) is not None), "")


_RULE_SOURCE_TYPE = tuple(
    When(
        source,
        lambda old, new: _rule_source(old) != _rule_source(new),
        "the rule's source type changes",
    )
    for source in _RULE_SOURCES
)


# hashicorp/terraform-provider-aws internal/service/s3/bucket.go (0070bcd1): bucket,
# bucket_prefix, object_lock_configuration.object_lock_enabled ForceNew: true; (4c72bcc7): the
# top-level object_lock_enabled ForceNew: true ("S3 Object Lock can only be enabled on bucket
# creation"), and object_lock_configuration.object_lock_enabled still ForceNew. Both Pulumi
# bucket types (Bucket, BucketV2) take these fields from it.
_S3_BUCKET: tuple[Rule, ...] = (
    "bucket",
    "bucketPrefix",
    "objectLockEnabled",
    "objectLockConfiguration.objectLockEnabled",
)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")  # unknown: comparisons are false, so no replacement is claimed


FORCE_NEW: dict[str, tuple[Rule, ...]] = {
    # --- AWS (hashicorp/terraform-provider-aws) ---
    # internal/service/fsx/lustre_file_system.go (06ee53d9): ForceNew: true
    "aws:fsx/lustreFileSystem:LustreFileSystem": (
        "backupId",
        "copyTagsToBackups",
        "deploymentType",
        "driveCacheType",
        "exportPath",
        "fileSystemTypeVersion",
        "importPath",
        "importedFileChunkSize",
        "kmsKeyId",
        "perUnitStorageThroughput",
        "securityGroupIds",
        "storageType",
        "subnetIds",
        _LUSTRE_CAPACITY,
    ),
    # internal/service/fsx/data_repository_association.go (0a774656): ForceNew: true
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": (
        "dataRepositoryPath",
        "fileSystemId",
        "fileSystemPath",
    ),
    # internal/service/efs/file_system.go (0389f467): ForceNew: true
    "aws:efs/fileSystem:FileSystem": (
        "availabilityZoneName",
        "creationToken",
        "encrypted",
        "kmsKeyId",
        "performanceMode",
    ),
    # internal/service/efs/backup_policy.go (0053447c): file_system_id ForceNew: true
    "aws:efs/backupPolicy:BackupPolicy": ("fileSystemId",),
    # internal/service/efs/file_system_policy.go (087097a6): file_system_id ForceNew: true
    "aws:efs/fileSystemPolicy:FileSystemPolicy": ("fileSystemId",),
    # internal/service/efs/access_point.go (01606926): ForceNew: true
    "aws:efs/accessPoint:AccessPoint": ("fileSystemId", "posixUser", "rootDirectory"),
    # internal/service/efs/mount_target.go (0593466d): ForceNew: true (securityGroups is
    # updated in place: ModifyMountTargetSecurityGroups)
    "aws:efs/mountTarget:MountTarget": ("fileSystemId", "ipAddress", "subnetId"),
    "aws:s3/bucket:Bucket": _S3_BUCKET,
    "aws:s3/bucketV2:BucketV2": _S3_BUCKET,
    # internal/service/s3/bucket_policy.go (0073593e): bucket ForceNew: true
    "aws:s3/bucketPolicy:BucketPolicy": ("bucket",),
    # internal/service/s3/bucket_versioning.go (01c08000): bucket, expected_bucket_owner
    "aws:s3/bucketVersioning:BucketVersioning": ("bucket", "expectedBucketOwner"),
    "aws:s3/bucketVersioningV2:BucketVersioningV2": ("bucket", "expectedBucketOwner"),
    # internal/service/s3/bucket_public_access_block.go (01606926): bucket ForceNew: true (the
    # four block_*/ignore_*/restrict_* flags and skip_destroy are updated in place)
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": ("bucket",),
    # internal/service/s3/bucket_ownership_controls.go (01c08000): bucket ForceNew: true (rule
    # is updated in place: PutBucketOwnershipControls)
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": ("bucket",),
    # internal/service/s3/bucket_server_side_encryption_configuration.go (01606926): bucket,
    # expected_bucket_owner ForceNew: true (rule is updated in place: PutBucketEncryption)
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        "bucket",
        "expectedBucketOwner",
    ),
    # internal/service/iam/role.go (0040ea69): name, name_prefix, path ForceNew: true
    "aws:iam/role:Role": ("name", "namePrefix", "path"),
    # internal/service/iam/role_policy.go (02f97af8): name, name_prefix, role ForceNew: true
    "aws:iam/rolePolicy:RolePolicy": ("name", "namePrefix", "role"),
    # internal/service/ec2/vpc_security_group.go (01606926): description, name, name_prefix,
    # vpc_id ForceNew: true
    "aws:ec2/securityGroup:SecurityGroup": ("description", "name", "namePrefix", "vpcId"),
    # internal/service/ec2/vpc_security_group_ingress_rule.go (d2b7f56a), the schema of
    # securityGroupRuleResource, which vpc_security_group_egress_rule.go (0810b274) embeds:
    # security_group_id RequiresReplace(); a change of the source type (ModifyPlan, above).
    # description, ports, ip_protocol and a new value of the same source are updated in place.
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (
        "securityGroupId",
        *_RULE_SOURCE_TYPE,
    ),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": (
        "securityGroupId",
        *_RULE_SOURCE_TYPE,
    ),
    # internal/service/eks/pod_identity_association.go (00a35305): RequiresReplace() on
    # cluster_name, namespace, service_account (role_arn is updated in place)
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": (
        "clusterName",
        "namespace",
        "serviceAccount",
    ),
    # internal/service/eks/addon.go (00a35305): addon_name, cluster_name ForceNew: true
    # (addon_version, configuration_values, pod_identity_association and
    # service_account_role_arn are updated in place: UpdateAddon)
    "aws:eks/addon:Addon": ("addonName", "clusterName"),
    # --- Google Cloud (hashicorp/terraform-provider-google, e03b7622) ---
    # google/services/storage/resource_storage_bucket.go: ForceNew: true on name, location,
    # project, enable_object_retention, custom_placement_config.data_locations,
    # hierarchical_namespace (and its enabled)
    "gcp:storage/bucket:Bucket": (
        "name",
        "location",
        "project",
        "enableObjectRetention",
        "customPlacementConfig.dataLocations",
        "hierarchicalNamespace",
    ),
    # google/tpgiamresource/resource_iam_member.go: role, member, condition ForceNew: true;
    # google/services/storage/iam_storage_bucket.go: bucket ForceNew: true
    "gcp:storage/bucketIAMMember:BucketIAMMember": ("bucket", "role", "member", "condition"),
    # resource_iam_member.go as above; google/services/kms/iam_kms_crypto_key.go: crypto_key_id
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": (
        "cryptoKeyId",
        "role",
        "member",
        "condition",
    ),
    # resource_iam_member.go as above; google/services/resourcemanager/iam_service_account.go:
    # service_account_id ForceNew: true
    "gcp:serviceaccount/iAMMember:IAMMember": (
        "serviceAccountId",
        "role",
        "member",
        "condition",
    ),
    # google/services/resourcemanager/resource_google_service_account.go: account_id, project
    "gcp:serviceaccount/account:Account": ("accountId", "project"),
    # --- Azure (pulumi/pulumi-azure-native provider/pkg/gen/replacement.go, 1b7112af) ---
    # forceNewMap["Storage"]["StorageAccount"] = {isHnsEnabled, location} (``kind`` is not in
    # it: an account's kind is upgraded in place); accountName and resourceGroupName are the
    # URL path parameters that make the ARM resource id.
    "azure-native:storage:StorageAccount": (
        "isHnsEnabled",
        "location",
        "accountName",
        "resourceGroupName",
    ),
    # forceNewMap["Storage"]["BlobContainer"] is empty ("no force-news"); the path parameters
    # make the id.
    "azure-native:storage:BlobContainer": ("accountName", "containerName", "resourceGroupName"),
    # Not in forceNewMap: the path parameters make the id.
    "azure-native:storage:FileShare": ("accountName", "shareName", "resourceGroupName"),
    "azure-native:storage:BlobServiceProperties": (
        "accountName",
        "blobServicesName",
        "resourceGroupName",
    ),
    # forceNewMap["Authorization"]["RoleAssignment"] = {principalId, scope}; roleAssignmentName
    # is the other path parameter (PUT {scope}/providers/Microsoft.Authorization/
    # roleAssignments/{roleAssignmentName}).
    "azure-native:authorization:RoleAssignment": ("principalId", "scope", "roleAssignmentName"),
    # Not in forceNewMap: the path parameters make the id.
    "azure-native:managedidentity:UserAssignedIdentity": ("resourceGroupName", "resourceName"),
    "azure-native:managedidentity:FederatedIdentityCredential": (
        "federatedIdentityCredentialResourceName",
        "resourceGroupName",
        "resourceName",
    ),
    # forceNewMap["Network"]["PrivateEndpoint"] = {subnet}; the path parameters make the id.
    "azure-native:network:PrivateEndpoint": ("subnet", "privateEndpointName", "resourceGroupName"),
    "azure-native:network:PrivateDnsZoneGroup": (
        "privateDnsZoneGroupName",
        "privateEndpointName",
        "resourceGroupName",
    ),
    "azure-native:privatedns:PrivateZone": ("privateZoneName", "resourceGroupName"),
    "azure-native:privatedns:VirtualNetworkLink": (
        "privateZoneName",
        "resourceGroupName",
        "virtualNetworkLinkName",
    ),
    # --- Kubernetes (pulumi/pulumi-kubernetes provider/pkg/provider/diff.go, 94977969) ---
    # core/v1 PersistentVolume: the volume sources (Kubernetes itself refuses changes to
    # spec.persistentVolumeSource after creation).
    "kubernetes:core/v1:PersistentVolume": tuple(
        f"spec.{source}"
        for source in (
            "awsElasticBlockStore",
            "azureDisk",
            "azureFile",
            "cephfs",
            "cinder",
            "csi",
            "fc",
            "flexVolume",
            "flocker",
            "gcePersistentDisk",
            "glusterfs",
            "hostPath",
            "iscsi",
            "local",
            "nfs",
            "photonPersistentDisk",
            "portworxVolume",
            "quobyte",
            "rbd",
            "scaleIO",
            "storageos",
            "vsphereVolume",
        )
    ),
    "kubernetes:core/v1:PersistentVolumeClaim": (
        "spec.accessModes",
        "spec.selector",
        "spec.storageClassName",
        "spec.volumeName",
    ),
    "kubernetes:core/v1:Secret": ("type",),
    "kubernetes:storage.k8s.io/v1:StorageClass": ("parameters", "provisioner"),
    "kubernetes:batch/v1:Job": (
        "spec.completions",
        "spec.parallelism",
        "spec.selector",
        "spec.template",
    ),
    "kubernetes:apps/v1:Deployment": ("spec.selector",),
    "kubernetes:apps/v1:DaemonSet": ("spec.selector",),
    "kubernetes:apps/v1:StatefulSet": (
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
        "spec.selector",
        "spec.serviceName",
        "spec.volumeClaimTemplates",
    ),
    # provider/pkg/provider/helm_release.go: forceNewFields := {".name", ".namespace"}
    "kubernetes:helm.sh/v3:Release": ("name", "namespace"),
}

# diff.go metadataForceNewProperties(".metadata"), applied to every Kubernetes object (and
# provider.go: "Changing the identity of the resource always causes a replacement").
KUBERNETES_IDENTITY: tuple[str, ...] = ("metadata.name", "metadata.namespace")


def rules_for(type_: str) -> tuple[Rule, ...]:
    rules = FORCE_NEW.get(type_, ())
    if type_.startswith("kubernetes:") and type_ != "kubernetes:helm.sh/v3:Release":
        rules = KUBERNETES_IDENTITY + rules
    return rules


_INDEX = re.compile(r"\[\d+\]")


def _overlaps(changed: str, rule: str) -> bool:
    """``changed`` is the rule's path, under it, or a whole value holding it."""
    changed = _INDEX.sub("[*]", changed)
    for a, b in ((changed, rule), (rule, changed)):
        if a == b or a.startswith(b + ".") or a.startswith(b + "["):
            return True
    return False


def forcing(
    type_: str,
    changed: Iterable[str],
    old: Inputs,
    new: Inputs,
    replace_on_changes: Iterable[str] = (),
) -> list[str]:
    """The changed paths that force a replacement of a ``type_`` resource, each with why: the
    provider's rule, or the resource's own ``replaceOnChanges`` option."""
    reasons: list[str] = []
    extra = list(replace_on_changes)
    for path in changed:
        for rule in rules_for(type_):
            if isinstance(rule, When):
                if _overlaps(path, rule.path) and rule.applies(old, new):
                    reasons.append(f"{path} ({rule.why})")
                    break
            elif _overlaps(path, rule):
                reasons.append(path)
                break
        else:
            if any(r == "*" or _overlaps(path, r) for r in extra):
                reasons.append(f"{path} (replaceOnChanges)")
    return reasons


def deletes_before_replacing(type_: str, old: Inputs, new: Inputs, option: bool) -> bool:
    """Whether replacing a ``type_`` resource deletes the old one before creating the new one:
    its ``deleteBeforeReplace`` option, or for a Kubernetes object pulumi-kubernetes' own rule
    (provider/pkg/provider/provider.go Diff, 94977969: an object named in ``metadata.name``, not
    ``generateName``, whose name and namespace stay; two objects cannot share a name). Other
    providers' requests are not read: False, create before delete (the engine's default)."""
    if option:
        return True
    if not type_.startswith("kubernetes:") or type_ == "kubernetes:helm.sh/v3:Release":
        return False
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    return bool(new_meta.get("name")) and all(
        old_meta.get(key) == new_meta.get(key) for key in ("name", "namespace")
    )


# --- Updates the cluster refuses ---------------------------------------------------------------
# pulumi-kubernetes sends these as in-place updates (they are not in its forceNew table above),
# and the API server refuses them, so `pulumi up` fails at the object. The library's own objects
# avoid them (kube/volumes.py: replace_on_changes on the PV, ignore_changes on the claim's
# request); a plan that still has one is blocked. From k8s.io/kubernetes
# pkg/apis/core/validation/validation.go (ValidatePersistentVolumeUpdate,
# ValidatePersistentVolumeClaimUpdate) and the PersistentVolumeClaimResize admission plugin
# (plugin/pkg/admission/storage/persistentvolume/resize/admission.go).

# StorageClass name -> its allowVolumeExpansion, for the classes a plan creates.
Classes = Mapping[str, Any]


def _at(inputs: Inputs, path: str) -> Any:
    value: Any = inputs
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


_REQUEST = "spec.resources.requests.storage"


def _request_change(old: Inputs, new: Inputs, classes: Classes) -> str:
    """Why Kubernetes refuses the change of a claim's storage request, or ''."""
    before, after = quantity(_at(old, _REQUEST)), quantity(_at(new, _REQUEST))
    if before is None or after is None:
        return ""  # unknown: not claimed
    if after < before:
        # ValidatePersistentVolumeClaimUpdate: "field can not be less than previous value" (or,
        # recovering from a failed expansion, not below status.capacity: never a shrink).
        return "a claim's storage request cannot shrink"
    class_name = _at(new, "spec.storageClassName")
    if after > before and (
        class_name == "" or (class_name in classes and classes[class_name] is not True)
    ):
        # admission.go allowResize: only a claim whose StorageClass has allowVolumeExpansion
        # true may grow; class "" (a static volume) never. A class the plan does not create
        # cannot be read here: not claimed.
        return (
            "a claim grows only when its StorageClass allows volume expansion"
            f" ({json.dumps(class_name)} does not)"
        )
    return ""


# type -> (path, why Kubernetes refuses a change there, given the old and new inputs and the
# plan's classes; '' when it accepts it)
REFUSED_UPDATES: dict[str, tuple[tuple[str, Callable[[Inputs, Inputs, Classes], str]], ...]] = {
    "kubernetes:core/v1:PersistentVolume": (
        # ValidateImmutableField(newPv.Spec.VolumeMode, oldPv.Spec.VolumeMode)
        ("spec.volumeMode", lambda old, new, c: "a volume's volumeMode is immutable"),
        # "Allow setting NodeAffinity if oldPv NodeAffinity was not set"; a set one is
        # immutable unless the alpha MutablePVNodeAffinity gate (Kubernetes 1.35, off by
        # default) is on.
        (
            "spec.nodeAffinity",
            lambda old, new, c: (
                "a volume's nodeAffinity is immutable once set"
                if _at(old, "spec.nodeAffinity") is not None
                else ""
            ),
        ),
    ),
    "kubernetes:core/v1:PersistentVolumeClaim": (
        (_REQUEST, _request_change),
        # "spec is immutable after creation except resources.requests and
        # volumeAttributesClassName for bound claims"; ValidateImmutableField on volumeMode.
        *(
            (path, lambda old, new, c: "a claim's spec is immutable but for its requests")
            for path in ("spec.volumeMode", "spec.dataSource", "spec.dataSourceRef")
        ),
    ),
}


def refused_update(
    type_: str, changed: Iterable[str], old: Inputs, new: Inputs, classes: Classes
) -> list[str]:
    """The changed paths of an in-place update the cluster refuses, each with why."""
    reasons: list[str] = []
    for path in changed:
        for rule, why in REFUSED_UPDATES.get(type_, ()):
            if _overlaps(path, rule):
                reason = why(old, new, classes)
                if reason:
                    reasons.append(f"{path} ({reason})")
                break
    return reasons
