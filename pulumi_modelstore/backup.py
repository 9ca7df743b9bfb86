"""One ``backup`` section for every store: whether the store's data is backed up, how long
backups are kept and when a scheduled one starts. Each backend says what its storage's API can
do (:class:`BackupSupport`: refused with a reason, the retention range, whether it takes a
schedule) and maps the settled :class:`Backup` onto its own resources.

The default follows where the data can come from again: a store with writers and no pinned
``model`` source holds models that may exist nowhere else, so it is backed up; a store whose
model is pinned to a source (or that nobody writes) can be filled again from there, so it is
not. A backend that refuses backups (the API refuses them for its configuration, or the
library does not own the storage) defaults to off, and refuses ``enabled: true`` with its
reason.

Not every storage is here: an ``EbsModelCache`` always restores its replicas' volumes from the
snapshot its loader (or the ``source_*`` it names) made, so that snapshot is the cache's
backup and it takes no ``backup`` section.
"""

# No `from __future__ import annotations`: the component analyzer reads BackupArgs'
# annotations as objects to infer the component schema.

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from .errors import ModelStoreInputError
from .fields import Parser, camel_case, deprecated

DEFAULT_RETENTION_DAYS = 7
DEFAULT_SCHEDULE = "0 3 * * *"


class BackupArgs(TypedDict, total=False):
    """The ``backup`` section of a store (the same on every backend)."""

    enabled: bool
    """Back the store's data up. Default: on for a store with writers and no pinned ``model``
    source (its models may exist nowhere else), off otherwise (the data is reproducible from
    its source, or nobody writes it), and off on a backend or configuration whose API refuses
    backups (``enabled: true`` is refused there, with the reason)."""
    retention_days: int
    """How many days backups (or overwritten and deleted versions) are kept, within the
    backend's API range. Default: ``7``."""
    schedule: str
    """When a scheduled backup starts: a cron expression of five numeric fields (minute hour
    day-of-month month day-of-week, day-of-week 0-6 with Sunday 0), in UTC. Default:
    ``0 3 * * *`` (daily at 03:00 UTC). Refused on backends whose protection is continuous
    (object versions and soft delete keep every overwrite) and, on FSx, when it is not
    daily."""


SECTION_FIELDS = ("enabled", "retention_days", "schedule")
_TYPES: dict[str, tuple[type, str]] = {
    "enabled": (bool, "true or false"),
    "retention_days": (int, "a whole number of days"),
    "schedule": (str, "a cron expression (five fields, UTC), e.g. '0 3 * * *'"),
}
# (name, lowest, highest) of each cron field, in order: the bounds of robfig/cron v3
# (``spec.go``: minutes 0-59, hours 0-23, dom 1-31, months 1-12, dow 0-6; ``parser.go``
# refuses a value or range end above the maximum), whose ``cron.ParseStandard`` is Velero's
# schedule parser (vmware-tanzu/velero ``pkg/controller/schedule_controller.go``,
# parseCronSchedule). Sunday is 0 only: 7 is refused, as Velero refuses it.
_CRON_FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day-of-month", 1, 31),
    ("month", 1, 12),
    ("day-of-week", 0, 6),
)
_CRON_ITEM = re.compile(r"^(\*|\d+(?:-\d+)?)(?:/(\d+))?$")
CRON_ALLOWED = (
    "a cron expression of five numeric fields (minute 0-59, hour 0-23, day-of-month 1-31, "
    "month 1-12, day-of-week 0-6 with Sunday 0; UTC), e.g. '0 3 * * *'"
)


@dataclass(frozen=True)
class BackupSupport:
    """What a backend's storage API offers for backups, in the configuration parsed."""

    refusal: str | None = None
    """Why ``enabled: true`` is refused here (the API's or the library's reason, with its
    source); None: backups are offered."""
    retention: tuple[int, int] | None = None
    """The ``retention_days`` the API takes, lowest and highest; None: the API fixes it (a
    ``retention_days`` given is refused with ``fixed``)."""
    retention_source: str = ""
    """Whose range ``retention`` is, for the error (``FSx automatic backups``)."""
    schedule: str = "cron"
    """``cron`` (any schedule), ``daily`` (one start time a day) or ``none`` (continuous
    protection, or a schedule the API fixes: a ``schedule`` given is refused with ``fixed``)."""
    sets: tuple[str, ...] = ()
    """The backend's own fields a backup sets (a soft delete retention, versioning): refused
    alongside an enabled backup, which decides them."""
    fixed: str = ""
    """Why ``retention_days`` (with ``retention`` None) or ``schedule`` (with ``none``) cannot
    be set."""


def existing_left_alone(what: str, because: str) -> BackupSupport:
    """Backups refused: the store uses an existing ``what`` (``because``: the field that says
    so) and leaves its settings to where it is managed."""
    return BackupSupport(
        refusal=f"the store leaves an existing {what}'s settings alone ({because}): turn on its "
        f"backups where the {what} is managed"
    )


"""The refusal of a store that serves from an existing {0} ({1}: the field that says so)."""
REFUSED_NOT_OWNED = BackupSupport(
    refusal="the store does not own its storage (back it up where it is served from)"
)


@dataclass(frozen=True)
class Backup:
    """A settled ``backup`` section (``Spec.derived["backup"]``)."""

    enabled: bool
    retention_days: int
    schedule: str

    @property
    def daily_start(self) -> tuple[int, int]:
        """(hour, minute) of a daily schedule (checked daily before this is read)."""
        minute, hour = self.schedule.split()[:2]
        return int(hour), int(minute)


def cron_problem(expression: str) -> str | None:
    """Why ``expression`` is not a five-field numeric cron expression; None when it is."""
    parts = expression.split()
    if len(parts) != len(_CRON_FIELDS):
        return f"{len(parts)} fields"
    for part, (name, low, high) in zip(parts, _CRON_FIELDS, strict=True):
        for item in part.split(","):
            match = _CRON_ITEM.match(item)
            if match is None:
                return f"{name} {item!r}"
            if match.group(1) != "*":
                bounds = [int(n) for n in match.group(1).split("-")]
                if any(not low <= n <= high for n in bounds) or bounds != sorted(bounds):
                    return f"{name} {item!r} outside {low}-{high}"
            if match.group(2) is not None and int(match.group(2)) == 0:
                return f"{name} step 0"
    return None


def is_daily(expression: str) -> bool:
    """One run a day: a single minute and hour, every day of every month."""
    minute, hour, *rest = expression.split()
    return minute.isdigit() and hour.isdigit() and rest == ["*", "*", "*"]


def _section(store: str, given: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The section's values as given (camelCase keys as their field), and which were given;
    ``given`` is what the caller gave of the store's fields."""
    if "backup" not in given:
        return {}, set()
    raw = given["backup"]
    if not isinstance(raw, Mapping):  # an explicit null too: it is not the default
        raise ModelStoreInputError(
            store, "backup", raw, "a mapping with enabled, retention_days and schedule"
        )
    names = {**{camel_case(n): n for n in SECTION_FIELDS}, **{n: n for n in SECTION_FIELDS}}
    values: dict[str, Any] = {}
    spelled: dict[str, Any] = {}
    errors: list[ModelStoreInputError] = []
    for key, value in raw.items():
        name = names.get(key) if isinstance(key, str) else None
        if name is None:
            errors.append(
                ModelStoreInputError(
                    store, "backup field name", key, f"one of {', '.join(SECTION_FIELDS)}"
                )
            )
            continue
        if name in spelled:
            errors.append(
                ModelStoreInputError(
                    store,
                    f"backup.{key}",
                    value,
                    f"unset when backup.{spelled[name]} is given (the same field, spelled "
                    "differently)",
                )
            )
            continue
        spelled[name] = key
        if key != name:
            # A stack's config reaches here with Python names (program.store_args maps the
            # camelCase keys of every section); Python args take Python names, as the model
            # section does. The camelCase spelling in Python args goes in 0.2.0.
            deprecated(store, f"backup.{key}", f"backup.{name}", stacklevel=4)
        kind, words = _TYPES[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            errors.append(ModelStoreInputError(store, f"backup.{name}", value, words))
            continue
        values[name] = value
    if "schedule" in values and cron_problem(values["schedule"]) is not None:
        errors.append(
            ModelStoreInputError(store, "backup.schedule", values["schedule"], CRON_ALLOWED)
        )
    if "retention_days" in values and values["retention_days"] < 1:
        errors.append(
            ModelStoreInputError(
                store, "backup.retention_days", values["retention_days"], "at least 1 day"
            )
        )
    if errors:
        raise ModelStoreInputError.combine(errors)
    return values, set(values)


def reproducible(p: Parser) -> bool:
    """Whether the store's model is pinned to a source it can be filled from again (a
    ``model`` section naming a ``source``, on args types that declare one)."""
    if not p.declared("model"):
        return False
    model = p["model"]
    if isinstance(model, Mapping):
        return bool(model.get("source"))
    return bool(model)


def settle_backup(p: Parser, support: BackupSupport) -> Backup | None:
    """Check the ``backup`` section against the common rules and the backend's
    :class:`BackupSupport`, and record the settled :class:`Backup` in ``p.derived["backup"]``
    (None when a value was refused)."""
    store = p.store
    read = p.check(lambda: _section(store, p.given))
    if read is None:
        return None
    values, given = read
    writers = p["writers"] if p.ok("writers") else None
    default_on = bool(writers) and not reproducible(p) and support.refusal is None
    enabled = values.get("enabled", default_on)
    errors: list[ModelStoreInputError] = []
    if enabled and support.refusal is not None:
        errors.append(
            ModelStoreInputError(
                store, "backup.enabled", True, f"false on this store: {support.refusal}"
            )
        )
    retention = values.get("retention_days", DEFAULT_RETENTION_DAYS)
    schedule = values.get("schedule", DEFAULT_SCHEDULE)
    if enabled and support.refusal is None:
        for name in support.sets:
            if name in p.given:
                errors.append(
                    ModelStoreInputError(
                        store,
                        name,
                        p.given[name],
                        "unset when backup is enabled (the backup's retention_days sets it)",
                    )
                )
        if support.retention is None:
            if "retention_days" in given:
                errors.append(
                    ModelStoreInputError(store, "backup.retention_days", retention, support.fixed)
                )
        else:
            low, high = support.retention
            if not low <= retention <= high:
                errors.append(
                    ModelStoreInputError(
                        store,
                        "backup.retention_days",
                        retention,
                        f"{low} to {high} days (the range of {support.retention_source})",
                    )
                )
        if "schedule" in given and support.schedule == "none":
            errors.append(ModelStoreInputError(store, "backup.schedule", schedule, support.fixed))
        elif "schedule" in given and support.schedule == "daily" and not is_daily(schedule):
            errors.append(
                ModelStoreInputError(
                    store,
                    "backup.schedule",
                    schedule,
                    f"a daily schedule ('<minute> <hour> * * *'): {support.fixed}",
                )
            )
    if errors:
        combined = ModelStoreInputError.combine(errors)
        p.check(lambda: _raise(combined))
        return None
    settled = Backup(enabled=bool(enabled), retention_days=retention, schedule=schedule)
    p.derived["backup"] = settled
    return settled


def _raise(error: ModelStoreInputError) -> None:
    raise error
