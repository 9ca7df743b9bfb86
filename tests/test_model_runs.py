"""The seed and verify programs as real runs meet them (issue 24, points 12-15): a manifest
digest that a second seed of the same files gives again, a verify that sees what does not
belong in a revision, sources that stay in their folder, and seeds that overlap, fail and are
run again. Each runs the programs for real on small data made here."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from subprocess import PIPE
from typing import Any, ClassVar

import pytest

from pulumi_modelstore.model import bundle
from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.layout import canonical, manifest_digest
from pulumi_modelstore.model.sources import open_source
from pulumi_modelstore.model.verify import Failure, VerifyError, verify
from tests.test_model_programs import (
    BUNDLE,
    INCLUDE,
    JSON_AND_SHARDS,
    SHA,
    _bundle,  # noqa: F401  (the bundled programs, for seed() and verify_seeded())
    make_model,
    seed,
    seed_local,
    tree_entry,
    verify_seeded,
)
from tests.tools import StubHandler, serving

# --- 15: the manifest digest leaves out the publish time ----------------------------------


def manifest_of(store: Path, revision: str = "v1") -> dict:
    return json.loads((store / ".modelstore" / revision / "manifest.json").read_text())


def test_the_same_files_seeded_again_give_the_same_manifest_digest(tmp_path: Path) -> None:
    """A store rebuilt (or a revision collected and seeded anew) publishes the same files at
    another time: the digest a user pinned must come out again."""
    src = make_model(tmp_path / "src")
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    one = seed_local(src, first)
    two = seed_local(src, second)
    assert manifest_of(first)["published_at"] != manifest_of(second)["published_at"]
    assert one.digest == two.digest


def test_a_pinned_manifest_is_seeded_again_into_an_empty_store(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    (tmp_path / "a").mkdir()
    pinned = seed_local(src, tmp_path / "a").digest
    empty = tmp_path / "empty"
    empty.mkdir()
    again = seed(f"file://{src}", "v1", empty, *JSON_AND_SHARDS, "--manifest-sha256", pinned)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("ok: seeded v1: 5 files")
    assert manifest_of(empty)["digest"] == pinned
    assert verify_seeded(empty, "--manifest-sha256", pinned).returncode == 0


def test_files_that_are_not_the_pinned_ones_are_not_published(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    other = "sha256:" + "0" * 64
    for publish in ("rename", "manifest-last"):
        store = tmp_path / publish
        store.mkdir()
        out = seed(
            f"file://{src}", "v1", store, *JSON_AND_SHARDS, "--publish", publish,
            "--manifest-sha256", other,
        )  # fmt: skip
        made = seed_local(src, tmp_path / f"{publish}-unpinned", publish=publish).digest
        assert (out.returncode, out.stderr) == (
            1,
            f"FAILED: revision v1 must be published with the pinned manifest {other}, the "
            f"files seeded give {made}: nothing published (unpin manifest_sha256 to publish "
            f"these files)\n",
        )
        assert not (store / ".modelstore/v1/manifest.json").exists()


def test_a_format_1_manifest_is_still_read(tmp_path: Path) -> None:
    """A store seeded before format 2 keeps its manifests: their digest covers the publish
    time, and a rerun and verify still accept them."""
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    store.mkdir()
    seed_local(src, store)
    path = store / ".modelstore/v1/manifest.json"
    old = {k: v for k, v in manifest_of(store).items() if k != "digest"}
    old["format"] = 1
    old["digest"] = "sha256:" + hashlib.sha256(canonical(old)).hexdigest()
    assert manifest_digest(old) == old["digest"]
    path.write_text(json.dumps(old))
    assert verify(store, "v1", sample=0).hashed == 5
    again = seed_mod.seed(open_source(f"file://{src}", "v1"), store, include=INCLUDE)
    assert (again.seeded, again.digest) == (False, old["digest"])


# --- 15: verify fails on a file the manifest does not list --------------------------------


def test_verify_fails_on_a_file_the_manifest_does_not_list(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    store.mkdir()
    seed_local(src, store)
    assert verify_seeded(store).returncode == 0
    (store / "revisions/v1/sub/extra.safetensors").write_bytes(b"not seeded")
    out = verify_seeded(store, "--label", "llama/inference")
    assert (out.returncode, out.stderr) == (
        7,
        "FAILED: llama/inference: sub/extra.safetensors is in the revision but not in its "
        "manifest (written after the seed, or left by one that did not finish): readers would "
        "load it unchecked\n",
    )
    (store / "revisions/v1/sub/extra.safetensors").unlink()
    (store / "revisions/v1/linked").symlink_to(src / "sub")
    assert "linked is in the revision but not in its manifest" in verify_seeded(store).stderr


def test_the_stores_own_folder_beside_a_revision_at_the_volume_root_is_not_extra(tmp_path):
    """Hyperdisk ML: the disk's root is the revision, its manifest in .modelstore/ beside the
    files, as the verification Job mounts it."""
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    store.mkdir()
    seed_local(src, store)
    disk = tmp_path / "disk"
    (store / "revisions/v1").rename(disk)
    (store / ".modelstore").rename(disk / ".modelstore")
    manifest = disk / ".modelstore/v1/manifest.json"
    assert verify(None, "v1", files_dir=disk, manifest_path=manifest).files == 5
    (disk / "stray.bin").write_bytes(b"x")
    with pytest.raises(VerifyError) as caught:
        verify(None, "v1", files_dir=disk, manifest_path=manifest)
    assert caught.value.cause == Failure.EXTRA


# --- 15: a file:// source stays in its folder ---------------------------------------------


def test_a_file_source_refuses_a_link_out_of_its_folder(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    secret = tmp_path / "elsewhere" / "secret.json"
    secret.parent.mkdir()
    secret.write_text('{"not": "the model"}')
    (src / "sub" / "leak.json").symlink_to(secret)
    store = tmp_path / "store"
    store.mkdir()
    out = seed(f"file://{src}", "v1", store, *JSON_AND_SHARDS)
    assert (out.returncode, out.stderr) == (
        1,
        f"FAILED: source file://{src}: sub/leak.json is a symbolic link to {secret}, outside "
        f"the source's folder {src}: copy the file into the folder (a Hugging Face cache "
        f"snapshot links into its blobs/: use hf download --local-dir)\n",
    )
    assert not (store / ".modelstore/v1/manifest.json").exists()
    (src / "sub" / "leak.json").unlink()
    (src / "outside").symlink_to(secret.parent, target_is_directory=True)
    out = seed(f"file://{src}", "v1", store, *JSON_AND_SHARDS)
    assert "outside is a symbolic link to " in out.stderr


def test_a_file_source_follows_links_inside_its_folder_and_walks_a_loop_once(tmp_path: Path):
    src = make_model(tmp_path / "src")
    (src / "alias.json").symlink_to(src / "config.json")
    (src / "sub" / "up").symlink_to(src, target_is_directory=True)  # a loop back to the top
    files = [f.path for f in open_source(f"file://{src}", "v1").files()]
    assert "alias.json" in files and "sub/tokenizer_config.json" in files
    assert not any(p.startswith("sub/up/") for p in files)


# --- 13: include is a list, recorded, matched as huggingface_hub matches it ---------------


@pytest.mark.parametrize(
    ("path", "patterns", "taken"),
    [
        # huggingface_hub's filter_repo_objects: fnmatch over the whole path ("*" crosses
        # "/"), and _add_wildcard_to_directories: a pattern ending in "/" takes the folder.
        ("onnx/model.onnx", ["onnx/"], True),
        ("onnx/sub/weights.bin", ["onnx/"], True),
        ("onnx.json", ["onnx/"], False),
        ("other/onnx/model.onnx", ["onnx/"], False),
        ("sub/config.json", ["*.json"], True),
        ("Model.SAFETENSORS", ["*.safetensors"], False),
        ("anything", [], True),
    ],
)
def test_include_matches_as_huggingface_hub_does(path: str, patterns: list[str], taken: bool):
    from pulumi_modelstore.model.sources import included

    assert included(path, patterns) is taken


def test_an_include_folder_pattern_seeds_the_folder(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    (src / "onnx" / "deep").mkdir(parents=True)
    (src / "onnx" / "model.onnx").write_bytes(b"onnx")
    (src / "onnx" / "deep" / "data.bin").write_bytes(b"data")
    result = seed_mod.seed(
        open_source(f"file://{src}", "v1"), tmp_path / "store", include=["onnx/"]
    )
    assert result.files == 2
    assert manifest_of(tmp_path / "store")["include"] == ["onnx/"]


def test_include_given_as_one_string_is_refused(tmp_path: Path) -> None:
    from pulumi_modelstore.model.sources import SourceError

    src = make_model(tmp_path / "src")
    with pytest.raises(SourceError) as caught:
        seed_mod.seed(open_source(f"file://{src}", "v1"), tmp_path / "store", include="*.json")
    assert str(caught.value) == (
        "include must be a list of fnmatch patterns such as ['*.safetensors', 'onnx/'] (a "
        "string would be read one character at a time), got '*.json'"
    )
    assert not (tmp_path / "store").exists()


def test_the_manifest_records_include_and_a_changed_one_reseeds_or_is_refused(tmp_path):
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    store.mkdir()
    source = open_source(f"file://{src}", "v1")
    first = seed_mod.seed(source, store, include=["*.safetensors", "*.json", "*.json"])
    assert manifest_of(store)["include"] == ["*.json", "*.safetensors"]
    # The same patterns in another order: the same selection, nothing to do.
    again = seed_mod.seed(source, store, include=["*.json", "*.safetensors"])
    assert (again.seeded, again.digest) == (False, first.digest)
    # Readers mount it: its files are not replaced under them; the reason is given.
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, store, include=["*.safetensors"], in_use=["v1"])
    assert str(caught.value) == (
        "revision v1 is published with include ['*.json', '*.safetensors'] and readers mount "
        "it; include is now ['*.safetensors']: a published revision's files are not replaced "
        "under its readers (set include back, or seed the new selection as another revision)"
    )
    assert manifest_of(store)["digest"] == first.digest
    # No reader mounts it: seeded anew with the new selection.
    anew = seed_mod.seed(source, store, include=["*.safetensors"])
    assert anew.seeded and anew.files == 2
    assert sorted(p.name for p in (store / "revisions/v1").iterdir()) == [
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ]
    assert verify(store, "v1", sample=0).hashed == 2


# --- 12 and 14: seeds that overlap, die and run again -------------------------------------

REPO_FILES = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
    "model-00001-of-00003.safetensors": os.urandom(120_000),
    "model-00002-of-00003.safetensors": os.urandom(110_000),
    "model-00003-of-00003.safetensors": os.urandom(100_000),
}
LAST = "model-00003-of-00003.safetensors"


class SlowHub(StubHandler):
    """The Hub's tree and resolve endpoints for org/llama at SHA, each file's bytes sent
    after ``delay`` seconds, counting what was served; ``lies``: path -> an LFS sha256 the
    tree publishes instead of the real one."""

    delay = 0.0
    lies: ClassVar[dict[str, str]] = {}
    served: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        tree = f"/api/models/org/llama/tree/{SHA}?recursive=true"
        resolve = f"/org/llama/resolve/{SHA}/"
        if self.path == tree:
            entries = [tree_entry(p, d, self.lies.get(p)) for p, d in REPO_FILES.items()]
            self.reply_json(200, entries)
        elif self.path.startswith(resolve) and self.path[len(resolve) :] in REPO_FILES:
            name = self.path[len(resolve) :]
            self.served.append(name)
            time.sleep(self.delay)
            body = REPO_FILES[name]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)


@pytest.fixture
def slow_hub() -> Iterator[str]:
    SlowHub.delay, SlowHub.lies, SlowHub.served = 0.0, {}, []
    with serving(SlowHub) as port:
        yield f"http://127.0.0.1:{port}"


def seed_argv(hub: str, store: Path, *extra: str) -> list[str]:
    """The bundled seed program's command line for org/llama at SHA into ``store``."""
    args = ["--source", "hf://org/llama", "--revision", SHA, "--dest", str(store)]
    return [
        sys.executable,
        *bundle.command("seed", str(BUNDLE[0]))[1:],
        *args,
        "--hf-endpoint",
        hub,
        "--termination-log",
        "",
        *extra,
    ]


def test_two_seeds_of_one_revision_at_once_download_and_publish_it_once(slow_hub, tmp_path):
    """A replacement pod starting while the old one still runs: the second run waits on the
    revision's lock, then finds the revision published by the first."""
    SlowHub.delay = 0.3
    store = tmp_path / "store"
    store.mkdir()
    first = subprocess.Popen(seed_argv(slow_hub, store), stdout=PIPE, stderr=PIPE, text=True)
    deadline = time.monotonic() + 30
    while not SlowHub.served and time.monotonic() < deadline:
        time.sleep(0.02)  # the first run is downloading
    second = subprocess.Popen(seed_argv(slow_hub, store), stdout=PIPE, stderr=PIPE, text=True)
    (out1, err1), (out2, err2) = first.communicate(timeout=60), second.communicate(timeout=60)
    assert (first.returncode, second.returncode) == (0, 0), err1 + err2
    assert out1.startswith(f"ok: seeded {SHA}: 4 files")
    assert out2.startswith(f"ok: already seeded, nothing to do: {SHA}: 4 files")
    assert err2.startswith("waiting: run ")
    assert sorted(SlowHub.served) == sorted(REPO_FILES)  # each file downloaded once
    assert verify(store, SHA, sample=0).hashed == 4
    assert list((store / ".modelstore/partial").iterdir()) == []


def test_a_rerun_keeps_the_files_a_failed_run_checked(slow_hub, tmp_path):
    SlowHub.lies = {LAST: "a" * 64}
    store = tmp_path / "store"
    store.mkdir()
    failed = subprocess.run(seed_argv(slow_hub, store), capture_output=True, text=True)
    assert failed.returncode == 1
    assert failed.stderr.startswith(f"FAILED: sha256 mismatch in {LAST}")
    SlowHub.lies, SlowHub.served = {}, []
    again = subprocess.run(seed_argv(slow_hub, store), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert again.stderr == "kept 3 files an earlier run downloaded and checked\n"
    assert SlowHub.served == [LAST]  # only the file the failed run had not checked
    assert verify(store, SHA, sample=0).hashed == 4
    assert list((store / ".modelstore/partial").iterdir()) == []


def test_a_file_the_source_now_lists_otherwise_is_downloaded_again(slow_hub, tmp_path):
    SlowHub.lies = {LAST: "a" * 64}
    store = tmp_path / "store"
    store.mkdir()
    assert subprocess.run(seed_argv(slow_hub, store), capture_output=True).returncode == 1
    REPO_FILES["config.json"], saved = b'{"changed": true}', REPO_FILES["config.json"]
    try:
        SlowHub.lies, SlowHub.served = {}, []
        again = subprocess.run(seed_argv(slow_hub, store), capture_output=True, text=True)
    finally:
        REPO_FILES["config.json"] = saved
    assert again.returncode == 0, again.stderr
    assert sorted(SlowHub.served) == ["config.json", LAST]


def test_a_stale_lock_is_taken_over_and_a_live_one_waited_for(slow_hub, tmp_path):
    store = tmp_path / "store"
    lock = store / ".modelstore/partial" / SHA / "lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("a-pod-that-died\n")
    old = time.time() - 1000
    os.utime(lock, (old, old))
    out = subprocess.run(seed_argv(slow_hub, store), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "took over the lock of run a-pod-that-died: no heartbeat for 300 s\n"
    assert not lock.exists()


def test_a_run_whose_lock_was_taken_over_publishes_nothing(tmp_path):
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    source = open_source(f"file://{src}", "v1")
    real_open = source.open

    def taken_over(file: Any) -> Any:
        (store / ".modelstore/partial/v1/lock").write_text("another-run\n")
        return real_open(file)

    source.open = taken_over  # type: ignore[method-assign]
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, store, include=INCLUDE)
    assert str(caught.value) == (
        "revision v1: another run took this run's lock over (no heartbeat for 300 s): nothing "
        "published, that run publishes it"
    )
    assert not (store / "revisions/v1").exists()
    assert (store / ".modelstore/partial/v1/lock").read_text() == "another-run\n"


def test_a_revision_directory_that_appears_meanwhile_is_not_replaced(tmp_path):
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    source = open_source(f"file://{src}", "v1")
    real_open = source.open

    def published_meanwhile(file: Any) -> Any:
        (store / "revisions/v1").mkdir(parents=True, exist_ok=True)
        (store / "revisions/v1/other.bin").write_bytes(b"another run's file")
        return real_open(file)

    source.open = published_meanwhile  # type: ignore[method-assign]
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, store, include=INCLUDE)
    assert str(caught.value) == (
        "revisions/v1 appeared while this run downloaded (another run published it without "
        "the lock): it is not replaced; nothing published"
    )
    assert [p.name for p in (store / "revisions/v1").iterdir()] == ["other.bin"]


def test_a_failed_revisions_partial_folder_goes_with_the_next_seed(slow_hub, tmp_path):
    SlowHub.lies = {LAST: "a" * 64}
    store = tmp_path / "store"
    store.mkdir()
    assert subprocess.run(seed_argv(slow_hub, store), capture_output=True).returncode == 1
    assert (store / ".modelstore/partial" / SHA).is_dir()
    # The revision is given up: the next seed, of another revision, removes what it left.
    seed_local(make_model(tmp_path / "src"), store, "v2")
    assert list((store / ".modelstore/partial").iterdir()) == []


def test_the_model_jobs_start_a_replacement_pod_only_once_the_old_one_stopped() -> None:
    from tests.conftest import plan
    from tests.test_backend_contract import build

    model = {"source": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": SHA}
    p = plan(lambda: build("local", model=model), fill=True)
    jobs = p.by_type("kubernetes:batch/v1:Job")
    assert len(jobs) >= 2  # the seed and a verification Job per reader
    assert {j["inputs"]["spec"]["podReplacementPolicy"] for j in jobs} == {"Failed"}


# --- 15: S3 objects checked by every whole-object checksum S3 keeps -----------------------


@pytest.mark.parametrize(
    ("spec", "check"),
    [
        # The CRC catalogue's check values over b"123456789" (reveng.sourceforge.io).
        ("CRC32C", "e3069283"),
        ("CRC64NVME", "ae8b14860a799888"),
    ],
)
def test_the_pure_python_crcs_give_the_catalogue_check_values(spec: str, check: str) -> None:
    from pulumi_modelstore.model import crc

    running = crc.Crc(getattr(crc, spec))
    running.update(b"123456789")
    assert running.hexdigest() == check
    # Large blocks go through the lanes: the same value as a byte at a time, in any pieces.
    data = os.urandom(3 * crc.SMALL + 12345)
    bytewise = getattr(crc, spec).bytewise(getattr(crc, spec).mask, data)
    for cut in (0, 1, crc.LANES + 7, crc.SMALL, len(data)):
        pieces = crc.Crc(getattr(crc, spec))
        pieces.update(data[:cut])
        pieces.update(data[cut:])
        assert pieces.value == bytewise ^ getattr(crc, spec).mask


def b64(hex_digest: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(hex_digest)).decode()


MD5 = hashlib.md5(b"x").hexdigest()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"ETag": f'"{MD5}"'}, {"md5": MD5}),
        ({"ETag": f'"{MD5}-3"'}, {}),  # a multipart upload's ETag: not an MD5 of the bytes
        ({"ETag": f'"{MD5}"', "ServerSideEncryption": "aws:kms"}, {}),
        ({"ETag": f'"{MD5}"', "ServerSideEncryption": "aws:kms:dsse"}, {}),
        ({"ETag": f'"{MD5}"', "SSECustomerAlgorithm": "AES256"}, {}),
        ({"ETag": f'"{MD5}"', "ServerSideEncryption": "AES256"}, {"md5": MD5}),
        ({"ChecksumCRC32": b64("0a0b0c0d"), "ChecksumType": "FULL_OBJECT"}, {"crc32": "0a0b0c0d"}),
        ({"ChecksumCRC32C": b64("0a0b0c0d"), "ChecksumType": "COMPOSITE"}, {}),
        ({"ChecksumCRC32C": b64("0a0b0c0d") + "-2"}, {}),
        ({"ChecksumCRC64NVME": b64("00" * 7 + "01")}, {"crc64nvme": "00" * 7 + "01"}),
    ],
)
def test_s3_headers_give_every_whole_object_digest(headers: dict, expected: dict) -> None:
    from pulumi_modelstore.model.aws import checksums
    from pulumi_modelstore.model.sources import s3_digests

    wire = {
        {"ETag": "ETag", "ServerSideEncryption": "x-amz-server-side-encryption",
         "SSECustomerAlgorithm": "x-amz-server-side-encryption-customer-algorithm",
         "ChecksumType": "x-amz-checksum-type"}.get(k, "x-amz-checksum-" + k[8:].lower()): v
        for k, v in headers.items()
    }  # fmt: skip
    found = {k: v for k, v in s3_digests(checksums(wire)).items() if v is not None}
    assert found == expected


@pytest.mark.parametrize("name", ["crc32", "crc32c", "crc64nvme"])
def test_an_object_whose_bytes_do_not_give_its_crc_is_refused(name: str, tmp_path: Path) -> None:
    from pulumi_modelstore.model import crc
    from pulumi_modelstore.model.sources import SourceFile
    from pulumi_modelstore.model.transfer import FileDigests, SeedError

    data = os.urandom(200_000)
    right = {
        "crc32": f"{zlib.crc32(data):08x}",
        "crc32c": _crc_hex(crc.CRC32C, data),
        "crc64nvme": _crc_hex(crc.CRC64NVME, data),
    }[name]
    good = FileDigests(SourceFile("w.bin", len(data), **{name: right}), "w.bin")
    good.update(data)
    assert good.entry()["sha256"] == hashlib.sha256(data).hexdigest()
    wrong = "0" * len(right)
    bad = FileDigests(SourceFile("w.bin", len(data), **{name: wrong}), "w.bin")
    bad.update(data)
    with pytest.raises(SeedError) as caught:
        bad.entry()
    assert str(caught.value) == (
        f"{name} mismatch in w.bin: the source publishes {wrong}, the bytes that arrived give "
        f"{right}"
    )


def _crc_hex(spec: Any, data: bytes) -> str:
    from pulumi_modelstore.model import crc

    running = crc.Crc(spec)
    running.update(data)
    return running.hexdigest()


def test_the_lock_is_made_when_its_folder_goes_between_mkdir_and_create(tmp_path, monkeypatch):
    """A run finishing removes the revision's partial folder once its lock is released, which
    can fall between a waiting run's mkdir and its exclusive create."""
    from pulumi_modelstore.model import runs

    lock = runs.RevisionLock(tmp_path / "partial" / "v1" / "lock", "waiter")
    real_open = os.open
    calls = []

    def folder_gone_once(path: Any, flags: int, *args: Any) -> int:
        if not calls:
            calls.append(path)
            (tmp_path / "partial" / "v1").rmdir()
        return real_open(path, flags, *args)

    monkeypatch.setattr(runs.os, "open", folder_gone_once)
    with lock:
        assert (tmp_path / "partial" / "v1" / "lock").read_text() == "waiter\n"
    assert calls


def test_the_same_files_published_meanwhile_count_as_done(tmp_path: Path) -> None:
    """Another run (one the lock did not hold: an older program) published the very files
    this run downloaded: nothing is replaced, and the seed reports the revision as there."""
    src = make_model(tmp_path / "src")
    elsewhere = tmp_path / "elsewhere"
    expected = seed_local(src, elsewhere).digest  # the same files give the same digest
    store = tmp_path / "store"
    source = open_source(f"file://{src}", "v1")
    real_open = source.open
    # The transfer's workers open files at once: the other run publishes once.
    other_run = threading.Lock()

    def published_meanwhile(file: Any) -> Any:
        with other_run:
            if not (store / "revisions/v1").exists():
                shutil.copytree(elsewhere / "revisions/v1", store / "revisions/v1")
                shutil.copytree(elsewhere / ".modelstore/v1", store / ".modelstore/v1")
        return real_open(file)

    source.open = published_meanwhile  # type: ignore[method-assign]
    result = seed_mod.seed(source, store, include=INCLUDE)
    assert (result.seeded, result.digest) == (False, expected)
    assert verify(store, "v1", sample=0).hashed == 5
    assert list((store / ".modelstore/partial").iterdir()) == []


def test_an_object_store_rerun_keeps_the_files_a_failed_run_checked(tmp_path: Path) -> None:
    """--publish manifest-last writes straight into revisions/<rev>/: a run that fails before
    its manifest (here, files that are not the pinned ones) leaves its files and a record per
    file; the rerun keeps them, downloads what changed, and removes what is no longer listed."""
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    source = open_source(f"file://{src}", "v1")
    wrong = "sha256:" + "0" * 64
    with pytest.raises(seed_mod.SeedError, match="nothing published"):
        seed_mod.seed(
            source, store, include=INCLUDE, publish="manifest-last", manifest_sha256=wrong
        )
    assert len(list((store / ".modelstore/partial/v1/done").iterdir())) == 5
    (src / "config.json").write_bytes(b'{"changed": true}')
    (store / "revisions/v1/stray.bin").write_bytes(b"left by nobody knows")
    opened: list[str] = []
    real_open = source.open

    def spy(file: Any) -> Any:
        opened.append(file.path)
        return real_open(file)

    source.open = spy  # type: ignore[method-assign]
    result = seed_mod.seed(source, store, include=INCLUDE, publish="manifest-last")
    assert result.seeded and result.files == 5
    assert sorted(set(opened)) == ["config.json"]  # only the file the source changed
    assert not (store / "revisions/v1/stray.bin").exists()
    assert verify(store, "v1", sample=0).hashed == 5
    assert not (store / ".modelstore/partial/v1").exists()
