"""``model.token``: the source's token as a Pulumi secret, made into the Secret
``<claim>-model-token`` in the loader namespace before the seed Job that mounts it, never
shown by a plan; in stack config ``modelstore:tokens.<store>``, set with ``--secret``."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest

from pulumi_modelstore.kube import model_jobs
from pulumi_modelstore.plan.engine import SECRET, plan_program
from pulumi_modelstore.plan.render import render
from pulumi_modelstore.plan.timeline import timeline, undocumented_edges
from pulumi_modelstore.program import main
from tests.conftest import assert_refused, plan
from tests.test_backend_contract import build

JOB = "kubernetes:batch/v1:Job"
SECRET_TYPE = "kubernetes:core/v1:Secret"
SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
MODEL = {"source": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": SHA}
# What no plan may show: a token of the Hub's shape.
TOKEN = "hf_" + "Tq7" * 12
FORMATS = ("json", "tree", "yaml", "mermaid")


def by_name(p: Any, type_: str) -> dict[str, dict[str, Any]]:
    return {s["inputs"]["metadata"]["name"]: s for s in p.by_type(type_)}


@pytest.fixture(scope="module", params=["string", "output"])
def planned(request: Any) -> Any:
    """A local store whose model takes the token as a plain string (the store keeps it as a
    secret) or as a secret Output."""

    def token() -> Any:  # an Output is made in the program
        return TOKEN if request.param == "string" else pulumi.Output.secret(TOKEN)

    return plan(lambda: build("local", model={**MODEL, "token": token()}), fill=True)


def test_a_token_is_a_secret_in_the_loader_namespace_that_the_seed_mounts(planned: Any) -> None:
    (secret,) = planned.by_type(SECRET_TYPE)
    inputs = secret["inputs"]
    assert inputs["metadata"]["name"] == "llama-model-token"
    assert inputs["metadata"]["namespace"] == "llama-loader"
    assert inputs["type"] == "Opaque"
    assert inputs["stringData"] == SECRET  # the whole mapping, as the SDK sends it
    seed = by_name(planned, JOB)[f"llama-seed-{SHA[:12]}"]
    pod = seed["inputs"]["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if "secret" in v]
    assert volume["secret"]["secretName"] == "llama-model-token"
    assert volume["secret"]["items"] == [{"key": "token", "path": "token"}]
    args = pod["containers"][0]["args"]
    assert args[args.index("--token-file") + 1] == f"{model_jobs.TOKEN_DIR}/token"
    # The seed waits for the Secret; the Secret for its namespace.
    assert secret["urn"] in seed["dependencies"]
    (namespace,) = [
        s
        for s in planned.by_type("kubernetes:core/v1:Namespace")
        if s["inputs"]["metadata"]["name"] == "llama-loader"
    ]
    assert namespace["urn"] in secret["dependencies"]


def test_the_token_is_never_shown_by_the_plan(planned: Any) -> None:
    for fmt in FORMATS:
        assert TOKEN not in render(planned, fmt), fmt
    assert TOKEN not in json.dumps(planned.outputs)


def test_the_timeline_creates_the_secret_before_the_seed_runs(planned: Any) -> None:
    assert undocumented_edges(planned) == []
    t = timeline(planned)
    (secret,) = planned.by_type(SECRET_TYPE)
    seed = by_name(planned, JOB)[f"llama-seed-{SHA[:12]}"]
    assert t.entries[secret["urn"]].finish <= t.entries[seed["urn"]].start
    assert t.entries[seed["urn"]].after.urn in {
        secret["urn"],
        *(s["urn"] for s in planned.states() if s["urn"] in seed["dependencies"]),
    }


def test_an_existing_secret_is_still_named_by_token_secret() -> None:
    p = plan(lambda: build("local", model={**MODEL, "token_secret": {"name": "hf", "key": "t"}}))
    assert p.by_type(SECRET_TYPE) == []
    seed = by_name(p, JOB)[f"llama-seed-{SHA[:12]}"]
    (volume,) = [v for v in seed["inputs"]["spec"]["template"]["spec"]["volumes"] if "secret" in v]
    assert volume["secret"]["secretName"] == "hf"


def test_the_ebs_cache_seed_gets_its_token_secret_too() -> None:
    from tests.test_ebs import cache

    p = plan(lambda: cache(loader=None, model={**MODEL, "token": pulumi.Output.secret(TOKEN)})())
    (secret,) = p.by_type(SECRET_TYPE)
    assert secret["inputs"]["metadata"]["namespace"] == "inference"
    (seed,) = [j for j in p.by_type(JOB) if "-seed-" in j["inputs"]["metadata"]["name"]]
    assert secret["urn"] in seed["dependencies"]
    assert TOKEN not in render(p, "json")


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            {**MODEL, "token": TOKEN, "token_secret": {"name": "hf", "key": "token"}},
            "llama: model.token must be unset when model.token_secret is given (model.token "
            "makes the Secret llama-model-token, model.token_secret names one that exists), got "
            "'<redacted>'",
        ),
        (
            {"source": "s3://acme-models/llama", "revision": "v1", "token": TOKEN},
            "llama: model.token must be unset unless model.source is hf:// (the seed reads an "
            "object store as the store's cloud identity, never with a token), got '<redacted>'",
        ),
        (
            {**MODEL, "token": 42},
            "llama: model.token must be a Pulumi secret (an Output such as "
            "pulumi.Config().require_secret(...), or a non-empty string the store keeps as "
            "one), got '<redacted>'",
        ),
        (
            {**MODEL, "token": ""},
            "llama: model.token must be a Pulumi secret (an Output such as "
            "pulumi.Config().require_secret(...), or a non-empty string the store keeps as "
            "one), got '<redacted>'",
        ),
    ],
)
def test_bad_tokens_are_refused_without_showing_them(model: Any, message: str) -> None:
    assert_refused(lambda: build("efs", model=model), message)


# ---- stack config ----------------------------------------------------------------------------

STORES = {
    "llama": {
        "backend": "local",
        "readers": ["inference"],
        "create_namespaces": True,
        "model": MODEL,
    },
    "t5": {"backend": "local", "readers": ["t5"], "create_namespaces": True},
}


def config_plan(
    stores: Any = None, tokens: Any = None, secret_keys: tuple[str, ...] = ("modelstore:tokens",)
) -> Any:
    config = {"modelstore:stores": json.dumps(STORES if stores is None else stores)}
    if tokens is not None:
        config["modelstore:tokens"] = json.dumps(tokens)
    return plan_program(main, config=config, secret_keys=list(secret_keys), fill_outputs=True)


def test_a_token_set_as_a_secret_in_config_makes_the_secret() -> None:
    p = config_plan(tokens={"llama": TOKEN})
    (secret,) = p.by_type(SECRET_TYPE)
    assert secret["inputs"]["metadata"]["name"] == "llama-model-token"
    assert secret["inputs"]["stringData"] == SECRET
    for fmt in FORMATS:
        assert TOKEN not in render(p, fmt), fmt


def refused_config(message: str, **kwargs: Any) -> None:
    from pulumi_modelstore.plan.engine import PlanError

    with pytest.raises(PlanError) as err:
        config_plan(**kwargs)
    assert str(err.value) == message
    assert TOKEN not in str(err.value)
    assert [u.split("::")[2] for u in err.value.registered] == ["pulumi:pulumi:Stack"]


HOW = "pulumi config set --secret --path 'modelstore:tokens.<store>' <token>"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"tokens": {"llama": TOKEN}, "secret_keys": ()},
            f"modelstore:tokens must be set as a secret ({HOW}): a plain value is kept in the "
            "stack's file as written, got '<redacted>'",
        ),
        (
            {
                "stores": {
                    **STORES,
                    "llama": {**STORES["llama"], "model": {**MODEL, "token": TOKEN}},
                }
            },
            "modelstore:stores.llama.model.token must be unset in modelstore:stores, which is "
            f"kept as written: a token goes in modelstore:tokens, set as a secret ({HOW}), got "
            "'<redacted>'",
        ),
        (
            {"tokens": {"llama": TOKEN, "lama": TOKEN}},
            "modelstore:tokens key must be a store of modelstore:stores with a model section "
            "(llama), got 'lama'",
        ),
        (
            {"tokens": {"t5": TOKEN}},
            "modelstore:tokens key must be a store of modelstore:stores with a model section "
            "(llama), got 't5'",
        ),
        (
            {"tokens": {"llama": {"value": TOKEN}}},
            "modelstore:tokens.llama must be the token, a string, got '<redacted>'",
        ),
        (
            {"tokens": [TOKEN]},
            f"modelstore:tokens must be a mapping of store names to their tokens ({HOW}), got "
            "'<redacted>'",
        ),
    ],
)
def test_bad_tokens_in_config_are_refused_without_showing_them(kwargs: Any, message: str) -> None:
    refused_config(message, **kwargs)
