"""Plan output formats: preview JSON, a terminal tree, a Mermaid graph, Kubernetes YAML."""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

import yaml

from .engine import SECRET, UNKNOWN, Plan
from .placeholders import strings

FORMATS = ("json", "tree", "mermaid", "yaml")
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
SHOWN_UNKNOWN = "(known after apply)"


def render(plan: Plan, fmt: str, *, outputs: bool = False) -> str:
    """``plan`` in ``fmt``; ``outputs``: the tree shows every output value, not a line per
    stack output (:func:`to_tree`)."""
    if fmt == "tree":
        return to_tree(plan, outputs=outputs)
    return {"json": to_json, "mermaid": to_mermaid, "yaml": to_yaml}[fmt](plan)


def change_summary(plan: Plan) -> dict[str, int]:
    return dict(sorted(Counter(step["op"] for step in plan.steps).items()))


def to_json(plan: Plan) -> str:
    """The shape of ``pulumi preview --json`` (steps, changeSummary, diagnostics), plus the
    stack outputs."""
    document = {
        "config": {
            k: SECRET if k in plan.secret_keys else v for k, v in sorted(plan.config.items())
        },
        "steps": plan.steps,
        "diagnostics": plan.diagnostics,
        "changeSummary": change_summary(plan),
        "outputs": plan.outputs,
        "invokes": plan.invokes,
        "stack": plan.stack,
        "project": plan.project,
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _short_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _flags(state: dict[str, Any]) -> str:
    flags = []
    if state.get("protect"):
        flags.append("protect")
    if state.get("retainOnDelete"):
        flags.append("retain-on-delete")
    if state.get("deleteBeforeReplace"):
        flags.append("delete-before-replace")
    return f"  [{', '.join(flags)}]" if flags else ""


def _children(plan: Plan) -> dict[str, list[dict[str, Any]]]:
    children: dict[str, list[dict[str, Any]]] = {}
    for step in plan.steps:
        children.setdefault(step["newState"]["parent"], []).append(step)
    return children


PLACEHOLDER = "(placeholder)"
"""The mark of a tree line holding a value the plan made up (``Plan.placeholders``)."""


class Placeholders:
    """Which texts hold a value the plan made up (``Plan.placeholders``), and where the marked
    ones came from: the tree's and ``--compare``'s marks and legend."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = values
        self.used: set[str] = set()

    def mark(self, *texts: str) -> str:
        """`` (placeholder)`` when one of ``texts`` holds a made-up value, else ''."""
        for text in texts:
            for value, source in self.values.items():
                if value in text:
                    self.used.add(source)
                    return f"  {PLACEHOLDER}"
        return ""

    def legend(self) -> list[str]:
        if not self.used:
            return []
        return [
            f"{PLACEHOLDER}: holds a value modelstore plan made up, not the stack's own (from "
            f"{', '.join(sorted(self.used))}): pulumi up uses what the cloud answers"
        ]


FOLDED = "Outputs (a line per stack output; --outputs shows every value):"


def to_tree(plan: Plan, *, outputs: bool = False) -> str:
    """Components and their children, one line each, in dependency order, then the stack
    outputs: a line per stack output with its number of values (most of a store's tree was its
    outputs, one value a line), or with ``outputs`` every value on a line of its own. The
    program's log messages are not among them: ``modelstore plan`` writes them to standard
    error as they come (the JSON keeps them as ``diagnostics``, as ``pulumi preview --json``
    does). A line holding a value the plan made up (a subnet, a zone, an account:
    ``Plan.placeholders``) ends in ``(placeholder)``, explained by a legend line."""
    children = _children(plan)
    ops = {"create": "+", "read": ">", "import": "="}
    lines: list[str] = []
    made_up = Placeholders(plan.placeholders)

    def walk(step: dict[str, Any], prefix: str, last: bool, root: bool) -> None:
        state = step["newState"]
        op = ops.get(step["op"], "?")
        name = _short_name(state["urn"])
        label = f"{op} {state['type']}  {name}{_flags(state)}{made_up.mark(name)}"
        if root:
            lines.append(label)
            child_prefix = ""
        else:
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{label}")
            child_prefix = prefix + ("   " if last else "│  ")
        kids = children.get(state["urn"], [])
        for i, kid in enumerate(kids):
            walk(kid, child_prefix, i == len(kids) - 1, False)

    roots = [
        s for s in children.get("", []) if not s["newState"]["type"].startswith("pulumi:providers:")
    ]
    for step in roots:
        walk(step, "", True, True)
    providers = [
        s for s in children.get("", []) if s["newState"]["type"].startswith("pulumi:providers:")
    ]
    if providers:
        lines.append("Providers:")
        lines += [f"  + {_short_name(s['urn'])} ({s['newState']['type']})" for s in providers]
    if plan.outputs:
        lines.append("Outputs:" if outputs else FOLDED)
        for key, value in sorted(plan.outputs.items()):
            values = _output_lines(key, _shown(value), made_up)
            lines += values if outputs or len(values) == 1 else [_folded(key, values)]
    lines += made_up.legend()
    summary = ", ".join(f"{n} to {op}" for op, n in change_summary(plan).items())
    lines.append(f"Resources: {summary}")
    return "\n".join(lines) + "\n"


def _folded(key: str, values: list[str]) -> str:
    """A stack output's line when folded: how many values it holds, and how many of them the
    plan made up."""
    made = sum(line.endswith(PLACEHOLDER) for line in values)
    return f"  {key}: {len(values)} values" + (f", {made} made up  {PLACEHOLDER}" if made else "")


def _output_lines(key: str, value: Any, made_up: Placeholders) -> list[str]:
    """An output one leaf a line (``  llama.claimNames.inference: "llama"``), so a pull-request
    comment reads it and a diff shows the one value that changed; a list of plain values stays
    on its line. A made-up value is marked."""
    if isinstance(value, dict) and value:
        return [
            line
            for k, v in sorted(value.items())
            for line in _output_lines(f"{key}.{k}", v, made_up)
        ]
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        return [
            line for i, v in enumerate(value) for line in _output_lines(f"{key}[{i}]", v, made_up)
        ]
    return [f"  {key}: {json.dumps(value, sort_keys=True)}{made_up.mark(key, *strings(value))}"]


def _shown(value: Any) -> Any:
    if value == UNKNOWN:
        return SHOWN_UNKNOWN
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v) for v in value]
    return value


def _mermaid_label(text: str) -> str:
    return text.replace('"', "#quot;")


def to_mermaid(plan: Plan) -> str:
    """A flowchart: components as subgraphs, resources as nodes, an edge from each dependency
    to what depends on it."""
    ids = {step["urn"]: f"r{i}" for i, step in enumerate(plan.steps)}
    children = _children(plan)
    lines = ["flowchart LR"]

    def node(step: dict[str, Any], indent: str) -> None:
        state = step["newState"]
        urn = state["urn"]
        label = _mermaid_label(f"{_short_name(urn)}<br/><small>{state['type']}</small>")
        kids = children.get(urn, [])
        if state["custom"]:
            shape = f'[("{label}")]' if state.get("protect") else f'["{label}"]'
            lines.append(f"{indent}{ids[urn]}{shape}")
        elif kids:
            lines.append(f'{indent}subgraph {ids[urn]}["{label}"]')
            for kid in kids:
                node(kid, indent + "  ")
            lines.append(f"{indent}end")
        else:
            lines.append(f'{indent}{ids[urn]}["{label}"]')

    for step in children.get("", []):
        if step["newState"]["type"] == "pulumi:pulumi:Stack":
            for kid in children.get(step["urn"], []):
                node(kid, "  ")
    for step in plan.steps:
        state = step["newState"]
        if not state["custom"] or state["type"].startswith("pulumi:providers:"):
            continue
        for dep in state["dependencies"]:
            if dep in ids and plan.by_urn(dep)["custom"]:
                lines.append(f"  {ids[dep]} --> {ids[state['urn']]}")
    return "\n".join(lines) + "\n"


_K8S_ORDER = ("apiVersion", "kind", "metadata", "spec", "data", "stringData")


def _ordered(obj: dict[str, Any]) -> dict[str, Any]:
    first = {k: _sorted(obj[k]) for k in _K8S_ORDER if k in obj}
    rest = {k: _sorted(obj[k]) for k in sorted(obj) if k not in _K8S_ORDER}
    return {**first, **rest}


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return _shown(value)


@functools.lru_cache(maxsize=4096)
def _analysis(scalar: str, allow_unicode: bool) -> Any:
    """PyYAML's analysis of a scalar: a function of the text and ``allow_unicode`` alone
    (yaml/emitter.py, ``Emitter.analyze_scalar``), read by the emitter and never changed."""
    emitter = yaml.SafeDumper(None, allow_unicode=allow_unicode)
    return emitter.analyze_scalar(scalar)


# What a double-quoted scalar writes as it is: printable ASCII but the quote and the backslash;
# with allow_unicode also the printable BMP characters but NEL, the line and paragraph
# separators and the byte order mark (yaml/emitter.py, ``Emitter.write_double_quoted``).
# Anything else is escaped. A line is folded only at a space or next to an escape.
_KEPT = {
    False: r"\x20\x21\x23-\x5b\x5d-\x7e",
    True: r"\x20\x21\x23-\x5b\x5d-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd",
}
_ESCAPED = {unicode: re.compile(f"[^{kept}]") for unicode, kept in _KEPT.items()}


class _Dumper(yaml.SafeDumper):
    """``yaml.safe_dump_all``'s dumper, byte for byte, remembering each scalar's analysis:
    a character by character scan that would otherwise be half of a plan's YAML, repeated for
    the same long strings (the programs ConfigMap's sources) in every plan of a process; and
    writing double-quoted scalars a run of plain characters at a time (PyYAML's writer steps
    through them one by one: most of the rest of a plan's YAML)."""

    def analyze_scalar(self, scalar: str) -> Any:
        return _analysis(scalar, bool(self.allow_unicode))

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if self.encoding:  # to_yaml writes text; an encoded stream takes PyYAML's own writer
            super().write_double_quoted(text, split)
            return
        escaped = _ESCAPED[bool(self.allow_unicode)]
        size = len(text)
        written = 0  # text[:written] is out
        self.write_indicator('"', True)
        at = 0
        while at <= size:
            if at < size and (written < at or self.column <= self.best_width):
                # Nothing happens until the next character to escape or the first space past
                # the width, where the line may fold (next to an escape: once past it): jump.
                found = escaped.search(text, at)
                stop = found.start() if found else size
                past_width = written + self.best_width - self.column + 1
                space = text.find(" ", max(at, past_width), stop) if split else -1
                if space >= 0:
                    stop = space
                if stop > at:
                    at = stop
                    continue
            char = text[at] if at < size else ""
            if not char or escaped.match(char):
                self._put(text[written:at])
                written = at
                if char:
                    self._put(self._escape(char))
                    written = at + 1
            fold = split and 0 < at < size - 1 and (char == " " or written >= at)
            if fold and self.column + (at - written) > self.best_width:
                self._put(text[written:at] + "\\")
                written = max(written, at)
                self.write_indent()
                self.whitespace = self.indention = False
                if text[written] == " ":  # a fold's leading space would be read as indentation
                    self._put("\\")
            at += 1
        self.write_indicator('"', False)

    def _put(self, data: str) -> None:
        if data:
            self.column += len(data)
            self.stream.write(data)

    def _escape(self, char: str) -> str:
        named = self.ESCAPE_REPLACEMENTS.get(char)
        if named is not None:
            return "\\" + named
        code = ord(char)
        digits = 2 if code <= 0xFF else 4 if code <= 0xFFFF else 8
        return "\\" + {2: "x", 4: "u", 8: "U"}[digits] + f"{code:0{digits}X}"


def to_yaml(plan: Plan) -> str:
    """Every Kubernetes object the plan creates, as multi-document YAML. Helm releases are
    listed as comments: Helm renders their objects at deploy time."""
    header = [f"# modelstore plan: project {plan.project}, stack {plan.stack}"]
    for state in plan.by_type(HELM_RELEASE):
        inputs = state["inputs"]
        repo = (inputs.get("repositoryOpts") or {}).get("repo", "")
        header.append(
            f"# Helm release {inputs.get('namespace', 'default')}/{inputs.get('name')}: chart "
            f"{inputs.get('chart')} {inputs.get('version')} from {repo} "
            "(rendered by Helm at deploy time)"
        )
    objects = [_ordered(obj) for obj in plan.kubernetes_objects()]
    body = (
        yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
        if objects
        else ""
    )
    return "\n".join(header) + "\n" + body
