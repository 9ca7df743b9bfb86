"""The Pulumi component analyzer infers a complete schema offline: every public component,
every arg with its description, every output with its description."""

from __future__ import annotations

import inspect

import pytest

from pulumi_modelstore.fields import fields_of
from pulumi_modelstore.schema import analyze, components

DEFINITIONS = analyze()["component_definitions"]
COMPONENTS = components()


def test_every_public_component_is_in_the_schema():
    names = {c.__name__ for c in COMPONENTS}
    assert {
        # core and local
        "KubernetesCluster",
        "LocalModelStore",
        "NfsModelStore",
        # AWS
        "EksCluster",
        "EfsModelStore",
        "FsxLustreModelStore",
        "MountpointS3ModelStore",
        "EbsCsiDriver",
        "EbsModelCache",
        # GCP (since the cluster-scope issue)
        "GkeCluster",
        "GcsFuseModelStore",
        "HyperdiskMlModelStore",
        # Azure
        "AksCluster",
    } <= names
    assert set(DEFINITIONS) == names
    assert len(names) == len(COMPONENTS), "two components share a class name (one type token)"


def test_components_are_found_not_listed():
    """Every registered store backend and every cluster scope is a component, with no list to
    keep: a new backend or scope is in the schema as soon as its room is imported."""
    from pulumi_modelstore.cluster import ClusterScope
    from pulumi_modelstore.store import ModelStore

    def scopes(cls: type) -> set[type]:
        return {s for sub in cls.__subclasses__() for s in {sub} | scopes(sub)}

    package_scopes = {
        c for c in scopes(ClusterScope) if c.__module__.startswith("pulumi_modelstore.")
    }
    assert set(ModelStore.backends().values()) <= set(COMPONENTS)
    assert package_scopes <= set(COMPONENTS)
    assert ModelStore not in COMPONENTS and ClusterScope not in COMPONENTS


def test_a_class_defined_outside_the_package_is_not_a_component():
    from pulumi_modelstore.cluster import ClusterScope

    class ScopeOfATest(ClusterScope):  # a test's own subclass
        pass

    assert ScopeOfATest not in components()


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_every_arg_is_in_the_schema_with_its_description(component):
    definition = DEFINITIONS[component.__name__]
    args_type = component.__init__.__annotations__["args"]
    # Stores and cluster scopes name their args once, as args_type: the constructor says it.
    assert args_type is getattr(component, "args_type", args_type)
    declared = {f.camel: f for f in fields_of(args_type).values()}
    assert set(definition.inputs) == set(declared)
    for name, prop in definition.inputs.items():
        assert prop.description, f"{component.__name__}.{name} has no description"
        assert inspect.cleandoc(prop.description) == declared[name].doc


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_every_output_is_in_the_schema_with_its_description(component):
    definition = DEFINITIONS[component.__name__]
    outputs = getattr(component, "_outputs", lambda: {})()
    assert set(definition.outputs) >= set(outputs)
    for name, prop in definition.outputs.items():
        assert prop.description, f"{component.__name__} output {name} has no description"


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_every_field_documents_its_default_behaviour(component):
    args_type = component.__init__.__annotations__["args"]
    for field in fields_of(args_type).values():
        doc = " ".join(field.doc.split())
        assert any(word in doc for word in ("Default", "No default", "Required")), (
            f"{component.__name__}.{field.name}: say what happens when it is not given"
        )
