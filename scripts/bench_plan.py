"""Benchmark: the CPU cost of planning N model stores as N grows.

For each size N (default 1, 10, 25, 50) it builds a program of N model stores, mixed over every
backend in ``pulumi_modelstore.program.BACKENDS`` and spread over three EKS clusters
(``bench-eks-0..2``, for the AWS backends) and one on-prem cluster (the others), each cluster
with a Kubernetes provider of its own, and plans it offline with the repo's plan engine
``--repeat`` times, each time in a fresh child process so no Pulumi SDK state carries over.
It measures the child's CPU seconds (user + sys, whole process: interpreter start, imports and
the plan) and prints, per N: the median CPU s per plan, CPU ms per store, the CPU of the plan
call alone, the preview steps (registered resources, the stack and default providers), and
the invokes (data-source lookups) made, all and distinct.

Targets: planning 50 stores costs at most 2.2x planning 25 (growth stays linear), and the
50-store plan takes under 8 s CPU on 2 cores.

    python scripts/bench_plan.py [--sizes 1,10,25,50] [--repeat 3]

It plans the checkout it sits in, so a copy in an older checkout measures that code the same
way (there, a second store of one backend on one cluster says ``driver: none``, as that code
needed).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # plan this checkout, not whatever pulumi_modelstore is installed
CLUSTERS = 3
# Backend fields beyond the consumers and the cluster; a new backend needing more adds them here.
EXTRA_FIELDS: dict[str, dict[str, Any]] = {
    "local": {"capacity_gib": 10},
    "nfs": {"server": "nas01.example.internal", "share": "/exports/models"},
}
GROWTH_TARGET, CPU_TARGET_S = 2.2, 8.0


def store_specs(n: int) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(store name, backend, cluster, args) for ``n`` stores, each with its own claim name and
    reader namespace."""
    from pulumi_modelstore import program

    scoped = hasattr(program, "NameBook")  # the cluster scope installs each driver once
    backends, installs, specs = sorted(program.BACKENDS), set(), []
    for i in range(n):
        backend = backends[i % len(backends)]
        aws = backend in ("fsx-lustre", "efs", "mountpoint-s3")
        cluster = f"bench-eks-{i % CLUSTERS}" if aws else "onprem"
        args: dict[str, Any] = {"claim_name": f"m{i}", "readers": [f"inference-{i}"]}
        if aws:
            args["cluster_name"] = cluster
            if not scoped and (cluster, backend) in installs:
                args["driver"] = "none"
            installs.add((cluster, backend))
        elif backend != "local" or scoped:
            args["cluster_name"] = cluster
        specs.append((f"model-{i}", backend, cluster, args | EXTRA_FIELDS.get(backend, {})))
    return specs


def child(n: int) -> None:
    """Plan an ``n``-store program once and print one JSON line of measurements."""
    import pulumi
    import pulumi_kubernetes as k8s

    from pulumi_modelstore import program
    from pulumi_modelstore.plan.engine import plan_program

    specs = store_specs(n)

    def build() -> None:
        providers: dict[str, Any] = {}
        for name, backend, cluster, args in specs:
            if cluster not in providers:
                providers[cluster] = k8s.Provider(cluster, context=cluster)
            opts = pulumi.ResourceOptions(providers={"kubernetes": providers[cluster]})
            program.BACKENDS[backend](name, args, opts)

    start = time.process_time()
    plan = plan_program(build, config={"aws:region": "us-west-2"})
    plan_cpu = time.process_time() - start
    distinct = {(c["token"], json.dumps(c["args"], sort_keys=True)) for c in plan.invokes}
    result = {"resources": len(plan.steps), "invokes": len(plan.invokes)}
    print(json.dumps(result | {"distinct": len(distinct), "plan_cpu": plan_cpu}))


def run_child(n: int) -> tuple[float, dict[str, Any]]:
    """Plan in a fresh process; return its CPU seconds (user + sys) and its JSON line."""
    cmd = [sys.executable, __file__, "--child", str(n)]
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
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        return child(args.child)

    medians: dict[int, float] = {}
    plan_medians: dict[int, float] = {}
    print(
        f"{'N':>4} {'CPU s/plan':>11} {'CPU ms/store':>13} {'plan-call s':>12} "
        f"{'resources':>10} {'invokes':>8} {'distinct':>9}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        runs = [run_child(n) for _ in range(args.repeat)]
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
