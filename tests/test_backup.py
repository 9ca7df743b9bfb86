"""The common ``backup`` section (``backup.py``): its shape and default on every backend, each
backend's refusals with their reasons, and the resources or settings each backend maps it
onto."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import pulumi_modelstore.local  # noqa: F401  (registers the local backend)
from pulumi_modelstore.aws import EfsModelStore
from pulumi_modelstore.backup import Backup, cron_problem, is_daily, settle_backup
from pulumi_modelstore.fields import Parser
from pulumi_modelstore.store import ModelStore, ModelStoreArgs
from tests.conftest import assert_refused, plan
from tests.test_azure_blob import run as blob_run
from tests.test_gcsfuse import run as gcs_run

FS = "aws:fsx/lustreFileSystem:LustreFileSystem"
LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
BUCKET = "gcp:storage/bucket:Bucket"
BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"


def backend(name: str, **args: Any) -> Any:
    """A program building the ``name`` backend's store from its example args and ``args``."""
    cls = ModelStore.backends()[name]
    fields = {**cls.example_args, "readers": ["inference"], **args}
    return lambda: cls("llama", fields)


def parsed(name: str, **args: Any) -> Backup:
    cls = ModelStore.backends()[name]
    spec = cls.parse("llama", {**cls.example_args, "readers": ["inference"], **args})
    backup = spec.derived["backup"]
    assert isinstance(backup, Backup)
    return backup


ON = {"enabled": True}
CRON = (
    "a cron expression of five numeric fields (minute 0-59, hour 0-23, day-of-month 1-31, "
    "month 1-12, day-of-week 0-6 with Sunday 0; UTC), e.g. '0 3 * * *'"
)
EXISTING_BUCKET = (
    "false on this store: the store leaves an existing bucket's settings alone (bucket_name is "
    "given): turn on its backups where the bucket is managed"
)
UNSET_SOFT_DELETE = "unset when backup is enabled (the backup's retention_days sets it)"

# (backend, its fields, the exact error)
REFUSED: list[tuple[str, dict[str, Any], str]] = [
    # The section's shape, the same on every backend.
    ("efs", {"backup": {"retention": 7}}, "llama: backup field name must be one of enabled, "
     "retention_days, schedule, got 'retention'"),
    ("efs", {"backup": {"enabled": "yes"}}, "llama: backup.enabled must be true or false, got "
     "'yes'"),
    ("fsx-lustre", {"backup": {**ON, "retention_days": 0}}, "llama: backup.retention_days must "
     "be at least 1 day, got 0"),
    ("fsx-lustre", {"backup": {**ON, "schedule": "every day"}},
     f"llama: backup.schedule must be {CRON}, got 'every day'"),
    ("fsx-lustre", {"backup": {**ON, "schedule": "0 24 * * *"}},
     f"llama: backup.schedule must be {CRON}, got '0 24 * * *'"),
    ("mountpoint-s3", {"backup": {"schedule": "0 3 * *"}},
     f"llama: backup.schedule must be {CRON}, got '0 3 * *'"),
    # robfig/cron's day-of-week is 0-6 (Velero parses schedules with it): 7 is no Sunday.
    ("fsx-lustre", {"backup": {**ON, "schedule": "0 3 * * 7"}},
     f"llama: backup.schedule must be {CRON}, got '0 3 * * 7'"),
    ("fsx-lustre", {"backup": {**ON, "schedule": "0 3 * * 5-7"}},
     f"llama: backup.schedule must be {CRON}, got '0 3 * * 5-7'"),
    # FSx: the API's range, a daily start time, and where it takes no backups.
    ("fsx-lustre", {"backup": {**ON, "retention_days": 91}}, "llama: backup.retention_days must "
     "be 1 to 90 days (the range of FSx automatic backups), got 91"),
    ("fsx-lustre", {"backup": {**ON, "schedule": "0 3 * * 0"}}, "llama: backup.schedule must be "
     "a daily schedule ('<minute> <hour> * * *'): FSx starts automatic backups once a day "
     "(daily_automatic_backup_start_time, HH:MM UTC), got '0 3 * * 0'"),
    ("fsx-lustre", {"deployment_type": "SCRATCH_2", "backup": ON}, "llama: backup.enabled must "
     "be false on this store: FSx backs up no SCRATCH_2 file system (FSx API reference, "
     "CreateBackup: Persistent deployment types only), got true"),
    ("fsx-lustre", {"data_repository_path": "s3://models/llama/", "backup": ON}, "llama: "
     "backup.enabled must be false on this store: FSx backs up no file system linked to a data "
     "repository (FSx API reference, CreateBackup), and its models are in S3 at "
     "data_repository_path, got true"),
    # EFS: AWS Backup's default plan fixes both.
    ("efs", {"backup": {**ON, "retention_days": 14}}, "llama: backup.retention_days must be "
     "unset: the backup policy turns on AWS Backup's default EFS plan, daily backups kept 35 "
     "days (EFS user guide, Backing up EFS file systems); another plan is an AWS Backup plan of "
     "your own, got 14"),
    # S3: continuous, and an existing bucket is not the store's.
    ("mountpoint-s3", {"backup": {**ON, "schedule": "0 3 * * *"}}, "llama: backup.schedule "
     "must be unset: versioning keeps every overwritten or deleted object as it happens (no "
     "schedule); retention_days is how long a noncurrent version stays, got '0 3 * * *'"),
    ("mountpoint-s3", {"bucket_name": "models", "backup": ON},
     f"llama: backup.enabled must be {EXISTING_BUCKET}, got true"),
    # GCS: soft delete's range; the soft delete field is the backup's to set.
    ("gcs-fuse", {"backup": {**ON, "retention_days": 5}}, "llama: backup.retention_days must be "
     "7 to 90 days (the range of Cloud Storage soft delete), got 5"),
    ("gcs-fuse", {"soft_delete_retention_seconds": 604800, "backup": ON},
     f"llama: soft_delete_retention_seconds must be {UNSET_SOFT_DELETE}, got 604800"),
    ("gcs-fuse", {"bucket_name": "models", "backup": ON},
     f"llama: backup.enabled must be {EXISTING_BUCKET}, got true"),
    # Azure Blob: the range; an existing account's blob service is the account owner's.
    ("azure-blob", {"backup": {**ON, "retention_days": 366}}, "llama: backup.retention_days "
     "must be 1 to 365 days (the range of Azure Blob soft delete), got 366"),
    ("azure-blob", {"versioning": False, "backup": ON},
     f"llama: versioning must be {UNSET_SOFT_DELETE}, got false"),
    ("azure-blob", {"create_storage_account": False, "storage_account_name": "models",
                    "backup": ON}, "llama: backup.enabled must be false on this store: the store "
     "leaves an existing storage account's settings alone (create_storage_account is false): "
     "turn on its backups where the storage account is managed, got true"),
    # No backup of their own.
    ("azure-files-nfs", {"backup": ON}, "llama: backup.enabled must be false on this store: the "
     "Files API takes a share snapshot one call at a time (FileREST Snapshot Share, GA for NFS "
     "shares) with no schedule or retention of its own; scheduled snapshots are Azure Backup's "
     "(a Recovery Services vault and policy), which this store does not make, got true"),
    ("hyperdisk-ml", {"backup": ON}, "llama: backup.enabled must be false on this store: the "
     "disk is made by the GKE volume populator from source_uri, which stays the models' copy, "
     "and the store has no disk resource to attach a snapshot schedule to (a Compute Engine "
     "snapshot schedule is a resource policy attached to a named disk), got true"),
    ("nfs", {"backup": ON}, "llama: backup.enabled must be false on this store: the store does "
     "not own its storage (back it up where it is served from), got true"),
    ("local", {"backup": ON}, "llama: backup.enabled must be false on this store: the store does "
     "not own its storage (back it up where it is served from), got true"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "args", "message"), REFUSED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REFUSED)]
)
def test_refused_with_the_reason_before_anything_registers(
    name: str, args: dict[str, Any], message: str
) -> None:
    assert_refused(backend(name, **args), message)


# -- the default -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "writers", "enabled"),
    [
        ("efs", [], False),  # nobody writes models there
        ("efs", ["loader"], True),  # models written there may exist nowhere else
        ("fsx-lustre", ["loader"], True),
        ("mountpoint-s3", ["loader"], True),
        ("gcs-fuse", ["loader"], True),
        ("azure-blob", ["loader"], True),
        # A configuration or backend that refuses backups defaults to off, writers or not.
        ("azure-files-nfs", ["loader"], False),
        ("nfs", ["loader"], False),
        ("local", ["loader"], False),
    ],
)
def test_default_is_on_where_writers_publish_models_found_nowhere_else(
    name: str, writers: list[str], enabled: bool
) -> None:
    got = parsed(name, writers=writers)
    assert got == Backup(enabled=enabled, retention_days=7, schedule="0 3 * * *")


def test_fsx_linked_to_s3_defaults_to_off_with_writers():
    assert not parsed(
        "fsx-lustre", writers=["loader"], data_repository_path="s3://models/l/"
    ).enabled


class _WithModel(ModelStoreArgs, total=False):
    model: dict[str, Any]
    """A pinned model source (the model section, in its own issue). Default: none."""


@pytest.mark.parametrize(("model", "enabled"), [(None, True), ({"source": "hf://t5@abc"}, False)])
def test_a_pinned_model_source_turns_the_default_off(model: Any, enabled: bool) -> None:
    # The store's args declare a model section: its source makes the data reproducible.
    raw: dict[str, Any] = {"writers": ["loader"]}
    if model is not None:
        raw["model"] = model
    p = Parser("llama", _WithModel, raw)
    settled = settle_backup(p, ModelStore.backends()["efs"].backup_support(p))
    assert settled is not None and settled.enabled is enabled


def test_camel_case_keys_in_python_args_are_the_fields_until_0_2_0():
    """A stack's config reaches the section with Python names (``program.store_args``); in
    Python args the camelCase spelling still works in 0.1.0, with a deprecation warning."""
    with pytest.warns(DeprecationWarning, match=r"backup\.retentionDays is deprecated"):
        got = parsed("fsx-lustre", backup={"enabled": True, "retentionDays": 14})
    assert got == Backup(enabled=True, retention_days=14, schedule="0 3 * * *")


@pytest.mark.parametrize(
    ("cron", "problem"),
    [
        ("0 3 * * *", None),
        ("*/15 1-5,7 1 1-12/2 0,6", None),
        # robfig/cron v3 (Velero's parser) bounds day-of-week at 6: 7 is no Sunday there.
        ("0 3 * * 0,7", "day-of-week '7' outside 0-6"),
        ("0 3 * * * *", "6 fields"),
        ("60 3 * * *", "minute '60' outside 0-59"),
        ("0 5-2 * * *", "hour '5-2' outside 0-23"),
        ("0 3 0 * *", "day-of-month '0' outside 1-31"),
        ("*/0 3 * * *", "minute step 0"),
        ("@daily", "1 fields"),
    ],
)
def test_cron_expressions(cron: str, problem: str | None) -> None:
    assert cron_problem(cron) == problem


def test_daily_schedules():
    assert is_daily("30 2 * * *") and not is_daily("30 2 * * 1") and not is_daily("*/5 2 * * *")


# -- EFS's old spelling ---------------------------------------------------------------------------


@pytest.mark.parametrize("old", [True, False])
def test_efs_backup_bool_is_a_deprecated_spelling_of_enabled(old: bool) -> None:
    args = {**EfsModelStore.example_args, "readers": ["inference"]}
    with pytest.warns(DeprecationWarning) as warned:
        spec = EfsModelStore.parse("llama", {**args, "backup": old})
    word = str(old).lower()
    assert f"llama: backup: {word} is deprecated, use backup: {{enabled: {word}}}" in {
        str(w.message) for w in warned
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = EfsModelStore.parse("llama", {**args, "backup": {"enabled": old}})
    assert spec.derived["backup"] == new.derived["backup"]
    assert spec.derived["backup"].enabled is old


# -- what each backend makes of it ---------------------------------------------------------------


def test_fsx_automatic_backups_from_the_section():
    p = plan(backend("fsx-lustre", backup={**ON, "retention_days": 14, "schedule": "30 2 * * *"}))
    fs = p.by_type(FS)[0]["inputs"]
    assert fs["automaticBackupRetentionDays"] == 14
    assert fs["dailyAutomaticBackupStartTime"] == "02:30"
    assert fs["copyTagsToBackups"] is True


def test_fsx_without_backup_leaves_fsx_defaults():
    p = plan(backend("fsx-lustre"))
    fs = p.by_type(FS)[0]["inputs"]
    assert not {"automaticBackupRetentionDays", "dailyAutomaticBackupStartTime"} & set(fs)


def test_s3_expires_noncurrent_versions_after_the_retention():
    p = plan(backend("mountpoint-s3", writers=["loader"], backup={"retention_days": 30}))
    (lifecycle,) = p.by_type(LIFECYCLE)
    assert lifecycle["inputs"]["rules"] == [
        {
            "id": "backup-retention",
            "status": "Enabled",
            "filter": {"prefix": ""},
            "noncurrentVersionExpiration": {"noncurrentDays": 30},
        }
    ]
    assert not plan(backend("mountpoint-s3")).by_type(LIFECYCLE)


def test_gcs_soft_delete_and_noncurrent_versions_follow_the_retention():
    _, p = gcs_run(writers=["loader"], backup={"retention_days": 30})
    bucket = p.by_type(BUCKET)[0]["inputs"]
    assert bucket["softDeletePolicy"] == {"retentionDurationSeconds": 30 * 86400}
    assert bucket["versioning"] == {"enabled": True}
    assert bucket["lifecycleRules"] == [
        {
            "action": {"type": "Delete"},
            "condition": {"daysSinceNoncurrentTime": 30, "withState": "ARCHIVED"},
        }
    ]


def test_without_the_backup_no_bucket_keeps_versions_that_nothing_expires():
    # A model's old revisions, removed under keep_revisions, would stay as noncurrent versions,
    # billed for ever: versions are kept only while the backup's retention expires them.
    off = {"enabled": False}
    s3 = plan(backend("mountpoint-s3", writers=["loader"], backup=off))
    (versioning,) = s3.by_type("aws:s3/bucketVersioning:BucketVersioning")
    assert versioning["inputs"]["versioningConfiguration"] == {"status": "Suspended"}
    assert not s3.by_type(LIFECYCLE)
    _, gcs = gcs_run(writers=["loader"], backup=off)
    bucket = gcs.by_type(BUCKET)[0]["inputs"]
    assert bucket["versioning"] == {"enabled": False} and "lifecycleRules" not in bucket
    _, blob = blob_run(writers=["loader"], backup=off)
    (service,) = blob.by_type(BLOB_SERVICE)
    assert service["inputs"]["isVersioningEnabled"] is False


def test_gcs_with_a_hierarchical_namespace_has_soft_delete_only():
    # No object versioning with a hierarchical namespace (cloud.google.com/storage/docs/
    # hns-overview, Limitations): nothing noncurrent to expire.
    _, p = gcs_run(writers=["loader"], hierarchical_namespace=True)
    bucket = p.by_type(BUCKET)[0]["inputs"]
    assert bucket["softDeletePolicy"] == {"retentionDurationSeconds": 7 * 86400}
    assert "versioning" not in bucket and "lifecycleRules" not in bucket


def test_azure_blob_soft_delete_and_versioning_follow_the_section():
    _, p = blob_run(writers=["loader"], backup={"retention_days": 30})
    (service,) = p.by_type(BLOB_SERVICE)
    inputs = service["inputs"]
    assert inputs["deleteRetentionPolicy"] == {"enabled": True, "days": 30}
    assert inputs["containerDeleteRetentionPolicy"] == {"enabled": True, "days": 30}
    assert inputs["isVersioningEnabled"] is True
