"""Every rule is documented the ruff way: a summary line, then what it does, why it is bad, an example.

``auditor rule CODE`` prints this text and the SARIF output carries it as the
rule's help, so one parametrised test covers every registered rule, whatever its
family.
"""

from __future__ import annotations

import pytest

from auditor.findings import all_rules

SECTIONS = ("## What it does", "## Why is this bad?", "## Example")
RULES = all_rules()


def test_every_family_is_covered() -> None:
    assert {rule.code[0] for rule in RULES} == set("PSAVDTERX")


@pytest.mark.parametrize("rule", RULES, ids=[rule.code for rule in RULES])
def test_doc_has_the_ruff_sections(rule) -> None:
    doc = rule.doc
    lines = doc.splitlines()
    assert lines[0].strip() and not lines[0].startswith("#"), "the first line is the summary"
    headings = [line.rstrip() for line in lines if line.startswith("## ")]
    assert [h for h in headings if h in SECTIONS] == list(SECTIONS), headings  # each once, in this order
    example = doc.split("## Example", 1)[1]
    assert example.strip(), "the Example section is empty"
