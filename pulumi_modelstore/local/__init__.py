"""Local stores for laptop clusters."""

from .hostpath import LocalModelStore, LocalModelStoreArgs

__all__ = ["LocalModelStore", "LocalModelStoreArgs"]
