"""What users read writes booleans and null as YAML does (``true``, ``false``, ``null`` or
"unset"), never as Python does (``True``, ``False``, ``None``): a stack's config is YAML, and a
message saying ``False unless the store has writers`` reads as a string to type.

Two scans, each checked against a sample it must catch: every string literal of the package
that is not a docstring (refusal texts, hints, warnings, CLI and policy output), and the
generated ``docs/reference.md`` (every field's and output's docstring, every default). Values
formatted into a message at run time are checked where the bad-input tables run:
``conftest.assert_refused`` refuses a message that spells one as Python does."""

from __future__ import annotations

import ast
from typing import Any, TypedDict

import pytest

from pulumi_modelstore import docs
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.fields import fields_of
from tests.conftest import PYTHON_WORDS, ROOT

PACKAGE = ROOT / "pulumi_modelstore"
EXEMPT = {
    ("model/bundle.py", "',run_name='__main__',alter_sys=True)"): "Python source the seed runs",
    # A Kubernetes condition's status is the string "True" (the API's own spelling).
    ("plan/placeholders/registry.py", "True"): "a completed Job's Complete condition",
}
"""Literals that are not text for users, with why."""
_TYPE_NODES = (ast.Name, ast.Attribute, ast.BinOp, ast.BitOr, ast.Subscript, ast.Tuple, ast.Load)


def _is_type(text: str) -> bool:
    """A quoted annotation (``"ClusterScope | None"``): names joined by ``|``, nothing else."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return all(
        isinstance(n, _TYPE_NODES) or (isinstance(n, ast.Constant) and n.value is None)
        for n in ast.walk(tree.body)
    )


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of docstring nodes: a body's first string, and a string after an assignment
    (an attribute's or field's docstring)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
                and (i == 0 or isinstance(body[i - 1], ast.Assign | ast.AnnAssign))
            ):
                found.add(id(stmt.value))
    return found


def python_words(source: str) -> list[str]:
    """The string literals of ``source`` (f-strings' text included) that are not docstrings
    nor annotations and spell a value as Python does."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and PYTHON_WORDS.search(node.value)
        and not _is_type(node.value)
    ]


def test_the_literal_scan_catches_a_python_boolean_and_skips_docstrings_and_types():
    source = '''
def rule(store, field, value, wanted: "bool | None") -> None:
    """Refuse: internal docstrings may say True."""
    raise ModelStoreInputError(store, field, True, f"False unless {field} is set")

X: "ClusterScope | None" = None
"""An attribute's docstring: None until set."""
'''
    assert python_words(source) == ["False unless "]


def test_no_literal_users_read_spells_a_value_as_python():
    found = []
    scanned = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        source = path.read_text()
        scanned += source.count("ModelStoreInputError(")
        found += [f"{rel}: {text!r}" for text in python_words(source) if (rel, text) not in EXEMPT]
    assert scanned > 100, "the scan reads the package's refusals"
    assert found == []


def test_the_reference_spells_values_as_yaml():
    text = (ROOT / docs.REFERENCE).read_text()
    assert "| `allow_overwrite` |" in text, "the scan reads the fields' rows"
    found = [line[:200] for line in text.splitlines() if PYTHON_WORDS.search(line)]
    assert found == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "true"),
        (False, "false"),
        ("True", "'True'"),
        ([True, None, 2], "[true, null, 2]"),
        ({"runAsNonRoot": False, "fsGroup": None}, "{'runAsNonRoot': false, 'fsGroup': null}"),
        (["flock", "ro"], "['flock', 'ro']"),
        ([("team", "ml"), (False,)], "[('team', 'ml'), (false,)]"),
    ],
)
def test_a_value_given_is_shown_as_yaml_reads_it(value, shown):
    error = ModelStoreInputError("llama", "readers", value, "a list of namespaces")
    assert str(error) == f"llama: readers must be a list of namespaces, got {shown}"


def test_a_default_in_the_reference_is_yaml():
    assert docs._default(True) == "`true`"
    assert docs._default(None) == "`null`"
    assert docs._default({"runAsNonRoot": True, "fsGroup": 1000}) == (
        '`{"runAsNonRoot": true, "fsGroup": 1000}`'
    )


class _Spelt(TypedDict, total=False):
    on: bool
    """Default: ``true``."""
    off: bool
    """Default: ``false``."""
    context: dict[str, Any]
    """Default: ``{"runAsNonRoot": true, "fsGroup": null}``."""
    options: list[str]
    """Default: ``["flock"]``."""
    mode: str
    """Default: ``PERSISTENT_2``."""
    octal: str
    """Default: ``0755``."""


def test_a_docstring_default_reads_as_yaml_writes_it():
    """The docstring is the default's one source: it says ``true`` and means it."""
    assert {name: f.default for name, f in fields_of(_Spelt).items()} == {
        "on": True,
        "off": False,
        "context": {"runAsNonRoot": True, "fsGroup": None},
        "options": ["flock"],
        "mode": "PERSISTENT_2",
        "octal": "0755",
    }
