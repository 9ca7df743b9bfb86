"""Benchmark: the CPU cost of planning the config program (stacks/) as the store count grows.

For each size N (default 1, 10, 25, 50) it generates a stack of N model stores, mixed over
every backend in ``pulumi_modelstore.program.BACKENDS`` and spread over three EKS clusters
(``bench-eks-0..2``; local stores have none), and plans it offline with the repo's plan engine
``--repeat`` times, each time in a fresh child process so no Pulumi SDK state carries over.
It measures the child's CPU seconds (user + sys, whole process: interpreter start, imports and
the plan) and prints, per N: the median CPU s per plan, CPU ms per store, the CPU of the plan
call alone, the preview steps (registered resources, the stack and default providers), and
the invokes (data-source lookups) made, all and distinct.

Targets: planning 50 stores costs at most 2.2x planning 25 (growth stays linear), and the
50-store plan takes under 8 s CPU on 2 cores.

    python scripts/bench_plan.py [--sizes 1,10,25,50] [--repeat 3] [--no-driver-none]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # plan this checkout, not whatever pulumi_modelstore is installed
CLUSTERS = 3
NO_CLUSTER = {"local"}  # backends whose stores live on a laptop cluster, not an EKS one
# Backend fields beyond cluster, claim and readers (see stacks/); a new backend needs none.
EXTRA_FIELDS: dict[str, dict[str, Any]] = {"local": {"capacity_gib": 10}}
GROWTH_TARGET, CPU_TARGET_S = 2.2, 8.0


def driver_fields(backend: str, cluster: str | None, installs: set, driver_none: bool) -> dict:
    """``driver: none`` for every store but the first of its backend on its cluster: the program
    refuses a second install of one CSI driver on one cluster (``_one_driver_install_per_cluster``
    in program.py). ``--no-driver-none`` leaves the driver field out, for when the program
    installs each driver once per cluster by itself."""
    from pulumi_modelstore.program import BACKENDS

    if not driver_none or BACKENDS[backend].driver_chart is None:
        return {}
    if (cluster, backend) in installs:
        return {"driver": "none"}
    installs.add((cluster, backend))
    return {}


def stack_config(n: int, driver_none: bool) -> dict[str, Any]:
    """A stack of ``n`` stores, each with its own claim name and reader namespace."""
    from pulumi_modelstore.program import BACKENDS

    backends, installs, stores = list(BACKENDS), set(), {}
    for i in range(n):
        backend = backends[i % len(backends)]
        cluster = None if backend in NO_CLUSTER else f"bench-eks-{i % CLUSTERS}"
        fields: dict[str, Any] = {
            "backend": backend,
            "claim_name": f"m{i}",
            "readers": [f"inference-{i}"],
        }
        if cluster:
            fields["cluster_name"] = cluster
        fields |= EXTRA_FIELDS.get(backend, {})
        fields |= driver_fields(backend, cluster, installs, driver_none)
        stores[f"model-{i}"] = fields
    return {"config": {"aws:region": "us-west-2", "modelstore:stores": stores}}


def child(n: int, driver_none: bool) -> None:
    """Plan an ``n``-store stack once and print one JSON line of measurements."""
    import yaml

    from pulumi_modelstore.plan.engine import plan_directory

    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        project = {"name": "modelstore", "runtime": "python", "main": str(ROOT / "stacks")}
        (Path(tmp) / "Pulumi.yaml").write_text(yaml.safe_dump(project))
        (Path(tmp) / "Pulumi.bench.yaml").write_text(yaml.safe_dump(stack_config(n, driver_none)))
        start = time.process_time()
        plan = plan_directory(tmp, "bench")
        plan_cpu = time.process_time() - start
    distinct = {(c["token"], json.dumps(c["args"], sort_keys=True)) for c in plan.invokes}
    result = {"resources": len(plan.steps), "invokes": len(plan.invokes)}
    print(json.dumps(result | {"distinct": len(distinct), "plan_cpu": plan_cpu}))


def run_child(n: int, driver_none: bool) -> tuple[float, dict[str, Any]]:
    """Plan in a fresh process; return its CPU seconds (user + sys) and its JSON line."""
    cmd = [sys.executable, __file__, "--child", str(n)]
    if not driver_none:
        cmd.append("--no-driver-none")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"plan of {n} stores failed:\n{proc.stdout}{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,10,25,50", help="store counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="plans per size (median taken)")
    parser.add_argument("--no-driver-none", dest="driver_none", action="store_false")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        return child(args.child, args.driver_none)

    medians: dict[int, float] = {}
    plan_medians: dict[int, float] = {}
    print(
        f"{'N':>4} {'CPU s/plan':>11} {'CPU ms/store':>13} {'plan-call s':>12} "
        f"{'resources':>10} {'invokes':>8} {'distinct':>9}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        runs = [run_child(n, args.driver_none) for _ in range(args.repeat)]
        cpu = medians[n] = statistics.median(c for c, _ in runs)
        plan_cpu = plan_medians[n] = statistics.median(r["plan_cpu"] for _, r in runs)
        last = runs[-1][1]
        print(
            f"{n:>4} {cpu:>11.2f} {1000 * cpu / n:>13.0f} {plan_cpu:>12.2f} "
            f"{last['resources']:>10} {last['invokes']:>8} {last['distinct']:>9}",
            flush=True,
        )
    if 25 in medians and 50 in medians:
        ratio = medians[50] / medians[25]
        ok = "within" if ratio <= GROWTH_TARGET else "OVER"
        alone = plan_medians[50] / plan_medians[25]
        print(f"\ngrowth median(50)/median(25) = {ratio:.2f}x: {ok} the {GROWTH_TARGET}x target")
        print(f"(plan call alone, without interpreter start and imports: {alone:.2f}x)")
    if 50 in medians:
        ok = "under" if medians[50] < CPU_TARGET_S else "NOT under"
        print(f"50-store plan: {medians[50]:.2f} s CPU, {ok} the {CPU_TARGET_S:.0f} s target")


if __name__ == "__main__":
    main()
