"""Golden plans: the JSON plan (``--fill-outputs``) of every stack and example, committed under
``tests/golden/``. A refactor leaves them byte-identical; a change that alters one says why in
its commit.

Refresh them all with ``./scripts/golden`` (this module's ``main``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pulumi_modelstore.plan.engine import plan_directory
from pulumi_modelstore.plan.render import to_json
from tests.conftest import all_programs

GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_path(pid: str) -> Path:
    """``stacks/aws-prod`` -> ``tests/golden/stacks/aws-prod.json``."""
    return GOLDEN / f"{pid}.json"


def main() -> int:
    wanted = {golden_path(pid) for pid, _, _ in all_programs()}
    for pid, directory, stack in all_programs():
        path = golden_path(pid)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = to_json(plan_directory(directory, stack, fill_outputs=True))
        changed = not path.exists() or path.read_text() != text
        path.write_text(text)
        print(f"{'updated' if changed else 'same   '} {path.relative_to(GOLDEN.parent.parent)}")
    for stale in sorted(set(GOLDEN.rglob("*.json")) - wanted):
        stale.unlink()
        print(f"removed {stale.relative_to(GOLDEN.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
