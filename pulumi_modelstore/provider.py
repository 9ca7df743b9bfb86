"""The multi-language component package: the provider that ``__main__.py`` (at the repository
root, next to ``PulumiPlugin.yaml``) hosts, so a TypeScript, Go, C#, Java or YAML program can
``pulumi package add`` this repository and use every public component.

``pulumi.provider.experimental.component_provider_host(components, name, namespace, version)``
builds ``ComponentProvider(components, name, namespace, version)`` and hands it to
``pulumi.provider.main``. ``ComponentProvider.__init__`` hard-codes the stock ``Analyzer``,
whose schema would lose the descriptions of every field declared on a base TypedDict (see
:mod:`.schema`). It has no hook for another analyzer, so :class:`ModelStoreProvider` repeats
its ``__init__`` (a dozen lines) with ours, and :func:`serve` does what the host does after
building the provider. Everything else (construct, input mapping, outputs) is the SDK's own.
The tests check that this ``__init__`` sets what the stock one sets and that the two schemas
differ only in descriptions, so an SDK change shows up there.
"""

import json
import sys
import tomllib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from pulumi.provider import main
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.provider import Provider
from pulumi.resource import ComponentResource

from .schema import PACKAGE, Analyzer, components

DISTRIBUTION = "pulumi-modelstore"


def package_version() -> str:
    """The installed distribution's version, else (a plain checkout) ``pyproject.toml``'s."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])


class ModelStoreProvider(ComponentProvider):
    """``ComponentProvider`` with :class:`.schema.Analyzer` (docstrings from declaring bases)."""

    def __init__(
        self,
        components: list[type[ComponentResource]],
        name: str,
        namespace: str | None = None,
        version: str = "0.0.0",
    ) -> None:
        # As ComponentProvider.__init__ (pulumi/provider/experimental/component.py), with our
        # Analyzer in place of the stock one.
        self._name = name
        self.analyzer = Analyzer(name)
        result = self.analyzer.analyze(components)
        self._components = {component.__name__: component for component in components}
        self._component_defs = result["component_definitions"]
        self._type_defs = result["type_definitions"]
        self._external_enum_types = result["external_enum_types"]
        self._dependencies = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
        schema = generate_schema(
            name,
            version,
            namespace,
            self._component_defs,
            self._type_defs,
            self._dependencies,
        )
        Provider.__init__(self, version, json.dumps(schema.to_json()))


def provider() -> ModelStoreProvider:
    """The provider the plugin serves: every public component, as package ``modelstore`` at
    this distribution's version."""
    return ModelStoreProvider(components(), PACKAGE, version=package_version())


def serve(args: Sequence[str]) -> None:
    """Serve :func:`provider` to the Pulumi engine (blocks), as ``component_provider_host``
    does: ``args`` are the plugin's command line after the program (the engine address,
    flags)."""
    main(provider(), list(args))


if __name__ == "__main__":  # pragma: no cover
    serve(sys.argv[1:])
