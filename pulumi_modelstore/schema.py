"""The component schema, inferred offline by the Pulumi component analyzer
(``pulumi.provider.experimental``) from the components' own annotations and docstrings.

What it constrains, settled here for every component:
- the modules that define a component or its args have no ``from __future__ import
  annotations`` (the analyzer reads annotations as objects);
- ``__init__(self, resource_name: str, args: <ArgsTypedDict>, opts=None)``: a TypedDict, not
  ``Args | None``;
- field types the analyzer knows: ``str``, ``int``, ``float``, ``bool``, ``Sequence[...]``,
  ``Mapping[str, ...]``, ``Any``, ``X | None``; no other unions;
- outputs are the class's ``pulumi.Output[...]`` annotations, each with a docstring; other class
  attributes carry no annotation (or start with ``_``).

One gap of the stock analyzer is filled here: it reads a field's docstring only from the class
that is analyzed, but the fields every store shares are declared once, on a base TypedDict
(``ModelStoreArgs``, ``EksClusterArgs``...), and TypedDict erases its bases at run time. So
:class:`Analyzer` finds a docstring on the declaring base (``fields.field_docstrings``) and,
for outputs, on the component's base classes.
"""

from __future__ import annotations

import importlib
import typing
from typing import Any

from pulumi.provider.experimental.analyzer import Analyzer as _StockAnalyzer

from .fields import field_docstrings

PACKAGE = "modelstore"


class Analyzer(_StockAnalyzer):
    """The stock analyzer, reading docstrings where a field or output is declared."""

    def get_docstring(self, typ: type, name: str) -> str | None:
        found = super().get_docstring(typ, name)
        if found:
            return found
        if typing.is_typeddict(typ):
            return field_docstrings(typ).get(name)
        for base in typ.__mro__[1:]:
            if name in getattr(base, "__annotations__", {}):
                return super().get_docstring(base, name)
        return None


ROOMS = ("aws", "azure", "gcp", "local", "nfs")
"""The package's rooms (subpackages) that define components."""


def components(installed_only: bool = False) -> list[type]:
    """Every public component of the package, found rather than listed, so a new store or
    cluster scope needs no edit here: every registered store backend
    (``ModelStore.backends()``), every cluster scope (subclasses of ``ClusterScope``, at any
    depth) and every other ``ComponentResource`` the package or a room exports in
    ``__all__`` (``aws.EbsCsiDriver``...), each room imported first. Classes defined outside
    the package (a test's fake backend) and the two abstract bases are left out.
    ``installed_only``: a room whose extra is not installed is left out instead of failing
    (``modelstore fields`` on an install with one cloud's extra)."""
    import pulumi

    from .cluster import ClusterScope
    from .extras import MissingExtraError
    from .store import ModelStore

    modules = [importlib.import_module(__package__)]
    for room in ROOMS:
        try:
            modules.append(importlib.import_module(f"{__package__}.{room}"))
        except MissingExtraError:
            if not installed_only:
                raise
    found: set[type] = set(ModelStore.backends().values())
    pending: list[type] = [ClusterScope]
    while pending:
        sub: type
        for sub in pending.pop().__subclasses__():
            found.add(sub)
            pending.append(sub)
    for module in modules:
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, pulumi.ComponentResource):
                found.add(value)
    public = [
        c
        for c in found - {ModelStore, ClusterScope}
        if c.__module__.startswith(f"{__package__}.") and not c.__name__.startswith("_")
    ]
    return sorted(public, key=lambda c: c.__name__)


def analyze() -> dict[str, Any]:
    """The analyzer's result for every component: ``component_definitions`` (inputs and
    outputs with descriptions) and ``type_definitions``."""
    return dict(Analyzer(PACKAGE).analyze(components()))
