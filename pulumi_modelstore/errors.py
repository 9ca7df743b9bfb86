"""The one error type for bad input to a model store."""

from __future__ import annotations

from typing import Any


class ModelStoreInputError(ValueError):
    """Bad input, raised before any resource of the store is registered.

    The message names the store, the field, the value given and what is allowed, on one line:
    ``llama: storage_capacity_gib must be 1200, 2400 or a multiple of 2400 for PERSISTENT_2,
    got 3600``.
    """

    def __init__(self, store: str | None, field: str, value: Any, allowed: str) -> None:
        self.store = store
        self.field = field
        self.value = value
        self.allowed = allowed
        prefix = f"{store}: " if store else ""
        super().__init__(f"{prefix}{field} must be {allowed}, got {_show(value)}")


def _show(value: Any) -> str:
    """Numbers as written, strings quoted, so an empty string is visible."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return str(value)
    return repr(value)
