"""The EBS CSI driver for one EKS cluster (:class:`EbsCsiDriver`): the driver (Helm chart pinned
in ``aws/drivers.py``, the EKS add-on, or none), its controller's IAM identity (IRSA or EKS Pod
Identity) with the least-privilege policy of ``policies.ebs_csi_driver_policy``, the snapshot
CRDs and ONE snapshot controller, a VolumeSnapshotClass (deletionPolicy Retain), a gp3
StorageClass and optionally an io2 Multi-Attach class."""

# No `from __future__ import annotations`: the component analyzer and the field machinery read
# the args TypedDict and the output annotations as objects.
# Signatures naming a provider SDK class quote it: evaluated at import, it would load the SDK's
# lazily loaded modules (about half a second of every plan's start-up).

import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pulumi.runtime.settings import get_root_resource

from ... import validation as v
from ...errors import ModelStoreInputError
from ...fields import Parser
from ...kube.drivers import helm_release
from ...kube.snapshots import DELETION_POLICIES, name_after, volume_snapshot_class
from ...store import MANAGED_BY
from .. import validation as aws_v
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
from ..tags import CLUSTER_TAG_KEYS
from .classes import (
    DRIVER_VOLUME_TAGS,
    Gp3VolumeArgs,
    Io2MultiAttachClass,
    checked,
    driver_tag,
    ebs_storage_class,
    gp3_rules,
    io2_rules,
    kms_key_is_an_arn,
    multi_attach_claim,
)
from .component import EbsComponent

DRIVER_TYPE_TOKEN = "modelstore:index:EbsCsiDriver"
COMPONENT_LABEL = "modelstore.pulumi.com/component"
"""The label naming the driver component on every Kubernetes object it makes."""
COMPONENT_NAME = "component name"
"""The field an error about the component's own name names."""
RENAMED_FIELDS = MappingProxyType({"driver": "driver_install"})
"""Old spelling -> new, accepted with a deprecation warning for one release."""
IDENTITY_CHOICES = ("irsa", "pod-identity", "none")

ADDON_FIXED = (
    "unset when driver_install is eks-addon (the add-on runs ebs-csi-controller-sa in kube-system)"
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


class EbsCsiDriverArgs(DriverInstallArgs, Gp3VolumeArgs, total=False):
    """Arguments of :class:`EbsCsiDriver`. Every field is optional but ``cluster_name`` where
    noted.

    The driver install (:class:`DriverInstallArgs`): ``driver_install`` (formerly ``driver``,
    still accepted with a deprecation warning) installs this component's driver and snapshot
    controller, once per cluster; ``driver_namespace`` is also the controller's service
    account's, and not for ``driver_install: eks-addon`` (the add-on always runs in
    kube-system). The add-on's node pods tolerate all taints too: ``eks_addon_configuration``
    is merged over this component's own (``node.tolerateAllTaints: true``)."""

    cluster_name: str
    """The EKS cluster. Required for ``driver_install: eks-addon``, ``snapshot_controller:
    eks-addon`` and ``identity: pod-identity``; for IRSA its OIDC issuer is looked up from it.
    Default: none (then give ``oidc_issuer`` for IRSA)."""
    oidc_issuer: str
    """The cluster's OIDC issuer URL, for IRSA, known before deploy. Default: looked up from the
    cluster. Either way the preview fails when IAM has no OIDC provider for it."""
    region: pulumi.Input[str]
    """AWS region, passed to the controller for pods where IMDS is blocked. Default: the AWS
    provider's region."""
    identity: str
    """The controller's AWS identity: ``irsa`` (the role ARN goes on the controller's service
    account, and the preview fails without the cluster's IAM OIDC provider), ``pod-identity``
    (an EKS Pod Identity association; the cluster needs the Pod Identity agent), or ``none``
    (the existing install's identity is left alone). Default: ``none`` with ``driver_install:
    none``, else ``irsa``."""
    controller_service_account: str
    """The controller's service account, which the role's trust policy names exactly. Not for
    ``eks-addon``. Default: ``ebs-csi-controller-sa`` (the chart's and the add-on's)."""
    kms_key_arns: Sequence[pulumi.Input[str]]
    """Customer managed KMS keys the driver may use for volumes, besides ``kms_key_arn``.
    Default: none (volumes encrypted with the AWS managed ``aws/ebs`` key need no grant)."""
    snapshot_controller: str
    """How the VolumeSnapshot CRDs and the ONE snapshot controller per cluster get there:
    ``helm`` (chart ``snapshot-controller`` pinned in ``aws/drivers.py``; it installs the CRDs),
    ``eks-addon`` (the ``snapshot-controller`` add-on) or ``none`` (the cluster has them).
    Default: the same as ``driver_install``."""
    snapshot_controller_namespace: str
    """Namespace of the snapshot controller's Helm release. Default: ``kube-system``."""
    create_snapshot_class: bool
    """Create the VolumeSnapshotClass. Default: ``true``."""
    snapshot_class_name: str
    """Name of the VolumeSnapshotClass for ``ebs.csi.aws.com``. Default: ``ebs-snapshots``."""
    snapshot_deletion_policy: str
    """``Retain`` (deleting a VolumeSnapshot keeps the EBS snapshot and its
    VolumeSnapshotContent) or ``Delete`` (deleting the VolumeSnapshot deletes the data).
    Default: ``Retain``."""
    default_snapshot_class: bool
    """Mark the snapshot class as the cluster's default. Default: ``false``."""
    snapshot_class_parameters: Mapping[str, pulumi.Input[str]]
    """Driver parameters for snapshots: ``tagSpecification_<n>`` (``key=value`` tags) and the
    other keys the driver's CreateSnapshot reads (``fastSnapshotRestoreAvailabilityZones``,
    ``outpostArn``, ``lockMode``, ``lockDuration``...); any other key fails every snapshot.
    Default: none."""
    create_storage_class: bool
    """Create the gp3 StorageClass. Default: ``true``."""
    storage_class_name: str
    """Name of the gp3 StorageClass. Default: ``ebs-gp3``."""
    default_storage_class: bool
    """Mark the gp3 class as the cluster's default. Default: ``false``."""
    reclaim_policy: str
    """``Delete`` (a deleted claim deletes its volume; caches restore from snapshots) or
    ``Retain`` (volumes outlive their claims and must be deleted by hand). Default:
    ``Delete``."""
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
    on every volume and snapshot the driver creates (``controller.extraVolumeTags``): AWS tags
    (keys of 1 to 128 characters not starting with ``aws:``, values of at most 256), with Helm
    also tags the driver takes (as ``volume_tags``) and at most 50 on each volume with the
    driver's own and ``volume_tags``. Default: the library's own only."""


INSTALL_FIELDS = (
    "driver_install",
    "driver_namespace",
    "eks_addon_version",
    "eks_addon_configuration",
)


# -- the driver's rules -----------------------------------------------------------------------


def addon_runs_its_own_service_account(
    store: str, driver_install: Any, controller_service_account: Any
) -> None:
    """The EKS add-on runs ebs-csi-controller-sa in kube-system: a service account given with
    it would not be the one the role trusts."""
    if driver_install == "eks-addon":
        raise ModelStoreInputError(
            store, "controller_service_account", controller_service_account, ADDON_FIXED
        )


def cluster_named_when_needed(
    store: str, cluster_name: Any, driver_install: Any, snapshot_controller: Any, identity: Any
) -> None:
    """EKS add-ons and Pod Identity associations are made on a named cluster."""
    needs = [
        (key, choice)
        for key, choice in (
            ("driver_install", driver_install),
            ("snapshot_controller", snapshot_controller),
            ("identity", identity),
        )
        if choice in ("eks-addon", "pod-identity")
    ]
    if needs and not cluster_name:
        key, choice = needs[0]
        raise ModelStoreInputError(
            store, "cluster_name", cluster_name, f"the EKS cluster's name when {key} is {choice}"
        )


def kms_keys_are_arns(store: str, field_name: str, keys: Sequence[Any]) -> None:
    for key in keys:
        kms_key_is_an_arn(store, field_name, key)


def kms_keys_need_an_identity(
    store: str, identity: Any, kms_key_arns: Any, kms_key_arn: Any
) -> None:
    """Key grants go on the controller's role: without one, no volume could use the key."""
    if (kms_key_arns or kms_key_arn is not None) and identity == "none":
        raise ModelStoreInputError(
            store,
            "identity",
            identity,
            "irsa or pod-identity when KMS keys are given (grants go on the controller's role)",
        )


def tags_fit(store: str, field_name: str, tags: Mapping[str, Any]) -> None:
    """The component's tags on its AWS resources (role, add-ons, association), with its own
    ``app.kubernetes.io/managed-by``: AWS tags, at most 50 (``aws/validation.py``)."""
    aws_v.tags(store, field_name, tags, CLUSTER_TAG_KEYS, "the component")


def extra_volume_tags_fit(store: str, driver_install: Any, tags: Any, volume_tags: Any) -> None:
    """With Helm the tags are also the driver's extra tags (``controller.extraVolumeTags``) on
    every volume and snapshot it creates: tags the driver takes (``classes.driver_tag``), and
    with the driver's own and the class's ``volume_tags`` at most 50 on each volume."""
    if driver_install != "helm" or not tags:
        return
    for key, value in tags.items():
        driver_tag(store, "tags", key, value)
    others = set(DRIVER_VOLUME_TAGS) | set(volume_tags or {})
    allowed = aws_v.TAGS_PER_RESOURCE - len(others - set(tags))
    if len(tags) > allowed:
        classes = f" and the {len(volume_tags)} of volume_tags" if volume_tags else ""
        raise ModelStoreInputError(
            store,
            "tags",
            len(tags),
            f"at most {allowed} tags (with Helm they go on every volume the driver creates, "
            f"with the driver's own {len(DRIVER_VOLUME_TAGS)}{classes}: AWS allows "
            f"{aws_v.TAGS_PER_RESOURCE} per volume)",
        )


# The parameters the driver's CreateSnapshot reads (aws-ebs-csi-driver v1.64.0,
# pkg/driver/controller.go and constants.go), matched in lower case, besides the
# tagSpecification* ones; any other key fails every snapshot of the class ("Invalid parameter
# key %s for CreateSnapshot"). lockduration and lockcooloffperiod are parsed as 32-bit integers.
SNAPSHOT_PARAMETERS = (
    "csi.storage.k8s.io/volumesnapshot/name",
    "csi.storage.k8s.io/volumesnapshot/namespace",
    "csi.storage.k8s.io/volumesnapshotcontent/name",
    "fastsnapshotrestoreavailabilityzones",
    "outpostarn",
    "lockmode",
    "lockduration",
    "lockexpirationdate",
    "lockcooloffperiod",
)
_INT32 = re.compile(r"[+-]?[0-9]+")


def snapshot_parameters_known(store: str, field_name: str, parameters: Mapping[str, Any]) -> None:
    """Each key one the driver's CreateSnapshot reads (:data:`SNAPSHOT_PARAMETERS`, or
    ``tagSpecification_<n>``), the lock periods whole numbers."""
    for name, value in parameters.items():
        key = name.lower()
        if not name.startswith("tagSpecification") and key not in SNAPSHOT_PARAMETERS:
            raise ModelStoreInputError(
                store,
                f"{field_name} key",
                name,
                "tagSpecification_<n> or one of the keys the EBS CSI driver's snapshots read "
                f"(any case): {', '.join(SNAPSHOT_PARAMETERS)}",
            )
        if key in ("lockduration", "lockcooloffperiod") and not v.is_output(value):
            number = int(value) if _INT32.fullmatch(value) else None
            if number is None or not -(2**31) <= number < 2**31:
                raise ModelStoreInputError(
                    store, f"{field_name}.{name}", value, "a whole number (a 32-bit integer)"
                )


def snapshot_tags_fit(store: str, field_name: str, parameters: Mapping[str, Any]) -> None:
    """The snapshot class's ``tagSpecification_<n>`` parameters are tags on every snapshot, as
    ``key=value`` (docs/tagging.md "Snapshot Tagging"): each a tag the driver takes."""
    for name, value in parameters.items():
        if not name.startswith("tagSpecification") or v.is_output(value):
            continue
        key, equals, text = value.partition("=")
        if not equals:
            raise ModelStoreInputError(
                store, f"{field_name}.{name}", value, "a tag as key=value (e.g. team=ml)"
            )
        driver_tag(store, f"{field_name}.{name}", key, text)


def _install(p: Parser) -> DriverInstall | None:
    """The driver install (``drivers.parse_driver_install``, the one parser of these fields)."""
    if not p.ok(*INSTALL_FIELDS):
        return None
    if p["driver_install"] is None:
        p.set("driver_install", "helm")  # None asks for the default
    given = {k: p[k] for k in INSTALL_FIELDS if k in p.values}
    install: DriverInstall | None = p.check(
        lambda: parse_driver_install(
            p.store,
            given,
            namespace_unset_for={"eks-addon": ADDON_FIXED},
            # Checked by cluster_named_when_needed, with every other choice needing it.
            check_cluster_name=False,
        )
    )
    return install


def driver_rules(p: Parser) -> None:
    """Every rule of :class:`EbsCsiDriverArgs`; derives ``install`` (a ``DriverInstall``),
    ``gp3``, ``io2`` (None without ``multi_attach_iops``) and ``kms_key_arns`` (every key the
    driver may use)."""
    # The component's name is the value of its COMPONENT_LABEL on every object it makes.
    p.check(lambda: v.name_is_label_value(p.store, COMPONENT_NAME, COMPONENT_LABEL))
    install = _install(p)
    p.derived["install"] = install
    if "controller_service_account" in p:
        p.rule(addon_runs_its_own_service_account, "driver_install", "controller_service_account")
    checked(p, v.dns_subdomain, "controller_service_account")
    driver = install.driver if install is not None else None
    if "identity" not in p and driver is not None:
        p.set("identity", "none" if driver == "none" else "irsa")
    checked(p, v.one_of, "identity", IDENTITY_CHOICES)
    # By default the snapshot controller comes the same way as the driver.
    if "snapshot_controller" not in p and driver is not None:
        p.set("snapshot_controller", driver)
    checked(p, v.one_of, "snapshot_controller", DRIVER_INSTALLS)
    p.rule(
        cluster_named_when_needed,
        "cluster_name",
        "driver_install",
        "snapshot_controller",
        "identity",
    )
    checked(p, v.dns_label, "snapshot_controller_namespace")
    checked(p, v.dns_subdomain, "snapshot_class_name")
    checked(p, v.one_of, "snapshot_deletion_policy", DELETION_POLICIES)
    checked(p, v.dns_subdomain, "storage_class_name")
    gp3_rules(p)
    io2_rules(p)
    checked(p, v.dns_subdomain, "multi_attach_storage_class_name")
    p.field_rule(v.label_map, "labels")
    p.field_rule(kms_keys_are_arns, "kms_key_arns")
    p.rule(kms_keys_need_an_identity, "identity", "kms_key_arns", "kms_key_arn")
    for flag in (
        "create_snapshot_class",
        "default_snapshot_class",
        "create_storage_class",
        "default_storage_class",
    ):
        checked(p, v.flag, flag)
    if p.ok("kms_key_arns", "kms_key_arn"):
        keys = list(p["kms_key_arns"] or ())
        if p["kms_key_arn"] is not None and p["kms_key_arn"] not in keys:
            keys.append(p["kms_key_arn"])
        p.derived["kms_key_arns"] = tuple(keys)
    # What reaches AWS: the cluster's name, its region, the tags, the names derived from the
    # component's.
    p.field_rule(aws_v.eks_cluster_name, "cluster_name")
    p.field_rule(aws_v.region, "region")
    p.field_rule(aws_v.oidc_issuer, "oidc_issuer")
    p.field_rule(tags_fit, "tags")
    p.rule(extra_volume_tags_fit, "driver_install", "tags", "volume_tags")
    p.field_rule(snapshot_parameters_known, "snapshot_class_parameters")
    p.field_rule(snapshot_tags_fit, "snapshot_class_parameters")


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


class EbsCsiDriver(EbsComponent):
    """The EBS CSI driver for one EKS cluster, with everything snapshots need. Make ONE per
    cluster: a second one planning a Helm release or add-on of the driver or the snapshot
    controller on the same cluster is refused before anything registers. The same cluster is
    the same ``cluster_name`` or the same OIDC issuer (given, or looked up from the name); with
    neither, the same Kubernetes provider.

    Creates, in dependency order: the controller's IAM role (trust limited to exactly the
    controller's service account) with ``policies.ebs_csi_driver_policy`` inline, and for Pod
    Identity its association; the snapshot CRDs and snapshot controller; the driver, after both
    (its snapshotter sidecar is only rendered when the CRDs exist, so it is also forced on); the
    VolumeSnapshotClass and the storage classes, after the driver.

    The controller's policy holds the statements of AWS's managed policy, narrowed: volumes and
    snapshots are modified, attached, snapshotted and deleted only when the driver tagged them,
    tags are set while creating and later never on the driver's own keys, and customer KMS
    keys get grants and data-key actions on those keys only. The gp3 class binds on first
    consumer and allows volume expansion; the io2 Multi-Attach class gives Block-mode
    ReadWriteMany claims, and the application must fence its writes.
    """

    storage_class_name: pulumi.Output[str | None]
    """The gp3 StorageClass (``null`` when ``create_storage_class`` is ``false``)."""
    multi_attach_storage_class_name: pulumi.Output[str | None]
    """The io2 Multi-Attach StorageClass (``null`` without ``multi_attach_iops``)."""
    snapshot_class_name: pulumi.Output[str | None]
    """The VolumeSnapshotClass; depends on the snapshot controller, so a VolumeSnapshot that
    uses it is created after the CRDs (``null`` when ``create_snapshot_class`` is ``false``)."""
    controller_role_arn: pulumi.Output[str | None]
    """The controller's IAM role (``null`` with ``identity: none``)."""
    controller_service_account: pulumi.Output[str]
    """``<namespace>/<name>`` of the controller's service account, the role's only trustee."""

    _args_type = EbsCsiDriverArgs
    _renamed_fields = RENAMED_FIELDS

    @classmethod
    def rules(cls, p: Parser) -> None:
        driver_rules(p)

    def __init__(
        self,
        resource_name: str,
        args: EbsCsiDriverArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        values, derived = type(self).parse(resource_name, args)
        install: DriverInstall = derived["install"]
        cluster = _driver_cluster(resource_name, values, opts)
        facts: IdentityFacts | None = None
        if values["identity"] != "none":
            facts = resolve_identity(resource_name, values["identity"], cluster, opts)
        partition = aws.get_partition(opts=invoke_options(opts)).partition
        identity = _cluster_identity(cluster, opts)
        _claim_install(resource_name, "driver_install", install.driver, "EBS CSI driver", identity)
        _claim_install(
            resource_name,
            "snapshot_controller",
            values["snapshot_controller"],
            "snapshot controller",
            identity,
        )

        super().__init__(DRIVER_TYPE_TOKEN, resource_name, None, opts)
        self._resource_name = resource_name
        self._values = values
        self._driver_choice = install
        self._io2: Io2MultiAttachClass | None = derived.get("io2")
        self.cluster = cluster
        user_tags = dict(values["tags"] or {})
        self._user_tags = user_tags
        self._tags = {**user_tags, "app.kubernetes.io/managed-by": MANAGED_BY}
        labels = {
            **(values["labels"] or {}),
            "app.kubernetes.io/managed-by": MANAGED_BY,
            COMPONENT_LABEL: resource_name,
        }
        service_account = values["controller_service_account"]

        self.controller_role: ServiceAccountRole | None = None
        if facts is not None:
            self.controller_role = service_account_role(
                f"{resource_name}-controller",
                facts=facts,
                namespace=install.namespace,
                service_account=service_account,
                policy=ebs_csi_driver_policy(partition, derived["kms_key_arns"]),
                description=f"EBS CSI controller {install.namespace}/"
                f"{service_account} (pulumi-modelstore {resource_name})",
                tags=self._tags,
                parent=self,
            )
        self.snapshot_controller = self._install_snapshot_controller(resource_name, cluster)
        self.driver_install = self._install_driver(resource_name, cluster)
        # The classes come after the driver (and the snapshot CRDs): claims and snapshots made
        # on them use storage_class_name / snapshot_class_name (name_after, a data edge), so
        # they wait for the driver and a destroy deletes them before it; a claim or snapshot
        # deleted without the driver leaves its EBS volume or snapshot and a stuck finalizer
        # (order: class-after-driver).
        after_driver = [r for r in (self.driver_install, self.snapshot_controller) if r]

        self.snapshot_class = None
        if values["create_snapshot_class"]:
            self.snapshot_class = volume_snapshot_class(
                f"{resource_name}-snapshot-class",
                name=values["snapshot_class_name"],
                driver=EBS_CSI.driver,
                deletion_policy=values["snapshot_deletion_policy"],
                parameters=dict(values["snapshot_class_parameters"] or {}),
                is_default=values["default_snapshot_class"],
                labels=labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )
        self.storage_class = None
        if values["create_storage_class"]:
            self.storage_class = ebs_storage_class(
                f"{resource_name}-gp3",
                name=values["storage_class_name"],
                spec=derived["gp3"],
                is_default=values["default_storage_class"],
                labels=labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )
        self.multi_attach_storage_class = None
        if self._io2 is not None:
            self.multi_attach_storage_class = ebs_storage_class(
                f"{resource_name}-io2-multi-attach",
                name=values["multi_attach_storage_class_name"],
                spec=self._io2,
                labels=labels,
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_driver),
            )

        none: pulumi.Output[Any] = pulumi.Output.from_input(None)
        self.storage_class_name = (
            name_after(self.storage_class, values["storage_class_name"])
            if self.storage_class
            else none
        )
        self.multi_attach_storage_class_name = (
            name_after(self.multi_attach_storage_class, values["multi_attach_storage_class_name"])
            if self.multi_attach_storage_class
            else none
        )
        self.snapshot_class_name = (
            name_after(self.snapshot_class, values["snapshot_class_name"])
            if self.snapshot_class
            else none
        )
        self.controller_role_arn = self.controller_role.arn if self.controller_role else none
        self.controller_service_account = pulumi.Output.from_input(
            f"{install.namespace}/{service_account}"
        )
        self.register_annotated()

    def multi_attach_claim(
        self,
        resource_name: str,
        *,
        name: str,
        namespace: str,
        size: pulumi.Input[str],
        labels: Mapping[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> "k8s.core.v1.PersistentVolumeClaim":
        """A :func:`multi_attach_claim` on this driver's io2 Multi-Attach class, created after
        the class, its ``size`` checked against the class's IOPS (at most 1,000 per GiB: the
        driver would silently cap the rest). Needs ``multi_attach_iops``."""
        io2 = self._io2
        io2_class = self.multi_attach_storage_class
        if io2 is None or io2_class is None:
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
            storage_class_name=name_after(
                io2_class, self._values["multi_attach_storage_class_name"]
            ),
            iops=io2.iops,
            labels=labels,
            opts=opts,
        )

    def _identity_resources(self) -> list[pulumi.Resource]:
        role = self.controller_role
        if role is None:
            return []
        return [r for r in (role.policy, role.association) if r is not None]

    def _install_snapshot_controller(
        self, name: str, cluster: EksClusterFacts
    ) -> pulumi.Resource | None:
        choice = self._values["snapshot_controller"]
        if choice == "none":
            return None
        if choice == "eks-addon":
            return eks_addon(
                f"{name}-snapshot-controller",
                SNAPSHOT_CONTROLLER,
                cluster_name=cluster.name,
                tags=self._tags,
                parent=self,
            )
        # The chart renders the VolumeSnapshot CRDs itself (templates/crds.yaml, on by default).
        return helm_release(
            f"{name}-snapshot-controller",
            SNAPSHOT_CONTROLLER,
            namespace=self._values["snapshot_controller_namespace"],
            values={"installCRDs": True},
            parent=self,
        )

    def _install_driver(self, name: str, cluster: EksClusterFacts) -> pulumi.Resource | None:
        install = self._driver_choice
        if install.driver == "none":
            return None
        # The controller must start with its permissions, and after the snapshot CRDs: the
        # driver's install guide wants the CRDs first (order: driver-install-order).
        depends_on = self._identity_resources() + (
            [self.snapshot_controller] if self.snapshot_controller else []
        )
        role = self.controller_role
        if install.driver == "eks-addon":
            return eks_addon(
                f"{name}-ebs-csi-driver",
                EBS_CSI,
                cluster_name=cluster.name,
                install=install,
                # GPU nodes are tainted; a node plugin that does not run there cannot mount.
                defaults={"node": {"tolerateAllTaints": True}},
                role=role,
                tags=self._tags,
                parent=self,
                depends_on=depends_on,
            )
        controller: dict[str, Any] = {
            "region": cluster.region,
            "serviceAccount": {
                "create": True,
                "name": self._values["controller_service_account"],
                "annotations": role.service_account_annotations() if role is not None else {},
            },
        }
        if cluster.name:
            # Adds ebs.csi.aws.com/cluster-name (and kubernetes.io/cluster/<name>) tags, the key
            # AWS's cluster-scoped policy uses.
            controller["k8sTagClusterId"] = cluster.name
        if self._user_tags:
            controller["extraVolumeTags"] = self._user_tags
        values: dict[str, Any] = {
            "controller": controller,
            # GPU nodes are tainted; a node plugin that does not run there cannot mount.
            "node": {"tolerateAllTaints": True},
        }
        if self._values["snapshot_controller"] != "none" or self._values["create_snapshot_class"]:
            # The chart adds the csi-snapshotter sidecar only if the CRDs already exist when it
            # renders; force it so one `pulumi up` that installs both still gets snapshots.
            values["sidecars"] = {"snapshotter": {"forceEnable": True}}
        return helm_release(
            f"{name}-ebs-csi-driver",
            EBS_CSI,
            namespace=install.namespace,
            values=values,
            parent=self,
            depends_on=depends_on,
        )
