"""Validate Kubernetes objects as the API server reads them: built-in kinds against the
Kubernetes API's own OpenAPI v3 documents (tests/schemas/kubernetes/<minor>/, see its
SOURCE.md) with the enum values a cluster serves, custom resources against their CRD's
``openAPIV3Schema`` (tests/schemas/crds/).

Strict, as ``kubectl apply --validate=strict`` (the server's strict field validation): an
unknown field is an error, as are a wrong type, a missing required field, a value outside an
enum, an integer outside int32/int64, a string that is not a quantity where a quantity goes, a
``null`` where the schema is not nullable. Every error names the JSON path, the value and what
was allowed. CEL rules (``x-kubernetes-validations``) are not evaluated.

The documents are read and indexed once per session (:func:`validator`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from pulumi_modelstore.kube.versions import KUBERNETES_MINORS

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
KUBERNETES = SCHEMAS / "kubernetes"
CRDS = SCHEMAS / "crds"

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# resource.Quantity's grammar, as controller-gen writes it into every CRD that has a quantity
# (e.g. tests/schemas/crds/kserve-v0.16.0: `resources.limits` additionalProperties.pattern).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
INTEGER_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


class SchemaNotFound(LookupError):
    """No schema for an object's apiVersion and kind: such an object is never skipped."""


class ValidationError(AssertionError):
    """What the validator refused, one line per problem."""


def _is(value: Any, type_name: str) -> bool:
    if isinstance(value, bool):
        return type_name == "boolean"
    return isinstance(value, TYPES[type_name])


def _show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


class Validator:
    """The schemas of one Kubernetes minor and of the vendored CRDs, indexed by apiVersion and
    kind."""

    def __init__(self, minor: str) -> None:
        self.minor = minor
        self.components = _kubernetes_components(minor)
        # (apiVersion, kind) -> (root schema, structural: True for a CRD's schema)
        self.kinds: dict[tuple[str, str], tuple[dict[str, Any], bool]] = {}
        for schema in self.components.values():
            for gvk in schema.get("x-kubernetes-group-version-kind", []):
                api_version = "/".join(p for p in (gvk["group"], gvk["version"]) if p)
                self.kinds.setdefault((api_version, gvk["kind"]), (schema, False))
        for crd in _crds():
            for version in crd["spec"]["versions"]:
                if version["served"]:
                    key = (
                        f"{crd['spec']['group']}/{version['name']}",
                        crd["spec"]["names"]["kind"],
                    )
                    self.kinds[key] = (version["schema"]["openAPIV3Schema"], True)
        self._effective: dict[int, dict[str, Any]] = {}

    def errors(self, obj: Mapping[str, Any]) -> list[str]:
        """Every problem in ``obj``, one ``path: what`` line each; [] when it validates.
        Raises :class:`SchemaNotFound` for a kind with no schema."""
        key = (obj.get("apiVersion"), obj.get("kind"))
        if key not in self.kinds:
            raise SchemaNotFound(
                f"Kubernetes {self.minor}: no schema for apiVersion {key[0]!r} kind {key[1]!r}"
            )
        schema, structural = self.kinds[key]  # type: ignore[index]
        return list(self._check(schema, obj, "", structural))

    def metadata_errors(self, metadata: Any) -> list[str]:
        """Problems in an object's ``metadata`` (the ObjectMeta schema)."""
        return list(self._check(self.components[OBJECT_META], metadata, "metadata", False))

    def validate(self, obj: Mapping[str, Any]) -> None:
        """Raise :class:`ValidationError` naming the object and every problem in it."""
        problems = self.errors(obj)
        if problems:
            meta = obj.get("metadata") or {}
            name = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            raise ValidationError(
                f"Kubernetes {self.minor}: {obj['kind']} {name}:\n  " + "\n  ".join(problems)
            )

    # -- the walk ----------------------------------------------------------------------------

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``schema`` with its ``$ref`` and ``allOf`` merged in (properties and required
        united, the first of any other keyword kept), memoised per schema (every schema passed
        here lives in the loaded documents, so its id stays its own)."""
        key = id(schema)
        if key in self._effective:
            return self._effective[key]
        merged = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
        parts: list[dict[str, Any]] = []
        if "$ref" in schema:
            name = schema["$ref"].rpartition("/")[2]
            parts.append(self.components[name])
            if name == QUANTITY:
                merged.setdefault("pattern", QUANTITY_PATTERN)
        parts += schema.get("allOf", [])
        for part in parts:
            for k, v in self._resolve(part).items():
                if k == "properties":
                    merged["properties"] = {**v, **merged.get("properties", {})}
                elif k == "required":
                    merged["required"] = [*merged.get("required", []), *v]
                else:
                    merged.setdefault(k, v)
        self._effective[key] = merged
        return merged

    def _check(
        self, schema: dict[str, Any], value: Any, path: str, structural: bool
    ) -> Iterator[str]:
        s = self._resolve(schema)
        at = path or "<root>"
        if value is None:
            if not s.get("nullable"):
                yield f"{at}: Invalid value: null: must not be null (the schema is not nullable)"
            return
        branches = s.get("anyOf") or s.get("oneOf")
        if s.get("x-kubernetes-int-or-string") or s.get("format") == "int-or-string":
            if not (_is(value, "integer") or _is(value, "string")):
                yield f"{at}: Invalid value: {_show(value)}: must be an integer or a string"
                return
        elif branches and not any(
            not list(self._check(b, value, path, structural)) for b in branches
        ):
            kinds = " or ".join(str(self._resolve(b).get("type", "a schema")) for b in branches)
            yield f"{at}: Invalid value: {_show(value)}: must be {kinds}"
            return
        expected = s.get("type")
        if expected and not _is(value, expected):
            fmt = f" ({s['format']})" if "format" in s else ""
            yield f"{at}: Invalid value: {_show(value)}: must be of type {expected}{fmt}"
            return
        if "enum" in s and value not in s["enum"]:
            allowed = ", ".join(_show(v) for v in s["enum"])
            yield f"{at}: Unsupported value: {_show(value)}: supported values: {allowed}"
        if isinstance(value, str):
            yield from self._check_string(s, value, at)
        elif _is(value, "number"):
            yield from self._check_number(s, value, at)
        elif isinstance(value, list):
            yield from self._check_array(s, value, path, structural)
        elif isinstance(value, dict):
            yield from self._check_object(s, value, path, structural)

    def _check_string(self, s: dict[str, Any], value: str, at: str) -> Iterator[str]:
        if s.get("pattern") == QUANTITY_PATTERN and not re.search(QUANTITY_PATTERN, value):
            yield f"{at}: Invalid value: {_show(value)}: must be a quantity (e.g. 100Gi, 250m)"
        elif "pattern" in s and not re.search(s["pattern"], value):
            yield f"{at}: Invalid value: {_show(value)}: must match {s['pattern']}"
        if len(value) < s.get("minLength", 0):
            yield f"{at}: Invalid value: {_show(value)}: shorter than {s['minLength']}"
        if "maxLength" in s and len(value) > s["maxLength"]:
            yield f"{at}: Too long: {_show(value)}: longer than {s['maxLength']}"

    def _check_number(self, s: dict[str, Any], value: float, at: str) -> Iterator[str]:
        low, high = INTEGER_RANGES.get(s.get("format", ""), (None, None))
        if low is not None and not low <= value <= high:  # type: ignore[operator]
            yield f"{at}: Invalid value: {value}: out of {s['format']} range [{low}, {high}]"
        if "minimum" in s and value < s["minimum"]:
            yield f"{at}: Invalid value: {value}: must be >= {s['minimum']}"
        if "maximum" in s and value > s["maximum"]:
            yield f"{at}: Invalid value: {value}: must be <= {s['maximum']}"

    def _check_array(
        self, s: dict[str, Any], value: list[Any], path: str, structural: bool
    ) -> Iterator[str]:
        at = path or "<root>"
        if len(value) < s.get("minItems", 0):
            yield f"{at}: Invalid value: {_show(value)}: fewer than {s['minItems']} items"
        if "maxItems" in s and len(value) > s["maxItems"]:
            yield f"{at}: Too many: {len(value)}: at most {s['maxItems']} items"
        if "items" in s:
            for i, item in enumerate(value):
                yield from self._check(s["items"], item, f"{path}[{i}]", structural)
            yield from self._check_unique(s, value, path)

    def _check_unique(self, s: dict[str, Any], value: list[Any], path: str) -> Iterator[str]:
        """A ``map`` list's entries are unique by their keys, a ``set`` list's values: server-side
        apply (pulumi-kubernetes' default) refuses duplicates (structured-merge-diff: "duplicate
        entries for key"), where the last of two same-named env vars would otherwise win."""
        list_type = s.get("x-kubernetes-list-type")
        if list_type not in ("map", "set"):
            return
        keys = s.get("x-kubernetes-list-map-keys", [])
        properties = self._resolve(s["items"]).get("properties", {})
        seen: set[str] = set()
        for i, item in enumerate(value):
            if list_type == "map" and isinstance(item, dict):
                # A key left out takes its default (a port's protocol: TCP).
                defaults = {k: self._resolve(properties[k]).get("default") for k in keys}
                entry = {k: item.get(k, defaults[k]) for k in keys}
            else:
                entry = item
            shown = _show(entry)
            if shown in seen:
                yield f"{path}[{i}]: Duplicate value: {shown}"
            seen.add(shown)

    def _check_object(
        self, s: dict[str, Any], value: dict[str, Any], path: str, structural: bool
    ) -> Iterator[str]:
        prefix = f"{path}." if path else ""
        for name in s.get("required", []):
            if name not in value:
                yield f"{prefix}{name}: Required value"
        properties = s.get("properties")
        extra = s.get("additionalProperties")
        # A built-in object with neither (RawExtension, FieldsV1) is free-form; in a CRD's
        # structural schema it has no fields unless it preserves unknown ones.
        free = s.get("x-kubernetes-preserve-unknown-fields") or extra is True
        free = free or (not structural and properties is None and extra is None)
        embedded = s.get("x-kubernetes-embedded-resource")
        for name, item in value.items():
            where = f"{prefix}{name}"
            if structural and not path and name == "metadata":
                # The API server checks a custom resource's metadata as any object's.
                yield from self._check(self.components[OBJECT_META], item, where, False)
            elif properties is not None and name in properties:
                yield from self._check(properties[name], item, where, structural)
            elif isinstance(extra, dict):
                yield from self._check(extra, item, where, structural)
            elif embedded and name in ("apiVersion", "kind", "metadata"):
                continue
            elif not free:
                allowed = ", ".join(sorted(properties or ())) or "none"
                yield f'{where}: unknown field "{name}" (known fields: {allowed})'


def _apply_enums(components: dict[str, Any], overlay: Mapping[str, Any]) -> None:
    """Put the served enum values (tests/schemas/kubernetes/<minor>/enums.json) into the
    documents, where the static snapshot left them out."""
    for schema_name, properties in overlay.items():
        if schema_name not in components:
            continue  # a Go type no vendored document reaches
        for name, entry in properties.items():
            prop = components[schema_name]["properties"][name]
            where = {
                "value": prop,
                "items": prop.get("items"),
                "values": prop.get("additionalProperties"),
            }
            target = where[entry["at"]]
            if not target or target.get("type") != "string":
                raise ValueError(f"enum overlay: {schema_name}.{name} is not a string")
            target["enum"] = entry["enum"]


@cache
def _kubernetes_components(minor: str) -> dict[str, Any]:
    components: dict[str, Any] = {}
    root = KUBERNETES / minor
    for document in sorted(root.glob("api*/**/*.json")):
        for name, schema in json.loads(document.read_text())["components"]["schemas"].items():
            components.setdefault(name, schema)
    _apply_enums(components, json.loads((root / "enums.json").read_text())["schemas"])
    return components


@cache
def _crds() -> tuple[dict[str, Any], ...]:
    return tuple(
        # libyaml's loader reads the 1 MB KServe CRD in a fraction of the pure-Python time.
        yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        for path in sorted(CRDS.glob("*/*.yaml"))
    )


@cache
def validator(minor: str) -> Validator:
    """The validator for Kubernetes ``minor`` (one of :data:`KUBERNETES_MINORS`), built once."""
    if minor not in KUBERNETES_MINORS:
        raise ValueError(f"no vendored documents for Kubernetes {minor}: {KUBERNETES_MINORS}")
    return Validator(minor)
