"""The skeleton of :class:`~.driver.EbsCsiDriver`: the store template's order (``store.py``)
for a component that is no store (once per cluster, no consumer namespaces, claims or
``mount_for``). The model cache (:class:`~.cache.EbsModelCache`) is a store and rides the
template itself.

1. parse: the args TypedDict's fields, old spellings renamed, then the component's named
   rules; every problem is reported at once, before anything registers (:meth:`parse`);
2. lookups, then the component registers and makes its children (its ``__init__``);
3. the outputs: every ``pulumi.Output`` the class annotates (:meth:`register_annotated`).
"""

# No `from __future__ import annotations`: the component analyzer reads the subclasses'
# annotations as objects.

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pulumi

from ...fields import Parser, outputs_of, parse_args


class EbsComponent(pulumi.ComponentResource):
    """Base of the EBS driver component. Subclasses set ``_args_type``, override :meth:`rules` and,
    where a field was renamed, set ``_renamed_fields``; each declares ``__init__`` with its own
    args type (the component schema reads it)."""

    # Private: the component analyzer reads a component's public annotations as its outputs.
    _args_type: type
    # Old spelling -> new, accepted with a deprecation warning for one release.
    _renamed_fields: Mapping[str, str] = MappingProxyType({})

    @classmethod
    def rules(cls, p: Parser) -> None:
        """The component's named rules, run on the parser."""

    @classmethod
    def parse(
        cls, resource_name: str, args: Any, *, warn: bool = True
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every check that needs no lookup: the values of every field (defaults filled in) and
        what the rules derived; raises one :class:`ModelStoreInputError` listing every problem,
        one line each. ``warn``: warn of deprecated spellings."""
        return parse_args(
            resource_name,
            cls._args_type,
            args,
            cls.rules,
            renamed_fields=cls._renamed_fields,
            warn=warn,
            component=cls.__name__,
        )

    @classmethod
    def validate(cls, resource_name: str, args: Any) -> None:
        """Check every input that needs no lookup; raises :class:`ModelStoreInputError`."""
        cls.parse(resource_name, args)

    @classmethod
    def _outputs(cls) -> dict[str, str]:
        """camelCase output name -> attribute (``fields.outputs_of``), as ``ModelStore``'s."""
        return outputs_of(cls)

    def register_annotated(self) -> None:
        """Register every output the class annotates (:meth:`_outputs`), also kept as
        ``summary``."""
        self.summary: dict[str, Any] = {
            name: getattr(self, attribute) for name, attribute in self._outputs().items()
        }
        self.register_outputs(self.summary)
