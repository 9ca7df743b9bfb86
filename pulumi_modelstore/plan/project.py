"""Reading a Pulumi project the way the Pulumi CLI does: ``Pulumi.yaml`` (``main``,
``stackConfigDir``, ``config`` declarations) and ``Pulumi.<stack>.yaml``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import suggestion

# The stack `modelstore plan` picks when none is named and the project has more than one.
DEFAULT_STACK = "local"
# What a `secure:` config value reads as offline: the ciphertext cannot be decrypted here.
SECRET_PLACEHOLDER = "plan-secret-placeholder"


class ProjectError(Exception):
    """The directory is not a Pulumi project, or the stack does not exist."""


@dataclass(frozen=True)
class Project:
    directory: Path
    name: str
    main: Path
    stack_config_dir: Path
    declared: dict[str, Any] = field(default_factory=dict)

    def stacks(self) -> list[str]:
        prefix, suffix = "Pulumi.", ".yaml"
        names = []
        for path in sorted(self.stack_config_dir.glob("Pulumi.*.yaml")):
            stack = path.name[len(prefix) : -len(suffix)]
            if stack:
                names.append(stack)
        return names

    def default_stack(self) -> str:
        stacks = self.stacks()
        if len(stacks) == 1:
            return stacks[0]
        if DEFAULT_STACK in stacks:
            return DEFAULT_STACK
        raise ProjectError(
            f"no --stack given and {self.directory} has no '{DEFAULT_STACK}' stack; "
            f"stacks: {', '.join(stacks) or 'none'}"
        )

    def stack_config(self, stack: str) -> tuple[dict[str, str], list[str]]:
        """The config the program would see for ``stack``: (values, secret keys).

        Values are strings, structured ones as JSON, as the Pulumi CLI hands them to a
        Python program."""
        path = self.stack_config_dir / f"Pulumi.{stack}.yaml"
        if not path.is_file():
            hint = suggestion(stack, self.stacks())
            raise ProjectError(
                f"stack '{stack}' not found in {self.directory}; "
                f"stacks: {', '.join(self.stacks()) or 'none'}" + (f"; {hint}" if hint else "")
            )
        document = _load_yaml(path)
        document.mapping("a mapping of stack settings (config, ...)")
        config_document = document.child("config")
        config = config_document.mapping("a mapping of config keys to their values", config=True)
        values: dict[str, str] = {}
        secrets: list[str] = []
        for key, decl in self.declared.items():
            full = _full_key(self.name, key)
            if isinstance(decl, dict):
                if "value" in decl:
                    values[full] = _config_string(decl["value"])
                elif "default" in decl:
                    values[full] = _config_string(decl["default"])
            else:
                values[full] = _config_string(decl)
        given: dict[str, tuple[str, int]] = {}
        for key, raw in config.items():
            full = _full_key(self.name, key)
            line = config_document.key_line(key)
            if full in given:
                first, first_line = given[full]
                raise ProjectError(
                    f"{path} line {line}: config key {key!r} is {full!r}, given already as "
                    f"{first!r} on line {first_line} (a key without a namespace is the "
                    "project's); only one may be given"
                )
            given[full] = (key, line)
            value, secret = _strip_secure(raw)
            values[full] = _config_string(value)
            if secret:
                secrets.append(full)
        return values, sorted(secrets)


def load_project(directory: str | Path) -> Project:
    directory = Path(directory).resolve()
    path = directory / "Pulumi.yaml"
    if not path.is_file():
        alt = directory / "Pulumi.yml"
        if not alt.is_file():
            raise ProjectError(f"no Pulumi.yaml in {directory}: not a Pulumi project directory")
        path = alt
    document = _load_yaml(path)
    top = document.mapping("a mapping of project settings (name, runtime, main, ...)")
    name = top.get("name")
    if name is None:
        raise ProjectError(f"{path} has no project name")
    if not isinstance(name, str) or not name:
        raise ProjectError(
            f"{document.child('name').where()}: name must be the project's name, got {_kind(name)}"
        )
    runtime = top.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name != "python":
        raise ProjectError(f"{path} declares runtime {runtime_name!r}; only python is planned")
    main = directory / document.child("main").relative_path("the program's file or directory")
    if main.is_dir() and not (main / "__main__.py").is_file():
        raise ProjectError(f"{main} has no __main__.py")
    if not main.exists():
        raise ProjectError(f"main program {main} does not exist")
    stack_dir = directory / document.child("stackConfigDir").relative_path(
        "the directory of the Pulumi.<stack>.yaml files"
    )
    declared = document.child("config").mapping(
        "a mapping of config keys to declarations", config=True
    )
    return Project(directory, name, main, stack_dir, declared)


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping: YAML keeps the last, so two
    stores with one name would silently become one. A key a merge (``<<: *base``) brings in may
    be given again: that is what a merge is for."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if _hashable(key) and key in seen:
                raise ProjectError(
                    f"{self.name} line {line}: key {key!r} is given twice in one mapping "
                    f"(first on line {seen[key]}); YAML would keep only the last"
                )
            if _hashable(key):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> str:
        """A date stays the text written (``2025-01-01``): config reaches the program as
        JSON, which has no dates."""
        return str(self.construct_scalar(node))


_UniqueKeyLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", _UniqueKeyLoader.construct_yaml_timestamp
)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
# What a YAML key that is not a string is, in an error's words.
_TAG_WORDS = {
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "a date",
}
# Values JSON cannot carry to the program.
_NOT_JSON = {"tag:yaml.org,2002:binary": "binary data", "tag:yaml.org,2002:set": "a set"}
_KIND_WORDS = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _kind(value: Any) -> str:
    """What a YAML value is, in an error's words: ``a list``, ``a string 'x'``."""
    if value is None:
        return "null"
    word = _KIND_WORDS.get(type(value))
    if word is None:
        word = "a number" if isinstance(value, int | float) else type(value).__name__
    if isinstance(value, dict | list):
        return word
    return f"{word} {value!r}"


@dataclass(frozen=True)
class _Document:
    """A YAML value with the node it came from: errors about it name its file and line."""

    path: Path
    data: Any
    node: yaml.Node | None
    label: str = "the file"
    """What the value is called in an error: the file, or the key it is under."""

    @property
    def line(self) -> int:
        return self.node.start_mark.line + 1 if self.node is not None else 1

    def where(self) -> str:
        return f"{self.path} line {self.line}"

    def child(self, key: str) -> _Document:
        """The value under ``key`` (nothing when this is not a mapping or lacks it)."""
        data = self.data.get(key) if isinstance(self.data, dict) else None
        node = self._value_node(key) if data is not None else None
        return _Document(self.path, data, node, key)

    def key_line(self, key: Any) -> int:
        node = self._key_node(key)
        return node.start_mark.line + 1 if node is not None else self.line

    def _pairs(self) -> list[tuple[yaml.Node, yaml.Node]]:
        if not isinstance(self.node, yaml.MappingNode):
            return []
        return [(k, v) for k, v in self.node.value if k.tag != _MERGE_TAG]

    def _key_node(self, key: Any) -> yaml.Node | None:
        for key_node, _ in self._pairs():
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(key):
                return key_node
        return None

    def _value_node(self, key: Any) -> yaml.Node | None:
        for key_node, value_node in self._pairs():
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(key):
                return value_node
        return None

    def mapping(self, allowed: str, *, config: bool = False) -> dict[Any, Any]:
        """The value as a mapping (nothing is an empty one); ``config``: a tree with string
        keys at every depth."""
        if self.data is None:
            return {}
        if not isinstance(self.data, dict):
            raise ProjectError(
                f"{self.where()}: {self.label} must be {allowed}, got {_kind(self.data)}"
            )
        if config:
            self._config_tree(self.node, set())
        return dict(self.data)

    def relative_path(self, what: str) -> str:
        """The value as a relative path: ``what`` names it (nothing is ``.``)."""
        if self.data is None:
            return "."
        if not isinstance(self.data, str) or not self.data:
            raise ProjectError(
                f"{self.where()}: {self.label} must be a path ({what}), got {_kind(self.data)}"
            )
        return self.data

    def _config_tree(self, node: yaml.Node | None, open_nodes: set[int]) -> None:
        """Config reaches the program as JSON, whose keys are strings: a key written as a
        number, a boolean or null would arrive renamed (``123`` as ``"123"``, ``~`` as
        ``"null"``), so it is refused where it is written."""
        if node is None:
            return
        if node.tag in _NOT_JSON:
            raise ProjectError(
                f"{self.path} line {node.start_mark.line + 1}: a config value must be a "
                f"string, number, boolean, list or mapping, got {_NOT_JSON[node.tag]}"
            )
        if isinstance(node, yaml.ScalarNode):
            return
        if id(node) in open_nodes:
            raise ProjectError(
                f"{self.path} line {node.start_mark.line + 1}: an alias refers to a mapping "
                "or list that contains it; config must be a tree"
            )
        open_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    self._config_tree(value_node, open_nodes)
                    continue
                if key_node.tag != _STR_TAG:
                    text = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
                    word = _TAG_WORDS.get(key_node.tag, "not a string")
                    raise ProjectError(
                        f"{self.path} line {key_node.start_mark.line + 1}: key {text or '~'} "
                        f"must be a string (config reaches the program as JSON), got {word}; "
                        f'quote it: "{text}"'
                    )
                self._config_tree(value_node, open_nodes)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                self._config_tree(item, open_nodes)
        open_nodes.discard(id(node))


def _load_yaml(path: Path) -> _Document:
    """A YAML file as data and nodes; any problem reading it is a :class:`ProjectError` naming
    the file and line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProjectError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ProjectError(
            f"{path} line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x})"
        ) from exc
    try:
        loader = _UniqueKeyLoader(text)
        loader.name = str(path)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        raise ProjectError(_marked(path, exc)) from exc
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise ProjectError(
            f"{path} line {line}: not valid YAML: character #x{exc.character:04x} is not allowed"
            if isinstance(exc.character, int)
            else f"{path} line {line}: not valid YAML: {exc.reason}"
        ) from exc
    except yaml.YAMLError as exc:
        raise ProjectError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from exc
    except RecursionError as exc:
        raise ProjectError(f"{path} is nested too deeply to read") from exc
    return _Document(path, data, node)


def _marked(path: Path, exc: yaml.MarkedYAMLError) -> str:
    """YAML's own problem, where it is (``problem_mark``) and what it was reading then."""
    mark = exc.problem_mark or exc.context_mark
    where = f"{path} line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
    problem = " ".join(str(exc.problem or exc.context or "").split())
    context = " ".join(str(exc.context or "").split())
    if context and exc.problem:
        if problem.startswith("but "):  # "expected a single document, but found another"
            problem = f"{context}, {problem}"
        else:
            on = f" on line {exc.context_mark.line + 1}" if exc.context_mark else ""
            problem = f"{problem} ({context}{on})"
    return f"{where}: not valid YAML: {problem}"


def _full_key(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _strip_secure(value: Any) -> tuple[Any, bool]:
    """Replace ``{secure: ...}`` (at any depth) with a placeholder; report whether any was."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        found = False
        out = {}
        for k, item in value.items():
            out[k], s = _strip_secure(item)
            found = found or s
        return out, found
    if isinstance(value, list):
        items = [_strip_secure(item) for item in value]
        return [i for i, _ in items], any(s for _, s in items)
    return value, False


def _config_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)
