"""Every stack in stacks/ and every program in examples/ plans, and every Kubernetes object the
plans would create validates against the Kubernetes schema (strict: no unknown fields)."""

from __future__ import annotations

import kubernetes_validate
import pytest

from pulumi_modelstore.plan.engine import UNKNOWN, plan_directory
from tests.conftest import EXAMPLES, STACKS, all_programs

# The oldest Kubernetes minor the project supports (EKS standard support, FACTS' S3 v2 floor).
KUBERNETES_VERSION = "1.31"
PROGRAMS = all_programs()
# Custom resources have no schema in the core set; anything else without one fails the test.
CRD_GROUPS = {
    "snapshot.storage.k8s.io": "checked against the external-snapshotter v1 CRDs in test_ebs.py",
    "serving.kserve.io": "KServe's InferenceService: checked in test_examples.py",
    "datalayer.gke.io": "GKE Volume Populator's GCPDataSource: checked in test_hyperdisk.py",
    "cloud.google.com": "GKE's ComputeClass: checked in test_hyperdisk.py",
}


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
def test_program_plans_as_a_preview(pid, directory, stack):
    plan = plan_directory(directory, stack)
    custom = [s for s in plan.states() if s["custom"] and not s["type"].startswith("pulumi:")]
    assert custom, f"{pid} creates nothing"
    assert plan.outputs, f"{pid} exports nothing"
    # Everything is created; the one thing read is a platform stack's outputs (StackReference,
    # answered from its saved output file).
    assert all(
        step["op"] == "create"
        or (step["op"] == "read" and step["newState"]["type"] == "pulumi:pulumi:StackReference")
        for step in plan.steps
    )


@pytest.mark.parametrize("pid", [p[0] for p in PROGRAMS])
def test_every_kubernetes_object_validates_strictly(filled_plans, pid):
    objects = filled_plans[pid].kubernetes_objects()
    assert objects
    checked = 0
    for obj in objects:
        assert UNKNOWN not in repr(obj), f"{obj['kind']} still has unknowns"
        group = obj["apiVersion"].rpartition("/")[0]
        if group in CRD_GROUPS:
            continue
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            name = obj["metadata"].get("name")
            pytest.fail(f"{pid}: {obj['kind']} {name}: {exc.message}")
        checked += 1
    assert checked


@pytest.mark.parametrize("pid", [p[0] for p in PROGRAMS])
def test_every_program_plans_byte_identically_twice(filled_plans, pid):
    from pulumi_modelstore.plan.render import FORMATS, render

    _, directory, stack = next(p for p in PROGRAMS if p[0] == pid)
    again = plan_directory(directory, stack, fill_outputs=True)
    for fmt in FORMATS:
        assert render(again, fmt) == render(filled_plans[pid], fmt), fmt
