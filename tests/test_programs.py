"""Every stack in stacks/ and every program in examples/ plans, and every Kubernetes object the
plans would create validates strictly (no unknown fields, enums included) against the
Kubernetes API's OpenAPI v3 documents of the oldest and the newest supported minor, custom
resources against their CRDs (tests/validators/kube_schema.py); a kind with no schema fails."""

from __future__ import annotations

import pytest

from pulumi_modelstore.plan.engine import UNKNOWN, plan_directory
from tests.conftest import EXAMPLES, ROOT, STACKS, USER_STACKS, all_programs
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


@pytest.mark.parametrize("stack", USER_STACKS)
def test_your_own_stack_plans(stack):
    """A stack file you added to stacks/ and have not committed (README, quick start) is
    planned too, so a mistake in it fails here with the program's own message; the suite's
    golden plans, workflow matrix and README index keep to the stacks the repository ships."""
    plan = plan_directory(ROOT, stack)
    assert plan.states(), f"stacks/Pulumi.{stack}.yaml planned nothing"


@pytest.mark.parametrize(("pid", "directory", "stack"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_plans_as_a_preview(preview_plans, cli_process, pid, directory, stack):
    """The preview the one CLI process wrote (``--also json=``) for each program: read back,
    the same JSON; everything created, nothing but a platform stack and a manifest digest
    read."""
    from pulumi_modelstore.plan.render import to_json

    plan = preview_plans(pid)
    assert to_json(plan) == cli_process.previews[pid].read_text()
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


# Strings where PyYAML's double-quoted writer folds, escapes or carries a character through.
QUOTED = [
    "",
    " ",
    "a",
    "\n",
    " leading and trailing ",
    "x" * 200,
    "word " * 40,
    "word\t" * 40,
    ("a" * 75) + " " + ("b" * 10),  # a space right at the width
    ("a" * 77) + "\n" + ("b" * 30),  # an escape right at the width
    ("a" * 70) + "\x00\x07\x1b" * 8,
    "  two  spaces  " * 12,
    'quote " and backslash \\ ' * 6,
    "NEL \x85 NBSP \xa0 LS \u2028 PS \u2029 BOM \ufeff " * 4,
    "é ü 漢字 \ud7ff \ue000 \ufffd \U0001f600 \ud800 " * 5,
    "\x7f\x80\x9f\xff" * 30,
]


def quoted_corpus(count: int) -> list[str]:
    """``count`` strings drawn (seeded) from the characters the writer treats apart."""
    import random

    rng = random.Random(20261201)
    special = ' "\\\n\t\x00\x1b\x85\xa0é\u2028\u2029\ufeff\ud7ff\ue000\U0001f600\ud800\x7f'
    plain = "abcdefgh   "
    return [
        "".join(rng.choice(special if rng.random() < 0.4 else plain) for _ in range(length))
        for length in (rng.choice((1, 3, 40, 79, 80, 81, 120, 300)) for _ in range(count))
    ]


@pytest.mark.parametrize("allow_unicode", [False, True])
def test_double_quoted_scalars_are_written_as_pyyaml_writes_them(allow_unicode):
    """The plan YAML's writer of double-quoted scalars (a run of plain characters at a time)
    writes what PyYAML's own writer writes, folds and escapes included, at several widths and
    indents."""
    import yaml

    from pulumi_modelstore.plan.render import _Dumper

    for width in (20, 80):
        for text in QUOTED + quoted_corpus(120):
            document = {"k": [text, {"nested": {"deeper": text}}]}
            kw = {"allow_unicode": allow_unicode, "width": width, "default_style": '"'}
            want = yaml.dump(document, Dumper=yaml.SafeDumper, **kw)
            assert yaml.dump(document, Dumper=_Dumper, **kw) == want, (text, width)


@pytest.mark.parametrize("pid", [p[0] for p in PROGRAMS])
def test_every_program_plans_byte_identically_twice(filled_plans, pid):
    """Planned again in this process, the same plan, every step, output and invoke of it (its
    JSON; every format renders one plan the same twice: test_plan_engine.py)."""
    from pulumi_modelstore.plan.render import to_json

    _, directory, stack = next(p for p in PROGRAMS if p[0] == pid)
    again = plan_directory(directory, stack, fill_outputs=True)
    assert to_json(again) == to_json(filled_plans[pid])
