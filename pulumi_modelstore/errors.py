"""The one error type for bad input to a model store, and the one for code that names a field
its args type does not declare."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

REFERENCE = "`modelstore fields`"
"""The command of the installed package that lists every backend and component and, given one,
its fields (``docs.field_listing``; ``docs/reference.md`` is the same, generated, in a clone)."""
LONG_LIST = 10
"""A list of valid names longer than this is shortened in a message to its nearest few (the
ten backends still read on one line; a store's 14 to 40 fields do not)."""
NEAREST = 4
"""How many names a shortened list keeps."""
_CUTOFF = 0.6
"""How alike (``difflib``'s ratio) a valid name must be to be suggested: 0.6 takes one typo in
a short name (``servr`` -> ``server``) and leaves unrelated names (``region`` -> ``readers``)
unsuggested."""
_NEAR = 0.5
"""How alike a valid name must be to be among the nearest a shortened list shows."""


def reference(component: str) -> str:
    """The command that lists ``component``'s fields, which every install has (a pip user has
    no ``docs/`` folder)."""
    return f"`modelstore fields {component}`"


def _folded(name: str) -> str:
    """``claimName``, ``CLAIM_NAME``, ``claim-name`` -> ``claimname``: the spellings of one name."""
    return name.replace("_", "").replace("-", "").lower()


def did_you_mean(given: object, names: Iterable[str]) -> str | None:
    """The valid name ``given`` most likely misspells: the one it spells in another case or
    with other separators (``claimName`` -> ``claim_name``), else the closest by
    :func:`difflib.get_close_matches` above a ratio of 0.6; None when none is close."""
    if not isinstance(given, str):
        return None
    names = list(names)
    same = [n for n in names if _folded(n) == _folded(given) and n != given]
    if same:
        return same[0]
    close = difflib.get_close_matches(given, names, n=1, cutoff=_CUTOFF)
    return close[0] if close else None


def suggestion(given: object, names: Iterable[str]) -> str | None:
    """The hint an error about ``given`` (none of ``names``) ends with: ``did you mean
    `claim_name`?``, or None (:func:`did_you_mean`)."""
    guess = did_you_mean(given, names)
    return f"did you mean `{guess}`?" if guess is not None else None


def one_of(
    given: object, names: Iterable[str], where: str | None = None, noun: str = "names"
) -> tuple[str, str | None]:
    """What an error says is allowed when ``given`` is none of ``names``, and its hint.

    Up to :data:`LONG_LIST` names are listed in full (in the order given), as is any list
    when ``where`` is None; a longer one points to ``where`` (a section of the reference, or
    another place listing them all, ``noun`` saying what they are) with the :data:`NEAREST`
    names closest to ``given``. The hint names the valid name ``given``
    most likely misspells (:func:`did_you_mean`), if any."""
    names = list(names)
    guess = did_you_mean(given, names)
    hint = suggestion(given, names)
    if len(names) <= LONG_LIST or where is None:
        return f"one of {', '.join(names)}", hint
    text = given if isinstance(given, str) else ""
    nearest = difflib.get_close_matches(text, names, n=NEAREST, cutoff=_NEAR)
    if guess is not None and guess not in nearest:
        nearest = [guess, *nearest[: NEAREST - 1]]
    listed = f"one of the {len(names)} {noun} listed by {where}"
    return (f"{listed} (nearest: {', '.join(nearest)})" if nearest else listed), hint


class ModelStoreInputError(ValueError):
    """Bad input, raised before any resource of the store is registered.

    The message names the store, the field, the value given and what is allowed, on one line:
    ``llama: storage_capacity_gib must be 1200, 2400 or a multiple of 2400 for PERSISTENT_2,
    got 3600``. Where several fields are wrong, :meth:`combine` reports them all, one line each
    (``errors`` holds every one; ``store``, ``field``, ``value`` and ``allowed`` are the
    first's).

    A value of None is reported as missing (``llama: server is missing; it must be ...``):
    an unset field and a field given as null read alike to a store. ``hint`` follows the
    message after a semicolon (``did you mean `claim_name`?``).
    """

    def __init__(
        self,
        store: str | None,
        field: str,
        value: Any,
        allowed: str,
        *,
        hint: str | None = None,
    ) -> None:
        self.store = store
        self.field = field
        self.value = value
        self.allowed = allowed
        self.hint = hint
        self.errors: list[ModelStoreInputError] = [self]
        prefix = f"{store}: " if store else ""
        if value is None:
            message = f"{prefix}{field} is missing; it must be {allowed}"
        else:
            message = f"{prefix}{field} must be {allowed}, got {show(value)}"
        super().__init__(f"{message}; {hint}" if hint else message)

    def moved(
        self, store: str | None, field: str, allowed: str | None = None
    ) -> ModelStoreInputError:
        """This error (value and hint) said of another ``store`` and ``field`` (a key path),
        optionally with other ``allowed`` words."""
        return type(self)(
            store, field, self.value, self.allowed if allowed is None else allowed, hint=self.hint
        )

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
        combined = cls(first.store, first.field, first.value, first.allowed, hint=first.hint)
        combined.errors = unique
        combined.args = ("\n".join(str(e) for e in unique),)
        return combined

    def __str__(self) -> str:
        return str(self.args[0])


def show(value: Any) -> str:
    """A value as a message shows it: numbers as written, strings quoted (so an empty string
    is visible), booleans and null as YAML writes them (``true``, ``null``; a quoted
    ``'true'`` is the string), lists and mappings item by item the same way."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return f"[{', '.join(show(v) for v in value)}]"
    if isinstance(value, tuple):
        return f"({', '.join(show(v) for v in value)}{',' if len(value) == 1 else ''})"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value.items()) + "}"
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
