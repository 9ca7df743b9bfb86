"""``modelstore size``: the README's example for every backend, the arithmetic of two backends
against hand-computed values, an out-of-reach target, json against text, ``--stack`` on two
stacks, settings within the stores' own rules, and bad flags refused with exact messages."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from pulumi_modelstore.cli import main
from pulumi_modelstore.plan import sizing
from pulumi_modelstore.program import BACKEND_ROOMS

ROOT = Path(__file__).resolve().parent.parent
README_EXAMPLE = ("--model-gib", "16", "--replicas", "8", "--cold-start-seconds", "60")


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["size", *args])
    return code, out.getvalue(), err.getvalue()


def out_of_reach(backend: str, replicas: int, seconds: int, *more: str) -> str:
    """``modelstore size`` of a 16 GiB model on ``backend`` (``more``: further flags), which
    must exit as out of reach; returns what it printed."""
    code, out, _ = run(
        "--model-gib", "16", "--replicas", str(replicas), "--cold-start-seconds", str(seconds),
        "--backend", backend, *more,
    )  # fmt: skip
    assert code == sizing.EXIT_OUT_OF_REACH
    return out


@pytest.fixture(scope="module")
def example() -> tuple[int, str, dict[str, Any]]:
    """The README's example (16 GiB, 8 replicas, 60 s), every backend: exit code, text, json."""
    code, text, _ = run(*README_EXAMPLE)
    json_code, out, _ = run(*README_EXAMPLE, "--format", "json")
    assert json_code == code
    return code, text, json.loads(out)


def by_backend(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["backend"]: b for b in data["backends"]}


def test_every_registered_backend_has_a_sizer():
    assert set(sizing.SIZERS) == set(BACKEND_ROOMS)
    assert sizing.backend_names() == sorted(sizing.SIZERS)


def test_readme_example_sizes_every_backend(example):
    code, text, data = example
    assert code == 0
    assert [b["backend"] for b in data["backends"]] == sizing.backend_names()
    assert data["needs"] == {"per_replica_mibps": 273.067, "aggregate_mibps": 2184.533}
    assert data["out_of_reach"] == []
    for b in data["backends"]:
        headline = next(line for line in text.splitlines() if line.startswith(f"{b['backend']}:"))
        assert f"bound by {b['binding']}" in headline
        if b["seconds"] is not None:
            assert f"{b['seconds']:.1f} s" in headline
        # every backend shows its arithmetic, and every figure step names its source
        assert b["steps"]
    predicted = {name: b for name, b in by_backend(data).items() if b["within_target"]}
    assert set(predicted) == set(sizing.SIZERS) - {"nfs", "local"}


def test_fsx_arithmetic_against_hand_computed_values(example):
    fsx = by_backend(example[2])["fsx-lustre"]
    # 8 x 16384 MiB / 60 s = 2184.53 MiB/s = 2290.6 MB/s; at 1000 MBps/TiB that is 2.29 TiB =
    # 2346 GiB -> 2400 GiB (1200, 2400, then multiples of 2400), the cheapest option:
    # 2400 x $0.600 = $1440 (125: 19200 GiB $2784; 250: 9600 $2016; 500: 4800 $1632).
    assert fsx["settings"] == {
        "deployment_type": "PERSISTENT_2",
        "storage_capacity_gib": 2400,
        "per_unit_storage_throughput": 1000,
    }
    assert fsx["monthly_cost_usd"] == 1440.0
    # 2400 / 1024 x 1000 MB/s = 2343.75 MB/s = 2235.17 MiB/s; / 8 = 279.40 MiB/s per replica;
    # 16384 / 279.40 = 58.64 s.
    assert fsx["binding"] == "storage aggregate throughput"
    assert fsx["seconds"] == pytest.approx(16384 / (2343.75e6 / 2**20 / 8), abs=1e-3)
    assert fsx["seconds"] == pytest.approx(58.641, abs=1e-3)
    assert fsx["within_target"] is True


def test_ebs_arithmetic_against_hand_computed_values(example):
    ebs = by_backend(example[2])["ebs-snapshot"]
    # 16384 MiB / 60 s = 273.07 MiB/s per replica -> initialization rate 274 (100-300), gp3
    # throughput 274, IOPS max(3000, 274 / 0.25) = 3000; volume ceil(16 x 1.1) = 18 GiB.
    assert ebs["settings"] == {
        "volume_size": "18Gi",
        "throughput_mibps": 274,
        "iops": 3000,
        "volume_initialization_rate_mibps": 274,
    }
    assert ebs["binding"] == "per-client throughput"
    assert ebs["seconds"] == pytest.approx(16384 / 274, abs=1e-3)  # 59.80 s
    # 8 x (18 x 0.08 + 149 x 0.04) + 16 x 0.05 = 8 x 7.40 + 0.80 = 60.00
    assert ebs["monthly_cost_usd"] == pytest.approx(60.0)


def test_out_of_reach_says_by_how_much_and_fails():
    text = out_of_reach("ebs-snapshot", 8, 30)
    # 300 MiB/s is the highest initialization rate: 16384 / 300 = 54.6 s, 24.6 s over 30 s.
    assert "ebs-snapshot: 54.6 s, bound by per-client throughput;" in text
    assert "OUT OF REACH by 24.6 s" in text
    assert "volume_initialization_rate_mibps=300" in text
    assert text.rstrip().endswith("out of reach: ebs-snapshot")
    fsx = json.loads(out_of_reach("fsx-lustre", 8, 5, "--format", "json"))["backends"][0]
    # the node NIC binds whatever the file system: 16384 / (25e9 / 8 / 2^20) = 5.50 s
    assert fsx["binding"] == "node NIC"
    assert fsx["shortfall_seconds"] == pytest.approx(16384 / (25e9 / 8 / 2**20) - 5, abs=1e-3)


def test_json_is_the_text_as_data(example):
    _, text, data = example
    assert sizing.render_text(data) == text
    for b in data["backends"]:
        assert all(set(step) == {"text", "source", "judgement"} for step in b["steps"])


@pytest.mark.parametrize("model_gib", [1, 16, 140, 700])
@pytest.mark.parametrize("seconds", [20, 60, 600])
def test_recommended_settings_pass_the_stores_rules(model_gib, seconds):
    from pulumi_modelstore.aws import fsx
    from pulumi_modelstore.aws.ebs import classes
    from pulumi_modelstore.azure import files
    from pulumi_modelstore.gcp import hyperdisk

    need = sizing.Need(model_gib, 8, seconds, 25)
    f = sizing.size_fsx(need, None).settings
    fsx.validate_storage_capacity(
        "s", f["deployment_type"], "SSD", f["per_unit_storage_throughput"],
        f["storage_capacity_gib"],
    )  # fmt: skip
    assert f["per_unit_storage_throughput"] in fsx.THROUGHPUT_MBPS_PER_TIB[("PERSISTENT_2", "SSD")]
    h = sizing.size_hyperdisk(need, None).settings
    hyperdisk.size_in_range("s", "size_gib", h["size_gib"])
    hyperdisk.throughput_in_range("s", h["throughput_mibps"])
    z = sizing.size_files(need, None).settings
    files.quota_in_range("s", z["share_quota_gib"], z["sku_name"])
    e = sizing.size_ebs(need, None).settings
    low, high = classes.VOLUME_INITIALIZATION_RATE_MIBPS
    assert low <= e["volume_initialization_rate_mibps"] <= high
    assert classes.GP3_THROUGHPUT_MIBPS[0] <= e["throughput_mibps"] <= e["iops"] * 0.25
    assert math.ceil(model_gib) <= int(e["volume_size"].removesuffix("Gi"))


def test_stack_sizes_the_declared_stores():
    common = ("--model-gib", "16", "--replicas", "8", "--cold-start-seconds", "60")
    code, out, _ = run(*common, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "json")
    data = json.loads(out)
    [llama] = data["backends"]
    assert (llama["store"], llama["backend"], data["stack"]) == ("llama", "fsx-lustre", "aws-prod")
    assert llama["settings"] == {
        "deployment_type": "PERSISTENT_2",
        "storage_capacity_gib": 2400,
        "per_unit_storage_throughput": 250,
    }
    # as declared: 2400 / 1024 x 250 MB/s = 585.9 MB/s = 558.8 MiB/s, / 8 = 69.85 MiB/s each;
    # 16384 / 69.85 = 234.6 s, 174.6 s over the target: the stack misses it.
    assert llama["seconds"] == pytest.approx(16384 / (585.9375e6 / 2**20 / 8), abs=1e-3)
    assert llama["shortfall_seconds"] == pytest.approx(llama["seconds"] - 60, abs=1e-3)
    assert llama["monthly_cost_usd"] == pytest.approx(2400 * 0.21)
    assert (code, data["out_of_reach"]) == (sizing.EXIT_OUT_OF_REACH, ["llama"])

    code, text, _ = run(*common, "--cwd", str(ROOT), "--stack", "gke-hyperdisk")
    # 4800 MiB/s declared, shared by 8 replicas: 600 MiB/s each, 16384 / 600 = 27.3 s
    assert code == 0
    assert "llama (hyperdisk-ml): 27.3 s, bound by storage aggregate throughput;" in text
    assert "settings: size_gib=64, throughput_mibps=4800" in text
    assert "one volume per reader namespace: 2" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--model-gib", "-16", "--replicas", "8", "--cold-start-seconds", "60"),
            "error: --model-gib must be a number greater than 0, got '-16'",
        ),
        (
            ("--model-gib", "16", "--replicas", "2.5", "--cold-start-seconds", "60"),
            "error: --replicas must be a whole number greater than 0, got '2.5'",
        ),
        (
            ("--model-gib", "16", "--replicas", "8", "--cold-start-seconds", "0"),
            "error: --cold-start-seconds must be a number greater than 0, got '0'",
        ),
        (
            (*README_EXAMPLE, "--node-gbps", "fast"),
            "error: --node-gbps must be a number greater than 0, got 'fast'",
        ),
        (
            (*README_EXAMPLE, "--nfs-mibps", "nan"),
            "error: --nfs-mibps must be a number greater than 0, got 'nan'",
        ),
        # Issue 26: huge and tiny numbers, each refused in one line by the flag's bounds.
        (
            ("--model-gib", "1e308", "--replicas", "8", "--cold-start-seconds", "60"),
            "error: --model-gib must be a number of GiB from 2^-30 (one byte) to 8589934591 "
            "(Kubernetes caps a quantity at 2^63-1 bytes), got '1e308'",
        ),
        (
            ("--model-gib", "16", "--replicas", "8", "--cold-start-seconds", "1e-320"),
            "error: --cold-start-seconds must be a number of seconds from 0.001 to 1000000000 "
            "(a millisecond to about 31 years), got '1e-320'",
        ),
        (
            ("--model-gib", "16", "--replicas", "9" * 400, "--cold-start-seconds", "60"),
            "error: --replicas must be a whole number from 1 to 2147483647 (a Deployment's "
            "replicas is an int32), got '9999999999999999999...999999999' (400 characters)",
        ),
        (
            (*README_EXAMPLE, "--node-gbps", "1e308"),
            "error: --node-gbps must be a number of Gbps from 0.001 to 1000000, got '1e308'",
        ),
        (
            (*README_EXAMPLE, "--nfs-mibps", "1e-320"),
            "error: --nfs-mibps must be a number of MiB/s from 0.001 to 1000000000, got '1e-320'",
        ),
        (
            (*README_EXAMPLE, "--backend", "gluster"),
            "error: --backend must be one of azure-blob, azure-files-nfs, ebs-snapshot, efs, "
            "fsx-lustre, gcs-fuse, hyperdisk-ml, local, mountpoint-s3, nfs, got 'gluster'",
        ),
        (
            (*README_EXAMPLE, "--cwd", str(ROOT), "--stack", "nope"),
            f"error: stack 'nope' not found in {ROOT}; stacks: aks-files, aks, aws-dev, "
            "aws-efs, aws-prod, gke-hyperdisk, gke, local, onprem-nfs",
        ),
    ],
)
def test_bad_input_is_refused_naming_the_flag(args, message):
    code, out, err = run(*args)
    assert (code, out, err) == (sizing.EXIT_BAD_INPUT, "", message + "\n")


def test_nfs_takes_the_servers_throughput():
    code, text, _ = run(*README_EXAMPLE, "--backend", "nfs", "--nfs-mibps", "1000")
    # 1000 MiB/s shared by 8: 125 MiB/s each, 16384 / 125 = 131.1 s, 71.1 s over
    assert code == sizing.EXIT_OUT_OF_REACH
    assert (
        "nfs: 131.1 s, bound by storage aggregate throughput; cost unknown; OUT OF REACH by 71.1 s"
        in text
    )


def test_hyperdisk_refuses_more_replicas_than_a_volume_attaches():
    text = out_of_reach("hyperdisk-ml", 3000, 600)
    assert "bound by attached-VM limit (2,500 per volume)" in text
    assert "3000 replicas exceed the 2,500 VMs one volume attaches to" in text


def test_readme_shows_the_examples_first_lines(example):
    readme = (ROOT / "docs" / "planning-and-ci.md").read_text()
    section = readme.split("## Sizing a cold start: `modelstore size`", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    headlines = [b for b in example[1].splitlines()[5:] if b and not b.startswith("  ")]
    assert block.splitlines() == headlines
