"""The parser is strict about the code that drives it: a rule, a default, a lookup or a rename
naming a field its args type does not declare is a programming error, raised on first use (or
when the class is defined), never read as an unset field that silently switches a rule off."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypedDict

import pulumi
import pytest

from pulumi_modelstore import ModelStoreInputError
from pulumi_modelstore.errors import UnknownFieldError
from pulumi_modelstore.fields import Parser, fields_of, parse_args, refusal_name
from pulumi_modelstore.nfs import NfsModelStore
from pulumi_modelstore.plan.engine import plan_program
from pulumi_modelstore.store import STORE_NAME


class _Args(TypedDict, total=False):
    server: str
    """The server. Default: none."""
    share: str
    """The share. Default: ``/exports``."""


KNOWN = "(its fields: server, share)"


def _refuse_everything(store: str, *values: Any) -> None:
    raise ModelStoreInputError(store, "server", values, "never given")


def parser(**raw: Any) -> Parser:
    return Parser("llama", _Args, raw)


def test_a_rule_naming_an_unknown_field_raises_naming_the_class_the_name_and_the_known_ones():
    """Before: ``rule(check, "servr")`` passed None and the rule never fired."""
    p = parser(server="nas01")
    with pytest.raises(UnknownFieldError) as err:
        p.rule(_refuse_everything, "servr")
    assert str(err.value) == (
        f"Parser.rule(_refuse_everything) names 'servr', which is not a field of _Args {KNOWN}"
    )


def test_a_field_rule_naming_an_unknown_field_raises():
    p = parser(server="nas01")
    with pytest.raises(
        UnknownFieldError, match=re.escape(f"'servr', which is not a field of _Args {KNOWN}")
    ):
        p.field_rule(lambda store, field, value: None, "servr")


@pytest.mark.parametrize(
    ("use", "where"),
    [
        (lambda p: p["servr"], "Parser.__getitem__"),
        (lambda p: "servr" in p, "Parser.__contains__"),
        (lambda p: p.set("servr", "nas01"), "Parser.set"),
        (lambda p: p.ok("server", "servr"), "Parser.ok"),
    ],
    ids=["lookup", "given", "default", "ok"],
)
def test_a_lookup_a_default_or_a_question_naming_an_unknown_field_raises(use, where):
    p = parser(server="nas01")
    with pytest.raises(UnknownFieldError) as err:
        use(p)
    assert str(err.value) == f"{where} names 'servr', which is not a field of _Args {KNOWN}"


def test_known_fields_and_declared_refusal_names_still_work():
    p = parser(server="nas01")
    assert p["server"] == "nas01" and p["share"] == "/exports"
    assert "server" in p and "share" not in p
    assert p.ok("server", STORE_NAME, refusal_name("a derived name"))
    assert p.declared("server", "servr", "share") == ("server", "share")
    p.rule(_refuse_everything, "server")
    assert not p.ok("server")
    with pytest.raises(ModelStoreInputError):
        p.finish()


def test_a_misspelled_field_in_a_rule_is_not_bad_input():
    """The error is not a ModelStoreInputError: ``rule`` would record it as the user's."""
    assert not issubclass(UnknownFieldError, ModelStoreInputError)


def test_a_store_renaming_to_an_unknown_field_fails_when_the_class_is_defined():
    with pytest.raises(UnknownFieldError) as err:

        class _Typo(NfsModelStore):
            renamed_fields = MappingProxyType({"host": "servr"})

    assert str(err.value).startswith(
        "_Typo.renamed_fields (host -> servr) names 'servr', which is not a field of "
        "NfsModelStoreArgs (its fields: backup, capacity_gib, claim_name, cluster, "
    )


def test_a_store_renaming_a_current_field_fails_when_the_class_is_defined():
    with pytest.raises(TypeError, match="renames 'share', which is still a field"):

        class _Shadow(NfsModelStore):
            renamed_fields = MappingProxyType({"share": "sub_dir"})


def test_parse_args_refuses_a_rename_to_an_unknown_field():
    with pytest.raises(UnknownFieldError, match=r"names 'servr', which is not a field of _Args"):
        parse_args(
            "llama", _Args, {"host": "nas01"}, lambda p: None, renamed_fields={"host": "servr"}
        )


def test_errors_name_a_field_as_the_caller_wrote_it():
    """A deprecated spelling is named back in the errors about it, in the field and in the
    words of another field's rule; the current name when the caller wrote that."""

    def share_needs_server(store: str, server: Any, share: Any) -> None:
        raise ModelStoreInputError(store, "share", share, "unset unless server is given")

    def rules(p: Parser) -> None:
        p.rule(share_needs_server, "server", "share")

    for key in ("host", "server"):
        with pytest.raises(ModelStoreInputError) as err:
            parse_args(
                "llama",
                _Args,
                {key: "nas01", "share": "/x"},
                rules,
                renamed_fields={"host": "server"},
                warn=False,
            )
        assert str(err.value) == f"llama: share must be unset unless {key} is given, got '/x'"


def test_a_later_step_reading_an_unknown_field_from_the_parsed_args_raises():
    """``spec.args.get("servr")`` in a provision step is the same typo as in a rule."""
    spec = NfsModelStore.parse("llama", {"server": "nas01", "share": "/x", "readers": ["a"]})
    assert spec.args["server"] == "nas01" and spec.args.get("sub_dir") is None
    assert "share" in spec.args and "sub_dir" not in spec.args
    for use in (
        lambda: spec.args.get("servr"),
        lambda: spec.args["servr"],
        lambda: "servr" in spec.args,
    ):
        with pytest.raises(
            UnknownFieldError, match="names 'servr', which is not a field of NfsModelStoreArgs"
        ):
            use()
    values, _ = parse_args("llama", _Args, {"server": "nas01"}, lambda p: None)
    assert values == {"server": "nas01", "share": "/exports"}
    with pytest.raises(UnknownFieldError, match=r"args\.get\('servr'\) names 'servr'"):
        values.get("servr")


class _InputArgs(TypedDict, total=False):
    server: pulumi.Input[str]
    """The server. Default: none."""
    options: Sequence[pulumi.Input[str]]
    """Mount options. Default: none."""
    tags: Mapping[str, pulumi.Input[str]]
    """Tags. Default: none."""


def test_a_field_typed_input_takes_an_output_and_is_checked_as_its_plain_type():
    """``pulumi.Input[T]`` holds its Output as the forward reference "Output[T]": before,
    reading the fields raised NameError, and the words for its type were "a value"."""
    assert list(fields_of(_InputArgs)) == ["server", "options", "tags"]
    given: dict[str, Any] = {}

    def program() -> None:
        server, option, tag = (pulumi.Output.from_input(v) for v in ("nas01", "ro", "ml"))
        raw = {"server": server, "options": [option, "hard"], "tags": {"team": tag}}
        given.update(Parser("llama", _InputArgs, raw).finish())

    plan_program(program)
    assert [type(v).__name__ for v in given.values()] == ["Output", "list", "dict"]
    with pytest.raises(ModelStoreInputError) as err:
        Parser("llama", _InputArgs, {"server": 5, "options": "ro", "tags": {"team": 1}}).finish()
    assert str(err.value).splitlines() == [
        "llama: server must be a string, got 5",
        "llama: options must be a list of strings, got 'ro'",
        "llama: tags must be a mapping of strings to strings, got {'team': 1}",
    ]
