"""The one fresh interpreter for what only a process of its own shows: the command's start and
exit, every stack and example planned through the CLI offline (tests/test_plan_engine.py checks
what it printed; the preview plans it wrote are every test's preview plans: conftest.py), the
cloud SDKs a stack imports (tests/test_extras.py) and the provider's schema under another hash
seed (tests/test_package.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A plan leaves no event loop open and no thread running. A loop left open is finalised by the
# garbage collector later, now and then after its self-pipe sockets, printing "Exception ignored
# in BaseEventLoop.__del__ ... ValueError: Invalid file descriptor: -1" after a successful plan
# (it did when the mock monitor's calls ran in worker threads, each with a loop of its own). A
# loop left open is also a ResourceWarning ("unclosed event loop"), which is what makes these
# tests certain rather than lucky: ResourceWarnings are shown (-W always::ResourceWarning), so
# one loop left open anywhere fails them, whether or not the collector happens to trip on it.


def _clean_run(*args: str) -> subprocess.CompletedProcess[str]:
    """Python with ResourceWarnings shown, offline: no cloud credentials in the environment
    and no home folder to find them in."""
    return subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": "/nonexistent",
            "PYTHONPATH": str(ROOT),
            "PYTHONHASHSEED": HASH_SEED,
        },
    )


# Run in a fresh interpreter: the command's start (what importing it loads, then a run as the
# command, no argv, that fails); every program through the CLI's main, in two rounds (stacks,
# then examples), each round followed by two plans that fail (bad input, a data source with no
# placeholder); then a collection, and the threads still running; the provider's schema; then
# the exit, with the heap frozen as the command leaves it.
MANY_PLANS = """
import gc, json, sys, pulumi_modelstore.program, pulumi_modelstore.cli
rounds = json.loads(sys.argv[1])
print(json.dumps(sorted(m for m in sys.modules
                        if m.endswith('._inputs') or m.startswith('pulumi_modelstore.'))))
sys.argv = ['modelstore', 'plan', '--compare', '/nonexistent/base.json']
print(json.dumps([pulumi_modelstore.cli.main(), gc.get_freeze_count() > 0]))

import contextlib, io, threading
from pulumi_modelstore.cli import main
from pulumi_modelstore.plan.engine import PlanError, plan_program

def bad_input():
    from pulumi_modelstore.aws import FsxLustreModelStore

    FsxLustreModelStore("llama", {"cluster_name": "c", "readers": ["inference"], "x": 1})

def no_placeholder():
    import pulumi_aws as aws

    aws.ec2.get_vpc(id="vpc-0abc")

SDKS = ("pulumi_aws", "pulumi_azure_native", "pulumi_gcp")
for round in rounds:
    for argv in round:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(argv) == 0, argv
        # The tree's first line, and the cloud SDKs imported so far.
        print(json.dumps([out.getvalue().splitlines()[0], [m for m in SDKS if m in sys.modules]]))
    for program in (bad_input, no_placeholder):
        try:
            plan_program(program)
        except PlanError:
            continue
        raise AssertionError(f"{program.__name__} planned")
gc.collect()
print(json.dumps([t.name for t in threading.enumerate() if t is not threading.main_thread()]))

# The provider's schema as the plugin answers GetSchema, under this process's hash seed.
import asyncio
from pulumi.provider.server import ProviderServicer
from pulumi.runtime.proto import provider_pb2
from pulumi_modelstore.provider import provider

servicer = ProviderServicer(provider(), [], engine_address="")
request = provider_pb2.GetSchemaRequest(version=0)
print(json.dumps(asyncio.run(servicer.GetSchema(request, None)).schema))
gc.freeze()  # then exit as the command does (cli.main): the collection above found the leaks
"""
HASH_SEED = "12345"
"""The CLI process's hash seed: another than the test process's (which Python draws at
random), so a set's order leaking into the provider's schema shows (tests/test_package.py)."""


@dataclass(frozen=True)
class CliProcess:
    rounds: list[list[list[str]]]
    """The ``modelstore`` argv of each plan, by round."""
    result: subprocess.CompletedProcess[str]
    previews: dict[str, Path]
    """Program id -> the preview plan (JSON) its run wrote (``--also json=...``)."""


# Planned first, in this order: a stack imports only the cloud SDKs of its backends (the first
# two none, aws-dev pulumi_aws alone), which the process prints after each plan.
FIRST = ("stacks/local", "stacks/onprem-nfs", "stacks/aws-dev")


def plan_every_program(programs: list[tuple[str, Path, str]], out: Path) -> CliProcess:
    """Every program (id, directory, stack) planned as a preview in one CLI process, the
    stacks (:data:`FIRST` first) then the examples: its tree to standard output, its JSON to
    ``out``."""
    previews = {pid: out / f"{i}.json" for i, (pid, _, _) in enumerate(programs)}
    programs = sorted(programs, key=lambda p: FIRST.index(p[0]) if p[0] in FIRST else len(FIRST))
    rounds = [
        [
            [
                *("plan", "--cwd", str(directory), "--stack", stack, "--format", "tree"),
                *("--also", f"json={previews[pid]}"),
            ]
            for pid, directory, stack in programs
            if pid.startswith(kind)
        ]
        for kind in ("stacks/", "examples/")
    ]
    assert sum(map(len, rounds)) == len(programs)
    return CliProcess(rounds, _clean_run("-c", MANY_PLANS, json.dumps(rounds)), previews)
