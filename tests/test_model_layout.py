"""The read layout the seed sets on Lustre (model/lustre.py): the ``lustre.lov`` bytes read back
field by field at the offsets ``lustre_user.h`` gives them, the call made on the directory the
files go into before any is created, the clear failure on a file system that is not Lustre, and
the FSx store's seed Job asking for it (hf:// only: imported files are the association's)."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.model import lustre
from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.sources import open_source
from tests.conftest import plan
from tests.test_backend_contract import build
from tests.test_model_bundle import materialize, run_bundled

SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
MIB = 1 << 20


def u(data: bytes, at: int, size: int) -> int:
    """The host-endian unsigned integer of ``size`` bytes at ``at``."""
    return int.from_bytes(data[at : at + size], sys.byteorder)


def test_the_layout_bytes_are_the_structures_of_lustre_user_h() -> None:
    """Offsets from include/uapi/linux/lustre/lustre_user.h (lustre-release c881f8eb), all
    packed: lov_comp_md_v1 (lines 1164-1180): lcm_magic 0, lcm_size 4, lcm_layout_gen 8,
    lcm_flags 12 (u16), lcm_entry_count 14 (u16), lcm_mirror_count 16 (u16), lcm_ec_count 18,
    lcm_padding3 19, lcm_padding1 20 (2 x u16), lcm_padding2 24 (u64): 32 bytes.
    lov_comp_md_entry_v1 (lines 1099-1131): lcme_id 0, lcme_flags 4, lcme_extent 8 (e_start,
    e_end: u64), lcme_offset 24, lcme_size 28, lcme_layout_gen 32, lcme_time_and_id 36 (u64),
    then four u8: 48 bytes. lov_user_md_v1 (lines 928-943): lmm_magic 0, lmm_pattern 4, lmm_oi
    8 (16 bytes), lmm_stripe_size 24, lmm_stripe_count 28 (u16), lmm_stripe_offset 30 (u16):
    32 bytes."""
    data = lustre.progressive_layout()
    assert len(data) == 32 + 2 * 48 + 2 * 32
    assert u(data, 0, 4) == 0x0BD60BD0  # LOV_USER_MAGIC_COMP_V1 (line 782)
    assert u(data, 4, 4) == len(data)
    assert u(data, 14, 2) == 2
    assert data[8:14] + data[16:32] == bytes(22)  # generation, flags, mirrors, padding
    expected = [(0, 100 * MIB, 1), (100 * MIB, 0xFFFFFFFFFFFFFFFF, 0xFFFF)]
    for i, (start, end, count) in enumerate(expected):
        entry = data[32 + 48 * i : 32 + 48 * (i + 1)]
        assert (u(entry, 0, 4), u(entry, 4, 4)) == (0, 0)  # id and flags: the server's
        assert (u(entry, 8, 8), u(entry, 16, 8)) == (start, end)  # LUSTRE_EOF (line 255)
        offset, size = u(entry, 24, 4), u(entry, 28, 4)
        assert (offset, size) == (128 + 32 * i, 32)
        assert entry[32:48] == bytes(16)
        blob = data[offset : offset + size]
        assert u(blob, 0, 4) == 0x0BD10BD0  # LOV_USER_MAGIC_V1 (line 776)
        assert u(blob, 4, 4) == 1  # LOV_PATTERN_RAID0 (line 792)
        assert blob[8:24] == bytes(16)  # no object id: a template
        assert u(blob, 24, 4) == 0  # the file system's stripe size
        assert u(blob, 28, 2) == count  # LOV_ALL_STRIPES 0xffff (line 893) for the large
        assert u(blob, 30, 2) == 0xFFFF  # any first OST


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text("{}")
    (src / "model.safetensors").write_bytes(os.urandom(4096))
    return src


@pytest.mark.parametrize("publish", ["rename", "manifest-last"])
def test_the_layout_is_set_on_the_empty_directory_the_files_go_into(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: Path, publish: str
) -> None:
    calls: list[tuple[Path, str, bytes, list[str]]] = []

    def setxattr(path: Any, name: str, value: bytes, *args: Any) -> None:
        calls.append((Path(path), name, value, sorted(os.listdir(path))))

    monkeypatch.setattr(lustre.os, "setxattr", setxattr)
    store = tmp_path / "store"
    store.mkdir()
    result = seed_mod.seed(
        open_source(f"file://{source}", "v1"), store, publish=publish, read_layout="lustre"
    )
    assert result.seeded and result.files == 2
    (where, name, value, present) = calls[0]
    assert len(calls) == 1 and name == "lustre.lov" and value == lustre.progressive_layout()
    assert present == []  # before any file: a default layout applies to files created after
    layout = seed_mod.Layout(store)
    if publish == "rename":  # the run's own folder under the revision's partial folder
        assert where.parent == layout.partial("v1") and where.name.startswith("run-")
    else:
        assert where == layout.revision_dir("v1")


def test_without_the_layout_flag_nothing_is_set(monkeypatch, tmp_path: Path, source: Path):
    monkeypatch.setattr(lustre.os, "setxattr", lambda *a: pytest.fail("setxattr called"))
    (tmp_path / "store").mkdir()
    assert seed_mod.seed(open_source(f"file://{source}", "v1"), tmp_path / "store").seeded


def test_on_a_file_system_that_is_not_lustre_the_seed_stops_and_says_so(tmp_path, source):
    """The real call on the test machine's temporary directory: no ``lustre.`` xattr
    namespace, so setxattr fails with ENOTSUP, and nothing is published."""
    bundle = materialize(tmp_path / "bundle")
    store = tmp_path / "store"
    store.mkdir()
    run = run_bundled(
        bundle,
        "seed",
        *("--source", f"file://{source}", "--revision", "v1", "--dest", str(store)),
        *("--layout", "lustre", "--termination-log", ""),
    )
    assert run.returncode == 1
    # The run's folder, not its record of checked files (run-<id>.done): a glob on the last
    # letter missed a run id that ends in "e" (one in sixteen).
    (partial,) = [
        p for p in (store / ".modelstore" / "partial" / "v1").glob("run-*") if p.suffix != ".done"
    ]
    assert run.stderr.strip() == (
        f"FAILED: cannot set the Lustre read layout on {partial}: it is not on Lustre "
        f"(setxattr lustre.lov: {os.strerror(errno.EOPNOTSUPP)}); is the store's volume FSx for "
        f"Lustre?"
    )
    assert not (store / "revisions").exists()


def test_another_refusal_names_the_cause(monkeypatch, tmp_path: Path) -> None:
    def refuse(*args: Any) -> None:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(lustre.os, "setxattr", refuse)
    with pytest.raises(lustre.LayoutError) as error:
        lustre.set_default_layout(tmp_path)
    assert str(error.value) == (
        f"cannot set the Lustre read layout on {tmp_path}: setxattr lustre.lov: Invalid argument"
    )


def _seed_args(backend: str, model: dict[str, str]) -> list[str]:
    p = plan(lambda: build(backend, model=model), fill=True)
    (job,) = [j for j in p.by_type("kubernetes:batch/v1:Job") if "-seed-" in j["urn"]]
    args: list[str] = job["inputs"]["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def test_the_fsx_seed_job_sets_the_lustre_layout_where_it_writes_the_files() -> None:
    hf = {"source": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": SHA}
    args = _seed_args("fsx-lustre", hf)
    assert args[args.index("--layout") + 1] == "lustre"
    # An s3:// source is imported by the association, in its own chunks: nothing to set.
    imported = _seed_args("fsx-lustre", {"source": "s3://acme-models/llama", "revision": "v1"})
    assert args[args.index("--publish") + 1] == "rename"
    assert imported[imported.index("--publish") + 1] == "imported"
    assert "--layout" not in imported
    assert "--layout" not in _seed_args("efs", hf)
