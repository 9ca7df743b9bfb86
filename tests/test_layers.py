"""The package's import structure, read from the source with ``ast`` (every ``import`` and
``from ... import``, at module level or inside a function): no import circle, and no import
pointing up the layers. A module imports only its own layer or the ones below.

The layers, bottom up:

0. core: errors, the field machinery, the generic validators, the extras table, the label keys;
1. kube: PV/PVC, storage and snapshot classes, driver installs, the workload mount;
2. the contract on Kubernetes: the ``ModelStore`` template, its consumer access layer and the
   cluster scopes (they make PVs, claims and namespaces, so they sit on ``kube``), the clusters
   section of the config;
3. the rooms: each cloud's (``aws``, ``gcp``, ``azure``) and the Kubernetes-only ones
   (``local``, ``nfs``);
4. the plan engine and what runs it: ``plan``, the CLI, the config program, the component
   schema and provider, the docs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pulumi_modelstore"
NAME = PACKAGE.name

LAYERS: dict[str, int] = {
    "errors": 0,
    "backup": 0,  # the common backup section: errors and fields only
    "fields": 0,
    "validation": 0,
    "extras": 0,
    "labels": 0,  # the label keys on what the library makes: imports nothing
    "registry": 0,  # classes by name (store backends, cluster kinds)
    "modelsection": 0,  # the model section's fields and rules, on the programs' parser
    "model": 0,  # the seed and verify programs: the standard library only
    "kube": 1,
    "": 2,  # the package's __init__: the contract it exports
    "store": 2,
    "access": 2,  # the consumer access layer of the template
    "cluster": 2,
    "config_clusters": 2,
    "aws": 3,
    "gcp": 3,
    "azure": 3,
    "local": 3,
    "nfs": 3,
    "plan": 4,
    "cli": 4,
    "program": 4,
    "schema": 4,
    "provider": 4,
    "docs": 4,
    "policy": 4,  # the policy pack's checks, run offline by the CLI and online by policy/
}
CLOUD_ROOMS = ("aws", "azure", "gcp")


def module_name(path: Path) -> str:
    parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _existing(name: str) -> str | None:
    """The package module ``name`` is (or lies in: ``pkg.mod.Class`` -> ``pkg.mod``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """The package modules ``module`` imports anywhere in its body (functions included)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" for alias in node.names]
        for target in targets:
            resolved = _existing(target)
            if resolved is not None and resolved != module:
                found.add(resolved)
    return found


GRAPH: dict[str, set[str]] = {m: imports_of(m) for m in MODULES}


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    assert top in LAYERS, f"{module}: add its room or module to LAYERS"
    return LAYERS[top]


def test_the_graph_sees_function_level_and_relative_imports():
    # aws/cluster.py imports its identity preflight; schema.py imports the store inside a function.
    assert f"{NAME}.aws.identity" in GRAPH[f"{NAME}.aws.cluster"]
    assert f"{NAME}.store" in GRAPH[f"{NAME}.schema"]
    assert f"{NAME}.plan.placeholders.registry" in GRAPH[f"{NAME}.plan.placeholders.aws"]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    )


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_import_points_up_the_layers():
    assert upward_imports(GRAPH) == []


def test_no_import_circle():
    assert circles(GRAPH) == []


def test_a_circle_and_an_upward_import_are_found():
    """The two checks on a graph that has both, so they cannot pass vacuously."""
    core, room, plan = f"{NAME}.cluster", f"{NAME}.aws.cluster", f"{NAME}.plan.engine"
    bad = {core: {room}, room: {core, plan}, plan: set()}
    assert circles(bad) == [[room, core]]
    assert upward_imports(bad) == sorted(
        [
            f"{core} (layer 2) imports {room} (layer 3)",
            f"{room} (layer 3) imports {plan} (layer 4)",
        ]
    )


@pytest.mark.parametrize("room", CLOUD_ROOMS)
def test_each_cloud_room_has_the_shared_files(room):
    """Every cloud room has its cluster scope, its identity (consumer grants), its store base
    and its validators in files of the same names (its backends differ)."""
    files = {p.stem for p in (PACKAGE / room).glob("*.py")}
    assert {"__init__", "cluster", "identity", "store", "validation"} <= files
