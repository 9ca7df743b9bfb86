"""Every AWS payload of every plan replays against moto (see tests/aws_replay)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ParamValidationError
from moto import mock_aws

from pulumi_modelstore.plan.engine import Plan
from tests.aws_replay import Replay
from tests.conftest import all_programs

PROGRAMS = [p[0] for p in all_programs()]


def replay(plan: Plan) -> Replay:
    with mock_aws():
        return Replay(plan).run()


@pytest.mark.parametrize("pid", PROGRAMS)
def test_aws_payloads_replay_against_moto(aws_env, filled_plans, pid):
    done = replay(filled_plans[pid])
    # Only the laptop-cluster, on-prem, GKE and AKS programs (the GKE platform stack and the
    # Kubernetes-only application stack on it) may send nothing to AWS.
    assert done.replayed or any(
        w in pid for w in ("local", "onprem", "gke", "aks", "platform-stores", "app-vllm")
    ), f"{pid} sent no AWS payload"


def _with_fs_input(plan: Plan, key: str, value) -> Plan:
    fs = "aws:fsx/lustreFileSystem:LustreFileSystem"
    steps = []
    for step in plan.steps:
        state = step["newState"]
        if state["type"] == fs:
            state = {**state, "inputs": {**state["inputs"], key: value}}
        steps.append({**step, "newState": state})
    return Plan(**{**plan.__dict__, "steps": steps})


def test_a_dangling_reference_fails_the_replay(aws_env, filled_plans):
    broken = _with_fs_input(
        filled_plans["stacks/aws-prod"], "securityGroupIds", ["sg-0123456789abcdef0"]
    )
    with pytest.raises(AssertionError, match="dangling reference sg-0123456789abcdef0"):
        replay(broken)


def test_a_malformed_payload_fails_the_replay(aws_env, filled_plans):
    broken = _with_fs_input(filled_plans["stacks/aws-prod"], "storageCapacity", "2400")
    with pytest.raises(ParamValidationError, match="StorageCapacity"):
        replay(broken)
