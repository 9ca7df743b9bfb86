"""What belongs to a cluster, not to a model: the cluster scope stores join.

A model store is per model; a cluster serves many. A :class:`ClusterScope` (one per cluster and
Kubernetes provider in a program, made by the first store that joins, or by the program itself)
owns, once for all its stores:

- the cluster's facts, looked up once (each cloud's scope: ``aws.EksCluster``);
- each CSI driver install, whichever store asks first (:meth:`ClusterScope.install_once`);
- node-level identities several stores share (:meth:`ClusterScope.shared`);
- the namespaces stores create, kept while any store uses them (:meth:`ClusterScope.namespace`);
- the names of PVs and claims: a second store claiming one is refused at plan time, naming both
  stores (:meth:`ClusterScope.reserve_names`);
- the Kubernetes provider: two clusters in one program need two providers.

Where something used to live under a store (a driver install, a namespace), it keeps its
identity through an alias naming the store and its old name, so ``pulumi up`` moves it under
the scope instead of replacing it.
"""

import dataclasses
import typing
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypedDict, TypeVar, cast

import pulumi
import pulumi_kubernetes as k8s
from pulumi.runtime import settings

from .errors import ModelStoreInputError
from .fields import Parser, args_typed_init
from .registry import Registry
from .validation import is_output

T = TypeVar("T")
# A config entry's fields or attributes, and the options a scope is made with.
EntryValues = Mapping[str, Any]
Opts = pulumi.ResourceOptions | None
# A scope's facts (a dataclass; None for a scope that looks nothing up): what facts() returns.
F = TypeVar("F")
# A scope's args (a TypedDict, its ``args_type``): what its constructor takes.
A = TypeVar("A")
_REGISTRY_ATTRIBUTE = "_modelstore_cluster_scopes"
# Kind (the config program's `kind`) -> scope class; filled as scope classes are defined.
_KINDS: Registry[type["ClusterScope"]] = Registry("kind")
_ANY: Any = None
_NO_PACKAGE: str | None = None


@dataclass(frozen=True)
class EntryRules:
    """What an entry of one kind in the config program's ``modelstore:clusters`` takes, besides
    ``kind``, ``name`` and the provider fields (``config_clusters``)."""

    naming: tuple[str, ...] = ()
    """The entry's fields naming the cluster, besides ``name`` (gke: ``location``,
    ``project``)."""
    needed: Mapping[str, str] = field(default_factory=dict)
    """Naming fields the entry needs -> what the error says is allowed."""
    store_fields: Mapping[str, str] = field(default_factory=lambda: {"cluster_name": "name"})
    """A store's cluster fields -> the entry field they come from (for errors' key paths)."""
    facts_type: Any = None
    """The dataclass of the facts an entry may give as ``attributes`` (its fields but
    ``from_entry``); None: the scope's :meth:`ClusterScope.attribute_types` says."""
    from_entry: frozenset[str] = frozenset()
    """Fields of ``facts_type`` the entry's naming fields give (not attributes)."""
    with_attributes: tuple[str, ...] = ()
    """Naming fields an entry needs once it gives attributes (gke: ``project``, which a
    lookup would otherwise find)."""


def _registry() -> dict[Hashable, "ClusterScope"]:
    """This program run's scopes. Kept on the run's resource monitor, so every plan (and every
    test) starts with none."""
    monitor = settings.get_monitor()
    registry = getattr(monitor, _REGISTRY_ATTRIBUTE, None)
    if registry is None:
        registry = {}
        setattr(monitor, _REGISTRY_ATTRIBUTE, registry)
    return registry


def provider_of(
    opts: pulumi.ResourceOptions | None, package: str
) -> pulumi.ProviderResource | None:
    """The explicit provider for ``package`` in ``opts`` (``provider`` or ``providers``)."""
    if opts is None:
        return None
    provider = opts.provider
    if provider is not None and getattr(provider, "package", None) == package:
        return provider
    providers = opts.providers
    if isinstance(providers, Mapping):
        return providers.get(package)
    if isinstance(providers, Sequence):
        return next((p for p in providers if getattr(p, "package", None) == package), None)
    return None


def providers_only(opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """The providers of ``opts`` (nothing else), for a scope that serves the store."""
    if opts is None:
        return pulumi.ResourceOptions()
    providers: list[pulumi.ProviderResource] = []
    if opts.provider is not None:
        providers.append(opts.provider)
    if isinstance(opts.providers, Mapping):
        providers += list(opts.providers.values())
    elif isinstance(opts.providers, Sequence):
        providers += list(opts.providers)
    return pulumi.ResourceOptions(providers=providers) if providers else pulumi.ResourceOptions()


class ClusterScope(pulumi.ComponentResource, Generic[F, A]):
    """Base of every cluster scope (see the module docstring). Backends reach theirs with
    :meth:`join`; a program may also make one and pass it to its stores as ``cluster``.

    A scope class registers under its kind (``class AksCluster(ClusterScope[AksClusterFacts,
    AksClusterArgs], kind="aks")``, as a store registers under its backend), names its args
    type (``args_type``; it inherits this constructor, typed with it) and declares what the
    config program's ``modelstore:clusters`` entries of that kind take (``entry`` and the
    classmethods below; :mod:`.config_clusters` looks them up by kind)."""

    # Class attributes without annotations: the component analyzer treats annotations on a
    # component as its outputs.
    kind = ""
    """The config program's ``modelstore:clusters.<key>.kind`` of this scope."""
    args_type = _ANY
    """The scope's args (a TypedDict), parsed with the stores' field machinery (:meth:`rules`)."""
    cloud_provider_package = _NO_PACKAGE
    """The package of the provider the scope's lookups use (``aws``); None: no lookups."""
    entry = EntryRules()
    """What an entry of this kind in the config program's ``modelstore:clusters`` takes."""

    def __init_subclass__(cls, kind: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _KINDS.add(cls, kind)
        if "__init__" not in vars(cls):
            cls.__init__ = args_typed_init(cls)  # type: ignore[method-assign]

    @staticmethod
    def kinds() -> dict[str, type["ClusterScope"]]:
        """Kind (the config program's ``kind``) -> scope class, of the rooms imported."""
        return _KINDS.classes()

    def __init__(
        self,
        resource_name: str,
        args: A,
        opts: pulumi.ResourceOptions | None = None,
        *,
        store: str | None = None,
        facts: F | None = None,
    ) -> None:
        """``store``: the store making the scope as it joins (None when a program makes it).
        Such a scope registers only when that store is about to (:meth:`ensure_registered`),
        so a store whose preflight fails leaves no empty scope in the plan. ``facts``: the
        cluster's facts as a platform stack knows them (the config program's
        ``modelstore:clusters.<key>.attributes``); given, nothing is looked up and the
        preflight checks run on them."""
        cls = type(self)
        p = Parser(store or resource_name, cls.args_type, args, component=cls.__name__)
        cls.rules(p)
        given = p.finish()
        registry = _registry()
        key = (cls.kind, resource_name)
        self._key = key
        self._kubernetes = provider_of(opts, "kubernetes")
        _check_provider(registry, key, self._kubernetes, store or resource_name, resource_name)
        registry[key] = self
        self.scope_name = resource_name
        self._given: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        package = cls.cloud_provider_package
        self.cloud_provider = provider_of(opts, package) if package is not None else None
        """The scope's cloud provider (None: the default one); its lookups use it."""
        self._invoke_opts = (
            pulumi.InvokeOptions(provider=self.cloud_provider) if self.cloud_provider else None
        )
        self._facts: Any = facts
        self._names = NameBook(resource_name)
        self._namespaces: dict[str, k8s.core.v1.Namespace] = {}
        self._installs: dict[str, tuple[str, Hashable, pulumi.Resource | None]] = {}
        self._shared: dict[Hashable, Any] = {}
        self._lookups: dict[Hashable, Any] = {}
        self._agreed: dict[Hashable, tuple[str, Any]] = {}
        self.node_groups: tuple[pulumi.Resource, ...] = ()
        """The node groups of a cluster made in this program (its ``from_cluster``): every
        driver install, namespace and claim on the cluster waits for them. Empty for a cluster
        that exists already."""
        self._warned: set[Hashable] = set()
        self.created: Any = None
        """What the cloud's ``from_cluster`` knows of a cluster this program makes (None: the
        cluster exists, and is looked up or described)."""
        self._checked: set[Hashable] = set()
        """The preflight checks already set up on a cluster this program makes."""
        type_token = f"modelstore:index:{cls.__name__}"
        self._registration: tuple[str, pulumi.ResourceOptions | None] | None = (type_token, opts)
        if store is None:
            self.ensure_registered()

    # ---- what each kind declares -----------------------------------------------------------

    @classmethod
    def rules(cls, p: Parser) -> None:
        """The scope's named rules on its args (none by default)."""

    @classmethod
    def name_for(cls, args: Mapping[str, Any]) -> str:
        """The name of the scope a store with ``args`` joins: its ``cluster_name``, else the
        kind."""
        return str(args.get("cluster_name") or cls.kind)

    @classmethod
    def naming_store_fields(cls) -> list[str]:
        """A store's fields naming the cluster (from an entry's ``name`` and naming fields):
        a store on a config entry leaves them to the entry."""
        e = cls.entry
        return [f for f, source in e.store_fields.items() if source in ("name", *e.naming)]

    @classmethod
    def check_named(cls, store: str, args: Mapping[str, Any]) -> None:
        """Refuse a store that names no cluster of this kind (nothing by default)."""

    def agree_facts(self, store: str, args: Mapping[str, Any]) -> None:
        """Refuse a store joining with a fact of the cluster other than the scope's. By default
        the facts are the store's fields naming the cluster besides ``cluster_name``
        (:meth:`naming_store_fields`: aks's resource group, gke's location and project); a
        scope given as ``cluster`` is joined as given."""
        if args.get("cluster") is not None:
            return
        # Not cluster_name: it names the scope. Only the other naming fields are asked for: a
        # store's args refuse a field they do not declare (the EBS cache has no cluster_name).
        for name in self.naming_store_fields():
            if name == "cluster_name":
                continue
            value, have = args.get(name), self._given.get(name)
            if value is not None and have is not None:
                self.check_same_fact(store, name, value, have)

    def check_same_fact(self, store: str, field: str, value: Any, have: Any) -> None:
        """Refuse ``store`` giving ``value`` for the cluster fact ``field`` where the scope has
        ``have``: stores naming one cluster share its scope, so a store stating another fact
        names another cluster. Values still Outputs are not compared."""
        if value != have and not is_output(value) and not is_output(have):
            raise ModelStoreInputError(
                store,
                field,
                value,
                f"{have!r}, what cluster {self.scope_name!r} already has (stores on one "
                "cluster share its facts)",
            )

    @classmethod
    def attribute_types(cls) -> dict[str, Any]:
        """The facts a config entry of this kind gives as ``attributes`` -> their types: the
        fields of ``facts_type`` not in ``from_entry`` (none without a facts type)."""
        if cls.entry.facts_type is None:
            return {}
        hints = typing.get_type_hints(cls.entry.facts_type)
        return {
            f.name: _plain(hints[f.name])
            for f in dataclasses.fields(cls.entry.facts_type)
            if f.name not in cls.entry.from_entry
        }

    @classmethod
    def required_attributes(cls) -> list[str]:
        """The attributes an entry gives all of once it gives any (those without defaults)."""
        if cls.entry.facts_type is None:
            return []
        return [
            f.name
            for f in dataclasses.fields(cls.entry.facts_type)
            if f.name not in cls.entry.from_entry
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]

    @classmethod
    def entry_problems(
        cls,
        path: str,
        key: str,
        fields: Mapping[str, Any],
        attributes: Mapping[str, Any],
        sources: Mapping[str, str] | None = None,
        only: Collection[str] | None = None,
    ) -> list[ModelStoreInputError]:
        """What the cloud would refuse in a config entry of this kind (``path``): its values
        (``fields`` and ``attributes``; ``sources`` names each one's key path, ``only`` checks
        just those names). Nothing by default."""
        return []

    @classmethod
    def name_problems(cls, name: Any, where: str, note: str = "") -> list[ModelStoreInputError]:
        """What the cloud would refuse in an entry's cluster name (at ``where``; ``note``
        ends each message). Nothing by default."""
        return []

    @classmethod
    def attribute_problems(
        cls, path: str, facts: Mapping[str, Any], sources: Mapping[str, str] | None = None
    ) -> list[ModelStoreInputError]:
        """What the cloud would refuse in the facts an entry gives (``path.<fact>``, or its
        ``sources`` entry), beyond :meth:`fact_problem`. Nothing by default."""
        return []

    @classmethod
    def fact_problem(cls, name: str, value: Any) -> tuple[Any, str] | None:
        """What is wrong with the fact ``name`` given as ``value`` (of the right type): the
        offending value and what is allowed, or None (the default)."""
        return None

    @classmethod
    def from_entry_values(
        cls, name: str, fields: EntryValues, attributes: EntryValues, opts: Opts, store: str
    ) -> "ClusterScope":
        """The scope of a config entry named ``name`` with its naming ``fields`` and
        ``attributes``: by default the cluster's name only."""
        return cls(name, cast(A, {}), opts, store=store)

    # ---- joining -------------------------------------------------------------------------------

    @classmethod
    def join(cls, store: str, args: Mapping[str, Any], opts: pulumi.ResourceOptions | None) -> Any:
        """The scope of the cluster ``args`` name (``cluster``, else what :meth:`name_for`
        reads), made on first use with the providers of ``opts``. A store naming it with
        another fact than the scope's is refused (:meth:`agree_facts`)."""
        given_scope = args.get("cluster")
        if given_scope is not None:
            if not isinstance(given_scope, cls):
                article = "an" if cls.__name__[0] in "AEIOU" else "a"
                raise ModelStoreInputError(
                    store, "cluster", type(given_scope).__name__, f"{article} {cls.__name__}"
                )
            given_scope.check_joins(store, opts)
            given_scope.agree_facts(store, args)
            return given_scope
        cls.check_named(store, args)
        name = cls.name_for(args)
        found = cls.find((cls.kind, name))
        if found is None:
            fields = [] if cls.args_type is None else list(cls.args_type.__annotations__)
            given = {k: args[k] for k in fields if args.get(k) is not None}
            # Checked against args_type by the constructor's parser, as any args.
            return cls(name, cast(A, given), providers_only(opts), store=store)
        assert isinstance(found, cls)
        found.check_joins(store, opts)
        found.agree_facts(store, args)
        return found

    def declared(self) -> "DeclaredCluster":
        """What the program declared about this cluster (the facts it or its stores gave, as
        plain strings; facts still Outputs are left out), so the offline plan's placeholder
        answers agree with it."""
        facts = {k: v for k, v in self._given.items() if isinstance(v, str)}
        name = facts.pop("cluster_name", None)
        return DeclaredCluster(type(self).kind, name, facts, frozenset())

    def ensure_registered(self) -> None:
        """Register the scope (once): before the first store that joins it registers, and
        before any of its own children."""
        if self._registration is None:
            return
        type_token, opts = self._registration
        self._registration = None
        super().__init__(type_token, self.scope_name, None, opts)
        self.register_outputs({})

    @classmethod
    def find(cls, key: Hashable) -> "ClusterScope | None":
        return _registry().get(key)

    def check_joins(self, store: str, opts: pulumi.ResourceOptions | None) -> None:
        """A store joins with the scope's Kubernetes provider, or none (then it inherits it)."""
        theirs = provider_of(opts, "kubernetes")
        if theirs is not None and theirs is not self._kubernetes:
            raise ModelStoreInputError(
                store,
                "opts.providers['kubernetes']",
                getattr(theirs, "_name", "a provider"),
                f"the Kubernetes provider of cluster {self.scope_name!r} (each cluster has one)",
            )

    # ---- facts ---------------------------------------------------------------------------------

    def lookup(self, key: Hashable, fetch: Callable[[], T]) -> T:
        """``fetch()`` once per key for the whole cluster: N stores cost one set of lookups."""
        if key not in self._lookups:
            self._lookups[key] = fetch()
        return self._lookups[key]

    def facts(self, store: str, *needs: Callable[[str, F], None]) -> F:
        """The cluster's facts, looked up once for all its stores (``store`` is named if the
        lookup fails); the facts a program or config entry gave, as given. Each of ``needs``
        (``require_...``) then refuses ``store`` on a cluster without what it needs."""
        if self._facts is None:
            self._facts = self._look_up(store)
        facts: F = self._facts
        for need in needs:
            need(store, facts)
        return facts

    def _look_up(self, store: str) -> F:
        """The cluster's facts from its cloud: each scope with facts says how."""
        raise NotImplementedError(f"{type(self).__name__} looks up no facts")

    # ---- names ---------------------------------------------------------------------------------

    def reserve_names(self, store: str, volumes: Sequence[tuple[str, str, str]]) -> None:
        """Reserve ``(pv_name, namespace, claim_name)`` for ``store`` (see :class:`NameBook`)."""
        self._names.reserve(store, volumes)

    # ---- shared resources ----------------------------------------------------------------------

    def child_options(
        self,
        *,
        old_name: str | None = None,
        old_parent: pulumi.Resource | None = None,
        **extra: Any,
    ) -> pulumi.ResourceOptions:
        """Options for a resource the scope owns; ``old_name``/``old_parent`` alias where it
        lived before it moved here (under a store), so an update moves it, never replaces it."""
        self.ensure_registered()
        aliases = (
            [pulumi.Alias(name=old_name, parent=old_parent)]
            if old_name is not None and old_parent is not None
            else None
        )
        opts = pulumi.ResourceOptions(parent=self, aliases=aliases, **extra)
        if self.node_groups:
            nodes = pulumi.ResourceOptions(depends_on=list(self.node_groups))
            opts = pulumi.ResourceOptions.merge(opts, nodes)
        return opts

    def store_options(self, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions | None:
        """A joining store's options: with the scope's Kubernetes provider (and its cloud
        provider) where the store gives none for that package, so a store given ``cluster``
        alone lands on the cluster the scope was made with (a cluster made in this program:
        the provider from its kubeconfig)."""
        add = [
            provider
            for package, provider in (
                ("kubernetes", self._kubernetes),
                (type(self).cloud_provider_package, self.cloud_provider),
            )
            if provider is not None and package and provider_of(opts, package) is None
        ]
        if not add:
            return opts
        return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(providers=add))

    def warn_once(self, key: Hashable, message: str) -> None:
        """Log ``message`` as a warning once per cluster: a check skipped before deploy."""
        if key not in self._warned:
            self._warned.add(key)
            pulumi.log.warn(message, resource=None)

    def namespace(self, namespace: str, store: pulumi.Resource, store_name: str) -> Any:
        """The Namespace ``namespace``, created once by whichever store asks first and kept
        while any store asks for it. Its labels name the scope, not a store."""
        existing = self._namespaces.get(namespace)
        if existing is not None:
            return existing
        made = k8s.core.v1.Namespace(
            f"{self.scope_name}-ns-{namespace}",
            metadata={
                "name": namespace,
                "labels": {"app.kubernetes.io/managed-by": "pulumi-modelstore"},
            },
            opts=self.child_options(old_name=f"{store_name}-ns-{namespace}", old_parent=store),
        )
        self._namespaces[namespace] = made
        return made

    def check_install(
        self, driver: str, store: str, how: Hashable, field: str = "driver_install"
    ) -> None:
        """Refuse, before ``store`` registers anything, an install of ``driver`` that differs
        from the one another store of this cluster set (see :meth:`install_once`)."""
        current = self._installs.get(driver)
        if how is None or current is None or current[1] == how:
            return
        raise ModelStoreInputError(
            store,
            field,
            _shown(how),
            f"{_shown(current[1])}, the install of {driver} store {current[0]!r} set on "
            f"cluster {self.scope_name!r} (a driver is installed once per cluster)",
        )

    def install_once(
        self,
        driver: str,
        store: str,
        how: Hashable,
        make: Callable[[], pulumi.Resource | None],
        *,
        field: str = "driver_install",
    ) -> pulumi.Resource | None:
        """The install of CSI driver ``driver`` on this cluster, made by ``make()`` for the
        first store that asks; later stores get the same one. ``how`` is the install a store
        asks for (method, version, ...): a store asking for a different one is refused, naming
        the store that set it. ``None`` for ``how`` asks for nothing (the cluster has the
        driver already) and returns the install a store made, if any."""
        current = self._installs.get(driver)
        if how is None:
            return current[2] if current is not None else None
        self.check_install(driver, store, how, field)
        if current is not None:
            return current[2]
        self.ensure_registered()
        resource = make()
        self._installs[driver] = (store, how, resource)
        return resource

    def velero_storage(self, settings: Any, store: str) -> Any:
        """Velero's bucket and identity on this cluster (a ``kube.velero.VeleroStorage``) for
        ``settings`` (its ``VeleroSettings``), made once by :meth:`velero`. Each cloud's scope
        says how (or its room registers a maker in ``kube.velero.STORAGE``); a kind without
        one never gets here (``parse_velero`` refuses it)."""
        from .kube.velero import STORAGE

        make = STORAGE.get(type(self).kind)
        if make is None:
            raise NotImplementedError(f"{type(self).__name__} makes no Velero storage")
        return make(self, settings, store)

    def velero(self, settings: Any, store: pulumi.Resource, store_name: str) -> Any:
        """The cluster's Velero release (``kube.velero.install``), made once with its storage
        by the first store that asks (:meth:`install_once`)."""
        from .kube import velero as kv

        def make() -> pulumi.Resource:
            namespace = self.namespace(kv.NAMESPACE, store, store_name)
            storage = self.velero_storage(settings, store_name)
            return kv.install(
                f"{self.scope_name}-velero", storage, parent=self, namespace=namespace
            )

        return self.install_once("velero", store_name, settings, make, field="velero")

    def agree(self, key: Hashable, store: str, field: str, value: Any, what: str) -> None:
        """One value per cluster for ``key``: the first store to state it sets it; a store
        stating another is refused, naming the store that set it (``what`` says what the value
        is, e.g. "the Mountpoint S3 CSI driver version")."""
        first = self._agreed.setdefault(key, (store, value))
        if first[1] != value:
            raise ModelStoreInputError(
                store,
                field,
                value,
                f"{first[1]} ({what} store {first[0]!r} set on cluster {self.scope_name!r})",
            )

    def shared(self, key: Hashable, make: Callable[[], T]) -> T:
        """A resource (or group of them) several stores share, made once by ``make()``."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]


@dataclass(frozen=True)
class DeclaredCluster:
    """What a program declared about one cluster (:meth:`ClusterScope.declared`)."""

    kind: str
    name: str | None
    """The cluster's name as given; None when only its facts were."""
    facts: Mapping[str, str]
    """The other facts given (``vpc_id``, ``region``...), plain strings only."""
    subnets: frozenset[str]
    """The subnets the program listed for the cluster (an EKS cluster's
    ``cluster_subnet_ids``, its stores' ``subnet_ids``)."""


def declared_clusters(kind: str) -> list[DeclaredCluster]:
    """What this program run declared about each of its clusters of ``kind``. Empty when no
    program is running (the last run's scopes stay on its monitor)."""
    if settings.get_root_resource() is None:
        return []
    return [s.declared() for s in list(_registry().values()) if type(s).kind == kind]


class NameBook:
    """The PV names and claims the stores of one cluster use. A PV name or a claim another
    store already uses is refused, naming both stores; every name is checked before any is
    kept, so a refusal leaves nothing reserved. The config program checks all its stores with
    one before building any."""

    def __init__(self, cluster: str) -> None:
        self.cluster = cluster
        self._owners: dict[tuple[str, ...], str] = {}

    def reserve(self, store: str, volumes: Sequence[tuple[str, str, str]]) -> None:
        # Claims first: a claim two stores share is the clearer message of the two.
        wanted: dict[tuple[str, ...], tuple[str, str]] = {
            ("PersistentVolumeClaim", namespace, claim): (
                "PersistentVolumeClaim",
                f"{namespace}/{claim}",
            )
            for _, namespace, claim in volumes
        }
        for pv_name, _, _ in volumes:
            wanted[("PersistentVolume", pv_name)] = ("PersistentVolume", pv_name)
        for key, (kind, shown) in wanted.items():
            owner = self._owners.get(key)
            if owner is not None and owner != store:
                # Both names derive from claim_name (a PV is <claim_name>-<namespace>).
                raise ModelStoreInputError(
                    store,
                    "claim_name",
                    shown,
                    f"a {kind} name no other store on cluster {self.cluster!r} uses "
                    f"(store {owner!r} already declares {kind} {shown})",
                )
        for key in wanted:
            self._owners[key] = store


def as_facts(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Config values as a facts dataclass holds them: lists as tuples, mappings as dicts."""
    return {
        k: tuple(v) if isinstance(v, list) else dict(v) if isinstance(v, Mapping) else v
        for k, v in attributes.items()
    }


def _plain(annotation: Any) -> Any:
    """A facts annotation as config writes it: a tuple of strings is a list."""
    if typing.get_origin(annotation) is tuple:
        return list[str]
    return annotation


def require_feature(store: str, cluster: str, on: object, allowed: str) -> None:
    """Refuse ``store`` on the cluster named ``cluster`` when a feature it needs is off (``on``
    false): the error names the store's ``cluster_name`` and what the cluster must have
    (``allowed``). Nothing when it is on."""
    if not on:
        raise ModelStoreInputError(store, "cluster_name", cluster, allowed)


# What a store's ``cluster_name`` takes where the cluster is looked up by it (``{}``: the kind
# of cluster, "AKS").
CLUSTER_NAME_ALLOWED = (
    "the {} cluster's name, a plain string so it can be looked up before deploy (or give cluster)"
)


def named_plainly(store: str, field: str, value: Any, allowed: str) -> None:
    """Refuse a cluster-naming ``field`` that is unset or an Output (shown as ``<Output>``):
    the cluster is looked up by it before deploy. ``allowed`` says what the field takes."""
    if not value or is_output(value):
        raise ModelStoreInputError(store, field, "<Output>" if is_output(value) else value, allowed)


def lookup_failed(store: str, cluster: Any, what: str, exc: Exception) -> ModelStoreInputError:
    """The error for a cluster lookup that failed: the data source's own words (on one line,
    at most 200 characters) say why (not found, denied)."""
    why = " ".join(str(exc).split())[:200]
    return ModelStoreInputError(store, "cluster_name", cluster, f"{what} ({why})")


def _shown(how: Hashable) -> Any:
    return how[0] if isinstance(how, tuple) and len(how) == 1 else how


def _check_provider(
    registry: Mapping[Hashable, "ClusterScope"],
    key: Hashable,
    provider: pulumi.ProviderResource | None,
    store: str,
    name: str,
) -> None:
    """Two clusters in one program need two Kubernetes providers: the same provider (or the
    default one) for two clusters would put both clusters' objects on one of them."""
    if key in registry:
        raise ModelStoreInputError(
            store, "cluster", name, "a cluster scope made once per cluster in a program"
        )
    for other in registry.values():
        if other._kubernetes is provider:
            shown = "the default provider" if provider is None else "the same provider"
            raise ModelStoreInputError(
                store,
                "opts.providers['kubernetes']",
                shown,
                f"a Kubernetes provider of its own for cluster {name!r} (cluster "
                f"{other.scope_name!r} already uses {shown})",
            )


class KubernetesClusterArgs(TypedDict, total=False):
    """A cluster known only through its Kubernetes provider takes no fields: the provider (in
    ``opts``) is the cluster."""


class KubernetesCluster(ClusterScope[None, KubernetesClusterArgs], kind="kubernetes"):
    """The scope of a cluster known only through its Kubernetes provider (a laptop cluster, an
    on-prem cluster serving NFS): namespaces, names and driver installs, no cloud facts."""

    args_type = KubernetesClusterArgs

    @classmethod
    def name_for(cls, args: Mapping[str, Any]) -> str:
        """A local or NFS store's ``cluster_name`` (``kubernetes`` when unset, or when the
        store has no such field: the EBS cache names no cluster)."""
        return str(dict(args).get("cluster_name") or "kubernetes")
