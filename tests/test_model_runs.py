"""The seed and verify programs as real runs meet them (issue 24, points 12-15): a manifest
digest that a second seed of the same files gives again, a verify that sees what does not
belong in a revision, sources that stay in their folder, and seeds that overlap, fail and are
run again. Each runs the programs for real on small data made here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.layout import canonical, manifest_digest
from pulumi_modelstore.model.sources import open_source
from pulumi_modelstore.model.verify import verify
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
