"""The platform example's outputs, saved where the application example's StackReference reads
them: ``examples/app-vllm/stack-outputs/acme.model-platform.dev.json`` is exactly what
``modelstore plan --cwd examples/platform-stores --stack dev --fill-outputs`` exports (the
stand-in for ``pulumi stack output --stack acme/model-platform/dev --json --show-secrets``).

Refresh it after changing the platform example or the stores' outputs, then the golden plans:
``python -m tests.platform_outputs && python -m tests.golden``. ``tests/test_platform_app.py``
fails when the two drift.
"""

from __future__ import annotations

import json
import sys

from pulumi_modelstore.plan.engine import plan_directory
from tests.conftest import ROOT

PLATFORM = ROOT / "examples" / "platform-stores"
APP = ROOT / "examples" / "app-vllm"
REFERENCE = "acme/model-platform/dev"
SAVED = APP / "stack-outputs" / f"{REFERENCE.replace('/', '.')}.json"


def platform_outputs_text() -> str:
    """The platform stack's outputs as ``pulumi stack output --json`` prints them (indented,
    keys sorted), from its plan with placeholder outputs for created resources."""
    outputs = plan_directory(PLATFORM, "dev", fill_outputs=True).outputs
    return json.dumps(outputs, indent=2, sort_keys=True) + "\n"


def main() -> int:
    text = platform_outputs_text()
    changed = not SAVED.exists() or SAVED.read_text(encoding="utf-8") != text
    SAVED.parent.mkdir(parents=True, exist_ok=True)
    SAVED.write_text(text, encoding="utf-8")
    print(f"{'updated' if changed else 'same   '} {SAVED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
