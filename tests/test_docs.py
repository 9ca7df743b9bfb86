"""The generated docs are current: the store graph in ``docs/planning-and-ci.md`` is the plan's
own Mermaid graph, and ``docs/reference.md`` lists every component's inputs and outputs as the
analyzer and the fields' docstrings give them today. ``./scripts/docs`` regenerates both."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from pulumi_modelstore import docs
from pulumi_modelstore.fields import fields_of
from pulumi_modelstore.schema import analyze, components
from tests.conftest import ROOT


def _diff(want: str, got: str, what: str) -> str:
    lines = difflib.unified_diff(want.splitlines(True), got.splitlines(True), what, "fresh", n=1)
    return "".join(lines)[:3000]


@pytest.fixture(scope="module")
def graph() -> str:
    return docs.store_graph(ROOT)


@pytest.fixture(scope="module")
def ref() -> str:
    return docs.reference()


def test_the_picture_is_the_current_plan(graph):
    have = docs.current_block((ROOT / docs.PICTURE_PAGE).read_text())
    want = docs.picture_block(graph, docs.store_tree(ROOT))
    assert have == want, "the store graph is stale: run ./scripts/docs\n" + _diff(
        have, want, docs.PICTURE_PAGE
    )


def test_the_picture_shows_the_store_and_its_protected_file_system(graph):
    assert re.search(
        r'subgraph r\d+\["llama<br/><small>modelstore:index:FsxLustreModelStore', graph
    )
    protected = re.findall(r'\[\("([^<]+)<br/>', graph)
    assert protected == ["llama-fs"], "the file system is drawn as protected (a cylinder)"
    assert " --> " in graph


def test_the_compatibility_page_is_current():
    path = ROOT / docs.COMPATIBILITY
    assert path.exists(), f"{docs.COMPATIBILITY} is missing: run ./scripts/docs"
    have, want = path.read_text(), docs.compatibility(ROOT)
    assert have == want, f"{docs.COMPATIBILITY} is stale: run ./scripts/docs\n" + _diff(
        have, want, docs.COMPATIBILITY
    )


def test_the_compatibility_table_lists_every_chart_the_library_pins():
    """Every ``CsiDriverChart`` any module of the package defines is a row, with the
    Kubernetes range its stored chart states: a chart pinned tomorrow cannot be left out."""
    import importlib
    import pkgutil

    import pulumi_modelstore
    from pulumi_modelstore.kube.drivers import CsiDriverChart

    defined = set()
    for info in pkgutil.walk_packages(pulumi_modelstore.__path__, "pulumi_modelstore."):
        module = importlib.import_module(info.name)
        defined |= {v for v in vars(module).values() if isinstance(v, CsiDriverChart)}
    listed = {chart for _, chart in docs.pinned_charts()}
    assert defined == listed
    table = docs.compatibility(ROOT)
    for chart in listed:
        assert f"| `{chart.chart}` {chart.version} | {chart.app_version} |" in table


def test_reference_is_current(ref):
    path = ROOT / docs.REFERENCE
    assert path.exists(), "docs/reference.md is missing: run ./scripts/docs"
    have, want = path.read_text(), ref
    assert have == want, "docs/reference.md is stale: run ./scripts/docs\n" + _diff(
        have, want, "reference"
    )


def test_reference_has_every_component_input_and_output(ref):
    text = ref
    definitions = analyze()["component_definitions"]
    for cls in components():
        name = cls.__name__
        assert f"\n## {name}\n" in text
        section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        definition = definitions[name]
        for camel, python in definition.inputs_mapping.items():
            assert f"| `{python}` | `{camel}` |" in section, f"{name}.{python}"
        for camel, python in definition.outputs_mapping.items():
            assert f"| `{python}` | `{camel}` |" in section, f"{name} output {python}"


def test_reference_has_every_field_of_every_nested_section(ref):
    """The sections an input takes (``model`` and its ``token_secret``, ``backup``), every one
    a component's input refers to, and a cluster's ``velero``: each field has its row, and a
    component's row links to its section."""
    from pulumi_modelstore.kube.velero import FIELDS, VeleroArgs, parse_velero

    types = analyze()["type_definitions"]
    referred = {
        prop.ref.rsplit(":", 1)[-1]
        for definition in analyze()["component_definitions"].values()
        for prop in definition.inputs.values()
        if prop.ref and not prop.ref.endswith("/Any")
    }
    assert {"ModelSection", "BackupArgs"} <= referred <= set(types)
    for name, definition in types.items():
        assert f"\n### {name}\n" in ref, name
        section = ref.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0]
        for camel, python in definition.properties_mapping.items():
            assert f"| `{python}` | `{camel}` |" in section, f"{name}.{python}"
    assert "| `model` | `model` | [ModelSection](#modelsection) |" in ref
    assert "| `token_secret` | `tokenSecret` | [TokenSecret](#tokensecret) |" in ref
    velero = ref.split("\n### Cluster velero\n", 1)[1]
    assert [row.split("`")[1] for row in velero.splitlines() if row.startswith("| `")] == list(
        FIELDS
    )
    # The defaults the reference states are the ones a cluster entry gets.
    settings, errors = parse_velero("velero", "eks", {})
    assert not errors and settings is not None
    stated = {f.name: f.default for f in fields_of(VeleroArgs).values()}
    assert (stated["enabled"], stated["schedule"], stated["retention_days"]) == (
        settings.enabled,
        settings.schedule,
        settings.retention_days,
    )


@pytest.mark.parametrize(
    ("component", "row"),
    [
        (
            "FsxLustreModelStore",
            "| `storage_capacity_gib` | `storageCapacityGib` | int | `1200` | ",
        ),
        (
            "FsxLustreModelStore",
            "| `deployment_type` | `deploymentType` | string | `PERSISTENT_2` |",
        ),
        (
            "FsxLustreModelStore",
            "| `auto_import_events` | `autoImportEvents` | list[string] | "
            '`["NEW", "CHANGED", "DELETED"]` |',
        ),
        ("EbsModelCache", "| `volume_size` | `volumeSize` | string | required | Size of the seed"),
        ("NfsModelStore", "| `server` | `server` | string | required | The NFS server"),
        ("NfsModelStore", "| `protect` | `protect` | bool | `true` | Protect the data-bearing"),
        ("MountpointS3ModelStore", "| `mounts` | `mounts` | map[string, any] | "),
    ],
)
def test_reference_rows_carry_type_default_and_description(ref, component, row):
    section = ref.split(f"\n## {component}\n", 1)[1].split("\n## ", 1)[0]
    assert row in section


def test_every_stated_default_is_in_the_reference(ref):
    text = ref
    for cls in components():
        args = docs._args_type(cls)
        for field in fields_of(args).values():
            cell = docs._default(field.default)
            if cell:
                assert f"| `{field.name}` | `{field.camel}` |" in text
                assert f" | {cell} | " in text, f"{cls.__name__}.{field.name}: {cell}"


def _copy(tmp_path: Path, readme: str, monkeypatch, ref: str) -> Path:
    monkeypatch.setattr(docs, "reference", lambda: ref)
    monkeypatch.setattr(docs, "compatibility", lambda root: "# Compatibility\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / docs.COMPATIBILITY).write_text("# Compatibility\n")
    (tmp_path / docs.PICTURE_PAGE).write_text(readme)
    (tmp_path / docs.REFERENCE).write_text(ref)
    return tmp_path


def test_check_fails_on_a_stale_picture_and_writing_fixes_it(tmp_path, monkeypatch, capsys, ref):
    monkeypatch.setattr(docs, "store_graph", lambda root: "flowchart LR\n  r0\n")
    monkeypatch.setattr(docs, "store_tree", lambda root: "+ pulumi:pulumi:Stack  x\n")
    stale = f"# x\n\n{docs.BEGIN}\nold\n{docs.END}\n\nafter\n"
    root = _copy(tmp_path, stale, monkeypatch, ref)
    assert docs.main(["--root", str(root), "--check"]) == 1
    assert f"stale: {docs.PICTURE_PAGE}" in capsys.readouterr().err
    assert (root / docs.PICTURE_PAGE).read_text() == stale, "--check changes nothing"
    assert docs.main(["--root", str(root)]) == 0
    fixed = (root / docs.PICTURE_PAGE).read_text()
    assert fixed.startswith("# x\n\n") and fixed.endswith("\n\nafter\n")
    assert "```mermaid\nflowchart LR\n  r0\n```" in fixed
    assert docs.main(["--root", str(root), "--check"]) == 0


@pytest.mark.parametrize(
    ("readme", "message"),
    [
        ("# no markers\n", f"{docs.PICTURE_PAGE} has no"),
        (f"{docs.END}\n{docs.BEGIN}\n", "BEGIN before END"),
        (f"{docs.BEGIN}\n{docs.END}\n{docs.BEGIN}\n{docs.END}\n", "once each"),
    ],
)
def test_a_readme_without_its_markers_is_refused(
    tmp_path, monkeypatch, capsys, ref, readme, message
):
    monkeypatch.setattr(docs, "store_graph", lambda root: "flowchart LR\n")
    monkeypatch.setattr(docs, "store_tree", lambda root: "")
    root = _copy(tmp_path, readme, monkeypatch, ref)
    assert docs.main(["--root", str(root)]) == 1
    assert message in capsys.readouterr().err
    assert (root / docs.PICTURE_PAGE).read_text() == readme
