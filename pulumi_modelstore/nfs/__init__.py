"""NFS stores: an existing NFS export through the csi-driver-nfs driver."""

from .store import NFS_CSI, NfsModelStore, NfsModelStoreArgs

__all__ = ["NFS_CSI", "NfsModelStore", "NfsModelStoreArgs"]
