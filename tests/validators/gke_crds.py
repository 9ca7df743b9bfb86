"""GKE's ``GCPDataSource`` (``datalayer.gke.io/v1``) and ``ComputeClass``
(``cloud.google.com/v1``): GKE installs these CRDs itself and publishes no CRD manifest, so the
fields an object may carry are the ones GKE's CRD reference pages list, checked here as
strictly as a schema would (unknown fields, required fields, enum values); metadata is checked
against the Kubernetes ObjectMeta schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.validators.kube_schema import validator

# GCPDataSource spec fields, from the CRD reference
# (docs.cloud.google.com/kubernetes-engine/docs/reference/crds/gcpdatasource):
# cloudStorage{serviceAccountName, uri}.
GCP_DATA_SOURCE_FIELDS = {"cloudStorage": {"serviceAccountName", "uri"}}
# ComputeClass spec fields, from the CRD reference
# (docs.cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass): priorities is
# required; activeMigration, autoscalingPolicy, nodePoolAutoCreation, nodePoolConfig,
# priorityDefaults, whenUnsatisfiable optional; a priority rule takes machineFamily,
# machineType, nodepools, gpu, tpu, spot, minCores, minMemoryGb, reservations, storage...
COMPUTE_CLASS_FIELDS = {
    "activeMigration",
    "autoscalingPolicy",
    "nodePoolAutoCreation",
    "nodePoolConfig",
    "priorities",
    "priorityDefaults",
    "whenUnsatisfiable",
}
PRIORITY_RULE_FIELDS = {"machineFamily", "machineType", "nodepools", "gpu", "tpu", "spot"}
WHEN_UNSATISFIABLE = {"ScaleUpAnyway", "DoNotScaleUp"}
KINDS = {("datalayer.gke.io/v1", "GCPDataSource"), ("cloud.google.com/v1", "ComputeClass")}
TOP_LEVEL = {"apiVersion", "kind", "metadata", "spec"}


def _unknown(at: str, given: Mapping[str, Any], known: set[str]) -> list[str]:
    return [
        f'{at}{name}: unknown field "{name}" (known fields: {", ".join(sorted(known))})'
        for name in sorted(set(given) - known)
    ]


def errors(obj: Mapping[str, Any], minor: str) -> list[str]:
    """Every problem in a GKE custom resource, as :meth:`Validator.errors` words them."""
    problems = _unknown("", obj, TOP_LEVEL)
    problems += validator(minor).metadata_errors(obj.get("metadata", {}))
    spec = obj.get("spec", {})
    if obj["kind"] == "GCPDataSource":
        problems += _unknown("spec.", spec, set(GCP_DATA_SOURCE_FIELDS))
        for key, fields in GCP_DATA_SOURCE_FIELDS.items():
            problems += _unknown(f"spec.{key}.", spec.get(key, {}), fields)
    else:
        problems += _unknown("spec.", spec, COMPUTE_CLASS_FIELDS)
        if not spec.get("priorities"):
            problems.append("spec.priorities: Required value")
        for i, rule in enumerate(spec.get("priorities", [])):
            problems += _unknown(f"spec.priorities[{i}].", rule, PRIORITY_RULE_FIELDS)
        policy = spec.get("whenUnsatisfiable")
        if policy is not None and policy not in WHEN_UNSATISFIABLE:
            problems.append(
                f'spec.whenUnsatisfiable: Unsupported value: "{policy}": supported values: '
                + ", ".join(f'"{v}"' for v in sorted(WHEN_UNSATISFIABLE))
            )
    return problems
