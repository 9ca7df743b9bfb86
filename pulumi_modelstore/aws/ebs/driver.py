"""The EBS CSI driver for one EKS cluster (:class:`EbsCsiDriver`): the driver (Helm chart pinned
in ``aws/drivers.py``, the EKS add-on, or none), its controller's IAM identity (IRSA or EKS Pod
Identity) with the least-privilege policy of ``policies.ebs_csi_driver_policy``, the snapshot
CRDs and ONE snapshot controller, a VolumeSnapshotClass (deletionPolicy Retain), a gp3
StorageClass and optionally an io2 Multi-Attach class."""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pulumi.runtime.settings import get_root_resource

from ... import validation as v
from ..._legacy_store import MANAGED_BY, check_known_fields
from ...errors import ModelStoreInputError
from ...kube.drivers import helm_release
from ...kube.snapshots import DELETION_POLICIES, name_after, volume_snapshot_class
from ..cluster import EksClusterFacts, invoke_options, resolve_cluster
from ..drivers import (
    DRIVER_INSTALLS,
    EBS_CSI,
    SNAPSHOT_CONTROLLER,
    DriverInstall,
    DriverInstallArgs,
    eks_addon,
    parse_driver_install,
)
from ..identity import IdentityFacts, ServiceAccountRole, resolve_identity, service_account_role
from ..policies import ebs_csi_driver_policy
from .classes import (
    DEFAULT_GP3_CLASS,
    DEFAULT_IO2_CLASS,
    DEFAULT_SNAPSHOT_CLASS,
    KMS_ALIAS_NOTE,
    Gp3Class,
    Io2MultiAttachClass,
    gp3_storage_class,
    io2_multi_attach_storage_class,
    multi_attach_claim,
    parse_gp3_class,
    parse_io2_multi_attach_class,
)

DRIVER_TYPE_TOKEN = "modelstore:index:EbsCsiDriver"
IDENTITY_CHOICES = ("irsa", "pod-identity", "none")

CONTROLLER_SERVICE_ACCOUNT = "ebs-csi-controller-sa"
"""The controller's service account in the chart's values and in the EKS add-on."""
ADDON_FIXED = (
    "unset when driver is eks-addon (the add-on runs ebs-csi-controller-sa in kube-system)"
)
"""Why the add-on refuses a driver namespace or controller service account."""


# -- one install per cluster ------------------------------------------------------------------

# Per program run (keyed by its root stack resource): (what, cluster key) -> the component that
# installs it. Two Helm releases or add-ons of one driver on one cluster collide at deploy time.
_INSTALLS: weakref.WeakKeyDictionary[Any, dict[tuple[str, Any], str]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _ClusterIdentity:
    """What says which cluster a driver installs on: every key it is known by, and how an error
    names it."""

    keys: tuple[Any, ...]
    where: str


def _cluster_identity(
    cluster: EksClusterFacts, opts: pulumi.ResourceOptions | None
) -> _ClusterIdentity:
    """The cluster's name when given, and its OIDC issuer when known (given, or looked up from
    the name): each names one cluster, and a driver is registered under both, so one named by
    ``cluster_name`` and one by ``oidc_issuer`` still match. With neither (no name, the issuer
    absent or still an Output), the Kubernetes provider the Helm releases go through (None: the
    program's default one): two drivers on different providers install on different clusters,
    two on the same one on the same cluster."""
    keys: list[Any] = []
    where = "the cluster"
    issuer = cluster.oidc_issuer if isinstance(cluster.oidc_issuer, str) else None
    if cluster.name:
        keys.append(("cluster name", cluster.name))
        where = f"cluster {cluster.name!r}"
    if issuer:
        keys.append(("OIDC issuer", issuer.rstrip("/")))
        if not cluster.name:
            where = f"the cluster with OIDC issuer {issuer!r}"
    if not keys:
        keys.append(("kubernetes provider", _kubernetes_provider(opts)))
    return _ClusterIdentity(keys=tuple(keys), where=where)


def _kubernetes_provider(opts: pulumi.ResourceOptions | None) -> Any:
    """The Kubernetes provider a component's children use, from its options or its parent's;
    None for the default provider."""
    if opts is None:
        return None
    candidates: list[Any] = [opts.provider]
    if isinstance(opts.providers, Mapping):
        candidates.append(opts.providers.get("kubernetes"))
    elif isinstance(opts.providers, Sequence):
        candidates.extend(opts.providers)
    for provider in candidates:
        if provider is not None and getattr(provider, "package", None) == "kubernetes":
            return provider
    inherited = getattr(opts.parent, "_providers", None)
    if isinstance(inherited, Mapping):
        return inherited.get("kubernetes")
    return None


def _claim_install(
    store: str, field_name: str, choice: str, what: str, cluster: _ClusterIdentity
) -> None:
    root = get_root_resource()
    if root is None or choice == "none":
        return
    installs = _INSTALLS.setdefault(root, {})
    for key in cluster.keys:
        owner = installs.get((what, key))
        if owner is not None and owner != store:
            raise ModelStoreInputError(
                store,
                field_name,
                choice,
                f"none (EbsCsiDriver {owner!r} already installs the {what} on {cluster.where})",
            )
    for key in cluster.keys:
        installs[(what, key)] = store


# -- the driver -------------------------------------------------------------------------------


class EbsCsiDriverArgs(DriverInstallArgs, total=False):
    """Arguments of :class:`EbsCsiDriver`. Every field is optional but ``cluster_name`` where
    noted.

    The driver install (:class:`DriverInstallArgs`): ``driver_namespace`` is also the
    controller's service account's, and not for ``driver: eks-addon`` (the add-on always runs
    in kube-system). The add-on's node pods tolerate all taints too: ``eks_addon_configuration``
    is merged over this component's own (``node.tolerateAllTaints: true``)."""

    cluster_name: str
    """The EKS cluster. Required for ``driver: eks-addon``, ``snapshot_controller: eks-addon``
    and ``identity: pod-identity``; for IRSA its OIDC issuer is looked up from it. Default: none
    (then give ``oidc_issuer`` for IRSA)."""
    oidc_issuer: str
    """The cluster's OIDC issuer URL, for IRSA. Default: looked up from the cluster. Either way
    the preview fails when IAM has no OIDC provider for it."""
    region: str
    """AWS region, passed to the controller for pods where IMDS is blocked. Default: the AWS
    provider's region."""
    identity: str
    """The controller's AWS identity: ``irsa`` (default; the role ARN goes on the controller's
    service account, and the preview fails without the cluster's IAM OIDC provider),
    ``pod-identity`` (an EKS Pod Identity association; the cluster needs the Pod Identity agent),
    or ``none`` (default when ``driver`` is none: the existing install's identity is left
    alone)."""
    controller_service_account: str
    """The controller's service account, which the role's trust policy names exactly. Default:
    ``ebs-csi-controller-sa`` (the chart's and the add-on's). Not for ``eks-addon``."""
    kms_key_arns: Sequence[str]
    """Customer managed KMS keys the driver may use for volumes, besides ``kms_key_arn``.
    Default: none (volumes encrypted with the AWS managed ``aws/ebs`` key need no grant)."""
    snapshot_controller: str
    """How the VolumeSnapshot CRDs and the ONE snapshot controller per cluster get there:
    ``helm`` (chart ``snapshot-controller`` pinned in ``aws/drivers.py``; it installs the CRDs),
    ``eks-addon`` (the ``snapshot-controller`` add-on) or ``none`` (the cluster has them).
    Default: ``helm`` with a Helm driver, ``eks-addon`` with the add-on, ``none`` with
    ``driver: none``."""
    snapshot_controller_namespace: str
    """Namespace of the snapshot controller's Helm release. Default: kube-system."""
    create_snapshot_class: bool
    """Create the VolumeSnapshotClass. Default: True."""
    snapshot_class_name: str
    """Name of the VolumeSnapshotClass for ``ebs.csi.aws.com``. Default: ``ebs-snapshots``."""
    snapshot_deletion_policy: str
    """``Retain`` (default: deleting a VolumeSnapshot keeps the EBS snapshot and its
    VolumeSnapshotContent) or ``Delete`` (deleting the VolumeSnapshot deletes the data)."""
    default_snapshot_class: bool
    """Mark the snapshot class as the cluster's default. Default: False."""
    snapshot_class_parameters: Mapping[str, str]
    """Driver parameters for snapshots (e.g. ``tagSpecification_1``). Default: none."""
    create_storage_class: bool
    """Create the gp3 StorageClass. Default: True."""
    storage_class_name: str
    """Name of the gp3 StorageClass. Default: ``ebs-gp3``."""
    default_storage_class: bool
    """Mark the gp3 class as the cluster's default. Default: False."""
    iops: int
    """gp3 IOPS, 3000 to 80000, at most 500 per GiB of each volume. Default: 3000 (the
    baseline every gp3 volume gets free)."""
    throughput_mibps: int
    """gp3 throughput in MiB/s, 125 to 2000, at most 0.25 per provisioned IOPS. Default: 125
    (the free baseline)."""
    encrypted: bool
    """Encrypt volumes. Default: True (with the AWS managed ``aws/ebs`` key unless
    ``kms_key_arn``)."""
    kms_key_arn: str
    """A customer managed KMS key ARN for volumes of both classes; the driver's policy gets
    grants on it. Default: the AWS managed ``aws/ebs`` key."""
    fs_type: str
    """File system for gp3 volumes: ``ext4`` (default) or ``xfs``."""
    reclaim_policy: str
    """``Delete`` (default: a deleted claim deletes its volume; caches restore from snapshots)
    or ``Retain`` (volumes outlive their claims and must be deleted by hand)."""
    volume_tags: Mapping[str, str]
    """Tags on every volume the classes provision (``tagSpecification_<n>`` parameters).
    Default: none beyond the driver's own."""
    multi_attach_iops: int
    """Create an io2 Multi-Attach class with this many IOPS (100 to 256000). Each volume gets at
    most 1000 IOPS per GiB (the driver silently caps the rest), so claims on the class need at
    least ``ceil(multi_attach_iops / 1000)`` GiB: :meth:`EbsCsiDriver.multi_attach_claim`
    refuses a smaller one; the class itself has no size to check. Default: no such class."""
    multi_attach_storage_class_name: str
    """Name of the io2 Multi-Attach class. Default: ``ebs-io2-multi-attach``."""
    labels: Mapping[str, str]
    """Labels merged onto every Kubernetes object. Default: the library's own only."""
    tags: Mapping[str, str]
    """Tags on every AWS resource (role, add-ons, pod identity association) and, with Helm,
    on every volume and snapshot the driver creates (``controller.extraVolumeTags``).
    Default: the library's own only."""


DRIVER_FIELDS = frozenset(EbsCsiDriverArgs.__annotations__) | {"driver"}


@dataclass(frozen=True)
class _DriverSpec:
    install: DriverInstall
    identity: str
    controller_service_account: str
    kms_key_arns: tuple[Any, ...]
    snapshot_controller: str
    snapshot_controller_namespace: str
    create_snapshot_class: bool
    snapshot_class_name: str
    snapshot_deletion_policy: str
    default_snapshot_class: bool
    snapshot_class_parameters: dict[str, str]
    create_storage_class: bool
    storage_class_name: str
    default_storage_class: bool
    gp3: Gp3Class
    io2: Io2MultiAttachClass | None
    multi_attach_storage_class_name: str
    labels: dict[str, str]
    tags: dict[str, str]
    user_tags: dict[str, str]


def parse_driver_args(name: str, args: Mapping[str, Any]) -> _DriverSpec:
    """Validate every field of :class:`EbsCsiDriverArgs`."""
    check_known_fields(name, args, DRIVER_FIELDS)
    service_account = args.get("controller_service_account", CONTROLLER_SERVICE_ACCOUNT)

    def check_service_account(driver: str, _namespace: str) -> None:
        if driver == "eks-addon" and "controller_service_account" in args:
            raise ModelStoreInputError(
                name, "controller_service_account", service_account, ADDON_FIXED
            )
        v.dns_subdomain(name, "controller_service_account", service_account)

    install = parse_driver_install(
        name,
        args,
        namespace_unset_for={"eks-addon": ADDON_FIXED},
        check=check_service_account,
        # Checked below with every other choice that needs the cluster.
        check_cluster_name=False,
    )
    driver = install.driver
    cluster_name = args.get("cluster_name")
    identity = args.get("identity", "none" if driver == "none" else "irsa")
    v.one_of(name, "identity", identity, IDENTITY_CHOICES)
    # By default the snapshot controller comes the same way as the driver.
    snapshot_controller = args.get("snapshot_controller", driver)
    v.one_of(name, "snapshot_controller", snapshot_controller, DRIVER_INSTALLS)
    needs_cluster = [
        (key, choice)
        for key, choice in (
            ("driver", driver),
            ("snapshot_controller", snapshot_controller),
            ("identity", identity),
        )
        if choice in ("eks-addon", "pod-identity")
    ]
    if needs_cluster and not cluster_name:
        key, choice = needs_cluster[0]
        raise ModelStoreInputError(
            name, "cluster_name", cluster_name, f"the EKS cluster's name when {key} is {choice}"
        )
    snapshot_ns = args.get("snapshot_controller_namespace", "kube-system")
    v.dns_label(name, "snapshot_controller_namespace", snapshot_ns)
    snapshot_class_name = args.get("snapshot_class_name", DEFAULT_SNAPSHOT_CLASS)
    v.dns_subdomain(name, "snapshot_class_name", snapshot_class_name)
    deletion_policy = args.get("snapshot_deletion_policy", "Retain")
    v.one_of(name, "snapshot_deletion_policy", deletion_policy, DELETION_POLICIES)
    snapshot_params = v.string_map(
        name, "snapshot_class_parameters", args.get("snapshot_class_parameters")
    )
    storage_class_name = args.get("storage_class_name", DEFAULT_GP3_CLASS)
    v.dns_subdomain(name, "storage_class_name", storage_class_name)
    gp3 = parse_gp3_class(name, args)
    io2 = None
    if args.get("multi_attach_iops") is not None:
        io2 = parse_io2_multi_attach_class(name, args)
    io2_name = args.get("multi_attach_storage_class_name", DEFAULT_IO2_CLASS)
    v.dns_subdomain(name, "multi_attach_storage_class_name", io2_name)
    kms_key_arns = args.get("kms_key_arns", ()) or ()
    v.string_list(name, "kms_key_arns", kms_key_arns)
    keys: list[Any] = []
    for key in kms_key_arns:
        v.kms_key_arn(name, "kms_key_arns", key, alias_note=KMS_ALIAS_NOTE)
        keys.append(key)
    if gp3.kms_key_arn is not None and gp3.kms_key_arn not in keys:
        keys.append(gp3.kms_key_arn)
    if keys and identity == "none":
        raise ModelStoreInputError(
            name,
            "identity",
            identity,
            "irsa or pod-identity when KMS keys are given (grants go on the controller's role)",
        )
    labels = {
        **v.string_map(name, "labels", args.get("labels")),
        "app.kubernetes.io/managed-by": MANAGED_BY,
        "modelstore.pulumi.com/component": name,
    }
    user_tags = v.string_map(name, "tags", args.get("tags"))
    flags = {
        key: v.flag(name, key, args.get(key, default))
        for key, default in (
            ("create_snapshot_class", True),
            ("default_snapshot_class", False),
            ("create_storage_class", True),
            ("default_storage_class", False),
        )
    }
    return _DriverSpec(
        install=install,
        identity=identity,
        controller_service_account=service_account,
        kms_key_arns=tuple(keys),
        snapshot_controller=snapshot_controller,
        snapshot_controller_namespace=snapshot_ns,
        create_snapshot_class=flags["create_snapshot_class"],
        snapshot_class_name=snapshot_class_name,
        snapshot_deletion_policy=deletion_policy,
        default_snapshot_class=flags["default_snapshot_class"],
        snapshot_class_parameters=snapshot_params,
        create_storage_class=flags["create_storage_class"],
        storage_class_name=storage_class_name,
        default_storage_class=flags["default_storage_class"],
        gp3=gp3,
        io2=io2,
        multi_attach_storage_class_name=io2_name,
        labels=labels,
        tags={**user_tags, "app.kubernetes.io/managed-by": MANAGED_BY},
        user_tags=user_tags,
    )


def _driver_cluster(
    name: str, args: Mapping[str, Any], opts: pulumi.ResourceOptions | None
) -> EksClusterFacts:
    """The facts the driver needs: the cluster's name, region and OIDC issuer."""
    if args.get("cluster_name"):
        return resolve_cluster(
            name,
            {k: args[k] for k in ("cluster_name", "region", "oidc_issuer") if k in args},
            opts,
        )
    region = args.get("region") or aws.get_region(opts=invoke_options(opts)).region
    return EksClusterFacts(
        name=None,
        vpc_id="",
        subnet_ids=(),
        node_security_group_ids=(),
        region=region,
        oidc_issuer=args.get("oidc_issuer"),
    )


class EbsCsiDriver(pulumi.ComponentResource):
    """The EBS CSI driver for one EKS cluster, with everything snapshots need. Make ONE per
    cluster: a second one planning a Helm release or add-on of the driver or the snapshot
    controller on the same cluster is refused before anything registers. The same cluster is
    the same ``cluster_name`` or the same OIDC issuer (given, or looked up from the name); with
    neither, the same Kubernetes provider.

    Creates, in dependency order: the controller's IAM role (trust limited to exactly the
    controller's service account) with :func:`ebs_csi_driver_policy` inline, and for Pod
    Identity its association; the snapshot CRDs and snapshot controller; the driver, after both
    (its snapshotter sidecar is only rendered when the CRDs exist, so it is also forced on); the
    VolumeSnapshotClass and the storage classes, after the driver.
    """

    storage_class_name: pulumi.Output[str | None]
    """The gp3 StorageClass (None when ``create_storage_class`` is False)."""
    multi_attach_storage_class_name: pulumi.Output[str | None]
    """The io2 Multi-Attach StorageClass (None without ``multi_attach_iops``)."""
    snapshot_class_name: pulumi.Output[str | None]
    """The VolumeSnapshotClass; depends on the snapshot controller, so a VolumeSnapshot that
    uses it is created after the CRDs (None when ``create_snapshot_class`` is False)."""
    controller_role_arn: pulumi.Output[str | None]
    """The controller's IAM role (None with ``identity: none``)."""
    controller_service_account: pulumi.Output[str]
    """``<namespace>/<name>`` of the controller's service account, the role's only trustee."""

    def __init__(
        self,
        resource_name: str,
        args: EbsCsiDriverArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        raw: Mapping[str, Any] = dict(args or {})
        spec = parse_driver_args(resource_name, raw)
        cluster = _driver_cluster(resource_name, raw, opts)
        facts: IdentityFacts | None = None
        if spec.identity != "none":
            facts = resolve_identity(resource_name, spec.identity, cluster, opts)
        partition = aws.get_partition(opts=invoke_options(opts)).partition
        identity = _cluster_identity(cluster, opts)
        _claim_install(resource_name, "driver", spec.install.driver, "EBS CSI driver", identity)
        _claim_install(
            resource_name,
            "snapshot_controller",
            spec.snapshot_controller,
            "snapshot controller",
            identity,
        )

        super().__init__(DRIVER_TYPE_TOKEN, resource_name, None, opts)
        self._resource_name = resource_name
        self._spec = spec
        self.cluster = cluster

        self.controller_role: ServiceAccountRole | None = None
        if facts is not None:
            self.controller_role = service_account_role(
                f"{resource_name}-controller",
                facts=facts,
                namespace=spec.install.namespace,
                service_account=spec.controller_service_account,
                policy=ebs_csi_driver_policy(partition, spec.kms_key_arns),
                description=f"EBS CSI controller {spec.install.namespace}/"
                f"{spec.controller_service_account} (pulumi-modelstore {resource_name})",
                tags=spec.tags,
                parent=self,
            )
        self.snapshot_controller = self._install_snapshot_controller(resource_name, spec, cluster)
        self.driver_install = self._install_driver(resource_name, spec, cluster)
        after_driver = [r for r in (self.driver_install, self.snapshot_controller) if r]

        self.snapshot_class = None
        if spec.create_snapshot_class:
            self.snapshot_class = volume_snapshot_class(
                f"{resource_name}-snapshot-class",
                name=spec.snapshot_class_name,
                driver=EBS_CSI.driver,
                deletion_policy=spec.snapshot_deletion_policy,
                parameters=spec.snapshot_class_parameters,
                is_default=spec.default_snapshot_class,
                labels=spec.labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )
        self.storage_class = None
        if spec.create_storage_class:
            self.storage_class = gp3_storage_class(
                f"{resource_name}-gp3",
                name=spec.storage_class_name,
                spec=spec.gp3,
                is_default=spec.default_storage_class,
                labels=spec.labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )
        self.multi_attach_storage_class = None
        if spec.io2 is not None:
            self.multi_attach_storage_class = io2_multi_attach_storage_class(
                f"{resource_name}-io2-multi-attach",
                name=spec.multi_attach_storage_class_name,
                spec=spec.io2,
                labels=spec.labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )

        none: pulumi.Output[Any] = pulumi.Output.from_input(None)
        self.storage_class_name = (
            name_after(self.storage_class, spec.storage_class_name) if self.storage_class else none
        )
        self.multi_attach_storage_class_name = (
            name_after(self.multi_attach_storage_class, spec.multi_attach_storage_class_name)
            if self.multi_attach_storage_class
            else none
        )
        self.snapshot_class_name = (
            name_after(self.snapshot_class, spec.snapshot_class_name)
            if self.snapshot_class
            else none
        )
        self.controller_role_arn = self.controller_role.arn if self.controller_role else none
        self.controller_service_account = pulumi.Output.from_input(
            f"{spec.install.namespace}/{spec.controller_service_account}"
        )
        self.register_outputs(
            {
                "storageClassName": self.storage_class_name,
                "multiAttachStorageClassName": self.multi_attach_storage_class_name,
                "snapshotClassName": self.snapshot_class_name,
                "controllerRoleArn": self.controller_role_arn,
                "controllerServiceAccount": self.controller_service_account,
            }
        )

    def multi_attach_claim(
        self,
        resource_name: str,
        *,
        name: str,
        namespace: str,
        size: pulumi.Input[str],
        labels: Mapping[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> k8s.core.v1.PersistentVolumeClaim:
        """A :func:`multi_attach_claim` on this driver's io2 Multi-Attach class, created after
        the class, its ``size`` checked against the class's IOPS (at most 1,000 per GiB: the
        driver would silently cap the rest). Needs ``multi_attach_iops``."""
        spec = self._spec
        io2_class = self.multi_attach_storage_class
        if spec.io2 is None or io2_class is None:
            raise ModelStoreInputError(
                self._resource_name,
                "multi_attach_iops",
                None,
                "set for a Multi-Attach claim on this driver's io2 class",
            )
        return multi_attach_claim(
            resource_name,
            name=name,
            namespace=namespace,
            size=size,
            storage_class_name=name_after(io2_class, spec.multi_attach_storage_class_name),
            iops=spec.io2.iops,
            labels=labels,
            opts=opts,
        )

    def _identity_resources(self) -> list[pulumi.Resource]:
        role = self.controller_role
        if role is None:
            return []
        return [r for r in (role.policy, role.association) if r is not None]

    def _install_snapshot_controller(
        self, name: str, spec: _DriverSpec, cluster: EksClusterFacts
    ) -> pulumi.Resource | None:
        if spec.snapshot_controller == "none":
            return None
        if spec.snapshot_controller == "eks-addon":
            return eks_addon(
                f"{name}-snapshot-controller",
                SNAPSHOT_CONTROLLER,
                cluster_name=cluster.name,
                tags=spec.tags,
                parent=self,
            )
        # The chart renders the VolumeSnapshot CRDs itself (templates/crds.yaml, on by default).
        return helm_release(
            f"{name}-snapshot-controller",
            SNAPSHOT_CONTROLLER,
            namespace=spec.snapshot_controller_namespace,
            values={"installCRDs": True},
            parent=self,
        )

    def _install_driver(
        self, name: str, spec: _DriverSpec, cluster: EksClusterFacts
    ) -> pulumi.Resource | None:
        if spec.install.driver == "none":
            return None
        # The controller must start with its permissions, and after the snapshot CRDs: the
        # driver's install guide wants the CRDs first.
        depends_on = self._identity_resources() + (
            [self.snapshot_controller] if self.snapshot_controller else []
        )
        role = self.controller_role
        if spec.install.driver == "eks-addon":
            return eks_addon(
                f"{name}-ebs-csi-driver",
                EBS_CSI,
                cluster_name=cluster.name,
                install=spec.install,
                # GPU nodes are tainted; a node plugin that does not run there cannot mount.
                defaults={"node": {"tolerateAllTaints": True}},
                role=role,
                tags=spec.tags,
                parent=self,
                depends_on=depends_on,
            )
        controller: dict[str, Any] = {
            "region": cluster.region,
            "serviceAccount": {
                "create": True,
                "name": spec.controller_service_account,
                "annotations": role.service_account_annotations() if role is not None else {},
            },
        }
        if cluster.name:
            # Adds ebs.csi.aws.com/cluster-name (and kubernetes.io/cluster/<name>) tags, the key
            # AWS's cluster-scoped policy uses.
            controller["k8sTagClusterId"] = cluster.name
        if spec.user_tags:
            controller["extraVolumeTags"] = spec.user_tags
        values: dict[str, Any] = {
            "controller": controller,
            # GPU nodes are tainted; a node plugin that does not run there cannot mount.
            "node": {"tolerateAllTaints": True},
        }
        if spec.snapshot_controller != "none" or spec.create_snapshot_class:
            # The chart adds the csi-snapshotter sidecar only if the CRDs already exist when it
            # renders; force it so one `pulumi up` that installs both still gets snapshots.
            values["sidecars"] = {"snapshotter": {"forceEnable": True}}
        return helm_release(
            f"{name}-ebs-csi-driver",
            EBS_CSI,
            namespace=spec.install.namespace,
            values=values,
            parent=self,
            depends_on=depends_on,
        )
