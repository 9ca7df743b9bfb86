"""Each cloud is an extra: the core installs without any cloud SDK, a room imported without its
extra fails in one line naming it, and the config program still plans the other backends."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pulumi_modelstore.extras import CLOUD_ROOMS
from pulumi_modelstore.program import BACKENDS
from tests.cli_process import FIRST

ROOT = Path(__file__).resolve().parent.parent


def run_without(sdk: str, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter where importing ``sdk`` fails as if not installed."""
    prelude = f"import sys; sys.modules[{sdk!r}] = None\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=ROOT
    )


def test_a_room_without_its_extra_fails_in_one_line_naming_the_extra():
    """Each room imported where no cloud SDK is installed (the core alone), in one
    interpreter: each fails with the one line naming its own extra."""
    rooms = sorted(CLOUD_ROOMS)
    code = (
        "import sys\n"
        f"for sdk in {[CLOUD_ROOMS[r].module for r in rooms]!r}:\n"
        "    sys.modules[sdk] = None\n"
        f"for room in {rooms!r}:\n"
        "    try:\n"
        "        __import__(f'pulumi_modelstore.{room}')\n"
        "    except Exception as e:\n"
        "        print(f'{type(e).__module__}.{type(e).__name__}: {e}')\n"
        "    else:\n"
        "        print(f'{room} imported')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.splitlines() == [
        f"pulumi_modelstore.extras.MissingExtraError: pulumi_modelstore.{room} needs "
        f"{CLOUD_ROOMS[room].distribution}, which is not installed: "
        f"pip install 'pulumi-modelstore[{room}]'"
        for room in rooms
    ]


def test_the_config_program_plans_other_backends_and_names_the_missing_extra():
    code = (
        "from pulumi_modelstore.program import BACKENDS, build_stores\n"
        "print(' '.join(BACKENDS))\n"
        "try:\n"
        "    build_stores({'llama': {'backend': 'efs', 'cluster_name': 'prod'}})\n"
        "except Exception as e:\n"
        "    print(e)\n"
    )
    out = run_without("pulumi_aws", code)
    assert out.returncode == 0, out.stderr
    backends, message = out.stdout.strip().splitlines()
    assert set(backends.split()) == set(BACKENDS) - set(CLOUD_ROOMS["aws"].backends)
    assert message == (
        "llama: backend must be a backend whose cloud SDK is installed "
        "(pip install 'pulumi-modelstore[aws]'), got 'efs'"
    )


@pytest.mark.parametrize("room", sorted(CLOUD_ROOMS))
def test_each_rooms_backends_are_the_ones_its_modules_register(room):
    registered = {
        name
        for name, cls in BACKENDS.items()
        if cls.__module__.startswith(f"pulumi_modelstore.{room}.")
    }
    assert registered == set(CLOUD_ROOMS[room].backends)


def test_the_core_installs_no_cloud_sdk_and_each_extra_installs_its_own():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    for spec in CLOUD_ROOMS.values():
        assert spec.distribution not in core
        assert [d.split(">")[0] for d in extras[spec.extra]] == [spec.distribution]
    assert extras["all"] == ["pulumi-modelstore[aws,gcp,azure]"]
    # The tests run every room and the CrossGuard pack's wrapper (policy/).
    assert "pulumi-modelstore[all,policy]" in extras["test"]
    assert [d.split(">")[0] for d in extras["policy"]] == ["pulumi-policy"]


@pytest.mark.parametrize("room", sorted(CLOUD_ROOMS))
def test_each_rooms_cluster_kinds_are_the_ones_its_modules_register(room):
    from pulumi_modelstore.cluster import ClusterScope

    registered = {
        kind
        for kind, cls in ClusterScope.kinds().items()
        if cls.__module__.startswith(f"pulumi_modelstore.{room}.")
    }
    assert registered == set(CLOUD_ROOMS[room].kinds)


def test_the_config_programs_kinds_are_the_registered_scopes():
    from pulumi_modelstore import config_clusters as cc
    from pulumi_modelstore.cluster import ClusterScope

    assert tuple(sorted(ClusterScope.kinds())) == cc.KINDS
    for kind in cc.KINDS:
        assert cc.scope_class(kind).kind == kind


def test_a_backend_serves_the_kind_of_the_scope_its_class_joins():
    from pulumi_modelstore import config_clusters as cc
    from pulumi_modelstore.program import cluster_kinds

    served = {name: cluster_kinds(cls) for name, cls in BACKENDS.items()}
    for spec in CLOUD_ROOMS.values():
        for backend in spec.backends:
            # A room's store joins its cloud's clusters, or any (the EBS cache: no cluster fact).
            any_cluster = BACKENDS[backend].cluster_type is None
            assert served[backend] == (cc.KINDS if any_cluster else spec.kinds), backend
    assert served["nfs"] == served["local"] == served["ebs-snapshot"] == cc.KINDS


def test_the_backend_rooms_table_is_the_registry():
    """``program.BACKEND_ROOMS`` (what the config program imports for a backend) names every
    registered backend of the package and the room that registers it."""
    from pulumi_modelstore.program import BACKEND_ROOMS
    from pulumi_modelstore.store import ModelStore

    for room in ("aws", "azure", "gcp", "local", "nfs"):
        importlib.import_module(f"pulumi_modelstore.{room}")
    registered = {
        name: cls.__module__.split(".")[1]
        for name, cls in ModelStore.backends().items()
        if cls.__module__.startswith("pulumi_modelstore.")
    }
    assert registered == BACKEND_ROOMS


def test_a_stack_imports_only_the_cloud_sdks_of_its_backends(cli_process):
    """The one CLI process plans local, onprem-nfs and aws-dev first (tests/cli_process.py),
    printing the cloud SDKs imported after each."""
    calls = [argv for round in cli_process.rounds for argv in round][: len(FIRST)]
    printed = cli_process.result.stdout.splitlines()[2 : 2 + len(FIRST)]
    assert [argv[4] for argv in calls] == [pid.split("/")[1] for pid in FIRST]
    assert [json.loads(line)[1] for line in printed] == [[], [], ["pulumi_aws"]]


def test_a_stack_of_a_cloud_whose_extra_is_missing_says_so_first_and_only():
    """With no cloud SDK installed, each shipped stack of a cloud fails in exactly one line per
    missing extra (not with its cluster's and stores' fields read as unknown first); the local
    and NFS stacks plan as before. One interpreter plans every stack."""
    from tests.conftest import STACKS

    code = (
        "import contextlib, io, sys\n"
        f"for sdk in {[spec.module for spec in CLOUD_ROOMS.values()]!r}:\n"
        "    sys.modules[sdk] = None\n"
        "from pulumi_modelstore.cli import main\n"
        f"for stack in {STACKS!r}:\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):\n"
        "        code = main(['plan', '--stack', stack])\n"
        "    lines = [line for line in err.getvalue().splitlines() if line.startswith('error:')]\n"
        "    print(json.dumps([stack, code, lines]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    results = {
        stack: (code, lines) for stack, code, lines in map(json.loads, out.stdout.split("\n")[:-1])
    }
    assert sorted(results) == STACKS
    for stack, (code, lines) in results.items():
        config = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
        rooms = [
            room
            for room, spec in CLOUD_ROOMS.items()
            if any(f"backend: {b}" in config for b in spec.backends)
        ]
        if not rooms:
            assert (code, lines) == (0, []), stack
            continue
        assert code != 0, stack
        assert len(lines) == len(rooms), (stack, lines)
        for room, line in zip(sorted(rooms), lines, strict=True):
            assert "whose cloud SDK is installed" in line and f"[{room}]'" in line, (stack, line)
