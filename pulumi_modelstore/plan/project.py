"""Reading a Pulumi project the way the Pulumi CLI does: ``Pulumi.yaml`` (``main``,
``stackConfigDir``, ``config`` declarations) and ``Pulumi.<stack>.yaml``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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
            raise ProjectError(
                f"stack '{stack}' not found in {self.directory}; "
                f"stacks: {', '.join(self.stacks()) or 'none'}"
            )
        document = _load_yaml(path) or {}
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
        for key, raw in (document.get("config") or {}).items():
            full = _full_key(self.name, key)
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
    document = _load_yaml(path) or {}
    name = document.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{path} has no project name")
    runtime = document.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name != "python":
        raise ProjectError(f"{path} declares runtime {runtime_name!r}; only python is planned")
    main = directory / str(document.get("main", "."))
    if main.is_dir() and not (main / "__main__.py").is_file():
        raise ProjectError(f"{main} has no __main__.py")
    if not main.exists():
        raise ProjectError(f"main program {main} does not exist")
    stack_dir = directory / str(document.get("stackConfigDir", "."))
    declared = document.get("config") or {}
    return Project(directory, name, main, stack_dir, dict(declared))


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping: YAML keeps the last, so two
    stores with one name would silently become one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ProjectError(
                    f"{self.name} line {line}: key {key!r} is given twice in one mapping "
                    f"(first on line {seen[key]}); YAML would keep only the last"
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _load_yaml(path: Path) -> Any:
    text = path.read_text()
    try:
        loader = _UniqueKeyLoader(text)
        loader.name = str(path)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ProjectError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from exc


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
