"""``modelstore plan --timeline``: ``pulumi up`` modelled over the plan's dependency graph
(``pulumi_modelstore/plan/timeline.py``), and every explicit dependency a component adds being
one of the documented kinds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.plan.engine import Plan
from pulumi_modelstore.plan.timeline import (
    CREATE_TIMES,
    ORDERING_KINDS,
    ORDERINGS,
    PVC,
    UNAWAITED_CLAIM,
    UNLISTED,
    timeline,
    to_json,
    to_text,
    undocumented_edges,
)
from tests.conftest import ROOT, STACKS
from tests.test_plan_engine import run_cli

STACK = "urn:pulumi:t::p::pulumi:pulumi:Stack::p-t"
PROVIDER = "urn:pulumi:t::p::pulumi:providers:aws::default"
RULE_TYPE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
FS_TYPE = "aws:fsx/lustreFileSystem:LustreFileSystem"
PV_TYPE = "kubernetes:core/v1:PersistentVolume"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
COMPONENT_TYPE = "modelstore:index:FsxLustreModelStore"


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:t::p::{type_}::{name}"


def state(
    type_: str,
    name: str,
    *,
    parent: str = STACK,
    depends_on: tuple[str, ...] = (),
    data: dict[str, list[str]] | None = None,
    custom: bool = True,
    inputs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A plan step as the engine records it: ``dependencies`` holds data and explicit edges."""
    data = data or {}
    return {
        "op": "create",
        "urn": urn(type_, name),
        "newState": {
            "urn": urn(type_, name),
            "type": type_,
            "custom": custom,
            "parent": parent,
            "inputs": inputs or {},
            "provider": f"{PROVIDER}::id" if custom else "",
            "dependencies": sorted({*depends_on, *(u for us in data.values() for u in us)}),
            "propertyDependencies": data,
        },
    }


def hand_plan() -> Plan:
    """A rule; a file system after it (explicit); a store component registered after the file
    system (its depends_on, which no child records); the component's PV and its claim (after
    the PV); a release; a PV whose data names the release."""
    rule = urn(RULE_TYPE, "rule")
    fs = urn(FS_TYPE, "fs")
    store = urn(COMPONENT_TYPE, "store")
    pv = urn(PV_TYPE, "pv")
    release = urn(RELEASE_TYPE, "driver")
    steps = [
        {"op": "create", "urn": STACK, "newState": state("pulumi:pulumi:Stack", "p-t")["newState"]},
        state("pulumi:providers:aws", "default", parent=""),
        state(RULE_TYPE, "rule"),
        state(FS_TYPE, "fs", depends_on=(rule,)),
        state(COMPONENT_TYPE, "store", depends_on=(fs,), custom=False),
        state(PV_TYPE, "pv", parent=store),
        state(PVC, "claim", parent=store, depends_on=(pv,)),
        state(RELEASE_TYPE, "driver"),
        state(PV_TYPE, "pv-after-driver", data={"spec": [release]}),
    ]
    steps[0]["newState"].update(urn=STACK, custom=False, parent="", provider="")
    steps[1]["newState"].update(urn=PROVIDER, provider="")
    steps[1]["urn"] = PROVIDER
    return Plan("p", "t", steps, {}, [], [], False)


def seconds(type_: str) -> int:
    return CREATE_TIMES[type_].seconds


def test_a_hand_built_graph_has_the_critical_path_the_engine_would_take():
    t = timeline(hand_plan())
    rule, fs, pv, claim = (seconds(RULE_TYPE), seconds(FS_TYPE), seconds(PV_TYPE), seconds(PVC))
    assert [(e.name, e.start, e.finish) for e in t.critical_path] == [
        ("rule", 0, rule),
        ("fs", rule, rule + fs),
        # The component registers once its depends_on is created; its children wait for it.
        ("store", rule + fs, rule + fs),
        ("pv", rule + fs, rule + fs + pv),
        ("claim", rule + fs + pv, rule + fs + pv + claim),
    ]
    assert [e.after.label() for e in t.critical_path[1:] if e.after] == [
        "depends_on (lnet-rules-first)",
        "depends_on (undocumented)",
        "parent",
        "depends_on (volume-before-claim)",
    ]
    assert t.total == rule + fs + pv + claim
    assert t.first_claim is not None and t.first_claim.name == "claim"
    driven = t.entries[urn(PV_TYPE, "pv-after-driver")]
    assert (driven.start, driven.after and driven.after.via) == (seconds(RELEASE_TYPE), "data")


def test_an_undocumented_edge_is_reported_and_left_out_of_the_documented_total():
    p = hand_plan()
    assert undocumented_edges(p) == [(urn(COMPONENT_TYPE, "store"), urn(FS_TYPE, "fs"))]
    documented = timeline(p, explicit="documented")
    # Without the store's edge its claim is ready long before the file system.
    assert documented.total == seconds(RULE_TYPE) + seconds(FS_TYPE) < timeline(p).total
    assert "Explicit dependencies of no documented kind" in to_text(timeline(p))


def test_a_claim_that_skips_the_await_is_not_the_first_usable():
    p = hand_plan()
    claim = next(s for s in p.steps if s["newState"]["type"] == PVC)["newState"]
    claim["inputs"] = {"metadata": {"annotations": {"pulumi.com/skipAwait": "true"}}}
    t = timeline(p)
    assert t.first_claim is None
    assert "First claim usable: none bound during pulumi up" in to_text(t)
    # pulumi up does not wait for it to bind: created in one request.
    entry = t.entries[claim["urn"]]
    assert entry.finish - entry.start == UNAWAITED_CLAIM.seconds < seconds(PVC)
    assert f"{PVC} (pulumi.com/skipAwait): 1 s" in to_text(t)


@pytest.mark.parametrize("stack", STACKS)
def test_each_stack_totals_the_same_over_data_and_the_documented_edges(filled_plans, stack):
    p = filled_plans[f"stacks/{stack}"]
    assert undocumented_edges(p) == []
    t = timeline(p)
    assert t.total == timeline(p, explicit="documented").total
    assert t.critical_path and t.critical_path[-1].finish == t.total
    for before, after in zip(t.critical_path, t.critical_path[1:], strict=False):
        assert after.after is not None and after.after.urn == before.urn
        assert after.start == before.finish


def test_every_type_planned_anywhere_has_a_create_time(filled_plans):
    unlisted = {
        e.type
        for p in filled_plans.values()
        for e in timeline(p).entries.values()
        if e.figure is UNLISTED
    }
    assert not unlisted, f"add to CREATE_TIMES: {sorted(unlisted)}"


def test_every_figure_names_a_source_or_says_judgement():
    for type_, figure in CREATE_TIMES.items():
        assert figure.seconds > 0 and figure.covers, type_
        assert figure.judgement or re.search(r"\w+\.\w+/|#\d+", figure.source), type_


def _tags(path: Path) -> set[str]:
    """The kinds ``order: <kind>[, <kind>...]`` tags name in ``path`` (comment lines joined)."""
    text = re.sub(r"\n\s*#?\s*", " ", path.read_text())
    kinds: set[str] = set()
    for found in re.findall(r"order: ([a-z]+(?:-[a-z]+)+(?:, [a-z]+(?:-[a-z]+)+)*)", text):
        kinds.update(found.split(", "))
    return kinds


def test_every_ordering_kind_is_tagged_where_it_is_made_and_every_tag_is_a_kind():
    sources = [*(ROOT / "pulumi_modelstore").rglob("*.py"), *(ROOT / "examples").glob("*/*.py")]
    tagged = {kind: path for path in sources for kind in _tags(path)}
    assert set(tagged) - set(ORDERING_KINDS) == set(), "tags of no kind in ORDERINGS"
    assert set(ORDERING_KINDS) - set(tagged) == set(), "kinds tagged nowhere"
    assert len(ORDERINGS) == len(ORDERING_KINDS)


def test_the_local_stack_timeline_prints_as_pinned(filled_plans):
    assert to_text(timeline(filled_plans["stacks/local"])) == LOCAL


def test_timeline_json_from_the_cli(capsys, filled_plans):
    code, out, _ = run_cli(
        capsys, "--cwd", str(ROOT), "--stack", "local", "--timeline", "--format", "json"
    )
    assert code == 0
    assert out == to_json(timeline(filled_plans["stacks/local"]))
    document = json.loads(out)
    # The seed Job after the claims, the digest read after it, the verification Jobs last.
    assert document["totalSeconds"] == 248
    assert document["firstClaim"]["urn"].endswith("::models-pvc-inference")
    assert document["createTimes"][PVC]["judgement"] is True


@pytest.mark.parametrize(
    ("args", "what"), [(("--format", "yaml"), "--format yaml"), (("--compare", "x.json"), "")]
)
def test_timeline_refuses_other_formats(capsys, tmp_path, args, what):
    if args[0] == "--compare":
        base = tmp_path / "base.json"
        base.write_text((ROOT / "tests/golden/stacks/local.json").read_text())
        args, what = ("--compare", str(base)), "--compare"
    code, out, err = run_cli(capsys, "--cwd", str(ROOT), "--stack", "local", "--timeline", *args)
    assert (code, out) == (1, "")
    assert err == f"error: --timeline prints tree or json, not {what}\n"


# The whole text, long lines included: what a reviewer reads.
LOCAL = """\
Deploy timeline: project modelstore, stack local (pulumi up modelled from an empty stack: typical create times, dependencies as the engine orders them)
Modelled total: 4:08 (248 s)
First claim usable: 0:07 (7 s), models-pvc-inference bound
Critical path (start  finish  resource  type  waited for):
    0:00    0:01  kubernetes-ns-models-loader  kubernetes:core/v1:Namespace  after parent
    0:01    0:02  models-pv-models-loader  kubernetes:core/v1:PersistentVolume  after depends_on (namespace-first)
    0:02    0:07  models-pvc-models-loader  kubernetes:core/v1:PersistentVolumeClaim  after depends_on (volume-before-claim)
    0:07    2:07  models-seed-7ae557604adf  kubernetes:batch/v1:Job  after depends_on (job-after-its-mount)
    2:07    2:08  models-manifest-7ae557604adf  kubernetes:core/v1:ConfigMap  after depends_on (digest-after-seed)
    2:08    4:08  models-verify-inference-7ae557604adf  kubernetes:batch/v1:Job  after data
Create times (what each covers; its source, or judgement where none):
  kubernetes:batch/v1:Job: 120 s, the Job running to completion (the provider waits for it); judgement: pulumi-kubernetes waits for a Job to complete (pulumi/pulumi-kubernetes#633, the Job awaiter); how long depends on the model and the storage
  kubernetes:core/v1:ConfigMap: 1 s, one API server request: pulumi-kubernetes awaits no readiness for this kind; judgement: a create request to the API server takes well under a second; the provider's await logic covers Deployments, StatefulSets, Jobs, Services, Pods and claims only (pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)
  kubernetes:core/v1:ConfigMap (read): 1 s, a read of an existing resource; judgement: one provider read call
  kubernetes:core/v1:Namespace: 1 s, one API server request: pulumi-kubernetes awaits no readiness for this kind; judgement: a create request to the API server takes well under a second; the provider's await logic covers Deployments, StatefulSets, Jobs, Services, Pods and claims only (pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)
  kubernetes:core/v1:PersistentVolume: 1 s, one API server request: pulumi-kubernetes awaits no readiness for this kind; judgement: a create request to the API server takes well under a second; the provider's await logic covers Deployments, StatefulSets, Jobs, Services, Pods and claims only (pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)
  kubernetes:core/v1:PersistentVolumeClaim: 5 s, the claim created and bound (the provider waits for Bound); judgement: pulumi-kubernetes awaits a claim's Bound phase (pulumi/pulumi-kubernetes#895); the PV controller binds a pre-bound pair on its next pass
  kubernetes:core/v1:ServiceAccount: 1 s, one API server request: pulumi-kubernetes awaits no readiness for this kind; judgement: a create request to the API server takes well under a second; the provider's await logic covers Deployments, StatefulSets, Jobs, Services, Pods and claims only (pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)
  kubernetes:rbac.authorization.k8s.io/v1:Role: 1 s, one API server request: pulumi-kubernetes awaits no readiness for this kind; judgement: a create request to the API server takes well under a second; the provider's await logic covers Deployments, StatefulSets, Jobs, Services, Pods and claims only (pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)
  kubernetes:rbac.authorization.k8s.io/v1:RoleBinding: 1 s, one API server request: pulumi-kubernetes awaits no readiness for this kind; judgement: a create request to the API server takes well under a second; the provider's await logic covers Deployments, StatefulSets, Jobs, Services, Pods and claims only (pulumi.com/blog/improving-kubernetes-management-with-pulumis-await-logic)
"""  # noqa: E501
