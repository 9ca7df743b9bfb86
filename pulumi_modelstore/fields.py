"""Fields are declared once: an args TypedDict's annotation, its docstring and the default the
docstring states are the one source. Parsing (types, defaults, unknown names), ``validate()``,
the config program's camelCase names and the component schema all derive from it.

A docstring gives a machine default with ``Default: ``<literal>````: a literal as JSON and a
stack's YAML write it (``1200``, ``true``, ``["flock"]``, ``{"fsGroup": 1000}``) or, when the
text is not one, that text as a string (``Default: ``PERSISTENT_2````). A default that
depends on other input (the store's name, a lookup) is written in words and computed by the
backend.

:class:`Parser` reads raw args against those fields and collects every problem, one line each:
rules are small named functions run through :meth:`Parser.rule`, skipped when a field they read
was already refused, so one bad value gives one line, not a cascade. A rule, default or lookup
naming a field the args type does not declare raises :class:`UnknownFieldError` on first use,
and a rename to or from an unknown name when its class is defined: a typo would otherwise read
as an unset field and silently switch the rule off.

Field names follow two rules. Existing or new: a name or id given means an existing piece
(``bucket_name``, ``security_group_id``, ``private_dns_zone_id``); only where a new piece may be
given a name of its own (a storage account, a container, a service account, a StorageClass) does
a ``create_*`` switch say which, since the name alone cannot. Units: the provider's field name
when a field maps to one provider field (``provisioned_throughput_in_mibps``), with the unit as
a suffix where that name carries none (``storage_capacity_gib``, ``share_quota_gib``); otherwise
the contract's words with one suffix per unit (``_gib``, ``_mib``, ``_mibps``, ``_seconds``,
``_days``). ``location`` is a cluster's location only. A renamed field keeps its old spelling
for one release (a store class's ``renamed_fields``, :func:`renamed`).
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import linecache
import re
import sys
import threading
import types
import typing
import warnings
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from .errors import ModelStoreInputError, UnknownFieldError, one_of, reference

NO_DEFAULT: Any = object()
_DEFAULT = re.compile(r"Default:\s*``(.+?)``", re.S)


def camel_case(name: str) -> str:
    """``storage_capacity_gib`` -> ``storageCapacityGib``: how Pulumi spells a Python name in
    schemas, outputs and YAML."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True)
class Field:
    """One declared field of an args TypedDict."""

    name: str
    annotation: Any
    doc: str
    default: Any
    """The default the docstring states as a literal, else :data:`NO_DEFAULT`."""

    @property
    def camel(self) -> str:
        return camel_case(self.name)


_SOURCE_LOCK = threading.Lock()


@functools.cache
def _module_classes(filename: str) -> dict[str, ast.ClassDef]:
    """The classes defined at the top of the module in ``filename``, by name: each module is
    parsed once, however many of its classes are read (``inspect.getsource`` would parse it
    and tokenize the class again for each)."""
    with _SOURCE_LOCK:
        tree = ast.parse("".join(linecache.getlines(filename)))
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _class_node(cls: type) -> ast.ClassDef | None:
    """``cls``'s definition in its source: from its module's top level, else (a class defined
    inside a function) as ``inspect`` finds it."""
    filename = inspect.getsourcefile(cls)
    found = _module_classes(filename).get(cls.__qualname__) if filename else None
    if found is not None:
        return found
    with _SOURCE_LOCK:
        node = ast.parse(inspect.getsource(cls).strip()).body[0]
    return node if isinstance(node, ast.ClassDef) else None


@functools.cache
def _class_docstrings(cls: type) -> tuple[dict[str, str], list[str]]:
    """Field docstrings written in ``cls``'s own body, and the names of its bases as written
    (TypedDict erases its bases at run time, so they are read from the source). Read once per
    class; parsed under a lock: CPython 3.11's AST builder keeps its recursion count in state
    shared by all threads, and two parses at once fail with "AST constructor recursion depth
    mismatch" (python/cpython#106905)."""
    try:
        node = _class_node(cls)
    except (OSError, TypeError, SyntaxError):
        return {}, []
    if node is None:
        return {}, []
    docs: dict[str, str] = {}
    body = node.body
    for stmt, after in zip(body, [*body[1:], None], strict=True):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
    return docs, bases


def field_docstrings(cls: type) -> dict[str, str]:
    """Every field's docstring, searching the TypedDict's declared bases too."""
    own, bases = _class_docstrings(cls)
    docs = dict(own)  # the cached dict stays as read
    module = sys.modules.get(cls.__module__)
    for base_name in bases:
        base = getattr(module, base_name, None)
        if isinstance(base, type) and typing.is_typeddict(base):
            for name, doc in field_docstrings(base).items():
                docs.setdefault(name, doc)
    return docs


def _default(doc: str) -> Any:
    match = _DEFAULT.search(doc)
    if match is None:
        return NO_DEFAULT
    text = match.group(1)
    try:
        return json.loads(text)
    except ValueError:
        return text


def args_typed_init(cls: Any) -> Callable[..., None]:
    """The constructor ``cls`` inherits, its ``args`` annotated as ``cls.args_type``: the
    component analyzer reads a component's args type from the annotations of its own
    ``__init__`` (pulumi/provider/experimental/analyzer.py, ``analyze_component``), so a store
    or cluster scope class names its args on the class (``args_type`` at run time, its type
    parameter for mypy) instead of repeating the constructor to annotate them."""
    inherited: Callable[..., None] = cls.__init__

    @functools.wraps(inherited)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        inherited(self, *args, **kwargs)

    __init__.__annotations__ = {**inherited.__annotations__, "args": cls.args_type}
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


# ``pulumi.Input[T]`` holds its Output member as the forward reference "Output[T]", which the
# args' own module cannot resolve: it reads as ``Output[Any]`` here (``_unwrap`` drops it).
_INPUT_NAMES: dict[str, Any] = {"Output": pulumi.Output, "T": Any}


@functools.cache
def fields_of(args_type: type) -> dict[str, Field]:
    """The declared fields of an args TypedDict, in declaration order. A field's annotation
    keeps its ``pulumi.Input[...]`` (a value that may be an Output); :func:`describe` and
    :func:`has_type` read through it to the plain type."""
    hints = typing.get_type_hints(args_type, localns=_INPUT_NAMES)
    docs = field_docstrings(args_type)
    return {
        name: Field(name, hint, docs.get(name, ""), _default(docs.get(name, "")))
        for name, hint in hints.items()
    }


# ---- types -------------------------------------------------------------------------------------

_TYPE_WORDS = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def describe(annotation: Any) -> str:
    """What a value of ``annotation`` is, in the words an error uses."""
    annotation = _unwrap(annotation)
    if annotation in _TYPE_WORDS:
        return _TYPE_WORDS[annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple, Sequence, typing.Sequence):
        item = _unwrap(args[0]) if args else Any
        if item is str:
            return "a list of strings"
        if typing.get_origin(item) in (dict, Mapping):
            return "a list of mappings"
        return "a list"
    if origin in (dict, Mapping, typing.Mapping):
        value = _unwrap(args[1]) if len(args) == 2 else Any
        if value is str:
            return "a mapping of strings to strings"
        return "a mapping"
    return "a value"


def _unwrap(annotation: Any) -> Any:
    """``X | None`` and ``pulumi.Input[X]`` -> ``X``."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [
            a
            for a in typing.get_args(annotation)
            if a is not type(None)
            and typing.get_origin(a) not in (pulumi.Output, Awaitable)
            and a is not pulumi.Output
        ]
        awaitable = [a for a in typing.get_args(annotation) if typing.get_origin(a) is Awaitable]
        if len(members) == 1:
            return _unwrap(members[0])
        if not members and awaitable:
            return _unwrap(typing.get_args(awaitable[0])[0])
    return annotation


def is_output(value: Any) -> bool:
    return isinstance(value, pulumi.Output)


def has_type(value: Any, annotation: Any) -> bool:
    """Whether ``value`` is of ``annotation``. Outputs pass (the cloud checks them at deploy):
    a rule that needs a plain value says so. ``"false"`` is not a bool and ``"1"`` is not a
    number: nothing is coerced."""
    if value is None or is_output(value):
        return True
    annotation = _unwrap(annotation)
    if annotation is Any:
        return True
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is str:
        return isinstance(value, str)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple, Sequence, typing.Sequence):
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, list | tuple):
            return False
        return not args or all(has_type(item, args[0]) for item in value)
    if origin in (dict, Mapping, typing.Mapping):
        if not isinstance(value, Mapping):
            return False
        return len(args) != 2 or all(
            isinstance(k, str) and has_type(v, args[1]) for k, v in value.items()
        )
    return True


# ---- parsing -----------------------------------------------------------------------------------

_REFUSAL_NAMES: set[str] = set()


def refusal_name(name: str) -> str:
    """Declare ``name`` as what an error names when it refuses something that is not a declared
    field (the store's own name, a name derived from it), so :meth:`Parser.ok` may ask about
    it; returns ``name``. Any other name :meth:`Parser.ok` is given must be a field."""
    _REFUSAL_NAMES.add(name)
    return name


def check_renames(owner: str, args_type: type, renamed_fields: Mapping[str, str]) -> None:
    """Each deprecated spelling (a key of ``renamed_fields``) is not a field of ``args_type``
    (it would shadow one) and its new name is (else every use of the old spelling would be
    refused as an unknown field name); raises :class:`UnknownFieldError` otherwise."""
    known = _declared(args_type)
    where = f"{owner}.renamed_fields"
    for old, new in renamed_fields.items():
        if new not in known:
            raise UnknownFieldError(args_type.__name__, new, known, f"{where} ({old} -> {new})")
        if old in known:
            raise TypeError(
                f"{where} renames {old!r}, which is still a field of {args_type.__name__}: an old "
                "spelling must not be a current one"
            )


def _declared(args_type: type) -> frozenset[str]:
    """The field names of a TypedDict, without reading annotations or docstrings (cheap enough
    for class definition time)."""
    keys = getattr(args_type, "__required_keys__", frozenset()) | getattr(
        args_type, "__optional_keys__", frozenset()
    )
    return frozenset(keys)


class Parser:
    """Reads raw args against an args TypedDict's fields, collecting every problem.

    Construction checks the names (unknown ones refused, listing the known ones) and the type
    of every value given, and fills in documented defaults. Backends then run their named rules
    with :meth:`rule` and :meth:`finish` returns the values or raises every problem at once.
    """

    def __init__(
        self,
        store: str,
        args_type: type,
        raw: Any,
        *,
        written: Mapping[str, str] | None = None,
        component: str | None = None,
    ) -> None:
        self.store = store
        self.reference = reference(component) if component is not None else None
        """The command that lists the fields (``modelstore fields <component>``): an unknown
        name's message points there instead of listing a long list in full. None (the
        default): every field is listed."""
        self.args_type = args_type
        self.fields = fields_of(args_type)
        self.written: dict[str, str] = dict(written or {})
        """Field -> the deprecated spelling the caller wrote it as (:func:`spelled_as`): the
        errors name what the caller wrote."""
        self.errors: list[ModelStoreInputError] = []
        self.failed: set[str] = set()
        self.given: dict[str, Any] = {}
        self.values: dict[str, Any] = {}
        self.derived: dict[str, Any] = {}
        """Values the rules derive from the fields (a parsed driver install, a KMS ARN's
        region...), for the later steps."""
        if not isinstance(raw, Mapping):
            # Nothing else can be read: no rule may run on fields that were never given.
            raise ModelStoreInputError(store, "args", raw, "a mapping of field names to values")
        for key, value in raw.items():
            field = self.fields.get(key) if isinstance(key, str) else None
            if field is None:
                allowed, hint = (
                    one_of(key, sorted(self.fields), self.reference, "fields")
                    if self.fields
                    else ("none: this component takes no fields", None)
                )
                self._refuse(ModelStoreInputError(store, "field name", key, allowed, hint=hint))
                continue
            self.given[key] = value
            # An explicit null (YAML `~`) is not the default: `backup: ~` is not False.
            null_for_default = value is None and field.default is not NO_DEFAULT
            if null_for_default or not has_type(value, field.annotation):
                self._refuse(ModelStoreInputError(store, key, value, describe(field.annotation)))
                continue
            self.values[key] = value
        for name, field in self.fields.items():
            if name not in self.given and field.default is not NO_DEFAULT:
                self.values[name] = field.default

    def _refuse(self, error: ModelStoreInputError) -> None:
        self.errors.append(self._as_written(error))
        self.failed.add(error.field)  # the field's own name: what ok() and rules ask about

    def _as_written(self, error: ModelStoreInputError) -> ModelStoreInputError:
        """``error`` naming each field as the caller wrote it: ``driver`` where they wrote the
        old spelling, never the new name they did not write (rules say the new name)."""
        if not self.written:
            return error
        words = re.compile(r"\b(" + "|".join(map(re.escape, self.written)) + r")\b")
        field = words.sub(lambda m: self.written[m.group(1)], error.field)
        allowed = words.sub(lambda m: self.written[m.group(1)], error.allowed)
        if (field, allowed) == (error.field, error.allowed):
            return error
        return error.moved(error.store, field, allowed)

    def _known(self, where: str, *names: str, refusals: bool = False) -> None:
        """Raise :class:`UnknownFieldError` for a name that is not a field (nor, with
        ``refusals``, a declared :func:`refusal_name`): a typo must fail loudly, not read as
        an unset field."""
        for name in names:
            if name not in self.fields and not (refusals and name in _REFUSAL_NAMES):
                raise UnknownFieldError(
                    self.args_type.__name__, name, list(self.fields), f"Parser.{where}"
                )

    def declared(self, *names: str) -> tuple[str, ...]:
        """Those of ``names`` the args type declares, in order: for a rule shared by args types
        that take different subsets of its fields (the EBS class fields), which says so here
        instead of reading a missing field as unset."""
        return tuple(n for n in names if n in self.fields)

    def __getitem__(self, name: str) -> Any:
        """A field's value (None when neither given nor defaulted)."""
        self._known("__getitem__", name)
        return self.values.get(name)

    def __contains__(self, name: str) -> bool:
        """Whether ``name`` was given by the caller (not defaulted)."""
        self._known("__contains__", name)
        return name in self.given

    def ok(self, *names: str) -> bool:
        """None of ``names`` (fields, or :func:`refusal_name` names) was refused."""
        self._known("ok", *names, refusals=True)
        return not any(n in self.failed for n in names)

    def set(self, name: str, value: Any) -> None:
        """Replace a field's value with its normalised or derived form (a computed default)."""
        self._known("set", name)
        self.values[name] = value

    def rule(self, check: Callable[..., Any], *names: str) -> Any:
        """Run ``check(store, *values of names)`` unless one of ``names`` was refused; a
        :class:`ModelStoreInputError` it raises is recorded (against the field it names, so
        rules reading that field are skipped). Returns what the check returns, else None."""
        self._known(f"rule({getattr(check, '__name__', check)!s})", *names)
        if not self.ok(*names):
            return None
        try:
            return check(self.store, *(self[n] for n in names))
        except ModelStoreInputError as error:
            for one in error.errors:
                self._refuse(one)
            return None

    def field_rule(self, check: Callable[..., Any], name: str, *extra: Any) -> Any:
        """Run ``check(store, name, value, *extra)`` on one field's value: the shape of the
        generic validators (``validation.py``). Skipped when the field was refused or is
        unset."""
        self._known(f"field_rule({getattr(check, '__name__', check)!s})", name)
        if not self.ok(name) or self[name] is None:
            return None
        return self.check(lambda: check(self.store, name, self[name], *extra))

    def check(self, check: Callable[[], Any]) -> Any:
        """Run a check that takes no field values (a closure); record its error."""
        try:
            return check()
        except ModelStoreInputError as error:
            for one in error.errors:
                self._refuse(one)
            return None

    def finish(self) -> dict[str, Any]:
        """The values (a :class:`FieldValues`), or every problem at once."""
        if self.errors:
            raise ModelStoreInputError.combine(self.errors)
        return FieldValues(self.args_type.__name__, self.fields, self.values)


class FieldValues(dict[str, Any]):
    """Parsed values: a dict of the fields given or defaulted, whose lookups (``[]``, ``get``,
    ``in``) refuse a name the args type does not declare with :class:`UnknownFieldError`, so a
    typo in a later step (``spec.args.get("servr")``) fails loudly instead of reading as an
    unset field."""

    def __init__(self, owner: str, known: Collection[str], values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.owner = owner
        self.known = frozenset(known)

    def _known(self, name: Any, where: str) -> None:
        if name not in self.known:
            raise UnknownFieldError(self.owner, name, self.known, f"args{where}")

    def __getitem__(self, name: str) -> Any:
        self._known(name, f"[{name!r}]")
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:
        self._known(name, f".get({name!r})")
        return super().get(name, default)

    def __contains__(self, name: object) -> bool:
        self._known(name, " (in)")
        return super().__contains__(name)


def camel_names(args_type: type) -> dict[str, str]:
    """camelCase spelling -> field name, for the config program."""
    return {f.camel: name for name, f in fields_of(args_type).items()}


def python_keys(annotation: Any, value: Any, path: str) -> tuple[Any, list[tuple[str, Any, str]]]:
    """``value`` (a field's value as a stack's config gives it, at ``path``) with the keys of
    every mapping whose annotation is a TypedDict, at any depth, spelled as their Python names:
    the component schema's camelCase spelling (``keepRevisions``) maps to its field
    (``keep_revisions``), as the component package's provider maps a multi-language program's
    inputs. Returns the value and the problems, each (path, key, what is allowed): a field
    given in both spellings. Keys that are no field's spelling are left for the parser to
    refuse, naming the fields. Python args never come through here: they take Python names."""
    annotation = _unwrap(annotation)
    problems: list[tuple[str, Any, str]] = []
    if typing.is_typeddict(annotation) and isinstance(value, Mapping):
        fields = fields_of(annotation)
        names = {**{f.camel: n for n, f in fields.items()}, **{n: n for n in fields}}
        out: dict[Any, Any] = {}
        spelled: dict[Any, Any] = {}
        for key, item in value.items():
            name = names.get(key, key) if isinstance(key, str) else key
            if name in out:
                problems.append(
                    (
                        f"{path}.{key}",
                        item,
                        f"unset when {path}.{spelled[name]} is given (the same field, spelled "
                        "differently)",
                    )
                )
                continue
            inner = fields[name].annotation if name in fields else Any
            out[name], more = python_keys(inner, item, f"{path}.{name}")
            spelled[name] = key
            problems += more
        return out, problems
    origin = typing.get_origin(annotation)
    if origin in (list, Sequence, typing.Sequence) and isinstance(value, list):
        (item_type,) = typing.get_args(annotation) or (Any,)
        items = []
        for i, item in enumerate(value):
            converted, more = python_keys(item_type, item, f"{path}[{i}]")
            items.append(converted)
            problems += more
        return items, problems
    return value, problems


def renamed(
    store: str,
    args: Any,
    renamed_fields: Mapping[str, str],
    *,
    warn: bool = True,
    stacklevel: int = 2,
) -> Any:
    """``args`` with each deprecated spelling (a key of ``renamed_fields``) moved to its new
    name, with ``warn`` a warning per use (a ``DeprecationWarning`` and a Pulumi warning); both
    spellings given is refused. ``stacklevel`` is as for :func:`warnings.warn`, counted from the
    caller. Anything but a mapping is returned as it is (the :class:`Parser` refuses it)."""
    if not isinstance(args, Mapping) or not any(old in args for old in renamed_fields):
        return args
    out = dict(args)
    for old, new in renamed_fields.items():
        if old not in out:
            continue
        if new in out:
            raise ModelStoreInputError(
                store, old, out[old], f"unset when {new} is given (it is its new name)"
            )
        if warn:
            deprecated(store, old, new, stacklevel=stacklevel + 1)
        out[new] = out.pop(old)
    return out


def deprecated(store: str, old: str, new: str, *, stacklevel: int = 2) -> None:
    """Warn that ``old`` is deprecated for ``new`` (a ``DeprecationWarning`` and a Pulumi
    warning). ``stacklevel`` is as for :func:`warnings.warn`, counted from the caller."""
    message = f"{store}: {old} is deprecated, use {new}"
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)
    pulumi.log.warn(message)


def spelled_as(args: Any, renamed_fields: Mapping[str, str]) -> dict[str, str]:
    """New name -> the deprecated spelling ``args`` gives it in (for :class:`Parser`'s
    ``written``); empty when ``args`` uses the current names."""
    if not isinstance(args, Mapping):
        return {}
    return {new: old for old, new in renamed_fields.items() if old in args and new not in args}


def parse_args(
    store: str,
    args_type: type,
    raw: Any,
    rules: Callable[[Parser], None],
    *,
    renamed_fields: Mapping[str, str] | None = None,
    warn: bool = True,
    component: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse ``raw`` against ``args_type``'s fields and run ``rules``: the values of every
    field (None where neither given nor defaulted) and what the rules derived; raises one
    :class:`ModelStoreInputError` listing every problem. For components that are not stores
    (stores parse through ``ModelStore.parse``); ``component`` as for :class:`Parser`."""
    check_renames(store, args_type, renamed_fields or {})
    renames = renamed_fields or {}
    p = Parser(
        store,
        args_type,
        renamed(store, raw, renames, warn=warn, stacklevel=3),
        written=spelled_as(raw, renames),
        component=component,
    )
    rules(p)
    values = p.finish()
    every = {name: values.get(name) for name in p.fields}
    return FieldValues(p.args_type.__name__, p.fields, every), dict(p.derived)


def outputs_of(component: type) -> dict[str, str]:
    """camelCase output name -> attribute, for every ``pulumi.Output`` a component class
    annotates (the class's own first, then its bases'): the outputs it registers, declared once
    as class annotations (which the component analyzer reads too)."""
    found: dict[str, str] = {}
    for klass in component.__mro__:
        if klass in (object, pulumi.Resource, pulumi.ComponentResource):
            continue
        for attribute, hint in inspect.get_annotations(klass).items():
            if attribute.startswith("_") or typing.get_origin(hint) is not pulumi.Output:
                continue
            found.setdefault(camel_case(attribute), attribute)
    return found
