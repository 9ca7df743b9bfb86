"""The ``modelstore`` command."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

from .plan import compare as comparing
from .plan import sizing
from .plan.engine import Plan, PlanError, plan_directory
from .plan.project import ProjectError
from .plan.render import FORMATS, render, to_json

EXIT_POLICY = 5
"""``modelstore plan --policy``: a mandatory policy is violated."""
POLICY_FORMATS = ("tree", "json")


def _policy_report(plan: Plan, fmt: str) -> tuple[str, int]:
    """The policy pack's verdict on ``plan`` as text (a line per violation, then a summary) or
    JSON, and the exit code."""
    # Imported here, not at the top: only a --policy run reads the pack, and a plain plan's
    # start-up is what the CLI costs on every call.
    from . import policy as policies

    violations = policies.check_plan(plan)
    mandatory = sum(v.mandatory for v in violations)
    code = EXIT_POLICY if mandatory else 0
    if fmt == "json":
        return json.dumps([v.as_json() for v in violations], indent=2) + "\n", code
    summary = (
        f"policy pack {policies.PACK_NAME}: {len(policies.POLICIES)} policies, {mandatory} "
        f"mandatory and {len(violations) - mandatory} advisory violations"
    )
    return "".join(f"{v.line()}\n" for v in violations) + summary + "\n", code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelstore", description="pulumi-modelstore: shared ML model stores on Kubernetes."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser(
        "plan",
        help="show what a stack would create, offline (Pulumi SDK mock runtime, no credentials)",
        description=(
            "Run a Pulumi Python program for a stack, offline, as a preview: outputs of created "
            "resources stay unknown and data sources get deterministic placeholder answers."
        ),
    )
    plan.add_argument("--cwd", default=".", help="Pulumi project directory (default: .)")
    plan.add_argument("--stack", help="stack name (default: the only stack, else 'local')")
    plan.add_argument(
        "--format",
        choices=(*FORMATS, "markdown"),
        default="tree",
        help="output format; with --compare: tree (text), markdown (a pull-request comment) "
        "or json",
    )
    plan.add_argument("--out", help="write to this file instead of standard output")
    plan.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="FORMAT=PATH",
        help=f"write the plan in FORMAT ({', '.join(FORMATS)}) to PATH as well, from the same "
        "run (repeatable): a CI job saves the JSON, the tree and the graph beside its "
        "--compare report without planning the stack again",
    )
    plan.add_argument(
        "--outputs",
        action="store_true",
        help="the tree shows every output value, a line each (default: a line per stack "
        "output with its number of values)",
    )
    plan.add_argument(
        "--fill-outputs",
        action="store_true",
        help="give created resources placeholder outputs shaped like real ones",
    )
    plan.add_argument(
        "--compare",
        metavar="BASE.json",
        help="show what the change adds, updates, replaces and deletes relative to BASE, a "
        "saved --format json plan of the same stack (planned with BASE's --fill-outputs "
        "setting, read from its ids); replacements and deletions of data-bearing resources "
        "first, marked DATA LOSS RISK unless protected or retained, and BLOCKED when pulumi "
        "up cannot carry them out (a protected resource replaced or deleted, a volume deleted "
        f"under its claim). Exit code {comparing.EXIT_DATA_LOSS} when a step may lose data, "
        f"else {comparing.EXIT_BLOCKED} when a step is blocked, else 0",
    )
    plan.add_argument(
        "--policy",
        action="store_true",
        help="check the plan against the policy pack (the CrossGuard pack in policy/ runs the "
        "same policies in pulumi preview) instead of printing it: one line per violation, "
        "naming the enforcement level, the policy and the resource (type::name); format tree "
        f"(text) or json. Exit code {EXIT_POLICY} when a mandatory policy is violated; advisory "
        "ones (documented opt-outs) are reported without failing",
    )
    plan.add_argument(
        "--timeline",
        action="store_true",
        help="model pulumi up over the plan's dependency graph with typical create times per "
        "resource type (each with its source): the critical path, the modelled total and when "
        "the first claim is usable; --format tree (text) or json",
    )
    plan.add_argument("--verbose", action="store_true", help="show tracebacks on errors")
    size = sub.add_parser(
        "size",
        help="the settings each backend needs for a cold-start target, with the arithmetic",
        description=(
            "Per backend: the settings that load a model of --model-gib into --replicas "
            "replicas starting together (one per node) within --cold-start-seconds, the limit "
            "that binds (storage aggregate, per-client, node NIC), the predicted cold start "
            "and the monthly storage cost, each step with its published figure. With --stack: "
            "the stores the stack declares, as declared. Exit code "
            f"{sizing.EXIT_OUT_OF_REACH} when a backend sized misses the target, "
            f"{sizing.EXIT_BAD_INPUT} on bad input."
        ),
    )
    size.add_argument("--model-gib", required=True, help="the model's size in GiB")
    size.add_argument("--replicas", required=True, help="replicas starting together")
    size.add_argument(
        "--cold-start-seconds", required=True, help="the target: seconds to read the model"
    )
    size.add_argument("--backend", help="size this backend only (default: every backend)")
    size.add_argument(
        "--node-gbps",
        default=str(sizing.NODE_GBPS.value),
        help=f"each node's network bandwidth in Gbps (default: {sizing.NODE_GBPS.value:g}, "
        "a judgement)",
    )
    size.add_argument(
        "--nfs-mibps", help="an NFS server's read throughput in MiB/s (default: unknown)"
    )
    size.add_argument("--stack", help="size the stores this stack declares, as declared")
    size.add_argument("--cwd", default=".", help="Pulumi project directory, with --stack")
    size.add_argument("--format", choices=("text", "json"), default="text")
    fields = sub.add_parser(
        "fields",
        help="every field of a backend, component or section, from the installed package",
        description=(
            "The fields of a backend (efs), a component (EfsModelStore) or a section (model, "
            "backup, token_secret, velero) with their camelCase spelling, default and "
            "description, from the installed package's docstrings; without NAME, what it knows."
        ),
    )
    fields.add_argument("name", nargs="?", help="a backend, component or section")
    return parser


def _fields(args: argparse.Namespace) -> int:
    """``modelstore fields``: the listing on standard output; 1 for a name it does not know."""
    from .docs import DocsError, field_listing

    try:
        sys.stdout.write(field_listing(args.name))
    except DocsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _size(args: argparse.Namespace) -> int:
    """``modelstore size``: the report on standard output; exit code as the help says."""
    try:
        need = sizing.Need(
            model_gib=sizing.positive("--model-gib", args.model_gib),
            replicas=int(sizing.positive("--replicas", args.replicas, whole=True)),
            seconds=sizing.positive("--cold-start-seconds", args.cold_start_seconds),
            node_gbps=sizing.positive("--node-gbps", args.node_gbps),
            nfs_mibps=(
                None if args.nfs_mibps is None else sizing.positive("--nfs-mibps", args.nfs_mibps)
            ),
        )
        if args.stack is None:
            results = sizing.size_backends(need, args.backend)
        else:
            results = sizing.size_stack(need, args.cwd, args.stack, args.backend)
    except (sizing.SizingInputError, ProjectError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return sizing.EXIT_BAD_INPUT
    data = sizing.report(need, results, args.stack)
    render = sizing.render_json if args.format == "json" else sizing.render_text
    sys.stdout.write(render(data))
    return sizing.EXIT_OUT_OF_REACH if data["out_of_reach"] else 0


@contextlib.contextmanager
def _program_output_to_stderr() -> Iterator[None]:
    """While the program runs, whatever it writes to standard output (``print``, a
    subprocess, a C library writing to descriptor 1) goes to standard error: standard output
    carries the rendered plan alone, so ``modelstore plan --format json | jq`` always works."""
    for stream in (sys.stdout, sys.__stdout__):
        with contextlib.suppress(Exception):
            stream.flush()  # type: ignore[union-attr]
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 (closed by the caller): nothing to keep clean
        saved = None
    if saved is not None:
        sys.stderr.flush()
        os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved is not None:
            for stream in (sys.__stdout__, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()  # type: ignore[union-attr]
            os.dup2(saved, 1)
            os.close(saved)


def main(argv: list[str] | None = None) -> int:
    """The ``modelstore`` command on ``argv`` (None: the process's own arguments, the command
    run as a process); returns the exit code."""
    code = _run(argv)
    if argv is None:
        # The process exits next, and the interpreter's exit collects the whole heap (every
        # SDK module, the plan's objects): about a third of a local plan's CPU, finalizing
        # nothing the output needs. Frozen, the heap is left to the exit as it is. A caller
        # passing argv (a test, a program planning many stacks) keeps its collector as it was.
        gc.freeze()
    return code


def _run(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "size":
        return _size(args)
    if args.command == "fields":
        return _fields(args)
    base = None
    fill_outputs = args.fill_outputs
    if args.compare is not None:
        if args.format not in comparing.COMPARE_FORMATS:
            print(
                f"error: --compare prints tree, markdown or json, not {args.format}",
                file=sys.stderr,
            )
            return 1
        try:
            base = comparing.load_base(Path(args.compare).read_bytes())
        except OSError as exc:
            print(f"error: cannot read {args.compare}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        except comparing.CompareError as exc:
            print(f"error: {args.compare}: {exc}", file=sys.stderr)
            return 1
        fill_outputs = fill_outputs or comparing.filled_outputs(base)
    elif args.format == "markdown":
        print("error: --format markdown is the --compare output", file=sys.stderr)
        return 1
    also = []
    for spec in args.also:
        fmt, sep, path = spec.partition("=")
        if fmt not in FORMATS or not sep or not path:
            print(
                f"error: --also takes FORMAT=PATH with FORMAT one of {', '.join(FORMATS)}, "
                f"got {spec!r}",
                file=sys.stderr,
            )
            return 1
        also.append((fmt, path))
    trees = args.format == "tree" and base is None and not (args.policy or args.timeline)
    if args.outputs and not (trees or any(fmt == "tree" for fmt, _ in also)):
        print(
            "error: --outputs unfolds the tree's outputs (--format tree or --also tree=PATH); "
            "the JSON plan holds every value",
            file=sys.stderr,
        )
        return 1
    if args.policy and args.timeline:
        print("error: --policy and --timeline are separate runs", file=sys.stderr)
        return 1
    if args.policy and base is not None:
        print("error: --policy and --compare are separate runs", file=sys.stderr)
        return 1
    if args.policy and args.format not in POLICY_FORMATS:
        print(f"error: --policy prints tree (text) or json, not {args.format}", file=sys.stderr)
        return 1
    if args.timeline:
        from .plan import timeline as timelines  # only a --timeline run reads it
    if args.timeline and (base is not None or args.format not in timelines.FORMATS):
        what = "--compare" if base is not None else f"--format {args.format}"
        print(f"error: --timeline prints tree or json, not {what}", file=sys.stderr)
        return 1
    try:
        with _program_output_to_stderr():
            plan = plan_directory(args.cwd, args.stack, fill_outputs=fill_outputs, echo=sys.stderr)
    except ProjectError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except PlanError as exc:
        if args.verbose:
            traceback.print_exception(exc.cause, file=sys.stderr)
        for line in str(exc).splitlines():  # every invalid field, one line each
            print(f"error: {line}", file=sys.stderr)
        return 1
    code = 0
    if base is not None:
        try:
            result = comparing.compare(base, json.loads(to_json(plan)))
        except comparing.CompareError as exc:
            print(f"error: {args.compare}: {exc}", file=sys.stderr)
            return 1
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            # load_base checks what every step must hold; a value deeper in BASE of another
            # shape still ends in one line (the traceback with --verbose).
            if args.verbose:
                traceback.print_exception(exc, file=sys.stderr)
            print(
                f"error: {args.compare}: {comparing.NOT_A_PLAN} ({type(exc).__name__}: {exc})",
                file=sys.stderr,
            )
            return 1
        result.placeholders = plan.placeholders
        text = comparing.COMPARE_FORMATS[args.format](result, Path(args.compare).name)
        code = result.exit_code
    elif args.policy:
        text, code = _policy_report(plan, args.format)
    elif args.timeline:
        text = timelines.render(plan, args.format)
    else:
        text = render(plan, args.format, outputs=args.outputs)
    writes = [(args.out, text)] if args.out else []
    writes += [(path, render(plan, fmt, outputs=args.outputs)) for fmt, path in also]
    for path, content in writes:
        try:
            Path(path).write_text(content)
        except OSError as exc:
            print(f"error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    if not args.out:
        sys.stdout.write(text)
    return code


if __name__ == "__main__":
    sys.exit(main())
