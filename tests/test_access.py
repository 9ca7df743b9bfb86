"""The consumer access layer (``access.py``): who may mount, as which service account, with
which grant, made once for every backend."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

import pulumi_modelstore
from pulumi_modelstore.access import PER_ACCESS, ConsumerAccess, Grant, grant_consumers
from tests.conftest import plan

SA = "kubernetes:core/v1:ServiceAccount"
PACKAGE = Path(pulumi_modelstore.__file__).parent
# The backends on the access layer: their hooks take their own args type.
MOVED = ("aws/s3.py", "aws/efs.py", "gcp/gcsfuse.py", "gcp/hyperdisk.py", "azure/blob.py")


class _Cluster:
    """The one thing the layer asks of a cluster scope: a namespace, made once."""

    def __init__(self) -> None:
        self.made: dict[str, Any] = {}

    def namespace(self, namespace: str, store: Any, store_name: str) -> Any:
        if namespace not in self.made:
            self.made[namespace] = k8s.core.v1.Namespace(
                f"ns-{namespace}", metadata={"name": namespace}
            )
        return self.made[namespace]


def run_layer(
    readers: list[str],
    writers: list[str],
    *,
    annotations: dict[str, str] | None = None,
    create_namespaces: bool = False,
    **declared: Any,
):
    """Plan the layer for store ``llama`` with a grant that records what it was asked."""
    seen: dict[str, Any] = {}
    common = SimpleNamespace(
        name="llama",
        labels={"team": "ml"},
        create_namespaces=create_namespaces,
        consumers=tuple((ns, True) for ns in readers) + tuple((ns, False) for ns in writers),
        creates_namespace=lambda ns: create_namespaces,
    )

    def build() -> None:
        holder = pulumi.ComponentResource("test:index:Holder", "holder")

        def grant(key: str, read_only: bool, consumers: Any) -> Grant:
            seen[key] = (read_only, [c.namespace for c in consumers])
            marker = pulumi.ComponentResource(
                "test:index:Grant", f"grant-{key}", opts=pulumi.ResourceOptions(parent=holder)
            )
            return Grant(ready=[marker], value=key, service_account_annotations=annotations)

        access = ConsumerAccess(service_account="llama-sa", grant=grant, **declared)
        seen["access"] = grant_consumers(holder, common, _Cluster(), access)

    return plan(build), seen


def accounts(p) -> dict[str, dict[str, Any]]:
    return {s["urn"].rsplit("::", 1)[-1]: s for s in p.by_type(SA)}


def test_a_grant_per_access_level_and_a_service_account_per_namespace():
    p, seen = run_layer(["a", "b"], ["w"], annotations={"x/role": "r"}, per=PER_ACCESS)
    assert seen["readers"] == (True, ["a", "b"])
    assert seen["writers"] == (False, ["w"])
    made = accounts(p)
    assert sorted(made) == ["llama-sa-a", "llama-sa-b", "llama-sa-w"]
    assert made["llama-sa-w"]["inputs"]["metadata"] == {
        "name": "llama-sa",
        "namespace": "w",
        "labels": {"team": "ml"},
        "annotations": {"x/role": "r"},
    }
    access = seen["access"]
    assert access.values() == {"a": "readers", "b": "readers", "w": "writers"}
    assert len(access.ready) == 2  # one dependable: both groups' grants
    assert access.pod.service_account_name == "llama-sa"


def test_a_grant_per_namespace_by_default():
    _, seen = run_layer(["a"], ["w"])
    assert seen["a"] == (True, ["a"])
    assert seen["w"] == (False, ["w"])


@pytest.mark.parametrize(("annotations", "metadata_keys"), [(None, 3), ({}, 4)])
def test_annotations_only_where_the_grant_gives_them(annotations, metadata_keys):
    p, _ = run_layer(["a"], [], annotations=annotations)
    (account,) = accounts(p).values()
    assert len(account["inputs"]["metadata"]) == metadata_keys
    assert account["inputs"]["metadata"].get("annotations", None) == annotations


def test_an_account_of_the_backend_is_not_the_pods():
    p, seen = run_layer(["a"], ["w"], readers_only=True, pods_run_as=False, account_role="loader")
    assert list(accounts(p)) == ["llama-loader-a"]
    assert "w" not in seen
    access = seen["access"]
    assert access.pod.service_account_name is None
    assert access.ready == ()  # the backend's own object waits for the grant


def test_existing_service_accounts_are_not_made():
    p, seen = run_layer(["a"], [], create_service_accounts=False, pod_labels={"use": "true"})
    assert accounts(p) == {}
    assert seen["access"].pod.service_account_name == "llama-sa"
    assert dict(seen["access"].pod.labels) == {"use": "true"}


def test_a_service_account_waits_for_its_namespace():
    p, _ = run_layer(["a"], [], create_namespaces=True)
    (account,) = accounts(p).values()
    assert [d.rsplit("::", 1)[-1] for d in account["dependencies"]] == ["ns-a"]


def _calls(tree: ast.AST, name: str) -> int:
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == name
    )


def test_only_the_access_layer_makes_service_accounts():
    makers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if _calls(ast.parse(path.read_text()), "ServiceAccount")
    )
    assert makers == ["access.py"]


@pytest.mark.parametrize("module", MOVED)
def test_moved_backends_hooks_take_their_own_args(module):
    assert "Spec[Any]" not in (PACKAGE / module).read_text()
