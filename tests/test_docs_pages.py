"""The hand-written docs hold up: every relative link and ``#anchor`` in README.md,
CONTRIBUTING.md, CHANGELOG.md and docs/ resolves (anchors computed from the headings as GitHub
computes them), every external link is a well-formed https URL, every stack config block plans
and every Python block runs on the plan engine, the README indexes every example and stack and
stays a front door (at most 300 lines), and the changelog names every deprecated spelling."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from pulumi_modelstore.aws.ebs.driver import RENAMED_FIELDS as EBS_DRIVER_RENAMES
from pulumi_modelstore.plan.engine import plan_directory, plan_program
from pulumi_modelstore.program import installed_backends
from tests.conftest import EXAMPLES, ROOT, STACKS

PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "CHANGELOG.md",
        *(ROOT / "docs").rglob("*.md"),
    ]
)
README_MAX_LINES = 300
# What a Python block in the docs may read from the stack config (each cloud's usual key).
PROGRAM_CONFIG = {
    "aws:region": "us-west-2",
    "gcp:project": "acme-ml",
    "gcp:region": "us-central1",
    "azure-native:location": "eastus",
}
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#* *$", re.M)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    return [
        Block(page, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
        for m in FENCE.finditer(text)
    ]


def prose(text: str) -> str:
    """``text`` without its fenced code blocks and inline code spans (links there are code)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return re.sub(r"`+[^`\n]*`+", "", text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its rendered text lowercased, punctuation other than
    ``-`` and ``_`` dropped, spaces turned into ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a page; a repeated heading gets ``-1``, ``-2``... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for m in HEADING.finditer(FENCE.sub("", text)):
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken_links(page: Path, text: str) -> Iterator[str]:
    """What is wrong with each link of ``page`` (its ``text``): a relative target that does not
    exist, an anchor its page lacks, an external link that is not a well-formed https URL. No
    network: external targets are checked for their form only."""
    for target in LINK.findall(prose(text)):
        parts = urlsplit(target)
        if parts.scheme:
            if parts.scheme != "https" or not parts.netloc or "." not in parts.netloc:
                yield f"{target}: external links are https URLs with a host"
            continue
        path = (page.parent / parts.path).resolve() if parts.path else page
        if not path.exists():
            yield f"{target}: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
            "does not exist"
            continue
        if parts.fragment:
            if path.suffix != ".md":
                yield f"{target}: an anchor into a file that is not markdown"
            elif parts.fragment not in anchors(path.read_text()):
                yield f"{target}: no heading gives #{parts.fragment}"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_resolves(page: Path) -> None:
    problems = list(broken_links(page, page.read_text()))
    assert not problems, f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_link_check_finds_what_is_broken(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    text = (
        "# A `title`: here\n## Twice\n## Twice\n"
        "[ok](#a-title-here) [ok](#twice-1) [bad](#nowhere) [missing](gone.md)\n"
        "[insecure](http://example.com) [no host](https://) `[code](gone.md)`\n"
        "```\n[in a block](gone.md)\n```\n"
    )
    page.write_text(text)
    problems = list(broken_links(page, text))
    assert [p.split(":")[0] for p in problems] == ["#nowhere", "gone.md", "http", "https"]


def test_anchors_are_computed_as_github_computes_them() -> None:
    assert (
        slug("Comparing with a saved plan: `--compare`") == "comparing-with-a-saved-plan---compare"
    )
    assert slug("Velero: backups of a store's Kubernetes objects") == (
        "velero-backups-of-a-stores-kubernetes-objects"
    )
    assert slug("2. Your own Python program") == "2-your-own-python-program"
    assert slug("EBS model caches (`ebs-snapshot`)") == "ebs-model-caches-ebs-snapshot"


# ---- code blocks -------------------------------------------------------------------------------

CODE = [b for page in PAGES for b in blocks(page)]


def is_stack_config(block: Block) -> bool:
    if block.lang != "yaml":
        return False
    document = yaml.safe_load(block.code)
    return isinstance(document, dict) and "config" in document


STACK_BLOCKS = [b for b in CODE if is_stack_config(b)]
PYTHON_BLOCKS = [b for b in CODE if b.lang == "python"]


def test_the_docs_have_stack_and_program_blocks() -> None:
    # The block tests below would pass on docs without blocks: a floor keeps them meaningful.
    assert len(STACK_BLOCKS) >= 6
    assert len(PYTHON_BLOCKS) >= 4
    pages = {b.page.name for b in STACK_BLOCKS + PYTHON_BLOCKS}
    assert {"README.md", "configuration.md", "aws.md", "gcp.md", "azure.md"} <= pages


def stores_of(plan: Any) -> list[str]:
    return [s["type"] for s in plan.states() if s["type"].startswith("modelstore:index:")]


@pytest.mark.parametrize("block", STACK_BLOCKS, ids=[b.id for b in STACK_BLOCKS])
def test_every_stack_config_block_plans(block: Block, tmp_path: Path) -> None:
    """The block is a stack file of this project (its program and saved stack outputs)."""
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(ROOT / "stacks" / "__main__.py", stacks / "__main__.py")
    (stacks / "stack-outputs").symlink_to(ROOT / "stacks" / "stack-outputs")
    (stacks / "Pulumi.doc.yaml").write_text(block.code)
    plan = plan_directory(tmp_path, "doc")
    assert stores_of(plan), f"{block.id} makes no component"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.id for b in PYTHON_BLOCKS])
def test_every_python_block_runs_as_a_program(block: Block) -> None:
    code = compile(block.code, block.id, "exec")
    plan = plan_program(lambda: exec(code, {"__name__": "__main__"}), config=PROGRAM_CONFIG)
    assert [s for s in plan.states() if s["custom"]], f"{block.id} registers nothing"


# ---- the README as a front door ----------------------------------------------------------------


def test_the_readme_indexes_every_example_and_stack() -> None:
    readme = (ROOT / "README.md").read_text()
    index = readme.split("## Examples and stacks", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in index.splitlines() if line.startswith("| [")]
    linked = {row.split("](", 1)[1].split(")", 1)[0] for row in rows}
    wanted = {f"examples/{e.name}/" for e in EXAMPLES} | {f"stacks/Pulumi.{s}.yaml" for s in STACKS}
    missing = sorted(wanted - linked)
    assert not missing, (
        f"README.md's index (## Examples and stacks) lacks {missing}: add a row each, "
        "`| [<path>](<path>) | <use case> | <backend> | <cloud> |`"
    )
    assert linked == wanted
    assert len(rows) == len(EXAMPLES) + len(STACKS), "one line each"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4 and all(cells), f"use case, backend, cloud: {row}"


def test_the_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    head = "\n".join(lines[:150])
    # A new user reaches install and a planned store of their own within 150 lines.
    assert 'pip install "pulumi-modelstore[aws]"' in head
    assert "### 2. Your own Python program" in head


def _picture_kinds(picture: str, vocabulary: set[str]) -> set[str]:
    return {kind for kind in vocabulary if re.search(rf"\b{kind}\b", picture)}


def test_the_readme_picture_names_the_kinds_the_default_stack_creates() -> None:
    """The README's Mermaid picture of one store names every Kubernetes kind a plan of the
    default stack (no --stack: ``local``) has, and no kind that plan lacks."""
    readme = (ROOT / "README.md").read_text()
    pictures = re.findall(r"```mermaid\n(.*?)```", readme, re.S)
    assert len(pictures) == 1, "one Mermaid picture in the README"
    plan = plan_directory(ROOT)
    kinds = {
        s["type"].rsplit(":", 1)[-1]
        for s in plan.states()
        if s["type"].startswith("kubernetes:") and s["custom"]
    }
    kinds.discard("kubernetes")  # the provider itself
    assert kinds, "the default stack plans Kubernetes objects"
    # Every kind any shipped stack plans is a word the picture must not use falsely.
    vocabulary = set(kinds)
    for golden in (ROOT / "tests" / "golden" / "stacks").glob("*.json"):
        vocabulary |= set(re.findall(r'"type": "kubernetes:[^"]*:(\w+)"', golden.read_text()))
    assert _picture_kinds(pictures[0], vocabulary) == kinds


def test_the_picture_check_sees_a_missing_and_a_false_kind() -> None:
    vocabulary = {"Job", "Role", "RoleBinding", "PersistentVolume", "PersistentVolumeClaim"}
    assert _picture_kinds('a["Job: seed<br/>RoleBinding"]', vocabulary) == {"Job", "RoleBinding"}
    assert _picture_kinds("PersistentVolumeClaim", vocabulary) == {"PersistentVolumeClaim"}


def test_the_changelog_names_every_deprecated_spelling() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    renames: dict[str, str] = dict(EBS_DRIVER_RENAMES)
    for store in installed_backends().values():
        renames.update(store.renamed_fields)
    assert renames
    missing = [old for old in renames if f"`{old}`" not in changelog]
    assert not missing, f"CHANGELOG.md lacks {missing}"
