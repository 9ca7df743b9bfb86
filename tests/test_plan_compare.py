"""`modelstore plan --compare BASE.json`: replace versus update from the providers' rules, data
loss called out first, moves through aliases, exit codes for CI.

Each cloud test plans a real stack twice (the base with its config, then one value changed) and
compares the two plans, as a pull request's preview would."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pulumi_modelstore.cli import main
from pulumi_modelstore.plan.compare import (
    DATA_BEARING_TYPES,
    EXIT_BLOCKED,
    EXIT_DATA_LOSS,
    Comparison,
    _detail,
    compare,
    filled_outputs,
    to_markdown,
    to_text,
)
from pulumi_modelstore.plan.engine import UNKNOWN, plan_directory
from pulumi_modelstore.plan.render import to_json
from pulumi_modelstore.plan.replacement import deletes_before_replacing, rules_for
from tests.conftest import ROOT
from tests.golden import golden_path
from tests.test_backend_contract import DATA_BEARING

FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
GCS = "gcp:storage/bucket:Bucket"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
DATA_SOURCE = "kubernetes:datalayer.gke.io/v1:GCPDataSource"

Edit = Callable[[dict[str, Any]], None]


def stack_dir(tmp_path: Path, stack: str, edit: Edit | None = None) -> Path:
    """A copy of this project's ``stack`` whose store config ``edit`` changes; the program is
    the repository's own ``stacks/``."""
    directory = tmp_path / f"{stack}-{len(list(tmp_path.iterdir()))}"
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text(
        f"name: modelstore\nruntime: python\nmain: {ROOT / 'stacks'}/\n"
    )
    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    if edit is not None:
        edit(config["config"]["modelstore:stores"])
    (directory / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config))
    # A stack naming its cluster by StackReference reads the platform stack's saved outputs.
    shutil.copytree(ROOT / "stacks" / "stack-outputs", directory / "stack-outputs")
    return directory


def planned(directory: Path, stack: str) -> dict[str, Any]:
    """``stack``'s plan in ``directory`` as JSON (a fresh copy), planned once per distinct
    config: a plan depends on the program and its config only, not on the directory (checked:
    the same config planned twice is byte-identical), and the tables plan the same base again
    and again (76 plans, 41 distinct)."""
    key = (stack, *((directory / f).read_text() for f in ("Pulumi.yaml", f"Pulumi.{stack}.yaml")))
    return json.loads(_planned_json(directory, key))


# (stack, Pulumi.yaml, the stack's config) -> its plan as JSON.
_PLANNED: dict[tuple[str, ...], str] = {}


def _planned_json(directory: Path, key: tuple[str, ...]) -> str:
    stack = key[0]
    if key not in _PLANNED:
        _PLANNED[key] = to_json(plan_directory(directory, stack, fill_outputs=True))
    return _PLANNED[key]


def edits(*changes: Edit) -> Edit:
    def apply(stores: dict[str, Any]) -> None:
        for change in changes:
            change(stores)

    return apply


def store_set(key: str, value: Any, store: str = "llama") -> Edit:
    def apply(stores: dict[str, Any]) -> None:
        stores[store][key] = value

    return apply


def pair(
    tmp_path: Path,
    stack: str,
    base: Edit | None,
    change: Edit | None,
    tweak: Callable[[dict[str, Any]], None] | None = None,
) -> Comparison:
    """BASE planned with the ``base`` edit, the new plan with ``change`` on top (and ``tweak``
    applied to its JSON, for a change no config field makes)."""
    base_doc = planned(stack_dir(tmp_path, stack, base), stack)
    new_doc = planned(stack_dir(tmp_path, stack, edits(*(e for e in (base, change) if e))), stack)
    if tweak is not None:
        tweak(new_doc)
    return compare(base_doc, new_doc)


def by_type(cmp: Comparison, type_: str) -> list[Any]:
    return [c for c in cmp.changes if c.type == type_]


def steps(cmp: Comparison, op: str) -> set[str]:
    return {c.type for c in cmp.changes if c.op == op}


UNPROTECTED = store_set("protect", False)
# PERSISTENT_1 takes 50, 100 or 200 MB/s/TiB: both properties change, both force a new file system.
PERSISTENT_1 = edits(
    store_set("deployment_type", "PERSISTENT_1"), store_set("per_unit_storage_throughput", 200)
)


# --- AWS -------------------------------------------------------------------------------------


def test_fsx_deployment_type_change_replaces_the_file_system_and_risks_its_data(tmp_path):
    cmp = pair(tmp_path, "aws-prod", UNPROTECTED, PERSISTENT_1)
    (fs,) = by_type(cmp, FSX)
    assert fs.op == "replace"
    assert fs.forcing == ["deploymentType", "perUnitStorageThroughput"]
    assert fs.loses_data and fs.note == "DATA LOSS RISK"
    assert cmp.exit_code == EXIT_DATA_LOSS
    # The PVs name the new file system (its id and DNS name are unknown until apply): replaced
    # with it (spec.csi is immutable), their data kept by the reclaim policy.
    pvs = by_type(cmp, PV)
    assert pvs and all(pv.op == "replace" and not pv.loses_data for pv in pvs)
    assert all(pv.retained == "reclaim policy Retain" for pv in pvs)
    # The verdict names the step that loses data; the steps follow in the order pulumi up
    # runs them: the new file system created where the program registers it, the old one
    # deleted at the end, after the volumes that depend on it (issue 25).
    text = to_text(cmp, "base.json")
    lines = text.splitlines()
    assert lines[1] == (
        "DATA LOSS RISK: 1 step(s) replace or delete data that is neither protected nor retained "
        "(replace llama-fs)"
    )
    assert f"+- replace {FSX} llama-fs (the old one deleted at the end)  [DATA LOSS RISK]" in lines
    assert lines[-2] == f" - delete {FSX} llama-fs (the old one, replaced above)"
    assert 'deploymentType: "PERSISTENT_2" -> "PERSISTENT_1"  (forces replacement)' in text
    # What the new file system's outputs feed is shown at the leaves that hold them.
    assert (
        '      spec.csi.volumeHandle: "fs-2fa32b377424e81ec::inference" -> (known after apply: '
        "llama-fs is replaced)  (forces replacement)\n" in text
    )
    assert (
        '      fileSystemId: "fs-2fa32b377424e81ec" -> (known after apply: llama-fs is replaced)'
        "  (forces replacement)\n" in text
    )
    markdown = to_markdown(cmp, "base.json")
    assert "**DATA LOSS RISK**" in markdown
    assert f"| replace | `llama-fs` | `{FSX}` |" in markdown


REFUSED_REPLACE = (
    "BLOCKED: protected, pulumi up refuses to replace it. Revert the change, or unprotect it "
    "(protect: false) and accept the loss on purpose, in a separate change"
)


def test_fsx_replacement_of_a_protected_file_system_is_blocked_not_flagged(tmp_path):
    cmp = pair(tmp_path, "aws-prod", None, PERSISTENT_1)
    (fs,) = by_type(cmp, FSX)
    assert fs.op == "replace" and fs.protected and not fs.loses_data
    assert fs.note == REFUSED_REPLACE
    # A refused replacement gives nothing new to depend on.
    assert steps(cmp, "replace") == {FSX}
    # Pulumi refuses the step: the merge's `pulumi up` would fail, so the pull request does.
    assert cmp.data_loss == [] and cmp.blocked == [fs]
    assert cmp.exit_code == EXIT_BLOCKED == 4


def test_dropping_protect_in_the_same_change_lets_the_replacement_through(tmp_path):
    cmp = pair(
        tmp_path,
        "aws-prod",
        None,
        edits(UNPROTECTED, PERSISTENT_1),
    )
    (fs,) = by_type(cmp, FSX)
    assert fs.op == "replace" and not fs.protected
    # The old file system was retained on delete: left in the account, not deleted.
    assert fs.retained == "retainOnDelete" and not fs.loses_data


def test_growing_fsx_capacity_is_an_update_shrinking_it_a_replacement(tmp_path):
    base = planned(stack_dir(tmp_path, "aws-prod", UNPROTECTED), "aws-prod")
    grown = planned(
        stack_dir(
            tmp_path, "aws-prod", edits(UNPROTECTED, store_set("storage_capacity_gib", 4800))
        ),
        "aws-prod",
    )
    (fs,) = by_type(compare(base, grown), FSX)
    assert fs.op == "update" and fs.paths == ["storageCapacity"]
    (fs,) = by_type(compare(grown, base), FSX)
    assert fs.op == "replace" and fs.loses_data
    assert fs.forcing == [
        "storageCapacity (storage capacity shrinks, or the deployment type is SCRATCH_1)"
    ]


def test_aws_tag_change_is_an_in_place_update_not_flagged(tmp_path):
    cmp = pair(
        tmp_path,
        "aws-prod",
        UNPROTECTED,
        store_set("tags", {"team": "inference-platform", "cost-center": "inference"}),
    )
    assert steps(cmp, "replace") == set() and steps(cmp, "delete") == set()
    assert FSX in steps(cmp, "update")
    (fs,) = by_type(cmp, FSX)
    assert fs.paths == ["tags.team"] and not fs.note
    assert cmp.data_loss == [] and cmp.exit_code == 0


def test_a_deleted_store_lists_its_deletions_its_protected_file_system_blocked(tmp_path):
    def add_second(stores: dict[str, Any]) -> None:
        stores["t5"] = {**stores["llama"], "data_repository_path": "s3://acme-models-prod/t5/"}

    base = planned(stack_dir(tmp_path, "aws-prod", add_second), "aws-prod")
    new = planned(stack_dir(tmp_path, "aws-prod"), "aws-prod")
    cmp = compare(base, new)
    deleted = [c for c in cmp.changes if c.op == "delete"]
    assert deleted and all(c.name.startswith("t5") for c in deleted)
    (fs,) = [c for c in deleted if c.type == FSX]
    assert fs.protected and not fs.loses_data
    assert fs.note == (
        "BLOCKED: protected, pulumi up refuses to delete it. Keep it in the program, or unprotect "
        "it (protect: false) and accept the loss on purpose, in a separate change"
    )
    pvs = [c for c in deleted if c.type == PV]
    claims = [c for c in deleted if c.type == PVC]
    assert pvs and all(c.retained == "reclaim policy Retain" and not c.hangs for c in pvs)
    assert claims and all(c.retained.startswith("bound to t5-") for c in claims)
    assert {c.pods for c in claims} == {
        f"pods using claim {ns}/t5 must stop: it is deleted only once no pod uses it "
        "(kubernetes.io/pvc-protection)"
        for ns in ("inference", "batch-inference")
    }
    assert cmp.exit_code == EXIT_BLOCKED
    assert "DATA LOSS RISK" not in to_text(cmp, "base.json")
    # Unprotected, the file system's deletion is the risk.
    base = planned(
        stack_dir(tmp_path, "aws-prod", edits(add_second, store_set("protect", False, "t5"))),
        "aws-prod",
    )
    cmp = compare(base, new)
    assert [c.urn.rsplit("::", 1)[-1] for c in cmp.data_loss] == ["t5-fs"]
    # Deleted at the end in reverse dependency order: claims, then their volumes, then the file
    # system they name (issue 25).
    names = [c.name for c in cmp.ordered()]
    assert names.index("t5-pvc-inference") < names.index("t5-pv-inference") < names.index("t5-fs")
    assert "(delete t5-fs)" in to_text(cmp, "base.json").splitlines()[1]


PUBLIC_ACCESS = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
S3_BUCKET = "aws:s3/bucket:Bucket"
EKS_ADDON = "aws:eks/addon:Addon"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def _changed(base: dict[str, Any], **inputs: Any) -> dict[str, Any]:
    """``base`` with its one resource's inputs changed (a value of None drops the input)."""
    new = copy.deepcopy(base)
    state = new["steps"][0]["newState"]["inputs"]
    for key, value in inputs.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return new


def test_a_public_access_block_on_another_bucket_is_replaced_its_flags_updated():
    inputs = {
        "blockPublicAcls": True,
        "blockPublicPolicy": True,
        "bucket": "models-bucket-c9aa502",
        "ignorePublicAcls": True,
        "region": "us-east-2",
        "restrictPublicBuckets": True,
    }
    base = _doc("aws-dev", [_state(PUBLIC_ACCESS, "models-bucket-public-access", inputs)])
    (block,) = compare(base, _changed(base, bucket="models-bucket-0d1e2f3")).changes
    assert block.op == "replace" and block.forcing == ["bucket"] and not block.loses_data
    (block,) = compare(base, _changed(base, blockPublicPolicy=False)).changes
    assert block.op == "update" and block.paths == ["blockPublicPolicy"] and not block.forcing


def test_object_lock_on_an_s3_bucket_is_set_at_creation_only():
    inputs = {"bucket": "acme-models", "forceDestroy": False, "tags": {"team": "ml"}}
    base = _doc("aws-dev", [_state(S3_BUCKET, "models-bucket", inputs)])
    (bucket,) = compare(base, _changed(base, objectLockEnabled=True)).changes
    assert bucket.op == "replace" and bucket.forcing == ["objectLockEnabled"]
    assert bucket.loses_data
    (bucket,) = compare(base, _changed(base, tags={"team": "serving"})).changes
    assert bucket.op == "update" and not bucket.forcing


def test_an_eks_addon_on_another_cluster_is_replaced_a_new_version_updated():
    inputs = {
        "addonName": "aws-mountpoint-s3-csi-driver",
        "addonVersion": "v1.14.1-eksbuild.1",
        "clusterName": "dev-eks",
        "resolveConflictsOnCreate": "OVERWRITE",
        "resolveConflictsOnUpdate": "OVERWRITE",
    }
    base = _doc("aws-dev", [_state(EKS_ADDON, "s3-csi-addon", inputs)])
    (addon,) = compare(base, _changed(base, clusterName="prod-eks")).changes
    assert addon.op == "replace" and addon.forcing == ["clusterName"]
    (addon,) = compare(base, _changed(base, addonName="aws-efs-csi-driver")).changes
    assert addon.op == "replace" and addon.forcing == ["addonName"]
    (addon,) = compare(
        base,
        _changed(base, addonVersion="v1.15.0-eksbuild.1", configurationValues='{"a": 1}'),
    ).changes
    assert addon.op == "update" and not addon.forcing


@pytest.mark.parametrize("type_", [INGRESS, EGRESS])
def test_a_security_group_rule_is_replaced_for_another_group_or_source_type(type_):
    inputs = {
        "description": "Lustre LNET 1018-1023 from model store llama",
        "fromPort": 1018,
        "ipProtocol": "tcp",
        "referencedSecurityGroupId": "sg-05d855c857e1b51e7",
        "securityGroupId": "sg-07e1d2c3b4a590abc",
        "toPort": 1023,
    }
    base = _doc("aws-prod", [_state(type_, "llama-lnet-nodes0", inputs)])
    (rule,) = compare(base, _changed(base, securityGroupId="sg-0aaaabbbbccccdddd")).changes
    assert rule.op == "replace" and rule.forcing == ["securityGroupId"]
    # ModifySecurityGroupRules: ports, description and another group of the same source type.
    (rule,) = compare(
        base,
        _changed(
            base,
            fromPort=988,
            toPort=988,
            description="Lustre 988",
            referencedSecurityGroupId="sg-0bbbbccccddddeeee",
        ),
    ).changes
    assert rule.op == "update" and not rule.forcing
    # Another source type (a peer group to a CIDR block): the provider's ModifyPlan replaces.
    (rule,) = compare(
        base, _changed(base, referencedSecurityGroupId=None, cidrIpv4="10.0.0.0/16")
    ).changes
    # RequiresReplace names the old and the new source attribute, as here.
    assert rule.op == "replace"
    assert sorted(rule.forcing) == [
        "cidrIpv4 (the rule's source type changes)",
        "referencedSecurityGroupId (the rule's source type changes)",
    ]


# --- Google Cloud ----------------------------------------------------------------------------


def test_gcs_bucket_in_another_region_is_a_new_bucket(tmp_path):
    move = edits(store_set("bucket_region", "us-east1"), store_set("allow_other_region", True))
    cmp = pair(tmp_path, "gke", UNPROTECTED, move)
    (bucket,) = by_type(cmp, GCS)
    assert bucket.op == "replace" and bucket.forcing == ["location"]
    assert bucket.loses_data and cmp.exit_code == EXIT_DATA_LOSS
    cmp = pair(tmp_path, "gke", None, move)
    (bucket,) = by_type(cmp, GCS)
    assert bucket.op == "replace" and bucket.protected and cmp.exit_code == EXIT_BLOCKED


def test_gcs_label_change_is_an_in_place_update(tmp_path):
    labels = store_set("resource_labels", {"team": "serving", "env": "prod"})
    cmp = pair(tmp_path, "gke", UNPROTECTED, labels)
    (bucket,) = by_type(cmp, GCS)
    assert bucket.op == "update" and bucket.paths == ["labels.team"]
    assert steps(cmp, "replace") == set() and cmp.exit_code == 0


def test_a_renamed_gcs_bucket_is_replaced():
    base = _doc("gke", [_state(GCS, "models-bucket", {"name": "acme-models", "location": "US"})])
    new = copy.deepcopy(base)
    new["steps"][0]["newState"]["inputs"]["name"] = "acme-models-v2"
    (bucket,) = compare(base, new).changes
    assert bucket.op == "replace" and bucket.forcing == ["name"] and bucket.loses_data


# --- Kubernetes ------------------------------------------------------------------------------


NAS02 = store_set("server", "nas02.corp.example")


def test_a_persistent_volume_source_change_replaces_the_volumes_and_their_claims(tmp_path):
    cmp = pair(tmp_path, "onprem-nfs", None, NAS02)
    pvs = by_type(cmp, PV)
    # One per consumer: two readers, the writer and the model's loader namespace.
    assert len(pvs) == 4
    for pv in pvs:
        assert pv.op == "replace"
        assert pv.forcing == ["spec.csi.volumeAttributes.server", "spec.csi.volumeHandle"]
        assert pv.retained == "reclaim policy Retain" and not pv.loses_data
        # Same name: pulumi-kubernetes deletes the old volume first.
        assert pv.delete_first and not pv.hangs
    # Each claim is replaced with its volume (replaceWith; the engine deletes it before the
    # volume), and the pods using it must restart.
    claims = by_type(cmp, PVC)
    assert len(claims) == 4
    for claim in claims:
        namespace = claim.name.removeprefix("llama-pvc-")
        assert claim.op == "replace" and claim.paths == []
        assert claim.forcing == [f"replaceWith (llama-pv-{namespace} is replaced)"]
        assert claim.pods == (
            f"pods using claim {namespace}/llama must restart: they hold the old claim, which is "
            "deleted only once no pod uses it (kubernetes.io/pvc-protection)"
        )
    assert cmp.exit_code == 0
    text = to_text(cmp, "base.json")
    # Leaf paths, each value cut where the two differ.
    assert (
        '      spec.csi.volumeAttributes.server: "nas01.corp.example" -> "nas02.corp.example"'
        "  (forces replacement)\n" in text
    )
    assert (
        f"+- replace {PVC} llama-pvc-inference (the old one deleted first)  [retained: bound "
        "to llama-inference (reclaim "
        "policy Retain)]\n      replaceWith: llama-pv-inference is replaced  (forces replacement)\n"
        "      ! pods using claim inference/llama must restart: they hold the old claim, which is "
        "deleted only once no pod uses it (kubernetes.io/pvc-protection)\n" in text
    )
    markdown = to_markdown(cmp, "base.json")
    assert "<br>pods using claim inference/llama must restart" in markdown


def test_a_volume_replaced_under_a_claim_recorded_without_replace_with_blocks(tmp_path):
    """A stack deployed before its claims carried replaceWith: the engine decides the cascade
    from the old state, so the volume is deleted while the old claim holds it."""
    base = planned(stack_dir(tmp_path, "onprem-nfs"), "onprem-nfs")
    for step in base["steps"]:
        step["newState"].pop("replaceWith", None)
    new = planned(stack_dir(tmp_path, "onprem-nfs", NAS02), "onprem-nfs")
    cmp = compare(base, new)
    pvs = by_type(cmp, PV)
    # One per consumer: two readers, the writer and the model's loader namespace.
    assert len(pvs) == 4 and all(pv.blocked for pv in pvs)
    (pv,) = [pv for pv in pvs if pv.name == "llama-pv-inference"]
    assert pv.note == (
        "BLOCKED: pulumi up would hang: the volume is deleted while claim inference/llama still "
        "holds it (kubernetes.io/pv-protection). Give the claim replace_with this volume and "
        "deploy that first, in a separate change"
    )
    assert cmp.data_loss == [] and cmp.exit_code == EXIT_BLOCKED
    assert to_text(cmp, "base.json").splitlines()[1] == (
        "BLOCKED: 4 step(s) pulumi up cannot carry out, so the update would fail (replace "
        "llama-pv-batch-inference, replace llama-pv-inference, replace llama-pv-llama-loader, "
        "replace llama-pv-model-loader): each says what to do"
    )
    # The same change on a stack whose claims had replaceWith goes through.
    base = planned(stack_dir(tmp_path, "onprem-nfs"), "onprem-nfs")
    assert compare(base, new).exit_code == 0


def test_a_volume_renamed_while_its_claim_stays_blocks(tmp_path):
    """Created before the old one is deleted (a new name), but the claim bound to the old one
    stays: the old volume's delete waits on it."""
    claim_spec = {"volumeName": "llama-inference", "accessModes": ["ReadOnlyMany"]}
    claim_meta = {"name": "llama", "namespace": "inference"}
    claim = _state(PVC, "llama-pvc", {"metadata": claim_meta, "spec": claim_spec})
    volume_spec = {"claimRef": claim_meta, "persistentVolumeReclaimPolicy": "Retain"}
    volume_meta = {"name": "llama-inference"}
    volume = _state(PV, "llama-pv", {"metadata": volume_meta, "spec": volume_spec})
    base = _doc("dev", [volume, claim])
    new = copy.deepcopy(base)
    new["steps"][0]["newState"]["inputs"]["metadata"]["name"] = "llama-inference-2"
    pv, pvc = compare(base, new).changes
    assert pv.op == "replace" and not pv.delete_first and pvc.op == "same"
    assert pv.hangs.startswith("pulumi up would hang: the volume is deleted while claim ")
    # The claim following the new name is replaced (spec.volumeName): nothing waits.
    new["steps"][1]["newState"]["inputs"]["spec"]["volumeName"] = "llama-inference-2"
    cmp = compare(base, new)
    pv, pvc = cmp.changes
    assert pvc.op == "replace" and pvc.forcing == ["spec.volumeName"] and not pv.hangs
    assert pvc.pods.startswith("pods using claim inference/llama must restart")
    assert cmp.exit_code == 0


def test_which_replacements_delete_the_old_object_first():
    named = {"metadata": {"name": "llama-inference"}}
    # pulumi-kubernetes: an object keeping its name (and namespace) cannot exist twice.
    assert deletes_before_replacing(PV, named, named, False)
    renamed = {"metadata": {"name": "llama-inference-2"}}
    assert not deletes_before_replacing(PV, named, renamed, False)
    moved = {"metadata": {"name": "llama", "namespace": "b"}}
    assert not deletes_before_replacing(PVC, {"metadata": {"name": "llama"}}, moved, False)
    generated = {"metadata": {"generateName": "llama-"}}
    assert not deletes_before_replacing(PV, generated, generated, False)
    # Other providers: only the resource's deleteBeforeReplace option.
    assert not deletes_before_replacing(FSX, {}, {}, False)
    assert deletes_before_replacing(FSX, {}, {}, True)
    release = "kubernetes:helm.sh/v3:Release"
    assert not deletes_before_replacing(release, {"name": "a"}, {"name": "a"}, False)


def test_a_nested_change_shows_its_leaf_paths_and_where_long_values_differ():
    handle = "nas01.corp.example#/exports/models#llama-3-8b-instruct#llama-inference"
    spec = {
        "csi": {"volumeAttributes": {"x": "a", "y": "same"}, "volumeHandle": handle},
        "mountOptions": ["nconnect=4"],
    }
    base = _doc("dev", [_state(PV, "llama-pv", {"metadata": {"name": "v"}, "spec": spec})])
    new = copy.deepcopy(base)
    changed = new["steps"][0]["newState"]["inputs"]["spec"]
    changed["csi"]["volumeAttributes"]["x"] = "b"
    changed["csi"]["volumeHandle"] = handle.replace("#llama-inference", "#llama-batch")
    changed["mountOptions"].append("noresvport")
    (pv,) = compare(base, new).changes
    assert pv.paths == [
        "spec.csi.volumeAttributes.x",
        "spec.csi.volumeHandle",
        "spec.mountOptions[1]",
    ]
    text = to_text(compare(base, new), "base.json")
    assert text.splitlines()[4:] == [
        '      spec.csi.volumeAttributes.x: "a" -> "b"  (forces replacement)',
        '      spec.csi.volumeHandle: ...truct#llama-inference" -> ...truct#llama-batch"'
        "  (forces replacement)",
        '      spec.mountOptions[1]: (none) -> "noresvport"',
        "Resources: 1 to replace",
    ]


def test_a_key_with_dots_shows_its_old_and_new_values():
    """A ConfigMap's data keys are file names (``seed.py``): the changed leaf shows both values,
    not ``(none) -> (none)`` (the path's dots are the key's own)."""
    inputs = {"metadata": {"name": "p"}, "data": {"seed.py": "a", "x": {"b.c": {"d": 1}}}}
    base = _doc("dev", [_state("kubernetes:core/v1:ConfigMap", "programs", inputs)])
    new = copy.deepcopy(base)
    new["steps"][0]["newState"]["inputs"]["data"]["seed.py"] = "b"
    new["steps"][0]["newState"]["inputs"]["data"]["x"]["b.c"]["d"] = 2
    (change,) = compare(base, new).changes
    assert _detail(change) == ['data.seed.py: "a" -> "b"', "data.x.b.c.d: 1 -> 2"]


def test_a_label_on_a_persistent_volume_is_an_update():
    labels = {"metadata": {"name": "llama-inference", "labels": {"a": "1"}}, "spec": {}}
    base = _doc("dev", [_state(PV, "llama-pv", labels)])
    new = copy.deepcopy(base)
    new["steps"][0]["newState"]["inputs"]["metadata"]["labels"]["a"] = "2"
    (pv,) = compare(base, new).changes
    assert pv.op == "update"
    new["steps"][0]["newState"]["inputs"]["metadata"]["name"] = "llama-inference-2"
    (pv,) = compare(base, new).changes
    assert pv.op == "replace" and "metadata.name" in pv.forcing


def test_a_move_to_another_provider_is_shown_for_review_not_silently_same():
    # Moving Kubernetes objects from the default provider to a cluster's own provider: the
    # engine asks pulumi-kubernetes' DiffConfig, which replaces only when the active cluster
    # changes. A plan cannot see the kubeconfig: the move is listed, never hidden.
    spec = {"metadata": {"name": "llama-inference"}, "spec": {}}
    base = _doc("dev", [_state(PV, "llama-pv", spec)])
    base["steps"][0]["newState"]["provider"] = (
        "urn:pulumi:dev::modelstore::pulumi:providers:kubernetes::default_4_34_2::id-1"
    )
    new = copy.deepcopy(base)
    new["steps"][0]["newState"]["provider"] = (
        "urn:pulumi:dev::modelstore::pulumi:providers:kubernetes::prod-kubernetes::id-2"
    )
    (pv,) = compare(base, new).changes
    assert (pv.op, pv.paths, pv.forcing) == ("update", ["(provider)"], [])
    assert pv.values["(provider)"] == ("default_4_34_2", "prod-kubernetes")
    (same,) = compare(base, copy.deepcopy(base)).changes
    assert same.op == "same"


# --- Capacity and node changes of a store's volumes -------------------------------------------

# (stack, store, capacity field, base value, new value): a grow and a shrink on FSx and the
# local store.
CAPACITY_CHANGES = {
    "fsx-grow": ("aws-prod", "llama", "storage_capacity_gib", 2400, 4800),
    "fsx-shrink": ("aws-prod", "llama", "storage_capacity_gib", 4800, 2400),
    "local-grow": ("local", "models", "capacity_gib", 50, 200),
    "local-shrink": ("local", "models", "capacity_gib", 50, 20),
}


@pytest.mark.parametrize("case", sorted(CAPACITY_CHANGES))
def test_a_capacity_change_updates_the_volumes_and_keeps_the_claims(tmp_path, case):
    """Kubernetes refuses a claim's smaller request, and a larger one without volume expansion
    (never for a static claim): the claims keep theirs, the volumes' capacity is updated."""
    stack, store, key, before, after = CAPACITY_CHANGES[case]
    cmp = pair(tmp_path, stack, store_set(key, before, store), store_set(key, after, store))
    pvs, claims = by_type(cmp, PV), by_type(cmp, PVC)
    assert pvs and len(claims) == len(pvs)
    for pv in pvs:
        assert pv.op == "update" and pv.paths == ["spec.capacity.storage"]
        assert pv.values["spec.capacity.storage"] == (f"{before}Gi", f"{after}Gi")
    assert all(claim.op == "same" and not claim.pods for claim in claims)
    if case == "fsx-shrink":
        # A smaller Lustre file system is a new one: protected, refused (the volumes keep
        # naming the old one, so they are only updated).
        (fs,) = by_type(cmp, FSX)
        assert fs.op == "replace" and fs.refused
        assert cmp.blocked == [fs] and cmp.exit_code == EXIT_BLOCKED
    else:
        assert cmp.blocked == [] and cmp.exit_code == 0
    text = to_text(cmp, "base.json")
    assert "spec.resources.requests.storage" not in text
    assert f'spec.capacity.storage: "{before}Gi" -> "{after}Gi"\n' in text


def test_a_replaced_claim_smaller_volume_blocks_its_kept_request_would_not_bind(tmp_path):
    """A shrink that replaces the volume: the claim is re-created with it, but with its old
    request (ignored inputs come from the old state), larger than the new volume."""
    cmp = pair(
        tmp_path,
        "aws-prod",
        edits(UNPROTECTED, store_set("storage_capacity_gib", 4800)),
        store_set("storage_capacity_gib", 2400),
    )
    (fs,) = by_type(cmp, FSX)
    assert fs.op == "replace" and fs.loses_data
    pvs, claims = by_type(cmp, PV), by_type(cmp, PVC)
    assert pvs and all(pv.op == "replace" and not pv.blocked for pv in pvs)
    assert claims and all(claim.op == "replace" and claim.blocked for claim in claims)
    (claim,) = [c for c in claims if c.name == "llama-pvc-inference"]
    assert claim.note == (
        "BLOCKED: pulumi up would hang: claim inference/llama is re-created with its old request "
        "4800Gi (ignore_changes keeps it), more than volume llama-inference's capacity 2400Gi, "
        "so it never binds. Delete the claim first (stop its pods, kubectl delete pvc, pulumi "
        "refresh) so that it is created anew, or keep the capacity"
    )
    assert claim.pods.startswith("pods using claim inference/llama must restart")
    # The file system's data loss wins.
    assert cmp.exit_code == EXIT_DATA_LOSS

    def local_node_change(capacity_gib: int) -> Any:
        node_b = store_set("node_name", "node-b", "models")
        capacity = store_set("capacity_gib", capacity_gib, "models")
        return pair(
            tmp_path, "local", store_set("node_name", "node-a", "models"), edits(node_b, capacity)
        )

    # The same on the local store: a shrink and a node change at once.
    cmp = local_node_change(20)
    assert {c.op for c in by_type(cmp, PV)} == {"replace"}
    assert by_type(cmp, PVC) and all(c.blocked for c in by_type(cmp, PVC))
    assert cmp.exit_code == EXIT_BLOCKED
    # Growing it at the same time binds: nothing blocked.
    cmp = local_node_change(200)
    assert cmp.blocked == [] and cmp.exit_code == 0


NODE_AFFINITY_VALUE = (
    "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]"
)


def test_a_local_store_on_another_node_replaces_its_volumes_and_claims(tmp_path):
    """A set nodeAffinity is immutable (Kubernetes refuses the update pulumi-kubernetes would
    send): the volume is replaced, and with it its claim, whose pods must restart."""
    cmp = pair(
        tmp_path,
        "local",
        store_set("node_name", "node-a", "models"),
        store_set("node_name", "node-b", "models"),
    )
    pvs, claims = by_type(cmp, PV), by_type(cmp, PVC)
    # One per consumer: the reader and the model's loader namespace.
    assert len(pvs) == len(claims) == 2
    for pv in pvs:
        assert pv.op == "replace" and pv.paths == [NODE_AFFINITY_VALUE]
        assert pv.forcing == [f"{NODE_AFFINITY_VALUE} (replaceOnChanges)"]
        assert pv.delete_first and not pv.hangs and pv.retained == "reclaim policy Retain"
    for claim in claims:
        namespace = claim.name.removeprefix("models-pvc-")
        assert claim.op == "replace"
        assert claim.forcing == [f"replaceWith (models-pv-{namespace} is replaced)"]
        assert claim.pods.startswith(f"pods using claim {namespace}/models must restart")
    assert cmp.blocked == [] and cmp.exit_code == 0
    text = to_text(cmp, "base.json")
    assert (
        f'      {NODE_AFFINITY_VALUE}: "node-a" -> "node-b"  (forces replacement: '
        "replaceOnChanges)\n" in text
    )
    assert "      ! pods using claim inference/models must restart" in text


def test_a_hyperdisk_claim_of_another_size_is_replaced_and_its_pods_restart(tmp_path):
    """A provisioned claim on a class without volume expansion: its spec change replaces it."""
    cmp = pair(tmp_path, "gke-hyperdisk", None, store_set("size_gib", 128))
    claims = by_type(cmp, PVC)
    assert claims and all(c.op == "replace" and not c.blocked for c in claims)
    assert all(c.forcing == ["spec.resources.requests.storage (replaceOnChanges)"] for c in claims)
    assert all(c.pods.startswith("pods using claim ") for c in claims)
    # Its disk goes with the claim (the class's reclaim policy is Delete).
    assert all(c.loses_data for c in claims) and cmp.exit_code == EXIT_DATA_LOSS


REFUSED_BY_CLUSTER = (
    "BLOCKED: the cluster refuses this update, so pulumi up fails at it. Revert the change, or "
    "replace the object on purpose (replace_on_changes)"
)


def _claim_doc(request: str, class_name: str, classes: dict[str, Any]) -> dict[str, Any]:
    claim = _state(
        PVC,
        "cache-pvc",
        {
            "metadata": {"name": "cache", "namespace": "inference"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": class_name,
                "resources": {"requests": {"storage": request}},
            },
        },
    )
    storage_classes = [
        _state(STORAGE_CLASS, name, {"metadata": {"name": name}, "allowVolumeExpansion": allow})
        for name, allow in classes.items()
    ]
    return _doc("dev", [claim, *storage_classes])


@pytest.mark.parametrize(
    ("before", "after", "class_name", "refusal"),
    [
        ("100Gi", "50Gi", "gp3", "a claim's storage request cannot shrink"),
        ("100Gi", "200Gi", "gp3", ""),  # the plan's gp3 class allows expansion
        (
            "100Gi",
            "200Gi",
            "io2",
            'a claim grows only when its StorageClass allows volume expansion ("io2" does not)',
        ),
        (
            "100Gi",
            "1Ti",
            "",
            'a claim grows only when its StorageClass allows volume expansion ("" does not)',
        ),
        ("100Gi", "200Gi", "cluster-class", ""),  # not in the plan: not claimed
    ],
)
def test_a_claim_request_change_the_cluster_refuses_is_blocked(before, after, class_name, refusal):
    classes = {"gp3": True, "io2": False}
    base = _claim_doc(before, class_name, classes)
    cmp = compare(base, _claim_doc(after, class_name, classes))
    (claim,) = by_type(cmp, PVC)
    assert claim.op == "update" and claim.paths == ["spec.resources.requests.storage"]
    if refusal:
        assert claim.refusals == [f"spec.resources.requests.storage ({refusal})"]
        assert claim.note == REFUSED_BY_CLUSTER and cmp.exit_code == EXIT_BLOCKED
        assert f"(refused by the cluster: {refusal})" in to_text(cmp, "base.json")
    else:
        assert not claim.blocked and cmp.exit_code == 0


def test_a_volume_mode_or_set_node_affinity_update_is_blocked_a_new_one_is_not():
    """Objects without the library's replace_on_changes (a plan of older code): the update
    pulumi-kubernetes would send is refused."""
    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"values": ["a"]}]}]}}
    spec = {"local": {"path": "/models"}, "volumeMode": "Filesystem", "nodeAffinity": affinity}
    base = _doc("dev", [_state(PV, "pv", {"metadata": {"name": "v"}, "spec": spec})])
    new = copy.deepcopy(base)
    new_spec = new["steps"][0]["newState"]["inputs"]["spec"]
    new_spec["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0][
        "values"
    ] = ["b"]
    new_spec["volumeMode"] = "Block"
    (pv,) = compare(base, new).changes
    assert pv.op == "update" and pv.note == REFUSED_BY_CLUSTER
    assert pv.refusals == [
        f"{NODE_AFFINITY_VALUE} (a volume's nodeAffinity is immutable once set)",
        "spec.volumeMode (a volume's volumeMode is immutable)",
    ]
    # With replace_on_changes (as the library sets it) the volume is replaced: nothing refused.
    new["steps"][0]["newState"]["replaceOnChanges"] = ["spec.volumeMode", "spec.nodeAffinity"]
    (pv,) = compare(base, new).changes
    assert pv.op == "replace" and not pv.refusals and not pv.blocked
    # Kubernetes lets a volume without nodeAffinity get one.
    del base["steps"][0]["newState"]["inputs"]["spec"]["nodeAffinity"]
    new = copy.deepcopy(base)
    new["steps"][0]["newState"]["inputs"]["spec"]["nodeAffinity"] = affinity
    (pv,) = compare(base, new).changes
    assert pv.op == "update" and not pv.blocked


# --- Azure (the aks and aks-files stacks; the kind rule on a hand-built plan) ----------------

BLOB_CONTAINER = "azure-native:storage:BlobContainer"
FILE_SHARE = "azure-native:storage:FileShare"


def store_accounts(cmp: Comparison) -> list[Any]:
    """The store's storage accounts (the aks stack's Velero has one of its own, unchanged)."""
    return [c for c in by_type(cmp, STORAGE_ACCOUNT) if "ModelStore$" in c.urn]


def test_a_renamed_azure_storage_account_is_a_new_account_and_risks_its_data(tmp_path):
    # accountName is a URL path parameter of the account and of its container: another ARM id.
    rename = store_set("storage_account_name", "acmellamamodels2")
    cmp = pair(tmp_path, "aks", UNPROTECTED, rename)
    (account,) = store_accounts(cmp)
    (container,) = [c for c in by_type(cmp, BLOB_CONTAINER) if "ModelStore$" in c.urn]
    for replaced in (account, container):
        assert replaced.op == "replace" and replaced.forcing == ["accountName"]
        assert replaced.loses_data and not replaced.protected
    # The claims' volumes point at the new account (PV specs are immutable), kept by Retain.
    pvs = by_type(cmp, PV)
    assert len(pvs) == 3  # the reader's, the writer's and the model loader's
    assert all(pv.op == "replace" and not pv.loses_data and pv.retained for pv in pvs)
    assert {c.type for c in cmp.data_loss} == {STORAGE_ACCOUNT, BLOB_CONTAINER}
    assert {c.type for c in cmp.ordered()[:2]} == {STORAGE_ACCOUNT, BLOB_CONTAINER}
    assert cmp.exit_code == EXIT_DATA_LOSS
    assert "DATA LOSS RISK" in to_text(cmp, "base.json")
    # As the stack is kept (account and container protected): refused at deploy, blocked.
    cmp = pair(tmp_path, "aks", None, rename)
    (account,) = store_accounts(cmp)
    assert account.op == "replace" and account.protected and not account.loses_data
    assert cmp.data_loss == [] and cmp.exit_code == EXIT_BLOCKED
    assert "DATA LOSS RISK" not in to_text(cmp, "base.json")


def test_an_azure_files_account_in_another_region_is_a_new_account(tmp_path):
    move = edits(store_set("location", "westus2"), store_set("allow_other_region", True))
    cmp = pair(tmp_path, "aks-files", UNPROTECTED, move)
    (account,) = store_accounts(cmp)
    assert account.op == "replace" and account.forcing == ["location"] and account.loses_data
    assert cmp.exit_code == EXIT_DATA_LOSS


def test_azure_tag_and_share_quota_changes_are_in_place_updates(tmp_path):
    cmp = pair(tmp_path, "aks", UNPROTECTED, store_set("tags", {"team": "serving", "env": "prod"}))
    (account,) = store_accounts(cmp)
    assert account.op == "update" and account.paths == ["tags.team"]
    assert steps(cmp, "replace") == set() and cmp.data_loss == [] and cmp.exit_code == 0
    cmp = pair(tmp_path, "aks-files", UNPROTECTED, store_set("share_quota_gib", 2048))
    (share,) = by_type(cmp, FILE_SHARE)
    assert share.op == "update" and share.paths == ["shareQuota"]
    assert steps(cmp, "replace") == set() and cmp.exit_code == 0


def test_azure_storage_account_location_forces_replacement_kind_does_not():
    inputs = {
        "accountName": "acmemodels",
        "resourceGroupName": "ml",
        "kind": "StorageV2",
        "location": "westeurope",
        "sku": {"name": "Premium_ZRS"},
        "tags": {"team": "ml"},
    }
    base = _doc("aks", [_state(STORAGE_ACCOUNT, "models-account", inputs)])
    moved = copy.deepcopy(base)
    moved["steps"][0]["newState"]["inputs"]["location"] = "northeurope"
    (account,) = compare(base, moved).changes
    assert account.op == "replace" and account.forcing == ["location"]
    assert account.loses_data and compare(base, moved).exit_code == EXIT_DATA_LOSS
    # pulumi-azure-native's forceNewMap lists isHnsEnabled and location for StorageAccount, not
    # kind: a kind change (StorageV2 -> BlockBlobStorage here) is sent to ARM as an update.
    rekinded = copy.deepcopy(base)
    rekinded["steps"][0]["newState"]["inputs"]["kind"] = "BlockBlobStorage"
    (account,) = compare(base, rekinded).changes
    assert account.op == "update" and not account.note
    retagged = copy.deepcopy(base)
    retagged["steps"][0]["newState"]["inputs"]["tags"]["team"] = "serving"
    assert compare(base, retagged).changes[0].op == "update"
    # Protected (the Azure stores protect their account by default): refused, not flagged.
    for doc in (base, moved):
        doc["steps"][0]["newState"]["protect"] = True
    (account,) = compare(base, moved).changes
    assert account.op == "replace" and account.protected and not account.loses_data


# --- Every backend's data-bearing resources ------------------------------------------------

KMS_KEY = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def _renamed_bucket(doc: dict[str, Any]) -> None:
    """The S3 bucket under another name (immutable: a new bucket); no config field renames
    it, so the plan is edited."""
    (state,) = [s["newState"] for s in doc["steps"] if s["newState"]["type"] == S3_BUCKET]
    state["inputs"]["bucket"] = "models-bucket-0d1e2f3"


# backend -> (stack, store, a change to an immutable property of its data-bearing resource,
# an edit of the new plan where no config field makes that change)
IMMUTABLE_CHANGES: dict[str, tuple[str, str, Edit | None, Any]] = {
    "fsx-lustre": ("aws-prod", "llama", PERSISTENT_1, None),
    "efs": ("aws-efs", "t5", store_set("kms_key_arn", KMS_KEY, "t5"), None),
    "mountpoint-s3": ("aws-dev", "models", None, _renamed_bucket),
    "gcs-fuse": (
        "gke",
        "llama",
        edits(store_set("bucket_region", "us-east1"), store_set("allow_other_region", True)),
        None,
    ),
    "azure-blob": ("aks", "llama", store_set("storage_account_name", "acmellamamodels2"), None),
    "azure-files-nfs": (
        "aks-files",
        "llama",
        edits(store_set("location", "westus2"), store_set("allow_other_region", True)),
        None,
    ),
}


def test_every_backend_with_data_has_an_immutable_change_in_the_table():
    assert set(IMMUTABLE_CHANGES) == {b for b, types in DATA_BEARING.items() if types}


@pytest.mark.parametrize("backend", sorted(IMMUTABLE_CHANGES))
def test_an_immutable_change_is_blocked_when_protected_and_data_loss_when_not(tmp_path, backend):
    stack, store, change, tweak = IMMUTABLE_CHANGES[backend]
    # Protected (the default): pulumi up refuses the replacement, so the pull request fails
    # with exit 4 and the step says what to do.
    cmp = pair(tmp_path, stack, None, change, tweak)
    refused = [c for c in cmp.changes if c.refused]
    assert refused and {c.type for c in refused} <= set(DATA_BEARING[backend])
    assert all(c.op == "replace" for c in refused)
    assert all(c.note == REFUSED_REPLACE and not c.loses_data for c in refused)
    assert cmp.data_loss == [] and cmp.blocked == refused
    assert cmp.exit_code == EXIT_BLOCKED
    # A refused replacement feeds nothing new to what depends on it.
    assert all(not c.fed for c in cmp.changes)
    text = to_text(cmp, "base.json")
    assert text.splitlines()[1].startswith(f"BLOCKED: {len(refused)} step(s) pulumi up cannot")
    for c in refused:
        assert f"+- replace {c.type} {c.name}  [{REFUSED_REPLACE}]" in text
    assert "> **BLOCKED**:" in to_markdown(cmp, "base.json")
    # protect: false: the replacement goes ahead and loses the data (exit 3, which wins over 4).
    unprotected = store_set("protect", False, store)
    cmp = pair(tmp_path, stack, unprotected, change, tweak)
    lost = [c for c in cmp.changes if c.data_bearing and c.op == "replace" and c.loses_data]
    assert {c.type for c in refused} <= {c.type for c in lost} <= set(DATA_BEARING[backend])
    assert all(c.note == "DATA LOSS RISK" for c in lost)
    assert cmp.blocked == [] and cmp.exit_code == EXIT_DATA_LOSS
    # A volume fed by the new resource is replaced with its claim, whose pods must restart; its
    # detail names the leaves that change, never the whole spec twice.
    text = to_text(cmp, "base.json")
    for pv in (c for c in by_type(cmp, PV) if c.op == "replace"):
        namespace = pv.name.removeprefix(f"{store}-pv-")
        (claim,) = [c for c in by_type(cmp, PVC) if c.name == f"{store}-pvc-{namespace}"]
        assert claim.op == "replace" and claim.pods.startswith(
            f"pods using claim {namespace}/{store} must restart"
        )
        assert pv.forcing and all(p.startswith("spec.csi.") for p in pv.forcing)
        assert not pv.hangs and pv.retained == "reclaim policy Retain"
    assert "      spec: " not in text


def test_data_loss_wins_over_a_blocked_step_and_both_are_told():
    """pulumi up runs steps in parallel: the unprotected replacement may be done before the
    protected one fails the update, so the exit code is the data loss's."""
    states = [_state(FSX, f"{name}-fs", {"deploymentType": "PERSISTENT_2"}) for name in "ab"]
    states[0]["newState"]["protect"] = True
    base = _doc("dev", states)
    new = copy.deepcopy(base)
    for step in new["steps"]:
        step["newState"]["inputs"]["deploymentType"] = "PERSISTENT_1"
    cmp = compare(base, new)
    protected, lost = cmp.changes
    assert cmp.blocked == [protected] and cmp.data_loss == [lost]
    assert cmp.exit_code == EXIT_DATA_LOSS
    assert to_text(cmp, "base.json").splitlines()[1:4] == [
        "DATA LOSS RISK: 1 step(s) replace or delete data that is neither protected nor retained "
        "(replace b-fs)",
        "BLOCKED: 1 step(s) pulumi up cannot carry out, so the update would fail (replace a-fs): "
        "each says what to do",
        "In the order pulumi up runs them (the deletes last, dependents first):",
    ]
    assert f"+- replace {FSX} a-fs  [{REFUSED_REPLACE}]" in to_text(cmp, "base.json")
    assert (
        f"+- replace {FSX} b-fs (the old one deleted at the end)  [DATA LOSS RISK]\n"
        '      deploymentType: "PERSISTENT_2" -> "PERSISTENT_1"  (forces replacement)\n'
    ) in to_text(cmp, "base.json")


# --- Moves, replaceOnChanges, ignoreChanges --------------------------------------------------


def test_a_resource_that_moved_with_an_alias_is_a_move_not_a_delete_and_create():
    parent = "urn:pulumi:dev::modelstore::pulumi:pulumi:Stack$modelstore:index:Store::llama"
    old = _state(FSX, "llama-fs", {"deploymentType": "PERSISTENT_2"}, parent=parent)
    base = _doc("dev", [old])
    cluster = "urn:pulumi:dev::modelstore::pulumi:pulumi:Stack$modelstore:index:Cluster::eks"
    new_state = _state(FSX, "eks-fs", {"deploymentType": "PERSISTENT_2"}, parent=cluster)
    new_state["newState"]["aliases"] = [{"name": "llama-fs", "parentUrn": parent}]
    old_urn = base["steps"][0]["urn"]
    cmp = compare(base, _doc("dev", [new_state]))
    (moved,) = cmp.changes
    assert moved.op == "same" and moved.old_urn == old_urn
    assert cmp.counts() == {"move": 1}
    assert "move aws:fsx/lustreFileSystem:LustreFileSystem eks-fs (moved from" in to_text(cmp, "b")
    # An old URN given as such works the same.
    new_state["newState"]["aliases"] = [old_urn]
    assert compare(base, _doc("dev", [new_state])).counts() == {"move": 1}
    # Without the alias: a new file system, and the old one deleted.
    new_state["newState"]["aliases"] = []
    assert compare(base, _doc("dev", [new_state])).counts() == {"create": 1, "delete": 1}


def test_golden_aliases_resolve_to_the_old_urns():
    """The driver install moved from the store to the cluster scope with an alias: a plan from
    before the move compares as a move."""
    doc = json.loads(golden_path("stacks/aws-prod").read_text())
    step = next(s for s in doc["steps"] if s["newState"]["aliases"])
    spec = step["newState"]["aliases"][0]
    base = copy.deepcopy(doc)
    old_urn = (
        f"urn:pulumi:aws-prod::modelstore::{spec['parentUrn'].split('::')[2].split('$')[-1]}"
        f"${step['newState']['type']}::{spec['name']}"
    )
    for s in base["steps"]:
        if s["urn"] == step["urn"]:
            s["urn"] = s["newState"]["urn"] = old_urn
            s["newState"]["aliases"] = []
    cmp = compare(base, doc)
    assert cmp.counts() == {"move": 1}
    (moved,) = [c for c in cmp.changes if c.old_urn]
    assert moved.urn == step["urn"] and moved.old_urn == old_urn


def test_replace_on_changes_and_ignore_changes_are_honoured():
    base = _doc("dev", [_state("aws:iam/role:Role", "r", {"description": "a", "tags": {"x": "1"}})])
    new = copy.deepcopy(base)
    new["steps"][0]["newState"]["inputs"]["description"] = "b"
    assert compare(base, new).changes[0].op == "update"
    new["steps"][0]["newState"]["replaceOnChanges"] = ["description"]
    assert compare(base, new).changes[0].forcing == ["description (replaceOnChanges)"]
    new["steps"][0]["newState"]["ignoreChanges"] = ["description"]
    assert compare(base, new).changes[0].op == "same"


# --- CLI -------------------------------------------------------------------------------------


def test_cli_exit_codes_and_formats(tmp_path, capsys):
    base_dir = stack_dir(tmp_path, "aws-prod", UNPROTECTED)
    base_file = tmp_path / "base.json"

    def cli(directory: Path, *options: str) -> tuple[int, str]:
        code = main(["plan", "--cwd", str(directory), "--stack", "aws-prod", *options])
        return code, capsys.readouterr()[0]

    def compare(directory: Path, *options: str) -> tuple[int, str]:
        return cli(directory, "--compare", str(base_file), *options)

    options = ("--format", "json", "--fill-outputs", "--out", str(base_file))
    assert cli(base_dir, *options)[0] == 0
    # The same program and config: nothing to do.
    code, out = compare(base_dir)
    assert code == 0
    assert out.endswith("Resources: no changes\n")
    changed = stack_dir(tmp_path, "aws-prod", edits(UNPROTECTED, PERSISTENT_1))
    code, out = compare(changed, "--format", "markdown")
    assert code == EXIT_DATA_LOSS == 3
    assert out.startswith("### modelstore plan: `aws-prod` compared with `base.json`")
    assert "**DATA LOSS RISK**" in out
    # The values the plan made up (BASE's placeholder ids, --fill-outputs) are marked, as in
    # the tree (issue 25).
    code, out = compare(changed)
    assert code == 3
    assert (
        '      spec.csi.volumeHandle: "fs-2fa32b377424e81ec::inference" -> (known after apply: '
        "llama-fs is replaced)  (forces replacement)  (placeholder)\n" in out
    )
    assert out.splitlines()[-2] == (
        "(placeholder): holds a value modelstore plan made up, not the stack's own (from "
        "--fill-outputs): pulumi up uses what the cloud answers"
    )
    code, out = compare(changed, "--format", "json")
    assert code == 3
    assert json.loads(out)["dataLossRisk"] == [
        f"urn:pulumi:aws-prod::modelstore::modelstore:index:FsxLustreModelStore${FSX}::llama-fs"
    ]
    retagged = stack_dir(tmp_path, "aws-prod", edits(UNPROTECTED, store_set("tags", {"team": "x"})))
    code, out = compare(retagged)
    assert code == 0
    assert "~ update aws:fsx/lustreFileSystem:LustreFileSystem llama-fs" in out


def test_cli_refuses_a_base_of_another_stack_or_not_a_plan(tmp_path, capsys):
    other = golden_path("stacks/gke")
    assert main(["plan", "--cwd", str(ROOT), "--stack", "aws-prod", "--compare", str(other)]) == 1
    _, err = capsys.readouterr()
    assert (
        err.strip()
        == "error: " + f"{other}: BASE is a plan of modelstore/gke, not modelstore/aws-prod"
    )
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["plan", "--cwd", str(ROOT), "--stack", "aws-prod", "--compare", str(bad)]) == 1
    assert "no steps" in capsys.readouterr().err
    assert (
        main(
            [
                "plan",
                "--cwd",
                str(ROOT),
                "--stack",
                "aws-prod",
                "--compare",
                str(bad),
                "--format",
                "yaml",
            ]
        )
        == 1
    )
    assert main(["plan", "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "markdown"]) == 1


NOT_A_PLAN = "not a `modelstore plan --format json` plan"
_STEP = {"op": "create", "urn": "urn:pulumi:local::modelstore::a:b:C::x", "newState": {"type": "a"}}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe{}", "not a JSON plan (not UTF-8: byte 0xff at offset 0)"),
        ("{\"steps\": [\"caf\u00e9\"]}".encode("latin-1"),
         "not a JSON plan (not UTF-8: byte 0xe9 at offset 15)"),
        (b'{"steps": [1, 2]}',
         f"{NOT_A_PLAN}: steps[0] is not a step (a mapping with op, urn and newState)"),
        (json.dumps({"steps": [{"op": "create", "urn": 7}]}).encode(),
         f"{NOT_A_PLAN}: steps[0] has no urn string"),
        (json.dumps({"steps": [{**_STEP, "urn": "llama"}]}).encode(),
         f"{NOT_A_PLAN}: steps[0] has a urn that is not a Pulumi URN: 'llama'"),
        (json.dumps({"steps": [_STEP, {**_STEP, "newState": {}}]}).encode(),
         f"{NOT_A_PLAN}: steps[1] has no newState with a type string"),
        (json.dumps({"steps": [{**_STEP, "newState": {"type": "a", "inputs": []}}]}).encode(),
         f"{NOT_A_PLAN}: steps[0] has a newState.inputs that is not a mapping"),
        (json.dumps({"steps": [{**_STEP, "newState": {"type": "a", "aliases": 3}}]}).encode(),
         f"{NOT_A_PLAN}: steps[0] has a newState.aliases that is not a list"),
        (b"[" * 100_000, "not a JSON plan (nested too deeply)"),
    ],
)  # fmt: skip
def test_a_base_that_is_not_a_plan_is_one_error_line_and_exit_1(tmp_path, capsys, content, message):
    """Issue 26: a BASE that is not UTF-8, or whose steps are not plan steps, is refused in one
    line with the documented exit code (1, as every error), never a traceback."""
    base = tmp_path / "base.json"
    base.write_bytes(content)
    code = main(["plan", "--cwd", str(ROOT), "--stack", "local", "--compare", str(base)])
    assert (code, capsys.readouterr().err) == (1, f"error: {base}: {message}\n")


def test_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    assert (
        "Exit code 3 when a step may lose data, else 4 when a step is blocked, else 0"
        in " ".join(capsys.readouterr().out.split())
    )


def test_base_fill_outputs_setting_is_read_from_its_ids(preview_plans):
    assert filled_outputs(json.loads(golden_path("stacks/aws-prod").read_text()))
    doc = json.loads(to_json(preview_plans("stacks/aws-prod")))
    assert not filled_outputs(doc)
    assert any(s["newState"]["id"] == UNKNOWN for s in doc["steps"])


def test_a_golden_plan_compared_with_a_fresh_plan_of_its_stack_has_no_changes(filled_plans):
    doc = json.loads(golden_path("stacks/gke").read_text())
    cmp = compare(doc, json.loads(to_json(filled_plans["stacks/gke"])))
    assert cmp.counts() == {} and cmp.exit_code == 0


# --- The tables ------------------------------------------------------------------------------


def test_data_bearing_types_cover_every_backends_data():
    for backend, types in DATA_BEARING.items():
        assert set(types) <= DATA_BEARING_TYPES, backend


def test_every_data_bearing_type_the_library_creates_has_its_force_new_rules():
    created = {
        s["newState"]["type"]
        for path in golden_path("x").parent.rglob("*.json")
        for s in json.loads(path.read_text())["steps"]
    }
    for type_ in created & DATA_BEARING_TYPES:
        assert rules_for(type_), type_


# --- helpers ---------------------------------------------------------------------------------


def _state(type_: str, name: str, inputs: dict[str, Any], parent: str = "") -> dict[str, Any]:
    prefix = parent.split("::")[2].split("$")[-1] + "$" if parent else ""
    urn = f"urn:pulumi:STACK::modelstore::{prefix}{type_}::{name}"
    return {
        "op": "create",
        "urn": urn,
        "provider": "",
        "newState": {
            "urn": urn,
            "type": type_,
            "custom": True,
            "id": "id-1",
            "parent": parent,
            "inputs": inputs,
            "protect": False,
            "retainOnDelete": False,
            "aliases": [],
            "ignoreChanges": [],
            "replaceOnChanges": [],
            "propertyDependencies": {},
        },
    }


def _doc(stack: str, steps_: list[dict[str, Any]]) -> dict[str, Any]:
    steps_ = json.loads(json.dumps(steps_).replace("urn:pulumi:STACK::", f"urn:pulumi:{stack}::"))
    return {"project": "modelstore", "stack": stack, "steps": steps_}


# --- model revisions -------------------------------------------------------------------------

NEW_REVISION = "5206a32e0bd3067aef1ce90f5528ade7d866253f"


def model_revision(revision: str, store: str = "models") -> Edit:
    def apply(stores: dict[str, Any]) -> None:
        stores[store]["model"]["revision"] = revision

    return apply


def revision_moved(
    tmp_path: Path, capsys: Any, stack: str, base: Edit | None, changed: Edit
) -> tuple[Comparison, dict[str, Any]]:
    """``stack`` as ``base`` edits it, saved with ``--fill-outputs``, then ``--compare``d through
    the CLI as ``changed`` edits it: the CLI exits 0 with no DATA LOSS, and the comparison
    neither loses data nor is blocked. The comparison and the changed plan, for the rest."""
    base_file = tmp_path / "base.json"
    argv = ["plan", "--stack", stack, "--format", "json"]
    base_dir = stack_dir(tmp_path, stack, base)
    assert main([*argv, "--cwd", str(base_dir), "--fill-outputs", "--out", str(base_file)]) == 0
    capsys.readouterr()
    changed_dir = stack_dir(tmp_path, stack, changed)
    assert main([*argv, "--cwd", str(changed_dir), "--compare", str(base_file)]) == 0
    assert json.loads(capsys.readouterr()[0])["dataLossRisk"] == []
    after = planned(changed_dir, stack)
    cmp = compare(json.loads(base_file.read_text()), after)
    assert not cmp.data_loss and not cmp.blocked
    return cmp, after


def test_a_revision_change_seeds_beside_the_old_and_replaces_no_volume(tmp_path, capsys):
    """The CLI's --compare of the local stack with ``model.revision`` moved: a new seed Job and
    verification Job, the readers' mount moves (the mounts output), and no PV or claim is
    replaced or deleted: exit 0, no DATA LOSS."""
    cmp, after = revision_moved(tmp_path, capsys, "local", None, model_revision(NEW_REVISION))
    touched = {(c.op, c.type) for c in cmp.changes if c.op != "same"}
    assert not {t for op, t in touched if t in (PV, PVC)}, touched
    jobs = {c.urn.rsplit("::", 1)[1]: c.op for c in by_type(cmp, "kubernetes:batch/v1:Job")}
    assert sorted(jobs.values()) == ["create", "create", "delete", "delete"], jobs
    assert any(NEW_REVISION[:12] in name and op == "create" for name, op in jobs.items()), jobs
    assert f"revisions/{NEW_REVISION}" in json.dumps(after["outputs"])


def test_a_revision_change_reads_in_the_order_pulumi_up_runs_it(tmp_path, capsys):
    """Issue 25: --compare of a revision change says per store what changes for readers, and
    lists the steps in the order pulumi up runs them: creates and updates in dependency order
    as the program registers them, the deletes of removed resources at the end (pulumi/pulumi
    pkg/resource/deploy/deployment_executor.go, 1b594989, lines 486-501)."""
    base_file = tmp_path / "base.json"
    argv = ["plan", "--stack", "local"]
    base_dir = stack_dir(tmp_path, "local")
    options = ("--format", "json", "--fill-outputs", "--out", str(base_file))
    assert main([*argv, "--cwd", str(base_dir), *options]) == 0
    capsys.readouterr()
    changed = stack_dir(tmp_path, "local", model_revision(NEW_REVISION))
    assert main([*argv, "--cwd", str(changed), "--compare", str(base_file)]) == 0
    lines = capsys.readouterr()[0].splitlines()
    stack = yaml.safe_load((ROOT / "stacks" / "Pulumi.local.yaml").read_text())["config"]
    old = stack["modelstore:stores"]["models"]["model"]["revision"][:12]  # the Jobs' label
    assert lines[1:3] == [
        "Model revisions:",
        f"  models: model revision {old} -> 5206a32e0bd3: seeded beside the old, then "
        "verified in inference; readers move when their pods take the store's new mounts "
        "(mount_for), each pod waiting until it is published; then the old revision's 2 Jobs "
        "are deleted",
    ]
    steps = [line for line in lines if line[:3] in (" + ", " - ", " ~ ", "+- ")]
    assert steps == [
        " ~ update kubernetes:rbac.authorization.k8s.io/v1:Role models-manifest-record",
        " + create kubernetes:batch/v1:Job models-seed-5206a32e0bd3",
        " + create kubernetes:batch/v1:Job models-verify-inference-5206a32e0bd3",
        f" - delete kubernetes:batch/v1:Job models-verify-inference-{old}",
        f" - delete kubernetes:batch/v1:Job models-seed-{old}",
    ]


def test_an_fsx_s3_model_revision_change_adds_an_association_and_replaces_no_volume(
    tmp_path, capsys
):
    """aws-prod (FSx) with an s3:// model moved to a new revision (a new source prefix): the
    new revision's data repository association is created beside the file system, the old
    one goes (keeping its files), new seed and verification Jobs; no file system, PV or claim
    is replaced, and the CLI exits 0."""
    dra = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"

    def model(revision: str) -> Edit:
        def apply(stores: dict[str, Any]) -> None:
            # The model section's association takes the place of the stack's own link.
            stores["llama"].pop("data_repository_path", None)
            source = f"s3://acme-models/llama-3.1-8b/{revision}"
            stores["llama"]["model"] = {"source": source, "revision": revision}

        return apply

    cmp, _ = revision_moved(tmp_path, capsys, "aws-prod", model("v1"), model("v2"))
    links = {c.urn.rsplit("::", 1)[1]: c.op for c in by_type(cmp, dra)}
    assert links == {"llama-model-v1": "delete", "llama-model-v2": "create"}
    touched = {c.type for c in cmp.changes if c.op in ("replace", "delete")}
    assert touched.isdisjoint({PV, PVC, FSX}), touched


# The FSx examples as a user changes them: the next version copied to the next S3 prefix, and
# both the source and the revision moved (the examples pin `.../v1/` at revision `v1`).
FSX_EXAMPLES = {
    # example: (the store, its reader namespace, the workload reading the revision)
    "fsx-vllm": ("llama", "inference", "kubernetes:apps/v1:Deployment"),
    "fsx-kserve": (
        "models",
        "kserve-inference",
        "kubernetes:serving.kserve.io/v1beta1:InferenceService",
    ),
}


@pytest.mark.parametrize("example", sorted(FSX_EXAMPLES))
def test_an_fsx_examples_next_revision_replaces_no_volume(tmp_path, capsys, example):
    """The FSx example moved from v1 to v2, planned with --compare against its golden plan:
    v2's association and Jobs are created beside the store, v1's go (the association keeps
    its files), the workload is updated onto revisions/v2, and no file system, PV or claim is
    replaced or deleted: exit 0, no DATA LOSS."""
    store, reader, workload = FSX_EXAMPLES[example]
    dra = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
    changed = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, changed)
    program = changed / "__main__.py"
    source = program.read_text()
    assert source.count('"revision": "v1"') == 1 and source.count("-instruct/v1/") == 1
    program.write_text(
        source.replace('"revision": "v1"', '"revision": "v2"').replace(
            "-instruct/v1/", "-instruct/v2/"
        )
    )
    base = golden_path(f"examples/{example}/dev")
    argv = ["plan", "--cwd", str(changed), "--stack", "dev", "--format", "json"]
    assert main([*argv, "--compare", str(base)]) == 0
    assert json.loads(capsys.readouterr()[0])["dataLossRisk"] == []
    after = to_json(plan_directory(changed, "dev", fill_outputs=True))
    cmp = compare(json.loads(base.read_text()), json.loads(after))
    assert not cmp.data_loss and not cmp.blocked
    links = {c.urn.rsplit("::", 1)[1]: c.op for c in by_type(cmp, dra)}
    assert links == {f"{store}-model-v1": "delete", f"{store}-model-v2": "create"}
    jobs = {c.urn.rsplit("::", 1)[1]: c.op for c in by_type(cmp, "kubernetes:batch/v1:Job")}
    assert jobs == {
        **{f"{store}-{role}-v1": "delete" for role in ("seed", f"verify-{reader}")},
        **{f"{store}-{role}-v2": "create" for role in ("seed", f"verify-{reader}")},
    }
    touched = {c.type for c in cmp.changes if c.op in ("replace", "delete")}
    assert touched.isdisjoint({PV, PVC, FSX}), touched
    assert {c.op for c in by_type(cmp, PV) + by_type(cmp, PVC) + by_type(cmp, FSX)} == {"same"}
    # The readers move: the workload is updated in place onto the new revision, after the new
    # verify Jobs (it depends on the store), and the summary says so (issue 25).
    (moved,) = by_type(cmp, workload)
    assert moved.op == "update"
    assert cmp.revisions == [
        f"{store}: model revision v1 -> v2: seeded beside the old, then verified in {reader}; "
        "readers move when the new verify Jobs pass "
        f"({workload.rsplit(':', 1)[-1]} {moved.name} updated then); then the old revision's 2 "
        "Jobs are deleted"
    ]
    assert "revisions/v2" in after and "revisions/v1" not in after


VERIFY = ("verify-inference", "verify-batch-inference")


def test_a_hyperdisk_gs_model_revision_change_adds_a_claim_beside_the_old_one(tmp_path, capsys):
    """gke-hyperdisk with a gs:// model moved from r1 to r2, r1 listed in
    ``previous_revisions``: the r2 StorageClass, data sources and claims (named after r2) are
    created beside r1's, which stay exactly as planned (no claim replaced or deleted), and the
    CLI exits 0 with no DATA LOSS."""

    def model(revision: str, previous: dict[str, str] | None = None) -> Edit:
        def apply(stores: dict[str, Any]) -> None:
            llama = stores["llama"]
            llama.pop("source_uri")
            llama.pop("model_revision")
            source = f"gs://acme-ml-models/llama-3-8b-instruct/{revision}"
            llama["model"] = {"source": source, "revision": revision}
            if previous:
                llama["previous_revisions"] = previous

        return apply

    old = {"r1": "gs://acme-ml-models/llama-3-8b-instruct/r1"}
    cmp, after = revision_moved(tmp_path, capsys, "gke-hyperdisk", model("r1"), model("r2", old))
    claims = {c.urn.rsplit("::", 1)[1]: c.op for c in by_type(cmp, PVC)}
    assert claims == {
        "llama-pvc-inference-r1": "same",
        "llama-pvc-batch-inference-r1": "same",
        "llama-pvc-inference-r2": "create",
        "llama-pvc-batch-inference-r2": "create",
    }
    sources = {c.urn.rsplit("::", 1)[1]: c.op for c in by_type(cmp, DATA_SOURCE)}
    assert sources == {
        "llama-source-inference-r1": "same",
        "llama-source-batch-inference-r1": "same",
        "llama-source-inference-r2": "create",
        "llama-source-batch-inference-r2": "create",
    }
    touched = {c.type for c in cmp.changes if c.op in ("replace", "delete")}
    assert touched.isdisjoint({PV, PVC, DATA_SOURCE, STORAGE_CLASS}), touched
    # r2's manifest Job and verification Jobs are new Jobs; r1's go (its manifest stays in
    # its folder, its disks keep their copy).
    jobs = {c.urn.rsplit("::", 1)[1]: c.op for c in by_type(cmp, "kubernetes:batch/v1:Job")}
    assert jobs == {
        **{f"llama-{role}-r1": "delete" for role in ("manifest", *VERIFY)},
        **{f"llama-{role}-r2": "create" for role in ("manifest", *VERIFY)},
    }
    # The readers' mounts move to the r2 claim.
    mounts = json.dumps(after["outputs"])
    assert '"claimName": "llama-r2"' in mounts and '"claimName": "llama-r1"' not in mounts
