"""The policy pack as CrossGuard policies: :data:`POLICIES` wrapped for ``pulumi_policy``.

Imported by the pack (``policy/__main__.py``) and its tests only: it needs ``pulumi_policy``,
which the rest of the library does not. Resource policies become ``ResourceValidationPolicy``s,
stack policies ``StackValidationPolicy``s, each at its enforcement level. CrossGuard tells a
policy a resource's ``protect`` but not its ``retainOnDelete`` (see
:attr:`.core.Resource.retain_on_delete`): online, retention is left to ``modelstore plan
--policy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import _DictProxy, _ListProxy

from . import POLICIES
from .core import Policy, Resource


def plain(value: Any) -> Any:
    """CrossGuard's properties as plain data. CrossGuard hands them wrapped in proxies that
    raise on reading an unknown value; the checks want to see the unknown (and leave it
    alone), so the wrapped values are read through the proxies' ``__target``."""
    if isinstance(value, _DictProxy):
        return {k: plain(v) for k, v in value["__target"].items()}
    if isinstance(value, _ListProxy):
        return [plain(v) for v in value["__target"]]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def resource_of(args: ResourceValidationArgs | PolicyResource) -> Resource:
    """The resource a check sees, from CrossGuard's arguments (``retain_on_delete`` unknown)."""
    return Resource(
        urn=args.urn,
        type=args.resource_type,
        name=args.name,
        props=plain(args.props),
        protect=bool(args.opts.protect),
        retain_on_delete=None,
    )


def level_of(policy: Policy) -> EnforcementLevel:
    return EnforcementLevel.MANDATORY if policy.mandatory else EnforcementLevel.ADVISORY


def wrap(policy: Policy) -> ResourceValidationPolicy | StackValidationPolicy:
    """``policy`` as a CrossGuard policy of the same name, description and level."""
    if policy.stack_check is not None:

        def validate_stack(args: StackValidationArgs, report: ReportViolation) -> None:
            for finding in policy.check_stack([resource_of(r) for r in args.resources]):
                report(finding.message, finding.urn or None)

        return StackValidationPolicy(
            name=policy.name,
            description=policy.description,
            validate=validate_stack,
            enforcement_level=level_of(policy),
        )

    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        for finding in policy.check_resource(resource_of(args)):
            report(finding.message, None)

    return ResourceValidationPolicy(
        name=policy.name,
        description=policy.description,
        validate=validate,
        enforcement_level=level_of(policy),
    )


def crossguard_policies(
    policies: Sequence[Policy] = POLICIES,
) -> list[ResourceValidationPolicy | StackValidationPolicy]:
    """Every policy of the pack, wrapped."""
    return [wrap(p) for p in policies]
