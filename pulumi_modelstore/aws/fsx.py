"""FSx for Lustre model store on EKS: the file system, its LNET security group rules, the CSI
driver install and a static PV/PVC per consumer namespace, in one graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from .. import validation as v
from .._legacy_store import (
    COMMON_FIELDS,
    ModelStore,
    ModelStoreArgs,
    StoreCommon,
    check_known_fields,
    parse_common,
    store_tags,
)
from ..errors import ModelStoreInputError
from ..kube.drivers import helm_release
from .cluster import EksClusterFacts, check_subnet_in_vpc, resolve_cluster
from .drivers import FSX_CSI, DriverInstall, DriverInstallArgs, eks_addon, parse_driver_install

TYPE_TOKEN = "modelstore:index:FsxLustreModelStore"

# LNET: TCP 988, and 1018-1023 (clients connect from these privileged ports; file servers talk
# to each other on them). Creation fails without them ("do not permit Lustre LNET network
# traffic on port 988").
LUSTRE_PORT_RANGES: tuple[tuple[int, int], ...] = ((988, 988), (1018, 1023))

DEPLOYMENT_TYPES = ("PERSISTENT_2", "PERSISTENT_1", "SCRATCH_2", "SCRATCH_1")
STORAGE_TYPES = ("SSD", "HDD")
DRIVE_CACHE_TYPES = ("NONE", "READ")
COMPRESSION_TYPES = ("LZ4", "NONE")
LUSTRE_VERSIONS = ("2.15", "2.12", "2.10")
IMPORT_EVENTS = ("NEW", "CHANGED", "DELETED")
# MB/s per TiB of storage, by (deployment type, storage type).
THROUGHPUT_MBPS_PER_TIB: dict[tuple[str, str], tuple[int, ...]] = {
    ("PERSISTENT_1", "SSD"): (50, 100, 200),
    ("PERSISTENT_1", "HDD"): (12, 40),
    ("PERSISTENT_2", "SSD"): (125, 250, 500, 1000),
}
DEFAULT_MOUNT_OPTIONS = ("flock",)


class FsxLustreModelStoreArgs(ModelStoreArgs, DriverInstallArgs, total=False):
    """Arguments of :class:`FsxLustreModelStore`. Every field is optional but ``cluster_name``
    (unless ``vpc_id``, ``cluster_subnet_ids`` and ``node_security_group_ids`` are all given)."""

    cluster_name: str
    """The EKS cluster whose nodes mount the store. Its VPC, subnets, cluster security group and
    region are looked up before deploy unless given below."""
    vpc_id: str
    """The cluster's VPC. Default: looked up from the cluster."""
    cluster_subnet_ids: Sequence[str]
    """The cluster's subnets, from which the file system's subnet defaults. Default: looked up."""
    node_security_group_ids: Sequence[str]
    """Security groups of the nodes that mount the store. Default: the cluster security group
    EKS attaches to managed node groups."""
    region: str
    """AWS region, passed to the driver for nodes where IMDS is blocked. Default: the AWS
    provider's region."""
    subnet_ids: Sequence[str]
    """Exactly one subnet, in the cluster's VPC, for the file system (a Lustre file system lives
    in one AZ). Default: the first of the cluster's subnets, sorted by id."""
    security_group_id: str
    """An existing security group for the file system. Default: a new group with the LNET rules
    (TCP 988 and 1018-1023 from itself and from the nodes). With an existing group no rules are
    made: it must already allow them."""
    node_security_group_rules: bool
    """Add ingress rules for TCP 988 and 1018-1023 from the file system's group to each node
    group (Lustre servers connect back to clients). Default: True."""
    deployment_type: str
    """PERSISTENT_2 (default), PERSISTENT_1, SCRATCH_2 or SCRATCH_1."""
    storage_type: str
    """SSD (default) or HDD (PERSISTENT_1 only)."""
    storage_capacity_gib: int
    """Capacity in GiB. Default: 1200. SSD SCRATCH_2/PERSISTENT_1/PERSISTENT_2: 1200, 2400 or a
    multiple of 2400; SCRATCH_1: 1200, 2400 or a multiple of 3600; HDD: a multiple of 6000 at 12
    MB/s/TiB, of 1800 at 40 MB/s/TiB."""
    per_unit_storage_throughput: int
    """Throughput in MB/s per TiB. Default: 125 for PERSISTENT_2, 50 for PERSISTENT_1 SSD, 12 for
    HDD; not set for scratch types. Allowed: PERSISTENT_2 125/250/500/1000, PERSISTENT_1 SSD
    50/100/200, PERSISTENT_1 HDD 12/40."""
    drive_cache_type: str
    """HDD read cache: NONE or READ. Required for HDD, not allowed for SSD."""
    data_compression_type: str
    """LZ4 (default) or NONE."""
    kms_key_id: str
    """ARN of a KMS key for encryption at rest (persistent types; the provider takes an ARN, not
    a key id or alias). Default: the AWS-managed FSx key."""
    file_system_type_version: str
    """Lustre version: 2.15 (default), 2.12 or 2.10 (not for PERSISTENT_2)."""
    metadata_iops: int
    """PERSISTENT_2 on Lustre 2.15: provisioned metadata IOPS (1500, 3000, 6000, or 12000 to
    192000 in steps of 12000). Default: AUTOMATIC metadata mode, which scales with capacity."""
    data_repository_path: str
    """``s3://bucket[/prefix]`` to link with a data repository association, so models
    published once to S3 appear in Lustre, loaded lazily. Default: no link."""
    file_system_path: str
    """Where the S3 path appears in the file system. Default: ``/``."""
    auto_import_events: Sequence[str]
    """S3 events imported automatically. Default: NEW, CHANGED and DELETED."""
    imported_file_chunk_size_mib: int
    """Stripe size for imported files, in MiB. Default: the service's (1024)."""
    mount_options: Sequence[str]
    """PV mount options. Default: ``flock``."""
    tags: Mapping[str, str]
    """Tags merged onto every AWS resource. Default: ``Name`` and the store's own tags."""


FIELDS = COMMON_FIELDS | frozenset(FsxLustreModelStoreArgs.__annotations__)


@dataclass(frozen=True)
class _FsxSpec:
    common: StoreCommon
    deployment_type: str
    storage_type: str
    storage_capacity_gib: int
    per_unit_storage_throughput: int | None
    drive_cache_type: str | None
    data_compression_type: str
    kms_key_id: Any
    file_system_type_version: str
    metadata_iops: int | None
    data_repository_path: Any
    file_system_path: str
    auto_import_events: tuple[str, ...]
    imported_file_chunk_size_mib: int | None
    mount_options: tuple[str, ...]
    install: DriverInstall
    subnet_ids: tuple[Any, ...] | None
    security_group_id: Any
    node_security_group_rules: bool
    tags: dict[str, str]


def _capacity_rule(deployment: str, storage: str, throughput: int | None) -> tuple[str, Any]:
    """(allowed-text, predicate) for storage_capacity_gib."""
    if storage == "HDD":
        step = 6000 if throughput == 12 else 1800
        return f"a multiple of {step} for PERSISTENT_1 HDD at {throughput} MB/s/TiB", (
            lambda c: c % step == 0
        )
    step = 3600 if deployment == "SCRATCH_1" else 2400
    return f"1200, 2400 or a multiple of {step} for {deployment}", (
        lambda c: c in (1200, 2400) or c % step == 0
    )


def _metadata_iops_ok(iops: int) -> bool:
    return iops in (1500, 3000, 6000) or (12000 <= iops <= 192000 and iops % 12000 == 0)


def parse_fsx_args(name: str, args: Mapping[str, Any]) -> _FsxSpec:
    """Validate every field; raises :class:`ModelStoreInputError` naming field, value and what
    is allowed."""
    check_known_fields(name, args, FIELDS)
    common = parse_common(name, args)
    deployment = args.get("deployment_type", "PERSISTENT_2")
    v.one_of(name, "deployment_type", deployment, DEPLOYMENT_TYPES)
    storage = args.get("storage_type", "SSD")
    v.one_of(name, "storage_type", storage, STORAGE_TYPES)
    if storage == "HDD" and deployment != "PERSISTENT_1":
        raise ModelStoreInputError(
            name, "deployment_type", deployment, "PERSISTENT_1 when storage_type is HDD"
        )
    drive_cache = args.get("drive_cache_type")
    if storage == "HDD":
        if drive_cache is None:
            raise ModelStoreInputError(
                name, "drive_cache_type", None, "NONE or READ when storage_type is HDD"
            )
        v.one_of(name, "drive_cache_type", drive_cache, DRIVE_CACHE_TYPES)
    elif drive_cache is not None:
        raise ModelStoreInputError(
            name, "drive_cache_type", drive_cache, "unset when storage_type is SSD"
        )

    allowed_throughput = THROUGHPUT_MBPS_PER_TIB.get((deployment, storage))
    throughput = args.get("per_unit_storage_throughput")
    if allowed_throughput is None:
        if throughput is not None:
            raise ModelStoreInputError(
                name, "per_unit_storage_throughput", throughput, f"unset for {deployment}"
            )
    elif throughput is None:
        throughput = allowed_throughput[0]
    elif throughput not in allowed_throughput:
        raise ModelStoreInputError(
            name,
            "per_unit_storage_throughput",
            throughput,
            f"{', '.join(map(str, allowed_throughput))} MB/s/TiB for {deployment} {storage}",
        )

    capacity = args.get("storage_capacity_gib", 1200)
    v.positive_int(name, "storage_capacity_gib", capacity)
    allowed_text, capacity_ok = _capacity_rule(deployment, storage, throughput)
    if not capacity_ok(capacity):
        raise ModelStoreInputError(name, "storage_capacity_gib", capacity, allowed_text)

    compression = args.get("data_compression_type", "LZ4")
    v.one_of(name, "data_compression_type", compression, COMPRESSION_TYPES)
    kms_key_id = args.get("kms_key_id")
    if kms_key_id is not None:
        v.kms_key_arn(name, "kms_key_id", kms_key_id, "the provider takes the key's ARN")
    if kms_key_id is not None and deployment.startswith("SCRATCH"):
        raise ModelStoreInputError(
            name,
            "kms_key_id",
            kms_key_id,
            "unset for scratch deployment types (they always use an AWS-owned key)",
        )
    version = str(args.get("file_system_type_version", "2.15"))
    v.one_of(name, "file_system_type_version", version, LUSTRE_VERSIONS)
    if deployment == "PERSISTENT_2" and version == "2.10":
        raise ModelStoreInputError(
            name, "file_system_type_version", version, "2.12 or 2.15 for PERSISTENT_2"
        )
    metadata_iops = args.get("metadata_iops")
    if metadata_iops is not None:
        if deployment != "PERSISTENT_2" or version != "2.15":
            raise ModelStoreInputError(
                name,
                "metadata_iops",
                metadata_iops,
                "unset unless deployment_type is PERSISTENT_2 on Lustre 2.15",
            )
        v.positive_int(name, "metadata_iops", metadata_iops)
        if not _metadata_iops_ok(metadata_iops):
            raise ModelStoreInputError(
                name,
                "metadata_iops",
                metadata_iops,
                "1500, 3000, 6000, or 12000 to 192000 in steps of 12000",
            )

    repo_path = args.get("data_repository_path")
    fs_path = args.get("file_system_path", "/")
    raw_events = args.get("auto_import_events", IMPORT_EVENTS)
    v.string_list(name, "auto_import_events", raw_events)
    events = tuple(raw_events)
    chunk = args.get("imported_file_chunk_size_mib")
    if repo_path is not None:
        v.s3_uri(name, "data_repository_path", repo_path)
        if deployment == "SCRATCH_1" or version == "2.10":
            raise ModelStoreInputError(
                name,
                "data_repository_path",
                repo_path,
                "unset for SCRATCH_1 or Lustre 2.10 (data repository associations need "
                "Lustre 2.12 or newer and a deployment type other than SCRATCH_1)",
            )
        v.absolute_path(name, "file_system_path", fs_path)
        for event in events:
            v.one_of(name, "auto_import_events", event, IMPORT_EVENTS)
        if chunk is not None:
            v.positive_int(name, "imported_file_chunk_size_mib", chunk)

    raw_mount_options = args.get("mount_options", DEFAULT_MOUNT_OPTIONS)
    v.string_list(name, "mount_options", raw_mount_options)
    mount_options = tuple(raw_mount_options)
    install = parse_driver_install(name, args)

    subnet_ids = args.get("subnet_ids")
    if subnet_ids is not None:
        v.string_list(name, "subnet_ids", subnet_ids)
        if not v.is_output(subnet_ids) and len(list(subnet_ids)) != 1:
            raise ModelStoreInputError(
                name,
                "subnet_ids",
                list(subnet_ids),
                "a list of exactly one subnet (a Lustre file system lives in one AZ)",
            )
    tags = v.string_map(name, "tags", args.get("tags"))
    return _FsxSpec(
        common=common,
        deployment_type=deployment,
        storage_type=storage,
        storage_capacity_gib=capacity,
        per_unit_storage_throughput=throughput,
        drive_cache_type=drive_cache,
        data_compression_type=compression,
        kms_key_id=kms_key_id,
        file_system_type_version=version,
        metadata_iops=metadata_iops,
        data_repository_path=repo_path,
        file_system_path=fs_path,
        auto_import_events=events,
        imported_file_chunk_size_mib=chunk,
        mount_options=mount_options,
        install=install,
        subnet_ids=tuple(subnet_ids) if subnet_ids is not None else None,
        security_group_id=args.get("security_group_id"),
        node_security_group_rules=v.flag(
            name, "node_security_group_rules", args.get("node_security_group_rules", True)
        ),
        tags=store_tags(name, tags),
    )


class FsxLustreModelStore(ModelStore):
    """A shared FSx for Lustre model store for an EKS cluster.

    Every consumer namespace gets a static PV (driver ``fsx.csi.aws.com``, access mode
    ReadWriteMany because the driver rejects ReadOnlyMany, reclaim policy Retain) and a claim
    bound to it; readers mount it read-only. The file system is protected by default.
    """

    driver_chart = FSX_CSI

    @staticmethod
    def validate(resource_name: str, args: Mapping[str, Any]) -> None:
        """Check every input that needs no lookup; raises :class:`ModelStoreInputError`."""
        parse_fsx_args(resource_name, args)

    file_system_id: pulumi.Output[str]
    """The FSx file system id (``fs-...``)."""
    dns_name: pulumi.Output[str]
    """The file system's DNS name, the PVs' ``dnsname`` attribute."""
    mount_name: pulumi.Output[str]
    """The Lustre mount name, the PVs' ``mountname`` attribute."""
    security_group_id: pulumi.Output[str]
    """The file system's security group."""
    data_repository_association_id: pulumi.Output[str | None]
    """The data repository association linking S3, when ``data_repository_path`` is set."""

    def __init__(
        self,
        resource_name: str,
        args: FsxLustreModelStoreArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        raw: Mapping[str, Any] = dict(args or {})
        spec = parse_fsx_args(resource_name, raw)
        cluster = resolve_cluster(resource_name, raw, opts)
        subnet_ids = spec.subnet_ids or (cluster.subnet_ids[:1] if cluster.subnet_ids else ())
        if len(subnet_ids) != 1:
            raise ModelStoreInputError(
                resource_name,
                "subnet_ids",
                list(subnet_ids),
                "a list of exactly one subnet (the cluster reported none)",
            )
        check_subnet_in_vpc(resource_name, "subnet_ids", subnet_ids[0], cluster.vpc_id, opts)

        super().__init__(TYPE_TOKEN, resource_name, spec.common, opts)
        self._spec = spec
        self.cluster = cluster

        sg_id, rules = self._network(resource_name, spec, cluster)
        self.file_system = aws.fsx.LustreFileSystem(
            f"{resource_name}-fs",
            subnet_ids=subnet_ids[0],
            security_group_ids=[sg_id],
            deployment_type=spec.deployment_type,
            storage_type=spec.storage_type,
            storage_capacity=spec.storage_capacity_gib,
            per_unit_storage_throughput=spec.per_unit_storage_throughput,
            drive_cache_type=spec.drive_cache_type,
            data_compression_type=spec.data_compression_type,
            kms_key_id=spec.kms_key_id,
            file_system_type_version=spec.file_system_type_version,
            metadata_configuration=self._metadata(spec),
            tags=spec.tags,
            opts=pulumi.ResourceOptions.merge(
                self.data_protection(), pulumi.ResourceOptions(depends_on=rules)
            ),
        )
        fs = self.file_system

        self.data_repository_association = None
        if spec.data_repository_path is not None:
            self.data_repository_association = aws.fsx.DataRepositoryAssociation(
                f"{resource_name}-s3-link",
                file_system_id=fs.id,
                file_system_path=spec.file_system_path,
                data_repository_path=spec.data_repository_path,
                batch_import_meta_data_on_create=True,
                imported_file_chunk_size=spec.imported_file_chunk_size_mib,
                # Unlinking S3 must never delete the models already in Lustre.
                delete_data_in_filesystem=False,
                s3={"auto_import_policy": {"events": list(spec.auto_import_events)}},
                tags=spec.tags,
                opts=pulumi.ResourceOptions(parent=self),
            )

        self.driver_install = self._install_driver(resource_name, spec, cluster)

        def source(namespace: str, read_only: bool) -> dict[str, Any]:
            # The node plugin mounts dnsname@tcp:/mountname and uses the volume id only as a
            # lock key, but kubelet keys a persistent CSI volume by driver^volumeHandle: two
            # PVs sharing a handle would collide on a node. So each PV gets its own handle.
            return {
                "csi": {
                    "driver": FSX_CSI.driver,
                    "volumeHandle": fs.id.apply(lambda i: f"{i}::{namespace}"),
                    "readOnly": read_only,
                    "volumeAttributes": {"dnsname": fs.dns_name, "mountname": fs.mount_name},
                }
            }

        self._bind_consumers(
            capacity=f"{spec.storage_capacity_gib}Gi",
            # The FSx driver rejects ReadOnlyMany: readers get RWX with read-only mounts.
            access_mode=lambda read_only: "ReadWriteMany",
            source=source,
            mount_options=spec.mount_options,
            depends_on=[d for d in (self.driver_install, self.data_repository_association) if d],
        )

        self.file_system_id = fs.id
        self.dns_name = fs.dns_name
        self.mount_name = fs.mount_name
        self.security_group_id = pulumi.Output.from_input(sg_id)
        dra = self.data_repository_association
        self.data_repository_association_id = (
            dra.id if dra is not None else pulumi.Output.from_input(None)
        )
        self._finish(
            {
                "fileSystemId": self.file_system_id,
                "dnsName": self.dns_name,
                "mountName": self.mount_name,
                "securityGroupId": self.security_group_id,
                "dataRepositoryAssociationId": self.data_repository_association_id,
            }
        )

    @staticmethod
    def _metadata(
        spec: _FsxSpec,
    ) -> aws.fsx.LustreFileSystemMetadataConfigurationArgs | None:
        if spec.deployment_type != "PERSISTENT_2" or spec.file_system_type_version != "2.15":
            return None
        if spec.metadata_iops is None:
            return aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC")
        return aws.fsx.LustreFileSystemMetadataConfigurationArgs(
            mode="USER_PROVISIONED", iops=spec.metadata_iops
        )

    def _network(
        self, name: str, spec: _FsxSpec, cluster: EksClusterFacts
    ) -> tuple[pulumi.Input[str], list[pulumi.Resource]]:
        """The file system's security group and its LNET rules, each a separate resource."""
        if spec.security_group_id is not None:
            return spec.security_group_id, []
        sg = aws.ec2.SecurityGroup(
            f"{name}-fs-sg",
            vpc_id=cluster.vpc_id,
            description=f"FSx for Lustre model store {name}: LNET from itself and the nodes",
            tags=spec.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        peers: list[tuple[str, pulumi.Input[str]]] = [("self", sg.id)]
        peers += [(f"nodes{i}", g) for i, g in enumerate(cluster.node_security_group_ids)]
        rules: list[pulumi.Resource] = []
        for low, high in LUSTRE_PORT_RANGES:
            ports = f"{low}" if low == high else f"{low}-{high}"
            for label, peer in peers:
                rules.append(
                    aws.vpc.SecurityGroupIngressRule(
                        f"{name}-lnet-in-{ports}-{label}",
                        security_group_id=sg.id,
                        referenced_security_group_id=peer,
                        ip_protocol="tcp",
                        from_port=low,
                        to_port=high,
                        description=f"Lustre LNET {ports} from {label}",
                        tags=spec.tags,
                        opts=pulumi.ResourceOptions(parent=self),
                    )
                )
                rules.append(
                    aws.vpc.SecurityGroupEgressRule(
                        f"{name}-lnet-out-{ports}-{label}",
                        security_group_id=sg.id,
                        referenced_security_group_id=peer,
                        ip_protocol="tcp",
                        from_port=low,
                        to_port=high,
                        description=f"Lustre LNET {ports} to {label}",
                        tags=spec.tags,
                        opts=pulumi.ResourceOptions(parent=self),
                    )
                )
            if spec.node_security_group_rules:
                for i, node_sg in enumerate(cluster.node_security_group_ids):
                    rules.append(
                        aws.vpc.SecurityGroupIngressRule(
                            f"{name}-lnet-client-in-{ports}-nodes{i}",
                            security_group_id=node_sg,
                            referenced_security_group_id=sg.id,
                            ip_protocol="tcp",
                            from_port=low,
                            to_port=high,
                            description=f"Lustre LNET {ports} from model store {name}",
                            tags=spec.tags,
                            opts=pulumi.ResourceOptions(parent=self),
                        )
                    )
        return sg.id, rules

    def _install_driver(
        self, name: str, spec: _FsxSpec, cluster: EksClusterFacts
    ) -> pulumi.Resource | None:
        if spec.install.driver == "none":
            return None
        if spec.install.driver == "eks-addon":
            return eks_addon(
                f"{name}-fsx-csi-driver",
                FSX_CSI,
                cluster_name=cluster.name,
                install=spec.install,
                tags=spec.tags,
                parent=self,
            )
        return helm_release(
            f"{name}-fsx-csi-driver",
            FSX_CSI,
            namespace=spec.install.namespace,
            values={
                # GPU nodes are tainted; a node plugin that does not run there cannot mount.
                "node": {"tolerateAllTaints": True},
                # Needed where IMDS is blocked from pods.
                "controller": {"region": cluster.region},
            },
            parent=self,
        )
