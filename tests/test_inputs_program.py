"""Bad input to the config program, the project and stack files and the components' args: one
line each (``modelstore plan`` prints it after ``error:``, exits 1, no traceback), and nothing
registered but the stack.

Three tables:
- FILES: a project (``Pulumi.yaml``, ``Pulumi.dev.yaml``, the repo's own program) planned by
  the CLI and by ``plan_directory``. A file at fault is refused before the program runs
  (``ProjectError``, naming the file and line); the config program refuses its input before
  the first store registers (``PlanError``, the stack alone registered).
- STORES: ``build_stores`` called from Python with what YAML cannot write (names that are not
  strings).
- ARGS: each component class given args that are not a mapping: the same shape of message as
  the config program's ``<store>: fields must be a mapping of field names to values``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.cli import main
from pulumi_modelstore.plan.engine import PlanError, plan_directory
from pulumi_modelstore.plan.project import ProjectError
from pulumi_modelstore.program import BACKENDS as BACKEND_CLASSES
from tests.conftest import assert_refused, plan

PROGRAM = "from pulumi_modelstore.program import main\nmain()\n"
PROJECT = "name: modelstore\nruntime: python\n"
BACKENDS = "one of " + ", ".join(sorted(BACKEND_CLASSES))
STORES = "a mapping of store names to their fields, with at least one store"
FIELDS = "a mapping of field names to values"
LOCAL_FIELDS = "one of the 15 fields listed by `modelstore fields LocalModelStore`"
# Who refuses a file row: its messages' {stack} and {project} stand for the files' paths.
FILE_AT_FAULT = "file"
PROGRAM_INPUT = "program"


def stack(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def stores(text: str) -> str:
    """A stack file whose ``modelstore:stores`` is ``text`` (indented under it)."""
    return "config:\n  modelstore:stores:\n" + textwrap.indent(stack(text), "    ")


# (id, Pulumi.dev.yaml, Pulumi.yaml, who refuses it, the message(s))
FILES: list[tuple[str, str | bytes, str, str, str | list[str]]] = [
    # ---- the stack file ----
    (
        "stack file: malformed YAML",
        stores("llama: {backend: local\nx: - 1\n"),
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 4, column 6: not valid YAML: expected ',' or '}', but got ':' "
        "(while parsing a flow mapping on line 3)",
    ),
    (
        "stack file: a tab for indentation",
        "config:\n\tmodelstore:stores: {}\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 2, column 1: not valid YAML: found character '\\t' that cannot start "
        "any token (while scanning for the next token)",
    ),
    (
        "stack file: two documents",
        "config: {}\n---\nconfig: {}\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 2, column 1: not valid YAML: expected a single document in the stream, "
        "but found another document",
    ),
    (
        "stack file: a tag YAML's safe loader does not build",
        "config:\n  modelstore:stores: !!python/object {}\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 2, column 22: not valid YAML: could not determine a constructor for the "
        "tag 'tag:yaml.org,2002:python/object'",
    ),
    (
        "stack file: not UTF-8",
        b"config:\n  modelstore:stores:\n    llama: {backend: \xfflocal}\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 3: not UTF-8 text (byte 0xff)",
    ),
    (
        "stack file: a control character",
        "config:\n  modelstore:stores: \x07\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 2: not valid YAML: character #x0007 is not allowed",
    ),
    (
        "stack file: a list",
        "- modelstore:stores\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 1: the file must be a mapping of stack settings (config, ...), got a list",
    ),
    (
        "stack file: a string",
        "modelstore:stores\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 1: the file must be a mapping of stack settings (config, ...), got a "
        "string 'modelstore:stores'",
    ),
    (
        "config: a list",
        "config:\n  - modelstore:stores\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 2: config must be a mapping of config keys to their values, got a list",
    ),
    (
        "config: a number",
        "config: 3\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 1: config must be a mapping of config keys to their values, got a number 3",
    ),
    (
        "config: one key with and without its namespace",
        "config:\n  stores: {llama: {backend: local, readers: [a]}}\n"
        "  modelstore:stores: {t5: {backend: local, readers: [b]}}\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 3: config key 'modelstore:stores' is 'modelstore:stores', given already "
        "as 'stores' on line 2 (a key without a namespace is the project's); only one may be "
        "given",
    ),
    (
        "config: an alias to a mapping that holds it",
        "config:\n  modelstore:stores: &stores\n    llama: *stores\n",
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 2: an alias refers to a mapping or list that contains it; config must "
        "be a tree",
    ),
    (
        "config: binary data",
        stores("llama: {backend: local, readers: [a], labels: {team: !!binary bWw=}}\n"),
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 3: a config value must be a string, number, boolean, list or mapping, "
        "got binary data",
    ),
    # ---- the project file ----
    (
        "project file: malformed YAML",
        "config: {}\n",
        "name: [modelstore\nruntime: python\n",
        FILE_AT_FAULT,
        "{project} line 2, column 8: not valid YAML: expected ',' or ']', but got ':' "
        "(while parsing a flow sequence on line 1)",
    ),
    (
        "project file: a list",
        "config: {}\n",
        "- name: modelstore\n",
        FILE_AT_FAULT,
        "{project} line 1: the file must be a mapping of project settings (name, runtime, "
        "main, ...), got a list",
    ),
    (
        "project file: a key given twice",
        "config: {}\n",
        "name: modelstore\nruntime: python\nname: other\n",
        FILE_AT_FAULT,
        "{project} line 3: key 'name' is given twice in one mapping (first on line 1); YAML "
        "would keep only the last",
    ),
    (
        "project file: name a list",
        "config: {}\n",
        "name: [modelstore]\nruntime: python\n",
        FILE_AT_FAULT,
        "{project} line 1: name must be the project's name, got a list",
    ),
    (
        "project file: main a list",
        "config: {}\n",
        PROJECT + "main: [app.py]\n",
        FILE_AT_FAULT,
        "{project} line 3: main must be a path (the program's file or directory), got a list",
    ),
    (
        "project file: config a list",
        "config: {}\n",
        PROJECT + "config: [stores]\n",
        FILE_AT_FAULT,
        "{project} line 3: config must be a mapping of config keys to declarations, got a list",
    ),
    # ---- modelstore:stores ----
    (
        "stores: missing",
        "config: {}\n",
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores is missing; it must be set in the stack's config: {STORES}",
    ),
    (
        "stores: empty stack file",
        "",
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores is missing; it must be set in the stack's config: {STORES}",
    ),
    (
        "stores: a string",
        "config:\n  modelstore:stores: llama\n",
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores must be {STORES}, got 'llama'",
    ),
    (
        "stores: a list",
        "config:\n  modelstore:stores: [llama, t5]\n",
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores must be {STORES}, got ['llama', 't5']",
    ),
    (
        "stores: empty",
        "config:\n  modelstore:stores: {}\n",
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores must be {STORES}, got {{}}",
    ),
    (
        "stores: a YAML duplicate store name",
        stores(
            """
            llama: {backend: local, readers: [a]}
            llama: {backend: local, readers: [b]}
            """
        ),
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 4: key 'llama' is given twice in one mapping (first on line 3); YAML "
        "would keep only the last",
    ),
    (
        "store name: a number",
        stores("123: {backend: local, readers: [a]}\n"),
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 3: key 123 must be a string (config reaches the program as JSON), got a "
        'number; quote it: "123"',
    ),
    (
        "store name: null",
        stores("~: {backend: local, readers: [a]}\n"),
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 3: key ~ must be a string (config reaches the program as JSON), got "
        'null; quote it: "~"',
    ),
    (
        "store name: a boolean",
        stores("yes: {backend: local, readers: [a]}\n"),
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 3: key yes must be a string (config reaches the program as JSON), got a "
        'boolean; quote it: "yes"',
    ),
    (
        "store name: empty",
        stores('"": {backend: local, readers: [a]}\n'),
        PROJECT,
        PROGRAM_INPUT,
        "modelstore:stores: store name must be a non-empty string, got ''",
    ),
    # ---- a store's fields ----
    (
        "store: its fields a string",
        stores("llama: local\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama must be {FIELDS}, got 'local'",
    ),
    (
        "store: its fields a list",
        stores("llama: [backend, local]\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama must be {FIELDS}, got ['backend', 'local']",
    ),
    (
        "store: no fields",
        stores("llama:\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama is missing; it must be {FIELDS}",
    ),
    (
        "store: a field name that is a number",
        stores("llama: {backend: local, readers: [a], 1: x}\n"),
        PROJECT,
        FILE_AT_FAULT,
        "{stack} line 3: key 1 must be a string (config reaches the program as JSON), got a "
        'number; quote it: "1"',
    ),
    # ---- backend ----
    (
        "backend: missing",
        stores("llama: {readers: [a]}\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama.backend is missing; it must be {BACKENDS}",
    ),
    (
        "backend: misspelt",
        stores("llama: {backend: fsx-lustr, readers: [a]}\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama.backend must be {BACKENDS}, got 'fsx-lustr'; did you mean "
        "`fsx-lustre`?",
    ),
    (
        "backend: another cloud's word",
        stores("llama: {backend: s3, readers: [a]}\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama.backend must be {BACKENDS}, got 's3'",
    ),
    (
        "backend: a list",
        stores("llama: {backend: [local], readers: [a]}\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama.backend must be {BACKENDS}, got ['local']",
    ),
    (
        "backend: a mapping",
        stores("llama: {backend: {name: local}, readers: [a]}\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama.backend must be {BACKENDS}, got {{'name': 'local'}}",
    ),
    (
        "backend: upper case",
        stores("llama: {backend: LOCAL, readers: [a]}\n"),
        PROJECT,
        PROGRAM_INPUT,
        f"modelstore:stores.llama.backend must be {BACKENDS}, got 'LOCAL'; did you mean `local`?",
    ),
    # ---- spellings ----
    (
        "spelling: snake_case and camelCase of one field",
        stores("llama: {backend: local, readers: [a], claim_name: x, claimName: y}\n"),
        PROJECT,
        PROGRAM_INPUT,
        "modelstore:stores.llama.claimName must be unset when claim_name is given (the same "
        "field, spelled differently), got 'y'",
    ),
    (
        "spelling: camelCase first, then snake_case",
        stores("llama: {backend: local, readers: [a], capacityGib: 5, capacity_gib: 6}\n"),
        PROJECT,
        PROGRAM_INPUT,
        "modelstore:stores.llama.capacity_gib must be unset when capacityGib is given (the "
        "same field, spelled differently), got 6",
    ),
    (
        "spelling: neither snake_case nor camelCase",
        stores("llama: {backend: local, readers: [a], CLAIM_NAME: x}\n"),
        PROJECT,
        PROGRAM_INPUT,
        "modelstore:stores.llama.CLAIM_NAME must be a field of backend local: "
        f"{LOCAL_FIELDS} (nearest: claim_name), got 'CLAIM_NAME'; did you mean `claim_name`?",
    ),
    (
        "spelling: an old name and its new one",
        stores(
            "llama: {backend: fsx-lustre, cluster_name: prod-eks, readers: [a], "
            "kmsKeyId: k, kms_key_arn: k}\n"
        ),
        PROJECT,
        PROGRAM_INPUT,
        "modelstore:stores.llama.kmsKeyId must be unset when kms_key_arn is given (it is its "
        "new name), got 'k'",
    ),
    # ---- every problem at once ----
    (
        "every store's problems at once",
        stores(
            """
            llama: {backend: local, readers: [a], capacity_gib: "20"}
            t5: {backend: nope}
            bert: 3
            """
        ),
        PROJECT,
        PROGRAM_INPUT,
        [
            "modelstore:stores.llama.capacity_gib must be a whole number, got '20'",
            f"modelstore:stores.t5.backend must be {BACKENDS}, got 'nope'",
            f"modelstore:stores.bert must be {FIELDS}, got 3",
        ],
    ),
]


def _project(tmp_path: Path, stack_file: str | bytes, project_file: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(project_file)
    (tmp_path / "__main__.py").write_text(PROGRAM)
    target = tmp_path / "Pulumi.dev.yaml"
    if isinstance(stack_file, bytes):
        target.write_bytes(stack_file)
    else:
        target.write_text(stack_file)
    return tmp_path


def _only_the_stack(registered: list[str]) -> bool:
    return [urn.split("::")[2] for urn in registered] == ["pulumi:pulumi:Stack"]


@pytest.mark.parametrize(
    ("stack_file", "project_file", "stage", "message"),
    [row[1:] for row in FILES],
    ids=[row[0] for row in FILES],
)
def test_a_bad_project_or_config_is_one_line_per_problem(
    tmp_path, capsys, stack_file, project_file, stage, message
):
    directory = _project(tmp_path, stack_file, project_file)
    lines = [
        m.replace("{stack}", str(directory / "Pulumi.dev.yaml")).replace(
            "{project}", str(directory / "Pulumi.yaml")
        )
        for m in ([message] if isinstance(message, str) else message)
    ]

    code = main(["plan", "--cwd", str(directory)])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.splitlines() == [f"error: {line}" for line in lines]
    assert "Traceback" not in err

    if stage == FILE_AT_FAULT:  # refused before the program runs: nothing can register
        with pytest.raises(ProjectError) as project_error:
            plan_directory(directory)
        assert str(project_error.value).splitlines() == lines
    else:
        with pytest.raises(PlanError) as plan_error:
            plan_directory(directory)
        assert str(plan_error.value).splitlines() == lines
        assert _only_the_stack(plan_error.value.registered)


def test_the_table_has_rows_for_every_kind_of_input():
    kinds = {row[0].split(":")[0] for row in FILES}
    assert kinds >= {
        "stack file",
        "project file",
        "config",
        "stores",
        "store name",
        "store",
        "backend",
        "spelling",
    }
    assert len(FILES) + len(STORE_ROWS) + len(ARGS) >= 20


# ---- build_stores from Python: what YAML cannot write --------------------------------------

LOCAL = {"backend": "local", "readers": ["a"]}
STORE_ROWS: list[tuple[str, Any, str]] = [
    ("a number", {1: LOCAL}, "modelstore:stores: store name must be a non-empty string, got 1"),
    (
        "None",
        {None: LOCAL},
        "modelstore:stores: store name is missing; it must be a non-empty string",
    ),
    (
        "a tuple",
        {("a", "b"): LOCAL},
        "modelstore:stores: store name must be a non-empty string, got ('a', 'b')",
    ),
    (
        "not a mapping",
        [("llama", LOCAL)],
        f"modelstore:stores must be {STORES}, got [('llama', "
        "{'backend': 'local', 'readers': ['a']})]",
    ),
    (
        "a field name that is not a string",
        {"llama": {**LOCAL, 7: "x"}},
        f"llama: field name must be {LOCAL_FIELDS}, got 7",
    ),
]


@pytest.mark.parametrize(
    ("stores_value", "message"), [r[1:] for r in STORE_ROWS], ids=[r[0] for r in STORE_ROWS]
)
def test_build_stores_from_python_refuses_what_yaml_cannot_write(stores_value, message):
    from pulumi_modelstore.program import build_stores

    assert_refused(lambda: build_stores(stores_value), message)


# ---- args that are not a mapping, for every component class ---------------------------------


def _components() -> dict[str, Callable[[str, Any], Any]]:
    from pulumi_modelstore.aws import (
        EbsCsiDriver,
        EbsModelCache,
        EfsModelStore,
        FsxLustreModelStore,
        MountpointS3ModelStore,
    )
    from pulumi_modelstore.aws.cluster import EksCluster
    from pulumi_modelstore.cluster import KubernetesCluster
    from pulumi_modelstore.local import LocalModelStore
    from pulumi_modelstore.nfs import NfsModelStore

    return {
        c.__name__: c
        for c in (
            LocalModelStore,
            NfsModelStore,
            FsxLustreModelStore,
            EfsModelStore,
            MountpointS3ModelStore,
            EbsCsiDriver,
            EbsModelCache,
            EksCluster,
            KubernetesCluster,
        )
    }


ARGS: list[Any] = [
    pytest.param("LocalModelStore", "models", id="LocalModelStore"),
    pytest.param("NfsModelStore", ["server", "nas"], id="NfsModelStore"),
    pytest.param("FsxLustreModelStore", 1200, id="FsxLustreModelStore"),
    pytest.param("EfsModelStore", None, id="EfsModelStore"),
    pytest.param("MountpointS3ModelStore", "s3://models", id="MountpointS3"),
    pytest.param("EbsCsiDriver", True, id="EbsCsiDriver"),
    pytest.param("EbsModelCache", "gp3", id="EbsModelCache"),
    pytest.param("EksCluster", "prod-eks", id="EksCluster"),
    pytest.param("KubernetesCluster", "kind", id="KubernetesCluster"),
]


@pytest.mark.parametrize(("component", "args"), ARGS)
def test_args_that_are_not_a_mapping_are_one_line_for_every_component(component, args):
    """The same shape as the config program's ``llama: fields must be a mapping of field
    names to values, got 'local'``."""
    build = _components()[component]
    if args is None:  # None reads as missing, True as YAML writes it
        expected = f"s: args is missing; it must be {FIELDS}"
    else:
        expected = f"s: args must be {FIELDS}, got {'true' if args is True else repr(args)}"
    assert_refused(lambda: build("s", args), expected)


def test_the_config_program_and_a_python_caller_say_the_same_of_args_not_a_mapping():
    from pulumi_modelstore.aws.cluster import EksCluster
    from pulumi_modelstore.program import build_stores

    with pytest.raises(PlanError) as config:
        plan(lambda: build_stores({"s": "prod-eks"}))
    with pytest.raises(PlanError) as python:
        plan(lambda: EksCluster("s", "prod-eks"))  # type: ignore[arg-type]
    assert str(config.value) == f"s: fields must be {FIELDS}, got 'prod-eks'"
    assert str(python.value) == f"s: args must be {FIELDS}, got 'prod-eks'"


# ---- camelCase: one rule for every section (issue 26) -----------------------------------------

SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
SNAKE_MODEL = {
    "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
    "revision": SHA,
    "keep_revisions": 3,
    "token_secret": {"name": "hf", "key": "token"},
    "manifest_sha256": "sha256:" + "a" * 64,
}
CAMEL_MODEL = {
    "source": "hf://meta-llama/Llama-3.1-8B-Instruct",
    "revision": SHA,
    "keepRevisions": 3,
    "tokenSecret": {"name": "hf", "key": "token"},
    "manifestSha256": "sha256:" + "a" * 64,
}
WRITER = {
    "backend": "efs",
    **BACKEND_CLASSES["efs"].example_args,
    "readers": ["serving"],
    "writers": ["loader"],
}


def _states(stores_value: dict[str, Any]) -> list[tuple[str, Any]]:
    from pulumi_modelstore.program import build_stores

    return [(s["urn"], s["inputs"]) for s in plan(lambda: build_stores(stores_value)).states()]


def test_stack_config_takes_the_schemas_camel_case_keys_in_every_section():
    """The schema declares ``keepRevisions``, ``tokenSecret`` and ``retentionDays``: a stack's
    config may spell every section's keys so, at any depth, and plans as the Python names do
    (before, ``model`` refused ``keepRevisions`` while ``backup`` took ``retentionDays``)."""
    fsx = {
        "backend": "fsx-lustre",
        **BACKEND_CLASSES["fsx-lustre"].example_args,
        "readers": ["serving"],
        "writers": ["loader"],
    }
    camel = {
        "llama": {**WRITER, "model": CAMEL_MODEL},
        "t5": {**fsx, "backup": {"enabled": True, "retentionDays": 14}},
    }
    snake = {
        "llama": {**WRITER, "model": SNAKE_MODEL},
        "t5": {**fsx, "backup": {"enabled": True, "retention_days": 14}},
    }
    assert _states(camel) == _states(snake)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            {"model": {**SNAKE_MODEL, "keepRevisions": 4}},
            "llama: model.keepRevisions must be unset when model.keep_revisions is given (the "
            "same field, spelled differently), got 4",
        ),
        (
            {"model": {**SNAKE_MODEL, "tokenSecret": {"name": "hf", "key": "t"}}},
            "llama: model.tokenSecret must be unset when model.token_secret is given (the same "
            "field, spelled differently), got {'name': 'hf', 'key': 't'}",
        ),
        (
            {"backup": {"retention_days": 7, "retentionDays": 14}},
            "llama: backup.retentionDays must be unset when backup.retention_days is given (the "
            "same field, spelled differently), got 14",
        ),
    ],
)
def test_one_field_in_both_spellings_is_refused_in_any_section(section, message):
    from pulumi_modelstore.program import build_stores

    assert_refused(lambda: build_stores({"llama": {**WRITER, **section}}), message)


def test_python_args_take_python_names_and_the_backup_camel_case_spelling_warns():
    """Python args take the Python names only: ``model`` refuses ``keepRevisions``, and
    ``backup``'s camelCase keys (taken before) warn until 0.2.0 removes them."""
    import warnings

    from tests.test_backend_contract import build

    assert_refused(
        lambda: build("efs", model={**SNAKE_MODEL, "keepRevisions": 3}),
        "llama: model field name must be one of source, revision, include, token, token_secret, "
        "keep_revisions, namespace, verify, image, manifest_sha256, source_resource_group, got "
        "'keepRevisions'",
    )
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        camel = plan(lambda: build("fsx-lustre", backup={"enabled": True, "retentionDays": 14}))
    assert [str(w.message) for w in warned if str(w.message).startswith("llama:")] == [
        "llama: backup.retentionDays is deprecated, use backup.retention_days"
    ]
    snake = plan(lambda: build("fsx-lustre", backup={"enabled": True, "retention_days": 14}))
    assert [(s["urn"], s["inputs"]) for s in camel.states()] == [
        (s["urn"], s["inputs"]) for s in snake.states()
    ]
