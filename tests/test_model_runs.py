"""The seed and verify programs as real runs meet them (issue 24, points 12-15): a manifest
digest that a second seed of the same files gives again, a verify that sees what does not
belong in a revision, sources that stay in their folder, and seeds that overlap, fail and are
run again. Each runs the programs for real on small data made here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.layout import canonical, manifest_digest
from pulumi_modelstore.model.sources import open_source
from pulumi_modelstore.model.verify import Failure, VerifyError, verify
from tests.test_model_programs import (
    INCLUDE,
    JSON_AND_SHARDS,
    _bundle,  # noqa: F401  (the bundled programs, for seed() and verify_seeded())
    make_model,
    seed,
    seed_local,
    verify_seeded,
)

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
