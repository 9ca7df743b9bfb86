"""Classes registered under a name given as a class keyword, as each is defined: store backends
(``class S3ModelStore(AwsModelStore, backend="s3")``) and cluster scope kinds
(``class EksCluster(ClusterScope, kind="eks")``), so the config program looks a class up by
the name a stack gives rather than keeping a list."""

from typing import Generic, TypeVar

T = TypeVar("T", bound=type)


class Registry(Generic[T]):
    """Name -> class, filled by the base class's ``__init_subclass__`` (:meth:`add`)."""

    def __init__(self, attribute: str) -> None:
        """``attribute``: the class attribute that holds a registered class's own name."""
        self.attribute = attribute
        self._classes: dict[str, T] = {}

    def add(self, cls: T, name: str | None) -> None:
        """Register ``cls`` under ``name`` and set its ``attribute`` to it; None (an abstract
        base, a cloud's common base) registers nothing."""
        if name is not None:
            setattr(cls, self.attribute, name)
            self._classes[name] = cls

    def classes(self) -> dict[str, T]:
        """A copy of the registry: name -> class, of the modules imported."""
        return dict(self._classes)
