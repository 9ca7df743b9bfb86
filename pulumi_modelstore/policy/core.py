"""What every policy is made of: the resource it judges, what it finds, and the policy itself.

A policy is a pure function over resources as the engine describes them (type, name, URN, input
properties, the ``protect`` and ``retainOnDelete`` options), so the same function runs offline
over a plan (:func:`from_plan`) and online inside the CrossGuard pack (``policy/__main__.py``),
which builds a :class:`Resource` from CrossGuard's arguments. Nothing here imports
``pulumi_policy``: the library runs without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The engine's unknown-value sentinels: what a property computed from a resource still being
# created holds during a preview (pulumi_policy proxy.py, UNKNOWN_*_VALUE; the plan engine's
# rpc.UNKNOWN is the string one). A policy cannot judge such a value and leaves it alone.
UNKNOWNS = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
        "030794c1-ac77-496b-92df-f27374a8bd58",
        "e48ece36-62e2-4504-bad9-02848725956a",
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
    }
)


def unknown(value: Any) -> bool:
    """True when ``value`` is not known until the update runs."""
    return isinstance(value, str) and value in UNKNOWNS


@dataclass(frozen=True)
class Resource:
    """One resource as a policy sees it."""

    urn: str
    type: str
    name: str
    props: Mapping[str, Any]
    """The resource's input properties (plain data; unknowns as the engine's sentinels)."""
    protect: bool = False
    retain_on_delete: bool | None = None
    """``None`` when not known: CrossGuard's analyzer is not told ``retainOnDelete`` (its
    ``AnalyzerResourceOptions`` carries protect, ignoreChanges, deleteBeforeReplace, aliases,
    customTimeouts, additionalSecretOutputs and parent only: pulumi's analyzer.proto, as
    pulumi_policy 1.21 reads it in ``_get_resource_options``), so online the retention half
    of a check is skipped and only ``modelstore plan --policy`` judges it."""

    def get(self, *path: str | int) -> Any:
        """The property at ``path`` (keys and list indexes), None where any step is missing."""
        value: Any = self.props
        for step in path:
            if isinstance(step, int):
                if not isinstance(value, list) or step >= len(value):
                    return None
                value = value[step]
            else:
                if not isinstance(value, Mapping):
                    return None
                value = value.get(step)
        return value

    @property
    def label(self) -> str:
        """``type::name``: how a report names the resource."""
        return f"{self.type}::{self.name}"


@dataclass(frozen=True)
class Finding:
    """A violation a check found: its message, the resource (stack checks name it; a resource
    check's is the resource it was given) and whether it is a documented opt-out."""

    message: str
    urn: str = ""
    opted_out: bool = False


ResourceCheck = Callable[[Resource], Iterable[Finding]]
StackCheck = Callable[[Sequence[Resource]], Iterable[Finding]]


@dataclass(frozen=True)
class Policy:
    """A named policy over one check. A check that knows opt-outs backs two policies: the
    mandatory one reports what is not opted out, its advisory ``-opt-out`` twin the opt-outs
    (CrossGuard gives one enforcement level per policy, so the split is by policy)."""

    name: str
    description: str
    mandatory: bool
    resource_check: ResourceCheck | None = None
    stack_check: StackCheck | None = None
    reports_opt_outs: bool = False

    def check_resource(self, resource: Resource) -> list[Finding]:
        """This policy's findings on one resource (a resource policy)."""
        assert self.resource_check is not None, self.name
        return [f for f in self.resource_check(resource) if f.opted_out == self.reports_opt_outs]

    def check_stack(self, resources: Sequence[Resource]) -> list[Finding]:
        """This policy's findings over the stack's resources (a stack policy)."""
        assert self.stack_check is not None, self.name
        return [f for f in self.stack_check(resources) if f.opted_out == self.reports_opt_outs]


@dataclass(frozen=True)
class Violation:
    """A finding of a policy on a resource, as ``modelstore plan --policy`` reports it."""

    policy: str
    mandatory: bool
    urn: str
    resource: str
    """``type::name``."""
    message: str

    def line(self) -> str:
        """One line: the enforcement level, the policy, the resource, the message."""
        level = "mandatory" if self.mandatory else "advisory"
        return f"{level}: {self.policy}: {self.resource}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "enforcementLevel": "mandatory" if self.mandatory else "advisory",
            "urn": self.urn,
            "resource": self.resource,
            "message": self.message,
        }


def evaluate(resources: Sequence[Resource], policies: Sequence[Policy]) -> list[Violation]:
    """Every policy over ``resources``: the violations, mandatory first, then by policy and
    resource."""
    by_urn = {r.urn: r for r in resources}
    found: list[Violation] = []
    for policy in policies:
        pairs: Iterator[tuple[str, Finding]]
        if policy.stack_check is not None:
            pairs = ((f.urn, f) for f in policy.check_stack(resources))
        else:
            pairs = ((r.urn, f) for r in resources for f in policy.check_resource(r))
        for urn, finding in pairs:
            resource = by_urn.get(urn)
            found.append(
                Violation(
                    policy=policy.name,
                    mandatory=policy.mandatory,
                    urn=urn,
                    resource=resource.label if resource is not None else urn,
                    message=finding.message,
                )
            )
    return sorted(found, key=lambda v: (not v.mandatory, v.policy, v.resource, v.message))


def from_plan_steps(steps: Iterable[Mapping[str, Any]]) -> list[Resource]:
    """The resources a plan's steps (``Plan.steps``, or a ``--format json`` plan's ``steps``)
    create or import: custom resources; reads are left out (they exist already)."""
    resources = []
    for step in steps:
        state = step["newState"]
        if not state.get("custom") or step.get("op") == "read":
            continue
        urn = str(state["urn"])
        resources.append(
            Resource(
                urn=urn,
                type=str(state["type"]),
                name=urn.rsplit("::", 1)[-1],
                props=state.get("inputs") or {},
                protect=bool(state.get("protect")),
                retain_on_delete=bool(state.get("retainOnDelete")),
            )
        )
    return resources


def json_document(value: Any) -> Mapping[str, Any] | None:
    """An IAM-style policy document given as JSON text or as data; None when unknown or not
    a document."""
    if unknown(value) or value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def statements(document: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(label, statement) for each statement: its ``Sid``, else ``#<index>``."""
    raw = document.get("Statement")
    items = raw if isinstance(raw, list) else [raw] if isinstance(raw, Mapping) else []
    return [
        (str(s.get("Sid") or f"#{i}"), s) for i, s in enumerate(items) if isinstance(s, Mapping)
    ]


def as_list(value: Any) -> list[Any]:
    """A value the IAM grammar allows as one item or a list, as a list."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]
