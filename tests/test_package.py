"""The multi-language component package, tested in-process (no Pulumi CLI here, so
``pulumi package add`` itself is not run): ``PulumiPlugin.yaml``, the ``__main__.py`` entry
point, and the schema the provider it builds answers to ``GetSchema``."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ProviderServicer
from pulumi.runtime.proto import provider_pb2

import pulumi_modelstore.provider as package
from pulumi_modelstore.fields import Field, fields_of, outputs_of
from pulumi_modelstore.schema import PACKAGE, components
from tests.cli_process import HASH_SEED

ROOT = Path(__file__).resolve().parent.parent
COMPONENTS = components()


def get_schema(provider: Any) -> str:
    """The schema the plugin answers the engine's GetSchema with (the SDK's own servicer)."""
    servicer = ProviderServicer(provider, [], engine_address="")
    request = provider_pb2.GetSchemaRequest(version=0)
    return str(asyncio.run(servicer.GetSchema(request, None)).schema)


PROVIDER = package.provider()
SCHEMA_JSON = get_schema(PROVIDER)
SCHEMA = json.loads(SCHEMA_JSON)


# ---- PulumiPlugin.yaml and the entry point -----------------------------------------------------


def test_pulumi_plugin_yaml_names_the_python_runtime():
    manifest = yaml.safe_load((ROOT / "PulumiPlugin.yaml").read_text())
    # Python plugins run with the pip toolchain and a `venv` virtual environment; Pulumi's
    # docs ask for no other runtime options.
    assert manifest == {"runtime": "python"}


def test_the_plugin_installs_this_project_with_every_cloud_extra():
    # The package hosts every component, so its plugin venv needs every cloud's SDK.
    lines = [
        line.strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines == [".[all]"]


def test_the_entry_point_imports_without_starting_a_server(monkeypatch):
    def refuse(*args: Any) -> None:
        raise AssertionError("importing __main__.py started the provider")

    monkeypatch.setattr(package, "serve", refuse)
    monkeypatch.setattr(package, "main", refuse)
    runpy.run_path(str(ROOT / "__main__.py"), run_name="plugin_entry_point")


def test_the_entry_point_serves_the_provider_with_the_engine_arguments(monkeypatch):
    served: list[tuple[Any, list[str]]] = []
    monkeypatch.setattr(package, "main", lambda provider, args: served.append((provider, args)))
    monkeypatch.setattr(sys, "argv", [str(ROOT), "127.0.0.1:12345", "--logtostderr"])
    runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")
    [(provider, args)] = served
    assert args == ["127.0.0.1:12345", "--logtostderr"]
    assert isinstance(provider, package.ModelStoreProvider)
    assert provider.version == package.package_version()
    assert get_schema(provider) == SCHEMA_JSON


# ---- the schema the provider serves --------------------------------------------------------------


def test_the_package_is_modelstore_at_the_distribution_version():
    assert SCHEMA["name"] == PACKAGE == "modelstore"
    assert SCHEMA["version"] == package.package_version()
    assert PROVIDER.version == package.package_version()


def test_every_public_component_is_a_resource_of_the_package():
    tokens = {f"modelstore:index:{c.__name__}" for c in COMPONENTS}
    assert set(SCHEMA["resources"]) == tokens
    for token in tokens:
        assert SCHEMA["resources"][token]["isComponent"] is True


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_every_input_is_in_the_schema_with_its_description(component):
    resource = SCHEMA["resources"][f"modelstore:index:{component.__name__}"]
    declared = {f.camel: f for f in fields_of(component.__init__.__annotations__["args"]).values()}
    inputs = resource.get("inputProperties", {})
    assert set(inputs) == set(declared)
    for name, prop in inputs.items():
        assert prop.get("description"), f"{component.__name__}.{name} has no description"
        assert inspect.cleandoc(prop["description"]) == declared[name].doc


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_every_output_is_in_the_schema_with_its_description(component):
    resource = SCHEMA["resources"][f"modelstore:index:{component.__name__}"]
    properties = resource.get("properties", {})
    assert set(properties) == set(outputs_of(component))
    for name, prop in properties.items():
        assert prop.get("description"), f"{component.__name__} output {name} has no description"


def documented_required(field: Field) -> bool:
    """A field its docstring calls required outright ("Required." or "No default"), not under
    a condition ("Required unless ``cluster`` is given", "Required for HDD"): the schema can
    say the first, not the second."""
    doc = " ".join(field.doc.split())
    return bool(re.search(r"(?:^|[.:;]\s)(?:Required\.|No default\b)", doc))


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_required_inputs_are_the_fields_documented_as_required(component):
    resource = SCHEMA["resources"][f"modelstore:index:{component.__name__}"]
    fields = fields_of(component.__init__.__annotations__["args"]).values()
    assert set(resource.get("requiredInputs", [])) == {
        f.camel for f in fields if documented_required(f)
    }


# What no component can work without, whatever else is given: each is Required[...] in its args
# TypedDict, so a type checker flags it before a plan and the schema lists it. A field needed
# only under a condition (a store's cluster_name, unless `cluster` is given) is not here.
REQUIRED_INPUTS = {
    "AksCluster": ["clusterName", "clusterResourceGroupName"],
    "EbsModelCache": ["volumeSize"],
    "GkeCluster": ["clusterName", "location"],
    "HyperdiskMlModelStore": ["sizeGib"],
    "NfsModelStore": ["server", "share"],
}
REQUIRED_TYPE_PROPERTIES = {
    "ModelSection": ["revision", "source"],
    "TokenSecret": ["key", "name"],
}


def test_the_required_inputs_are_what_a_component_cannot_work_without():
    required = {
        token.split(":")[-1]: sorted(resource["requiredInputs"])
        for token, resource in SCHEMA["resources"].items()
        if resource.get("requiredInputs")
    }
    assert required == REQUIRED_INPUTS
    types = {
        token.split(":")[-1]: sorted(t["required"])
        for token, t in SCHEMA["types"].items()
        if t.get("required")
    }
    assert types == REQUIRED_TYPE_PROPERTIES


def test_the_schema_is_deterministic(cli_process):
    assert get_schema(package.provider()) == SCHEMA_JSON
    # Another process, another hash seed: set iteration order must not leak into the schema.
    assert cli_process.result.returncode == 0, cli_process.result.stderr
    assert os.environ.get("PYTHONHASHSEED") != HASH_SEED
    assert json.loads(cli_process.result.stdout.splitlines()[-1]) == SCHEMA_JSON


# ---- the provider is the SDK's ComponentProvider with our analyzer ----------------------------


def strip_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [strip_descriptions(v) for v in value]
    return value


def test_the_provider_sets_what_the_sdk_component_provider_sets():
    """ModelStoreProvider repeats ComponentProvider.__init__ with another analyzer: an SDK
    release that changes that __init__ fails here, not at a consumer's `pulumi up`."""
    stock = ComponentProvider(COMPONENTS, PACKAGE, version=package.package_version())
    assert set(vars(PROVIDER)) == set(vars(stock))
    assert PROVIDER._components == stock._components
    assert {n: d.inputs_mapping for n, d in PROVIDER._component_defs.items()} == {
        n: d.inputs_mapping for n, d in stock._component_defs.items()
    }
    assert stock.schema is not None
    assert strip_descriptions(SCHEMA) == strip_descriptions(json.loads(stock.schema))


def test_our_analyzer_is_why_the_shared_fields_have_descriptions():
    """The stock analyzer leaves fields declared on a base TypedDict without a description
    (what this provider exists for); if a later SDK reads them itself, drop the subclass."""
    stock = json.loads(ComponentProvider(COMPONENTS, PACKAGE).schema or "{}")
    local = stock["resources"]["modelstore:index:LocalModelStore"]["inputProperties"]
    assert "description" not in local["readers"]
    ours = SCHEMA["resources"]["modelstore:index:LocalModelStore"]["inputProperties"]
    assert ours["readers"]["description"]


# ---- the docs' programs in other languages use the schema's names -----------------------------


def readme_section() -> str:
    """docs/other-languages.md, which holds the TypeScript and YAML programs."""
    return (ROOT / "docs" / "other-languages.md").read_text()


def test_the_readme_typescript_program_uses_the_schema_names():
    [block] = re.findall(r"```typescript\n(.*?)```", readme_section(), re.S)
    resources = SCHEMA["resources"]
    made = re.findall(r"const (\w+) = new modelstore\.(\w+)\(\"[^\"]+\", \{(.*?)\}\);", block, re.S)
    assert made
    for variable, component, body in made:
        resource = resources[f"modelstore:index:{component}"]
        keys = re.findall(r"^\s*(\w+):", body, re.M)
        assert keys and set(keys) <= set(resource["inputProperties"])
        outputs = re.findall(rf"\b{variable}\.(\w+)", block)
        assert outputs and set(outputs) <= set(resource["properties"])


def test_the_readme_yaml_program_uses_the_schema_names():
    [block] = re.findall(r"```yaml\n(.*?)```", readme_section(), re.S)
    program = yaml.safe_load(block)
    assert program["packages"]["modelstore"]
    for name, resource in program["resources"].items():
        schema = SCHEMA["resources"][resource["type"]]
        assert set(resource["properties"]) <= set(schema["inputProperties"])
        assert set(resource["properties"]) >= set(schema.get("requiredInputs", []))
        for value in program["outputs"].values():
            owner, output = re.fullmatch(r"\$\{(\w+)\.(\w+)\}", value).groups()
            if owner == name:
                assert output in schema["properties"]
