"""Which extra installs each cloud's room: the provider SDKs of AWS, GCP and Azure together
install well over 1 GB, so each is an extra (``pulumi-modelstore[aws]``, ``[gcp]``,
``[azure]``, ``[all]``) on top of the core (``pulumi``, ``pulumi-kubernetes``). A room imported
without its extra fails at once, in one line naming the extra."""

from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class CloudRoom:
    extra: str
    """The ``pulumi-modelstore[<extra>]`` that installs the SDK."""
    distribution: str
    """The provider SDK's package on PyPI."""
    module: str
    """The provider SDK's import name."""
    backends: tuple[str, ...]
    """The config program's ``backend`` names of the room's stores."""
    kinds: tuple[str, ...]
    """The config program's cluster ``kind`` of the room's cluster scopes."""


CLOUD_ROOMS: dict[str, CloudRoom] = {
    "aws": CloudRoom(
        "aws",
        "pulumi-aws",
        "pulumi_aws",
        ("ebs-snapshot", "efs", "fsx-lustre", "mountpoint-s3"),
        ("eks",),
    ),
    "gcp": CloudRoom("gcp", "pulumi-gcp", "pulumi_gcp", ("gcs-fuse", "hyperdisk-ml"), ("gke",)),
    "azure": CloudRoom(
        "azure",
        "pulumi-azure-native",
        "pulumi_azure_native",
        ("azure-blob", "azure-files-nfs"),
        ("aks",),
    ),
}


class MissingExtraError(ImportError):
    """A cloud's room was imported without the extra that installs its provider SDK."""


def install_hint(room: str) -> str:
    return f"pip install 'pulumi-modelstore[{CLOUD_ROOMS[room].extra}]'"


def require(room: str) -> None:
    """Import the room's provider SDK, or fail in one line naming the extra."""
    spec = CLOUD_ROOMS[room]
    try:
        import_module(spec.module)
    except ImportError:
        raise MissingExtraError(
            f"pulumi_modelstore.{room} needs {spec.distribution}, which is not installed: "
            f"{install_hint(room)}"
        ) from None


def room_of_backend(backend: str) -> str | None:
    """The cloud room whose store ``backend`` names, if any."""
    return next((room for room, spec in CLOUD_ROOMS.items() if backend in spec.backends), None)


def room_of_kind(kind: str) -> str | None:
    """The cloud room whose cluster scope ``kind`` names, if any."""
    return next((room for room, spec in CLOUD_ROOMS.items() if kind in spec.kinds), None)
