"""Render docs/rules.md from the rule registry: every rule's code, name, severity and documentation.

    python -m auditor.rules.docs > docs/rules.md

The rules' docstrings are the single source (``auditor rule CODE`` prints the same text);
tests/test_docs.py fails when docs/rules.md is not what :func:`render` returns.
"""

from __future__ import annotations

import re
import sys

from auditor.findings import Rule, all_rules

REGENERATE = "python -m auditor.rules.docs > docs/rules.md"
# Families in the order an audit meets them: parse, schema, arithmetic ... cross-answer.
_FAMILY_ORDER = "PSAVDTERX"
_HEADING = re.compile(r"#{1,6} ")


def _order(rule: Rule) -> tuple[int, bool, str]:
    letter = rule.code[:1]
    index = _FAMILY_ORDER.index(letter) if letter and letter in _FAMILY_ORDER else len(_FAMILY_ORDER)
    return index, rule.family == "internal", rule.code


def _anchor(rule: Rule) -> str:
    """GitHub's anchor for the heading ``### CODE name`` (names are kebab-case already)."""
    return f"{rule.code} {rule.name}".lower().replace(" ", "-")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _demoted(doc: str, levels: int) -> str:
    """``doc`` with its markdown headings ``levels`` deeper, leaving fenced code as it is."""
    out: list[str] = []
    fenced = False
    for line in doc.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and _HEADING.match(line):
            line = "#" * levels + line
        out.append(line.rstrip())
    return "\n".join(out)


def _groups(rules: list[Rule]) -> list[tuple[str, list[Rule]]]:
    groups: list[tuple[str, list[Rule]]] = []
    for rule in sorted(rules, key=_order):
        if groups and groups[-1][0] == rule.family:
            groups[-1][1].append(rule)
        else:
            groups.append((rule.family, [rule]))
    return groups


def render() -> str:
    """The whole of docs/rules.md."""
    rules = all_rules()
    groups = _groups(rules)
    lines = [
        f"<!-- Generated from the rules' docstrings by `{REGENERATE}`; do not edit by hand. -->",
        "",
        "# Rules",
        "",
        f"Every rule the auditor checks ({len(rules)}), by family in the order an audit meets them.",
        "`auditor rules` lists them and `auditor rule CODE` (or its name) prints one of these entries;",
        "SARIF output carries the same text as each rule's help. Select and ignore rules by code or prefix",
        "([configuration](configuration.md)); how numbers are compared is in [statistics](statistics.md).",
        "",
        "| code | name | severity | what |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| [{r.code}](#{_anchor(r)}) | `{r.name}` | {r.severity.value} | {_cell(r.summary)} |"
        for _, members in groups
        for r in members
    ]
    for family, members in groups:
        first, last = members[0].code, members[-1].code
        span = first if first == last else f"{first}–{last}"
        lines += ["", f"## {family.capitalize()}: {span}"]
        for rule in members:
            lines += [
                "",
                f"### {rule.code} {rule.name}",
                "",
                f"*{rule.family}, default severity {rule.severity.value}*",
                "",
                _demoted(rule.doc, 2),
            ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
