"""Every stack and example plans exactly as its committed golden plan (``tests/golden/``)."""

from __future__ import annotations

import difflib

import pytest

from pulumi_modelstore.plan.render import to_json
from tests.conftest import all_programs
from tests.golden import GOLDEN, golden_path

PIDS = [p[0] for p in all_programs()]


@pytest.mark.parametrize("pid", PIDS)
def test_plan_matches_its_golden_plan(filled_plans, pid):
    path = golden_path(pid)
    assert path.exists(), f"no golden plan for {pid}: run ./scripts/golden"
    want, got = path.read_text(), to_json(filled_plans[pid])
    if got != want:
        diff = "".join(
            difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "plan", n=2)
        )
        pytest.fail(f"{pid} differs from {path.name} (./scripts/golden refreshes):\n{diff[:4000]}")


def test_every_golden_plan_belongs_to_a_program():
    stale = {p for p in GOLDEN.rglob("*.json")} - {golden_path(pid) for pid in PIDS}
    assert not stale, f"golden plans of no program: {sorted(map(str, stale))}"
