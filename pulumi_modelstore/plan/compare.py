"""``modelstore plan --compare BASE.json``: what a change does relative to a saved plan.

Both sides are plans in the ``--format json`` shape. Resources are matched by URN, or through the
new plan's aliases (a move, not a delete and a create). A matched resource whose inputs differ is
replaced when a changed property forces it (:mod:`.replacement`: the providers' own rules), else
updated. Replacements and deletions of data-bearing resources come first, marked
``DATA LOSS RISK`` unless protected (``protect``: Pulumi refuses the step) or retained
(``retainOnDelete``, or a PersistentVolume whose reclaim policy is ``Retain``, and a claim bound
to one).

A property fed by a replaced cloud resource (``propertyDependencies``) is taken as changed, since
the new resource's computed outputs are unknown until apply, so a PersistentVolume whose
``spec.csi`` names a replaced file system is replaced with it. The comparison knows inputs only:
a provider's own defaults, normalisations and state drift are not seen.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .engine import UNKNOWN
from .replacement import forcing

# The exit code of `modelstore plan --compare` when a step may lose data (CI fails on it).
EXIT_DATA_LOSS = 3

# Resource types that hold a store's data: replacing or deleting one loses it unless protected or
# retained. The one list (tests/test_plan_compare.py checks the backend contract's list against
# it).
DATA_BEARING_TYPES: frozenset[str] = frozenset(
    {
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "aws:efs/fileSystem:FileSystem",
        "aws:s3/bucket:Bucket",
        "aws:s3/bucketV2:BucketV2",
        "aws:ebs/volume:Volume",
        "aws:ebs/snapshot:Snapshot",
        "gcp:storage/bucket:Bucket",
        "gcp:compute/disk:Disk",
        "gcp:compute/regionDisk:RegionDisk",
        "azure-native:storage:StorageAccount",
        "azure-native:storage:BlobContainer",
        "azure-native:storage:FileShare",
        "azure-native:compute:Disk",
        "kubernetes:core/v1:PersistentVolume",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot",
    }
)

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
ORDER = ("replace", "delete", "update", "create", "import", "move")


class CompareError(Exception):
    """BASE cannot be read or is a plan of another stack."""


@dataclass
class Change:
    op: str  # create, import, update, replace, delete, same
    urn: str
    type: str
    old_urn: str = ""  # when it moved (an alias)
    paths: list[str] = field(default_factory=list)  # changed input paths
    forcing: list[str] = field(default_factory=list)  # those that force replacement
    data_bearing: bool = False
    protected: bool = False
    retained: str = ""  # why the data stays
    values: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # path -> (old, new)

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]

    @property
    def loses_data(self) -> bool:
        return (
            self.data_bearing
            and self.op in ("replace", "delete")
            and not self.protected
            and not self.retained
        )

    @property
    def note(self) -> str:
        if not self.data_bearing or self.op not in ("replace", "delete"):
            return ""
        if self.protected:
            return "protected: pulumi up refuses this step"
        if self.retained:
            return f"retained: {self.retained}"
        return "DATA LOSS RISK"


@dataclass
class Comparison:
    project: str
    stack: str
    changes: list[Change]

    @property
    def data_loss(self) -> list[Change]:
        return [c for c in self.changes if c.loses_data]

    @property
    def exit_code(self) -> int:
        return EXIT_DATA_LOSS if self.data_loss else 0

    def ordered(self) -> list[Change]:
        """Data-bearing replacements and deletions first (unprotected ones at the top), then the
        rest by kind of step; unchanged resources left out."""
        shown = [c for c in self.changes if c.op != "same" or c.old_urn]

        def key(c: Change) -> tuple[int, int, int, str]:
            first = 0 if c.note else 1
            risk = 0 if c.loses_data else 1
            op = "move" if c.op == "same" else c.op
            return (first, risk, ORDER.index(op), c.urn)

        return sorted(shown, key=key)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.changes:
            if c.op != "same":
                out[c.op] = out.get(c.op, 0) + 1
            if c.old_urn:
                out["move"] = out.get("move", 0) + 1
        return {op: out[op] for op in ORDER if op in out}


def load_base(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CompareError(f"not a JSON plan ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        raise CompareError("not a `modelstore plan --format json` plan: no steps")
    return doc


def filled_outputs(doc: Mapping[str, Any]) -> bool:
    """Whether BASE was planned with ``--fill-outputs``: the JSON does not record it, but created
    resources then have placeholder ids instead of the unknown sentinel."""
    for step in doc["steps"]:
        state = step["newState"]
        if (
            step.get("op") == "create"
            and state.get("custom")
            and not state["type"].startswith("pulumi:providers:")
        ):
            return state.get("id") not in (UNKNOWN, "", None)
    return False


def _managed(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """URN -> state of what the plan manages (reads are not managed: nothing to delete)."""
    return {s["urn"]: s["newState"] for s in doc["steps"] if s.get("op") != "read"}


def _urn(stack: str, project: str, parent: str, type_: str, name: str) -> str:
    """A URN as the plan engine (the SDK's mock monitor) makes it."""
    if parent:
        type_ = parent.split("::")[2].split("$")[-1] + "$" + type_
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


def _old_urns(
    urn: str, states: Mapping[str, dict[str, Any]], stack: str, project: str
) -> list[str]:
    """Where the resource may have been before: its aliases (old URNs, or specs of the old name,
    type and parent), and its name and type under any former URN of its parent (children follow
    their parent's aliases, as in the engine)."""
    state = states[urn]
    name = urn.rsplit("::", 1)[-1]
    type_ = state["type"]
    parent = state.get("parent", "")
    parents = [parent, *(_old_urns(parent, states, stack, project) if parent in states else [])]
    found: list[str] = []
    for p in parents[1:]:
        found.append(_urn(stack, project, p, type_, name))
    for alias in state.get("aliases") or []:
        if isinstance(alias, str):
            found.append(alias)
            continue
        a_name = alias.get("name") or name
        a_type = alias.get("type") or type_
        a_stack = alias.get("stack") or stack
        a_project = alias.get("project") or project
        if alias.get("noParent"):
            candidates = [""]
        elif alias.get("parentUrn"):
            candidates = [alias["parentUrn"]]
        else:
            candidates = parents
        found += [_urn(a_stack, a_project, p, a_type, a_name) for p in candidates]
    return list(dict.fromkeys(u for u in found if u != urn))


def diff_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The input paths whose values differ (``spec.csi.volumeHandle``, ``subnetIds[0]``)."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        paths: list[str] = []
        for key in sorted(set(old) | set(new)):
            sub = f"{prefix}.{key}" if prefix else key
            if key not in old or key not in new:
                paths.append(sub)
            else:
                paths += diff_paths(old[key], new[key], sub)
        return paths
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out: list[str] = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out += diff_paths(a, b, f"{prefix}[{i}]")
        return out
    return [prefix]


ABSENT = object()


def _get(value: Any, path: str) -> Any:
    """The value at ``path``, or ``ABSENT``."""
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            index = int(part[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else ABSENT
        else:
            value = value.get(part, ABSENT) if isinstance(value, dict) else ABSENT
    return value


def _ignored(path: str, ignore: Iterable[str]) -> bool:
    return any(path == i or path.startswith(i + ".") or path.startswith(i + "[") for i in ignore)


def _retained(state: Mapping[str, Any], base: Mapping[str, dict[str, Any]]) -> str:
    """Why deleting this resource keeps its data, or ''."""
    if state.get("retainOnDelete"):
        return "retainOnDelete"
    inputs = state.get("inputs") or {}
    if state["type"] == PV and _get(inputs, "spec.persistentVolumeReclaimPolicy") == "Retain":
        return "reclaim policy Retain"
    if state["type"] == PVC:
        volume = _get(inputs, "spec.volumeName")
        for other in base.values():
            if (
                other["type"] == PV
                and _get(other.get("inputs"), "metadata.name") == volume
                and _get(other.get("inputs"), "spec.persistentVolumeReclaimPolicy") == "Retain"
            ):
                return f"bound to {volume} (reclaim policy Retain)"
    return ""


PROVIDER_PATH = "(provider)"
"""The pseudo-path of a change of the provider a resource is managed by."""


def _provider(state: Mapping[str, Any]) -> str:
    """The name of the provider managing a resource (its reference is ``<urn>::<id>``)."""
    ref = str(state.get("provider") or "")
    urn = ref.rsplit("::", 1)[0] if ref.count("::") > 3 else ref
    return urn.rsplit("::", 1)[-1]


def compare(base_doc: Mapping[str, Any], new_doc: Mapping[str, Any]) -> Comparison:
    """The steps that take the stack from BASE to the new plan."""
    stack, project = new_doc["stack"], new_doc["project"]
    if base_doc.get("stack") not in (None, stack) or base_doc.get("project") not in (None, project):
        raise CompareError(
            f"BASE is a plan of {base_doc.get('project')}/{base_doc.get('stack')}, "
            f"not {project}/{stack}"
        )
    base = _managed(base_doc)
    new = _managed(new_doc)
    matched: dict[str, str] = {}  # new URN -> base URN
    for urn in new:
        if urn in base:
            matched[urn] = urn
    taken = set(matched.values())
    for urn in new:
        if urn in matched:
            continue
        for candidate in _old_urns(urn, new, stack, project):
            if candidate in base and candidate not in taken:
                matched[urn] = candidate
                taken.add(candidate)
                break

    changes: list[Change] = []
    replaced: set[str] = set()  # new URNs whose replacement goes ahead (new outputs)
    for step in new_doc["steps"]:
        urn = step["urn"]
        if urn not in new:
            continue
        state = new[urn]
        type_ = state["type"]
        data = type_ in DATA_BEARING_TYPES
        if urn not in matched:
            op = "import" if step.get("op") == "import" else "create"
            changes.append(Change(op, urn, type_, data_bearing=data))
            continue
        old_urn = matched[urn]
        old = base[old_urn]
        old_inputs, new_inputs = old.get("inputs") or {}, state.get("inputs") or {}
        ignore = state.get("ignoreChanges") or []
        paths = [p for p in diff_paths(old_inputs, new_inputs) if not _ignored(p, ignore)]
        # A property fed by a resource being replaced gets that resource's new outputs: unknown
        # until apply, so it may change (as `pulumi preview` shows it).
        for key, deps in sorted((state.get("propertyDependencies") or {}).items()):
            if any(d in replaced for d in deps) and not any(
                p == key or p.startswith(key + ".") or p.startswith(key + "[") for p in paths
            ):
                paths.append(key)
        values = {p: (_get(old_inputs, p), _get(new_inputs, p)) for p in paths}
        old_provider, new_provider = _provider(old), _provider(state)
        if old_provider != new_provider:
            # The engine then asks the new provider's DiffConfig whether the move replaces the
            # resource (pulumi/pulumi#18509); pulumi-kubernetes replaces only when the active
            # cluster of its kubeconfig changes (provider/pkg/provider/provider.go DiffConfig),
            # which a plan cannot see: shown as a change to review, not decided here.
            paths.append(PROVIDER_PATH)
            values[PROVIDER_PATH] = (old_provider, new_provider)
        reasons: list[str] = []
        if state.get("custom") and not type_.startswith("pulumi:providers:"):
            reasons = forcing(
                type_, paths, old_inputs, new_inputs, state.get("replaceOnChanges") or []
            )
        op = "replace" if reasons else ("update" if paths else "same")
        change = Change(
            op,
            urn,
            type_,
            old_urn="" if old_urn == urn else old_urn,
            paths=paths,
            forcing=reasons,
            data_bearing=data,
            # Pulumi refuses to replace a protected resource; a change that also drops
            # `protect` lets the replacement through.
            protected=bool(old.get("protect")) and bool(state.get("protect")),
            retained=_retained(old, base) if data else "",
            values=values,
        )
        if op == "replace" and not change.protected and not type_.startswith("kubernetes:"):
            # Its computed outputs (ids, DNS names) are unknown until apply. A Kubernetes
            # object's preview echoes its inputs, so what depends on it sees no change.
            replaced.add(urn)
        changes.append(change)

    gone = set(base) - set(matched.values())
    for step in base_doc["steps"]:
        urn = step["urn"]
        if urn in gone:
            state = base[urn]
            data = state["type"] in DATA_BEARING_TYPES
            changes.append(
                Change(
                    "delete",
                    urn,
                    state["type"],
                    data_bearing=data,
                    protected=bool(state.get("protect")),
                    retained=_retained(state, base) if data else "",
                )
            )
    return Comparison(project, stack, changes)


# --- rendering ---------------------------------------------------------------------------------

SYMBOLS = {
    "create": "+",
    "import": "=",
    "update": "~",
    "replace": "+-",
    "delete": "-",
    "same": ">",
}


def _shown(value: Any) -> str:
    if value is ABSENT:
        return "(none)"
    if value == UNKNOWN:
        return "(known after apply)"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _detail(c: Change) -> list[str]:
    lines = []
    forced = {r.split(" (", 1)[0] for r in c.forcing}
    for path in c.paths:
        old, new = c.values.get(path, (None, None))
        mark = "  (forces replacement)" if path in forced else ""
        if path in forced:
            why = next(r for r in c.forcing if r.split(" (", 1)[0] == path)
            if " (" in why:
                mark = f"  (forces replacement: {why.split(' (', 1)[1].rstrip(')')})"
        lines.append(f"{path}: {_shown(old)} -> {_shown(new)}{mark}")
    return lines


def _label(c: Change) -> str:
    op = "move" if c.op == "same" else c.op
    moved = f" (moved from {c.old_urn})" if c.old_urn else ""
    return f"{op} {c.type} {c.name}{moved}"


def _summary(cmp: Comparison) -> str:
    counts = cmp.counts()
    return ", ".join(f"{n} to {op}" for op, n in counts.items()) or "no changes"


def to_text(cmp: Comparison, base_name: str) -> str:
    lines = [f"Comparing stack {cmp.stack} (project {cmp.project}) with {base_name}"]
    risky = cmp.data_loss
    if risky:
        lines.append(
            f"DATA LOSS RISK: {len(risky)} step(s) replace or delete data that is neither "
            "protected nor retained"
        )
    for c in cmp.ordered():
        op = "move" if c.op == "same" else c.op
        note = f"  [{c.note}]" if c.note else ""
        lines.append(f"{SYMBOLS.get(op, '>'):>2} {_label(c)}{note}")
        lines += [f"      {d}" for d in _detail(c)]
    lines.append(f"Resources: {_summary(cmp)}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(cmp: Comparison, base_name: str) -> str:
    """A pull-request comment: a verdict line, then a table, data-bearing steps first."""
    lines = [f"### modelstore plan: `{cmp.stack}` compared with `{base_name}`", ""]
    risky = cmp.data_loss
    if risky:
        lines.append(
            f"> [!CAUTION]\n> **DATA LOSS RISK**: {len(risky)} step(s) replace or delete data "
            "that is neither protected nor retained."
        )
    else:
        lines.append("No unprotected data-loss step.")
    lines += ["", f"**{_summary(cmp)}**", ""]
    ordered = cmp.ordered()
    if ordered:
        lines += ["| Step | Resource | Type | Changes | Data |", "|---|---|---|---|---|"]
        for c in ordered:
            op = "move" if c.op == "same" else c.op
            name = f"`{c.name}`" + (f" (from `{c.old_urn}`)" if c.old_urn else "")
            details = "<br>".join(f"`{_md(d)}`" for d in _detail(c))
            note = f"**{c.note}**" if c.loses_data else c.note
            lines.append(f"| {op} | {_md(name)} | `{c.type}` | {details} | {_md(note)} |")
    return "\n".join(lines) + "\n"


def to_json(cmp: Comparison, base_name: str) -> str:
    document = {
        "base": base_name,
        "stack": cmp.stack,
        "project": cmp.project,
        "summary": cmp.counts(),
        "dataLossRisk": [c.urn for c in cmp.data_loss],
        "steps": [
            {
                "op": c.op,
                "urn": c.urn,
                "type": c.type,
                "oldUrn": c.old_urn,
                "changed": c.paths,
                "replaceBecause": c.forcing,
                "dataBearing": c.data_bearing,
                "note": c.note,
            }
            for c in cmp.ordered()
        ],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


COMPARE_FORMATS = {"tree": to_text, "markdown": to_markdown, "json": to_json}
