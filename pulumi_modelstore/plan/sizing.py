"""``modelstore size``: what each backend needs so that R replicas starting together each read a
model of N GiB within T seconds, what limit binds, the predicted cold start and the monthly
storage cost, with the arithmetic and the published figure behind every step.

The model, the same for every backend: every replica runs on its own node and reads the whole
model once. A replica's read rate is the smallest of three limits: the storage's aggregate
read throughput shared by the R replicas, the storage's per-client limit, and the node's
network interface (``--node-gbps``). The cold start is the model's size over that rate: it
counts the read alone (no image pull, no scheduling, no load into GPU memory).

Every figure is a constant below, with its public source; a figure that is a judgement rather
than a published number says so, and so does the output. Store validation limits (FSx
capacities and throughputs, gp3 and Hyperdisk ranges, Azure Files quotas) are read from the
stores' own modules: the recommended settings stay within what the store accepts.

Compare a prediction with what the store's verification Job measures once a cluster runs it
(its MB/s per reader namespace): the Job reads as one replica does, alone, so it measures the
per-client and NIC limits; the aggregate limit shows only when R replicas start together.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..validation import MAX_GIB

MIB = 2**20
MB = 10**6
SEEN = "2026-12-01"
"""The day the figures below were read from their pages."""
EXIT_OUT_OF_REACH = 3
"""Exit code when a backend sized cannot meet the target."""
EXIT_BAD_INPUT = 2


@dataclass(frozen=True)
class Figure:
    """A published number (or a judgement, saying why) and where it comes from."""

    value: float
    unit: str
    source: str
    judgement: str = ""
    """Empty for a published figure; else why this number was chosen."""


@dataclass(frozen=True)
class Price:
    """A list price in USD for one region."""

    usd: float
    unit: str
    region: str
    source: str
    checked: str = ""
    """How the price was checked; empty when it was read from the pricing page on SEEN."""


# ---- figures: one place, each with its public source -------------------------------------------

NODE_GBPS = Figure(
    25,
    "Gbps",
    "",
    "a typical GPU node's network bandwidth (e.g. 25 Gbps on mid-size AWS G-family instances); "
    "pass --node-gbps for yours",
)

# FSx for Lustre, "Performance characteristics of SSD and HDD storage classes"
# (docs.aws.amazon.com/fsx/latest/LustreGuide/ssd-storage.html): PERSISTENT_2 baseline DISK
# throughput equals its per-unit storage throughput (125/250/500/1000 MBps/TiB; network baseline
# 320/640/1300/2600); SCRATCH_2 200 MBps/TiB. A model read cold comes from disk, so the disk
# baseline is used (burst credits are not counted on).
FSX_DOC = "docs.aws.amazon.com/fsx/latest/LustreGuide/ssd-storage.html"
FSX_SCRATCH_MBPS_PER_TIB = Figure(200, "MBps/TiB", FSX_DOC)
# "Throughput to individual client instances" (docs.aws.amazon.com/fsx/latest/LustreGuide/
# performance.html#throughput-clients): a client's throughput is bounded by its instance's
# network bandwidth; no separate per-client number is modelled.
FSX_PER_CLIENT = Figure(
    0,
    "MiB/s",
    "docs.aws.amazon.com/fsx/latest/LustreGuide/performance.html#throughput-clients",
    "no per-client figure besides the client's own network: the node NIC stands for it",
)
# FSx for Lustre pricing (aws.amazon.com/fsx/lustre/pricing/), us-east-1, SSD PERSISTENT_2, per
# GB-month of storage capacity, by MBps/TiB.
FSX_PRICING = "aws.amazon.com/fsx/lustre/pricing/"
FSX_P2_PRICE: dict[int, Price] = {
    125: Price(
        0.145, "GB-month", "us-east-1", FSX_PRICING, "also quoted by c3x.dev's FSx cost page"
    ),
    250: Price(0.210, "GB-month", "us-east-1", FSX_PRICING, "list price, not re-read"),
    500: Price(0.340, "GB-month", "us-east-1", FSX_PRICING, "list price, not re-read"),
    1000: Price(0.600, "GB-month", "us-east-1", FSX_PRICING, "list price, not re-read"),
}

# EFS, "Amazon EFS performance specifications" (docs.aws.amazon.com/efs/latest/ug/
# performance.html), General Purpose mode: Regional + Elastic reads 3-20 GiBps per file system
# (by Region; 60 GiBps in some Regions since 2025, document history) and 1,500 MiBps per
# client; Provisioned and Bursting 500 MiBps per client.
EFS_DOC = "docs.aws.amazon.com/efs/latest/ug/performance.html"
EFS_ELASTIC_READ = Figure(
    20,
    "GiBps",
    EFS_DOC,
    "the table gives 3-20 GiBps by Region; 20 taken for us-east-1 (60 in some Regions)",
)
EFS_ELASTIC_PER_CLIENT = Figure(1500, "MiBps", EFS_DOC)
EFS_OTHER_PER_CLIENT = Figure(500, "MiBps", EFS_DOC)
# Bursting: every file system can burst to 100 MiB/s ("Amazon EFS increases file system minimum
# throughput", aws.amazon.com/about-aws/whats-new/2020/06/); small ones fall far below it once
# their credits run out (FACTS: 2.85 MiB/s reported on 58 GiB).
EFS_BURST = Figure(100, "MiBps", "aws.amazon.com/about-aws/whats-new/2020/06/ (EFS bursting)")
EFS_PRICING = "aws.amazon.com/efs/pricing/"
EFS_STANDARD_PRICE = Price(0.30, "GB-month", "us-east-1", EFS_PRICING, "list price, not re-read")
EFS_ELASTIC_READ_PRICE = Price(0.03, "GB read", "us-east-1", EFS_PRICING, "list price, not re-read")

# S3: 5,500 GET/HEAD requests per second per partitioned prefix ("Best practices design
# patterns: optimizing Amazon S3 performance", docs.aws.amazon.com/AmazonS3/latest/userguide/
# optimizing-performance.html); Mountpoint reads in 8 MiB parts (--read-part-size default
# 8388608) and targets the instance's network bandwidth (--maximum-throughput-gbps: detected on
# EC2, 10 Gbps elsewhere) (awslabs/mountpoint-s3, `mount-s3 --help`, doc/CONFIGURATION.md).
S3_GETS_PER_PREFIX = Figure(
    5500, "GET/s", "docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html"
)
MOUNTPOINT_PART_MIB = Figure(8, "MiB", "awslabs/mountpoint-s3 mount-s3 --help (--read-part-size)")
MOUNTPOINT_TARGET = Figure(
    10,
    "Gbps",
    "awslabs/mountpoint-s3 mount-s3 --help (--maximum-throughput-gbps: detected on EC2, 10 "
    "Gbps elsewhere)",
)
S3_PRICE = Price(
    0.023, "GB-month", "us-east-1", "aws.amazon.com/s3/pricing/", "list price, not re-read"
)

# EBS gp3 pricing (aws.amazon.com/ebs/pricing/), us-east-1: storage per GB-month, throughput
# above the 125 MiB/s baseline per MiB/s-month, IOPS above 3,000 per IOPS-month, standard
# snapshots per GB-month. The volume initialization rate's own charge is not counted.
EBS_PRICING = "aws.amazon.com/ebs/pricing/"
GP3_PRICE = Price(0.08, "GB-month", "us-east-1", EBS_PRICING, "list price, not re-read")
GP3_THROUGHPUT_PRICE = Price(
    0.04, "MiBps-month over 125", "us-east-1", EBS_PRICING, "list price, not re-read"
)
GP3_IOPS_PRICE = Price(
    0.005, "IOPS-month over 3000", "us-east-1", EBS_PRICING, "list price, not re-read"
)
SNAPSHOT_PRICE = Price(0.05, "GB-month", "us-east-1", EBS_PRICING, "list price, not re-read")
EBS_INIT_DOC = "docs.aws.amazon.com/ebs/latest/userguide/initalize-volume.html"
# Headroom over the model for a block volume's file system (ext4/xfs metadata, the manifest).
VOLUME_HEADROOM = Figure(1.1, "x model", "", "10% over the model for the file system")

# Cloud Storage: the default bandwidth quota for reads from a region's buckets by Google Cloud
# services in that region, per project (cloud.google.com/storage/quotas, "Bandwidth").
GCS_REGION_BANDWIDTH = Figure(
    200,
    "Gbps",
    "cloud.google.com/storage/quotas",
    "the default per-project, per-region quota as last read; not re-read on this date",
)
GCS_PRICE = Price(
    0.020,
    "GB-month",
    "us-central1",
    "cloud.google.com/storage/pricing",
    "list price, not re-read",
)

# Hyperdisk ML (cloud.google.com/compute/docs/disks/hd-types/hyperdisk-ml): a read-only volume
# attaches to up to 2,500 VMs and its provisioned throughput is shared by them; per-GiB bounds
# on throughput (README: at least 0.12 MiB/s per GiB, at most 1,600 MiB/s per GiB of size).
HDML_DOC = "cloud.google.com/compute/docs/disks/hd-types/hyperdisk-ml"
HDML_MAX_ATTACHED = Figure(2500, "VMs", HDML_DOC)
HDML_MAX_MIBPS_PER_GIB = Figure(1600, "MiB/s per GiB", HDML_DOC)
HDML_PER_VM = Figure(
    0,
    "MiB/s",
    "cloud.google.com/compute/docs/disks/hyperdisk-perf-limits",
    "the per-VM Hyperdisk limit depends on the machine type; the node NIC stands for it",
)

# Azure Storage, "Scalability and performance targets for standard storage accounts"
# (learn.microsoft.com/azure/storage/common/scalability-targets-standard-account): default
# maximum egress per general-purpose v2 account, 120 Gbps in the listed large Regions (East US
# among them), 50 Gbps elsewhere.
AZURE_EGRESS = Figure(
    120,
    "Gbps",
    "learn.microsoft.com/azure/storage/common/scalability-targets-standard-account",
)
BLOB_PRICE = Price(
    0.0184,
    "GB-month",
    "eastus",
    "azure.microsoft.com/pricing/details/storage/blobs/ (Hot, LRS)",
    "list price, not re-read",
)
FILES_V1_PRICE = Price(
    0.16,
    "provisioned GiB-month",
    "eastus",
    "azure.microsoft.com/pricing/details/storage/files/ (Premium, LRS, provisioned v1)",
    "list price, not re-read",
)


# ---- the report --------------------------------------------------------------------------------


@dataclass
class Step:
    text: str
    source: str = ""
    judgement: str = ""


@dataclass
class Sizing:
    """One backend's answer."""

    backend: str
    settings: dict[str, Any]
    binding: str
    seconds: float | None
    within_target: bool | None
    shortfall_seconds: float | None
    monthly_cost_usd: float | None
    cost_region: str
    steps: list[Step] = field(default_factory=list)
    store: str = ""


@dataclass(frozen=True)
class Need:
    model_gib: float
    replicas: int
    seconds: float
    node_gbps: float
    nfs_mibps: float | None = None

    @property
    def model_mib(self) -> float:
        return self.model_gib * 1024

    @property
    def per_replica(self) -> float:
        """MiB/s each replica must read at."""
        return self.model_mib / self.seconds

    @property
    def aggregate(self) -> float:
        return self.per_replica * self.replicas

    @property
    def nic(self) -> float:
        return self.node_gbps * 1e9 / 8 / MIB


def n(x: float) -> str:
    """A number as the output writes it: thousands separated, at most one decimal."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def mb_to_mib(x: float) -> float:
    return x * MB / MIB


def gbps_to_mibps(x: float) -> float:
    return x * 1e9 / 8 / MIB


class _Limits:
    """The three limits of one configuration, and the steps that derived them."""

    def __init__(self, need: Need) -> None:
        self.need = need
        self.steps: list[Step] = []
        self.aggregate: float | None = None
        self.per_client: float | None = None

    def step(self, text: str, source: str = "", judgement: str = "") -> None:
        self.steps.append(Step(text, source, judgement))

    def figure_step(self, text: str, figure: Figure | Price) -> None:
        if isinstance(figure, Price):
            checked = f"; {figure.checked}" if figure.checked else f"; read {SEEN}"
            self.step(text, f"{figure.source}, {figure.region}{checked}")
        else:
            self.step(text, figure.source, figure.judgement)

    def result(
        self,
        backend: str,
        settings: dict[str, Any],
        cost: float | None,
        region: str,
        *,
        no_nic: bool = False,
    ) -> Sizing:
        need = self.need
        rates: list[tuple[float, str]] = []
        if self.aggregate is not None:
            rates.append((self.aggregate / need.replicas, "storage aggregate throughput"))
        if self.per_client is not None:
            rates.append((self.per_client, "per-client throughput"))
        if not no_nic:
            rates.append((need.nic, "node NIC"))
        if not rates:
            self.step("no published limit: the cold start cannot be predicted; measure it")
            return Sizing(backend, settings, "unknown", None, None, None, cost, region, self.steps)
        rate = min(r for r, _ in rates)
        binding = " and ".join(what for r, what in rates if r == rate)  # ties name each
        seconds = need.model_mib / rate
        shown = ", ".join(f"{what} {n(r)}" for r, what in rates)
        self.step(
            f"per replica: min({shown}) = {n(rate)} MiB/s ({binding}); cold start "
            f"{n(need.model_mib)} MiB / {n(rate)} MiB/s = {seconds:.1f} s"
        )
        unknown_storage = self.aggregate is None and self.per_client is None
        if unknown_storage:
            binding = "node NIC (storage unknown)"
            self.step(
                "the storage's own limits are unknown: the NIC bound is a lower bound on the "
                "cold start, not a prediction"
            )
        within = None if unknown_storage else seconds <= need.seconds + 1e-9
        shortfall = None if within is not False else seconds - need.seconds
        if shortfall is not None:
            self.step(
                f"OUT OF REACH: {seconds:.1f} s is {shortfall:.1f} s over the {n(need.seconds)} "
                f"s target ({binding} binds)"
            )
        return Sizing(
            backend, settings, binding, seconds, within, shortfall, cost, region, self.steps
        )


# ---- backends ----------------------------------------------------------------------------------


def _cap_gib(need: Need) -> int:
    return math.ceil(need.model_gib * VOLUME_HEADROOM.value)


def _nic_step(lim: _Limits) -> None:
    figure = NODE_GBPS if lim.need.node_gbps == NODE_GBPS.value else None
    lim.step(
        f"node NIC: {n(lim.need.node_gbps)} Gbps x 10^9 / 8 / 2^20 = {n(lim.need.nic)} MiB/s",
        figure.source if figure else "--node-gbps",
        figure.judgement if figure else "",
    )


def size_fsx(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    from ..aws import fsx

    lim = _Limits(need)
    p2 = fsx.THROUGHPUT_MBPS_PER_TIB[("PERSISTENT_2", "SSD")]

    def capacity_for(per_unit: float, deployment: str) -> int:
        tib = need.aggregate / mb_to_mib(per_unit)
        gib = max(math.ceil(tib * 1024), math.ceil(need.model_gib))
        for small in fsx.SSD_SMALL_CAPACITIES_GIB:
            if gib <= small:
                return small
        step = fsx.ssd_capacity_step(deployment)
        return math.ceil(gib / step) * step

    if declared is None:
        options = [(capacity_for(pu, "PERSISTENT_2"), pu) for pu in p2]
        capacity, per_unit = min(options, key=lambda o: (o[0] * FSX_P2_PRICE[o[1]].usd, o[0]))
        deployment = "PERSISTENT_2"
        lim.step(
            f"aggregate needed {n(need.aggregate)} MiB/s = {n(need.aggregate * MIB / MB)} MB/s;"
            " smallest valid capacity per per-unit throughput: "
            + ", ".join(
                f"{pu} MBps/TiB -> {c} GiB (${n(round(c * FSX_P2_PRICE[pu].usd, 2))})"
                for c, pu in options
            )
            + f"; cheapest: {capacity} GiB at {per_unit}",
            FSX_DOC,
        )
    else:
        deployment = declared.get("deployment_type", "PERSISTENT_2")
        storage_type = declared.get("storage_type", "SSD")
        capacity = int(declared.get("storage_capacity_gib", 1200))
        given = declared.get("per_unit_storage_throughput") or fsx.default_throughput(
            deployment, storage_type
        )
        if given is None:  # scratch: no per-unit setting
            per_unit = int(FSX_SCRATCH_MBPS_PER_TIB.value)
            lim.figure_step(f"{deployment}: {n(per_unit)} MBps/TiB", FSX_SCRATCH_MBPS_PER_TIB)
        else:
            per_unit = int(given)
    agg_mb = capacity / 1024 * per_unit
    lim.aggregate = mb_to_mib(agg_mb)
    lim.step(
        f"storage aggregate: {capacity} GiB / 1024 x {n(per_unit)} MBps/TiB = {n(agg_mb)} MB/s "
        f"= {n(lim.aggregate)} MiB/s (disk baseline = per-unit throughput)",
        FSX_DOC,
    )
    lim.figure_step("per client: bounded by the client's own network", FSX_PER_CLIENT)
    _nic_step(lim)
    price = FSX_P2_PRICE.get(int(per_unit)) if deployment == "PERSISTENT_2" else None
    cost: float | None = None
    if price is not None:
        cost = capacity * price.usd
        lim.figure_step(
            f"cost: {capacity} GiB x ${price.usd}/{price.unit} = ${cost:,.2f}/month", price
        )
    else:
        lim.step(f"cost: no price recorded for {deployment} at {n(per_unit)} MBps/TiB")
    settings = {
        "deployment_type": deployment,
        "storage_capacity_gib": capacity,
        "per_unit_storage_throughput": int(per_unit),
    }
    return lim.result("fsx-lustre", settings, cost, "us-east-1")


def size_efs(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    lim = _Limits(need)
    mode = (declared or {}).get("throughput_mode", "elastic")
    if mode == "elastic":
        lim.aggregate = EFS_ELASTIC_READ.value * 1024
        lim.figure_step(
            f"storage aggregate (Elastic reads): {n(EFS_ELASTIC_READ.value)} GiBps = "
            f"{n(lim.aggregate)} MiB/s",
            EFS_ELASTIC_READ,
        )
        lim.per_client = EFS_ELASTIC_PER_CLIENT.value
        lim.figure_step(f"per client (Elastic): {n(lim.per_client)} MiBps", EFS_ELASTIC_PER_CLIENT)
    else:
        if mode == "provisioned":
            lim.aggregate = float((declared or {}).get("provisioned_throughput_in_mibps", 1))
            lim.step(f"storage aggregate (Provisioned): {n(lim.aggregate)} MiBps as declared")
        else:
            lim.aggregate = EFS_BURST.value
            lim.figure_step(
                f"storage aggregate (Bursting, while credits last): {n(EFS_BURST.value)} MiBps",
                EFS_BURST,
            )
        lim.per_client = EFS_OTHER_PER_CLIENT.value
        lim.figure_step(f"per client ({mode}): {n(lim.per_client)} MiBps", EFS_OTHER_PER_CLIENT)
    _nic_step(lim)
    cost = need.model_gib * EFS_STANDARD_PRICE.usd
    lim.figure_step(
        f"cost: {n(need.model_gib)} GiB x ${EFS_STANDARD_PRICE.usd}/GB-month = ${cost:,.2f}/month",
        EFS_STANDARD_PRICE,
    )
    if mode == "elastic":
        per_start = need.replicas * need.model_gib * EFS_ELASTIC_READ_PRICE.usd
        lim.figure_step(
            f"plus Elastic reads per cold start of all replicas: {need.replicas} x "
            f"{n(need.model_gib)} GiB x ${EFS_ELASTIC_READ_PRICE.usd}/GB = ${per_start:,.2f}",
            EFS_ELASTIC_READ_PRICE,
        )
    return lim.result("efs", {"throughput_mode": mode}, cost, "us-east-1")


def size_mountpoint(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    lim = _Limits(need)
    lim.aggregate = S3_GETS_PER_PREFIX.value * MOUNTPOINT_PART_MIB.value
    lim.step(
        f"storage aggregate: {n(S3_GETS_PER_PREFIX.value)} GET/s per prefix x "
        f"{n(MOUNTPOINT_PART_MIB.value)} MiB parts = {n(lim.aggregate)} MiB/s",
        f"{S3_GETS_PER_PREFIX.source}; {MOUNTPOINT_PART_MIB.source}",
    )
    lim.step(
        "per client: Mountpoint targets the instance's network bandwidth (the NIC below)",
        MOUNTPOINT_TARGET.source,
    )
    _nic_step(lim)
    cache_size = f"{_cap_gib(need)}Gi"
    if declared is None:
        settings: dict[str, Any] = {"cache": "emptyDir", "cache_size": cache_size}
        lim.figure_step(
            f"cache: emptyDir of {cache_size} ({VOLUME_HEADROOM.value} x the model): a replica "
            "restarting on the same node reads from local disk; the first start still reads S3",
            VOLUME_HEADROOM,
        )
    else:
        settings = {k: declared[k] for k in ("cache", "cache_size") if k in declared}
    cost = need.model_gib * S3_PRICE.usd
    lim.figure_step(
        f"cost: {n(need.model_gib)} GiB x ${S3_PRICE.usd}/GB-month = ${cost:,.2f}/month", S3_PRICE
    )
    return lim.result("mountpoint-s3", settings, cost, "us-east-1")


def size_ebs(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    from ..aws.ebs import classes as gp3

    lim = _Limits(need)
    low, high = gp3.VOLUME_INITIALIZATION_RATE_MIBPS
    size = _cap_gib(need)
    if declared is None:
        rate = min(max(low, math.ceil(need.per_replica)), high)
        throughput = min(max(gp3.GP3_THROUGHPUT_MIBPS[0], rate), gp3.GP3_THROUGHPUT_MIBPS[1])
        iops = max(gp3.GP3_IOPS[0], math.ceil(throughput / gp3.GP3_MAX_MIBPS_PER_IOPS))
        lim.step(
            f"each replica restores its own volume from the snapshot: volume initialization rate "
            f"= ceil({n(need.per_replica)}) MiB/s within {low}-{high} = {rate}; gp3 throughput "
            f"at least that ({throughput}), IOPS at least throughput / "
            f"{gp3.GP3_MAX_MIBPS_PER_IOPS} and {gp3.GP3_IOPS[0]} = {iops}",
            EBS_INIT_DOC,
        )
    else:
        rate = int(declared.get("volume_initialization_rate_mibps") or 0)
        throughput = int(declared.get("throughput_mibps") or gp3.GP3_THROUGHPUT_MIBPS[0])
        iops = int(declared.get("iops") or gp3.GP3_IOPS[0])
    if rate:
        lim.per_client = float(min(rate, throughput))
        lim.step(
            f"per client (its own volume): min(initialization rate {rate}, gp3 throughput "
            f"{throughput}) = {n(lim.per_client)} MiB/s",
            EBS_INIT_DOC,
        )
    else:
        lim.step(
            "no volume initialization rate: blocks load lazily from S3 on first read, at no "
            "published rate (the cold start cannot be predicted)",
            EBS_INIT_DOC,
        )
    _nic_step(lim)
    lim.step("storage aggregate: none shared (one volume per replica)")
    per_volume = (
        size * GP3_PRICE.usd
        + max(0, throughput - gp3.GP3_THROUGHPUT_MIBPS[0]) * GP3_THROUGHPUT_PRICE.usd
        + max(0, iops - gp3.GP3_IOPS[0]) * GP3_IOPS_PRICE.usd
    )
    snapshot = need.model_gib * SNAPSHOT_PRICE.usd
    cost = need.replicas * per_volume + snapshot
    lim.figure_step(
        f"cost: {need.replicas} volumes x ({size} GiB x ${GP3_PRICE.usd} + "
        f"{max(0, throughput - 125)} MiB/s x ${GP3_THROUGHPUT_PRICE.usd} + "
        f"{max(0, iops - 3000)} IOPS x ${GP3_IOPS_PRICE.usd}) + snapshot {n(need.model_gib)} "
        f"GiB x ${SNAPSHOT_PRICE.usd} = ${cost:,.2f}/month (initialization charge not counted)",
        GP3_PRICE,
    )
    settings = {
        "volume_size": f"{size}Gi",
        "throughput_mibps": throughput,
        "iops": iops,
        "volume_initialization_rate_mibps": rate or None,
    }
    sizing = lim.result("ebs-snapshot", settings, cost, "us-east-1")
    if not rate:
        sizing.within_target = None
        sizing.binding = "unknown (lazy loading)"
    return sizing


def size_gcsfuse(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    lim = _Limits(need)
    lim.aggregate = gbps_to_mibps(GCS_REGION_BANDWIDTH.value)
    lim.figure_step(
        f"storage aggregate: {n(GCS_REGION_BANDWIDTH.value)} Gbps regional bandwidth quota = "
        f"{n(lim.aggregate)} MiB/s",
        GCS_REGION_BANDWIDTH,
    )
    lim.step(
        "per client: gcsfuse in the pod's sidecar, bounded by the node's network (the NIC below)",
        judgement="no published per-node gcsfuse figure",
    )
    _nic_step(lim)
    tuning = (declared or {}).get("tuning", "serving")
    lim.step(
        f"tuning {tuning}: the first start reads Cloud Storage either way; 'file-cache' keeps the "
        "files on the node (a restart there reads local disk; each file must fit the sidecar's "
        "ephemeral storage), 'serving' streams with buffered reads and no file cache"
    )
    cost = need.model_gib * GCS_PRICE.usd
    lim.figure_step(
        f"cost: {n(need.model_gib)} GiB x ${GCS_PRICE.usd}/GB-month = ${cost:,.2f}/month",
        GCS_PRICE,
    )
    return lim.result("gcs-fuse", {"tuning": tuning}, cost, "us-central1")


def size_hyperdisk(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    from ..gcp import hyperdisk as hd

    lim = _Limits(need)
    volumes = len((declared or {}).get("readers") or ()) or 1
    if declared is None:
        size = max(hd.MIN_SIZE_GIB, _cap_gib(need))
        wanted = max(hd.MIN_THROUGHPUT, math.ceil(need.aggregate))
        size = max(size, math.ceil(wanted / HDML_MAX_MIBPS_PER_GIB.value))
        size = min(size, hd.MAX_SIZE_GIB)
        throughput = min(wanted, hd.MAX_THROUGHPUT, int(size * HDML_MAX_MIBPS_PER_GIB.value))
        lim.step(
            f"throughput_mibps = max({hd.MIN_THROUGHPUT}, ceil({n(need.aggregate)})) = "
            f"{throughput}, within {hd.MIN_THROUGHPUT}-{hd.MAX_THROUGHPUT:,} and "
            f"{n(HDML_MAX_MIBPS_PER_GIB.value)} per GiB of {size} GiB",
            HDML_DOC,
        )
    else:
        size = int(declared.get("size_gib", hd.MIN_SIZE_GIB))
        throughput = int(declared.get("throughput_mibps", 2400))
    lim.aggregate = float(throughput)
    lim.step(
        f"storage aggregate: {throughput} MiB/s provisioned, shared by every node attaching the "
        f"volume (one volume per reader namespace: {volumes})",
        HDML_DOC,
    )
    lim.figure_step("per client: the per-VM Hyperdisk limit", HDML_PER_VM)
    _nic_step(lim)
    if need.replicas > HDML_MAX_ATTACHED.value:
        lim.figure_step(
            f"{need.replicas} replicas exceed the {n(HDML_MAX_ATTACHED.value)} VMs one volume "
            "attaches to: split them over more volumes",
            HDML_MAX_ATTACHED,
        )
    lim.step("cost: no Hyperdisk ML price recorded (cloud.google.com/compute/disks-image-pricing)")
    sizing = lim.result(
        "hyperdisk-ml", {"size_gib": size, "throughput_mibps": throughput}, None, "us-central1"
    )
    if need.replicas > HDML_MAX_ATTACHED.value:
        sizing.within_target = False
        sizing.binding = f"attached-VM limit ({n(HDML_MAX_ATTACHED.value)} per volume)"
    return sizing


def size_blob(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    from ..azure.blob import AzureBlobModelStoreArgs
    from ..fields import fields_of

    lim = _Limits(need)
    lim.aggregate = gbps_to_mibps(AZURE_EGRESS.value)
    lim.figure_step(
        f"storage aggregate: account egress {n(AZURE_EGRESS.value)} Gbps = "
        f"{n(lim.aggregate)} MiB/s",
        AZURE_EGRESS,
    )
    lim.step(
        "per client: blobfuse2 on the node, bounded by the node's network (the NIC below)",
        judgement="no published per-node blobfuse2 figure",
    )
    _nic_step(lim)
    fields = fields_of(AzureBlobModelStoreArgs)
    names = ("block_cache_block_size_mib", "block_cache_prefetch", "block_cache_pool_size_mib")
    settings = {k: (declared or {}).get(k, fields[k].default) for k in names}
    block, prefetch, pool = (settings[k] for k in names)
    lim.step(
        f"block cache: {prefetch} blocks of {block} MiB read ahead = {prefetch * block} MiB in "
        f"flight, within the {pool} MiB pool (the store's defaults)",
        judgement="the store's defaults are taken to keep a sequential read streaming",
    )
    cost = need.model_gib * BLOB_PRICE.usd
    lim.figure_step(
        f"cost: {n(need.model_gib)} GiB x ${BLOB_PRICE.usd}/GB-month = ${cost:,.2f}/month",
        BLOB_PRICE,
    )
    return lim.result("azure-blob", settings, cost, "eastus")


def size_files(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    from ..azure import files

    lim = _Limits(need)
    low, high = files.QUOTA_V1
    sku = (declared or {}).get("sku_name", files.SKUS_V1[0])
    if declared is None:
        quota = max(low, math.ceil(need.model_gib))
        while files.baseline_v1(quota)[1] < need.aggregate and quota < high:
            quota = min(high, max(quota + 1, math.floor(quota * 1.01)))
        # the smallest quota whose baseline covers the need (the loop may overshoot by 1%)
        while quota > low and files.baseline_v1(quota - 1)[1] >= need.aggregate:
            quota -= 1
        lim.step(
            f"share_quota_gib: the smallest of {low}-{high} with 100 + ceil(0.04 x GiB) + "
            f"ceil(0.06 x GiB) >= {n(need.aggregate)} MiB/s: {quota}",
            "azure/files.py baseline_v1 (provisioned v1 formula)",
        )
        v2_bandwidth = min(
            max(files.BANDWIDTH_V2[0], math.ceil(need.aggregate)), files.BANDWIDTH_V2[1]
        )
        lim.step(
            f"or provisioned v2 (sku_name {files.SKUS_V2[0]}): share_quota_gib "
            f"{max(files.QUOTA_V2[0], math.ceil(need.model_gib))}, provisioned_bandwidth_mibps "
            f"{v2_bandwidth} (throughput apart from size; no v2 price recorded)"
        )
    else:
        quota = int(declared.get("share_quota_gib", 1024))
    if files.is_v2(sku):
        given = (declared or {}).get("provisioned_bandwidth_mibps")
        bandwidth = int(given) if given else files.default_bandwidth_v2(quota)
        lim.aggregate = float(bandwidth)
        lim.step(f"storage aggregate (provisioned v2): {bandwidth} MiB/s")
        cost: float | None = None
        lim.step("cost: no provisioned v2 price recorded")
    else:
        lim.aggregate = float(files.baseline_v1(quota)[1])
        lim.step(
            f"storage aggregate (provisioned v1): 100 + ceil(0.04 x {quota}) + ceil(0.06 x "
            f"{quota}) = {n(lim.aggregate)} MiB/s",
            "azure/files.py baseline_v1",
        )
        cost = quota * FILES_V1_PRICE.usd
        lim.figure_step(
            f"cost: {quota} GiB x ${FILES_V1_PRICE.usd}/GiB-month = ${cost:,.2f}/month",
            FILES_V1_PRICE,
        )
    lim.step(
        "per client: bounded by the node's network (the NIC below)",
        judgement="no published per-client figure for NFS shares",
    )
    _nic_step(lim)
    return lim.result(
        "azure-files-nfs", {"sku_name": sku, "share_quota_gib": quota}, cost, "eastus"
    )


def size_nfs(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    lim = _Limits(need)
    if need.nfs_mibps is not None:
        lim.aggregate = need.nfs_mibps
        lim.step(f"storage aggregate: {n(need.nfs_mibps)} MiB/s (--nfs-mibps)")
    else:
        lim.step("storage: an NFS server this library does not make; its throughput is unknown")
    _nic_step(lim)
    lim.step("cost: the server's, not known here")
    return lim.result("nfs", {}, None, "")


def size_local(need: Need, declared: Mapping[str, Any] | None) -> Sizing:
    lim = _Limits(need)
    lim.step(
        "storage: each node's own disk (hostPath); its read rate is unknown and the network is "
        "not used"
    )
    return lim.result("local", {}, None, "", no_nic=True)


SIZERS: dict[str, Callable[[Need, Mapping[str, Any] | None], Sizing]] = {
    "fsx-lustre": size_fsx,
    "efs": size_efs,
    "mountpoint-s3": size_mountpoint,
    "ebs-snapshot": size_ebs,
    "gcs-fuse": size_gcsfuse,
    "hyperdisk-ml": size_hyperdisk,
    "azure-blob": size_blob,
    "azure-files-nfs": size_files,
    "nfs": size_nfs,
    "local": size_local,
}
"""Backend -> its sizer: every store backend (``ebs-snapshot``, the EbsModelCache: one volume
per replica restored from its snapshot)."""


# ---- report ------------------------------------------------------------------------------------


def report(need: Need, sizings: list[Sizing], stack: str | None = None) -> dict[str, Any]:
    """The report as data: what ``--format json`` prints and the text is rendered from."""
    nic = NODE_GBPS if need.node_gbps == NODE_GBPS.value else None
    return {
        "model_gib": need.model_gib,
        "replicas": need.replicas,
        "cold_start_seconds": need.seconds,
        "node_gbps": need.node_gbps,
        "node_gbps_judgement": nic.judgement if nic else "",
        "nfs_mibps": need.nfs_mibps,
        "stack": stack,
        "figures_seen": SEEN,
        "needs": {
            "per_replica_mibps": round(need.per_replica, 3),
            "aggregate_mibps": round(need.aggregate, 3),
        },
        "backends": [_as_data(s) for s in sizings],
        "out_of_reach": [s.store or s.backend for s in sizings if s.within_target is False],
    }


def _as_data(s: Sizing) -> dict[str, Any]:
    data = asdict(s)
    for key in ("seconds", "shortfall_seconds", "monthly_cost_usd"):
        if data[key] is not None:
            data[key] = round(data[key], 3)
    return data


def render_text(data: Mapping[str, Any]) -> str:
    """The text output, from :func:`report`'s data (so the two say the same)."""
    lines = [
        f"modelstore size: {n(data['model_gib'])} GiB model, {data['replicas']} replicas "
        f"starting together, target {n(data['cold_start_seconds'])} s"
        + (f", stack {data['stack']}" if data["stack"] else ""),
        f"  node NIC {n(data['node_gbps'])} Gbps"
        + (f" (judgement: {data['node_gbps_judgement']})" if data["node_gbps_judgement"] else ""),
        f"  needed: {n(data['model_gib'] * 1024)} MiB / {n(data['cold_start_seconds'])} s = "
        f"{n(data['needs']['per_replica_mibps'])} MiB/s per replica, x {data['replicas']} = "
        f"{n(data['needs']['aggregate_mibps'])} MiB/s aggregate",
        f"  figures as read on {data['figures_seen']}; prices are list prices for the region named",
        "",
    ]
    for b in data["backends"]:
        name = f"{b['store']} ({b['backend']})" if b["store"] else b["backend"]
        if b["seconds"] is None:
            seconds = "cold start not predicted"
        elif b["within_target"] is None:
            seconds = f"at least {b['seconds']:.1f} s"
        else:
            seconds = f"{b['seconds']:.1f} s"
        verdict = {True: "within target", False: "OUT OF REACH", None: "not predicted"}[
            b["within_target"]
        ]
        if b["shortfall_seconds"] is not None:
            verdict += f" by {b['shortfall_seconds']:.1f} s"
        cost = (
            f"${b['monthly_cost_usd']:,.2f}/month ({b['cost_region']})"
            if b["monthly_cost_usd"] is not None
            else "cost unknown"
        )
        lines.append(f"{name}: {seconds}, bound by {b['binding']}; {cost}; {verdict}")
        shown = {k: v for k, v in b["settings"].items() if v is not None}
        if shown:
            lines.append("  settings: " + ", ".join(f"{k}={v}" for k, v in shown.items()))
        for step in b["steps"]:
            note = f" [{step['source']}]" if step["source"] else ""
            if step["judgement"]:
                note += f" (judgement: {step['judgement']})"
            lines.append(f"  - {step['text']}{note}")
        lines.append("")
    if data["out_of_reach"]:
        lines.append("out of reach: " + ", ".join(data["out_of_reach"]))
    return "\n".join(lines).rstrip("\n") + "\n"


def render_json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


# ---- inputs ------------------------------------------------------------------------------------


class SizingInputError(ValueError):
    """A flag or a stack that cannot be sized: the message names the flag, the value and what
    is allowed."""


def backend_names() -> list[str]:
    """Every backend that can be sized: the store registry's (the installed rooms') and the
    EBS model cache component."""
    from ..program import installed_backends

    return sorted(set(installed_backends()) & set(SIZERS))


# The bounds of each flag, so every figure the report computes from them is a finite number
# (a huge or tiny number overflowed the arithmetic): flag -> (lowest, highest, the allowed
# values in words).
FLAG_BOUNDS: Mapping[str, tuple[float, float, str]] = {
    # One byte, and the largest Kubernetes quantity (2^63-1 bytes: no claim holds more).
    "--model-gib": (
        2**-30,
        MAX_GIB,
        f"a number of GiB from 2^-30 (one byte) to {MAX_GIB} (Kubernetes caps a quantity at "
        "2^63-1 bytes)",
    ),
    # A Deployment's or StatefulSet's spec.replicas is an int32 (k8s.io/api apps/v1 types.go).
    "--replicas": (
        1,
        2**31 - 1,
        "a whole number from 1 to 2147483647 (a Deployment's replicas is an int32)",
    ),
    "--cold-start-seconds": (
        0.001,
        10**9,
        "a number of seconds from 0.001 to 1000000000 (a millisecond to about 31 years)",
    ),
    "--node-gbps": (0.001, 10**6, "a number of Gbps from 0.001 to 1000000"),
    "--nfs-mibps": (0.001, 10**9, "a number of MiB/s from 0.001 to 1000000000"),
}


def positive(flag: str, text: str | None, *, whole: bool = False) -> float:
    """``text`` as a number greater than 0 (a whole number with ``whole``), within the flag's
    :data:`FLAG_BOUNDS`."""
    allowed = "a whole number greater than 0" if whole else "a number greater than 0"
    try:
        value = int(text) if whole else float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = -1
    if not value > 0 or (not whole and not math.isfinite(value)):
        raise SizingInputError(f"{flag} must be {allowed}, got {_shown(text)}")
    low, high, words = FLAG_BOUNDS.get(flag, (0, math.inf, allowed))
    if not low <= value <= high:
        raise SizingInputError(f"{flag} must be {words}, got {_shown(text)}")
    return value


def _shown(text: str | None) -> str:
    """The value as given, cut to 40 characters (a 400-digit number stays one short line)."""
    shown = repr(text)
    if len(shown) <= 40:
        return shown
    return f"{shown[:20]}...{shown[-10:]} ({len(text or '')} characters)"


def size_backends(need: Need, backend: str | None) -> list[Sizing]:
    """Recommended settings for ``backend``, or every backend."""
    names = backend_names()
    if backend is not None and backend not in names:
        raise SizingInputError(f"--backend must be one of {', '.join(names)}, got {backend!r}")
    return [SIZERS[name](need, None) for name in ([backend] if backend else names)]


def size_stack(need: Need, cwd: str, stack: str, backend: str | None) -> list[Sizing]:
    """The stores ``stack`` declares (``modelstore:stores``, read as ``modelstore plan`` reads
    the stack's config), sized as declared: fields not given take the store's documented
    defaults."""
    from ..fields import NO_DEFAULT, fields_of
    from ..program import backend_class, store_args
    from .project import load_project

    project = load_project(cwd)
    values, _ = project.stack_config(stack)
    raw = values.get("modelstore:stores")
    if raw is None:
        raise SizingInputError(f"--stack {stack!r} declares no modelstore:stores")
    stores = json.loads(raw)
    sizings = []
    for name, fields in stores.items():
        kind = fields.get("backend")
        if backend is not None and kind != backend:
            continue
        cls = backend_class(kind) if isinstance(kind, str) else None
        if cls is None or kind not in SIZERS:
            raise SizingInputError(
                f"--stack {stack!r}: store {name} has backend {kind!r}, which cannot be sized"
            )
        declared = {
            k: f.default for k, f in fields_of(cls.args_type).items() if f.default is not NO_DEFAULT
        }
        declared.update(store_args(name, cls, fields))
        sizing = SIZERS[kind](need, declared)
        sizing.store = name
        sizings.append(sizing)
    if not sizings:
        raise SizingInputError(
            f"--stack {stack!r} declares no store" + (f" of backend {backend}" if backend else "")
        )
    return sizings
