"""Every stack in stacks/ and every program in examples/ plans, and every Kubernetes object the
plans would create validates strictly (no unknown fields, enums included) against the
Kubernetes API's OpenAPI v3 documents of the oldest and the newest supported minor, custom
resources against their CRDs (tests/validators/kube_schema.py); a kind with no schema fails."""

from __future__ import annotations

import pytest

from pulumi_modelstore.plan.engine import UNKNOWN, plan_directory
from tests.conftest import EXAMPLES, STACKS, all_programs
from tests.validators import gke_crds
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

PROGRAMS = all_programs()


def test_there_is_something_to_plan():
    assert {"local", "aws-prod"} <= set(STACKS)
    assert {e.name for e in EXAMPLES} >= {
        "fsx-vllm",
        "fsx-kserve",
        "local-kind",
        "gke-gcsfuse-kserve",
        "local-kind-seeded",
        "platform-stores",
        "app-vllm",
    }


@pytest.mark.parametrize(("pid", "directory", "stack"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_plans_as_a_preview(preview_plans, pid, directory, stack):
    plan = preview_plans(pid)
    custom = [s for s in plan.states() if s["custom"] and not s["type"].startswith("pulumi:")]
    assert custom, f"{pid} creates nothing"
    assert plan.outputs, f"{pid} exports nothing"
    # Everything is created; what is read is a platform stack's outputs (StackReference,
    # answered from its saved output file) and a seed Job's manifest digest, whose read waits
    # for the Job (its id unknown in a preview: kube/model_digest.py).
    assert all(
        step["op"] == "create"
        or (step["op"] == "read" and step["newState"]["type"] == "pulumi:pulumi:StackReference")
        or (
            step["op"] == "read"
            and step["newState"]["type"] == "kubernetes:core/v1:ConfigMap"
            and step["newState"]["id"] == UNKNOWN
        )
        for step in plan.steps
    )


def schema_errors(obj: dict, minor: str) -> list[str]:
    """What the API server of ``minor`` would refuse in ``obj``: GKE's custom resources, whose
    CRDs are not published, against their reference fields; everything else against its
    schema (raises for a kind with none)."""
    if (obj["apiVersion"], obj["kind"]) in gke_crds.KINDS:
        return gke_crds.errors(obj, minor)
    return validator(minor).errors(obj)


@pytest.mark.parametrize("minor", KUBERNETES_MINORS)
@pytest.mark.parametrize("pid", [p[0] for p in PROGRAMS])
def test_every_kubernetes_object_validates_strictly(filled_plans, pid, minor):
    objects = filled_plans[pid].kubernetes_objects()
    assert objects
    problems = []
    for obj in objects:
        assert UNKNOWN not in repr(obj), f"{obj['kind']} still has unknowns"
        name = "/".join(filter(None, (obj["metadata"].get("namespace"), obj["metadata"]["name"])))
        problems += [f"{obj['kind']} {name}: {p}" for p in schema_errors(obj, minor)]
    assert not problems, f"{pid} on Kubernetes {minor}:\n" + "\n".join(problems)


def test_the_yaml_format_is_pyyamls_safe_dump_byte_for_byte(filled_plans):
    """The YAML renderer remembers scalar analyses across plans (plan/render.py): its output
    stays ``yaml.safe_dump_all``'s, for a plan whose programs ConfigMap holds long sources,
    rendered twice (the second time from the remembered analyses)."""
    import yaml

    from pulumi_modelstore.plan.render import _ordered, to_yaml

    plan = filled_plans["examples/local-kind-seeded/dev"]
    objects = [_ordered(obj) for obj in plan.kubernetes_objects()]
    assert any(obj["kind"] == "ConfigMap" for obj in objects)
    expected = yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False)
    for _ in range(2):
        assert to_yaml(plan).endswith("\n" + expected)


@pytest.mark.parametrize("pid", [p[0] for p in PROGRAMS])
def test_every_program_plans_byte_identically_twice(filled_plans, pid):
    from pulumi_modelstore.plan.render import FORMATS, render

    _, directory, stack = next(p for p in PROGRAMS if p[0] == pid)
    again = plan_directory(directory, stack, fill_outputs=True)
    for fmt in FORMATS:
        assert render(again, fmt) == render(filled_plans[pid], fmt), fmt
