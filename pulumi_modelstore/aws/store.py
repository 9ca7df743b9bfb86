"""What every AWS store shares on the skeleton: the EKS cluster scope it joins, the driver
install through that scope, and AWS tags."""

# No `from __future__ import annotations`: the component analyzer reads these annotations.

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

import pulumi

from ..access import Access, Consumer, SourceGrant
from ..fields import Parser
from ..kube.drivers import CsiDriverChart, helm_release
from ..kube.model_jobs import seed_service_account
from ..model.sources import parse_source
from ..modelsection import job_fills
from ..store import STORE_NAME, ModelStore, ModelStoreArgs, Spec
from . import identity as aws_identity
from . import names
from . import validation as aws_v
from .cluster import EksCluster, EksClusterArgs, _check_given_facts, cluster_named
from .drivers import DriverInstall, DriverInstallArgs, describe_install, eks_addon
from .identity import IdentityFacts, ServiceAccountRole, attach_policy
from .policies import source_read_policy
from .tags import STORE_TAG_KEYS, cluster_tags, store_tags


class AwsModelStoreArgs(ModelStoreArgs, EksClusterArgs, DriverInstallArgs, total=False):
    """Fields every AWS store takes: the contract's, the cluster's, the driver install's."""

    tags: Mapping[str, str]
    """Tags merged onto every AWS resource of the store: at most 47 (AWS allows 50 per resource
    and the store adds its own three), keys of 1 to 128 characters not starting with ``aws:``,
    values of at most 256, both of letters, digits, spaces and ``_ . : / = + - @``. Default:
    none besides ``Name`` and the store's own keys (``modelstore.pulumi.com/store``,
    ``app.kubernetes.io/managed-by``)."""


@dataclass(frozen=True)
class SourceFacts:
    """What the seed Job's read grant on an ``s3://`` source needs: the partition its ARNs
    are in, and how a role of its own reaches its pod."""

    partition: str
    identity: IdentityFacts


# An AWS store's args type: its hooks here read the fields every AWS store has.
AwsArgs = TypeVar("AwsArgs", bound=AwsModelStoreArgs)


class AwsModelStore(ModelStore[AwsArgs, EksCluster]):
    """Base of the AWS stores: joins the :class:`EksCluster` its ``cluster_name`` (or
    ``cluster``) names, and installs its CSI driver once per cluster through it."""

    args_type = AwsModelStoreArgs
    cluster_type = EksCluster
    renamed_fields = MappingProxyType({"driver": "driver_install"})
    # A model from hf:// or s3:// is seeded by the Job, which runs as the store's AWS identity.
    model_fill = job_fills(cloud="s3")
    # The store reads the cluster's network (VPC, subnets, node security groups): its cluster
    # is named or those facts are given (`cluster_named`). A store that needs only the name,
    # for what it makes on the cluster, asks for it in its own rules (S3).
    reads_cluster_network = True
    # The backend's CSI driver chart (private: annotations on a component are its outputs).
    _csi_chart: ClassVar[CsiDriverChart | None] = None

    def driver_chart(self, spec: Spec[AwsArgs]) -> CsiDriverChart | None:
        """The chart the store installs (a backend whose version is an input overrides it)."""
        return self._csi_chart

    def check_cluster(self, spec: Spec[AwsArgs], cluster: EksCluster) -> None:
        """A driver install another store of the cluster set differently is refused before
        this store registers anything."""
        install, chart = spec.derived.get("install"), self.driver_chart(spec)
        if isinstance(install, DriverInstall) and chart is not None and install.driver != "none":
            cluster.check_install(chart.driver, spec.common.name, describe_install(install, chart))

    @classmethod
    def scope_key(cls, args: Mapping[str, Any]) -> tuple[str, str]:
        return ("eks", EksCluster.name_for(args))

    @classmethod
    def cloud_rules(cls, p: Parser) -> None:
        """The cluster's facts, checked before anything registers (the scope checks them
        again when it is made; a store's ``validate()`` finds them here), the cluster named
        (or described, where the store reads its network) and what every AWS store checks
        (:meth:`aws_rules`)."""
        cls.fact_rules(p)
        if cls.reads_cluster_network:
            p.rule(
                cluster_named,
                "cluster",
                "cluster_name",
                "vpc_id",
                "cluster_subnet_ids",
                "node_security_group_ids",
                "driver_install",
            )
        cls.aws_rules(p)

    @staticmethod
    def fact_rules(p: Parser) -> None:
        """The explicit cluster facts: types, non-empty lists, ids and the region as AWS
        writes them (``cluster._check_given_facts``)."""
        p.rule(
            _check_given_facts,
            "vpc_id",
            "cluster_subnet_ids",
            "node_security_group_ids",
            "region",
            "oidc_issuer",
        )

    @classmethod
    def aws_rules(cls, p: Parser) -> None:
        """What every AWS store sends AWS whatever its backend: the EKS cluster's name and the
        tags (with the store's own, at most 50 a resource). The store name they carry is a
        Kubernetes label value already (store.py), which AWS tag values accept."""
        p.field_rule(aws_v.eks_cluster_name, "cluster_name")
        p.field_rule(store_tags_fit, "tags")

    @staticmethod
    def tags(spec: Spec[AwsModelStoreArgs]) -> dict[str, str]:
        return store_tags(spec.common.name, spec.args.get("tags") or {})

    def source_preflight(self, spec: Spec[AwsArgs], cluster: EksCluster, facts: Any) -> SourceFacts:
        """The partition and the identity facts (IRSA: the cluster's OIDC provider) the seed
        Job's role for an ``s3://`` source needs, looked up once per cluster, before anything
        registers. The role reaches the pod as the store's ``identity`` says (default:
        irsa)."""
        given = spec.args.get("identity")  # a field of the stores that make roles (EFS, S3)
        kind = given if isinstance(given, str) else "irsa"
        return SourceFacts(cluster.partition(), cluster.identity(spec.common.name, kind))

    def source_access(
        self,
        spec: Spec[AwsArgs],
        cluster: EksCluster,
        facts: Any,
        source_facts: SourceFacts,
        access: Access,
    ) -> SourceGrant:
        """Read on the ``s3://`` source (``policies.source_read_policy``: list under its
        prefix, get its objects) for the seed Job alone: an inline policy of its own on the
        loader namespace's consumer role where the store gives its consumers roles (Mountpoint
        with pod-level credentials, one role per namespace), else a role of the seed Job's own
        (IRSA or Pod Identity), trusted by the loader namespace's ``<claim>-seed`` service
        account only. Readers' roles never get it."""
        c = spec.common
        assert c.model is not None and c.loader is not None
        source = parse_source(c.model.source)
        policy = source_read_policy(source_facts.partition, source.location, source.prefix)
        granted = access.by_namespace.get(c.loader)
        role = granted.resources.get("role") if granted is not None else None
        if isinstance(role, ServiceAccountRole):
            return SourceGrant(ready=[attach_policy(f"{c.name}-seed-source", role, policy, self)])
        account = Consumer(c.loader, False, seed_service_account(c.claim_name))
        grant = aws_identity.grant(
            f"{c.name}-seed-{c.loader}",
            facts=source_facts.identity,
            consumers=[account],
            policy=policy,
            description=f"Seed Job of model store {c.name}: reads {c.model.source}",
            tags=self.tags(spec),
            parent=self,
        )
        return SourceGrant(ready=grant.ready, account=account, grant=grant)

    def install_driver(
        self,
        spec: Spec[AwsModelStoreArgs],
        cluster: EksCluster,
        install: DriverInstall,
        *,
        helm_values: Mapping[str, Any],
        old_name: str,
        chart: CsiDriverChart,
        role: ServiceAccountRole | None = None,
        addon_defaults: Mapping[str, Any] | None = None,
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> pulumi.Resource | None:
        """The store's CSI driver on its cluster: made once per cluster by the scope, for the first
        store that asks; every later store gets the same install (and a store asking for a
        different one is refused, naming the first). ``driver_install: none`` asks for nothing
        and gets another store's install, if any, so its PVs still wait for the driver.

        The install is the scope's child, named ``<cluster>-<chart>``; ``old_name`` is what it
        was called under its first store before it moved (an alias, so no replacement)."""
        store_name = spec.common.name
        if install.driver == "none":
            return cluster.install_once(chart.driver, store_name, None, lambda: None)

        def make() -> pulumi.Resource:
            name = f"{cluster.scope_name}-{chart.chart}"
            opts = cluster.child_options(old_name=old_name, old_parent=self)
            if install.driver == "eks-addon":
                return eks_addon(
                    name,
                    chart,
                    cluster_name=cluster.name,
                    install=install,
                    defaults=addon_defaults,
                    role=role,
                    tags=cluster_tags(spec.args.get("tags") or {}),
                    parent=cluster,
                    depends_on=depends_on,
                    opts=opts,
                )
            return helm_release(
                name,
                chart,
                namespace=install.namespace,
                values=helm_values,
                parent=cluster,
                depends_on=depends_on,
                opts=opts,
            )

        return cluster.install_once(
            chart.driver, store_name, describe_install(install, chart), make
        )


def store_tags_fit(store: str, field: str, tags: Mapping[str, str]) -> None:
    """The user's tags as every resource of the store gets them: with ``Name`` and the store's
    own keys (``tags.store_tags``), at most 50 (``aws/validation.py`` ``tags``)."""
    aws_v.tags(store, field, tags, STORE_TAG_KEYS, "the store")


FILE_SYSTEM_RENAMES = MappingProxyType(
    {
        **AwsModelStore.renamed_fields,
        "kms_key_id": "kms_key_arn",
        "mount_options": "extra_mount_options",
    }
)
"""The renames of the AWS file system stores (FSx, EFS), made together: ``kms_key_id`` became
``kms_key_arn`` (the provider takes an ARN) and ``mount_options`` ``extra_mount_options`` (they
add to the store's own)."""


def file_system_network_rules(p: Parser) -> None:
    """The FSx and EFS stores' network fields: ``subnet_ids`` and ``security_group_id`` are ids,
    and without a ``security_group_id`` the store makes a group named after itself."""
    p.field_rule(aws_v.resource_ids, "subnet_ids", "subnet")
    p.field_rule(aws_v.resource_id, "security_group_id", "sg")
    if p["security_group_id"] is None and p.ok(STORE_NAME):
        p.check(lambda: names.store_name_fits_security_group(p.store))
