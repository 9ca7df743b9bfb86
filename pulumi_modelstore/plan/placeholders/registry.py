"""The placeholder registries (invoke answers, ids and outputs by resource type) and what is
Kubernetes' (the core). Each cloud's module (``aws.py``) imports this one and registers its
answers; the package imports the cloud modules, so the registries are full once it is imported,
and no cloud module imports the package."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi.runtime.rpc import UNKNOWN

from ...model.record import DIGEST_KEY

InvokeHandler = Callable[[Mapping[str, Any], Mapping[str, str]], dict[str, Any]]
INVOKES: dict[str, InvokeHandler] = {}
"""Data source token -> its placeholder answer, filled by each cloud's module."""


def strings(value: Any) -> Iterator[str]:
    """Every string in a value (the leaves of its mappings and lists)."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def invented(answer: Any, given: Iterable[str]) -> set[str]:
    """The values of a placeholder answer that the plan made up: the strings of ``answer``
    that look like an identifier or a fact of one account (at least 6 characters, a digit
    among them: ids, ARNs, zones, account and project numbers, issuer URLs, versions) and are
    not found in the ``given`` values (the lookup's arguments and the stack's config, which are
    the stack's own: an issuer URL given with its scheme is answered without it). Constants
    that read alike on every account (``ACTIVE``, ``amazonaws.com``) have no digit and are
    left out, so that they mark nothing by chance."""
    own = set(given)
    return {
        s
        for s in strings(answer)
        if len(s) >= 6
        and s != UNKNOWN
        and any(c.isdigit() for c in s)
        and not any(s in text for text in own)
    }


def digest(*parts: str, length: int = 17) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:length]


@dataclass(frozen=True)
class Created:
    """A resource being created, as the placeholder functions see it."""

    type: str
    urn: str
    id: str
    inputs: Mapping[str, Any]
    config: Mapping[str, str]

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]

    def autoname(self, given: Any = None) -> str:
        """Pulumi's auto-naming: the resource name and a random-looking suffix."""
        return str(given) if given else f"{self.name}-{digest('name', self.urn, length=7)}"

    def hexid(self, kind: str, length: int = 17) -> str:
        return digest(kind, self.urn, length=length)


# Ids shaped like the cloud's own, by resource type (each cloud adds its own). Types not listed
# get `<name>-<hash>`.
ID_PREFIXES: dict[str, str] = {}
# Resources whose id is one of their inputs.
ID_FROM_INPUT: dict[str, str] = {}
# Resources whose id is made from the resource some other way (auto-named, composite).
ID_MAKERS: dict[str, Callable[[Created], str]] = {}

OutputsFn = Callable[[Created], dict[str, Any]]
OUTPUTS: dict[str, OutputsFn] = {}


def outputs_of(*types: str) -> Callable[[OutputsFn], OutputsFn]:
    def register(fn: OutputsFn) -> OutputsFn:
        for type_ in types:
            OUTPUTS[type_] = fn
        return fn

    return register


def resource_id(type_: str, urn: str, inputs: Mapping[str, Any]) -> str:
    """A placeholder physical id shaped like the cloud's own."""
    h = digest("id", urn)
    if type_ in ID_PREFIXES:
        return ID_PREFIXES[type_] + h
    if type_ in ID_FROM_INPUT and inputs.get(ID_FROM_INPUT[type_]):
        return str(inputs[ID_FROM_INPUT[type_]])
    if type_.startswith("kubernetes:"):
        meta = inputs.get("metadata") or {}
        name = meta.get("name") or urn.rsplit("::", 1)[-1]
        return f"{meta['namespace']}/{name}" if meta.get("namespace") else str(name)
    if type_ in ID_MAKERS:
        return ID_MAKERS[type_](Created(type_, urn, "", inputs, {}))
    return f"{urn.rsplit('::', 1)[-1]}-{h[:8]}"


def resource_outputs(
    type_: str, urn: str, id_: str, inputs: Mapping[str, Any], config: Mapping[str, str]
) -> dict[str, Any]:
    """Computed outputs a created resource would report, on top of its inputs."""
    fn = OUTPUTS.get(type_)
    return fn(Created(type_, urn, id_, inputs, config)) if fn else {}


@outputs_of("kubernetes:helm.sh/v3:Release")
def _release(r: Created) -> dict[str, Any]:
    i = r.inputs
    return {
        "status": {
            "name": i.get("name"),
            "namespace": i.get("namespace"),
            "status": "deployed",
            "version": i.get("version"),
            "chart": i.get("chart"),
        }
    }


@outputs_of("kubernetes:batch/v1:Job")
def _job(r: Created) -> dict[str, Any]:
    """A Job as ``pulumi up`` leaves it: complete (the provider waits for the ``Complete``
    condition, kube/model_jobs.py)."""
    return {"status": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}}


@outputs_of("kubernetes:core/v1:ConfigMap")
def _config_map(r: Created) -> dict[str, Any]:
    """A read ConfigMap: the one a program of this repository reads is the seed Job's record of
    its manifest digest (kube/model_digest.py), answered with a placeholder digest. A created
    ConfigMap reports nothing beyond its inputs."""
    if not r.urn.startswith("read::"):
        return {}
    return {"data": {DIGEST_KEY: f"sha256:{digest('manifest', r.id, length=64)}"}}
