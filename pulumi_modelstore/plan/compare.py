"""``modelstore plan --compare BASE.json``: what a change does relative to a saved plan.

Both sides are plans in the ``--format json`` shape. Resources are matched by URN, or through the
new plan's aliases (a move, not a delete and a create). A matched resource whose inputs differ is
replaced when a changed property forces it (:mod:`.replacement`: the providers' own rules), else
updated. A resource whose ``replaceWith`` names a replaced resource is replaced too.
Replacements and deletions of data-bearing resources come first, marked ``DATA LOSS RISK``
unless protected or retained (``retainOnDelete``, or a PersistentVolume whose reclaim policy is
``Retain``, and a claim bound to one). Steps ``pulumi up`` cannot carry out are marked
``BLOCKED``: replacing or deleting a protected resource (Pulumi refuses it), and deleting a
PersistentVolume while a claim bound to it stays (Kubernetes keeps the volume until the claim is
gone, so the delete waits until it times out), an in-place update the cluster refuses (a
volume's ``volumeMode`` or set ``nodeAffinity``, a claim's request shrinking or growing without
volume expansion: :data:`.replacement.REFUSED_UPDATES`), and a claim re-created with a kept
(``ignoreChanges``) request larger than its new volume (it never binds). A replaced or deleted
claim says that the pods using it must restart or stop: its deletion waits for them
(``kubernetes.io/pvc-protection``).

A property fed by a replaced cloud resource (``propertyDependencies``) is taken as changed, since
the new resource's computed outputs are unknown until apply, so a PersistentVolume whose
``spec.csi`` names a replaced file system is replaced with it. The leaves of such a property
that hold one of the replaced resource's computed outputs (or an unknown) are shown, not the
whole property. The comparison knows inputs only:
a provider's own defaults, normalisations and state drift are not seen.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..labels import REVISION_LABEL, ROLE_LABEL, STORE_LABEL
from ..validation import quantity
from .engine import UNKNOWN
from .render import Placeholders
from .replacement import deletes_before_replacing, forcing, refused_update

# Exit codes of `modelstore plan --compare` (CI fails on both). When a change has both kinds of
# step, data loss wins: `pulumi up` runs steps in parallel, so an unprotected deletion may be
# done before the blocked step fails the update. 1 is an error (no comparison), 2 a usage error
# (argparse).
EXIT_DATA_LOSS = 3
"""A step may lose data: a data-bearing resource replaced or deleted, neither protected nor
retained."""
EXIT_BLOCKED = 4
"""No data-loss step, but a step `pulumi up` cannot carry out (a protected resource replaced or
deleted, a volume deleted under a claim that stays): the merge's update would fail."""

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
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
SNAPSHOT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot"
REQUEST = "spec.resources.requests.storage"  # a claim's storage request
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
    fed: dict[str, str] = field(default_factory=dict)  # path -> the replaced resource feeding it
    delete_first: bool = False  # a replacement that deletes the old resource first
    hangs: str = ""  # why `pulumi up` would wait on this step until it times out
    # changed paths of an in-place update the cluster refuses, each with why
    refusals: list[str] = field(default_factory=list)
    pods: str = ""  # what the pods using a replaced or deleted claim must do

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
    def refused(self) -> bool:
        """Pulumi refuses to replace or delete a protected resource (pulumi/pulumi
        pkg/resource/deploy/step_generator.go, 1b594989; dropping ``protect`` in the same change
        lets it through, so ``protected`` needs it on both sides)."""
        return self.op in ("replace", "delete") and self.protected

    @property
    def blocked(self) -> bool:
        return self.refused or bool(self.hangs) or bool(self.refusals)

    @property
    def note(self) -> str:
        if self.refused:
            verb, keep = (
                ("replace", "Revert the change")
                if self.op == "replace"
                else ("delete", "Keep it in the program")
            )
            loss = (
                "the loss"
                if self.data_bearing
                else f"the {'replacement' if self.op == 'replace' else 'deletion'}"
            )
            return (
                f"BLOCKED: protected, pulumi up refuses to {verb} it. {keep}, or unprotect it "
                f"(protect: false) and accept {loss} on purpose, in a separate change"
            )
        if self.hangs:
            return f"BLOCKED: {self.hangs}"
        if self.refusals:
            return (
                "BLOCKED: the cluster refuses this update, so pulumi up fails at it. Revert the "
                "change, or replace the object on purpose (replace_on_changes)"
            )
        if not self.data_bearing or self.op not in ("replace", "delete"):
            return ""
        if self.retained:
            return f"retained: {self.retained}"
        return "DATA LOSS RISK"


@dataclass
class Comparison:
    project: str
    stack: str
    changes: list[Change]
    # BASE's URNs in its step order (dependency order): deletes run in its reverse.
    base_order: dict[str, int] = field(default_factory=dict)
    revisions: list[str] = field(default_factory=list)  # a line per store whose model moves
    # The values the new plan made up (Plan.placeholders; the CLI sets them): the text and
    # markdown renderings mark what holds one, as the tree does. Plans are deterministic, so
    # BASE's placeholder values are among them.
    placeholders: dict[str, str] = field(default_factory=dict)

    @property
    def data_loss(self) -> list[Change]:
        return [c for c in self.changes if c.loses_data]

    @property
    def blocked(self) -> list[Change]:
        return [c for c in self.changes if c.blocked]

    @property
    def exit_code(self) -> int:
        """``EXIT_DATA_LOSS``, else ``EXIT_BLOCKED``, else 0."""
        if self.data_loss:
            return EXIT_DATA_LOSS
        return EXIT_BLOCKED if self.blocked else 0

    def ordered(self) -> list[Change]:
        """The steps in the order ``pulumi up`` runs them (unchanged resources left out): the
        creates, updates, replacements and moves in dependency order, as the program registers
        them (the new plan's order); then the deletes of removed resources in reverse
        dependency order, dependents first (BASE's order reversed).

        The engine issues a resource's step as the program registers it and generates the
        deletes once the program has exited, scheduled in reverse dependency order (pulumi/pulumi
        pkg/resource/deploy/deployment_executor.go, 1b594989, lines 486-501;
        pkg/resource/deploy/step_generator.go, ScheduleDeletes, lines 2723-2747). A replacement
        creates the new resource at its place and deletes the old one with those deletes
        (step_generator.go line 2164, :meth:`deleted_last`), unless it deletes first
        (``deleteBeforeReplace``, or a provider's rule: :attr:`Change.delete_first`), where the
        old one is deleted just before the new one is created (step_generator.go, lines
        2080-2160)."""
        shown = [c for c in self.changes if c.op != "same" or c.old_urn]
        deletes = sorted(
            (c for c in shown if c.op == "delete"),
            key=lambda c: -self.base_order.get(c.urn, 0),
        )
        return [c for c in shown if c.op != "delete"] + deletes

    def deleted_last(self) -> list[Change]:
        """What the deletes at the end of ``pulumi up`` remove, in their order: the removed
        resources and the old copies of resources replaced create-before-delete (Pulumi's
        default), dependents first."""
        going = [
            c
            for c in self.changes
            if c.op == "delete" or (c.op == "replace" and not c.delete_first and not c.refused)
        ]
        return sorted(going, key=lambda c: -self.base_order.get(c.old_urn or c.urn, 0))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.changes:
            if c.op != "same":
                out[c.op] = out.get(c.op, 0) + 1
            if c.old_urn:
                out["move"] = out.get("move", 0) + 1
        return {op: out[op] for op in ORDER if op in out}


NOT_A_PLAN = "not a `modelstore plan --format json` plan"


def load_base(data: bytes | str) -> dict[str, Any]:
    """BASE's plan, read from its bytes (UTF-8 JSON, as ``modelstore plan --format json``
    writes it), or :class:`CompareError` saying in one line why it is not one: every step is
    checked for what the comparison reads (``op``, ``urn``, ``newState`` with its ``type`` and
    ``inputs``), so a file of other steps is refused here instead of failing halfway."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise CompareError(
            f"not a JSON plan (not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CompareError(f"not a JSON plan ({exc.msg}, line {exc.lineno})") from exc
    except RecursionError as exc:
        raise CompareError("not a JSON plan (nested too deeply)") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        raise CompareError(f"{NOT_A_PLAN}: no steps")
    for i, step in enumerate(doc["steps"]):
        problem = _step_problem(step)
        if problem is not None:
            raise CompareError(f"{NOT_A_PLAN}: steps[{i}] {problem}")
    return doc


def _step_problem(step: Any) -> str | None:
    """What a plan step lacks of what the comparison reads; None for a plan step."""
    if not isinstance(step, dict):
        return "is not a step (a mapping with op, urn and newState)"
    for key in ("op", "urn"):
        if not isinstance(step.get(key), str):
            return f"has no {key} string"
    if not step["urn"].startswith("urn:pulumi:") or step["urn"].count("::") < 3:
        return f"has a urn that is not a Pulumi URN: {step['urn'][:80]!r}"
    state = step.get("newState")
    if not isinstance(state, dict) or not isinstance(state.get("type"), str):
        return "has no newState with a type string"
    for key, kind in (("inputs", dict), ("outputs", dict), ("parent", str), ("aliases", list)):
        if state.get(key) is not None and not isinstance(state[key], kind):
            return f"has a newState.{key} that is not a {_KINDS[kind]}"
    return None


_KINDS = {dict: "mapping", str: "string", list: "list"}


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
    """The leaf input paths whose values differ (``spec.csi.volumeHandle``, ``subnetIds[0]``);
    a list that grows or shrinks gives its added or removed elements' paths."""
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
    if isinstance(old, list) and isinstance(new, list):
        out: list[str] = []
        for i in range(max(len(old), len(new))):
            if i >= len(old) or i >= len(new):
                out.append(f"{prefix}[{i}]")
            else:
                out += diff_paths(old[i], new[i], f"{prefix}[{i}]")
        return out
    return [prefix]


ABSENT = object()


def _get(value: Any, path: str) -> Any:
    """The value at ``path``, or ``ABSENT``. A key may hold dots of its own (a ConfigMap's
    ``data.seed.py``): where a part is no key, it is joined with the parts after it."""
    parts = [p for p in path.replace("[", ".[").split(".") if p]
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("["):
            index = int(part[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else ABSENT
        elif not isinstance(value, dict):
            return ABSENT
        else:
            j = i
            while part not in value and j + 1 < len(parts) and not parts[j + 1].startswith("["):
                j += 1
                part = f"{part}.{parts[j]}"
            value = value.get(part, ABSENT)
            i = j
        i += 1
    return value


def _computed(state: Mapping[str, Any]) -> set[str]:
    """The strings a resource's provider computed (its id, outputs that are not inputs): what a
    property fed by it holds, and what a replacement makes unknown. Short strings are left out
    (they would match by chance)."""
    inputs = state.get("inputs") or {}
    found: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)
        elif isinstance(value, str) and len(value) >= 6 and value != UNKNOWN:
            found.add(value)

    for key, value in (state.get("outputs") or {}).items():
        if key not in inputs or inputs[key] != value:
            collect(value)
    collect(state.get("id"))
    return found


def _fed_leaves(value: Any, computed: set[str], prefix: str) -> list[str]:
    """The paths under ``prefix`` whose string holds one of ``computed``, or is unknown."""
    if isinstance(value, dict):
        return [p for k in sorted(value) for p in _fed_leaves(value[k], computed, f"{prefix}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _fed_leaves(v, computed, f"{prefix}[{i}]")]
    if isinstance(value, str) and (UNKNOWN in value or any(c in value for c in computed)):
        return [prefix]
    return []


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


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
        snapshot = _retained_snapshot_of(inputs, base)
        if snapshot:
            return f"its data as of VolumeSnapshot {snapshot} (retainOnDelete), cut from it"
    return ""


def _retained_snapshot_of(claim: Mapping[str, Any], base: Mapping[str, dict[str, Any]]) -> str:
    """``<namespace>/<name>`` of a VolumeSnapshot in BASE cut from this claim and retained on
    delete (an EBS cache's seed volume, whose snapshot is what replicas restore), else ''. The
    snapshot holds what the claim held when it was cut: what a seed claim, written once by its
    Job and never after, holds."""
    where = (_get(claim, "metadata.namespace"), _get(claim, "metadata.name"))
    for other in base.values():
        inputs = other.get("inputs") or {}
        if (
            other["type"] == SNAPSHOT
            and other.get("retainOnDelete")
            and (
                _get(inputs, "metadata.namespace"),
                _get(inputs, "spec.source.persistentVolumeClaimName"),
            )
            == where
        ):
            return f"{where[0]}/{_get(inputs, 'metadata.name')}"
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
    # New URNs whose replacement goes ahead with unknown outputs -> (name, computed strings).
    fresh: dict[str, tuple[str, set[str]]] = {}
    going: set[str] = set()  # new URNs replaced (not refused), for replaceWith
    classes = {
        _get(s.get("inputs") or {}, "metadata.name"): (s.get("inputs") or {}).get(
            "allowVolumeExpansion"
        )
        for s in new.values()
        if s["type"] == STORAGE_CLASS
    }
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
        values = {p: (_get(old_inputs, p), _get(new_inputs, p)) for p in paths}
        fed: dict[str, str] = {}
        # A property fed by a resource being replaced gets that resource's new outputs: unknown
        # until apply, so it may change (as `pulumi preview` shows it). Shown at the leaves that
        # hold the replaced resource's computed values, else as the whole property.
        for key, deps in sorted((state.get("propertyDependencies") or {}).items()):
            for dep in (d for d in deps if d in fresh):
                name, computed = fresh[dep]
                leaves = _fed_leaves(new_inputs.get(key), computed, key) or [key]
                for leaf in leaves:
                    if _ignored(leaf, ignore) or any(
                        _under(p, leaf) or _under(leaf, p) for p in paths
                    ):
                        continue  # changed anyway: shown with its new value
                    paths.append(leaf)
                    values[leaf] = (_get(old_inputs, leaf), UNKNOWN)
                    fed[leaf] = name
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
            # replaceWith: replaced whenever a resource it names is (pulumi/pulumi
            # pkg/resource/deploy/step_generator.go, 1b594989, stepGenerator.diff).
            reasons += [
                f"replaceWith ({_name(target)} is replaced)"
                for target in state.get("replaceWith") or []
                if target in going
            ]
        op = "replace" if reasons else ("update" if paths else "same")
        refusals = (
            refused_update(type_, paths, old_inputs, new_inputs, classes) if op == "update" else []
        )
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
            fed=fed,
            refusals=refusals,
            delete_first=op == "replace"
            and deletes_before_replacing(
                type_, old_inputs, new_inputs, bool(state.get("deleteBeforeReplace"))
            ),
        )
        if op == "replace" and not change.protected:
            going.add(urn)
            if not type_.startswith("kubernetes:"):
                # Its computed outputs (ids, DNS names) are unknown until apply. A Kubernetes
                # object's preview echoes its inputs, so what depends on it sees no change.
                fresh[urn] = (change.name, _computed(old))
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
    _claims_and_volumes(changes, base, new)
    order = {step["urn"]: i for i, step in enumerate(base_doc["steps"])}
    return Comparison(project, stack, changes, order, _revisions(changes, base, new))


JOB = "kubernetes:batch/v1:Job"


def _model_jobs(states: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """Store -> revision label -> the URNs of its model Jobs (seed, manifest, verify)."""
    found: dict[str, dict[str, list[str]]] = {}
    for urn, state in states.items():
        labels = _labels(state)
        store, revision = labels.get(STORE_LABEL), labels.get(REVISION_LABEL)
        if state["type"] == JOB and isinstance(store, str) and isinstance(revision, str):
            found.setdefault(store, {}).setdefault(revision, []).append(urn)
    return found


def _labels(state: Mapping[str, Any]) -> dict[str, Any]:
    labels = _get(state.get("inputs") or {}, "metadata.labels")
    return labels if isinstance(labels, dict) else {}


def _revisions(
    changes: list[Change], base: Mapping[str, dict[str, Any]], new: Mapping[str, dict[str, Any]]
) -> list[str]:
    """A line per store whose model revision moves, saying what changes for its readers in the
    order it happens: the new revision made beside the old and verified, the readers' move, the
    old revision's Jobs deleted at the end (:meth:`Comparison.ordered`). The revisions are the
    store's model Jobs' revision labels (what their names carry)."""
    before, after = _model_jobs(base), _model_jobs(new)
    ops = {c.urn: c.op for c in changes}
    lines = []
    for store in sorted(set(before) & set(after)):
        old = [r for r in sorted(before[store]) if r not in after[store]]
        fresh = [r for r in sorted(after[store]) if r not in before[store]]
        if not old or not fresh:
            continue
        made = [u for r in fresh for u in after[store][r] if ops.get(u) == "create"]
        roles = {_labels(new[u]).get(ROLE_LABEL) for u in made}
        verified = sorted(
            str(_get(new[u]["inputs"], "metadata.namespace"))
            for u in made
            if _labels(new[u]).get(ROLE_LABEL) == "verify"
        )
        how = "seeded beside the old" if "seed" in roles else "made beside the old"
        if verified:
            how += f", then verified in {', '.join(verified)}"
        gone = sum(ops.get(u) == "delete" for r in old for u in before[store][r])
        parts = [
            f"{store}: model revision {', '.join(old)} -> {', '.join(fresh)}: {how}",
            _readers(changes, new, made),
        ]
        if gone:
            parts.append(
                f"then the old revision's {gone} Jobs are deleted"
                if gone > 1
                else "then the old revision's Job is deleted"
            )
        lines.append("; ".join(parts))
    return lines


def _readers(changes: list[Change], new: Mapping[str, dict[str, Any]], made: list[str]) -> str:
    """How readers move to a new revision whose model Jobs are ``made``: the program's workloads
    updated onto it (an update or replacement depending on the new Jobs) after the new verify
    Jobs where they depend on them; else as their pods take the store's new mounts."""
    verify = {u for u in made if _labels(new[u]).get(ROLE_LABEL) == "verify"}
    moved = [
        c
        for c in changes
        if c.op in ("update", "replace") and set(new[c.urn].get("dependencies") or []) & set(made)
    ]
    if not moved:
        return (
            "readers move when their pods take the store's new mounts (mount_for), each pod "
            "waiting until it is published"
        )

    def named(moving: list[Change]) -> str:
        return ", ".join(f"{c.type.rsplit(':', 1)[-1]} {c.name}" for c in moving)

    after = [c for c in moved if verify <= set(new[c.urn].get("dependencies") or [])]
    early = [c for c in moved if c not in after]
    out = []
    if after:
        out.append(f"readers move when the new verify Jobs pass ({named(after)} updated then)")
    if early:
        out.append(
            f"{named(early)} moves before verification (it does not depend on the verify "
            "Jobs), its pods waiting until the revision is published"
        )
    return "; ".join(out)


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _claim(state: Mapping[str, Any]) -> str:
    """``namespace/name`` of a claim."""
    inputs = state.get("inputs") or {}
    return f"{_get(inputs, 'metadata.namespace')}/{_get(inputs, 'metadata.name')}"


def _claims_and_volumes(
    changes: list[Change],
    base: Mapping[str, dict[str, Any]],
    new: Mapping[str, dict[str, Any]],
) -> None:
    """What Kubernetes' storage protection makes of volume and claim steps.

    A bound PersistentVolume is kept while its claim exists, and a claim while a pod uses it
    (``kubernetes.io/pv-protection`` and ``kubernetes.io/pvc-protection`` finalizers): a volume
    deleted (replaced or removed) under a claim that stays makes ``pulumi up`` wait on it until it
    times out. A volume deleted first (replaced under the same name) needs its claim deleted
    before it: the engine does that for a claim whose recorded ``replaceWith`` names the volume
    (pulumi/pulumi pkg/resource/deploy/step_generator.go, 1b594989:
    findDependentCascadeReplacements reads the old state), not for a claim depending on it
    through its inputs alone (re-diffed with them unknown, which pulumi-kubernetes need not
    answer with a replacement: not assumed).

    A claim re-created while its request is ignored (``ignoreChanges``) is created with the old
    request: the engine takes ignored inputs from the old state (pulumi/pulumi
    pkg/resource/deploy/step_generator.go, 1b594989, lines 1264-1269). Larger than its volume's
    capacity, it never binds ("requested PV is too small", k8s.io/kubernetes
    pkg/controller/volume/persistentvolume/pv_controller.go checkVolumeSatisfyClaim), and
    pulumi-kubernetes waits for a new claim to bind (provider/pkg/await/awaiters.go, 94977969,
    untilCoreV1PersistentVolumeClaimReady)."""
    by_old = {c.old_urn or c.urn: c for c in changes}
    for claim in (c for c in changes if c.type == PVC and c.op in ("replace", "delete")):
        where = _claim(base[claim.old_urn or claim.urn])
        if claim.op == "replace" and not claim.refused:
            claim.hangs = _unbound(base[claim.old_urn or claim.urn], new[claim.urn], new, where)
        claim.pods = (
            f"pods using claim {where} must restart: they hold the old claim, which is deleted "
            "only once no pod uses it (kubernetes.io/pvc-protection)"
            if claim.op == "replace"
            else f"pods using claim {where} must stop: it is deleted only once no pod uses it "
            "(kubernetes.io/pvc-protection)"
        )
    for volume in changes:
        if volume.type != PV or volume.op not in ("replace", "delete") or volume.refused:
            continue
        old_urn = volume.old_urn or volume.urn
        inputs = base[old_urn].get("inputs") or {}
        name = _get(inputs, "metadata.name")
        bound_ns = _get(inputs, "spec.claimRef.namespace")
        for urn, state in base.items():
            claim_inputs = state.get("inputs") or {}
            if (
                state["type"] != PVC
                or _get(claim_inputs, "spec.volumeName") != name
                or bound_ns not in (ABSENT, _get(claim_inputs, "metadata.namespace"))
            ):
                continue
            step = by_old.get(urn)
            cascaded = old_urn in (state.get("replaceWith") or [])
            if (
                step is None
                or step.op not in ("replace", "delete")
                or (volume.delete_first and not cascaded)
            ):
                volume.hangs = (
                    "pulumi up would hang: the volume is deleted while claim "
                    f"{_claim(state)} still holds it (kubernetes.io/pv-protection). Give the "
                    "claim replace_with this volume and deploy that first, in a separate change"
                )
                break


def _unbound(
    old: Mapping[str, Any],
    state: Mapping[str, Any],
    new: Mapping[str, dict[str, Any]],
    where: str,
) -> str:
    """Why a re-created claim whose request is ignored would never bind to its volume, or ''."""
    if not any(_under(REQUEST, p) for p in state.get("ignoreChanges") or []):
        return ""
    kept = _get(old.get("inputs") or {}, REQUEST)
    volume = _get(state.get("inputs") or {}, "spec.volumeName")
    capacity = next(
        (
            _get(s.get("inputs") or {}, "spec.capacity.storage")
            for s in new.values()
            if s["type"] == PV and _get(s.get("inputs") or {}, "metadata.name") == volume
        ),
        ABSENT,
    )
    size, room = quantity(kept), quantity(capacity)
    if size is None or room is None or size <= room:
        return ""
    return (
        f"pulumi up would hang: claim {where} is re-created with its old request {kept} "
        f"(ignore_changes keeps it), more than volume {volume}'s capacity {capacity}, so it "
        "never binds. Delete the claim first (stop its pods, kubectl delete pvc, pulumi "
        "refresh) so that it is created anew, or keep the capacity"
    )


# --- rendering ---------------------------------------------------------------------------------

SYMBOLS = {
    "create": "+",
    "import": "=",
    "update": "~",
    "replace": "+-",
    "delete": "-",
    "same": ">",
}


WIDTH = 60  # characters of a value shown


def _shown(value: Any) -> str:
    if value is ABSENT:
        return "(none)"
    if value == UNKNOWN:
        return "(known after apply)"
    return json.dumps(value, sort_keys=True)


def _pair(old: Any, new: Any) -> tuple[str, str]:
    """Both values, each at most ``WIDTH`` characters, cut so that both show where they differ:
    a long common start is elided, never shown twice."""
    a, b = _shown(old), _shown(new)
    cut = 0
    if ABSENT not in (old, new) and UNKNOWN not in (old, new) and max(len(a), len(b)) > WIDTH:
        common = next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        cut = common - 12 if common > 16 else 0

    def clip(text: str) -> str:
        text = "..." + text[cut:] if cut else text
        return text if len(text) <= WIDTH else text[: WIDTH - 3] + "..."

    return clip(a), clip(b)


def _detail(c: Change, made_up: Placeholders | None = None) -> list[str]:
    """One line per changed leaf path: old and new value, and why it forces replacement; a
    value the plan made up is marked ``(placeholder)``."""
    lines = []
    forced = {r.split(" (", 1)[0] for r in c.forcing}
    for path in c.paths:
        old, new = _pair(*c.values.get(path, (None, None)))
        if path in c.fed:
            new = f"(known after apply: {c.fed[path]} is replaced)"
        mark = "  (forces replacement)" if path in forced else ""
        refusal = next((r for r in c.refusals if r.split(" (", 1)[0] == path), "")
        if refusal:
            mark = f"  (refused by the cluster: {refusal.split(' (', 1)[1].removesuffix(')')})"
        if path in forced:
            why = next(r for r in c.forcing if r.split(" (", 1)[0] == path)
            if " (" in why:
                mark = f"  (forces replacement: {why.split(' (', 1)[1].rstrip(')')})"
        if made_up is not None:
            mark += made_up.mark(*(_shown(v) for v in c.values.get(path, ())))
        lines.append(f"{path}: {old} -> {new}{mark}")
    lines += [
        f"replaceWith: {r.split(' (', 1)[1].rstrip(')')}  (forces replacement)"
        for r in c.forcing
        if r.startswith("replaceWith (")
    ]
    return lines


def _label(c: Change) -> str:
    op = "move" if c.op == "same" else c.op
    moved = f" (moved from {c.old_urn})" if c.old_urn else ""
    return f"{op} {c.type} {c.name}{moved}"


def _summary(cmp: Comparison) -> str:
    counts = cmp.counts()
    return ", ".join(f"{n} to {op}" for op, n in counts.items()) or "no changes"


def _verdicts(cmp: Comparison) -> list[str]:
    """The verdicts, each naming its steps: the steps follow in the order they run, not
    riskiest first."""

    def named(changes: list[Change]) -> str:
        return ", ".join(f"{c.op} {c.name}" for c in changes)

    out = []
    if cmp.data_loss:
        out.append(
            f"DATA LOSS RISK: {len(cmp.data_loss)} step(s) replace or delete data that is neither "
            f"protected nor retained ({named(cmp.data_loss)})"
        )
    if cmp.blocked:
        out.append(
            f"BLOCKED: {len(cmp.blocked)} step(s) pulumi up cannot carry out, so the update "
            f"would fail ({named(cmp.blocked)}): each says what to do"
        )
    return out


def _when(c: Change) -> str:
    """When a replacement deletes the old resource (:meth:`Comparison.ordered`)."""
    if c.op != "replace" or c.refused:
        return ""
    return "the old one deleted first" if c.delete_first else "the old one deleted at the end"


def to_text(cmp: Comparison, base_name: str) -> str:
    """The verdicts, a line per store whose model revision moves, then the steps in the order
    ``pulumi up`` runs them, the old copies of replaced resources among the deletes at the
    end."""
    lines = [f"Comparing stack {cmp.stack} (project {cmp.project}) with {base_name}"]
    lines += _verdicts(cmp)
    if cmp.revisions:
        lines.append("Model revisions:")
        lines += [f"  {line}" for line in cmp.revisions]
    made_up = Placeholders(cmp.placeholders)
    ordered = cmp.ordered()
    if ordered:
        lines.append("In the order pulumi up runs them (the deletes last, dependents first):")
    for c in ordered:
        if c.op == "delete":
            continue
        op = "move" if c.op == "same" else c.op
        note = f"  [{c.note}]" if c.note else ""
        when = f" ({_when(c)})" if _when(c) else ""
        lines.append(f"{SYMBOLS.get(op, '>'):>2} {_label(c)}{when}{note}")
        lines += [f"      {d}" for d in _detail(c, made_up)]
        if c.pods:
            lines.append(f"      ! {c.pods}")
    for c in cmp.deleted_last():
        if c.op == "replace":
            lines.append(f" - delete {c.type} {c.name} (the old one, replaced above)")
            continue
        note = f"  [{c.note}]" if c.note else ""
        lines.append(f" - {_label(c)}{note}")
        if c.pods:
            lines.append(f"      ! {c.pods}")
    lines += made_up.legend()
    lines.append(f"Resources: {_summary(cmp)}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(cmp: Comparison, base_name: str) -> str:
    """A pull-request comment: a verdict line, then a table, data-bearing steps first."""
    lines = [f"### modelstore plan: `{cmp.stack}` compared with `{base_name}`", ""]
    verdicts = _verdicts(cmp)
    for i, verdict in enumerate(verdicts):
        head, rest = verdict.split(": ", 1)
        lines += [""] if i else []
        lines.append(f"> [!CAUTION]\n> **{head}**: {rest}.")
    if not verdicts:
        lines.append("No unprotected data-loss step, nothing pulumi up would refuse.")
    lines += ["", f"**{_summary(cmp)}**", ""]
    if cmp.revisions:
        lines += ["Model revisions:", "", *(f"- {_md(line)}" for line in cmp.revisions), ""]
    made_up = Placeholders(cmp.placeholders)
    ordered = cmp.ordered()
    if ordered:
        lines += [
            "In the order `pulumi up` runs them (the deletes last, dependents first):",
            "",
            "| Step | Resource | Type | Changes | Data |",
            "|---|---|---|---|---|",
        ]
        for c in ordered:
            op = "move" if c.op == "same" else c.op
            name = f"`{c.name}`" + (f" (from `{c.old_urn}`)" if c.old_urn else "")
            details = "<br>".join(f"`{_md(d)}`" for d in _detail(c, made_up))
            note = f"**{c.note}**" if c.loses_data or c.blocked else c.note
            if _when(c):
                note = f"{note}<br>{_when(c)}" if note else _when(c)
            if c.pods:
                note = f"{note}<br>{c.pods}" if note else c.pods
            lines.append(f"| {op} | {_md(name)} | `{c.type}` | {details} | {_md(note)} |")
    lines += ["", *(_md(line) for line in made_up.legend())] if made_up.used else []
    return "\n".join(lines) + "\n"


def to_json(cmp: Comparison, base_name: str) -> str:
    document = {
        "base": base_name,
        "stack": cmp.stack,
        "project": cmp.project,
        "summary": cmp.counts(),
        "dataLossRisk": [c.urn for c in cmp.data_loss],
        "blocked": [c.urn for c in cmp.blocked],
        "modelRevisions": cmp.revisions,
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
                "pods": c.pods,
            }
            for c in cmp.ordered()
        ],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


COMPARE_FORMATS = {"tree": to_text, "markdown": to_markdown, "json": to_json}
