"""``modelstore:clusters`` of the config program: the clusters stores name with ``cluster: <key>``.

Each entry has a ``kind`` (``eks``, ``gke``, ``aks``, or ``kubernetes`` for a kind, minikube or
on-prem cluster known only through its kubeconfig) and gives its cluster one of three ways:

- by name, with lookups (the default): ``name`` (default: the key); gke also ``location`` and
  ``project``, aks ``resource_group``. The scope looks the cluster's facts up once.
- by explicit attributes: ``attributes``, the facts a lookup would find (eks: ``vpc_id``,
  ``cluster_subnet_ids``, ``node_security_group_ids``, ``region``, ``oidc_issuer``; gke and aks:
  the fields of ``GkeClusterFacts`` / ``AksClusterFacts``). Nothing is looked up for what is
  given (an EKS cluster missing some facts has the rest looked up).
- from the platform stack that owns the cluster: ``stack_reference: <org>/<project>/<stack>``
  and ``outputs``, which of its outputs gives which of the fields above (and ``kubeconfig``).
  Facts are read as plain values before any store registers; the kubeconfig goes to the
  cluster's Kubernetes provider as an Output.

``context`` (a kubeconfig context) or ``kubeconfig`` (a path or the kubeconfig itself) gives the
cluster a Kubernetes provider of its own; two clusters in one stack need one each (at most one
may use the default provider).

``velero: {enabled, bucket, schedule, retention_days}`` installs Velero on an eks, gke or aks
cluster, with its bucket and workload identity, and a ``Schedule`` per store whose ``backup``
is enabled (``kube.velero``).

Every problem is one line naming its key path (``modelstore:clusters.prod.kind``).
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

import pulumi

from .cluster import ClusterScope
from .errors import ModelStoreInputError, one_of
from .extras import CLOUD_ROOMS, MissingExtraError, room_of_kind
from .fields import describe, has_type
from .kube.velero import VeleroSettings, parse_velero

ROOT = "modelstore:clusters"
KINDS = tuple(sorted(("kubernetes", *(k for room in CLOUD_ROOMS.values() for k in room.kinds))))
"""Every kind of cluster entry, whether or not its room's extra is installed."""
COMMON = ("kind", "name", "context", "kubeconfig", "stack_reference", "outputs", "velero")
PROVIDER_FIELDS = ("name", "context", "kubeconfig", "stack_reference")
"""The string fields every entry may give (a kind's naming fields are strings too)."""


def _error(path: str, value: Any, allowed: str, hint: str | None = None) -> ModelStoreInputError:
    return ModelStoreInputError(None, path, value, allowed, hint=hint)


def _unknown(where: str, name: str, what: str, known: Iterable[str]) -> ModelStoreInputError:
    """An entry's key ``name`` (at ``where``) that is none of ``known``, with the one it most
    likely misspells; ``what`` says what a key there is. Listed in full: the reference lists
    components' fields, not these keys."""
    allowed, hint = one_of(name, known)
    return _error(where, name, f"{what}: {allowed}", hint)


def scope_class(kind: str) -> type[ClusterScope]:
    """The scope class of ``kind`` (``ClusterScope.__init_subclass__(kind=...)``), its room
    imported first. Without the room's extra, the base (an entry of that kind then takes no
    attributes or naming fields; its stores are refused, naming the extra)."""
    room = room_of_kind(kind)
    if room is not None:
        try:
            import_module(f"{__package__}.{room}")
        except MissingExtraError:
            return ClusterScope
    return ClusterScope.kinds().get(kind, ClusterScope)


def attribute_types(kind: str) -> dict[str, Any]:
    """The attributes a ``kind`` of cluster takes explicitly -> their types."""
    return scope_class(kind).attribute_types()


def store_fields(kind: str) -> Mapping[str, str]:
    """A store's cluster fields -> the entry field they come from, for a ``kind`` of entry."""
    return scope_class(kind).entry.store_fields


@dataclass
class ClusterEntry:
    """One checked entry of ``modelstore:clusters``."""

    key: str
    kind: str
    fields: dict[str, Any]
    """name, location, project, resource_group, context, kubeconfig (given ones)."""
    attributes: dict[str, Any]
    reference: str | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    """Field or attribute (or ``kubeconfig``) -> the referenced stack's output name."""
    sources: dict[str, str] = field(default_factory=dict)
    """Field or attribute -> the key path its value came from (for errors)."""
    velero: VeleroSettings | None = None
    """The entry's ``velero`` (``kube.velero``); None: not given."""

    @property
    def path(self) -> str:
        return f"{ROOT}.{self.key}"

    @property
    def name(self) -> str:
        return str(self.fields.get("name") or self.key)

    def own_provider(self) -> bool:
        return bool(
            self.fields.get("context")
            or self.fields.get("kubeconfig")
            or "kubeconfig" in self.outputs
        )


def parse_clusters(raw: Any) -> tuple[dict[str, ClusterEntry], list[ModelStoreInputError]]:
    """Check ``modelstore:clusters`` (None: no clusters); every problem, one line each."""
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        return {}, [_error(ROOT, raw, "a mapping of cluster keys to their kind and fields")]
    entries: dict[str, ClusterEntry] = {}
    errors: list[ModelStoreInputError] = []
    for key, value in raw.items():
        if not isinstance(key, str) or not key:
            errors.append(_error(ROOT, key, "a mapping whose cluster keys are non-empty strings"))
            continue
        try:
            entries[key] = _entry(key, value)
        except ModelStoreInputError as error:
            errors.extend(error.errors)
    errors.extend(_one_entry_per_context(entries))
    default_users = [e.key for e in entries.values() if not e.own_provider()]
    for extra in default_users[1:]:
        errors.append(
            _error(
                f"{ROOT}.{extra}.context",
                None,
                "a kubeconfig context (or kubeconfig) of its own: cluster "
                f"{default_users[0]!r} already uses the default Kubernetes provider, and two "
                "clusters cannot share one",
            )
        )
    return entries, errors


def _one_entry_per_context(entries: Mapping[str, ClusterEntry]) -> list[ModelStoreInputError]:
    """Two entries reaching one cluster through one kubeconfig context (the same ``context`` in
    the same ``kubeconfig``, or the same kubeconfig's current context) would be two cluster
    scopes on one real cluster: each CSI driver installed twice, name collisions unchecked.
    Kubeconfigs read from a stack (Outputs) are not compared."""
    first: dict[tuple[str | None, str | None], str] = {}
    errors: list[ModelStoreInputError] = []
    for entry in entries.values():
        context, kubeconfig = entry.fields.get("context"), entry.fields.get("kubeconfig")
        if context is None and kubeconfig is None:
            continue  # the default provider: at most one entry (parse_clusters)
        if not isinstance(context, str | None) or not isinstance(kubeconfig, str | None):
            continue
        where = "context" if context is not None else "kubeconfig"
        other = first.setdefault((kubeconfig, context), entry.key)
        if other != entry.key:
            errors.append(
                _error(
                    f"{entry.path}.{where}",
                    entry.fields[where],
                    f"a {where} no other cluster entry uses: modelstore:clusters.{other} "
                    "already reaches that cluster through it (two entries on one cluster would "
                    f"install each CSI driver twice: give its stores cluster {other})",
                )
            )
    return errors


def _entry(key: str, raw: Any) -> ClusterEntry:
    path = f"{ROOT}.{key}"
    if not isinstance(raw, Mapping):
        raise _error(path, raw, "a mapping with kind (one of aks, eks, gke, kubernetes) and fields")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise _error(f"{path}.kind", kind, *one_of(kind, KINDS))
    if (other := _kind_given(path, kind, raw)) is not None:
        raise other
    errors: list[ModelStoreInputError] = []
    scope = scope_class(kind)
    attributes_allowed = scope.attribute_types()
    allowed = _keys(kind)
    fields: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "kind":
            continue
        if name not in allowed:
            what = f"a field of a {kind} cluster"
            errors.append(_unknown(f"{path}.{name}", name, what, sorted(allowed)))
        elif name in PROVIDER_FIELDS or name in scope.entry.naming:
            if not isinstance(value, str) or not value:
                errors.append(_error(f"{path}.{name}", value, "a non-empty string"))
            else:
                fields[name] = value
    if "name" in fields:
        errors.extend(scope.name_problems(fields["name"], f"{path}.name"))
    elif "name" not in raw:
        note = " (the entry's key names the cluster when name is unset)"
        errors.extend(scope.name_problems(key, path, note))
    attributes = _attributes(path, kind, raw.get("attributes"), attributes_allowed, errors)
    errors.extend(scope.attribute_problems(f"{path}.attributes", attributes))
    reference = fields.pop("stack_reference", None)
    if reference is not None and raw.get("outputs") is None:
        # Refused, not read as "look the cluster up by its key": a reference that reads
        # nothing is a mistake, and the lookup would find whatever cluster bears that name.
        errors.append(
            _error(
                f"{path}.outputs",
                None,
                "set when stack_reference is given: which of the stack's outputs give this "
                f"cluster's {', '.join(_readable(kind, attributes_allowed))} (e.g. "
                "{kubeconfig: kubeconfig, name: clusterName})",
            )
        )
    outputs = _outputs(path, kind, raw.get("outputs"), reference, attributes_allowed, errors)
    if reference is not None and reference.count("/") != 2:
        errors.append(
            _error(
                f"{path}.stack_reference", reference, "a stack's full name <org>/<project>/<stack>"
            )
        )
    sources = {name: f"{path}.{name}" for name in fields}
    sources.update({name: f"{path}.attributes.{name}" for name in attributes})
    sources.update({name: f"{path}.outputs.{name}" for name in outputs})
    for name in outputs:
        if name in fields or name in attributes:
            errors.append(
                _error(
                    f"{path}.outputs.{name}",
                    outputs[name],
                    f"unset when {sources[name].replace('outputs.', '', 1)} is given (one "
                    "source per field)",
                )
            )
    velero, velero_errors = parse_velero(f"{path}.velero", kind, raw.get("velero"))
    errors.extend(velero_errors)
    entry = ClusterEntry(key, kind, fields, attributes, reference, outputs, sources, velero)
    # An attribute given but refused above is not also reported missing.
    named = raw.get("attributes")
    given = set(named) if isinstance(named, Mapping) else set()
    errors.extend(_complete(entry, given=set(outputs) | given))
    # What the cloud would refuse, before anything registers.
    errors.extend(scope.entry_problems(path, key, fields, attributes, sources))
    if errors:
        raise ModelStoreInputError.combine(errors)
    return entry


def _keys(kind: str) -> list[str]:
    """The keys an entry of ``kind`` takes (``attributes`` where it takes any)."""
    scope = scope_class(kind)
    attributes = ["attributes"] if scope.attribute_types() else []
    return [*COMMON, *scope.entry.naming, *attributes]


def _kind_given(path: str, kind: str, raw: Mapping[Any, Any]) -> ModelStoreInputError | None:
    """One line when an entry's keys and attributes are another kind's: its kind is the
    mistake, not each key (``kind: gke`` with an EKS cluster's ``vpc_id`` and ``region``).
    None when the kind takes them, or when no other kind takes them all."""
    names = {n for n in raw if n != "kind"}
    facts = raw.get("attributes")
    given = set(facts) if isinstance(facts, Mapping) else set()
    strange = sorted(names - set(_keys(kind)))
    strange += sorted(f"attributes.{a}" for a in given - set(attribute_types(kind)))
    if not strange:
        return None
    fits = [
        k
        for k in KINDS
        if k != kind and names <= set(_keys(k)) and given <= set(attribute_types(k))
    ]
    if not fits:
        return None
    return _error(
        f"{path}.kind",
        kind,
        f"{' or '.join(fits)} (the kind that takes {', '.join(strange)})",
    )


def _attributes(
    path: str, kind: str, raw: Any, types: Mapping[str, Any], errors: list[ModelStoreInputError]
) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        errors.append(_error(f"{path}.attributes", raw, "a mapping of the cluster's facts"))
        return {}
    found: dict[str, Any] = {}
    for name, value in raw.items():
        where = f"{path}.attributes.{name}"
        if name not in types:
            errors.append(_unknown(where, name, f"a fact of a {kind} cluster", sorted(types)))
        elif not _typed(value, types[name]):
            errors.append(_error(where, value, describe(types[name])))
        elif (problem := scope_class(kind).fact_problem(name, value)) is not None:
            errors.append(_error(where, *problem))
        else:
            found[name] = value
    return found


def _typed(value: Any, annotation: Any) -> bool:
    """``has_type``, but None only where the fact may be None."""
    if value is None:
        return type(None) in typing.get_args(annotation)
    return has_type(value, annotation)


def _outputs(
    path: str,
    kind: str,
    raw: Any,
    reference: str | None,
    attributes: Mapping[str, Any],
    errors: list[ModelStoreInputError],
) -> dict[str, str]:
    if raw is None:
        return {}
    if reference is None:
        errors.append(
            _error(f"{path}.outputs", raw, "unset unless stack_reference names the stack to read")
        )
        return {}
    if not isinstance(raw, Mapping):
        errors.append(_error(f"{path}.outputs", raw, "a mapping of fields to output names"))
        return {}
    allowed = _readable(kind, attributes)
    found: dict[str, str] = {}
    for name, output in raw.items():
        where = f"{path}.outputs.{name}"
        if name not in allowed:
            what = f"a field a {kind} cluster reads from a stack"
            errors.append(_unknown(where, name, what, allowed))
        elif not isinstance(output, str) or not output:
            errors.append(_error(where, output, "the name of an output of the referenced stack"))
        else:
            found[name] = output
    return found


def _readable(kind: str, attributes: Mapping[str, Any]) -> list[str]:
    """What a ``kind`` of cluster entry may read from a stack's outputs."""
    return sorted({"kubeconfig", "name", *scope_class(kind).entry.naming, *attributes})


def _complete(entry: ClusterEntry, given: set[str]) -> list[ModelStoreInputError]:
    """What a kind needs (a GKE location, an AKS resource group, every required fact when
    attributes are given), unless a stack output gives it."""
    scope = scope_class(entry.kind)
    have = set(entry.fields) | set(entry.attributes) | given
    errors = [
        _error(f"{entry.path}.{name}", None, allowed)
        for name, allowed in scope.entry.needed.items()
        if name not in have
    ]
    if scope.entry.facts_type is not None and (
        entry.attributes or given & set(scope.attribute_types())
    ):
        missing = [f for f in scope.entry.with_attributes if f not in have]
        missing += [a for a in scope.required_attributes() if a not in have]
        errors += [
            _error(
                f"{entry.path}.{name}"
                if name in scope.entry.with_attributes
                else f"{entry.path}.attributes.{name}",
                None,
                "given with the cluster's other attributes (nothing is looked up when they are)",
            )
            for name in missing
        ]
    return errors


# ---- reading a platform stack -------------------------------------------------------------------


def read_references(entries: Mapping[str, ClusterEntry]) -> list[ModelStoreInputError]:
    """Read each entry's stack reference (one ``StackReference`` per referenced stack) and
    fill its fields and attributes from the outputs it names, as plain values; the kubeconfig
    stays an Output (``entry.fields['kubeconfig']``)."""
    from pulumi.runtime.sync_await import _sync_await

    references: dict[str, pulumi.StackReference] = {}
    errors: list[ModelStoreInputError] = []
    for entry in entries.values():
        if entry.reference is None:
            continue
        ref = references.get(entry.reference)
        if ref is None:
            ref = references[entry.reference] = pulumi.StackReference(entry.reference)
        outputs: Any = _sync_await(ref.outputs.future())
        names = sorted(outputs or {})
        scope = scope_class(entry.kind)
        types: dict[str, Any] = {"name": str, **{n: str for n in scope.entry.naming}}
        types.update(scope.attribute_types())
        for name, output in entry.outputs.items():
            where = f"{entry.path}.outputs.{name}"
            if output not in names:
                errors.append(
                    _error(
                        where,
                        output,
                        f"an output of stack {entry.reference} (it has: "
                        f"{', '.join(names) or 'none'})",
                    )
                )
                continue
            if name == "kubeconfig":
                entry.fields["kubeconfig"] = ref.require_output(output)
                continue
            details = _sync_await(ref.get_output_details(output))
            value = details.value if details.value is not None else details.secret_value
            if not _typed(value, types[name]) or value is None:
                errors.append(
                    _error(
                        where,
                        value,
                        f"{describe(types[name])} (the value of output {output!r} of stack "
                        f"{entry.reference})",
                    )
                )
            elif (problem := scope.fact_problem(name, value)) is not None:
                bad, allowed = problem
                errors.append(
                    _error(
                        where,
                        bad,
                        f"{allowed} (the value of output {output!r} of stack {entry.reference})",
                    )
                )
            elif name in scope.attribute_types():
                entry.attributes[name] = value
            else:
                entry.fields[name] = value
        if "name" in entry.outputs and "name" in entry.fields:
            where = f"{entry.path}.outputs.name"
            errors.extend(scope.name_problems(entry.fields["name"], where))
        read = {n: entry.attributes[n] for n in entry.outputs if n in entry.attributes}
        sources = {n: f"{entry.path}.outputs.{n}" for n in read}
        errors.extend(scope.attribute_problems(entry.path, read, sources))
        # What the stack gave, checked as the entry's own values are.
        given = set(entry.outputs) & (set(entry.fields) | set(entry.attributes))
        errors.extend(
            scope.entry_problems(
                entry.path, entry.key, entry.fields, entry.attributes, entry.sources, given
            )
        )
    return errors


# ---- the scopes ---------------------------------------------------------------------------------


def scope_name(entry: ClusterEntry) -> str:
    return entry.name


def make_scope(entry: ClusterEntry, store: str) -> tuple[Any, pulumi.ResourceOptions | None]:
    """The entry's cluster scope and the options its stores take (its Kubernetes provider).
    The scope registers when ``store``, the first store on it, does (not if its preflight
    fails); the provider registers now."""
    import pulumi_kubernetes as k8s

    opts: pulumi.ResourceOptions | None = None
    context, kubeconfig = entry.fields.get("context"), entry.fields.get("kubeconfig")
    if context is not None or kubeconfig is not None:
        provider = k8s.Provider(
            f"{entry.key}-kubernetes",
            context=context,
            kubeconfig=kubeconfig,
        )
        opts = pulumi.ResourceOptions(providers=[provider])
    name = scope_name(entry)
    scope = scope_class(entry.kind)
    return scope.from_entry_values(name, entry.fields, entry.attributes, opts, store), opts
