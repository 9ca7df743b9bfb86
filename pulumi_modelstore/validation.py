"""Small validators, one rule each, for what Kubernetes and the contract know (each cloud's
own rules live in its room, e.g. ``aws/validation.py``). Every one skips values that are still
Outputs: those are checked by the cloud at deploy time, not guessed at here."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pulumi

from .errors import ModelStoreInputError

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

DNS_LABEL_RULE = (
    "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter "
    "or digit, at most 63 characters)"
)
DNS_SUBDOMAIN_RULE = (
    "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a "
    "letter or digit, at most 253 characters)"
)


def is_output(value: Any) -> bool:
    return isinstance(value, pulumi.Output)


def dns_label(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not isinstance(value, str) or len(value) > 63 or not _DNS_LABEL.match(value):
        raise ModelStoreInputError(store, field, value, DNS_LABEL_RULE)


def dns_subdomain(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not isinstance(value, str) or len(value) > 253 or not _DNS_SUBDOMAIN.match(value):
        raise ModelStoreInputError(store, field, value, DNS_SUBDOMAIN_RULE)


def absolute_path(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not isinstance(value, str) or not value.startswith("/"):
        raise ModelStoreInputError(store, field, value, "an absolute path starting with '/'")


def one_of(store: str, field: str, value: Any, allowed: Sequence[Any]) -> None:
    if is_output(value):
        return
    if value not in allowed:
        raise ModelStoreInputError(store, field, value, f"one of {', '.join(map(str, allowed))}")


def positive_int(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelStoreInputError(store, field, value, "a positive whole number")


def string_list(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ModelStoreInputError(store, field, value, "a list of strings")
    for item in value:
        if not is_output(item) and not isinstance(item, str):
            raise ModelStoreInputError(store, field, value, "a list of strings")


def flag(store: str, field: str, value: Any) -> bool:
    """A real boolean: ``"false"`` is a truthy string, so strings are refused, not coerced."""
    if not isinstance(value, bool):
        raise ModelStoreInputError(store, field, value, "True or False")
    return value


def string_map(store: str, field: str, value: Any) -> dict[str, str]:
    """A mapping of strings to strings (tags, labels, parameters); None is empty."""
    mapping = value or {}
    if not isinstance(mapping, Mapping) or not all(
        isinstance(k, str) and (isinstance(t, str) or is_output(t)) for k, t in mapping.items()
    ):
        raise ModelStoreInputError(store, field, value, "a mapping of strings to strings")
    return dict(mapping)
