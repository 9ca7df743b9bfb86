"""Hooks take ``Spec[<the store's args>]``, so mypy checks every key they read against the
args TypedDict; the args type a store names for mypy (``ModelStore[TheirArgs]``) is the one it
parses with at run time (``args_type``)."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from pulumi_modelstore.aws.store import AwsModelStore
from pulumi_modelstore.azure.store import AzureModelStore
from pulumi_modelstore.cluster import ClusterScope
from pulumi_modelstore.gcp.store import GcpModelStore
from pulumi_modelstore.local import LocalModelStore
from pulumi_modelstore.nfs import NfsModelStore
from pulumi_modelstore.program import BACKENDS
from pulumi_modelstore.store import ModelStore, Spec

HOOKS = ("join", "preflight", "check_cluster", "provision_storage", "consumer_access")


def typed_args(store: type) -> Any:
    """The type argument ``store`` gives the generic store base it extends, else None."""
    for base in getattr(store, "__orig_bases__", ()):
        origin = typing.get_origin(base)
        if isinstance(origin, type) and issubclass(origin, ModelStore):
            return typing.get_args(base)[0]
    return None


@pytest.mark.parametrize("store", [LocalModelStore, NfsModelStore], ids=lambda s: s.__name__)
def test_the_hooks_a_store_defines_take_a_spec_of_its_args(store: type[ModelStore]) -> None:
    assert typed_args(store) is store.args_type
    for hook in HOOKS:
        if hook in vars(store):
            spec = typing.get_type_hints(getattr(store, hook))["spec"]
            assert spec == Spec[store.args_type], (store.__name__, hook)


@pytest.mark.parametrize(
    "base", [AwsModelStore, GcpModelStore, AzureModelStore], ids=lambda s: s.__name__
)
def test_a_cloud_base_is_generic_in_an_args_type_bound_by_its_own(base: type[ModelStore]) -> None:
    """Its backends give their own args type; its hooks read only the fields it declares."""
    var = typed_args(base)
    assert isinstance(var, typing.TypeVar) and var.__bound__ is base.args_type
    for hook in HOOKS:
        if hook in vars(base):
            assert typing.get_type_hints(getattr(base, hook))["spec"] == Spec[var], hook


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_joins_its_cluster_type_through_the_base(name: str) -> None:
    """``join`` is written once (``ModelStore.join`` reads ``cluster_type``); a store's hooks
    get the scope type it names for mypy, the one it joins at run time."""
    store = BACKENDS[name]
    assert "join" not in vars(store)
    scope = next(
        typing.get_args(b)[1]
        for klass in store.__mro__
        for b in getattr(klass, "__orig_bases__", ())
        if typing.get_origin(b) is ModelStore
    )
    assert scope is (store.cluster_type or ClusterScope)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_names_its_run_time_args_for_mypy(name: str) -> None:
    """``class X(CloudModelStore[XArgs])``: every hook of every backend then takes
    ``Spec[XArgs]`` for mypy (no backend is left reading ``Spec[Any]``)."""
    store = BACKENDS[name]
    assert typed_args(store) is store.args_type
    for hook in HOOKS:
        if hook in vars(store):
            spec = typing.get_type_hints(getattr(store, hook))["spec"]
            assert spec == Spec[store.args_type], (name, hook)
