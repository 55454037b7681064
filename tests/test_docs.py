"""The documentation stays true: rules.md is the rules' docstrings, links lead somewhere, the README stays short.

Also: the README keeps the exact test command CI runs, and the example answers of
docs/answer-format.md audit as that page says they do.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.audit import audit_bytes
from auditor.rules import docs as docs_rules

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
README_MAX_LINES = 300

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`+).*?\1")
# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str) -> list[str]:
    """The lines of ``text`` outside fenced code blocks, with inline code removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = text.replace("`", "").replace("*", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if not match:
            continue
        slug = _slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")  # GitHub numbers repeated headings
    return anchors


def _links(path: Path) -> list[str]:
    targets = []
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        targets += _LINK.findall(_INLINE_CODE.sub("", line))
    return targets


def test_rules_md_is_generated_from_the_rules() -> None:
    current = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == docs_rules.render(), f"docs/rules.md is out of date; regenerate it: {docs_rules.REGENERATE}"


def test_rules_md_documents_every_rule() -> None:
    from auditor.findings import all_rules

    anchors = _anchors(ROOT / "docs" / "rules.md")
    missing = [r.code for r in all_rules() if f"{r.code} {r.name}".lower().replace(" ", "-") not in anchors]
    assert not missing, missing


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_lead_to_files_and_anchors(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ... are not checked here
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_link_checker_sees_a_broken_link_and_a_broken_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## The `--rerun` cache\n\n[a](missing.md) [b](#nowhere) [c](#the---rerun-cache)\n"
        "```\n[d](inside-a-fence.md)\n```\n",
        encoding="utf-8",
    )
    assert _links(page) == ["missing.md", "#nowhere", "#the---rerun-cache"]
    assert _anchors(page) == {"title", "the---rerun-cache"}


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/ (limit {README_MAX_LINES})"


def test_readme_keeps_the_test_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = [line for line in ci.splitlines() if line.strip() and not line.startswith("#")][-1]
    quick_start = README.read_text(encoding="utf-8").split("```bash\n", 1)[1].split("```", 1)[0]
    assert command in quick_start.splitlines(), f"README's quick start lost CI's test command {command!r}"


def test_readme_says_what_the_quick_start_prints() -> None:
    """The README's account of `auditor audit fixtures/answers` is what the audit finds."""
    from auditor.audit import audit_path

    text = README.read_text(encoding="utf-8")
    assert "`000_…` passes (with warnings E701 and T601)" in text and "`001_…` fails with D501" in text
    seen = {}
    for path in sorted((ROOT / "fixtures" / "answers").glob("*.txt")):
        result = audit_path(str(path))
        seen[path.name[:3]] = (
            result.status,
            {f.rule for f in result.findings if f.severity.value == "error"},
            {f.rule for f in result.findings if f.severity.value == "warning"},
        )
    assert seen == {"000": ("pass", set(), {"E701", "T601"}), "001": ("fail", {"D501"}, {"T601"})}, seen


def _examples(page: Path) -> list[tuple[str, str]]:
    """The fenced blocks of ``page`` that follow an ``<!-- example: passes|fails CODE -->`` marker."""
    text = page.read_text(encoding="utf-8")
    return re.findall(r"<!-- example: ([^>]*?) -->\s*```\w*\n(.*?)```", text, flags=re.DOTALL)


def test_answer_format_examples_audit_as_documented() -> None:
    examples = _examples(ROOT / "docs" / "answer-format.md")
    assert examples, "docs/answer-format.md lost its example answer"
    for expectation, answer in examples:
        result = audit_bytes(answer, "answer-format.md")
        errors = sorted({f.rule for f in result.findings if f.severity.value == "error"})
        if expectation == "passes":
            assert result.status == "pass" and not errors, [f.message for f in result.findings]
        else:
            assert expectation.startswith("fails ") and errors == expectation.split()[1:], (expectation, errors)
