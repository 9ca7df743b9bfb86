"""Issue 15's renames (one naming rule for units, ``location`` for a cluster's location only):
each old spelling still works for one release, with a DeprecationWarning naming the new one, in
Python args and in stack config (camelCase) alike, and plans as the new spelling does; both
spellings given is refused."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.azure import AzureBlobModelStore, AzureFilesNfsModelStore
from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.fields import camel_case
from pulumi_modelstore.gcp import HyperdiskMlModelStore
from pulumi_modelstore.plan.engine import plan_directory
from pulumi_modelstore.store import ModelStore

ROOT = Path(__file__).resolve().parent.parent
AKS = {"cluster_name": "ml-aks", "cluster_resource_group_name": "ml-rg", "readers": ["a"]}
GKE = {
    "cluster_name": "ml-gke",
    "location": "us-central1",
    "readers": ["a"],
    "model": {"source": "gs://models/llama", "revision": "r1"},
    "size_gib": 64,
}

# (store class, its other fields, old spelling, new spelling, a value)
RENAMES: list[tuple[type[ModelStore], dict[str, Any], str, str, Any]] = [
    (AzureBlobModelStore, AKS, "location", "region", "eastus"),
    (AzureFilesNfsModelStore, AKS, "location", "region", "eastus"),
    (AzureBlobModelStore, AKS, "block_cache_block_size_mb", "block_cache_block_size_mib", 8),
    (AzureBlobModelStore, AKS, "block_cache_pool_size_mb", "block_cache_pool_size_mib", 8192),
    (HyperdiskMlModelStore, GKE, "throughput_mib_per_s", "throughput_mibps", 4800),
]
IDS = [f"{store.__name__}-{old}" for store, _, old, _, _ in RENAMES]


@pytest.mark.parametrize(("store", "base", "old", "new", "value"), RENAMES, ids=IDS)
def test_the_old_spelling_warns_naming_the_new_one_and_parses_as_it(
    store: type[ModelStore], base: dict[str, Any], old: str, new: str, value: Any
) -> None:
    with pytest.warns(DeprecationWarning) as warned:
        spec = store.parse("llama", {**base, old: value})
    assert f"llama: {old} is deprecated, use {new}" in {str(w.message) for w in warned}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert store.parse("llama", {**base, new: value}).args == spec.args
    assert spec.args[new] == value


@pytest.mark.parametrize(("store", "base", "old", "new", "value"), RENAMES, ids=IDS)
def test_both_spellings_are_refused(
    store: type[ModelStore], base: dict[str, Any], old: str, new: str, value: Any
) -> None:
    with pytest.raises(ModelStoreInputError) as err:
        store.validate("llama", {**base, old: value, new: value})
    shown = f"'{value}'" if isinstance(value, str) else str(value)
    assert str(err.value) == (
        f"llama: {old} must be unset when {new} is given (it is its new name), got {shown}"
    )


def test_an_error_names_the_old_spelling_the_caller_wrote() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(ModelStoreInputError) as err:
        HyperdiskMlModelStore.validate("llama", {**GKE, "throughput_mib_per_s": 300})
    assert str(err.value) == (
        "llama: throughput_mib_per_s must be between 400 and 1,200,000 MiB/s (Hyperdisk ML's "
        "range), got 300"
    )


@pytest.mark.parametrize(
    ("stack", "new", "old"),
    [
        ("gke-hyperdisk", "throughput_mibps", "throughput_mib_per_s"),
        ("aks", "block_cache_pool_size_mib", "block_cache_pool_size_mb"),
    ],
)
def test_a_stack_config_in_the_old_camel_case_spelling_plans_the_same(
    tmp_path: Path, stack: str, new: str, old: str
) -> None:
    """The committed stack uses the new spelling; the same stack written with the old one (in
    camelCase, as stack config spells fields) plans the same resources, warning once."""
    for name in ("Pulumi.yaml", "requirements.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks", ignore=shutil.ignore_patterns("*.yaml"))
    config = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert f"{new}:" in config
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(
        config.replace(f"{new}:", f"{camel_case(old)}:")
    )
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        old_plan = plan_directory(tmp_path, stack)
    assert any(f"{old} is deprecated, use {new}" in str(w.message) for w in warned)
    new_plan = plan_directory(ROOT, stack)
    assert [(s["urn"], s["inputs"]) for s in old_plan.states()] == [
        (s["urn"], s["inputs"]) for s in new_plan.states()
    ]
