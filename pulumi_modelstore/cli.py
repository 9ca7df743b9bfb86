"""The ``modelstore`` command."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

from .plan import compare as comparing
from .plan import timeline as timelines
from .plan.engine import PlanError, plan_directory
from .plan.project import ProjectError
from .plan.render import FORMATS, render, to_json


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
        "--timeline",
        action="store_true",
        help="model pulumi up over the plan's dependency graph with typical create times per "
        "resource type (each with its source): the critical path, the modelled total and when "
        "the first claim is usable; --format tree (text) or json",
    )
    plan.add_argument("--verbose", action="store_true", help="show tracebacks on errors")
    return parser


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
    args = _parser().parse_args(argv)
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
            base = comparing.load_base(Path(args.compare).read_text())
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
        text = comparing.COMPARE_FORMATS[args.format](result, Path(args.compare).name)
        code = result.exit_code
    elif args.timeline:
        text = timelines.render(plan, args.format)
    else:
        text = render(plan, args.format)
    if args.out:
        try:
            Path(args.out).write_text(text)
        except OSError as exc:
            print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return code


if __name__ == "__main__":
    sys.exit(main())
