"""The config-driven program behind ``pulumi up -s <env>`` on this repository.

It reads ``modelstore:stores``, a mapping of store name to its backend and fields::

    modelstore:stores:
      llama:
        backend: fsx-lustre
        cluster_name: prod-eks
        readers: [inference]

Field names are the backend's argument names (``storage_capacity_gib``); camelCase spellings
(``storageCapacityGib``) are accepted too. Each store's outputs are exported under its name.

A gated model's token goes in ``modelstore:tokens``, a mapping of store name to token set as a
secret (``pulumi config set --secret --path 'modelstore:tokens.llama' <token>``): the program
passes it to the store as ``model.token``, a secret Output. A token in ``modelstore:stores``
(kept in the stack's file as written) or a ``modelstore:tokens`` that is not a secret is refused.

A store may name its cluster from ``modelstore:clusters`` instead (``cluster: prod``; see
``config_clusters``): the program makes each cluster's scope (and its Kubernetes provider) once
and passes it to the stores as ``cluster``. A store naming an unknown cluster, or a cluster of
another kind than its backend serves (an efs store on a gke cluster), is refused.

Every problem is one line naming its key path (``modelstore:stores.llama.backend must be ...``,
``modelstore:clusters.prod.kind must be ...``), all at once, before anything registers
(:func:`main`; :func:`build_stores` called from Python names the store, as the library does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping
from importlib import import_module
from typing import Any

import pulumi

from . import config_clusters as cc
from .backup import Backup
from .cluster import NameBook
from .errors import REFERENCE, ModelStoreInputError, one_of, suggestion
from .extras import CLOUD_ROOMS, MissingExtraError, install_hint, room_of_backend, room_of_kind
from .fields import camel_case, fields_of, python_keys
from .kube import velero as kv
from .modelsection import REDACTED
from .store import STORE_LABEL, ModelStore

BACKEND_ROOMS: dict[str, str] = {
    **{backend: room for room, spec in CLOUD_ROOMS.items() for backend in spec.backends},
    "local": "local",
    "nfs": "nfs",
}
"""Backend name -> the room (``pulumi_modelstore.<room>``) whose import registers it
(``backend=``): a stack imports only the rooms of the backends it names, so a local or AWS-only
stack loads no other cloud's SDK. The tests check it against the registry."""


def backend_class(backend: str) -> type[ModelStore] | None:
    """The store class of ``backend``, its room imported first; None for a name no room
    registers, or one whose room's extra is not installed."""
    room = BACKEND_ROOMS.get(backend)
    if room is None:
        return None
    try:
        import_module(f".{room}", __package__)
    except MissingExtraError:
        return None
    return ModelStore.backends().get(backend)


def installed_backends() -> dict[str, type[ModelStore]]:
    """Backend name -> store class, for every backend whose room's extra is installed (every
    room imported)."""
    found = {name: backend_class(name) for name in sorted(BACKEND_ROOMS)}
    return {name: cls for name, cls in found.items() if cls is not None}


def __getattr__(name: str) -> Any:
    """``BACKENDS``: :func:`installed_backends`, made when first asked for (it imports every
    installed cloud's room)."""
    if name == "BACKENDS":
        return installed_backends()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def snake_case(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def spellings(store_class: type[ModelStore]) -> dict[str, str]:
    """Every spelling the config program takes for ``store_class``'s fields -> the field: the
    declared name, its camelCase, and the same for a deprecated name (the store warns of it and
    moves it to its new one). Nothing else is translated: ``CLAIM_NAME`` reaches the parser as
    written and is refused there, listing the names."""
    names = [*fields_of(store_class.args_type), *store_class.renamed_fields]
    return {**{camel_case(n): n for n in names}, **{n: n for n in names}}


def store_args(
    name: str, store_class: type[ModelStore], fields: Mapping[Any, Any]
) -> dict[Any, Any]:
    """A store's config fields as its argument names: camelCase spellings map to the field
    they spell; one field given in both spellings is refused. ``backend`` is the config
    program's own key."""
    names = spellings(store_class)
    declared = fields_of(store_class.args_type)
    args: dict[Any, Any] = {}
    spelled: dict[Any, Any] = {}
    problems: list[ModelStoreInputError] = []
    for key, value in fields.items():
        if key == "backend":
            continue
        field = names.get(key, key) if isinstance(key, str) else key
        if field in args:
            raise ModelStoreInputError(
                name,
                key,
                value,
                f"unset when {spelled[field]} is given (the same field, spelled differently)",
            )
        if field in declared:
            # The sections' keys too, at any depth: one camelCase rule for the whole config.
            value, nested = python_keys(declared[field].annotation, value, field)
            problems += [ModelStoreInputError(name, *problem) for problem in nested]
        args[field], spelled[field] = value, key
    if problems:
        raise ModelStoreInputError.combine(problems)
    return args


STORES_ALLOWED = "a mapping of store names to their fields, with at least one store"
TOKENS = "modelstore:tokens"
SET_TOKEN = f"pulumi config set --secret --path '{TOKENS}.<store>' <token>"


def _tokens(tokens: Any, stores: Any, secret: bool) -> tuple[dict[str, Any], list[Any]]:
    """``modelstore:tokens`` checked (a secret config key, a mapping of the names of stores
    with a model section to strings): (store -> token, the problems). No value is echoed."""
    if tokens is None or tokens == {}:  # unset (Pulumi.yaml's default)
        return {}, []
    if not secret:
        allowed = (
            f"set as a secret ({SET_TOKEN}): a plain value is kept in the stack's file as written"
        )
        return {}, [ModelStoreInputError(None, TOKENS, REDACTED, allowed)]
    if not isinstance(tokens, Mapping):
        allowed = f"a mapping of store names to their tokens ({SET_TOKEN})"
        return {}, [ModelStoreInputError(None, TOKENS, REDACTED, allowed)]
    modelled = (
        [
            n
            for n, f in stores.items()
            if isinstance(f, Mapping) and isinstance(f.get("model"), Mapping)
        ]
        if isinstance(stores, Mapping)
        else []
    )
    found: dict[str, Any] = {}
    errors: list[Any] = []
    for store, token in tokens.items():
        if store not in modelled:
            names = ", ".join(modelled) or "none"
            allowed = f"a store of modelstore:stores with a model section ({names})"
            errors.append(ModelStoreInputError(None, f"{TOKENS} key", store, allowed))
        elif not isinstance(token, str) or not token:
            errors.append(
                ModelStoreInputError(None, f"{TOKENS}.{store}", REDACTED, "the token, a string")
            )
        else:
            found[store] = token
    return found, errors


def _no_token_in_stores(name: str, fields: Mapping[Any, Any]) -> None:
    """A ``model.token`` written in ``modelstore:stores`` is refused: that key is no secret."""
    model = fields.get("model")
    if not isinstance(model, Mapping):
        return
    token = model.get("token")
    if token is not None and not isinstance(token, pulumi.Output):
        allowed = (
            f"unset in modelstore:stores, which is kept as written: a token goes in {TOKENS}, "
            f"set as a secret ({SET_TOKEN})"
        )
        raise ModelStoreInputError(name, "model.token", REDACTED, allowed)


FIELDS_ALLOWED = "a mapping of field names to values"  # the words the Parser uses for `args`


def cluster_kinds(store_class: type[ModelStore]) -> tuple[str, ...]:
    """The kinds of cluster (``modelstore:clusters.<key>.kind``) a backend serves: the kind of
    the scope its class joins (``cluster_type``: a cloud's stores their cloud's clusters); NFS
    and local stores, joining any, every kind."""
    scope = store_class.cluster_type
    return (scope.kind,) if scope is not None else cc.KINDS


def _room_installed(room: str) -> bool:
    try:
        import_module(f".{room}", __package__)
    except MissingExtraError:
        return False
    return True


def _missing_extras(stores: Any, clusters: Any) -> list[ModelStoreInputError]:
    """One line per cloud extra the stack needs and does not have, naming the first store (or
    cluster) that needs it and the rest in the hint. Said before anything else: without the
    extra, the cluster's and the store's own fields read as unknown, which is not the problem."""
    # room -> (store, field, value, how the hint names it); a cluster names no store.
    users: dict[str, list[tuple[str | None, str, Any, str]]] = {}
    for key, raw in clusters.items() if isinstance(clusters, Mapping) else ():
        kind = raw.get("kind") if isinstance(raw, Mapping) else None
        room = room_of_kind(kind) if isinstance(kind, str) else None
        if room is not None:
            path = f"{cc.ROOT}.{key}"
            users.setdefault(room, []).append((None, f"{path}.kind", kind, f"{path} (kind {kind})"))
    for name, fields in stores.items() if isinstance(stores, Mapping) else ():
        backend = fields.get("backend") if isinstance(fields, Mapping) else None
        room = room_of_backend(backend) if isinstance(backend, str) else None
        if room is not None:
            said = f"modelstore:stores.{name} (backend {backend})"
            users.setdefault(room, []).insert(0, (name, "backend", backend, said))
    errors = []
    for room, needs in sorted(users.items()):
        if _room_installed(room):
            continue
        (store, field, value, _), rest = needs[0], needs[1:]
        also = ", ".join(said for *_, said in rest)
        what = "backend" if store is not None else "kind"
        errors.append(
            ModelStoreInputError(
                store,
                field,
                value,
                f"a {what} whose cloud SDK is installed ({install_hint(room)})",
                hint=f"{also} need{'s' if len(rest) == 1 else ''} it too" if rest else None,
            )
        )
    return errors


class _EntryRefused(Exception):
    """The store names a cluster whose entry was refused (with its own message)."""


class _ClusterToCome:
    """Stands for a store's cluster scope while its fields are checked (the scopes are made
    once every input is known good, so that nothing registers before)."""


def build_stores(
    stores: Mapping[str, Any],
    clusters: Mapping[str, Any] | None = None,
    tokens: Mapping[str, Any] | None = None,
) -> dict[str, ModelStore]:
    """Build every store in ``stores`` (the value of ``modelstore:stores``) on the clusters of
    ``clusters`` (``modelstore:clusters``, optional) with the tokens of ``tokens`` (the value
    of ``modelstore:tokens``, which must be a secret config key; optional) and export its
    outputs. Every store's input
    is checked before the first one registers anything (its name, backend and fields, the
    cluster it names, and the PV and claim names across the stores of each cluster), and every
    problem of every store is reported at once; checks that need a lookup (the cluster, a
    subnet, the OIDC provider) run as each store is built."""
    missing = _missing_extras(stores, clusters)
    if missing:
        raise ModelStoreInputError.combine(missing)
    entries, errors = cc.parse_clusters(clusters)
    found_tokens, token_errors = _tokens(
        tokens, stores, pulumi.runtime.config.is_config_secret(TOKENS)
    )
    errors += token_errors
    if not isinstance(stores, Mapping) or not stores:
        raise ModelStoreInputError.combine(
            [*errors, ModelStoreInputError(None, "modelstore:stores", stores, STORES_ALLOWED)]
        )
    plans: list[tuple[str, type[ModelStore], dict[str, Any], Any, list[tuple[str, str, str]]]] = []
    # Store -> its settled backup (None: the backend takes none) and consumer namespaces.
    backups: dict[str, tuple[Backup | None, list[str]]] = {}
    specs: dict[str, Any] = {}
    for name, fields in stores.items():
        try:
            _a_store_name(name)
            if not isinstance(fields, Mapping):
                raise ModelStoreInputError(name, "fields", fields, FIELDS_ALLOWED)
            backend = fields.get("backend")
            # (A backend whose extra is missing was said before: _missing_extras.)
            store_class = backend_class(backend) if isinstance(backend, str) else None
            if not isinstance(backend, str) or store_class is None:
                allowed, hint = one_of(backend, installed_backends(), REFERENCE, "backends")
                raise ModelStoreInputError(name, "backend", backend, allowed, hint=hint)
            _no_token_in_stores(name, fields)
            args = store_args(name, store_class, fields)
            if name in found_tokens:
                args["model"] = {**args["model"], "token": pulumi.Output.secret(found_tokens[name])}
            cluster_key = _named_cluster(name, backend, args, entries, clusters)
            if cluster_key is not None:
                args["cluster"] = _ClusterToCome()
            # The constructor warns of old spellings: the check here does not, so each warns once.
            spec = store_class.parse(name, args, warn=False)
            common = spec.common
            plans.append((name, store_class, args, cluster_key, common.volumes))
            specs[name] = spec
            backups[name] = (spec.derived.get("backup"), [ns for ns, _ in common.consumers])
        except ModelStoreInputError as error:
            errors.append(error)
        except _EntryRefused:
            continue
    if errors:
        raise ModelStoreInputError.combine(errors)
    _names_unique_per_cluster(plans, entries, specs)
    used = {key: entries[key] for key in entries if any(p[3] == key for p in plans)}
    reference_errors = cc.read_references(used)
    if reference_errors:
        raise ModelStoreInputError.combine(reference_errors)
    scopes: dict[str, tuple[Any, pulumi.ResourceOptions | None]] = {}
    built: dict[str, ModelStore] = {}
    for name, constructor, args, cluster_key, _ in plans:
        opts = None
        if cluster_key is not None:
            if cluster_key not in scopes:  # it registers as its first store does
                scopes[cluster_key] = cc.make_scope(used[cluster_key], store=name)
                # Velero's refusals come before the first store registers, as its own do.
                velero = f"modelstore:clusters.{cluster_key}.velero"
                kv.preflight(scopes[cluster_key][0], used[cluster_key].velero, name, velero)
            args["cluster"], opts = scopes[cluster_key]
        store = constructor(name, args, opts)
        built[name] = store
        if cluster_key is not None:
            _velero_schedule(store, name, used[cluster_key], args["cluster"], backups[name])
        pulumi.export(name, store.summary)
    return built


def _velero_schedule(
    store: ModelStore,
    name: str,
    entry: cc.ClusterEntry,
    scope: Any,
    backup: tuple[Backup | None, list[str]],
) -> None:
    """On a cluster with Velero enabled: its install (once) and, when the store's ``backup``
    is enabled, the store's Schedule over its consumer namespaces."""
    settings = entry.velero
    if settings is None or not settings.enabled:
        return
    release = scope.velero(settings, store, name)
    settled, namespaces = backup
    if settled is not None and settled.enabled:
        kv.schedule(name, namespaces, settings, STORE_LABEL, parent=store, release=release)


def _named_cluster(
    name: str,
    backend: str,
    args: dict[str, Any],
    entries: Mapping[str, cc.ClusterEntry],
    clusters: Any,
) -> str | None:
    """The key of the ``modelstore:clusters`` entry the store names with ``cluster``, checked:
    a known key, of a kind the backend serves, the store not naming the cluster itself too."""
    key = args.get("cluster")
    if key is None:
        return None
    known = sorted(entries) if isinstance(clusters, Mapping) else []
    if not isinstance(key, str) or (key not in entries and key not in (clusters or {})):
        hint = suggestion(key, known)
        allowed = (
            f"one of the keys of modelstore:clusters ({', '.join(known)})"
            if known
            else "a key of modelstore:clusters (none is set)"
        )
        raise ModelStoreInputError(name, "cluster", key, allowed, hint=hint)
    if key not in entries:  # its entry was refused, with its own message
        raise _EntryRefused()
    entry = entries[key]
    store_class = backend_class(backend)
    assert store_class is not None  # build_stores checked the backend
    kinds = cluster_kinds(store_class)
    if entry.kind not in kinds:
        raise ModelStoreInputError(
            name,
            "cluster",
            key,
            f"a cluster of kind {' or '.join(kinds)} for backend {backend} "
            f"(modelstore:clusters.{key}.kind is {entry.kind})",
        )
    scope = cc.scope_class(entry.kind)
    for field in scope.entry.store_fields:
        if field in scope.naming_store_fields() and args.get(field) is not None:
            raise ModelStoreInputError(
                name,
                field,
                args[field],
                f"unset when cluster is given (modelstore:clusters.{key} names the cluster)",
            )
    return key


def _a_store_name(name: Any) -> None:
    """A store's name is its resource name and its outputs' key (``pulumi.export``): a
    non-empty string. What Kubernetes asks of it as the default claim name, the contract
    checks."""
    if not isinstance(name, str) or not name:
        raise ModelStoreInputError("modelstore:stores", "store name", name, "a non-empty string")


def _names_unique_per_cluster(
    plans: list[tuple[str, type[ModelStore], dict[str, Any], Any, list[tuple[str, str, str]]]],
    entries: Mapping[str, cc.ClusterEntry],
    specs: Mapping[str, Any],
) -> None:
    """PV names and claims no two stores of one cluster share, and each backend's checks
    across the stores of a cluster (``ModelStore.check_across``), checked before any store is
    built (the cluster scope checks them again as each store joins, in library programs)."""
    books: dict[Any, NameBook] = {}
    across: dict[Any, dict[Hashable, Any]] = {}
    for name, constructor, args, cluster_key, volumes in plans:
        if cluster_key is not None:
            entry = entries[cluster_key]
            key: tuple[str, str] = (entry.kind, entry.name)
        else:
            key = constructor.scope_key(args)
        books.setdefault(key, NameBook(key[1])).reserve(name, volumes)
        constructor.check_across(specs[name], across.setdefault(key, {}))


def _config(key: str) -> Any:
    raw = pulumi.Config("modelstore").get(key)
    if raw is None:
        return None
    try:
        return json.loads(raw)  # structured config reaches a program as JSON
    except ValueError:
        return raw  # a plain string: refused, as written


def main() -> dict[str, ModelStore]:
    """The program: ``modelstore:stores`` (on ``modelstore:clusters``) of the stack's config,
    built. Its errors name their key path (:func:`key_paths`)."""
    stores, clusters, tokens = _config("stores"), _config("clusters"), _config("tokens")
    if stores is None:
        raise ModelStoreInputError(
            None, "modelstore:stores", None, f"set in the stack's config: {STORES_ALLOWED}"
        )
    try:
        return build_stores(stores, clusters, tokens)
    except ModelStoreInputError as error:
        raise key_paths(error, stores, clusters) from None


def key_paths(error: ModelStoreInputError, stores: Any, clusters: Any) -> ModelStoreInputError:
    """``error`` with each line naming its key path in the stack's config: ``llama: backend
    must be ...`` becomes ``modelstore:stores.llama.backend must be ...``; a store's cluster
    field (``cluster_name``, a GKE ``location``...) names the ``modelstore:clusters`` entry the
    value came from, when the store names one. Lines naming no store stay as they are."""
    lines = [_key_path(one, stores, clusters) for one in error.errors]
    return ModelStoreInputError.combine(lines)


def _key_path(error: ModelStoreInputError, stores: Any, clusters: Any) -> ModelStoreInputError:
    name = error.store
    if not isinstance(stores, Mapping) or not isinstance(name, str) or name not in stores:
        return error
    fields = stores[name]
    base = f"modelstore:stores.{name}"
    if error.field == "fields" or not isinstance(fields, Mapping):
        return error.moved(None, base)
    backend = fields.get("backend")
    if error.field == "field name":
        return error.moved(
            None, f"{base}.{error.value}", f"a field of backend {backend}: {error.allowed}"
        )
    head, rest = _split(error.field)
    cluster_key = fields.get("cluster")
    if (
        isinstance(cluster_key, str)
        and isinstance(clusters, Mapping)
        and cluster_key in clusters
        and not any(_written(fields, head, backend) == k for k in fields)
    ):
        entries, _ = cc.parse_clusters({cluster_key: clusters[cluster_key]})
        entry = entries.get(cluster_key)
        field = cc.store_fields(entry.kind).get(head) if entry is not None else None
        if entry is not None and field is not None:
            source = entry.sources.get(field) or f"{entry.path}.{field}"
            return error.moved(None, f"{source}{rest}")
    return error.moved(None, f"{base}.{_written(fields, head, backend)}{rest}")


def _split(field: str) -> tuple[str, str]:
    """``readers[1]`` -> (``readers``, ``[1]``); ``labels`` -> (``labels``, ``""``)."""
    cut = min((i for i in (field.find("["), field.find(".")) if i > 0), default=len(field))
    return field[:cut], field[cut:]


def _written(fields: Mapping[Any, Any], field: str, backend: Any) -> str:
    """The key the stack file spells ``field`` with (``claimName`` for ``claim_name``)."""
    store_class = backend_class(backend) if isinstance(backend, str) else None
    if field in fields or store_class is None:
        return field
    names = spellings(store_class)
    return next((k for k in fields if names.get(k) == field), field)
