"""``modelstore plan --timeline``: ``pulumi up`` modelled over a plan's dependency graph.

How the engine orders creates (Pulumi 3, Python SDK, as this repository pins it):

- A resource is registered once everything it waits for is known. The SDK awaits the URNs of
  its data dependencies (the resources behind the Outputs in its inputs) and of its
  ``depends_on`` (``pulumi/runtime/resource.py``, ``prepare_resource``), and the engine answers a
  ``RegisterResource`` only once the step is done, that is once a custom resource is created
  (pulumi/pulumi ``pkg/resource/deploy/source_eval.go``, ``RegisterResource``: "Now block
  waiting for the operation to finish"). So a resource starts when the last of its
  dependencies is created.
- A dependency on a component stands for the component's custom descendants (not through a
  custom resource): the SDK expands it before registering (``pulumi/runtime/rpc.py``,
  ``_add_dependency``), so a plan's ``dependencies`` name custom resources only.
- A child waits for its parent's URN (``prepare_resource``: "Wait for our parent to resolve"):
  a component's children start once the component is registered, and a component registers
  once its own ``depends_on`` is created, so a component's ``depends_on`` holds back every
  child though no child records it. A custom parent's children wait for its create.
- A resource with a provider waits for the provider (``_create_provider_ref`` awaits its URN
  and id); a provider itself makes no cloud call.

Each resource then takes its type's typical create time (:data:`CREATE_TIMES`, one figure per
type with its public source, "judgement" where none exists). The modelled total is the finish of
the last resource; the critical path is the chain of waits that ends there; the first claim
usable is the earliest PersistentVolumeClaim that ``pulumi up`` waits to see bound.

Explicit dependencies (``depends_on``) are the edges a resource records beyond its data: each
kind a component adds is in :data:`ORDERINGS` with the reason it is needed, and the places that
add one say ``order: <kind>`` next to it. ``timeline(plan, explicit="documented")`` keeps only
the documented ones, so a test can show the modelled total comes from data plus those edges.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .engine import STACK_TYPE, Plan

PVC = "kubernetes:core/v1:PersistentVolumeClaim"
SKIP_AWAIT = "pulumi.com/skipAwait"
JUDGEMENT = "judgement"


@dataclass(frozen=True)
class Figure:
    """A typical create time: what ``pulumi up`` waits for, in seconds, and where it comes from."""

    seconds: int
    covers: str
    """What the time covers (the provider's wait, and propagation where a dependent needs it)."""
    source: str
    """A public source for the figure, or ``judgement: <why>`` where none publishes one."""

    @property
    def judgement(self) -> bool:
        return self.source.startswith(JUDGEMENT)


_API_CALL = "one synchronous API call, no wait for a state"
_K8S_OBJECT = Figure(
    1,
    "one API server request: pulumi-kubernetes awaits no readiness for this kind",
    "judgement: a create request to the API server takes well under a second; the provider's "
    "await logic covers Deployments, StatefulSets, Jobs, Services, Pods and claims only "
    "(pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)",
)
_AWS_CALL = Figure(2, _API_CALL, "judgement: one synchronous AWS API call")
_AWS_IAM = Figure(
    10,
    "the create call plus IAM propagation before a pod or node may use it",
    "judgement within 'a few seconds for permissions to propagate' (hashicorp/terraform#2869, "
    "citing docs.aws.amazon.com IAM roles for EC2); IAM is eventually consistent",
)
_GCP_IAM = Figure(
    120,
    "the binding plus its propagation: mounts fail with 403 until it applies",
    "cloud.google.com/iam/docs/access-change-propagation: a policy change typically "
    "propagates in 2 minutes, potentially 7 or more",
)
_AZURE_ARM = Figure(5, "an ARM create", "judgement: a small ARM resource, one short operation")

CREATE_TIMES: Mapping[str, Figure] = {
    # ---- AWS
    "aws:fsx/lustreFileSystem:LustreFileSystem": Figure(
        600,
        "CreateFileSystem returns while CREATING; the provider waits for AVAILABLE",
        "judgement within 'several minutes to provision' (alchemy.run/providers/aws/fsx/"
        "filesystem); CreateFileSystem returns in CREATING (docs.aws.amazon.com/fsx/latest/"
        "APIReference/API_CreateFileSystem.html)",
    ),
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": Figure(
        300,
        "the association reaching AVAILABLE (the provider waits; S3 imports lazily after)",
        "judgement: an asynchronous FSx operation like the file system's own, shorter",
    ),
    "aws:efs/fileSystem:FileSystem": Figure(
        10,
        "CREATING to AVAILABLE (the provider waits)",
        "judgement: EFS reports CREATING then AVAILABLE (docs.aws.amazon.com/efs/latest/ug/"
        "managing.html, file system state); it takes seconds",
    ),
    "aws:efs/mountTarget:MountTarget": Figure(
        90,
        "the mount target's ENI reaching 'available' (the provider waits)",
        "alchemy.run/providers/aws/efs/mounttarget: 'typically 1-2 minutes'",
    ),
    "aws:efs/accessPoint:AccessPoint": Figure(
        5, "CREATING to AVAILABLE", "judgement: a metadata object on the file system"
    ),
    "aws:efs/backupPolicy:BackupPolicy": _AWS_CALL,
    "aws:efs/fileSystemPolicy:FileSystemPolicy": _AWS_CALL,
    "aws:ec2/securityGroup:SecurityGroup": _AWS_CALL,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": _AWS_CALL,
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": _AWS_CALL,
    "aws:iam/role:Role": _AWS_IAM,
    "aws:iam/rolePolicy:RolePolicy": _AWS_IAM,
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": Figure(
        10,
        "the association and its propagation to the Pod Identity agent",
        "docs.aws.amazon.com/eks/latest/APIReference/API_CreatePodIdentityAssociation.html: "
        "associations 'may take several seconds to be effective'",
    ),
    "aws:eks/addon:Addon": Figure(
        90,
        "the add-on reaching ACTIVE: its controller and node pods running",
        "judgement: like a Helm release of the same driver (its pods pull images)",
    ),
    # A cluster made in the same program as its stores (EksCluster.from_cluster).
    "aws:eks/cluster:Cluster": Figure(
        900,
        "the control plane reaching ACTIVE (the provider waits)",
        "aws/containers-roadmap#1227: 'EKS cluster control plane provisioning time currently "
        "averages 15 minutes'",
    ),
    "aws:eks/nodeGroup:NodeGroup": Figure(
        300,
        "the managed node group reaching ACTIVE: instances launched and joined",
        "judgement: EC2 instances boot and join the cluster; a few minutes",
    ),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": _AWS_IAM,
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": _AWS_IAM,
    "aws:s3/bucket:Bucket": _AWS_CALL,
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": _AWS_CALL,
    "aws:s3/bucketPolicy:BucketPolicy": _AWS_CALL,
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": _AWS_CALL,
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        _AWS_CALL
    ),
    "aws:s3/bucketVersioning:BucketVersioning": _AWS_CALL,
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": _AWS_CALL,
    # ---- Google Cloud
    # A cluster made in the same program as its stores (GkeCluster.from_cluster).
    "gcp:container/cluster:Cluster": Figure(
        480,
        "the control plane and its default node pool reaching RUNNING (the provider waits)",
        "judgement: a long-running container.clusters.create operation (cloud.google.com/"
        "kubernetes-engine/reference/rest/v1/projects.locations.clusters/create), minutes",
    ),
    "gcp:container/nodePool:NodePool": Figure(
        240,
        "the node pool's instances created and joined (the provider waits)",
        "judgement: Compute Engine instances boot and join the cluster; a few minutes",
    ),
    # A cluster made in the same program as its stores (AksCluster.from_cluster).
    "azure-native:containerservice:ManagedCluster": Figure(
        600,
        "the managed cluster and its agent pools provisioned (the provider waits for the ARM "
        "long-running create)",
        "judgement: an AKS create is an asynchronous ARM operation of several minutes",
    ),
    "azure-native:resources:ResourceGroup": _AZURE_ARM,
    "gcp:storage/bucket:Bucket": Figure(3, _API_CALL, "judgement: one Cloud Storage API call"),
    "gcp:storage/bucketIAMMember:BucketIAMMember": _GCP_IAM,
    "gcp:serviceaccount/account:Account": Figure(
        5, _API_CALL, "judgement: one IAM API call (the account's grants carry propagation)"
    ),
    "gcp:serviceaccount/iAMMember:IAMMember": _GCP_IAM,
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": _GCP_IAM,
    # ---- Azure
    "azure-native:storage:StorageAccount": Figure(
        30,
        "the ARM long-running create of the account",
        "judgement: a storage account is an asynchronous ARM operation of tens of seconds",
    ),
    "azure-native:storage:BlobContainer": _AZURE_ARM,
    "azure-native:storage:BlobServiceProperties": _AZURE_ARM,
    "azure-native:storage:FileShare": _AZURE_ARM,
    "azure-native:managedidentity:UserAssignedIdentity": _AZURE_ARM,
    "azure-native:managedidentity:FederatedIdentityCredential": Figure(
        10,
        "the credential and its propagation before a token exchange succeeds",
        "judgement: Entra ID propagates a new federated credential in seconds, though tokens "
        "may fail for minutes (AADSTS70021, FACTS.md)",
    ),
    "azure-native:authorization:RoleAssignment": Figure(
        120,
        "the assignment and Azure Resource Manager's cache catching up",
        "judgement within 'up to 10 minutes for changes to take effect' (learn.microsoft.com/"
        "azure/role-based-access-control/troubleshooting)",
    ),
    "azure-native:network:PrivateEndpoint": Figure(
        60,
        "the endpoint's network interface provisioned",
        "judgement: an ARM long-running operation of about a minute",
    ),
    "azure-native:network:PrivateDnsZoneGroup": _AZURE_ARM,
    "azure-native:privatedns:PrivateZone": Figure(
        30, "a global ARM resource", "judgement: an ARM long-running operation"
    ),
    "azure-native:privatedns:VirtualNetworkLink": Figure(
        30, "a global ARM resource", "judgement: an ARM long-running operation"
    ),
    # ---- Kubernetes
    "kubernetes:helm.sh/v3:Release": Figure(
        90,
        "Helm installs the chart and the provider waits for its workloads to be ready (driver "
        "images pulled on every node)",
        "judgement: Release waits for readiness unless skipAwait (pulumi.com/registry/"
        "packages/kubernetes/api-docs/helm/v3/release, skipAwait, timeout 300 s)",
    ),
    PVC: Figure(
        5,
        "the claim created and bound (the provider waits for Bound)",
        "judgement: pulumi-kubernetes awaits a claim's Bound phase (pulumi/pulumi-kubernetes"
        "#895); the PV controller binds a pre-bound pair on its next pass",
    ),
    "kubernetes:batch/v1:Job": Figure(
        120,
        "the Job running to completion (the provider waits for it)",
        "judgement: pulumi-kubernetes waits for a Job to complete (pulumi/pulumi-kubernetes#633,"
        " the Job awaiter); how long depends on the model and the storage",
    ),
    "kubernetes:apps/v1:Deployment": Figure(
        60,
        "the rollout: pods scheduled, images pulled, ready",
        "judgement: the Deployment awaiter waits for available replicas (pulumi.com/blog/"
        "improving-kubernetes-management-with-pulumis-await-logic)",
    ),
    "kubernetes:apps/v1:StatefulSet": Figure(
        60,
        "the rollout: pods ready",
        "judgement: the StatefulSet awaiter waits for ready replicas",
    ),
    "kubernetes:serving.kserve.io/v1beta1:InferenceService": Figure(
        120,
        "the predictor ready (a custom resource's Ready condition)",
        "judgement: a model server's start",
    ),
    "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot": Figure(
        60, "the snapshot ready to use", "judgement: an EBS snapshot of a small volume"
    ),
    "kubernetes:core/v1:Service": Figure(
        1, "a ClusterIP Service (no load balancer to wait for)", _K8S_OBJECT.source
    ),
    "kubernetes:core/v1:Namespace": _K8S_OBJECT,
    "kubernetes:core/v1:ServiceAccount": _K8S_OBJECT,
    "kubernetes:core/v1:PersistentVolume": _K8S_OBJECT,
    "kubernetes:core/v1:ConfigMap": _K8S_OBJECT,
    "kubernetes:core/v1:Secret": _K8S_OBJECT,
    "kubernetes:rbac.authorization.k8s.io/v1:Role": _K8S_OBJECT,
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": _K8S_OBJECT,
    "kubernetes:velero.io/v1:Schedule": _K8S_OBJECT,
    "kubernetes:storage.k8s.io/v1:StorageClass": _K8S_OBJECT,
    "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass": _K8S_OBJECT,
    "kubernetes:cloud.google.com/v1:ComputeClass": _K8S_OBJECT,
    "kubernetes:datalayer.gke.io/v1:GCPDataSource": _K8S_OBJECT,
    # ---- Pulumi
    "pulumi:pulumi:StackReference": Figure(
        1, "a read of the referenced stack's outputs", "judgement: one backend request"
    ),
}
"""Typical create time per resource type. One figure per type, with its source."""

NO_WAIT = Figure(
    0,
    "registration only: a component, a provider or the stack makes no cloud call",
    "pulumi/pulumi pkg/resource/deploy/source_eval.go: the engine answers these registrations "
    "without a provider create",
)
READ = Figure(1, "a read of an existing resource", "judgement: one provider read call")
UNAWAITED_CLAIM = Figure(
    1,
    "a claim annotated pulumi.com/skipAwait: created, its binding not awaited",
    "judgement: one API server request; pulumi-kubernetes skips its await logic for an object "
    "so annotated (pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)",
)
UNLISTED = Figure(
    30,
    "a type with no figure in CREATE_TIMES",
    "judgement: no figure for this type; add one to plan/timeline.py CREATE_TIMES",
)


def figure_of(state: Mapping[str, Any], op: str = "create") -> Figure:
    """The create time ``pulumi up`` spends on ``state`` (its op ``op``)."""
    type_ = state["type"]
    if not state["custom"] or type_ == STACK_TYPE or type_.startswith("pulumi:providers:"):
        return NO_WAIT
    if op in ("read", "import"):
        return READ
    if type_ == PVC and _skips_await(state):
        return UNAWAITED_CLAIM
    return CREATE_TIMES.get(type_, UNLISTED)


# ---- explicit dependencies ----------------------------------------------------------------

ANY = "*"


@dataclass(frozen=True)
class Ordering:
    """A kind of explicit dependency a component adds: resources of a type in ``waits``
    depending on resources of a type in ``on``, and why it is needed."""

    kind: str
    waits: frozenset[str]
    on: frozenset[str]
    why: str

    def covers(self, dependent_type: str, dependency_type: str) -> bool:
        return dependent_type in self.waits and (ANY in self.on or dependency_type in self.on)


_PV = "kubernetes:core/v1:PersistentVolume"
_RELEASE = "kubernetes:helm.sh/v3:Release"
_ADDON = "aws:eks/addon:Addon"
_SG_RULES = frozenset(
    {
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
    }
)
_GRANTS = frozenset(
    {
        "aws:iam/role:Role",
        "aws:iam/rolePolicy:RolePolicy",
        "aws:eks/podIdentityAssociation:PodIdentityAssociation",
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        "gcp:serviceaccount/iAMMember:IAMMember",
        "azure-native:authorization:RoleAssignment",
        "azure-native:managedidentity:FederatedIdentityCredential",
    }
)
_S3_CONFIGURATION = frozenset(
    {
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "aws:s3/bucketVersioning:BucketVersioning",
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    }
)
_EBS_CHILDREN = frozenset(
    {
        PVC,
        "kubernetes:batch/v1:Job",
        "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot",
        "kubernetes:storage.k8s.io/v1:StorageClass",
    }
)
_RBAC = frozenset(
    {
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
    }
)
_WORKLOADS = frozenset(
    {
        "kubernetes:apps/v1:Deployment",
        "kubernetes:apps/v1:StatefulSet",
        "kubernetes:batch/v1:Job",
        "kubernetes:serving.kserve.io/v1beta1:InferenceService",
    }
)

ORDERINGS: tuple[Ordering, ...] = (
    Ordering(
        "lnet-rules-first",
        frozenset({"aws:fsx/lustreFileSystem:LustreFileSystem"}),
        _SG_RULES,
        "FSx refuses to create a file system whose security group lacks the LNET rules "
        "(port 988 and 1018-1023).",
    ),
    Ordering(
        "nfs-rules-first",
        frozenset({"aws:efs/mountTarget:MountTarget"}),
        _SG_RULES,
        "PVs wait for the mount targets: with the mount targets after the NFS rules, no pod "
        "mounts before its node may reach port 2049.",
    ),
    Ordering(
        "policy-before-association",
        frozenset({"aws:eks/podIdentityAssociation:PodIdentityAssociation"}),
        frozenset({"aws:iam/rolePolicy:RolePolicy"}),
        "Mounts wait for the association alone (Pod Identity hands credentials only to pods "
        "created after it): made after the role's policy, it is the role's last step.",
    ),
    Ordering(
        "bucket-configuration-first",
        frozenset({"aws:s3/bucketPolicy:BucketPolicy"}),
        _S3_CONFIGURATION,
        "S3 rejects concurrent configuration changes on one bucket ('A conflicting "
        "conditional operation is currently in progress'): the policy goes last.",
    ),
    Ordering(
        "versioning-before-lifecycle",
        frozenset({"aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"}),
        frozenset({"aws:s3/bucketVersioning:BucketVersioning"}),
        "A rule expiring noncurrent versions needs versioning on first (the provider's "
        "BucketLifecycleConfiguration docs: 'Must have bucket versioning enabled first'), and "
        "the two calls on one bucket would conflict if made together.",
    ),
    Ordering(
        "key-grant-first",
        frozenset({"gcp:storage/bucket:Bucket"}),
        frozenset({"gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"}),
        "Cloud Storage checks the customer-managed key when the bucket is created: its "
        "service agent must hold the key's grant first.",
    ),
    Ordering(
        "scope-first",
        frozenset({"azure-native:authorization:RoleAssignment"}),
        frozenset({"azure-native:storage:StorageAccount", "azure-native:storage:BlobContainer"}),
        "A role assignment's scope is an ARM id built from names, not an output: the account "
        "or container it names must exist first.",
    ),
    Ordering(
        "one-credential-at-a-time",
        frozenset({"azure-native:managedidentity:FederatedIdentityCredential"}),
        frozenset({"azure-native:managedidentity:FederatedIdentityCredential"}),
        "ARM refuses concurrent federated credential writes on one identity (409).",
    ),
    Ordering(
        "driver-before-volume",
        frozenset({_PV, PVC, "kubernetes:datalayer.gke.io/v1:GCPDataSource"}),
        frozenset({_RELEASE, _ADDON, "kubernetes:cloud.google.com/v1:ComputeClass"}),
        "No mount before the CSI driver's node plugin runs (a pod started earlier fails its "
        "mounts until it does), and a destroy removes the volumes before the driver that "
        "unmounts and deletes them; a populator's transfer Job needs its compute class.",
    ),
    Ordering(
        "storage-before-volume",
        frozenset({_PV, "kubernetes:storage.k8s.io/v1:StorageClass"}),
        frozenset(
            {
                "aws:efs/mountTarget:MountTarget",
                "aws:efs/fileSystemPolicy:FileSystemPolicy",
                "aws:s3/bucketPolicy:BucketPolicy",
                "azure-native:storage:FileShare",
                "azure-native:network:PrivateEndpoint",
                "azure-native:network:PrivateDnsZoneGroup",
                *_S3_CONFIGURATION,
            }
        ),
        "A PV names its storage by strings (ids, names), so it carries no data edge to it: "
        "no volume is offered before the share, the mount target in each zone, the policy "
        "that refuses clients without TLS and the bucket's settings exist; nor a class for "
        "claims made on demand (dynamic_claims) before the file system or account it names.",
    ),
    Ordering(
        "grant-before-volume",
        frozenset(
            {
                _PV,
                PVC,
                "kubernetes:datalayer.gke.io/v1:GCPDataSource",
                "kubernetes:storage.k8s.io/v1:StorageClass",
            }
        ),
        _GRANTS,
        "A mount (or a populator's transfer) made before its identity may read the storage "
        "fails: the volume waits for the consumers' grants (the access layer's Grant.ready); "
        "a class for claims made on demand waits for the grant its driver's controller "
        "provisions them with (Azure Files NFS).",
    ),
    Ordering(
        "namespace-first",
        frozenset(
            {
                _PV,
                PVC,
                "kubernetes:core/v1:ServiceAccount",
                "kubernetes:core/v1:ConfigMap",
                "kubernetes:core/v1:Secret",
                *_RBAC,
            }
        ),
        frozenset({"kubernetes:core/v1:Namespace"}),
        "Namespaced objects need their namespace, and a destroy deletes them before it; the "
        "claim waits for its PV, so the PV carries the edge for both.",
    ),
    Ordering(
        "volume-before-claim",
        frozenset({PVC}),
        frozenset({_PV}),
        "The claim is pre-bound to its PV by name: made after it, it binds at once, and a "
        "destroy deletes the claim before the PV (kubernetes.io/pv-protection).",
    ),
    Ordering(
        "class-after-driver",
        frozenset(
            {
                "kubernetes:storage.k8s.io/v1:StorageClass",
                "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass",
            }
        ),
        frozenset({_RELEASE, _ADDON}),
        "Claims and snapshots made on the driver's classes name them through an output (a data "
        "edge to the class): with the class after the driver they wait for it, and a destroy "
        "deletes them before the driver, without which their volumes and snapshots stay.",
    ),
    Ordering(
        "driver-install-order",
        frozenset({_RELEASE, _ADDON, "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass"}),
        frozenset(
            {
                _RELEASE,
                _ADDON,
                "aws:iam/role:Role",
                "aws:iam/rolePolicy:RolePolicy",
                "aws:eks/podIdentityAssociation:PodIdentityAssociation",
            }
        ),
        "A driver's pods must start with their identity (the role and its policy, or the Pod "
        "Identity association, which only pods created after it get), the EBS controller "
        "after the snapshot CRDs, and a VolumeSnapshotClass needs its CRD, which the snapshot "
        "controller's chart installs.",
    ),
    Ordering(
        "cache-after-driver",
        _EBS_CHILDREN | {"modelstore:index:EbsModelCache"},
        frozenset(
            {
                _RELEASE,
                _ADDON,
                "aws:iam/role:Role",
                "aws:iam/rolePolicy:RolePolicy",
                "kubernetes:storage.k8s.io/v1:StorageClass",
                "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass",
            }
        ),
        "An EBS cache passed the driver in depends_on hands it to each child: a destroy "
        "deletes its claims and snapshot before the driver that deletes their volumes.",
    ),
    Ordering(
        "job-after-its-mount",
        frozenset({"kubernetes:batch/v1:Job"}),
        frozenset(
            {
                PVC,
                "kubernetes:core/v1:ConfigMap",
                "kubernetes:core/v1:Secret",
                "kubernetes:core/v1:ServiceAccount",
                "kubernetes:batch/v1:Job",
                *_GRANTS,
            }
        ),
        "A model Job's pod mounts the store's claim, the programs' ConfigMap and (the seed, with "
        "model.token) the token's Secret, and runs as the consumer's service account (its "
        "grant): started before them it fails (a missing Secret volume holds the pod in "
        "ContainerCreating) or runs without its identity; each verification Job waits for the "
        "seed Job, which publishes what it "
        "checks. A Job that mounts no claim (Hyperdisk ML's manifest Job) waits for its "
        "account's grant itself.",
    ),
    Ordering(
        "manifest-before-populate",
        frozenset({PVC}),
        frozenset({"kubernetes:batch/v1:Job"}),
        "GKE's volume populator copies the source folder to the disk once, when the claim "
        "appears, and the disk is read-only after: the Job that writes the revision's manifest "
        "into the folder runs first, so the disk holds the manifest its readers' gate and "
        "verification Job read.",
    ),
    Ordering(
        "seed-after-source-grant",
        frozenset({"kubernetes:batch/v1:Job"}),
        _GRANTS,
        "A seed Job reading its model from an object store (s3://, gs://, az://) lists the "
        "source as it starts: before its identity's read grant on the source exists the request "
        "is denied and the Job fails (access.SourceGrant).",
    ),
    Ordering(
        "record-grant-first",
        frozenset({"kubernetes:batch/v1:Job"}),
        _RBAC,
        "The seed Job records its manifest digest in a ConfigMap through the Kubernetes API "
        "(kube/model_digest.py): started before its Role and RoleBinding, that call is refused "
        "and the seed fails.",
    ),
    Ordering(
        "digest-after-seed",
        frozenset({"kubernetes:core/v1:ConfigMap"}),
        frozenset({"kubernetes:batch/v1:Job"}),
        "The store reads the manifest digest from the ConfigMap the seed Job writes: the read's "
        "id comes from the Job's status, which the engine does not record as a dependency of a "
        "read, so the edge is explicit.",
    ),
    Ordering(
        "velero-after-its-storage",
        frozenset({_RELEASE}),
        frozenset(
            {
                *_S3_CONFIGURATION,
                "aws:s3/bucketPolicy:BucketPolicy",
                "gcp:storage/bucketIAMMember:BucketIAMMember",
                "gcp:serviceaccount/iAMMember:IAMMember",
                "azure-native:authorization:RoleAssignment",
                "azure-native:managedidentity:FederatedIdentityCredential",
                "kubernetes:core/v1:Namespace",
            }
        ),
        "The Velero release installs into its namespace, and its server checks the backup "
        "storage location as it starts: before the bucket's settings, policy and grant (on "
        "AKS the roles and the federated credential its token is exchanged through) exist "
        "the location is Unavailable and no backup runs until it is checked again.",
    ),
    Ordering(
        "schedule-after-velero",
        frozenset({"kubernetes:velero.io/v1:Schedule"}),
        frozenset({_RELEASE}),
        "A Schedule is a Velero custom resource: the API server refuses it before the chart "
        "has installed its CRD.",
    ),
    Ordering(
        "seed-before-snapshot",
        frozenset({"kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot"}),
        frozenset({"kubernetes:batch/v1:Job"}),
        "The snapshot names the seed claim by name: taken before the loader Job completes, it "
        "would hold a partial model.",
    ),
    Ordering(
        "workload-after-store",
        _WORKLOADS,
        frozenset({ANY}),
        "A workload given depends_on=[store] (the examples' pattern) starts after the store's "
        "volumes, grants and seeding exist: its pods mount at once instead of failing.",
    ),
)
"""Every kind of explicit dependency, with the reason it is needed."""

ORDERING_KINDS = {o.kind: o for o in ORDERINGS}


def ordering_of(dependent_type: str, dependency_type: str) -> Ordering | None:
    """The documented kind an explicit edge between these types is, if any."""
    for ordering in ORDERINGS:
        if ordering.covers(dependent_type, dependency_type):
            return ordering
    return None


# ---- the model ----------------------------------------------------------------------------

Explicit = Literal["all", "documented", "none"]


@dataclass(frozen=True)
class Wait:
    """One thing a resource waits for: ``urn``, through ``via`` (``data``, ``depends_on``,
    ``parent``, ``provider``), with the ordering kind of a documented ``depends_on``."""

    urn: str
    via: str
    kind: str = ""

    def label(self) -> str:
        if self.via == "depends_on":
            return f"depends_on ({self.kind or 'undocumented'})"
        return self.via


@dataclass(frozen=True)
class Entry:
    """One resource on the modelled timeline."""

    urn: str
    type: str
    start: int
    finish: int
    figure: Figure
    after: Wait | None
    """What it waited for last (what set its start); None when it waited for nothing."""

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


@dataclass(frozen=True)
class Timeline:
    project: str
    stack: str
    entries: Mapping[str, Entry]
    critical_path: tuple[Entry, ...]
    first_claim: Entry | None
    """The earliest claim ``pulumi up`` waits to see bound; None when no claim is awaited."""
    undocumented: tuple[tuple[str, str], ...]
    """Explicit edges (dependent URN, dependency URN) no :data:`ORDERINGS` kind covers."""

    @property
    def total(self) -> int:
        return max((e.finish for e in self.entries.values()), default=0)

    def figures(self) -> dict[str, Figure]:
        """The create time of each custom resource type on the timeline (a read of a type
        that is also created is listed apart: ``<type> (read)``)."""
        marks = {UNAWAITED_CLAIM: f" ({SKIP_AWAIT})", READ: " (read)"}
        found = {
            e.type + next((m for f, m in marks.items() if e.figure is f), ""): e.figure
            for e in self.entries.values()
            if e.figure is not NO_WAIT
        }
        return dict(sorted(found.items()))


def _data(state: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    for urns in state["propertyDependencies"].values():
        found.update(urns)
    return found


def waits_of(
    state: Mapping[str, Any], types: Mapping[str, str], explicit: Explicit = "all"
) -> list[Wait]:
    """What the resource ``state`` waits for before its create starts (``types``: every
    resource's type by URN). ``explicit``: which ``depends_on`` edges count: all recorded, only
    the documented kinds, or none."""
    data = _data(state)
    waits = [Wait(urn, "data") for urn in sorted(data)]
    for urn in sorted(set(state["dependencies"]) - data):
        ordering = ordering_of(state["type"], types.get(urn, ""))
        if explicit == "all" or (explicit == "documented" and ordering is not None):
            waits.append(Wait(urn, "depends_on", ordering.kind if ordering else ""))
    if state["parent"]:
        waits.append(Wait(state["parent"], "parent"))
    if state.get("provider"):
        waits.append(Wait(state["provider"].rsplit("::", 1)[0], "provider"))
    return [w for w in waits if w.urn in types and w.urn != state["urn"]]


def undocumented_edges(plan: Plan) -> list[tuple[str, str]]:
    """Every explicit edge of ``plan`` (dependent URN, dependency URN) that no kind covers."""
    types = {s["urn"]: s["type"] for s in plan.states()}
    found = []
    for state in plan.states():
        for urn in sorted(set(state["dependencies"]) - _data(state)):
            if ordering_of(state["type"], types.get(urn, "")) is None:
                found.append((state["urn"], urn))
    return found


def timeline(plan: Plan, *, explicit: Explicit = "all") -> Timeline:
    """Model ``pulumi up`` of ``plan`` from an empty stack: every resource starts once all it
    waits for is done (:func:`waits_of`) and takes its type's create time. By default every
    recorded ``depends_on`` counts; ``explicit="documented"`` keeps the documented kinds."""
    steps = {step["urn"]: step for step in plan.steps}
    types = {urn: step["newState"]["type"] for urn, step in steps.items()}
    entries: dict[str, Entry] = {}

    def place(urn: str, seen: frozenset[str]) -> Entry:
        if urn in entries:
            return entries[urn]
        if urn in seen:  # a cycle cannot come out of a real program
            raise ValueError(f"dependency cycle through {urn}")
        step = steps[urn]
        state = step["newState"]
        after: Wait | None = None
        start = 0
        for wait in waits_of(state, types, explicit):  # the first to finish last sets the start
            done = place(wait.urn, seen | {urn}).finish
            if after is None or done > start:
                start, after = done, wait
        figure = figure_of(state, step["op"])
        entries[urn] = Entry(urn, state["type"], start, start + figure.seconds, figure, after)
        return entries[urn]

    for urn in steps:  # plan order: parents and dependencies first, so recursion stays shallow
        place(urn, frozenset())
    return Timeline(
        project=plan.project,
        stack=plan.stack,
        entries=entries,
        critical_path=_critical_path(entries),
        first_claim=_first_claim(entries, steps),
        undocumented=tuple(undocumented_edges(plan)),
    )


def _critical_path(entries: Mapping[str, Entry]) -> tuple[Entry, ...]:
    """The chain of last waits that ends at the latest finish (ties: the custom resource, then
    the URN), first resource first; components and providers on it are kept (a component's
    ``depends_on`` holds its children back)."""
    if not entries:
        return ()
    last = max(entries.values(), key=lambda e: (e.finish, e.figure is not NO_WAIT, e.urn))
    path = [last]
    while path[-1].after is not None:
        path.append(entries[path[-1].after.urn])
    path.reverse()
    while len(path) > 1 and path[0].finish == 0:  # the stack and what registers at once
        path.pop(0)
    return tuple(path)


def _first_claim(entries: Mapping[str, Entry], steps: Mapping[str, Any]) -> Entry | None:
    """The earliest claim whose bound state ``pulumi up`` waits for (a claim annotated
    ``pulumi.com/skipAwait`` binds later: after a populator's transfer or its first pod)."""
    awaited = [
        e for e in entries.values() if e.type == PVC and not _skips_await(steps[e.urn]["newState"])
    ]
    return min(awaited, key=lambda e: (e.finish, e.urn), default=None)


def _skips_await(state: Mapping[str, Any]) -> bool:
    annotations = (state["inputs"].get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(SKIP_AWAIT, "")).lower() == "true"


# ---- output -------------------------------------------------------------------------------


def clock(seconds: int) -> str:
    """``754`` -> ``12:34`` (minutes:seconds)."""
    return f"{seconds // 60}:{seconds % 60:02d}"


def to_text(t: Timeline) -> str:
    """The modelled total, the first claim usable, the critical path resource by resource
    (start and finish as minutes:seconds from the start of ``pulumi up``) and the create times
    used, each with its source."""
    lines = [
        f"Deploy timeline: project {t.project}, stack {t.stack} (pulumi up modelled from an "
        "empty stack: typical create times, dependencies as the engine orders them)",
        f"Modelled total: {clock(t.total)} ({t.total} s)",
    ]
    if t.first_claim is not None:
        lines.append(
            f"First claim usable: {clock(t.first_claim.finish)} ({t.first_claim.finish} s), "
            f"{t.first_claim.name} bound"
        )
    else:
        lines.append(
            "First claim usable: none bound during pulumi up (claims annotated "
            f"{SKIP_AWAIT} bind later: after a populator's transfer or with their first pod)"
        )
    lines.append("Critical path (start  finish  resource  type  waited for):")
    for e in t.critical_path:
        via = f"  after {e.after.label()}" if e.after is not None else ""
        lines.append(f"  {clock(e.start):>6}  {clock(e.finish):>6}  {e.name}  {e.type}{via}")
    lines.append("Create times (what each covers; its source, or judgement where none):")
    for type_, figure in t.figures().items():
        lines.append(f"  {type_}: {figure.seconds} s, {figure.covers}; {figure.source}")
    if t.undocumented:
        lines.append("Explicit dependencies of no documented kind (plan/timeline.py ORDERINGS):")
        lines += [
            f"  {a.rsplit('::', 1)[-1]} -> {b.rsplit('::', 1)[-1]}" for a, b in t.undocumented
        ]
    return "\n".join(lines) + "\n"


def _entry_json(e: Entry) -> dict[str, Any]:
    return {
        "urn": e.urn,
        "type": e.type,
        "start": e.start,
        "finish": e.finish,
        "after": (
            {"urn": e.after.urn, "via": e.after.via, "kind": e.after.kind}
            if e.after is not None
            else None
        ),
    }


def to_json(t: Timeline) -> str:
    """The same as data: seconds from the start of ``pulumi up``."""
    document = {
        "project": t.project,
        "stack": t.stack,
        "totalSeconds": t.total,
        "firstClaim": _entry_json(t.first_claim) if t.first_claim is not None else None,
        "criticalPath": [_entry_json(e) for e in t.critical_path],
        "createTimes": {
            type_: {
                "seconds": f.seconds,
                "covers": f.covers,
                "source": f.source,
                "judgement": f.judgement,
            }
            for type_, f in t.figures().items()
        },
        "undocumentedDependencies": [list(edge) for edge in t.undocumented],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


FORMATS: Mapping[str, Any] = {"tree": to_text, "json": to_json}
"""What ``modelstore plan --timeline --format F`` prints, by ``F``."""


def render(plan: Plan, fmt: str) -> str:
    return FORMATS[fmt](timeline(plan))
