"""Shared helpers: every test plans real library code on the SDK mock runtime."""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.plan.engine import Plan, plan_directory, plan_program
from pulumi_modelstore.plan.placeholders import digest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/Pulumi.yaml"))
STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
)
AWS_CONFIG = {"aws:region": "us-west-2"}

# Fewer garbage collections over the suite's heap (every cloud SDK imported, thousands of plans'
# Outputs): full collections were a quarter of the suite's CPU, and no test's result depends on
# when the collector runs (those that need a collection call gc.collect()). The plan engine tunes
# the collector itself while a plan runs (plan/engine.py) and restores these afterwards.
gc.set_threshold(5_000, 20, 100)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze the heap as collection leaves it (every module imported): no collection scans
    it again; what the tests allocate is collected as usual."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def _collect_before_the_session_ends() -> Any:
    """What the thresholds above left uncollected is collected while pytest still reports an
    unraisable exception or warning, as it was mid-session with Python's defaults."""
    yield
    gc.collect()


CLUSTER = "prod-eks"
# What the placeholder getCluster answers for CLUSTER.
CLUSTER_SG = f"sg-{digest('cluster-sg', CLUSTER)}"
CLUSTER_SUBNETS = sorted(f"subnet-{digest('subnet', CLUSTER, str(i))}" for i in range(3))


def plan(
    build: Callable[[], Any],
    *,
    fill: bool = False,
    config: Mapping[str, str] | None = None,
    invokes: Mapping[str, Any] | None = None,
) -> Plan:
    return plan_program(
        build,
        config={**AWS_CONFIG, **(config or {})},
        fill_outputs=fill,
        invoke_overrides=invokes,
    )


def all_programs() -> list[tuple[str, Path, str]]:
    """(id, directory, stack) for every stack in stacks/ and every example."""
    programs = [(f"stacks/{s}", ROOT, s) for s in STACKS]
    for example in EXAMPLES:
        for cfg in sorted(example.glob("Pulumi.*.yaml")):
            stack = cfg.name[len("Pulumi.") : -len(".yaml")]
            programs.append((f"examples/{example.name}/{stack}", example, stack))
    return programs


@pytest.fixture(scope="session")
def filled_plans() -> dict[str, Plan]:
    """Every stack and example planned once with --fill-outputs, shared by the schema and moto
    tests."""
    return {pid: plan_directory(d, s, fill_outputs=True) for pid, d, s in all_programs()}
