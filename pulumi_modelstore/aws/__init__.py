"""AWS stores: FSx for Lustre on EKS."""

from .drivers import FSX_CSI
from .fsx import FsxLustreModelStore, FsxLustreModelStoreArgs

__all__ = ["FSX_CSI", "FsxLustreModelStore", "FsxLustreModelStoreArgs"]
