"""`modelstore plan`: formats, determinism, fill-outputs, secrets, errors, speed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from pulumi_modelstore.cli import main
from pulumi_modelstore.plan.engine import (
    UNKNOWN,
    Plan,
    PlanError,
    plan_directory,
    plan_program,
)
from pulumi_modelstore.plan.render import FORMATS, render
from pulumi_modelstore.program import BACKENDS
from tests.conftest import ROOT

STEP_STATE_KEYS = {
    "type",
    "custom",
    "parent",
    "inputs",
    "dependencies",
    "propertyDependencies",
    "protect",
    "retainOnDelete",
    "deleteBeforeReplace",
    "ignoreChanges",
    "replaceOnChanges",
    "aliases",
}


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["plan", *args])
    out, err = capsys.readouterr()
    return code, out, err


def project(tmp_path: Path, program: str, stack_config: str, stack: str = "dev") -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: trial\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(textwrap.dedent(program))
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(textwrap.dedent(stack_config))
    return tmp_path


def stores_project(tmp_path: Path, stores: str) -> Path:
    """A project of the config program whose dev stack holds ``stores`` (YAML) under
    ``modelstore:stores``, the first store on line 4 of the stack file."""
    stores = textwrap.indent(textwrap.dedent(stores).lstrip("\n"), "    ")
    return project(
        tmp_path,
        "from pulumi_modelstore.program import main\nmain()\n",
        "\nconfig:\n  modelstore:stores:\n" + stores,
    )


def stores_refused(tmp_path: Path, capsys, stores: str) -> str:
    """What ``modelstore plan`` writes on stderr for a :func:`stores_project` of ``stores``,
    which it must refuse (exit 1, nothing on stdout)."""
    code, out, err = run_cli(capsys, "--cwd", str(stores_project(tmp_path, stores)))
    assert (code, out) == (1, "")
    return err


def test_json_has_the_preview_shape(capsys):
    code, out, _ = run_cli(capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    # aws-prod reads its cluster from the platform stack (StackReference): one read step.
    assert doc["changeSummary"] == {"create": len(doc["steps"]) - 1, "read": 1}
    for step in doc["steps"]:
        assert {"op", "urn", "provider", "newState"} <= set(step)
        assert set(step["newState"]) >= STEP_STATE_KEYS
    fs = next(s for s in doc["steps"] if s["newState"]["type"].startswith("aws:fsx/lustre"))
    assert fs["op"] == "create"
    assert fs["provider"].startswith("urn:pulumi:aws-prod::modelstore::pulumi:providers:aws::")
    assert fs["newState"]["protect"] is True
    assert fs["newState"]["inputs"]["storageCapacity"] == 2400
    # A preview: what the cloud computes is unknown until apply.
    assert doc["outputs"]["llama"]["fileSystemId"] == UNKNOWN
    assert doc["outputs"]["llama"]["claimNames"] == {
        "inference": "llama",
        "batch-inference": "llama",
    }


FOLDED = "Outputs (a line per stack output; --outputs shows every value):"


def test_tree_lists_components_and_children(capsys):
    code, out, _ = run_cli(capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "tree")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "+ pulumi:pulumi:Stack  modelstore-aws-prod"
    assert "├─ + modelstore:index:FsxLustreModelStore  llama" in lines
    assert any(
        "aws:fsx/lustreFileSystem:LustreFileSystem  llama-fs  [protect, retain-on-delete]" in line
        for line in lines
    )
    # 22 + the EksCluster scope + the cluster's Kubernetes provider; the platform stack read
    assert lines[-1] == "Resources: 24 to create, 1 to read"
    # The outputs folded (issue 25): most of a store's tree was its outputs, a line per value.
    assert lines[lines.index(FOLDED) :] == [
        FOLDED,
        "  llama: 60 values",
        "Resources: 24 to create, 1 to read",
    ]
    assert len(lines) == 29  # was 88: 59 lines of outputs folded into one

    # --outputs: one value a line, readable in a pull-request comment (issue 18).
    code, out, _ = run_cli(
        capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "tree", "--outputs"
    )
    assert code == 0
    lines = out.splitlines()
    outputs = lines[lines.index("Outputs:") + 1 : -1]
    assert len(outputs) == 60
    # The JSON holds every value: --outputs there is a mistake, said before planning.
    assert run_cli(capsys, "--stack", "aws-prod", "--format", "json", "--outputs") == (
        1,
        "",
        "error: --outputs unfolds the tree's outputs (--format tree or --also tree=PATH); the "
        "JSON plan holds every value\n",
    )
    assert '  llama.claimNames.batch-inference: "llama"' in outputs
    assert '  llama.claimNames.inference: "llama"' in outputs
    assert all(line.startswith("  llama.") and ": " in line for line in outputs), outputs


def test_tree_marks_the_values_the_plan_made_up(capsys):
    """Issue 25: a reviewer tells the values the plan invented (a lookup's placeholder answer,
    --fill-outputs) from the stack's own. aws-efs lists its subnets; the placeholder getSubnet
    puts each in a zone, and the store names a mount target after each zone."""
    code, out, _ = run_cli(capsys, "--cwd", str(ROOT), "--stack", "aws-efs", "--format", "tree")
    assert code == 0
    lines = out.splitlines()
    mounts = [line for line in lines if "aws:efs/mountTarget:MountTarget" in line]
    assert mounts == [
        "│  ├─ + aws:efs/mountTarget:MountTarget  t5-mount-target-eu-west-1b  (placeholder)",
        "│  ├─ + aws:efs/mountTarget:MountTarget  t5-mount-target-eu-west-1c  (placeholder)",
    ]
    assert lines[-2] == (
        "(placeholder): holds a value modelstore plan made up, not the stack's own (from the "
        "data source aws:ec2/getSubnet:getSubnet): pulumi up uses what the cloud answers"
    )
    # Only those: the stack's own names and values are not marked.
    assert sum("(placeholder)" in line for line in lines) == 3

    code, out, _ = run_cli(
        capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "tree", "--fill-outputs"
    )
    assert code == 0
    # Folded, a stack output says how many of its values are made up.
    assert "  llama: 60 values, 5 made up  (placeholder)" in out.splitlines()
    code, out, _ = run_cli(
        capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--fill-outputs", "--outputs"
    )
    assert code == 0
    lines = out.splitlines()
    assert '  llama.fileSystemId: "fs-2fa32b377424e81ec"  (placeholder)' in lines
    assert '  llama.claimNames.inference: "llama"' in lines  # the stack's own
    # An output keyed by a made-up value (a mount target per zone) is marked by its key too.
    made_up = Plan(
        "p",
        "s",
        [],
        {"t5": {"mountTargetIds": {"eu-west-1b": "fsmt-1", "x": "y"}}},
        [],
        [],
        False,
        placeholders={"eu-west-1b": "the data source aws:ec2/getSubnet:getSubnet"},
    )
    assert render(made_up, "tree", outputs=True).splitlines()[1:3] == [
        '  t5.mountTargetIds.eu-west-1b: "fsmt-1"  (placeholder)',
        '  t5.mountTargetIds.x: "y"',
    ]
    assert "(from --fill-outputs)" in lines[-2]
    # The JSON plan (the goldens, tools) holds values only: nothing is marked there.
    code, out, _ = run_cli(
        capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "json", "--fill-outputs"
    )
    assert "(placeholder)" not in out


def test_mermaid_is_a_flowchart_with_dependency_edges(capsys):
    code, out, _ = run_cli(capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "mermaid")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "flowchart LR"
    ids = {}
    for line in lines:
        for name in ("llama-fs<br/>", "llama-fs-sg<br/>", "llama-pv-inference<br/>"):
            if name in line:
                ids[name] = line.strip().split("[")[0]
    assert f"  {ids['llama-fs-sg<br/>']} --> {ids['llama-fs<br/>']}" in lines
    assert f"  {ids['llama-fs<br/>']} --> {ids['llama-pv-inference<br/>']}" in lines
    assert any(line.strip().startswith("subgraph") for line in lines)


def test_yaml_is_every_kubernetes_object(capsys):
    code, out, _ = run_cli(capsys, "--cwd", str(ROOT), "--stack", "aws-prod", "--format", "yaml")
    assert code == 0
    docs = list(yaml.safe_load_all(out))
    kinds = sorted(
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]) for d in docs
    )
    assert kinds == [
        ("PersistentVolume", "", "llama-batch-inference"),
        ("PersistentVolume", "", "llama-inference"),
        ("PersistentVolumeClaim", "batch-inference", "llama"),
        ("PersistentVolumeClaim", "inference", "llama"),
    ]
    assert "# Helm release kube-system/aws-fsx-csi-driver: chart aws-fsx-csi-driver 1.17.0" in out


def test_fill_outputs_renders_whole_persistent_volumes(filled_plans):
    plan = filled_plans["stacks/aws-prod"]
    fs = plan.by_name("llama-fs")
    assert fs["id"].startswith("fs-") and len(fs["id"]) == 20
    assert fs["outputs"]["dnsName"] == f"{fs['id']}.fsx.us-west-2.amazonaws.com"
    pv = plan.by_name("llama-pv-inference")["inputs"]
    assert pv["spec"]["csi"]["volumeHandle"] == f"{fs['id']}::inference"
    assert pv["spec"]["csi"]["volumeAttributes"]["mountname"] == fs["outputs"]["mountName"]
    assert UNKNOWN not in json.dumps(plan.kubernetes_objects())


def test_planning_twice_is_byte_identical(tmp_path, capsys):
    """aws-prod planned twice, as a preview and with --fill-outputs, each plan written in every
    format (--out and --also): byte for byte the same."""
    outputs = []
    for i in range(2):
        for fill in ([], ["--fill-outputs"]):
            out = tmp_path / f"{i}{'-filled' if fill else ''}"
            formats = [f"--also={fmt}={out}.{fmt}" for fmt in FORMATS[1:]]
            args = ["--cwd", str(ROOT), "--stack", "aws-prod", *fill, *formats]
            assert (
                run_cli(capsys, *args, "--format", FORMATS[0], "--out", f"{out}.{FORMATS[0]}")[0]
                == 0
            )
            outputs.append([Path(f"{out}.{fmt}").read_bytes() for fmt in FORMATS])
    assert outputs[:2] == outputs[2:]
    assert all(outputs[0]) and outputs[0] != outputs[1]  # the preview's unknowns, filled


def test_default_stack_is_local(capsys):
    code, out, _ = run_cli(capsys, "--cwd", str(ROOT))
    assert code == 0
    assert out.splitlines()[0] == "+ pulumi:pulumi:Stack  modelstore-local"


def test_secrets_are_masked(tmp_path):
    directory = project(
        tmp_path,
        """
        import pulumi
        pulumi.export("token", pulumi.Config().require_secret("token"))
        pulumi.export("plain", "visible")
        """,
        """
        config:
          trial:token:
            secure: v1:AAAABBBBCCCC
        """,
    )
    plan = plan_directory(directory)
    assert plan.outputs == {"token": "[secret]", "plain": "visible"}
    assert json.loads(render(plan, "json"))["config"] == {"trial:token": "[secret]"}


def test_main_file_and_config_declarations_are_honoured(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text(
        textwrap.dedent(
            """
            name: trial
            runtime: {name: python}
            main: app/program.py
            stackConfigDir: envs
            config:
              replicas: {type: integer, default: 2}
              region: {default: eu-west-1}
            """
        )
    )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "program.py").write_text(
        "import pulumi\n"
        "c = pulumi.Config()\n"
        "pulumi.export('replicas', c.require_int('replicas'))\n"
        "pulumi.export('region', c.require('region'))\n"
    )
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "Pulumi.qa.yaml").write_text("config:\n  trial:region: us-east-2\n")
    plan = plan_directory(tmp_path)
    assert plan.stack == "qa"
    assert plan.outputs == {"replicas": 2, "region": "us-east-2"}


def test_a_failing_program_exits_1_with_one_line(tmp_path, capsys):
    directory = project(
        tmp_path,
        """
        from pulumi_modelstore.aws import FsxLustreModelStore
        FsxLustreModelStore("llama", {"cluster_name": "c", "readers": ["inference"],
                                      "storage_capacity_gib": 3600})
        """,
        "config: {}\n",
    )
    code, out, err = run_cli(capsys, "--cwd", str(directory))
    assert (code, out) == (1, "")
    assert err == (
        "error: llama: storage_capacity_gib must be 1200, 2400 or a multiple of 2400 for "
        "PERSISTENT_2, got 3600\n"
    )
    code, _, err = run_cli(capsys, "--cwd", str(directory), "--verbose")
    assert code == 1 and "Traceback" in err and "ModelStoreInputError" in err


def test_unknown_stack_lists_the_stacks(capsys):
    code, out, err = run_cli(capsys, "--cwd", str(ROOT), "--stack", "aws-staging")
    assert (code, out) == (1, "")
    assert err == (
        f"error: stack 'aws-staging' not found in {ROOT}; "
        "stacks: aks-files, aks, aws-dev, aws-efs, aws-prod, gke-hyperdisk, gke, local, "
        "onprem-nfs\n"
    )


def test_a_directory_without_pulumi_yaml_says_so(tmp_path, capsys):
    code, _, err = run_cli(capsys, "--cwd", str(tmp_path))
    assert code == 1
    assert err == f"error: no Pulumi.yaml in {tmp_path}: not a Pulumi project directory\n"


def test_bad_stack_config_is_a_one_line_error(tmp_path, capsys):
    err = stores_refused(
        tmp_path,
        capsys,
        """
        llama:
          backend: fsx-lustr
        """,
    )
    assert err == (
        f"error: modelstore:stores.llama.backend must be one of {', '.join(sorted(BACKENDS))}, "
        "got 'fsx-lustr'; did you mean `fsx-lustre`?\n"
    )


def test_a_store_name_given_twice_in_the_stack_file_is_refused_with_its_line(tmp_path, capsys):
    err = stores_refused(
        tmp_path,
        capsys,
        """
        llama:
          backend: local
          readers: [a]
        llama:
          backend: local
          readers: [b]
        """,
    )
    assert err == (
        f"error: {tmp_path / 'Pulumi.dev.yaml'} line 7: key 'llama' is given twice in one "
        "mapping (first on line 4); YAML would keep only the last\n"
    )


def test_every_invalid_field_is_an_error_line_of_its_own(tmp_path, capsys):
    err = stores_refused(
        tmp_path,
        capsys,
        """
        llama:
          backend: local
          readers: [a]
          host_path: relative
          capacity_gib: "20"
        t5:
          backend: local
          readers: [Bad]
        """,
    )
    assert err.splitlines() == [
        "error: modelstore:stores.llama.capacity_gib must be a whole number, got '20'",
        "error: modelstore:stores.llama.host_path must be an absolute path starting with '/', "
        "got 'relative'",
        "error: modelstore:stores.t5.readers must be "
        "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter "
        "or digit, at most 63 characters), got 'Bad'",
    ]


def test_resource_options_reach_the_plan():
    import pulumi
    import pulumi_kubernetes as k8s

    from pulumi_modelstore.plan.engine import plan_program

    def program():
        k8s.core.v1.ConfigMap(
            "renamed",
            metadata={"name": "cm"},
            opts=pulumi.ResourceOptions(
                aliases=[pulumi.Alias(name="original")],
                ignore_changes=["data"],
                replace_on_changes=["metadata.name"],
                delete_before_replace=True,
            ),
        )

    state = plan_program(program).by_name("renamed")
    assert state["aliases"] == [{"name": "original", "parentUrn": ""}]
    assert state["ignoreChanges"] == ["data"]
    assert state["replaceOnChanges"] == ["metadata.name"]
    assert state["deleteBeforeReplace"] is True


def test_a_data_source_without_a_placeholder_fails_the_plan_naming_it():
    import pulumi_aws as aws

    def program():
        aws.ec2.get_vpc(id="vpc-0abc")

    with pytest.raises(PlanError) as err:
        plan_program(program)
    assert "no placeholder answer for the data source aws:ec2/getVpc:getVpc" in str(err.value)


def test_a_plan_takes_no_stack_traces_and_puts_the_sdks_function_back():
    """The SDK's stack trace at each registration (read by no mock) is skipped while a plan
    runs, a failing one too, and the SDK's own function is back afterwards."""
    from pulumi.runtime import resource as sdk_resource

    sdk_function = sdk_resource._get_stack_trace
    taken = []

    def program(fail: bool) -> None:
        taken.append(sdk_resource._get_stack_trace is sdk_function)
        if fail:
            raise ValueError("broken")

    plan_program(lambda: program(False))
    with pytest.raises(PlanError):
        plan_program(lambda: program(True))
    assert taken == [False, False]
    assert sdk_resource._get_stack_trace is sdk_function


def test_the_monitor_answers_the_sdks_get_resource_invoke_with_what_was_registered():
    """``pulumi:pulumi:getResource`` (the SDK's lookup of a resource by URN) is answered from
    the plan's own registrations, as the SDK's mock monitor answers it."""
    import pulumi
    import pulumi_kubernetes as k8s

    def program() -> None:
        cm = k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "b"})
        found = cm.urn.apply(
            lambda urn: pulumi.runtime.invoke("pulumi:pulumi:getResource", {"urn": urn}).value
        )
        pulumi.export("found", found)

    assert plan_program(program, fill_outputs=True).outputs["found"] == {
        "urn": "urn:pulumi:test::modelstore::pulumi:pulumi:Stack$kubernetes:core/v1:ConfigMap::cm",
        "id": "cm",
        "state": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
                  "data": {"a": "b"}},
    }  # fmt: skip


def test_a_mock_answer_is_serialized_in_one_step_or_refused():
    """The monitor answers on the plan loop's thread, running the SDK's serialization of an
    answer to its end at once (plan/engine.py ``_finished``): an answer that would wait for
    another part of the program is refused, not left half done."""
    import asyncio

    from pulumi.runtime import rpc

    from pulumi_modelstore.plan.engine import _finished

    answer = {"id": "fs-1", "tags": {"team": "ml"}, "ports": [988, 1018]}
    assert _finished(rpc.serialize_properties(answer, {})) == _plain_struct(answer)

    async def waits() -> None:
        await asyncio.sleep(0)  # gives the loop a turn: more than one step

    with pytest.raises(RuntimeError, match="a mock answer waited for another part of the program"):
        _finished(waits())


def _plain_struct(value: dict) -> object:
    from google.protobuf import struct_pb2

    out = struct_pb2.Struct()
    out.update(value)
    return out


# ---- standard output carries the plan alone --------------------------------------------------

PRINTING_PROGRAM = """
import os, subprocess, sys
import pulumi
import pulumi_kubernetes as k8s
print("from print")
sys.stdout.write("from sys.stdout\\n")
os.write(1, b"from descriptor 1\\n")
subprocess.run([sys.executable, "-c", "print('from a subprocess')"], check=True)
pulumi.log.info("an info")
pulumi.log.warn("a warning")
k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"})
pulumi.export("answer", 42)
"""
PRINTED = [
    "from print",
    "from sys.stdout",
    "from descriptor 1",
    "from a subprocess",
    "info: an info",
    "warning: a warning",
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_what_the_program_prints_goes_to_stderr_in_every_format(tmp_path, capfd, fmt):
    directory = project(tmp_path, PRINTING_PROGRAM, "config: {}\n")
    assert main(["plan", "--cwd", str(directory), "--format", fmt]) == 0
    out, err = capfd.readouterr()
    assert out == render(plan_directory(directory), fmt)  # the rendered plan, nothing else
    capfd.readouterr()
    assert err.splitlines() == PRINTED
    if fmt == "json":
        doc = json.loads(out)
        assert doc["outputs"] == {"answer": 42}
        assert doc["diagnostics"] == [
            {"severity": "info", "message": "an info"},
            {"severity": "warning", "message": "a warning"},
        ]


def test_json_from_a_printing_program_pipes_to_a_json_reader(tmp_path):
    """`modelstore plan --format json | jq`: the command as a process, standard output read
    whole as one JSON document."""
    directory = project(tmp_path, PRINTING_PROGRAM, "config: {}\n")
    command = ["-m", "pulumi_modelstore.cli", "plan", "--cwd", str(directory), "--format", "json"]
    result = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outputs"] == {"answer": 42}
    assert result.stderr.splitlines() == PRINTED


def test_what_a_failing_program_printed_goes_to_stderr_before_its_error(tmp_path, capfd):
    directory = project(tmp_path, "print('working')\nraise ValueError('broken')\n", "config: {}\n")
    assert main(["plan", "--cwd", str(directory), "--format", "json"]) == 1
    out, err = capfd.readouterr()
    assert (out, err) == ("", "working\nerror: broken\n")


def test_a_program_that_exits_is_a_one_line_error(tmp_path, capsys):
    directory = project(tmp_path, "import sys\nsys.exit(3)\n", "config: {}\n")
    assert run_cli(capsys, "--cwd", str(directory)) == (
        1,
        "",
        "error: the program exited with code 3 before its plan was complete\n",
    )
    (directory / "__main__.py").write_text("import sys\nsys.exit('fatal: no cluster')\n")
    assert run_cli(capsys, "--cwd", str(directory)) == (
        1,
        "",
        "error: the program exited: fatal: no cluster\n",
    )


def test_also_writes_other_formats_of_the_same_plan(tmp_path, capsys):
    """``--also FORMAT=PATH`` writes what a run with that --format writes, from one plan, next
    to the main output (a comparison here, whose exit code stays the run's)."""
    base = tmp_path / "base.json"
    assert run_cli(capsys, "--cwd", str(ROOT), "--stack", "local", "--format", "json",
                   "--fill-outputs", "--out", str(base))[0] == 0  # fmt: skip
    also = [f"--also={fmt}={tmp_path / fmt}" for fmt in FORMATS]
    code, out, err = run_cli(
        capsys, "--cwd", str(ROOT), "--stack", "local", "--compare", str(base),
        "--format", "markdown", *also,
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out.startswith("### modelstore plan: `local` compared with `base.json`")
    for fmt in FORMATS:
        alone = run_cli(capsys, "--cwd", str(ROOT), "--stack", "local", "--format", fmt,
                        "--fill-outputs")  # fmt: skip
        assert (tmp_path / fmt).read_text() == alone[1], fmt


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("markdown=x.md", "got 'markdown=x.md'"),
        ("json", "got 'json'"),
        ("json=", "got 'json='"),
        ("=plan.json", "got '=plan.json'"),
    ],
)
def test_a_bad_also_is_a_one_line_error_before_planning(tmp_path, capsys, spec, error):
    code, out, err = run_cli(capsys, "--cwd", str(tmp_path), "--also", spec)
    assert (code, out) == (1, "")
    assert err == (
        f"error: --also takes FORMAT=PATH with FORMAT one of json, tree, mermaid, yaml, {error}\n"
    )


def test_an_also_path_that_cannot_be_written_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "missing" / "plan.json"
    assert run_cli(capsys, "--cwd", str(ROOT), "--stack", "local", "--also", f"json={out}") == (
        1,
        "",
        f"error: cannot write {out}: No such file or directory\n",
    )


def test_an_out_path_that_cannot_be_written_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "missing" / "plan.json"
    assert run_cli(capsys, "--cwd", str(ROOT), "--stack", "local", "--out", str(out)) == (
        1,
        "",
        f"error: cannot write {out}: No such file or directory\n",
    )


# ---- no stray output ---------------------------------------------------------------------------
# The one CLI process that plans every program: tests/cli_process.py.


def test_one_cli_process_starts_lean_and_plans_every_program_cleanly(cli_process):
    """The command starts lean: the provider SDKs load their resource modules on first use,
    and a signature evaluated at import (no ``from __future__ import annotations`` in component
    modules) must not load them, or every ``modelstore plan`` starts about half a second
    slower; likewise the CLI loads the policy pack and the timeline only for --policy and
    --timeline. Run as the command (no argv given), it leaves its heap frozen to the
    interpreter's exit, which would otherwise collect it all (a third of a local plan's CPU).

    Then every stack and example through the CLI's main in the same process, with no cloud
    credentials, with plans that fail after the stacks and after the examples, then the
    interpreter's exit: standard error stays empty (no loop left open: ResourceWarnings are
    shown; nothing unraisable), no thread is left running, and each program's tree starts with
    its stack (what one process per stack checked, at the cost of nine interpreters). Planning
    a program twice in one process gives the same plan: test_programs.py; the command run as
    ``python -m``: test_json_from_a_printing_program_pipes_to_a_json_reader."""
    rounds, result = cli_process.rounds, cli_process.result
    # Only the one-release deprecations the gke-hyperdisk stack keeps (moving it to the model
    # section would put its disk under a claim named after the revision: a new disk): nothing
    # else.
    deprecations = (
        "warning: llama: source_uri is deprecated, use model.source\n"
        "warning: llama: model_revision is deprecated, use model.revision\n"
    )
    # And the one check examples/eks-cluster-and-stores cannot make before deploy, said: its
    # cluster is made in the program, so its subnets are not looked up.
    skipped = (
        "warning: cluster 'ml-eks' is made in this program: its subnets are not looked up "
        "before deploy (that each is in the cluster's VPC, their zones); the stores use them as "
        "from_cluster gives them\n"
    )
    failed = "error: cannot read /nonexistent/base.json: No such file or directory\n"
    assert (result.returncode, result.stderr) == (0, failed + deprecations + skipped)
    modules, exited, *firsts, threads, _ = result.stdout.splitlines()
    loaded = json.loads(modules)
    assert not [m for m in loaded if m.startswith(("pulumi_kubernetes.core", "pulumi_aws.fsx"))]
    assert not {"pulumi_modelstore.policy", "pulumi_modelstore.plan.timeline"} & set(loaded)
    assert json.loads(exited) == [1, True]
    assert json.loads(threads) == []
    calls = [argv for round in rounds for argv in round]
    for argv, (first, _) in zip(calls, map(json.loads, firsts), strict=True):
        project = ROOT if argv[2] == str(ROOT) else Path(argv[2])
        name = yaml.safe_load((project / "Pulumi.yaml").read_text())["name"]
        assert first == f"+ pulumi:pulumi:Stack  {name}-{argv[4]}", argv
