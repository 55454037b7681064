"""Every rule is documented the ruff way: a summary line, what it does, why it is bad, an example, how to fix it.

``auditor rule CODE`` prints this text and the SARIF output carries it as the
rule's help, so one parametrised test covers every registered rule, whatever its
family.
"""

from __future__ import annotations

import re

import pytest

from auditor.findings import all_rules
from auditor.options.keys import FileOptions, Thresholds

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## How to fix")
RULES = all_rules()
# Configuration keys as a Python name (negligible_rel); the docs spell them as the file does (negligible-rel).
SNAKE_CASE_KEYS = sorted(name for options in (FileOptions, Thresholds) for name in options.model_fields if "_" in name)
# A "How to fix" that says less than this is no instruction.
MIN_FIX_WORDS = 12


def test_every_family_is_covered() -> None:
    assert {rule.code[0] for rule in RULES} == set("PSAVDTERX")


def _section(doc: str, heading: str) -> str:
    """The text under ``heading``, up to the next heading."""
    return re.split(r"^## ", doc.split(heading, 1)[1], flags=re.MULTILINE)[0].strip()


@pytest.mark.parametrize("rule", RULES, ids=[rule.code for rule in RULES])
def test_doc_has_the_ruff_sections(rule) -> None:
    doc = rule.doc
    lines = doc.splitlines()
    assert lines[0].strip() and not lines[0].startswith("#"), "the first line is the summary"
    headings = [line.rstrip() for line in lines if line.startswith("## ")]
    assert [h for h in headings if h in SECTIONS] == list(SECTIONS), headings  # each once, in this order
    assert _section(doc, "## Example"), "the Example section is empty"


@pytest.mark.parametrize("rule", RULES, ids=[rule.code for rule in RULES])
def test_doc_says_how_to_fix_it(rule) -> None:
    fix = _section(rule.doc, "## How to fix")
    assert len(fix.split()) >= MIN_FIX_WORDS, fix


@pytest.mark.parametrize("rule", RULES, ids=[rule.code for rule in RULES])
def test_doc_spells_config_keys_as_the_config_file_does(rule) -> None:
    assert SNAKE_CASE_KEYS, "no configuration keys found"
    quoted = [key for key in SNAKE_CASE_KEYS if re.search(rf"`{key}`", rule.doc)]
    assert not quoted, f"write {[k.replace('_', '-') for k in quoted]}, as in [tool.auditor]"


def test_the_threshold_keys_are_named_where_their_rules_are_documented() -> None:
    by_code = {rule.code: rule.doc for rule in RULES}
    for code, key in [
        ("E701", "negligible-rel"),
        ("E701", "negligible-std"),
        ("E703", "inconclusive-mde-rel"),
        ("V407", "mechanism-factor"),
        ("A307", "mc-resamples"),
    ]:
        assert f"`{key}`" in by_code[code], (code, key)
