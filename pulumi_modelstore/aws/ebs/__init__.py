"""EBS block volumes for model caches and checkpoints on EKS, split by what each part holds:

- ``classes.py``: the gp3 and io2 Multi-Attach StorageClasses (their limits, parsing and
  builders) and :func:`multi_attach_claim`;
- ``driver.py``: :class:`EbsCsiDriver`, once per cluster (driver, controller identity, snapshot
  controller and classes);
- ``cache.py``: :class:`EbsModelCache`, per model, the ``ebs-snapshot`` store backend (seed
  volume, loader Job, snapshot, replicas restored from it).

The driver's IAM policy is in ``aws/policies.py`` (re-exported here).
"""

from ..policies import ebs_csi_driver_policy
from .cache import EbsModelCache, EbsModelCacheArgs
from .classes import (
    Gp3Class,
    Io2MultiAttachClass,
    check_gp3_size,
    check_io2_size,
    ebs_storage_class,
    gp3_storage_class,
    io2_multi_attach_storage_class,
    multi_attach_claim,
    parse_gp3_class,
    parse_io2_multi_attach_class,
)
from .driver import EbsCsiDriver, EbsCsiDriverArgs

__all__ = [
    "EbsCsiDriver",
    "EbsCsiDriverArgs",
    "EbsModelCache",
    "EbsModelCacheArgs",
    "Gp3Class",
    "Io2MultiAttachClass",
    "check_gp3_size",
    "check_io2_size",
    "ebs_csi_driver_policy",
    "ebs_storage_class",
    "gp3_storage_class",
    "io2_multi_attach_storage_class",
    "multi_attach_claim",
    "parse_gp3_class",
    "parse_io2_multi_attach_class",
]
