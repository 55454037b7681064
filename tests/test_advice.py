"""The fixes the findings of one answer advise agree with each other and with the recomputed statistics.

A finding that says what to write ("set it to false", "report 0.015625", 'the
verdict should be "no measurable effect"') advises a value for the field its
pointer names.  Over every fixture (real answers, planted defects, near
misses), no two findings of one answer advise different values for one field,
and every advised statistic or verdict is the one recomputed from the per-seed
values (issue 11, item 4: V404 once advised the *claimed* verdict while V401
advised the recomputed one).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from conftest import FIXTURES

from auditor.audit import audit_path
from auditor.findings import Finding
from auditor.options.models import AuditOptions
from auditor.stats.verdicts import Verdict, classify_practical

ANSWERS = sorted(p for folder in ("answers", "defects", "silent") for p in (FIXTURES / folder).iterdir() if p.is_file())

# The phrasings the rules end an advising message with; the value is the group "value".
_ADVICE = (
    re.compile(r'; (?:so )?set (?:it|\w+) to "?(?P<value>[^";]+?)"?$'),
    re.compile(r"; report (?:the p of the sign-flip test \()?(?P<value>[-+0-9.eE]+)\)?$"),
    re.compile(r'; the verdict should be "(?P<value>[^"]+)"$'),
)
# The recomputed statistic an advised field must take, by the field's last pointer token.
_RECOMPUTED_KEY = {
    "p_value": "p_value",
    "delta_mean": "delta_mean",
    "idea_wins": "idea_wins",
    "mde": "mde",
    "mde_rel_pct": "mde_rel_pct",
    "n_pairs": "n_pairs",
    "n_seeds": "n_pairs",
    "n": "n_pairs",
}
# Advised numbers are printed with 10 significant digits.
PRINTED_RTOL = 1e-9


def advice_of(finding: Finding) -> str | None:
    """The value ``finding`` advises for the field at its pointer, as written; None when it advises none."""
    for pattern in _ADVICE:
        m = pattern.search(finding.message)
        if m:
            return m.group("value")
    return None


def _advised_verdict(pointer: str, value: str) -> Verdict | None:
    """The comparison verdict an advised verdict-like field stands for (None: not a verdict field)."""
    field = pointer.rsplit("/", 1)[-1]
    if field == "verdict" and pointer.endswith("/comparison/verdict"):
        return Verdict(value)
    if field == "practical_verdict":
        return classify_practical(value)
    return None


def _follows(pointer: str, value: str, recomputed: dict) -> bool:
    """``value`` at ``pointer`` is what the recomputed statistics give (True for fields they do not decide)."""
    field = pointer.rsplit("/", 1)[-1]
    verdict = Verdict(recomputed["verdict"])
    if field == "system_worked":
        return value == str(verdict is Verdict.BETTER).lower()
    advised_verdict = _advised_verdict(pointer, value)
    if advised_verdict is not None:
        return advised_verdict is verdict
    if field == "mean":
        key = "baseline_mean" if "/baseline/" in pointer else "idea_mean"
        return math.isclose(float(value), recomputed[key], rel_tol=PRINTED_RTOL)
    if field in _RECOMPUTED_KEY:
        return math.isclose(float(value), recomputed[_RECOMPUTED_KEY[field]], rel_tol=PRINTED_RTOL)
    return True


def test_the_parser_reads_every_advising_phrase() -> None:
    def advice(message: str) -> str | None:
        return advice_of(Finding("X", "error", message))  # type: ignore[arg-type]

    assert advice("n_pairs is 9 but both arms list 8 per-seed values; set it to 8") == "8"
    assert advice('practical_verdict is "helps" but ...; set it to "no_effect"') == "no_effect"
    assert advice("mechanism_ok is 0 but ...; set mechanism_ok to 1") == "1"
    assert advice("p_value is claimed as 0.001 but ... is 0.015625; report 0.015625") == "0.015625"
    assert advice("p_value 0.001 is impossible ...; report the p of the sign-flip test (0.015625)") == "0.015625"
    assert (
        advice('the verdict says "x" but ...; the verdict should be "no measurable effect"') == "no measurable effect"
    )
    assert advice("report one of them and say which") is None
    assert advice("the effect is significant (p=0.0156) but negligible") is None


@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_advice_of_one_answer_is_consistent_and_follows_the_statistics(path: Path) -> None:
    result = audit_path(str(path), AuditOptions())
    advised: dict[str, set[str]] = {}
    verdicts: set[Verdict] = set()
    for finding in result.findings:
        value = advice_of(finding)
        if value is None:
            continue
        advised.setdefault(finding.pointer, set()).add(value)
        verdict = _advised_verdict(finding.pointer, value)
        if verdict is not None:
            verdicts.add(verdict)
        if result.recomputed:
            assert _follows(finding.pointer, value, result.recomputed), (finding.to_dict(), result.recomputed)
    assert all(len(values) == 1 for values in advised.values()), advised
    assert len(verdicts) <= 1, verdicts


def _verdict_findings(name: str) -> dict[str, Finding]:
    path = next(p for p in ANSWERS if p.name == name)
    return {f.rule: f for f in audit_path(str(path), AuditOptions()).findings if f.rule.startswith("V40")}


def test_a_right_practical_verdict_beside_unsupported_significance_is_left_alone() -> None:
    """Significance claimed on a null result with practical_verdict "no_effect": only the verdict is wrong."""
    found = _verdict_findings("V404_no_effect_beside_unsupported_significance.txt")
    assert advice_of(found["V401"]) == "no measurable effect"
    assert "V404" not in found  # it once advised "helps", the claimed verdict's word


def test_a_wrong_practical_verdict_is_set_to_what_the_statistics_give() -> None:
    """With "hurts" beside the same claim, V404 advises "no_effect", the practical word of V401's verdict."""
    found = _verdict_findings("V404_hurts_beside_unsupported_significance.txt")
    assert advice_of(found["V401"]) == "no measurable effect"
    assert advice_of(found["V404"]) == Verdict.NONE.practical
    assert "recomputed verdict" in found["V404"].message
