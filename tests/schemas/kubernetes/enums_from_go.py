"""Write ``<minor>/enums.json``: the enum values a live API server publishes in its OpenAPI.

Kubernetes' committed OpenAPI snapshots (``api/openapi-spec/v3``, vendored here) are made with
``--feature-gates=...,OpenAPIEnums=false`` (kubernetes ``hack/update-openapi-spec.sh``: "omit
enums from static openapi snapshots used to generate clients until #109177 is resolved"), while
a cluster serves them (the OpenAPIEnums gate is on by default). The values come from the Go API
types: a string type marked ``+enum`` takes the string constants declared with that type. This
reads the ``k8s.io/api`` sources of a kubectl-validate commit (its ``vendor/`` directory, pinned
to the release the builtins were taken from) and writes, per OpenAPI schema and property, the
allowed values and where they apply (the value itself, an array's items or a map's values).

Run by hand when the vendored documents change (not by the tests)::

    python -m tests.schemas.kubernetes.enums_from_go <kubectl-validate git dir> <commit> <minor>
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

PACKAGES = {"core/v1": "core", "apps/v1": "apps", "batch/v1": "batch", "storage/v1": "storage"}
# Package qualifiers the API packages use for core/v1.
CORE_ALIASES = {"v1", "corev1", "api"}

TYPE_DECL = re.compile(r"^type (\w+) (string|struct) ?\{?$")
CONST_LINE = re.compile(r'^\s*(?:const\s+)?(\w+)\s+(\w+)\s*=\s*"([^"]*)"')
FIELD = re.compile(r'^\t(\w+)\s+(\S+)\s+`json:"([^"]*)"')
EMBEDDED = re.compile(r'^\t([\w.]+)\s+`json:",inline"')


def _git(gitdir: str, commit: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", gitdir, *args], check=True, capture_output=True, text=True
    ).stdout


def _sources(gitdir: str, commit: str, package: str) -> str:
    root = f"vendor/k8s.io/api/{package}/"
    names = _git(gitdir, commit, "ls-tree", "--name-only", commit, root).split()
    keep = [
        n
        for n in names
        if n.endswith(".go") and "generated" not in n and not n.endswith("_test.go")
    ]
    return "\n".join(_git(gitdir, commit, "show", f"{commit}:{n}") for n in keep)


def _parse(text: str):
    """(enum types, constants by type, struct fields, inline embeddings) of one package."""
    enums: set[str] = set()
    constants: dict[str, list[str]] = {}
    fields: dict[str, list[tuple[str, str]]] = {}
    embeds: dict[str, list[str]] = {}
    comment: list[str] = []
    struct: str | None = None
    in_const = False
    for line in text.splitlines():
        decl = TYPE_DECL.match(line)
        if struct is not None:
            if line == "}":
                struct = None
            elif m := FIELD.match(line):
                name = m.group(3).split(",")[0]
                if name and name != "-":
                    fields[struct].append((name, m.group(2)))
            elif m := EMBEDDED.match(line):
                embeds[struct].append(m.group(1))
            continue
        if decl:
            name, kind = decl.groups()
            if kind == "string" and any("+enum" in c for c in comment):
                enums.add(name)
            if kind == "struct":
                struct = name
                fields[name] = []
                embeds[name] = []
        elif line.startswith("const ("):
            in_const = True
        elif in_const and line.startswith(")"):
            in_const = False
        elif (in_const or line.startswith("const ")) and (m := CONST_LINE.match(line)):
            constants.setdefault(m.group(2), []).append(m.group(3))
        comment = [*comment, line] if line.startswith("//") else []
    return enums, constants, fields, embeds


def _resolve(go_type: str, package: str) -> tuple[str, str, str]:
    """(package, type name, where the enum applies) for a field's Go type."""
    at = "value"
    go_type = go_type.lstrip("*")
    if go_type.startswith("[]"):
        at, go_type = "items", go_type[2:].lstrip("*")
    elif go_type.startswith("map["):
        at, go_type = "values", go_type.split("]", 1)[1].lstrip("*")
    if "." in go_type:
        qualifier, go_type = go_type.split(".", 1)
        package = "core/v1" if qualifier in CORE_ALIASES else qualifier
    return package, go_type, at


def extract(gitdir: str, commit: str) -> dict[str, dict[str, dict[str, object]]]:
    parsed = {p: _parse(_sources(gitdir, commit, p)) for p in PACKAGES}
    values = {
        (p, t): sorted(set(parsed[p][1].get(t, [])))
        for p, (enums, _, _, _) in parsed.items()
        for t in enums
    }
    out: dict[str, dict[str, dict[str, object]]] = {}
    for package, (_, _, fields, embeds) in parsed.items():
        group = PACKAGES[package]

        for struct in fields:
            schema = out.setdefault(f"io.k8s.api.{group}.v1.{struct}", {})
            # Inline embedding: the embedded struct's fields are the outer schema's properties.
            members = [fields[struct]] + [
                fields[e] for e in embeds[struct] if "." not in e and e in fields
            ]
            for name, go_type in (field for member in members for field in member):
                pkg, type_name, at = _resolve(go_type, package)
                allowed = values.get((pkg, type_name))
                if allowed:
                    schema[name] = {"enum": allowed, "at": at, "goType": f"{pkg}.{type_name}"}
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items()) if v}


def main() -> None:
    gitdir, commit, minor = sys.argv[1:4]
    enums = extract(gitdir, commit)
    document = {
        "source": (
            f"kubernetes-sigs/kubectl-validate@{commit} vendor/k8s.io/api "
            f"({', '.join(PACKAGES)}): string types marked +enum and their constants"
        ),
        "schemas": enums,
    }
    target = Path(__file__).parent / minor / "enums.json"
    target.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    count = sum(len(v) for v in enums.values())
    print(f"{target}: {count} properties in {len(enums)} schemas")


if __name__ == "__main__":
    main()
