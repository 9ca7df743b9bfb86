"""The one error type for bad input to a model store, and the one for code that names a field
its args type does not declare."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any


class ModelStoreInputError(ValueError):
    """Bad input, raised before any resource of the store is registered.

    The message names the store, the field, the value given and what is allowed, on one line:
    ``llama: storage_capacity_gib must be 1200, 2400 or a multiple of 2400 for PERSISTENT_2,
    got 3600``. Where several fields are wrong, :meth:`combine` reports them all, one line each
    (``errors`` holds every one; ``store``, ``field``, ``value`` and ``allowed`` are the
    first's).
    """

    def __init__(self, store: str | None, field: str, value: Any, allowed: str) -> None:
        self.store = store
        self.field = field
        self.value = value
        self.allowed = allowed
        self.errors: list[ModelStoreInputError] = [self]
        prefix = f"{store}: " if store else ""
        super().__init__(f"{prefix}{field} must be {allowed}, got {_show(value)}")

    @classmethod
    def combine(cls, errors: Sequence[ModelStoreInputError]) -> ModelStoreInputError:
        """One error carrying ``errors`` (in order, each once), its message a line each."""
        unique: list[ModelStoreInputError] = []
        for error in errors:
            for one in error.errors:
                if str(one) not in {str(u) for u in unique}:
                    unique.append(one)
        if len(unique) == 1:
            return unique[0]
        first = unique[0]
        combined = cls(first.store, first.field, first.value, first.allowed)
        combined.errors = unique
        combined.args = ("\n".join(str(e) for e in unique),)
        return combined

    def __str__(self) -> str:
        return str(self.args[0])


def _show(value: Any) -> str:
    """Numbers as written, strings quoted, so an empty string is visible."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return str(value)
    return repr(value)


class UnknownFieldError(TypeError):
    """A programming error, not bad input: code (a rule, a default, a lookup, a rename) names a
    field its args type does not declare, which would otherwise read as an unset field and
    silently switch the rule off. Raised when the class is defined (renames) or on first use
    (the parser's rules, defaults and lookups), naming the args type, the unknown name and the
    known ones."""

    def __init__(self, owner: str, name: object, known: Collection[str], where: str) -> None:
        self.owner = owner
        self.name = name
        super().__init__(
            f"{where} names {name!r}, which is not a field of {owner} "
            f"(its fields: {', '.join(sorted(known)) or 'none'})"
        )
