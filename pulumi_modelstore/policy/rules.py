"""The checks behind the policies: pure functions over resources (see :mod:`.core`).

Each check yields a :class:`.core.Finding` per violation, with a message that names the property,
the value found and what is allowed. A value still unknown in a preview is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import show
from ..kube.model_jobs import PREPARE_CAPABILITIES
from ..plan.compare import DATA_BEARING_TYPES
from ..store import ACCESS_LABEL, ALL_NETWORKS_MARK, UNPROTECTED_MARK
from .core import Finding, Resource, ResourceCheck, as_list, json_document, statements, unknown

Check = ResourceCheck

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
VOLUME_SNAPSHOT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot"
JOB = "kubernetes:batch/v1:Job"
CRON_JOB = "kubernetes:batch/v1:CronJob"
READ_ONLY = "read-only"


def found(value: Any) -> str:
    """A property's value as a finding shows it: as YAML writes it (``false``, quoted
    strings), ``unset`` where the resource does not set it."""
    return "unset" if value is None else show(value)


def marked(resource: Resource, mark: str) -> bool:
    """True when the store set opt-out ``mark`` on the resource: a tag (AWS, Azure), a label
    (GCP, Kubernetes ``metadata.labels``) or Azure metadata (dashes as underscores)."""
    places = (
        resource.get("tags"),
        resource.get("labels"),
        resource.get("metadata", "labels"),
        resource.get("metadata"),
    )
    keys = (mark, mark.replace("-", "_"))
    return any(isinstance(p, Mapping) and p.get(k) == "true" for p in places for k in keys)


# ---- readers read-only at every layer ------------------------------------------------------

# Drivers that refuse ReadOnlyMany: readers get ReadWriteMany with the volume's readOnly
# (aws-fsx-csi-driver and aws-efs-csi-driver accept ReadWriteOnce and ReadWriteMany only:
# FACTS.md, "Volume capability not supported").
WRITE_MODE_READERS = {"fsx.csi.aws.com": "ReadWriteMany", "efs.csi.aws.com": "ReadWriteMany"}
# Volume sources with no read-only access mode of their own: a node-local directory binds
# ReadWriteOnce, and only the pod's readOnly keeps readers from writing.
NODE_LOCAL_SOURCES = ("hostPath", "local")
# The driver's own read-only switch where it has one besides the CSI readOnly flag: Mountpoint
# takes writes unless mounted `read-only` (mountpoint-s3 CONFIGURATION.md), the NFS driver
# mounts `ro` only when told (csi-driver-nfs mounts with the PV's mountOptions).
DRIVER_READ_ONLY_OPTIONS = {"s3.csi.aws.com": "read-only", "nfs.csi.k8s.io": "ro"}
# Where each workload kind keeps its pod spec.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "kubernetes:core/v1:Pod": ("spec",),
    "kubernetes:apps/v1:Deployment": ("spec", "template", "spec"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template", "spec"),
    JOB: ("spec", "template", "spec"),
    CRON_JOB: ("spec", "jobTemplate", "spec", "template", "spec"),
}


def pod_spec(resource: Resource) -> Mapping[str, Any] | None:
    """The pod spec of a workload resource, None for other types."""
    path = POD_SPEC_PATHS.get(resource.type)
    spec = resource.get(*path) if path else None
    return spec if isinstance(spec, Mapping) else None


def containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every container of a pod spec: init containers first."""
    found = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        found += [c for c in as_list(spec.get(key)) if isinstance(c, Mapping)]
    return found


def _read_only(resource: Resource) -> bool:
    return resource.get("metadata", "labels", ACCESS_LABEL) == READ_ONLY


def _reader_modes(driver: str | None, source: Mapping[str, Any]) -> set[str]:
    """The access modes a read-only volume may bind with, by its driver (or source)."""
    if driver in WRITE_MODE_READERS:
        return {WRITE_MODE_READERS[driver]}
    if any(k in source for k in NODE_LOCAL_SOURCES):
        return {"ReadWriteOnce"}
    return {"ReadOnlyMany"}


def _modes_finding(what: str, modes: Any, allowed: set[str], driver: str | None) -> list[str]:
    if unknown(modes) or modes is None:
        return []
    bad = [m for m in as_list(modes) if m not in allowed]
    if not bad:
        return []
    by = f"driver {driver}" if driver else "its source"
    return [
        f"{what} accessModes {as_list(modes)} on a read-only consumer's volume: "
        f"{sorted(allowed)} (what {by} allows readers)"
    ]


def _volume_messages(pv: Resource) -> list[str]:
    spec = pv.get("spec") or {}
    csi = spec.get("csi") if isinstance(spec.get("csi"), Mapping) else None
    driver = csi.get("driver") if csi else None
    messages = _modes_finding(
        "PersistentVolume", spec.get("accessModes"), _reader_modes(driver, spec), driver
    )
    if csi is not None and csi.get("readOnly") is not True:
        messages.append(
            f"csi.readOnly is {found(csi.get('readOnly'))} on a read-only consumer's volume: true"
        )
    nfs = spec.get("nfs")
    if isinstance(nfs, Mapping) and nfs.get("readOnly") is not True:
        messages.append(
            f"nfs.readOnly is {found(nfs.get('readOnly'))} on a read-only consumer's volume: true"
        )
    option = DRIVER_READ_ONLY_OPTIONS.get(str(driver))
    options = spec.get("mountOptions")
    if option and not unknown(options) and option not in as_list(options):
        messages.append(
            f"mountOptions {as_list(options)} lack {option!r}: driver {driver} mounts a "
            f"read-only consumer's volume writable without it"
        )
    return messages


def readers_read_only(resources: Sequence[Resource]) -> Iterator[Finding]:
    """Readers' volumes, claims and pods are read-only at every layer: the PV's and claim's
    access modes (per the access label), the CSI (or NFS) ``readOnly`` flag and the driver's
    own read-only option on the PV, and ``readOnly`` on the pod's claim volume and on every
    container's mount of it."""
    volumes = {str(r.get("metadata", "name")): r for r in resources if r.type == PV}
    classes = {str(r.get("metadata", "name")): r for r in resources if r.type == STORAGE_CLASS}
    read_only_claims: set[tuple[str, str]] = set()
    for r in resources:
        if r.type == PV and _read_only(r):
            for message in _volume_messages(r):
                yield Finding(message, r.urn)
        elif r.type == PVC and _read_only(r):
            namespace = r.get("metadata", "namespace") or "default"
            read_only_claims.add((str(namespace), str(r.get("metadata", "name"))))
            spec = r.get("spec") or {}
            pv = volumes.get(str(spec.get("volumeName")))
            driver: Any = None
            source: Mapping[str, Any] = {}
            if pv is not None:
                source = pv.get("spec") or {}
                driver = pv.get("spec", "csi", "driver")
            elif str(spec.get("storageClassName")) in classes:
                driver = classes[str(spec.get("storageClassName"))].get("provisioner")
            for message in _modes_finding(
                "PersistentVolumeClaim",
                spec.get("accessModes"),
                _reader_modes(driver, source),
                driver,
            ):
                yield Finding(message, r.urn)
    for r in resources:
        spec = pod_spec(r)
        if spec is None:
            continue
        namespace = str(r.get("metadata", "namespace") or "default")
        for volume in as_list(spec.get("volumes")):
            claim = volume.get("persistentVolumeClaim") if isinstance(volume, Mapping) else None
            if not isinstance(claim, Mapping):
                continue
            key = (namespace, str(claim.get("claimName")))
            if key not in read_only_claims:
                continue
            name = volume.get("name")
            if claim.get("readOnly") is not True:
                yield Finding(
                    f"volume {name} mounts read-only claim {key[0]}/{key[1]} with "
                    f"persistentVolumeClaim.readOnly {found(claim.get('readOnly'))}: true",
                    r.urn,
                )
            for container in containers(spec):
                for mount in as_list(container.get("volumeMounts")):
                    if (
                        isinstance(mount, Mapping)
                        and mount.get("name") == name
                        and mount.get("readOnly") is not True
                    ):
                        yield Finding(
                            f"container {container.get('name')} mounts read-only claim "
                            f"{key[0]}/{key[1]} at {mount.get('mountPath')} with readOnly "
                            f"{found(mount.get('readOnly'))}: true",
                            r.urn,
                        )


# ---- no public storage, no storage open to every network ------------------------------------

PUBLIC_S3_ACLS = ("public-read", "public-read-write", "authenticated-read")
PUBLIC_GCP_MEMBERS = ("allUsers", "allAuthenticatedUsers")
S3_PUBLIC_ACCESS_FLAGS = (
    "blockPublicAcls",
    "blockPublicPolicy",
    "ignorePublicAcls",
    "restrictPublicBuckets",
)


def _everyone(principal: Any) -> bool:
    """An IAM principal that is anybody: ``"*"`` or ``{"AWS": "*"}``."""
    if principal == "*":
        return True
    return isinstance(principal, Mapping) and "*" in as_list(principal.get("AWS"))


def storage_private(r: Resource) -> Iterator[Finding]:
    """No bucket, container or storage account public, nor open to every network unless the
    user chose it (``allow_all_networks``: reported as an opt-out)."""
    t = r.type
    if t == "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock":
        for flag in S3_PUBLIC_ACCESS_FLAGS:
            value = r.get(flag)
            if value is not True and not unknown(value):
                yield Finding(f"{flag} is {found(value)}: true")
    elif t in (
        "aws:s3/bucket:Bucket",
        "aws:s3/bucketV2:BucketV2",
        "aws:s3/bucketAclV2:BucketAclV2",
    ):
        if r.get("acl") in PUBLIC_S3_ACLS:
            yield Finding(f"acl is {found(r.get('acl'))}: private (no public ACL)")
    elif t == "aws:s3/bucketPolicy:BucketPolicy":
        document = json_document(r.get("policy"))
        for label, s in statements(document or {}):
            if (
                s.get("Effect") == "Allow"
                and _everyone(s.get("Principal"))
                and not s.get("Condition")
            ):
                yield Finding(
                    f"statement {label} allows Principal {found(s.get('Principal'))}: name the "
                    f"principals"
                )
    elif t == "gcp:storage/bucket:Bucket":
        value = r.get("publicAccessPrevention")
        if value != "enforced" and not unknown(value):
            yield Finding(f"publicAccessPrevention is {found(value)}: 'enforced'")
        if r.get("uniformBucketLevelAccess") is not True and not unknown(
            r.get("uniformBucketLevelAccess")
        ):
            yield Finding(
                f"uniformBucketLevelAccess is {found(r.get('uniformBucketLevelAccess'))}: true (no "
                f"object ACLs)"
            )
    elif t in (
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        "gcp:storage/bucketIAMBinding:BucketIAMBinding",
    ):
        for member in [r.get("member"), *as_list(r.get("members"))]:
            if member in PUBLIC_GCP_MEMBERS:
                yield Finding(f"member {member!r} makes the bucket public: name the principals")
    elif t == "azure-native:storage:StorageAccount":
        if r.get("allowBlobPublicAccess") is not False and not unknown(
            r.get("allowBlobPublicAccess")
        ):
            allowed = found(r.get("allowBlobPublicAccess"))
            yield Finding(f"allowBlobPublicAccess is {allowed}: false")
        action = r.get("networkRuleSet", "defaultAction")
        if r.get("publicNetworkAccess") != "Disabled" and action != "Deny" and not unknown(action):
            yield Finding(
                f"networkRuleSet.defaultAction is {found(action)} with public network access on: "
                f"'Deny', admitting the node subnets or a private endpoint",
                opted_out=marked(r, ALL_NETWORKS_MARK),
            )
    elif t == "azure-native:storage:BlobContainer":
        access = r.get("publicAccess")
        if access not in (None, "None") and not unknown(access):
            yield Finding(f"publicAccess is {found(access)}: 'None'")


# ---- TLS where the protocol has it ----------------------------------------------------------

INSECURE_TRANSPORT = "aws:SecureTransport"
WEAK_AZURE_TLS = ("TLS1_0", "TLS1_1")


def denies_insecure_transport(document: Mapping[str, Any]) -> bool:
    """True when a resource policy denies every request made without TLS."""
    for _, s in statements(document):
        condition = s.get("Condition")
        if s.get("Effect") != "Deny" or not isinstance(condition, Mapping):
            continue
        flag = condition.get("Bool")
        if isinstance(flag, Mapping) and str(flag.get(INSECURE_TRANSPORT)).lower() == "false":
            return True
    return False


def tls_in_transit(r: Resource) -> Iterator[Finding]:
    """TLS where the protocol has it: EFS mounts keep encryption in transit (the driver's
    ``encryptInTransit``, default on, adds ``tls``: aws-efs-csi-driver
    examples/kubernetes/encryption_in_transit_static/README.md); S3 bucket and EFS file system
    policies deny requests without TLS; Mountpoint keeps its HTTPS endpoint; Azure Blob accounts
    take HTTPS only and TLS 1.2 at least. NFS on Azure Files (FileStorage accounts, where the
    account refuses NFS mounts with secure transfer on) and Lustre have no TLS to ask for; GCS
    has nothing to set: Cloud Storage's APIs, which gcsfuse calls, are HTTPS."""
    t = r.type
    if t == PV and r.get("spec", "csi", "driver") == "efs.csi.aws.com":
        value = r.get("spec", "csi", "volumeAttributes", "encryptInTransit")
        if str(value).lower() == "false":
            yield Finding(f"csi.volumeAttributes.encryptInTransit is {found(value)}: 'true' (TLS)")
    elif t == STORAGE_CLASS and r.get("provisioner") == "efs.csi.aws.com":
        value = r.get("parameters", "encryptInTransit")
        if str(value).lower() == "false":
            yield Finding(f"parameters.encryptInTransit is {found(value)}: 'true' (TLS)")
    if t == PV and r.get("spec", "csi", "driver") == "s3.csi.aws.com":
        for option in as_list(r.get("spec", "mountOptions")):
            if isinstance(option, str) and "http://" in option:
                yield Finding(
                    f"mount option {option!r} reaches S3 without TLS: an https:// endpoint"
                )
    if t in ("aws:s3/bucketPolicy:BucketPolicy", "aws:efs/fileSystemPolicy:FileSystemPolicy"):
        document = json_document(r.get("policy"))
        if document is not None and not denies_insecure_transport(document):
            yield Finding(
                f"the policy has no Deny on {INSECURE_TRANSPORT} false: add one so requests "
                f"without TLS are refused"
            )
    elif t == "azure-native:storage:StorageAccount":
        tls = r.get("minimumTlsVersion")
        if tls is None or tls in WEAK_AZURE_TLS:
            yield Finding(f"minimumTlsVersion is {found(tls)}: 'TLS1_2' or later")
        https = r.get("enableHttpsTrafficOnly")
        if r.get("kind") != "FileStorage" and https is False:
            yield Finding("enableHttpsTrafficOnly is false: true (HTTPS only)")


# ---- data encrypted, protected and retained --------------------------------------------------

# Cloud resources that hold a store's data (the one list, plan/compare.py's), without the
# Kubernetes objects: a PersistentVolume keeps its data through its reclaim policy, a claim
# through its volume, a VolumeSnapshot through retainOnDelete alone (EbsModelCache's ``protect``:
# protecting it would block the replacement a new model revision needs).
CLOUD_DATA_TYPES = frozenset(t for t in DATA_BEARING_TYPES if not t.startswith("kubernetes:"))


def data_encrypted(r: Resource) -> Iterator[Finding]:
    """Data-bearing resources encrypted at rest where encryption is a setting: EFS and EBS
    volumes (``encrypted``), EBS StorageClasses (``parameters.encrypted``), S3 default
    encryption, Azure storage services. FSx for Lustre, Cloud Storage, GCP disks and Azure
    Storage encrypt at rest always."""
    t = r.type
    if t in ("aws:efs/fileSystem:FileSystem", "aws:ebs/volume:Volume"):
        if r.get("encrypted") is not True and not unknown(r.get("encrypted")):
            yield Finding(f"encrypted is {found(r.get('encrypted'))}: true")
    elif t == STORAGE_CLASS and r.get("provisioner") == "ebs.csi.aws.com":
        value = r.get("parameters", "encrypted")
        if str(value).lower() != "true" and not unknown(value):
            yield Finding(f"parameters.encrypted is {found(value)}: 'true'")
    elif (
        t
        == "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
    ):
        algorithms = [
            r.get("rules", i, "applyServerSideEncryptionByDefault", "sseAlgorithm")
            for i in range(len(as_list(r.get("rules"))))
        ]
        if not any(algorithms):
            yield Finding(
                "no rule sets applyServerSideEncryptionByDefault.sseAlgorithm: AES256 or aws:kms"
            )
    elif t == "azure-native:storage:StorageAccount":
        services = r.get("encryption", "services")
        for service, setting in (services or {}).items() if isinstance(services, Mapping) else ():
            if isinstance(setting, Mapping) and setting.get("enabled") is False:
                yield Finding(f"encryption.services.{service}.enabled is false: true")


def data_protected(r: Resource) -> Iterator[Finding]:
    """Data-bearing resources protected and retained (``protect`` and ``retainOnDelete``) unless
    the user chose ``protect: false`` (the store's ``modelstore-unprotected`` mark: reported as
    an opt-out); VolumeSnapshots retained; static PersistentVolumes reclaimed by ``Retain``.
    ``retainOnDelete`` is judged where it is known (offline; see ``Resource.retain_on_delete``)."""
    opted_out = marked(r, UNPROTECTED_MARK)
    missing = []
    if r.type in CLOUD_DATA_TYPES and not r.protect:
        missing.append("protect")
    if (r.type in CLOUD_DATA_TYPES or r.type == VOLUME_SNAPSHOT) and r.retain_on_delete is False:
        missing.append("retainOnDelete")
    if missing:
        yield Finding(
            f"{' and '.join(missing)} not set on a data-bearing resource: set "
            f"{' and '.join(missing)} (the store's protect: true, its default)",
            opted_out=opted_out,
        )
    if r.type == PV:
        policy = r.get("spec", "persistentVolumeReclaimPolicy")
        if policy != "Retain" and not unknown(policy):
            yield Finding(f"spec.persistentVolumeReclaimPolicy is {found(policy)}: 'Retain'")


# ---- identity and network --------------------------------------------------------------------

WEB_IDENTITY = "sts:AssumeRoleWithWebIdentity"
STS_AUDIENCE = "sts.amazonaws.com"


def _pinned(condition: Any, suffix: str) -> Any:
    """The StringEquals value of the condition key ending in ``suffix``, None if not pinned
    (missing, or a wildcard)."""
    equals = condition.get("StringEquals") if isinstance(condition, Mapping) else None
    if not isinstance(equals, Mapping):
        return None
    for key, value in equals.items():
        if str(key).endswith(suffix):
            values = as_list(value)
            if values and all(isinstance(v, str) and "*" not in v and "?" not in v for v in values):
                return value
    return None


def irsa_trust_pinned(r: Resource) -> Iterator[Finding]:
    """Every IRSA trust (``sts:AssumeRoleWithWebIdentity``) pins the service account
    (``<issuer>:sub``) and the audience (``<issuer>:aud`` = ``sts.amazonaws.com``) with
    StringEquals (terraform-aws-modules/iam ``iam-role-for-service-accounts``)."""
    if r.type != "aws:iam/role:Role":
        return
    document = json_document(r.get("assumeRolePolicy"))
    for label, s in statements(document or {}):
        if s.get("Effect") != "Allow" or WEB_IDENTITY not in as_list(s.get("Action")):
            continue
        condition = s.get("Condition")
        if _pinned(condition, ":sub") is None:
            yield Finding(
                f"statement {label} trusts web identities without StringEquals on <issuer>:sub "
                f"(the service account)"
            )
        aud = _pinned(condition, ":aud")
        if aud is None or as_list(aud) != [STS_AUDIENCE]:
            yield Finding(
                f"statement {label} trusts web identities with <issuer>:aud {found(aud)}: "
                f"StringEquals {STS_AUDIENCE!r}"
            )


EVERYWHERE = ("0.0.0.0/0", "::/0")


def no_open_ingress(r: Resource) -> Iterator[Finding]:
    """No security group rule admits 0.0.0.0/0 or ::/0: a store admits the nodes' group or
    subnets."""
    rules: list[Mapping[str, Any]] = []
    ingress_rule = (
        r.type == "aws:ec2/securityGroupRule:SecurityGroupRule" and r.get("type") == "ingress"
    )
    if r.type == "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule" or ingress_rule:
        rules = [r.props]
    elif r.type == "aws:ec2/securityGroup:SecurityGroup":
        rules = [x for x in as_list(r.get("ingress")) if isinstance(x, Mapping)]
    for rule in rules:
        sources = [rule.get("cidrIpv4"), rule.get("cidrIpv6")]
        sources += as_list(rule.get("cidrBlocks")) + as_list(rule.get("ipv6CidrBlocks"))
        for source in sources:
            if source in EVERYWHERE:
                protocol = rule.get("ipProtocol") or rule.get("protocol")
                ports = f"{rule.get('fromPort')}-{rule.get('toPort')}"
                yield Finding(
                    f"ingress {protocol} {ports} from {source}: admit the nodes' security group "
                    f"or subnets"
                )


# IAM actions with no resource-level scope, which only Resource "*" can grant: EC2's Describe
# actions (docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html: no
# resource types for Describe*).
UNSCOPED_ACTION_PREFIXES = ("ec2:Describe",)
POLICY_TYPES = (
    "aws:iam/rolePolicy:RolePolicy",
    "aws:iam/policy:Policy",
    "aws:s3/bucketPolicy:BucketPolicy",
    "aws:efs/fileSystemPolicy:FileSystemPolicy",
)


def iam_least_privilege(r: Resource) -> Iterator[Finding]:
    """No store policy allows every action (``*``, ``<service>:*``), nor Resource ``*`` without
    a condition for actions that have a resource scope."""
    if r.type not in POLICY_TYPES:
        return
    document = json_document(r.get("policy"))
    for label, s in statements(document or {}):
        if s.get("Effect") != "Allow":
            continue
        actions = [str(a) for a in as_list(s.get("Action"))]
        for action in actions:
            if action == "*" or action.endswith(":*"):
                yield Finding(f"statement {label} allows {found(action)}: name the actions")
        scoped = [a for a in actions if not a.startswith(UNSCOPED_ACTION_PREFIXES)]
        if "*" in as_list(s.get("Resource")) and scoped and not s.get("Condition"):
            yield Finding(
                f"statement {label} allows {scoped} on Resource '*': scope it to the store's "
                f"ARNs or a condition"
            )


# ---- Jobs run non-root -----------------------------------------------------------------------


ROOT_ALLOWED = (
    "a runAsUser other than 0, or as root only to hand files over: capabilities drop ALL, add "
    f"only {', '.join(PREPARE_CAPABILITIES)}, allowPrivilegeEscalation false"
)


def hands_files_over(security: Mapping[str, Any]) -> bool:
    """A root container that can do no more than change owners and modes (a store's prepare
    step, ``kube/model_jobs.prepare_container``): every capability dropped but
    ``PREPARE_CAPABILITIES``, no privilege escalation."""
    caps = security.get("capabilities")
    caps = caps if isinstance(caps, Mapping) else {}
    added = as_list(caps.get("add"))
    return (
        "ALL" in as_list(caps.get("drop"))
        and set(added) <= set(PREPARE_CAPABILITIES)
        and security.get("allowPrivilegeEscalation") is False
    )


def jobs_non_root(r: Resource) -> Iterator[Finding]:
    """Every container of a Job (or a CronJob's) runs non-root: ``runAsNonRoot: true`` or a
    ``runAsUser`` other than 0, on the container or the pod; ``runAsUser: 0`` only for a
    container that can do nothing but hand files over (:func:`hands_files_over`)."""
    if r.type not in (JOB, CRON_JOB):
        return
    spec = pod_spec(r)
    if spec is None:
        return
    given = spec.get("securityContext")
    pod: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    for container in containers(spec):
        own = container.get("securityContext")
        own = own if isinstance(own, Mapping) else {}
        user = own.get("runAsUser", pod.get("runAsUser"))
        non_root = own.get("runAsNonRoot", pod.get("runAsNonRoot"))
        name = container.get("name")
        if user == 0:
            if not hands_files_over(own):
                yield Finding(f"container {name} runs as root (runAsUser 0): {ROOT_ALLOWED}")
        elif non_root is not True and not (isinstance(user, int) and user > 0):
            yield Finding(
                f"container {name} may run as root (runAsNonRoot {found(non_root)}, runAsUser "
                f"{found(user)}): runAsNonRoot true or a runAsUser other than 0, on the pod or the "
                f"container"
            )
