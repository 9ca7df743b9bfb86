"""Shared helpers: every test plans real library code on the SDK mock runtime."""

from __future__ import annotations

import gc
import json
import re
import subprocess
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.plan.compare import filled_outputs
from pulumi_modelstore.plan.engine import (
    Plan,
    PlanError,
    host_keeps_heap_frozen,
    plan_directory,
    plan_program,
)
from pulumi_modelstore.plan.placeholders import digest
from tests.cli_process import CliProcess, plan_every_program

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/Pulumi.yaml"))


def _stack_names(paths: Any) -> list[str]:
    return sorted(Path(p).name[len("Pulumi.") : -len(".yaml")] for p in paths)


def _shipped_stacks() -> list[str]:
    """The stacks the repository ships: the stack files git tracks (every one, outside a git
    checkout). A stack file a user adds to try the program (README, quick start) is planned
    (``USER_STACKS``) but has no golden plan, workflow matrix entry or README line to keep."""
    every = _stack_names((ROOT / "stacks").glob("Pulumi.*.yaml"))
    try:
        tracked = subprocess.run(
            ["git", "ls-files", "--", "stacks/Pulumi.*.yaml"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return every
    shipped = _stack_names(tracked)
    return [s for s in every if s in shipped] or every


STACKS = _shipped_stacks()
USER_STACKS = sorted(set(_stack_names((ROOT / "stacks").glob("Pulumi.*.yaml"))) - set(STACKS))
AWS_CONFIG = {"aws:region": "us-west-2"}
# The Kubernetes types every store's tests read.
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
RELEASE = "kubernetes:helm.sh/v3:Release"
# A value spelt as Python does, unquoted: what users read says true, false, null (quoted
# 'None' is a string value, e.g. Azure's publicAccess).
PYTHON_WORDS = re.compile(r"(?<![\w'\"])(True|False|None)(?![\w'\"])")

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
    host_keeps_heap_frozen()


@pytest.fixture(scope="session", autouse=True)
def _collect_before_the_session_ends() -> Any:
    """What the thresholds above left uncollected is collected while pytest still reports an
    unraisable exception or warning, as it was mid-session with Python's defaults. What is left
    is then frozen: pytest's own collections at its exit scan only what comes after."""
    yield
    gc.collect()
    gc.freeze()


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


def assert_refused(program: Callable[[], Any] | Path, message: str, **plan_args: Any) -> PlanError:
    """Plan ``program`` (a program function, planned by :func:`plan`, or a project directory,
    by ``plan_directory``; ``plan_args`` are their keywords) and check that it is refused with
    exactly ``message`` (one line per problem) before anything but the stack registered. The
    error is returned for a test that checks more of it."""
    with pytest.raises(PlanError) as err:
        if isinstance(program, Path):
            plan_directory(program, **plan_args)
        else:
            plan(program, **plan_args)
    assert str(err.value) == message
    assert not PYTHON_WORDS.search(message), "a refusal writes true, false, null as YAML does"
    registered = [urn.split("::")[2] for urn in err.value.registered]
    assert registered == ["pulumi:pulumi:Stack"], err.value.registered
    return err.value


def consumer_mounts(build: Callable[[], Any], **plan_args: Any) -> tuple[dict[str, Any], Plan]:
    """Plan the store ``build`` makes (``fill=True``, with ``plan_args``) and give its
    ``mount_for`` of every consumer namespace with the plan."""
    found: dict[str, Any] = {}

    def program() -> None:
        store = build()
        for ns, _ in store.common.consumers:
            found[ns] = store.mount_for(ns)

    return found, plan(program, fill=True, **plan_args)


def scope_facts(
    make_scope: Callable[[], Any], invokes: Mapping[str, Any] | None = None
) -> tuple[Any, Any, Plan]:
    """The facts a cluster scope gives its first store (``llama``) and a second one (``t5``),
    and the plan."""
    found: dict[str, Any] = {}

    def program() -> None:
        scope = make_scope()
        found["facts"] = scope.facts("llama")
        found["again"] = scope.facts("t5")

    p = plan(program, invokes=invokes)
    return found["facts"], found["again"], p


def by_namespace(p: Plan, type_: str) -> dict[str, dict[str, Any]]:
    """The states of ``type_`` by their namespace (a PV's: its claim's)."""

    def namespace(state: dict[str, Any]) -> str:
        inputs = state["inputs"]
        if type_ == PV:
            return inputs["spec"]["claimRef"]["namespace"]
        return inputs["metadata"]["namespace"]

    return {namespace(s): s for s in p.by_type(type_)}


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake AWS credentials and region (us-west-2) for moto, whose EC2 backends start without
    the public AMIs it otherwise loads for each region in every ``mock_aws()`` (no plan sends
    an image id; loading them was a tenth of a second per replay)."""
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-west-2",
        "MOTO_EC2_LOAD_DEFAULT_AMIS": "false",
    }.items():
        monkeypatch.setenv(key, value)


def bad_inputs(rows: list[tuple[Any, str]]) -> pytest.MarkDecorator:
    """Parametrize a test over a table of (args, exact message) rows, each row's id its index
    and the field its message names."""
    return pytest.mark.parametrize(
        ("args", "message"), rows, ids=[f"{i}-{m.split()[1]}" for i, (_, m) in enumerate(rows)]
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


@pytest.fixture(scope="session")
def cli_process(tmp_path_factory: pytest.TempPathFactory) -> CliProcess:
    """Every stack and example planned as a preview in one ``modelstore plan`` process (what it
    printed: test_plan_engine.py)."""
    return plan_every_program(all_programs(), tmp_path_factory.mktemp("cli-previews"))


@pytest.fixture(scope="session")
def preview_plans(cli_process: CliProcess) -> Callable[[str], Plan]:
    """The plan of a stack or example (by its id in :func:`all_programs`) as a preview (no
    --fill-outputs): the JSON the one CLI process wrote for it, read the first time a test asks
    for it and shared."""

    @cache
    def preview(pid: str) -> Plan:
        return plan_of_json(cli_process.previews[pid].read_text())

    return preview


def plan_of_json(text: str) -> Plan:
    """The plan a ``--format json`` plan describes (secret config values stay masked)."""
    doc = json.loads(text)
    return Plan(
        project=doc["project"],
        stack=doc["stack"],
        steps=doc["steps"],
        outputs=doc["outputs"],
        invokes=doc["invokes"],
        diagnostics=doc["diagnostics"],
        fill_outputs=filled_outputs(doc),
        config=doc["config"],
    )
