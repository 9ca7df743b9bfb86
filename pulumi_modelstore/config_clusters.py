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

Every problem is one line naming its key path (``modelstore:clusters.prod.kind``).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi

from .errors import ModelStoreInputError
from .fields import describe, has_type

ROOT = "modelstore:clusters"
KINDS = ("aks", "eks", "gke", "kubernetes")
COMMON = ("kind", "name", "context", "kubeconfig", "stack_reference", "outputs")
# The fields naming the cluster, by kind (besides `name`).
NAMING: dict[str, tuple[str, ...]] = {
    "eks": (),
    "gke": ("location", "project"),
    "aks": ("resource_group",),
    "kubernetes": (),
}
EKS_ATTRIBUTES: dict[str, Any] = {
    "vpc_id": str,
    "cluster_subnet_ids": list[str],
    "node_security_group_ids": list[str],
    "region": str,
    "oidc_issuer": str,
}
# Facts fields the entry's naming fields give (not attributes), by kind.
_FROM_ENTRY = {
    "gke": {"name", "project", "location", "region"},
    "aks": {"name", "resource_group_name"},
}
STRING_FIELDS = ("name", "context", "kubeconfig", "stack_reference", "location", "project")


def _error(path: str, value: Any, allowed: str) -> ModelStoreInputError:
    return ModelStoreInputError(None, path, value, allowed)


def _facts_class(kind: str) -> Any:
    if kind == "gke":
        from .gcp.cluster import GkeClusterFacts

        return GkeClusterFacts
    if kind == "aks":
        from .azure.cluster import AksClusterFacts

        return AksClusterFacts
    return None


def attribute_types(kind: str) -> dict[str, Any]:
    """The attributes a ``kind`` of cluster takes explicitly -> their types."""
    if kind == "eks":
        return dict(EKS_ATTRIBUTES)
    facts = _facts_class(kind)
    if facts is None:
        return {}
    hints = typing.get_type_hints(facts)
    return {
        f.name: _plain(hints[f.name])
        for f in dataclasses.fields(facts)
        if f.name not in _FROM_ENTRY[kind]
    }


def required_attributes(kind: str) -> list[str]:
    facts = _facts_class(kind)
    if facts is None:
        return []
    return [
        f.name
        for f in dataclasses.fields(facts)
        if f.name not in _FROM_ENTRY[kind]
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]


def _plain(annotation: Any) -> Any:
    """A facts annotation as config writes it: a tuple of strings is a list."""
    if typing.get_origin(annotation) is tuple:
        return list[str]
    return annotation


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


def _eks_fact_errors(
    path: str, facts: Mapping[str, Any], sources: Mapping[str, str] | None = None
) -> list[ModelStoreInputError]:
    """The values of an EKS cluster's facts as AWS writes them (the rules a store's own fact
    fields get, ``aws.cluster._check_given_facts``), each error naming ``path.<fact>`` (or its
    ``sources`` entry): checked before any provider or store registers."""
    try:
        from .aws.cluster import _check_given_facts
    except ImportError:  # no AWS extra: the eks stores are refused, naming it
        return []
    errors: list[ModelStoreInputError] = []
    for name in EKS_ATTRIBUTES:
        if name not in facts:
            continue
        one = {fact: facts[name] if fact == name else None for fact in EKS_ATTRIBUTES}
        try:
            _check_given_facts("", *one.values())
        except ModelStoreInputError as error:
            where = (sources or {}).get(name) or f"{path}.{name}"
            errors.extend(_error(where, e.value, e.allowed) for e in error.errors)
    return errors


def _name_errors(kind: str, name: Any, where: str, note: str = "") -> list[ModelStoreInputError]:
    """An eks entry's cluster name as every EKS API takes it (``aws.validation
    .eks_cluster_name``), checked before any provider registers (the scope would refuse it only
    once made, after the entry's provider)."""
    if kind != "eks":
        return []
    try:
        from .aws.validation import eks_cluster_name
    except ImportError:  # no AWS extra: the eks stores are refused, naming it
        return []
    try:
        eks_cluster_name("", where, name)
    except ModelStoreInputError as error:
        return [_error(where, e.value, f"{e.allowed}{note}") for e in error.errors]
    return []


def _entry(key: str, raw: Any) -> ClusterEntry:
    path = f"{ROOT}.{key}"
    if not isinstance(raw, Mapping):
        raise _error(path, raw, "a mapping with kind (one of aks, eks, gke, kubernetes) and fields")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise _error(f"{path}.kind", kind, f"one of {', '.join(KINDS)}")
    errors: list[ModelStoreInputError] = []
    attributes_allowed = attribute_types(kind)
    allowed = [*COMMON, *NAMING[kind], *(["attributes"] if attributes_allowed else [])]
    fields: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "kind":
            continue
        if name not in allowed:
            errors.append(
                _error(
                    f"{path}.{name}",
                    name,
                    f"a field of a {kind} cluster: one of {', '.join(sorted(allowed))}",
                )
            )
        elif name in STRING_FIELDS or name == "resource_group":
            if not isinstance(value, str) or not value:
                errors.append(_error(f"{path}.{name}", value, "a non-empty string"))
            else:
                fields[name] = value
    if "name" in fields:
        errors.extend(_name_errors(kind, fields["name"], f"{path}.name"))
    elif "name" not in raw:
        note = " (the entry's key names the cluster when name is unset)"
        errors.extend(_name_errors(kind, key, path, note))
    attributes = _attributes(path, kind, raw.get("attributes"), attributes_allowed, errors)
    if kind == "eks":
        errors.extend(_eks_fact_errors(f"{path}.attributes", attributes))
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
    entry = ClusterEntry(key, kind, fields, attributes, reference, outputs, sources)
    # An attribute given but refused above is not also reported missing.
    named = raw.get("attributes")
    given = set(named) if isinstance(named, Mapping) else set()
    errors.extend(_complete(entry, given=set(outputs) | given))
    if kind == "gke":  # what GCP would refuse, before anything registers
        from .gcp.cluster import entry_problems

        errors.extend(entry_problems(path, key, fields, attributes, sources))
    if errors:
        raise ModelStoreInputError.combine(errors)
    return entry


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
            errors.append(
                _error(
                    where, name, f"a fact of a {kind} cluster: one of {', '.join(sorted(types))}"
                )
            )
        elif not _typed(value, types[name]):
            errors.append(_error(where, value, describe(types[name])))
        elif (problem := _fact_problem(kind, name, value)) is not None:
            errors.append(_error(where, *problem))
        else:
            found[name] = value
    return found


def _fact_problem(kind: str, name: str, value: Any) -> tuple[Any, str] | None:
    """A fact's value rules beyond its type (the offending value and what is allowed)."""
    if kind == "aks":
        from .azure.cluster import fact_problem

        return fact_problem(name, value)
    return None


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
            errors.append(
                _error(
                    where,
                    name,
                    f"a field a {kind} cluster reads from a stack: one of {', '.join(allowed)}",
                )
            )
        elif not isinstance(output, str) or not output:
            errors.append(_error(where, output, "the name of an output of the referenced stack"))
        else:
            found[name] = output
    return found


def _readable(kind: str, attributes: Mapping[str, Any]) -> list[str]:
    """What a ``kind`` of cluster entry may read from a stack's outputs."""
    return sorted({"kubeconfig", "name", *NAMING[kind], *attributes})


def _complete(entry: ClusterEntry, given: set[str]) -> list[ModelStoreInputError]:
    """What a kind needs (a GKE location, an AKS resource group, every required fact when
    attributes are given), unless a stack output gives it."""
    have = set(entry.fields) | set(entry.attributes) | given
    needed = {"gke": ["location"], "aks": ["resource_group"]}.get(entry.kind, [])
    errors = [
        _error(f"{entry.path}.{name}", None, _NEEDS[name]) for name in needed if name not in have
    ]
    if entry.kind in ("gke", "aks") and (
        entry.attributes or given & set(attribute_types(entry.kind))
    ):
        missing = [a for a in required_attributes(entry.kind) if a not in have]
        if entry.kind == "gke" and "project" not in have:
            missing.insert(0, "project")
        errors += [
            _error(
                f"{entry.path}.attributes.{name}" if name != "project" else f"{entry.path}.project",
                None,
                "given with the cluster's other attributes (nothing is looked up when they are)",
            )
            for name in missing
        ]
    return errors


_NEEDS = {
    "location": "the GKE cluster's region or zone (a cluster name is unique only within its "
    "location)",
    "resource_group": "the AKS cluster's resource group (a cluster name is unique only within "
    "its resource group)",
}


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
        types = {"name": str, "location": str, "project": str, "resource_group": str}
        types.update(attribute_types(entry.kind))
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
            elif (problem := _fact_problem(entry.kind, name, value)) is not None:
                bad, allowed = problem
                errors.append(
                    _error(
                        where,
                        bad,
                        f"{allowed} (the value of output {output!r} of stack {entry.reference})",
                    )
                )
            elif name in attribute_types(entry.kind):
                entry.attributes[name] = value
            else:
                entry.fields[name] = value
        if "name" in entry.outputs and "name" in entry.fields:
            where = f"{entry.path}.outputs.name"
            errors.extend(_name_errors(entry.kind, entry.fields["name"], where))
        if entry.kind == "eks":
            read = {n: entry.attributes[n] for n in entry.outputs if n in entry.attributes}
            sources = {n: f"{entry.path}.outputs.{n}" for n in read}
            errors.extend(_eks_fact_errors(entry.path, read, sources))
        if entry.kind == "gke":  # what the stack gave, checked as the entry's own values are
            from .gcp.cluster import entry_problems

            given = set(entry.outputs) & (set(entry.fields) | set(entry.attributes))
            errors.extend(
                entry_problems(
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
    a = entry.attributes
    if entry.kind == "eks":
        from .aws.cluster import EksCluster

        return EksCluster(name, {"cluster_name": name, **a}, opts, store=store), opts  # type: ignore[typeddict-item]
    if entry.kind == "gke":
        from .gcp.cluster import GkeCluster, GkeClusterFacts, region_of

        f = entry.fields
        args = {"cluster_name": name, "location": f["location"]}
        if f.get("project"):
            args["project"] = f["project"]
        facts = None
        if a:
            facts = GkeClusterFacts(
                name=name,
                project=f["project"],
                location=f["location"],
                region=region_of(f["location"]),
                **_as_facts(a),
            )
        return GkeCluster(name, args, opts, store=store, facts=facts), opts  # type: ignore[arg-type]
    if entry.kind == "aks":
        from .azure.cluster import AksCluster, AksClusterFacts

        group = entry.fields["resource_group"]
        facts_aks = None
        if a:
            facts_aks = AksClusterFacts(
                name=name,
                resource_group_name=group,
                **_as_facts(a),
            )
        args_aks = {"cluster_name": name, "cluster_resource_group_name": group}
        return AksCluster(name, args_aks, opts, store=store, facts=facts_aks), opts  # type: ignore[arg-type]
    from .cluster import KubernetesCluster

    return KubernetesCluster(name, {}, opts, store=store), opts


def _as_facts(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Config values as a facts dataclass holds them: lists as tuples, mappings as dicts."""
    return {
        k: tuple(v) if isinstance(v, list) else dict(v) if isinstance(v, Mapping) else v
        for k, v in attributes.items()
    }


# A store's cluster fields -> the entry field they come from, by kind (for errors' key paths).
STORE_FIELDS: dict[str, dict[str, str]] = {
    "eks": {"cluster_name": "name", **{a: a for a in EKS_ATTRIBUTES}},
    "gke": {"cluster_name": "name", "location": "location", "project": "project"},
    "aks": {"cluster_name": "name", "cluster_resource_group_name": "resource_group"},
    "kubernetes": {"cluster_name": "name"},
}
