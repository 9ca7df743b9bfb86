"""The seed and verify programs (pulumi_modelstore/model/), run for real on small data made
here: a local directory, an s3:// bucket served by moto on the loopback address, and a stub of
the Hugging Face Hub's tree and resolve endpoints on the loopback address."""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pulumi_modelstore.model import bundle
from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.layout import Layout
from pulumi_modelstore.model.sources import (
    SourceError,
    check_revision,
    open_source,
    parse_source,
)
from pulumi_modelstore.model.verify import VerifyError, verify
from tests.conftest import ROOT
from tests.test_model_bundle import materialize
from tests.tools import StubHandler, moto_server, serving

SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
MODEL = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
    "model-00001-of-00002.safetensors": os.urandom(300_000),
    "model-00002-of-00002.safetensors": os.urandom(200_000),
    "tokenizer.json": b'{"version": "1.0"}',
    "sub/tokenizer_config.json": b"{}",
    "README.md": b"# not included",
}
INCLUDE = ["*.safetensors", "*.json"]
SHARD = "model-00001-of-00002.safetensors"


# Where the bundle (the programs as a Job mounts them) is laid out for this module's tests.
BUNDLE: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    BUNDLE.append(materialize(tmp_path_factory.mktemp("bundle")))
    yield
    BUNDLE.clear()


def run(module: str, *args: str, env: dict[str, str] | None = None, installed: bool = False):
    """``pulumi_modelstore.model.<module> ...`` as a program, by default as a Job runs it: from
    the bundle with ``bundle.command`` (``python -I -S``: the standard library only, and no
    import of pulumi by the library's ``__init__``, a seventh of a second per run).
    ``installed``: ``python -m`` with this repository's package on the path instead."""
    if installed:
        argv = [sys.executable, "-m", f"pulumi_modelstore.model.{module}", *args]
    else:
        argv = [sys.executable, *bundle.command(module, str(BUNDLE[0]))[1:], *args]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=120,
    )


def seed(source: str, revision: str, dest: Path, *extra: str, log: str = "", **kw: Any):
    """``python -m pulumi_modelstore.model.seed`` of ``source`` at ``revision`` into ``dest``
    (``extra``: more flags; ``log``: the termination log, none by default)."""
    args = ("--source", source, "--revision", revision, "--dest", str(dest))
    return run("seed", *args, *extra, "--termination-log", log, **kw)


JSON_AND_SHARDS = ("--include", "*.safetensors", "--include", "*.json")


def verify_seeded(root: Path, *extra: str, log: str = ""):
    """``python -m pulumi_modelstore.model.verify`` of revision v1 under ``root``."""
    return run("verify", "--root", str(root), "--revision", "v1", *extra, "--termination-log", log)


def make_model(where: Path) -> Path:
    for name, data in MODEL.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_bytes(data)
    return where


def seed_local(src: Path, store: Path, revision: str = "v1", **kw: Any) -> seed_mod.SeedResult:
    source = open_source(f"file://{src}", revision)
    return seed_mod.seed(source, store, include=INCLUDE, **kw)


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    src = make_model(tmp_path / "src")
    (tmp_path / "store").mkdir()
    seed_local(src, tmp_path / "store")
    return tmp_path / "store"


# --- the source URI parser ---------------------------------------------------------------

FORMS = (
    "hf://<org>/<repo>, s3://<bucket>/<prefix>, gs://<bucket>/<prefix>, "
    "az://<account>/<container>/<prefix> or file:///<absolute path>"
)


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("ftp://host/x", f"source must be {FORMS}, got 'ftp://host/x'"),
        ("meta-llama/Llama", f"source must be {FORMS}, got 'meta-llama/Llama'"),
        (
            "hf://meta-llama",
            "source must be hf://<org>/<repo> (the organisation and the "
            "repository, nothing after them), got 'hf://meta-llama'",
        ),
        (
            "hf://a/b/c",
            "source must be hf://<org>/<repo> (the organisation and the "
            "repository, nothing after them), got 'hf://a/b/c'",
        ),
        ("s3:///prefix", "source must be s3://<bucket>/<prefix> (a bucket), got 's3:///prefix'"),
        ("gs://", "source must be gs://<bucket>/<prefix> (a bucket), got 'gs://'"),
        (
            "az://account",
            "source must be az://<account>/<container>/<prefix> (the storage "
            "account and the container at least), got 'az://account'",
        ),
        (
            "file://relative/dir",
            "source must be file:///<absolute path>, got 'file://relative/dir'",
        ),
    ],
)
def test_a_bad_source_uri_is_refused_with_what_is_allowed(uri: str, message: str) -> None:
    with pytest.raises(SourceError) as caught:
        parse_source(uri)
    assert str(caught.value) == message


def test_source_uris_parse_into_their_parts() -> None:
    assert parse_source("az://acct/models/llama/3/").prefix == "llama/3"
    assert parse_source("az://acct/models/llama/3/").container == "models"
    assert parse_source("s3://bucket").prefix == ""
    assert parse_source("s3://bucket/a/b/").location == "bucket"
    assert parse_source("hf://meta-llama/Llama-3.1-8B").location == "meta-llama/Llama-3.1-8B"


UNPINNED_HF_REVISION = (
    "revision must be a commit SHA (40 lowercase hexadecimal characters) for a Hugging "
    "Face source: a branch or tag moves; pin the commit it points to (the repository's "
    "commit history shows it), got {!r}"
)
NOT_ONE_PATH_COMPONENT = (
    "revision must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or "
    "digit, other than 'partial' (it names the directories revisions/<revision>/ and "
    ".modelstore/<revision>/, beside .modelstore/partial/), got {!r}"
)


@pytest.mark.parametrize(
    ("scheme", "revision", "message"),
    # A Hugging Face revision must be pinned (the hint says how); any other is a label that
    # must be one path component.
    [("hf", r, UNPINNED_HF_REVISION) for r in ["main", "v1.0", SHA[:12], SHA.upper()]]
    + [("s3", r, NOT_ONE_PATH_COMPONENT) for r in ["../up", "a/b", "", ".hidden", "partial"]],
)
def test_a_refused_revision_says_what_is_allowed(scheme: str, revision: str, message: str):
    with pytest.raises(SourceError) as caught:
        check_revision(scheme, revision)
    assert str(caught.value) == message.format(revision)


def test_the_model_package_imports_only_the_standard_library_at_import_time() -> None:
    # The Job image needs nothing extra: every source speaks HTTP through urllib and
    # http.client (model/transfer.py), in the image's Python with the standard library only.
    # Every import counts, a function's own too (one run only on some path would still
    # fail that Job).
    for module in (ROOT / "pulumi_modelstore" / "model").glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top == "__future__" or top in sys.stdlib_module_names, (module, name)


# --- seed from a local directory, verify, and the CLI entries ----------------------------


def test_seed_and_verify_run_as_programs(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    store.mkdir()
    log = tmp_path / "termination-log"
    includes = [a for p in INCLUDE for a in ("--include", p)]
    seeded = seed(f"file://{src}", "v1", store, *includes, log=str(log), installed=True)
    assert seeded.returncode == 0, seeded.stderr
    manifest = json.loads((store / ".modelstore/v1/manifest.json").read_text())
    assert seeded.stdout.strip() == (
        f"ok: seeded v1: 5 files, 0.0 GiB, manifest {manifest['digest']}"
    )
    assert log.read_text() == seeded.stdout
    assert [f["path"] for f in manifest["files"]] == sorted(n for n in MODEL if n != "README.md")
    for entry in manifest["files"]:
        data = MODEL[entry["path"]]
        assert entry == {
            "path": entry["path"],
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    assert (store / "revisions/v1" / SHARD).read_bytes() == MODEL[SHARD]
    assert not (store / "revisions/v1/README.md").exists()
    assert not (store / ".modelstore/partial/v1").exists()

    verified = run(
        "verify",
        *("--root", str(store), "--revision", "v1", "--termination-log", str(log)),
        installed=True,
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("ok: 5 files, 0.0 GiB, sha256 all, read ")
    assert verified.stdout.endswith(" MB/s\n")
    assert log.read_text() == verified.stdout


def test_verify_reads_the_revision_and_manifest_where_a_reader_pod_mounts_them(
    seeded: Path, tmp_path: Path
) -> None:
    # A reader pod sees revisions/<rev> at its mount path (a subPath), not the store root.
    files = tmp_path / "mnt-models"
    manifest = tmp_path / "mnt-manifest" / "manifest.json"
    shutil.copytree(seeded / "revisions/v1", files)
    shutil.copytree(seeded / ".modelstore/v1", manifest.parent)
    out = run(
        "verify",
        "--files",
        str(files),
        "--manifest",
        str(manifest),
        "--revision",
        "v1",
        "--termination-log",
        "",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok: 5 files, 0.0 GiB, sha256 all, read ")
    (files / "config.json").unlink()
    with pytest.raises(VerifyError, match=r"^missing file config.json$"):
        verify(None, "v1", files_dir=files, manifest_path=manifest)
    out = run("verify", "--files", str(files), "--revision", "v1", "--termination-log", "")
    assert out.returncode == 2
    assert out.stderr.endswith(
        "error: --root is required unless both --files and --manifest are given\n"
    )


def test_a_rerun_of_seed_finds_the_manifest_and_does_nothing(seeded: Path, tmp_path: Path):
    before = (seeded / "revisions/v1" / SHARD).stat()
    manifest = (seeded / ".modelstore/v1/manifest.json").read_bytes()
    again = seed(f"file://{tmp_path / 'src'}", "v1", seeded, *JSON_AND_SHARDS)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("ok: already seeded, nothing to do: v1: 5 files")
    after = (seeded / "revisions/v1" / SHARD).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (seeded / ".modelstore/v1/manifest.json").read_bytes() == manifest


def test_a_revision_directory_without_its_manifest_is_seeded_again(seeded: Path, tmp_path):
    # A run that died between the rename and the manifest: the revision is not published.
    (seeded / ".modelstore/v1/manifest.json").unlink()
    (seeded / "revisions/v1" / SHARD).write_bytes(b"torn")
    result = seed_local(tmp_path / "src", seeded)
    assert result.seeded
    assert (seeded / "revisions/v1" / SHARD).read_bytes() == MODEL[SHARD]


def test_keep_revisions_removes_only_old_revisions_no_reader_mounts(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    store.mkdir()
    for revision in ("r1", "r2", "r3"):
        seed_local(src, store, revision, keep_revisions=3)
    result = seed_local(src, store, "r4", keep_revisions=2, in_use=["r1"])
    # Kept: r4 (just seeded) and r1 (a reader mounts it); r2 and r3 go, newest first.
    assert result.removed == ("r3", "r2")
    assert Layout(store).published() == ["r1", "r4"]
    assert sorted(p.name for p in (store / ".modelstore").iterdir()) == ["partial", "r1", "r4"]
    assert list((store / ".modelstore/partial").iterdir()) == []
    result = seed_local(src, store, "r5", keep_revisions=2)
    assert result.removed == ("r1",)
    assert Layout(store).published() == ["r4", "r5"]


def test_manifest_last_publish_writes_in_place_and_publishes_with_the_manifest(
    tmp_path: Path,
) -> None:
    # Object-store mounts cannot rename a directory: files go straight to revisions/<rev>/.
    src = make_model(tmp_path / "src")
    store = tmp_path / "store"
    store.mkdir()
    source = open_source(f"file://{src}", "v1")
    real_open = source.open
    opened: list[str] = []

    def spy(file: Any) -> Any:
        # While files arrive, the revision has no manifest: readers' gate keeps them out.
        assert not (store / ".modelstore/v1/manifest.json").exists()
        opened.append(file.path)
        return real_open(file)

    source.open = spy  # type: ignore[method-assign]
    result = seed_mod.seed(source, store, include=INCLUDE, publish="manifest-last")
    assert result.seeded and len(opened) == 5
    assert not (store / ".modelstore/partial").exists()
    assert verify(store, "v1", sample=0).hashed == 5
    assert not seed_mod.seed(source, store, include=INCLUDE, publish="manifest-last").seeded
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, store, publish="copy")
    assert str(caught.value) == "publish must be one of rename, manifest-last, got 'copy'"


def test_imported_publish_hashes_what_the_storage_put_there_and_opens_no_source(
    tmp_path: Path,
) -> None:
    """FSx's association imports the source into revisions/<rev>/: the seed Job, run as a
    program with ``--publish imported``, only hashes those files and writes the manifest (an
    s3:// source it never opens: no boto3, no credentials); the verify program then passes,
    a rerun does nothing, and an empty revision directory fails with the cause."""
    store = tmp_path / "store"
    make_model(store / "revisions" / "v1")
    uri = "s3://no-such-bucket-here/llama"
    args = ("--publish", "imported")
    log = tmp_path / "log"
    done = seed(uri, "v1", store, *args, log=str(log))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: seeded v1: 6 files, ")
    manifest = json.loads((store / ".modelstore/v1/manifest.json").read_text())
    assert manifest["source"] == uri
    # Every file imported: readers see them all, so the manifest lists them all.
    assert {f["path"] for f in manifest["files"]} == set(MODEL)
    assert verify_seeded(store, "--all").returncode == 0
    again = seed(uri, "v1", store, *args)
    assert again.stdout.startswith("ok: already seeded, nothing to do: v1: 6 files")
    empty = seed(uri, "v2", store, *args, log=str(log))
    assert empty.returncode == 1
    line = (
        "FAILED: revisions/v2 holds no file: has the storage imported "
        "s3://no-such-bucket-here/llama there?"
    )
    assert empty.stderr.strip() == line == log.read_text().strip()
    narrowed = seed(uri, "v1", store, *args, *JSON_AND_SHARDS)
    assert narrowed.stderr == (
        "FAILED: include patterns (*.safetensors, *.json) do not apply to --publish imported: "
        "the storage imported every file under s3://no-such-bucket-here/llama, and readers see "
        "them all; publish only the files to serve there\n"
    )
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(open_source(f"file://{store}", "v1"), store, publish="imported")
    assert str(caught.value) == "publish must be one of rename, manifest-last, got 'imported'"


def test_a_revision_label_seeded_again_from_another_source_is_replaced_unless_in_use(
    seeded: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "model.safetensors").write_bytes(b"new")
    source = open_source(f"file://{other}", "v1")
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, seeded, in_use=["v1"])
    assert str(caught.value) == (
        f"revision v1 is published from file://{tmp_path / 'src'} and readers mount it; seed "
        f"file://{other} as a new revision instead of replacing it under them"
    )
    assert (seeded / "revisions/v1" / SHARD).exists()
    real_open = source.open

    def spy(file: Any) -> Any:
        # The old manifest is gone before anything is replaced: no reader's gate opens on it.
        assert not (seeded / ".modelstore/v1/manifest.json").exists()
        return real_open(file)

    source.open = spy  # type: ignore[method-assign]
    result = seed_mod.seed(source, seeded)
    assert result.seeded
    assert sorted(p.name for p in (seeded / "revisions/v1").iterdir()) == ["model.safetensors"]
    assert json.loads((seeded / ".modelstore/v1/manifest.json").read_text())["source"] == (
        f"file://{other}"
    )


def test_keep_revisions_must_be_one_or_more(tmp_path: Path) -> None:
    with pytest.raises(seed_mod.SeedError, match=r"^keep_revisions must be 1 or more, got 0$"):
        seed_local(make_model(tmp_path), tmp_path, keep_revisions=0)


def test_no_matching_file_is_refused(tmp_path: Path) -> None:
    src = make_model(tmp_path / "src")
    source = open_source(f"file://{src}", "v1")
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, tmp_path / "store", include=["*.gguf"])
    assert str(caught.value) == (
        f"source file://{src} at v1 has no file matching the include patterns *.gguf"
    )


# --- verify: each failure caught with its message and exit status ------------------------


def test_verify_catches_one_corrupt_byte(seeded: Path, tmp_path: Path) -> None:
    path = seeded / "revisions/v1" / SHARD
    data = bytearray(path.read_bytes())
    data[1234] ^= 0x01
    path.write_bytes(bytes(data))
    log = tmp_path / "log"
    out = verify_seeded(seeded, "--label", "llama/inference", log=str(log))
    assert out.returncode == 6
    assert out.stderr == f"FAILED: llama/inference: sha256 mismatch in {SHARD}\n"
    assert log.read_text() == out.stderr


def test_verify_catches_a_missing_file(seeded: Path) -> None:
    (seeded / "revisions/v1/tokenizer.json").unlink()
    out = verify_seeded(seeded, "--label", "llama/batch")
    assert (out.returncode, out.stderr) == (4, "FAILED: llama/batch: missing file tokenizer.json\n")


def test_verify_catches_a_size_mismatch(seeded: Path) -> None:
    with (seeded / "revisions/v1" / SHARD).open("ab") as f:
        f.write(b"x")
    out = verify_seeded(seeded)
    assert (out.returncode, out.stderr) == (
        5,
        f"FAILED: size mismatch in {SHARD}: the manifest says 300000 bytes, found 300001\n",
    )


def test_verify_refuses_an_unpublished_or_torn_manifest(seeded: Path) -> None:
    with pytest.raises(VerifyError, match=r"^revision v2 is not published: no "):
        verify(seeded, "v2")
    path = seeded / ".modelstore/v1/manifest.json"
    path.write_text(path.read_text().replace('"size": 300000', '"size": 3'))
    with pytest.raises(VerifyError, match=r"does not match its own digest$"):
        verify(seeded, "v1")


@pytest.fixture
def world_readable_store() -> Iterator[Path]:
    # pytest's tmp_path is private to its user (0700): a non-root uid could not reach it.
    where = Path(tempfile.mkdtemp(prefix="modelstore-verify-"))
    where.chmod(0o755)
    try:
        src = make_model(where / "src")
        (where / "store").mkdir()
        seed_local(src, where / "store")
        for path in (where / "store").rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield where / "store"
    finally:
        shutil.rmtree(where)


def test_verify_catches_permission_denied(world_readable_store: Path) -> None:
    # Root reads a mode-000 file anyway (CAP_DAC_OVERRIDE), so as root the program drops to
    # nobody (uid 65534), the way a reader pod runs non-root. It imports first, as root: the
    # interpreter lives under /root (0700), which nobody cannot reach.
    store = world_readable_store
    (store / "revisions/v1" / SHARD).chmod(0o000)
    args = ["--root", str(store), "--revision", "v1", "--sample", "1", "--termination-log", ""]
    if os.getuid() == 0:
        drop = (
            "import os, sys\n"
            "from pulumi_modelstore.model import verify\n"
            "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
            "sys.exit(verify.main(sys.argv[1:]))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", drop, *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    else:
        out = run("verify", *args)
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stderr == f"FAILED: permission denied reading {SHARD}\n"


def test_verify_hashes_a_budget_of_random_files_above_the_whole_model_size(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pulumi_modelstore.model import verify as verify_mod

    monkeypatch.setattr(verify_mod, "WHOLE_MODEL_BYTES", 250_000)
    manifest = json.loads((seeded / ".modelstore/v1/manifest.json").read_text())
    for _ in range(20):
        chosen = verify_mod.choose(manifest["files"], None)
        total = sum(e["size"] for e in chosen)
        # Files are added until the budget is reached: never short of it, never one too many.
        assert total >= 250_000
        assert total - chosen[-1]["size"] < 250_000
    monkeypatch.setattr(verify_mod, "WHOLE_MODEL_BYTES", manifest["total_bytes"])
    assert verify(seeded, "v1").hashed == 5  # at the threshold: the whole model


def test_verify_samples_when_asked(seeded: Path) -> None:
    result = verify(seeded, "v1", sample=2)
    assert (result.files, result.hashed) == (5, 2)
    assert result.line().startswith("ok: 5 files, 0.0 GiB, sha256 2 of 5 files, read ")


# --- s3:// through moto's server on the loopback address ---------------------------------


@pytest.fixture
def moto_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with moto_server() as endpoint:
        for key, value in {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }.items():
            monkeypatch.setenv(key, value)
        yield endpoint


def test_seed_from_s3_served_by_moto(moto_endpoint: str, tmp_path: Path) -> None:
    import boto3

    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="models")
    for name, data in MODEL.items():
        # The shards carry a SHA-256 checksum (seed checks it); the rest do not.
        extra = {"ChecksumAlgorithm": "SHA256"} if name.endswith(".safetensors") else {}
        s3.put_object(Bucket="models", Key=f"llama/{name}", Body=data, **extra)
    s3.put_object(Bucket="models", Key="llama/", Body=b"")  # a folder placeholder
    s3.put_object(Bucket="models", Key="other/x.json", Body=b"{}")

    listed = {f.path: f.sha256 for f in open_source("s3://models/llama", "v1").files()}
    assert listed[SHARD] == hashlib.sha256(MODEL[SHARD]).hexdigest()
    assert listed["config.json"] is None
    assert sorted(listed) == sorted(MODEL)

    store = tmp_path / "store"
    store.mkdir()
    out = seed("s3://models/llama", "2026-12-01", store, *JSON_AND_SHARDS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok: seeded 2026-12-01: 5 files")
    assert verify(store, "2026-12-01", sample=0).hashed == 5


# --- hf:// against a stub of the Hub's endpoints on the loopback address -----------------


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


def tree_entry(path: str, data: bytes, lfs_sha256: str | None = None) -> dict[str, Any]:
    if not path.endswith(".safetensors"):
        return {"type": "file", "path": path, "size": len(data), "oid": git_blob_id(data)}
    return {
        "type": "file",
        "path": path,
        "size": len(data),
        "oid": "f" * 40,
        "lfs": {
            "oid": lfs_sha256 or hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "pointerSize": 134,
        },
    }


class HubStub(StubHandler):
    """The Hub's tree endpoint (two pages, linked) and resolve endpoint for one repo."""

    files: ClassVar[dict[str, bytes]] = {}
    lies: ClassVar[
        dict[str, str]
    ] = {}  # path -> an LFS sha256 the stub publishes instead of the real
    token = "hf_test_token"
    seen_auth: ClassVar[list[str]] = []
    cdn_auth: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        if not self.path.startswith("/cdn/"):
            self.seen_auth.append(self.headers.get("Authorization", ""))
        tree = f"/api/models/org/llama/tree/{SHA}"
        resolve = f"/org/llama/resolve/{SHA}/"
        entries = [tree_entry(p, d, self.lies.get(p)) for p, d in sorted(self.files.items())]
        entries.insert(1, {"type": "directory", "path": "sub", "oid": "d" * 40, "size": 0})
        if self.path == f"{tree}?recursive=true":
            self.reply(
                json.dumps(entries[:3]).encode(),
                link=f'<http://{self.headers["Host"]}{tree}?recursive=true&cursor=2>; rel="next"',
            )
        elif self.path == f"{tree}?recursive=true&cursor=2":
            self.reply(json.dumps(entries[3:]).encode())
        elif self.path == f"{resolve}{SHARD}":
            # The Hub sends LFS bytes from its CDN: another host, which must not get the token.
            port = self.headers["Host"].rsplit(":", 1)[1]
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{port}/cdn/{SHARD}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == f"/cdn/{SHARD}":
            self.cdn_auth.append(self.headers.get("Authorization", ""))
            self.reply(self.files[SHARD])
        elif self.path.startswith(resolve) and self.path[len(resolve) :] in self.files:
            self.reply(self.files[self.path[len(resolve) :]])
        else:
            self.send_error(404)

    def reply(self, body: bytes, link: str | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if link:
            self.send_header("Link", link)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def hub() -> Iterator[str]:
    HubStub.files = dict(MODEL)
    HubStub.lies = {}
    HubStub.seen_auth = []
    HubStub.cdn_auth = []
    with serving(HubStub) as port:
        yield f"http://127.0.0.1:{port}"


def test_seed_from_the_hub_stub_checks_lfs_sha256_and_git_blob_ids(hub: str, tmp_path: Path):
    token_file = tmp_path / "token"
    token_file.write_text(HubStub.token + "\n")
    source = open_source("hf://org/llama", SHA, hf_endpoint=hub, token=HubStub.token)
    listed = {f.path: f for f in source.files()}
    assert sorted(listed) == sorted(MODEL)  # both pages, the directory entry skipped
    assert listed[SHARD].sha256 == hashlib.sha256(MODEL[SHARD]).hexdigest()
    assert listed["config.json"].git_sha1 == git_blob_id(MODEL["config.json"])

    store = tmp_path / "store"
    store.mkdir()
    out = seed(
        "hf://org/llama",
        SHA,
        store,
        *JSON_AND_SHARDS,
        "--token-file",
        str(token_file),
        env={"HF_ENDPOINT": hub},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"ok: seeded {SHA}: 5 files")
    assert set(HubStub.seen_auth) == {f"Bearer {HubStub.token}"}
    assert HubStub.cdn_auth == [""]  # the redirect to another host dropped the token
    assert verify(store, SHA).hashed == 5


def test_seed_refuses_a_hub_file_whose_bytes_do_not_match_its_lfs_sha256(hub: str, tmp_path):
    HubStub.lies = {SHARD: "a" * 64}
    store = tmp_path / "store"
    store.mkdir()
    out = seed("hf://org/llama", SHA, store, "--hf-endpoint", hub)
    assert out.returncode == 1
    assert out.stderr == (
        f"FAILED: sha256 mismatch in {SHARD}: the source publishes {'a' * 64}, the bytes that "
        f"arrived hash to {hashlib.sha256(MODEL[SHARD]).hexdigest()}\n"
    )
    # Nothing published: the partial download never appears under revisions/.
    assert not (store / "revisions").exists()
    assert not (store / f".modelstore/{SHA}/manifest.json").exists()


def test_a_hub_error_names_the_url_and_the_likely_cause(hub: str, tmp_path: Path) -> None:
    source = open_source("hf://org/missing", SHA, hf_endpoint=hub)
    with pytest.raises(SourceError) as caught:
        source.files()
    assert str(caught.value) == (
        f"source hf://org/missing: GET {hub}/api/models/org/missing/tree/{SHA}?recursive=true "
        "answered 404 Not Found: no such repository, revision or file"
    )


def test_seed_refuses_a_hub_file_whose_git_blob_id_does_not_match(hub: str, tmp_path: Path):
    HubStub.files = {**MODEL, "config.json": b"{}"}  # served bytes differ from the listed id
    source = open_source("hf://org/llama", SHA, hf_endpoint=hub)
    real = source.files
    source.files = lambda: [  # type: ignore[method-assign]
        f if f.path != "config.json" else type(f)(f.path, 2, git_sha1="0" * 40) for f in real()
    ]
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, tmp_path)
    assert str(caught.value) == (
        f"git blob id mismatch in config.json: the source publishes {'0' * 40}, the bytes "
        f"that arrived give {git_blob_id(b'{}')}"
    )
    assert not (tmp_path / "revisions").exists()


def test_an_s3_whole_object_checksum_is_used_and_a_composite_one_is_not() -> None:
    from pulumi_modelstore.model.sources import _s3_sha256

    digest = hashlib.sha256(b"x").digest()
    whole = base64.b64encode(digest).decode()
    assert _s3_sha256({"ChecksumSHA256": whole}) == digest.hex()
    assert _s3_sha256({"ChecksumSHA256": f"{whole}-3"}) is None
    assert _s3_sha256({"ChecksumSHA256": whole, "ChecksumType": "COMPOSITE"}) is None
    assert _s3_sha256({}) is None


def test_a_pinned_manifest_digest_refuses_any_other_manifest(seeded: Path, tmp_path: Path):
    published = json.loads((seeded / ".modelstore/v1/manifest.json").read_text())["digest"]
    other = "sha256:" + "0" * 64
    src = str(tmp_path / "src")
    kept = seed(f"file://{src}", "v1", seeded, *JSON_AND_SHARDS, "--manifest-sha256", published)
    assert kept.returncode == 0, kept.stderr
    refused = seed(f"file://{src}", "v1", seeded, *JSON_AND_SHARDS, "--manifest-sha256", other)
    assert (refused.returncode, refused.stderr) == (
        1,
        f"FAILED: revision v1 must be published with the pinned manifest {other}, found "
        f"{published} (unpin manifest_sha256 to seed it anew)\n",
    )
    assert verify_seeded(seeded, "--manifest-sha256", published).returncode == 0
    wrong = verify_seeded(seeded, "--manifest-sha256", other, "--label", "llama/inference")
    assert (wrong.returncode, wrong.stderr) == (
        2,
        f"FAILED: llama/inference: manifest of revision v1 is {published}, not the pinned "
        f"{other}\n",
    )
    # Seeded anew, files that do not give the pinned manifest are not published
    # (tests/test_model_runs.py: the same files are).
    empty = tmp_path / "empty"
    empty.mkdir()
    fresh = seed(f"file://{src}", "v1", empty, *JSON_AND_SHARDS, "--manifest-sha256", other)
    assert fresh.returncode == 1
    assert f"the files seeded give {published}: nothing published" in fresh.stderr
    assert not (empty / ".modelstore/v1/manifest.json").exists()
