"""The policy pack: what a platform team requires of every model store stack, one implementation
run two ways.

- Online: the CrossGuard pack in ``policy/`` at the repository root wraps :data:`POLICIES`
  (``pulumi preview --policy-pack policy``).
- Offline: ``modelstore plan --policy`` runs them over the plan (:func:`check_plan`).

Every policy is mandatory. A check that knows a documented opt-out (``protect: false``, every
network chosen explicitly; the stores mark those resources, see ``store.UNPROTECTED_MARK``)
reports the opt-out through an advisory twin policy named ``<policy>-opt-out`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..plan.engine import Plan
from . import rules
from .core import Finding, Policy, Resource, Violation, evaluate, from_plan_steps

PACK_NAME = "modelstore"
OPT_OUT_SUFFIX = "-opt-out"


def _with_opt_outs(name: str, description: str, check: rules.Check) -> list[Policy]:
    """A mandatory policy over ``check`` and its advisory twin reporting the opt-outs."""
    return [
        Policy(name, description, mandatory=True, resource_check=check),
        Policy(
            name + OPT_OUT_SUFFIX,
            f"{description} (documented opt-outs, reported without failing)",
            mandatory=False,
            resource_check=check,
            reports_opt_outs=True,
        ),
    ]


POLICIES: tuple[Policy, ...] = (
    Policy(
        "modelstore-readers-read-only",
        "Readers mount read-only at every layer: volume and claim access modes, the volume's "
        "read-only flags, the pod's claim volume and every container's mount.",
        mandatory=True,
        stack_check=rules.readers_read_only,
    ),
    *_with_opt_outs(
        "modelstore-storage-private",
        "No bucket, container or storage account is public or open to every network.",
        rules.storage_private,
    ),
    Policy(
        "modelstore-tls-in-transit",
        "Storage is reached over TLS where its protocol has it.",
        mandatory=True,
        resource_check=rules.tls_in_transit,
    ),
    Policy(
        "modelstore-data-encrypted",
        "Data-bearing resources are encrypted at rest.",
        mandatory=True,
        resource_check=rules.data_encrypted,
    ),
    *_with_opt_outs(
        "modelstore-data-protected",
        "Data-bearing resources are protected and retained (protect, retainOnDelete, Retain).",
        rules.data_protected,
    ),
    Policy(
        "modelstore-irsa-trust-pinned",
        "Every IRSA trust pins the service account (sub) and the audience (aud).",
        mandatory=True,
        resource_check=rules.irsa_trust_pinned,
    ),
    Policy(
        "modelstore-no-open-ingress",
        "No security group rule admits 0.0.0.0/0 or ::/0.",
        mandatory=True,
        resource_check=rules.no_open_ingress,
    ),
    Policy(
        "modelstore-iam-least-privilege",
        "No store policy allows every action, or every resource where a scope exists.",
        mandatory=True,
        resource_check=rules.iam_least_privilege,
    ),
    Policy(
        "modelstore-jobs-non-root",
        "Jobs (the seed and verify Jobs among them) run as a non-root user; a container runs as "
        "root only to hand files over (CHOWN, DAC_OVERRIDE, FOWNER, nothing else).",
        mandatory=True,
        resource_check=rules.jobs_non_root,
    ),
)


def check_plan(plan: Plan, policies: Sequence[Policy] = POLICIES) -> list[Violation]:
    """Every policy over what ``plan`` creates: the violations, mandatory ones first."""
    return evaluate(from_plan_steps(plan.steps), policies)


__all__ = [
    "OPT_OUT_SUFFIX",
    "PACK_NAME",
    "POLICIES",
    "Finding",
    "Policy",
    "Resource",
    "Violation",
    "check_plan",
    "evaluate",
    "from_plan_steps",
]
