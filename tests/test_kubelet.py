"""Every stack's and example's seed and verify Jobs, run as a kubelet would run them
(``tests/kubelet.py``): the pod's user, groups and capabilities, each volume with the owner
and mode its driver gives, Secrets with their ``defaultMode``, read-only mounts read-only,
against the stub Hub and Kubernetes API. A Job that could not read its token, write its store
or read what it verifies fails here as it would on a cluster.

A defect still open is a strict xfail naming it: fixed, the case passes and the xfail must go.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import all_programs
from tests.kubelet import Run, run_model_jobs, unavailable

PROGRAMS = [pid for pid, _, _ in all_programs()]
# Programs that run no seed or verify Job: a store filled natively with nothing to verify by a
# Job (aws-prod's FSx import, Hyperdisk ML's populator, which runs a manifest Job instead) or no
# model section.
NO_MODEL_JOBS = {"stacks/aws-prod", "stacks/gke-hyperdisk", "examples/app-vllm/dev"}

# Defects still open, by program (a strict xfail naming each): none. A new one goes here with
# its reason until its fix lands.
OPEN: dict[str, str] = {}


_RUNS: dict[str, list[Run]] = {}


def model_runs(filled_plans, pid: str, tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    """The program's seed and verify Jobs run once on a node of their own, shared by the
    tests below."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: the harness must run)", pytrace=False)
        pytest.skip(reason)
    if pid not in _RUNS:
        where: Path = tmp_path_factory.mktemp("node")
        _RUNS[pid] = run_model_jobs(filled_plans[pid], where)
    return _RUNS[pid]


def marked(table: dict[str, str]) -> list:
    return [
        pytest.param(pid, marks=pytest.mark.xfail(strict=True, reason=table[pid]))
        if pid in table
        else pid
        for pid in PROGRAMS
    ]


@pytest.mark.parametrize("pid", marked(OPEN))
def test_seed_and_verify_jobs_run_as_a_kubelet_runs_them(filled_plans, pid, tmp_path_factory):
    runs = model_runs(filled_plans, pid, tmp_path_factory)
    if pid in NO_MODEL_JOBS:
        assert runs == [], f"{pid} runs model Jobs: take it out of NO_MODEL_JOBS"
        return
    failed = [run.line() for run in runs if run.returncode != 0]
    assert not failed, "\n".join(failed)
    containers = {(run.job.split("/")[1].split("-")[-2], run.container) for run in runs}
    assert ("seed", "seed") in containers, runs
    assert ("verify", "verify") in containers, runs
    # A seed run again finds its revision published and leaves it as it is.
    again = [run for run in runs if run.container == "seed"][-1]
    assert "already seeded, nothing to do" in again.stdout, again.line()


@pytest.mark.parametrize("pid", marked(OPEN))
def test_a_job_mounts_a_service_account_token_only_where_it_reads_it(
    filled_plans, pid, tmp_path_factory
):
    """``automountServiceAccountToken``: a token in a pod that never uses it is a credential
    for whoever gets into the pod. The seed that records its manifest's digest reads it;
    nothing else does."""
    runs = model_runs(filled_plans, pid, tmp_path_factory)
    if pid in NO_MODEL_JOBS:
        return
    main = [run for run in runs if run.container in ("seed", "verify")]
    assert {run.container for run in main} == {"seed", "verify"}, runs
    assert all(run.returncode == 0 for run in main), [run.line() for run in main]
    unused = [run.job for run in main if run.token_mounted and not run.token_read]
    assert not unused, f"mounted, never read: {unused}"


class _Objects:
    """A plan's objects, as much of a plan as the node reads."""

    def __init__(self, *objects: dict) -> None:
        self.objects = list(objects)

    def kubernetes_objects(self) -> list[dict]:
        return self.objects


def _canary_job(script: str, security: dict, pod_security: dict, read_only: bool) -> dict:
    return {
        "kind": "Job",
        "metadata": {"name": "canary", "namespace": "ns", "labels": {}},
        "spec": {
            "template": {
                "metadata": {"labels": {"modelstore.pulumi.com/role": "seed"}},
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security,
                    "containers": [
                        {
                            "name": "c",
                            "command": ["python", "-I", "-S", "-c", script],
                            "securityContext": security,
                            "volumeMounts": [
                                {"name": "store", "mountPath": "/store", "readOnly": read_only}
                            ],
                        }
                    ],
                    "volumes": [{"name": "store", "persistentVolumeClaim": {"claimName": "c"}}],
                },
            }
        },
    }


HOSTPATH_PV = {
    "kind": "PersistentVolume",
    "metadata": {"name": "pv", "labels": {}},
    "spec": {
        "claimRef": {"namespace": "ns", "name": "c"},
        "hostPath": {"path": "/var/lib/x", "type": "DirectoryOrCreate"},
    },
}
NON_ROOT = {"runAsUser": 65532, "runAsGroup": 65532, "capabilities": {"drop": ["ALL"]}}
ROOT_CHOWN_ONLY = {"runAsUser": 0, "capabilities": {"drop": ["ALL"], "add": ["CHOWN"]}}
WRITE = "open('/store/f', 'w').write('x')"
CANARIES = [
    # (what, container securityContext, pod securityContext, readOnly, script, stderr has)
    ("non-root on a hostPath root", NON_ROOT, {}, False, WRITE, "PermissionError"),
    ("root on a read-only mount", {"runAsUser": 0}, {}, True, WRITE, "Read-only file system"),
    (
        "root without DAC_OVERRIDE in a 0700 folder",
        ROOT_CHOWN_ONLY,
        {},
        False,
        "import os; os.mkdir('/store/d', 0o700); os.chown('/store/d', 1, 1); "
        "open('/store/d/f', 'w')",
        "PermissionError",
    ),
    (
        "the pod's identity",
        NON_ROOT,
        {"fsGroup": 4242},
        True,
        "import os; assert (os.getuid(), os.getgid()) == (65532, 65532), os.getuid(); "
        "assert set(os.getgroups()) == {65532, 4242}, os.getgroups(); raise SystemExit(3)",
        "",
    ),
]


@pytest.mark.parametrize(
    ("security", "pod_security", "read_only", "script", "error"),
    [c[1:] for c in CANARIES],
    ids=[c[0] for c in CANARIES],
)
def test_the_harness_refuses_what_a_kubelet_refuses(
    tmp_path, security, pod_security, read_only, script, error
):
    """Canaries: the node does not let a container do what its pod's identity, capabilities
    and mounts forbid, and gives it exactly the uid and groups the pod says."""
    from tests.kubelet import Node, World

    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    job = _canary_job(script, security, pod_security, read_only)
    node = Node(_Objects(job, HOSTPATH_PV), World("http://127.0.0.1:9", 9, ""), tmp_path)  # type: ignore[arg-type]
    (run,) = node.run_job(job)
    assert run.returncode == (3 if not error else 1), run.stderr
    assert error in run.stderr


def test_a_pinned_digest_stands_for_the_manifest_the_stub_model_publishes(filled_plans, tmp_path):
    """A program that pins ``manifest_sha256`` (none does today) runs too: its seed once
    unpinned, then as planned with the pin standing for what that run published, and every
    verify Job checking it."""
    import copy

    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    pin = "sha256:" + "0" * 64
    objects = copy.deepcopy(filled_plans["stacks/aws-efs"].kubernetes_objects())
    for job in (o for o in objects if o["kind"] == "Job"):
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        if "--record-configmap" in args:  # a pinned seed records nothing
            i = args.index("--record-configmap")
            del args[i : i + 2]
        if "--manifest-sha256" in args:
            args[args.index("--manifest-sha256") + 1] = pin
        else:
            args += ["--manifest-sha256", pin]
    runs = run_model_jobs(_Objects(*objects), tmp_path)  # type: ignore[arg-type]
    assert [run.returncode for run in runs] == [0] * len(runs), [run.line() for run in runs]
    seeds = [run for run in runs if run.container == "seed"]
    published = seeds[0].stdout.split("manifest ")[1].split()[0].rstrip(",")
    # The seed as planned, pinned: nothing to do, that manifest is there. Each verify Job
    # refuses any manifest but its pin's, so passing they checked the published one.
    assert "already seeded, nothing to do" in seeds[1].stdout, seeds[1].line()
    assert published in seeds[1].stdout
    assert [run.container for run in runs].count("verify") == 2, runs
