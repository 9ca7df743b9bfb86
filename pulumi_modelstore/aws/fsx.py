"""FSx for Lustre model store on EKS: the file system, its LNET security group rules, an optional
link to S3, the CSI driver (once per cluster) and a static PV/PVC per consumer namespace."""

# No `from __future__ import annotations`: the component analyzer reads these annotations.
# Signatures naming a provider SDK class quote it: evaluated at import, it would load the SDK's
# lazily loaded modules (about half a second of every plan's start-up).

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pulumi
import pulumi_aws as aws

from .. import validation as v
from ..backup import Backup, BackupSupport
from ..cluster import Opts
from ..errors import ModelStoreInputError
from ..fields import Parser
from ..kube import model_jobs
from ..modelsection import Fill, job_fills
from ..store import Binding, Spec
from . import validation as aws_v
from .cluster import EksCluster
from .drivers import DRIVER_INSTALL_FIELDS, FSX_CSI, DriverInstall, parse_driver_install
from .network import peers, ports_text, security_group, tcp_rule
from .store import (
    FILE_SYSTEM_RENAMES,
    AwsModelStore,
    AwsModelStoreArgs,
    file_system_network_rules,
)

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
# CreateDataRepositoryAssociation ImportedFileChunkSize: shape Megabytes, 1-512,000 MiB
# (botocore fsx/2018-03-01 service-2.json).
CHUNK_SIZE_MIB = (1, 512000)
# MB/s per TiB of storage, by (deployment type, storage type).
THROUGHPUT_MBPS_PER_TIB: dict[tuple[str, str], tuple[int, ...]] = {
    ("PERSISTENT_1", "SSD"): (50, 100, 200),
    ("PERSISTENT_1", "HDD"): (12, 40),
    ("PERSISTENT_2", "SSD"): (125, 250, 500, 1000),
}
# SSD capacity (CreateFileSystem StorageCapacity): these small sizes, or a multiple of the step
# (SCRATCH_1 3600 GiB, the other SSD deployment types 2400 GiB).
SSD_SMALL_CAPACITIES_GIB = (1200, 2400)
SSD_CAPACITY_STEP_GIB = 2400
SCRATCH_1_CAPACITY_STEP_GIB = 3600


def ssd_capacity_step(deployment_type: str) -> int:
    """The multiple an SSD capacity above the small sizes must be, for ``deployment_type``."""
    return SCRATCH_1_CAPACITY_STEP_GIB if deployment_type == "SCRATCH_1" else SSD_CAPACITY_STEP_GIB


# The store's own mount options: extra_mount_options add to these.
DEFAULT_MOUNT_OPTIONS = ("flock",)


class FsxLustreModelStoreArgs(AwsModelStoreArgs, total=False):
    """Arguments of :class:`FsxLustreModelStore`. Every field is optional but ``cluster_name``
    (unless ``cluster`` is given, or ``vpc_id``, ``cluster_subnet_ids`` and
    ``node_security_group_ids`` all are)."""

    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """Exactly one subnet, in the cluster's VPC, for the file system (a Lustre file system lives
    in one AZ). Default: the first of the cluster's subnets, sorted by id."""
    security_group_id: pulumi.Input[str]
    """An existing security group for the file system. Default: a new group with the LNET rules
    (TCP 988 and 1018-1023 from itself and from the nodes). With an existing group no rules are
    made: it must already allow them."""
    node_security_group_rules: bool
    """Add ingress rules for TCP 988 and 1018-1023 from the file system's group to each node
    group (Lustre servers connect back to clients). Default: ``true``."""
    deployment_type: str
    """PERSISTENT_2, PERSISTENT_1, SCRATCH_2 or SCRATCH_1, known before deploy. Default:
    ``PERSISTENT_2``."""
    storage_type: str
    """SSD, or HDD (PERSISTENT_1 only), known before deploy. Default: ``SSD``."""
    storage_capacity_gib: int
    """Capacity in GiB. SSD SCRATCH_2/PERSISTENT_1/PERSISTENT_2: 1200, 2400 or a multiple of
    2400; SCRATCH_1: 1200, 2400 or a multiple of 3600; HDD: a multiple of 6000 at 12 MB/s/TiB,
    of 1800 at 40 MB/s/TiB. Known before deploy (it is the claims' size). Default: ``1200``."""
    per_unit_storage_throughput: pulumi.Input[int]
    """Throughput in MB/s per TiB. Allowed: PERSISTENT_2 125/250/500/1000, PERSISTENT_1 SSD
    50/100/200, PERSISTENT_1 HDD 12/40; not set for scratch types. Default: the lowest allowed
    (125 for PERSISTENT_2, 50 for PERSISTENT_1 SSD, 12 for HDD)."""
    drive_cache_type: pulumi.Input[str]
    """HDD read cache: NONE or READ. Required for HDD, not allowed for SSD. Default: unset."""
    data_compression_type: pulumi.Input[str]
    """LZ4 or NONE. Default: ``LZ4``."""
    kms_key_arn: pulumi.Input[str]
    """ARN of a KMS key for encryption at rest (persistent types; the provider takes an ARN, not
    a key id or alias). Default: the AWS-managed FSx key. (Formerly ``kms_key_id``, still
    accepted with a deprecation warning.)"""
    file_system_type_version: str
    """Lustre version: 2.15, 2.12 or 2.10 (not for PERSISTENT_2), as a string known before
    deploy. Default: ``"2.15"``."""
    metadata_iops: pulumi.Input[int]
    """PERSISTENT_2 on Lustre 2.15: provisioned metadata IOPS (1500, 3000, 6000, or 12000 to
    192000 in steps of 12000). Default: AUTOMATIC metadata mode, which scales with capacity."""
    data_repository_path: pulumi.Input[str]
    """The advanced form, kept beside ``model``: ``s3://bucket[/prefix]`` to link with a data
    repository association at ``file_system_path``, so whatever is published to S3 appears in
    Lustre, loaded lazily (no revision, manifest or verification). For one pinned model use
    ``model: {source: s3://..., revision: ...}`` instead: its own association imports the
    source into ``revisions/<revision>``. With both, ``file_system_path`` must not overlap
    ``/revisions`` or ``/.modelstore`` (FSx refuses overlapping association paths). Default:
    no link."""
    file_system_path: pulumi.Input[str]
    """Where ``data_repository_path`` appears in the file system. Default: ``/``."""
    auto_import_events: Sequence[str]
    """S3 events imported automatically (NEW, CHANGED, DELETED). Default:
    ``["NEW", "CHANGED", "DELETED"]``."""
    imported_file_chunk_size_mib: int
    """Stripe size for imported files, in MiB, 1 to 512000; only with ``data_repository_path``.
    Default: the service's (1024)."""
    extra_mount_options: Sequence[str]
    """Mount options added to the store's own ``flock`` on every PV (repeats dropped). Default:
    none. (Formerly ``mount_options``, still accepted with a deprecation warning; its options
    no longer replace ``flock``, which is now always kept.)"""


# ---- rules (one each; a rule is skipped when a field it reads was refused) ---------------------


def _outputs(*values: Any) -> bool:
    """A rule on a value still unknown (an Output) leaves it to the cloud at deploy."""
    return any(v.is_output(value) for value in values)


def hdd_needs_persistent_1(store: str, storage_type: str, deployment_type: str) -> None:
    if _outputs(storage_type, deployment_type):
        return
    if storage_type == "HDD" and deployment_type != "PERSISTENT_1":
        raise ModelStoreInputError(
            store, "deployment_type", deployment_type, "PERSISTENT_1 when storage_type is HDD"
        )


def drive_cache_fits_storage_type(store: str, storage_type: str, drive_cache: Any) -> None:
    if _outputs(storage_type):
        return
    if storage_type == "HDD":
        if drive_cache is None:
            raise ModelStoreInputError(
                store, "drive_cache_type", None, "NONE or READ when storage_type is HDD"
            )
        v.one_of(store, "drive_cache_type", drive_cache, DRIVE_CACHE_TYPES)
    elif drive_cache is not None:
        raise ModelStoreInputError(
            store, "drive_cache_type", drive_cache, "unset when storage_type is SSD"
        )


def throughput_fits_deployment_type(
    store: str, deployment_type: str, storage_type: str, throughput: Any
) -> None:
    if throughput is None or _outputs(deployment_type, storage_type, throughput):
        return
    allowed = THROUGHPUT_MBPS_PER_TIB.get((deployment_type, storage_type))
    if allowed is None:
        raise ModelStoreInputError(
            store, "per_unit_storage_throughput", throughput, f"unset for {deployment_type}"
        )
    if throughput not in allowed:
        raise ModelStoreInputError(
            store,
            "per_unit_storage_throughput",
            throughput,
            f"{', '.join(map(str, allowed))} MB/s/TiB for {deployment_type} {storage_type}",
        )


def default_throughput(deployment_type: str, storage_type: str) -> int | None:
    """The lowest throughput the deployment type allows; None for scratch types."""
    allowed = THROUGHPUT_MBPS_PER_TIB.get((deployment_type, storage_type))
    return allowed[0] if allowed else None


def validate_storage_capacity(
    store: str, deployment_type: str, storage_type: str, throughput: Any, capacity: Any
) -> None:
    if _outputs(deployment_type, storage_type, throughput, capacity):
        return
    if storage_type == "HDD":
        step = 6000 if throughput == 12 else 1800
        if capacity % step:
            raise ModelStoreInputError(
                store,
                "storage_capacity_gib",
                capacity,
                f"a multiple of {step} for PERSISTENT_1 HDD at {throughput} MB/s/TiB",
            )
        return
    step = ssd_capacity_step(deployment_type)
    if capacity not in SSD_SMALL_CAPACITIES_GIB and capacity % step:
        raise ModelStoreInputError(
            store,
            "storage_capacity_gib",
            capacity,
            f"1200, 2400 or a multiple of {step} for {deployment_type}",
        )


def scratch_uses_an_aws_owned_key(store: str, deployment_type: str, kms_key_arn: Any) -> None:
    if kms_key_arn is None or _outputs(deployment_type):
        return
    if deployment_type.startswith("SCRATCH"):
        raise ModelStoreInputError(
            store,
            "kms_key_arn",
            kms_key_arn,
            "unset for scratch deployment types (they always use an AWS-owned key)",
        )


def lustre_version_fits_deployment_type(store: str, deployment_type: str, version: str) -> None:
    if _outputs(deployment_type, version):
        return
    if deployment_type == "PERSISTENT_2" and version == "2.10":
        raise ModelStoreInputError(
            store, "file_system_type_version", version, "2.12 or 2.15 for PERSISTENT_2"
        )


def metadata_iops_needs_persistent_2_on_2_15(
    store: str, deployment_type: str, version: str, iops: Any
) -> None:
    if iops is None or _outputs(deployment_type, version):
        return
    if deployment_type != "PERSISTENT_2" or version != "2.15":
        raise ModelStoreInputError(
            store,
            "metadata_iops",
            iops,
            "unset unless deployment_type is PERSISTENT_2 on Lustre 2.15",
        )


def validate_metadata_iops(store: str, field: str, iops: Any) -> None:
    v.positive_int(store, field, iops)
    if v.is_output(iops):
        return
    if not (iops in (1500, 3000, 6000) or (12000 <= iops <= 192000 and iops % 12000 == 0)):
        raise ModelStoreInputError(
            store, field, iops, "1500, 3000, 6000, or 12000 to 192000 in steps of 12000"
        )


def data_repository_needs_lustre_2_12(
    store: str, deployment_type: str, version: str, repository: Any
) -> None:
    if repository is None or _outputs(deployment_type, version):
        return
    if deployment_type == "SCRATCH_1" or version == "2.10":
        raise ModelStoreInputError(
            store,
            "data_repository_path",
            repository,
            "unset for SCRATCH_1 or Lustre 2.10 (data repository associations need "
            "Lustre 2.12 or newer and a deployment type other than SCRATCH_1)",
        )


def model_link_fits(
    store: str, model: Any, repository: Any, fs_path: Any, deployment_type: str, version: str
) -> None:
    """An ``s3://`` model is imported by an association of its own at ``/revisions/<rev>``:
    FSx refuses two associations with overlapping file system paths, and associations on
    SCRATCH_1 or Lustre 2.10 (CreateDataRepositoryAssociation, FileSystemPath and the
    operation's description, Amazon FSx API Reference)."""
    source = model.get("source") if isinstance(model, Mapping) else None
    if not (isinstance(source, str) and source.startswith("s3://")):
        return
    if not _outputs(deployment_type, version) and (
        deployment_type == "SCRATCH_1" or version == "2.10"
    ):
        raise ModelStoreInputError(
            store,
            "model.source",
            source,
            "an hf:// source on SCRATCH_1 or Lustre 2.10 (an s3:// model is imported by a "
            "data repository association, which needs Lustre 2.12 or newer and a deployment "
            "type other than SCRATCH_1)",
        )
    if repository is None or v.is_output(fs_path):
        return
    path = "/" + str(fs_path).strip("/")
    if any(
        path == top or path.startswith(f"{top}/") or top.startswith(path.rstrip("/") + "/")
        for top in ("/revisions", "/.modelstore")
    ):
        raise ModelStoreInputError(
            store,
            "file_system_path",
            fs_path,
            "a path outside /revisions and /.modelstore beside an s3:// model (its own data "
            "repository association is at /revisions/<revision>, and FSx refuses "
            "associations with overlapping file system paths)",
        )


def import_events_are_known(store: str, field: str, events: Sequence[Any]) -> None:
    for event in events:
        v.one_of(store, field, event, IMPORT_EVENTS)


def chunk_size_in_range(store: str, field: str, mib: Any) -> None:
    low, high = CHUNK_SIZE_MIB
    if not v.is_output(mib) and not low <= mib <= high:
        raise ModelStoreInputError(
            store, field, mib, f"a whole number of MiB from {low} to {high} (FSx's limit)"
        )


def chunk_size_needs_data_repository(store: str, mib: Any, repository: Any, model: Any) -> None:
    """The chunk size is the data repository associations': without one it would be dropped."""
    source = model.get("source") if isinstance(model, Mapping) else None
    s3_model = isinstance(source, str) and source.startswith("s3://")
    if mib is not None and repository is None and not s3_model:
        raise ModelStoreInputError(
            store,
            "imported_file_chunk_size_mib",
            mib,
            "unset unless data_repository_path or an s3:// model source is set (it is the data "
            "repository association's chunk size for imported files)",
        )


def one_subnet(store: str, field: str, subnet_ids: Any) -> None:
    if not v.is_output(subnet_ids) and len(list(subnet_ids)) != 1:
        raise ModelStoreInputError(
            store,
            field,
            list(subnet_ids),
            "a list of exactly one subnet (a Lustre file system lives in one AZ)",
        )


_INSTALL_FIELDS = (*DRIVER_INSTALL_FIELDS, "cluster_name", "cluster")


def driver_install_is_known(store: str, *values: Any) -> DriverInstall:
    """The driver install asked for (``aws/drivers.py``); the EKS add-on needs the cluster's
    name, from ``cluster_name`` or the ``cluster`` given."""
    given = dict(zip(_INSTALL_FIELDS, values, strict=True))
    scope = given.pop("cluster")
    if given["cluster_name"] is None and scope is not None:
        given["cluster_name"] = getattr(scope, "name", None)
    return parse_driver_install(store, {k: x for k, x in given.items() if x is not None})


def pv_mount_options(extra: Sequence[str] | None) -> list[str]:
    """The store's own options, then the extra ones, each once."""
    return list(dict.fromkeys([*DEFAULT_MOUNT_OPTIONS, *(extra or ())]))


# ---- the store ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Preflight:
    subnet_id: Any
    vpc_id: Any
    node_security_group_ids: tuple[Any, ...]
    region: Any


FSX_BACKUPS = BackupSupport(
    retention=(1, 90),
    retention_source="FSx automatic backups",
    schedule="daily",
    fixed="FSx starts automatic backups once a day (daily_automatic_backup_start_time, HH:MM UTC)",
)
"""FSx automatic backups: kept 0 (off) to 90 days, started once a day at a time of day (FSx
API reference, LustreFileSystemConfiguration: AutomaticBackupRetentionDays 0-90,
DailyAutomaticBackupStartTime HH:MM)."""
# FSx API reference, CreateBackup: a Lustre file system can be backed up only when it is of a
# Persistent deployment type and not linked to a data repository.
_FSX_NO_BACKUP_SCRATCH = (
    "FSx backs up no {} file system (FSx API reference, CreateBackup: Persistent deployment "
    "types only)"
)
_FSX_NO_BACKUP_LINKED = (
    "FSx backs up no file system linked to a data repository (FSx API reference, "
    "CreateBackup), and its models are in S3 at data_repository_path"
)


def fsx_backup_support(deployment_type: Any, data_repository_path: Any) -> BackupSupport:
    """What FSx offers a file system of ``deployment_type`` (linked to S3 when
    ``data_repository_path`` is set)."""
    if isinstance(deployment_type, str) and deployment_type.startswith("SCRATCH"):
        return BackupSupport(refusal=_FSX_NO_BACKUP_SCRATCH.format(deployment_type))
    if data_repository_path is not None:
        return BackupSupport(refusal=_FSX_NO_BACKUP_LINKED)
    return FSX_BACKUPS


class FsxLustreModelStore(AwsModelStore[FsxLustreModelStoreArgs], backend="fsx-lustre"):
    """A shared FSx for Lustre model store for an EKS cluster.

    Every consumer namespace gets a static PV (driver ``fsx.csi.aws.com``, access mode
    ReadWriteMany because the driver rejects ReadOnlyMany, reclaim policy Retain) and a claim
    bound to it; readers mount it read-only. The file system is protected by default. The CSI
    driver is installed once per cluster, by the cluster's scope, whichever store asks first.
    """

    args_type = FsxLustreModelStoreArgs
    # FSx for Lustre: a parallel network file system: vLLM loader settings in kube/serving.py.
    loader_profile = "parallel-fs"
    # hf:// by the seed Job; s3:// natively: a data repository association per revision
    # imports the source into revisions/<rev>, then the seed Job (the loader's writer) only
    # publishes it: hashes what was imported and writes the manifest (seed --publish imported).
    model_fill = job_fills(cloud="s3", native={"s3": Fill("native", publish="imported")})
    # Striping decides how fast many replicas read one weight file: the seed sets it.
    model_layout = "lustre"
    # A new file system's root is root's 0755, the driver never chowns and its fsGroupPolicy
    # (ReadWriteOnceWithFSType) leaves ReadWriteMany volumes alone: the seed's pod prepares it.
    model_prepare_root = True
    example_args = MappingProxyType[str, Any]({"cluster_name": "prod-eks"})
    data_bearing_types = ("aws:fsx/lustreFileSystem:LustreFileSystem",)
    _csi_chart = FSX_CSI
    renamed_fields = FILE_SYSTEM_RENAMES

    dynamic_claims_refused = (
        "the FSx for Lustre CSI driver provisions a new file system per claim, not space "
        "on this one (kubernetes-sigs/aws-fsx-csi-driver docs: dynamic provisioning)"
    )

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

    @classmethod
    def backup_support(cls, p: Parser) -> BackupSupport:
        """FSx automatic backups (``automatic_backup_retention_days``,
        ``daily_automatic_backup_start_time``, ``copy_tags_to_backups``: FSx API reference,
        LustreFileSystemConfiguration), where FSx takes backups at all."""
        return fsx_backup_support(p["deployment_type"], p["data_repository_path"])

    @classmethod
    def rules(cls, p: Parser) -> None:
        p.field_rule(v.one_of, "deployment_type", DEPLOYMENT_TYPES)
        p.field_rule(v.one_of, "storage_type", STORAGE_TYPES)
        p.rule(hdd_needs_persistent_1, "storage_type", "deployment_type")
        p.rule(drive_cache_fits_storage_type, "storage_type", "drive_cache_type")
        p.rule(
            throughput_fits_deployment_type,
            "deployment_type",
            "storage_type",
            "per_unit_storage_throughput",
        )
        if p["per_unit_storage_throughput"] is None and p.ok("deployment_type", "storage_type"):
            p.set(
                "per_unit_storage_throughput",
                default_throughput(p["deployment_type"], p["storage_type"]),
            )
        p.field_rule(v.positive_int, "storage_capacity_gib")
        p.rule(
            validate_storage_capacity,
            "deployment_type",
            "storage_type",
            "per_unit_storage_throughput",
            "storage_capacity_gib",
        )
        p.field_rule(v.one_of, "data_compression_type", COMPRESSION_TYPES)
        p.field_rule(aws_v.kms_key_arn, "kms_key_arn", "the provider takes the key's ARN")
        p.rule(scratch_uses_an_aws_owned_key, "deployment_type", "kms_key_arn")
        p.field_rule(v.one_of, "file_system_type_version", LUSTRE_VERSIONS)
        p.rule(lustre_version_fits_deployment_type, "deployment_type", "file_system_type_version")
        p.rule(
            metadata_iops_needs_persistent_2_on_2_15,
            "deployment_type",
            "file_system_type_version",
            "metadata_iops",
        )
        p.field_rule(validate_metadata_iops, "metadata_iops")
        p.field_rule(aws_v.s3_uri, "data_repository_path")
        p.rule(
            data_repository_needs_lustre_2_12,
            "deployment_type",
            "file_system_type_version",
            "data_repository_path",
        )
        p.field_rule(v.absolute_path, "file_system_path")
        p.rule(
            model_link_fits,
            "model",
            "data_repository_path",
            "file_system_path",
            "deployment_type",
            "file_system_type_version",
        )
        p.field_rule(import_events_are_known, "auto_import_events")
        p.field_rule(v.positive_int, "imported_file_chunk_size_mib")
        p.field_rule(chunk_size_in_range, "imported_file_chunk_size_mib")
        p.rule(
            chunk_size_needs_data_repository,
            "imported_file_chunk_size_mib",
            "data_repository_path",
            "model",
        )
        p.derived["install"] = p.rule(driver_install_is_known, *_INSTALL_FIELDS)
        p.field_rule(one_subnet, "subnet_ids")
        file_system_network_rules(p)

    def preflight(
        self, spec: Spec[FsxLustreModelStoreArgs], cluster: EksCluster, opts: Opts
    ) -> _Preflight:
        name = spec.common.name
        facts = cluster.facts(name)
        given: Any = spec.args.get("subnet_ids")  # an Output, or a list of ids or Outputs
        # Where the subnet comes from, for an error to name what the user gave.
        field = "subnet_ids" if given is not None else cluster.subnets_field()
        if isinstance(given, pulumi.Output):
            subnet_id: Any = given.apply(lambda ids: ids[0])
        else:
            subnets = list(given or facts.subnet_ids[:1])
            if len(subnets) != 1:
                raise ModelStoreInputError(
                    name,
                    "subnet_ids",
                    subnets,
                    "a list of exactly one subnet (the cluster reported none)",
                )
            subnet_id = subnets[0]
        cluster.check_subnet_in_vpc(name, field, subnet_id)
        return _Preflight(
            subnet_id=subnet_id,
            vpc_id=facts.vpc_id,
            node_security_group_ids=facts.node_security_group_ids,
            region=cluster.region(name),
        )

    def provision_storage(
        self, spec: Spec[FsxLustreModelStoreArgs], cluster: EksCluster, facts: _Preflight
    ) -> Binding:
        a, tags = spec.args, self.tags(spec)
        # First, before any cloud resource: a store asking for another install than the one
        # the cluster has is refused here, with nothing of its own made yet.
        install = self._install(spec, cluster, facts)
        self.driver_install = install
        sg_id, rules = self._network(spec.common.name, a, facts, tags)
        fs = self.file_system = self._file_system(spec, facts, sg_id, rules, tags)
        dra = self.data_repository_association = self._s3_link(spec, fs, tags)
        self.model_association = self._model_link(spec, fs, tags)
        self.file_system_id = fs.id
        self.dns_name = fs.dns_name
        self.mount_name = fs.mount_name
        self.security_group_id = pulumi.Output.from_input(sg_id)
        self.data_repository_association_id = (
            dra.id if dra is not None else pulumi.Output.from_input(None)
        )
        return Binding(
            capacity=f"{a['storage_capacity_gib']}Gi",
            source=lambda namespace, read_only: lustre_source(fs, namespace, read_only),
            # The FSx driver rejects ReadOnlyMany: readers get RWX with read-only mounts.
            reader_access_mode="ReadWriteMany",
            writer_access_mode="ReadWriteMany",
            mount_options=pv_mount_options(a.get("extra_mount_options")),
            # No mount without the driver, and a destroy removes the volumes before it
            # (order: driver-before-volume). Not the
            # data repository association: the file system mounts without it (its data
            # reaches the PVs through the file system's id and names) and S3 imports lazily.
            ready=[install] if install is not None else [],
        )

    def _install(
        self, spec: Spec[FsxLustreModelStoreArgs], cluster: EksCluster, facts: _Preflight
    ) -> pulumi.Resource | None:
        """The FSx CSI driver, once per cluster (``AwsModelStore.install_driver``): its node
        pods tolerate every taint, its controller is told the region."""
        return self.install_driver(
            spec,
            cluster,
            spec.derived["install"],
            chart=FSX_CSI,
            helm_values={
                # GPU nodes are tainted; a node plugin that does not run there cannot mount.
                "node": {"tolerateAllTaints": True},
                # Needed where IMDS is blocked from pods.
                "controller": {"region": facts.region},
            },
            old_name=f"{spec.common.name}-fsx-csi-driver",
        )

    def _file_system(
        self,
        spec: Spec[FsxLustreModelStoreArgs],
        facts: _Preflight,
        sg_id: pulumi.Input[str],
        rules: Sequence[pulumi.Resource],
        tags: dict[str, str],
    ) -> "aws.fsx.LustreFileSystem":
        """The Lustre file system in the preflight's subnet and group ``sg_id``, protected
        unless ``protect`` is False; made after every LNET rule in ``rules``."""
        a = spec.args
        return aws.fsx.LustreFileSystem(
            f"{spec.common.name}-fs",
            subnet_ids=facts.subnet_id,
            security_group_ids=[sg_id],
            deployment_type=a["deployment_type"],
            storage_type=a["storage_type"],
            storage_capacity=a["storage_capacity_gib"],
            per_unit_storage_throughput=a["per_unit_storage_throughput"],
            drive_cache_type=a.get("drive_cache_type"),
            data_compression_type=a["data_compression_type"],
            kms_key_id=a.get("kms_key_arn"),
            file_system_type_version=a["file_system_type_version"],
            metadata_configuration=_metadata(a),
            **_automatic_backups(spec.derived["backup"]),
            tags={**tags, **self.opt_out_marks()},
            opts=pulumi.ResourceOptions.merge(
                self.data_protection(),
                # FSx refuses to create a file system whose group lacks the LNET rules ("do not
                # permit Lustre LNET network traffic on port 988"): wait for every one
                # (order: lnet-rules-first).
                pulumi.ResourceOptions(depends_on=list(rules)),
            ),
        )

    def _s3_link(
        self,
        spec: Spec[FsxLustreModelStoreArgs],
        fs: "aws.fsx.LustreFileSystem",
        tags: dict[str, str],
    ) -> "aws.fsx.DataRepositoryAssociation | None":
        """The data repository association to ``data_repository_path``; None without one."""
        a = spec.args
        if a.get("data_repository_path") is None:
            return None
        return aws.fsx.DataRepositoryAssociation(
            f"{spec.common.name}-s3-link",
            file_system_id=fs.id,
            file_system_path=a["file_system_path"],
            data_repository_path=a["data_repository_path"],
            batch_import_meta_data_on_create=True,
            imported_file_chunk_size=a.get("imported_file_chunk_size_mib"),
            # Unlinking S3 must never delete the models already in Lustre.
            delete_data_in_filesystem=False,
            s3={"auto_import_policy": {"events": list(a["auto_import_events"])}},
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _model_link(
        self,
        spec: Spec[FsxLustreModelStoreArgs],
        fs: "aws.fsx.LustreFileSystem",
        tags: dict[str, str],
    ) -> "aws.fsx.DataRepositoryAssociation | None":
        """The data repository association importing an ``s3://`` model's source into
        ``/revisions/<revision>``; None for another source or none. One per revision, named
        after it: a new revision is a new association beside the store's data, and the old
        one's removal keeps every file (``delete_data_in_filesystem`` False), each read whole
        by the publishing seed Job. FSx allows 8 associations per file system, each with its
        own S3 prefix (CreateDataRepositoryAssociation, Amazon FSx API Reference): a new
        revision takes a new source prefix."""
        m = spec.common.model
        if m is None or m.scheme != "s3":
            return None
        return aws.fsx.DataRepositoryAssociation(
            f"{spec.common.name}-model-{model_jobs.slug(m.revision)}",
            file_system_id=fs.id,
            file_system_path=f"/{m.revision_path}",
            data_repository_path=m.source.rstrip("/") + "/",
            batch_import_meta_data_on_create=True,
            # The stripe layout of imported files: the chunk size sets how many disks a large
            # shard is striped over (ImportedFileChunkSize, FSx API Reference).
            imported_file_chunk_size=spec.args.get("imported_file_chunk_size_mib"),
            delete_data_in_filesystem=False,
            # No automatic import: a published revision never changes under its readers.
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def model_filled(self) -> list[pulumi.Resource]:
        """The model's association: the publishing seed Job runs once it exists."""
        return [self.model_association] if self.model_association is not None else []

    def _network(
        self, name: str, a: FsxLustreModelStoreArgs, facts: _Preflight, tags: dict[str, str]
    ) -> tuple[pulumi.Input[str], list[pulumi.Resource]]:
        """The file system's security group and its LNET rules, each a separate resource."""
        if a.get("security_group_id") is not None:
            return a["security_group_id"], []
        sg = security_group(
            f"{name}-fs-sg",
            vpc_id=facts.vpc_id,
            description=f"FSx for Lustre model store {name}: LNET from itself and the nodes",
            tags=tags,
            parent=self,
        )
        nodes = peers(facts.node_security_group_ids)
        rules: list[pulumi.Resource] = []
        for port_range in LUSTRE_PORT_RANGES:
            ports = ports_text(port_range)
            for label, peer in [("self", sg.id), *nodes]:
                for direction, verb, word in (("ingress", "in", "from"), ("egress", "out", "to")):
                    rules.append(
                        tcp_rule(
                            f"{name}-lnet-{verb}-{ports}-{label}",
                            direction=direction,
                            security_group_id=sg.id,
                            peer_security_group_id=peer,
                            ports=port_range,
                            description=f"Lustre LNET {ports} {word} {label}",
                            tags=tags,
                            parent=self,
                        )
                    )
            if a["node_security_group_rules"]:
                for label, node_sg in nodes:
                    rules.append(
                        tcp_rule(
                            f"{name}-lnet-client-in-{ports}-{label}",
                            direction="ingress",
                            security_group_id=node_sg,
                            peer_security_group_id=sg.id,
                            ports=port_range,
                            description=f"Lustre LNET {ports} from model store {name}",
                            tags=tags,
                            parent=self,
                        )
                    )
        return sg.id, rules


def lustre_source(
    fs: "aws.fsx.LustreFileSystem", namespace: str, read_only: bool
) -> dict[str, Any]:
    """A PV's CSI source on ``fs``. The node plugin mounts dnsname@tcp:/mountname and uses the
    volume id only as a lock key, but kubelet keys a persistent CSI volume by
    driver^volumeHandle: two PVs sharing a handle would collide on a node. So each PV gets its
    own handle, ``<file system id>::<namespace>``."""
    return {
        "csi": {
            "driver": FSX_CSI.driver,
            "volumeHandle": fs.id.apply(lambda i: f"{i}::{namespace}"),
            "readOnly": read_only,
            "volumeAttributes": {"dnsname": fs.dns_name, "mountname": fs.mount_name},
        }
    }


def _metadata(
    a: FsxLustreModelStoreArgs,
) -> "aws.fsx.LustreFileSystemMetadataConfigurationArgs | None":
    if a["deployment_type"] != "PERSISTENT_2" or a["file_system_type_version"] != "2.15":
        return None
    if a.get("metadata_iops") is None:
        return aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC")
    return aws.fsx.LustreFileSystemMetadataConfigurationArgs(
        mode="USER_PROVISIONED", iops=a["metadata_iops"]
    )


def _automatic_backups(backup: Backup) -> dict[str, Any]:
    """The file system's automatic backup settings when the store is backed up; none
    otherwise (the file system keeps FSx's own default)."""
    if not backup.enabled:
        return {}
    hour, minute = backup.daily_start
    return {
        "automatic_backup_retention_days": backup.retention_days,
        "daily_automatic_backup_start_time": f"{hour:02d}:{minute:02d}",
        "copy_tags_to_backups": True,  # a backup is found and billed by the store's tags
    }
