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

    python scripts/bench_plan.py [--sizes 1,10,25,50] [--repeat 3] [--compare-gc]

``--startup`` instead measures the CPU of planning the ``local`` stack with the CLI against
``python -c "import pulumi"`` (target: at most 3x), each the median of ``--repeat`` runs.

``--compare-gc`` plans each size also with the garbage collector as Python sets it
(``MODELSTORE_PLAN_GC=default``, which only this benchmark sets) and prints the ratio of the
two, measured in the same run.

It plans the checkout it sits in, so a copy in an older checkout measures that code the same
way (there, a second store of one backend on one cluster says ``driver: none``, as that code
needed).
"""

from __future__ import annotations

import argparse
import json
import os
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
STARTUP_TARGET = 3.0


AWS_BACKENDS = ("efs", "fsx-lustre", "mountpoint-s3")
BACKENDS = (*AWS_BACKENDS, "local", "nfs")
"""The backends the benchmark knows how to configure (``--backends`` picks among them)."""


def store_specs(
    n: int, chosen: tuple[str, ...] = BACKENDS
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(store name, backend, cluster, args) for ``n`` stores of the ``chosen`` backends, each
    with its own claim name and reader namespace."""
    from pulumi_modelstore import program

    scoped = hasattr(program, "NameBook")  # the cluster scope installs each driver once
    backends, installs, specs = sorted(chosen), set(), []
    for i in range(n):
        backend = backends[i % len(backends)]
        aws = backend in AWS_BACKENDS
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


def child(n: int, chosen: tuple[str, ...]) -> None:
    """Plan an ``n``-store program once and print one JSON line of measurements."""
    import pulumi
    import pulumi_kubernetes as k8s

    from pulumi_modelstore import program
    from pulumi_modelstore.plan.engine import plan_program

    specs = store_specs(n, chosen)
    # Only the rooms of the chosen backends are imported, as the config program does.
    lookup = getattr(program, "backend_class", None) or program.BACKENDS.get

    def build() -> None:
        providers: dict[str, Any] = {}
        for name, backend, cluster, args in specs:
            if cluster not in providers:
                providers[cluster] = k8s.Provider(cluster, context=cluster)
            opts = pulumi.ResourceOptions(providers={"kubernetes": providers[cluster]})
            lookup(backend)(name, args, opts)

    start = time.process_time()
    plan = plan_program(build, config={"aws:region": "us-west-2"})
    plan_cpu = time.process_time() - start
    distinct = {(c["token"], json.dumps(c["args"], sort_keys=True)) for c in plan.invokes}
    result = {"resources": len(plan.steps), "invokes": len(plan.invokes)}
    print(json.dumps(result | {"distinct": len(distinct), "plan_cpu": plan_cpu}))


def run_child(
    n: int, chosen: tuple[str, ...], default_gc: bool = False
) -> tuple[float, dict[str, Any]]:
    """Plan in a fresh process; return its CPU seconds (user + sys) and its JSON line.
    ``default_gc``: with the collector as Python sets it (the engine's tuning off)."""
    cmd = [sys.executable, __file__, "--child", str(n), "--backends", ",".join(chosen)]
    env = dict(os.environ)
    env.pop("MODELSTORE_PLAN_GC", None)
    if default_gc:
        env["MODELSTORE_PLAN_GC"] = "default"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"plan of {n} stores failed:\n{proc.stdout}{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(proc.stdout.strip().splitlines()[-1])


def cpu_of(cmd: list[str]) -> float:
    """The CPU seconds (user + sys) of running ``cmd`` in this checkout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup(repeat: int) -> None:
    """The local stack's plan against importing pulumi, alternated so both see the same load."""
    plan = [sys.executable, "-m", "pulumi_modelstore.cli", "plan", "--stack", "local"]
    plan += ["--out", "/dev/null"]
    bare = [sys.executable, "-c", "import pulumi"]
    planned, imported = [], []
    for _ in range(repeat):
        planned.append(cpu_of(plan))
        imported.append(cpu_of(bare))
    p, i = statistics.median(planned), statistics.median(imported)
    ok = "within" if p / i <= STARTUP_TARGET else "OVER"
    print(f"local plan {p:.2f} s CPU, import pulumi {i:.2f} s CPU: {p / i:.2f}x, {ok} the ", end="")
    print(f"{STARTUP_TARGET:.0f}x target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,10,25,50", help="store counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="plans per size (median taken)")
    parser.add_argument(
        "--backends", default=",".join(BACKENDS), help=f"among {', '.join(BACKENDS)}"
    )
    parser.add_argument(
        "--compare-gc", action="store_true", help="also plan with Python's default collector"
    )
    parser.add_argument(
        "--startup", action="store_true", help="the local stack's plan vs importing pulumi"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    chosen = tuple(args.backends.split(","))
    if args.child is not None:
        return child(args.child, chosen)
    if args.startup:
        return startup(args.repeat)

    medians: dict[int, float] = {}
    plan_medians: dict[int, float] = {}
    print(
        f"{'N':>4} {'CPU s/plan':>11} {'CPU ms/store':>13} {'plan-call s':>12} "
        f"{'resources':>10} {'invokes':>8} {'distinct':>9}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        runs = [run_child(n, chosen) for _ in range(args.repeat)]
        cpu = medians[n] = statistics.median(c for c, _ in runs)
        plan_cpu = plan_medians[n] = statistics.median(r["plan_cpu"] for _, r in runs)
        last = runs[-1][1]
        print(
            f"{n:>4} {cpu:>11.2f} {1000 * cpu / n:>13.0f} {plan_cpu:>12.2f} "
            f"{last['resources']:>10} {last['invokes']:>8} {last['distinct']:>9}",
            flush=True,
        )
        if args.compare_gc:
            plain = [run_child(n, chosen, default_gc=True) for _ in range(args.repeat)]
            plain_cpu = statistics.median(c for c, _ in plain)
            plain_call = statistics.median(r["plan_cpu"] for _, r in plain)
            same = plain[-1][1]["resources"] == last["resources"]
            print(
                f"     default gc: {plain_cpu:.2f} s/plan, plan call {plain_call:.2f} s; tuned "
                f"costs {cpu / plain_cpu:.2f}x of it (plan call {plan_cpu / plain_call:.2f}x)"
                f"{'' if same else ' (RESOURCE COUNTS DIFFER)'}",
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
