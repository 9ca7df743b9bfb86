"""The modelstore CrossGuard policy pack: ``pulumi preview --policy-pack policy``.

The policies are the library's (``pulumi_modelstore.policy.POLICIES``), the same that
``modelstore plan --policy`` runs offline; this file only registers them with CrossGuard.
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from pulumi_modelstore.policy import PACK_NAME
from pulumi_modelstore.policy.crossguard import crossguard_policies

PolicyPack(
    name=PACK_NAME,
    policies=crossguard_policies(),
    # Each policy states its own level; this is the level of none.
    enforcement_level=EnforcementLevel.MANDATORY,
)
