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
    assert {"LocalModelStore", "EksCluster", "KubernetesCluster"} <= names
    assert set(DEFINITIONS) == names


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_every_arg_is_in_the_schema_with_its_description(component):
    definition = DEFINITIONS[component.__name__]
    args_type = component.__init__.__annotations__["args"]
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
